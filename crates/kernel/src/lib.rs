//! The kernel model — schedlab's `core.c`.
//!
//! CPUs execute work: user work of their current task, and kernel paths (`schedule`,
//! `try_to_wake_up`, `wake_up_new_task`, the tick, fork/exit, sleep, pipe and futex calls)
//! that take simulated time from the machine's cost model on the CPU that runs them.
//! Paths that need a runqueue lock (or a futex bucket lock) acquire it for a hold time; a
//! CPU finding it held spins, FIFO in arrival order, and the spin is charged as lost time.
//!
//! The scheduling *policy* is behind [`SchedClass`]; this crate never names a concrete
//! policy.
//!
//! Architecture Invariant: a policy hook runs atomically at the instant its lock is taken;
//! the lock is then held for the path's cost, so contention shows where it would occur.
//! Architecture Invariant: probes observe; nothing in [`Probe`] can change a result.
//! The probe vocabulary (events, summary) lives in `schedlab-probe`, shared with other backends.

#![forbid(unsafe_code)]

mod cache;
mod charges;
mod config;
mod core;
mod coresched;
mod cpu;
mod deadlock;
mod delayed;
mod em;
mod energy;
mod exec;
mod freq;
mod futex;
mod futex_pi;
mod hotplug;
mod hrtimer;
mod idle;
mod invariants;
mod lines;
mod memory;
mod mm;
mod noise;
mod objects;
mod pipes;
mod rt_timer;
mod timerqueue;
mod version;
mod vocab;
mod waits;
mod why;

pub use delayed::{RING_SLOTS, RING_USABLE};
pub use freq::CpufreqStats;

pub use config::{is_switch, FutexConfig, KernelConfig, KernelVersion, RunsOn, SimParams, SWITCHES};
use schedlab_machine::{KernelPath, Machine};
use schedlab_probe::{EndReason, LockName, LockStat, PrevState, Probe, ProbeEvent, RunSummary, SampleView};
use schedlab_sched_api::{CpuView, OptIdx, Request, SchedClass, TaskInfo};
use schedlab_sim::{CpuId, EventQueue, Ns, RngStreams, SimRng, SourceError, TaskId, TraceHash};
use schedlab_workload::{Program, Workload};
use std::rc::Rc;
use std::sync::Arc;

/// A fatal error during a run (never a panic).
#[derive(Debug)]
pub enum RunError {
    Workload(SourceError),
    Limit(String),
    /// A policy broke the `SchedClass` contract, or an invariant failed.
    Invariant(String),
    /// The policy refused the workload's configuration (e.g. its task groups).
    Config(String),
}

impl std::error::Error for RunError {}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Workload(e) => write!(f, "{e}"),
            RunError::Limit(m) => write!(f, "limit: {m}"),
            RunError::Invariant(m) => write!(f, "invariant violated: {m}"),
            RunError::Config(m) => write!(f, "{m}"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TState {
    /// Runnable or running (`TASK_RUNNING`).
    Running,
    /// Has decided to block; dequeued at its next `schedule()` unless woken first.
    Sleeping,
    Dead,
}

/// What a blocked task waits for (for explanations).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlockedOn {
    Nothing,
    Timer,
    PipeRead(u32),
    PipeWrite(u32),
    Futex,
    Children,
    /// `poll` on the pipes of the task's current `poll` op.
    Poll,
}

