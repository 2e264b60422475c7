//! Enqueue and dequeue through the group hierarchy (`kernel/sched/fair.c`:
//! `enqueue_task_fair`, `dequeue_task_fair`/`dequeue_entities`, `enqueue_entity`,
//! `dequeue_entity`, `account_entity_enqueue`/`_dequeue`, `requeue_delayed_entity`,
//! `finish_delayed_dequeue_entity`; v5.15 and v6.6–v6.18).

use super::entity::{RqId, Se};
use super::load::{DO_ATTACH, UPDATE_TG};
use super::{Fair, Version};
use schedlab_sched_api::{dequeue, enqueue, Ctx};
use schedlab_sim::{CpuId, TaskId};

impl Fair {
    /// `enqueue_task_fair`: queue the task's entity, then every ancestor not yet queued
    /// (they are waking up as far as their parents are concerned), then refresh the
    /// ancestors that already were.
    pub(super) fn enqueue_task_fair(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, flags: u32) {
        let se = self.task_se(p);
        let tg = self.tf[p].tg as usize;
        self.em(se).cfs_rq = self.group_rq(tg, cpu);
        if flags & enqueue::DELAYED != 0 {
            // v6.12+: a delayed task's estimate left at its first (delayed) dequeue.
            self.util_est_enqueue(cpu, p);
            self.counters.delayed_requeues += 1;
            self.requeue_delayed_entity(cx, se);
            return;
        }
        if self.bw_used && self.enqueue_throttled_task(self.cfs_rq_of(se), p) {
            return;
        }
        // Before the walk below reaches schedutil, so the frequency sees the estimate; a
        // delayed task moved or restored keeps its estimate out (v6.18).
        if !self.e(se).sched_delayed {
            self.util_est_enqueue(cpu, p);
        }
        if flags & enqueue::INITIAL != 0 {
            self.post_init_entity_util_avg(se, u64::from(cx.capacity(cpu)));
        }
        if flags & enqueue::WAKEUP != 0 {
            self.update_avg_idle(cpu, cx.now.0);
        }
        let runnable = u64::from(!self.e(se).sched_delayed);
        let mut idle = u64::from(self.e(se).idle_policy);
        let mut flags = flags;
        let mut slice = 0;
        let mut walk = Some(se);
        while let Some(s) = walk {
            if self.e(s).on_rq {
                if self.e(s).sched_delayed {
                    self.requeue_delayed_entity(cx, s);
                }
                break;
            }
            let rq = self.cfs_rq_of(s);
            if slice != 0 && self.t.version >= Version::V6_12 {
                // A group entity requests the shortest slice queued below it.
                let e = self.em(s);
                e.slice = slice;
                e.custom_slice = true;
            }
            self.enqueue_entity(cx, rq, s, flags);
            slice = self.cfs_rq_min_slice(rq);
            idle = self.idle_above(s, 1, idle);
            self.count_h(rq, 1, 1, runnable, idle);
            if self.stops_at_throttled(rq) {
                return;
            }
            flags = enqueue::WAKEUP;
            walk = self.parent_entity(s);
        }
        while let Some(s) = walk {
            let rq = self.cfs_rq_of(s);
            self.update_load_avg(cx, rq, s, UPDATE_TG);
            self.update_cfs_group(cx, s);
            if slice != 0 && self.t.version >= Version::V6_12 {
                self.requeue_slice(rq, s, slice);
                slice = self.cfs_rq_min_slice(rq);
            }
            idle = self.idle_above(s, 1, idle);
            self.count_h(rq, 1, 1, runnable, idle);
            if self.stops_at_throttled(rq) {
                return;
            }
            walk = self.parent_entity(s);
        }
    }

    /// v5.15 `enqueue_task_fair`/`dequeue_task_fair`: the walk up ends at a throttled
    /// runqueue (its entity is off its parent). v6.18 keeps throttled entities queued.
    fn stops_at_throttled(&self, rq: RqId) -> bool {
        self.cfs_rq_throttled(rq) && !self.task_throttle()
    }

    /// Adjusts the hierarchical task counts of `rq` (`sign` · each count).
    pub(super) fn count_h(&mut self, rq: RqId, sign: i64, tasks: u64, runnable: u64, idle: u64) {
        let r = self.rqm(rq);
        let add = |v: &mut u64, by: u64| *v = (*v as i64 + sign * by as i64) as u64;
        add(&mut r.h_nr_running, tasks);
        add(&mut r.h_nr_runnable, runnable);
        add(&mut r.idle_h_nr, idle);
    }

    /// A queued group entity's slice follows the shortest one below it (v6.12+); the tree
    /// copy of the slice is refreshed by taking it out and back in.
    fn requeue_slice(&mut self, rq: RqId, se: Se, slice: u64) {
        if self.e(se).slice == slice {
            return;
        }
        let in_tree = self.rq(rq).curr != Some(se);
        if in_tree {
            self.tree_remove(rq, se);
        }
        self.em(se).slice = slice;
        if in_tree {
            self.tree_insert(rq, se);
        }
    }

