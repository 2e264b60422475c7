//! The workload language: a TOML file of tasks, their programs and the kernel objects they
//! share (pipes, mutexes, condition variables, barriers).
//!
//! Pipeline: text → spanned TOML ([`toml::de::DeTable`]) → validated AST ([`parse`]) →
//! per-task [`Program`]s ([`Workload::program`]). Every error is a
//! [`SourceError`](schedlab_sim::SourceError) naming file, line, column and field.
//! `docs/workload-language.md` documents every field.

#![forbid(unsafe_code)]

mod expr;
mod futex;
mod lower;
mod parse;
pub mod rtapp;
mod stop;
pub mod synthetic;

pub use expr::MAX_EXPR_DEPTH;
pub use futex::{FutexDef, FutexOp, WakeCmp, WakeOpKind};
pub use lower::{MemPhase, NamedTimer, Op, PollSet, Program, MAX_POLL_PIPES};
pub use parse::daemons::{DaemonPreset, DAEMON_PRESETS};
pub use parse::{
    parse_workload, parse_workload_until, FUTEX_ALL, MAX_LOOP_NESTING, MAX_OPEN_SPANS, SLICE_MAX, SLICE_MIN,
};
pub use schedlab_sched_api::{CgroupDef, SessionDef, TaskGroups};
pub use stop::{LoadError, POLL_EVERY};

use schedlab_machine::CpuSet;
use schedlab_sim::{Ns, SourceError};
use std::collections::BTreeMap;

/// Longest single duration a workload may write: an op's `run`, `sleep` or `spin`, a
/// `timer` period, a `start` or `at` time, a distribution's parameter — 10^6 s (11.6 days).
/// Bounding each one keeps every sum the simulator forms (now + an op, a distribution's
/// `mean + 4 stddev`) far from `u64` nanoseconds' 584 years.
pub const MAX_DURATION: Ns = Ns::from_secs(1_000_000);
/// Longest run accepted (simulated time, or wall time on the host): one day.
pub const MAX_SIM_TIME: Ns = Ns::from_secs(24 * 3600);

/// Upper bound on tasks a workload may start or fork; checked up front and at run time.
pub const MAX_TASKS: u64 = 1_000_000;

/// A parameter value (`[params]`), overridable with `--param NAME=VALUE`.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    Int(i64),
    Text(String),
}

#[derive(Clone, Debug)]
pub struct PipeDef {
    pub name: String,
    /// Bytes the pipe buffers before writers block (Linux default: 16 pages = 64 KiB; a
    /// socket's default is `net.core.wmem_default`, 212 992 bytes).
    pub capacity: u64,
    /// An `AF_UNIX` stream socket (`kind = "socket"`): a pipe whose read and write cost the
    /// machine's `socket_op` instead of `pipe_op` (hackbench's default transport).
    pub socket: bool,
}

#[derive(Clone, Debug)]
pub struct BarrierDef {
    pub name: String,
    /// Number of tasks that must arrive before all are released.
    pub parties: u64,
}

/// An rt-app timer (`timer` with `ref`, `docs/rt-app.md`).
#[derive(Clone, Debug, PartialEq)]
pub struct TimerDef {
    pub name: String,
    /// One timer for every task naming it (`shared = true`; rt-app's names not starting
    /// with `unique`), else one per task.
    pub shared: bool,
    /// `mode = "absolute"`: an overrun keeps the period grid (catch-up).
    pub absolute: bool,
}

/// Scheduling policy of a task: the one the scheduler API defines (normal, batch, idle,
/// fifo, rr, deadline with its parameters).
pub use schedlab_sched_api::{DlParams, TaskPolicy as Policy};

