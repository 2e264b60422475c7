//! Study `futex`: the futex optimisations of an Android systems write-up (`docs/futex.md`).
//! `futex-swap`: a request/response pair on 2 CPUs over FUTEX_WAKE + FUTEX_WAIT,
//! `futex_swap`, `futex_swap` waking on the current CPU, and the direct switch — round-trip
//! time, CPU time, switches and migrations per round. `futex-vip`: a VIP UI thread
//! rendering a frame every 16.7 ms against background threads on one lock — its futex
//! waits and missed frames with VIP off, on, and on without the starvation guard.

use crate::suite::{Config, Experiment, Metric, Suite};
use schedlab_run::RunRecord;
use schedlab_sim::Ns;

pub const DESCRIPTION: &str = "futex_swap, wake on the current CPU, direct switch; VIP queueing and inheritance";

/// Rounds of the pair (the `rounds` parameter of `futex/swap.toml`).
const ROUNDS: u64 = 20_000;
/// The UI thread's frame period (`futex/vip.toml`).
const FRAME_NS: u64 = 16_667_000;

fn counter(r: &RunRecord, name: &str) -> u64 {
    r.kernel.counters.iter().find(|(k, _)| k == name).map_or(0, |(_, v)| *v)
}

fn per_round(x: u64) -> String {
    format!("{:.3}", x as f64 / ROUNDS as f64)
}

fn task_exit(r: &RunRecord, name: &str) -> u64 {
    r.tasks.iter().find(|t| t.name == name).and_then(|t| t.exit_ns).unwrap_or(r.sim_ns)
}

fn swap() -> Experiment {
    let mechanisms = |sched: &str, tag: &str| {
        vec![
            Config::new(&format!("{tag} wake+wait"), sched).param("split", "true"),
            Config::new(&format!("{tag} swap"), sched),
            Config::new(&format!("{tag} swap+cpu"), sched).param("current_cpu", "true"),
            Config::new(&format!("{tag} direct"), sched).param("current_cpu", "true").param("direct", "true"),
        ]
    };
    let mut configs = mechanisms("eevdf", "eevdf");
    configs.extend(mechanisms("cfs", "cfs"));
    configs.extend(mechanisms("ule", "ule"));
    Experiment {
        name: "futex-swap",
        title: "request/response pair on 2 CPUs, 20000 rounds: per round",
        workload: include_str!("../../../../examples/studies/futex/swap.toml"),
        machine: "smp2",
        duration: Ns::from_secs(10),
        derived: Vec::new(),
        configs,
        metrics: vec![
            Metric {
                name: "round trip µs",
                value: |r| format!("{:.3}", task_exit(r, "client") as f64 / ROUNDS as f64 / 1e3),
            },
            Metric {
                name: "CPU µs",
                value: |r| {
                    let busy: u64 = r.cpus.iter().map(|c| c.user_ns + c.kernel_ns + c.spin_ns).sum();
                    format!("{:.3}", busy as f64 / ROUNDS as f64 / 1e3)
                },
            },
            Metric {
                name: "idle µs",
                value: |r| {
                    let idle: u64 = r.cpus.iter().map(|c| c.idle_ns).sum();
                    format!("{:.3}", idle as f64 / ROUNDS as f64 / 1e3)
                },
            },
            Metric {
                name: "switches",
                value: |r| per_round(r.tasks.iter().map(|t| t.switches_voluntary + t.switches_involuntary).sum()),
            },
            Metric { name: "migrations", value: |r| per_round(r.tasks.iter().map(|t| t.migrations).sum()) },
            Metric { name: "direct switches", value: |r| per_round(counter(r, "direct_switches")) },
        ],
    }
}

fn vip() -> Experiment {
    let configs = vec![
        Config::new("VIP off", "eevdf").set("futex.vip", "0"),
        Config::new("VIP on", "eevdf"),
        Config::new("VIP, no guard", "eevdf").set("futex.vip_starvation_ns", "3600000000000"),
        Config::new("cfs VIP off", "cfs").set("futex.vip", "0"),
        Config::new("cfs VIP on", "cfs"),
    ];
    Experiment {
        name: "futex-vip",
        title: "VIP UI thread (a frame every 16.7 ms) vs 8 background lockers and 3 hogs on 2 CPUs, 10 s",
        workload: include_str!("../../../../examples/studies/futex/vip.toml"),
        machine: "smp2",
        duration: Ns::from_secs(10),
        derived: Vec::new(),
        configs,
        metrics: vec![
            Metric { name: "VIP futex waits", value: |r| counter(r, "vip_waits").to_string() },
            Metric { name: "VIP max wait ms", value: |r| format!("{:.1}", counter(r, "vip_wait_max_ns") as f64 / 1e6) },
            Metric { name: "VIP total wait ms", value: |r| format!("{:.1}", counter(r, "vip_wait_ns") as f64 / 1e6) },
            Metric { name: "waits > 100 ms", value: |r| counter(r, "vip_waits_over_100ms").to_string() },
            Metric { name: "waits > 200 ms", value: |r| counter(r, "vip_waits_over_200ms").to_string() },
            Metric {
                name: "missed frames",
                value: |r| {
                    // Periods in the run, less the frames finished within their period.
                    let on_time = counter(r, "timers") - counter(r, "timer_overruns");
                    (r.sim_ns / FRAME_NS).saturating_sub(on_time).to_string()
                },
            },
            Metric { name: "VIP jumps", value: |r| counter(r, "vip_jumps").to_string() },
            Metric { name: "guard held back", value: |r| counter(r, "vip_starvation_guard").to_string() },
            Metric { name: "inheritances", value: |r| counter(r, "vip_inherits").to_string() },
        ],
    }
}

pub fn suite() -> Suite {
    Suite { name: "futex", description: DESCRIPTION, experiments: vec![swap(), vip()], scaled: None }
}
