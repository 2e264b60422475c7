//! Estimated utilisation (`util_est`, `kernel/sched/fair.c` and `pelt.h`, v5.15 and v6.18;
//! the `UTIL_EST` feature, on by default since v4.17; v4.9 has none).
//!
//! A task's PELT `util_avg` decays while it sleeps, so a periodic task waking after a long
//! sleep looks smaller than the work each activation brings. `util_est` remembers the
//! utilisation a task had when it last went to sleep: each CPU's root runqueue sums the
//! estimates of its queued tasks, and every reader that asks "how big is this task" or
//! "how busy is this CPU" — schedutil's frequency, the energy-aware wakeup, a task's fit
//! on a CPU, the balancer's group utilisation — takes the larger of the PELT average and
//! the estimate.
//!
//! Two generations are modelled:
//! - v5.15 and v6.6: `struct util_est { enqueued, ewma }` — `enqueued` is the utilisation
//!   at the last dequeue for sleep, `ewma` its moving average (weight 1/4) that jumps up at
//!   once (`UTIL_EST_FASTUP`) and decays only when the last value differs by more than 1 %
//!   from both the average and the previous value; a task's estimate is the larger.
//! - v6.8+ (v6.12, v6.18; "sched/fair: Simplify util_est"): one `ewma`, reset upward at
//!   once, decayed only past the 1 % margin, and not decayed when the task did not get the
//!   CPU it wanted (`dequeued + UTIL_EST_MARGIN < task_runnable(p)`).
//!
//! The `UTIL_AVG_UNCHANGED` flag (the top bit in the kernel) is set after each update and
//! cleared when the task's PELT averages change (`cfs_se_util_change`), so a task that
//! sleeps again before PELT moved keeps its estimate.

use super::{Fair, Version};
use schedlab_sched_api::Ctx;
use schedlab_sim::{CpuId, TaskId};

/// `UTIL_EST_WEIGHT_SHIFT`: new samples weigh 1/4 in the moving average.
const UTIL_EST_WEIGHT_SHIFT: u32 = 2;
/// `UTIL_EST_MARGIN` (`SCHED_CAPACITY_SCALE / 100`).
const UTIL_EST_MARGIN: i64 = 1024 / 100;
/// `UTIL_AVG_UNCHANGED`: the estimate was written and PELT has not moved since. Values
/// are at most 1024, so the flag lives in bit 15 of a `u16`.
const UTIL_AVG_UNCHANGED: u16 = 1 << 15;

/// A task's `se.avg.util_est` (v5.15: both fields; v6.8+: `ewma` alone, `enqueued` 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UtilEst {
    /// v5.15 `enqueued` (with the flag); unused from v6.8.
    pub enqueued: u16,
    /// `ewma` (v6.8+: with the flag).
    pub ewma: u16,
}

impl UtilEst {
    fn unchanged(&self, simplified: bool) -> bool {
        let word = if simplified { self.ewma } else { self.enqueued };
        word & UTIL_AVG_UNCHANGED != 0
    }

    /// `_task_util_est`: v5.15 `max(ewma, enqueued & ~UTIL_AVG_UNCHANGED)`; v6.8+ the
    /// estimate without the flag.
    pub fn value(&self) -> u64 {
        u64::from((self.ewma & !UTIL_AVG_UNCHANGED).max(self.enqueued & !UTIL_AVG_UNCHANGED))
    }
}

/// `util_est_within_margin` (v5.15): `|value| < UTIL_EST_MARGIN`.
fn within_margin(value: i64) -> bool {
    value.abs() < UTIL_EST_MARGIN
}

impl Fair {
    /// Whether this version keeps estimates and the feature is on.
    pub(super) fn util_est_on(&self) -> bool {
        self.t.feat.util_est && self.t.version != Version::V4_9
    }

    /// From v6.8 the estimate is one field ("sched/fair: Simplify util_est").
    fn util_est_simplified(&self) -> bool {
        self.t.version >= Version::V6_12
    }

    /// `_task_util_est(p)`.
    pub(super) fn task_util_est_raw(&self, p: TaskId) -> u64 {
        if self.util_est_on() {
            self.tf[p].util_est.value()
        } else {
            0
        }
    }

