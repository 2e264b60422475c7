//! Core scheduling (`CONFIG_SCHED_CORE`, Linux 5.14+; `kernel/sched/core.c` and
//! `kernel/sched/core_sched.c`, v5.15 and v6.18): SMT siblings run only tasks of one
//! cookie at a time. `schedule()` on a CPU picks for its whole core (`pick_next_task`'s
//! core-wide selection), forces idle the siblings with nothing of that cookie, and
//! reschedules the siblings whose choice changed; forced-idle time is charged to the tasks
//! running beside it (`__sched_core_account_forceidle`). On only when a task has a cookie,
//! the machine has SMT and the policy takes part (`SchedClass::core_sched`); otherwise
//! nothing here runs and the record says why (`docs/core-scheduling.md`).

use crate::core::hook;
use crate::Kernel;
use schedlab_machine::Machine;
use schedlab_sched_api::{CorePrio, SchedClass};
use schedlab_sim::{CpuId, Ns, TaskId};

/// The core-wide state of one core (`rq->core->core_*`).
#[derive(Clone, Debug, Default)]
struct CoreState {
    /// `core_cookie`: the cookie of the last core-wide selection's highest-priority task.
    cookie: u64,
    /// `core_forceidle_count`: siblings forced idle by the last selection.
    fi_count: u32,
    /// `core_forceidle_seq`: advances when a selection starts a forced idle.
    fi_seq: u64,
    /// `core_forceidle_start` (none: 0 in the kernel).
    fi_start: Option<Ns>,
    /// `core_forceidle_occupation`: siblings running a task in that selection.
    occupation: u32,
    /// `core_task_seq`: every enqueue and dequeue on the core (`sched_core_enqueue`).
    task_seq: u64,
    /// `core_pick_seq`: the task sequence the last selection was made at.
    pick_seq: u64,
}

/// Core scheduling's state.
#[derive(Clone, Debug, Default)]
pub(crate) struct CoreSched {
    /// Core scheduling acts in this run.
    pub(crate) on: bool,
    cores: Vec<CoreState>,
    /// `rq->core_pick` of each CPU: what a sibling's selection chose for it (`Some(None)`:
    /// the idle task), taken by its next `schedule()` if nothing was queued since.
    pick: Vec<Option<Option<TaskId>>>,
    /// `rq->core_sched_seq`: the selection this CPU last ran.
    sched_seq: Vec<u64>,
    /// `p->stats.core_forceidle_sum` of each task (ns).
    pub(crate) forceidle_sum: Vec<u64>,
    /// Siblings forced idle, summed over selections.
    pub(crate) forceidle_count: u64,
    /// Forced-idle time charged, summed over tasks (ns).
    pub(crate) forceidle_ns: u64,
    /// Core-wide selections (the full path) and single-CPU picks (the cookieless fast path).
    pub(crate) selections: u64,
    pub(crate) fast_picks: u64,
    /// Siblings that took the choice made for them (`core_pick`) without selecting again.
    pub(crate) picks_taken: u64,
    /// Why cookies have no effect in this run (for the record's warnings).
    pub(crate) notes: Vec<String>,
}

impl CoreSched {
    /// On when a template names a cookie, the machine has SMT and the policy takes part;
    /// a cookie that cannot act is a warning, as the kernel accepts `PR_SCHED_CORE` on a
    /// machine without SMT (`sched_core_share_pid` only checks the arguments).
    pub(crate) fn new(machine: &Machine, cookies: bool, policy: &dyn SchedClass) -> CoreSched {
        let mut c = CoreSched::default();
        if !cookies {
            return c;
        }
        if machine.topology.threads_per_core < 2 {
            c.notes.push(format!(
                "core_cookie: machine `{}` has no SMT (threads_per_core = 1): core scheduling has no effect",
                machine.name
            ));
        } else if !policy.core_sched() {
            c.notes.push(format!(
                "core_cookie: scheduler `{}` has no core scheduling (Linux's CONFIG_SCHED_CORE, 5.14+): cookies ignored",
                policy.name()
            ));
        } else {
            let n = machine.nr_cpus();
            let cores = machine.topology.cpus.iter().map(|c| c.core + 1).max().unwrap_or(0);
            c.on = true;
            c.cores = vec![CoreState::default(); cores];
            c.pick = vec![None; n];
            c.sched_seq = vec![0; n];
        }
        c
    }
}