/// One `[[task]]` entry: `count` tasks started at `start`, or a template only `fork`ed.
#[derive(Clone, Debug)]
pub struct TaskTemplate {
    pub name: String,
    /// Instances started by the workload itself (0 for `template = true`).
    pub count: u64,
    pub template: bool,
    pub nice: i32,
    pub policy: Policy,
    /// Byte offset of the `policy` value (or the task table), for admission errors.
    pub policy_at: usize,
    pub affinity: Option<CpuSet>,
    pub start: Ns,
    /// The cgroup (index into [`Workload::groups`]`.cgroups`); `None`: inherited from the
    /// forking parent, or the root cgroup.
    pub group: Option<usize>,
    /// The session (`setsid`; index into `groups.sessions`); `None`: inherited from the
    /// forking parent, or the default session.
    pub session: Option<usize>,
    /// A custom slice (`sched_setattr`); `None`: inherited from the parent, or the base slice.
    pub slice: Option<Ns>,
    /// Utilisation clamps (`util_min`, `util_max`: `sched_setattr`'s
    /// `SCHED_FLAG_UTIL_CLAMP_MIN` / `_MAX`); an unset one is inherited from the parent
    /// (`uclamp_fork`), else the kernel's default.
    pub uclamp: schedlab_sched_api::UclampReq,
    /// A process of its own rather than a thread (hackbench's process mode). The simulator
    /// models tasks alike either way; host runs `fork`.
    pub process: bool,
    /// A kernel thread (`PF_KTHREAD`; `[[daemon]]` presets, or `kthread = true`): policies
    /// may tell it apart through `TaskInfo::kthread`. Simulation only.
    pub kthread: bool,
    /// One instance per CPU, instance `n` bound to CPU `n` (`kthread_create_on_cpu`, the
    /// per-CPU kworkers and ksoftirqd); `count` is the machine's CPU count.
    pub per_cpu: bool,
    /// A VIP task (`vip = true`): its futex waits queue ahead of normal waiters
    /// (`docs/futex.md`; simulation only).
    pub vip: bool,
    /// The core-scheduling cookie (`core_cookie = N`, standing for the cookie
    /// `prctl(PR_SCHED_CORE, PR_SCHED_CORE_CREATE)` makes; tasks of one number share it);
    /// `None`: inherited from the forking parent (`sched_core_fork`), else none (0).
    /// Simulation only; acts on machines with SMT (`docs/core-scheduling.md`).
    pub core_cookie: Option<u64>,
    /// Its memory, for the machine's cost model (`working_set`, `mem_intensity`, `mlp`,
    /// `mem_policy`/`mem_node`, `resident`; simulation only).
    pub memory: TaskMemory,
    pub(crate) body: Vec<parse::Node>,
    /// Whether the program mentions the instance index `n` (else one program serves all).
    pub instance_dependent: bool,
}

/// A task's working set when the workload gives none: nothing it touches is charged, so a
/// task without `working_set` refills nothing under the cache model (a pure-policy task).
pub const DEFAULT_WORKING_SET: u64 = 0;
/// The largest `working_set` or `resident` a task may declare (1 TiB).
pub const MAX_MEMORY_BYTES: u64 = 1 << 40;

/// Where a task's memory is placed (`mem_policy`; `set_mempolicy(2)`'s modes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MemPolicy {
    /// `MPOL_DEFAULT`: pages on the node of the CPU that first touches them, taken here as
    /// the node of the CPU the task first runs on (`mm/mempolicy.c: alloc_pages_mpol`
    /// falls back to the local node).
    #[default]
    FirstTouch,
    /// `MPOL_BIND` to one node (`mem_node`).
    Bind(u32),
    /// `MPOL_INTERLEAVE` over every node: pages round-robin, so each node holds an equal share.
    Interleave,
}

/// What a task's memory is, for the machine's cost model (`docs/workload-language.md`,
/// *Memory*). Simulation only: a host run's tasks touch what they touch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskMemory {
    /// Bytes the task touches while it runs: what the caches must hold for it, refilled
    /// after a switch or a migration evicted part of it.
    pub working_set: u64,
    /// Share of its run time (at local-memory latency) stalled on DRAM, in permille: how much
    /// a remote memory node slows it.
    pub intensity: u32,
    /// Independent misses in flight while it refills (memory-level parallelism); `None`:
    /// the machine's `memory.mlp`.
    pub mlp: Option<u32>,
    pub policy: MemPolicy,
    /// Byte offset of `mem_node` (or of the task), for the error a node beyond the
    /// machine's gives when the run starts.
    pub node_at: usize,
    /// Resident private bytes of a process (`resident`, default its working set): what
    /// its `fork` copies page tables for and its exit tears down.
    pub resident: u64,
}

/// A parsed, validated workload.
#[derive(Clone, Debug)]
pub struct Workload {
    pub file: String,
    pub(crate) text: String,
    /// [`schedlab_sim::line_starts`] of `text`.
    pub(crate) line_starts: Vec<usize>,
    pub name: String,
    pub description: String,
    /// Default simulated duration (`--duration` overrides).
    pub duration: Option<Ns>,
    /// Default machine preset or file (`--machine` overrides).
    pub machine: Option<String>,
    /// The schedulers `compare`, `report` and `study` run by default (`--sched` overrides).
    pub schedulers: Option<Vec<String>>,
    pub params: BTreeMap<String, ParamValue>,
    /// The integer `params`, the variables every expression of a program sees.
    pub(crate) int_params: BTreeMap<String, i64>,
    pub pipes: Vec<PipeDef>,
    pub mutexes: Vec<String>,
    pub conds: Vec<String>,
    pub barriers: Vec<BarrierDef>,
    /// Names of the spans the programs mark (`mark_begin`/`mark_end`), in order of first
    /// mention; `Op::MarkBegin::span` indexes this.
    pub spans: Vec<String>,
    /// `[[futex]]` words.
    pub futexes: Vec<FutexDef>,
    pub templates: Vec<TaskTemplate>,
    /// `[[group]]` cgroups and sessions (autogroups).
    pub groups: TaskGroups,
    /// `[[change]]`s, in file order.
    pub changes: Vec<Change>,
    /// rt-app timers the programs name, in order of first mention.
    pub timers: Vec<TimerDef>,
    /// What an rt-app file asked that the simulation does not model (empty for TOML).
    pub notes: Vec<String>,
    /// For an rt-app file: where lines of its converted TOML came from, for errors.
    pub(crate) origin: Option<std::sync::Arc<rtapp::Origin>>,
    /// The named objects by name, for lowering programs.
    pub(crate) names: NameIndex,
}

