//! Kernel sched events → the simulator's [`ProbeEvent`] stream, so the same `Metrics`
//! probe (and every report drawn from it) measures a real run.
//!
//! Events are merged across CPUs by time. Only the run's own threads become tasks; every
//! other thread on a CPU (other processes, kernel threads, schedlab's controller) is
//! "other" time of that CPU and appears as no task (`None`, like idle) in switches.
//! Wakeups of a task that is not blocked (the kernel traces `ttwu_runnable` too) are
//! dropped, as the simulator emits none for it.
//!
//! **Switches the kernel did not trace.** Every record names the task current on its CPU
//! (`common_pid`), so a `sched_switch` that never reached the buffer shows: the next record
//! of that CPU names another current task. This host's kernel (a 6.18 vendor build on a
//! virtual machine) records no `sched_switch` out of some tasks — the idle task, and the
//! virtual machine's own agent threads (checked on a plain tracefs instance: 17 of 1524
//! records in one second named another current task than the last switch said, every
//! one after a switch *into* such a thread) — while the switches into them and everything
//! else are recorded. On a quiet host nearly every run of a sleeper starts from idle, so
//! without a repair each stint of a lone sleeper began only at its switch out (run time
//! ~0 in the trace, ~100 % in procfs); under load the gaps are rarer but a stint lost is
//! still a whole stint. The repair: when a wakeup (or a migration) puts a task on a CPU,
//! the converter looks at that CPU's next record among those already read (the buffers
//! were read at least [`crate::MERGE_DELAY_NS`] after the wakeup): the same current task,
//! or a traced switch out of it, needs nothing; another current task means the switch to
//! it was not traced, and one is inferred at the wakeup's time (a CPU that was idle, with
//! no later record at all, switches to the woken task). The idle exit or the agent
//! thread's remaining run follows within microseconds: the inferred stint is that much
//! long. A mismatch found otherwise is repaired when the record revealing it is delivered
//! (later than it happened; counted).
//!
//! The stream delivered to the probe never goes back in time: an event older than one
//! already delivered (its buffer was read after the merge delay, e.g. a virtual CPU the
//! hypervisor preempted) is delivered at that time, and counted.

use crate::ringbuf::{RawEvent, RawKind};
use schedlab_probe::{PrevState, Probe, ProbeEvent, SampleView};
use schedlab_sched_api::{CpuView, TaskInfo};
use schedlab_sim::{CpuId, Ns, TaskId};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Unborn,
    Blocked,
    Runnable,
    Running,
    Dead,
}

/// Who a CPU is running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owner {
    Ours,
    Other,
    Idle,
}

/// `sched_switch`'s `prev_state`: the `TASK_REPORT` bits (`0` = still runnable, i.e.
/// preempted or yielded; `EXIT_DEAD`/`EXIT_ZOMBIE` = exiting; anything else blocked).
/// `include/trace/events/sched.h: __trace_sched_switch_state` (v6.18).
pub fn prev_state(raw: i64) -> PrevState {
    const EXIT_DEAD: i64 = 0x10;
    const EXIT_ZOMBIE: i64 = 0x20;
    let s = raw & 0xff;
    if s == 0 {
        PrevState::Runnable
    } else if s & (EXIT_DEAD | EXIT_ZOMBIE) != 0 {
        PrevState::Dead
    } else {
        PrevState::Blocked
    }
}

/// Per-CPU time split for a host run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuSplit {
    pub ours: u64,
    pub other: u64,
    pub idle: u64,
}

/// What the converter had to repair in the kernel's record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Repairs {
    /// Switches the kernel did not trace (out of the idle task or an agent thread),
    /// inferred at the wakeup (or migration) that gave the CPU its next task.
    pub at_wakeup: u64,
    /// Switches not traced that showed only in a later record of the CPU, inferred when
    /// that record was delivered (later than they happened).
    pub late_switches: u64,
    /// Records older than one already delivered, delivered at that time.
    pub late_events: u64,
}

