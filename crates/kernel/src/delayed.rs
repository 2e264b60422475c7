//! The delayed new-task wakeup (switch `delayed_wakeup`), as proposed by Zhang, Gu and Su,
//! "Research on Decreasing Lock Contention for Linux Scheduler" (2017), for Linux 2.6.32/3.4.
//!
//! `wake_up_new_task` *tries* the target runqueue's lock instead of spinning on it. On
//! success it re-checks that the child's runqueue did not change (as `task_rq_lock` does)
//! and enqueues as usual. On failure the child goes into the forking CPU's delay queue for
//! that target (`dtqueue[target]`), and the forking CPU sets its bit in the target's
//! bitmap of CPUs with pending entries (`dtmap`, under the target's `dtlock`). The target
//! drains every marked queue into its runqueue at its next `schedule()`, before picking.
//!
//! Each queue has one producer (the forking CPU) and one consumer (the target), so it is
//! lock-free: a ring of [`RING_SLOTS`] slots (full when `read == (write + 1) % 32`, so
//! [`RING_USABLE`] entries) that overflows into a singly linked list whose head is always a
//! dummy node (the last dequeued node, freed at the next dequeue), so the producer's tail
//! never dangles. The simulator executes each operation atomically; the structures are
//! nevertheless the paper's, so their occupancy and overflows are the real ones.
//!
//! What the paper leaves open, and the model decides: an idle target is sent a reschedule
//! IPI (nothing else would make it call `schedule()`), and a busy target's tick requests a
//! reschedule while it has pending entries (a CPU-bound task alone on its runqueue would
//! otherwise never call `schedule()`).

use crate::vocab::{Action, Event, Ipi, Step};
use crate::{Kernel, ProbeEvent, TState};
use schedlab_machine::{KernelPath, LockSite};
use schedlab_sched_api::{enqueue, wf, SelectKind};
use schedlab_sim::{CpuId, Ns, TaskId};

/// Slots of one delay queue's ring (the paper's 32).
pub const RING_SLOTS: usize = 32;
/// Entries a ring holds before overflowing: one slot stays empty to tell full from empty.
pub const RING_USABLE: usize = RING_SLOTS - 1;

/// A delayed child: the task, and the target's `schedule()` count when it was queued (the
/// check that it is drained at the very next one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub task: TaskId,
    pub seen: u64,
}

/// The single-producer/single-consumer ring.
#[derive(Debug)]
pub(crate) struct Ring {
    slots: [Option<Entry>; RING_SLOTS],
    read: usize,
    write: usize,
}

impl Ring {
    fn new() -> Ring {
        Ring { slots: [None; RING_SLOTS], read: 0, write: 0 }
    }
    /// The producer's put; gives the entry back when the ring is full.
    fn push(&mut self, e: Entry) -> Result<(), Entry> {
        let next = (self.write + 1) % RING_SLOTS;
        if next == self.read {
            return Err(e);
        }
        self.slots[self.write] = Some(e);
        self.write = next;
        Ok(())
    }
    /// The consumer's get.
    fn pop(&mut self) -> Option<Entry> {
        if self.read == self.write {
            return None;
        }
        let e = self.slots[self.read].take();
        self.read = (self.read + 1) % RING_SLOTS;
        e
    }
    fn iter(&self) -> impl Iterator<Item = &Entry> + '_ {
        let n = (self.write + RING_SLOTS - self.read) % RING_SLOTS;
        (0..n).filter_map(move |i| self.slots[(self.read + i) % RING_SLOTS].as_ref())
    }
}

/// The overflow list: nodes in an arena, `head` always a dummy node.
#[derive(Debug)]
pub(crate) struct List {
    nodes: Vec<(Option<Entry>, Option<usize>)>,
    free: Vec<usize>,
    head: usize,
    tail: usize,
}

impl List {
    fn new() -> List {
        List { nodes: vec![(None, None)], free: Vec::new(), head: 0, tail: 0 }
    }
    /// The producer appends after its tail.
    fn push(&mut self, e: Entry) {
        let n = match self.free.pop() {
            Some(n) => {
                self.nodes[n] = (Some(e), None);
                n
            }
            None => {
                self.nodes.push((Some(e), None));
                self.nodes.len() - 1
            }
        };
        self.nodes[self.tail].1 = Some(n);
        self.tail = n;
    }
    /// The consumer takes the node after the dummy; that node becomes the dummy and the old
    /// dummy is freed.
    fn pop(&mut self) -> Option<Entry> {
        let next = self.nodes[self.head].1?;
        let e = self.nodes[next].0.take();
        self.free.push(self.head);
        self.head = next;
        e
    }
    fn iter(&self) -> impl Iterator<Item = &Entry> + '_ {
        let mut at = self.nodes[self.head].1;
        std::iter::from_fn(move || {
            let n = at?;
            at = self.nodes[n].1;
            self.nodes[n].0.as_ref()
        })
    }
}

