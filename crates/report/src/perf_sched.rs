//! `perf sched`-style views of a run's recorded events (`schedlab timehist`, `schedlab
//! latency`), with perf's column meanings (`tools/perf/builtin-sched.c`, v6.12):
//!
//! * **timehist**, one line per context switch, for the task switched *out*: when, on which
//!   CPU, its *wait time* (from its previous sched-out to this sched-in: sleeping and
//!   waiting; for its first run, from its creation), its *scheduling delay* (from becoming ready — its wakeup, or its preemption
//!   — to this sched-in) and its *run time* (this sched-in to the switch). The idle task
//!   shows as `<idle>` with its idle time as run time.
//! * **latency**, one row per task: run time, switches (sched-ins), average and maximum
//!   scheduling delay and when the maximum began and ended; sorted like perf's default
//!   (`avg, max, switch, runtime`, descending), then by name.

use schedlab_metrics::Trace;
use schedlab_probe::{PrevState, ProbeEvent};
use std::fmt::Write;

/// What is known of a task between events.
#[derive(Clone, Copy, Default)]
struct TaskState {
    /// Last sched-out, and when it became ready to run (wakeup or preemption).
    out_at: Option<u64>,
    ready_at: Option<u64>,
    /// Current run: sched-in time, and the wait and delay that preceded it.
    in_at: Option<u64>,
    wait: u64,
    delay: u64,
}

/// One timehist line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchLine {
    pub time: u64,
    pub cpu: usize,
    /// `None`: the idle task.
    pub task: Option<usize>,
    pub wait: u64,
    pub delay: u64,
    pub run: u64,
}

/// Per-task latency totals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskLatency {
    pub task: usize,
    pub runtime: u64,
    pub switches: u64,
    pub delay_sum: u64,
    pub max_delay: u64,
    /// When the maximum delay began (the task became ready) and ended (it ran).
    pub max_from: u64,
    pub max_to: u64,
    /// Ready but not running at the end of the trace, since then (a delay not yet counted).
    pub ready_at_end: Option<u64>,
}

impl TaskLatency {
    pub fn avg_delay(&self) -> u64 {
        self.delay_sum / self.switches.max(1)
    }
}

/// Walks the switches: every timehist line, and the per-task totals.
pub fn analyse(trace: &Trace) -> (Vec<SwitchLine>, Vec<TaskLatency>) {
    let n = trace.names.len();
    let mut st = vec![TaskState::default(); n];
    let mut lat: Vec<TaskLatency> = (0..n).map(|task| TaskLatency { task, ..Default::default() }).collect();
    let mut idle_since = vec![0u64; trace.nr_cpus];
    let mut lines = Vec::new();
    for e in &trace.events {
        match *e {
            ProbeEvent::Wakeup { time, task, .. } if task < n => {
                st[task].ready_at.get_or_insert(time.0);
            }
            ProbeEvent::Switch { time, cpu, prev, prev_state, next } => {
                let t = time.0;
                lines.push(switch_out(&mut st, &mut lat, &mut idle_since, t, cpu, prev, prev_state));
                match next {
                    Some(p) if p < n => switch_in(&mut st[p], &mut lat[p], t),
                    Some(_) => {}
                    None => idle_since[cpu] = t,
                }
            }
            _ => {}
        }
    }
    // Runs still going at the end count their run time so far, as perf's summary does.
    for (p, s) in st.iter().enumerate() {
        if let Some(i) = s.in_at {
            lat[p].runtime += trace.end_ns.saturating_sub(i);
        }
        lat[p].ready_at_end = s.ready_at;
    }
    (lines, lat)
}

fn switch_in(s: &mut TaskState, l: &mut TaskLatency, t: u64) {
    let ready = s.ready_at.take();
    s.delay = ready.map_or(0, |r| t.saturating_sub(r));
    // A first run has no sched-out before it: its wait is its delay.
    s.wait = s.out_at.map_or(s.delay, |o| t.saturating_sub(o));
    s.in_at = Some(t);
    l.switches += 1;
    l.delay_sum += s.delay;
    if let Some(r) = ready {
        if s.delay > l.max_delay || l.max_to == 0 {
            l.max_delay = s.delay;
            l.max_from = r;
            l.max_to = t;
        }
    }
}