pub(crate) struct Task {
    /// Index of the workload template this task runs (for explanations).
    pub template: u32,
    /// The policy the task set (`p->policy` and its params). A PI boost never changes it
    /// nor `TaskInfo::policy`: the kernel passes the boost to the class (`pi_setprio`),
    /// which runs the task boosted and applies a policy set meanwhile when the boost ends.
    pub normal_policy: schedlab_sched_api::TaskPolicy,
    pub state: TState,
    pub on_rq: bool,
    /// A `try_to_wake_up` has claimed this task (`p->pi_lock` + `TASK_WAKING`).
    pub waking: bool,
    /// Off every runqueue between detach and attach of an affinity move.
    pub in_transit: bool,
    pub migrate_pending: bool,
    /// Where an active balance sends the task (else any allowed CPU).
    pub migrate_to: Option<u32>,
    /// Shared by the instances of a template whose program does not depend on the
    /// instance; counted without atomics (`Rc`), as the interpreter takes a reference at
    /// every call and a simulation runs on one thread.
    pub prog: Rc<Program>,
    pub pc: usize,
    pub loops: Vec<u64>,
    /// Remaining work of a `run`, or the deadline of a `spin`.
    pub op_left: Option<Ns>,
    pub op_phase: u8,
    pub op_aux: u64,
    /// Unnamed `timer` ops' next expiries, by op index.
    pub timers: Vec<(usize, Ns)>,
    /// When the task came to life (rt-app's `t_first`, where its timers count from).
    pub started: Ns,
    pub live_children: u64,
    /// The task's live children, a list linked through their `sibling` links
    /// (`task_struct::children`, `sibling`): its head here, and this task's neighbours on
    /// its parent's list. A child leaves the list when it exits (the model reaps at once);
    /// an exiting parent walks its own list to reparent them (`kernel/exit.c:
    /// forget_original_parent`), so an exit costs O(its children), not O(every task).
    pub children: OptIdx,
    pub sibling_prev: OptIdx,
    pub sibling_next: OptIdx,
    pub timer_cpu: u32,
    pub rewarm: Ns,
    pub last_ran: Option<u32>,
    pub blocked_on: BlockedOn,
    pub wake_migrated: bool,
    /// Asleep but still queued: the policy delayed its dequeue (v6.12 `se->sched_delayed`).
    pub delayed: bool,
    /// A forked task that has not run yet: when it was forked (for fork-to-first-run time).
    pub born: Option<Ns>,
    /// State only rt-app timers, spans and `poll` use, boxed on first use: most tasks
    /// never need it, and three empty `Vec`s would cost every task 72 bytes.
    pub extra: Option<Box<TaskExtra>>,
}

/// The rarely used part of a [`Task`].
#[derive(Default)]
pub(crate) struct TaskExtra {
    /// This task's own rt-app timers' next expiries, by `NamedTimer::id`.
    pub rt_timers: Vec<(usize, Ns)>,
    /// Open spans: (span, id, begun at).
    pub spans: Vec<(usize, u64, Ns)>,
    /// Per `poll` set of the program: the index its next scan starts at.
    pub poll_next: Vec<u32>,
}

impl Task {
    /// A new task of `template` running `prog` from its start, on `cpu` (`born`: when it
    /// was forked, for a forked one), runnable but not yet queued.
    pub(crate) fn new(
        template: usize,
        policy: schedlab_sched_api::TaskPolicy,
        prog: Rc<Program>,
        cpu: CpuId,
        now: Ns,
        born: Option<Ns>,
    ) -> Task {
        Task {
            template: template as u32, // templates ≤ MAX_TASKS
            normal_policy: policy,
            state: TState::Running,
            on_rq: false,
            waking: false,
            in_transit: false,
            migrate_pending: false,
            migrate_to: None,
            prog,
            pc: 0,
            loops: Vec::new(),
            op_left: None,
            op_phase: 0,
            op_aux: 0,
            timers: Vec::new(),
            started: now,
            live_children: 0,
            children: OptIdx::NONE,
            sibling_prev: OptIdx::NONE,
            sibling_next: OptIdx::NONE,
            timer_cpu: cpu as u32,
            rewarm: Ns(0),
            last_ran: None,
            blocked_on: BlockedOn::Nothing,
            wake_migrated: false,
            delayed: false,
            born,
            extra: None,
        }
    }

    /// The task's [`TaskExtra`], allocated on first use.
    pub(crate) fn extra_mut(&mut self) -> &mut TaskExtra {
        self.extra.get_or_insert_with(Default::default)
    }
}

