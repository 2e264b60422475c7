//! PELT bookkeeping of the fair class (fair.c v5.15/v6.x: `update_load_avg`,
//! `update_cfs_rq_load_avg`, `attach_entity_load_avg`, `detach_entity_load_avg`,
//! `remove_entity_load_avg`, `init_entity_runnable_average`, `post_init_entity_util_avg`,
//! `update_blocked_averages`) and the load figures placement and balancing read
//! (`cpu_load`, `cpu_util_cfs`, `cpu_runnable`). v4.9's bookkeeping differs where each
//! function says: pre-weighted sums, a fixed divider, and the cfs_rq's `runnable_load_avg`
//! (queued entities only), which is v4.9's CPU load (`weighted_cpuload`).
//!
//! Deviation: when an entity attaches to or detaches from a group's runqueue, the kernel
//! propagates the change up through the group entities at once
//! (`propagate_entity_load_avg`); here group entities' averages follow their own
//! runnable/running history only, so a migration inside a group reaches the root's
//! averages at PELT speed instead of immediately.

use super::entity::{RqId, Se};
use super::pelt::{sub_positive, SchedAvg, LOAD_AVG_MAX, PELT_MIN_DIVIDER, SCHED_CAPACITY_SCALE};
use super::{Fair, Version};
use schedlab_sched_api::{CpuUtil, Ctx};
use schedlab_sim::CpuId;

/// `update_load_avg` flags.
pub const UPDATE_TG: u32 = 1;
pub const DO_ATTACH: u32 = 2;
pub const DO_DETACH: u32 = 4;

impl Fair {
    /// `se_weight`: the entity's weight in the 1024 scale.
    fn se_weight(&self, se: Se) -> u64 {
        self.e(se).load.weight
    }

    /// `se_runnable`: a task counts while queued; a group entity counts the tasks below it
    /// (`runnable_weight` = `h_nr_running`, v6.18 `h_nr_runnable`).
    fn se_runnable(&self, se: Se) -> u64 {
        match self.e(se).my_q {
            Some(q) if self.t.version >= Version::V6_18 => self.rq(q).h_nr_runnable,
            Some(q) => self.rq(q).h_nr_running,
            None => u64::from(self.e(se).on_rq),
        }
    }

    /// `update_cfs_rq_load_avg`: apply removed load, then accumulate the runqueue's inputs.
    /// Returns whether the averages changed.
    fn update_cfs_rq_load_avg(&mut self, rq: RqId, now: u64) -> bool {
        if self.t.version == Version::V4_9 {
            return self.update_cfs_rq_load_avg_v4_9(rq, now);
        }
        let r = self.rqm(rq);
        let [rl, ru, rr] = std::mem::take(&mut r.removed);
        let removed = rl | ru | rr != 0;
        if removed {
            let div = r.avg.divider();
            let a = &mut r.avg;
            sub_positive(&mut a.load_avg, rl);
            sub_positive(&mut a.load_sum, rl * div);
            a.load_sum = a.load_sum.max(a.load_avg * PELT_MIN_DIVIDER);
            sub_positive(&mut a.util_avg, ru);
            sub_positive(&mut a.util_sum, ru * div);
            a.util_sum = a.util_sum.max(a.util_avg * PELT_MIN_DIVIDER);
            sub_positive(&mut a.runnable_avg, rr);
            sub_positive(&mut a.runnable_sum, rr * div);
            a.runnable_sum = a.runnable_sum.max(a.runnable_avg * PELT_MIN_DIVIDER);
        }
        let r = self.rq(rq);
        let runnable = if self.t.version >= Version::V6_18 { r.h_nr_runnable } else { r.h_nr_running };
        let (load, running) = (r.load, u64::from(r.curr.is_some()));
        self.rqm(rq).avg.update(now, load, runnable, running, 1) | removed
    }

    /// `update_cfs_rq_load_avg` (v4.9): removed load and util come off the averages and
    /// `LOAD_AVG_MAX` times them off the sums; the queue's load accrues to `load_sum` and
    /// `runnable_load_sum` alike.
    fn update_cfs_rq_load_avg_v4_9(&mut self, rq: RqId, now: u64) -> bool {
        let r = self.rqm(rq);
        let [rl, ru, _] = std::mem::take(&mut r.removed);
        let removed = rl | ru != 0;
        let a = &mut r.avg;
        sub_positive(&mut a.load_avg, rl);
        sub_positive(&mut a.load_sum, rl * LOAD_AVG_MAX);
        sub_positive(&mut a.util_avg, ru);
        sub_positive(&mut a.util_sum, ru * LOAD_AVG_MAX);
        let (load, running) = (r.load, r.curr.is_some());
        r.avg.update_v4_9(now, load, running, Some(&mut r.runnable_load)) | removed
    }

