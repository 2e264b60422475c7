//! What the comparisons read from a run record: an application's tasks (by name prefix),
//! completion, CPU share over a window, sampled ULE statistics, counters.

use schedlab_metrics::{RunRecord, TaskRecord};
use schedlab_report::{group_of, runtime_between};

/// The tasks of an application: every task whose group (`worker.3` → `worker`) is `app`
/// or starts with `app-` (ferret's stages `ferret-seg`, …).
pub fn app<'a>(r: &'a RunRecord, app: &str) -> Vec<&'a TaskRecord> {
    let stage = format!("{app}-");
    r.tasks
        .iter()
        .filter(|t| {
            let g = group_of(&t.name);
            g == app || g.starts_with(&stage)
        })
        .collect()
}

/// When the application's last task exited (`None` while one is alive).
pub fn done(r: &RunRecord, a: &str) -> Option<u64> {
    let ts = app(r, a);
    if ts.is_empty() {
        return None;
    }
    ts.iter().map(|t| t.exit_ns).collect::<Option<Vec<_>>>().and_then(|v| v.into_iter().max())
}

/// From the latest start of `apps` to the first completion among them (or the run's end).
pub fn overlap(r: &RunRecord, apps: &[&str]) -> (u64, u64) {
    let start = apps.iter().filter_map(|a| app(r, a).iter().map(|t| t.start_ns).min()).max().unwrap_or(0);
    let end = apps.iter().filter_map(|a| done(r, a)).min().unwrap_or(r.sim_ns).max(start);
    (start, end)
}

/// The application's share of the machine within `[a, b]`, in percent (`None` without a
/// sampled series or an empty window).
pub fn share(r: &RunRecord, name: &str, (a, b): (u64, u64)) -> Option<f64> {
    if b <= a {
        return None;
    }
    let run: u64 = app(r, name).iter().map(|t| runtime_between(r, t.tid, a, b)).sum::<Option<u64>>()?;
    Some(100.0 * run as f64 / ((b - a) as f64 * r.machine.cpus.max(1) as f64))
}

/// Mean of policy statistic `stat` (e.g. ULE's `score`) over the application's tasks and
/// the samples within `[a, b]` at which each task existed.
pub fn mean_stat(r: &RunRecord, name: &str, stat: &str, (a, b): (u64, u64)) -> Option<f64> {
    let s = r.series.as_ref()?;
    let k = s.stat_names.iter().position(|n| n == stat)?;
    let (mut sum, mut n) = (0i128, 0u64);
    for t in app(r, name) {
        let alive = |ns: u64| ns >= t.start_ns && t.exit_ns.is_none_or(|e| ns < e);
        for (i, &ns) in s.times_ns.iter().enumerate() {
            if ns < a || ns > b || !alive(ns) || i < s.first[t.tid] {
                continue;
            }
            if let Some(v) = s.stats.get(t.tid).and_then(|st| st.get(k)).and_then(|v| v.get(i - s.first[t.tid])) {
                sum += i128::from(*v);
                n += 1;
            }
        }
    }
    (n > 0).then(|| sum as f64 / n as f64)
}

/// Involuntary switches of the application's tasks (preemptions).
pub fn preempted(r: &RunRecord, name: &str) -> u64 {
    app(r, name).iter().map(|t| t.switches_involuntary).sum()
}

/// Migrations of the application's tasks.
pub fn migrations(r: &RunRecord, name: &str) -> u64 {
    app(r, name).iter().map(|t| t.migrations).sum()
}

/// Tasks of the application that never ran.
pub fn never_ran(r: &RunRecord, name: &str) -> usize {
    app(r, name).iter().filter(|t| t.runtime_ns == 0).count()
}

/// The worst p99 wakeup latency among the application's tasks.
pub fn worst_p99(r: &RunRecord, name: &str) -> u64 {
    app(r, name).iter().map(|t| t.wakeup_latency_ns.p99).max().unwrap_or(0)
}

/// A policy counter (0 when the policy has none of that name).
pub fn counter(r: &RunRecord, name: &str) -> u64 {
    r.policy_counters.get(name).copied().unwrap_or(0)
}

/// Tasks CFS's load balancer moved, over every domain level (`lb.LEVEL.moved`).
pub fn cfs_moved(r: &RunRecord) -> u64 {
    r.policy_counters.iter().filter(|(k, _)| k.starts_with("lb.") && k.ends_with(".moved")).map(|(_, v)| v).sum()
}

/// Runnable tasks on `cpu` at the last sample at or before `t` (0 without a series).
pub fn runnable_at(r: &RunRecord, cpu: usize, t: u64) -> u32 {
    let Some(s) = r.series.as_ref() else { return 0 };
    s.index_at(t).and_then(|i| s.cpu_runnable.get(cpu).and_then(|v| v.get(i))).copied().unwrap_or(0)
}

/// CPUs on which at least one task was runnable at the last sample at or before `t`.
pub fn busy_cpus_at(r: &RunRecord, t: u64) -> usize {
    (0..r.machine.cpus).filter(|&c| runnable_at(r, c, t) > 0).count()
}

pub fn is_cfs(r: &RunRecord) -> bool {
    r.scheduler.name.starts_with("cfs")
}

pub fn is_ule(r: &RunRecord) -> bool {
    r.scheduler.name.starts_with("ule")
}

pub fn ms(ns: u64) -> String {
    format!("{:.1} ms", ns as f64 / 1e6)
}

/// A duration in µs below a millisecond, else in ms.
pub fn dur(ns: u64) -> String {
    if ns < 1_000_000 {
        format!("{:.0} µs", ns as f64 / 1e3)
    } else {
        ms(ns)
    }
}

pub fn opt_ms(ns: Option<u64>) -> String {
    ns.map_or_else(|| "not done".into(), ms)
}

pub fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.1} %"))
}

pub fn num(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.0}"))
}
