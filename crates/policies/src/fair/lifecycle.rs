//! A task's life in the fair class: fork (`sched_fork` + `task_fork_fair`), migration
//! (`migrate_task_rq_fair`), attribute changes under save/restore (`set_user_nice`,
//! `__sched_setscheduler` → `reweight_entity`, `reweight_eevdf`), plus what the class
//! shows the rest of schedlab (queued tasks, statistics, invariant checks).

use super::entity::{Entity, RqId, Se, TaskFair};
use super::load::DO_DETACH;
use super::weights::LoadWeight;
use super::{div_i128, vdiff, Fair, Version, MIN_VRUNTIME_INIT};
use schedlab_sched_api::{Ctx, Stat, TaskPolicy, Unit};
use schedlab_sim::{CpuId, TaskId};

/// The fair class's per-task statistics (`Fair::stats_of`).
const VRUNTIME: Stat = Stat::def("vruntime", Unit::Ns, "vruntime per thread (CFS/EEVDF)");
const LAG: Stat = Stat::def("lag", Unit::Ns, "Lag per thread (> 0 is owed CPU)");
const SUM_EXEC_RUNTIME: Stat = Stat::def("sum_exec_runtime", Unit::Ns, "Run time per thread (sum_exec_runtime)");
const SLICE: Stat = Stat::def("slice", Unit::Ns, "Slice per thread");
const WEIGHT: Stat = Stat::def("weight", Unit::None, "Weight per thread (se->load.weight; 1024 at nice 0)");
const LOAD_AVG: Stat = Stat::def("load_avg", Unit::None, "PELT load_avg per thread");
const RUNNABLE_AVG: Stat = Stat::def("runnable_avg", Unit::None, "PELT runnable_avg per thread");
const UTIL_AVG: Stat = Stat::def("util_avg", Unit::None, "PELT util_avg per thread (1024 = a whole CPU)");
const DEADLINE: Stat = Stat::def("deadline", Unit::Ns, "Virtual deadline ahead of vruntime per thread (EEVDF)");
const DELAYED: Stat = Stat::def("delayed", Unit::None, "Dequeue delayed (EEVDF sched_delayed; 0/1)");

impl Fair {
    /// `sched_fork` + `task_fork_fair`. CFS (≤6.5): the child starts at the parent's
    /// vruntime, is placed with START_DEBIT, may swap with the parent
    /// (`sched_child_runs_first`), and is stored relative to `min_vruntime` until
    /// `wake_up_new_task` enqueues it. EEVDF: the child has no lag and is placed at enqueue.
    pub(super) fn task_fork(&mut self, cx: &mut Ctx, p: TaskId, parent: Option<TaskId>) {
        self.ensure_task(p);
        let info = cx.task(p);
        let tg = self.task_group_of(info);
        let cpu = info.cpu;
        let idle = info.policy == TaskPolicy::Idle;
        let custom = self.t.version >= Version::V6_12 && info.slice.is_some();
        let rq = self.group_rq(tg, cpu);
        let se = self.task_se(p);
        self.tf[p] = TaskFair { tg: tg as u32, alive: true, ..TaskFair::default() };
        *self.em(se) = Entity {
            load: LoadWeight::for_task(info.nice, idle),
            idle_policy: idle,
            cfs_rq: rq,
            depth: self.tgs[tg].depth,
            slice: if custom { info.slice.unwrap_or(0) } else { self.t.base_slice },
            custom_slice: custom,
            ..Entity::default()
        };
        self.init_entity_runnable_average(se);
        let curr = parent.and(self.rq(rq).curr);
        if curr.is_some() {
            self.update_curr(cx, rq);
        }
        if self.eevdf_on() {
            return;
        }
        if let Some(c) = curr {
            self.em(se).vruntime = self.e(c).vruntime;
        }
        self.place_entity_cfs(rq, se, true);
        if let Some(c) = curr {
            if self.t.child_runs_first && vdiff(self.e(c).vruntime, self.e(se).vruntime) < 0 {
                let (a, b) = (self.e(c).vruntime, self.e(se).vruntime);
                self.em(c).vruntime = b;
                self.em(se).vruntime = a;
                cx.resched_curr(cpu);
            }
        }
        let min = self.rq(rq).min_vruntime;
        let e = self.em(se);
        e.vruntime = e.vruntime.wrapping_sub(min);
        e.relative = true;
    }

