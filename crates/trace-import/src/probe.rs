//! The trace as `ProbeEvent`s, so the trace's own metrics ("as it happened") come from the
//! same `Metrics` probe as a simulation's. Task ids are the [`Model`]'s thread indexes.

use crate::event::{Kind, PrevState, Trace};
use crate::model::Model;
use schedlab_probe::ProbeEvent;
use schedlab_sim::Ns;
use std::collections::BTreeMap;

/// What the trace shows, in the simulator's vocabulary.
#[derive(Clone, Debug, Default)]
pub struct Observed {
    pub events: Vec<ProbeEvent>,
    pub end: Ns,
    pub nr_cpus: usize,
    /// Per CPU: time running kept threads, other threads, and idle (ns).
    pub cpu_time: Vec<[u64; 3]>,
    pub exit_times: Vec<Option<Ns>>,
    /// Stopped by [`observe_with`]'s `keep_going` at `end`: the events before it.
    pub interrupted: bool,
}

#[derive(Clone, Copy, Default, PartialEq)]
enum Seen {
    #[default]
    Other,
    Blocked,
    Waking,
    Dead,
}

struct Conv<'a> {
    idx: BTreeMap<i32, usize>,
    /// Tasks announced (`TaskNew`) so far: ids are announced in order.
    announced: usize,
    seen: Vec<Seen>,
    /// Running, as far as the events emitted so far tell.
    on: Vec<bool>,
    out: Vec<ProbeEvent>,
    m: &'a Model,
}

impl Conv<'_> {
    fn task(&self, pid: i32) -> Option<usize> {
        self.idx.get(&pid).copied().filter(|&i| i < self.announced)
    }

    /// Announces tasks up to `upto` (inclusive) at `time`.
    fn announce(&mut self, upto: usize, time: Ns, cpu: usize) {
        while self.announced <= upto && self.announced < self.m.threads.len() {
            let t = self.announced;
            let parent = self.m.threads[t].parent;
            self.out.push(ProbeEvent::TaskNew { time, task: t, parent, cpu });
            self.announced += 1;
        }
    }
}

/// A wakeup event of a kept task, with the CPU it is queued on clamped to the trace's.
struct Woken {
    time: Ns,
    task: usize,
    target: usize,
    waker_cpu: usize,
    irq: bool,
    waking: bool,
    new: bool,
}

impl Conv<'_> {
    /// Who ran on each CPU when the trace began (the first switch's `prev`): switched in
    /// at time 0.
    fn first_running(&mut self, trace: &Trace, cur: &mut [Option<i32>]) {
        for e in &trace.events {
            let Kind::Switch { prev, .. } = e.kind else { continue };
            let cpu = e.cpu as usize;
            if cur[cpu].is_some() {
                continue;
            }
            cur[cpu] = Some(prev);
            if let Some(t) = self.task(prev) {
                self.on[t] = true;
                let next = Some(t);
                self.out.push(ProbeEvent::Switch {
                    time: Ns(0),
                    cpu,
                    prev: None,
                    prev_state: PrevState::Runnable,
                    next,
                });
            }
        }
    }

    /// `sched_waking` starts a blocked task's wakeup, `sched_wakeup` ends it (queued);
    /// `has_wakeup`: the trace has `sched_wakeup` (`perf sched record` takes only
    /// `sched_waking`, so the task is queued at its waking).
    fn wake(&mut self, w: Woken, has_wakeup: bool) {
        let Woken { time, task: t, target, waker_cpu, irq, waking, new } = w;
        if new {
            self.out.push(ProbeEvent::Wakeup { time, task: t, cpu: target, new: true });
        } else if waking && self.seen[t] == Seen::Blocked {
            self.out.push(ProbeEvent::Waking { time, task: t, waker_cpu, irq });
            self.seen[t] = Seen::Waking;
            if !has_wakeup {
                self.out.push(ProbeEvent::Wakeup { time, task: t, cpu: target, new: false });
                self.seen[t] = Seen::Other;
            }
        } else if !waking && matches!(self.seen[t], Seen::Blocked | Seen::Waking) {
            self.out.push(ProbeEvent::Wakeup { time, task: t, cpu: target, new: false });
            self.seen[t] = Seen::Other;
        }
    }
}

/// Converts the trace's events; `m` must be [`crate::model::build`]'s model of `trace`.
pub fn observe(trace: &Trace, m: &Model) -> Observed {
    observe_with(trace, m, &|| true)
}

