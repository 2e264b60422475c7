//! The fair class's part in core scheduling (`kernel/sched/fair.c`, v5.15 and v6.18,
//! `CONFIG_SCHED_CORE`): the cross-sibling order `cfs_prio_less` reads, its baseline
//! `se_fi_update` / `task_vruntime_update`, and `task_tick_core`. The kernel model does the
//! core-wide pick (`docs/core-scheduling.md`).

use super::entity::Se;
use super::{vdiff, Fair};
use schedlab_sched_api::{CorePrio, Ctx};
use schedlab_sim::{CpuId, TaskId};

/// `MIN_NR_TASKS_DURING_FORCEIDLE` (fair.c): while a sibling is forced idle, the two
/// runqueues act as one of at least this many tasks.
const MIN_NR_TASKS_DURING_FORCEIDLE: u64 = 2;

impl Fair {
    /// `pick_task_fair`'s `update_curr` on every level of `cpu`'s running hierarchy, then
    /// each pickable task with its key: its top-level entity's vruntime less the root
    /// runqueue's `min_vruntime_fi`. `cfs_prio_less` walks two tasks up to sibling
    /// entities of one group; here the comparison is at the root, where tasks of different
    /// top-level groups meet (tasks of one group compare their group's entity, and tie).
    pub(super) fn core_candidates_fair(&mut self, cx: &mut Ctx, cpu: CpuId, out: &mut Vec<(TaskId, CorePrio)>) {
        let mut rq = self.root(cpu);
        while let Some(c) = self.rq(rq).curr {
            if self.e(c).on_rq {
                self.update_curr(cx, rq);
            }
            match self.e(c).my_q {
                Some(q) => rq = q,
                None => break,
            }
        }
        let mut tasks = Vec::new();
        self.queued_tasks(self.root(cpu), &mut tasks);
        let base = self.rq(self.root(cpu)).min_vruntime_fi;
        for p in tasks {
            let se = self.task_se(p);
            if self.e(se).sched_delayed || self.throttled_hierarchy(self.cfs_rq_of(se)) {
                continue;
            }
            let top = self.top_entity(se);
            out.push((p, CorePrio { prio: CorePrio::FAIR, key: vdiff(self.e(top).vruntime, base) }));
        }
        self.count(|w| w.tasks += out.len() as u64);
        self.flush_work(cx);
    }

    /// The entity of `se`'s hierarchy queued on the root runqueue.
    fn top_entity(&self, se: Se) -> Se {
        self.hierarchy(se).last().unwrap_or(se)
    }

    /// `se_fi_update`: each level's `min_vruntime_fi` takes its `min_vruntime`; in forced
    /// idle only once per sequence, so the baseline stays where the forced idle began.
    pub(super) fn se_fi_update(&mut self, se: Se, fi_seq: u64, forceidle: bool) {
        for s in self.path(se) {
            let rq = self.cfs_rq_of(s);
            if forceidle {
                if self.rq(rq).forceidle_seq == fi_seq {
                    break;
                }
                self.rqm(rq).forceidle_seq = fi_seq;
            }
            let min = self.rq(rq).min_vruntime;
            self.rqm(rq).min_vruntime_fi = min;
        }
    }

    /// `task_tick_core`: alone on this runqueue while a sibling is forced idle, `curr`
    /// yields once it has run more than its share of a slice among
    /// `MIN_NR_TASKS_DURING_FORCEIDLE` tasks (`__entity_slice_used`: v6.18 the entity's
    /// slice, v5.15 `sched_slice`).
    pub(super) fn task_tick_core_fair(&mut self, cx: &mut Ctx, cpu: CpuId, curr: TaskId) {
        let se = self.task_se(curr);
        if self.rq(self.root(cpu)).nr_running != 1 {
            return;
        }
        let e = self.e(se);
        let rtime = e.sum_exec_runtime.saturating_sub(e.prev_sum_exec_runtime);
        let slice = if self.eevdf_on() { e.slice } else { self.sched_slice(self.cfs_rq_of(se), se) };
        if rtime.saturating_mul(MIN_NR_TASKS_DURING_FORCEIDLE) > slice {
            cx.resched_curr(cpu);
        }
    }
}
