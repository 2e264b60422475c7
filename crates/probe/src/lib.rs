//! The event vocabulary every backend speaks: tracepoint-like [`ProbeEvent`]s, the
//! [`Probe`] sink that receives them, the [`SampleView`] a sampling probe reads, and the
//! [`RunSummary`] a run ends with.
//!
//! The simulator (`schedlab-kernel`) emits these events from its model of `core.c`; a host
//! backend emits the same events read from the real kernel's `sched:*` tracepoints, so one
//! `Metrics` probe aggregates both.
//!
//! Architecture Invariant: probes observe; nothing in [`Probe`] can change a result.
//! Architecture Invariant: this crate names no backend: it depends only on the plain data
//! types of `sim`, `machine` and `sched-api`.

#![forbid(unsafe_code)]

use schedlab_machine::{KernelPath, LockSite};
use schedlab_sched_api::{CpuView, Decision, Stat, TaskInfo};
use schedlab_sim::{CpuId, Ns, TaskId};
use serde::Serialize;

/// What a CPU is doing; per-CPU time is conserved across these four.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    User = 0,
    Kernel = 1,
    /// Spinning on a lock held by another CPU.
    Spin = 2,
    Idle = 3,
}

/// Why a task left the CPU, as `sched_switch`'s `prev_state` says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrevState {
    /// Preempted or yielded: still runnable (`TASK_RUNNING`).
    Runnable,
    /// Blocked (`TASK_INTERRUPTIBLE`).
    Blocked,
    /// Exited (`TASK_DEAD`).
    Dead,
}

/// Tracepoint-like events a backend emits for metrics and traces.
#[derive(Clone, Debug, PartialEq)]
pub enum ProbeEvent {
    /// A task came into existence (`task_newtask`); `parent` is `None` for workload-started tasks.
    TaskNew { time: Ns, task: TaskId, parent: Option<TaskId>, cpu: CpuId },
    /// `sched_switch`. `prev`/`next` are `None` for the idle task.
    Switch { time: Ns, cpu: CpuId, prev: Option<TaskId>, prev_state: PrevState, next: Option<TaskId> },
    /// `sched_waking`: a wakeup of a blocked task started on `waker_cpu`; `irq`: in hard
    /// interrupt context (an expiring hrtimer: `hrtimer_wakeup`), so the task current on
    /// `waker_cpu` did not cause it (ftrace's `TRACE_FLAG_HARDIRQ` in `common_flags`).
    Waking { time: Ns, task: TaskId, waker_cpu: CpuId, irq: bool },
    /// `sched_wakeup`/`sched_wakeup_new`: the task is now queued on `cpu`.
    Wakeup { time: Ns, task: TaskId, cpu: CpuId, new: bool },
    /// `sched_migrate_task`.
    Migrate { time: Ns, task: TaskId, from: CpuId, to: CpuId },
    /// `sched_process_exit`.
    Exit { time: Ns, task: TaskId },
    /// A CPU changed what it is doing (for per-CPU time accounting and timelines).
    CpuMode { time: Ns, cpu: CpuId, mode: Mode },
    /// A task closed a named span (`mark_end`) it opened at `start`; `span` indexes the
    /// workload's span names.
    Span { time: Ns, task: TaskId, span: usize, start: Ns },
    /// `sched_pi_setprio`: priority inheritance changed the task's effective priority
    /// (`prio`, kernel scale, lower is better; `None`: back to its own).
    PiSetprio { time: Ns, task: TaskId, prio: Option<i32> },
    /// The task's inherited VIP treatment began (`on`) or ended (simulation only).
    VipInherit { time: Ns, task: TaskId, on: bool },
}

