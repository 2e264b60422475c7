//! CPU execution: modes, kernel steps, spinlocks, interrupts and time accounting.

use crate::vocab::{site_index, Action, Event, Ipi, LockId, Step, SITES};
use crate::Kernel;
use schedlab_machine::{KernelPath, LockSite};
use schedlab_probe::{LockName, LockStat, Mode, ProbeEvent};
use schedlab_sim::{CpuId, Ns, TaskId};
use schedlab_workload::{Op, Program};
use std::collections::VecDeque;

#[derive(Default)]
pub(crate) struct Lock {
    pub owner: Option<CpuId>,
    pub waiters: VecDeque<(CpuId, Ns)>,
    /// The CPU that last held it: its cache line (and the data it guards) is there.
    pub last: Option<CpuId>,
    /// CPUs that waited when it was last handed over (`lines.rs`; 0: taken free).
    pub handover: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Busy {
    None,
    Delay,
    Hold { locks: [LockId; 2], n: u8 },
    User,
    Spin,
}

/// The progress of a CPU's current work (user work, a kernel delay or a lock hold): an
/// amount of full-speed work consumed at `rate` permille of a whole core since `since`.
/// An SMT sibling starting or stopping work changes `rate` (`Kernel::smt_retime`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Progress {
    pub since: Ns,
    /// Full-speed work left at `since`.
    pub left: Ns,
    pub rate: u32,
    /// A wall-clock deadline (a `spin` op): not slowed by a busy sibling.
    pub fixed: bool,
}

impl Progress {
    /// Work done between `since` and `now` (rounded down).
    pub fn done(&self, now: Ns) -> Ns {
        // Full speed (no busy SMT sibling, the common case): no 128-bit arithmetic.
        if self.fixed || self.rate == 1000 {
            return now - self.since;
        }
        // 64-bit arithmetic whenever the product fits (spans under 213 days): the same
        // result without a 128-bit multiply.
        let span = (now - self.since).0;
        match span.checked_mul(u64::from(self.rate)) {
            Some(x) => Ns(x / 1000),
            None => Ns(((u128::from(span) * u128::from(self.rate)) / 1000) as u64),
        }
    }
    /// Work left at `now`.
    pub fn left_at(&self, now: Ns) -> Ns {
        self.left.saturating_sub(self.done(now))
    }
    /// When the work left at `since` completes (rounded up).
    pub fn end(&self) -> Ns {
        if self.fixed || self.rate == 1000 {
            return self.since + self.left;
        }
        // 64-bit division whenever `left × 1000` fits (work under 213 days): the same
        // result without a call to the 128-bit division routine.
        if let Some(x) = self.left.0.checked_mul(1000) {
            return self.since + Ns(x.div_ceil(u64::from(self.rate)));
        }
        let r = u128::from(self.rate);
        self.since + Ns(((u128::from(self.left.0) * 1000).div_ceil(r)) as u64)
    }
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
    pub hrtimers: crate::timerqueue::Timers,
    /// The hard expiry the clock event is programmed for, and its generation (an event of
    /// an older generation is stale).
    pub hrtimer_next: Option<Ns>,
    pub hrtimer_gen: u64,
    /// The policy's timer on this CPU (`Request::Timer`): its expiry and generation.
    pub policy_timer: Option<Ns>,
    pub policy_timer_gen: u64,
    /// The work in progress (valid while `busy` is user work, a delay or a hold).
    pub prog: Progress,
    /// The kernel path of the current delay or hold segment, and when it started.
    pub path: KernelPath,
    pub seg_start: Ns,
    /// Further segments of the current delay or hold (policy work on other paths).
    pub segs: VecDeque<(KernelPath, Ns)>,
    /// Kernel time per path of closed segments, indexed by `KernelPath::index`.
    pub path_ns: [u64; KernelPath::ALL.len()],
    /// A lock this CPU keeps after its current hold ends, for the next step (2.6.32's
    /// newly-idle balance keeps `schedule()`'s runqueue lock: `version.rs`).
    pub kept: Option<LockId>,
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
            hrtimers: Default::default(),
            hrtimer_next: None,
            policy_timer: None,
            policy_timer_gen: 0,
            hrtimer_gen: 0,
            prog: Progress { since: Ns(0), left: Ns(0), rate: 1000, fixed: false },
            path: KernelPath::Schedule,
            seg_start: Ns(0),
            segs: VecDeque::new(),
            path_ns: [0; KernelPath::ALL.len()],
            kept: None,
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
    /// Kernel time per path, with the open segment closed at `now`.
    pub fn paths_at(&self, now: Ns) -> [u64; KernelPath::ALL.len()] {
        let mut p = self.path_ns;
        if matches!(self.busy, Busy::Delay | Busy::Hold { .. }) {
            p[self.path.index()] += (now - self.seg_start).0;
        }
        p
    }
}

