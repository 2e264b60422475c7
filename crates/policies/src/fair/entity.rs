//! The fair class's data: scheduling entities (`struct sched_entity`), fair runqueues
//! (`struct cfs_rq`) and the per-CPU runqueue state the fair class keeps (`struct rq`'s
//! fair parts), all in arenas indexed by dense ids.
//!
//! Entity ids: the group entities come first (`group g`'s entity on CPU `c` is
//! `(g - 1) * nr_cpus + c`; the root group has none), tasks follow (`task p` is
//! `task_base + p`). Runqueue ids: CPU `c`'s root `cfs_rq` is `c`; group `g`'s `cfs_rq` on
//! CPU `c` is `g * nr_cpus + c`.

use super::pelt::SchedAvg;
use super::tree::Timeline;
use super::weights::LoadWeight;
use schedlab_sim::{CpuId, TaskId};

/// A scheduling entity: a task or a task group on one CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Se(pub u32);

/// A fair runqueue (`struct cfs_rq`): a CPU's root queue or a group's queue on a CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct RqId(pub u32);

/// `struct sched_entity` — the fields both CFS and EEVDF need.
#[derive(Clone, Debug, Default)]
pub struct Entity {
    pub load: LoadWeight,
    pub vruntime: u64,
    /// EEVDF: virtual deadline of the current request.
    pub deadline: u64,
    /// EEVDF: virtual lag `V - vruntime`, clamped at dequeue. In 6.6/6.12 it doubles as the
    /// RUN_TO_PARITY marker while the entity runs (`vlag == deadline`).
    pub vlag: i64,
    /// EEVDF 6.18: the vruntime up to which `curr` is protected from preemption.
    pub vprot: u64,
    /// EEVDF: the request size (wall-clock ns); `custom_slice` if set by `sched_setattr`.
    pub slice: u64,
    pub custom_slice: bool,
    /// 6.12+: the deadline is stored relative to vruntime (a non-sleep dequeue).
    pub rel_deadline: bool,
    /// 6.12+: dequeued for sleep while ineligible, still in the tree.
    pub sched_delayed: bool,
    pub exec_start: u64,
    pub sum_exec_runtime: u64,
    pub prev_sum_exec_runtime: u64,
    pub on_rq: bool,
    /// Tree tie-break: insertion order.
    pub seq: u64,
    /// The runqueue this entity is queued on, or would be (`cfs_rq_of(se)`).
    pub cfs_rq: RqId,
    /// A group entity's own runqueue (`se->my_q`).
    pub my_q: Option<RqId>,
    /// Distance from the root (`se->depth`).
    pub depth: u32,
    pub avg: SchedAvg,
    /// CFS (≤6.5): vruntime is stored relative to the old `min_vruntime`.
    pub relative: bool,
    /// Dequeued to move to another runqueue (`TASK_ON_RQ_MIGRATING`).
    pub migrating: bool,
    /// `SCHED_IDLE` task, or a group entity (`se_is_idle`).
    pub idle_policy: bool,
    /// CFS: the last slice computed at pick time (for time series).
    pub last_slice: u64,
}

/// Task-only state beyond the entity (`struct task_struct` fields the fair class uses).
#[derive(Clone, Debug, Default)]
pub struct TaskFair {
    /// The task group (0 = root). Narrow types here and below keep this 40 bytes a task
    /// (task and CPU numbers are far below 2^32).
    pub tg: u32,
    /// `record_wakee` state (`unsigned int wakee_flips` in the kernel).
    pub wakee_flips: u32,
    pub wakee_flip_decay_ts: u64,
    pub last_wakee: Option<u32>,
    /// `p->recent_used_cpu`.
    pub recent_used_cpu: Option<u32>,
    pub alive: bool,
    /// v6.18 `p->throttled`: parked on a throttled runqueue's limbo list.
    pub throttled: bool,
    /// `p->se.avg.util_est` (`util_est.rs`).
    pub util_est: super::util_est::UtilEst,
}

