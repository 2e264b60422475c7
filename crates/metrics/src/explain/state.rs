//! The [`Explainer`] probe's state machine (see the module above).

use super::{Explained, Segment, TaskWaits, Wait, WaitCause, WakeInfo};
use schedlab_machine::CpuSet;
use schedlab_probe::{Mode, PrevState, Probe, ProbeEvent, RunSummary};
use schedlab_sched_api::{Cause, Decision};
use schedlab_sim::{CpuId, Ns, TaskId};
use std::rc::Rc;

/// Notes kept per wait about the balancer (the most recent distinct ones).
const MAX_NOTES: usize = 6;

#[derive(Clone, Copy, PartialEq, Eq)]
enum St {
    Blocked,
    Waking,
    Waiting,
    Running,
    Dead,
}

struct CpuSt {
    curr: Option<TaskId>,
    mode: Mode,
    /// A reschedule is pending (a preemption or a tick said so) until the next switch.
    resched: bool,
    waiters: Vec<TaskId>,
    wakings: Vec<TaskId>,
}

/// The words of a segment, rendered when it closes (classifying allocates nothing).
#[derive(Clone, PartialEq, Eq)]
enum Words {
    Reason(Rc<str>),
    Spin,
    Idle,
    Kernel,
    Resched,
    IdleCpu(CpuId),
    NoComparison,
}

impl Words {
    fn render(&self, c: CpuId) -> String {
        match self {
            Words::Reason(r) => r.to_string(),
            Words::Spin => format!("CPU {c} spins on a lock"),
            Words::Idle => format!("CPU {c} is idle (the wakeup IPI is on its way)"),
            Words::Kernel => format!("CPU {c} is in the kernel (wakeup, schedule())"),
            Words::Resched => format!("CPU {c} must reschedule: waiting for its next preemption point"),
            Words::IdleCpu(k) => format!("CPU {k} was idle and allowed, but nothing moved it there"),
            Words::NoComparison => "no comparison against it was recorded".to_string(),
        }
    }
}

/// The current segment's key: cause, who ran, the words.
type Key = (WaitCause, Option<TaskId>, Words);

struct TaskSt {
    st: St,
    name: String,
    affinity: Option<CpuSet>,
    cpu: CpuId,
    focus: bool,
    /// The last comparison recorded against it: who went first, and why.
    reason: Option<(TaskId, Cause, Rc<str>)>,
    /// Its class holds it back (throttled), and until when, in words.
    throttled: Option<Rc<str>>,
    blocked: Option<(u64, Option<String>)>,
    placed: Option<String>,
    wake: Option<WakeInfo>,
    wake_since: u64,
    wait: Option<Wait>,
    key: Option<Key>,
    seg_start: u64,
    totals: Vec<u64>,
    waits: u64,
    worst: Vec<Wait>,
    /// Time it ran (switched in to switched out), and since when it runs.
    run_ns: u64,
    run_since: u64,
}

/// A probe that explains waits. `focus` decides, from a task's name, whether all its waits
/// are kept (the others keep only their totals and `worst` longest waits).
pub struct Explainer {
    cpus: Vec<CpuSt>,
    tasks: Vec<TaskSt>,
    focus: Box<dyn Fn(&str) -> bool>,
    worst: usize,
    nr_idle: usize,
    kept: Vec<Wait>,
}

impl Explainer {
    pub fn new(nr_cpus: usize, worst: usize, focus: Box<dyn Fn(&str) -> bool>) -> Explainer {
        let cpus = (0..nr_cpus)
            .map(|_| CpuSt { curr: None, mode: Mode::Idle, resched: false, waiters: Vec::new(), wakings: Vec::new() })
            .collect();
        Explainer { cpus, tasks: Vec::new(), focus, worst, nr_idle: nr_cpus, kept: Vec::new() }
    }

    fn idle(&self, c: CpuId) -> bool {
        self.cpus[c].curr.is_none() && self.cpus[c].mode == Mode::Idle
    }

    /// The cause of `w`'s waiting in the current state.
    fn classify(&self, w: TaskId) -> Key {
        let t = &self.tasks[w];
        let c = t.cpu;
        let cpu = &self.cpus[c];
        if let Some(why) = &t.throttled {
            return (WaitCause::Throttled, cpu.curr, Words::Reason(why.clone()));
        }
        if cpu.mode == Mode::Spin {
            return (WaitCause::LockSpin, cpu.curr, Words::Spin);
        }
        let Some(x) = cpu.curr else {
            let what = if cpu.mode == Mode::Idle { Words::Idle } else { Words::Kernel };
            return (WaitCause::WakeupPath, None, what);
        };
        if cpu.resched {
            return (WaitCause::PreemptionPoint, Some(x), Words::Resched);
        }
        if self.nr_idle > 0 {
            let aff = t.affinity.as_ref();
            if let Some(k) = (0..self.cpus.len()).find(|&k| k != c && self.idle(k) && aff.is_none_or(|a| a.contains(k)))
            {
                return (WaitCause::BalancerRefused, Some(x), Words::IdleCpu(k));
            }
        }
        match &t.reason {
            Some((by, cause, text)) if *by == x => (map_cause(*cause), Some(x), Words::Reason(text.clone())),
            _ => (WaitCause::Other, Some(x), Words::NoComparison),
        }
    }

