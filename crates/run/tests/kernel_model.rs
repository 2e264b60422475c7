//! Kernel-model behaviour: invariants, determinism, contention, probes, limits.

mod common;
use common::*;
use schedlab_probe::{EndReason, NoProbe};
use schedlab_run::{deterministic_json, RunSpec};
use schedlab_sim::Ns;

fn example(name: &str, params: &[(&str, &str)], secs: u64) -> RunSpec {
    let path = format!("{}/../../examples/workloads/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let params: Vec<(String, String)> = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let mut j = RunSpec::load(name, &text, None, &params, Some(Ns::from_secs(secs))).unwrap();
    j.check = true;
    j
}

type Example = (&'static str, &'static [(&'static str, &'static str)], u64);
const EXAMPLES: &[Example] = &[
    ("nice-pair.toml", &[], 2),
    ("four-hogs.toml", &[], 2),
    ("cpu-io-mix.toml", &[("loops", "100")], 2),
    ("hackbench.toml", &[("groups", "2"), ("loops", "10")], 5),
    ("periodic-200.toml", &[], 1),
    ("sleep-loop.toml", &[("loops", "100")], 1),
    ("fibo-sysbench.toml", &[("threads", "16"), ("requests", "20")], 9),
];

/// Every example runs twice under every scheduler with invariants checked after every
/// event, and the JSON (without `host`) is byte-identical.
#[test]
fn examples_are_deterministic_and_keep_invariants() {
    for (name, params, secs) in EXAMPLES {
        for sched in ["cfs", "fifo"] {
            let mut j = example(name, params, *secs);
            j.sched = sched.into();
            let a = deterministic_json(&run(&j));
            let b = deterministic_json(&run(&j));
            assert_eq!(a, b, "{name} under {sched} differs between two runs");
        }
    }
}

/// A different seed changes a workload with random durations.
#[test]
fn seed_matters_for_random_workloads() {
    let mut j = example("fibo-sysbench.toml", &[("threads", "8"), ("requests", "10")], 9);
    let a = run(&j).trace_hash;
    j.seed = 2;
    assert_ne!(a, run(&j).trace_hash);
}

/// Metrics observe only: the trace hash with metrics equals the hash with no probe.
#[test]
fn probes_do_not_change_results() {
    let j = example("hackbench.toml", &[("groups", "2"), ("loops", "10")], 5);
    let with = u64::from_str_radix(&run(&j).trace_hash, 16).unwrap();
    let without = run_with_probe(&j, &mut NoProbe);
    assert_eq!(with, without);
}

/// hackbench on the i7-3770 contends on runqueue locks (Zhang, Gu, Su: "Research on decreasing lock contention for Linux scheduler", 2017).
#[test]
fn hackbench_contends_on_runqueue_locks() {
    let j = example("hackbench.toml", &[("groups", "4"), ("loops", "20")], 5);
    let r = run(&j);
    let contended: u64 = r.locks.iter().filter(|l| l.lock.starts_with("rq")).map(|l| l.contended).sum();
    assert!(contended > 0, "no contended rq lock acquisitions");
    assert_eq!(r.end_reason, EndReason::AllExited);
    // Every message was delivered: each receiver ran and exited.
    assert!(r.tasks.iter().filter(|t| t.name.starts_with("receiver")).all(|t| t.exit_ns.is_some()));
    let spin: u64 = r.cpus.iter().map(|c| c.spin_ns).sum();
    let spun: u64 = r.locks.iter().map(|l| l.spin_ns).sum();
    assert_eq!(spin, spun, "CPU spin time equals the lock spin time");
}

/// Per-CPU time is conserved and matches the elapsed time, and a run without TTWU_QUEUE
/// makes remote wakeups lock the target runqueue instead of using the wake list.
#[test]
fn ttwu_queue_switch_changes_the_wakeup_path() {
    let mut j = example("hackbench.toml", &[("groups", "2"), ("loops", "10")], 5);
    let r = run(&j);
    let pending = |r: &schedlab_metrics::RunRecord| {
        r.locks.iter().filter(|l| l.site == "sched_ttwu_pending").map(|l| l.acquisitions).sum::<u64>()
    };
    assert!(pending(&r) > 0);
    for c in &r.cpus {
        assert_eq!(c.user_ns + c.kernel_ns + c.spin_ns + c.idle_ns, r.sim_ns);
    }
    j.kernel.ttwu_queue = false;
    assert_eq!(pending(&run(&j)), 0);
}

/// Mutexes, condition variables and barriers: everyone finishes, nobody is lost.
#[test]
fn synchronisation_objects_complete() {
    let text = r#"
[[mutex]]
name = "m"
[[cond]]
name = "c"
[[barrier]]
name = "b"
parties = 4
[[task]]
name = "w"
count = 4
program = [
  { loop = 50, do = [ { lock = "m" }, { run = "50us" }, { unlock = "m" }, { barrier = "b" }, { run = "10us" } ] },
]
[[task]]
name = "waiter"
program = [ { lock = "m" }, { cond_wait = "c", mutex = "m" }, { unlock = "m" } ]
[[task]]
name = "signaller"
program = [ { sleep = "5ms" }, { lock = "m" }, { signal = "c" }, { unlock = "m" } ]
"#;
    for machine in ["up", "smp4", "i7-3770"] {
        for sched in ["cfs", "fifo"] {
            let r = run(&job(text, machine, sched, 5, &[]));
            assert_eq!(r.end_reason, EndReason::AllExited, "{machine}/{sched}");
            let w = task(&r, "w.0");
            // 50 iterations × 60 us of work each.
            assert!(w.runtime_ns >= 3_000_000, "{machine}/{sched}: {}", w.runtime_ns);
        }
    }
}

/// Fork/wait/exit, nice and affinity changes at run time.
#[test]
fn fork_wait_and_runtime_changes() {
    let text = r#"
[[task]]
name = "parent"
program = [ { fork = "kid", count = 3 }, "wait", { run = "1ms" } ]
[[task]]
name = "kid"
template = true
program = [ { run = "2ms" }, { set_nice = 10 }, { set_affinity = "1" }, { run = "2ms" }, "yield", { run = "1ms" } ]
"#;
    let r = run(&job(text, "smp2", "cfs", 1, &[]));
    assert_eq!(r.end_reason, EndReason::AllExited);
    let parent = task(&r, "parent");
    let last_kid = r.tasks.iter().filter(|t| t.name.starts_with("kid")).map(|t| t.exit_ns.unwrap()).max().unwrap();
    assert!(parent.exit_ns.unwrap() >= last_kid + 1_000_000, "parent waited for its children");
    assert!(r.tasks.iter().filter(|t| t.name.starts_with("kid")).all(|t| t.nice == 10));
}

/// Limits are checked up front with a clear error.
#[test]
fn limits_are_checked() {
    let text = "[[task]]\nname = \"x\"\ncount = 2000000\nprogram = [ { run = \"1ms\" } ]\n";
    let Err(e) = RunSpec::load("big.toml", text, Some("up"), &[], None) else { panic!("accepted") };
    assert!(e.to_string().contains("1000000"), "{e}");
    let Err(e) = RunSpec::load(
        "t.toml",
        "[[task]]\nname=\"x\"\nprogram=[{run=\"1ms\"}]\n",
        Some("up"),
        &[],
        Some(Ns::from_secs(100_000)),
    ) else {
        panic!("accepted")
    };
    assert!(e.to_string().contains("exceeds the limit"), "{e}");
}

/// Sampling time series reads the kernel and the policy but changes nothing: same trace
/// hash and the same metrics with recording on or off, under every policy.
#[test]
fn recording_series_changes_nothing() {
    for sched in ["cfs", "ule", "fifo"] {
        let mut j = example("cpu-io-mix.toml", &[("loops", "100")], 2);
        j.sched = sched.into();
        let off = run(&j);
        j.sample = Some(Ns::from_us(250));
        let on = run(&j);
        assert_eq!(off.trace_hash, on.trace_hash, "{sched}");
        let mut on_json: serde_json::Value = serde_json::from_str(&deterministic_json(&on)).unwrap();
        let s = on_json.as_object_mut().unwrap().remove("series").expect("series recorded");
        assert!(s["times_ns"].as_array().unwrap().len() >= 8000);
        assert_eq!(serde_json::to_string_pretty(&on_json).unwrap(), deterministic_json(&off), "{sched}");
        // The last sample of each task's run time is at most its total.
        let series = on.series.as_ref().unwrap();
        for t in &on.tasks {
            let last = series.runtime_at(t.tid, series.times_ns.len() - 1);
            assert!(last <= t.runtime_ns, "{sched} {}: {last} > {}", t.name, t.runtime_ns);
        }
    }
}

/// `fs/pipe.c` (v6.18): writers wait on a full pipe exclusively, so a read from a full pipe
/// wakes one writer, and a woken writer that leaves room wakes the next one. Three writers
/// of a page each on a one-page pipe (one slot), a reader that reads them one by one after
/// 10 ms: each blocked writer is woken exactly once (waking them all on every read, the
/// second would wake, find the pipe full again and block a second time).
#[test]
fn a_read_from_a_full_pipe_wakes_one_writer() {
    let text = r#"
[[pipe]]
name = "p"
capacity = 4096
[[task]]
name = "writer"
count = 3
program = [ { send = "p", bytes = 4096 } ]
[[task]]
name = "reader"
program = [ { sleep = "10ms" }, { loop = 3, do = [ { recv = "p", bytes = 4096 }, { run = "1ms" } ] } ]
"#;
    for sched in ["eevdf", "cfs"] {
        let r = run(&job(text, "smp2", sched, 1, &[]));
        let writers: Vec<_> = r.tasks.iter().filter(|t| t.name.starts_with("writer")).collect();
        assert!(writers.iter().all(|t| t.exit_ns.is_some()), "{sched}: every writer finished");
        let woken: Vec<u64> = writers.iter().map(|t| t.wakeups).collect();
        assert_eq!(woken.iter().sum::<u64>(), 2, "{sched}: two writers found the pipe full: {woken:?}");
        assert!(woken.iter().all(|&w| w <= 1), "{sched}: no writer is woken twice: {woken:?}");
    }
}
