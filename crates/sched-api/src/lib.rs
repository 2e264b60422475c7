//! The scheduling-class seam: [`SchedClass`], shaped like Linux's `struct sched_class`
//! (`kernel/sched/sched.h`), with whole-scheduler scope like FreeBSD's `sched_*` interface.
//!
//! A policy owns its runqueues (per-CPU trees, calendar queues, …) and its per-task state,
//! both in `Vec`s indexed by dense ids. It sees the rest of the system only through
//! [`Ctx`]: the current time, the CPU running the hook, the machine, read-only per-task and
//! per-CPU facts the kernel owns, and a list of *requests* (reschedule a CPU, migrate a
//! task). The kernel validates each request (affinity, task still queued) and applies it,
//! taking the locks and charging the costs.
//!
//! Architecture Invariant: this crate depends only on `sim` and `machine`; a policy that
//! depends only on this crate cannot reach the event queue, the workload or the metrics.

#![forbid(unsafe_code)]

use schedlab_machine::{CostModel, CpuSet, Machine, WorkUnits};
use schedlab_sim::{CpuId, Ns, SimRng, TaskId};

/// The work a hook did, counted on [`Ctx::work`]; the kernel charges it after the hook
/// returns, on the path that called the hook: per unit (`Costs::work_ns`), except that under
/// the full cost model a runqueue read whose CPU the policy named ([`Ctx::read_cpu`]) costs
/// what fetching that CPU's runqueue line costs from where it was read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// Entities (tasks or group entities) compared while picking or queueing.
    pub compared: u64,
    /// CPUs whose runqueue the hook read (idle checks, load reads) in placement or balancing.
    pub cpus: u64,
    /// Scheduling groups or domains whose statistics the hook gathered.
    pub groups: u64,
    /// Tasks the balancer examined for migration (`can_migrate_task`, ULE `tdq_steal`).
    pub tasks: u64,
    /// Of `cpus`, the reads priced by distance ([`Work::read_cpu`] under the full model).
    pub placed: u64,
    /// What those reads cost, in ns.
    pub placed_ns: u64,
}

impl Work {
    #[inline]
    pub fn is_zero(&self) -> bool {
        *self == Work::default()
    }

    /// The per-unit counts, the reads priced by distance left out.
    pub fn units(&self) -> WorkUnits {
        WorkUnits { compared: self.compared, cpus: self.cpus - self.placed, groups: self.groups, tasks: self.tasks }
    }

    /// A read of `cpu`'s runqueue state by a hook running on `this`: one CPU scanned, and
    /// under the full cost model priced by distance — the line its owner last wrote moves
    /// here (`Lines::between`: nothing on the same CPU, the SMT sibling, the LLC, another LLC,
    /// another node), at least a comparison's cached loads (`work_compare`).
    #[inline]
    pub fn read_cpu(&mut self, m: &Machine, this: CpuId, cpu: CpuId) {
        self.cpus += 1;
        if m.cost_model == CostModel::Full {
            self.placed += 1;
            self.placed_ns += m.lines.between(&m.topology, this, cpu).0.max(m.costs.work_compare.0);
        }
    }
}

pub use schedlab_sim::{CpuId as Cpu, TaskId as Task};

pub mod cpufreq;
pub mod tunable;
pub mod why;
pub use cpufreq::{CpuScale, CpuUtil, EnergyModel, PerfDomain, PerfState, UclampReq, NO_ENERGY_MODEL};
pub use tunable::{Choice, Kind, Pass, Tunable, TunableSpec, TunableTable, Unit};
pub use why::{fmt_ns, Cause, Decision, Moment, Why};

/// `enqueue_task` flags (`ENQUEUE_*` in `kernel/sched/sched.h`).
pub mod enqueue {
    /// The task is waking up (`ENQUEUE_WAKEUP`): placement may give sleeper credit.
    pub const WAKEUP: u32 = 0x01;
    /// The task changed CPU since it was last queued (`ENQUEUE_MIGRATED`).
    pub const MIGRATED: u32 = 0x40;
    /// First enqueue of a new task (`wake_up_new_task`; Linux passes no WAKEUP flag).
    pub const INITIAL: u32 = 0x80;
    /// A wakeup of a task whose dequeue the policy delayed (`ENQUEUE_DELAYED`, v6.12
    /// `ttwu_runnable`): it is still queued on its runqueue and is requeued in place.
    pub const DELAYED: u32 = 0x200;
}

/// `dequeue_task` flags (`DEQUEUE_*`).
pub mod dequeue {
    /// The task is going to sleep (`DEQUEUE_SLEEP`); otherwise it is being moved.
    pub const SLEEP: u32 = 0x01;
    /// The task is leaving for another runqueue (balance, affinity).
    pub const MIGRATE: u32 = 0x04;
    /// The task is in a special state (exiting) that must not be woken spuriously, so its
    /// dequeue may not be delayed (`DEQUEUE_SPECIAL`, v6.12 `try_to_block_task`).
    pub const SPECIAL: u32 = 0x10;
    /// Complete a dequeue the policy delayed (`DEQUEUE_DELAYED`): the kernel is about to
    /// move the sleeping task or change its class, so it must leave the runqueue now.
    pub const DELAYED: u32 = 0x200;
}

/// Wake flags (`WF_*` in `kernel/sched/sched.h`).
pub mod wf {
    /// The waker is about to sleep (pipes, `wake_up_interruptible_sync`).
    pub const SYNC: u32 = 0x01;
    /// The wakee is a new task (`wake_up_new_task`).
    pub const FORK: u32 = 0x02;
    /// The wakee changed CPU.
    pub const MIGRATED: u32 = 0x04;
    /// Place the wakee on the waking CPU if its affinity allows (`WF_CURRENT_CPU`, v6.6
    /// `kernel/sched/sched.h`; `select_task_rq_fair` returns the waking CPU at once). Only
    /// correct when the waker sleeps right after the wakeup (`futex_swap`, a synchronous
    /// pipe round trip).
    pub const CURRENT_CPU: u32 = 0x40;
    /// The waker is an interrupt (a sleeper's hrtimer expiring), not a task: what
    /// `in_interrupt()` tells Linux 2.6's `activate_task`. Linux has no such wake flag; the
    /// simulator sets it so that policies which care (O(1)) can tell.
    pub const IRQ: u32 = 0x100;
}