/// Where each CPU stands in the raw stream.
#[derive(Clone, Copy, Debug, Default)]
struct CpuTrace {
    /// The task current there (tid, 0 = idle), once a record has said.
    curr: Option<i32>,
    /// A task put on this CPU while another was current, whose switch in is still to be
    /// seen.
    placed: Option<i32>,
    /// `curr` was inferred (no `sched_switch` said it).
    inferred: bool,
}

/// Each task's run time by the trace, for the check against procfs.
#[derive(Clone, Debug, Default)]
struct RunClock {
    total: Vec<u64>,
    since: Vec<Option<u64>>,
    /// Requested readings (trace-clock time, task), earliest first.
    checks: Vec<(u64, TaskId)>,
    /// The readings taken: the task's trace run time at the requested time.
    readings: Vec<Option<u64>>,
}

impl RunClock {
    fn grow(&mut self, n: usize) {
        self.total.resize(n, 0);
        self.since.resize(n, None);
        self.readings.resize(n, None);
    }

    fn at(&self, k: TaskId, t: u64) -> u64 {
        self.total[k] + self.since[k].map_or(0, |s| t.saturating_sub(s))
    }

    /// Takes the readings due before anything at `ts` happens.
    fn take_until(&mut self, ts: u64) {
        while let Some(&(at, k)) = self.checks.first().filter(|c| c.0 < ts) {
            self.readings[k] = Some(self.at(k, at));
            self.checks.remove(0);
        }
    }

    fn switch(&mut self, ts: u64, prev: Option<TaskId>, next: Option<TaskId>) {
        if let Some(k) = prev {
            if let Some(s) = self.since[k].take() {
                self.total[k] += ts.saturating_sub(s);
            }
        }
        if let Some(k) = next {
            self.since[k].get_or_insert(ts);
        }
    }
}

pub struct Converter {
    t0: u64,
    end: u64,
    pending: Vec<RawEvent>,
    tid_task: BTreeMap<i32, TaskId>,
    pub infos: Vec<TaskInfo>,
    announced: usize,
    state: Vec<St>,
    task_cpu: Vec<CpuId>,
    cpu_owner: Vec<Option<Owner>>,
    cpu_since: Vec<u64>,
    pub cpus: Vec<CpuSplit>,
    pub exit_times: Vec<Option<Ns>>,
    every: Option<Ns>,
    next_sample: u64,
    pub emitted: u64,
    raw: Vec<CpuTrace>,
    /// The time of the last record delivered (trace clock).
    last_ts: u64,
    pub repairs: Repairs,
    clock: RunClock,
}

/// The task a record shows current on its CPU: a switch's `prev`, else `common_pid`.
fn current_of(ev: &RawEvent) -> i32 {
    match ev.kind {
        RawKind::Switch { prev, .. } => prev,
        _ => ev.curr,
    }
}

/// The task a record puts on a CPU, and which: a wakeup's target, a migration's destination.
fn placement(ev: &RawEvent) -> Option<(i32, CpuId)> {
    match ev.kind {
        RawKind::Wakeup { pid, target_cpu, .. } => Some((pid, target_cpu.max(0) as CpuId)),
        RawKind::Migrate { pid, to, .. } => Some((pid, to.max(0) as CpuId)),
        _ => None,
    }
}

impl Converter {
    /// `t0`: the run's start on the trace clock (`CLOCK_MONOTONIC`); `end`: its length.
    pub fn new(t0: u64, end: Ns, nr_cpus: usize, every: Option<Ns>) -> Converter {
        Converter {
            t0,
            end: end.0,
            pending: Vec::new(),
            tid_task: BTreeMap::new(),
            infos: Vec::new(),
            announced: 0,
            state: Vec::new(),
            task_cpu: Vec::new(),
            cpu_owner: vec![None; nr_cpus],
            cpu_since: vec![0; nr_cpus],
            cpus: vec![CpuSplit::default(); nr_cpus],
            exit_times: Vec::new(),
            every,
            next_sample: 0,
            emitted: 0,
            raw: vec![CpuTrace::default(); nr_cpus],
            last_ts: 0,
            repairs: Repairs::default(),
            clock: RunClock::default(),
        }
    }

