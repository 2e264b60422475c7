//! Fork and exit: a parent's list of children (`kernel/exit.c:forget_original_parent`,
//! v5.15), `wait` for children, orphans reparented, at scale with every invariant checked.

mod common;

use schedlab_probe::EndReason;
use schedlab_sim::Ns;

/// 100 000 tasks are created and exit: 500 parents each fork 99 children one at a time
/// and wait for each, 500 fork one every 30 µs and exit after the last (the children still
/// running then become orphans). Every invariant holds after every event (the children
/// lists included, in every full check), every task exits, and the run ends because all
/// did. (The children come one at a time so that runqueues stay short: the per-event
/// checks walk the touched CPUs' runqueues.)
#[test]
fn a_hundred_thousand_tasks_created_and_exited_keep_every_invariant() {
    let wl = r#"
name = "fork-exit"
[[task]]
name = "waiter"
count = 50
program = [ { loop = 999, do = [ { fork = "child", count = 1 }, "wait" ] } ]
[[task]]
name = "leaver"
count = 50
program = [ { loop = 999, do = [ { fork = "child", count = 1 }, { run = "30us" } ] } ]
[[task]]
name = "child"
template = true
program = [ { run = "20us" } ]
"#;
    let s = common::run_checked(wl, "opteron-32", "cfs", Ns::from_secs(10)).expect("no invariant fails");
    assert_eq!(s.reason, EndReason::AllExited);
    assert_eq!(s.tasks.len(), 100_000);
    assert!(s.exit_times.iter().all(|t| t.is_some()), "every task exited");
}

/// A child that exits before its parent keeps it as its parent; a child still running when
/// its parent exits is reparented (to nobody: the model has no reaper), and its exit wakes
/// no one; a parent waiting for its children wakes when the last one exits.
#[test]
fn orphans_are_reparented_and_a_waiting_parent_wakes_at_its_last_child() {
    let wl = r#"
name = "orphans"
[[task]]
name = "waiter"
program = [ { fork = "quick", count = 3 }, "wait", { run = "1ms" } ]
[[task]]
name = "leaver"
program = [ { fork = "quick", count = 2 }, { fork = "slow", count = 2 }, { run = "1ms" } ]
[[task]]
name = "quick"
template = true
program = [ { run = "100us" } ]
[[task]]
name = "slow"
template = true
program = [ { run = "20ms" } ]
"#;
    let s = common::run_checked(wl, "smp4", "cfs", Ns::from_secs(1)).expect("no invariant fails");
    assert_eq!(s.reason, EndReason::AllExited);
    let id = |name: &str| s.tasks.iter().position(|t| t.name == name).unwrap_or_else(|| panic!("{name}"));
    let (waiter, leaver) = (id("waiter"), id("leaver"));
    let exit = |t: usize| s.exit_times[t].expect("exited");
    for t in (0..s.tasks.len()).filter(|&t| s.tasks[t].name.starts_with("quick.")) {
        let parent = s.tasks[t].parent.get().expect("exited before its parent: still its child");
        assert!(parent == waiter || parent == leaver);
        assert!(exit(t) < exit(parent));
    }
    let slow: Vec<usize> = (0..s.tasks.len()).filter(|&t| s.tasks[t].name.starts_with("slow.")).collect();
    assert_eq!(slow.len(), 2);
    for &t in &slow {
        assert!(s.tasks[t].parent.is_none(), "{} outlived its parent: an orphan", s.tasks[t].name);
        assert!(exit(t) > exit(leaver));
    }
    // The waiter ran its 1 ms only after its last child exited.
    let last_quick =
        (0..s.tasks.len()).filter(|&t| s.tasks[t].parent.get() == Some(waiter)).map(exit).max().expect("children");
    assert!(exit(waiter) >= last_quick + Ns::from_ms(1), "the waiter waited for its children");
}