/// Why `select_task_rq` is called (`SD_BALANCE_WAKE`, `SD_BALANCE_FORK`, `SD_BALANCE_EXEC`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelectKind {
    Wake,
    Fork,
    Exec,
}

/// Why `balance` is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BalanceKind {
    /// The CPU found nothing to run (`newidle_balance`, ULE `tdq_idled`).
    NewIdle,
    /// From the tick (`trigger_load_balance`, ULE `sched_balance` on CPU 0).
    Tick,
    /// On an idle CPU woken by a [`Request::Kick`] to balance on behalf of the idle CPUs
    /// (`nohz_idle_balance`).
    NohzIdle,
    /// On an idle CPU whose tick is stopped, woken by the timer interrupt that
    /// [`SchedClass::idle_wakeup`] declares (FreeBSD: `cpu_idle` returns, the idle thread
    /// sees its switch count changed and calls `tdq_idled` again).
    IdleWake,
}

/// Scheduling policy of a task (`SCHED_NORMAL`, `SCHED_BATCH`, `SCHED_IDLE`, `SCHED_FIFO`,
/// `SCHED_RR`, `SCHED_DEADLINE`; `include/uapi/linux/sched.h`).
///
/// [`TaskInfo::policy`] is the policy the task set (`sched_setattr`), told through
/// [`SchedClass::policy_changed`]. A priority-inheritance boost (`core.c:rt_mutex_setprio`)
/// does not change it: it reaches the class through [`SchedClass::pi_setprio`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskPolicy {
    Normal,
    Batch,
    Idle,
    /// `SCHED_FIFO` with `sched_priority` 1..=99 (99 is the most important).
    Fifo {
        prio: u8,
    },
    /// `SCHED_RR` with `sched_priority` 1..=99.
    Rr {
        prio: u8,
    },
    /// `SCHED_DEADLINE` with its reservation.
    Deadline(DlParams),
    /// `SCHED_EXT` (v6.12, `include/uapi/linux/sched.h`): run by a loaded sched_ext
    /// scheduler; in the fair class when none is loaded (`core.c:__setscheduler_class`).
    Ext,
}

/// Lowest and highest `sched_priority` of `SCHED_FIFO`/`SCHED_RR` (`MAX_RT_PRIO - 1` = 99).
pub const RT_PRIO_MIN: u8 = 1;
pub const RT_PRIO_MAX: u8 = 99;

/// `SCHED_DEADLINE` parameters (`struct sched_attr`: `sched_runtime`, `sched_deadline`,
/// `sched_period`), in ns, valid per [`DlParams::check`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DlParams {
    pub runtime: u64,
    pub deadline: u64,
    pub period: u64,
}

impl DlParams {
    /// Shortest runtime (`1 << DL_SCALE` ns, `deadline.c:__checkparam_dl`, v6.12).
    pub const RUNTIME_MIN: u64 = 1 << 10;
    /// Period bounds: `sysctl_sched_dl_period_min` = 100 µs, `_max` = 2^22 µs (~4.19 s).
    pub const PERIOD_MIN: u64 = 100_000;
    pub const PERIOD_MAX: u64 = (1 << 22) * 1000;

    /// `deadline.c:__checkparam_dl` (v6.12): runtime ≥ 1024 ns, runtime ≤ deadline ≤ period,
    /// period within the sysctl bounds. `Err` explains which rule failed (EINVAL).
    pub fn check(&self) -> Result<(), String> {
        let DlParams { runtime, deadline, period } = *self;
        if runtime < Self::RUNTIME_MIN {
            return Err(format!("runtime {runtime} ns is below the minimum {} ns", Self::RUNTIME_MIN));
        }
        if runtime > deadline {
            return Err(format!("runtime {runtime} ns exceeds the deadline {deadline} ns"));
        }
        if deadline > period {
            return Err(format!("deadline {deadline} ns exceeds the period {period} ns"));
        }
        if !(Self::PERIOD_MIN..=Self::PERIOD_MAX).contains(&period) {
            return Err(format!(
                "period {period} ns is outside {}..={} ns (sched_deadline_period_{{min,max}}_us)",
                Self::PERIOD_MIN,
                Self::PERIOD_MAX
            ));
        }
        Ok(())
    }

    /// The bandwidth `runtime / period` in `BW_SHIFT` = 20-bit fixed point (`sched.h:to_ratio`).
    pub fn bw(&self) -> u64 {
        to_ratio(self.period, self.runtime)
    }
}

/// `core.c:to_ratio` (v6.12): `runtime / period` in 20-bit fixed point.
pub fn to_ratio(period: u64, runtime: u64) -> u64 {
    if period == 0 {
        return 0;
    }
    ((u128::from(runtime) << 20) / u128::from(period)) as u64
}

impl TaskPolicy {
    /// Real-time (`rt_policy`): FIFO or RR.
    pub fn is_rt(&self) -> bool {
        matches!(self, TaskPolicy::Fifo { .. } | TaskPolicy::Rr { .. })
    }
    /// `dl_policy`.
    pub fn is_dl(&self) -> bool {
        matches!(self, TaskPolicy::Deadline(_))
    }
    /// The `sched_priority` of an rt policy, 0 otherwise.
    pub fn rt_priority(&self) -> u8 {
        match self {
            TaskPolicy::Fifo { prio } | TaskPolicy::Rr { prio } => *prio,
            _ => 0,
        }
    }
    /// The kernel-internal `prio` (`syscalls.c:__normal_prio`, v6.12): −1 for deadline,
    /// `99 − rt_priority` for rt, `120 + nice` otherwise; lower is more important.
    pub fn kernel_prio(&self, nice: i32) -> i32 {
        match self {
            TaskPolicy::Deadline(_) => -1,
            TaskPolicy::Fifo { prio } | TaskPolicy::Rr { prio } => 99 - i32::from(*prio),
            _ => 120 + nice,
        }
    }
}

/// An optional task, cgroup or session index in 4 bytes (`u32::MAX`: none), where an
/// `Option<usize>` takes 16: `TaskInfo` exists once per thread, and 100 000 threads are
/// meant to fit in a kilobyte each. Indices stay below `MAX_TASKS` (one million), far from
/// the sentinel.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct OptIdx(u32);

