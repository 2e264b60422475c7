//! `ext:central` — modelled on `tools/sched_ext/scx_central.bpf.c` (Linux 6.12).
//!
//! One CPU (the central CPU, 0) makes every scheduling decision; the others only run
//! what it hands them.
//!
//! * `select_cpu`: always the central CPU, so wakeups disturb no other CPU.
//! * `enqueue`: a per-CPU kernel thread goes to the head of its own CPU's local DSQ and
//!   preempts; every other task joins one FIFO the policy keeps itself (4096 entries,
//!   overflow into a fallback DSQ), and the central CPU is kicked to act on it.
//! * `dispatch` on a non-central CPU: take from the fallback DSQ, else raise a "gimme"
//!   flag and kick the central CPU. On the central CPU: pop tasks from the FIFO for every
//!   CPU that asked, inserting each into that CPU's local DSQ with an infinite slice
//!   (`local_on(cpu)`), then serve itself.
//! * Slices are enforced by a 1 ms timer on the central CPU, not by the tick: a CPU whose
//!   task has run for `slice_ns` (20 ms), or that idles, is kicked with `kick::PREEMPT`
//!   when work is waiting.
//!
//! What to watch: dispatch latency depends on the central CPU being free to decide, and
//! every task placed elsewhere is migrated from the central CPU's runqueue.

use crate::ext::{enq, kick, local_on, ops_flags, ScxCtx, ScxOps, DSQ_LOCAL, SLICE_INF};
use schedlab_sched_api::{Kind, Tunable, TunableSpec, TunableTable, Unit};
use schedlab_sim::{CpuId, Ns, TaskId};
use std::collections::VecDeque;

const FALLBACK_DSQ: u64 = 0;
/// `central_q`'s `max_entries`.
const QUEUE_MAX: usize = 4096;
/// `TIMER_INTERVAL_NS`.
const TIMER_INTERVAL: u64 = 1_000_000;
/// `BPF_MAX_LOOPS` bounds the pops of one `dispatch_to_cpu`.
const MAX_LOOPS: usize = 8 << 20;

/// `scx_central`'s options, each defined here once.
static TUNABLES: TunableTable<Central> = TunableTable {
    owner: "scx_central",
    version: None,
    specs: &[
        TunableSpec::new(
            "central_cpu",
            Kind::int(0, schedlab_machine::MAX_CPUS as i64 - 1, Unit::None),
            "scx_central -c: the deciding CPU (one the machine has)",
            |c| c.central as i64,
            |c, v| c.central = v as usize,
        ),
        TunableSpec::new(
            "slice_us",
            Kind::int(1, 3_600_000_000, Unit::Us),
            "scx_central -s: time slice",
            |c| (c.slice_ns / 1000) as i64,
            |c, v| c.slice_ns = v as u64 * 1000,
        ),
    ],
};

pub struct Central {
    central: CpuId,
    slice_ns: u64,
    queue: VecDeque<TaskId>,
    gimme: Vec<bool>,
    started_at: Vec<u64>,
    nr_timers: u64,
    nr_dispatches: u64,
    nr_mismatches: u64,
    nr_overflows: u64,
    nr_locals: u64,
}

impl Default for Central {
    fn default() -> Self {
        Central {
            central: 0,
            slice_ns: 20_000_000,
            queue: VecDeque::new(),
            gimme: Vec::new(),
            started_at: Vec::new(),
            nr_timers: 0,
            nr_dispatches: 0,
            nr_mismatches: 0,
            nr_overflows: 0,
            nr_locals: 0,
        }
    }
}

impl Central {
    /// `dispatch_to_cpu`: the first queued task that may run on `cpu` goes to its local
    /// DSQ; ones that may not are bounced to the fallback DSQ.
    fn dispatch_to_cpu(&mut self, cx: &mut ScxCtx, cpu: CpuId) -> bool {
        for _ in 0..MAX_LOOPS {
            let Some(p) = self.queue.pop_front() else { break };
            if !cx.task(p).affinity.contains(cpu) {
                self.nr_mismatches += 1;
                cx.dsq_insert(p, FALLBACK_DSQ, SLICE_INF, 0);
                if cx.dispatch_nr_slots() == 0 {
                    break;
                }
                continue;
            }
            cx.dsq_insert(p, local_on(cpu), SLICE_INF, 0);
            if cpu != self.central {
                cx.kick_cpu(cpu, kick::IDLE);
            }
            return true;
        }
        false
    }
}

