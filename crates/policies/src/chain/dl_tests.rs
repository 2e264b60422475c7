//! The CBS wakeup rules of constrained-deadline tasks (`deadline.c`, v6.12), on the
//! deadline class alone so runtimes and deadlines can be read exactly.

use super::Dl;
use schedlab_machine::preset;
use schedlab_sched_api::{DlParams, Request, TaskPolicy};
use schedlab_sim::Ns;

use crate::testing::World;

const MS: u64 = 1_000_000;

/// A task of `(runtime, deadline, period)` in ms that started at 0, ran `ran` ms and went
/// to sleep; it wakes at `wake` ms.
fn sleep_and_wake(q: u64, d: u64, p: u64, ran: u64, wake: u64) -> (Dl, Vec<Request>) {
    let mut w = World::new(preset("smp2").unwrap());
    let pol = TaskPolicy::Deadline(DlParams { runtime: q * MS, deadline: d * MS, period: p * MS });
    let t = w.add_task(0, pol, 0);
    let mut dl = Dl::new(w.m.nr_cpus());
    w.ctx(|cx| dl.enqueue(cx, 0, t, &pol, true, false));
    w.now = Ns(ran * MS);
    w.ctx(|cx| {
        dl.update_curr(cx, 0, t, ran * MS);
        dl.dequeue(0, t);
    });
    w.now = Ns(wake * MS);
    w.reqs.clear();
    w.ctx(|cx| dl.enqueue(cx, 0, t, &pol, false, true));
    (dl, w.reqs)
}

/// `dl_check_constrained_dl`: D = 5 < P = 20; woken at 6 ms, after its deadline (5 ms)
/// but before its next period (20 ms), the task is throttled until 20 ms instead of
/// starting a fresh instance (which would give it 2 ms per 5 ms).
#[test]
fn constrained_task_woken_after_its_deadline_waits_for_its_next_period() {
    let (dl, reqs) = sleep_and_wake(2, 5, 20, 1, 6);
    let t = &dl.tasks[0];
    assert!(t.throttled && t.replenish_at == Ns(20 * MS) && t.runtime == 0);
    assert_eq!(dl.pick(0), None, "a throttled task is not ready");
    assert!(reqs.contains(&Request::Timer { cpu: 0, at: Ns(20 * MS) }));
    // The implicit-deadline task (D = P) woken past its deadline starts a new instance.
    let (dl, _) = sleep_and_wake(2, 5, 5, 1, 6);
    let t = &dl.tasks[0];
    assert!(!t.throttled && t.deadline == Ns(11 * MS) && t.runtime == (2 * MS) as i64);
}

/// `update_dl_revised_wakeup`: D = 10 < P = 20, Q = 4; after 1 ms of running (3 ms left)
/// woken at 8 ms, 3 ms over the 2 ms to the deadline overflows the density 4/10, so the
/// task keeps its deadline with runtime = 4/10 × 2 ms = 0.8 ms (20-bit fixed point). An
/// implicit-deadline task in the same spot starts a new instance.
#[test]
fn constrained_task_woken_with_too_much_runtime_gets_the_revised_runtime() {
    let (dl, _) = sleep_and_wake(4, 10, 20, 1, 8);
    let t = &dl.tasks[0];
    assert_eq!(t.deadline, Ns(10 * MS));
    let want = 800_000i64;
    assert!(!t.throttled && (t.runtime - want).abs() <= 1, "runtime {} ns", t.runtime);
    assert_eq!(dl.pick(0), Some(0));
    let (dl, _) = sleep_and_wake(4, 10, 10, 1, 8);
    let t = &dl.tasks[0];
    assert!(t.deadline == Ns(18 * MS) && t.runtime == (4 * MS) as i64);
}

/// Without overflow the constrained task keeps its runtime and deadline (plain CBS).
#[test]
fn constrained_task_woken_in_time_keeps_its_instance() {
    let (dl, _) = sleep_and_wake(4, 10, 20, 1, 2);
    let t = &dl.tasks[0];
    assert!(t.deadline == Ns(10 * MS) && t.runtime == (3 * MS) as i64);
}

/// The `--check` of the deadline class: a ready task whose recorded deadline no longer
/// matches its place in the EDF order, or one marked throttled while ready, or queued on
/// another CPU, is reported; the consistent state passes.
#[test]
fn the_check_catches_a_ready_task_out_of_step() {
    let (mut dl, _) = sleep_and_wake(4, 10, 20, 1, 2);
    dl.check(0).unwrap();
    dl.check(1).unwrap();
    dl.tasks[0].deadline = Ns(11 * MS);
    assert!(dl.check(0).unwrap_err().contains("ready task 0 out of step"));
    dl.tasks[0].deadline = Ns(10 * MS);
    dl.tasks[0].throttled = true;
    assert!(dl.check(0).is_err());
    dl.tasks[0].throttled = false;
    dl.tasks[0].queued_on = Some(1);
    assert!(dl.check(0).is_err());
}
