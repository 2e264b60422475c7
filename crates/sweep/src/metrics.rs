//! The metric columns of a sweep's row, read off one run's record (documented in
//! `docs/sweep.md`): whole-run totals and latency quantiles, then one group of columns per
//! named span.

use schedlab_metrics::RunRecord;

/// `(column, value)` pairs for run `r`, in column order. Integers in ns; an empty value
/// when the run has none (no wakeups, not every task exited).
pub fn of(r: &RunRecord) -> Vec<(String, String)> {
    let sum = |f: fn(&schedlab_metrics::TaskRecord) -> u64| r.tasks.iter().map(f).sum::<u64>().to_string();
    let cpu = |f: fn(&schedlab_metrics::CpuRecord) -> u64| r.cpus.iter().map(f).sum::<u64>().to_string();
    let lock = |f: fn(&schedlab_metrics::LockRecord) -> u64| r.locks.iter().map(f).sum::<u64>().to_string();
    // `latency_cdf[q - 1]` is the q-th percentile of every task's wakeups together.
    let pct = |q: usize| r.latency_cdf.get(q - 1).map_or(String::new(), |(ns, _)| ns.to_string());
    let all_exited = r.tasks.iter().all(|t| t.exit_ns.is_some());
    let makespan =
        if all_exited { r.tasks.iter().filter_map(|t| t.exit_ns).max().map(|e| e.to_string()) } else { None };
    let mut out: Vec<(String, String)> = vec![
        ("sim_ns".into(), r.sim_ns.to_string()),
        ("end_reason".into(), r.end_reason.to_string()),
        ("events".into(), r.events.to_string()),
        ("trace_hash".into(), r.trace_hash.clone()),
        ("tasks".into(), r.tasks.len().to_string()),
        ("makespan_ns".into(), makespan.unwrap_or_default()),
        ("runtime_ns".into(), sum(|t| t.runtime_ns)),
        ("wait_ns".into(), sum(|t| t.wait_ns)),
        ("sleep_ns".into(), sum(|t| t.sleep_ns)),
        ("switches_voluntary".into(), sum(|t| t.switches_voluntary)),
        ("switches_involuntary".into(), sum(|t| t.switches_involuntary)),
        ("migrations".into(), sum(|t| t.migrations)),
        ("wakeups".into(), sum(|t| t.wakeups)),
        ("wakeup_p50_ns".into(), pct(50)),
        ("wakeup_p99_ns".into(), pct(99)),
        ("wakeup_max_ns".into(), r.tasks.iter().map(|t| t.wakeup_latency_ns.max).max().unwrap_or(0).to_string()),
        ("user_ns".into(), cpu(|c| c.user_ns)),
        ("kernel_ns".into(), cpu(|c| c.kernel_ns)),
        ("spin_ns".into(), cpu(|c| c.spin_ns)),
        ("idle_ns".into(), cpu(|c| c.idle_ns)),
        ("lock_acquisitions".into(), lock(|l| l.acquisitions)),
        ("lock_contended".into(), lock(|l| l.contended)),
        ("lock_spin_ns".into(), lock(|l| l.spin_ns)),
    ];
    for s in &r.spans {
        out.push((format!("span.{}.count", s.name), s.count.to_string()));
        out.push((format!("span.{}.per_sec", s.name), s.per_sec.to_string()));
        out.push((format!("span.{}.p50_ns", s.name), s.latency_ns.p50.to_string()));
        out.push((format!("span.{}.p99_ns", s.name), s.latency_ns.p99.to_string()));
    }
    out
}
