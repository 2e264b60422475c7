//! Study `cgroup-bandwidth`: CPU bandwidth control (`cpu.max`, `cpu.max.burst`) as
//! `Documentation/scheduler/sched-bwc.rst` describes it, on the fair class of v5.15 (`cfs`:
//! the whole runqueue throttled at once) and v6.18 (`eevdf`: tasks throttled as they return
//! to user mode). A client outside the limited group times each request to a handler inside
//! it, so a request's wait for the next refill counts; the `cpu.stat` counters say why.

use crate::suite::{Config, Experiment, Metric, Suite};
use schedlab_run::RunRecord;

pub const DESCRIPTION: &str =
    "cpu.max and cpu.max.burst: a throttled service's request latency vs period and burst, 5.15 vs 6.18 throttling";

/// The configurations, as the claims name them.
pub const SHORT_618: &str = "10ms/50ms eevdf 6.18";
pub const LONG_618: &str = "100ms/500ms eevdf 6.18";
pub const NO_BURST_618: &str = "no burst eevdf 6.18";
pub const BURST_618: &str = "burst 10ms eevdf 6.18";

/// One configuration per (label prefix, parameter value) under v5.15 and v6.18.
fn both_versions(param: &str, values: &[(&str, &str)]) -> Vec<Config> {
    let mut out = Vec::new();
    for (label, sched) in [("eevdf 6.18", "eevdf@6.18"), ("cfs 5.15", "cfs")] {
        for (prefix, value) in values {
            out.push(Config::new(&format!("{prefix} {label}"), sched).param(param, value));
        }
    }
    out
}

fn span_us(r: &RunRecord, pick: fn(&schedlab_metrics::SpanRecord) -> u64) -> String {
    match r.spans.iter().find(|s| s.name == "request").filter(|s| s.count > 0) {
        Some(s) => format!("{:.1}", pick(s) as f64 / 1e3),
        None => "-".into(),
    }
}

/// The limited group's `cpu.stat` field, or `-` when the scheduler kept none.
fn stat(r: &RunRecord, pick: fn(&schedlab_metrics::GroupRecord) -> Option<u64>) -> String {
    r.groups.iter().find(|g| g.name == "svc").and_then(pick).map_or("-".into(), |v| v.to_string())
}

/// The group's tasks' share of one CPU over the run, %.
fn group_share(r: &RunRecord) -> String {
    let ns: u64 = r.tasks.iter().filter(|t| t.name == "handler" || t.name == "batch").map(|t| t.runtime_ns).sum();
    format!("{:.2}", 100.0 * ns as f64 / r.sim_ns.max(1) as f64)
}

fn metrics() -> Vec<Metric> {
    vec![
        Metric {
            name: "requests",
            value: |r| r.spans.iter().find(|s| s.name == "request").map_or("0".into(), |s| s.count.to_string()),
        },
        Metric { name: "request mean µs", value: |r| span_us(r, |s| s.mean_ns) },
        Metric { name: "request p50 µs", value: |r| span_us(r, |s| s.latency_ns.p50) },
        Metric { name: "request p99 µs", value: |r| span_us(r, |s| s.latency_ns.p99) },
        Metric { name: "request max µs", value: |r| span_us(r, |s| s.latency_ns.max) },
        Metric { name: "group CPU share %", value: group_share },
        Metric { name: "nr_periods", value: |r| stat(r, |g| Some(g.nr_periods)) },
        Metric { name: "nr_throttled", value: |r| stat(r, |g| Some(g.nr_throttled)) },
        Metric { name: "throttled ms", value: |r| stat(r, |g| Some(g.throttled_ns / 1_000_000)) },
        Metric { name: "nr_bursts", value: |r| stat(r, |g| g.nr_bursts) },
        Metric { name: "burst ms", value: |r| stat(r, |g| g.burst_ns.map(|b| b / 1_000_000)) },
    ]
}

fn experiment(name: &'static str, title: &'static str, workload: &'static str, configs: Vec<Config>) -> Experiment {
    Experiment::plain(name, title, workload, "smp2", 5, configs, metrics())
}

pub fn suite() -> Suite {
    Suite {
        name: "cgroup-bandwidth",
        description: DESCRIPTION,
        experiments: vec![
            experiment(
                "period",
                "a handler and a batch worker limited to 20 % of a CPU: 10ms/50ms vs 100ms/500ms",
                include_str!("../../../../examples/studies/cgroup-bandwidth/period.toml"),
                both_versions("max", &[("10ms/50ms", "10ms/50ms"), ("100ms/500ms", "100ms/500ms")]),
            ),
            experiment(
                "burst",
                "25 ms requests every 190 ms at 20ms/50ms: without and with a 10 ms cpu.max.burst",
                include_str!("../../../../examples/studies/cgroup-bandwidth/burst.toml"),
                both_versions("burst", &[("no burst", "0ms"), ("burst 10ms", "10ms")]),
            ),
        ],
        scaled: None,
    }
}
