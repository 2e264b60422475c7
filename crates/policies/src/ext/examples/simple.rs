//! `ext:simple` — modelled on `tools/sched_ext/scx_simple.bpf.c` (Linux 6.12).
//!
//! The smallest useful sched_ext scheduler: one shared queue for the whole machine.
//!
//! * `select_cpu`: the kernel's default idle search (`select_cpu_dfl`); a task that finds
//!   an idle CPU goes straight into that CPU's local DSQ, skipping `enqueue`.
//! * `enqueue`: every other task goes into the shared DSQ — at its tail (`fifo=1`), or
//!   ordered by `dsq_vtime` (the default, weighted fair queueing): a task's vtime grows by
//!   the slice it used × 100 / weight, and a sleeper may bank at most one slice of credit
//!   (its vtime is clamped to `vtime_now − 20 ms`).
//! * `dispatch`: an idle CPU takes the first task of the shared DSQ.
//!
//! What to watch: a waking task never preempts (sched_ext has no wakeup preemption), so
//! latency under load is bounded by the 20 ms slice; there is no load balancing beyond
//! the shared queue, which every CPU contends for.

use crate::ext::{vtime_before, ScxCtx, ScxOps, SLICE_DFL};
use schedlab_sched_api::{Kind, Tunable, TunableSpec, TunableTable};
use schedlab_sim::{CpuId, TaskId};

/// The shared DSQ's id (`SHARED_DSQ`).
const SHARED_DSQ: u64 = 0;

/// `scx_simple`'s option.
static TUNABLES: TunableTable<Simple> = TunableTable {
    owner: "scx_simple",
    version: None,
    specs: &[TunableSpec::new(
        "fifo",
        Kind::Bool,
        "scx_simple -f: global FIFO (1) instead of weighted vtime (0)",
        |s| s.fifo.into(),
        |s, v| s.fifo = v != 0,
    )],
};

#[derive(Default)]
pub struct Simple {
    /// `fifo_sched` (`scx_simple -f`).
    fifo: bool,
    /// `vtime_now`: the largest vtime of a task that started running.
    vtime_now: u64,
    /// `stat_inc(0)`, `stat_inc(1)`.
    local: u64,
    global: u64,
}

impl ScxOps for Simple {
    fn name(&self) -> &'static str {
        "ext:simple"
    }
    fn tunables(&self) -> Vec<Tunable> {
        TUNABLES.list(self)
    }
    fn set_tunable(&mut self, key: &str, value: &str) -> Result<bool, String> {
        TUNABLES.set(self, key, value)
    }
    fn init(&mut self, cx: &mut ScxCtx) -> Result<(), String> {
        cx.create_dsq(SHARED_DSQ)
    }
    fn select_cpu(&mut self, cx: &mut ScxCtx, p: TaskId, prev_cpu: CpuId, wake_flags: u32) -> CpuId {
        let (cpu, idle) = cx.select_cpu_dfl(p, prev_cpu, wake_flags);
        if idle {
            self.local += 1;
            cx.dsq_insert(p, crate::ext::DSQ_LOCAL, SLICE_DFL, 0);
        }
        cpu
    }
    fn enqueue(&mut self, cx: &mut ScxCtx, p: TaskId, enq_flags: u64) {
        self.global += 1;
        if self.fifo {
            cx.dsq_insert(p, SHARED_DSQ, SLICE_DFL, enq_flags);
            return;
        }
        let mut vtime = cx.dsq_vtime(p);
        let floor = self.vtime_now.wrapping_sub(SLICE_DFL);
        if vtime_before(vtime, floor) {
            vtime = floor;
        }
        cx.dsq_insert_vtime(p, SHARED_DSQ, SLICE_DFL, vtime, enq_flags);
    }
    fn dispatch(&mut self, cx: &mut ScxCtx, _cpu: CpuId, _prev: Option<TaskId>) {
        cx.dsq_move_to_local(SHARED_DSQ);
    }
    fn running(&mut self, cx: &mut ScxCtx, p: TaskId) {
        if !self.fifo && vtime_before(self.vtime_now, cx.dsq_vtime(p)) {
            self.vtime_now = cx.dsq_vtime(p);
        }
    }
    fn stopping(&mut self, cx: &mut ScxCtx, p: TaskId, _runnable: bool) {
        if self.fifo {
            return;
        }
        let used = SLICE_DFL.saturating_sub(cx.slice(p));
        let v = cx.dsq_vtime(p).wrapping_add(used * 100 / u64::from(cx.weight(p)));
        cx.set_dsq_vtime(p, v);
    }
    fn enable(&mut self, cx: &mut ScxCtx, p: TaskId) {
        cx.set_dsq_vtime(p, self.vtime_now);
    }
    fn counters(&self) -> Vec<(String, u64)> {
        vec![("local".into(), self.local), ("global".into(), self.global)]
    }
}
