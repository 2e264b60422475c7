//! The fair class's own consistency checks (`--check`, tests), in the spirit of the
//! kernel's `SCHED_WARN_ON`s: tree order and augmentation, each runqueue's load and counts
//! against its entities, EEVDF's sums and V, and the group structure.

use super::entity::{RqId, Se};
use super::{vdiff, Fair};
use std::cell::RefCell;

thread_local! {
    /// A runqueue's entities in order, reused: the checks run after every event, and
    /// allocating the list each time cost more than checking it.
    static ENTS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

impl Fair {
    /// `only`: the runqueues and group entities of these CPUs only, without the group-wide
    /// `load_avg` sums (the incremental check after an event); `None`: everything.
    pub(super) fn check_fair(&self, only: Option<&[schedlab_sim::CpuId]>) -> Result<(), String> {
        if self.counters.ineligible_picks > 0 {
            return Err(format!("EEVDF picked an ineligible entity {} times", self.counters.ineligible_picks));
        }
        ENTS.with(|ents| self.check_rqs(only, &mut ents.borrow_mut()))
    }

    /// [`Fair::check_fair`]'s runqueue and group checks, with `ents` for scratch.
    fn check_rqs(&self, only: Option<&[schedlab_sim::CpuId]>, ents: &mut Vec<u32>) -> Result<(), String> {
        let mut check = |i: usize| -> Result<(), String> {
            let rq = RqId(i as u32);
            let r = self.rq(rq);
            if r.timeline.len() == 0 && r.curr.is_none() {
                if r.load != 0 || r.nr_running != 0 || r.h_nr_running != 0 || r.h_nr_runnable != 0 {
                    return Err(format!("CPU {}: an empty queue has load {} nr {}", r.cpu, r.load, r.nr_running));
                }
                return Ok(());
            }
            ents.clear();
            self.nodes.in_order(&r.timeline, ents);
            self.check_rq(rq, ents)
        };
        let Some(cpus) = only else {
            (0..self.rqs.len()).try_for_each(check)?;
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

    /// `ents`: the tree's entities in order (`curr` is appended for the V check).
    fn check_rq(&self, rq: RqId, ents: &mut Vec<u32>) -> Result<(), String> {
        let r = self.rq(rq);
        let name = || format!("CPU {} group `{}`", r.cpu, self.tgs[r.tg].name);
        self.nodes.check(&r.timeline, ents).map_err(|e| format!("{}: {e}", name()))?;
        let (mut load, mut nr, mut key_sum, mut w_sum) = (0, 0, 0i128, 0u64);
        let (mut h, mut h_runnable) = (0, 0);
        let mut count_h = |se: Se| match self.e(se).my_q {
            Some(q) => {
                h += self.rq(q).h_nr_running;
                h_runnable += self.rq(q).h_nr_runnable;
            }
            None => {
                h += 1;
                h_runnable += u64::from(!self.e(se).sched_delayed);
            }
        };
        for &id in ents.iter() {
            count_h(Se(id));
        }
        if let Some(c) = r.curr.filter(|&c| self.e(c).on_rq) {
            count_h(c);
        }
        if (h, h_runnable) != (r.h_nr_running, r.h_nr_runnable) {
            return Err(format!(
                "{}: h_nr_running {} / h_nr_runnable {} but the entities hold {h} / {h_runnable}",
                name(),
                r.h_nr_running,
                r.h_nr_runnable
            ));
        }
        for &id in ents.iter() {
            let se = Se(id);
            let e = self.e(se);
            if !e.on_rq || e.cfs_rq != rq || e.relative {
                return Err(format!("{}: tree entry {id} is stale", name()));
            }
            if Some(se) == r.curr {
                return Err(format!("{}: curr {id} is in the tree", name()));
            }
            load += e.load.weight;
            nr += 1;
            key_sum += self.entity_key(rq, se) as i128 * e.load.weight as i128;
            w_sum += e.load.weight;
        }
        if let Some(c) = r.curr.filter(|&c| self.e(c).on_rq) {
            load += self.e(c).load.weight;
            nr += 1;
        }
        if load != r.load || nr != r.nr_running {
            return Err(format!(
                "{}: load {}/{load} nr {}/{nr} disagree with the entities",
                name(),
                r.load,
                r.nr_running
            ));
        }
        if self.eevdf_on() {
            if key_sum != r.avg_vruntime || w_sum != r.avg_load {
                return Err(format!("{}: avg_vruntime/avg_load disagree with the tree", name()));
            }
            ents.extend(r.curr.filter(|&c| self.e(c).on_rq).map(|c| c.0));
            self.check_v(rq, ents)?;
        } else {
            for &id in ents.iter() {
                if vdiff(self.e(Se(id)).vruntime, r.min_vruntime) < -(self.t.latency as i64) {
                    return Err(format!("{}: entity {id} is more than sched_latency left of min_vruntime", name()));
                }
            }
        }
        Ok(())
    }

    /// V is the weighted mean of the queued vruntimes: Σ w·(V − v) is 0 up to the floor
    /// of the division (−Σw < Σ w·(V − v) ≤ 0).
    fn check_v(&self, rq: RqId, queued: &[u32]) -> Result<(), String> {
        let r = self.rq(rq);
        let v = self.avg_vruntime(rq);
        let (mut lag, mut w) = (0i128, 0i128);
        for &id in queued {
            let e = self.e(Se(id));
            lag += e.load.weight as i128 * vdiff(v, e.vruntime) as i128;
            w += e.load.weight as i128;
        }
        if w > 0 && !(lag > -w && lag <= 0) {
            return Err(format!("CPU {}: Σ w·(V − v) = {lag} with Σ w = {w}: V is not the weighted mean", r.cpu));
        }
        Ok(())
    }
}
