//! Hook-level tests of the O(1) policy against `kernel/sched.c` (2.6.20): the policy is
//! driven directly, without the kernel model, so slices and `sleep_avg` can be read exactly.

use super::{SleepType, O1};
use schedlab_machine::preset;
use schedlab_sched_api::{dequeue, enqueue, Ctx, Request, SchedClass, TaskPolicy};
use schedlab_sim::{Ns, TaskId};

use crate::testing::World;

struct Harness {
    w: World,
    o: O1,
}

impl Harness {
    fn new() -> Harness {
        let m = preset("up").unwrap();
        let o = O1::new(&m, &[]).unwrap();
        Harness { w: World::new(m), o }
    }

    fn with<R>(&mut self, f: impl FnOnce(&mut O1, &mut Ctx) -> R) -> R {
        let Harness { w, o } = self;
        w.ctx(|cx| f(o, cx))
    }

    fn spawn(&mut self, nice: i32, parent: Option<TaskId>) -> TaskId {
        self.spawn_as(nice, TaskPolicy::Normal, parent)
    }

    fn spawn_as(&mut self, nice: i32, policy: TaskPolicy, parent: Option<TaskId>) -> TaskId {
        let p = self.w.add_task(nice, policy, 0);
        self.w.tasks[p].parent = parent.into();
        self.with(|o, cx| o.task_new(cx, p, parent));
        self.with(|o, cx| o.enqueue_task(cx, 0, p, enqueue::INITIAL));
        self.w.cpus[0].nr_running += 1;
        p
    }

    fn schedule(&mut self) -> Option<TaskId> {
        if let Some(c) = self.w.cpus[0].curr {
            self.with(|o, cx| o.put_prev_task(cx, 0, c));
        }
        let next = self.with(|o, cx| o.pick_next_task(cx, 0));
        self.w.cpus[0].curr = next;
        self.w.cpus[0].need_resched = false;
        self.w.reqs.clear();
        next
    }

    /// One tick (1 ms at HZ = 1000) of the running task; true if it asked to reschedule.
    fn tick(&mut self) -> bool {
        self.w.now = Ns(self.w.now.0 + 1_000_000);
        let c = self.w.cpus[0].curr.unwrap();
        self.with(|o, cx| o.task_tick(cx, 0, c));
        let resched = self.w.reqs.iter().any(|r| matches!(r, Request::Resched(0)));
        self.w.reqs.clear();
        resched
    }

    fn check(&mut self) {
        let r = self.with(|o, cx| o.check_invariants(cx));
        r.unwrap();
    }
}

/// `sched_fork`: the child takes `(slice + 1) >> 1` of the parent's remaining slice, the
/// parent keeps `slice >> 1`; `wake_up_new_task`: the child keeps 95 % of its bonus (900 ms
/// from a full 1 s), the parent's `sleep_avg` is rounded down to its bonus bucket.
#[test]
fn fork_splits_the_parent_slice() {
    let mut h = Harness::new();
    let parent = h.spawn(0, None);
    assert_eq!(h.schedule(), Some(parent));
    h.o.td[parent].time_slice = 37;
    h.o.td[parent].sleep_avg = 1_000_000_000;
    let child = h.spawn(0, Some(parent));
    assert_eq!((h.o.td[child].time_slice, h.o.td[parent].time_slice), (19, 18));
    assert!(h.o.td[child].first_time_slice);
    assert_eq!(h.o.td[child].sleep_avg, 900_000_000);
    assert_eq!(h.o.td[child].prio, 116, "bonus 9: 120 - 4");
    assert_eq!(h.o.td[parent].sleep_avg, 1_000_000_000);
    h.check();
    // The child exits in its first slice: the rest goes back to the parent (capped).
    h.with(|o, cx| o.dequeue_task(cx, 0, child, dequeue::SLEEP | dequeue::SPECIAL));
    h.w.cpus[0].nr_running -= 1;
    h.with(|o, cx| o.task_dead(cx, child));
    assert_eq!(h.o.td[parent].time_slice, 37);
}

/// A parent with one jiffy left gives it to the child, keeps one and expires at once.
#[test]
fn fork_with_one_jiffy_left_expires_the_parent() {
    let mut h = Harness::new();
    let parent = h.spawn(19, None);
    let other = h.spawn(19, None);
    assert_eq!(h.schedule(), Some(parent));
    h.o.td[parent].time_slice = 1;
    let child = h.spawn(19, Some(parent));
    assert_eq!(h.o.td[child].time_slice, 1);
    // Nice 19 is never interactive: the parent is in the expired array with a new slice.
    let e = h.o.expired(0);
    assert_eq!(h.o.td[parent].array, Some((0, e)));
    assert_eq!(h.o.td[parent].time_slice, 5);
    assert_eq!(h.schedule(), Some(other));
    h.check();
}

