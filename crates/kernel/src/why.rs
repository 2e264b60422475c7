//! Decision records around the policy hooks (`schedlab_sched_api::why`): the kernel
//! delivers what the hooks recorded and adds its own records — each pick with why every
//! other queued task was passed over, each wakeup preemption check, each tick's verdict,
//! sleeps and affinities. All of it happens only when the probe asked for decisions, and
//! reads state without changing it, so recording changes no result.

use crate::{BlockedOn, Kernel};
use schedlab_sched_api::{Ctx, Decision, Moment, Why};
use schedlab_sim::{CpuId, TaskId};

impl Kernel<'_> {
    /// Whether decisions are recorded in this run.
    pub(crate) fn recording(&self) -> bool {
        self.why.is_some()
    }

    /// Hands the decisions recorded so far to the probe, in order.
    /// Inlined into every hook: decision records are off in most runs.
    #[inline(always)]
    pub(crate) fn deliver_decisions(&mut self) {
        if self.why.as_ref().is_some_and(|b| !b.is_empty()) {
            self.deliver_decisions_now();
        }
    }

    #[inline(never)]
    fn deliver_decisions_now(&mut self) {
        let Some(buf) = self.why.as_mut() else { return };
        let list = std::mem::take(buf);
        for d in &list {
            self.probe.decision(self.now, d);
        }
        if let Some(buf) = self.why.as_mut() {
            *buf = list;
            buf.clear();
        }
    }

    /// Asks the policy why `first` goes before each task of `others` on `cpu`.
    fn ask_why(&mut self, cpu: CpuId, first: TaskId, others: &[TaskId], at: Moment) -> Vec<(TaskId, Why)> {
        let mut reqs = Vec::new();
        let mut rng = self.check_rng.take().expect("put back after every use");
        let out = {
            let cx = Ctx {
                now: self.now,
                this_cpu: cpu,
                machine: &self.machine,
                tasks: &self.info,
                cpus: &self.views,
                rng: &mut rng,
                requests: &mut reqs,
                work: Default::default(),
                decisions: None,
                scale: &self.speed.scale,
                scaled: self.speed.scaled,
                cpufreq: false,
                em: &self.em,
            };
            others.iter().map(|&o| (o, self.policy.why(&cx, cpu, first, o, at))).collect()
        };
        self.check_rng = Some(rng);
        out
    }

    /// After `pick_next_task` on `cpu` chose `chosen`: why each other queued task was not.
    pub(crate) fn record_pick(&mut self, cpu: CpuId, chosen: TaskId) {
        if !self.recording() {
            return;
        }
        let mut queued = Vec::new();
        self.policy.queued(cpu, &mut queued);
        queued.retain(|&t| t != chosen && !self.tasks[t].delayed);
        queued.sort_unstable();
        let passed = self.ask_why(cpu, chosen, &queued, Moment::Pick);
        self.push_decision(Decision::Pick { cpu, chosen, passed });
    }

    /// After the wakeup preemption check for `woken` against `curr` on `cpu`; `was` is
    /// `need_resched` before the check.
    pub(crate) fn record_preempt(&mut self, cpu: CpuId, curr: TaskId, woken: TaskId, was: bool) {
        if !self.recording() {
            return;
        }
        let preempt = !was && self.cpus[cpu].need_resched;
        let why = if preempt {
            self.ask_why(cpu, woken, &[curr], Moment::Pick).pop().map(|(_, w)| w)
        } else {
            self.ask_why(cpu, curr, &[woken], Moment::Wakeup).pop().map(|(_, w)| w)
        };
        let why = why.expect("asked about one task");
        self.push_decision(Decision::Preempt { cpu, curr, woken, preempt, why });
    }

    /// After `task_tick` of `curr` on `cpu`; `was` is `need_resched` before it.
    pub(crate) fn record_tick(&mut self, cpu: CpuId, curr: TaskId, was: bool) {
        if self.recording() {
            let resched = !was && self.cpus[cpu].need_resched;
            self.push_decision(Decision::Tick { cpu, curr, resched });
        }
    }

    /// The task blocks on `on`.
    pub(crate) fn record_sleep(&mut self, task: TaskId, on: &BlockedOn) {
        if self.recording() {
            let on = match on {
                BlockedOn::Nothing => "nothing".to_string(),
                BlockedOn::Timer => "a timer (sleep)".to_string(),
                BlockedOn::PipeRead(p) => {
                    format!("reading pipe {}", self.wl.pipes.get(*p as usize).map_or("?", |x| &x.name))
                }
                BlockedOn::PipeWrite(p) => {
                    format!("writing pipe {}", self.wl.pipes.get(*p as usize).map_or("?", |x| &x.name))
                }
                BlockedOn::Futex => "a futex (mutex, condition, barrier or futex word)".to_string(),
                BlockedOn::Children => "its children (wait)".to_string(),
                BlockedOn::Poll => "poll on its pipes".to_string(),
            };
            self.push_decision(Decision::Sleep { task, on });
        }
    }

    /// The task's affinity is set (creation, a change).
    pub(crate) fn record_affinity(&mut self, task: TaskId) {
        if self.recording() {
            let cpus = self.info[task].affinity.clone();
            let name = self.info[task].name.clone();
            self.push_decision(Decision::Task { task, name, cpus });
        }
    }

    fn push_decision(&mut self, d: Decision) {
        if let Some(buf) = self.why.as_mut() {
            buf.push(d);
        }
        self.deliver_decisions();
    }
}
