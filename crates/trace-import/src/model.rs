//! From events to programs: each traced thread's CPU demand between the points where it
//! blocked, and what ended each block — another traced thread's wakeup (a dependency: the
//! waker signals a futex word the sleeper waits on, so the order survives when timing
//! changes) or something outside the traced set (a timer, an interrupt, the idle task: a
//! timer that fires at the time seen).
//!
//! A thread's run time is summed over its preemptions (`prev_state` R): preemption is the
//! scheduler's doing, not the program's, so it is not replayed; only blocking is.

use crate::event::{Kind, PrevState, Trace};
use crate::{Interrupted, KeepGoing, Poll};
use std::collections::BTreeMap;

/// Which threads become tasks.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Keep only threads whose name starts with one of these, and their descendants
    /// forked within the trace; empty: every thread.
    pub only: Vec<String>,
}

/// One operation of an inferred program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// CPU demand (ns).
    Run(u64),
    /// Blocked until something outside the traced set woke it, at this time (ns from the
    /// trace's first event): a timer at the time seen, so a replay that runs late or early
    /// still sees the outside world's wakeups when the trace did, without drift.
    WakeAt(u64),
    /// Wake the thread at the other end of edge `e` (its `n`-th signal, from 0).
    Signal { edge: usize },
    /// Block until edge `e` has been signalled more than `seen` times.
    Wait { edge: usize, seen: u32 },
    /// Fork the thread with this index.
    Fork(usize),
}

/// A traced thread and its inferred program.
#[derive(Clone, Debug)]
pub struct Thread {
    pub tid: i32,
    /// The workload task's name: `comm-tid`, with characters TOML names keep.
    pub name: String,
    pub comm: String,
    /// The traced thread that forked it.
    pub parent: Option<usize>,
    /// When it appeared (ns from the trace's first event): 0, or its fork.
    pub start: u64,
    pub ops: Vec<Op>,
    /// The kernel priority first seen (0..99 real-time, 100..139 = 120 + nice).
    pub prio: Option<i32>,
    /// CPUs it ran on.
    pub cpus: Vec<u32>,
    /// Exited within the trace (`prev_state` X/Z).
    pub exited: bool,
    /// Total time on a CPU (the sum of its `Run`s).
    pub run_ns: u64,
}

/// A dependency: `waker` woke `wakee` `count` times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    pub waker: usize,
    pub wakee: usize,
    pub count: u32,
}

/// The inferred workload.
#[derive(Clone, Debug)]
pub struct Model {
    pub threads: Vec<Thread>,
    pub edges: Vec<Edge>,
    pub nr_cpus: u32,
    /// The first event's time (the zero of every other time here).
    pub t0: u64,
    /// The last event, from `t0`.
    pub end: u64,
    /// How the blocks ended.
    pub wakes_by_thread: u64,
    pub wakes_external: u64,
    /// Threads of the trace left out by [`Options::only`].
    pub left_out: usize,
    /// Whether the trace had `sched_waking` (else `sched_wakeup` stood for it).
    pub used_waking: bool,
}

#[derive(Default, Clone)]
struct St {
    on_cpu: Option<u64>,
    acc: u64,
    blocked: Option<u64>,
    seen: bool,
    dead: bool,
    /// Forked within the trace (so it did not exist before it).
    born: bool,
}

struct Builder {
    threads: Vec<Thread>,
    st: Vec<St>,
    idx: BTreeMap<i32, usize>,
    edges: Vec<Edge>,
    edge_of: BTreeMap<(usize, usize), usize>,
    wakes_by_thread: u64,
    wakes_external: u64,
}

/// Which threads are kept, and which of them are forked within the trace.
/// Returns the kept threads in order of first sight, the forks within the kept set
/// (child → parent, time), when every child was forked, and how many were left out.
fn select(trace: &Trace, opts: &Options, poll: &mut Poll) -> Result<Selection, Interrupted> {
    let mut forks = BTreeMap::new();
    let mut seen = BTreeMap::new();
    let mut order = Vec::new();
    let note = |pid: i32, order: &mut Vec<i32>, seen: &mut BTreeMap<i32, ()>| {
        if pid > 0 && seen.insert(pid, ()).is_none() {
            order.push(pid);
        }
    };
    for e in &trace.events {
        if poll.stop() {
            return Err(Interrupted);
        }
        match e.kind {
            Kind::Switch { prev, next, .. } => {
                note(prev, &mut order, &mut seen);
                note(next, &mut order, &mut seen);
            }
            Kind::Wake { pid, .. } | Kind::Migrate { pid, .. } | Kind::Exit { pid } => note(pid, &mut order, &mut seen),
            Kind::Fork { parent, child } => {
                // A child already seen, or its own parent (a reused pid), is no fork within the
                // trace: a thread that existed before it.
                if child > 0 && child != parent && !forks.contains_key(&child) && !seen.contains_key(&child) {
                    forks.insert(child, (parent, e.time));
                }
                note(parent, &mut order, &mut seen);
                note(child, &mut order, &mut seen);
            }
        }
    }
    let mut keep: BTreeMap<i32, bool> = BTreeMap::new();
    for &pid in &order {
        let by_name = opts.only.is_empty() || opts.only.iter().any(|p| trace.comm(pid).starts_with(p.as_str()));
        let by_parent = forks.get(&pid).is_some_and(|(p, _)| keep.get(p) == Some(&true));
        keep.insert(pid, by_name || by_parent);
    }
    let total = order.len();
    order.retain(|p| keep[p]);
    let born = forks.iter().map(|(c, (_, t))| (*c, *t)).collect();
    forks.retain(|c, (p, _)| keep[c] && keep.get(p) == Some(&true));
    let left_out = total - order.len();
    Ok(Selection { order, forks, born, left_out })
}

