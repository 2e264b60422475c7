//! Picking, the tick, yield and wakeup preemption through the hierarchy
//! (`kernel/sched/fair.c`: `pick_next_task_fair`/`pick_task_fair`, `put_prev_entity`,
//! `set_next_entity`, `put_prev_task_fair`, `task_tick_fair`/`entity_tick`,
//! `yield_task_fair`, `check_preempt_wakeup(_fair)`, `find_matching_se`, buddies).

use super::entity::{RqId, Se};
use super::load::UPDATE_TG;
use super::{Fair, Version};
use schedlab_sched_api::{dequeue, wf, Ctx, TaskPolicy};
use schedlab_sim::{CpuId, TaskId};

impl Fair {
    /// `pick_next_task_fair` with group scheduling: walk down picking at each level; if the
    /// pick is not the previous task, put back and set only the part of the hierarchy that
    /// changes. A task picked again keeps its slice accounting (nothing is put or set).
    pub(super) fn pick_next_task_fair(&mut self, cx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        let mut prev = self.cpu[cpu].prev.take().map(|p| self.task_se(p));
        if let Some(pse) = prev.filter(|_| self.bw_used && !self.task_throttle()) {
            if self.prev_runtime_spent(cx, pse) {
                // v5.15: a level ran out of runtime: the `simple` path puts prev back
                // (throttling there) and picks from the root.
                self.put_prev_path(cx, pse);
                prev = None;
            }
        }
        let se = self.pick_task_fair(cx, cpu);
        match se {
            None => {
                if let Some(pse) = prev {
                    self.put_prev_path(cx, pse);
                }
                None
            }
            Some(se) => Some(self.set_picked(cx, cpu, prev, se)),
        }
    }

    /// v5.15 `pick_next_task_fair`'s walk down prev's levels: each `curr` is brought up to
    /// date, and a limited level whose runtime is spent (`check_cfs_rq_runtime`) sends the
    /// pick to its `simple` path.
    fn prev_runtime_spent(&mut self, cx: &mut Ctx, pse: Se) -> bool {
        let mut spent = false;
        for s in self.path(pse) {
            let rq = self.cfs_rq_of(s);
            if self.rq(rq).curr.is_some_and(|c| self.e(c).on_rq) {
                self.update_curr(cx, rq);
            }
            let b = &self.bw_rq[rq.0 as usize];
            spent |= b.runtime_enabled && b.runtime_remaining <= 0;
        }
        spent
    }

    /// `put_prev_task_fair` on its own: a higher class (rt, deadline) takes the CPU, so the
    /// fair task the kernel put back is settled now (`core.c:put_prev_set_next_task`, v6.12)
    /// rather than at the fair class's next pick.
    pub fn put_prev_fair(&mut self, cx: &mut Ctx, cpu: CpuId) {
        if let Some(p) = self.cpu[cpu].prev.take() {
            let pse = self.task_se(p);
            self.put_prev_path(cx, pse);
            self.flush_work(cx);
        }
    }

    /// The second half of `pick_next_task_fair` once `se` is chosen: switch the hierarchy
    /// from `prev` to it, move it to the front of `cfs_tasks`, note its slice (CFS).
    fn set_picked(&mut self, cx: &mut Ctx, cpu: CpuId, prev: Option<Se>, se: Se) -> TaskId {
        if Some(se) != prev {
            self.switch_path(cx, prev, se);
        }
        let p = self.se_task(se).expect("picks end at a task");
        self.links.move_front(&mut self.cpu[cpu].cfs_tasks, cpu, p);
        if !self.eevdf_on() {
            let slice = self.sched_slice(self.cfs_rq_of(se), se);
            self.em(se).last_slice = slice;
        }
        p
    }

    /// A direct switch to the queued task `p` (`docs/futex.md`): the clocks of every
    /// level are brought up to date as a pick would (`update_curr`), then `p`'s entity is
    /// set as if the pick had chosen it — it was placed by its wakeup enqueue
    /// (`place_entity`: vruntime/lag as any wakeup), leaves the tree, and is charged for
    /// what it runs from now on. Only the choice is skipped.
    pub(super) fn direct_switch_fair(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId) -> bool {
        let se = self.task_se(p);
        if !self.e(se).on_rq || self.e(se).sched_delayed || self.throttled_hierarchy(self.cfs_rq_of(se)) {
            return false;
        }
        let prev = self.cpu[cpu].prev.take().map(|t| self.task_se(t));
        let mut at = Some(se);
        while let Some(s) = at {
            let rq = self.cfs_rq_of(s);
            if self.rq(rq).curr.is_some_and(|c| self.e(c).on_rq) {
                self.update_curr(cx, rq);
            }
            at = self.parent_entity(s);
        }
        self.set_picked(cx, cpu, prev, se);
        true
    }

