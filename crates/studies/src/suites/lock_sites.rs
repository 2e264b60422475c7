//! Study `lock-sites`: where the runqueue locks are taken, per kernel version and CPU
//! count — the measurement behind Zhang, Gu and Su (2017)'s first table, which counted
//! runqueue-lock acquisitions, contentions and spin time per call site (`schedule`,
//! `load_balance`, `try_to_wake_up`, `wake_up_new_task`) under Linux 2.6.32 and 3.4.
//! The three locking models (`--kernel 2.6.32|3.4|5.15`, docs/kernel-versions.md) run the
//! same CFS policy on 2, 4 and 8 CPUs (`smp2`, `smp4`, `smp8`: one LLC, no SMT, so the CPU
//! count is the only thing that changes); one table per CPU count, one column per version.
//!
//! The workload is wakeup-heavy hackbench: threads over pipes (`-T -p`: every message to a
//! blocked receiver is a wakeup, without socket costs), 10 groups of 10 loops (hackbench's
//! default is 100; the per-site proportions are set within a few loops, and 10 keeps the
//! nine runs to seconds). `--param` changes any of these.

use super::lockstat::{acquisitions, completion_ms, contended, spin_us};
use crate::suite::{Config, Experiment, Metric, Suite};
use schedlab_kernel::KernelVersion;
use schedlab_sim::Ns;

pub const DESCRIPTION: &str =
    "rq-lock acquisitions, contentions and spin per call site, kernel 2.6.32 / 3.4 / 5.15 on 2, 4, 8 CPUs (hackbench threads over pipes)";

const HACKBENCH: &str = include_str!("../../../../examples/workloads/hackbench.toml");

fn configs() -> Vec<Config> {
    let params = [("groups", "10"), ("loops", "10"), ("process", "0"), ("transport", "pipe")];
    KernelVersion::ALL
        .iter()
        .map(|&v| params.iter().fold(Config::new(v.name(), "cfs").kernel(v), |c, (n, x)| c.param(n, x)))
        .collect()
}

fn metrics() -> Vec<Metric> {
    vec![
        Metric { name: "completion ms", value: completion_ms },
        Metric { name: "schedule acquisitions", value: |r| acquisitions(r, "schedule").to_string() },
        Metric { name: "schedule contended", value: |r| contended(r, "schedule").to_string() },
        Metric { name: "schedule spin us", value: |r| spin_us(r, "schedule") },
        Metric { name: "load_balance acquisitions", value: |r| acquisitions(r, "load_balance").to_string() },
        Metric { name: "load_balance contended", value: |r| contended(r, "load_balance").to_string() },
        Metric { name: "load_balance spin us", value: |r| spin_us(r, "load_balance") },
        Metric { name: "try_to_wake_up acquisitions", value: |r| acquisitions(r, "try_to_wake_up").to_string() },
        Metric { name: "try_to_wake_up contended", value: |r| contended(r, "try_to_wake_up").to_string() },
        Metric { name: "try_to_wake_up spin us", value: |r| spin_us(r, "try_to_wake_up") },
        Metric { name: "wake_up_new_task acquisitions", value: |r| acquisitions(r, "wake_up_new_task").to_string() },
        Metric { name: "wake_up_new_task contended", value: |r| contended(r, "wake_up_new_task").to_string() },
        Metric { name: "wake_up_new_task spin us", value: |r| spin_us(r, "wake_up_new_task") },
        // 5.15's wake list: wakeups queued to the target instead of locking it remotely.
        Metric {
            name: "sched_ttwu_pending acquisitions",
            value: |r| acquisitions(r, "sched_ttwu_pending").to_string(),
        },
    ]
}

fn experiment(name: &'static str, title: &'static str, machine: &'static str) -> Experiment {
    Experiment {
        name,
        title,
        workload: HACKBENCH,
        machine,
        // A time limit only: runs end when main has reaped every group.
        duration: Ns::from_secs(600),
        derived: Vec::new(),
        configs: configs(),
        metrics: metrics(),
    }
}

pub fn suite() -> Suite {
    Suite {
        name: "lock-sites",
        description: DESCRIPTION,
        experiments: vec![
            experiment("2-cpus", "hackbench threads over pipes on smp2, CFS, per kernel version", "smp2"),
            experiment("4-cpus", "hackbench threads over pipes on smp4, CFS, per kernel version", "smp4"),
            experiment("8-cpus", "hackbench threads over pipes on smp8, CFS, per kernel version", "smp8"),
        ],
        scaled: None,
    }
}
