//! Deadlocks end the run at once (`end_reason: deadlock`) with the wait-for graph, under
//! every scheduler; a run that only sleeps on timers, or waits for children that exit, is
//! never a deadlock.

use schedlab_probe::EndReason;
use schedlab_run::{RunRecord, RunSpec};
use schedlab_sim::Ns;

fn run(text: &str, sched: &str) -> RunRecord {
    let mut spec = RunSpec::load("w.toml", text, Some("smp4"), &[], Some(Ns::from_secs(100))).unwrap();
    spec.sched = sched.into();
    spec.check = true;
    // The waiters' order and the moment of detection are exact predictions: no noise.
    spec.set("machine.noise", "none").unwrap();
    spec.run(&mut |_| true).unwrap()
}

/// Every scheduler family, and every sched_ext policy of the registry (whose watchdog and
/// BPF timers stay armed while everything is blocked: issue 31, item 8).
fn schedulers() -> Vec<&'static str> {
    let ext = schedlab_policies::REGISTRY.iter().map(|e| e.name).filter(|n| n.starts_with("ext:"));
    ["eevdf", "cfs", "ule", "fifo", "o1"].into_iter().chain(ext).collect()
}

const BARRIER_SHORT: &str = "[[barrier]]\nname = \"b\"\nparties = 3\n[[task]]\nname = \"t\"\ncount = 2\nprogram = [ { run = \"1ms\" }, { barrier = \"b\" } ]\n[[task]]\nname = \"bystander\"\nprogram = [ { run = \"2ms\" }, \"exit\" ]\n";

/// Each task takes its first lock, then meets the other at a barrier, so both hold one lock
/// before either asks for its second whatever the scheduler's placement (o1 puts both on one
/// CPU, where without the barrier `x` would finish before `y` starts).
const LOCK_CYCLE: &str = "[[mutex]]\nname = \"a\"\n[[mutex]]\nname = \"b\"\n[[barrier]]\nname = \"both\"\nparties = 2\n[[task]]\nname = \"x\"\nprogram = [ { lock = \"a\" }, { run = \"1ms\" }, { barrier = \"both\" }, { lock = \"b\" }, { unlock = \"b\" }, { unlock = \"a\" } ]\n[[task]]\nname = \"y\"\nprogram = [ { lock = \"b\" }, { run = \"1ms\" }, { barrier = \"both\" }, { lock = \"a\" }, { unlock = \"a\" }, { unlock = \"b\" } ]\n";

const NOBODY_SIGNALS: &str = "[[mutex]]\nname = \"m\"\n[[cond]]\nname = \"c\"\n[[pipe]]\nname = \"p\"\n[[task]]\nname = \"waiter\"\nprogram = [ { lock = \"m\" }, { cond_wait = \"c\", mutex = \"m\" }, { unlock = \"m\" } ]\n[[task]]\nname = \"reader\"\nprogram = [ { recv = \"p\", bytes = 64 } ]\n";

#[test]
fn a_barrier_short_of_parties_is_a_deadlock() {
    for s in schedulers() {
        let r = run(BARRIER_SHORT, s);
        assert_eq!(r.end_reason, EndReason::Deadlock, "{s}");
        assert!(r.sim_ns < 10_000_000, "{s}: detected at once, not at the time limit ({} ns)", r.sim_ns);
        let names: Vec<&str> = r.deadlock.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["t.0", "t.1"], "{s}: the exited bystander waits on nothing");
        for w in &r.deadlock {
            assert_eq!(w.object, "barrier b");
            assert!(w.detail.contains("2 of 3 parties"), "{}", w.detail);
        }
    }
}

/// The deadlock is certain the moment the last CPU goes idle after the bystander exits:
/// `sim_ns` is that moment (the exit path's few microseconds later), not the time the
/// queue's stale events (a stopped tick, up to ULE's 7.9 ms stathz period) drain.
#[test]
fn a_deadlock_is_reported_when_it_became_certain() {
    for s in schedulers() {
        let r = run(BARRIER_SHORT, s);
        let exit = r.tasks.iter().find(|t| t.name == "bystander").and_then(|t| t.exit_ns).expect("the bystander exits");
        assert!(
            r.sim_ns >= exit && r.sim_ns - exit < 100_000,
            "{s}: bystander exited at {exit} ns, deadlock at {}",
            r.sim_ns
        );
    }
}

