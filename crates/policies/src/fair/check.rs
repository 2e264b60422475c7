//! The fair class's own consistency checks (`--check`, tests), in the spirit of the
//! kernel's `SCHED_WARN_ON`s: tree order and augmentation, each runqueue's load and counts
//! against its entities, EEVDF's sums and V, and the group structure.

use super::entity::{RqId, Se};
use super::{vdiff, Fair};

/// What one walk of a runqueue's tree (then `curr`) adds up for [`Fair::check_rq`].
#[derive(Default)]
struct Sums {
    /// Σ of each entity's `h_nr_running` / `h_nr_runnable` (1 / 1 unless delayed for a task).
    h: u64,
    h_runnable: u64,
    /// Σ of each entity's idle tasks (`idle_h_nr_running`): all of an idle group's.
    h_idle: u64,
    load: u64,
    nr: u64,
    /// Tree entities only: Σ key·w and Σ w (EEVDF's `avg_vruntime`, `avg_load`).
    key_sum: i128,
    w_sum: u64,
    /// Σ w·(V − v) and Σ w over the tree and `curr` (EEVDF's V check).
    lag: i128,
    lag_w: i128,
    /// The first tree entry, in key order, that is stale (`false`) or is `curr` (`true`).
    bad: Option<(u32, bool)>,
    /// CFS: the first tree entry more than `sched_latency` left of `min_vruntime`.
    far_left: Option<u32>,
}

impl Fair {
    /// `only`: the runqueues and group entities of these CPUs only, without the group-wide
    /// `load_avg` sums (the incremental check after an event); `None`: everything.
    pub(super) fn check_fair(&self, only: Option<&[schedlab_sim::CpuId]>) -> Result<(), String> {
        if self.counters.ineligible_picks > 0 {
            return Err(format!("EEVDF picked an ineligible entity {} times", self.counters.ineligible_picks));
        }
        let check = |i: usize| -> Result<(), String> {
            let rq = RqId(i as u32);
            let r = self.rq(rq);
            if r.timeline.len() == 0 && r.curr.is_none() {
                if r.load != 0 || r.nr_running != 0 || r.h_nr_running != 0 || r.h_nr_runnable != 0 {
                    return Err(format!("CPU {}: an empty queue has load {} nr {}", r.cpu, r.load, r.nr_running));
                }
                return Ok(());
            }
            self.check_rq(rq)
        };
        let Some(cpus) = only else {
            (0..self.rqs.len()).try_for_each(check)?;
            self.check_util_est()?;
            return self.check_groups();
        };
        // Each group's runqueues are laid out CPU by CPU (`group_rq`): visit only the
        // touched CPUs' instead of testing every runqueue of every group.
        for tg in 0..self.rqs.len() / self.nr_cpus.max(1) {
            for &c in cpus {
                check(self.group_rq(tg, c).0 as usize)?;
            }
        }
        self.check_group_cpus(cpus)
    }

    /// Each CPU's `util_est` sum is its queued tasks' estimates: every task counted since
    /// its enqueue except those whose dequeue was delayed (v6.12+ takes them out at the
    /// first dequeue), and no estimate changes while its task is queued.
    fn check_util_est(&self) -> Result<(), String> {
        if !self.util_est_on() {
            return Ok(());
        }
        let mut want = vec![0u64; self.nr_cpus];
        for p in (0..self.tf.len()).filter(|&p| self.tf[p].alive) {
            let e = self.e(self.task_se(p));
            if e.on_rq && !e.sched_delayed {
                want[self.rq(e.cfs_rq).cpu] += self.tf[p].util_est.value();
            }
        }
        for (c, &w) in want.iter().enumerate() {
            if self.cpu[c].util_est != w {
                return Err(format!(
                    "CPU {c}: util_est {} but its queued tasks' estimates sum to {w}",
                    self.cpu[c].util_est
                ));
            }
        }
        Ok(())
    }