/// `struct cfs_rq`. Laid out by hand (`repr(C)`, one 64-byte line aligned): the first
/// line holds what a placement or balancing scan reads of every CPU's root queue (task
/// counts and the PELT averages), the second what a pick reads (V's sums, the origin, the
/// timeline), so a scan over 1 024 CPUs touches one line per CPU instead of three.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct CfsRq {
    /// Tasks queued in this hierarchy (`h_nr_running`/`h_nr_queued`), delayed included.
    pub h_nr_running: u64,
    /// `SCHED_IDLE` tasks in this hierarchy (`idle_h_nr_running`).
    pub idle_h_nr: u64,
    /// PELT of the runqueue, and the averages of entities that left it (`removed`).
    pub avg: SchedAvg,
    /// EEVDF `avg_vruntime` (Σ key·w over the tree) and `avg_load` (Σ w over the tree).
    pub avg_vruntime: i128,
    pub avg_load: u64,
    pub min_vruntime: u64,
    pub timeline: Timeline,
    pub curr: Option<Se>,
    pub next: Option<Se>,
    pub last: Option<Se>,
    pub skip: Option<Se>,
    /// Σ weight of the queued entities, `curr` included (`load.weight`).
    pub load: u64,
    /// Entities queued here, `curr` and delayed ones included (`nr_running`/`nr_queued`).
    pub nr_running: u64,
    /// Tasks queued in this hierarchy that are not delayed (v6.18 `h_nr_runnable`).
    pub h_nr_runnable: u64,
    pub cpu: CpuId,
    /// The task group this queue belongs to (0 = root).
    pub tg: usize,
    pub removed: [u64; 3],
    /// v4.9 `runnable_load_sum`, `runnable_load_avg`: the load of queued entities only.
    pub runnable_load: [u64; 2],
    /// The load this queue last contributed to its group's `load_avg`.
    pub tg_load_avg_contrib: u64,
    /// Core scheduling's baseline (`cfs_rq->min_vruntime_fi`, later `zero_vruntime_fi`):
    /// `min_vruntime` when a pick last updated it (`se_fi_update`).
    pub min_vruntime_fi: u64,
    /// The forced-idle sequence the baseline was last taken in (`cfs_rq->forceidle_seq`).
    pub forceidle_seq: u64,
}

impl CfsRq {
    pub fn new(cpu: CpuId, tg: usize, min_vruntime: u64) -> CfsRq {
        CfsRq {
            cpu,
            tg,
            timeline: Timeline::default(),
            min_vruntime,
            load: 0,
            nr_running: 0,
            h_nr_running: 0,
            h_nr_runnable: 0,
            idle_h_nr: 0,
            avg_vruntime: 0,
            avg_load: 0,
            curr: None,
            next: None,
            last: None,
            skip: None,
            avg: SchedAvg::default(),
            removed: [0; 3],
            runnable_load: [0; 2],
            tg_load_avg_contrib: 0,
            min_vruntime_fi: min_vruntime,
            forceidle_seq: 0,
        }
    }
}

/// The fair parts of a CPU's `struct rq`.
#[derive(Clone, Debug)]
pub struct CpuRq {
    /// `rq->cfs_tasks`: queued tasks, most recently run first.
    pub cfs_tasks: super::tasklist::TaskList,
    /// The task `curr` was when `put_prev_task` ran; `pick_next_task_fair` decides what
    /// to put and set (the cgroup fast path: nothing, if it is picked again).
    pub prev: Option<TaskId>,
    /// `rq->next_balance` (jiffies), `avg_idle`, `idle_stamp`, `max_idle_balance_cost`.
    pub next_balance: u64,
    pub avg_idle: u64,
    pub idle_stamp: u64,
    pub max_idle_balance_cost: u64,
    /// v4.9 `rq->cpu_load[0..5]` (tick-smoothed `weighted_cpuload`) and the jiffy of its
    /// last update (`last_load_update_tick`).
    pub cpu_load: [u64; 5],
    pub cpu_load_jiffy: u64,
    /// `rq->clock_pelt`, `rq->lost_idle_time` (`load.rs: clock_pelt`).
    pub clock_pelt: super::pelt::ClockPelt,
    /// `rq->misfit_task_load` (`eas.rs: update_misfit_status`): the running task's
    /// `task_h_load` (at least 1) while it does not fit this CPU, else 0.
    pub misfit_task_load: u64,
    /// `rq->cfs.avg.util_est`: Σ of the queued tasks' estimates (`util_est.rs`).
    pub util_est: u64,
}
