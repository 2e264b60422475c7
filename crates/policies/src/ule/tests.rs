//! Hook-level tests of the `preempt` variants (`sched_setpreempt`, `sched_shouldpreempt`,
//! `tdq_notify` against the ULE-vs-CFS port, where only kernel threads preempt): the policy
//! is driven directly, so the kernel-thread flag can be set on a task.

use super::{Preempt, Ule};
use schedlab_machine::{preset, CpuSet, Machine};
use schedlab_sched_api::{enqueue, Ctx, Request, SchedClass, SelectKind, TaskPolicy};
use schedlab_sim::{Ns, TaskId};

use crate::testing::World;

/// Pinned to `cpu`, so `sched_pickcpu` keeps the thread where the test wants it.
fn only(m: &Machine, cpu: usize) -> CpuSet {
    let mut s = CpuSet::full(m.nr_cpus());
    (0..m.nr_cpus()).filter(|&c| c != cpu).for_each(|c| s.remove(c));
    s
}

struct Harness {
    w: World,
    u: Ule,
}

impl Harness {
    fn new(machine: &str, sets: &[(&str, &str)]) -> Harness {
        let m = preset(machine).unwrap();
        let sets: Vec<(String, String)> = sets.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let u = Ule::new(&m, &sets).unwrap();
        let mut w = World::new(m);
        w.now = Ns::from_secs(1);
        Harness { w, u }
    }

    fn with<R>(&mut self, f: impl FnOnce(&mut Ule, &mut Ctx) -> R) -> R {
        let Harness { w, u } = self;
        w.ctx(|cx| f(u, cx))
    }

    fn new_task(&mut self, cpu: usize, kthread: bool) -> TaskId {
        let p = self.w.add_task(0, TaskPolicy::Normal, cpu);
        self.w.tasks[p].affinity = only(&self.w.m, cpu);
        self.w.tasks[p].kthread = kthread;
        self.with(|u, cx| u.task_new(cx, p, None));
        p
    }

    /// A thread that has only run: batch (score 100), running on `cpu`.
    fn running_batch(&mut self, cpu: usize, kthread: bool) -> TaskId {
        let a = self.batch_queued(cpu, kthread);
        let got = self.with(|u, cx| u.pick_next_task(cx, cpu));
        assert_eq!(got, Some(a));
        self.w.cpus[cpu].curr = Some(a);
        a
    }

    /// A batch thread (score 100) queued on `cpu`, not running.
    fn running_batch_queued(&mut self, cpu: usize) -> TaskId {
        self.batch_queued(cpu, false)
    }

    /// A thread that has only run (batch, score 100), queued on `cpu`.
    fn batch_queued(&mut self, cpu: usize, kthread: bool) -> TaskId {
        let a = self.new_task(cpu, kthread);
        let max = self.u.t.slp_run_max();
        self.u.td[a].hist.runtime = max;
        self.u.td[a].hist.slptime = 0;
        self.with(|u, cx| u.sched_priority(cx, a));
        let up = self.u.td[a].user_pri;
        (self.u.td[a].priority, self.u.td[a].base_pri) = (up, up);
        self.with(|u, cx| u.enqueue_task(cx, cpu, a, enqueue::INITIAL));
        self.w.cpus[cpu].nr_running += 1;
        a
    }

    /// Wakes a new (interactive, score 0) thread from `waker_cpu` onto `cpu`; true if a
    /// reschedule of `cpu` was requested.
    fn wake(&mut self, waker_cpu: usize, cpu: usize, kthread: bool) -> bool {
        self.w.this = waker_cpu;
        let b = self.new_task(cpu, kthread);
        let to = self.with(|u, cx| u.select_task_rq(cx, b, cpu, SelectKind::Wake, 0));
        assert_eq!(to, cpu, "the woken thread stays on its CPU (affinity)");
        self.with(|u, cx| u.enqueue_task(cx, cpu, b, enqueue::WAKEUP));
        self.w.cpus[cpu].nr_running += 1;
        self.w.reqs.clear();
        self.with(|u, cx| u.wakeup_preempt(cx, cpu, b, 0));
        assert!(self.u.td[b].priority < self.u.td[self.w.cpus[cpu].curr.unwrap()].priority, "woken one is better");
        std::mem::take(&mut self.w.reqs).iter().any(|r| matches!(r, Request::Resched(c) if *c == cpu))
    }
}