struct Selection {
    order: Vec<i32>,
    forks: BTreeMap<i32, (i32, u64)>,
    born: BTreeMap<i32, u64>,
    left_out: usize,
}

/// A name a workload keeps: `comm-tid`, other characters as `_`.
fn task_name(comm: &str, tid: i32) -> String {
    let c: String =
        comm.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    format!("{c}-{tid}")
}

/// Infers the program of every kept thread.
pub fn build(trace: &Trace, opts: &Options) -> Model {
    build_with(trace, opts, &|| true).expect("never stopped")
}

/// [`build`], stopped once `keep_going` says so.
pub fn build_with(trace: &Trace, opts: &Options, keep_going: KeepGoing) -> Result<Model, Interrupted> {
    let mut poll = Poll::new(keep_going);
    let (t0, last) = trace.span();
    let Selection { order, forks, born, left_out } = select(trace, opts, &mut poll)?;
    // Threads that existed when the trace began first, then forked ones in fork order, as
    // a simulation numbers started and forked tasks.
    let mut ids: Vec<i32> = order.iter().copied().filter(|p| !forks.contains_key(p)).collect();
    let mut forked: Vec<(u64, i32)> = forks.iter().map(|(c, (_, t))| (*t, *c)).collect();
    forked.sort();
    ids.extend(forked.iter().map(|(_, c)| *c));
    let idx: BTreeMap<i32, usize> = ids.iter().enumerate().map(|(i, p)| (*p, i)).collect();
    let threads = ids
        .iter()
        .map(|&tid| Thread {
            tid,
            name: task_name(trace.comm(tid), tid),
            comm: trace.comm(tid).to_string(),
            parent: forks.get(&tid).map(|(p, _)| idx[p]),
            start: born.get(&tid).map_or(0, |t| t - t0),
            ops: Vec::new(),
            prio: None,
            cpus: Vec::new(),
            exited: false,
            run_ns: 0,
        })
        .collect();
    let n = ids.len();
    let mut st = vec![St::default(); n];
    for (i, tid) in ids.iter().enumerate() {
        st[i].born = born.contains_key(tid);
    }
    let mut b = Builder {
        threads,
        st,
        idx,
        edges: Vec::new(),
        edge_of: BTreeMap::new(),
        wakes_by_thread: 0,
        wakes_external: 0,
    };
    let used_waking = trace.events.iter().any(|e| matches!(e.kind, Kind::Wake { waking: true, .. }));
    for e in &trace.events {
        if poll.stop() {
            return Err(Interrupted);
        }
        let r = e.time - t0;
        b.current(e.current, r);
        match e.kind {
            Kind::Switch { prev, prev_prio, prev_state, next, next_prio } => {
                b.switch_out(prev, prev_prio, prev_state, e.cpu, r);
                b.switch_in(next, next_prio, e.cpu, r);
            }
            Kind::Wake { pid, prio, waking, new: false, .. } if waking == used_waking => {
                let waker = if e.irq { 0 } else { e.current };
                b.wake(pid, prio, waker, r);
            }
            Kind::Fork { parent, child } => b.fork(parent, child, r),
            _ => {}
        }
    }
    let end = last - t0;
    b.finish(end);
    let Builder { threads, edges, wakes_by_thread, wakes_external, .. } = b;
    Ok(Model {
        threads,
        edges,
        nr_cpus: trace.nr_cpus,
        t0,
        end,
        wakes_by_thread,
        wakes_external,
        left_out,
        used_waking,
    })
}

impl Builder {
    fn get(&mut self, pid: i32) -> Option<usize> {
        self.idx.get(&pid).copied()
    }

    /// First sight of a thread that existed before the trace: running, it ran since the
    /// trace began; sleeping, it slept since then.
    fn first_seen(&mut self, i: usize, running: bool, blocked: bool) {
        let s = &mut self.st[i];
        if !s.seen && !s.born {
            if running {
                s.on_cpu = Some(self.threads[i].start);
            } else if blocked {
                s.blocked = Some(self.threads[i].start);
            }
        }
        s.seen = true;
    }