/// The simulated kernel.
pub struct Kernel<'p> {
    pub(crate) machine: Arc<Machine>,
    pub(crate) wl: Arc<Workload>,
    /// The effective switches ([`KernelConfig::effective`]): what this kernel runs.
    pub(crate) cfg: KernelConfig,
    pub(crate) params: SimParams,
    pub(crate) policy: Box<dyn SchedClass>,
    pub(crate) probe: &'p mut dyn Probe,
    pub(crate) now: Ns,
    pub(crate) events: EventQueue<vocab::Event>,
    pub(crate) tasks: Vec<Task>,
    pub(crate) info: Vec<TaskInfo>,
    pub(crate) cpus: Vec<cpu::Cpu>,
    pub(crate) views: Vec<CpuView>,
    pub(crate) locks: Vec<cpu::Lock>,
    pub(crate) lock_names: Vec<LockName>,
    pub(crate) lock_stats: Vec<[LockStat; vocab::SITES.len()]>,
    pub(crate) objs: objects::Objects,
    pub(crate) requests: Vec<Request>,
    pub(crate) wl_rng: SimRng,
    pub(crate) policy_rng: SimRng,
    /// The machine's noise and its streams (`noise.rs`).
    pub(crate) noise: noise::NoiseSource,
    pub(crate) shared_programs: Vec<Option<Rc<Program>>>,
    pub(crate) instances: Vec<u64>,
    pub(crate) alive: u64,
    pub(crate) pending_starts: u64,
    pub(crate) processed: u64,
    pub(crate) hash: TraceHash,
    pub(crate) fatal: Option<RunError>,
    pub(crate) distribute: usize,
    /// CPU hotplug (`hotplug.rs`): the active CPUs and the tasks' requested masks.
    pub(crate) hotplug: hotplug::HotplugState,
    pub(crate) exit_times: Vec<Option<Ns>>,
    /// The scheduler-tick period (the policy's, or the machine's HZ).
    pub(crate) tick: Ns,
    /// With invariant checks on: the CPUs the current event touched (its own, those whose
    /// runqueue locks it took, those it flagged or queued a wakeup on), checked after it.
    pub(crate) touched: Vec<CpuId>,
    pub(crate) touched_mask: Vec<bool>,
    /// The random stream a policy's checks may draw from (one for the run: seeding a
    /// stream per event would cost more than the check; checks change no result).
    pub(crate) check_rng: Option<SimRng>,
    /// Every CPU: the affinity of tasks that name none, one bitmap shared by all of them.
    pub(crate) all_cpus: schedlab_machine::CpuSet,
    /// Reused step buffers (the interpreter's and interrupts'), so no event allocates.
    pub(crate) scratch: Vec<vocab::Step>,
    pub(crate) irq_scratch: Vec<vocab::Step>,
    /// The tick also runs on idle CPUs (`SchedClass::idle_tick`).
    pub(crate) idle_tick: bool,
    /// An idle CPU's longest sleep before a timer interrupt wakes it (`SchedClass::idle_wakeup`).
    pub(crate) idle_wakeup: Option<Ns>,
    /// Tick events in the event queue (stale ones included): with the tick running on idle
    /// CPUs the queue is never empty, so a deadlock shows as "only ticks pending"
    /// (`deadlock.rs`).
    pub(crate) ticks_pending: usize,
    /// A CPU went idle during the current event: the moment a deadlock may have become
    /// certain (`deadlock.rs`).
    pub(crate) idle_entered: bool,
    /// SMT threads slow each other down on this machine.
    pub(crate) smt: bool,
    /// Cores whose busy-thread count changed during the current event (`smt_retime`).
    pub(crate) smt_dirty: Vec<bool>,
    pub(crate) smt_dirty_list: Vec<usize>,
    /// Per core, its threads not idle (kept by `set_mode`): the SMT rate of work started
    /// there without counting the siblings each time.
    pub(crate) smt_busy: Vec<u32>,
    /// `Machine::smt_rate` of each busy-thread count a core can have, computed once: the
    /// rate is looked up at every start of work.
    pub(crate) smt_rates: Vec<u32>,
    /// The path of the step being executed: where its hooks' work is charged by default.
    pub(crate) cur_path: KernelPath,
    /// The current step's hooks' work, to be charged after the action, per path.
    pub(crate) pending_work: Vec<(KernelPath, Ns)>,
    /// The delayed new-task wakeup's queues and counters (`delayed.rs`).
    pub(crate) dtq: delayed::DelayQueues,
    /// Balancer work (`tasks` examined) the old kernels do under both runqueue locks, held
    /// for the move the same hook requests (`version.rs`).
    pub(crate) lb_chain: Ns,
    /// A newly-idle balance hook is running (Linux 2.6.32 keeps the runqueue lock for it).
    pub(crate) in_newidle: bool,
    /// Fork-to-first-run time of forked tasks: count, sum, max.
    pub(crate) first_run: (u64, u64, u64),
    /// Decision records (`why.rs`): `Some` only when the probe wants them.
    pub(crate) why: Option<Vec<schedlab_sched_api::Decision>>,
    /// The probe reads CPU mode changes (`Probe::wants_cpu_modes`).
    pub(crate) modes: bool,
    /// The cost models beyond the constant costs (`memory.rs`: caches, NUMA memory,
    /// address spaces, line transfers; all off under `--costs flat` and `none`).
    pub(crate) cost: memory::CostState,
    /// The idle governor and each CPU's idle state (`idle.rs`).
    pub(crate) cpuidle: idle::CpuIdle,
    /// Frequencies, capacities and the cpufreq governor (`freq.rs`).
    pub(crate) speed: freq::Speed,
    /// The energy of the run from the energy model (`energy.rs`; observation only).
    pub(crate) energy: energy::Energy,
    /// The energy model policies read (`em.rs`, `Ctx::em`).
    pub(crate) em: schedlab_sched_api::EnergyModel,
    /// Core scheduling (`coresched.rs`): off unless a task has a cookie on an SMT machine.
    pub(crate) core: coresched::CoreSched,
}

