//! The cost model beyond constant path costs: SMT siblings sharing a core's throughput,
//! cache-line transfers, policy work charged per unit, and kernel time by path.
//! Every run checks the invariants after every event, kernel time by path included.

mod common;
use common::*;
use schedlab_metrics::RunRecord;

fn pinned_run(name: &str, cpu: usize, work: &str) -> String {
    format!("[[task]]\nname = \"{name}\"\naffinity = [{cpu}]\nprogram = [ {{ run = \"{work}\" }} ]\n")
}

fn exit_ms(r: &RunRecord, name: &str) -> f64 {
    task(r, name).exit_ns.expect("the task exits") as f64 / 1e6
}

/// The SMT arithmetic on the constant-cost machine: under the full model the i7-3770's
/// schedutil governor and idle states would add their own (tested in
/// `crates/kernel/tests/idle_freq.rs`).
fn flat(mut j: schedlab_run::RunSpec) -> schedlab_run::RunSpec {
    j.set("machine.cost_model", "flat").unwrap();
    j
}

fn smt_factor() -> u32 {
    schedlab_machine::preset("i7-3770").unwrap().costs.smt_factor
}

/// Two 100 ms hogs on sibling threads (CPUs 0 and 4 of the i7-3770) each progress at the
/// machine's factor and take 100 ms / factor; on two cores (0 and 1) they take 100 ms.
#[test]
fn smt_siblings_share_a_core() {
    let full = 100.0 * 1000.0 / f64::from(smt_factor());
    assert!(smt_factor() < 1000);
    for sched in ["eevdf", "cfs", "ule"] {
        let text = pinned_run("a", 0, "100ms") + &pinned_run("b", 4, "100ms");
        let r = run(&flat(job(&text, "i7-3770", sched, 1, &[])));
        for t in ["a", "b"] {
            let e = exit_ms(&r, t);
            assert!((full..full + 0.5).contains(&e), "{sched}: {t} on siblings exited at {e} ms, not ~{full}");
        }
        let text = pinned_run("a", 0, "100ms") + &pinned_run("b", 1, "100ms");
        let r = run(&flat(job(&text, "i7-3770", sched, 1, &[])));
        for t in ["a", "b"] {
            let e = exit_ms(&r, t);
            assert!((100.0..100.5).contains(&e), "{sched}: {t} on separate cores exited at {e} ms");
        }
    }
}

/// The work in progress is re-timed when a sibling stops: `b` (50 ms) finishes after
/// 50 / factor ms; `a` has done 50 ms of its 100 by then and runs the rest at full speed.
#[test]
fn a_sibling_stopping_speeds_the_other_up() {
    let f = f64::from(smt_factor()) / 1000.0;
    let text = pinned_run("a", 0, "100ms") + &pinned_run("b", 4, "50ms");
    let r = run(&flat(job(&text, "i7-3770", "eevdf", 1, &[])));
    let (a, b) = (exit_ms(&r, "a"), exit_ms(&r, "b"));
    assert!((50.0 / f..50.0 / f + 0.5).contains(&b), "b exited at {b} ms");
    let a_expected = 50.0 / f + 50.0;
    assert!((a_expected..a_expected + 0.5).contains(&a), "a exited at {a} ms, expected ~{a_expected}");
    // Same inputs, same bytes.
    let again = run(&flat(job(&text, "i7-3770", "eevdf", 1, &[])));
    assert_eq!(again.trace_hash, r.trace_hash);
}

/// Kernel time of CPU 0 spent on `path`s.
fn path_ns(r: &RunRecord, cpu: usize, paths: &[&str]) -> u64 {
    r.cpus[cpu].kernel_paths.iter().filter(|(k, _)| paths.contains(&k.as_str())).map(|(_, v)| v).sum()
}