    /// `pick_task_fair`: from the root down; a delayed entity chosen on the way is dequeued
    /// for good and the pick restarts (each restart removes one entity, so it ends). v6.18:
    /// a task picked through a throttled level is parked and the pick restarts (each
    /// restart parks one task).
    fn pick_task_fair(&mut self, cx: &mut Ctx, cpu: CpuId) -> Option<Se> {
        let task_throttle = self.bw_used && self.task_throttle();
        'again: loop {
            let mut rq = self.root(cpu);
            if self.rq(rq).nr_running == 0 {
                return None;
            }
            let mut throttled = false;
            loop {
                if self.rq(rq).curr.is_some_and(|c| self.e(c).on_rq) {
                    self.update_curr(cx, rq);
                }
                if task_throttle {
                    throttled |= self.check_cfs_rq_runtime(cx, rq);
                }
                let before = self.work.get().compared;
                let Some(se) = self.pick_next_entity(cx, rq) else { continue 'again };
                self.counters.picks += 1;
                if self.eevdf_on() {
                    self.counters.pick_steps += self.work.get().compared - before;
                } else {
                    // `pick_next_entity` (v5.15): the cached leftmost against `curr` (and buddies).
                    self.count(|w| w.compared += 2);
                    self.counters.pick_steps += 1;
                }
                match self.e(se).my_q {
                    Some(q) => rq = q,
                    None if throttled => {
                        self.park_throttled_task(cx, se);
                        continue 'again;
                    }
                    None => return Some(se),
                }
            }
        }
    }

    /// `pick_next_entity`; `None` if EEVDF chose a delayed entity and dequeued it.
    fn pick_next_entity(&mut self, cx: &mut Ctx, rq: RqId) -> Option<Se> {
        if !self.eevdf_on() {
            return self.pick_next_entity_cfs(rq);
        }
        let buddy = if self.t.version >= Version::V6_18 { self.t.feat.pick_buddy } else { self.t.feat.next_buddy };
        if buddy {
            if let Some(n) = self.rq(rq).next.filter(|&n| self.entity_eligible(rq, n)) {
                return Some(n);
            }
        }
        let se = self.pick_eevdf(rq, true)?;
        if self.e(se).sched_delayed {
            self.dequeue_delayed(cx, se);
            return None;
        }
        Some(se)
    }

    /// The delayed dequeue of `se` completes (`dequeue_entities(DEQUEUE_SLEEP |
    /// DEQUEUE_DELAYED)`); a task then blocks (`__block_task`).
    fn dequeue_delayed(&mut self, cx: &mut Ctx, se: Se) {
        self.dequeue_entities(cx, se, dequeue::SLEEP | dequeue::DELAYED);
        if let Some(p) = self.se_task(se) {
            cx.blocked(p);
        }
    }

    /// `is_same_group`.
    fn same_group(&self, a: Se, b: Se) -> Option<RqId> {
        (self.cfs_rq_of(a) == self.cfs_rq_of(b)).then(|| self.cfs_rq_of(a))
    }

    /// The `prev != p` block of `pick_next_task_fair`: put prev's levels and set next's
    /// until both reach a common runqueue; without a fair prev, set next's whole path.
    fn switch_path(&mut self, cx: &mut Ctx, prev: Option<Se>, mut se: Se) {
        let Some(mut pse) = prev else {
            for s in self.path(se) {
                let rq = self.cfs_rq_of(s);
                self.set_next_entity(cx, rq, s);
            }
            return;
        };
        loop {
            if let Some(rq) = self.same_group(se, pse) {
                self.put_prev_entity(cx, rq, pse);
                self.set_next_entity(cx, rq, se);
                return;
            }
            let (sd, pd) = (self.e(se).depth, self.e(pse).depth);
            if sd <= pd {
                let rq = self.cfs_rq_of(pse);
                self.put_prev_entity(cx, rq, pse);
                pse = self.parent_entity(pse).expect("deeper than its sibling");
            }
            if sd >= pd {
                let rq = self.cfs_rq_of(se);
                self.set_next_entity(cx, rq, se);
                se = self.parent_entity(se).expect("deeper than its sibling");
            }
        }
    }