/// With invariant checks on, every this many events (and at the end) everything is
/// checked, not only what the event touched.
pub const FULL_CHECK_EVERY: u64 = 256;
/// `Kernel::run` polls its `keep_going` callback once per this many events (a power of
/// two), so a caller can count events from the calls (progress bars).
pub const PROGRESS_EVENTS: u64 = 4096;

/// What a kernel refuses before it starts: a machine without CPUs, a workload starting
/// more tasks than the limit.
fn check_limits(machine: &Machine, wl: &Workload, params: &SimParams) -> Result<(), RunError> {
    if machine.nr_cpus() == 0 {
        return Err(RunError::Limit("the machine has no CPUs".into()));
    }
    if wl.initial_tasks() > params.max_tasks {
        return Err(RunError::Limit(format!(
            "the workload starts {} tasks; the limit is {}",
            wl.initial_tasks(),
            params.max_tasks
        )));
    }
    Ok(())
}

impl<'p> Kernel<'p> {
    /// Builds a kernel for `workload` on `machine` under `policy`, running the effective
    /// configuration of `cfg` ([`KernelConfig::effective`]; [`Kernel::config`]).
    pub fn new(
        machine: Arc<Machine>,
        wl: Arc<Workload>,
        policy: Box<dyn SchedClass>,
        cfg: KernelConfig,
        params: SimParams,
        probe: &'p mut dyn Probe,
    ) -> Result<Kernel<'p>, RunError> {
        check_limits(&machine, &wl, &params)?;
        let n = machine.nr_cpus();
        let streams = RngStreams::new(params.seed);
        let mut policy = policy;
        policy.set_task_groups(&wl.groups).map_err(RunError::Config)?;
        let tick = policy.tick_period().unwrap_or_else(|| machine.tick_ns());
        let idle_tick = policy.idle_tick();
        let idle_wakeup = policy.idle_wakeup().filter(|p| p.0 > 0);
        let cfg = cfg.effective(RunsOn::new(policy.as_ref(), &machine));
        let cores = machine.topology.cpus.iter().map(|c| c.core + 1).max().unwrap_or(0);
        let cost = memory::CostState::new(&machine, &wl)?;
        let cpuidle = idle::CpuIdle::new(&machine, tick).map_err(RunError::Config)?;
        let speed = freq::Speed::new(&machine, tick);
        let em = em::register(&machine);
        let cookies = wl.templates.iter().any(|t| t.core_cookie.is_some_and(|c| c != 0));
        let core = coresched::CoreSched::new(&machine, cookies, policy.as_ref());
        let mut k = Kernel {
            em,
            core,
            cost,
            cpuidle,
            speed,
            energy: energy::Energy::default(),
            tick,
            touched: Vec::with_capacity(n),
            touched_mask: vec![false; n],
            check_rng: Some(RngStreams::new(0).stream("invariants", 0)),
            all_cpus: machine.all_cpus(),
            scratch: Vec::new(),
            irq_scratch: Vec::new(),
            idle_tick,
            idle_wakeup,
            ticks_pending: 0,
            idle_entered: false,
            smt: machine.smt_shares(),
            smt_dirty: vec![false; cores],
            smt_dirty_list: Vec::new(),
            smt_busy: vec![0; cores],
            smt_rates: (0..=machine.topology.threads_per_core).map(|b| machine.smt_rate(b)).collect(),
            cur_path: KernelPath::Schedule,
            pending_work: Vec::new(),
            dtq: delayed::DelayQueues::new(n),
            lb_chain: Ns(0),
            in_newidle: false,
            first_run: (0, 0, 0),
            cpus: (0..n).map(|_| cpu::Cpu::default()).collect(),
            views: vec![CpuView::default(); n],
            locks: (0..n).map(|_| cpu::Lock::default()).collect(),
            lock_names: (0..n).map(LockName::Rq).collect(),
            lock_stats: vec![[LockStat::default(); vocab::SITES.len()]; n],
            objs: objects::Objects::new(&wl, n),
            requests: Vec::new(),
            wl_rng: streams.stream("workload", 0),
            policy_rng: streams.stream("policy", 0),
            noise: noise::NoiseSource::new(&machine.noise, &streams),
            shared_programs: vec![None; wl.templates.len()],
            instances: vec![0; wl.templates.len()],
            alive: 0,
            pending_starts: 0,
            processed: 0,
            hash: TraceHash::default(),
            fatal: None,
            distribute: 0,
            hotplug: hotplug::HotplugState::default(),
            exit_times: Vec::new(),
            tasks: Vec::new(),
            info: Vec::new(),
            now: Ns(0),
            events: EventQueue::default(),
            machine,
            wl,
            cfg,
            params,
            why: probe.wants_decisions().then(Vec::new),
            modes: probe.wants_cpu_modes(),
            policy,
            probe,
        };
        if k.cost.lines_on {
            k.cost.lines.kind = Some(k.spinlock_kind());
        }
        k.energy_init();
        k.cpuset_init();
        k.boot();
        Ok(k)
    }

    /// The kernel's state at time 0: per-task tables sized for the tasks the workload
    /// starts with, the first events queued (task starts, `[[change]]`s, ticks or idle
    /// wakeups).
    fn boot(&mut self) {
        // Per-task state is sized once for the tasks the workload starts with.
        let n0 = usize::try_from(self.wl.initial_tasks()).unwrap_or(usize::MAX);
        self.tasks.reserve_exact(n0);
        self.info.reserve_exact(n0);
        self.exit_times.reserve_exact(n0);
        self.policy.reserve_tasks(n0);
        self.probe.reserve_tasks(n0);
        // One queued `Start` per template, not per instance: each instance queues the next
        // with the sequence number reserved for it here, so events pop in the same order as
        // if every instance had been queued now, and 100 000 threads do not put 100 000
        // entries (32 bytes each, and a deeper heap) in the queue.
        for (t, tpl) in self.wl.templates.iter().enumerate() {
            if tpl.count == 0 {
                continue;
            }
            let seq = self.events.reserve_seqs(tpl.count);
            let (template, left) = (t as u32, (tpl.count - 1) as u32); // ≤ MAX_TASKS
            self.events.push_seq(tpl.start, seq, vocab::Event::Start { template, left });
            self.pending_starts += tpl.count;
        }
        for (idx, c) in self.wl.changes.iter().enumerate() {
            self.events.push(c.at, vocab::Event::Change { idx: idx as u32 }); // one per parsed `[[change]]`: far below 2^32
        }
        if self.idle_tick {
            for c in 0..self.cpus.len() {
                self.start_tick(c);
            }
        } else if self.idle_wakeup.is_some() {
            // Every CPU starts idle: its first wakeup is armed now.
            for c in 0..self.cpus.len() {
                self.arm_idle_wakeup(c);
            }
        }
    }

    /// The switches this kernel runs: the requested ones with every switch that cannot take
    /// effect under this policy on this machine turned off ([`KernelConfig::effective`]).
    pub fn config(&self) -> &KernelConfig {
        &self.cfg
    }

    /// Runs until the end time, until every task exited, or until `keep_going` returns false
    /// (it is called every [`PROGRESS_EVENTS`] events with the current simulated time: with invariant
    /// checks on, 65536 events could take seconds, too long for Ctrl-C). A kernel runs once:
    /// the summary takes the task table's names.
    pub fn run(&mut self, keep_going: &mut dyn FnMut(Ns) -> bool) -> Result<RunSummary, RunError> {
        let end = self.params.end;
        let sample_every = self.probe.sample_every();
        let mut next_sample = Ns(0);
        let mut reason = EndReason::TimeLimit;
        loop {
            let Some(t) = self.events.peek_time() else {
                // Nothing pending can wake anyone: either everyone exited, or the tasks
                // left are all blocked for good.
                reason = if self.alive == 0 && self.pending_starts == 0 {
                    EndReason::AllExited
                } else {
                    EndReason::Deadlock
                };
                break;
            };
            if t > end {
                break;
            }
            if let Some(every) = sample_every {
                while next_sample <= t {
                    self.now = next_sample;
                    self.sample();
                    next_sample += every;
                }
            }
            let (t, seq, ev) = self.events.pop_with_seq().expect("peeked");
            if matches!(ev, vocab::Event::Tick { .. } | vocab::Event::IdleWake { .. }) {
                self.ticks_pending -= 1;
            }
            self.now = t;
            self.processed += 1;
            self.dispatch(ev, seq);
            if !self.smt_dirty_list.is_empty() {
                self.smt_retime();
            }
            if let Some(e) = self.fatal.take() {
                return Err(e);
            }
            if self.params.check_invariants {
                self.check_after_event().map_err(RunError::Invariant)?;
            }
            if let Some(r) = self.ends_after_event(keep_going) {
                reason = r;
                break;
            }
        }
        if reason == EndReason::TimeLimit {
            self.now = end;
        }
        // The series end where the run does: a run shorter than the sampling interval
        // still has its start and end samples, and a figure of it lines, not nothing.
        if sample_every.is_some_and(|every| next_sample.0.checked_sub(every.0) != Some(self.now.0)) {
            self.sample();
        }
        if self.params.check_invariants {
            let mut rng = self.check_rng.take().expect("put back after every check");
            self.check_invariants(None, &mut rng).map_err(RunError::Invariant)?;
        }
        Ok(self.summary(reason))
    }

    /// Whether the run ends after the event just handled, and why: every task exited, a
    /// deadlock became certain (`deadlock.rs`), or the caller asks to stop (polled every
    /// [`PROGRESS_EVENTS`] events).
    fn ends_after_event(&mut self, keep_going: &mut dyn FnMut(Ns) -> bool) -> Option<EndReason> {
        if self.alive == 0 && self.pending_starts == 0 {
            return Some(EndReason::AllExited);
        }
        if (self.idle_tick || self.idle_wakeup.is_some()) && self.only_idle_ticks_left() {
            return Some(EndReason::Deadlock);
        }
        if std::mem::take(&mut self.idle_entered) && self.quiescent() {
            return Some(EndReason::Deadlock);
        }
        if self.processed & (PROGRESS_EVENTS - 1) == 0 && !keep_going(self.now) {
            return Some(EndReason::Interrupted);
        }
        None
    }

    fn sample(&mut self) {
        let tasks = &self.tasks;
        let alive = |t: TaskId| tasks[t].state != TState::Dead;
        let (mut acq, mut cont) = (0, 0);
        for (i, stats) in self.lock_stats.iter().enumerate() {
            if matches!(self.lock_names[i], LockName::Rq(_)) {
                acq += stats.iter().map(|s| s.acquisitions).sum::<u64>();
                cont += stats.iter().map(|s| s.contended).sum::<u64>();
            }
        }
        let policy = self.policy.as_ref();
        let task_stats = |t: TaskId| policy.task_stats(t);
        let view = SampleView {
            rq_lock_acquisitions: acq,
            rq_lock_contended: cont,
            now: self.now,
            cpus: &self.views,
            tasks: &self.info,
            alive: &alive,
            task_stats: Some(&task_stats),
        };
        self.probe.sample(&view);
    }

    fn summary(&mut self, reason: EndReason) -> RunSummary {
        let now = self.now;
        let cpu_times = self.cpus.iter().map(|c| c.times_at(now)).collect();
        let cpu_paths = self.cpus.iter().map(|c| c.paths_at(now).map(Ns)).collect();
        // A CPU still spinning when the run ends has spun on its lock until now.
        for c in 0..self.cpus.len() {
            let Some(since) = self.cpus[c].take_spin() else { continue };
            if let Some(vocab::Step::Locked { locks, n, site, .. }) = self.cpus[c].kstack.front() {
                let (lock, site) = (locks[(*n - 1) as usize], *site);
                self.stat(lock, site).spin_ns += (now - since).0;
            }
        }
        let mut locks = Vec::new();
        for (i, stats) in self.lock_stats.iter().enumerate() {
            for (s, st) in stats.iter().enumerate() {
                if st.acquisitions > 0 {
                    locks.push((self.lock_names[i].clone(), vocab::SITES[s], *st));
                }
            }
        }
        locks.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        // The wait-for graph reads the task names, which the summary then takes (the run
        // is over: 100 000 task infos are not copied at its peak).
        let deadlock = if reason == EndReason::Deadlock { self.wait_for_graph() } else { Vec::new() };
        RunSummary {
            end: now,
            reason,
            events: self.processed,
            trace_hash: self.hash.0,
            cpu_times,
            cpu_paths,
            locks,
            tasks: std::mem::take(&mut self.info),
            exit_times: std::mem::take(&mut self.exit_times),
            core_forceidle: self.core_forceidle_sums(),
            policy_counters: self.policy.counters(),
            groups: self.policy.group_stats(),
            policy_exit: self.policy.exit_info(),
            kernel_counters: self
                .kernel_counters()
                .into_iter()
                .chain(self.futex_counters())
                .chain(self.cost_counters())
                .chain(self.core_counters())
                .collect(),
            deadlock,
            costs: self.cost_report(),
            notes: std::mem::take(&mut self.hotplug.notes)
                .into_iter()
                .chain(std::mem::take(&mut self.core.notes))
                .collect(),
        }
    }

    /// The kernel's futex counters that are not zero (`futex_swaps`, `direct_switches`, …).
    fn futex_counters(&self) -> Vec<(String, u64)> {
        let s = &self.objs.stats;
        let kernel = [
            ("futex_swaps", s.swaps),
            ("direct_switches", s.direct_switches),
            // A direct switch is a `__schedule` without `pick_next_task`.
            ("picks_skipped", s.direct_switches),
            ("direct_fallbacks", s.direct_fallbacks),
            ("futex_requeued", s.requeued),
            ("vip_jumps", s.vip_jumps),
            ("vip_starvation_guard", s.vip_guarded),
            ("vip_inherits", s.vip_inherits),
            ("pi_boosts", s.pi_boosts),
            ("vip_waits", s.vip_waits),
            ("vip_wait_ns", s.vip_wait_ns),
            ("vip_wait_max_ns", s.vip_wait_max_ns),
            ("vip_waits_over_100ms", s.vip_waits_over_100ms),
            ("vip_waits_over_200ms", s.vip_waits_over_200ms),
            ("timers", s.timers),
            ("timer_overruns", s.timer_overruns),
        ];
        kernel.iter().filter(|(_, v)| *v > 0).map(|(k, v)| (k.to_string(), *v)).collect()
    }

    /// Marks `cpu` as touched by the current event (for the incremental check).
    #[inline]
    pub(crate) fn touch(&mut self, cpu: CpuId) {
        if self.params.check_invariants && !self.touched_mask[cpu] {
            self.touched_mask[cpu] = true;
            self.touched.push(cpu);
        }
    }

    /// After an event: the touched CPUs' checks, or everything every
    /// [`FULL_CHECK_EVERY`] events.
    fn check_after_event(&mut self) -> Result<(), String> {
        let touched = std::mem::take(&mut self.touched);
        let mut rng = self.check_rng.take().expect("put back after every check");
        let r = if self.processed.is_multiple_of(FULL_CHECK_EVERY) {
            self.check_invariants(None, &mut rng)
        } else {
            self.check_invariants(Some(&touched), &mut rng)
        };
        self.check_rng = Some(rng);
        for &c in &touched {
            self.touched_mask[c] = false;
        }
        self.touched = touched;
        self.touched.clear();
        r
    }

    pub fn now(&self) -> Ns {
        self.now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HACKBENCH: &str = include_str!("../../../examples/workloads/hackbench.toml");

    /// The trace hash of two small hackbench groups under `sched` on `machine` with `cfg`;
    /// `force`: run the request as given, the effective configuration's adjustments undone
    /// (all but the wake list of a policy or version without one, which the kernel cannot
    /// run).
    fn hash(sched: &str, machine: &str, cfg: &KernelConfig, force: bool) -> u64 {
        let m = Arc::new(schedlab_machine::preset(machine).expect("preset"));
        let params = [("groups".to_string(), "2".to_string()), ("loops".to_string(), "10".to_string())];
        let wl = schedlab_workload::parse_workload("hackbench.toml", HACKBENCH, &params, m.nr_cpus()).expect("parses");
        let policy = schedlab_policies::make_policy(sched, &m, &[]).expect("policy");
        let has_list = policy.wake_list() && cfg.version.has_wake_list();
        let mut probe = schedlab_probe::NoProbe;
        let sim = SimParams { end: Ns::from_secs(2), ..SimParams::default() };
        let mut k = Kernel::new(m, Arc::new(wl), policy, cfg.clone(), sim, &mut probe).expect("builds");
        if force {
            k.cfg.ttwu_queue = cfg.ttwu_queue && has_list;
            k.cfg.lb_narrow_lock = cfg.lb_narrow_lock;
        }
        k.run(&mut |_| true).expect("runs").trace_hash
    }

    /// Every switch the effective configuration turns off for want of an effect (the wake
    /// list under 3.4 on one LLC, the narrow balance lock under 5.15 or a policy moving no
    /// batches) has none: forced on, the run is the same, event for event.
    #[test]
    fn the_switches_turned_off_would_change_nothing() {
        let mut adjusted = 0;
        for sched in ["cfs", "o1", "ule", "fifo", "ext:simple"] {
            for version in KernelVersion::ALL {
                for machine in ["i7-3770", "opteron-32"] {
                    let cfg =
                        KernelConfig { ttwu_queue: true, lb_narrow_lock: true, version, ..KernelConfig::default() };
                    let forced = hash(sched, machine, &cfg, true);
                    assert_eq!(hash(sched, machine, &cfg, false), forced, "{sched} {version} {machine}");
                    let m = schedlab_machine::preset(machine).expect("preset");
                    let p = schedlab_policies::make_policy(sched, &m, &[]).expect("policy");
                    let eff = cfg.effective(RunsOn::new(p.as_ref(), &m));
                    let listed = p.wake_list() && version.has_wake_list();
                    adjusted += usize::from(eff.ttwu_queue != listed) + usize::from(!eff.lb_narrow_lock);
                }
            }
        }
        // The cases above include switches turned off (3.4 on the i7's one LLC; 5.15; ULE).
        assert!(adjusted >= 10, "only {adjusted} adjusted switches were compared");
    }
}
