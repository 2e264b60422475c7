//! Study `rt-latency`: a cyclictest-like periodic thread (wakes every 1 ms, runs 50 µs) on a
//! 2-CPU HZ=250 machine — as SCHED_FIFO among fair hogs, as a fair task beside a FIFO hog
//! (rt throttling before v6.12, the fair server from v6.12), and as SCHED_FIFO among lower
//! and higher rt threads. Wakeup-latency percentiles and the thread's CPU share.

use crate::suite::{Config, Experiment, Metric, Suite};
use schedlab_run::RunRecord;

pub const DESCRIPTION: &str =
    "cyclictest-like wakeup latency: rt among fair, fair beside an rt hog (throttling vs fair server), rt among rt";

fn cyclic(r: &RunRecord) -> &schedlab_metrics::TaskRecord {
    r.tasks.iter().find(|t| t.name == "cyclic").expect("the experiment's workload has `cyclic`")
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e3)
}

fn versions() -> Vec<Config> {
    vec![
        Config::new("cfs 5.15 (throttle)", "cfs"),
        Config::new("eevdf 6.6 (throttle)", "eevdf@6.6"),
        Config::new("eevdf 6.12 (fair server)", "eevdf@6.12"),
        Config::new("eevdf 6.18 (fair server)", "eevdf@6.18"),
    ]
}

fn latency_metrics() -> Vec<Metric> {
    vec![
        Metric { name: "wakeups", value: |r| cyclic(r).wakeups.to_string() },
        Metric { name: "lat p50 µs", value: |r| us(cyclic(r).wakeup_latency_ns.p50) },
        Metric { name: "lat p99 µs", value: |r| us(cyclic(r).wakeup_latency_ns.p99) },
        Metric { name: "lat max µs", value: |r| us(cyclic(r).wakeup_latency_ns.max) },
        Metric {
            name: "cyclic CPU share %",
            value: |r| format!("{:.2}", 100.0 * cyclic(r).runtime_ns as f64 / r.sim_ns.max(1) as f64),
        },
    ]
}

fn experiment(name: &'static str, title: &'static str, workload: &'static str, configs: Vec<Config>) -> Experiment {
    Experiment::plain(name, title, workload, "smp2", 5, configs, latency_metrics())
}

pub fn suite() -> Suite {
    let mut unthrottled = versions();
    unthrottled.push(Config::new("6.18 rt_bandwidth=none", "eevdf@6.18").set("rt_bandwidth", "none"));
    Suite {
        name: "rt-latency",
        description: DESCRIPTION,
        experiments: vec![
            experiment(
                "among-fair",
                "a FIFO thread waking every 1 ms among three fair hogs on its CPU",
                include_str!("../../../../examples/studies/rt-latency/among-fair.toml"),
                versions(),
            ),
            experiment(
                "fair-vs-fifo-hog",
                "the same thread as a fair task beside a FIFO hog: throttling vs the fair server",
                include_str!("../../../../examples/studies/rt-latency/fair-vs-fifo-hog.toml"),
                unthrottled,
            ),
            experiment(
                "among-rt",
                "the FIFO thread (prio 50) beside a FIFO hog (10) and a 2 ms / 10 ms FIFO thread (90)",
                include_str!("../../../../examples/studies/rt-latency/among-rt.toml"),
                versions(),
            ),
        ],
        scaled: None,
    }
}
