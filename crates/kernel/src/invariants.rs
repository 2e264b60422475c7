//! Invariants checked after every event when `check_invariants` is on (tests, `--check`).

use crate::{Kernel, TState};
use schedlab_sim::{CpuId, SimRng, TaskId};
use std::cell::RefCell;

thread_local! {
    /// Reused lists (the policy's and the kernel's queued tasks of a CPU): the check runs
    /// after every event, and allocating them each time cost more than comparing them.
    static SCRATCH: RefCell<(Vec<TaskId>, Vec<TaskId>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

impl Kernel<'_> {
    /// * a task is `curr` of at most one CPU, and `curr` is queued on that CPU;
    /// * a task in transit is on no runqueue, a dead task on none either;
    /// * the kernel's per-CPU counts match the tasks it has queued there;
    /// * the policy's runqueue contents equal the kernel's, CPU by CPU;
    /// * per-CPU time is conserved: user + kernel + spin + idle = now;
    /// * kernel time by path sums to the CPU's kernel time;
    /// * affinity holds for every queued or running task, and lies within its cpuset;
    /// * every task's list of children holds exactly its live children, each once, with
    ///   consistent links (full checks);
    /// * an armed sleep timer belongs to a task asleep on it, with soft ≤ hard expiry;
    /// * a delayed new task (`delayed_wakeup`) is in exactly one delay queue, for the CPU it
    ///   is assigned to, runnable and on no runqueue, and no `schedule()` on that CPU has
    ///   passed since it was queued (it is drained at the very next one);
    /// * with core scheduling on, no two SMT siblings run tasks of different cookies, but
    ///   for a sibling the core-wide pick has already told to reschedule (`coresched.rs`);
    /// * the policy's own checks pass.
    ///
    /// `only`: check per-CPU state (curr, the policies' views, timers, time, runqueue
    /// contents, the policy's checks) of these CPUs only — the ones the last event touched
    /// — and the tasks the policy has queued there; `None`: everything, every task.
    pub(crate) fn check_invariants(&self, only: Option<&[CpuId]>, rng: &mut SimRng) -> Result<(), String> {
        let all: Vec<CpuId>;
        let cpus = match only {
            Some(c) => c,
            None => {
                all = (0..self.cpus.len()).collect();
                &all
            }
        };
        self.views_consistent(cpus)?;
        for &c in cpus {
            // `curr` is queued on its own CPU, so it cannot be `curr` of two CPUs.
            if let Some(t) = self.cpus[c].curr {
                if !self.tasks[t].on_rq || self.info[t].cpu != c {
                    return Err(format!("task {} runs on CPU {c} but is not queued there", self.info[t].name));
                }
            }
            self.check_cpu_time(c)?;
            if self.core.on {
                self.check_core_cookies(c)?;
            }
        }
        SCRATCH.with(|s| {
            let (policy, kernel) = &mut *s.borrow_mut();
            match only {
                Some(cpus) => self.check_queued_on(cpus, policy),
                None => self.check_all_queued(policy, kernel),
            }
        })?;
        if self.cfg.delayed_wakeup {
            self.check_delayed(cpus, only.is_none())?;
        }
        if only.is_none() {
            self.check_futexes()?;
            self.check_children()?;
        }
        let mut reqs = Vec::new();
        let cx = schedlab_sched_api::Ctx {
            now: self.now,
            this_cpu: 0,
            machine: &self.machine,
            tasks: &self.info,
            cpus: &self.views,
            rng,
            requests: &mut reqs,
            work: Default::default(),
            decisions: None,
            scale: &self.speed.scale,
            scaled: self.speed.scaled,
            cpufreq: false,
            em: &self.em,
        };
        match only {
            None => self.policy.check_invariants(&cx),
            Some(cpus) => self.policy.check_cpus(&cx, cpus),
        }
        .map_err(|e| format!("policy `{}`: {e}", self.policy.name()))
    }

    /// `c`'s sleep timers, time conservation and kernel time by path.
    fn check_cpu_time(&self, c: CpuId) -> Result<(), String> {
        let cpu = &self.cpus[c];
        for (&(hard, t), &(soft, _)) in cpu.hrtimers.iter() {
            let tk = &self.tasks[t];
            if tk.state != TState::Sleeping || tk.blocked_on != crate::BlockedOn::Timer || tk.timer_cpu as usize != c {
                return Err(format!(
                    "CPU {c} has a sleep timer armed for task {}, which is not asleep on it",
                    self.info[t].name
                ));
            }
            if soft > hard {
                return Err(format!(
                    "CPU {c}: timer of task {} has soft expiry {soft} after hard {hard}",
                    self.info[t].name
                ));
            }
        }
        if self.smt {
            let topo = &self.machine.topology;
            let busy = topo.smt_siblings(c).filter(|&s| self.cpus[s].mode != schedlab_probe::Mode::Idle).count();
            let kept = self.smt_busy[topo.cpus[c].core] as usize;
            if busy != kept {
                return Err(format!("CPU {c}: its core has {busy} threads not idle, counted {kept}"));
            }
        }
        let times = cpu.times_at(self.now);
        let total: u64 = times.iter().map(|t| t.0).sum();
        if total != self.now.0 {
            return Err(format!("CPU {c}: user+kernel+spin+idle = {total} ns but {} ns elapsed", self.now.0));
        }
        let by_path: u64 = cpu.paths_at(self.now).iter().sum();
        if by_path != times[schedlab_probe::Mode::Kernel as usize].0 {
            return Err(format!(
                "CPU {c}: kernel time by path sums to {by_path} ns, but the CPU spent {} ns in the kernel",
                times[schedlab_probe::Mode::Kernel as usize].0
            ));
        }
        Ok(())
    }

    /// A task the kernel has queued on `c`: not in transit, not dead unless it is still
    /// `c`'s `curr` (exiting), inside its affinity unless a migration is pending.
    fn check_queued_task(&self, c: CpuId, t: TaskId) -> Result<(), String> {
        let task = &self.tasks[t];
        if task.in_transit {
            return Err(format!("task {} is queued while in transit", self.info[t].name));
        }
        if task.state == TState::Dead && self.cpus[c].curr != Some(t) {
            return Err(format!("dead task {} is still queued", self.info[t].name));
        }
        if !self.info[t].affinity.contains(c) && !task.migrate_pending {
            return Err(format!(
                "task {} is on CPU {c}, outside its affinity {}",
                self.info[t].name, self.info[t].affinity
            ));
        }
        self.check_within_cpuset(t)
    }

    /// With cpusets on, `t`'s affinity lies within its cgroup's effective CPUs.
    fn check_within_cpuset(&self, t: TaskId) -> Result<(), String> {
        let Some(g) = self.info[t].cgroup.get().filter(|_| self.hotplug.cpuset_on) else { return Ok(()) };
        let eff = &self.hotplug.cpusets[g];
        match self.info[t].affinity.iter().find(|&c| !eff.contains(c)) {
            Some(c) => {
                Err(format!("task {} may run on CPU {c}, outside its cpuset's effective CPUs {eff}", self.info[t].name))
            }
            None => Ok(()),
        }
    }

    /// The incremental runqueue check of `cpus`: each task the policy has queued on a CPU
    /// is queued there in the kernel (and passes [`Self::check_queued_task`]), none twice,
    /// and as many as the kernel counts — so the two agree unless the kernel queued a task
    /// its count also misses, which the next full check's scan of every task finds.
    fn check_queued_on(&self, cpus: &[CpuId], policy: &mut Vec<TaskId>) -> Result<(), String> {
        for &c in cpus {
            policy.clear();
            self.policy.queued(c, policy);
            policy.sort_unstable();
            let stray = policy.iter().any(|&t| t >= self.tasks.len() || !self.tasks[t].on_rq || self.info[t].cpu != c);
            if stray || policy.windows(2).any(|w| w[0] == w[1]) || policy.len() != self.views[c].nr_running {
                return self.queued_mismatch(c, policy);
            }
            for &t in policy.iter() {
                self.check_queued_task(c, t)?;
            }
        }
        Ok(())
    }

    /// The full runqueue check: every task the kernel has queued passes
    /// [`Self::check_queued_task`], and on every CPU the kernel's count, the kernel's
    /// queued tasks and the policy's are the same.
    fn check_all_queued(&self, policy: &mut Vec<TaskId>, kernel: &mut Vec<TaskId>) -> Result<(), String> {
        // The kernel's queued tasks as (cpu, task) sorted, packed in one word each.
        let n = self.tasks.len();
        kernel.clear();
        for (t, task) in self.tasks.iter().enumerate() {
            if task.on_rq {
                let c = self.info[t].cpu;
                self.check_queued_task(c, t)?;
                kernel.push(c * n + t);
            }
        }
        kernel.sort_unstable();
        for c in 0..self.cpus.len() {
            let from = kernel.partition_point(|&k| k < c * n);
            let to = kernel.partition_point(|&k| k < (c + 1) * n);
            if self.views[c].nr_running != to - from {
                return Err(format!("CPU {c}: nr_running {} but {} tasks queued", self.views[c].nr_running, to - from));
            }
            policy.clear();
            self.policy.queued(c, policy);
            policy.sort_unstable();
            if !policy.iter().copied().eq(kernel[from..to].iter().map(|&k| k - c * n)) {
                return self.queued_mismatch(c, policy);
            }
        }
        Ok(())
    }

    /// The error naming what the policy and the kernel each have queued on `c`.
    fn queued_mismatch(&self, c: CpuId, policy: &[TaskId]) -> Result<(), String> {
        let kernel: Vec<TaskId> =
            (0..self.tasks.len()).filter(|&t| self.tasks[t].on_rq && self.info[t].cpu == c).collect();
        let name = |t: TaskId| self.info.get(t).map_or_else(|| format!("#{t}"), |i| i.name.clone());
        let names = |v: &[TaskId]| v.iter().map(|&t| name(t)).collect::<Vec<_>>().join(",");
        Err(format!(
            "CPU {c}: policy `{}` has [{}] queued, the kernel [{}] (counting {})",
            self.policy.name(),
            names(policy),
            names(&kernel),
            self.views[c].nr_running
        ))
    }
}

impl Kernel<'_> {
    /// Each task's children list (`Task::children`) holds live tasks whose parent it is,
    /// linked both ways, as many as its `live_children` (a dead task's is empty); and every
    /// live task with a parent is on some list (the lists' lengths add up to the count of
    /// such tasks). One pass over the tasks: a dead one costs a look at its state.
    fn check_children(&self) -> Result<(), String> {
        let (mut listed, mut with_parent) = (0u64, 0u64);
        for (t, tk) in self.tasks.iter().enumerate() {
            if tk.state == TState::Dead {
                if tk.children.is_some() || tk.live_children != 0 {
                    return Err(format!("dead task {} still has children", self.info[t].name));
                }
                continue;
            }
            with_parent += u64::from(self.info[t].parent.is_some());
            let (mut prev, mut next, mut n) = (schedlab_sched_api::OptIdx::NONE, tk.children, 0u64);
            while let Some(c) = next.get() {
                let ck = &self.tasks[c];
                if self.info[c].parent.get() != Some(t) || ck.state == TState::Dead || ck.sibling_prev != prev {
                    return Err(format!(
                        "task {} is on the children list of {} but is not its live child",
                        self.info[c].name, self.info[t].name
                    ));
                }
                n += 1;
                if n > tk.live_children {
                    return Err(format!("task {}'s children list is longer than its live children", self.info[t].name));
                }
                (prev, next) = (next, ck.sibling_next);
            }
            if n != tk.live_children {
                return Err(format!(
                    "task {} has {} live children but {n} on its children list",
                    self.info[t].name, tk.live_children
                ));
            }
            listed += n;
        }
        if listed != with_parent {
            return Err(format!("{with_parent} live tasks have a parent but {listed} are on children lists"));
        }
        Ok(())
    }
}