impl OptIdx {
    pub const NONE: OptIdx = OptIdx(u32::MAX);
    /// `i`, which must be below `u32::MAX` (task, cgroup and session counts are limited
    /// up front far below it).
    pub fn some(i: usize) -> OptIdx {
        match u32::try_from(i) {
            Ok(v) if v != u32::MAX => OptIdx(v),
            _ => panic!("index {i} beyond the 32-bit task/group index"),
        }
    }
    pub fn get(self) -> Option<usize> {
        (self != OptIdx::NONE).then_some(self.0 as usize)
    }
    pub fn is_some(self) -> bool {
        self != OptIdx::NONE
    }
    pub fn is_none(self) -> bool {
        self == OptIdx::NONE
    }
}

impl Default for OptIdx {
    fn default() -> Self {
        OptIdx::NONE
    }
}

impl From<Option<usize>> for OptIdx {
    fn from(v: Option<usize>) -> Self {
        v.map_or(OptIdx::NONE, OptIdx::some)
    }
}

impl std::fmt::Debug for OptIdx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

/// What the kernel tells policies about a task. The kernel owns it; policies read it.
#[derive(Clone, Debug)]
pub struct TaskInfo {
    pub name: String,
    /// Nice value, −20..=19.
    pub nice: i32,
    pub policy: TaskPolicy,
    /// `p->cpus_ptr`.
    pub affinity: CpuSet,
    /// `task_cpu(p)`: the CPU whose runqueue the task is (or was last) on.
    pub cpu: CpuId,
    /// The parent task (`OptIdx::get` gives it as an `Option<TaskId>`).
    pub parent: OptIdx,
    /// The cgroup the task is in (an index into [`TaskGroups::cgroups`]); none: the root.
    pub cgroup: OptIdx,
    /// The session the task belongs to (an index into [`TaskGroups::sessions`]); none:
    /// the default session, whose autogroup is the root task group (`autogroup_default`).
    pub session: OptIdx,
    /// A custom slice set with `sched_setattr(sched_runtime)` (v6.12+), in ns; `None`: the
    /// scheduler's base slice.
    pub slice: Option<u64>,
    /// A kernel thread (`p->flags & PF_KTHREAD`): the workload's `[[daemon]]`s and tasks
    /// with `kthread = true`. A policy may treat them apart (e.g. let only kernel threads
    /// preempt, as the ULE-vs-CFS study's ULE port did).
    pub kthread: bool,
    /// Utilisation clamps asked with `sched_setattr` (`util_min`, `util_max`).
    pub uclamp: UclampReq,
    /// The core-scheduling cookie (`p->core_cookie`, set with `prctl(PR_SCHED_CORE)`,
    /// `kernel/sched/core_sched.c`); 0: none. Tasks of equal cookies may share a core.
    pub core_cookie: u64,
}

/// One cgroup of the cpu controller (cgroup v2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgroupDef {
    pub name: String,
    /// The parent cgroup; `None`: the root cgroup.
    pub parent: Option<usize>,
    /// `cpu.weight`, 1..=10000 (default 100). With `nice` set, the weight the kernel reads
    /// back for that nice level's shares (`sched_weight_to_cgroup`).
    pub weight: u32,
    /// `cpu.weight.nice` as written, −20..=19: the group's shares are then exactly
    /// `sched_prio_to_weight[nice + 20]` (`cpu_weight_nice_write_s64`, core.c v5.15, v6.18),
    /// which `weight` (rounded to the cgroup scale) does not always give back.
    pub nice: Option<i32>,
    /// `cpu.idle` = 1: the group is scheduled as a `SCHED_IDLE` entity
    /// (`sched_group_set_idle`, fair.c v5.15, v6.18; needs group scheduling).
    pub idle: bool,
    /// `cpu.max` and `cpu.max.burst` (default: unlimited, period 100 ms, no burst).
    pub max: CpuMax,
    /// `cpuset.cpus` (cgroup v2 cpuset controller); `None`: not set, the parent's effective
    /// CPUs. The kernel model applies it to its tasks' affinity (`cpuset.cpus.effective`),
    /// so policies see it only there.
    pub cpus: Option<CpuSet>,
    /// `cpuset.cpus.partition` (cgroup v2): a member of its parent's partition (the
    /// default), or the root of a partition of its own. The kernel model gives a
    /// partition root its `cpus` exclusively and cuts the sched domains there (see
    /// [`SchedClass::partition_sched_domains`]).
    pub partition: Partition,
    /// `cpu.uclamp.min` / `cpu.uclamp.max` as written, in capacity units
    /// (`capacity_from_percent`); `None`: not written (0 and 1024, `alloc_uclamp_sched_group`).
    pub uclamp: UclampReq,
}

/// A cgroup's `cpuset.cpus.partition` (Documentation/admin-guide/cgroup-v2.rst, v6.12).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Partition {
    /// `member`: shares its parent's partition.
    #[default]
    Member,
    /// `root`: a partition with its own sched domain over its effective CPUs.
    Root,
    /// `isolated`: a partition whose CPUs get no sched domain, so no load balancing
    /// (`PRS_ISOLATED`: `generate_sched_domains` saves only `PRS_ROOT` cpusets).
    Isolated,
}

impl Partition {
    /// A partition root (`is_partition_valid` for a valid one): `root` or `isolated`.
    pub fn is_root(self) -> bool {
        self != Partition::Member
    }
}

/// `sched_prio_to_weight[]` (core.c, identical v4.9…v6.18), indexed by nice + 20: the
/// shares `cpu.weight.nice` writes.
pub const SCHED_PRIO_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904, 3906, 3121, 2501,
    1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
];

/// `sched_weight_to_cgroup` (sched.h v6.18; inline in `cpu_weight_read_u64` v5.15): shares
/// on the 1024 scale to `cpu.weight` (`CGROUP_WEIGHT_DFL` = 100 ↔ 1024), rounded to nearest (`DIV_ROUND_CLOSEST_ULL`) and
/// clamped to 1..=10000 (the clamp is v6.18's; no shares a nice level gives fall outside).
pub fn sched_weight_to_cgroup(shares: u64) -> u32 {
    ((shares * 100 + 512) / 1024).clamp(1, 10_000) as u32
}

