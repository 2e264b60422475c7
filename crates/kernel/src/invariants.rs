//! Invariants checked after every event when `check_invariants` is on (tests, `--check`).

use crate::{Kernel, TState};
use schedlab_sim::{CpuId, SimRng};

impl Kernel<'_> {
    /// * a task is `curr` of at most one CPU, and `curr` is queued on that CPU;
    /// * a task in transit is on no runqueue, a dead task on none either;
    /// * the kernel's per-CPU counts match the tasks it has queued there;
    /// * the policy's runqueue contents equal the kernel's, CPU by CPU;
    /// * per-CPU time is conserved: user + kernel + spin + idle = now;
    /// * kernel time by path sums to the CPU's kernel time;
    /// * affinity holds for every queued or running task;
    /// * an armed sleep timer belongs to a task asleep on it, with soft ≤ hard expiry;
    /// * a delayed new task (`delayed_wakeup`) is in exactly one delay queue, for the CPU it
    ///   is assigned to, runnable and on no runqueue, and no `schedule()` on that CPU has
    ///   passed since it was queued (it is drained at the very next one);
    /// * the policy's own checks pass.
    ///
    /// `only`: check per-CPU state (timers, time, runqueue contents, the policy's checks)
    /// of these CPUs only — the ones the last event touched; `None`: everything.
    pub(crate) fn check_invariants(&self, only: Option<&[CpuId]>, rng: &mut SimRng) -> Result<(), String> {
        self.views_consistent()?;
        let n = self.cpus.len();
        let all: Vec<CpuId>;
        let cpus = match only {
            Some(c) => c,
            None => {
                all = (0..n).collect();
                &all
            }
        };
        for (c, cpu) in self.cpus.iter().enumerate() {
            // `curr` is queued on its own CPU, so it cannot be `curr` of two CPUs.
            if let Some(t) = cpu.curr {
                if !self.tasks[t].on_rq || self.info[t].cpu != c {
                    return Err(format!("task {} runs on CPU {c} but is not queued there", self.info[t].name));
                }
            }
        }
        for &c in cpus {
            let cpu = &self.cpus[c];
            for (&(hard, t), &(soft, _)) in &cpu.hrtimers {
                let tk = &self.tasks[t];
                if tk.state != TState::Sleeping
                    || tk.blocked_on != crate::BlockedOn::Timer
                    || tk.timer_cpu as usize != c
                {
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
        }
        // The kernel's queued tasks on the checked CPUs, as (cpu, task) sorted.
        let mut kernel_rq: Vec<(CpuId, usize)> = Vec::new();
        for (t, task) in self.tasks.iter().enumerate() {
            if task.on_rq {
                if task.in_transit {
                    return Err(format!("task {} is queued while in transit", self.info[t].name));
                }
                let c = self.info[t].cpu;
                if task.state == TState::Dead && self.cpus[c].curr != Some(t) {
                    return Err(format!("dead task {} is still queued", self.info[t].name));
                }
                if !self.info[t].affinity.contains(c) && !task.migrate_pending {
                    return Err(format!(
                        "task {} is on CPU {c}, outside its affinity {}",
                        self.info[t].name, self.info[t].affinity
                    ));
                }
                if only.is_none() || self.touched_mask[c] {
                    kernel_rq.push((c, t));
                }
            }
        }
        kernel_rq.sort_unstable();
        let mut buf = Vec::new();
        let mut list = Vec::new();
        for &c in cpus {
            let from = kernel_rq.partition_point(|&(k, _)| k < c);
            let to = kernel_rq.partition_point(|&(k, _)| k <= c);
            list.clear();
            list.extend(kernel_rq[from..to].iter().map(|&(_, t)| t));
            if self.views[c].nr_running != list.len() {
                return Err(format!(
                    "CPU {c}: nr_running {} but {} tasks queued",
                    self.views[c].nr_running,
                    list.len()
                ));
            }
            buf.clear();
            self.policy.queued(c, &mut buf);
            buf.sort_unstable();
            if buf != list {
                let names = |v: &[usize]| v.iter().map(|&t| self.info[t].name.clone()).collect::<Vec<_>>().join(",");
                return Err(format!(
                    "CPU {c}: policy `{}` has [{}] queued, the kernel [{}]",
                    self.policy.name(),
                    names(&buf),
                    names(&list)
                ));
            }
        }
        if self.cfg.delayed_wakeup {
            self.check_delayed(cpus, only.is_none())?;
        }
        if only.is_none() {
            self.check_futexes()?;
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
        };
        match only {
            None => self.policy.check_invariants(&cx),
            Some(cpus) => self.policy.check_cpus(&cx, cpus),
        }
        .map_err(|e| format!("policy `{}`: {e}", self.policy.name()))
    }
}
