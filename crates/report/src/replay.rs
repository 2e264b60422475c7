//! `schedlab replay`'s table: the trace's own measurements ("as it happened", the first
//! record) beside each simulated scheduler, every figure with its difference from the
//! trace, and differences beyond [`MARK_PCT`] marked.

use schedlab_metrics::{RunRecord, TaskRecord};
use std::fmt::Write;

/// Differences from the trace larger than this (percent) are marked `<`/`>`.
pub const MARK_PCT: f64 = 10.0;
/// Per-task rows shown (the tasks that ran longest in the trace).
const TASK_ROWS: usize = 15;

/// The run's completion: its last task exit, or its end when some task never exited.
pub fn completion_ns(r: &RunRecord) -> u64 {
    if r.tasks.iter().all(|t| t.exit_ns.is_some()) {
        r.tasks.iter().filter_map(|t| t.exit_ns).max().unwrap_or(r.sim_ns)
    } else {
        r.sim_ns
    }
}

fn sum(r: &RunRecord, f: impl Fn(&TaskRecord) -> u64) -> u64 {
    r.tasks.iter().map(f).sum()
}

fn quantile(r: &RunRecord, q: f64) -> u64 {
    r.latency_cdf.iter().find(|(_, p)| *p >= q).map_or(0, |(v, _)| *v)
}

/// Mean and largest relative difference of per-task run time from the trace's, over the
/// tasks both have (matched by name), in percent.
pub fn runtime_error_pct(trace: &RunRecord, r: &RunRecord) -> (f64, f64) {
    let mut n = 0usize;
    let (mut total, mut max) = (0.0f64, 0.0f64);
    for t in &trace.tasks {
        let Some(s) = r.tasks.iter().find(|s| s.name == t.name) else { continue };
        if t.runtime_ns == 0 {
            continue;
        }
        let d = (s.runtime_ns as f64 - t.runtime_ns as f64).abs() / t.runtime_ns as f64 * 100.0;
        total += d;
        max = max.max(d);
        n += 1;
    }
    (if n > 0 { total / n as f64 } else { 0.0 }, max)
}

fn cell(v: f64, base: f64, unit: &str) -> String {
    let shown = if unit == "ms" { format!("{:.3}", v / 1e6) } else { format!("{v:.0}") };
    if base == 0.0 {
        return shown;
    }
    let pct = (v - base) / base * 100.0;
    let mark = if pct > MARK_PCT {
        ">"
    } else if pct < -MARK_PCT {
        "<"
    } else {
        " "
    };
    format!("{shown} ({pct:+.1}%){mark}")
}

type Metric = (&'static str, &'static str, fn(&RunRecord) -> u64);

const METRICS: [Metric; 9] = [
    ("completion", "ms", completion_ns),
    ("run time, all tasks", "ms", |r| sum(r, |t| t.runtime_ns)),
    ("runnable wait, all tasks", "ms", |r| sum(r, |t| t.wait_ns)),
    ("voluntary switches", "", |r| sum(r, |t| t.switches_voluntary)),
    ("involuntary switches", "", |r| sum(r, |t| t.switches_involuntary)),
    ("migrations", "", |r| sum(r, |t| t.migrations)),
    ("wakeups", "", |r| sum(r, |t| t.wakeups)),
    ("wakeup latency p50", "ms", |r| quantile(r, 0.5)),
    ("wakeup latency p99", "ms", |r| quantile(r, 0.99)),
];

fn row(out: &mut String, label: &str, cells: &[String]) {
    let _ = write!(out, "{:<28}", crate::escape(label));
    for c in cells {
        let _ = write!(out, " {c:>24}");
    }
    out.push('\n');
}

/// The replay table; `rs[0]` is the trace's record.
pub fn table(rs: &[RunRecord]) -> String {
    let mut out = String::new();
    let Some(trace) = rs.first() else { return out };
    let _ = writeln!(
        out,
        "replay of {} ({} tasks) on {}: the trace as it happened beside each simulated scheduler",
        crate::escape(&trace.workload.name),
        trace.tasks.len(),
        trace.machine.name
    );
    let _ = writeln!(out, "(difference from the trace in parentheses; beyond ±{MARK_PCT}% marked > or <)\n");
    let names: Vec<String> = rs.iter().map(|r| r.scheduler.name.clone()).collect();
    row(&mut out, "", &names);
    for (label, unit, f) in METRICS {
        let base = f(trace) as f64;
        let cells: Vec<String> =
            rs.iter().enumerate().map(|(i, r)| cell(f(r) as f64, if i == 0 { 0.0 } else { base }, unit)).collect();
        let label = if unit.is_empty() { label.to_string() } else { format!("{label} ({unit})") };
        row(&mut out, &label, &cells);
    }
    let errs: Vec<String> = rs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            if i == 0 {
                "-".into()
            } else {
                let (mean, max) = runtime_error_pct(trace, r);
                format!("{mean:.2}% / {max:.2}%")
            }
        })
        .collect();
    row(&mut out, "per-task run time Δ mean/max", &errs);
    per_task(&mut out, rs);
    out
}

fn per_task(out: &mut String, rs: &[RunRecord]) {
    let trace = &rs[0];
    let mut order: Vec<&TaskRecord> = trace.tasks.iter().collect();
    order.sort_by(|a, b| b.runtime_ns.cmp(&a.runtime_ns).then(a.name.cmp(&b.name)));
    let _ = writeln!(out, "\nrun time (ms) of the {} tasks that ran longest in the trace", TASK_ROWS.min(order.len()));
    for t in order.into_iter().take(TASK_ROWS) {
        let cells: Vec<String> = rs
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let v = r.tasks.iter().find(|s| s.name == t.name).map_or(0, |s| s.runtime_ns);
                cell(v as f64, if i == 0 { 0.0 } else { t.runtime_ns as f64 }, "ms")
            })
            .collect();
        row(out, &t.name, &cells);
    }
}

#[cfg(test)]
mod tests {
    use super::cell;

    #[test]
    fn differences_beyond_the_mark_are_flagged_both_ways() {
        assert_eq!(cell(120.0, 100.0, ""), "120 (+20.0%)>");
        assert_eq!(cell(85.0, 100.0, ""), "85 (-15.0%)<");
        assert_eq!(cell(105.0, 100.0, ""), "105 (+5.0%) ");
        assert_eq!(cell(2_500_000.0, 0.0, "ms"), "2.500", "the trace's own column has no difference");
    }
}
