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
        let p = self.w.add_task(nice, TaskPolicy::Normal, 0);
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
