//! Metrics: a [`Probe`] that aggregates kernel events into per-task and per-CPU figures,
//! and the [`RunRecord`] that reports render.
//!
//! Architecture Invariant: metrics observe; they never change a result. A run with
//! `Metrics` attached has the same trace hash as one with `NoProbe`.

use hdrhistogram::Histogram;
use schedlab_kernel::{PrevState, Probe, ProbeEvent, RunSummary};
use schedlab_sim::{Ns, TaskId};
use serde::Serialize;

#[derive(Clone, Copy, PartialEq, Eq)]
enum St {
    Running,
    Runnable,
    Blocked,
    Dead,
}

struct Acc {
    state: St,
    since: Ns,
    start: Ns,
    runtime: u64,
    wait: u64,
    sleep: u64,
    vol: u64,
    invol: u64,
    migrations: u64,
    wakeups: u64,
    waking: Option<Ns>,
    lat: Histogram<u64>,
}

/// Aggregates probe events.
#[derive(Default)]
pub struct Metrics {
    tasks: Vec<Acc>,
}

impl Metrics {
    fn move_to(&mut self, t: TaskId, now: Ns, st: St) {
        let a = &mut self.tasks[t];
        let d = (now - a.since).0;
        match a.state {
            St::Running => a.runtime += d,
            St::Runnable => a.wait += d,
            St::Blocked => a.sleep += d,
            St::Dead => {}
        }
        a.state = st;
        a.since = now;
    }

    /// Closes open intervals at `end` and combines with the kernel's summary.
    pub fn finish(mut self, summary: &RunSummary) -> (Vec<TaskRecord>, Vec<CpuRecord>, Vec<LockRecord>) {
        let end = summary.end;
        for t in 0..self.tasks.len() {
            let st = self.tasks[t].state;
            self.move_to(t, end, st);
        }
        let tasks = self
            .tasks
            .iter()
            .enumerate()
            .map(|(tid, a)| {
                let q = |p: f64| if a.lat.is_empty() { 0 } else { a.lat.value_at_quantile(p) };
                TaskRecord {
                    name: summary.tasks[tid].name.clone(),
                    tid,
                    nice: summary.tasks[tid].nice,
                    start_ns: a.start.0,
                    runtime_ns: a.runtime,
                    wait_ns: a.wait,
                    sleep_ns: a.sleep,
                    switches_voluntary: a.vol,
                    switches_involuntary: a.invol,
                    migrations: a.migrations,
                    wakeups: a.wakeups,
                    wakeup_latency_ns: Latency { p50: q(0.5), p90: q(0.9), p99: q(0.99), max: a.lat.max() },
                    exit_ns: summary.exit_times[tid].map(|t| t.0),
                }
            })
            .collect();
        let cpus = summary
            .cpu_times
            .iter()
            .enumerate()
            .map(|(cpu, t)| CpuRecord { cpu, user_ns: t[0].0, kernel_ns: t[1].0, spin_ns: t[2].0, idle_ns: t[3].0 })
            .collect();
        let locks = summary
            .locks
            .iter()
            .map(|(l, s, st)| LockRecord {
                lock: l.to_string(),
                site: s.name().to_string(),
                acquisitions: st.acquisitions,
                contended: st.contended,
                spin_ns: st.spin_ns,
            })
            .collect();
        (tasks, cpus, locks)
    }
}

impl Probe for Metrics {
    fn event(&mut self, ev: &ProbeEvent) {
        match *ev {
            ProbeEvent::TaskNew { time, task, .. } => {
                debug_assert_eq!(task, self.tasks.len());
                self.tasks.push(Acc {
                    state: St::Blocked,
                    since: time,
                    start: time,
                    runtime: 0,
                    wait: 0,
                    sleep: 0,
                    vol: 0,
                    invol: 0,
                    migrations: 0,
                    wakeups: 0,
                    waking: None,
                    lat: Histogram::new(3).expect("3 significant digits is valid"),
                });
            }
            ProbeEvent::Switch { time, prev, prev_state, next, .. } => {
                if let Some(p) = prev {
                    let (st, vol) = match prev_state {
                        PrevState::Runnable => (St::Runnable, false),
                        PrevState::Blocked => (St::Blocked, true),
                        PrevState::Dead => (St::Dead, true),
                    };
                    self.move_to(p, time, st);
                    if vol {
                        self.tasks[p].vol += 1;
                    } else {
                        self.tasks[p].invol += 1;
                    }
                }
                if let Some(n) = next {
                    self.move_to(n, time, St::Running);
                    let a = &mut self.tasks[n];
                    if let Some(w) = a.waking.take() {
                        let _ = a.lat.record((time - w).0.max(1));
                    }
                }
            }
            ProbeEvent::Waking { time, task, .. } => {
                self.tasks[task].waking = Some(time);
            }
            ProbeEvent::Wakeup { time, task, new, .. } => {
                if new {
                    self.tasks[task].start = time;
                } else {
                    self.tasks[task].wakeups += 1;
                }
                self.move_to(task, time, St::Runnable);
            }
            ProbeEvent::Migrate { task, .. } => self.tasks[task].migrations += 1,
            ProbeEvent::Exit { .. } | ProbeEvent::CpuMode { .. } => {}
        }
    }
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Latency {
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TaskRecord {
    pub name: String,
    pub tid: usize,
    pub nice: i32,
    pub start_ns: u64,
    pub runtime_ns: u64,
    pub wait_ns: u64,
    pub sleep_ns: u64,
    pub switches_voluntary: u64,
    pub switches_involuntary: u64,
    pub migrations: u64,
    pub wakeups: u64,
    /// From `sched_waking` to the task running (includes IPI and lock delays).
    pub wakeup_latency_ns: Latency,
    pub exit_ns: Option<u64>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CpuRecord {
    pub cpu: usize,
    pub user_ns: u64,
    pub kernel_ns: u64,
    pub spin_ns: u64,
    pub idle_ns: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LockRecord {
    pub lock: String,
    pub site: String,
    pub acquisitions: u64,
    pub contended: u64,
    pub spin_ns: u64,
}

/// Everything one run produced, in the shape of the JSON output (schema 1).
#[derive(Clone, Debug, Serialize)]
pub struct RunRecord {
    pub schema_version: u32,
    pub schedlab_version: String,
    pub workload: serde_json::Value,
    pub scheduler: serde_json::Value,
    pub machine: serde_json::Value,
    pub kernel: serde_json::Value,
    pub seed: u64,
    pub sim_ns: u64,
    pub end_reason: String,
    pub events: u64,
    pub trace_hash: String,
    pub tasks: Vec<TaskRecord>,
    pub cpus: Vec<CpuRecord>,
    pub locks: Vec<LockRecord>,
    /// The only part allowed to differ between two identical runs.
    pub host: serde_json::Value,
}

pub const SCHEMA_VERSION: u32 = 1;