    /// `migrate_task_rq_fair`: CFS stores a waking task's vruntime relative to the old
    /// `min_vruntime` (EEVDF carries lag instead); the load leaves the old runqueue
    /// (detached if the task is moved while queued, queued for removal if it slept), and
    /// the task is no longer cache-hot.
    pub(super) fn migrate_task_rq_fair(&mut self, cx: &mut Ctx, p: TaskId, _new_cpu: CpuId) {
        let se = self.task_se(p);
        let old = self.cfs_rq_of(se);
        let e = self.e(se);
        if !self.eevdf_on() && !e.on_rq && !e.relative && !e.migrating {
            let min = self.rq(old).min_vruntime;
            let e = self.em(se);
            e.vruntime = e.vruntime.wrapping_sub(min);
            e.relative = true;
        }
        if self.e(se).avg.last_update_time != 0 {
            if std::mem::take(&mut self.em(se).migrating) {
                self.update_load_avg(cx, old, se, DO_DETACH);
            } else {
                self.remove_entity_load_avg(se);
            }
        }
        let e = self.em(se);
        e.migrating = false;
        e.avg.last_update_time = 0;
        e.exec_start = 0;
    }

    /// A change of weight or slice the kernel makes under save/restore
    /// (`set_user_nice`, `__sched_setscheduler`): dequeue without sleeping, put it back if
    /// it runs, change, enqueue and set it running again.
    pub(super) fn save_restore(&mut self, cx: &mut Ctx, p: TaskId, change: impl FnOnce(&mut Fair, &mut Ctx, Se)) {
        let se = self.task_se(p);
        let cpu = self.rq(self.cfs_rq_of(se)).cpu;
        let queued = self.e(se).on_rq;
        let running = queued && cx.cpus[cpu].curr == Some(p) && self.rq(self.cfs_rq_of(se)).curr == Some(se);
        if queued {
            // `dequeue_task_fair(DEQUEUE_SAVE)`: the estimate leaves and comes back.
            if !self.e(se).sched_delayed {
                self.util_est_dequeue(cpu, p);
            }
            self.dequeue_entities(cx, se, 0);
        }
        if running {
            self.put_prev_task_fair(cx, se);
        }
        change(self, cx, se);
        if queued {
            self.enqueue_task_fair(cx, cpu, p, 0);
        }
        if running {
            self.set_next_task_fair(cx, se);
        }
    }

    /// `reweight_entity`: change an entity's weight, keeping what each version keeps.
    pub(super) fn reweight_entity(&mut self, cx: &mut Ctx, rq: RqId, se: Se, new: LoadWeight) {
        let is_curr = self.rq(rq).curr == Some(se);
        let on = self.e(se).on_rq;
        let version = self.t.version;
        let old_w = self.e(se).load.weight as i128;
        let new_w = new.weight as i128;
        let scale = |x: i64| div_i128(x as i128 * old_w, new_w) as i64;
        let mut v = 0;
        if on {
            self.update_curr(cx, rq);
            if version == Version::V6_12 {
                v = self.avg_vruntime(rq);
            }
            if version >= Version::V6_18 {
                self.update_entity_lag(rq, se);
                let e = self.em(se);
                e.deadline = e.deadline.wrapping_sub(e.vruntime);
                e.rel_deadline = true;
                self.rqm(rq).nr_running -= 1;
            }
            if !is_curr {
                self.tree_remove(rq, se);
            }
            self.rqm(rq).load -= old_w as u64;
        }
        self.reweight_load_avg(rq, se, new.weight);
        if self.eevdf_on() {
            if !on || version >= Version::V6_18 {
                let e = self.em(se);
                e.vlag = scale(e.vlag);
                if e.rel_deadline && version >= Version::V6_18 {
                    e.deadline = scale(e.deadline as i64) as u64;
                }
            } else if version == Version::V6_12 {
                self.reweight_eevdf(rq, se, v, scale);
            } else {
                let e = self.em(se);
                let rel = scale(vdiff(e.deadline, e.vruntime));
                e.deadline = e.vruntime.wrapping_add(rel as u64);
            }
        }
        self.em(se).load = new;
        if on {
            if version >= Version::V6_18 {
                self.place_entity_eevdf(rq, se, 0);
            }
            self.rqm(rq).load += new.weight;
            if !is_curr {
                self.tree_insert(rq, se);
            }
            if version >= Version::V6_18 {
                self.rqm(rq).nr_running += 1;
            }
            self.update_min_vruntime(rq);
        }
    }