impl Kernel<'_> {
    /// Handles one event; `seq` is its sequence number in the queue.
    pub(crate) fn dispatch(&mut self, ev: Event, seq: u64) {
        self.note_event(&ev);
        match ev {
            Event::CpuDone { cpu, gen } => {
                let cpu = cpu as CpuId;
                if self.cpus[cpu].gen != gen {
                    return; // cancelled (user work interrupted)
                }
                self.cpu_done(cpu);
            }
            Event::Resume { cpu } => {
                let cpu = cpu as CpuId;
                debug_assert_eq!(self.cpus[cpu].busy, Busy::Spin);
                self.cpus[cpu].busy = Busy::None;
                self.advance(cpu);
            }
            Event::Tick { cpu, gen } => self.tick_event(cpu, gen),
            Event::IdleWake { cpu, gen } => {
                let cpu = cpu as CpuId;
                let c = &self.cpus[cpu];
                if c.tick_on || c.tick_gen != gen {
                    return; // the CPU got work since it went idle
                }
                // Back to idle afterwards (`return_to_user`) arms the next one.
                self.interrupt(cpu, [Step::Do(Action::IdleWake)]);
            }
            Event::Timer { cpu, gen } => self.hrtimer_interrupt(cpu as CpuId, gen),
            Event::Ipi { cpu, kind } => self.ipi(cpu as CpuId, kind),
            Event::PolicyTimer { cpu, gen } => {
                let cpu = cpu as CpuId;
                if self.cpus[cpu].policy_timer_gen != gen {
                    return;
                }
                self.cpus[cpu].policy_timer = None;
                let s = self.locked1(cpu, LockSite::SchedulerTick, self.machine.costs.timer_irq, Action::PolicyTimer);
                self.interrupt(cpu, [s]);
            }
            Event::Start { template, left } => {
                if left > 0 {
                    let next = Event::Start { template, left: left - 1 };
                    self.events.push_seq(self.now, seq + 1, next);
                }
                match self.noise.start_offset() {
                    Ns(0) => {
                        self.pending_starts -= 1;
                        self.start_task(template as usize);
                    }
                    off => self.events.push(self.now + off, Event::StartLate { template }),
                }
            }
            Event::StartLate { template } => {
                self.pending_starts -= 1;
                self.start_task(template as usize);
            }
            Event::Change { idx } => self.apply_change(idx as usize),
        }
    }

    /// Writes the event into the trace hash and, with checks on, marks what it touches.
    fn note_event(&mut self, ev: &Event) {
        let (kind, a, b) = match ev {
            Event::CpuDone { cpu, gen } => (1, *cpu as u64, *gen),
            Event::Resume { cpu } => (2, *cpu as u64, 0),
            Event::Tick { cpu, gen } => (3, *cpu as u64, *gen),
            Event::Timer { cpu, gen } => (4, *cpu as u64, *gen),
            Event::Ipi { cpu, kind } => (5, *cpu as u64, *kind as u64),
            Event::Start { template, .. } => (6, *template as u64, 0),
            Event::StartLate { template } => (10, *template as u64, 0),
            Event::Change { idx } => (7, *idx as u64, 0),
            Event::IdleWake { cpu, gen } => (8, *cpu as u64, *gen),
            Event::PolicyTimer { cpu, gen } => (9, *cpu as u64, *gen),
        };
        self.hash.write_u64(self.now.0);
        self.hash.write_u64(kind);
        self.hash.write_u64(a);
        self.hash.write_u64(b);
        if self.params.check_invariants {
            match ev {
                Event::CpuDone { cpu, .. }
                | Event::Resume { cpu }
                | Event::Tick { cpu, .. }
                | Event::IdleWake { cpu, .. }
                | Event::Timer { cpu, .. }
                | Event::Ipi { cpu, .. }
                | Event::PolicyTimer { cpu, .. } => self.touch(*cpu as CpuId),
                Event::Start { .. } | Event::StartLate { .. } | Event::Change { .. } => {
                    (0..self.cpus.len()).for_each(|c| self.touch(c))
                }
            }
        }
    }

    /// The tick's interrupt (`tick_sched_timer`): the next tick is queued, then
    /// `scheduler_tick` under the runqueue lock, and (the tick being an hrtimer) the
    /// sleepers due within their slack expire.
    fn tick_event(&mut self, cpu32: u32, gen: u64) {
        let cpu = cpu32 as CpuId;
        let c = &mut self.cpus[cpu];
        if !c.tick_on || c.tick_gen != gen {
            return;
        }
        let next = self.now + self.tick;
        self.events.push(next, Event::Tick { cpu: cpu32, gen });
        self.ticks_pending += 1;
        let hold = self.machine.costs.tick;
        let mut steps = std::mem::take(&mut self.irq_scratch);
        steps.push(self.locked1(cpu, LockSite::SchedulerTick, hold, Action::Tick));
        self.expire_hrtimers(cpu, &mut steps);
        self.interrupt(cpu, steps.drain(..));
        self.irq_scratch = steps;
    }

    /// `hrtimer_interrupt` of `cpu`'s clock event (a stale one does nothing).
    fn hrtimer_interrupt(&mut self, cpu: CpuId, gen: u64) {
        if self.cpus[cpu].hrtimer_gen != gen {
            return;
        }
        self.cpus[cpu].hrtimer_next = None;
        let mut steps = std::mem::take(&mut self.irq_scratch);
        self.expire_hrtimers(cpu, &mut steps);
        self.interrupt(cpu, steps.drain(..));
        self.irq_scratch = steps;
    }

    /// An inter-processor interrupt arrives at `cpu`.
    fn ipi(&mut self, cpu: CpuId, kind: Ipi) {
        match kind {
            Ipi::Resched => self.interrupt(cpu, []),
            Ipi::WakeList => {
                let hold = self.machine.costs.ttwu_activate;
                self.interrupt(cpu, [self.locked1(cpu, LockSite::TtwuPending, hold, Action::TtwuPending)])
            }
            Ipi::Balance => self.interrupt(cpu, [Step::Do(Action::NohzBalance)]),
            Ipi::Delayed => {
                if self.dtq.has_pending(cpu) {
                    self.set_need_resched(cpu, true);
                    self.interrupt(cpu, []);
                }
            }
        }
    }

    /// A step taking `cpu`'s runqueue lock.
    pub(crate) fn locked1(&self, cpu: CpuId, site: LockSite, hold: Ns, action: Action) -> Step {
        let l = cpu as LockId;
        Step::Locked { locks: [l, l], n: 1, got: 0, site, hold, action }
    }
    /// `double_rq_lock`: both runqueue locks, lower CPU first (v5.14+ `rq_order_less`).
    pub(crate) fn locked2(&self, a: CpuId, b: CpuId, site: LockSite, hold: Ns, action: Action) -> Step {
        if a == b {
            return self.locked1(a, site, hold, action);
        }
        let (lo, hi) = (a.min(b) as LockId, a.max(b) as LockId);
        Step::Locked { locks: [lo, hi], n: 2, got: 0, site, hold, action }
    }

    /// Switches `cpu` to `mode`, accounting the time spent in the mode it leaves. Inlined:
    /// most calls (a kernel step of a CPU already in kernel mode) change nothing.
    #[inline(always)]
    pub(crate) fn set_mode(&mut self, cpu: CpuId, mode: Mode) {
        if self.cpus[cpu].mode != mode {
            self.change_mode(cpu, mode);
        }
    }

    /// [`Kernel::set_mode`]'s change: time accounting, the SMT busy count, the probe.
    #[inline(never)]
    fn change_mode(&mut self, cpu: CpuId, mode: Mode) {
        let now = self.now;
        if self.cpus[cpu].mode == Mode::User {
            self.remote_close(cpu);
        }
        self.energy_close(cpu);
        let c = &mut self.cpus[cpu];
        c.times[c.mode as usize] += now - c.mode_since;
        let flips = (c.mode == Mode::Idle) != (mode == Mode::Idle);
        c.mode = mode;
        c.mode_since = now;
        if flips && self.smt {
            // The siblings' speed changes: re-timed once this event is handled.
            let core = self.machine.topology.cpus[cpu].core;
            if mode == Mode::Idle {
                self.smt_busy[core] -= 1;
            } else {
                self.smt_busy[core] += 1;
            }
            if !self.smt_dirty[core] {
                self.smt_dirty[core] = true;
                self.smt_dirty_list.push(core);
            }
        }
        if self.modes {
            self.probe.event(&ProbeEvent::CpuMode { time: now, cpu, mode });
        }
    }

    /// Busy threads of `cpu`'s core (itself included), and the per-thread rate that gives.
    pub(crate) fn smt_rate_of(&self, cpu: CpuId) -> u32 {
        if !self.smt {
            return 1000;
        }
        let topo = &self.machine.topology;
        let busy = self.smt_busy[topo.cpus[cpu].core] as usize;
        debug_assert_eq!(busy, topo.smt_siblings(cpu).filter(|&s| self.cpus[s].mode != Mode::Idle).count());
        self.smt_rates[busy]
    }

    /// Re-times the work in progress on every core whose busy-thread count changed during
    /// the event just handled: work done so far is kept at the old rate, the rest is
    /// rescheduled at the new one (a new `CpuDone`; the old one is stale by its `gen`).
    /// Cores are visited in the order they changed, CPUs in sibling order: deterministic.
    pub(crate) fn smt_retime(&mut self) {
        let now = self.now;
        let list = std::mem::take(&mut self.smt_dirty_list);
        for &core in &list {
            self.smt_dirty[core] = false;
            let first = self.machine.topology.cpus.iter().position(|c| c.core == core).expect("core has CPUs");
            let sibs: Vec<CpuId> = self.machine.topology.smt_siblings(first).collect();
            for s in sibs {
                if !matches!(self.cpus[s].busy, Busy::User | Busy::Delay | Busy::Hold { .. }) {
                    continue;
                }
                let rate = self.freq_rate(s, self.work_rate(s, self.cpus[s].busy));
                let c = &mut self.cpus[s];
                if c.prog.fixed || c.prog.rate == rate {
                    continue;
                }
                c.prog = Progress { since: now, left: c.prog.left_at(now), rate, fixed: false };
                c.gen += 1;
                let (gen, end) = (c.gen, c.prog.end());
                self.events.push(end, Event::CpuDone { cpu: s as u32, gen });
            }
        }
        self.smt_dirty_list = list;
        self.smt_dirty_list.clear();
    }

    /// Runs steps after the CPU's current kernel work (or at once from user mode or idle).
    pub(crate) fn interrupt(&mut self, cpu: CpuId, steps: impl IntoIterator<Item = Step>) {
        let was = self.cpus[cpu].busy;
        match was {
            Busy::User => {
                self.preempt_user(cpu);
                append(&mut self.cpus[cpu].kstack, steps);
                self.advance(cpu);
            }
            Busy::None => {
                // Only an idle CPU rests with nothing to do.
                let exit = self.idle_exit_cost(cpu);
                let c = &mut self.cpus[cpu];
                c.kstack.push_back(Step::Delay(KernelPath::IdleExit, exit));
                append(&mut c.kstack, steps);
                self.advance(cpu);
            }
            _ => append(&mut self.cpus[cpu].kstack, steps),
        }
    }

    /// Stops the user work in progress, keeping what remains of it.
    fn preempt_user(&mut self, cpu: CpuId) {
        let now = self.now;
        let c = &mut self.cpus[cpu];
        let Busy::User = c.busy else { return };
        c.busy = Busy::None;
        c.gen += 1;
        let left_now = c.prog.left_at(now);
        if let Some(t) = c.curr {
            let task = &mut self.tasks[t];
            if let (Some(_), OpTiming::Work) = (task.op_left, op_timing(&task.prog, task.pc)) {
                task.op_left = Some(left_now);
            }
        }
        self.set_mode(cpu, Mode::Kernel);
    }

    fn cpu_done(&mut self, cpu: CpuId) {
        if matches!(self.cpus[cpu].busy, Busy::Delay | Busy::Hold { .. }) {
            let now = self.now;
            let c = &mut self.cpus[cpu];
            c.path_ns[c.path.index()] += (now - c.seg_start).0;
            if let Some((path, work)) = c.segs.pop_front() {
                // The next segment of the same delay or hold (locks still held).
                self.start_segment(cpu, path, work);
                return;
            }
        }
        let busy = std::mem::replace(&mut self.cpus[cpu].busy, Busy::None);
        match busy {
            Busy::Hold { locks, n } => {
                for i in (0..n as usize).rev() {
                    if self.cpus[cpu].kept != Some(locks[i]) {
                        self.release(locks[i]);
                    }
                }
            }
            Busy::User => {
                let t = self.cpus[cpu].curr.expect("user work has a task");
                self.user_op_done(t);
            }
            _ => {}
        }
        self.advance(cpu);
    }

    pub(crate) fn release(&mut self, lock: LockId) {
        let now = self.now;
        let next = if self.cost.lines_on { self.handover_to(lock, self.locks[lock as usize].owner) } else { 0 };
        let l = &mut self.locks[lock as usize];
        match l.waiters.remove(next) {
            Some((w, since)) => {
                l.owner = Some(w);
                let _ = since;
                self.events.push(now, Event::Resume { cpu: w as u32 });
            }
            None => l.owner = None,
        }
    }

    pub(crate) fn stat(&mut self, lock: LockId, site: LockSite) -> &mut LockStat {
        &mut self.lock_stats[lock as usize][site_index(site)]
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
                Step::Delay(path, ns) => {
                    if ns.0 == 0 {
                        continue;
                    }
                    self.set_mode(cpu, Mode::Kernel);
                    self.cpus[cpu].segs.clear();
                    self.start_kernel(cpu, Busy::Delay, (path, ns));
                    return;
                }
                Step::Do(action) => {
                    self.set_mode(cpu, Mode::Kernel);
                    self.cur_path = crate::vocab::do_path(&action);
                    self.act(cpu, action);
                    // The hooks' work runs right after the action, before what it queued
                    // (the balancer's scan after its moves: `queue_work`).
                    // Taken and put back, so its buffer is reused from event to event.
                    if !self.pending_work.is_empty() {
                        let mut work = std::mem::take(&mut self.pending_work);
                        for (path, ns) in work.drain(..).rev() {
                            self.queue_work(cpu, path, ns);
                        }
                        self.pending_work = work;
                    }
                }
                Step::Locked { locks, n, mut got, site, hold, action } => {
                    if self.acquire(cpu, &locks[..n as usize], &mut got, site) {
                        self.run_locked(cpu, locks, n, site, hold, action);
                    } else {
                        self.cpus[cpu].kstack.push_front(Step::Locked { locks, n, got, site, hold, action });
                    }
                    return;
                }
            }
        }
    }

    /// Takes `locks[got..]` in order for `cpu` (`raw_spin_lock`): true once all are held;
    /// false if one is held by another CPU, which this CPU now spins on, FIFO (the caller
    /// puts the step back, to resume when the lock is handed over).
    fn acquire(&mut self, cpu: CpuId, locks: &[LockId], got: &mut u8, site: LockSite) -> bool {
        while (*got as usize) < locks.len() {
            let lock = locks[*got as usize];
            let id = lock as usize;
            if id < self.cpus.len() {
                self.touch(id); // an rq lock: that runqueue may change
            }
            match self.locks[id].owner {
                None => {
                    self.locks[id].owner = Some(cpu);
                    self.stat(lock, site).acquisitions += 1;
                    *got += 1;
                }
                Some(o) if o == cpu => {
                    // Handed over by the previous holder after we spun.
                    *got += 1;
                }
                Some(_) => {
                    let now = self.now;
                    self.locks[id].waiters.push_back((cpu, now));
                    let st = self.stat(lock, site);
                    st.acquisitions += 1;
                    st.contended += 1;
                    self.cpus[cpu].busy = Busy::Spin;
                    self.cpus[cpu].spin_start(now);
                    self.set_mode(cpu, Mode::Spin);
                    return false;
                }
            }
        }
        true
    }

    /// With `locks[..n]` held: runs `action` at once and holds the locks for `hold`, the
    /// action's extra time, the lines the locks brought and the hooks' work on paths
    /// charged inside (the balancer's scan goes after the hold, `queue_work`).
    fn run_locked(&mut self, cpu: CpuId, locks: [LockId; 2], n: u8, site: LockSite, hold: Ns, action: Action) {
        if let Some(since) = self.cpus[cpu].take_spin() {
            let spun = self.now - since;
            self.stat(locks[(n - 1) as usize], site).spin_ns += spun.0;
        }
        self.set_mode(cpu, Mode::Kernel);
        let transfer = if self.cost.lines_on {
            self.lock_lines(cpu, &locks[..n as usize], site)
        } else {
            self.take_lines(cpu, &locks[..n as usize], site)
        };
        let path = KernelPath::of_site(site);
        self.cur_path = path;
        let extra = self.act(cpu, action);
        let mut first = (path, hold + extra + transfer);
        // Linux 2.6.32 balances a newly idle CPU under `schedule()`'s lock.
        let inside = site == LockSite::Schedule && self.cfg.version.newidle_keeps_lock();
        self.cpus[cpu].segs.clear();
        if !self.pending_work.is_empty() {
            let mut work = std::mem::take(&mut self.pending_work);
            for (p, ns) in work.drain(..) {
                match p {
                    KernelPath::Balance if !inside => self.queue_work(cpu, p, ns),
                    _ => push_segment(&mut first, &mut self.cpus[cpu].segs, (p, ns)),
                }
            }
            self.pending_work = work;
        }
        self.start_kernel(cpu, Busy::Hold { locks, n }, first);
    }

    /// Queues a hook's work as a delay to run next on `cpu`. The balancer's scan (path
    /// `balance`) goes after the moves it requested and outside any lock: Linux balances in
    /// the `SCHED_SOFTIRQ` after the tick and with the runqueue lock dropped in
    /// `newidle_balance`, and `detach_tasks` re-reads the source queue under its lock at the
    /// end of the scan, whereas the model decides at the scan's start; charging the scan
    /// before the moves would let the source queue change under a stale decision.
    fn queue_work(&mut self, cpu: CpuId, path: KernelPath, ns: Ns) {
        let ks = &mut self.cpus[cpu].kstack;
        let at = if path == KernelPath::Balance {
            ks.iter()
                .take_while(|s| {
                    matches!(
                        s,
                        Step::Locked { site: LockSite::Migrate | LockSite::LoadBalance, .. }
                            | Step::Do(Action::DoubleLockBalance { .. })
                    )
                })
                .count()
        } else {
            0
        };
        ks.insert(at, Step::Delay(path, ns));
    }

    /// Starts `work` at the current SMT rate (or as a fixed wall-clock span).
    fn start_busy(&mut self, cpu: CpuId, busy: Busy, work: Ns, fixed: bool) {
        let rate = self.freq_rate(cpu, self.work_rate(cpu, busy));
        let now = self.now;
        let c = &mut self.cpus[cpu];
        c.busy = busy;
        c.gen += 1;
        c.prog = Progress { since: now, left: work, rate, fixed };
        let gen = c.gen;
        self.events.push(c.prog.end(), Event::CpuDone { cpu: cpu as u32, gen });
    }

    /// Starts a kernel delay or lock hold: its `first` segment (path, work) now, then the
    /// CPU's `segs` (built by `push_segment`), in order.
    fn start_kernel(&mut self, cpu: CpuId, busy: Busy, first: (KernelPath, Ns)) {
        self.cpus[cpu].busy = busy;
        self.start_segment(cpu, first.0, first.1);
    }

    fn start_segment(&mut self, cpu: CpuId, path: KernelPath, work: Ns) {
        let c = &mut self.cpus[cpu];
        c.path = path;
        c.seg_start = self.now;
        let busy = c.busy;
        self.start_busy(cpu, busy, work, false);
    }

    /// Ends the user work in progress on `cpu` `after` from now, if it would run longer (a
    /// spinner that sees the word it spins on change).
    pub(crate) fn cut_user(&mut self, cpu: CpuId, after: Ns) {
        let now = self.now;
        let c = &mut self.cpus[cpu];
        if !matches!(c.busy, Busy::User) || c.prog.left_at(now) <= after {
            return;
        }
        c.gen += 1;
        c.prog = Progress { since: now, left: after, rate: c.prog.rate, fixed: true };
        let gen = c.gen;
        self.events.push(now + after, Event::CpuDone { cpu: cpu as u32, gen });
    }

    /// Starts user work of `dur` for the current task; `fixed`: a wall-clock span.
    pub(crate) fn start_user(&mut self, cpu: CpuId, dur: Ns, fixed: bool) {
        self.set_mode(cpu, Mode::User);
        self.remote_open(cpu, fixed);
        self.start_busy(cpu, Busy::User, dur, fixed);
    }

    /// Acquiring `locks` on `cpu`: each lock last held by another CPU moves its cache line
    /// (the lock word and the runqueue fields that share or follow it) here. Returns the
    /// transfer time, spent inside the critical section.
    fn take_lines(&mut self, cpu: CpuId, locks: &[LockId], site: LockSite) -> Ns {
        let mut t = Ns(0);
        for &id in locks {
            if let Some(from) = self.locks[id as usize].last {
                let ns = if from != cpu { self.machine.line_ns(from, cpu) } else { Ns(0) };
                if ns.0 > 0 {
                    t += ns;
                    self.charge_lock_lines(cpu, id, site, 1, ns);
                }
            }
            self.locks[id as usize].last = Some(cpu);
        }
        t
    }

    /// The kernel path is over. Returns true if more steps were queued.
    pub(crate) fn return_to_user(&mut self, cpu: CpuId) -> bool {
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
                self.idle_entered = true;
                self.idle_enter(cpu);
                if self.idle_tick {
                    // A periodic-tick kernel keeps ticking while idle.
                    self.start_tick(cpu);
                } else {
                    let c = &mut self.cpus[cpu];
                    c.tick_on = false;
                    c.tick_gen += 1;
                    self.arm_idle_wakeup(cpu);
                }
                false
            }
        }
    }

    /// Schedules the idle wakeup of a CPU that just went idle (tick stopped), if the policy
    /// declares one; starting the tick again (`start_tick`) cancels it.
    pub(crate) fn arm_idle_wakeup(&mut self, cpu: CpuId) {
        if let Some(p) = self.idle_wakeup {
            let gen = self.cpus[cpu].tick_gen;
            self.events.push(self.now + p, Event::IdleWake { cpu: cpu as u32, gen });
            self.ticks_pending += 1;
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
        self.events.push(next, Event::Tick { cpu: cpu as u32, gen });
        self.ticks_pending += 1;
    }

    pub(crate) fn fail(&mut self, msg: String) {
        if self.fatal.is_none() {
            self.fatal = Some(crate::RunError::Invariant(msg));
        }
    }

    pub(crate) fn lock_id(&mut self, name: LockName) -> LockId {
        match name {
            LockName::Rq(c) => c as LockId,
            LockName::FutexBucket(b) => {
                if let Some(&id) = self.objs.bucket_locks.get(&b) {
                    return id;
                }
                let id =
                    LockId::try_from(self.locks.len()).expect("fewer than 2^32 locks: one a CPU and a futex bucket");
                self.locks.push(Lock::default());
                self.lock_names.push(LockName::FutexBucket(b));
                self.lock_stats.push([LockStat::default(); SITES.len()]);
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

/// How an op's time passes, for a task preempted in it.
enum OpTiming {
    /// CPU work that pauses while the task is off the CPU or in the kernel.
    Work,
    /// Wall-clock deadline (spin).
    Deadline,
    Other,
}

fn op_timing(prog: &Program, pc: usize) -> OpTiming {
    match prog.ops.get(pc) {
        Some(Op::Run(_) | Op::SpinBarrier { .. }) => OpTiming::Work,
        Some(Op::Spin(_)) => OpTiming::Deadline,
        _ => OpTiming::Other,
    }
}

/// Appends a segment (path, work) to a delay or hold whose first segment is `first` and
/// further ones `rest`: consecutive segments of one path are one segment, and empty ones
/// after the first vanish (built in place: no buffer per event).
fn push_segment(first: &mut (KernelPath, Ns), rest: &mut VecDeque<(KernelPath, Ns)>, (p, w): (KernelPath, Ns)) {
    let last = rest.back_mut().unwrap_or(first);
    if last.0 == p {
        last.1 += w;
    } else if w.0 != 0 {
        rest.push_back((p, w));
    }
}

/// Appends `steps` one `push_back` at a time: `VecDeque::extend` over a `Drain` takes a
/// generic path that costs more than the few steps an interrupt queues.
#[inline]
fn append(ks: &mut VecDeque<Step>, steps: impl IntoIterator<Item = Step>) {
    for s in steps {
        ks.push_back(s);
    }
}
