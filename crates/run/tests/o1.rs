//! The O(1) scheduler (`--sched o1`, Linux 2.6 `kernel/sched.c`) against what the source
//! predicts (reference behaviours 11–16 of the 2.6 specification), plus the core's
//! invariants and determinism under `o1`.

mod common;
use common::*;
use schedlab_metrics::RunRecord;
use schedlab_report::runtime_between;
use schedlab_run::{deterministic_json, RunSpec};
use schedlab_sim::Ns;

fn pinned_pair(nice: i32) -> String {
    format!("{}{}", hog("a", nice, 0), hog("b", nice, 0))
}

/// Bursts of task `name` on CPU 0 that started after `from`.
fn late_bursts(text: &str, secs: u64, name: &str, from: Ns) -> Vec<u64> {
    let j = job(text, "up", "o1", secs, &[]);
    let mut sw = Switches::default();
    run_with_probe(&j, &mut sw);
    let r = run(&j);
    let t = task(&r, name).tid;
    let starts: Vec<Ns> = sw.0.iter().filter(|e| e.3 == Some(t)).map(|e| e.0).collect();
    let all = bursts(&sw, 0, t);
    // `bursts` pairs each switch-in with the next switch-out, in order.
    starts.iter().zip(all).filter(|(s, _)| **s >= from).map(|(_, b)| b.0).collect()
}

fn stat_at(r: &RunRecord, name: &str, stat: &str, at_ns: u64) -> i64 {
    let s = r.series.as_ref().unwrap();
    let t = task(r, name).tid;
    s.stat(t, stat).into_iter().take_while(|&(time, _)| time <= at_ns).last().unwrap().1
}

/// Behaviour 11: two CPU hogs of equal nice alternate one full timeslice at a time, and the
/// timeslice depends on nice only: 800 ms at −20, 100 ms at 0, 5 ms at 19 (HZ = 1000).
/// Hogs start with a shell child's interactive credit, so only late bursts are compared.
#[test]
fn timeslices_by_nice_are_800_100_5_ms() {
    for (nice, ms, secs, from) in [(-20, 800, 24, 14), (0, 100, 8, 5), (19, 5, 3, 1)] {
        let b = late_bursts(&pinned_pair(nice), secs, "a", Ns::from_secs(from));
        assert!(b.len() >= 3, "nice {nice}: only {} late bursts", b.len());
        for x in &b[..b.len() - 1] {
            let got = *x as f64 / 1e6;
            assert!((got - ms as f64).abs() <= 1.0, "nice {nice}: burst {got} ms, expected {ms} ms: {b:?}");
        }
    }
}

/// Behaviour 11: a nice-0 and a nice-19 hog share one CPU about 100:5 per epoch.
#[test]
fn nice_0_and_19_share_100_to_5() {
    let text = format!("{}{}", hog("n0", 0, 0), hog("n19", 19, 0));
    let mut j = job(&text, "up", "o1", 12, &[]);
    j.sample = Some(Ns::from_ms(100));
    let r = run(&j);
    let (a, b) = (6_000_000_000, 12_000_000_000);
    let n0 = runtime_between(&r, task(&r, "n0").tid, a, b).unwrap() as f64;
    let n19 = runtime_between(&r, task(&r, "n19").tid, a, b).unwrap() as f64;
    let ratio = n0 / n19;
    assert!((17.0..=23.0).contains(&ratio), "n0 {n0} / n19 {n19} = {ratio:.2}, expected ~20");
}

/// Behaviour 12: the dynamic priority is static + 5 − bonus: a task that sleeps most of
/// the time reaches 115 and is interactive, a hog sinks to 125.
#[test]
fn a_sleeper_gets_a_better_dynamic_priority_than_a_hog() {
    let text = format!("{}{}", hog("hog", 0, 0), sleeper("sleeper", 0, 0, "1ms", "9ms"));
    let mut j = job(&text, "up", "o1", 6, &[]);
    j.sample = Some(Ns::from_ms(50));
    let r = run(&j);
    let at = 5_900_000_000;
    assert_eq!(stat_at(&r, "hog", "prio", at), 125);
    assert_eq!(stat_at(&r, "hog", "interactive", at), 0);
    assert!(stat_at(&r, "sleeper", "prio", at) <= 116, "sleeper prio {}", stat_at(&r, "sleeper", "prio", at));
    assert!(stat_at(&r, "sleeper", "bonus", at) >= 9);
    assert_eq!(stat_at(&r, "sleeper", "interactive", at), 1);
}