    /// Re-derives `w`'s cause at `now`; a change closes the current segment.
    fn reseg(&mut self, w: TaskId, now: u64) {
        if self.tasks[w].st != St::Waiting {
            return;
        }
        let key = self.classify(w);
        let t = &mut self.tasks[w];
        if t.key.as_ref() == Some(&key) {
            return;
        }
        close_segment(t, now);
        t.key = Some(key);
        t.seg_start = now;
    }

    fn reseg_cpu(&mut self, c: CpuId, now: u64) {
        for i in 0..self.cpus[c].waiters.len() {
            let w = self.cpus[c].waiters[i];
            self.reseg(w, now);
        }
    }

    fn reseg_all(&mut self, now: u64) {
        for c in 0..self.cpus.len() {
            self.reseg_cpu(c, now);
        }
    }

    /// After a change on `c`: its waiters, and everyone if its idleness changed.
    fn changed(&mut self, c: CpuId, was_idle: bool, now: u64) {
        let is = self.idle(c);
        if is != was_idle {
            if is {
                self.nr_idle += 1;
            } else {
                self.nr_idle -= 1;
            }
            self.reseg_all(now);
        } else {
            self.reseg_cpu(c, now);
        }
    }

    fn start_wait(&mut self, w: TaskId, c: CpuId, now: u64, preempted: bool) {
        let t = &mut self.tasks[w];
        t.st = St::Waiting;
        t.cpu = c;
        t.key = None;
        t.seg_start = now;
        let wake = t.wake.take();
        t.wait = Some(Wait {
            task: w,
            start_ns: now,
            end_ns: now,
            preempted,
            wake,
            segments: Vec::new(),
            balance: Vec::new(),
            moved_by: Vec::new(),
        });
        self.cpus[c].waiters.push(w);
        self.reseg(w, now);
    }

    fn end_wait(&mut self, w: TaskId, now: u64) {
        let t = &mut self.tasks[w];
        if t.st != St::Waiting {
            return;
        }
        close_segment(t, now);
        t.key = None;
        let c = t.cpu;
        if let Some(mut wait) = t.wait.take() {
            wait.end_ns = now;
            t.waits += 1;
            if t.focus {
                self.kept.push(wait.clone());
            }
            keep_worst(&mut t.worst, wait, self.worst);
        }
        let v = &mut self.cpus[c].waiters;
        if let Some(i) = v.iter().position(|&x| x == w) {
            v.swap_remove(i);
        }
    }

    fn task_new(&mut self, task: TaskId) {
        while self.tasks.len() <= task {
            self.tasks.push(TaskSt {
                st: St::Blocked,
                name: String::new(),
                affinity: None,
                cpu: 0,
                focus: false,
                reason: None,
                throttled: None,
                blocked: None,
                placed: None,
                wake: None,
                wake_since: 0,
                wait: None,
                key: None,
                seg_start: 0,
                totals: vec![0; WaitCause::ALL.len()],
                waits: 0,
                worst: Vec::new(),
                run_ns: 0,
                run_since: 0,
            });
        }
    }

    /// Splits a waking task's time so far by what its waker's CPU was doing.
    fn wake_account(&mut self, w: TaskId, now: u64) {
        let t = &mut self.tasks[w];
        let Some(wk) = t.wake.as_mut() else { return };
        let d = now - t.wake_since;
        t.wake_since = now;
        match self.cpus[wk.waker_cpu].mode {
            Mode::Spin => wk.lock_spin_ns += d,
            Mode::Kernel if self.cpus[wk.waker_cpu].curr == wk.waker || wk.waker.is_none() => wk.wakeup_path_ns += d,
            _ => wk.ipi_ns += d,
        }
    }

    fn waking(&mut self, w: TaskId, waker_cpu: CpuId, now: u64) {
        let waker = self.cpus[waker_cpu].curr;
        let t = &mut self.tasks[w];
        let (blocked_ns, on) = t.blocked.take().map_or((None, None), |(b, on)| (Some(b), on));
        t.wake = Some(WakeInfo { blocked_ns, on, waking_ns: now, waker_cpu, waker, ..WakeInfo::default() });
        t.wake_since = now;
        t.st = St::Waking;
        self.cpus[waker_cpu].wakings.push(w);
    }