    /// The run ended at `end` (not later than the length it was created with).
    pub fn set_end(&mut self, end: Ns) {
        self.end = self.end.min(end.0);
    }

    pub fn push(&mut self, evs: &mut Vec<RawEvent>) {
        self.pending.append(evs);
    }

    /// Tasks known so far: `infos[t]` for every task id, and the tids of those whose thread
    /// has started. Called before each batch; earlier entries never change.
    pub fn learn(&mut self, infos: Vec<TaskInfo>, tids: &[(TaskId, i32)]) {
        for _ in self.state.len()..infos.len() {
            self.state.push(St::Unborn);
            self.task_cpu.push(0);
            self.exit_times.push(None);
        }
        self.clock.grow(infos.len());
        for (t, info) in infos.into_iter().enumerate() {
            if t >= self.infos.len() {
                self.infos.push(info);
            } else {
                self.infos[t].nice = info.nice;
            }
        }
        for &(t, tid) in tids {
            if self.state[t] != St::Dead {
                self.tid_task.insert(tid, t);
            }
        }
    }

    /// Asks for task `k`'s run time by the trace at `at` (trace clock), when procfs was
    /// read; [`Converter::reading`] has it once the trace is converted past `at`. A time
    /// already passed is read from the present state (`false`).
    pub fn checkpoint(&mut self, k: TaskId, at: u64) -> bool {
        if k >= self.clock.readings.len() {
            self.clock.grow(k + 1);
        }
        if at < self.last_ts {
            self.clock.readings[k] = Some(self.clock.at(k, at.max(self.last_ts)));
            return false;
        }
        let i = self.clock.checks.partition_point(|c| c.0 <= at);
        self.clock.checks.insert(i, (at, k));
        true
    }

    /// Task `k`'s run time by the trace at its checkpoint.
    pub fn reading(&self, k: TaskId) -> Option<u64> {
        self.clock.readings.get(k).copied().flatten()
    }

    /// Converts every pending event stamped before `watermark` (trace clock), in time
    /// order, looking ahead into the later ones already read for untraced idle exits.
    pub fn emit_until(&mut self, watermark: u64, probe: &mut dyn Probe) {
        self.pending.sort_by_key(|e| (e.ts, e.cpu));
        let n = self.pending.partition_point(|e| e.ts < watermark);
        let mut by_cpu: Vec<Vec<usize>> = vec![Vec::new(); self.raw.len()];
        for (i, e) in self.pending.iter().enumerate() {
            if let Some(v) = by_cpu.get_mut(e.cpu) {
                v.push(i);
            }
        }
        for i in 0..n {
            let ev = self.pending[i];
            if ev.cpu >= self.raw.len() {
                continue;
            }
            self.deliver(ev, probe);
            self.idle_exit(i, &by_cpu, probe);
        }
        self.pending.drain(..n);
    }

    /// After record `i`: a CPU with a task put on it whose next record (if any has been
    /// read) names another current task, without a traced switch out of the one current
    /// now, switched without a trace — at this record's time. An idle CPU with no later
    /// record switched to the task put on it.
    fn idle_exit(&mut self, i: usize, by_cpu: &[Vec<usize>], probe: &mut dyn Probe) {
        let ev = self.pending[i];
        let mut cpus = vec![ev.cpu];
        if let Some((_, x)) = placement(&ev).filter(|&(_, x)| x != ev.cpu && x < self.raw.len()) {
            cpus.push(x);
        }
        for x in cpus {
            let r = self.raw[x];
            let (Some(curr), Some(placed)) = (r.curr, r.placed) else { continue };
            let later = &by_cpu[x];
            let next = later.get(later.partition_point(|&j| j <= i)).map(|&j| self.pending[j]);
            let to = match next {
                None if curr == 0 => placed,
                None => continue,
                Some(f) if current_of(&f) == curr => continue,
                Some(f) => current_of(&f),
            };
            self.repairs.at_wakeup += 1;
            let kind = RawKind::Switch { prev: curr, prev_state: 0, next: to };
            self.apply(RawEvent { ts: ev.ts, cpu: x, curr, kind }, probe);
            self.raw[x].inferred = true;
        }
    }

