//! Invariants checked after every event when `check_invariants` is on (tests, `--check`).

use crate::{Kernel, TState};

impl Kernel<'_> {
    /// * a task is `curr` of at most one CPU, and `curr` is queued on that CPU;
    /// * a task in transit is on no runqueue, a dead task on none either;
    /// * the kernel's per-CPU counts match the tasks it has queued there;
    /// * the policy's runqueue contents equal the kernel's, CPU by CPU;
    /// * per-CPU time is conserved: user + kernel + spin + idle = now;
    /// * kernel time by path sums to the CPU's kernel time;
    /// * affinity holds for every queued or running task;
    /// * an armed sleep timer belongs to a task asleep on it, with soft ≤ hard expiry;
    /// * the policy's own checks pass.
    pub(crate) fn check_invariants(&self) -> Result<(), String> {
        self.views_consistent()?;
        let n = self.cpus.len();
        let mut running_on = vec![None; self.tasks.len()];
        for (c, cpu) in self.cpus.iter().enumerate() {
            if let Some(t) = cpu.curr {
                if let Some(other) = running_on[t] {
                    return Err(format!("task {} is curr on CPUs {other} and {c}", self.info[t].name));
                }
                running_on[t] = Some(c);
                if !self.tasks[t].on_rq || self.info[t].cpu != c {
                    return Err(format!("task {} runs on CPU {c} but is not queued there", self.info[t].name));
                }
            }
            for (&(hard, t), &(soft, _)) in &cpu.hrtimers {
                let tk = &self.tasks[t];
                if tk.state != TState::Sleeping || tk.blocked_on != crate::BlockedOn::Timer || tk.timer_cpu != c {
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
        let mut kernel_rq: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (t, task) in self.tasks.iter().enumerate() {
            if task.on_rq {
                if task.in_transit {
                    return Err(format!("task {} is queued while in transit", self.info[t].name));
                }
                if task.state == TState::Dead && running_on[t].is_none() {
                    return Err(format!("dead task {} is still queued", self.info[t].name));
                }
                let c = self.info[t].cpu;
                if !self.info[t].affinity.contains(c) && !task.migrate_pending {
                    return Err(format!(
                        "task {} is on CPU {c}, outside its affinity {}",
                        self.info[t].name, self.info[t].affinity
                    ));
                }
                kernel_rq[c].push(t);
            }
        }
        let mut buf = Vec::new();
        for (c, list) in kernel_rq.iter().enumerate() {
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
            if buf != *list {
                let names = |v: &[usize]| v.iter().map(|&t| self.info[t].name.clone()).collect::<Vec<_>>().join(",");
                return Err(format!(
                    "CPU {c}: policy `{}` has [{}] queued, the kernel [{}]",
                    self.policy.name(),
                    names(&buf),
                    names(list)
                ));
            }
        }
        let mut reqs = Vec::new();
        let mut rng = schedlab_sim::RngStreams::new(0).stream("invariants", 0);
        let cx = schedlab_sched_api::Ctx {
            now: self.now,
            this_cpu: 0,
            machine: &self.machine,
            tasks: &self.info,
            cpus: &self.views,
            rng: &mut rng,
            requests: &mut reqs,
            work: Default::default(),
        };
        self.policy.check_invariants(&cx).map_err(|e| format!("policy `{}`: {e}", self.policy.name()))
    }
}