/// A sink for [`ProbeEvent`]s.
pub trait Probe {
    fn event(&mut self, ev: &ProbeEvent);
    /// Called every `sample_every` ns of run time with read access to the backend's state,
    /// so time series (queue lengths, policy internals) can be sampled. Default: no sampling.
    fn sample(&mut self, _view: &SampleView) {}
    fn sample_every(&self) -> Option<Ns> {
        None
    }
    /// About `n` tasks will exist (a hint for sizing per-task state exactly).
    fn reserve_tasks(&mut self, _n: usize) {}
    /// Whether this probe wants decision records ([`Probe::decision`]). Asked once, at the
    /// start of a run; `false` (the default) keeps recording off and free.
    fn wants_decisions(&self) -> bool {
        false
    }
    /// A decision the policy or the kernel made at `time` (`schedlab_sched_api::why`),
    /// delivered right after the hook that made it, before the events it causes.
    fn decision(&mut self, _time: Ns, _d: &Decision) {}
    /// Whether this probe reads [`ProbeEvent::CpuMode`]. Asked once, at the start of a run:
    /// a CPU changes mode several times per simulated operation, so a probe that ignores
    /// the changes saves the backend a call for each.
    fn wants_cpu_modes(&self) -> bool {
        true
    }
}

/// A probe that ignores everything.
pub struct NoProbe;
impl Probe for NoProbe {
    fn event(&mut self, _ev: &ProbeEvent) {}
}

/// Read-only view of a backend's state for sampling probes.
pub struct SampleView<'a> {
    pub now: Ns,
    pub cpus: &'a [CpuView],
    pub tasks: &'a [TaskInfo],
    pub alive: &'a dyn Fn(TaskId) -> bool,
    /// A task's scheduling-class internals (the simulator: `SchedClass::task_stats`);
    /// `None` when the backend cannot read them (a host run has no policy object).
    pub task_stats: Option<&'a dyn Fn(TaskId) -> Vec<Stat>>,
    /// Runqueue-lock acquisitions so far and how many found the lock held (all sites).
    pub rq_lock_acquisitions: u64,
    pub rq_lock_contended: u64,
}

/// Lock statistics per (lock, call site).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LockStat {
    pub acquisitions: u64,
    pub contended: u64,
    pub spin_ns: u64,
    /// Cache-line transfers taking the lock at this site caused (the lock word and the
    /// data beside it brought from the CPU that last held it, hand-overs included), and the
    /// time they added inside the critical section (the machine's `lines` model).
    pub line_transfers: u64,
    pub line_ns: u64,
}

/// What a lock protects.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LockName {
    Rq(CpuId),
    FutexBucket(usize),
}

impl std::fmt::Display for LockName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockName::Rq(c) => write!(f, "rq[{c}]"),
            LockName::FutexBucket(b) => write!(f, "futex_bucket[{b}]"),
        }
    }
}

/// Why a run ended; serialised as `time_limit`, `all_exited`, `interrupted`, `deadlock`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// Reached the configured end time.
    TimeLimit,
    /// Every task exited.
    AllExited,
    /// The caller asked to stop (Ctrl-C).
    Interrupted,
    /// No task can ever run again: tasks are alive, none is runnable, and nothing pending
    /// (a timer, a start, any event) could wake one. [`RunSummary::deadlock`] says who
    /// waits on what.
    Deadlock,
}

impl EndReason {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::TimeLimit => "time_limit",
            EndReason::AllExited => "all_exited",
            EndReason::Interrupted => "interrupted",
            EndReason::Deadlock => "deadlock",
        }
    }
}

