//! What the kernel sources (`kernel/sched/fair.c`, `pelt.c`, v5.15) predict for CFS,
//! checked on the simulator.

mod common;
use common::*;
use schedlab_sim::Ns;

/// §9.1: two hogs pinned to one CPU share it in the ratio of their weights.
#[test]
fn nice_shares_match_weight_ratio() {
    for (nice, weight) in [(5, 335u64), (10, 110), (19, 15), (-5, 3121)] {
        let text = hog("a", 0, 0) + &hog("b", nice, 0);
        let r = run(&job(&text, "smp2", "cfs", 10, &[]));
        let (a, b) = (task(&r, "a").runtime_ns as f64, task(&r, "b").runtime_ns as f64);
        let expected = 1024.0 / (1024.0 + weight as f64);
        let got = a / (a + b);
        assert!((got - expected).abs() < 0.005, "nice {nice}: share {got:.4}, expected {expected:.4}");
    }
}

/// §9.4: two hogs on one CPU of an 8-CPU machine (latency 24 ms, slice 12 ms) run in
/// 16 ms bursts at HZ=250; on a 1-CPU machine (slice 3 ms) they switch every tick.
#[test]
fn slice_bursts_follow_the_tick() {
    for (machine, burst) in [("smp8", 16), ("up", 4)] {
        let text = hog("a", 0, 0) + &hog("b", 0, 0);
        let j = job(&text, machine, "cfs", 2, &[]);
        let mut sw = Switches::default();
        run_with_probe(&j, &mut sw);
        let b = bursts(&sw, 0, 0);
        assert!(b.len() > 20, "{machine}: {} bursts", b.len());
        // The first burst starts mid-tick; every later one is tick-aligned.
        for d in &b[2..] {
            let ms = (d.0 + 500_000) / 1_000_000;
            assert_eq!(ms, burst, "{machine}: burst of {d}");
        }
    }
}

/// §9.5: ten hogs on one CPU (factor 4): period 30 ms, slice 3 ms ⇒ 4 ms bursts.
#[test]
fn ten_hogs_get_one_tick_each() {
    let text: String = (0..10).map(|i| hog(&format!("h{i}"), 0, 0)).collect();
    let j = job(&text, "smp8", "cfs", 1, &[]);
    let mut sw = Switches::default();
    run_with_probe(&j, &mut sw);
    for d in &bursts(&sw, 0, 3)[1..] {
        assert_eq!((d.0 + 500_000) / 1_000_000, 4, "burst {d}");
    }
}

/// §9.6: a 1 ms-run / 9 ms-sleep task gets sleeper credit and preempts a hog at every
/// wakeup: its wakeup latency stays at the kernel-path cost (microseconds).
#[test]
fn sleeper_credit_preempts_on_every_wakeup() {
    let text = hog("hog", 0, 0) + &sleeper("io", 0, 0, "1ms", "9ms");
    let r = run(&job(&text, "smp8", "cfs", 5, &[]));
    let io = task(&r, "io");
    assert!(io.wakeups > 400, "{} wakeups", io.wakeups);
    assert!(io.wakeup_latency_ns.max < 50_000, "max wakeup latency {} ns", io.wakeup_latency_ns.max);
    // It gets its full 10 %.
    let share = io.runtime_ns as f64 / r.sim_ns as f64;
    assert!((share - 0.1).abs() < 0.01, "share {share}");
}

/// §9.7: a wakee whose lead is within `wakeup_gran` does not preempt; it waits for the
/// running task's slice to end at a tick. A long sleeper is placed exactly latency/2 = 12 ms
/// behind the hog (factor 4), so the boundary sits between 11 ms and 13 ms of granularity.
#[test]
fn lead_within_wakeup_gran_does_not_preempt() {
    let text = hog("hog", 0, 0) + &sleeper("io", 0, 0, "1ms", "9ms");
    let p50 = |gran: &str| {
        let r = run(&job(&text, "smp8", "cfs", 3, &[("sched_wakeup_granularity_ns", gran)]));
        task(&r, "io").wakeup_latency_ns.p50
    };
    assert!(p50("11ms") < 50_000, "a 12 ms lead beats an 11 ms granularity");
    assert!(p50("13ms") > 1_000_000, "a 12 ms lead within a 13 ms granularity must wait for the tick");
}

/// §9.8: wakeup granularity scales with the wakee's weight: a nice-19 sleeper needs a
/// 273 ms lead and never preempts; a nice −10 sleeper needs 0.43 ms and always does.
#[test]
fn wakeup_granularity_scales_with_wakee_weight() {
    let light = hog("hog", 0, 0) + &sleeper("io", 19, 0, "1ms", "9ms");
    let r = run(&job(&light, "smp8", "cfs", 3, &[]));
    assert!(task(&r, "io").wakeup_latency_ns.p50 > 1_000_000, "nice 19 preempted");
    let heavy = hog("hog", 0, 0) + &sleeper("io", -10, 0, "1ms", "9ms");
    let r = run(&job(&heavy, "smp8", "cfs", 3, &[]));
    assert!(task(&r, "io").wakeup_latency_ns.max < 50_000, "nice -10 did not preempt");
}

/// §9.9: with START_DEBIT the forked child does not preempt its parent; with
/// `sched_child_runs_first` it runs first.
#[test]
fn child_runs_first_swaps_parent_and_child() {
    let text = "[[task]]\nname = \"parent\"\naffinity = [0]\nprogram = [ { fork = \"child\" }, { run = \"20ms\" } ]\n\
                [[task]]\nname = \"child\"\ntemplate = true\nprogram = [ { run = \"20ms\" } ]\n";
    let first_child_run = |sets: &[(&str, &str)]| {
        let j = job(text, "up", "cfs", 1, sets);
        let mut sw = Switches::default();
        run_with_probe(&j, &mut sw);
        sw.0.iter().find(|e| e.3 == Some(1)).map(|e| e.0).unwrap()
    };
    assert!(first_child_run(&[]) > Ns::from_ms(2), "child ran before the parent's slice ended");
    assert!(first_child_run(&[("sched_child_runs_first", "1")]) < Ns::from_us(100));
}

/// The latency tunables change the slice as `sched_slice` says (the "verifying CFS on a real system" student report on Linux 5.15, experiment II).
#[test]
fn latency_tunable_changes_switch_rate() {
    let text: String = (0..4).map(|i| hog(&format!("h{i}"), 0, 0)).collect();
    let switches = |sets: &[(&str, &str)]| {
        let r = run(&job(&text, "smp8", "cfs", 2, sets));
        r.tasks.iter().map(|t| t.switches_involuntary).sum::<u64>()
    };
    let default = switches(&[]); // 24 ms / 4 = 6 ms slices → 8 ms bursts
    let long = switches(&[("sched_latency_ns", "120ms")]); // 30 ms slices → 32 ms bursts
    assert!(default > 3 * long, "default {default}, long {long}");
}