/// `task_running_tick`: a non-interactive task's slice ends after `task_timeslice` ticks; it
/// goes to the expired array, the other task runs, and the arrays swap.
#[test]
fn slice_end_expires_and_arrays_swap() {
    let mut h = Harness::new();
    let a = h.spawn(0, None);
    let b = h.spawn(0, None);
    // Hogs that lost their credit: requeued at priority 125 with a full slice.
    for t in [a, b] {
        let w = h.o.dequeue(t).unwrap();
        h.o.td[t].sleep_avg = 0;
        h.o.td[t].prio = 125;
        h.o.td[t].time_slice = 100;
        h.o.enqueue(0, t, w.1);
    }
    assert_eq!(h.schedule(), Some(a));
    let mut ticks = 0;
    while !h.tick() {
        ticks += 1;
    }
    assert_eq!(ticks + 1, 100);
    assert_eq!(h.o.td[a].array, Some((0, h.o.expired(0))));
    assert_eq!(h.schedule(), Some(b));
    for _ in 0..100 {
        h.tick();
    }
    assert_eq!(h.o.stats.array_swaps, 0);
    assert_eq!(h.schedule(), Some(a), "b expired too: the arrays swap and a runs");
    assert_eq!(h.o.stats.array_swaps, 1);
    h.check();
}

/// `recalc_task_prio`: one long sleep lifts a hog only to `INTERACTIVE_SLEEP` (just
/// interactive) and marks the sleep non-interactive; short sleeps add up.
#[test]
fn one_long_sleep_makes_a_task_just_interactive() {
    let mut h = Harness::new();
    let a = h.spawn(0, None);
    assert_eq!(h.schedule(), Some(a));
    h.o.td[a].sleep_avg = 0;
    h.w.now = Ns(10_000_000);
    h.with(|o, cx| o.dequeue_task(cx, 0, a, dequeue::SLEEP));
    h.w.cpus[0].nr_running -= 1;
    h.schedule();
    h.w.now = Ns(5_010_000_000);
    h.with(|o, cx| o.enqueue_task(cx, 0, a, enqueue::WAKEUP));
    h.w.cpus[0].nr_running += 1;
    assert_eq!(h.o.td[a].sleep_avg, 799_000_000);
    assert_eq!(h.o.td[a].sleep_type, SleepType::NonInteractive);
    assert_eq!(h.o.td[a].prio, 118, "bonus 7");
    assert!(h.o.interactive(a));
    h.check();
}

/// `activate_task` + `schedule()`: a task woken by a timer interrupt (`SLEEP_INTERRUPTED`)
/// gets its whole runqueue wait credited as sleep at pick; one woken by a task
/// (`SLEEP_INTERACTIVE`) gets `ON_RUNQUEUE_WEIGHT` = 30 % of it (`delta * 38 / 128`).
#[test]
fn runqueue_wait_credit_depends_on_the_waker() {
    for (irq, expected) in [(true, 40_000_000u64), (false, 40_000_000 * 38 / 128)] {
        let mut h = Harness::new();
        let hog = h.spawn(0, None);
        let s = h.spawn(0, None);
        assert_eq!(h.schedule(), Some(hog));
        // `s` sleeps (it was never picked; its timestamp is its creation time, 0).
        h.with(|o, cx| o.dequeue_task(cx, 0, s, dequeue::SLEEP));
        h.w.cpus[0].nr_running -= 1;
        h.o.td[s].sleep_avg = 0;
        h.w.now = Ns(1_000_000);
        let wflags = if irq { schedlab_sched_api::wf::IRQ } else { 0 };
        h.with(|o, cx| o.select_task_rq(cx, s, 0, schedlab_sched_api::SelectKind::Wake, wflags));
        h.with(|o, cx| o.enqueue_task(cx, 0, s, enqueue::WAKEUP));
        h.w.cpus[0].nr_running += 1;
        let after_wake = h.o.td[s].sleep_avg;
        assert_eq!(after_wake, 1_000_000, "the 1 ms sleep");
        // 40 ms on the runqueue behind the hog, then picked.
        h.w.now = Ns(41_000_000);
        h.with(|o, cx| o.put_prev_task(cx, 0, hog));
        h.w.cpus[0].curr = None;
        // Make `s` the best queued task so the pick takes it.
        let w = h.o.dequeue(hog).unwrap();
        h.o.td[hog].prio = 130;
        h.o.enqueue(0, hog, w.1);
        assert_eq!(h.with(|o, cx| o.pick_next_task(cx, 0)), Some(s));
        assert_eq!(h.o.td[s].sleep_avg - after_wake, expected, "irq {irq}");
    }
}

