//! Study `o1-bottlenecks`: what the Linux 2.6 O(1) scheduler fixed and what it left (a 2005
//! industry talk on 2.6 scheduler bottlenecks). Three experiments:
//!
//! - `pick-scale`: the O(1) pick (`kernel/sched.c:schedule (v2.6.11)`: `sched_find_first_bit`
//!   over the priority bitmap, then the head of that priority's list) costs the same with 10
//!   or 10 000 runnable tasks. Measured as simulated kernel work — the `schedule` path's
//!   kernel time per `schedule()` call and the policy's own pick counters — never host time.
//!   Each policy's work is counted per operation, as the kernel does it: O(1)'s enqueue and
//!   dequeue are one list operation each and its pick reads the bitmap; CFS v5.15 picks its
//!   cached leftmost entity (`rb_first_cached`: one step) but its enqueue compares the
//!   entity with one node per tree level (`rb_add_cached`: O(log n)), and its erase only
//!   relinks subtrees (`rb_erase_cached`, no search); EEVDF's pick takes the leftmost
//!   entity when it is eligible and otherwise descends the augmented tree (`pick_eevdf`).
//!   So the table shows where each scheduler's cost lives. The columns count structure
//!   work; the cost model charges a fixed cost per enqueue (only a pick's comparisons are
//!   charged as policy work), so `schedule ns per call` does not grow with the tree.
//! - `wakeup-scale`: hackbench over pipes under `o1` on 2, 4, 8 and 32 CPUs — cross-CPU
//!   wakeups take the target CPU's runqueue lock (`try_to_wake_up` has no wake list in 2.6),
//!   so contention and the wakeup path's time grow with the CPUs that wake each other.
//! - `interactive`: a task that sleeps 20 ms per 1 ms of work among four hogs on one CPU
//!   under `o1`, `cfs` and `ule`: wakeup-latency percentiles and CPU share.
//!
//! Parameters the talk does not give, chosen here: nice-19 hogs in `pick-scale` (a 5 ms
//! O(1) timeslice, so picks are frequent), hackbench with one group of 20 loops over pipes
//! (a wakeup per message) and four hogs for the interactive task. `--param` changes them.

use crate::suite::{Config, Experiment, Metric, Suite};
use schedlab_run::RunRecord;
use schedlab_sim::Ns;

pub const DESCRIPTION: &str =
    "Linux 2.6 O(1) bottlenecks: pick work vs runnable tasks, cross-CPU wakeups vs CPUs, an interactive task among hogs";

const PICK_SCALE: &str = include_str!("../../../../examples/studies/o1-bottlenecks/pick-scale.toml");
const INTERACTIVE: &str = include_str!("../../../../examples/studies/o1-bottlenecks/interactive.toml");
const HACKBENCH: &str = include_str!("../../../../examples/workloads/hackbench.toml");

/// Kernel time on path `path`, summed over CPUs.
fn path_ns(r: &RunRecord, path: &str) -> u64 {
    r.cpus.iter().flat_map(|c| c.kernel_paths.iter()).filter(|(p, _)| p == path).map(|(_, ns)| ns).sum()
}

/// Runqueue-lock statistics summed over every runqueue at call site `site` (all sites for
/// ""; exact, so `schedule` does not take in `scheduler_tick`).
fn rq(r: &RunRecord, site: &str, f: fn(&schedlab_metrics::LockRecord) -> u64) -> u64 {
    r.locks.iter().filter(|l| l.lock.starts_with("rq[") && (site.is_empty() || l.site == site)).map(f).sum()
}

fn ratio(num: u64, den: u64) -> String {
    if den == 0 {
        "-".into()
    } else {
        format!("{:.2}", num as f64 / den as f64)
    }
}

/// The tasks called `name`, or `name.0`, `name.1`, … for a `count` set.
fn task<'a>(r: &'a RunRecord, name: &str) -> impl Iterator<Item = &'a schedlab_metrics::TaskRecord> {
    let (name, prefix) = (name.to_string(), format!("{name}."));
    r.tasks.iter().filter(move |t| t.name == name || t.name.starts_with(&prefix))
}

fn share(r: &RunRecord, name: &str) -> String {
    let run: u64 = task(r, name).map(|t| t.runtime_ns).sum();
    format!("{:.2}", 100.0 * run as f64 / r.sim_ns.max(1) as f64)
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e3)
}

/// The policy's count of an operation: O(1)'s counter `o1`, else the fair class's `fair`;
/// with the count itself.
fn per_op(r: &RunRecord, o1: &str, fair: &str) -> (String, u64) {
    let n = r.policy_counters.get(o1).or_else(|| r.policy_counters.get(fair)).copied();
    n.map_or_else(|| ("-".into(), 0), |n| (n.to_string(), n))
}

/// Work per pick: O(1)'s bitmap words read (`sched_find_first_bit`), the fair class's tree
/// steps (CFS: 1, the cached leftmost; EEVDF: the entities its descent compared).
fn pick_work(r: &RunRecord) -> String {
    let c = |k: &str| r.policy_counters.get(k).copied();
    match (c("pick_bitmap_words"), c("picks"), c("tree_pick_steps"), c("tree_picks")) {
        (Some(w), Some(p), _, _) => ratio(w, p),
        (_, _, Some(w), Some(p)) => ratio(w, p),
        _ => "-".into(),
    }
}

/// Work per enqueue or dequeue: one list operation for O(1) (`list_add_tail`/`list_del`
/// and a bitmap bit), the tree's counted work for the fair class (an insertion's key
/// comparisons on its way down, an erase's subtree relinks).
fn queue_work(r: &RunRecord, o1: &str, fair_ops: &str, fair_work: &str) -> String {
    let c = |k: &str| r.policy_counters.get(k).copied();
    match (c(o1), c(fair_ops), c(fair_work)) {
        (Some(n), _, _) => ratio(n, n),
        (_, Some(n), Some(w)) => ratio(w, n),
        _ => "-".into(),
    }
}

