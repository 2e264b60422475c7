//! The class chain's part in core scheduling (`kernel/sched/core.c`, v5.15 and v6.18,
//! `CONFIG_SCHED_CORE`): each class's candidates in `prio_less`'s order (`__task_prio`:
//! deadline by deadline, real-time by `p->prio`, fair by `cfs_prio_less`), and committing
//! the core-wide choice (`docs/core-scheduling.md`).

use super::{Chain, Class};
use schedlab_sched_api::{CorePrio, Ctx, SchedClass};
use schedlab_sim::{CpuId, TaskId};

impl Chain {
    /// Deadline tasks not throttled, real-time ones unless the rt runqueue is throttled,
    /// then the fair class's.
    pub(super) fn core_candidates_chain(&mut self, cx: &mut Ctx, cpu: CpuId, out: &mut Vec<(TaskId, CorePrio)>) {
        let mut tasks = Vec::new();
        self.dl.queued(cpu, &mut tasks);
        for &p in &tasks {
            let d = &self.dl.tasks[p];
            if !d.throttled {
                out.push((p, CorePrio { prio: CorePrio::DL, key: d.deadline.0 as i64 }));
            }
        }
        if self.rt_runnable(cpu) {
            tasks.clear();
            self.rt.queued(cpu, &mut tasks);
            for &p in &tasks {
                let prio = self.eff(cx, p).kernel_prio(cx.task(p).nice);
                out.push((p, CorePrio { prio, key: 0 }));
            }
        }
        self.fair_call(cx, |f, cx| f.core_candidates(cx, cpu, out));
    }

    /// A fair task chosen by the core-wide pick becomes `curr` as a pick would make it,
    /// even with real-time tasks queued here (a sibling's higher-priority task of another
    /// cookie keeps them off the core). A chosen rt or deadline task is left to the
    /// class's own pick (`false`).
    pub(super) fn core_set_next_chain(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId) -> bool {
        if self.queued_in.get(p).copied().flatten() != Some(Class::Fair) {
            return false;
        }
        if self.curr[cpu].is_none() {
            self.account(cx, cpu);
        }
        self.prev_class[cpu] = None;
        if !self.fair_call(cx, |f, cx| f.core_set_next(cx, cpu, p)) {
            return false;
        }
        self.curr[cpu] = Some((p, Class::Fair));
        self.exec_start[cpu] = cx.now;
        true
    }

    /// Forced idle: the fair task put back is settled, nothing becomes `curr`.
    pub(super) fn core_force_idle_chain(&mut self, cx: &mut Ctx, cpu: CpuId) {
        if self.curr[cpu].is_none() {
            self.account(cx, cpu);
        }
        self.prev_class[cpu] = None;
        self.fair_call(cx, |f, cx| f.core_force_idle(cx, cpu));
        self.curr[cpu] = None;
        self.exec_start[cpu] = cx.now;
    }
}