impl std::fmt::Display for EndReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The outcome of a run, beyond what probes observed.
#[derive(Clone, Debug)]
pub struct RunSummary {
    pub end: Ns,
    pub reason: EndReason,
    pub events: u64,
    pub trace_hash: u64,
    /// Per CPU: time in each [`Mode`] (user, kernel, spin, idle).
    pub cpu_times: Vec<[Ns; 4]>,
    /// Per CPU: kernel time by path, indexed like `KernelPath::ALL` (sums to the kernel
    /// time); empty when the backend cannot tell (a host run).
    pub cpu_paths: Vec<[Ns; KernelPath::ALL.len()]>,
    pub locks: Vec<(LockName, LockSite, LockStat)>,
    pub tasks: Vec<TaskInfo>,
    pub exit_times: Vec<Option<Ns>>,
    /// Per task, its forced-idle time under core scheduling (`core_forceidle_sum`, ns);
    /// empty when core scheduling did not act (no cookies, no SMT, a host run).
    pub core_forceidle: Vec<u64>,
    /// The policy's own counters (`SchedClass::counters`).
    pub policy_counters: Vec<(String, u64)>,
    /// The bandwidth-limited groups' `cpu.stat` (`SchedClass::group_stats`); empty for a
    /// host run.
    pub groups: Vec<schedlab_sched_api::GroupStat>,
    /// Why the policy stopped governing tasks, if it did (`SchedClass::exit_info`).
    pub policy_exit: Option<String>,
    /// The kernel model's own counters (delayed new-task wakeups, fork-to-first-run time);
    /// empty for a host run.
    pub kernel_counters: Vec<(String, u64)>,
    /// With [`EndReason::Deadlock`]: every blocked task and what it waits on (the wait-for
    /// graph); empty otherwise.
    pub deadlock: Vec<WaitFor>,
    /// Kernel log lines of the run (a task no longer affine to an offlined CPU); empty
    /// for most runs.
    pub notes: Vec<String>,
    /// What the cost models charged, by task and by CPU, and the CPUs' idle states and
    /// frequencies; empty for a host run.
    pub costs: CostReport,
}

/// Where a task's cache refill came from, relative to where its lines were when it last
/// ran: why it paid (`cache.rs` in the kernel model).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct RefillWhy {
    /// Its first run: every line from memory.
    pub cold_ns: u64,
    /// Back on the CPU (or SMT sibling: the same core's caches) it last ran on, after
    /// other tasks evicted part of its working set there, or after its working set grew.
    pub same_core_ns: u64,
    /// Migrated from another core sharing this LLC.
    pub same_llc_ns: u64,
    /// Migrated from a CPU on another LLC of the same node.
    pub other_llc_ns: u64,
    /// Migrated from a CPU on another NUMA node.
    pub other_node_ns: u64,
}

impl RefillWhy {
    pub fn sum(&self) -> u64 {
        self.cold_ns + self.same_core_ns + self.same_llc_ns + self.other_llc_ns + self.other_node_ns
    }
}

/// The time the cost models charged one task or one CPU (`--costs full`; the line
/// transfers also under `flat`, where they cost the machine's constant per distance).
/// Refills are extra work of the task, in full-speed ns; the rest is CPU time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct CostTimes {
    /// Cache refills charged (non-zero ones) and their work, by where the lines came from.
    pub refills: u64,
    pub refill_ns: u64,
    pub refill: RefillWhy,
    /// User time lost to remote NUMA memory: the part of the task's run time its memory
    /// factor (intensity × distance) added.
    pub remote_memory_ns: u64,
    /// Switches to another address space (the CR3 write, spent in `schedule`) and the TLB
    /// refills they caused (owed as the task's work; none when PCID kept its entries).
    pub mm_switches: u64,
    pub mm_switch_ns: u64,
    pub tlb_refill_ns: u64,
    /// Lock cache-line transfers done on the task's behalf (its CPU's kernel paths while it
    /// was `curr`) or on the CPU, and the time they added inside critical sections.
    pub line_transfers: u64,
    pub line_ns: u64,
}

impl CostTimes {
    /// Adds `o` into `self`, field by field.
    pub fn add(&mut self, o: &CostTimes) {
        self.refills += o.refills;
        self.refill_ns += o.refill_ns;
        self.refill.cold_ns += o.refill.cold_ns;
        self.refill.same_core_ns += o.refill.same_core_ns;
        self.refill.same_llc_ns += o.refill.same_llc_ns;
        self.refill.other_llc_ns += o.refill.other_llc_ns;
        self.refill.other_node_ns += o.refill.other_node_ns;
        self.remote_memory_ns += o.remote_memory_ns;
        self.mm_switches += o.mm_switches;
        self.mm_switch_ns += o.mm_switch_ns;
        self.tlb_refill_ns += o.tlb_refill_ns;
        self.line_transfers += o.line_transfers;
        self.line_ns += o.line_ns;
    }

