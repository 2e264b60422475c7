//! CPU execution: modes, kernel steps, spinlocks, interrupts and time accounting.

use crate::{Kernel, LockName, LockStat, ProbeEvent};
use schedlab_machine::LockSite;
use schedlab_probe::Mode;
use schedlab_sim::{CpuId, Ns, TaskId};
use std::collections::{BTreeMap, VecDeque};

pub(crate) const SITES: [LockSite; 9] = [
    LockSite::Schedule,
    LockSite::TryToWakeUp,
    LockSite::TtwuPending,
    LockSite::WakeUpNewTask,
    LockSite::SchedulerTick,
    LockSite::Migrate,
    LockSite::Setattr,
    LockSite::FutexBucket,
    LockSite::SchedFork,
];

fn site_index(s: LockSite) -> usize {
    SITES.iter().position(|x| *x == s).expect("every site listed")
}

pub(crate) type LockId = usize;

#[derive(Default)]
pub(crate) struct Lock {
    pub owner: Option<CpuId>,
    pub waiters: VecDeque<(CpuId, Ns)>,
}

/// A kernel action, executed atomically when its step runs (after its locks are taken).
#[derive(Clone, Debug)]
pub(crate) enum Action {
    /// `__schedule`; `newidle`: newly-idle balancing may still run.
    Schedule {
        newidle: bool,
    },
    Tick,
    /// The SCHED_SOFTIRQ of a kicked idle CPU (`nohz_idle_balance`).
    NohzBalance,
    /// Move up to `count` of `tasks` (in order) from `from` to `to`.
    MoveQueuedBatch {
        tasks: Vec<TaskId>,
        from: CpuId,
        to: CpuId,
        count: usize,
    },
    TtwuStart {
        task: TaskId,
        wf: u32,
        claimed: bool,
    },
    TtwuRunnable {
        task: TaskId,
        wf: u32,
        cpu: CpuId,
    },
    TtwuActivate {
        task: TaskId,
        wf: u32,
        cpu: CpuId,
    },
    TtwuPending,
    ForkChild {
        parent: TaskId,
        template: usize,
    },
    WakeUpNewTask {
        child: TaskId,
        cpu: CpuId,
    },
    MoveQueued {
        task: TaskId,
        from: CpuId,
        to: CpuId,
    },
    ActivateMoved {
        task: TaskId,
        to: CpuId,
    },
    Yield {
        task: TaskId,
    },
    SetNice {
        task: TaskId,
        nice: i32,
    },
    SetAffinity {
        task: TaskId,
        set: schedlab_machine::CpuSet,
    },
    /// `sched_setattr(sched_runtime)` of a fair task.
    SetSlice {
        task: TaskId,
        slice: Option<u64>,
    },
    SleepUntil {
        task: TaskId,
        until: Ns,
    },
    Exit {
        task: TaskId,
    },
    WaitChildren {
        task: TaskId,
    },
    PipeWrite {
        task: TaskId,
        pipe: usize,
    },
    PipeRead {
        task: TaskId,
        pipe: usize,
    },
    FutexWait {
        task: TaskId,
        key: crate::objects::FutexKey,
        expected: u64,
    },
    FutexWake {
        key: crate::objects::FutexKey,
        n: u64,
    },
}