/// The array swap: non-interactive hogs go to the expired array at slice end, and the
/// arrays swap when the active one empties — every 10 ms for two nice-19 hogs.
#[test]
fn arrays_swap_once_per_epoch() {
    let r = run(&job(&pinned_pair(19), "up", "o1", 3, &[]));
    let swaps = r.policy_counters["array_swaps"];
    // Two 5 ms slices per epoch over ~3 s (the first second partly interactive-free too:
    // nice 19 is never interactive).
    assert!((280..=310).contains(&swaps), "{swaps} swaps in 3 s");
    assert_eq!(r.policy_counters["interactive_requeues"], 0, "nice 19 is never interactive");
}

/// Behaviour 13: an interactive task whose slice ends goes back to the active array, so a
/// batch task (always in the expired array) waits — until the oldest expired task has
/// waited STARVATION_LIMIT × nr_running (1 s × 2), when `expired_starving` sends the
/// interactive task to the expired array too and the arrays swap.
#[test]
fn interactive_requeueing_until_expired_starving() {
    let text = r#"
[[task]]
name = "inter"
nice = -5
affinity = [0]
program = [ { loop = "forever", do = [ { run = "100ms" } ] } ]

[[task]]
name = "batch"
policy = "batch"
affinity = [0]
program = [ { loop = "forever", do = [ { run = "100ms" } ] } ]
"#;
    let mut j = job(text, "up", "o1", 4, &[]);
    j.sample = Some(Ns::from_ms(10));
    let r = run(&j);
    let s = r.series.as_ref().unwrap();
    let batch = task(&r, "batch").tid;
    // The batch task sits in the expired array from the start; it leaves it at the swap.
    let swap = s.stat(batch, "expired").into_iter().skip(1).find(|&(_, v)| v == 0).map(|(t, _)| t);
    // First slice (half of 500 ms, the shell's split) ends at 250 ms: expired_timestamp.
    // Slices end every 500 ms; the first end with jiffies − 250 > 2000 is at 2750 ms, where
    // the interactive task goes to the expired array and the active one is empty.
    let t = swap.expect("the arrays never swapped");
    assert!((2_750_000_000..=2_770_000_000).contains(&t), "the batch task left the expired array at {t} ns");
    assert!(r.policy_counters["interactive_requeues"] >= 5, "{:?}", r.policy_counters);
    assert!(r.policy_counters["starving_expiries"] >= 1, "{:?}", r.policy_counters);
    assert_eq!(runtime_between(&r, batch, 0, 2_700_000_000), Some(0), "batch ran before the threshold");
}

/// Behaviour 14: `sched_yield` puts a task behind every task of the epoch (expired array).
#[test]
fn yield_goes_to_the_expired_array() {
    let text = r#"
[[task]]
name = "yielder"
affinity = [0]
program = [ { loop = "forever", do = [ { run = "1ms" }, "yield" ] } ]

[[task]]
name = "hog"
affinity = [0]
program = [ { loop = "forever", do = [ { run = "100ms" } ] } ]
"#;
    let r = run(&job(text, "up", "o1", 4, &[]));
    // The yielder gives the CPU to the hog for a whole slice each time it yields.
    let (y, h) = (task(&r, "yielder").runtime_ns, task(&r, "hog").runtime_ns);
    assert!(h > 20 * y, "hog {h} ns, yielder {y} ns");
}