    /// `put_prev_task_fair`: put back every level of prev's path.
    pub(super) fn put_prev_task_fair(&mut self, cx: &mut Ctx, pse: Se) {
        self.put_prev_path(cx, pse);
    }

    /// `set_next_task_fair`: `se` and its ancestors become `curr` of their runqueues.
    pub(super) fn set_next_task_fair(&mut self, cx: &mut Ctx, se: Se) {
        self.switch_path(cx, None, se);
    }

    fn put_prev_path(&mut self, cx: &mut Ctx, pse: Se) {
        for s in self.path(pse) {
            let rq = self.cfs_rq_of(s);
            self.put_prev_entity(cx, rq, s);
        }
    }

    /// `put_prev_entity`.
    fn put_prev_entity(&mut self, cx: &mut Ctx, rq: RqId, prev: Se) {
        if self.e(prev).on_rq {
            self.update_curr(cx, rq);
        }
        self.check_cfs_rq_runtime(cx, rq);
        if self.e(prev).on_rq {
            self.tree_insert(rq, prev);
            self.update_load_avg(cx, rq, prev, 0);
        }
        self.rqm(rq).curr = None;
    }

    /// `set_next_entity`: out of the tree, charged from now, slice accounting restarts;
    /// EEVDF arms the slice protection.
    fn set_next_entity(&mut self, cx: &mut Ctx, rq: RqId, se: Se) {
        self.clear_buddies(rq, se);
        if self.e(se).on_rq {
            self.tree_remove(rq, se);
            self.update_load_avg(cx, rq, se, UPDATE_TG);
            if self.eevdf_on() {
                self.set_protect_slice(rq, se);
            }
        }
        let e = self.em(se);
        e.exec_start = cx.now.0;
        e.prev_sum_exec_runtime = e.sum_exec_runtime;
        self.rqm(rq).curr = Some(se);
    }

    /// `clear_buddies`: forget `se` as a buddy at its level and, for `next`, above.
    pub(super) fn clear_buddies(&mut self, rq: RqId, se: Se) {
        let r = self.rqm(rq);
        if r.last == Some(se) {
            r.last = None;
        }
        if r.skip == Some(se) {
            r.skip = None;
        }
        let mut at = Some(se);
        while let Some(s) = at {
            let q = self.cfs_rq_of(s);
            if self.rq(q).next != Some(s) {
                break;
            }
            self.rqm(q).next = None;
            at = self.parent_entity(s);
        }
    }

    /// `set_next_buddy`: prefer `se` (and its ancestors) at the next pick.
    pub(super) fn set_next_buddy(&mut self, se: Se) {
        if self.e(se).idle_policy {
            return;
        }
        for s in self.path(se) {
            if !self.e(s).on_rq {
                return;
            }
            let q = self.cfs_rq_of(s);
            self.rqm(q).next = Some(s);
        }
    }

    /// `task_tick_fair` → `entity_tick` at every level, bottom up.
    pub(super) fn task_tick_fair(&mut self, cx: &mut Ctx, cpu: CpuId, curr: TaskId) {
        let _ = cpu;
        for se in self.path(self.task_se(curr)) {
            let rq = self.cfs_rq_of(se);
            self.update_curr(cx, rq);
            self.update_load_avg(cx, rq, se, UPDATE_TG);
            self.update_cfs_group(cx, se);
            if !self.eevdf_on() && self.rq(rq).nr_running > 1 {
                self.check_preempt_tick(cx, rq, se);
            }
        }
    }

