//! `fifo`: the reference policy. Per-CPU FIFO runqueues; a running task keeps the CPU until
//! it blocks or yields (like `SCHED_FIFO` among equals), or — with `timeslice_ns` > 0 —
//! until its slice expires at a tick (like `SCHED_RR`, `rt.c:task_tick_rt`).

use crate::placement::idle_or_prev;
use schedlab_machine::Machine;
use schedlab_sched_api::{
    BalanceKind, Ctx, Kind, Pass, SchedClass, SelectKind, Stat, Tunable, TunableSpec, TunableTable, Unit,
};
use schedlab_sim::{CpuId, Ns, TaskId};
use std::collections::VecDeque;

pub struct Fifo {
    timeslice: u64,
    queues: Vec<VecDeque<TaskId>>,
    curr: Vec<Option<TaskId>>,
    on_rq: Vec<bool>,
    slice_start: Vec<Ns>,
    to_tail: Vec<bool>,
}

/// The one tunable. The longest slice: `SCHED_RR`'s `sched_rr_timeslice_ms` is a positive
/// `int` of ms; one second is a documented bound, far above its 100 ms default.
static TUNABLES: TunableTable<Fifo> = TunableTable {
    owner: "fifo",
    version: None,
    specs: &[TunableSpec::new(
        "timeslice_ns",
        Kind::int(0, 1_000_000_000, Unit::Ns),
        "round-robin slice; 0 = run until block or yield (FIFO)",
        |f| f.timeslice as i64,
        |f, v| f.timeslice = v as u64,
    )],
};

impl Fifo {
    pub fn new(m: &Machine, sets: &[(String, String)]) -> Result<Fifo, String> {
        let mut f = Fifo {
            timeslice: 0,
            queues: vec![VecDeque::new(); m.nr_cpus()],
            curr: vec![None; m.nr_cpus()],
            on_rq: Vec::new(),
            slice_start: Vec::new(),
            to_tail: Vec::new(),
        };
        TUNABLES.apply(&mut f, sets, Pass::All, "scheduler `fifo`")?;
        Ok(f)
    }
    fn grow(&mut self, p: TaskId) {
        if self.on_rq.len() <= p {
            self.on_rq.resize(p + 1, false);
            self.slice_start.resize(p + 1, Ns(0));
            self.to_tail.resize(p + 1, false);
        }
    }
}

impl SchedClass for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }
    fn tunables(&self) -> Vec<Tunable> {
        TUNABLES.list(self)
    }
    fn task_new(&mut self, _cx: &mut Ctx, p: TaskId, _parent: Option<TaskId>) {
        self.grow(p);
    }
    fn task_dead(&mut self, _cx: &mut Ctx, _p: TaskId) {}
    fn select_task_rq(&mut self, cx: &mut Ctx, p: TaskId, prev: CpuId, k: SelectKind, wf: u32) -> CpuId {
        crate::placement::wake_on_current_cpu(cx, p, k, wf).unwrap_or_else(|| idle_or_prev(cx, p, prev))
    }
    fn migrate_task_rq(&mut self, _cx: &mut Ctx, _p: TaskId, _new_cpu: CpuId) {}
    fn enqueue_task(&mut self, _cx: &mut Ctx, cpu: CpuId, p: TaskId, _flags: u32) {
        self.grow(p);
        self.on_rq[p] = true;
        if self.curr[cpu] != Some(p) {
            self.queues[cpu].push_back(p);
        }
    }
    fn dequeue_task(&mut self, _cx: &mut Ctx, cpu: CpuId, p: TaskId, _flags: u32) -> bool {
        self.on_rq[p] = false;
        if self.curr[cpu] != Some(p) {
            self.queues[cpu].retain(|&t| t != p);
        }
        true
    }
    fn wakeup_preempt(&mut self, _cx: &mut Ctx, _cpu: CpuId, _p: TaskId, _wf: u32) {}
    fn put_prev_task(&mut self, _cx: &mut Ctx, cpu: CpuId, prev: TaskId) {
        self.curr[cpu] = None;
        if self.on_rq[prev] {
            if std::mem::take(&mut self.to_tail[prev]) {
                self.queues[cpu].push_back(prev);
            } else {
                self.queues[cpu].push_front(prev);
            }
        }
    }
    fn pick_next_task(&mut self, cx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        // A FIFO queue: its head, without comparing anything else.
        cx.compared(1);
        let p = self.queues[cpu].pop_front()?;
        self.curr[cpu] = Some(p);
        if self.slice_start[p] == Ns(0) || !self.to_tail[p] {
            self.slice_start[p] = cx.now;
        }
        Some(p)
    }
    /// A direct switch: `p` leaves its place in the queue and runs, with a fresh slice as
    /// if it had reached the head.
    fn set_next_task(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId) -> bool {
        let Some(i) = self.queues[cpu].iter().position(|&t| t == p) else { return false };
        self.queues[cpu].remove(i);
        self.curr[cpu] = Some(p);
        self.slice_start[p] = cx.now;
        true
    }
    fn task_tick(&mut self, cx: &mut Ctx, cpu: CpuId, curr: TaskId) {
        if self.timeslice > 0 && cx.now.0 - self.slice_start[curr].0 >= self.timeslice && !self.queues[cpu].is_empty() {
            self.to_tail[curr] = true;
            self.slice_start[curr] = Ns(0);
            cx.resched_curr(cpu);
        }
    }
    fn yield_task(&mut self, _cx: &mut Ctx, _cpu: CpuId, curr: TaskId) {
        self.to_tail[curr] = true;
    }
    fn reweight_task(&mut self, _cx: &mut Ctx, _p: TaskId) {}
    fn balance(&mut self, _cx: &mut Ctx, _cpu: CpuId, _kind: BalanceKind) {}
    /// No balancer: nothing is ever moved.
    fn moves_batches(&self) -> bool {
        false
    }
    fn queued(&self, cpu: CpuId, out: &mut Vec<TaskId>) {
        out.extend(self.queues[cpu].iter().copied());
        if let Some(c) = self.curr[cpu] {
            if self.on_rq[c] {
                out.push(c);
            }
        }
    }
    fn why(
        &self,
        _cx: &Ctx,
        _cpu: CpuId,
        _first: TaskId,
        _second: TaskId,
        _at: schedlab_sched_api::Moment,
    ) -> schedlab_sched_api::Why {
        schedlab_sched_api::Why::new(
            schedlab_sched_api::Cause::FairShare,
            "first come, first served: it was queued earlier and runs until it blocks",
        )
    }

    fn task_stats(&self, _p: TaskId) -> Vec<Stat> {
        Vec::new()
    }
    fn check_invariants(&self, _cx: &Ctx) -> Result<(), String> {
        for (c, q) in self.queues.iter().enumerate() {
            if let Some(cur) = self.curr[c] {
                if q.contains(&cur) {
                    return Err(format!("CPU {c}: curr is also in the queue"));
                }
            }
        }
        Ok(())
    }
}