/// `cpu_weight_nice_read_s64` (core.c v5.15, v6.18): the nice level whose table weight is
/// nearest a group's shares, scanning from nice −20 and stopping where the distance stops
/// shrinking (so a tie goes to the lower nice).
pub fn cpu_weight_nice_of(shares: u64) -> i32 {
    let mut last = u64::MAX;
    let mut prio = 0;
    while prio < SCHED_PRIO_TO_WEIGHT.len() {
        let delta = SCHED_PRIO_TO_WEIGHT[prio].abs_diff(shares);
        if delta >= last {
            break;
        }
        last = delta;
        prio += 1;
    }
    prio as i32 - 1 - 20
}

/// `cpu_weight_nice_write_s64`: the shares of a nice level, −20..=19.
pub fn shares_of_nice(nice: i32) -> u64 {
    SCHED_PRIO_TO_WEIGHT[(nice.clamp(-20, 19) + 20) as usize]
}

/// A cgroup's CPU bandwidth limit (cgroup v2 `cpu.max` = "`$MAX $PERIOD`", `cpu.max.burst`;
/// `kernel/sched/core.c: tg_set_cfs_bandwidth`), in ns. The workload parser checks the
/// kernel's limits, so a policy can take these as given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuMax {
    /// `$MAX`: the runtime the group may use per period; `None`: "max" (`RUNTIME_INF`).
    pub quota: Option<u64>,
    /// `$PERIOD`.
    pub period: u64,
    /// `cpu.max.burst`: unused quota a group may carry into later periods.
    pub burst: u64,
}

impl Default for CpuMax {
    /// "`max 100000`", burst 0 (`default_bw_period_us`).
    fn default() -> CpuMax {
        CpuMax { quota: None, period: 100_000_000, burst: 0 }
    }
}

/// A task group's CPU bandwidth limit and `cpu.stat` at the end of a run
/// (`cpu_extra_stat_show`, core.c), from a policy that enforces `cpu.max`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupStat {
    pub name: String,
    pub max: CpuMax,
    /// Periods elapsed while the period timer ran (`nr_periods`).
    pub nr_periods: u64,
    /// Periods that ended with a runqueue of the group throttled (`nr_throttled`).
    pub nr_throttled: u64,
    /// Time its runqueues spent throttled, summed over CPUs, in ns (`throttled_usec` × 1000).
    pub throttled_ns: u64,
    /// Refills that found more than a quota used in the period, and how much more in all,
    /// in ns (`nr_bursts`, `burst_usec`; kernels since v5.16, else `None`).
    pub nr_bursts: Option<u64>,
    pub burst_ns: Option<u64>,
}

/// One session (`setsid`), which autogroup gives a task group of its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionDef {
    pub name: String,
    /// The autogroup's nice value (`/proc/<pid>/autogroup`), −20..=19 (default 0).
    pub nice: i32,
}

/// The task groups a workload declares, given to the policy before any task exists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskGroups {
    /// Parents come before their children.
    pub cgroups: Vec<CgroupDef>,
    pub sessions: Vec<SessionDef>,
}

/// What the kernel tells policies about a CPU.
#[derive(Clone, Debug, Default)]
pub struct CpuView {
    /// `rq->curr`, `None` for the idle task.
    pub curr: Option<TaskId>,
    /// Tasks on this runqueue including `curr` (`rq->nr_running`), as the kernel counts them.
    pub nr_running: usize,
    /// A remote wakeup is queued to this CPU's wake list (`rq->ttwu_pending`).
    pub ttwu_pending: bool,
    /// `TIF_NEED_RESCHED` of this CPU's `curr`.
    pub need_resched: bool,
}

/// A policy's request to the kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// `resched_curr(cpu)`: set need_resched on that CPU (with an IPI if remote).
    Resched(CpuId),
    /// Move a queued, not running task to another CPU (`move_queued_task`/`detach_task`).
    Migrate { task: TaskId, to: CpuId },
    /// Move up to `count` of `tasks` from `from` to `to`: the first ones, in order, that
    /// are still queued there, not running and allowed on `to` when the kernel holds the
    /// source runqueue's lock (`detach_tasks`; the older kernels hold both locks).
    MigrateBatch { from: CpuId, to: CpuId, tasks: Vec<TaskId>, count: usize },
    /// Move the task *running* on `from` to `to` (`active_load_balance_cpu_stop`: the
    /// stopper preempts it, then it is moved).
    ActiveBalance { from: CpuId, to: CpuId },
    /// Send `cpu` an IPI that makes it call `balance(NohzIdle)` (`kick_ilb`).
    Kick(CpuId),
    /// A dequeue the policy had delayed is now complete: the sleeping task has left its
    /// runqueue (v6.12 `pick_next_entity` → `dequeue_entities(DEQUEUE_DELAYED)` →
    /// `__block_task`). Only valid for a task whose [`SchedClass::dequeue_task`] returned
    /// `false`.
    Blocked(TaskId),
    /// Arm this policy's timer on `cpu` for `at` (an hrtimer such as `dl_timer`, the rt
    /// period timer or the fair server's): the kernel keeps the earliest requested expiry
    /// per CPU, and when it passes calls [`SchedClass::timer`] on that CPU with its
    /// runqueue locked; the policy then requests its next expiry, if any.
    Timer { cpu: CpuId, at: Ns },
    /// `cpufreq_update_util(cpu_rq(cpu), flags)` (`kernel/sched/sched.h`): the classes'
    /// utilisation of `cpu` changed (a PELT update of the root runqueue, an rt or deadline
    /// enqueue); the kernel hands it to the cpufreq governor. Sent only while
    /// [`Ctx::cpufreq`] says a governor listens.
    Cpufreq { cpu: CpuId, flags: u32, util: CpuUtil },
}