    /// `yield_task_fair`.
    pub(super) fn yield_task_fair(&mut self, cx: &mut Ctx, cpu: CpuId, curr: TaskId) {
        if cx.cpus[cpu].nr_running == 1 {
            return;
        }
        let se = self.task_se(curr);
        let rq = self.cfs_rq_of(se);
        self.clear_buddies(rq, se);
        if self.eevdf_on() {
            self.update_curr(cx, rq);
            self.yield_eevdf(rq, se);
            return;
        }
        if cx.task(curr).policy != TaskPolicy::Batch {
            self.update_curr(cx, rq);
        }
        // `set_skip_buddy`
        for s in self.path(se) {
            let q = self.cfs_rq_of(s);
            self.rqm(q).skip = Some(s);
        }
    }

    /// `find_matching_se`: walk both entities up to siblings on one runqueue.
    pub(super) fn find_matching_se(&self, mut se: Se, mut pse: Se) -> (Se, Se) {
        while self.e(se).depth > self.e(pse).depth {
            se = self.parent_entity(se).expect("depth > 0");
        }
        while self.e(pse).depth > self.e(se).depth {
            pse = self.parent_entity(pse).expect("depth > 0");
        }
        while self.same_group(se, pse).is_none() {
            se = self.parent_entity(se).expect("a common root");
            pse = self.parent_entity(pse).expect("a common root");
        }
        (se, pse)
    }

    /// `check_preempt_wakeup` (v5.15, v6.6) / `check_preempt_wakeup_fair` (v6.12+): the
    /// checks common to both flavours, then the flavour's test at the matching level.
    pub(super) fn check_preempt_wakeup_fair(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, wake_flags: u32) {
        let Some(curr) = cx.cpus[cpu].curr else {
            cx.resched_curr(cpu);
            return;
        };
        let (se, pse) = (self.task_se(curr), self.task_se(p));
        if se == pse || self.throttled_hierarchy(self.cfs_rq_of(pse)) || self.tf[p].throttled {
            return;
        }
        let curr_rq = self.cfs_rq_of(se);
        let scale = self.rq(curr_rq).nr_running >= self.t.nr_latency;
        let mut buddy_marked = false;
        let fork = wake_flags & wf::FORK != 0;
        if self.t.feat.next_buddy && !fork && (self.eevdf_on() || scale) && !self.e(pse).sched_delayed {
            self.set_next_buddy(pse);
            buddy_marked = true;
        }
        if cx.cpus[cpu].need_resched {
            return;
        }
        let (curr_pol, p_pol) = (cx.task(curr).policy, cx.task(p).policy);
        let old_rules = self.t.version <= Version::V6_12;
        if old_rules && curr_pol == TaskPolicy::Idle && p_pol != TaskPolicy::Idle {
            return self.preempt_wakeup(cx, cpu, se, scale, false);
        }
        if (old_rules && p_pol != TaskPolicy::Normal) || !self.t.feat.wakeup_preemption {
            return;
        }
        let (se, pse) = self.find_matching_se(se, pse);
        let (cse_idle, pse_idle) = (self.e(se).idle_policy, self.e(pse).idle_policy);
        if cse_idle && !pse_idle {
            return self.preempt_wakeup(cx, cpu, se, scale, true);
        }
        if cse_idle != pse_idle || p_pol != TaskPolicy::Normal {
            return;
        }
        let rq = self.cfs_rq_of(se);
        self.update_curr(cx, rq);
        if self.eevdf_on() {
            if self.wakeup_preempt_eevdf(rq, se, pse) {
                cx.resched_curr(cpu);
            }
        } else if self.wakeup_preempt_entity(se, pse) == 1 {
            if !buddy_marked {
                self.set_next_buddy(pse);
            }
            self.preempt_wakeup(cx, cpu, se, scale, false);
        }
    }

    /// The `preempt:` label: reschedule; CFS remembers curr as the last buddy, EEVDF 6.18
    /// drops an idle curr's protection.
    fn preempt_wakeup(&mut self, cx: &mut Ctx, cpu: CpuId, se: Se, scale: bool, cancel: bool) {
        cx.resched_curr(cpu);
        if self.eevdf_on() {
            if cancel && self.t.version >= Version::V6_18 {
                self.cancel_protect_slice(se);
            }
            return;
        }
        if self.e(se).on_rq && self.t.feat.last_buddy && scale && self.se_task(se).is_some() {
            let rq = self.cfs_rq_of(se);
            for s in self.path(se) {
                let q = self.cfs_rq_of(s);
                self.rqm(q).last = Some(s);
            }
            let _ = rq;
        }
    }
}
