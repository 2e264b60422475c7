//! The machine's noise (`docs/machine.md`, *Noise*): seeds differ with it on and not with it
//! off, a seed reproduces its run bit for bit, each source switched off contributes nothing,
//! and bad values are refused before a run starts.

use schedlab_metrics::RunRecord;
use schedlab_run::RunSpec;
use schedlab_sim::Ns;

/// No randomness of its own: with the noise off every seed runs alike.
const MIXED: &str = "[[pipe]]\nname = \"p\"\n[[task]]\nname = \"ping\"\ncount = 2\nprogram = [ { loop = 50, do = [ { run = \"300us\" }, { send = \"p\", bytes = 64 }, { sleep = \"200us\" } ] } ]\n[[task]]\nname = \"pong\"\nprogram = [ { loop = 100, do = [ { recv = \"p\", bytes = 64 }, { run = \"100us\" } ] } ]\n";

/// Only `run` ops: the op jitter is the one source that changes its CPU time.
const WORKER: &str =
    "[[task]]\nname = \"w\"\nprogram = [ { loop = 10, do = [ { run = \"1ms\" }, { sleep = \"1ms\" } ] } ]\n";

/// Tasks that start at 1 ms: the start offset is the one source that moves their start.
const LATE: &str =
    "[[task]]\nname = \"l\"\ncount = 6\nstart = \"1ms\"\nprogram = [ { run = \"100us\" }, { sleep = \"1ms\" } ]\n";

/// A lone sleeper: timer lateness is the one source that moves its wakeups.
const SLEEPER: &str = "[[task]]\nname = \"s\"\nprogram = [ { loop = 20, do = [ { sleep = \"1ms\" } ] } ]\n";

fn spec(text: &str, seed: u64, sets: &[(&str, &str)]) -> RunSpec {
    let mut s = RunSpec::load("noise.toml", text, Some("smp2"), &[], Some(Ns::from_secs(1))).unwrap();
    s.sched = "eevdf".into();
    s.seed = seed;
    s.check = true;
    for (k, v) in sets {
        s.set(k, v).unwrap_or_else(|e| panic!("{k}={v}: {e}"));
    }
    s
}

fn run(text: &str, seed: u64, sets: &[(&str, &str)]) -> RunRecord {
    spec(text, seed, sets).run(&mut |_| true).unwrap()
}

const NONE: (&str, &str) = ("machine.noise", "none");
/// The sources' switches, each turned off by zero.
const OFF_TIMER: [(&str, &str); 2] = [("machine.noise.timer_mean", "0"), ("machine.noise.timer_max", "0")];
const OFF_OP: (&str, &str) = ("machine.noise.op_jitter", "0");
const OFF_START: (&str, &str) = ("machine.noise.start_offset", "0");

#[test]
fn seeds_differ_with_noise_and_not_without() {
    let on: Vec<String> = (1..=3).map(|seed| run(MIXED, seed, &[]).trace_hash).collect();
    assert!(on[0] != on[1] && on[1] != on[2] && on[0] != on[2], "noise on: {on:?}");
    let off: Vec<String> = (1..=3).map(|seed| run(MIXED, seed, &[NONE]).trace_hash).collect();
    assert!(off.iter().all(|h| *h == off[0]), "noise none: {off:?}");
}

#[test]
fn a_seed_reproduces_its_run_bit_for_bit() {
    for seed in [1, 42] {
        let (a, b) = (run(MIXED, seed, &[]), run(MIXED, seed, &[]));
        assert_eq!((a.trace_hash, a.events), (b.trace_hash, b.events), "seed {seed}");
    }
}

/// The record and the text header say which noise ran.
#[test]
fn the_record_and_header_name_the_noise() {
    let r = run(WORKER, 1, &[NONE]);
    assert_eq!(r.machine.noise.as_deref(), Some("none"));
    assert!(schedlab_report::text(&r).lines().next().unwrap().contains("noise none"));
    let r = run(WORKER, 1, &[OFF_START, OFF_TIMER[0], OFF_TIMER[1], ("machine.noise.op_jitter", "25")]);
    assert_eq!(r.machine.noise.as_deref(), Some("op ±25‰"));
}