    fn wakeup(&mut self, w: TaskId, c: CpuId, now: u64) {
        if self.tasks[w].st == St::Waiting {
            return;
        }
        if let Some(wc) = self.tasks[w].wake.as_ref().map(|k| k.waker_cpu) {
            self.wake_account(w, now);
            self.cpus[wc].wakings.retain(|&x| x != w);
        }
        let t = &mut self.tasks[w];
        if let Some(k) = t.wake.as_mut() {
            k.placed = t.placed.take();
        }
        self.start_wait(w, c, now, false);
    }

    fn switch(&mut self, c: CpuId, prev: Option<TaskId>, prev_state: PrevState, next: Option<TaskId>, now: u64) {
        let was_idle = self.idle(c);
        if let Some(n) = next {
            self.end_wait(n, now);
            // Running, it is no longer held back (whatever class it is in now).
            self.tasks[n].throttled = None;
            self.tasks[n].st = St::Running;
            self.tasks[n].cpu = c;
            self.tasks[n].run_since = now;
        }
        self.cpus[c].curr = next;
        self.cpus[c].resched = false;
        if let Some(p) = prev {
            let t = &mut self.tasks[p];
            t.run_ns += now.saturating_sub(t.run_since);
            match prev_state {
                PrevState::Runnable => self.start_wait(p, c, now, true),
                PrevState::Blocked => {
                    let on = self.tasks[p].blocked.take().and_then(|b| b.1);
                    self.tasks[p].blocked = Some((now, on));
                    self.tasks[p].st = St::Blocked;
                }
                PrevState::Dead => self.tasks[p].st = St::Dead,
            }
        }
        self.changed(c, was_idle, now);
    }

    fn cpu_mode(&mut self, c: CpuId, mode: Mode, now: u64) {
        for i in 0..self.cpus[c].wakings.len() {
            let w = self.cpus[c].wakings[i];
            self.wake_account(w, now);
        }
        let was_idle = self.idle(c);
        self.cpus[c].mode = mode;
        self.changed(c, was_idle, now);
    }

    fn migrate(&mut self, w: TaskId, from: CpuId, to: CpuId, now: u64) {
        if self.tasks[w].st == St::Waiting {
            // The segment so far was on `from`: close it there, before the CPU changes.
            let t = &mut self.tasks[w];
            close_segment(t, now);
            t.key = None;
            t.seg_start = now;
        }
        self.tasks[w].cpu = to;
        if self.tasks[w].st == St::Waiting {
            let v = &mut self.cpus[from].waiters;
            if let Some(i) = v.iter().position(|&x| x == w) {
                v.swap_remove(i);
            }
            self.cpus[to].waiters.push(w);
            self.reseg(w, now);
        }
    }

    fn note(&mut self, w: TaskId, text: &str) {
        let Some(wait) = self.tasks[w].wait.as_mut() else { return };
        if wait.balance.iter().any(|b| b == text) {
            return;
        }
        if wait.balance.len() == MAX_NOTES {
            wait.balance.remove(0);
        }
        wait.balance.push(text.to_string());
    }

    fn decide(&mut self, d: &Decision, now: u64) {
        match d {
            Decision::Task { task, name, cpus } => {
                self.task_new(*task);
                let focus = (self.focus)(name);
                let t = &mut self.tasks[*task];
                t.name.clone_from(name);
                t.focus = focus;
                t.affinity = Some(cpus.clone());
                self.reseg(*task, now);
            }
            Decision::Pick { cpu, chosen, passed } => {
                // `schedule()` is picking: a pending reschedule is being served (the pick
                // may keep the same task, with no switch).
                self.cpus[*cpu].resched = false;
                for (w, why) in passed {
                    self.tasks[*w].reason = Some((*chosen, why.cause, Rc::from(why.text.as_str())));
                }
                self.reseg_cpu(*cpu, now);
            }
            Decision::Preempt { cpu, curr, woken, preempt, why } => {
                if *preempt {
                    self.cpus[*cpu].resched = true;
                } else {
                    self.tasks[*woken].reason = Some((*curr, why.cause, Rc::from(why.text.as_str())));
                }
                self.reseg_cpu(*cpu, now);
            }
            Decision::Tick { cpu, resched, .. } => {
                if *resched {
                    self.cpus[*cpu].resched = true;
                    self.reseg_cpu(*cpu, now);
                }
            }
            Decision::Place { task, prev, cpu, path, why } => {
                self.tasks[*task].placed = Some(format!("{path}: CPU {cpu} (previous CPU {prev}): {why}"));
            }
            Decision::Balance { src, found, moved, refused, .. } => {
                for (w, why) in refused {
                    self.note(*w, &format!("{found} — not moved: {why}"));
                }
                for &w in moved {
                    if let Some(wait) = self.tasks.get_mut(w).and_then(|t| t.wait.as_mut()) {
                        if wait.moved_by.len() < MAX_NOTES && !wait.moved_by.contains(found) {
                            wait.moved_by.push(found.clone());
                        }
                    }
                }
                if let Some(s) = *src {
                    let ws: Vec<TaskId> = self.cpus[s].waiters.iter().copied().filter(|w| !moved.contains(w)).collect();
                    for w in ws {
                        if !refused.iter().any(|(r, _)| *r == w) {
                            self.note(w, found);
                        }
                    }
                }
            }
            Decision::Throttle { task, throttled, why } => {
                self.task_new(*task);
                self.tasks[*task].throttled = throttled.then(|| Rc::from(why.as_str()));
                self.reseg(*task, now);
            }
            Decision::Sleep { task, on } => self.tasks[*task].blocked = Some((now, Some(on.clone()))),
        }
    }