/// The view of the system a policy hook receives.
pub struct Ctx<'a> {
    pub now: Ns,
    /// The CPU executing the hook (`smp_processor_id()`).
    pub this_cpu: CpuId,
    pub machine: &'a Machine,
    pub tasks: &'a [TaskInfo],
    pub cpus: &'a [CpuView],
    /// The policy's own random stream (ULE's balancer interval, …).
    pub rng: &'a mut SimRng,
    pub requests: &'a mut Vec<Request>,
    /// What this hook has done so far, for the cost model: a policy adds to it as it
    /// compares entities and scans CPUs, groups and tasks. Starts at zero for every hook.
    pub work: Work,
    /// Where the hook records its decisions (see [`why`]); `None` (the default) when
    /// nobody asked for them, so recording costs nothing then.
    pub decisions: Option<&'a mut Vec<Decision>>,
    /// Per CPU, its capacity and frequency scale (`arch_scale_cpu_capacity`,
    /// `arch_scale_freq_capacity`), kept by the kernel; every CPU at 1024 on a machine
    /// whose frequency and capacity model is off.
    pub scale: &'a [CpuScale],
    /// Some CPU's scale is not 1024 (`scale` needs reading at all).
    pub scaled: bool,
    /// A cpufreq governor listens to utilisation updates (schedutil's
    /// `cpufreq_add_update_util_hook`): classes send [`Request::Cpufreq`] only then.
    pub cpufreq: bool,
    /// The energy model the kernel registered (`rd->pd`), read-only; [`NO_ENERGY_MODEL`]
    /// when there is none.
    pub em: &'a EnergyModel,
}

impl Ctx<'_> {
    pub fn task(&self, p: TaskId) -> &TaskInfo {
        &self.tasks[p]
    }
    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }
    /// `resched_curr`.
    pub fn resched_curr(&mut self, cpu: CpuId) {
        self.requests.push(Request::Resched(cpu));
    }
    /// Ask the kernel to move a queued task.
    pub fn migrate(&mut self, task: TaskId, to: CpuId) {
        self.requests.push(Request::Migrate { task, to });
    }
    /// Ask the kernel to move `count` of `tasks` (in order of preference).
    pub fn migrate_batch(&mut self, from: CpuId, to: CpuId, tasks: Vec<TaskId>, count: usize) {
        self.requests.push(Request::MigrateBatch { from, to, tasks, count });
    }
    /// Ask the kernel to push the task running on `from` to `to`.
    pub fn active_balance(&mut self, from: CpuId, to: CpuId) {
        self.requests.push(Request::ActiveBalance { from, to });
    }
    /// Ask the kernel to kick `cpu` into `balance(NohzIdle)`.
    pub fn kick(&mut self, cpu: CpuId) {
        self.requests.push(Request::Kick(cpu));
    }
    /// Tell the kernel that the delayed dequeue of `p` is complete (`__block_task`).
    pub fn blocked(&mut self, p: TaskId) {
        self.requests.push(Request::Blocked(p));
    }
    /// Arm this policy's timer on `cpu` for `at` (see [`Request::Timer`]).
    pub fn timer(&mut self, cpu: CpuId, at: Ns) {
        self.requests.push(Request::Timer { cpu, at });
    }
    /// `cpufreq_update_util(cpu_rq(cpu), flags)` with the classes' utilisation of `cpu`
    /// (see [`Request::Cpufreq`]); nothing when no governor listens.
    pub fn cpufreq_update(&mut self, cpu: CpuId, flags: u32, util: CpuUtil) {
        if self.cpufreq {
            self.requests.push(Request::Cpufreq { cpu, flags, util });
        }
    }
    /// The root domain's performance domains (`rd->pd`), empty without an energy model.
    pub fn perf_domains(&self) -> &[PerfDomain] {
        &self.em.domains
    }
    /// `arch_scale_cpu_capacity(cpu)` as the kernel keeps it.
    pub fn capacity(&self, cpu: CpuId) -> u32 {
        self.scale.get(cpu).map_or(cpufreq::SCALE, |s| s.capacity)
    }
    /// `idle_cpu()`: running the idle task, nothing queued, no wakeup pending.
    pub fn idle_cpu(&self, cpu: CpuId) -> bool {
        let c = &self.cpus[cpu];
        c.curr.is_none() && c.nr_running == 0 && !c.ttwu_pending
    }
    pub fn allowed(&self, p: TaskId, cpu: CpuId) -> bool {
        self.tasks[p].affinity.contains(cpu)
    }
    /// Report `n` entities compared (a pick's tree walk, a queue scan).
    pub fn compared(&mut self, n: u64) {
        self.work.compared += n;
    }
    /// Report `n` CPUs whose runqueue state was read (placement, balancing), whichever
    /// they were: each costs `work_cpu`. [`Ctx::read_cpu`] names the CPU, so the full cost
    /// model can price the read by distance.
    pub fn scanned_cpus(&mut self, n: u64) {
        self.work.cpus += n;
    }
    /// Report a read of `cpu`'s runqueue state (its idle state, load, queue): one CPU
    /// scanned ([`Work::read_cpu`]).
    #[inline]
    pub fn read_cpu(&mut self, cpu: CpuId) {
        self.work.read_cpu(self.machine, self.this_cpu, cpu);
    }
    /// Adds the work `w` counted elsewhere (a policy that tallies its hook's work in its
    /// own state, then hands it over).
    pub fn add_work(&mut self, w: &Work) {
        let t = &mut self.work;
        t.compared += w.compared;
        t.cpus += w.cpus;
        t.groups += w.groups;
        t.tasks += w.tasks;
        t.placed += w.placed;
        t.placed_ns += w.placed_ns;
    }
    /// Report `n` scheduling groups or domains whose statistics were gathered.
    pub fn scanned_groups(&mut self, n: u64) {
        self.work.groups += n;
    }
    /// Whether decisions are being recorded (build costly records only then).
    pub fn recording(&self) -> bool {
        self.decisions.is_some()
    }
    /// Records the decision `f` builds, only if recording.
    pub fn record(&mut self, f: impl FnOnce() -> Decision) {
        if let Some(d) = self.decisions.as_deref_mut() {
            d.push(f());
        }
    }
    /// Report `n` tasks the balancer examined for migration.
    pub fn examined_tasks(&mut self, n: u64) {
        self.work.tasks += n;
    }
}