    /// `enqueue_entity`.
    pub(super) fn enqueue_entity(&mut self, cx: &mut Ctx, rq: RqId, se: Se, flags: u32) {
        let is_curr = self.rq(rq).curr == Some(se);
        if self.eevdf_on() {
            if is_curr {
                self.place_entity_eevdf(rq, se, flags);
            }
            self.update_curr(cx, rq);
        } else {
            self.renormalise_cfs(cx, rq, se, flags, is_curr);
        }
        self.update_load_avg(cx, rq, se, UPDATE_TG | DO_ATTACH);
        self.runnable_load_enqueue(rq, se);
        self.update_cfs_group(cx, se);
        if self.eevdf_on() && !is_curr {
            self.place_entity_eevdf(rq, se, flags);
        }
        self.account_entity_enqueue(rq, se);
        if !self.eevdf_on() && flags & enqueue::WAKEUP != 0 {
            self.place_entity_cfs(rq, se, false);
        }
        if !is_curr {
            self.tree_insert(rq, se);
        }
        self.em(se).on_rq = true;
        if self.bw_used && self.rq(rq).nr_running == 1 {
            self.check_enqueue_throttle(cx, rq);
        }
    }

    /// `account_entity_enqueue`: weight and count; tasks join `rq->cfs_tasks`.
    fn account_entity_enqueue(&mut self, rq: RqId, se: Se) {
        let w = self.e(se).load.weight;
        let r = self.rqm(rq);
        r.load += w;
        r.nr_running += 1;
        if let Some(p) = self.se_task(se) {
            let cpu = self.rq(rq).cpu;
            self.links.push_front(&mut self.cpu[cpu].cfs_tasks, cpu, p);
        }
    }

    /// `account_entity_dequeue`.
    fn account_entity_dequeue(&mut self, rq: RqId, se: Se) {
        let w = self.e(se).load.weight;
        let r = self.rqm(rq);
        r.load -= w;
        r.nr_running -= 1;
        if let Some(p) = self.se_task(se) {
            let cpu = self.rq(rq).cpu;
            self.links.remove(&mut self.cpu[cpu].cfs_tasks, cpu, p);
        }
    }

    /// `dequeue_task_fair`: the estimate leaves the CPU's sum (not again for a task whose
    /// dequeue was delayed) and, for a sleep, learns this activation — v6.12+ before the
    /// entities are dequeued, v5.15/v6.6 after.
    pub(super) fn dequeue_task_fair(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, flags: u32) -> bool {
        if self.bw_used && self.dequeue_throttled_task(p, flags) {
            return true;
        }
        let se = self.task_se(p);
        if !self.e(se).sched_delayed {
            self.util_est_dequeue(cpu, p);
        }
        let sleep = flags & dequeue::SLEEP != 0;
        let capacity = u64::from(cx.capacity(cpu));
        if self.t.version >= Version::V6_12 {
            self.util_est_update(p, sleep, capacity);
            return self.dequeue_entities(cx, se, flags);
        }
        let done = self.dequeue_entities(cx, se, flags);
        self.util_est_update(p, sleep, capacity);
        done
    }

    /// `dequeue_entities`: dequeue `se` (a task's entity, or a delayed group entity) and
    /// every ancestor whose queue it leaves empty; `false` if a task's own dequeue was
    /// delayed.
    pub(super) fn dequeue_entities(&mut self, cx: &mut Ctx, se: Se, flags: u32) -> bool {
        let sleep = flags & dequeue::SLEEP != 0;
        let is_task = self.se_task(se).is_some();
        // A task dequeued while delayed, other than to complete the delay, stays delayed
        // (migration, save/restore): it was not runnable before and is not now.
        let runnable = u64::from(is_task && (sleep || flags & dequeue::DELAYED != 0 || !self.e(se).sched_delayed));
        let mut idle = u64::from(is_task && self.e(se).idle_policy);
        let tasks = u64::from(is_task);
        let mut flags = flags;
        let mut walk = Some(se);
        let mut slice = 0;
        while let Some(s) = walk {
            let rq = self.cfs_rq_of(s);
            if !self.dequeue_entity(cx, rq, s, flags) {
                if s == se {
                    return false;
                }
                // A group entity was delayed: it stays queued, its counts still drop.
                slice = self.cfs_rq_min_slice(rq);
                break;
            }
            idle = self.idle_above(s, tasks, idle);
            self.count_h(rq, -1, tasks, runnable, idle);
            if self.stops_at_throttled(rq) {
                return true;
            }
            walk = self.parent_entity(s);
            if self.rq(rq).load != 0 {
                slice = self.cfs_rq_min_slice(rq);
                if sleep && !self.throttled_hierarchy(rq) {
                    if let Some(parent) = walk {
                        self.set_next_buddy(parent);
                    }
                }
                break;
            }
            flags = (flags | dequeue::SLEEP) & !(dequeue::DELAYED | dequeue::SPECIAL);
        }
        while let Some(s) = walk {
            let rq = self.cfs_rq_of(s);
            self.update_load_avg(cx, rq, s, UPDATE_TG);
            self.update_cfs_group(cx, s);
            if self.t.version >= Version::V6_12 && slice != u64::MAX && slice != 0 {
                self.requeue_slice(rq, s, slice);
                slice = self.cfs_rq_min_slice(rq);
            }
            idle = self.idle_above(s, tasks, idle);
            self.count_h(rq, -1, tasks, runnable, idle);
            if self.stops_at_throttled(rq) {
                return true;
            }
            walk = self.parent_entity(s);
        }
        true
    }

