//! Kernel sched events → the simulator's [`ProbeEvent`] stream, so the same `Metrics`
//! probe (and every report drawn from it) measures a real run.
//!
//! Events are merged across CPUs by time. Only the run's own threads become tasks; every
//! other thread on a CPU (other processes, kernel threads, schedlab's controller) is
//! "other" time of that CPU and appears as no task (`None`, like idle) in switches.
//! Wakeups of a task that is not blocked (the kernel traces `ttwu_runnable` too) are
//! dropped, as the simulator emits none for it.

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

    /// Converts every pending event stamped before `watermark` (trace clock), in time order.
    pub fn emit_until(&mut self, watermark: u64, probe: &mut dyn Probe) {
        self.pending.sort_by_key(|e| (e.ts, e.cpu));
        let n = self.pending.partition_point(|e| e.ts < watermark);
        let batch: Vec<RawEvent> = self.pending.drain(..n).collect();
        for ev in batch {
            self.event(ev, probe);
        }
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
        }
    }

    fn ev(ts: u64, cpu: usize, kind: RawKind) -> RawEvent {
        RawEvent { ts, cpu, kind }
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
}