    /// Whether nothing was charged.
    pub fn is_zero(&self) -> bool {
        *self == CostTimes::default()
    }
}

/// One idle state's use on one CPU (`/sys/devices/system/cpu/cpuN/cpuidle/stateM/`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct IdleStateUse {
    pub name: String,
    /// `usage`: entries; `time`: ns resident.
    pub usage: u64,
    pub time_ns: u64,
}

/// One CPU's frequency domain over the run (`cpufreq_stats`: `time_in_state`,
/// `total_trans`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FreqUse {
    /// `[kHz, ns]` per table frequency, ascending.
    pub time_in_state: Vec<(u64, u64)>,
    pub transitions: u64,
}

impl FreqUse {
    /// The time-weighted mean frequency, kHz (0 when no time passed).
    pub fn mean_khz(&self) -> u64 {
        let t: u128 = self.time_in_state.iter().map(|&(_, ns)| u128::from(ns)).sum();
        if t == 0 {
            return 0;
        }
        let w: u128 = self.time_in_state.iter().map(|&(f, ns)| u128::from(f) * u128::from(ns)).sum();
        (w / t) as u64
    }
}

/// One CPU's energy over the run from the machine's energy model (`em_perf_state.power`
/// per frequency, idle states' power), nJ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct CpuEnergy {
    /// Busy time (user, kernel, spinning) times its domain's power at the frequency it
    /// ran at; `None` when its domain has no power table.
    pub active_nj: Option<u64>,
    /// Each idle state's residency times its declared power; `None` when a state it spent
    /// time in has none (mainline's energy model has no idle power) or the idle model is off.
    pub idle_nj: Option<u64>,
}

/// What the cost models charged over a run, per task and per CPU, and each CPU's idle
/// and frequency use. Every vector is empty when its model was off (or for a host run).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CostReport {
    /// Indexed by task id.
    pub tasks: Vec<CostTimes>,
    /// Indexed by CPU; a CPU's sum also holds what no task was `curr` for.
    pub cpus: Vec<CostTimes>,
    /// Per CPU, the line-transfer time inside each kernel path (indexed like
    /// `KernelPath::ALL`; part of that path's kernel time).
    pub path_lines: Vec<[u64; KernelPath::ALL.len()]>,
    /// Per CPU, its idle states in driver order (idle model on).
    pub idle: Vec<Vec<IdleStateUse>>,
    /// Per CPU, its frequency domain's statistics (frequency model on).
    pub freq: Vec<FreqUse>,
    /// Per CPU, its energy (frequency model on and some domain with a power table).
    pub energy: Vec<CpuEnergy>,
    /// Per task, the active energy of the CPUs while it was `curr` there, nJ (indexed by
    /// task id; empty when `energy` is).
    pub task_energy: Vec<u64>,
}

/// One blocked task of a deadlock: what it waits on and which task, if any, holds that.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct WaitFor {
    pub task: TaskId,
    pub name: String,
    /// The object waited on: `mutex m`, `barrier b`, `cond c`, `pipe p`, `children`.
    pub object: String,
    /// The task holding it (a mutex's owner), whose release the waiter needs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_by: Option<TaskId>,
    /// Why nobody will release it, in words (`held by x`, `2 of 3 parties arrived`, …).
    pub detail: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reports and the JSON name end reasons the same way.
    #[test]
    fn end_reason_names_match_serde() {
        for r in [EndReason::TimeLimit, EndReason::AllExited, EndReason::Interrupted, EndReason::Deadlock] {
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(json, format!("\"{}\"", r.as_str()));
        }
    }

    #[test]
    fn lock_names_read_like_the_kernel() {
        assert_eq!(LockName::Rq(3).to_string(), "rq[3]");
        assert_eq!(LockName::FutexBucket(17).to_string(), "futex_bucket[17]");
    }
}