    /// Closes the waits still open at the end and returns what was found.
    pub fn finish(mut self, summary: &RunSummary) -> Explained {
        let end = summary.end.0;
        for w in 0..self.tasks.len() {
            self.end_wait(w, end);
            let t = &mut self.tasks[w];
            if t.st == St::Running {
                t.run_ns += end.saturating_sub(t.run_since);
            }
        }
        let names: Vec<String> = summary.tasks.iter().map(|t| t.name.clone()).collect();
        let tasks = self
            .tasks
            .into_iter()
            .enumerate()
            .map(|(i, t)| TaskWaits {
                task: i,
                name: names.get(i).cloned().unwrap_or(t.name),
                wait_ns: t.totals.iter().sum(),
                by_cause: t.totals,
                waits: t.waits,
                worst: t.worst,
                run_ns: t.run_ns,
                costs: summary.costs.tasks.get(i).copied(),
            })
            .collect();
        Explained { tasks, waits: self.kept, names }
    }
}

fn map_cause(c: Cause) -> WaitCause {
    match c {
        Cause::Priority => WaitCause::Priority,
        Cause::FairShare => WaitCause::FairShare,
        Cause::NotEligible => WaitCause::NotEligible,
        Cause::NoPreempt => WaitCause::NoPreempt,
        Cause::Other => WaitCause::Other,
    }
}

/// Ends the current segment of `t` at `now`, merging it into the previous one when the
/// cause, CPU, runner and words are the same.
fn close_segment(t: &mut TaskSt, now: u64) {
    let Some((cause, ran, words)) = t.key.as_ref() else { return };
    let (cause, ran) = (*cause, *ran);
    let len = now - t.seg_start;
    if len == 0 {
        return;
    }
    t.totals[cause.index()] += len;
    let cpu = t.cpu;
    let Some(wait) = t.wait.as_mut() else { return };
    let why = words.render(cpu);
    if let Some(last) = wait.segments.last_mut() {
        if last.end_ns == t.seg_start && last.cause == cause && last.ran == ran && last.cpu == cpu && last.why == why {
            last.end_ns = now;
            return;
        }
    }
    wait.segments.push(Segment { start_ns: t.seg_start, end_ns: now, cpu, cause, ran, why });
}

fn keep_worst(worst: &mut Vec<Wait>, w: Wait, n: usize) {
    if n == 0 {
        return;
    }
    let pos = worst.iter().position(|x| x.len_ns() < w.len_ns()).unwrap_or(worst.len());
    if pos < n {
        worst.insert(pos, w);
        worst.truncate(n);
    }
}

impl Probe for Explainer {
    fn wants_decisions(&self) -> bool {
        true
    }

    fn decision(&mut self, time: Ns, d: &Decision) {
        self.decide(d, time.0);
    }

    fn event(&mut self, ev: &ProbeEvent) {
        match *ev {
            ProbeEvent::TaskNew { task, cpu, .. } => {
                self.task_new(task);
                self.tasks[task].cpu = cpu;
            }
            ProbeEvent::Switch { time, cpu, prev, prev_state, next } => {
                self.switch(cpu, prev, prev_state, next, time.0)
            }
            ProbeEvent::Waking { time, task, waker_cpu, .. } => self.waking(task, waker_cpu, time.0),
            ProbeEvent::Wakeup { time, task, cpu, .. } => self.wakeup(task, cpu, time.0),
            ProbeEvent::Migrate { time, task, from, to } => self.migrate(task, from, to, time.0),
            ProbeEvent::Exit { task, .. } => self.tasks[task].st = St::Dead,
            ProbeEvent::CpuMode { time, cpu, mode } => self.cpu_mode(cpu, mode, time.0),
            ProbeEvent::Span { .. } | ProbeEvent::PiSetprio { .. } | ProbeEvent::VipInherit { .. } => {}
        }
    }
}