/// One per-task quantity a policy exposes for time series and explanations
/// (CFS: `vruntime`, `lag`, `slice`; ULE: `score`, `priority`), with its unit and a caption,
/// so that a report labels it without knowing the policy (ULE's `slice` is in stat ticks,
/// CFS's in ns). A policy defines each once (`const VRUNTIME: Stat = Stat::def(…)`) and
/// reports it with a value (`VRUNTIME.at(v)`).
#[derive(Clone, Debug, PartialEq)]
pub struct Stat {
    pub name: &'static str,
    /// What one unit of `value` is; times are in ns.
    pub unit: Unit,
    /// What it is, as a figure's title says it: "Lag per thread (> 0 is owed CPU)".
    pub caption: &'static str,
    pub value: i64,
}

impl Stat {
    /// A statistic's definition (its value 0).
    pub const fn def(name: &'static str, unit: Unit, caption: &'static str) -> Stat {
        Stat { name, unit, caption, value: 0 }
    }
    /// The statistic with `value`.
    pub const fn at(&self, value: i64) -> Stat {
        Stat { name: self.name, unit: self.unit, caption: self.caption, value }
    }
}

/// A task's place in core scheduling's order across SMT siblings (`kernel/sched/core.c:
/// __task_prio` and `prio_less`, v5.15 and v6.18).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CorePrio {
    /// `__task_prio`: [`CorePrio::DL`], 0..=99 real-time (`p->prio`), [`CorePrio::FAIR`],
    /// [`CorePrio::EXT`]; lower runs first.
    pub prio: i32,
    /// Within a deadline or fair `prio`: the absolute deadline (`dl_time_before`), or the
    /// vruntime less its runqueue's forced-idle baseline (`fair.c:cfs_prio_less`,
    /// `min_vruntime_fi`); lower runs first. Others: 0.
    pub key: i64,
}

impl CorePrio {
    /// `__task_prio` of a deadline task.
    pub const DL: i32 = -1;
    /// `MAX_RT_PRIO + MAX_NICE`: every fair task ("squash fair").
    pub const FAIR: i32 = 119;
    /// `MAX_RT_PRIO + MAX_NICE + 1`: every sched_ext task.
    pub const EXT: i32 = 120;

    /// `prio_less(self, b)`: `self` runs after `b`. Equal real-time priorities tie
    /// (`false`); equal deadlines do not (`!dl_time_before`).
    pub fn less(&self, b: &CorePrio) -> bool {
        if self.prio != b.prio {
            return self.prio > b.prio;
        }
        match self.prio {
            CorePrio::DL => self.key.wrapping_sub(b.key) >= 0,
            CorePrio::FAIR => self.key.wrapping_sub(b.key) > 0,
            _ => false,
        }
    }
}

/// A scheduling policy. Every hook runs atomically at `cx.now` on `cx.this_cpu`; the
/// kernel holds the runqueue lock(s) the corresponding Linux path holds.
///
/// Architecture Invariant: `curr` stays *queued* while it runs, as in Linux: it counts in
/// `nr_running` and is returned by [`SchedClass::queued`]. Whether the policy keeps it in
/// its tree while it runs is the policy's business (CFS does not).
pub trait SchedClass {
    fn name(&self) -> &'static str;

    /// The policy's tunables and their effective values (each from its
    /// [`TunableTable`], `TunableTable::list`), in a stable order.
    fn tunables(&self) -> Vec<Tunable>;

    /// A new task exists (`sched_fork` + `task_fork_fair`; ULE `sched_fork`). Called on the
    /// parent's CPU with the parent's runqueue locked; `cx.task(p).cpu` is the parent's CPU.
    /// `parent` is `None` for tasks the workload starts directly.
    fn task_new(&mut self, cx: &mut Ctx, p: TaskId, parent: Option<TaskId>);

    /// The task is dead and off every runqueue (`task_dead`; ULE `sched_exit`).
    fn task_dead(&mut self, cx: &mut Ctx, p: TaskId);

    /// Choose a runqueue for a waking or new task (`select_task_rq`; ULE `sched_pickcpu`).
    /// Runs on the waker's CPU without any rq lock. The kernel enforces affinity.
    fn select_task_rq(&mut self, cx: &mut Ctx, p: TaskId, prev_cpu: CpuId, kind: SelectKind, wake_flags: u32) -> CpuId;

    /// The task is about to move from `task_cpu(p)` to `new_cpu` (`migrate_task_rq`, called
    /// from `set_task_cpu`). The task is not queued.
    fn migrate_task_rq(&mut self, cx: &mut Ctx, p: TaskId, new_cpu: CpuId);

    /// `enqueue_task` (ULE `sched_add`). The kernel model counts `p` in
    /// `cx.cpus[cpu].nr_running` before this call (Linux's `enqueue_task_fair` calls
    /// `add_nr_running` itself, at its end).
    fn enqueue_task(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, flags: u32);

    /// `dequeue_task` (ULE `sched_rem`). `p` may be `curr` (it is going to sleep).
    ///
    /// Returns `false` if the policy *delays* the dequeue of a sleeping task (v6.12
    /// `DELAY_DEQUEUE`): the task stays queued and counted on `cpu` until the policy
    /// reports [`Request::Blocked`], or until the kernel wakes it (`enqueue_task` with
    /// [`enqueue::DELAYED`]) or completes the dequeue (`dequeue_task` with
    /// [`dequeue::DELAYED`]). Only a `dequeue::SLEEP` without `dequeue::SPECIAL` may be
    /// delayed; every other call must return `true`.
    fn dequeue_task(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, flags: u32) -> bool;

    /// `wakeup_preempt` / `check_preempt_curr` (ULE `sched_shouldpreempt` via
    /// `sched_setpreempt`/`tdq_notify`): `p` was just enqueued on `cpu`, whose `curr` is a
    /// task (the kernel handles an idle `curr` itself). Request `Resched(cpu)` to preempt.
    fn wakeup_preempt(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, wake_flags: u32);

    /// `put_prev_task`: `prev` stops being `curr` (it may still be queued).
    fn put_prev_task(&mut self, cx: &mut Ctx, cpu: CpuId, prev: TaskId);

    /// `pick_next_task` + `set_next_task` (ULE `sched_choose`): choose the next `curr`
    /// among the queued tasks, or `None` to run the idle task.
    fn pick_next_task(&mut self, cx: &mut Ctx, cpu: CpuId) -> Option<TaskId>;