/// [`observe`], ended early (what was observed up to then, [`Observed::interrupted`]) once
/// `keep_going` says so.
pub fn observe_with(trace: &Trace, m: &Model, keep_going: crate::KeepGoing) -> Observed {
    let mut poll = crate::Poll::new(keep_going);
    let mut stopped_at = None;
    let idx: BTreeMap<i32, usize> = m.threads.iter().enumerate().map(|(i, t)| (t.tid, i)).collect();
    let first_born = m.threads.iter().position(|t| t.parent.is_some()).unwrap_or(m.threads.len());
    let n = m.threads.len();
    let mut c = Conv { idx, announced: 0, seen: vec![Seen::Other; n], on: vec![false; n], out: Vec::new(), m };
    c.announce(first_born.saturating_sub(1), Ns(0), 0);
    let nr = trace.nr_cpus as usize;
    let mut cur: Vec<Option<i32>> = vec![None; nr];
    let mut since = vec![0u64; nr];
    let mut cpu_time = vec![[0u64; 3]; nr];
    let mut exit_times = vec![None; n];
    let has_wakeup = trace.events.iter().any(|e| matches!(e.kind, Kind::Wake { waking: false, new: false, .. }));
    c.first_running(trace, &mut cur);
    for e in &trace.events {
        let time = Ns(e.time - m.t0);
        if poll.stop() {
            stopped_at = Some(time.0);
            break;
        }
        let cpu = e.cpu as usize;
        if let Some(t) = c.task(e.current).filter(|&t| !c.on[t] && c.seen[t] != Seen::Dead) {
            // Running without a recorded switch-in (see `model`): it is switched in now.
            c.on[t] = true;
            c.seen[t] = Seen::Other;
            let sw = ProbeEvent::Switch { time, cpu, prev: None, prev_state: PrevState::Runnable, next: Some(t) };
            c.out.push(sw);
        }
        match e.kind {
            Kind::Switch { prev, prev_state, next, .. } => {
                let bucket = match c.task(prev) {
                    _ if prev == 0 => 2,
                    Some(_) => 0,
                    None => 1,
                };
                cpu_time[cpu][bucket] += time.0 - since[cpu];
                since[cpu] = time.0;
                cur[cpu] = Some(next);
                let (p, nx) = (c.task(prev), c.task(next));
                if let Some(p) = p {
                    c.on[p] = false;
                    match prev_state {
                        PrevState::Blocked => c.seen[p] = Seen::Blocked,
                        PrevState::Dead => {
                            exit_times[p] = Some(time);
                            c.seen[p] = Seen::Dead;
                        }
                        PrevState::Runnable => {}
                    }
                }
                if let Some(n) = nx {
                    c.on[n] = true;
                }
                if p.is_some() || nx.is_some() {
                    c.out.push(ProbeEvent::Switch { time, cpu, prev: p, prev_state, next: nx });
                }
            }
            Kind::Wake { pid, target_cpu, waking, new, .. } => {
                let Some(t) = c.task(pid) else { continue };
                let target = (target_cpu as usize).min(nr.saturating_sub(1));
                c.wake(Woken { time, task: t, target, waker_cpu: cpu, irq: e.irq, waking, new }, has_wakeup);
            }
            Kind::Migrate { pid, from, to } => {
                if let Some(t) = c.task(pid) {
                    c.out.push(ProbeEvent::Migrate { time, task: t, from: from as usize, to: to as usize });
                }
            }
            Kind::Fork { child, .. } => {
                if let Some(&i) = c.idx.get(&child) {
                    if i >= first_born {
                        c.announce(i, time, cpu);
                    }
                }
            }
            Kind::Exit { pid } => {
                if let Some(t) = c.task(pid) {
                    c.out.push(ProbeEvent::Exit { time, task: t });
                }
            }
        }
    }
    let end = stopped_at.unwrap_or(m.end);
    for cpu in 0..nr {
        let bucket = match cur[cpu] {
            Some(p) if p != 0 => usize::from(c.task(p).is_none()),
            _ => 2,
        };
        cpu_time[cpu][bucket] += end.saturating_sub(since[cpu]);
    }
    c.announce(n.saturating_sub(1), Ns(end), 0);
    Observed { events: c.out, end: Ns(end), nr_cpus: nr, cpu_time, exit_times, interrupted: stopped_at.is_some() }
}
