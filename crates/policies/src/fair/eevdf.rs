//! The EEVDF layer of the fair class (`kernel/sched/fair.c`, v6.6, v6.12, v6.18): lag
//! (`update_entity_lag`), lag-preserving placement (`place_entity`), virtual deadlines
//! (`update_deadline`), the pick (`__pick_eevdf`), slice protection (RUN_TO_PARITY:
//! `set_protect_slice`, `protect_slice`, `cancel_protect_slice`, `update_protect_slice`),
//! PREEMPT_SHORT, wakeup preemption and yield.
//!
//! Versions: v6.6 is 6.6.0; v6.12 is 6.12.0 (`min_vruntime` as the origin of V, base slice
//! 0.75 ms, no PICK_BUDDY); v6.18 is 6.18.2 as released (yield forfeits the rest of an
//! eligible request).

use super::entity::{RqId, Se};
use super::weights::calc_delta_fair;
use super::{div_i128, vdiff, Fair, Version};
use schedlab_sched_api::enqueue;

impl Fair {
    /// `update_entity_lag`: `vlag = V − vruntime`, clamped to the virtual time of
    /// `max(2·slice, TICK_NSEC)` at the entity's weight.
    pub(super) fn update_entity_lag(&mut self, rq: RqId, se: Se) {
        let v = self.avg_vruntime(rq);
        let e = self.e(se);
        let vlag = vdiff(v, e.vruntime);
        let limit = calc_delta_fair((2 * e.slice).max(self.jiffy), e.load) as i64;
        self.em(se).vlag = vlag.clamp(-limit, limit);
    }

    /// `place_entity` (EEVDF): at `V − lag`, the lag inflated by `(W + w) / W` so that it
    /// survives the entity's own effect on V; deadline one (v6.12+ first: half a) request
    /// later, or restored from a relative deadline (PLACE_REL_DEADLINE).
    pub(super) fn place_entity_eevdf(&mut self, rq: RqId, se: Se, flags: u32) {
        let v = self.avg_vruntime(rq);
        let version = self.t.version;
        if version == Version::V6_6 || !self.e(se).custom_slice {
            self.em(se).slice = self.t.base_slice;
        }
        let e = self.e(se);
        let mut vslice = calc_delta_fair(e.slice, e.load);
        let nr = self.rq(rq).nr_running;
        let mut lag: i128 = 0;
        if self.t.feat.place_lag && nr != 0 && !(version >= Version::V6_18 && e.vlag == 0) {
            let r = self.rq(rq);
            let mut load = r.avg_load as i128;
            if let Some(c) = r.curr.filter(|&c| self.e(c).on_rq) {
                load += self.e(c).load.weight as i128;
            }
            lag = e.vlag as i128 * (load + e.load.weight as i128);
            lag = div_i128(lag, load.max(1));
        }
        let vruntime = v.wrapping_sub(lag as i64 as u64);
        let rel = e.rel_deadline
            && (version >= Version::V6_18 || (version == Version::V6_12 && self.t.feat.place_rel_deadline));
        let e = self.em(se);
        e.vruntime = vruntime;
        if rel {
            e.deadline = e.deadline.wrapping_add(vruntime);
            e.rel_deadline = false;
            return;
        }
        // v6.6.0's `wake_up_new_task` does not pass ENQUEUE_INITIAL: a child gets a full slice.
        if self.t.feat.place_deadline_initial && flags & enqueue::INITIAL != 0 && version >= Version::V6_12 {
            vslice /= 2;
        }
        self.em(se).deadline = vruntime.wrapping_add(vslice);
    }

    /// `update_deadline`: a request is complete when vruntime reaches the deadline; the
    /// next one starts at the current vruntime. Returns whether a new deadline was set.
    pub(super) fn update_deadline(&mut self, _rq: RqId, se: Se) -> bool {
        let e = self.e(se);
        if vdiff(e.vruntime, e.deadline) < 0 {
            return false;
        }
        if self.t.version == Version::V6_6 || !e.custom_slice {
            self.em(se).slice = self.t.base_slice;
        }
        let e = self.em(se);
        e.deadline = e.vruntime.wrapping_add(calc_delta_fair(e.slice, e.load));
        true
    }

    /// `did_preempt_short` (v6.12): curr's protection was cancelled by a shorter-slice
    /// wakeup and curr is no longer eligible.
    pub(super) fn did_preempt_short(&self, rq: RqId, c: Se) -> bool {
        let e = self.e(c);
        self.t.feat.preempt_short && e.vlag as u64 != e.deadline && !self.entity_eligible(rq, c)
    }

    /// `protect_slice`: 6.6/6.12 `vlag == deadline` (the marker `set_next_entity` leaves);
    /// 6.18 `vprot > vruntime`.
    pub(super) fn protect_slice(&self, se: Se) -> bool {
        let e = self.e(se);
        if self.t.version >= Version::V6_18 {
            vdiff(e.vprot, e.vruntime) > 0
        } else {
            e.vlag as u64 == e.deadline
        }
    }

