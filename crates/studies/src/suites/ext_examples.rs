//! Study `ext-examples`: the example sched_ext policies (`ext:simple` in vtime and FIFO
//! mode, `ext:central`, `ext:locality`) beside CFS, EEVDF and ULE on the standard
//! workloads — hackbench (wakeup-heavy pipes), periodic-200 (timer-driven latency),
//! fibo + sysbench (a hog among sleepers on one core) and unpin-512 (spreading CPU-bound
//! threads, which needs balancing that sched_ext policies must do themselves). Short
//! default durations; `--param`/`--duration` reach every run.

use crate::suite::{Config, Experiment, Metric, Suite};
use schedlab_run::RunRecord;
use schedlab_sim::Ns;

pub const DESCRIPTION: &str =
    "sched_ext examples (simple, central, locality) vs cfs/eevdf/ule: hackbench, periodic-200, fibo+sysbench, unpin-512";

fn configs() -> Vec<Config> {
    vec![
        Config::new("cfs", "cfs"),
        Config::new("eevdf", "eevdf"),
        Config::new("ule", "ule"),
        Config::new("ext:simple", "ext:simple"),
        Config::new("ext:simple fifo", "ext:simple").set("fifo", "1"),
        Config::new("ext:central", "ext:central"),
        Config::new("ext:locality", "ext:locality"),
    ]
}

/// The all-task wakeup latency at quantile `q` (the record's CDF), in µs.
fn lat_us(r: &RunRecord, q: f64) -> String {
    let ns = r.latency_cdf.iter().find(|(_, f)| *f >= q).or(r.latency_cdf.last()).map_or(0, |(l, _)| *l);
    format!("{:.1}", ns as f64 / 1e3)
}

fn sum(r: &RunRecord, f: fn(&schedlab_metrics::TaskRecord) -> u64) -> String {
    r.tasks.iter().map(f).sum::<u64>().to_string()
}

fn common() -> Vec<Metric> {
    vec![
        Metric { name: "lat p50 µs", value: |r| lat_us(r, 0.5) },
        Metric { name: "lat p99 µs", value: |r| lat_us(r, 0.99) },
        Metric { name: "migrations", value: |r| sum(r, |t| t.migrations) },
        Metric { name: "ejected", value: |r| r.scheduler.exit.as_deref().map_or("no", |_| "yes").to_string() },
    ]
}

fn with(mut extra: Vec<Metric>) -> Vec<Metric> {
    extra.extend(common());
    extra
}

/// CPU time of all tasks over the machine's capacity, in %.
fn utilisation(r: &RunRecord) -> String {
    let user: u64 = r.cpus.iter().map(|c| c.user_ns).sum();
    format!("{:.1}", 100.0 * user as f64 / (r.sim_ns.max(1) as f64 * r.cpus.len().max(1) as f64))
}

fn experiment(
    name: &'static str,
    title: &'static str,
    workload: &'static str,
    machine: &'static str,
    ms: u64,
    metrics: Vec<Metric>,
) -> Experiment {
    Experiment {
        name,
        title,
        workload,
        machine,
        duration: Ns::from_ms(ms),
        derived: Vec::new(),
        configs: configs(),
        metrics,
    }
}

pub fn suite() -> Suite {
    let completion = Metric { name: "completion ms", value: |r| format!("{:.1}", r.sim_ns as f64 / 1e6) };
    let fibo = Metric {
        name: "fibo share %",
        value: |r| {
            let f = r.tasks.iter().find(|t| t.name == "fibo").map_or(0, |t| t.runtime_ns);
            format!("{:.1}", 100.0 * f as f64 / r.sim_ns.max(1) as f64)
        },
    };
    let util = Metric { name: "CPU use %", value: utilisation };
    Suite {
        name: "ext-examples",
        description: DESCRIPTION,
        experiments: vec![
            experiment(
                "hackbench",
                "hackbench (pipes, 400 threads) on an i7-3770 until all exit",
                include_str!("../../../../examples/workloads/hackbench.toml"),
                "i7-3770",
                2000,
                with(vec![completion]),
            ),
            experiment(
                "periodic-200",
                "200 periodic tasks (300 µs every 10 ms, utilisation 6 of 8 CPUs)",
                include_str!("../../../../examples/workloads/periodic-200.toml"),
                "smp8",
                2000,
                common(),
            ),
            experiment(
                "fibo-sysbench",
                "fibo alone, then 80 sysbench threads from 7 s, one core",
                include_str!("../../../../examples/workloads/fibo-sysbench.toml"),
                "up",
                10_000,
                with(vec![fibo]),
            ),
            experiment(
                "unpin-512",
                "512 spinners pinned to CPU 0, unpinned at 1 s (opteron-32): who spreads them",
                include_str!("../../../../examples/studies/ule-cfs-unpin512.toml"),
                "opteron-32",
                3000,
                with(vec![util]),
            ),
        ],
        scaled: None,
    }
}