/// Kernel paths slow down the same way: the 300 `sched_yield` syscalls on CPU 0 take
/// 1 / factor times the kernel time while a hog runs on its sibling, and the same time
/// with the hog on another core.
#[test]
fn kernel_paths_slow_down_on_a_busy_sibling() {
    let yields = "[[task]]\nname = \"y\"\naffinity = [0]\nprogram = [ { loop = 300, do = [ \"yield\" ] } ]\n";
    let hog_on = |cpu: usize| format!("{yields}{}", hog("hog", 0, cpu));
    let paths = ["sched_syscall"];
    let kernel = |text: &str| path_ns(&run(&job(text, "i7-3770", "eevdf", 1, &[])), 0, &paths) as f64;
    let alone = kernel(yields);
    let sibling = kernel(&hog_on(4));
    let other_core = kernel(&hog_on(1));
    let expected = 1000.0 / f64::from(smt_factor());
    assert!((sibling / alone - expected).abs() < 0.01, "sibling busy: {sibling} vs {alone} ns");
    assert!((other_core / alone - 1.0).abs() < 0.01, "other core busy: {other_core} vs {alone} ns");
    // The smpN presets have no SMT: a hog elsewhere changes nothing.
    let smp = |text: &str| path_ns(&run(&job(text, "smp8", "eevdf", 1, &[])), 0, &paths);
    assert_eq!(smp(yields), smp(&hog_on(4)));
}

/// A writer pinned to CPU 0 wakes an unpinned reader through a pipe every 20 ms, long
/// enough for the reader's cache affinity to lapse, so every wakeup searches for a CPU.
fn waker_reader() -> String {
    r#"
[[pipe]]
name = "p"
[[task]]
name = "w"
affinity = [0]
program = [ { loop = 10, do = [ { run = "20ms" }, { send = "p", bytes = 1 } ] } ]
[[task]]
name = "r"
program = [ { loop = 10, do = [ { recv = "p", bytes = 1 }, { run = "100us" } ] } ]
"#
    .to_string()
}

/// Kernel time in `paths` over all CPUs, per wakeup of `r`.
fn per_wakeup(r: &RunRecord, paths: &[&str]) -> u64 {
    let total: u64 = (0..r.cpus.len()).map(|c| path_ns(r, c, paths)).sum();
    total / task(r, "r").wakeups.max(1)
}

/// Policy work is charged: the same wakeup costs ULE more placement time on `opteron-32`
/// (its `sched_pickcpu` searches 32 CPUs in 7 groups) than on `smp2` (2 CPUs, 1 group).
#[test]
fn ule_placement_costs_more_on_more_cpus() {
    let small = run(&job(&waker_reader(), "smp2", "ule", 1, &[]));
    let big = run(&job(&waker_reader(), "opteron-32", "ule", 1, &[]));
    assert_eq!(task(&small, "r").wakeups, 10);
    assert_eq!(task(&big, "r").wakeups, 10);
    let (s, b) = (per_wakeup(&small, &["placement"]), per_wakeup(&big, &["placement"]));
    assert!(s > 0, "ULE's search on smp2 reports work");
    let costs = schedlab_machine::preset("opteron-32").unwrap().costs;
    // At least one search of the whole machine more than on smp2.
    assert!(b >= s + 30 * costs.work_cpu.0, "opteron-32 {b} ns vs smp2 {s} ns per wakeup");
    let both = ["placement", "wakeup"];
    assert!(per_wakeup(&big, &both) > per_wakeup(&small, &both));
}

/// With every per-unit cost zero, policy work costs nothing: the placement path is empty
/// (the constant-cost machine: under `full` a read is priced by distance instead).
#[test]
fn zero_unit_costs_charge_nothing() {
    let mut j = job(&waker_reader(), "opteron-32", "ule", 1, &[]);
    let mut m = (*j.machine).clone();
    m.set_cost_model(schedlab_machine::CostModel::Flat);
    for k in ["work_compare", "work_cpu", "work_group", "work_task"] {
        m.costs.set(k, "0ns").unwrap();
    }
    j.machine = std::sync::Arc::new(m);
    assert_eq!(per_wakeup(&run(&j), &["placement", "balance"]), 0);
}

/// A runqueue lock last held by another CPU costs a line transfer: the same remote wakeups
/// take more kernel time with the transfer costs than without (the constant-cost machine's
/// `line_*`; under `full` the `[lines]` table's, `crates/kernel/tests/costs.rs`).
#[test]
fn lock_line_transfers_cost_kernel_time() {
    let text = waker_reader();
    // Without the wake list the waker locks the wakee's runqueue, last held by the wakee.
    let mut j = job(&text, "smp2", "cfs", 1, &[]);
    j.kernel.ttwu_queue = false;
    let mut m = (*j.machine).clone();
    m.set_cost_model(schedlab_machine::CostModel::Flat);
    j.machine = std::sync::Arc::new(m.clone());
    let with = run(&j);
    for k in ["line_same_llc", "line_cross_llc", "line_cross_node"] {
        m.costs.set(k, "0ns").unwrap();
    }
    j.machine = std::sync::Arc::new(m);
    let without = run(&j);
    let k = |r: &RunRecord| r.cpus.iter().map(|c| c.kernel_ns).sum::<u64>();
    assert!(k(&with) > k(&without), "{} vs {}", k(&with), k(&without));
}