    /// `enqueue_entity_load_avg`'s runnable part (v4.9): the entity's load joins the
    /// queue's `runnable_load_avg`. Later versions keep no such sum.
    pub(super) fn runnable_load_enqueue(&mut self, rq: RqId, se: Se) {
        if self.t.version == Version::V4_9 {
            let a = self.e(se).avg;
            let r = &mut self.rqm(rq).runnable_load;
            r[0] += a.load_sum;
            r[1] += a.load_avg;
        }
    }

    /// `dequeue_entity_load_avg` (v4.9): the entity's load leaves `runnable_load_avg`
    /// (its blocked load stays in `load_avg` and decays there).
    pub(super) fn runnable_load_dequeue(&mut self, rq: RqId, se: Se) {
        if self.t.version == Version::V4_9 {
            let a = self.e(se).avg;
            let r = &mut self.rqm(rq).runnable_load;
            sub_positive(&mut r[0], a.load_sum);
            sub_positive(&mut r[1], a.load_avg);
        }
    }

    /// `rq_clock_pelt(rq)` of `cpu` now (pelt.h): the task clock scaled by the CPU's
    /// capacity and frequency while it runs (`ClockPelt`; v4.9 scaled nothing on the
    /// machines its studies ran on, so its PELT runs on the task clock).
    pub(super) fn clock_pelt(&mut self, cx: &Ctx, cpu: CpuId) -> u64 {
        if self.t.version == Version::V4_9 {
            return cx.now.0;
        }
        let busy = cx.cpus[cpu].curr.is_some();
        let scale = cx.scale.get(cpu).copied().unwrap_or_default();
        let util_sum = self.rq(self.root(cpu)).avg.util_sum;
        self.cpu[cpu].clock_pelt.update(cx.now.0, busy, scale, util_sum)
    }

    /// `cfs_rq_util_change` (fair.c): the root runqueue's utilisation changed, so the
    /// kernel's `cpufreq_update_util` runs with the class's figure for its version — v6.6+
    /// `cpu_util_cfs_boost` (the larger of utilisation and runnable), earlier
    /// `cpu_util_cfs` — at least the queued tasks' estimates, capped at the CPU's capacity.
    pub(super) fn cfs_rq_util_change(&mut self, cx: &mut Ctx, rq: RqId, flags: u32) {
        let r = self.rq(rq);
        if !cx.cpufreq || r.tg != 0 {
            return;
        }
        let cpu = r.cpu;
        let a = r.avg;
        let util = if self.t.version >= Version::V6_6 { a.util_avg.max(a.runnable_avg) } else { a.util_avg };
        let cfs = util.max(self.cpu_util_est(cpu)).min(u64::from(cx.capacity(cpu))) as u32;
        cx.cpufreq_update(cpu, flags, CpuUtil { cfs, ..CpuUtil::default() });
    }

    /// `update_load_avg(cfs_rq, se, flags)` with the inputs as they were up to now.
    pub(super) fn update_load_avg(&mut self, cx: &mut Ctx, rq: RqId, se: Se, flags: u32) {
        let now = self.clock_pelt(cx, self.rq(rq).cpu);
        let wall = cx.now.0;
        if self.e(se).avg.last_update_time != 0 {
            let on = u64::from(self.e(se).on_rq);
            let running = u64::from(self.rq(rq).curr == Some(se));
            let (runnable, w) = (self.se_runnable(se), self.se_weight(se));
            if self.t.version == Version::V4_9 {
                self.em(se).avg.update_v4_9(now, on * w, running != 0, None);
            } else if self.em(se).avg.update(now, on, runnable, running, w) {
                if let Some(p) = self.se_task(se) {
                    self.cfs_se_util_change(p);
                }
            }
        }
        let decayed = self.update_cfs_rq_load_avg(rq, now);
        if self.e(se).avg.last_update_time == 0 && flags & DO_ATTACH != 0 {
            self.attach_entity_load_avg(rq, se);
            self.cfs_rq_util_change(cx, rq, 0);
            self.update_tg_load_avg(rq, wall);
        } else if flags & DO_DETACH != 0 {
            self.detach_entity_load_avg(rq, se);
            self.cfs_rq_util_change(cx, rq, 0);
            self.update_tg_load_avg(rq, wall);
        } else if decayed {
            self.cfs_rq_util_change(cx, rq, 0);
            if flags & UPDATE_TG != 0 {
                self.update_tg_load_avg(rq, wall);
            }
        }
    }