impl Kernel<'_> {
    /// The record's `core.*` counters (none when core scheduling is off).
    pub(crate) fn core_counters(&self) -> Vec<(String, u64)> {
        if !self.core.on {
            return Vec::new();
        }
        let c = &self.core;
        [
            ("core.selections", c.selections),
            ("core.fast_picks", c.fast_picks),
            ("core.picks_taken", c.picks_taken),
            ("core.forceidle_count", c.forceidle_count),
            ("core.forceidle_ns", c.forceidle_ns),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect()
    }

    /// Each task's `core_forceidle_sum` for the record; none when core scheduling is off.
    pub(crate) fn core_forceidle_sums(&self) -> Vec<u64> {
        if !self.core.on {
            return Vec::new();
        }
        let mut v = self.core.forceidle_sum.clone();
        v.resize(self.tasks.len(), 0);
        v
    }

    fn core_of(&self, cpu: CpuId) -> usize {
        self.machine.topology.cpus[cpu].core
    }

    fn cookie_of(&self, p: Option<TaskId>) -> u64 {
        p.map_or(0, |p| self.info[p].core_cookie)
    }

    /// `sched_core_enqueue` / `sched_core_dequeue`: the core's task sequence advances, so a
    /// choice made for a sibling before is made again.
    #[inline]
    pub(crate) fn core_task_changed(&mut self, cpu: CpuId) {
        if self.core.on {
            let c = self.core_of(cpu);
            self.core.cores[c].task_seq += 1;
        }
    }

    /// `sched_core_tick` (`__sched_core_account_forceidle` while forced idle), and
    /// `task_tick_core` for the running task.
    pub(crate) fn sched_core_tick(&mut self, cpu: CpuId, curr: Option<TaskId>) {
        let c = self.core_of(cpu);
        if self.core.cores[c].fi_count == 0 {
            return;
        }
        self.account_forceidle(c, cpu);
        if let Some(t) = curr {
            hook!(self, cpu, |pol, cx| pol.task_tick_core(&mut cx, cpu, t));
        }
    }

    /// `__sched_core_account_forceidle`: the time since the last account, scaled by forced
    /// idle siblings over running ones, is charged to each task running on the core.
    fn account_forceidle(&mut self, core: usize, cpu: CpuId) {
        let st = &mut self.core.cores[core];
        let Some(start) = st.fi_start else { return };
        if self.now <= start {
            return;
        }
        let mut delta = (self.now - start).0;
        st.fi_start = Some(self.now);
        if st.occupation == 0 {
            return; // the kernel warns: forced idle needs a running task
        }
        if st.fi_count > 1 || st.occupation > 1 {
            delta = delta * u64::from(st.fi_count) / u64::from(st.occupation);
        }
        let sibs: Vec<CpuId> = self.machine.topology.smt_siblings(cpu).collect();
        for s in sibs {
            let p = match self.core.pick[s] {
                Some(chosen) => chosen,
                None => self.cpus[s].curr,
            };
            if let Some(p) = p {
                if self.core.forceidle_sum.len() <= p {
                    self.core.forceidle_sum.resize(p + 1, 0);
                }
                self.core.forceidle_sum[p] += delta;
                self.core.forceidle_ns += delta;
            }
        }
    }

    /// `pick_next_task` with core scheduling on: the choice a sibling's selection left for
    /// this CPU if nothing was queued or dequeued on the core since; else the cookieless
    /// fast path; else the core-wide selection.
    pub(crate) fn sched_core_pick(&mut self, cpu: CpuId) -> Option<TaskId> {
        let c = self.core_of(cpu);
        let st = &self.core.cores[c];
        if st.pick_seq == st.task_seq && st.pick_seq != self.core.sched_seq[cpu] {
            if let Some(chosen) = self.core.pick[cpu].take() {
                self.core.sched_seq[cpu] = st.pick_seq;
                self.core.picks_taken += 1;
                return self.core_commit(cpu, chosen, None);
            }
        }
        self.core.pick[cpu] = None;
        let st = &mut self.core.cores[c];
        let fi_before = st.fi_count > 0;
        let mut need_sync = st.cookie != 0;
        st.cookie = 0;
        if fi_before {
            self.account_forceidle(c, cpu);
            let st = &mut self.core.cores[c];
            (st.fi_start, st.fi_count, st.occupation) = (None, 0, 0);
            need_sync = true;
        }
        let mine = self.core_candidates(cpu);
        if !need_sync && mine.iter().all(|&(p, _)| self.info[p].core_cookie == 0) {
            // Nothing cookied runs on the core and this CPU has only cookieless tasks: the
            // class's own pick cannot break the core's cookie.
            self.core.fast_picks += 1;
            let next = hook!(self, cpu, |pol, cx| pol.pick_next_task(&mut cx, cpu));
            if let Some(n) = next {
                hook!(self, cpu, |pol, cx| pol.core_fi_update(&mut cx, cpu, n, false, 0));
            }
            return next;
        }
        self.core_select(cpu, c, mine, fi_before)
    }

    /// The tasks `cpu`'s classes could run now, with their priorities.
    fn core_candidates(&mut self, cpu: CpuId) -> Vec<(TaskId, CorePrio)> {
        let mut out = Vec::new();
        hook!(self, cpu, |pol, cx| pol.core_candidates(&mut cx, cpu, &mut out));
        out
    }

    /// The highest priority of `cands` (the first of equals: ties go to the CPU visited
    /// first, `for_each_cpu_wrap` from this one), among those of `cookie` if given.
    fn core_best(&self, cands: &[(TaskId, CorePrio)], cookie: Option<u64>) -> Option<(TaskId, CorePrio)> {
        let mut best: Option<(TaskId, CorePrio)> = None;
        for &(p, prio) in cands {
            if cookie.is_some_and(|k| self.info[p].core_cookie != k) {
                continue;
            }
            if best.is_none_or(|(_, b)| b.less(&prio)) {
                best = Some((p, prio));
            }
        }
        best
    }

    /// The core-wide selection of `pick_next_task`: every online sibling's best task, the
    /// highest of them sets the core's cookie, each sibling then runs its best task of that
    /// cookie (`sched_core_find`) or is forced idle; the forced-idle baseline is updated
    /// (`task_vruntime_update`) and the siblings whose choice changed are rescheduled.
    fn core_select(
        &mut self,
        cpu: CpuId,
        core: usize,
        mine: Vec<(TaskId, CorePrio)>,
        fi_before: bool,
    ) -> Option<TaskId> {
        self.core.selections += 1;
        let mut sibs: Vec<CpuId> = self.machine.topology.smt_siblings(cpu).filter(|&s| self.cpu_active(s)).collect();
        let at = sibs.iter().position(|&s| s == cpu).unwrap_or(0);
        sibs.rotate_left(at);
        let mut cands = vec![mine];
        for &s in &sibs[1..] {
            cands.push(self.core_candidates(s));
        }
        let mut max: Option<(TaskId, CorePrio)> = None;
        for c in &cands {
            if let Some((p, prio)) = self.core_best(c, None) {
                if max.is_none_or(|(_, m)| m.less(&prio)) {
                    max = Some((p, prio));
                }
            }
        }
        let cookie = self.cookie_of(max.map(|m| m.0));
        let mut chosen = Vec::with_capacity(sibs.len());
        let (mut fi, mut occ) = (0u32, 0u32);
        for (i, &s) in sibs.iter().enumerate() {
            let best = self.core_best(&cands[i], None).map(|b| b.0);
            let p = if self.cookie_of(best) == cookie {
                best
            } else if cookie != 0 {
                self.core_best(&cands[i], Some(cookie)).map(|b| b.0)
            } else {
                None
            };
            match p {
                None if self.views[s].nr_running > 0 => fi += 1,
                None => {}
                Some(_) => occ += 1,
            }
            chosen.push(p);
        }
        let st = &mut self.core.cores[core];
        st.cookie = cookie;
        st.fi_count = fi;
        if fi > 0 && !fi_before {
            st.fi_seq += 1;
        }
        if fi > 0 {
            (st.fi_start, st.occupation) = (Some(self.now), occ);
        }
        st.pick_seq = st.task_seq;
        let (seq, fi_seq) = (st.pick_seq, st.fi_seq);
        self.core.sched_seq[cpu] = seq;
        self.core.forceidle_count += u64::from(fi);
        self.core_resched_siblings(cpu, &sibs, &chosen, fi_before, fi > 0, fi_seq);
        self.core_commit(cpu, chosen[0], Some(&cands[0]))
    }

    /// The end of the selection: each sibling's choice updates the forced-idle baseline
    /// unless a forced idle simply continues; a sibling not already running its choice
    /// keeps it in `core_pick` and is rescheduled.
    fn core_resched_siblings(
        &mut self,
        cpu: CpuId,
        sibs: &[CpuId],
        chosen: &[Option<TaskId>],
        fi_before: bool,
        fi: bool,
        fi_seq: u64,
    ) {
        for (&s, &p) in sibs.iter().zip(chosen) {
            if let Some(t) = p.filter(|_| !(fi_before && fi)) {
                hook!(self, cpu, |pol, cx| pol.core_fi_update(&mut cx, s, t, fi, fi_seq));
            }
            if s == cpu {
                continue;
            }
            if self.cpus[s].curr == p {
                self.core.pick[s] = None;
                continue;
            }
            self.core.pick[s] = Some(p);
            self.resched_curr(cpu, s);
        }
    }

    /// Makes `chosen` the next task of `cpu` (`None`: forced idle). When every task this
    /// CPU could run shares the chosen cookie, the class picks among them itself (its own
    /// order, e.g. EEVDF's eligibility, stays); else the chosen task is set directly. A
    /// class that cannot set it picks for itself.
    fn core_commit(
        &mut self,
        cpu: CpuId,
        chosen: Option<TaskId>,
        cands: Option<&[(TaskId, CorePrio)]>,
    ) -> Option<TaskId> {
        let Some(p) = chosen else {
            hook!(self, cpu, |pol, cx| pol.core_force_idle(&mut cx, cpu));
            return None;
        };
        let k = self.info[p].core_cookie;
        let alike = cands.is_some_and(|c| c.iter().all(|&(t, _)| self.info[t].core_cookie == k));
        let queued = self.tasks[p].on_rq && self.info[p].cpu == cpu;
        if !alike && queued && hook!(self, cpu, |pol, cx| pol.core_set_next(&mut cx, cpu, p)) {
            return Some(p);
        }
        hook!(self, cpu, |pol, cx| pol.pick_next_task(&mut cx, cpu))
    }
}