    /// Delivers one record: first a switch it shows was missed (another task current on
    /// its CPU than the last record said), then the record itself.
    fn deliver(&mut self, mut ev: RawEvent, probe: &mut dyn Probe) {
        if ev.ts < self.last_ts {
            self.repairs.late_events += 1;
            ev.ts = self.last_ts;
        }
        let r = self.raw[ev.cpu];
        let now = current_of(&ev);
        if let (RawKind::Switch { next, .. }, Some(c), true) = (ev.kind, r.curr, r.inferred) {
            if c == next {
                // The switch inferred earlier was traced after all (late): done.
                self.raw[ev.cpu].inferred = false;
                return;
            }
        }
        if let Some(c) = r.curr.filter(|&c| c != now) {
            self.repairs.late_switches += 1;
            let kind = RawKind::Switch { prev: c, prev_state: 0, next: now };
            self.apply(RawEvent { ts: ev.ts, cpu: ev.cpu, curr: c, kind }, probe);
        }
        self.apply(ev, probe);
    }

    /// Applies one record (read or inferred): the raw per-CPU state, the run clock, then
    /// the probe events it means.
    fn apply(&mut self, ev: RawEvent, probe: &mut dyn Probe) {
        self.clock.take_until(ev.ts);
        self.last_ts = self.last_ts.max(ev.ts);
        let r = &mut self.raw[ev.cpu];
        match ev.kind {
            RawKind::Switch { next, .. } => {
                r.curr = Some(next);
                r.placed = None;
                r.inferred = false;
            }
            _ => r.curr = Some(ev.curr),
        }
        if let Some((pid, x)) = placement(&ev).filter(|&(_, x)| x < self.raw.len()) {
            if self.raw[x].curr.is_some_and(|c| c != pid) && self.raw[x].placed.is_none() {
                self.raw[x].placed = Some(pid);
            }
        }
        if let RawKind::Switch { prev, next, .. } = ev.kind {
            let (p, n) = (self.task(prev), self.task(next));
            self.clock.switch(ev.ts, p, n);
        }
        self.event(ev, probe);
    }

    fn rel(&self, ts: u64) -> u64 {
        ts.saturating_sub(self.t0).min(self.end)
    }

    fn task(&self, tid: i32) -> Option<TaskId> {
        if tid == 0 {
            return None;
        }
        self.tid_task.get(&tid).copied()
    }

    fn emit(&mut self, ev: ProbeEvent, probe: &mut dyn Probe) {
        self.emitted += 1;
        probe.event(&ev);
    }

    /// `TaskNew` for every task up to `t` not yet announced (in id order, as `Metrics` needs).
    fn announce(&mut self, t: TaskId, time: u64, cpu: CpuId, probe: &mut dyn Probe) {
        while self.announced <= t {
            let k = self.announced;
            self.announced += 1;
            self.state[k] = St::Blocked;
            self.task_cpu[k] = cpu;
            let parent = self.infos[k].parent.get();
            self.emit(ProbeEvent::TaskNew { time: Ns(time), task: k, parent, cpu }, probe);
        }
    }

    fn sample_until(&mut self, time: u64, probe: &mut dyn Probe) {
        let Some(every) = self.every else { return };
        while self.next_sample <= time {
            let now = self.next_sample;
            let mut cpus = vec![CpuView::default(); self.cpus.len()];
            for t in 0..self.announced {
                if matches!(self.state[t], St::Runnable | St::Running) {
                    let c = self.task_cpu[t].min(cpus.len() - 1);
                    cpus[c].nr_running += 1;
                    if self.state[t] == St::Running {
                        cpus[c].curr = Some(t);
                    }
                }
            }
            let state = &self.state;
            let alive = |t: TaskId| state.get(t).is_some_and(|s| *s != St::Dead);
            // The kernel's per-task scheduler state (vruntime, lag) is not observable.
            let view = SampleView {
                now: Ns(now),
                cpus: &cpus,
                tasks: &self.infos,
                alive: &alive,
                task_stats: None,
                rq_lock_acquisitions: 0,
                rq_lock_contended: 0,
            };
            probe.sample(&view);
            self.next_sample += every.0.max(1);
        }
    }