    /// `attach_entity_load_avg`: align the entity to the runqueue's clock and add it in.
    fn attach_entity_load_avg(&mut self, rq: RqId, se: Se) {
        if self.t.version == Version::V4_9 {
            // v4.9: the sums are already weighted; no divider to rebuild them with.
            let last = self.rq(rq).avg.last_update_time.max(1);
            let a = &mut self.em(se).avg;
            a.last_update_time = last;
            let e = *a;
            let r = &mut self.rqm(rq).avg;
            r.load_avg += e.load_avg;
            r.load_sum += e.load_sum;
            r.util_avg += e.util_avg;
            r.util_sum += e.util_sum;
            return;
        }
        let w = self.se_weight(se);
        let rqa = self.rq(rq).avg;
        let div = rqa.divider();
        let a = &mut self.em(se).avg;
        a.last_update_time = rqa.last_update_time.max(1);
        a.period_contrib = rqa.period_contrib;
        a.util_sum = a.util_avg * div;
        a.runnable_sum = a.runnable_avg * div;
        a.load_sum = (a.load_avg * div).checked_div(w).unwrap_or(div);
        let e = *a;
        let r = &mut self.rqm(rq).avg;
        r.load_avg += e.load_avg;
        r.load_sum += w * e.load_sum;
        r.util_avg += e.util_avg;
        r.util_sum += e.util_sum;
        r.runnable_avg += e.runnable_avg;
        r.runnable_sum += e.runnable_sum;
    }

    /// `detach_entity_load_avg`.
    pub(super) fn detach_entity_load_avg(&mut self, rq: RqId, se: Se) {
        let e = self.e(se).avg;
        if self.t.version == Version::V4_9 {
            let r = &mut self.rqm(rq).avg;
            sub_positive(&mut r.load_avg, e.load_avg);
            sub_positive(&mut r.load_sum, e.load_sum);
            sub_positive(&mut r.util_avg, e.util_avg);
            sub_positive(&mut r.util_sum, e.util_sum);
            return;
        }
        let w = self.se_weight(se);
        let r = &mut self.rqm(rq).avg;
        sub_positive(&mut r.load_avg, e.load_avg);
        sub_positive(&mut r.load_sum, w * e.load_sum);
        r.load_sum = r.load_sum.max(r.load_avg * PELT_MIN_DIVIDER);
        sub_positive(&mut r.util_avg, e.util_avg);
        sub_positive(&mut r.util_sum, e.util_sum);
        r.util_sum = r.util_sum.max(r.util_avg * PELT_MIN_DIVIDER);
        sub_positive(&mut r.runnable_avg, e.runnable_avg);
        sub_positive(&mut r.runnable_sum, e.runnable_sum);
        r.runnable_sum = r.runnable_sum.max(r.runnable_avg * PELT_MIN_DIVIDER);
    }

    /// `dequeue_load_avg` / `enqueue_load_avg` around a weight change (`reweight_entity`):
    /// the load part only.
    pub(super) fn reweight_load_avg(&mut self, rq: RqId, se: Se, new_weight: u64) {
        if self.t.version == Version::V4_9 {
            // v4.9 `reweight_entity` changes only the weight; the averages follow at
            // PELT speed.
            return;
        }
        let old = self.e(se).avg;
        let old_w = self.se_weight(se);
        let div = old.divider();
        let load_avg = new_weight * old.load_sum / div;
        if old.last_update_time == 0 {
            // Not attached to any runqueue yet (or migrating): nothing to move.
            self.em(se).avg.load_avg = load_avg;
            return;
        }
        let r = &mut self.rqm(rq).avg;
        sub_positive(&mut r.load_avg, old.load_avg);
        sub_positive(&mut r.load_sum, old_w * old.load_sum);
        r.load_sum = r.load_sum.max(r.load_avg * PELT_MIN_DIVIDER);
        self.em(se).avg.load_avg = load_avg;
        let r = &mut self.rqm(rq).avg;
        r.load_avg += load_avg;
        r.load_sum += new_weight * old.load_sum;
    }