    /// `task_tick` (ULE `sched_clock`), from the timer interrupt with the rq locked.
    fn task_tick(&mut self, cx: &mut Ctx, cpu: CpuId, curr: TaskId);

    /// `yield_task` (`sched_yield`; ULE `sched_relinquish`); `schedule()` follows.
    fn yield_task(&mut self, cx: &mut Ctx, cpu: CpuId, curr: TaskId);

    /// The task's nice value changed (`set_user_nice` → `reweight_task`; ULE `sched_nice`).
    /// `cx.task(p).nice` already holds the new value.
    fn reweight_task(&mut self, cx: &mut Ctx, p: TaskId);

    /// The task's custom slice changed (`sched_setattr` → `__setscheduler_params`, v6.12+);
    /// `cx.task(p).slice` holds the new value. Policies without custom slices ignore it.
    fn slice_changed(&mut self, _cx: &mut Ctx, _p: TaskId) {}

    /// `sched_setattr` admission (`deadline.c:sched_dl_overflow`, v6.12): may `p` take
    /// `new` as its policy? Called before [`SchedClass::task_new`] for a task created with a
    /// policy, and before a policy change (not for a PI boost). `Err` refuses it (EBUSY/EPERM)
    /// with the reason; an admitted bandwidth is the policy's until the task dies or leaves
    /// the policy.
    fn admit(&mut self, _cx: &mut Ctx, _p: TaskId, _new: &TaskPolicy) -> Result<(), String> {
        Ok(())
    }

    /// The task's policy changed (`__sched_setscheduler`; PI boosts come through
    /// [`SchedClass::pi_setprio`] instead): `cx.task(p).policy` holds the new one, `old` the
    /// previous. Called with the task's runqueue locked, whether it is queued, running or
    /// asleep; the policy moves it between its classes and requests a reschedule if the
    /// change calls for one (`check_class_changed`). Default: a fair-only policy treats
    /// every policy as normal, so only the weight (`SCHED_IDLE`) can change.
    fn policy_changed(&mut self, cx: &mut Ctx, p: TaskId, old: TaskPolicy) {
        let _ = old;
        self.reweight_task(cx, p);
    }

    /// This policy's timer on `cpu` expired (see [`Request::Timer`]); the runqueue of `cpu`
    /// is locked.
    fn timer(&mut self, _cx: &mut Ctx, _cpu: CpuId) {}

    /// The workload's task groups (cgroups and sessions), before any task exists
    /// (`sched_create_group`, `autogroup_create`). Policies without group scheduling
    /// ignore their weights, but refuse a CPU limit (`cpu.max`) and an idle group
    /// (`cpu.idle`): a limit silently not enforced, or an idle group run at full weight,
    /// would be a wrong result. An `Err` refuses the run (e.g. a tunable conflicts with
    /// them).
    fn set_task_groups(&mut self, groups: &TaskGroups) -> Result<(), String> {
        if let Some(c) = groups.cgroups.iter().find(|c| c.max.quota.is_some()) {
            return Err(format!(
                "group `{}`: cpu.max needs a scheduler with CPU bandwidth control (Linux's fair class, \
                 v5.15 on here); this one has none",
                c.name
            ));
        }
        match groups.cgroups.iter().find(|c| c.idle) {
            Some(c) => Err(format!(
                "group `{}`: cpu.idle needs a scheduler with group scheduling (Linux's fair class, \
                 v5.15 on here); this one has none",
                c.name
            )),
            None => Ok(()),
        }
    }

    /// The set of sched domains changed (`partition_sched_domains`,
    /// `kernel/sched/topology.c`, v6.12): each of `doms` is the span of one root domain
    /// of balancing, disjoint from the others; a CPU in none (offline, or in an isolated
    /// cpuset partition) is on the null domain and takes no part in balancing. The
    /// kernel calls it before the first task when cpuset partitions cut the machine
    /// (`rebuild_sched_domains` from `update_prstate`), and after every CPU hotplug step
    /// (`sched_cpu_activate`/`sched_cpu_deactivate` → `cpuset_update_active_cpus` →
    /// `rebuild_sched_domains`); without either, never — the domains stay those of the
    /// whole machine. Default: ignore (a policy without sched domains, or whose upstream
    /// has no cpuset partitions, such as ULE).
    fn partition_sched_domains(&mut self, _cx: &mut Ctx, _doms: &[CpuSet]) {}

    /// About `n` tasks will exist: size per-task arenas once, exactly, instead of letting
    /// them double past it (memory per thread at 100 000 threads). A hint; more may come.
    fn reserve_tasks(&mut self, _n: usize) {}

    /// A direct switch (`docs/futex.md`): make the queued task `p` the `curr` of `cpu`
    /// without a pick, accounted as if `pick_next_task` had chosen it (`put_prev_task` of
    /// the previous task has been called, as before a pick). Return `false` if the class
    /// cannot; the kernel then picks as usual. Default: cannot.
    fn set_next_task(&mut self, _cx: &mut Ctx, _cpu: CpuId, _p: TaskId) -> bool {
        false
    }

    /// The task's effective priority changed through priority inheritance
    /// (`rt_mutex_setprio`, `kernel/sched/core.c` v6.x): `prio` is the kernel priority it
    /// runs at (−1 deadline, 0..=99 real-time, 100..=139 normal; lower is better), `None` when the boost
    /// ends. `donor` is the top waiter the priority comes from (`pi_task`): a deadline
    /// donor lends its reservation, not just a priority. Upstream only the real-time and
    /// deadline classes act on it (a fair task's weight stays that of its nice value);
    /// default: ignore.
    fn pi_setprio(&mut self, _cx: &mut Ctx, _p: TaskId, _prio: Option<i32>, _donor: Option<TaskId>) {}

    /// Whether the task gets VIP treatment changed (its own `vip`, or inherited through a
    /// lock a VIP waits on; `docs/futex.md`). A class may prefer VIP tasks; default: ignore.
    fn vip_changed(&mut self, _cx: &mut Ctx, _p: TaskId, _vip: bool) {}

    /// Load balancing at the kernel's trigger points; request migrations through `cx`.
    fn balance(&mut self, cx: &mut Ctx, cpu: CpuId, kind: BalanceKind);

    /// The tasks this policy has on `cpu`'s runqueue, `curr` included, in any order.
    fn queued(&self, cpu: CpuId, out: &mut Vec<TaskId>);