    fn account_cpu(&mut self, cpu: CpuId, time: u64, prev: i32, next: i32) {
        let classify = |s: &Self, tid: i32| match tid {
            0 => Owner::Idle,
            t if s.task(t).is_some() => Owner::Ours,
            _ => Owner::Other,
        };
        let owner = self.cpu_owner[cpu].unwrap_or_else(|| classify(self, prev));
        let d = time - self.cpu_since[cpu].min(time);
        match owner {
            Owner::Ours => self.cpus[cpu].ours += d,
            Owner::Other => self.cpus[cpu].other += d,
            Owner::Idle => self.cpus[cpu].idle += d,
        }
        self.cpu_owner[cpu] = Some(classify(self, next));
        self.cpu_since[cpu] = time;
    }

    fn event(&mut self, ev: RawEvent, probe: &mut dyn Probe) {
        let early = ev.ts < self.t0;
        let t = self.rel(ev.ts);
        if ev.ts > self.t0 + self.end || ev.cpu >= self.cpus.len() {
            return;
        }
        if !early {
            self.sample_until(t, probe);
        }
        let cpu = ev.cpu;
        match ev.kind {
            RawKind::Switch { prev, prev_state: ps, next } => {
                self.account_cpu(cpu, t, prev, next);
                if early {
                    return;
                }
                self.switch(t, cpu, prev, prev_state(ps), next, probe);
            }
            _ if early => {}
            RawKind::Fork { child, .. } => {
                if let Some(k) = self.task(child) {
                    self.announce(k, t, cpu, probe);
                }
            }
            RawKind::Wakeup { pid, target_cpu, new } => self.wakeup(t, pid, target_cpu.max(0) as CpuId, new, probe),
            RawKind::Waking { pid } => {
                if let Some(k) = self.task(pid) {
                    self.announce(k, t, cpu, probe);
                    if self.state[k] == St::Blocked {
                        // The ring buffer's common_flags are not read: no interrupt context.
                        self.emit(ProbeEvent::Waking { time: Ns(t), task: k, waker_cpu: cpu, irq: false }, probe);
                    }
                }
            }
            RawKind::Migrate { pid, from, to } => {
                if let Some(k) = self.task(pid) {
                    self.announce(k, t, cpu, probe);
                    let (from, to) = (from.max(0) as CpuId, to.max(0) as CpuId);
                    self.task_cpu[k] = to;
                    self.emit(ProbeEvent::Migrate { time: Ns(t), task: k, from, to }, probe);
                }
            }
            RawKind::Exit { pid } => {
                if let Some(k) = self.task(pid) {
                    self.announce(k, t, cpu, probe);
                    self.exit_times[k] = Some(Ns(t));
                    self.emit(ProbeEvent::Exit { time: Ns(t), task: k }, probe);
                }
            }
        }
    }

    fn wakeup(&mut self, t: u64, pid: i32, target: CpuId, new: bool, probe: &mut dyn Probe) {
        let Some(k) = self.task(pid) else { return };
        self.announce(k, t, target, probe);
        if !new && self.state[k] != St::Blocked {
            return;
        }
        self.state[k] = St::Runnable;
        self.task_cpu[k] = target;
        self.emit(ProbeEvent::Wakeup { time: Ns(t), task: k, cpu: target, new }, probe);
    }