#[test]
fn a_lock_cycle_names_each_holder_and_the_cycle() {
    for s in schedulers() {
        let r = run(LOCK_CYCLE, s);
        assert_eq!(r.end_reason, EndReason::Deadlock, "{s}");
        let w: Vec<(&str, &str, Option<usize>)> =
            r.deadlock.iter().map(|w| (w.name.as_str(), w.object.as_str(), w.held_by)).collect();
        assert_eq!(w, [("x", "mutex b", Some(1)), ("y", "mutex a", Some(0))], "{s}");
        assert!(r.deadlock[0].detail.contains("x → y → x"), "{}", r.deadlock[0].detail);
        let text = schedlab_report::text(&r);
        assert!(text.contains("deadlock at") && text.contains("x (task 0) waits on mutex b: held by y"), "{text}");
    }
}

#[test]
fn a_condition_nobody_signals_and_a_pipe_nobody_writes_are_a_deadlock() {
    for s in schedulers() {
        let r = run(NOBODY_SIGNALS, s);
        assert_eq!(r.end_reason, EndReason::Deadlock, "{s}");
        let w: Vec<(&str, &str)> = r.deadlock.iter().map(|w| (w.name.as_str(), w.object.as_str())).collect();
        assert_eq!(w, [("waiter", "cond c"), ("reader", "pipe p")], "{s}");
    }
}

/// Sleeping on a timer (however long) and waiting for children that exit are not
/// deadlocks; neither is a run that ends at its time limit with tasks blocked on timers.
#[test]
fn timers_and_children_are_not_deadlocks() {
    let sleeper = "[[task]]\nname = \"s\"\nprogram = [ { loop = \"forever\", do = [ { run = \"1ms\" }, { sleep = \"40s\" } ] } ]\n";
    let parent = "[[task]]\nname = \"p\"\nprogram = [ { fork = \"c\", count = 2 }, \"wait\", { sleep = \"1s\" }, \"exit\" ]\n[[task]]\nname = \"c\"\ntemplate = true\nprogram = [ { run = \"5ms\" }, \"exit\" ]\n";
    for s in schedulers() {
        let r = run(sleeper, s);
        assert_eq!(r.end_reason, EndReason::TimeLimit, "{s}");
        assert!(r.deadlock.is_empty());
        let r = run(parent, s);
        assert_eq!(r.end_reason, EndReason::AllExited, "{s}");
    }
}

/// A reader blocked on a pipe that a sleeping task will write is not deadlocked, even when
/// every CPU is idle and (under o1) ticking: the sleeper's timer is pending. Once the timer
/// fires both tasks finish.
#[test]
fn a_wait_a_sleeper_will_end_is_not_a_deadlock() {
    let text = "[[pipe]]\nname = \"p\"\n[[task]]\nname = \"reader\"\nprogram = [ { recv = \"p\", bytes = 64 }, { run = \"1ms\" }, \"exit\" ]\n[[task]]\nname = \"writer\"\nprogram = [ { sleep = \"50ms\" }, { send = \"p\", bytes = 64 }, \"exit\" ]\n";
    for s in schedulers() {
        let r = run(text, s);
        assert_eq!(r.end_reason, EndReason::AllExited, "{s}");
        assert!(r.deadlock.is_empty(), "{s}");
        assert!(r.sim_ns >= 51_000_000, "{s}: the reader ran after the write ({} ns)", r.sim_ns);
    }
}

/// A server whose 12 threads each wait on a connection nobody writes again: the text lists
/// the first ten and counts the rest; the record keeps all twelve.
#[test]
fn the_deadlock_text_lists_ten_waiters_and_counts_the_rest() {
    let w = "[[pipe]]\nname = \"req\"\ncount = 12\n[[task]]\nname = \"httpd\"\ncount = 12\nprogram = [ { recv = \"req.{n}\", bytes = 100 } ]\n";
    let r = run(w, "eevdf");
    assert_eq!(r.end_reason, EndReason::Deadlock);
    assert_eq!(r.deadlock.len(), 12);
    let text = schedlab_report::deadlock_text(&r);
    assert_eq!(text.lines().filter(|l| l.contains(" waits on pipe req.")).count(), 10, "{text}");
    assert!(text.contains("… and 2 more waiting tasks (all 12 in the JSON record's `deadlock`)"), "{text}");
}