    /// Why `first` goes before `second` (both queued on `cpu`; `first` just picked, or
    /// running when `second` was woken there): the rule and the keys compared, for decision
    /// records. Called only while decisions are recorded; must not change any state.
    fn why(&self, cx: &Ctx, cpu: CpuId, first: TaskId, second: TaskId, at: Moment) -> Why {
        let _ = (cx, cpu, first, second, at);
        Why::new(Cause::Other, "the policy records no reason")
    }

    /// Per-task internals for time series and explanations.
    fn task_stats(&self, p: TaskId) -> Vec<Stat>;

    /// The policy's own consistency checks (`SCHED_WARN_ON`, ULE `KASSERT`).
    fn check_invariants(&self, cx: &Ctx) -> Result<(), String>;

    /// The checks of [`SchedClass::check_invariants`] that concern `cpus` (the CPUs the
    /// last event touched: its own and those whose runqueue locks it took), for cheap
    /// checking after every event; the kernel still runs the full check periodically and
    /// at the end. Default: the full check.
    fn check_cpus(&self, cx: &Ctx, cpus: &[CpuId]) -> Result<(), String> {
        let _ = cpus;
        self.check_invariants(cx)
    }

    /// The scheduler-tick period this policy is driven by. `None`: the machine's HZ
    /// (`scheduler_tick`). ULE returns the statistics clock (`stathz` = 127, `sched_clock`).
    fn tick_period(&self) -> Option<Ns> {
        None
    }

    /// Whether the tick keeps running on an idle CPU (a periodic-tick kernel, as Linux 2.6
    /// before dynticks: `scheduler_tick` → `rebalance_tick(SCHED_IDLE)` every jiffy). `false`:
    /// the tick stops while a CPU idles (NOHZ, FreeBSD's one-shot timers).
    fn idle_tick(&self) -> bool {
        false
    }

    /// How long an idle CPU whose tick is stopped sleeps at most before a timer interrupt
    /// wakes it anyway; the kernel then calls `balance(IdleWake)` on it. `None` (the default):
    /// only work, IPIs and the CPU's own timers wake it (Linux NOHZ). FreeBSD's one-shot
    /// event timers skip at most `hz / 2` hardclock ticks on an idle CPU
    /// (`kern_clocksource.c:getnextcpuevent`), so ULE declares 0.5 s.
    fn idle_wakeup(&self) -> Option<Ns> {
        None
    }

    /// The bandwidth-limited task groups' `cpu.stat` (see [`GroupStat`]), in group order.
    /// Default: none (the policy enforces no `cpu.max`).
    fn group_stats(&self) -> Vec<GroupStat> {
        Vec::new()
    }

    /// Policy-wide counters for reports and explanations (balancer runs, steals, …), in a
    /// stable order.
    fn counters(&self) -> Vec<(String, u64)> {
        Vec::new()
    }

    /// Why the policy stopped governing tasks during the run, if it did (a sched_ext
    /// scheduler ejected by its watchdog or an error, `ext.c:scx_ops_disable_workfn`), for
    /// the report. Default: never.
    fn exit_info(&self) -> Option<String> {
        None
    }

    /// Whether a remote wakeup may be handed to the target CPU's wake list
    /// (`ttwu_queue_wakelist`, Linux). FreeBSD's `sched_add` always locks the target `tdq`
    /// from the waker's CPU, so ULE says no.
    fn wake_list(&self) -> bool {
        true
    }

    /// Whether the class's balancer moves tasks in batches (`Ctx::migrate_batch`: Linux's
    /// `load_balance` → `move_tasks` / `detach_tasks`), the critical section the kernel's
    /// `lb_narrow_lock` switch narrows. Default: yes (the switch is honoured). A class that
    /// moves tasks one at a time (`Ctx::migrate`) or never says no: the switch would change
    /// nothing, and the kernel runs (and reports) it off.
    fn moves_batches(&self) -> bool {
        true
    }

    /// Whether the class takes part in core scheduling (`CONFIG_SCHED_CORE`, Linux 5.14+):
    /// it answers [`SchedClass::core_candidates`] and the `core_*` hooks. Default: no (the
    /// kernel then ignores core cookies and says so in the record).
    fn core_sched(&self) -> bool {
        false
    }

    /// Core scheduling's view of `pick_task` and the core tree (`sched_core_find`): every
    /// task on `cpu`'s runqueue a pick could choose now (`curr` included; not a delayed or
    /// throttled one), with its [`CorePrio`], after bringing `cpu`'s clocks up to date as
    /// `pick_task` does (`update_curr`). Changes no choice. Called only if `core_sched`.
    fn core_candidates(&mut self, _cx: &mut Ctx, _cpu: CpuId, _out: &mut Vec<(TaskId, CorePrio)>) {}

    /// Core scheduling chose `p` (one of `core_candidates(cpu)`) as `cpu`'s next task:
    /// make it `curr` as `set_next_task` does after a pick (`put_prev_task` came first).
    /// `false` if the class cannot; the kernel then uses `pick_next_task`. Default: the
    /// direct switch's [`SchedClass::set_next_task`].
    fn core_set_next(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId) -> bool {
        self.set_next_task(cx, cpu, p)
    }

    /// Core scheduling forces `cpu` idle though tasks are queued (`core_forceidle`): settle
    /// the put-back task as a pick that found nothing would.
    fn core_force_idle(&mut self, _cx: &mut Ctx, _cpu: CpuId) {}

    /// `fair.c:task_vruntime_update` → `se_fi_update`: `p` was selected on `cpu`; record
    /// its runqueues' `min_vruntime` as the baseline [`CorePrio::key`] compares from, once
    /// per forced-idle sequence `fi_seq` when `in_fi`.
    fn core_fi_update(&mut self, _cx: &mut Ctx, _cpu: CpuId, _p: TaskId, _in_fi: bool, _fi_seq: u64) {}

    /// `fair.c:task_tick_core`: the tick on `cpu` running `curr` while a sibling is forced
    /// idle; the class may reschedule so that the sibling's tasks get their turn.
    fn task_tick_core(&mut self, _cx: &mut Ctx, _cpu: CpuId, _curr: TaskId) {}
}