/// Kernel time by path sums to each CPU's kernel time, in the record as in `--check`.
#[test]
fn kernel_time_by_path_sums_to_kernel_time() {
    let text = waker_reader() + &hog("h", 0, 1) + &pinned_run("a", 1, "30ms");
    for (machine, sched) in [("i7-3770", "eevdf"), ("opteron-32", "ule"), ("smp4", "cfs")] {
        let r = run(&job(&text, machine, sched, 1, &[]));
        for c in &r.cpus {
            assert_eq!(c.kernel_paths.len(), schedlab_machine::KernelPath::ALL.len());
            let sum: u64 = c.kernel_paths.iter().map(|(_, v)| v).sum();
            assert_eq!(sum, c.kernel_ns, "{machine} {sched} CPU {}", c.cpu);
        }
        assert!(r.cpus.iter().any(|c| c.kernel_ns > 0));
    }
}

/// The record carries each task's and CPU's charges: a task moved from CPU 0 to CPU 16
/// of the opteron-32 (another node) has its refill filed as cold, then from another node;
/// the tasks' and the CPUs' charges sum to the kernel's counters; the lock statistics'
/// line time sums to the `line_ns.SITE` counters; the frequency and idle statistics cover
/// every CPU, time in states within the run; the JSON has the keys.
#[test]
fn the_record_says_who_paid_each_cost() {
    let text = "[[task]]\nname = \"t\"\naffinity = [0]\nworking_set = \"1MiB\"\n\
                program = [ { run = \"1ms\" }, { set_affinity = \"16\" }, { run = \"1ms\" } ]\n\
                [[task]]\nname = \"w\"\nprogram = [ { loop = 50, do = [ { run = \"50us\" }, { sleep = \"200us\" } ] } ]\n";
    let r = run(&job(text, "opteron-32", "cfs", 1, &[]));
    let counter = |k: &str| r.kernel.counters.iter().find(|(n, _)| n == k).map_or(0, |(_, v)| *v);
    let c = task(&r, "t").costs.expect("a simulated task has costs");
    assert!(c.refill.cold_ns > 0 && c.refill.other_node_ns > 0, "{c:?}");
    assert_eq!(c.refill.sum(), c.refill_ns);
    let tasks: u64 = r.tasks.iter().filter_map(|t| t.costs).map(|c| c.refill_ns).sum();
    let cpus: u64 = r.cpus.iter().filter_map(|c| c.costs).map(|c| c.refill_ns).sum();
    assert_eq!((tasks, cpus), (counter("refill_ns"), counter("refill_ns")));
    let lines: u64 = r.locks.iter().map(|l| l.line_ns).sum();
    let counted: u64 = r.kernel.counters.iter().filter(|(k, _)| k.starts_with("line_ns.")).map(|(_, v)| v).sum();
    assert_eq!(lines, counted);
    for cpu in &r.cpus {
        let f = cpu.freq.as_ref().expect("opteron-32 has cpufreq under the full model");
        assert_eq!(f.time_in_state.iter().map(|s| s.1).sum::<u64>(), r.sim_ns, "cpu {}", cpu.cpu);
        assert!(!cpu.idle_states.is_empty());
        assert!(cpu.idle_states.iter().map(|s| s.time_ns).sum::<u64>() <= cpu.idle_ns + cpu.kernel_ns);
    }
    let json = schedlab_metrics::RunRecord::clone(&r);
    let v: serde_json::Value = serde_json::to_value(&json).unwrap();
    for key in ["costs", "idle_states", "freq"] {
        assert!(v["cpus"][0].get(key).is_some(), "cpus[].{key}");
    }
    assert!(v["tasks"][0]["costs"]["refill"]["other_node_ns"].as_u64().unwrap() > 0);
}