/// Two siblings running tasks of different cookies, neither told to reschedule: the
/// `(cpu, cookie)` of each, from each sibling's `(cpu, running task's cookie, need_resched)`.
/// A rescheduled sibling is in the window between the core-wide pick and its IPI, which
/// Linux has too (`pick_next_task` only calls `resched_curr` on it).
fn cookie_clash(sibs: &[(CpuId, Option<u64>, bool)]) -> Option<((CpuId, u64), (CpuId, u64))> {
    let settled: Vec<(CpuId, u64)> = sibs.iter().filter(|s| !s.2).filter_map(|&(c, k, _)| k.map(|k| (c, k))).collect();
    let first = *settled.first()?;
    settled.iter().find(|s| s.1 != first.1).map(|&s| (first, s))
}

impl Kernel<'_> {
    /// `--check`: core scheduling never runs two cookies on one core at once (the
    /// `WARN_ON_ONCE(!cookie_match(next, rq_i->core_pick))` of `pick_next_task`, made an
    /// invariant of every instant).
    pub(crate) fn check_core_cookies(&self, cpu: CpuId) -> Result<(), String> {
        let sibs: Vec<(CpuId, Option<u64>, bool)> = self
            .machine
            .topology
            .smt_siblings(cpu)
            .map(|s| (s, self.cpus[s].curr.map(|t| self.info[t].core_cookie), self.cpus[s].need_resched))
            .collect();
        match cookie_clash(&sibs) {
            None => Ok(()),
            Some(((a, ka), (b, kb))) => Err(format!(
                "core scheduling: SMT siblings CPU {a} and CPU {b} run cookies {ka} and {kb} at once ({} and {})",
                self.cpus[a].curr.map_or("-", |t| &self.info[t].name),
                self.cpus[b].curr.map_or("-", |t| &self.info[t].name)
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::cookie_clash;

    /// The check sees two cookies on one core, and only when neither sibling is about to
    /// switch; idle siblings and equal cookies (0 included) never clash.
    #[test]
    fn cookie_clash_finds_two_cookies_on_a_core() {
        assert_eq!(cookie_clash(&[(0, Some(1), false), (4, Some(2), false)]), Some(((0, 1), (4, 2))));
        assert_eq!(cookie_clash(&[(0, Some(0), false), (4, Some(2), false)]), Some(((0, 0), (4, 2))));
        assert_eq!(cookie_clash(&[(0, Some(1), false), (4, Some(2), true)]), None, "CPU 4 is being rescheduled");
        assert_eq!(cookie_clash(&[(0, Some(1), false), (4, None, false)]), None, "idle matches any cookie");
        assert_eq!(cookie_clash(&[(0, Some(3), false), (4, Some(3), false)]), None);
        assert_eq!(cookie_clash(&[(0, Some(0), false), (4, Some(0), false)]), None);
    }
}