impl ScxOps for Central {
    fn name(&self) -> &'static str {
        "ext:central"
    }
    fn flags(&self) -> u64 {
        ops_flags::ENQ_LAST
    }
    fn tunables(&self) -> Vec<Tunable> {
        TUNABLES.list(self)
    }
    fn set_tunable(&mut self, key: &str, value: &str) -> Result<bool, String> {
        TUNABLES.set(self, key, value)
    }
    fn init(&mut self, cx: &mut ScxCtx) -> Result<(), String> {
        if self.central >= cx.nr_cpus() {
            return Err(format!("central_cpu {} does not exist ({} CPUs)", self.central, cx.nr_cpus()));
        }
        self.gimme = vec![false; cx.nr_cpus()];
        self.started_at = vec![0; cx.nr_cpus()];
        cx.create_dsq(FALLBACK_DSQ)?;
        let at = cx.now() + Ns(TIMER_INTERVAL);
        cx.timer_start(self.central, at);
        Ok(())
    }
    fn select_cpu(&mut self, _cx: &mut ScxCtx, _p: TaskId, _prev: CpuId, _wake_flags: u32) -> CpuId {
        self.central
    }
    fn enqueue(&mut self, cx: &mut ScxCtx, p: TaskId, enq_flags: u64) {
        if cx.task(p).kthread && cx.task(p).affinity.count() == 1 {
            self.nr_locals += 1;
            cx.dsq_insert(p, DSQ_LOCAL, SLICE_INF, enq_flags | enq::PREEMPT);
            return;
        }
        if self.queue.len() >= QUEUE_MAX {
            self.nr_overflows += 1;
            cx.dsq_insert(p, FALLBACK_DSQ, SLICE_INF, enq_flags);
            return;
        }
        self.queue.push_back(p);
        if !cx.task_running(p) {
            cx.kick_cpu(self.central, kick::PREEMPT);
        }
    }
    fn dispatch(&mut self, cx: &mut ScxCtx, cpu: CpuId, _prev: Option<TaskId>) {
        if cpu != self.central {
            if cx.dsq_move_to_local(FALLBACK_DSQ) {
                return;
            }
            self.gimme[cpu] = true;
            cx.kick_cpu(self.central, kick::PREEMPT);
            return;
        }
        self.nr_dispatches += 1;
        for c in 0..cx.nr_cpus() {
            if cx.dispatch_nr_slots() == 0 {
                break;
            }
            if self.gimme[c] && self.dispatch_to_cpu(cx, c) {
                self.gimme[c] = false;
            }
        }
        if cx.dispatch_nr_slots() == 0 {
            cx.kick_cpu(self.central, kick::PREEMPT);
            return;
        }
        if cx.dsq_move_to_local(FALLBACK_DSQ) {
            return;
        }
        self.dispatch_to_cpu(cx, self.central);
    }
    fn running(&mut self, cx: &mut ScxCtx, p: TaskId) {
        let cpu = cx.task_cpu(p);
        self.started_at[cpu] = cx.now().0.max(1);
    }
    fn stopping(&mut self, cx: &mut ScxCtx, p: TaskId, _runnable: bool) {
        let cpu = cx.task_cpu(p);
        self.started_at[cpu] = 0;
    }
    /// `central_timerfn`: kick every other CPU whose slice is over (or that idles) and
    /// for which work waits.
    fn timer(&mut self, cx: &mut ScxCtx, _cpu: CpuId) {
        let now = cx.now().0;
        let mut nr_to_kick = self.queue.len();
        let n = cx.nr_cpus();
        for i in 0..n {
            let cpu = (self.nr_timers as usize + i) % n;
            if cpu == self.central {
                continue;
            }
            let started = self.started_at[cpu];
            if started != 0 && now < started + self.slice_ns {
                continue;
            }
            if cx.dsq_nr_queued(FALLBACK_DSQ) > 0 || cx.dsq_nr_queued(local_on(cpu)) > 0 {
            } else if nr_to_kick > 0 {
                nr_to_kick -= 1;
            } else {
                continue;
            }
            cx.kick_cpu(cpu, kick::PREEMPT);
        }
        cx.timer_start(self.central, Ns(now + TIMER_INTERVAL));
        self.nr_timers += 1;
    }
    fn counters(&self) -> Vec<(String, u64)> {
        vec![
            ("timers".into(), self.nr_timers),
            ("central_dispatches".into(), self.nr_dispatches),
            ("mismatches".into(), self.nr_mismatches),
            ("overflows".into(), self.nr_overflows),
            ("locals".into(), self.nr_locals),
        ]
    }
}