fn switch_out(
    st: &mut [TaskState],
    lat: &mut [TaskLatency],
    idle_since: &mut [u64],
    t: u64,
    cpu: usize,
    prev: Option<usize>,
    prev_state: PrevState,
) -> SwitchLine {
    let Some(p) = prev.filter(|&p| p < st.len()) else {
        let run = t.saturating_sub(idle_since[cpu]);
        return SwitchLine { time: t, cpu, task: None, wait: 0, delay: 0, run };
    };
    let s = &mut st[p];
    let run = s.in_at.take().map_or(0, |i| t.saturating_sub(i));
    lat[p].runtime += run;
    s.out_at = Some(t);
    // Preempted: ready from now (perf marks `ready_to_run` at a sched-out in TASK_RUNNING).
    s.ready_at = (prev_state == PrevState::Runnable).then_some(t);
    SwitchLine { time: t, cpu, task: Some(p), wait: s.wait, delay: s.delay, run }
}

fn name(trace: &Trace, task: Option<usize>) -> String {
    match task {
        Some(p) => format!("{}[{p}]", crate::escape(trace.names.get(p).map_or("?", String::as_str))),
        None => "<idle>".into(),
    }
}

/// ms with 3 decimals, from ns (perf prints msec to the µs).
fn ms(ns: u64) -> String {
    format!("{}.{:03}", ns / 1_000_000, ns % 1_000_000 / 1000)
}

/// s with 6 decimals, from ns.
fn secs(ns: u64) -> String {
    format!("{}.{:06}", ns / 1_000_000_000, ns % 1_000_000_000 / 1000)
}

/// `perf sched timehist`: one line per switch in `[from, to)`.
pub fn timehist(trace: &Trace, from: u64, to: u64) -> String {
    let (lines, _) = analyse(trace);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:>15}  {:>6}  {:<30}  {:>9}  {:>9}  {:>9}",
        "time", "cpu", "task name", "wait time", "sch delay", "run time"
    );
    let _ = writeln!(s, "{:>15}  {:>6}  {:<30}  {:>9}  {:>9}  {:>9}", "", "", "[tid]", "(msec)", "(msec)", "(msec)");
    let _ = writeln!(s, "{:-<15}  {:-<6}  {:-<30}  {:-<9}  {:-<9}  {:-<9}", "", "", "", "", "", "");
    for l in lines.iter().filter(|l| (from..to).contains(&l.time)) {
        let _ = writeln!(
            s,
            "{:>15}  [{:04}]  {:<30}  {:>9}  {:>9}  {:>9}",
            secs(l.time),
            l.cpu,
            name(trace, l.task),
            ms(l.wait),
            ms(l.delay),
            ms(l.run)
        );
    }
    s
}

/// `perf sched latency`: per task, sorted by average delay, maximum, switches, run time
/// (descending), then name. Tasks that never ran are left out, as perf does.
pub fn latency(trace: &Trace) -> String {
    let (_, mut lat) = analyse(trace);
    lat.retain(|l| l.switches > 0);
    lat.sort_by(|a, b| {
        (b.avg_delay(), b.max_delay, b.switches, b.runtime)
            .cmp(&(a.avg_delay(), a.max_delay, a.switches, a.runtime))
            .then_with(|| trace.names[a.task].cmp(&trace.names[b.task]))
    });
    let rule = format!(" {:-<134}\n", "");
    let mut s = rule.clone();
    let _ = writeln!(
        s,
        "  {:<22} | {:>13} | {:>8} | {:>17} | {:>17} | {:<25} | Max delay end",
        "Task", "Runtime ms", "Switches", "Avg delay ms", "Max delay ms", "Max delay start"
    );
    s += &rule;
    let (mut rt, mut sw) = (0, 0);
    for l in &lat {
        rt += l.runtime;
        sw += l.switches;
        let _ = writeln!(
            s,
            "  {:<22} | {:>10} ms | {:>8} | avg: {:>9} ms | max: {:>9} ms | max start: {:>12} s | max end: {:>12} s",
            name(trace, Some(l.task)),
            ms(l.runtime),
            l.switches,
            ms(l.avg_delay()),
            ms(l.max_delay),
            secs(l.max_from),
            secs(l.max_to)
        );
    }
    s += &rule;
    let _ = writeln!(s, "  {:<22} | {:>10} ms | {:>8} |", "TOTAL:", ms(rt), sw);
    let _ = writeln!(s, " {:-<51}", "");
    s
}