/// Wakeup preemption by dynamic priority (`TASK_PREEMPTS_CURR`): a nice-0 sleeper (prio
/// ~115) preempts a hog (125) at once; a nice-19 sleeper (prio ≥ 134) never does and waits
/// for the hog's slice to end.
#[test]
fn wakeup_preemption_by_priority() {
    let lat = |nice: i32| {
        let text = format!("{}{}", hog("hog", 0, 0), sleeper("s", nice, 0, "1ms", "20ms"));
        let r = run(&job(&text, "up", "o1", 6, &[]));
        task(&r, "s").wakeup_latency_ns.clone()
    };
    let (better, worse) = (lat(0), lat(19));
    assert!(better.p90 < 100_000, "nice-0 sleeper waits {} ns (p90)", better.p90);
    assert!(worse.p50 > 5_000_000, "nice-19 sleeper waits only {} ns (p50)", worse.p50);
}

/// Behaviour 16: 8 hogs pinned to CPU 0 and unpinned at 1 s spread one per CPU: idle CPUs
/// pull within a few ms (idle `rebalance_tick`), nothing moves afterwards.
#[test]
fn balancing_spreads_hogs_over_cpus() {
    let mut j = job(&unpinned_hogs(8, "0-7"), "smp8", "o1", 3, &[]);
    j.sample = Some(Ns::from_ms(100));
    let r = run(&j);
    let s = r.series.as_ref().unwrap();
    let at = s.index_at(1_100_000_000).unwrap();
    let last = s.times_ns.len() - 1;
    for c in 0..8 {
        assert_eq!(
            s.cpu_runnable[c][at],
            1,
            "CPU {c} 100 ms after unpinning: {:?}",
            (0..8).map(|c| s.cpu_runnable[c][at]).collect::<Vec<_>>()
        );
        assert_eq!(s.cpu_runnable[c][last], 1);
    }
    let migr: u64 = r.tasks.iter().map(|t| t.migrations).sum();
    assert!(migr <= 8, "{migr} migrations: hogs moved back and forth");
}

/// Forked hogs start on the parent's CPU (no SD_BALANCE_FORK below the NUMA level) and are
/// pulled by idle CPUs; 3 hogs on 2 CPUs stay put (no 25 % imbalance worth one more CPU).
#[test]
fn forked_hogs_are_pulled_and_three_on_two_stay_put() {
    let text = r#"
[[task]]
name = "main"
program = [ { fork = "hog", count = 3 }, "wait" ]

[[task]]
name = "hog"
template = true
program = [ { loop = "forever", do = [ { run = "50ms" } ] } ]
"#;
    let r = run(&job(text, "smp2", "o1", 4, &[]));
    let hogs: Vec<_> = r.tasks.iter().filter(|t| t.name.starts_with("hog")).collect();
    let total: u64 = hogs.iter().map(|t| t.runtime_ns).sum();
    assert!(total > 7_800_000_000, "both CPUs busy: {total} ns of hog time in 4 s");
    let migr: u64 = hogs.iter().map(|t| t.migrations).sum();
    assert!(migr <= 3, "{migr} migrations");
}

/// Invariants after every event and determinism, for the examples on three machines.
#[test]
fn o1_keeps_invariants_and_is_deterministic() {
    for (name, params, secs) in [
        ("nice-pair.toml", vec![], 2),
        ("cpu-io-mix.toml", vec![("loops", "100")], 2),
        ("hackbench.toml", vec![("groups", "2"), ("loops", "10")], 5),
        ("fibo-sysbench.toml", vec![("threads", "16"), ("requests", "20")], 4),
    ] {
        let path = format!("{}/../../examples/workloads/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        let params: Vec<(String, String)> = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        for machine in ["up", "i7-3770", "opteron-32"] {
            let mut j = RunSpec::load(name, &text, Some(machine), &params, Some(Ns::from_secs(secs))).unwrap();
            j.sched = "o1".into();
            j.check = true;
            let a = deterministic_json(&run(&j));
            assert_eq!(a, deterministic_json(&run(&j)), "{name} on {machine}");
        }
    }
}