#[derive(Clone, Debug)]
pub(crate) enum Step {
    /// CPU time in the kernel, no lock.
    Delay(Ns),
    /// Take `locks[..n]` in order (spinning as needed), run `action`, hold for
    /// `hold` + whatever the action adds, release.
    Locked { locks: [LockId; 2], n: u8, got: u8, site: LockSite, hold: Ns, action: Action },
    /// A zero-time action without a lock.
    Do(Action),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Busy {
    None,
    Delay,
    Hold { locks: [LockId; 2], n: u8 },
    User { started: Ns },
    Spin,
}

pub(crate) struct Cpu {
    pub mode: Mode,
    pub mode_since: Ns,
    pub times: [Ns; 4],
    pub curr: Option<TaskId>,
    pub kstack: VecDeque<Step>,
    pub busy: Busy,
    pub gen: u64,
    pub need_resched: bool,
    pub tick_on: bool,
    pub tick_gen: u64,
    pub wake_list: Vec<TaskId>,
    pub spin_since: Option<Ns>,
    /// Armed sleep timers, `(hard expiry, task) → (soft expiry, event sequence number)`
    /// (see `hrtimer.rs`).
    pub hrtimers: BTreeMap<(Ns, TaskId), (Ns, u64)>,
    /// The hard expiry the clock event is programmed for, and its generation (an event of
    /// an older generation is stale).
    pub hrtimer_next: Option<Ns>,
    pub hrtimer_gen: u64,
}

impl Default for Cpu {
    fn default() -> Self {
        Cpu {
            mode: Mode::Idle,
            mode_since: Ns(0),
            times: [Ns(0); 4],
            curr: None,
            kstack: VecDeque::new(),
            busy: Busy::None,
            gen: 0,
            need_resched: false,
            tick_on: false,
            tick_gen: 0,
            wake_list: Vec::new(),
            spin_since: None,
            hrtimers: BTreeMap::new(),
            hrtimer_next: None,
            hrtimer_gen: 0,
        }
    }
}

impl Cpu {
    /// Time per mode, with the current mode's open interval closed at `now`.
    pub fn times_at(&self, now: Ns) -> [Ns; 4] {
        let mut t = self.times;
        t[self.mode as usize] += now.saturating_sub(self.mode_since);
        t
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Ipi {
    Resched,
    WakeList,
    /// `kick_ilb`: run the idle load balancer.
    Balance,
}

#[derive(Clone, Debug)]
pub(crate) enum Event {
    /// The CPU's current delay, lock hold or user work ended.
    CpuDone {
        cpu: CpuId,
        gen: u64,
    },
    /// A lock was handed to this spinning CPU.
    Resume {
        cpu: CpuId,
    },
    Tick {
        cpu: CpuId,
        gen: u64,
    },
    /// `cpu`'s clock event for its earliest hrtimer (see `hrtimer.rs`).
    Timer {
        cpu: CpuId,
        gen: u64,
    },
    Ipi {
        cpu: CpuId,
        kind: Ipi,
    },
    /// The workload's `[[change]]` number `idx` takes effect.
    Change {
        idx: usize,
    },
    Start {
        template: usize,
    },
}

impl Kernel<'_> {
    pub(crate) fn dispatch(&mut self, ev: Event) {
        let (kind, a, b) = match &ev {
            Event::CpuDone { cpu, gen } => (1, *cpu as u64, *gen),
            Event::Resume { cpu } => (2, *cpu as u64, 0),
            Event::Tick { cpu, gen } => (3, *cpu as u64, *gen),
            Event::Timer { cpu, gen } => (4, *cpu as u64, *gen),
            Event::Ipi { cpu, kind } => (5, *cpu as u64, *kind as u64),
            Event::Start { template } => (6, *template as u64, 0),
            Event::Change { idx } => (7, *idx as u64, 0),
        };
        self.hash.write_u64(self.now.0);
        self.hash.write_u64(kind);
        self.hash.write_u64(a);
        self.hash.write_u64(b);
        if self.cfg.check_invariants {
            match &ev {
                Event::CpuDone { cpu, .. }
                | Event::Resume { cpu }
                | Event::Tick { cpu, .. }
                | Event::Timer { cpu, .. }
                | Event::Ipi { cpu, .. } => self.touch(*cpu),
                Event::Start { .. } | Event::Change { .. } => (0..self.cpus.len()).for_each(|c| self.touch(c)),
            }
        }
        match ev {
            Event::CpuDone { cpu, gen } => {
                if self.cpus[cpu].gen != gen {
                    return; // cancelled (user work interrupted)
                }
                self.cpu_done(cpu);
            }
            Event::Resume { cpu } => {
                debug_assert_eq!(self.cpus[cpu].busy, Busy::Spin);
                self.cpus[cpu].busy = Busy::None;
                self.advance(cpu);
            }
            Event::Tick { cpu, gen } => {
                let c = &mut self.cpus[cpu];
                if !c.tick_on || c.tick_gen != gen {
                    return;
                }
                let next = self.now + self.tick;
                self.events.push(next, Event::Tick { cpu, gen });
                let hold = self.machine.costs.tick;
                let mut steps = std::mem::take(&mut self.irq_scratch);
                steps.push(self.locked1(cpu, LockSite::SchedulerTick, hold, crate::cpu::Action::Tick));
                // The tick is an hrtimer: its interrupt also expires sleepers within their slack.
                self.expire_hrtimers(cpu, &mut steps);
                self.interrupt(cpu, steps.drain(..));
                self.irq_scratch = steps;
            }
            Event::Timer { cpu, gen } => {
                if self.cpus[cpu].hrtimer_gen != gen {
                    return;
                }
                self.cpus[cpu].hrtimer_next = None;
                let mut steps = std::mem::take(&mut self.irq_scratch);
                self.expire_hrtimers(cpu, &mut steps);
                self.interrupt(cpu, steps.drain(..));
                self.irq_scratch = steps;
            }
            Event::Ipi { cpu, kind } => match kind {
                Ipi::Resched => self.interrupt(cpu, []),
                Ipi::WakeList => {
                    let hold = self.machine.costs.ttwu_activate;
                    self.interrupt(cpu, [self.locked1(cpu, LockSite::TtwuPending, hold, Action::TtwuPending)])
                }
                Ipi::Balance => self.interrupt(cpu, [Step::Do(Action::NohzBalance)]),
            },
            Event::Start { template } => {
                self.pending_starts -= 1;
                self.start_task(template);
            }
            Event::Change { idx } => self.apply_change(idx),
        }
    }

    /// A step taking `cpu`'s runqueue lock.
    pub(crate) fn locked1(&self, cpu: CpuId, site: LockSite, hold: Ns, action: Action) -> Step {
        Step::Locked { locks: [cpu, cpu], n: 1, got: 0, site, hold, action }
    }
    /// `double_rq_lock`: both runqueue locks, lower CPU first (v5.14+ `rq_order_less`).
    pub(crate) fn locked2(&self, a: CpuId, b: CpuId, site: LockSite, hold: Ns, action: Action) -> Step {
        if a == b {
            return self.locked1(a, site, hold, action);
        }
        Step::Locked { locks: [a.min(b), a.max(b)], n: 2, got: 0, site, hold, action }
    }

    pub(crate) fn set_mode(&mut self, cpu: CpuId, mode: Mode) {
        let now = self.now;
        let c = &mut self.cpus[cpu];
        if c.mode == mode {
            return;
        }
        c.times[c.mode as usize] += now - c.mode_since;
        c.mode = mode;
        c.mode_since = now;
        self.probe.event(&ProbeEvent::CpuMode { time: now, cpu, mode });
    }

    /// Runs steps after the CPU's current kernel work (or at once from user mode or idle).
    pub(crate) fn interrupt(&mut self, cpu: CpuId, steps: impl IntoIterator<Item = Step>) {
        let was = self.cpus[cpu].busy;
        match was {
            Busy::User { .. } => {
                self.preempt_user(cpu);
                self.cpus[cpu].kstack.extend(steps);
                self.advance(cpu);
            }
            Busy::None => {
                // Only an idle CPU rests with nothing to do.
                let exit = self.machine.costs.idle_exit;
                let c = &mut self.cpus[cpu];
                c.kstack.push_back(Step::Delay(exit));
                c.kstack.extend(steps);
                self.advance(cpu);
            }
            _ => self.cpus[cpu].kstack.extend(steps),
        }
    }

    /// Stops the user work in progress, keeping what remains of it.
    fn preempt_user(&mut self, cpu: CpuId) {
        let now = self.now;
        let c = &mut self.cpus[cpu];
        let Busy::User { started } = c.busy else { return };
        c.busy = Busy::None;
        c.gen += 1;
        if let Some(t) = c.curr {
            let task = &mut self.tasks[t];
            if let (Some(left), crate::exec::OpTiming::Work) =
                (task.op_left, crate::exec::op_timing(&task.prog, task.pc))
            {
                task.op_left = Some(left.saturating_sub(now - started));
            }
        }
        self.set_mode(cpu, Mode::Kernel);
    }

    fn cpu_done(&mut self, cpu: CpuId) {
        let busy = std::mem::replace(&mut self.cpus[cpu].busy, Busy::None);
        match busy {
            Busy::Hold { locks, n } => {
                for i in (0..n as usize).rev() {
                    self.release(locks[i]);
                }
            }
            Busy::User { .. } => {
                let t = self.cpus[cpu].curr.expect("user work has a task");
                self.user_op_done(t);
            }
            _ => {}
        }
        self.advance(cpu);
    }

    fn release(&mut self, lock: LockId) {
        let now = self.now;
        let l = &mut self.locks[lock];
        match l.waiters.pop_front() {
            Some((w, since)) => {
                l.owner = Some(w);
                let _ = since;
                self.events.push(now, Event::Resume { cpu: w });
            }
            None => l.owner = None,
        }
    }

    pub(crate) fn stat(&mut self, lock: LockId, site: LockSite) -> &mut LockStat {
        &mut self.lock_stats[lock][site_index(site)]
    }

    /// Executes the CPU's pending kernel steps until it must wait (a delay, a lock hold,
    /// spinning, user work) or has nothing left (returns to user mode or goes idle).
    pub(crate) fn advance(&mut self, cpu: CpuId) {
        let mut guard = 0u32;
        loop {
            guard += 1;
            if guard > 1_000_000 {
                self.fail(format!(
                    "CPU {cpu} executed a million zero-time steps at {}: a program makes no progress",
                    self.now
                ));
                return;
            }
            if self.fatal.is_some() || self.cpus[cpu].busy != Busy::None {
                return;
            }
            let Some(step) = self.cpus[cpu].kstack.pop_front() else {
                if self.return_to_user(cpu) {
                    continue;
                }
                return;
            };
            match step {
                Step::Delay(ns) => {
                    if ns.0 == 0 {
                        continue;
                    }
                    self.set_mode(cpu, Mode::Kernel);
                    self.start_busy(cpu, Busy::Delay, ns);
                    return;
                }
                Step::Do(action) => {
                    self.set_mode(cpu, Mode::Kernel);
                    self.act(cpu, action);
                }
                Step::Locked { locks, n, mut got, site, hold, action } => {
                    while got < n {
                        let id = locks[got as usize];
                        if id < self.cpus.len() {
                            self.touch(id); // an rq lock: that runqueue may change
                        }
                        match self.locks[id].owner {
                            None => {
                                self.locks[id].owner = Some(cpu);
                                self.stat(id, site).acquisitions += 1;
                                got += 1;
                            }
                            Some(o) if o == cpu => {
                                // Handed over by the previous holder after we spun.
                                got += 1;
                            }
                            Some(_) => {
                                let now = self.now;
                                self.locks[id].waiters.push_back((cpu, now));
                                let st = self.stat(id, site);
                                st.acquisitions += 1;
                                st.contended += 1;
                                self.cpus[cpu].kstack.push_front(Step::Locked { locks, n, got, site, hold, action });
                                self.cpus[cpu].busy = Busy::Spin;
                                self.cpus[cpu].spin_start(now);
                                self.set_mode(cpu, Mode::Spin);
                                return;
                            }
                        }
                    }
                    if let Some(since) = self.cpus[cpu].take_spin() {
                        let spun = self.now - since;
                        self.stat(locks[(n - 1) as usize], site).spin_ns += spun.0;
                    }
                    self.set_mode(cpu, Mode::Kernel);
                    let extra = self.act(cpu, action);
                    self.start_busy(cpu, Busy::Hold { locks, n }, hold + extra);
                    return;
                }
            }
        }
    }

    fn start_busy(&mut self, cpu: CpuId, busy: Busy, dur: Ns) {
        let c = &mut self.cpus[cpu];
        c.busy = busy;
        c.gen += 1;
        let gen = c.gen;
        self.events.push(self.now + dur, Event::CpuDone { cpu, gen });
    }

    /// Starts user work of `dur` for the current task.
    pub(crate) fn start_user(&mut self, cpu: CpuId, dur: Ns) {
        self.set_mode(cpu, Mode::User);
        let now = self.now;
        self.start_busy(cpu, Busy::User { started: now }, dur);
    }

    /// The kernel path is over. Returns true if more steps were queued.
    fn return_to_user(&mut self, cpu: CpuId) -> bool {
        if self.cpus[cpu].need_resched {
            let hold = self.machine.costs.schedule;
            let s = self.locked1(cpu, LockSite::Schedule, hold, Action::Schedule { newidle: true });
            self.cpus[cpu].kstack.push_back(s);
            return true;
        }
        match self.cpus[cpu].curr {
            Some(t) => {
                self.run_task(cpu, t);
                !self.cpus[cpu].kstack.is_empty()
            }
            None => {
                self.set_mode(cpu, Mode::Idle);
                if self.idle_tick {
                    // A periodic-tick kernel keeps ticking while idle.
                    self.start_tick(cpu);
                } else {
                    let c = &mut self.cpus[cpu];
                    c.tick_on = false;
                    c.tick_gen += 1;
                }
                false
            }
        }
    }

    pub(crate) fn start_tick(&mut self, cpu: CpuId) {
        let tick = self.tick.0;
        let c = &mut self.cpus[cpu];
        if c.tick_on {
            return;
        }
        c.tick_on = true;
        c.tick_gen += 1;
        let gen = c.tick_gen;
        // Ticks stay aligned to the global jiffy grid, as the kernel's are.
        let next = Ns((self.now.0 / tick + 1) * tick);
        self.events.push(next, Event::Tick { cpu, gen });
    }

    pub(crate) fn fail(&mut self, msg: String) {
        if self.fatal.is_none() {
            self.fatal = Some(crate::RunError::Invariant(msg));
        }
    }

    pub(crate) fn lock_id(&mut self, name: LockName) -> LockId {
        match name {
            LockName::Rq(c) => c,
            LockName::FutexBucket(b) => {
                if let Some(&id) = self.objs.bucket_locks.get(&b) {
                    return id;
                }
                let id = self.locks.len();
                self.locks.push(Lock::default());
                self.lock_names.push(LockName::FutexBucket(b));
                self.lock_stats.push([LockStat::default(); 9]);
                self.objs.bucket_locks.insert(b, id);
                id
            }
        }
    }
}

impl Cpu {
    /// Starts timing a spin; a spin on the second lock of a pair continues the first's.
    fn spin_start(&mut self, now: Ns) {
        self.spin_since.get_or_insert(now);
    }
    pub(crate) fn take_spin(&mut self) -> Option<Ns> {
        self.spin_since.take()
    }
}