/// One (forking CPU, target CPU) delay queue.
#[derive(Debug)]
pub(crate) struct DtQueue {
    ring: Ring,
    list: List,
}

impl DtQueue {
    fn new() -> DtQueue {
        DtQueue { ring: Ring::new(), list: List::new() }
    }
    /// Returns whether the entry overflowed into the list.
    pub fn push(&mut self, e: Entry) -> bool {
        match self.ring.push(e) {
            Ok(()) => false,
            Err(e) => {
                self.list.push(e);
                true
            }
        }
    }
    /// The ring first, then the list.
    pub fn pop(&mut self) -> Option<Entry> {
        self.ring.pop().or_else(|| self.list.pop())
    }
    pub fn iter(&self) -> impl Iterator<Item = &Entry> + '_ {
        self.ring.iter().chain(self.list.iter())
    }
}

/// Every CPU's delay queues (allocated at first use: n² rings would be large on big
/// machines), the targets' bitmaps, and the counters.
#[derive(Debug)]
pub(crate) struct DelayQueues {
    n: usize,
    /// Indexed `source * n + target`.
    queues: Vec<Option<Box<DtQueue>>>,
    /// Per target: the `dtmap` bit of each source CPU with pending entries.
    map: Vec<Vec<bool>>,
    /// Per task: the (source, target) queue it is in.
    queued_on: Vec<Option<(CpuId, CpuId)>>,
    /// Per CPU: `schedule()` calls so far.
    pub sched_count: Vec<u64>,
    /// Per target: pending entries.
    pending: Vec<u64>,
    pub delayed: u64,
    pub overflows: u64,
}

impl DelayQueues {
    pub fn new(n: usize) -> DelayQueues {
        DelayQueues {
            n,
            queues: Vec::new(),
            map: vec![Vec::new(); n],
            queued_on: Vec::new(),
            sched_count: vec![0; n],
            pending: vec![0; n],
            delayed: 0,
            overflows: 0,
        }
    }

    /// Queues `task` from `source` for `target`; `Err` if it is queued already. Returns
    /// whether it overflowed the ring.
    pub fn push(&mut self, source: CpuId, target: CpuId, task: TaskId) -> Result<bool, String> {
        if self.queued_on.len() <= task {
            self.queued_on.resize(task + 1, None);
        }
        if let Some((s, t)) = self.queued_on[task] {
            return Err(format!("task {task} delayed twice (already queued from CPU {s} for CPU {t})"));
        }
        if self.queues.is_empty() {
            self.queues = (0..self.n * self.n).map(|_| None).collect();
        }
        let e = Entry { task, seen: self.sched_count[target] };
        let q = self.queues[source * self.n + target].get_or_insert_with(|| Box::new(DtQueue::new()));
        let over = q.push(e);
        self.queued_on[task] = Some((source, target));
        if self.map[target].is_empty() {
            self.map[target] = vec![false; self.n];
        }
        self.map[target][source] = true;
        self.pending[target] += 1;
        self.delayed += 1;
        self.overflows += u64::from(over);
        Ok(over)
    }

    pub fn has_pending(&self, target: CpuId) -> bool {
        self.pending[target] > 0
    }

    /// Drains every queue `target`'s bitmap marks, in source order: the entries, each with
    /// its source. Bits of now-empty queues are cleared (`dtlock`).
    pub fn drain(&mut self, target: CpuId) -> Vec<(CpuId, Entry)> {
        let mut out = Vec::new();
        if self.pending[target] == 0 {
            return out;
        }
        for source in 0..self.n {
            if !self.map[target][source] {
                continue;
            }
            if let Some(q) = self.queues[source * self.n + target].as_mut() {
                while let Some(e) = q.pop() {
                    self.queued_on[e.task] = None;
                    out.push((source, e));
                }
            }
            self.map[target][source] = false;
        }
        self.pending[target] = 0;
        out
    }

    /// The checks of `target`'s queues: each entry's task is marked as queued there, it was
    /// queued since the target's last `schedule()`, the bitmap marks every non-empty queue,
    /// and the pending count is the number of entries. Returns the entries for the
    /// caller's checks of the tasks themselves.
    pub fn check_target(&self, target: CpuId) -> Result<Vec<TaskId>, String> {
        let mut tasks = Vec::new();
        if self.queues.is_empty() {
            return Ok(tasks);
        }
        for source in 0..self.n {
            let Some(q) = self.queues[source * self.n + target].as_ref() else { continue };
            for e in q.iter() {
                if self.queued_on.get(e.task).copied().flatten() != Some((source, target)) {
                    return Err(format!("task {} is in the delay queue {source}→{target} but not marked so", e.task));
                }
                if e.seen != self.sched_count[target] {
                    return Err(format!(
                        "task {} waits in the delay queue {source}→{target} although CPU {target} has called schedule() since",
                        e.task
                    ));
                }
                if !self.map[target][source] {
                    return Err(format!("delay queue {source}→{target} is not empty but its dtmap bit is clear"));
                }
                tasks.push(e.task);
            }
        }
        if tasks.len() as u64 != self.pending[target] {
            return Err(format!(
                "CPU {target}: {} delayed tasks queued, {} counted",
                tasks.len(),
                self.pending[target]
            ));
        }
        Ok(tasks)
    }

