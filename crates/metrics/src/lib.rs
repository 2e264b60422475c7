//! Metrics: a [`Probe`] that aggregates a backend's events into per-task and per-CPU
//! figures, and the [`RunRecord`] that reports render.
//!
//! Architecture Invariant: metrics observe; they never change a result. A run with
//! `Metrics` attached has the same trace hash as one with `NoProbe`.

#![forbid(unsafe_code)]

pub mod explain;
mod hist;
mod record;
mod series;
mod spans;

pub use hist::LatencyHist;

pub use record::{
    json_schema, CpuRecord, FreqRecord, GroupRecord, HostInfo, KernelInfo, Latency, LockRecord, MachineInfo, Param,
    RealRunInfo, RunRecord, SchedulerInfo, TaskRecord, TopologyInfo, TracingInfo, WorkloadInfo, SCHEMA_VERSION,
};
pub use series::Series;
pub use spans::SpanRecord;

/// The scheduling events of a run, for timelines and trace exports.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    /// Every event except per-CPU mode changes, in order.
    pub events: Vec<ProbeEvent>,
    /// Task names by id.
    pub names: Vec<String>,
    pub nr_cpus: usize,
    pub end_ns: u64,
}

use schedlab_machine::KernelPath;
use schedlab_probe::{PrevState, Probe, ProbeEvent, RunSummary, SampleView};
use schedlab_sim::{Ns, TaskId};

#[derive(Clone, Copy, PartialEq, Eq)]
enum St {
    Running,
    Runnable,
    Blocked,
    Dead,
}

/// `Acc::waking` when no wakeup is pending (simulated time never reaches it).
const NOT_WAKING: Ns = Ns(u64::MAX);

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
    /// When the pending wakeup began; [`NOT_WAKING`] when none is (a sentinel rather than
    /// an `Option`, which would add 8 bytes to every task).
    waking: Ns,
    lat: LatencyHist,
}

/// Aggregates probe events; with [`Metrics::sampling`], also records a [`Series`].
#[derive(Default)]
pub struct Metrics {
    tasks: Vec<Acc>,
    every: Option<Ns>,
    series: Series,
    trace: Option<Vec<ProbeEvent>>,
    /// Per span name (`ProbeEvent::Span::span`).
    spans: Vec<spans::SpanAcc>,
}

impl Metrics {
    /// Metrics that also sample time series every `every` of simulated time.
    pub fn sampling(every: Ns) -> Metrics {
        let every = Ns(every.0.max(1));
        Metrics {
            every: Some(every),
            series: Series { interval_ns: every.0, ..Series::default() },
            ..Metrics::default()
        }
    }

    /// Also keep every scheduling event (for `--trace` and `--timeline`).
    pub fn with_trace(mut self) -> Metrics {
        self.trace = Some(Vec::new());
        self
    }

    /// The recorded events (`None` unless [`Metrics::with_trace`]).
    pub fn take_trace(&mut self, summary: &RunSummary) -> Option<Trace> {
        let events = self.trace.take()?;
        Some(Trace {
            events,
            names: summary.tasks.iter().map(|t| t.name.clone()).collect(),
            nr_cpus: summary.cpu_times.len(),
            end_ns: summary.end.0,
        })
    }

    /// The recorded series (`None` unless sampling).
    pub fn take_series(&mut self) -> Option<Series> {
        self.every.map(|_| std::mem::take(&mut self.series))
    }

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
    /// Wakeup latencies of all tasks together as a CDF: `(latency_ns, fraction ≤ it)` at
    /// 100 quantiles.
    pub fn latency_cdf(&self) -> Vec<(u64, f64)> {
        let mut all = hist::DenseHist::default();
        for a in &self.tasks {
            a.lat.add_into(&mut all);
        }
        if all.is_empty() {
            return Vec::new();
        }
        (1..=100u64).map(|q| (all.quantile(q, 100), q as f64 / 100.0)).collect()
    }

