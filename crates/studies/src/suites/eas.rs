//! Study `eas`: energy-aware scheduling as `Documentation/scheduler/sched-energy.rst`
//! describes it, on the `big-little` preset (gs101: 4 Cortex-A55, 2 A76, 2 X1, each
//! cluster a performance domain with its energy model). A light phone mix (UI frames
//! handed to render workers, sensors, a background sync) under schedutil with EAS, with
//! EAS off (`sched_energy_aware=0`), under the `performance` governor (EAS needs
//! schedutil) and with the UI's cgroup boosted by `cpu.uclamp.min`; then a CPU-bound mix
//! that overutilizes the machine. The energy is the record's (busy time × the energy
//! model's power at each frequency); the counters say where and why.

use crate::suite::{Config, Experiment, Metric, Suite};
use schedlab_run::RunRecord;

pub const DESCRIPTION: &str =
    "energy-aware scheduling on big.LITTLE: energy and frames with EAS, without, under performance, with uclamp boost";

/// The configurations, as the claims name them.
pub const EAS_618: &str = "EAS eevdf 6.18";
pub const OFF_618: &str = "EAS off eevdf 6.18";
pub const PERF_618: &str = "performance eevdf 6.18";
pub const BOOST_618: &str = "EAS top-app boost 50% eevdf 6.18";
pub const EAS_515: &str = "EAS cfs 5.15";
pub const OFF_515: &str = "EAS off cfs 5.15";

/// The clusters of `big-little` by CPU number.
const CLUSTERS: [(&str, std::ops::Range<usize>); 3] = [("little", 0..4), ("mid", 4..6), ("big", 6..8)];

fn frames(r: &RunRecord, pick: fn(&schedlab_metrics::SpanRecord) -> u64) -> String {
    match r.spans.iter().find(|s| s.name == "frame").filter(|s| s.count > 0) {
        Some(s) => format!("{:.2}", pick(s) as f64 / 1e6),
        None => "-".into(),
    }
}

fn active_mj(r: &RunRecord) -> String {
    let nj: u64 = r.cpus.iter().filter_map(|c| c.energy.as_ref()).filter_map(|e| e.active_nj).sum();
    format!("{:.1}", nj as f64 / 1e6)
}

/// Active energy over frames completed (the light mix: the same frames need the same work).
fn energy_per_frame(r: &RunRecord) -> String {
    let nj: u64 = r.cpus.iter().filter_map(|c| c.energy.as_ref()).filter_map(|e| e.active_nj).sum();
    match r.spans.iter().find(|s| s.name == "frame").filter(|s| s.count > 0) {
        Some(s) => format!("{:.3}", nj as f64 / 1e6 / s.count as f64),
        None => "-".into(),
    }
}

/// A cluster's busy share (user + kernel + spinning) of its CPUs' time, %.
fn busy_pct(r: &RunRecord, cluster: usize) -> String {
    let cpus = &r.cpus[CLUSTERS[cluster].1.clone()];
    let busy: u64 = cpus.iter().map(|c| c.user_ns + c.kernel_ns + c.spin_ns).sum();
    let all: u64 = cpus.iter().map(|c| c.user_ns + c.kernel_ns + c.spin_ns + c.idle_ns + c.other_ns).sum();
    format!("{:.1}", 100.0 * busy as f64 / all.max(1) as f64)
}

fn mean_mhz(r: &RunRecord, cluster: usize) -> String {
    let cpus = &r.cpus[CLUSTERS[cluster].1.clone()];
    let khz: Vec<u64> = cpus.iter().filter_map(|c| c.freq.as_ref()).map(|f| f.mean_khz).collect();
    if khz.is_empty() {
        return "-".into();
    }
    format!("{}", khz.iter().sum::<u64>() / khz.len() as u64 / 1000)
}

fn counter(r: &RunRecord, name: &str) -> String {
    r.policy_counters.get(name).map_or("-".into(), |v| v.to_string())
}

/// The share of all wakeups `find_energy_efficient_cpu` placed, %.
fn feec_pct(r: &RunRecord) -> String {
    let wakeups: u64 = r.tasks.iter().map(|t| t.wakeups).sum();
    let feec = r.policy_counters.get("eas.feec").copied().unwrap_or(0);
    format!("{:.1}", 100.0 * feec as f64 / wakeups.max(1) as f64)
}

fn metrics() -> Vec<Metric> {
    vec![
        Metric {
            name: "frames",
            value: |r| r.spans.iter().find(|s| s.name == "frame").map_or("-".into(), |s| s.count.to_string()),
        },
        Metric { name: "frame p50 ms", value: |r| frames(r, |s| s.latency_ns.p50) },
        Metric { name: "frame p99 ms", value: |r| frames(r, |s| s.latency_ns.p99) },
        Metric { name: "active energy mJ", value: active_mj },
        Metric { name: "energy per frame mJ", value: energy_per_frame },
        Metric { name: "little busy %", value: |r| busy_pct(r, 0) },
        Metric { name: "mid busy %", value: |r| busy_pct(r, 1) },
        Metric { name: "big busy %", value: |r| busy_pct(r, 2) },
        Metric { name: "little mean MHz", value: |r| mean_mhz(r, 0) },
        Metric { name: "mid mean MHz", value: |r| mean_mhz(r, 1) },
        Metric { name: "big mean MHz", value: |r| mean_mhz(r, 2) },
        Metric { name: "wakeups", value: |r| r.tasks.iter().map(|t| t.wakeups).sum::<u64>().to_string() },
        Metric { name: "feec placements", value: |r| counter(r, "eas.feec") },
        Metric { name: "feec % of wakeups", value: feec_pct },
        Metric { name: "overutilized set", value: |r| counter(r, "eas.overutilized_set") },
    ]
}

pub fn suite() -> Suite {
    let off = |label: &str, sched: &str| Config::new(label, sched).set("sched_energy_aware", "0");
    let mix = vec![
        Config::new(EAS_618, "eevdf@6.18"),
        off(OFF_618, "eevdf@6.18"),
        Config::new(PERF_618, "eevdf@6.18").set("machine.freq.governor", "performance"),
        Config::new(BOOST_618, "eevdf@6.18").param("boost", "50"),
        Config::new(EAS_515, "cfs"),
        off(OFF_515, "cfs"),
    ];
    let busy = vec![Config::new(EAS_618, "eevdf@6.18"), off(OFF_618, "eevdf@6.18")];
    Suite {
        name: "eas",
        description: DESCRIPTION,
        experiments: vec![
            Experiment::plain(
                "mix",
                "a light phone mix on big-little: schedutil with EAS, without, performance, top-app uclamp boost",
                include_str!("../../../../examples/studies/eas/mix.toml"),
                "big-little",
                5,
                mix,
                metrics(),
            ),
            Experiment::plain(
                "busy",
                "eight CPU-bound periodic threads: the overutilized case, EAS on and off",
                include_str!("../../../../examples/studies/eas/busy.toml"),
                "big-little",
                5,
                busy,
                metrics(),
            ),
        ],
        scaled: None,
    }
}