    /// One runqueue: its tree (order, augmentation, size), the hierarchical counts, each
    /// tree entry queued here and not `curr`, load and count, then EEVDF's sums and V or
    /// CFS's spread. One walk of the tree gathers everything (it runs after every event);
    /// the failures are reported in that order, so the first found is the one a check
    /// pass by pass would report.
    fn check_rq(&self, rq: RqId) -> Result<(), String> {
        let r = self.rq(rq);
        let name = || format!("CPU {} group `{}`", r.cpu, self.tgs[r.tg].name);
        let eevdf = self.eevdf_on();
        let v = if eevdf { self.avg_vruntime(rq) } else { 0 };
        let mut s = Sums::default();
        let walked = self.nodes.check_walk(&r.timeline, &mut |id| self.sum_tree_entry(rq, Se(id), v, &mut s));
        walked.map_err(|e| format!("{}: {e}", name()))?;
        if let Some(c) = r.curr.filter(|&c| self.e(c).on_rq) {
            self.add_h_counts(c, &mut s);
            s.load += self.e(c).load.weight;
            s.nr += 1;
            s.lag += self.e(c).load.weight as i128 * vdiff(v, self.e(c).vruntime) as i128;
            s.lag_w += self.e(c).load.weight as i128;
        }
        if (s.h, s.h_runnable, s.h_idle) != (r.h_nr_running, r.h_nr_runnable, r.idle_h_nr) {
            return Err(format!(
                "{}: h_nr_running {} / h_nr_runnable {} / idle_h_nr_running {} but the entities hold {} / {} / {}",
                name(),
                r.h_nr_running,
                r.h_nr_runnable,
                r.idle_h_nr,
                s.h,
                s.h_runnable,
                s.h_idle
            ));
        }
        match s.bad {
            Some((id, false)) => return Err(format!("{}: tree entry {id} is stale", name())),
            Some((id, true)) => return Err(format!("{}: curr {id} is in the tree", name())),
            None => {}
        }
        if s.load != r.load || s.nr != r.nr_running {
            return Err(format!(
                "{}: load {}/{} nr {}/{} disagree with the entities",
                name(),
                r.load,
                s.load,
                r.nr_running,
                s.nr
            ));
        }
        if !eevdf {
            return match s.far_left {
                Some(id) => Err(format!("{}: entity {id} is more than sched_latency left of min_vruntime", name())),
                None => Ok(()),
            };
        }
        if s.key_sum != r.avg_vruntime || s.w_sum != r.avg_load {
            return Err(format!("{}: avg_vruntime/avg_load disagree with the tree", name()));
        }
        // V is the weighted mean of the queued vruntimes: Σ w·(V − v) is 0 up to the floor
        // of the division (−Σw < Σ w·(V − v) ≤ 0).
        let (lag, w) = (s.lag, s.lag_w);
        if w > 0 && !(lag > -w && lag <= 0) {
            return Err(format!("CPU {}: Σ w·(V − v) = {lag} with Σ w = {w}: V is not the weighted mean", r.cpu));
        }
        Ok(())
    }

    /// Adds tree entry `se` of `rq` to `s` (`v`: the queue's V, EEVDF only).
    fn sum_tree_entry(&self, rq: RqId, se: Se, v: u64, s: &mut Sums) {
        let r = self.rq(rq);
        let e = self.e(se);
        self.add_h_counts(se, s);
        if s.bad.is_none() {
            if !e.on_rq || e.cfs_rq != rq || e.relative {
                s.bad = Some((se.0, false));
            } else if Some(se) == r.curr {
                s.bad = Some((se.0, true));
            }
        }
        let w = e.load.weight;
        s.load += w;
        s.nr += 1;
        s.key_sum += self.entity_key(rq, se) as i128 * w as i128;
        s.w_sum += w;
        s.lag += w as i128 * vdiff(v, e.vruntime) as i128;
        s.lag_w += w as i128;
        if s.far_left.is_none() && vdiff(e.vruntime, r.min_vruntime) < -(self.t.latency as i64) {
            s.far_left = Some(se.0);
        }
    }

    /// Adds `se`'s tasks to the hierarchical counts: its queue's for a group entity, itself
    /// (runnable unless delayed) for a task.
    fn add_h_counts(&self, se: Se, s: &mut Sums) {
        match self.e(se).my_q {
            Some(q) => {
                s.h += self.rq(q).h_nr_running;
                s.h_runnable += self.rq(q).h_nr_runnable;
                s.h_idle += if self.cfs_rq_is_idle(q) { self.rq(q).h_nr_running } else { self.rq(q).idle_h_nr };
            }
            None => {
                s.h += 1;
                s.h_runnable += u64::from(!self.e(se).sched_delayed);
                s.h_idle += u64::from(self.e(se).idle_policy);
            }
        }
    }
}
