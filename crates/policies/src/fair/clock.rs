//! Virtual time of a fair runqueue: charging the running entity (`update_curr`), the
//! monotonic origin (`update_min_vruntime`), EEVDF's weighted average `V`
//! (`avg_vruntime`) and eligibility, and the tree insert/remove that keep the sums
//! (`__enqueue_entity`, `__dequeue_entity`). `kernel/sched/fair.c`, v5.15 and v6.6–v6.18.

use super::entity::{RqId, Se};
use super::tree::Entry;
use super::weights::calc_delta_fair;
use super::{div_i128, vdiff, Fair, Version};
use schedlab_sched_api::Ctx;

impl Fair {
    /// `entity_key`: vruntime relative to the queue's origin.
    pub(super) fn entity_key(&self, rq: RqId, se: Se) -> i64 {
        vdiff(self.e(se).vruntime, self.rq(rq).min_vruntime)
    }

    /// Σ key·w and Σ w over the tree plus `curr` if it is queued (the operands of
    /// `avg_vruntime` and `vruntime_eligible`).
    fn avg_sums(&self, rq: RqId) -> (i128, i128) {
        let r = self.rq(rq);
        let (mut avg, mut load) = (r.avg_vruntime, r.avg_load as i128);
        if let Some(c) = r.curr.filter(|&c| self.e(c).on_rq) {
            let w = self.e(c).load.weight as i128;
            avg += self.entity_key(rq, c) as i128 * w;
            load += w;
        }
        (avg, load)
    }

    /// `avg_vruntime` (v6.6+): V = origin + ⌊Σ key·w / Σ w⌋ (floor, so that an entity placed
    /// exactly at V is eligible); the origin itself for an empty queue.
    pub(super) fn avg_vruntime(&self, rq: RqId) -> u64 {
        let (mut avg, load) = self.avg_sums(rq);
        if load != 0 {
            if avg < 0 {
                avg -= load - 1;
            }
            avg = div_i128(avg, load);
        }
        self.rq(rq).min_vruntime.wrapping_add(avg as i64 as u64)
    }

    /// `vruntime_eligible`: `v ≤ V` without a division, `Σ key·w ≥ (v − origin)·Σ w`.
    pub(super) fn vruntime_eligible(&self, rq: RqId, v: u64) -> bool {
        let (avg, load) = self.avg_sums(rq);
        avg >= vdiff(v, self.rq(rq).min_vruntime) as i128 * load
    }

    /// [`Fair::vruntime_eligible`] with the queue's sums taken once, for a caller that asks
    /// about many vruntimes while the queue does not change (the pick's tree descent).
    pub(super) fn eligibility(&self, rq: RqId) -> impl Fn(u64) -> bool {
        let (avg, load) = self.avg_sums(rq);
        let origin = self.rq(rq).min_vruntime;
        move |v| avg >= vdiff(v, origin) as i128 * load
    }

    pub(super) fn entity_eligible(&self, rq: RqId, se: Se) -> bool {
        self.vruntime_eligible(rq, self.e(se).vruntime)
    }

    /// `__enqueue_entity`: tree insert and `avg_vruntime_add`. CFS orders the tree by
    /// vruntime, EEVDF by deadline.
    pub(super) fn tree_insert(&mut self, rq: RqId, se: Se) {
        self.seq += 1;
        let seq = self.seq;
        let w = self.e(se).load.weight;
        let key_vr = self.entity_key(rq, se);
        let e = self.em(se);
        e.seq = seq;
        let entry = Entry { key: 0, seq: e.seq, vruntime: e.vruntime, slice: e.slice };
        let key = if self.t.version.is_eevdf() { self.e(se).deadline } else { self.e(se).vruntime };
        let eevdf = self.t.version.is_eevdf();
        let r = &mut self.rqs[rq.0 as usize];
        if eevdf {
            r.avg_vruntime += key_vr as i128 * w as i128;
            r.avg_load += w;
        }
        self.nodes.insert(&mut r.timeline, se.0, Entry { key, ..entry });
    }

    /// `__dequeue_entity`: tree removal and `avg_vruntime_sub`.
    pub(super) fn tree_remove(&mut self, rq: RqId, se: Se) {
        let w = self.e(se).load.weight;
        let key_vr = self.entity_key(rq, se);
        let eevdf = self.t.version.is_eevdf();
        let r = &mut self.rqs[rq.0 as usize];
        if eevdf {
            r.avg_vruntime -= key_vr as i128 * w as i128;
            r.avg_load -= w;
        }
        self.nodes.remove(&mut r.timeline, se.0);
    }

    /// `__pick_first_entity`.
    pub(super) fn leftmost(&self, rq: RqId) -> Option<Se> {
        self.nodes.first(&self.rq(rq).timeline).map(Se)
    }

    /// `cfs_rq_min_slice` (v6.12+): the smallest slice queued here, `curr` included;
    /// `u64::MAX` for an empty queue.
    pub(super) fn cfs_rq_min_slice(&self, rq: RqId) -> u64 {
        let r = self.rq(rq);
        let mut s = self.nodes.min_slice(&r.timeline).unwrap_or(u64::MAX);
        if let Some(c) = r.curr.filter(|&c| self.e(c).on_rq) {
            s = s.min(self.e(c).slice);
        }
        s
    }

    /// `update_min_vruntime`: a monotonic origin under `curr` and the tree's smallest
    /// vruntime; moving it rebases `avg_vruntime` (`__update_min_vruntime`).
    pub(super) fn update_min_vruntime(&mut self, rq: RqId) {
        let r = self.rq(rq);
        let mut v = r.min_vruntime;
        let curr = r.curr.filter(|&c| self.e(c).on_rq);
        if let Some(c) = curr {
            v = self.e(c).vruntime;
        }
        if let Some(m) = self.nodes.min_vruntime(&r.timeline) {
            v = if curr.is_none() || vdiff(m, v) < 0 { m } else { v };
        }
        let delta = vdiff(v, r.min_vruntime);
        if delta > 0 {
            let r = self.rqm(rq);
            r.avg_vruntime -= r.avg_load as i128 * delta as i128;
            r.min_vruntime = v;
        }
    }

    /// `update_curr`: charge the running entity of `rq` for the time since `exec_start`,
    /// in its virtual time; under EEVDF give it a new deadline when its request is done and
    /// reschedule as each version does.
    pub(super) fn update_curr(&mut self, cx: &mut Ctx, rq: RqId) {
        let Some(c) = self.rq(rq).curr else { return };
        let now = cx.now.0;
        let e = self.em(c);
        let delta = now as i64 - e.exec_start as i64;
        if delta <= 0 {
            return;
        }
        e.exec_start = now;
        e.sum_exec_runtime += delta as u64;
        let dv = calc_delta_fair(delta as u64, e.load);
        e.vruntime = e.vruntime.wrapping_add(dv);
        self.account_cfs_rq_runtime(cx, rq, delta as u64);
        if !self.t.version.is_eevdf() {
            self.update_min_vruntime(rq);
            return;
        }
        let resched = self.update_deadline(rq, c);
        self.update_min_vruntime(rq);
        let v = self.t.version;
        if self.rq(rq).nr_running <= 1 {
            return;
        }
        let want = match v {
            Version::V6_6 => resched,
            Version::V6_12 => resched || self.did_preempt_short(rq, c),
            _ => resched || !self.protect_slice(c),
        };
        if want {
            let cpu = self.rq(rq).cpu;
            cx.resched_curr(cpu);
            self.clear_buddies(rq, c);
        }
    }
}