    /// The thread current where an event was recorded runs, whatever the switches said:
    /// a trace may miss a switch-in (events enabled per CPU at slightly different times).
    fn current(&mut self, pid: i32, r: u64) {
        let Some(i) = self.get(pid) else { return };
        if self.st[i].on_cpu.is_some() || self.st[i].dead {
            return;
        }
        self.first_seen(i, true, false);
        if let Some(b) = self.st[i].blocked.take() {
            self.external(i, b, r);
        }
        self.st[i].on_cpu.get_or_insert(r);
    }

    fn flush(&mut self, i: usize) {
        let acc = std::mem::take(&mut self.st[i].acc);
        if acc == 0 {
            return;
        }
        self.threads[i].run_ns += acc;
        match self.threads[i].ops.last_mut() {
            Some(Op::Run(x)) => *x += acc,
            _ => self.threads[i].ops.push(Op::Run(acc)),
        }
    }

    /// Counts the CPU time of a running thread up to `r` (it keeps running).
    fn account(&mut self, i: usize, r: u64) {
        if let Some(s) = self.st[i].on_cpu {
            self.st[i].acc += r.saturating_sub(s);
            self.st[i].on_cpu = Some(r);
        }
    }

    fn switch_out(&mut self, prev: i32, prio: i32, state: PrevState, cpu: u32, r: u64) {
        let Some(i) = self.get(prev) else { return };
        self.first_seen(i, true, false);
        self.note_cpu(i, cpu, prio);
        self.account(i, r);
        self.st[i].on_cpu = None;
        match state {
            PrevState::Runnable => {}
            PrevState::Blocked => {
                self.flush(i);
                self.st[i].blocked = Some(r);
            }
            PrevState::Dead => {
                self.flush(i);
                self.st[i].dead = true;
                self.threads[i].exited = true;
            }
        }
    }

    fn switch_in(&mut self, next: i32, prio: i32, cpu: u32, r: u64) {
        let Some(i) = self.get(next) else { return };
        self.first_seen(i, false, false);
        self.note_cpu(i, cpu, prio);
        if let Some(b) = self.st[i].blocked.take() {
            // Woken without a wakeup event the importer used (lost, or before the trace).
            self.external(i, b, r);
        }
        // A switch-in not preceded by the switch-out elsewhere (equal timestamps on two
        // CPUs): close the old interval first.
        self.account(i, r);
        self.st[i].on_cpu = Some(r);
    }

    fn note_cpu(&mut self, i: usize, cpu: u32, prio: i32) {
        let t = &mut self.threads[i];
        if !t.cpus.contains(&cpu) {
            t.cpus.push(cpu);
        }
        t.prio.get_or_insert(prio);
    }

    fn external(&mut self, i: usize, from: u64, r: u64) {
        self.wakes_external += 1;
        if r > from {
            self.threads[i].ops.push(Op::WakeAt(r));
        }
    }

    /// The first wakeup of a blocked thread ends its block: by a kept thread running on
    /// the waking CPU (not in interrupt context), a dependency; otherwise external.
    fn wake(&mut self, pid: i32, prio: i32, waker: i32, r: u64) {
        let Some(i) = self.get(pid) else { return };
        self.first_seen(i, false, true);
        self.threads[i].prio.get_or_insert(prio);
        let Some(b) = self.st[i].blocked.take() else { return };
        let w = match self.get(waker) {
            Some(w) if w != i && !self.st[w].dead => w,
            _ => return self.external(i, b, r),
        };
        self.first_seen(w, true, false);
        if self.st[w].on_cpu.is_none() {
            // The waker runs by the event's context but no switch put it there yet.
            self.st[w].on_cpu = Some(r);
        }
        self.account(w, r);
        self.flush(w);
        let next = self.edges.len();
        let e = *self.edge_of.entry((w, i)).or_insert(next);
        if e == next {
            self.edges.push(Edge { waker: w, wakee: i, count: 0 });
        }
        let seen = self.edges[e].count;
        self.edges[e].count += 1;
        self.threads[w].ops.push(Op::Signal { edge: e });
        self.threads[i].ops.push(Op::Wait { edge: e, seen });
        self.wakes_by_thread += 1;
    }

    fn fork(&mut self, parent: i32, child: i32, r: u64) {
        let (Some(p), Some(c)) = (self.get(parent), self.get(child)) else { return };
        if self.threads[c].parent != Some(p) {
            return;
        }
        self.first_seen(p, true, false);
        if self.st[p].on_cpu.is_none() {
            self.st[p].on_cpu = Some(r);
        }
        self.account(p, r);
        self.flush(p);
        self.threads[p].ops.push(Op::Fork(c));
        self.st[c].seen = true;
    }

    /// The trace ended: running threads' time counted; sleepers sleep to the end.
    fn finish(&mut self, end: u64) {
        for i in 0..self.threads.len() {
            self.account(i, end);
            self.flush(i);
            if let Some(b) = self.st[i].blocked.take() {
                if end > b && !self.st[i].dead {
                    self.threads[i].ops.push(Op::WakeAt(end));
                }
            }
        }
    }
}