    /// `task_util_est(p)`: the larger of the task's `util_avg` and its estimate.
    pub(super) fn task_util_est(&self, p: TaskId) -> u64 {
        self.e(self.task_se(p)).avg.util_avg.max(self.task_util_est_raw(p))
    }

    /// The root runqueue's `avg.util_est` (v5.15 `util_est.enqueued`) of `cpu`.
    pub(super) fn cpu_util_est(&self, cpu: CpuId) -> u64 {
        if self.util_est_on() {
            (self.cpu[cpu].util_est as i64 + self.adj.util_est[cpu]).max(0) as u64
        } else {
            0
        }
    }

    /// `cpu_util_without(cpu, p)` for `p` counted on `cpu` (capped at the CPU's capacity, as
    /// `cpu_util` caps): its `util_avg` off the
    /// runqueue's, and its estimate off the sum if it is queued or running there.
    pub(super) fn cpu_util_without(&self, cx: &Ctx, cpu: CpuId, p: TaskId) -> u64 {
        let pe = self.e(self.task_se(p));
        let root = (self.rq(self.root(cpu)).avg.util_avg as i64 + self.adj.util[cpu]).max(0) as u64;
        let util = root.saturating_sub(pe.avg.util_avg);
        let mut est = self.cpu_util_est(cpu);
        if pe.on_rq || cx.cpus[cpu].curr == Some(p) {
            est = est.saturating_sub(self.task_util_est_raw(p));
        }
        util.max(est).min(u64::from(cx.capacity(cpu)))
    }

    /// `util_est_enqueue(&rq->cfs, p)`: the task's estimate joins its CPU's sum.
    pub(super) fn util_est_enqueue(&mut self, cpu: CpuId, p: TaskId) {
        if self.util_est_on() {
            self.cpu[cpu].util_est += self.tf[p].util_est.value();
        }
    }

    /// `util_est_dequeue(&rq->cfs, p)`: the task's estimate leaves its CPU's sum.
    pub(super) fn util_est_dequeue(&mut self, cpu: CpuId, p: TaskId) {
        if self.util_est_on() {
            let v = self.tf[p].util_est.value();
            let sum = &mut self.cpu[cpu].util_est;
            *sum = sum.saturating_sub(v);
        }
    }

    /// `cfs_se_util_change` (pelt.h): the task's PELT averages moved, so its next sleep
    /// may update the estimate again.
    pub(super) fn cfs_se_util_change(&mut self, p: TaskId) {
        if self.util_est_on() {
            let ue = &mut self.tf[p].util_est;
            ue.enqueued &= !UTIL_AVG_UNCHANGED;
            ue.ewma &= !UTIL_AVG_UNCHANGED;
        }
    }

    /// `util_est_update(&rq->cfs, p, task_sleep)`: at a dequeue for sleep, fold the
    /// utilisation the task had into its estimate (the two generations in the module
    /// comment). `capacity` is `arch_scale_cpu_capacity` of the CPU it ran on.
    pub(super) fn util_est_update(&mut self, p: TaskId, task_sleep: bool, capacity: u64) {
        if !self.util_est_on() || !task_sleep {
            return;
        }
        let simplified = self.util_est_simplified();
        let ue = self.tf[p].util_est;
        if ue.unchanged(simplified) {
            return;
        }
        let avg = self.e(self.task_se(p)).avg;
        let dequeued = avg.util_avg;
        let updated = if simplified {
            util_est_next_v6(ue, dequeued, avg.runnable_avg, capacity)
        } else {
            util_est_next_v5_15(ue, dequeued, capacity)
        };
        if let Some(ue) = updated {
            self.tf[p].util_est = ue;
        }
    }
}

