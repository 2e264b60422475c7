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
        let a = self.new_task(cpu, kthread);
        let max = self.u.t.slp_run_max();
        self.u.td[a].hist.runtime = max;
        self.u.td[a].hist.slptime = 0;
        self.with(|u, cx| u.sched_priority(cx, a));
        let up = self.u.td[a].user_pri;
        (self.u.td[a].priority, self.u.td[a].base_pri) = (up, up);
        self.with(|u, cx| u.enqueue_task(cx, cpu, a, enqueue::INITIAL));
        self.w.cpus[cpu].nr_running += 1;
        let got = self.with(|u, cx| u.pick_next_task(cx, cpu));
        assert_eq!(got, Some(a));
        self.w.cpus[cpu].curr = Some(a);
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