    /// `set_protect_slice`, from `set_next_entity`.
    pub(super) fn set_protect_slice(&mut self, rq: RqId, se: Se) {
        if self.t.version < Version::V6_18 {
            let e = self.em(se);
            e.vlag = e.deadline as i64;
            return;
        }
        let mut slice = self.t.normalized_base_slice;
        if self.t.feat.run_to_parity {
            slice = self.cfs_rq_min_slice(rq);
        }
        let e = self.e(se);
        slice = slice.min(e.slice);
        let mut vprot = e.deadline;
        if slice != e.slice {
            let bound = e.vruntime.wrapping_add(calc_delta_fair(slice, e.load));
            if vdiff(bound, vprot) < 0 {
                vprot = bound;
            }
        }
        self.em(se).vprot = vprot;
    }

    /// `cancel_protect_slice` (6.18); 6.12 breaks the marker (`vlag = deadline + 1`).
    pub(super) fn cancel_protect_slice(&mut self, se: Se) {
        if !self.protect_slice(se) {
            return;
        }
        let v618 = self.t.version >= Version::V6_18;
        let e = self.em(se);
        if v618 {
            e.vprot = e.vruntime;
        } else {
            e.vlag = e.deadline.wrapping_add(1) as i64;
        }
    }

    /// `update_protect_slice` (6.18): protect curr only for the queue's shortest slice.
    fn update_protect_slice(&mut self, rq: RqId, se: Se) {
        let min = self.cfs_rq_min_slice(rq);
        let e = self.e(se);
        let bound = e.vruntime.wrapping_add(calc_delta_fair(min, e.load));
        if vdiff(bound, e.vprot) < 0 {
            self.em(se).vprot = bound;
        }
    }

    /// `__pick_eevdf(cfs_rq, protect)`: the earliest virtual deadline among eligible
    /// entities (the tree and a queued `curr`); a protected `curr` keeps the CPU.
    pub(super) fn pick_eevdf(&mut self, rq: RqId, protect: bool) -> Option<Se> {
        let version = self.t.version;
        let r = self.rq(rq);
        let first = self.leftmost(rq);
        let queued_curr = r.curr.filter(|&c| self.e(c).on_rq);
        if version >= Version::V6_12 && r.nr_running == 1 {
            return queued_curr.or(first);
        }
        // The queue does not change during the pick: its sums are read once.
        let eligible = self.eligibility(rq);
        let curr = queued_curr.filter(|&c| eligible(self.e(c).vruntime));
        let parity = if version >= Version::V6_18 { protect } else { self.t.feat.run_to_parity };
        if let Some(c) = curr.filter(|&c| parity && self.protect_slice(c)) {
            return Some(c);
        }
        let (best, visited) = self.nodes.pick_eligible_counted(&self.rq(rq).timeline, &eligible);
        let best = best.map(Se);
        // The heap search's nodes, then `curr` against the best.
        self.count(|w| w.compared += visited + 1);
        let picked = match (best, curr) {
            (None, c) => c,
            (Some(b), None) => Some(b),
            (Some(b), Some(c)) => {
                let cd = vdiff(self.e(c).deadline, self.e(b).deadline);
                // 6.6 keeps curr on a tie; 6.12+ only if curr's deadline is strictly earlier.
                if cd < 0 || (cd == 0 && version == Version::V6_6) {
                    Some(c)
                } else {
                    Some(b)
                }
            }
        };
        let picked = picked.or(first);
        if picked.is_some_and(|p| !eligible(self.e(p).vruntime)) {
            self.counters.ineligible_picks += 1;
        }
        picked
    }

    /// EEVDF wakeup preemption at the matching level: does the wakee's entity `pse` win
    /// the pick against `se` (curr's)?
    pub(super) fn wakeup_preempt_eevdf(&mut self, rq: RqId, se: Se, pse: Se) -> bool {
        let short_slice = self.t.feat.preempt_short && self.e(pse).slice < self.e(se).slice;
        match self.t.version {
            Version::V4_9 | Version::V5_15 | Version::V6_6 => self.pick_eevdf(rq, true) == Some(pse),
            Version::V6_12 => {
                let (p, c) = (self.e(pse), self.e(se));
                let earlier = vdiff(p.deadline, c.deadline) < 0;
                if short_slice
                    && self.entity_eligible(rq, pse)
                    && (earlier || !self.entity_eligible(rq, se))
                    && self.protect_slice(se)
                {
                    self.cancel_protect_slice(se);
                }
                self.pick_eevdf(rq, true) == Some(pse)
            }
            Version::V6_18 => {
                if self.pick_eevdf(rq, !short_slice) == Some(pse) {
                    if short_slice {
                        self.cancel_protect_slice(se);
                    }
                    return true;
                }
                if self.t.feat.run_to_parity && short_slice {
                    self.update_protect_slice(rq, se);
                }
                false
            }
        }
    }

    /// `yield_task_fair` (EEVDF, after `update_curr`): push the deadline one request later;
    /// 6.18 first forfeits the rest of an eligible request.
    pub(super) fn yield_eevdf(&mut self, rq: RqId, se: Se) {
        if self.t.version >= Version::V6_18 {
            if !self.entity_eligible(rq, se) {
                return;
            }
            let e = self.em(se);
            e.vruntime = e.deadline;
        }
        let e = self.em(se);
        e.deadline = e.deadline.wrapping_add(calc_delta_fair(e.slice, e.load));
        if self.t.version >= Version::V6_18 {
            self.update_min_vruntime(rq);
        }
    }
}
