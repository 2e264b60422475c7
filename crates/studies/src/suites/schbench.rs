//! Study `schbench`: Chris Mason's schbench (`examples/workloads/schbench.toml`, `-F128 -n 10
//! -L`: one message thread posting one worker per CPU through futexes) under CFS, the three
//! modelled EEVDF versions and the sched_ext examples — the workers' wakeup and request
//! latency percentiles, and the counters that explain them (preemptions inside requests,
//! the message thread's posting rounds).

use crate::suite::{Config, Experiment, Metric, Suite};
use schedlab_run::RunRecord;
use schedlab_sim::Ns;

pub const DESCRIPTION: &str =
    "schbench -F128 -n 10 -L: wakeup and request latency percentiles, cfs vs eevdf 6.6/6.12/6.18 vs the sched_ext examples";

/// The configurations, as the claims name them.
pub const CFS: &str = "cfs 5.15";
pub const EEVDF_6_6: &str = "eevdf 6.6";
pub const EEVDF_6_18: &str = "eevdf 6.18";
pub const EXT_SIMPLE: &str = "ext:simple";

fn configs() -> Vec<Config> {
    vec![
        Config::new(CFS, "cfs"),
        Config::new(EEVDF_6_6, "eevdf@6.6"),
        Config::new("eevdf 6.12", "eevdf@6.12"),
        Config::new(EEVDF_6_18, "eevdf@6.18"),
        Config::new(EXT_SIMPLE, "ext:simple"),
        Config::new("ext:central", "ext:central"),
        Config::new("ext:locality", "ext:locality"),
    ]
}

/// Span `name`'s latency percentile (`p50`, `p90`, `p99`, `max`) in µs, or `-` when the
/// run closed none.
fn span_us(r: &RunRecord, name: &str, pick: fn(&schedlab_metrics::Latency) -> u64) -> String {
    match r.spans.iter().find(|s| s.name == name).filter(|s| s.count > 0) {
        Some(s) => format!("{:.1}", pick(&s.latency_ns) as f64 / 1e3),
        None => "-".into(),
    }
}

/// The workers' sum of a task counter.
fn workers(r: &RunRecord, f: fn(&schedlab_metrics::TaskRecord) -> u64) -> u64 {
    r.tasks.iter().filter(|t| t.name.starts_with("worker")).map(f).sum()
}

fn requests(r: &RunRecord) -> u64 {
    r.spans.iter().find(|s| s.name == "request").map_or(0, |s| s.count)
}

fn metrics() -> Vec<Metric> {
    vec![
        Metric { name: "wakeup p50 µs", value: |r| span_us(r, "wakeup", |l| l.p50) },
        Metric { name: "wakeup p90 µs", value: |r| span_us(r, "wakeup", |l| l.p90) },
        Metric { name: "wakeup p99 µs", value: |r| span_us(r, "wakeup", |l| l.p99) },
        Metric { name: "wakeup max µs", value: |r| span_us(r, "wakeup", |l| l.max) },
        Metric { name: "request p50 µs", value: |r| span_us(r, "request", |l| l.p50) },
        Metric { name: "request p99 µs", value: |r| span_us(r, "request", |l| l.p99) },
        Metric {
            name: "requests per s",
            value: |r| format!("{:.0}", requests(r) as f64 * 1e9 / r.sim_ns.max(1) as f64),
        },
        Metric {
            name: "worker preemptions per request",
            value: |r| format!("{:.3}", workers(r, |t| t.switches_involuntary) as f64 / requests(r).max(1) as f64),
        },
        Metric { name: "posting round p99 µs", value: |r| span_us(r, "wake_batch", |l| l.p99) },
        Metric { name: "worker migrations", value: |r| workers(r, |t| t.migrations).to_string() },
        Metric {
            name: "mean MHz",
            value: |r| {
                let f: Vec<u64> = r.cpus.iter().filter_map(|c| c.freq.as_ref().map(|f| f.mean_khz)).collect();
                if f.is_empty() {
                    "-".into()
                } else {
                    format!("{:.0}", f.iter().sum::<u64>() as f64 / f.len() as f64 / 1e3)
                }
            },
        },
        Metric {
            name: "CPU use %",
            value: |r| {
                let user: u64 = r.cpus.iter().map(|c| c.user_ns).sum();
                format!("{:.1}", 100.0 * user as f64 / (r.sim_ns.max(1) as f64 * r.cpus.len().max(1) as f64))
            },
        },
    ]
}

pub fn suite() -> Suite {
    Suite {
        name: "schbench",
        description: DESCRIPTION,
        experiments: vec![Experiment {
            name: "schbench",
            title: "schbench -F128 -n 10 -L on an i7-3770: one message thread, 8 workers",
            workload: include_str!("../../../../examples/workloads/schbench.toml"),
            machine: "i7-3770",
            duration: Ns::from_secs(10),
            derived: Vec::new(),
            configs: configs(),
            metrics: metrics(),
        }],
        scaled: None,
    }
}