/// Pipes, mutexes, conds, barriers and futex words by name (each name to its first
/// declaration, as a search of the declarations in order would find it), built once per
/// workload: every started task's program is lowered from names.
#[derive(Clone, Debug, Default)]
pub(crate) struct NameIndex {
    pipes: BTreeMap<String, usize>,
    mutexes: BTreeMap<String, usize>,
    conds: BTreeMap<String, usize>,
    barriers: BTreeMap<String, usize>,
    futexes: BTreeMap<String, usize>,
}

impl NameIndex {
    fn index<'s>(names: impl Iterator<Item = &'s str>) -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for (i, n) in names.enumerate() {
            m.entry(n.to_string()).or_insert(i);
        }
        m
    }
    /// The index of `wl`'s declarations.
    pub(crate) fn of_workload(wl: &Workload) -> NameIndex {
        NameIndex {
            pipes: Self::index(wl.declared("pipe").into_iter()),
            mutexes: Self::index(wl.declared("mutex").into_iter()),
            conds: Self::index(wl.declared("cond").into_iter()),
            barriers: Self::index(wl.declared("barrier").into_iter()),
            futexes: Self::index(wl.declared("futex").into_iter()),
        }
    }
    /// The names of one kind (`pipe`, `mutex`, `cond`, `barrier`, `futex`).
    pub(crate) fn of(&self, kind: &str) -> &BTreeMap<String, usize> {
        match kind {
            "pipe" => &self.pipes,
            "mutex" => &self.mutexes,
            "cond" => &self.conds,
            "barrier" => &self.barriers,
            _ => &self.futexes,
        }
    }
}

/// At `at`, set the affinity and/or nice of every live task of `template`, or take a CPU
/// offline or online (`hotplug`; then `template` is `None`).
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub at: Ns,
    pub template: Option<usize>,
    pub affinity: Option<CpuSet>,
    pub nice: Option<i32>,
    pub hotplug: Option<Hotplug>,
}

/// A CPU hotplug step of a `[[change]]` (`cpu_offline = N` / `cpu_online = N`), as an
/// administrator's write to `/sys/devices/system/cpu/cpuN/online`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hotplug {
    pub cpu: usize,
    pub online: bool,
}

impl Workload {
    /// The program of instance `n` of template `t` (`n` counts that template's instances,
    /// whether started or forked).
    /// The declared names of one kind of object, in declaration order.
    pub(crate) fn declared(&self, kind: &str) -> Vec<&str> {
        match kind {
            "pipe" => self.pipes.iter().map(|p| p.name.as_str()).collect(),
            "mutex" => self.mutexes.iter().map(String::as_str).collect(),
            "cond" => self.conds.iter().map(String::as_str).collect(),
            "barrier" => self.barriers.iter().map(|b| b.name.as_str()).collect(),
            _ => self.futexes.iter().map(|f| f.name.as_str()).collect(),
        }
    }
    pub fn program(&self, t: usize, n: u64) -> Result<Program, SourceError> {
        lower::lower(self, t, n).map_err(|e| self.relocate(e))
    }
    /// An error in the workload's text, re-located in the rt-app file it was converted from.
    fn relocate(&self, e: SourceError) -> SourceError {
        match &self.origin {
            Some(o) => o.relocate(e),
            None => e,
        }
    }
    /// A located error at byte `offset` of the workload text (a run-time refusal of
    /// something the file asked for, such as a deadline reservation admission refused).
    pub fn error_at(&self, offset: usize, field: &str, msg: impl Into<String>) -> SourceError {
        self.relocate(SourceError::at(&self.file, &self.text, offset, field, msg))
    }
    pub fn template_index(&self, name: &str) -> Option<usize> {
        self.templates.iter().position(|t| t.name == name)
    }
    /// Tasks started directly by the workload.
    pub fn initial_tasks(&self) -> u64 {
        self.templates.iter().map(|t| t.count).sum()
    }
}