/// v6.8+ `util_est_update` past its early returns: the new `ewma` (flag set), or `None`
/// when the kernel returns without writing.
fn util_est_next_v6(ue: UtilEst, dequeued: u64, runnable: u64, capacity: u64) -> Option<UtilEst> {
    let mut ewma = i64::from(ue.ewma & !UTIL_AVG_UNCHANGED);
    let dequeued = dequeued as i64;
    let done = |ewma: i64| Some(UtilEst { enqueued: 0, ewma: ewma as u16 | UTIL_AVG_UNCHANGED });
    // Reset on increases: the average only smooths decreases.
    if ewma <= dequeued {
        return done(dequeued);
    }
    let last_ewma_diff = ewma - dequeued;
    if last_ewma_diff < UTIL_EST_MARGIN {
        return done(ewma);
    }
    // No idle time on this CPU can be granted: the sample would overestimate.
    if dequeued > capacity as i64 {
        return None;
    }
    // The task did not get all the CPU it wanted: the sample would underestimate.
    if dequeued + UTIL_EST_MARGIN < runnable as i64 {
        return done(ewma);
    }
    ewma <<= UTIL_EST_WEIGHT_SHIFT;
    ewma -= last_ewma_diff;
    ewma >>= UTIL_EST_WEIGHT_SHIFT;
    done(ewma)
}

/// v5.15 `util_est_update` past its early returns (with `UTIL_EST_FASTUP`): the new pair
/// (`enqueued` flagged), or `None` when the kernel returns without writing.
fn util_est_next_v5_15(ue: UtilEst, dequeued: u64, capacity: u64) -> Option<UtilEst> {
    let last_enqueued = i64::from(ue.enqueued & !UTIL_AVG_UNCHANGED);
    let enqueued = dequeued as i64;
    let mut ewma = i64::from(ue.ewma);
    let done = |ewma: i64| Some(UtilEst { enqueued: enqueued as u16 | UTIL_AVG_UNCHANGED, ewma: ewma as u16 });
    if ewma < enqueued {
        return done(enqueued);
    }
    let last_ewma_diff = enqueued - ewma;
    let last_enqueued_diff = last_enqueued - enqueued;
    if within_margin(last_ewma_diff) {
        return if within_margin(last_enqueued_diff) { None } else { done(ewma) };
    }
    if dequeued > capacity {
        return None;
    }
    ewma <<= UTIL_EST_WEIGHT_SHIFT;
    ewma += last_ewma_diff;
    ewma >>= UTIL_EST_WEIGHT_SHIFT;
    done(ewma)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v6(ewma: u16) -> UtilEst {
        UtilEst { enqueued: 0, ewma }
    }

    #[test]
    fn an_increase_resets_the_average_at_once() {
        assert_eq!(util_est_next_v6(v6(100), 300, 300, 1024), Some(v6(300 | UTIL_AVG_UNCHANGED)));
        let up = util_est_next_v5_15(UtilEst { enqueued: 100, ewma: 100 }, 300, 1024).unwrap();
        assert_eq!((up.value(), up.ewma), (300, 300));
    }

    #[test]
    fn a_decrease_moves_a_quarter_of_the_way() {
        // ewma 400, sample 200: (400·4 − 200) / 4 = 350, as `ewma <<= 2; ewma -= diff; >>= 2`.
        assert_eq!(util_est_next_v6(v6(400), 200, 200, 1024), Some(v6(350 | UTIL_AVG_UNCHANGED)));
        // v5.15: (400·4 + (200 − 400)) / 4 = 350 too; the task's estimate keeps the larger.
        let d = util_est_next_v5_15(UtilEst { enqueued: 400, ewma: 400 }, 200, 1024).unwrap();
        assert_eq!((d.ewma, d.value()), (350, 350));
    }

    #[test]
    fn small_changes_and_starved_samples_keep_the_average() {
        // Within 1 %: unchanged (v6.18 rearms the flag; v5.15 writes nothing when the
        // last sample was close too).
        assert_eq!(util_est_next_v6(v6(400), 395, 395, 1024), Some(v6(400 | UTIL_AVG_UNCHANGED)));
        assert_eq!(util_est_next_v5_15(UtilEst { enqueued: 396, ewma: 400 }, 395, 1024), None);
        // v6.8+: a task that waited (runnable well above util) is not decayed.
        assert_eq!(util_est_next_v6(v6(400), 200, 400, 1024), Some(v6(400 | UTIL_AVG_UNCHANGED)));
        // No idle time granted on a small CPU: nothing is written.
        assert_eq!(util_est_next_v6(v6(400), 200, 200, 160), None);
    }
}
