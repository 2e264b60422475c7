//! PELT bookkeeping of the fair class (fair.c v5.15: `update_load_avg`,
//! `update_cfs_rq_load_avg`, `attach_entity_load_avg`, `detach_entity_load_avg`,
//! `remove_entity_load_avg`, `init_entity_runnable_average`, `post_init_entity_util_avg`,
//! `update_blocked_averages`) and the load figures placement and balancing read
//! (`cpu_load`, `cpu_util_cfs`, `cpu_runnable`, `task_h_load`).

use super::pelt::{sub_positive, SchedAvg, PELT_MIN_DIVIDER, SCHED_CAPACITY_SCALE};
use super::Cfs;
use schedlab_sim::{CpuId, TaskId};

/// `update_load_avg` flags.
pub const DO_ATTACH: u32 = 1;
pub const DO_DETACH: u32 = 2;

impl Cfs {
    /// `se_weight`: the task's weight in the 1024 scale.
    fn se_weight(&self, p: TaskId) -> u64 {
        self.se[p].lw().weight
    }

    /// `update_cfs_rq_load_avg`: apply removed load, then accumulate the runqueue's inputs.
    pub(super) fn update_cfs_rq_load_avg(&mut self, cpu: CpuId, now: u64) {
        let rq = &mut self.rqs[cpu];
        let [rl, ru, rr] = std::mem::take(&mut rq.removed);
        if rl | ru | rr != 0 {
            let div = rq.avg.divider();
            let a = &mut rq.avg;
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
        let (load, runnable, running) = (rq.load, rq.nr_running, u64::from(rq.curr.is_some_and(|c| self.se[c].on_rq)));
        self.rqs[cpu].avg.update(now, load, runnable, running, 1);
    }

    /// `update_load_avg(cfs_rq, se, flags)` with the inputs as they were up to `now`.
    pub(super) fn update_load_avg(&mut self, cpu: CpuId, p: TaskId, now: u64, flags: u32) {
        if self.se[p].avg.last_update_time != 0 {
            let on = u64::from(self.se[p].on_rq);
            let running = u64::from(self.rqs[cpu].curr == Some(p) && self.se[p].on_rq);
            let w = self.se_weight(p);
            self.se[p].avg.update(now, on, on, running, w);
        }
        self.update_cfs_rq_load_avg(cpu, now);
        if self.se[p].avg.last_update_time == 0 && flags & DO_ATTACH != 0 {
            self.attach_entity_load_avg(cpu, p);
        } else if flags & DO_DETACH != 0 {
            self.detach_entity_load_avg(cpu, p);
        }
    }

    /// `attach_entity_load_avg`: align the task to the runqueue's clock and add it in.
    fn attach_entity_load_avg(&mut self, cpu: CpuId, p: TaskId) {
        let w = self.se_weight(p);
        let rqa = self.rqs[cpu].avg;
        let div = rqa.divider();
        let a = &mut self.se[p].avg;
        a.last_update_time = rqa.last_update_time.max(1);
        a.period_contrib = rqa.period_contrib;
        a.util_sum = a.util_avg * div;
        a.runnable_sum = a.runnable_avg * div;
        a.load_sum = (a.load_avg * div).checked_div(w).unwrap_or(div);
        let se = *a;
        let r = &mut self.rqs[cpu].avg;
        r.load_avg += se.load_avg;
        r.load_sum += w * se.load_sum;
        r.util_avg += se.util_avg;
        r.util_sum += se.util_sum;
        r.runnable_avg += se.runnable_avg;
        r.runnable_sum += se.runnable_sum;
    }

    /// `detach_entity_load_avg`.
    pub(super) fn detach_entity_load_avg(&mut self, cpu: CpuId, p: TaskId) {
        let w = self.se_weight(p);
        let se = self.se[p].avg;
        let r = &mut self.rqs[cpu].avg;
        sub_positive(&mut r.load_avg, se.load_avg);
        sub_positive(&mut r.load_sum, w * se.load_sum);
        r.load_sum = r.load_sum.max(r.load_avg * PELT_MIN_DIVIDER);
        sub_positive(&mut r.util_avg, se.util_avg);
        sub_positive(&mut r.util_sum, se.util_sum);
        r.util_sum = r.util_sum.max(r.util_avg * PELT_MIN_DIVIDER);
        sub_positive(&mut r.runnable_avg, se.runnable_avg);
        sub_positive(&mut r.runnable_sum, se.runnable_sum);
        r.runnable_sum = r.runnable_sum.max(r.runnable_avg * PELT_MIN_DIVIDER);
    }

    /// `remove_entity_load_avg`: sync the blocked task to its old runqueue's clock and
    /// queue its averages for removal (the old runqueue's lock is not taken).
    pub(super) fn remove_entity_load_avg(&mut self, cpu: CpuId, p: TaskId) {
        if self.se[p].avg.last_update_time == 0 {
            return;
        }
        let last = self.rqs[cpu].avg.last_update_time;
        let w = self.se_weight(p);
        self.se[p].avg.update(last, 0, 0, 0, w);
        let a = self.se[p].avg;
        let rm = &mut self.rqs[cpu].removed;
        rm[0] += a.load_avg;
        rm[1] += a.util_avg;
        rm[2] += a.runnable_avg;
    }

    /// `init_entity_runnable_average`: a new task looks fully loaded.
    pub(super) fn init_entity_runnable_average(&mut self, p: TaskId) {
        let w = self.se_weight(p);
        self.se[p].avg = SchedAvg { load_avg: w, ..SchedAvg::default() };
    }

    /// `post_init_entity_util_avg`: a new task gets half the CPU's spare utilisation.
    pub(super) fn post_init_entity_util_avg(&mut self, cpu: CpuId, p: TaskId) {
        let rq = &self.rqs[cpu].avg;
        let cap = (SCHED_CAPACITY_SCALE.saturating_sub(rq.util_avg)) / 2;
        let w = self.se_weight(p);
        let a = &mut self.se[p].avg;
        if cap > 0 {
            if rq.util_avg != 0 {
                a.util_avg = (rq.util_avg * w / (rq.load_avg + 1)).min(cap);
            } else {
                a.util_avg = cap;
            }
        }
        a.runnable_avg = a.util_avg;
    }

    /// `update_blocked_averages`: decay an idle runqueue's blocked load.
    pub(super) fn update_blocked_averages(&mut self, cpu: CpuId, now: u64) {
        self.update_cfs_rq_load_avg(cpu, now);
    }

    /// `cpu_load`: the runqueue's load average, blocked load included.
    pub(super) fn cpu_load(&self, cpu: CpuId) -> u64 {
        (self.rqs[cpu].avg.load_avg as i64 + self.adj.load[cpu]).max(0) as u64
    }
    /// `cpu_util_cfs`, capped at the capacity.
    pub(super) fn cpu_util(&self, cpu: CpuId) -> u64 {
        ((self.rqs[cpu].avg.util_avg as i64 + self.adj.util[cpu]).max(0) as u64).min(SCHED_CAPACITY_SCALE)
    }
    /// `cpu_runnable`.
    pub(super) fn cpu_runnable(&self, cpu: CpuId) -> u64 {
        (self.rqs[cpu].avg.runnable_avg as i64 + self.adj.runnable[cpu]).max(0) as u64
    }
    /// `task_h_load` for a task of the root group.
    pub(super) fn task_h_load(&self, p: TaskId) -> u64 {
        self.se[p].avg.load_avg
    }
}