    /// `remove_entity_load_avg`: sync the blocked entity to its old runqueue's clock and
    /// queue its averages for removal (the old runqueue's lock is not taken).
    pub(super) fn remove_entity_load_avg(&mut self, se: Se) {
        if self.e(se).avg.last_update_time == 0 {
            return;
        }
        let rq = self.cfs_rq_of(se);
        let last = self.rq(rq).avg.last_update_time;
        let w = self.se_weight(se);
        if self.t.version == Version::V4_9 {
            self.em(se).avg.update_v4_9(last, 0, false, None);
        } else {
            self.em(se).avg.update(last, 0, 0, 0, w);
        }
        let a = self.e(se).avg;
        let rm = &mut self.rqm(rq).removed;
        rm[0] += a.load_avg;
        rm[1] += a.util_avg;
        rm[2] += a.runnable_avg;
    }

    /// `init_entity_runnable_average`: a new task looks fully loaded.
    pub(super) fn init_entity_runnable_average(&mut self, se: Se) {
        let w = self.se_weight(se);
        self.em(se).avg = SchedAvg { load_avg: w, ..SchedAvg::default() };
        if self.t.version == Version::V4_9 {
            // v4.9 also fills the sum and starts at the end of a period.
            let a = &mut self.em(se).avg;
            a.load_sum = w * LOAD_AVG_MAX;
            a.period_contrib = 1023;
        }
    }

    /// `post_init_entity_util_avg`: a new task gets half its runqueue's spare utilisation,
    /// of the CPU's capacity `cpu_scale` (`arch_scale_cpu_capacity`, v5.15 and v6.18;
    /// 1024 but on asymmetric machines).
    pub(super) fn post_init_entity_util_avg(&mut self, se: Se, cpu_scale: u64) {
        let rq = self.rq(self.cfs_rq_of(se)).avg;
        let cap = (cpu_scale.saturating_sub(rq.util_avg)) / 2;
        let w = self.se_weight(se);
        let v4_9 = self.t.version == Version::V4_9;
        let a = &mut self.em(se).avg;
        if cap > 0 {
            if rq.util_avg != 0 {
                a.util_avg = (rq.util_avg * w / (rq.load_avg + 1)).min(cap);
            } else {
                a.util_avg = cap;
            }
        }
        a.runnable_avg = a.util_avg;
        if v4_9 {
            a.util_sum = a.util_avg * LOAD_AVG_MAX;
            a.runnable_avg = 0;
        }
    }

    /// `update_blocked_averages`: decay a CPU's blocked load, group queues (children first)
    /// and their entities, then the root.
    pub(super) fn update_blocked_averages(&mut self, cpu: CpuId, cx: &mut Ctx) {
        let now = self.clock_pelt(cx, cpu);
        let wall = cx.now.0;
        for g in (1..self.tgs.len()).rev() {
            let rq = self.group_rq(g, cpu);
            if self.update_cfs_rq_load_avg(rq, now) {
                self.update_tg_load_avg(rq, wall);
            }
            let gse = self.group_se(g, cpu);
            if self.e(gse).avg.last_update_time != 0 {
                let parent = self.cfs_rq_of(gse);
                self.update_load_avg(cx, parent, gse, UPDATE_TG);
            }
        }
        let root = self.root(cpu);
        if self.update_cfs_rq_load_avg(root, now) {
            self.cfs_rq_util_change(cx, root, 0);
        }
    }

    /// `cpu_load`: the runqueue's load average, blocked load included; v4.9
    /// `weighted_cpuload`: its `runnable_load_avg`, queued tasks only.
    pub(super) fn cpu_load(&self, cpu: CpuId) -> u64 {
        let r = self.rq(self.root(cpu));
        let load = if self.t.version == Version::V4_9 { r.runnable_load[1] } else { r.avg.load_avg };
        (load as i64 + self.adj.load[cpu]).max(0) as u64
    }
    /// `cpu_util_cfs`: the root runqueue's utilisation, at least its queued tasks'
    /// estimates (`UTIL_EST`), capped at the capacity.
    pub(super) fn cpu_util(&self, cpu: CpuId) -> u64 {
        let util = (self.rq(self.root(cpu)).avg.util_avg as i64 + self.adj.util[cpu]).max(0) as u64;
        util.max(self.cpu_util_est(cpu)).min(SCHED_CAPACITY_SCALE)
    }
    /// `cpu_runnable`.
    pub(super) fn cpu_runnable(&self, cpu: CpuId) -> u64 {
        (self.rq(self.root(cpu)).avg.runnable_avg as i64 + self.adj.runnable[cpu]).max(0) as u64
    }
}
