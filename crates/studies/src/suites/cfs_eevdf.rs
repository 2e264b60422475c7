//! Study `cfs-eevdf`: what changed for users when Linux 6.6 replaced CFS's pick with EEVDF,
//! and as EEVDF evolved to 6.12 (custom slices, PREEMPT_SHORT, delayed dequeue) and 6.18.
//! Four experiments on a 2-CPU HZ=250 machine, each under CFS (v5.15) and the EEVDF
//! versions: slice length and context switches, a short-slice waker's latency, a waking
//! sleeper, and nice shares with autogroup.

use crate::suite::{Config, Experiment, Metric, Suite};
use schedlab_run::RunRecord;
use schedlab_sim::Ns;

pub const DESCRIPTION: &str = "CFS (5.15) vs EEVDF (6.6, 6.12, 6.18): slices, latency, sleepers, autogroup";

fn of(name: &str, prefix: &str) -> bool {
    name == prefix || name.strip_prefix(prefix).is_some_and(|s| s.starts_with('.'))
}

/// Tasks whose name is `prefix` or `prefix.N`.
fn tasks<'a>(r: &'a RunRecord, prefix: &'a str) -> impl Iterator<Item = &'a schedlab_metrics::TaskRecord> + 'a {
    r.tasks.iter().filter(move |t| of(&t.name, prefix))
}

fn one<'a>(r: &'a RunRecord, name: &str) -> &'a schedlab_metrics::TaskRecord {
    r.tasks.iter().find(|t| of(&t.name, name)).expect("the experiment's workload has this task")
}

fn share(r: &RunRecord, name: &str) -> f64 {
    let all: u64 = r.tasks.iter().map(|t| t.runtime_ns).sum();
    tasks(r, name).map(|t| t.runtime_ns).sum::<u64>() as f64 / all.max(1) as f64
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e3)
}

fn versions() -> Vec<Config> {
    vec![
        Config::new("cfs 5.15", "cfs"),
        Config::new("eevdf 6.6", "eevdf@6.6"),
        Config::new("eevdf 6.12", "eevdf@6.12"),
        Config::new("eevdf 6.18", "eevdf@6.18"),
    ]
}

fn four_hogs() -> Experiment {
    let mut configs = versions();
    configs.extend([
        Config::new("6.18 base 7ms", "eevdf@6.18").set("base_slice_ns", "7ms"),
        Config::new("6.18 slice 7ms", "eevdf@6.18").param("slice", "7ms"),
        Config::new("6.18 slice 0.28ms", "eevdf@6.18").param("slice", "280us"),
    ]);
    Experiment {
        name: "four-hogs",
        title: "four hogs on one CPU for 10 s: involuntary switches per base and custom slice",
        workload: include_str!("../../../../examples/studies/cfs-eevdf/four-hogs.toml"),
        machine: "smp2",
        duration: Ns::from_secs(10),
        derived: Vec::new(),
        configs,
        metrics: vec![
            Metric {
                name: "involuntary switches",
                value: |r| tasks(r, "hog").map(|t| t.switches_involuntary).sum::<u64>().to_string(),
            },
            Metric {
                name: "mean burst ms",
                value: |r| {
                    let (run, sw) =
                        tasks(r, "hog").fold((0, 0), |(a, b), t| (a + t.runtime_ns, b + t.switches_involuntary));
                    format!("{:.2}", run as f64 / sw.max(1) as f64 / 1e6)
                },
            },
            Metric {
                name: "share spread %",
                value: |r| {
                    let s: Vec<f64> = tasks(r, "hog").map(|t| t.runtime_ns as f64).collect();
                    let total: f64 = s.iter().sum();
                    let (lo, hi) = s.iter().fold((f64::MAX, 0f64), |(l, h), &x| (l.min(x), h.max(x)));
                    format!("{:.2}", 100.0 * (hi - lo) / total.max(1.0))
                },
            },
        ],
    }
}

fn short_slice() -> Experiment {
    let mut configs = versions();
    configs.push(Config::new("6.18 base slice", "eevdf@6.18").param("slice", "default"));
    Experiment {
        name: "short-slice",
        title: "a 0.1 ms-slice task waking every ms among three hogs: its wakeup latency (µs)",
        workload: include_str!("../../../../examples/studies/cfs-eevdf/short-slice.toml"),
        machine: "smp2",
        duration: Ns::from_secs(10),
        derived: Vec::new(),
        configs,
        metrics: vec![
            Metric { name: "lat p50 µs", value: |r| us(one(r, "lat").wakeup_latency_ns.p50) },
            Metric { name: "lat p90 µs", value: |r| us(one(r, "lat").wakeup_latency_ns.p90) },
            Metric { name: "lat p99 µs", value: |r| us(one(r, "lat").wakeup_latency_ns.p99) },
            Metric { name: "lat max µs", value: |r| us(one(r, "lat").wakeup_latency_ns.max) },
            Metric {
                name: "lat wait per wakeup µs",
                value: |r| {
                    let t = one(r, "lat");
                    us(t.wait_ns / t.wakeups.max(1))
                },
            },
            Metric { name: "lat CPU share %", value: |r| format!("{:.2}", 100.0 * share(r, "lat")) },
        ],
    }
}

fn sleeper() -> Experiment {
    let mut configs = versions();
    configs.insert(1, Config::new("cfs no gentle", "cfs").set("GENTLE_FAIR_SLEEPERS", "0"));
    Experiment {
        name: "sleeper",
        title: "a 1 ms-run / 9 ms-sleep task beside a hog: sleeper credit vs lag placement",
        workload: include_str!("../../../../examples/studies/cfs-eevdf/sleeper.toml"),
        machine: "smp2",
        duration: Ns::from_secs(10),
        derived: Vec::new(),
        configs,
        metrics: vec![
            Metric { name: "sleeper share %", value: |r| format!("{:.2}", 100.0 * share(r, "sleeper")) },
            Metric { name: "hog preempted", value: |r| one(r, "hog").switches_involuntary.to_string() },
            Metric { name: "sleeper wakeups", value: |r| one(r, "sleeper").wakeups.to_string() },
            Metric { name: "sleeper p50 µs", value: |r| us(one(r, "sleeper").wakeup_latency_ns.p50) },
            Metric { name: "sleeper p99 µs", value: |r| us(one(r, "sleeper").wakeup_latency_ns.p99) },
        ],
    }
}

fn autogroup_nice() -> Experiment {
    let mut configs = Vec::new();
    for (label, sched) in [("cfs", "cfs"), ("eevdf", "eevdf@6.18")] {
        configs.push(Config::new(&format!("{label} autogroup"), sched));
        configs.push(Config::new(&format!("{label} no autogroup"), sched).set("autogroup", "0"));
    }
    Experiment {
        name: "autogroup-nice",
        title: "nice 0 vs nice 10 started from two terminals: shares with autogroup on and off",
        workload: include_str!("../../../../examples/studies/cfs-eevdf/autogroup-nice.toml"),
        machine: "smp2",
        duration: Ns::from_secs(10),
        derived: Vec::new(),
        configs,
        metrics: vec![
            Metric { name: "nice 0 share %", value: |r| format!("{:.2}", 100.0 * share(r, "a")) },
            Metric { name: "nice 10 share %", value: |r| format!("{:.2}", 100.0 * share(r, "b")) },
        ],
    }
}

pub fn suite() -> Suite {
    Suite {
        name: "cfs-eevdf",
        description: DESCRIPTION,
        experiments: vec![four_hogs(), short_slice(), sleeper(), autogroup_nice()],
        scaled: None,
    }
}
