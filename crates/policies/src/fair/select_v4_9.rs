//! Wakeup placement as in fair.c v4.9: one-piece `wake_affine` on `weighted_cpuload`, and
//! `select_idle_sibling` without `recent_used_cpu` or a scan-depth limit
//! (`select_idle_core`, `select_idle_cpu` over the whole LLC from `target`,
//! `select_idle_smt`). The rest of `select_task_rq_fair` is `select.rs`.

use super::domains::Domain;
use super::pelt::SCHED_CAPACITY_SCALE;
use super::Fair;
use schedlab_sched_api::Ctx;
use schedlab_sim::{CpuId, TaskId};

impl Fair {
    /// `wake_affine` (v4.9): pull the wakee to the waker's CPU when that CPU's load with
    /// the wakee (less the waker's own load on a sync wakeup) stays within half the
    /// domain's imbalance percentage of the previous CPU's load. `wake_idx` is 0, so both
    /// loads are the current `weighted_cpuload`; for root-group tasks `effective_load` is
    /// the plain weight.
    pub(super) fn wake_affine_v4_9(
        &self,
        cx: &Ctx,
        sd: &Domain,
        p: TaskId,
        this: CpuId,
        prev: CpuId,
        sync: bool,
    ) -> bool {
        let load = self.cpu_load(prev) as i64;
        let mut this_load = self.cpu_load(this) as i64;
        if sync {
            if let Some(cur) = cx.cpus[this].curr {
                this_load -= self.e(self.task_se(cur)).avg.load_avg as i64;
            }
        }
        let weight = self.e(self.task_se(p)).avg.load_avg as i64;
        let cap = SCHED_CAPACITY_SCALE as i64;
        let mut this_eff = 100 * cap;
        let mut prev_eff = (100 + (sd.imbalance_pct as i64 - 100) / 2) * cap;
        if this_load > 0 {
            this_eff *= this_load + weight;
            prev_eff *= load;
        }
        this_eff <= prev_eff
    }

    /// `select_idle_sibling` (v4.9): an idle `target`, an idle `prev` sharing its cache, an
    /// idle core, any idle CPU of the LLC (scanned from `target`), an idle SMT sibling of
    /// `target`; else `target`.
    pub(super) fn select_idle_sibling_v4_9(&mut self, cx: &Ctx, p: TaskId, prev: CpuId, target: CpuId) -> CpuId {
        if self.idle(cx, target) {
            return target;
        }
        if prev != target && self.domains.llc_id[prev] == self.domains.llc_id[target] && self.idle(cx, prev) {
            return prev;
        }
        if self.domains.llc_level(target).is_none() {
            return target;
        }
        let llc = self.domains.llc_id[target];
        let cpus = self.domains.llc_cpus[llc].clone();
        let start = cpus.partition_point(|&c| c < target);
        let order = (0..cpus.len()).map(|k| cpus[(start + k) % cpus.len()]);
        if self.smt && self.has_idle_cores[llc] {
            // `select_idle_core`: a core whose every sibling is idle.
            let found = order.clone().filter(|&c| cx.allowed(p, c)).find(|&c| {
                let siblings: Vec<CpuId> = cx.machine.topology.smt_siblings(c).collect();
                siblings.iter().all(|&s| self.idle(cx, s))
            });
            if let Some(c) = found {
                return c;
            }
            self.has_idle_cores[llc] = false;
        }
        if let Some(c) = order.clone().filter(|&c| cx.allowed(p, c)).find(|&c| self.idle(cx, c)) {
            return c;
        }
        if self.smt {
            let sib = cx.machine.topology.smt_siblings(target).find(|&c| cx.allowed(p, c) && self.idle(cx, c));
            if let Some(c) = sib {
                return c;
            }
        }
        target
    }
}