    /// The named spans' records: every name of `names` (the workload's, in its order),
    /// over a run that ended at `end`.
    pub fn spans(&self, names: &[String], end: Ns) -> Vec<SpanRecord> {
        spans::records(&self.spans, names, end)
    }

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
                let q = |num| a.lat.quantile(num, 100);
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
                    wakeup_latency_ns: Latency { p50: q(50), p90: q(90), p99: q(99), max: a.lat.max() },
                    exit_ns: summary.exit_times[tid].map(|t| t.0),
                    costs: summary.costs.tasks.get(tid).copied(),
                    energy_nj: summary.costs.task_energy.get(tid).copied(),
                    core_forceidle_sum_ns: summary.core_forceidle.get(tid).copied(),
                }
            })
            .collect();
        let cpus = summary
            .cpu_times
            .iter()
            .enumerate()
            .map(|(cpu, t)| CpuRecord {
                cpu,
                user_ns: t[0].0,
                kernel_ns: t[1].0,
                spin_ns: t[2].0,
                idle_ns: t[3].0,
                other_ns: 0,
                kernel_paths: summary.cpu_paths.get(cpu).map_or_else(Vec::new, |p| {
                    KernelPath::ALL.iter().map(|k| (k.name().to_string(), p[k.index()].0)).collect()
                }),
                kernel_path_lines: summary.costs.path_lines.get(cpu).map_or_else(Vec::new, |p| {
                    KernelPath::ALL
                        .iter()
                        .filter(|k| p[k.index()] > 0)
                        .map(|k| (k.name().to_string(), p[k.index()]))
                        .collect()
                }),
                costs: summary.costs.cpus.get(cpu).copied(),
                idle_states: summary.costs.idle.get(cpu).cloned().unwrap_or_default(),
                freq: summary.costs.freq.get(cpu).map(|f| FreqRecord {
                    mean_khz: f.mean_khz(),
                    time_in_state: f.time_in_state.clone(),
                    transitions: f.transitions,
                }),
                energy: summary.costs.energy.get(cpu).copied(),
            })
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
                line_transfers: st.line_transfers,
                line_ns: st.line_ns,
            })
            .collect();
        (tasks, cpus, locks)
    }
}

impl Probe for Metrics {
    fn sample_every(&self) -> Option<Ns> {
        self.every
    }

    /// Neither the accumulators nor the trace (which leaves them out) read mode changes.
    fn wants_cpu_modes(&self) -> bool {
        false
    }

    fn reserve_tasks(&mut self, n: usize) {
        self.tasks.reserve_exact(n.saturating_sub(self.tasks.len()));
    }

    fn sample(&mut self, k: &SampleView) {
        let s = &mut self.series;
        let i = s.times_ns.len();
        s.times_ns.push(k.now.0);
        s.rq_lock_acquisitions.push(k.rq_lock_acquisitions);
        s.rq_lock_contended.push(k.rq_lock_contended);
        if s.cpu_runnable.len() < k.cpus.len() {
            s.cpu_runnable.resize(k.cpus.len(), Vec::new());
            s.cpu_busy.resize(k.cpus.len(), Vec::new());
        }
        for (c, v) in k.cpus.iter().enumerate() {
            s.cpu_runnable[c].push(v.nr_running as u32);
            s.cpu_busy[c].push(u8::from(v.curr.is_some()));
        }
        for (t, a) in self.tasks.iter().enumerate() {
            if s.first.len() <= t {
                s.first.push(i);
                s.runtime_ns.push(Vec::new());
                s.stats.push(Vec::new());
            }
            if a.state == St::Dead {
                continue;
            }
            let running = if a.state == St::Running { (k.now - a.since).0 } else { 0 };
            s.runtime_ns[t].push(a.runtime + running);
            let stats = k.task_stats.map_or_else(Vec::new, |f| f(t));
            for st in &stats {
                let j = match s.stat_names.iter().position(|n| n == st.name) {
                    Some(j) => j,
                    None => {
                        s.stat_names.push(st.name.to_string());
                        s.stat_units.push(st.unit.label().to_string());
                        s.stat_captions.push(st.caption.to_string());
                        s.stat_names.len() - 1
                    }
                };
                let v = &mut s.stats[t];
                if v.len() <= j {
                    v.resize(j + 1, Vec::new());
                }
                v[j].push(st.value);
            }
        }
    }

    fn event(&mut self, ev: &ProbeEvent) {
        if let Some(t) = &mut self.trace {
            if !matches!(ev, ProbeEvent::CpuMode { .. } | ProbeEvent::Span { .. }) {
                t.push(ev.clone());
            }
        }
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
                    waking: NOT_WAKING,
                    // Sparse log buckets (≤ 1/32 relative error): a few hundred bytes per
                    // task, so hundreds of thousands of tasks fit in memory.
                    lat: LatencyHist::default(),
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
                    let w = std::mem::replace(&mut a.waking, NOT_WAKING);
                    if w != NOT_WAKING {
                        a.lat.record((time - w).0.max(1));
                    }
                }
            }
            ProbeEvent::Waking { time, task, .. } => {
                self.tasks[task].waking = time;
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
            ProbeEvent::Span { time, span, start, .. } => {
                if self.spans.len() <= span {
                    self.spans.resize_with(span + 1, Default::default);
                }
                self.spans[span].record((time - start).0);
            }
            ProbeEvent::Exit { .. }
            | ProbeEvent::CpuMode { .. }
            | ProbeEvent::PiSetprio { .. }
            | ProbeEvent::VipInherit { .. } => {}
        }
    }
}