/// FreeBSD (`sched_setpreempt`): a woken interactive thread asks the running batch thread
/// to switch at the next return to user mode; on another CPU, `sched_shouldpreempt(remote)`
/// lets an interactive thread IPI a CPU running a batch thread (`tdq_notify`).
#[test]
fn freebsd_interactive_wakeup_preempts_a_batch_thread() {
    let mut h = Harness::new("up", &[]);
    assert_eq!(h.u.t.preempt, Preempt::FreeBsd);
    h.running_batch(0, false);
    assert!(h.wake(0, 0, false), "local wakeup: TDF_NEEDRESCHED");
    let mut h = Harness::new("smp2", &[]);
    h.running_batch(0, false);
    assert!(h.wake(1, 0, false), "remote wakeup: IPI_PREEMPT");
}

/// The study's port (`version=11.1-linux`, i.e. `preempt=kthread`): the same wakeups never
/// switch out the running user thread, locally or remotely; a kernel thread does, both ways.
#[test]
fn study_variant_only_kernel_threads_preempt() {
    for sets in [&[("version", "11.1-linux")][..], &[("preempt", "kthread")][..]] {
        let mut h = Harness::new("up", sets);
        assert_eq!(h.u.t.preempt, Preempt::Kthread);
        h.running_batch(0, false);
        assert!(!h.wake(0, 0, false), "{sets:?}: a user wakeup must not preempt a running user thread");
        assert!(h.wake(0, 0, true), "{sets:?}: a kernel thread preempts");
        let mut h = Harness::new("smp2", sets);
        h.running_batch(0, false);
        assert!(!h.wake(1, 0, false), "{sets:?}: no remote IPI for a user thread");
        assert!(h.wake(1, 0, true), "{sets:?}: a kernel thread IPIs");
    }
    // A running kernel thread is treated by FreeBSD's rules: a better user thread asks it
    // to switch at its next return to user mode.
    let mut h = Harness::new("up", &[("preempt", "kthread")]);
    h.running_batch(0, true);
    assert!(h.wake(0, 0, false));
}

/// An idle CPU is woken for any new thread under both variants.
#[test]
fn an_idle_cpu_is_always_notified() {
    for v in ["11.1", "11.1-linux"] {
        let mut h = Harness::new("smp2", &[("version", v)]);
        h.w.this = 1;
        let b = h.new_task(0, false);
        h.with(|u, cx| u.enqueue_task(cx, 0, b, enqueue::WAKEUP));
        h.with(|u, cx| u.wakeup_preempt(cx, 0, b, 0));
        assert!(h.w.reqs.iter().any(|r| matches!(r, Request::Resched(0))), "{v}");
    }
}

/// The variants differ only where documented: `11.1-linux` is 11.1 with `preempt=kthread`
/// and no idle wakeups; FreeBSD's idle CPUs wake every `hz / 2` ticks (0.5 s).
#[test]
fn variant_defaults() {
    let f = Harness::new("smp2", &[]).u;
    assert_eq!((f.t.preempt, f.t.idle_wakeup, f.idle_wakeup()), (Preempt::FreeBsd, 500, Some(Ns::from_ms(500))));
    let l = Harness::new("smp2", &[("version", "11.1-linux")]).u;
    assert_eq!((l.t.preempt, l.t.idle_wakeup, l.idle_wakeup()), (Preempt::Kthread, 0, None));
    assert_eq!(l.t.version, f.t.version);
    let l = Harness::new("smp2", &[("version", "11.1-linux"), ("idle_wakeup", "100")]).u;
    assert_eq!(l.idle_wakeup(), Some(Ns::from_ms(100)));
    assert_eq!(Harness::new("up", &[]).u.idle_wakeup(), None, "one CPU has nobody to steal from");
}

impl Harness {
    /// A thread of `policy` pinned to `cpu`, queued there (`tdq_add`).
    fn queued(&mut self, cpu: usize, policy: TaskPolicy) -> TaskId {
        let p = self.w.add_task(0, policy, cpu);
        self.w.tasks[p].affinity = only(&self.w.m, cpu);
        self.with(|u, cx| u.task_new(cx, p, None));
        self.with(|u, cx| u.enqueue_task(cx, cpu, p, enqueue::INITIAL));
        self.w.cpus[cpu].nr_running += 1;
        p
    }

    /// `sched_switch` + `sched_choose` on `cpu`.
    fn switch(&mut self, cpu: usize) -> Option<TaskId> {
        if let Some(c) = self.w.cpus[cpu].curr {
            self.with(|u, cx| u.put_prev_task(cx, cpu, c));
        }
        let next = self.with(|u, cx| u.pick_next_task(cx, cpu));
        self.w.cpus[cpu].curr = next;
        self.w.reqs.clear();
        next
    }