/// A 4096-CPU machine (the `MAX_CPUS` limit: 16 nodes × 8 LLCs × 16 cores × 2 threads)
/// builds its domains in moments (it took 27 s when each CPU recomputed every group's
/// `cpu_power`), with the 2.6.11 `cpu_power` of each group: SCHED_LOAD_SCALE per core plus
/// 25 % per extra sibling (160 per two-thread core), 128 for a thread of the SMT level.
#[test]
fn domains_of_a_4096_cpu_machine_have_the_kernels_cpu_power() {
    let m = crate::testing::machine_4096();
    let o = O1::new(&m, &[]).unwrap();
    for cpu in [0, 17, 2048, 4095] {
        assert_eq!(o.domain_names(cpu), ["SMT", "MC", "DIE", "NUMA"], "CPU {cpu}");
        let d = &o.doms[cpu];
        let groups: Vec<usize> = d.iter().map(|x| x.groups.len()).collect();
        assert_eq!(groups, [2, 16, 8, 16], "CPU {cpu}: threads, cores, LLCs, nodes");
        let powers: Vec<u64> = d.iter().map(|x| x.power[1]).collect();
        assert_eq!(powers, [128, 160, 16 * 160, 8 * 16 * 160], "CPU {cpu}");
        for x in d {
            assert!(x.groups[0].contains(cpu), "CPU {cpu} {}: the local group first", x.name);
            assert_eq!(x.groups.iter().map(|g| g.count()).sum::<usize>(), x.span.count(), "{}", x.name);
        }
    }
}

/// `sched_setscheduler` in 2.6.20 accepts `SCHED_NORMAL`, `SCHED_FIFO`, `SCHED_RR` and
/// `SCHED_BATCH` only: a deadline task is refused, naming the reason, not demoted.
#[test]
fn deadline_is_refused_with_the_reason() {
    let mut h = Harness::new();
    let p = h.w.add_task(0, TaskPolicy::Normal, 0);
    let dl = TaskPolicy::Deadline(schedlab_sched_api::DlParams {
        runtime: 1_000_000,
        deadline: 10_000_000,
        period: 10_000_000,
    });
    let err = h.with(|o, cx| o.admit(cx, p, &dl)).unwrap_err();
    assert!(err.contains("SCHED_DEADLINE") && err.contains("O(1)"), "{err}");
    for ok in [TaskPolicy::Normal, TaskPolicy::Batch, TaskPolicy::Fifo { prio: 1 }, TaskPolicy::Rr { prio: 99 }] {
        assert_eq!(h.with(|o, cx| o.admit(cx, p, &ok)), Ok(()), "{ok:?}");
    }
}

/// `normal_prio`: `MAX_RT_PRIO - 1 - rt_priority`, so rt_priority 99 is prio 0; picks take
/// the first set bit, so real-time tasks run best first and before any normal task.
#[test]
fn rt_priorities_are_picked_best_first_before_normal_tasks() {
    let mut h = Harness::new();
    let normal = h.spawn(-20, None);
    let low = h.spawn_as(0, TaskPolicy::Fifo { prio: 10 }, None);
    let high = h.spawn_as(0, TaskPolicy::Rr { prio: 90 }, None);
    let mid = h.spawn_as(0, TaskPolicy::Fifo { prio: 50 }, None);
    assert_eq!([h.o.td[high].prio, h.o.td[mid].prio, h.o.td[low].prio], [9, 49, 89]);
    assert!(h.o.td[normal].prio >= 100);
    let mut order = Vec::new();
    for _ in 0..4 {
        let t = h.schedule().unwrap();
        order.push(t);
        h.with(|o, cx| o.dequeue_task(cx, 0, t, dequeue::SLEEP));
        h.w.cpus[0].nr_running -= 1;
    }
    assert_eq!(order, [high, mid, low, normal]);
    h.check();
}

