//! What the page's timeline draws: who ran on each CPU when (from `sched_switch`), and when
//! each task waited runnable (from `sched_wakeup` or a preemption to the switch that ran
//! it: the waits `schedlab explain` explains). A probe beside the record's metrics, so the
//! run and its trace hash are unchanged; bounded, so a long run cannot exhaust the tab.

use schedlab_probe::{PrevState, Probe, ProbeEvent};
use schedlab_sim::{Ns, TaskId};
use serde::Serialize;

/// Slices and waits kept per run (each list): far more than a screen shows, few enough
/// (about 10 MB of JSON) for a tab.
pub const MAX_ITEMS: usize = 200_000;

/// The timeline of one run.
#[derive(Debug, Default, Serialize)]
pub struct Timeline {
    pub nr_cpus: usize,
    /// `[cpu, start_ns, end_ns, task]`: the task ran on the CPU.
    pub slices: Vec<[u64; 4]>,
    /// `[task, start_ns, end_ns]`: the task was runnable and not running.
    pub waits: Vec<[u64; 3]>,
    /// Some slices or waits were left out ([`MAX_ITEMS`]).
    pub truncated: bool,
    #[serde(skip)]
    running: Vec<Option<(TaskId, Ns)>>,
    #[serde(skip)]
    queued: Vec<Option<Ns>>,
}

impl Timeline {
    pub fn new(nr_cpus: usize) -> Timeline {
        Timeline { nr_cpus, running: vec![None; nr_cpus], ..Timeline::default() }
    }

    /// Closes what is still open at the end of the run (`end`).
    pub fn finish(&mut self, end: Ns) {
        for cpu in 0..self.running.len() {
            if let Some((task, since)) = self.running[cpu].take() {
                self.slice(cpu, task, since, end);
            }
        }
        for task in 0..self.queued.len() {
            if let Some(since) = self.queued[task].take() {
                self.wait(task, since, end);
            }
        }
    }

    fn slice(&mut self, cpu: usize, task: TaskId, from: Ns, to: Ns) {
        if self.slices.len() >= MAX_ITEMS {
            self.truncated = true;
        } else if to > from {
            self.slices.push([cpu as u64, from.0, to.0, task as u64]);
        }
    }

    fn wait(&mut self, task: TaskId, from: Ns, to: Ns) {
        if self.waits.len() >= MAX_ITEMS {
            self.truncated = true;
        } else if to > from {
            self.waits.push([task as u64, from.0, to.0]);
        }
    }

    fn queue(&mut self, task: TaskId, at: Ns) {
        if self.queued.len() <= task {
            self.queued.resize(task + 1, None);
        }
        self.queued[task].get_or_insert(at);
    }

    fn switch(&mut self, time: Ns, cpu: usize, prev: Option<TaskId>, state: PrevState, next: Option<TaskId>) {
        if cpu >= self.running.len() {
            self.running.resize(cpu + 1, None);
        }
        if let Some((task, since)) = self.running[cpu].take() {
            self.slice(cpu, task, since, time);
        }
        if let (Some(p), PrevState::Runnable) = (prev, state) {
            self.queue(p, time);
        }
        if let Some(n) = next {
            if let Some(since) = self.queued.get_mut(n).and_then(Option::take) {
                self.wait(n, since, time);
            }
            self.running[cpu] = Some((n, time));
        }
    }
}

impl Probe for Timeline {
    fn event(&mut self, ev: &ProbeEvent) {
        match *ev {
            ProbeEvent::Switch { time, cpu, prev, prev_state, next } => self.switch(time, cpu, prev, prev_state, next),
            ProbeEvent::Wakeup { time, task, .. } => self.queue(task, time),
            ProbeEvent::Exit { task, .. } => {
                if let Some(q) = self.queued.get_mut(task) {
                    *q = None;
                }
            }
            _ => {}
        }
    }

    fn wants_cpu_modes(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A wakeup, a run, a preemption and a second run make one slice per run and one wait
    /// per stretch between being runnable and running.
    #[test]
    fn slices_and_waits_follow_the_switches() {
        let mut t = Timeline::new(1);
        let sw =
            |time: u64, prev, prev_state, next| ProbeEvent::Switch { time: Ns(time), cpu: 0, prev, prev_state, next };
        t.event(&ProbeEvent::Wakeup { time: Ns(10), task: 0, cpu: 0, new: true });
        t.event(&sw(15, None, PrevState::Runnable, Some(0)));
        t.event(&ProbeEvent::Wakeup { time: Ns(20), task: 1, cpu: 0, new: true });
        t.event(&sw(30, Some(0), PrevState::Runnable, Some(1)));
        t.event(&sw(50, Some(1), PrevState::Blocked, Some(0)));
        t.finish(Ns(60));
        assert_eq!(t.slices, vec![[0, 15, 30, 0], [0, 30, 50, 1], [0, 50, 60, 0]]);
        assert_eq!(t.waits, vec![[0, 10, 15], [1, 20, 30], [0, 30, 50]]);
        assert!(!t.truncated);
    }
}