    /// One stat tick of `cpu`'s running thread; true if it asked to switch.
    fn stat_tick(&mut self, cpu: usize) -> bool {
        self.w.now = Ns(self.w.now.0 + 1_000_000_000 / 127);
        let c = self.w.cpus[cpu].curr.unwrap();
        self.with(|u, cx| u.task_tick(cx, cpu, c));
        std::mem::take(&mut self.w.reqs).iter().any(|r| matches!(r, Request::Resched(x) if *x == cpu))
    }

    fn check(&mut self) {
        let r = self.with(|u, cx| u.check_invariants(cx));
        r.unwrap();
    }
}

/// FreeBSD's Linux ABI maps `sched_priority` 1..=99 onto POSIX 0..=31 (`linux_misc.c`,
/// `(p - 1) * 32 / 99`), `ksched.c` POSIX `P` onto rtprio `31 - P`, and `rtp_to_pri` rtprio
/// onto `PRI_MIN_REALTIME + rtprio`: 48..=79 in 11.1, 8..=39 in 15.
#[test]
fn linux_rt_priorities_map_onto_the_realtime_levels() {
    use super::params::linux_rt_to_rtprio;
    let got: Vec<u8> = [99, 98, 50, 4, 3, 1].iter().map(|&p| linux_rt_to_rtprio(p)).collect();
    assert_eq!(got, [0, 0, 16, 31, 31, 31]);
    for (v, lo) in [("11.1", 48), ("current", 8)] {
        let mut h = Harness::new("up", &[("version", v)]);
        let best = h.queued(0, TaskPolicy::Fifo { prio: 99 });
        let worst = h.queued(0, TaskPolicy::Rr { prio: 1 });
        assert_eq!((h.u.td[best].priority, h.u.td[worst].priority), (lo, lo + 31), "{v}");
        assert!(u32::from(lo + 31) <= h.u.t.preempt_thresh, "{v}: every level is below preempt_thresh");
    }
}

/// `tdq_choose`: the realtime run queue is searched first, so an rtprio thread runs before
/// interactive and batch timeshare threads, whatever their scores; the idle queue last.
#[test]
fn realtime_runs_before_timeshare_and_idle_class_last() {
    let mut h = Harness::new("up", &[]);
    let idle = h.queued(0, TaskPolicy::Idle);
    let ts = h.queued(0, TaskPolicy::Normal);
    let rt = h.queued(0, TaskPolicy::Rr { prio: 1 });
    assert!(h.u.td[ts].priority >= h.u.lay.min_interact, "a fresh thread is interactive timeshare");
    let mut order = Vec::new();
    for _ in 0..3 {
        let t = h.switch(0).unwrap();
        order.push(t);
        h.with(|u, cx| u.dequeue_task(cx, 0, t, schedlab_sched_api::dequeue::SLEEP));
        h.w.cpus[0].nr_running -= 1;
    }
    assert_eq!(order, [rt, ts, idle]);
    h.check();
}

/// `sched_setpreempt` / `sched_shouldpreempt`: realtime levels are at or below
/// `preempt_thresh`, so a woken realtime thread preempts a running timeshare thread at
/// once (`td_owepreempt`), locally and through `IPI_PREEMPT` remotely; any woken thread
/// preempts an idle-class one.
#[test]
fn realtime_wakeup_preempts_timeshare_and_anything_preempts_idle_class() {
    for (machine, waker) in [("up", 0), ("smp2", 1)] {
        let mut h = Harness::new(machine, &[]);
        h.running_batch(0, false);
        h.w.this = waker;
        let rt = h.queued(0, TaskPolicy::Fifo { prio: 1 });
        h.with(|u, cx| u.wakeup_preempt(cx, 0, rt, 0));
        assert!(h.w.reqs.iter().any(|r| matches!(r, Request::Resched(0))), "{machine}");
        assert!(h.u.tdq[0].owepreempt || h.u.tdq[0].ipipending, "{machine}: an immediate preemption");
        h.w.this = 0;
        assert_eq!(h.switch(0), Some(rt));
    }
    let mut h = Harness::new("smp2", &[]);
    let idle = h.queued(0, TaskPolicy::Idle);
    assert_eq!(h.switch(0), Some(idle));
    h.w.this = 1;
    let ts = h.running_batch_queued(0);
    h.with(|u, cx| u.wakeup_preempt(cx, 0, ts, 0));
    assert!(h.w.reqs.iter().any(|r| matches!(r, Request::Resched(0))), "a batch thread IPIs an idle-class one");
}