fn pick_scale() -> Experiment {
    let mut configs = Vec::new();
    for n in ["10", "10000"] {
        for (label, sched) in [("o1", "o1"), ("cfs", "cfs"), ("eevdf", "eevdf")] {
            configs.push(Config::new(&format!("{label} n={n}"), sched).param("n", n));
        }
    }
    Experiment {
        name: "pick-scale",
        title: "n nice-19 hogs on one CPU: kernel work per pick, enqueue and dequeue, n = 10 and 10 000",
        workload: PICK_SCALE,
        machine: "up",
        duration: Ns::from_secs(2),
        configs,
        derived: Vec::new(),
        metrics: vec![
            Metric { name: "schedule() calls", value: |r| rq(r, "schedule", |l| l.acquisitions).to_string() },
            Metric {
                name: "schedule ns per call",
                value: |r| ratio(path_ns(r, "schedule"), rq(r, "schedule", |l| l.acquisitions)),
            },
            Metric { name: "picks", value: |r| per_op(r, "picks", "tree_picks").0 },
            Metric { name: "pick work per pick", value: |r| pick_work(r) },
            Metric { name: "enqueues", value: |r| per_op(r, "enqueues", "tree_inserts").0 },
            Metric {
                name: "enqueue work per op",
                value: |r| queue_work(r, "enqueues", "tree_inserts", "tree_insert_compares"),
            },
            Metric { name: "dequeues", value: |r| per_op(r, "dequeues", "tree_erases").0 },
            Metric {
                name: "dequeue work per op",
                value: |r| queue_work(r, "dequeues", "tree_erases", "tree_erase_relinks"),
            },
        ],
    }
}

fn wakeup_scale(name: &'static str, title: &'static str, machine: &'static str) -> Experiment {
    let c = Config::new("o1", "o1").param("groups", "1").param("loops", "20").param("transport", "pipe");
    Experiment {
        name,
        title,
        workload: HACKBENCH,
        machine,
        duration: Ns::from_secs(10),
        configs: vec![c],
        derived: Vec::new(),
        metrics: vec![
            Metric {
                name: "completion ms",
                value: |r| {
                    let main = task(r, "main").next();
                    main.and_then(|t| t.exit_ns).map_or("-".into(), |e| format!("{:.2}", e as f64 / 1e6))
                },
            },
            Metric { name: "wakeups", value: |r| r.tasks.iter().map(|t| t.wakeups).sum::<u64>().to_string() },
            Metric {
                name: "try_to_wake_up rq locks",
                value: |r| rq(r, "try_to_wake_up", |l| l.acquisitions).to_string(),
            },
            Metric {
                name: "try_to_wake_up contended",
                value: |r| rq(r, "try_to_wake_up", |l| l.contended).to_string(),
            },
            Metric {
                name: "ttwu contended %",
                value: |r| {
                    let (c, a) =
                        (rq(r, "try_to_wake_up", |l| l.contended), rq(r, "try_to_wake_up", |l| l.acquisitions));
                    ratio(100 * c, a)
                },
            },
            Metric { name: "rq spin us", value: |r| us(rq(r, "", |l| l.spin_ns)) },
            Metric {
                name: "wakeup ns per wakeup",
                value: |r| ratio(path_ns(r, "wakeup"), r.tasks.iter().map(|t| t.wakeups).sum()),
            },
            Metric { name: "migrations", value: |r| r.tasks.iter().map(|t| t.migrations).sum::<u64>().to_string() },
        ],
    }
}

/// A wakeup-latency statistic of the interactive task.
fn lat(r: &RunRecord, f: fn(&schedlab_metrics::Latency) -> u64) -> String {
    task(r, "interactive").next().map_or("-".into(), |t| us(f(&t.wakeup_latency_ns)))
}

fn interactive() -> Experiment {
    Experiment {
        name: "interactive",
        title: "1 ms of work per 20 ms asleep, among four hogs on one CPU: latency and share",
        workload: INTERACTIVE,
        machine: "up",
        duration: Ns::from_secs(5),
        configs: vec![Config::new("o1", "o1"), Config::new("cfs", "cfs"), Config::new("ule", "ule")],
        derived: Vec::new(),
        metrics: vec![
            Metric { name: "wakeups", value: |r| task(r, "interactive").map(|t| t.wakeups).sum::<u64>().to_string() },
            Metric { name: "lat p50 µs", value: |r| lat(r, |l| l.p50) },
            Metric { name: "lat p99 µs", value: |r| lat(r, |l| l.p99) },
            Metric { name: "lat max µs", value: |r| lat(r, |l| l.max) },
            Metric { name: "interactive CPU %", value: |r| share(r, "interactive") },
            Metric { name: "hogs CPU %", value: |r| share(r, "hog") },
        ],
    }
}

pub fn suite() -> Suite {
    Suite {
        name: "o1-bottlenecks",
        description: DESCRIPTION,
        experiments: vec![
            pick_scale(),
            wakeup_scale("wakeup-2", "hackbench over pipes under o1 on 2 CPUs", "smp2"),
            wakeup_scale("wakeup-4", "the same on 4 CPUs", "smp4"),
            wakeup_scale("wakeup-8", "the same on 8 CPUs", "smp8"),
            wakeup_scale("wakeup-32", "the same on 32 CPUs (2 NUMA nodes)", "opteron-32"),
            interactive(),
        ],
        scaled: None,
    }
}