/// `TASK_PREEMPTS_CURR` at wakeup: a woken `SCHED_FIFO` task preempts a running normal task
/// at once; the tick never ends its turn (no slice) and it never enters the expired array,
/// so the normal task does not run again while it stays runnable.
#[test]
fn fifo_preempts_a_normal_task_at_once_and_never_expires() {
    let mut h = Harness::new();
    let normal = h.spawn(-20, None);
    let f = h.spawn_as(0, TaskPolicy::Fifo { prio: 1 }, None);
    h.with(|o, cx| o.dequeue_task(cx, 0, f, dequeue::SLEEP));
    h.w.cpus[0].nr_running -= 1;
    assert_eq!(h.schedule(), Some(normal));
    h.w.this = 1; // a remote waker (a local sync wakeup does not preempt)
    h.with(|o, cx| o.enqueue_task(cx, 0, f, enqueue::WAKEUP));
    h.w.cpus[0].nr_running += 1;
    h.with(|o, cx| o.wakeup_preempt(cx, 0, f, 0));
    assert!(h.w.reqs.iter().any(|r| matches!(r, Request::Resched(0))), "the FIFO task preempts");
    h.w.this = 0;
    assert_eq!(h.schedule(), Some(f));
    let active = h.o.rq[0].active;
    for _ in 0..10_000 {
        assert!(!h.tick(), "a FIFO task is never asked to give up the CPU");
        assert_eq!(h.o.td[f].array, Some((0, active)), "never expired");
    }
    assert_eq!(h.schedule(), Some(f), "10 s later it still runs before the nice -20 task");
    h.check();
}

/// `task_running_tick`'s `SCHED_RR` branch: equal-priority RR tasks take turns every
/// `task_timeslice` (100 ms at nice 0, 800 ms at nice -20 with HZ = 1000), each requeued at
/// the tail of its list in the active array, with a normal task never running.
#[test]
fn rr_tasks_of_equal_priority_round_robin_with_the_nice_timeslice() {
    for (nice, slice) in [(0, 100), (-20, 800)] {
        let mut h = Harness::new();
        let normal = h.spawn(0, None);
        let a = h.spawn_as(nice, TaskPolicy::Rr { prio: 5 }, None);
        let b = h.spawn_as(nice, TaskPolicy::Rr { prio: 5 }, None);
        let mut turns = Vec::new();
        let mut last = h.schedule().unwrap();
        let mut ran = 0;
        while turns.len() < 6 {
            ran += 1;
            if h.tick() {
                turns.push((last, ran));
                ran = 0;
                last = h.schedule().unwrap();
                assert_ne!(last, normal, "nice {nice}: the normal task never runs");
            }
        }
        let owners: Vec<TaskId> = turns.iter().map(|t| t.0).collect();
        assert_eq!(owners, [a, b, a, b, a, b], "nice {nice}");
        // The first turns spend the half slice a task started directly gets (the shell's
        // fork split); every later turn is a full `task_timeslice`.
        assert!(turns[2..].iter().all(|t| t.1 == slice), "nice {nice}: {turns:?}");
        assert_eq!(h.o.stats.rr_requeues, 6);
        assert_eq!(h.o.stats.array_swaps, 0, "nobody expires");
        h.check();
    }
}

/// `sched_setscheduler` on a queued normal task that is in the expired array: it moves to
/// the active array at its real-time priority and preempts the running normal task; back
/// to `SCHED_NORMAL` it gets its normal priority again.
#[test]
fn set_policy_to_fifo_requeues_in_the_active_array_and_preempts() {
    let mut h = Harness::new();
    let a = h.spawn(0, None);
    let b = h.spawn(0, None);
    let e = h.o.expired(0);
    let w = h.o.dequeue(b).unwrap();
    assert_ne!(w.1, e);
    h.o.enqueue(0, b, e);
    assert_eq!(h.schedule(), Some(a));
    let old = h.w.tasks[b].policy;
    h.w.tasks[b].policy = TaskPolicy::Fifo { prio: 20 };
    h.with(|o, cx| o.policy_changed(cx, b, old));
    assert_eq!(h.o.td[b].array, Some((0, h.o.rq[0].active)));
    assert_eq!(h.o.td[b].prio, 79);
    assert!(h.w.reqs.iter().any(|r| matches!(r, Request::Resched(0))));
    assert_eq!(h.schedule(), Some(b));
    h.check();
    h.w.tasks[b].policy = TaskPolicy::Normal;
    h.with(|o, cx| o.policy_changed(cx, b, TaskPolicy::Fifo { prio: 20 }));
    assert!(h.o.td[b].prio >= 100);
    assert!(h.w.reqs.iter().any(|r| matches!(r, Request::Resched(0))), "the running task got worse");
    h.check();
}

/// `sys_sched_yield`: a real-time task round-robins in the active array (a normal one
/// would go to the expired array).
#[test]
fn rt_yield_stays_in_the_active_array() {
    let mut h = Harness::new();
    let a = h.spawn_as(0, TaskPolicy::Fifo { prio: 3 }, None);
    let b = h.spawn_as(0, TaskPolicy::Fifo { prio: 3 }, None);
    assert_eq!(h.schedule(), Some(a));
    h.with(|o, cx| o.yield_task(cx, 0, a));
    assert_eq!(h.o.td[a].array, Some((0, h.o.rq[0].active)));
    assert_eq!(h.schedule(), Some(b));
    h.check();
}