/// `sched_clock`: a `PRI_FIFO` thread returns before the slice accounting (never asked to
/// switch); an `SCHED_RR` thread's slice ends after `tdq_slice` stat ticks (12 with one
/// other thread on the CPU) and it goes behind its equal.
#[test]
fn fifo_has_no_slice_and_rr_round_robins_every_slice() {
    let mut h = Harness::new("up", &[]);
    let f = h.queued(0, TaskPolicy::Fifo { prio: 10 });
    h.queued(0, TaskPolicy::Fifo { prio: 10 });
    assert_eq!(h.switch(0), Some(f));
    let before = h.u.td[f].slice;
    for _ in 0..2000 {
        assert!(!h.stat_tick(0), "FIFO: no slice, its equal waits");
    }
    assert_eq!(h.u.td[f].slice, before, "no slice accounting at all");
    let mut h = Harness::new("up", &[]);
    let a = h.queued(0, TaskPolicy::Rr { prio: 10 });
    let b = h.queued(0, TaskPolicy::Rr { prio: 10 });
    let slice = h.u.tdq_slice(0);
    assert_eq!(slice, h.u.t.slice, "two threads: the full sched_slice");
    assert_eq!(slice, 12);
    let mut turns = Vec::new();
    let mut cur = h.switch(0).unwrap();
    let mut ran = 0;
    while turns.len() < 4 {
        ran += 1;
        if h.stat_tick(0) {
            turns.push((cur, ran));
            cur = h.switch(0).unwrap();
            ran = 0;
        }
    }
    // The first turns end early: `sched_fork_thread` starts a thread with all but
    // `sched_slice_min` of its slice used.
    let owners: Vec<TaskId> = turns.iter().map(|t| t.0).collect();
    assert_eq!(owners, [a, b, a, b]);
    assert_eq!((turns[0].1, turns[2].1, turns[3].1), (h.u.t.slice_min, 12, 12));
    h.check();
}

/// FreeBSD has no `SCHED_DEADLINE`: admission refuses it with the reason; the classes it
/// has are admitted.
#[test]
fn deadline_is_refused_with_the_reason() {
    let mut h = Harness::new("up", &[]);
    let p = h.w.add_task(0, TaskPolicy::Normal, 0);
    let dl = TaskPolicy::Deadline(schedlab_sched_api::DlParams {
        runtime: 1_000_000,
        deadline: 10_000_000,
        period: 10_000_000,
    });
    let err = h.with(|u, cx| u.admit(cx, p, &dl)).unwrap_err();
    assert!(err.contains("FreeBSD has no SCHED_DEADLINE"), "{err}");
    for ok in [TaskPolicy::Normal, TaskPolicy::Idle, TaskPolicy::Fifo { prio: 1 }, TaskPolicy::Rr { prio: 99 }] {
        assert_eq!(h.with(|u, cx| u.admit(cx, p, &ok)), Ok(()), "{ok:?}");
    }
}

/// `rtp_to_pri` on a queued timeshare thread: it moves to its realtime level
/// (`sched_add(SRQ_BORROWING)`) and preempts the running timeshare thread; back to
/// `SCHED_OTHER` it restarts at `PRI_MIN_TIMESHARE` until `sched_priority` scores it.
#[test]
fn set_policy_moves_between_classes() {
    let mut h = Harness::new("up", &[]);
    h.running_batch(0, false);
    let t = h.queued(0, TaskPolicy::Normal);
    h.w.reqs.clear();
    h.w.tasks[t].policy = TaskPolicy::Rr { prio: 99 };
    h.with(|u, cx| u.policy_changed(cx, t, TaskPolicy::Normal));
    assert_eq!(h.u.td[t].priority, 48);
    assert!(h.w.reqs.iter().any(|r| matches!(r, Request::Resched(0))));
    assert_eq!(h.switch(0), Some(t));
    h.check();
    h.w.tasks[t].policy = TaskPolicy::Normal;
    h.with(|u, cx| u.policy_changed(cx, t, TaskPolicy::Rr { prio: 99 }));
    assert_eq!(h.u.td[t].user_pri, h.u.lay.min_interact);
    h.check();
}

/// The ULE-vs-CFS port: ULE replaced CFS inside Linux, so a realtime thread belongs to the
/// rt class above it and its wakeup preempts a running user thread, as a kernel thread's.
#[test]
fn study_variant_realtime_wakeup_preempts() {
    let mut h = Harness::new("up", &[("version", "11.1-linux")]);
    h.running_batch(0, false);
    let rt = h.queued(0, TaskPolicy::Fifo { prio: 50 });
    h.with(|u, cx| u.wakeup_preempt(cx, 0, rt, 0));
    assert!(h.w.reqs.iter().any(|r| matches!(r, Request::Resched(0))));
}
