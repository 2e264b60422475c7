//! The CFS layer of the fair class, as in v5.15 `kernel/sched/fair.c`: the period and
//! slice (`__sched_period`, `sched_slice`, `sched_vslice`), placement with START_DEBIT and
//! sleeper credit (`place_entity`), vruntime normalisation across runqueues, slice expiry
//! at the tick (`check_preempt_tick`), wakeup granularity (`wakeup_gran`,
//! `wakeup_preempt_entity`) and the buddy-aware pick (`pick_next_entity`).

use super::entity::{RqId, Se};
use super::weights::{calc_delta, calc_delta_fair, LoadWeight};
use super::{vdiff, Fair, Version};
use schedlab_sched_api::{enqueue, Ctx};

impl Fair {
    /// `__sched_period`.
    fn sched_period(&self, nr_running: u64) -> u64 {
        if nr_running > self.t.nr_latency {
            nr_running * self.t.min_granularity
        } else {
            self.t.latency
        }
    }

    /// `sched_slice` (v5.15, ALT_PERIOD and BASE_SLICE; v4.9 has neither): the entity's
    /// weighted share of the period at every level of its hierarchy, in wall-clock ns.
    pub(super) fn sched_slice(&self, rq: RqId, se: Se) -> u64 {
        let nr = self.slice_nr_running(rq) + u64::from(!self.e(se).on_rq);
        let mut slice = self.sched_period(nr);
        for s in self.hierarchy(se) {
            let q = self.rq(self.cfs_rq_of(s));
            let e = self.e(s);
            let load = q.load + if e.on_rq { 0 } else { e.load.weight };
            slice = calc_delta(slice, e.load.weight, LoadWeight::sum(load));
        }
        if self.t.feat.base_slice {
            slice = slice.max(self.t.min_granularity);
        }
        slice
    }

    /// The task count the period is computed from: v4.9 the entity's own runqueue's
    /// `nr_running`; v5.15 (`ALT_PERIOD`) the root's `h_nr_running`.
    fn slice_nr_running(&self, rq: RqId) -> u64 {
        match self.t.version {
            Version::V4_9 => self.rq(rq).nr_running,
            _ => self.h_nr_running(self.rq(rq).cpu),
        }
    }

    /// `sched_vslice`.
    fn sched_vslice(&self, rq: RqId, se: Se) -> u64 {
        calc_delta_fair(self.sched_slice(rq, se), self.e(se).load)
    }

    /// `place_entity` (≤6.5): START_DEBIT for new tasks, sleeper credit for wakeups; never
    /// moves an entity backwards.
    pub(super) fn place_entity_cfs(&mut self, rq: RqId, se: Se, initial: bool) {
        let mut v = self.rq(rq).min_vruntime;
        if initial && self.t.feat.start_debit {
            v = v.wrapping_add(self.sched_vslice(rq, se));
        }
        if !initial {
            let mut thresh = self.t.latency;
            if self.t.feat.gentle_fair_sleepers {
                thresh /= 2;
            }
            v = v.wrapping_sub(thresh);
        }
        let e = self.em(se);
        if vdiff(v, e.vruntime) > 0 {
            e.vruntime = v;
        }
    }

    /// `enqueue_entity`'s renormalisation (≤6.5): an entity that is not waking on the
    /// runqueue it slept on had its vruntime stored relative to the old `min_vruntime`.
    pub(super) fn renormalise_cfs(&mut self, cx: &mut Ctx, rq: RqId, se: Se, flags: u32, is_curr: bool) {
        let renorm = flags & enqueue::WAKEUP == 0 || flags & enqueue::MIGRATED != 0;
        let relative = renorm && self.e(se).relative;
        if relative && is_curr {
            let min = self.rq(rq).min_vruntime;
            self.em(se).vruntime = self.e(se).vruntime.wrapping_add(min);
        }
        self.update_curr(cx, rq);
        if relative && !is_curr {
            let min = self.rq(rq).min_vruntime;
            self.em(se).vruntime = self.e(se).vruntime.wrapping_add(min);
        }
        if relative {
            self.em(se).relative = false;
        }
    }

    /// `wakeup_gran`: the wakeup granularity in the *wakee's* virtual time.
    pub(super) fn wakeup_gran(&self, se: Se) -> i64 {
        calc_delta_fair(self.t.wakeup_granularity, self.e(se).load) as i64
    }

    /// `wakeup_preempt_entity(curr, se)`: −1 if `se` is not left of `curr`, 1 if it leads by
    /// more than `wakeup_gran(se)`, else 0.
    pub(super) fn wakeup_preempt_entity(&self, curr: Se, se: Se) -> i32 {
        let d = vdiff(self.e(curr).vruntime, self.e(se).vruntime);
        if d <= 0 {
            -1
        } else if d > self.wakeup_gran(se) {
            1
        } else {
            0
        }
    }

    fn entity_before(&self, a: Se, b: Se) -> bool {
        vdiff(self.e(a).vruntime, self.e(b).vruntime) < 0
    }

    /// `pick_next_entity(cfs_rq, curr)` (v5.15): the leftmost of the tree and a queued
    /// `curr`, unless it is the skip buddy; then the next and last buddies if they are not
    /// too far right.
    pub(super) fn pick_next_entity_cfs(&self, rq: RqId) -> Option<Se> {
        let r = self.rq(rq);
        let curr = r.curr.filter(|&c| self.e(c).on_rq);
        let first = self.leftmost(rq);
        let left = match (first, curr) {
            (Some(l), Some(c)) if self.entity_before(c, l) => c,
            (Some(l), _) => l,
            (None, Some(c)) => c,
            (None, None) => return None,
        };
        let mut se = left;
        if r.skip == Some(se) {
            let second = if Some(se) == curr {
                first
            } else {
                match (self.nodes.second(&r.timeline).map(Se), curr) {
                    (Some(s), Some(c)) if self.entity_before(c, s) => Some(c),
                    (None, c) => c,
                    (s, _) => s,
                }
            };
            if let Some(s) = second.filter(|&s| self.wakeup_preempt_entity(s, left) < 1) {
                se = s;
            }
        }
        if let Some(n) = r.next.filter(|&n| self.wakeup_preempt_entity(n, left) < 1) {
            return Some(n);
        }
        if let Some(l) = r.last.filter(|&l| self.wakeup_preempt_entity(l, left) < 1) {
            return Some(l);
        }
        Some(se)
    }

    /// `check_preempt_tick` (≤6.5).
    pub(super) fn check_preempt_tick(&mut self, cx: &mut Ctx, rq: RqId, curr: Se) {
        let ideal = self.sched_slice(rq, curr);
        let e = self.e(curr);
        let ran = e.sum_exec_runtime - e.prev_sum_exec_runtime;
        let cpu = self.rq(rq).cpu;
        if ran > ideal {
            cx.resched_curr(cpu);
            self.clear_buddies(rq, curr);
            return;
        }
        if ran < self.t.min_granularity {
            return;
        }
        if let Some(left) = self.leftmost(rq) {
            // Compares a vruntime difference with a wall-clock slice, as the kernel does.
            let d = vdiff(self.e(curr).vruntime, self.e(left).vruntime);
            if d > ideal as i64 {
                cx.resched_curr(cpu);
            }
        }
    }
}