/// Per-op jitter changes a task's CPU time within its bound; off, with every other source
/// on, the CPU time is the noiseless machine's to the nanosecond.
#[test]
fn op_jitter_alone_moves_cpu_time_and_off_contributes_nothing() {
    let exact = run(WORKER, 1, &[NONE]).tasks[0].runtime_ns;
    let only = [OFF_START, OFF_TIMER[0], OFF_TIMER[1], ("machine.noise.op_jitter", "50")];
    let jittered = run(WORKER, 1, &only).tasks[0].runtime_ns;
    assert_ne!(jittered, exact);
    assert!(jittered.abs_diff(exact) <= exact / 20, "{jittered} vs {exact}: beyond ±5 %");
    for seed in 1..=3 {
        assert_eq!(run(WORKER, seed, &[OFF_OP]).tasks[0].runtime_ns, exact, "seed {seed}");
    }
}

/// Start offsets move workload-started tasks within `[start, start + start_offset]`; off,
/// every task starts at its `start` whatever the other sources do.
#[test]
fn start_offsets_alone_move_starts_and_off_contribute_nothing() {
    let starts = |r: &RunRecord| r.tasks.iter().map(|t| t.start_ns).collect::<Vec<_>>();
    assert!(starts(&run(LATE, 1, &[NONE])).iter().all(|&s| s == 1_000_000));
    let only = [OFF_OP, OFF_TIMER[0], OFF_TIMER[1], ("machine.noise.start_offset", "100us")];
    let moved = starts(&run(LATE, 1, &only));
    assert!(moved.iter().all(|&s| (1_000_000..=1_100_000).contains(&s)), "{moved:?}");
    assert!(moved.iter().any(|&s| s != moved[0]), "offsets are drawn per task: {moved:?}");
    for seed in 1..=3 {
        assert!(starts(&run(LATE, seed, &[OFF_START])).iter().all(|&s| s == 1_000_000), "seed {seed}");
    }
}

/// Timer lateness delays a lone sleeper's wakeups by at most `timer_max` each; off, its
/// life from start to exit is the noiseless machine's whatever the other sources do.
#[test]
fn timer_lateness_alone_delays_wakeups_and_off_contributes_nothing() {
    let life = |r: &RunRecord| r.tasks[0].exit_ns.expect("exits") - r.tasks[0].start_ns;
    let exact = life(&run(SLEEPER, 1, &[NONE]));
    let only = [OFF_OP, OFF_START, ("machine.noise.timer_mean", "5us"), ("machine.noise.timer_max", "20us")];
    let late = life(&run(SLEEPER, 1, &only));
    assert!(late > exact && late <= exact + 20 * 20_000, "{late} vs {exact}");
    for seed in 1..=3 {
        let off = [OFF_TIMER[0], OFF_TIMER[1]];
        assert_eq!(life(&run(SLEEPER, seed, &off)), exact, "seed {seed}");
    }
}

/// Values out of range, a mean beyond its bound and an unknown setting are refused with the
/// field named, before anything runs.
#[test]
fn bad_noise_values_are_refused_up_front() {
    let mut s = spec(WORKER, 1, &[]);
    let err = |s: &mut RunSpec, k: &str, v: &str| s.set(k, v).unwrap_err().to_string();
    let e = err(&mut s, "machine.noise.timer_mean", "50us");
    assert!(e.contains("noise.timer_mean") && e.contains("timer_max"), "{e}");
    let e = err(&mut s, "machine.noise.op_jitter", "501");
    assert!(e.contains("op_jitter") && e.contains("500"), "{e}");
    let e = err(&mut s, "machine.noise.timer_max", "1s");
    assert!(e.contains("timer_max") && e.contains("10ms"), "{e}");
    let e = err(&mut s, "machine.noise", "loud");
    assert!(e.contains("none, on"), "{e}");
    let e = err(&mut s, "machine.noise.jitter", "1");
    assert!(e.contains("unknown noise field"), "{e}");
    assert_eq!(s.machine.noise, schedlab_machine::preset("smp2").unwrap().noise, "nothing changed");
}