    fn switch(&mut self, t: u64, cpu: CpuId, prev: i32, ps: PrevState, next: i32, probe: &mut dyn Probe) {
        let p = self.task(prev);
        let n = self.task(next);
        if p.is_none() && n.is_none() {
            return;
        }
        for k in [p, n].into_iter().flatten() {
            self.announce(k, t, cpu, probe);
        }
        if let Some(k) = p {
            self.state[k] = match ps {
                PrevState::Runnable => St::Runnable,
                PrevState::Blocked => St::Blocked,
                PrevState::Dead => St::Dead,
            };
            if ps == PrevState::Dead {
                self.tid_task.remove(&prev);
                self.exit_times[k].get_or_insert(Ns(t));
            }
        }
        if let Some(k) = n {
            self.state[k] = St::Running;
            self.task_cpu[k] = cpu;
        }
        self.emit(ProbeEvent::Switch { time: Ns(t), cpu, prev: p, prev_state: ps, next: n }, probe);
    }

    /// Converts what is left, closes the per-CPU accounting at the end and announces tasks
    /// that never appeared in the trace (their events were lost).
    pub fn finish(&mut self, probe: &mut dyn Probe) {
        self.emit_until(u64::MAX, probe);
        // Readings asked for after the last record: the stints still open count up to them.
        self.clock.take_until(u64::MAX);
        let end = self.end;
        self.sample_until(end, probe);
        if !self.infos.is_empty() {
            self.announce(self.infos.len() - 1, end, 0, probe);
        }
        for cpu in 0..self.cpus.len() {
            let owner = self.cpu_owner[cpu].unwrap_or(Owner::Other);
            let d = end - self.cpu_since[cpu].min(end);
            match owner {
                Owner::Ours => self.cpus[cpu].ours += d,
                Owner::Other => self.cpus[cpu].other += d,
                Owner::Idle => self.cpus[cpu].idle += d,
            }
            self.cpu_since[cpu] = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_machine::CpuSet;
    use schedlab_sched_api::TaskPolicy;

    #[derive(Default)]
    struct Rec(Vec<ProbeEvent>);
    impl Probe for Rec {
        fn event(&mut self, ev: &ProbeEvent) {
            self.0.push(ev.clone());
        }
    }

    fn info(name: &str) -> TaskInfo {
        TaskInfo {
            name: name.into(),
            nice: 0,
            policy: TaskPolicy::Normal,
            affinity: CpuSet::full(2),
            cpu: 0,
            parent: schedlab_sched_api::OptIdx::NONE,
            cgroup: schedlab_sched_api::OptIdx::NONE,
            session: schedlab_sched_api::OptIdx::NONE,
            slice: None,
            kthread: false,
            uclamp: Default::default(),
            core_cookie: 0,
        }
    }

    /// A record as the kernel writes it: a switch in `prev`'s context; anything else in the
    /// context of tid 5 (a thread of no interest, e.g. the parent).
    fn ev(ts: u64, cpu: usize, kind: RawKind) -> RawEvent {
        let curr = match kind {
            RawKind::Switch { prev, .. } => prev,
            _ => 5,
        };
        RawEvent { ts, cpu, curr, kind }
    }

    #[test]
    fn prev_state_follows_task_report_bits() {
        assert_eq!(prev_state(0), PrevState::Runnable);
        assert_eq!(prev_state(0x100), PrevState::Runnable); // preempted: "R+"
        assert_eq!(prev_state(1), PrevState::Blocked); // S
        assert_eq!(prev_state(2), PrevState::Blocked); // D
        assert_eq!(prev_state(0x10), PrevState::Dead); // X
        assert_eq!(prev_state(0x20), PrevState::Dead); // Z
    }

    /// Our task (tid 100) and a foreign thread (tid 7) share CPU 0: only ours becomes a task,
    /// events are merged by time across CPUs, the foreign time is "other", and a wakeup of a
    /// task still running is dropped.
    #[test]
    fn only_our_threads_become_tasks_and_foreign_time_is_other() {
        let t0 = 1_000;
        let mut c = Converter::new(t0, Ns(1_000), 2, None);
        c.learn(vec![info("a")], &[(0, 100)]);
        let mut evs = vec![
            ev(t0 + 300, 0, RawKind::Switch { prev: 100, prev_state: 0x100, next: 7 }),
            ev(t0 + 100, 1, RawKind::Fork { parent: 5, child: 100 }),
            ev(t0 + 110, 1, RawKind::Wakeup { pid: 100, target_cpu: 0, new: true }),
            ev(t0 + 120, 0, RawKind::Switch { prev: 0, prev_state: 0, next: 100 }),
            ev(t0 + 200, 1, RawKind::Wakeup { pid: 100, target_cpu: 0, new: false }),
            ev(t0 + 500, 0, RawKind::Switch { prev: 7, prev_state: 1, next: 0 }),
        ];
        c.push(&mut evs);
        let mut rec = Rec::default();
        c.emit_until(u64::MAX, &mut rec);
        c.finish(&mut rec);
        let kinds: Vec<&str> = rec
            .0
            .iter()
            .map(|e| match e {
                ProbeEvent::TaskNew { .. } => "new",
                ProbeEvent::Wakeup { .. } => "wakeup",
                ProbeEvent::Switch { .. } => "switch",
                _ => "other",
            })
            .collect();
        assert_eq!(kinds, ["new", "wakeup", "switch", "switch"]);
        assert_eq!(
            rec.0[3],
            ProbeEvent::Switch { time: Ns(300), cpu: 0, prev: Some(0), prev_state: PrevState::Runnable, next: None }
        );
        assert_eq!(c.cpus[0], CpuSplit { ours: 180, other: 200, idle: 620 });
        assert_eq!(c.emitted, 4);
    }

    /// Events after the end of the run (the teardown) are not converted.
    #[test]
    fn teardown_events_are_not_converted() {
        let mut c = Converter::new(0, Ns(100), 1, None);
        c.learn(vec![info("a")], &[(0, 100)]);
        let mut evs = vec![
            ev(50, 0, RawKind::Switch { prev: 0, prev_state: 0, next: 100 }),
            ev(150, 0, RawKind::Switch { prev: 100, prev_state: 0x10, next: 0 }),
        ];
        c.push(&mut evs);
        let mut rec = Rec::default();
        c.finish(&mut rec);
        assert_eq!(rec.0.len(), 2, "{:?}", rec.0);
        assert_eq!(c.exit_times, vec![None]);
        assert_eq!(c.cpus[0], CpuSplit { ours: 50, other: 0, idle: 50 });
    }

    /// A lone sleeper on a CPU that is otherwise idle, as this host's kernel records it: the
    /// switch into idle is traced, the switch out of idle is not; the wakeup (in interrupt
    /// context, `common_pid` 0) and the task's next switch out are. Each stint is inferred
    /// from the wakeup, and the run time by the trace is the stints' sum.
    #[test]
    fn untraced_idle_exits_are_inferred_at_the_wakeup() {
        let mut c = Converter::new(0, Ns(10_000), 2, None);
        c.learn(vec![info("sleeper")], &[(0, 100)]);
        let irq = |ts, pid| RawEvent { ts, cpu: 1, curr: 0, kind: RawKind::Wakeup { pid, target_cpu: 1, new: false } };
        let mut evs = vec![
            ev(100, 1, RawKind::Switch { prev: 7, prev_state: 1, next: 100 }),
            ev(400, 1, RawKind::Switch { prev: 100, prev_state: 1, next: 0 }),
            irq(1_000, 100),
            ev(1_300, 1, RawKind::Switch { prev: 100, prev_state: 1, next: 0 }),
            irq(2_000, 100),
            ev(2_300, 1, RawKind::Switch { prev: 100, prev_state: 1, next: 0 }),
        ];
        c.push(&mut evs);
        assert!(c.checkpoint(0, 2_500));
        let mut rec = Rec::default();
        c.finish(&mut rec);
        assert_eq!(c.repairs, Repairs { at_wakeup: 2, late_switches: 0, late_events: 0 });
        let ins: Vec<Ns> = rec
            .0
            .iter()
            .filter_map(|e| match e {
                ProbeEvent::Switch { time, next: Some(0), .. } => Some(*time),
                _ => None,
            })
            .collect();
        assert_eq!(ins, [Ns(100), Ns(1_000), Ns(2_000)]);
        assert_eq!(c.reading(0), Some(300 + 300 + 300));
    }

    /// A traced switch out of idle needs no repair, and a checkpoint inside a stint counts the
    /// stint up to it.
    #[test]
    fn traced_idle_exits_are_left_alone() {
        let mut c = Converter::new(0, Ns(10_000), 1, None);
        c.learn(vec![info("sleeper")], &[(0, 100)]);
        let mut evs = vec![
            ev(100, 0, RawKind::Switch { prev: 0, prev_state: 0, next: 100 }),
            ev(400, 0, RawKind::Switch { prev: 100, prev_state: 1, next: 0 }),
            RawEvent { ts: 1_000, cpu: 0, curr: 0, kind: RawKind::Wakeup { pid: 100, target_cpu: 0, new: false } },
            ev(1_004, 0, RawKind::Switch { prev: 0, prev_state: 0, next: 100 }),
            ev(1_304, 0, RawKind::Switch { prev: 100, prev_state: 1, next: 0 }),
        ];
        c.push(&mut evs);
        assert!(c.checkpoint(0, 1_104));
        let mut rec = Rec::default();
        c.finish(&mut rec);
        assert_eq!(c.repairs, Repairs::default());
        assert_eq!(c.reading(0), Some(300 + 100));
    }

    /// A record naming another current task than the last switch said reveals a switch the
    /// kernel did not trace: it is inferred at that record, and counted.
    #[test]
    fn a_switch_shown_only_by_a_later_record_is_inferred_there() {
        let mut c = Converter::new(0, Ns(10_000), 1, None);
        c.learn(vec![info("a"), info("b")], &[(0, 100), (1, 101)]);
        let mut evs = vec![
            ev(100, 0, RawKind::Switch { prev: 0, prev_state: 0, next: 100 }),
            // 100 → 101 at ~200 not traced; 101's own record at 500 shows it.
            RawEvent { ts: 500, cpu: 0, curr: 101, kind: RawKind::Waking { pid: 100 } },
            ev(700, 0, RawKind::Switch { prev: 101, prev_state: 1, next: 0 }),
        ];
        c.push(&mut evs);
        let mut rec = Rec::default();
        c.emit_until(u64::MAX, &mut rec);
        assert_eq!(c.repairs.late_switches, 1);
        assert!(c.checkpoint(0, 800) && c.checkpoint(1, 800));
        c.finish(&mut rec);
        assert_eq!((c.reading(0), c.reading(1)), (Some(400), Some(200)));
    }

    /// A sleeper woken onto a CPU where an agent thread (tid 60, whose switches out go
    /// untraced) runs: the next record there is the sleeper's own; its stint is inferred
    /// from the wakeup, not from that record.
    #[test]
    fn untraced_switches_out_of_a_busy_thread_are_inferred_at_the_wakeup() {
        let mut c = Converter::new(0, Ns(10_000), 2, None);
        c.learn(vec![info("sleeper")], &[(0, 100)]);
        let mut evs = vec![
            ev(100, 1, RawKind::Switch { prev: 100, prev_state: 1, next: 60 }),
            RawEvent { ts: 1_000, cpu: 1, curr: 60, kind: RawKind::Wakeup { pid: 100, target_cpu: 1, new: false } },
            // 60 → 100 not traced; the sleeper's next record, a waking it does, at 1 500.
            RawEvent { ts: 1_500, cpu: 1, curr: 100, kind: RawKind::Waking { pid: 7 } },
            ev(1_800, 1, RawKind::Switch { prev: 100, prev_state: 1, next: 60 }),
        ];
        c.push(&mut evs);
        assert!(c.checkpoint(0, 2_000));
        let mut rec = Rec::default();
        c.finish(&mut rec);
        assert_eq!(c.repairs, Repairs { at_wakeup: 1, late_switches: 0, late_events: 0 });
        assert_eq!(c.reading(0), Some(800));
    }
}