    /// `reweight_eevdf` (v6.12): keep V; scale the (clamped) lag and the deadline's
    /// distance from V by the weight ratio.
    fn reweight_eevdf(&mut self, rq: RqId, se: Se, v: u64, scale: impl Fn(i64) -> i64) {
        if self.e(se).vruntime != v {
            self.update_entity_lag(rq, se);
            let vlag = scale(self.e(se).vlag);
            self.em(se).vruntime = v.wrapping_sub(vlag as u64);
        }
        let e = self.em(se);
        let vslice = scale(vdiff(e.deadline, v));
        e.deadline = v.wrapping_add(vslice as u64);
    }

    /// The tasks queued in `rq`'s hierarchy, `curr` and delayed ones included.
    pub(super) fn queued_tasks(&self, rq: RqId, out: &mut Vec<TaskId>) {
        self.for_each_queued_task(rq, &mut |p| out.push(p));
    }

    /// Calls `f` on each task queued in `rq`'s hierarchy, `curr` and delayed ones included,
    /// allocating nothing (the kernel's and the chain's checks list them after every event):
    /// a group entity's queue is walked where the entity is met.
    pub(super) fn for_each_queued_task(&self, rq: RqId, f: &mut dyn FnMut(TaskId)) {
        let mut visit = |id: u32| match self.e(Se(id)).my_q {
            Some(child) => self.for_each_queued_task(child, f),
            None => f(self.se_task(Se(id)).expect("a task entity")),
        };
        let r = self.rq(rq);
        self.nodes.for_each_in_order(&r.timeline, &mut visit);
        if let Some(c) = r.curr.filter(|&c| self.e(c).on_rq) {
            visit(c.0);
        }
    }

    /// How many tasks [`Fair::queued_tasks`] lists for `cpu`, counted without listing them
    /// (the chain's check of its count of fair tasks, after every event).
    pub(crate) fn nr_queued_tasks(&self, cpu: CpuId) -> usize {
        let mut n = 0;
        self.for_each_queued_task(self.root(cpu), &mut |_| n += 1);
        self.for_each_throttled_task(cpu, &mut |_| n += 1);
        n
    }

    /// Per-task internals for time series: vruntime (from the start), lag (positive: owed
    /// CPU), slice, weight, PELT; EEVDF adds the deadline (from vruntime) and eligibility.
    pub(super) fn stats_of(&self, p: TaskId) -> Vec<Stat> {
        if p >= self.tf.len() {
            return Vec::new();
        }
        let se = self.task_se(p);
        let e = self.e(se);
        if e.load.weight == 0 {
            return Vec::new();
        }
        let rq = self.cfs_rq_of(se);
        let queued_here = e.on_rq;
        let (vr, lag) = if self.eevdf_on() {
            let lag = if queued_here { vdiff(self.avg_vruntime(rq), e.vruntime) } else { e.vlag };
            (vdiff(e.vruntime, MIN_VRUNTIME_INIT), lag)
        } else if e.relative {
            (e.vruntime as i64, -(e.vruntime as i64))
        } else {
            (vdiff(e.vruntime, MIN_VRUNTIME_INIT), vdiff(self.rq(rq).min_vruntime, e.vruntime))
        };
        let slice = if self.eevdf_on() { e.slice } else { e.last_slice };
        let mut v = vec![
            VRUNTIME.at(vr),
            LAG.at(lag),
            SUM_EXEC_RUNTIME.at(e.sum_exec_runtime as i64),
            SLICE.at(slice as i64),
            WEIGHT.at(e.load.weight as i64),
            LOAD_AVG.at(e.avg.load_avg as i64),
            RUNNABLE_AVG.at(e.avg.runnable_avg as i64),
            UTIL_AVG.at(e.avg.util_avg as i64),
        ];
        if self.eevdf_on() {
            v.push(DEADLINE.at(vdiff(e.deadline, e.vruntime)));
            v.push(DELAYED.at(i64::from(e.sched_delayed)));
        }
        v
    }
}