    /// Tasks marked as delayed, over all queues.
    pub fn marked(&self) -> usize {
        self.queued_on.iter().filter(|m| m.is_some()).count()
    }
}

impl Kernel<'_> {
    /// `wake_up_new_task` for `child` on `target`, run by `cpu` after `sched_fork`: with
    /// `delayed_wakeup`, a trylock (its cost, then the attempt); else the plain lock
    /// (`kernel/sched/core.c:wake_up_new_task (v3.4, v5.15)`, `kernel/sched.c (v2.6.32)`).
    pub(crate) fn push_wake_up_new_task(&mut self, cpu: CpuId, child: TaskId, target: CpuId) {
        if self.cfg.delayed_wakeup {
            let c = self.machine.costs.rq_trylock;
            self.cpus[cpu].kstack.push_front(Step::Do(Action::WakeUpNewTaskTry { child, cpu: target }));
            self.cpus[cpu].kstack.push_front(Step::Delay(KernelPath::ForkExit, c));
        } else {
            let hold = self.machine.costs.wake_up_new_task;
            let s = self.locked1(target, LockSite::WakeUpNewTask, hold, Action::WakeUpNewTask { child, cpu: target });
            self.cpus[cpu].kstack.push_front(s);
        }
    }

    /// The trylock: a free lock is taken at once (the locked step queued here runs next in
    /// this same instant, so it never spins); a held one sends the child to the delay queue.
    pub(crate) fn wake_up_new_task_try(&mut self, cpu: CpuId, child: TaskId, target: CpuId) {
        self.touch(target);
        if self.locks[target].owner.is_none() {
            let hold = self.machine.costs.wake_up_new_task;
            let s = self.locked1(target, LockSite::WakeUpNewTask, hold, Action::WakeUpNewTask { child, cpu: target });
            self.cpus[cpu].kstack.push_front(s);
            return;
        }
        let over = match self.dtq.push(cpu, target, child) {
            Ok(over) => over,
            Err(e) => return self.fail(e),
        };
        let c = &self.machine.costs;
        let cost = c.delay_queue_op + if over { c.delay_overflow } else { Ns(0) };
        self.cpus[cpu].kstack.push_front(Step::Delay(KernelPath::ForkExit, cost));
        if self.cpus[target].curr.is_none() && !self.cpus[target].need_resched {
            let at = self.now + self.machine.costs.ipi_latency;
            self.events.push(at, Event::Ipi { cpu: target as u32, kind: Ipi::Delayed });
        }
    }

    /// `wake_up_new_task` under the target's lock. With `delayed_wakeup` the trylock's
    /// success is followed by `task_rq_lock`'s re-check: a child whose CPU changed meanwhile
    /// is tried again on its new runqueue.
    pub(crate) fn wake_up_new_task(&mut self, cpu: CpuId, child: TaskId, rq: CpuId) {
        if self.cfg.delayed_wakeup && self.info[child].cpu != rq {
            let now_on = self.info[child].cpu;
            self.cpus[cpu].kstack.push_front(Step::Do(Action::WakeUpNewTaskTry { child, cpu: now_on }));
            return;
        }
        self.enqueue(cpu, rq, child, enqueue::INITIAL);
        self.probe.event(&ProbeEvent::Wakeup { time: self.now, task: child, cpu: rq, new: true });
        self.check_preempt(cpu, rq, child, wf::FORK);
    }

    /// At `schedule()` on `cpu`, before picking: every pending delayed child enters this
    /// runqueue. Returns the extra lock hold (one queue read and one enqueue per child).
    pub(crate) fn drain_delayed(&mut self, cpu: CpuId) -> Ns {
        let entries = self.dtq.drain(cpu);
        self.dtq.sched_count[cpu] += 1;
        let mut extra = Ns(0);
        for (_, e) in entries {
            let t = e.task;
            extra += self.machine.costs.delay_queue_op;
            if self.tasks[t].state != TState::Running || self.tasks[t].on_rq {
                self.fail(format!("delayed task {} was woken or queued while in its delay queue", self.info[t].name));
                return extra;
            }
            if !self.info[t].affinity.contains(cpu) {
                // Its affinity changed while it waited: place it again, as at fork.
                let target = self.select(cpu, t, cpu, SelectKind::Fork, wf::FORK);
                self.info[t].cpu = target;
                self.push_wake_up_new_task(cpu, t, target);
                continue;
            }
            extra += self.machine.costs.wake_up_new_task;
            self.enqueue(cpu, cpu, t, enqueue::INITIAL);
            self.probe.event(&ProbeEvent::Wakeup { time: self.now, task: t, cpu, new: true });
        }
        extra
    }

    /// The delayed tasks' checks for `cpus` as targets (all CPUs: also that every marked
    /// task is in a queue exactly once).
    pub(crate) fn check_delayed(&self, cpus: &[CpuId], all: bool) -> Result<(), String> {
        let mut total = 0;
        for &c in cpus {
            let tasks = self.dtq.check_target(c)?;
            for &t in &tasks {
                let tk = &self.tasks[t];
                if tk.state != TState::Running || tk.on_rq || tk.in_transit || self.info[t].cpu != c {
                    return Err(format!(
                        "delayed task {} for CPU {c} is awake, queued or elsewhere",
                        self.info[t].name
                    ));
                }
            }
            total += tasks.len();
        }
        if all && total != self.dtq.marked() {
            return Err(format!("{} tasks marked delayed, {total} in the delay queues", self.dtq.marked()));
        }
        Ok(())
    }

    /// The kernel model's counters for the record.
    pub(crate) fn kernel_counters(&self) -> Vec<(String, u64)> {
        let (n, sum, max) = self.first_run;
        let mut v = vec![
            ("forks_run".to_string(), n),
            ("fork_to_first_run_ns_mean".to_string(), sum.checked_div(n).unwrap_or(0)),
            ("fork_to_first_run_ns_max".to_string(), max),
        ];
        if self.cfg.delayed_wakeup {
            v.push(("delayed_wakeups".to_string(), self.dtq.delayed));
            v.push(("delayed_overflows".to_string(), self.dtq.overflows));
        }
        v
    }

    /// A forked task runs for the first time: its fork-to-first-run time.
    pub(crate) fn note_first_run(&mut self, t: TaskId) {
        if let Some(born) = self.tasks[t].born.take() {
            let d = (self.now - born).0;
            let (n, sum, max) = &mut self.first_run;
            *n += 1;
            *sum += d;
            *max = (*max).max(d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(task: TaskId) -> Entry {
        Entry { task, seen: 0 }
    }

    /// The ring holds 31 entries (one slot tells full from empty); the 32nd and later
    /// overflow into the list; the consumer gets all back, ring first, each once.
    #[test]
    fn ring_overflows_into_the_list() {
        let mut q = DtQueue::new();
        let over: Vec<bool> = (0..40).map(|t| q.push(e(t))).collect();
        assert!(over[..RING_USABLE].iter().all(|o| !o));
        assert!(over[RING_USABLE..].iter().all(|o| *o));
        assert_eq!(q.iter().count(), 40);
        let got: Vec<TaskId> = std::iter::from_fn(|| q.pop()).map(|e| e.task).collect();
        assert_eq!(got, (0..40).collect::<Vec<_>>());
        assert!(q.pop().is_none());
    }

    /// The list's head is always a dummy: popping frees the old dummy for reuse, so a
    /// producer that keeps overflowing reuses nodes instead of growing the arena.
    #[test]
    fn list_reuses_the_dummy_node() {
        let mut l = List::new();
        for round in 0..100 {
            l.push(e(round));
            assert_eq!(l.pop().map(|e| e.task), Some(round));
            assert!(l.pop().is_none());
        }
        assert!(l.nodes.len() <= 2, "{} nodes for one entry at a time", l.nodes.len());
    }

    /// Draining marks, counts and unmarks; a second queueing of a queued task is refused.
    #[test]
    fn queues_refuse_a_task_twice_and_drain_by_bitmap() {
        let mut d = DelayQueues::new(4);
        assert_eq!(d.push(0, 2, 7), Ok(false));
        assert!(d.push(1, 2, 7).is_err());
        for t in 8..8 + RING_USABLE {
            d.push(3, 2, t).unwrap();
        }
        assert_eq!(d.push(3, 2, 100), Ok(true));
        assert_eq!(d.check_target(2).unwrap().len(), RING_USABLE + 2);
        assert!(d.has_pending(2) && !d.has_pending(1));
        let drained = d.drain(2);
        assert_eq!(drained.len(), RING_USABLE + 2);
        assert_eq!(drained[0], (0, Entry { task: 7, seen: 0 }));
        assert_eq!(d.marked(), 0);
        assert!(!d.has_pending(2));
        assert_eq!((d.delayed, d.overflows), (RING_USABLE as u64 + 2, 1));
    }
}