    /// `dequeue_entity`; `false` if the dequeue of a sleeping, ineligible entity is delayed
    /// (v6.12+ DELAY_DEQUEUE).
    pub(super) fn dequeue_entity(&mut self, cx: &mut Ctx, rq: RqId, se: Se, flags: u32) -> bool {
        let sleep = flags & dequeue::SLEEP != 0;
        self.update_curr(cx, rq);
        self.clear_buddies(rq, se);
        if self.eevdf_on() && flags & dequeue::DELAYED == 0 {
            let delay = sleep && flags & dequeue::SPECIAL == 0;
            if self.t.feat.delay_dequeue && delay && !self.entity_eligible(rq, se) {
                self.update_load_avg(cx, rq, se, 0);
                self.set_delayed(se);
                return false;
            }
        }
        self.update_load_avg(cx, rq, se, UPDATE_TG);
        self.runnable_load_dequeue(rq, se);
        if self.eevdf_on() {
            self.update_entity_lag(rq, se);
            if self.t.feat.place_rel_deadline && !sleep {
                let e = self.em(se);
                e.deadline = e.deadline.wrapping_sub(e.vruntime);
                e.rel_deadline = true;
            }
        }
        if self.rq(rq).curr != Some(se) {
            self.tree_remove(rq, se);
        }
        self.em(se).on_rq = false;
        self.em(se).migrating = flags & dequeue::MIGRATE != 0;
        self.account_entity_dequeue(rq, se);
        if !self.eevdf_on() && !sleep {
            let min = self.rq(rq).min_vruntime;
            let e = self.em(se);
            e.vruntime = e.vruntime.wrapping_sub(min);
            e.relative = true;
        }
        self.return_cfs_rq_runtime(cx, rq);
        self.update_cfs_group(cx, se);
        self.update_min_vruntime(rq);
        if flags & dequeue::DELAYED != 0 {
            self.finish_delayed_dequeue_entity(se);
        }
        true
    }

    /// `set_delayed`: the entity stays queued; tasks below it stop counting as runnable
    /// (before v6.18, up to a throttled runqueue: the counts above it left with it).
    fn set_delayed(&mut self, se: Se) {
        self.em(se).sched_delayed = true;
        self.counters.delayed_dequeues += 1;
        if self.se_task(se).is_some() {
            for a in self.path(se) {
                let rq = self.cfs_rq_of(a);
                self.rqm(rq).h_nr_runnable -= 1;
                if self.stops_at_throttled(rq) {
                    break;
                }
            }
        }
    }

    fn clear_delayed(&mut self, se: Se) {
        self.em(se).sched_delayed = false;
        if self.se_task(se).is_some() {
            for a in self.path(se) {
                let rq = self.cfs_rq_of(a);
                self.rqm(rq).h_nr_runnable += 1;
                if self.stops_at_throttled(rq) {
                    break;
                }
            }
        }
    }

    /// `finish_delayed_dequeue_entity`: the delay is over (`clear_delayed`: its tasks count as
    /// runnable again, just before the dequeue takes them off); DELAY_ZERO drops positive lag.
    fn finish_delayed_dequeue_entity(&mut self, se: Se) {
        self.clear_delayed(se);
        if self.t.feat.delay_zero && self.e(se).vlag > 0 {
            self.em(se).vlag = 0;
        }
    }

    /// `requeue_delayed_entity`: a delayed entity is woken in place; with DELAY_ZERO one
    /// that became eligible meanwhile is placed afresh at V.
    pub(super) fn requeue_delayed_entity(&mut self, cx: &mut Ctx, se: Se) {
        let rq = self.cfs_rq_of(se);
        if self.t.feat.delay_zero {
            self.update_entity_lag(rq, se);
            if self.e(se).vlag > 0 {
                let is_curr = self.rq(rq).curr == Some(se);
                self.rqm(rq).nr_running -= 1;
                if !is_curr {
                    self.tree_remove(rq, se);
                }
                self.em(se).vlag = 0;
                self.place_entity_eevdf(rq, se, 0);
                if !is_curr {
                    self.tree_insert(rq, se);
                }
                self.rqm(rq).nr_running += 1;
            }
        }
        self.update_load_avg(cx, rq, se, 0);
        self.clear_delayed(se);
    }
}
