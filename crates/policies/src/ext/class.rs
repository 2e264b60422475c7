//! The ext class's kernel side (`kernel/sched/ext.c`, v6.12): per-task state, the DSQs,
//! and the class hooks the chain calls (`enqueue_task_scx`, `dequeue_task_scx`,
//! `put_prev_task_scx`, `balance_one` + `pick_task_scx`, `task_tick_scx`, the watchdog).

use super::dsq::{Dsq, Key};
use super::{enq, ops_flags};
use super::{ScxCtx, ScxOps, DSP_MAX_LOOPS, SLICE_DFL, SLICE_INF, WATCHDOG_MAX_TIMEOUT_MS};
use schedlab_machine::{CpuSet, Machine};
use schedlab_sched_api::{
    dequeue, enqueue, Ctx, Kind, Pass, SelectKind, Stat, TaskPolicy, Tunable, TunableSpec, TunableTable, Unit,
};
use schedlab_sim::{CpuId, Ns, TaskId};
use std::collections::{BTreeMap, BTreeSet};

/// The ext class's per-task statistics (`Ext::task_stats`).
const SCX_SLICE: Stat = Stat::def("scx_slice", Unit::Ns, "sched_ext slice left (p->scx.slice; -1: infinite)");
const SCX_DSQ_VTIME: Stat = Stat::def("scx_dsq_vtime", Unit::None, "sched_ext dsq_vtime (p->scx.dsq_vtime)");
const SCX_WEIGHT: Stat = Stat::def("scx_weight", Unit::None, "sched_ext weight (p->scx.weight; 100 at nice 0)");

/// The ext class's tunables, each defined here once.
pub static TUNABLES: TunableTable<ExtTunables> = TunableTable {
    owner: "sched_ext",
    version: None,
    specs: &[
        TunableSpec::new(
            "switch_partial",
            Kind::Bool,
            "SCX_OPS_SWITCH_PARTIAL: only policy=ext tasks join (1), or every normal task (0)",
            |t| t.partial.into(),
            |t, v| t.partial = v != 0,
        ),
        TunableSpec::new(
            "watchdog_timeout_ms",
            Kind::int(1, WATCHDOG_MAX_TIMEOUT_MS as i64, Unit::Ms),
            "ops.timeout_ms: eject the policy when a runnable task has not run for this long (larger is E2BIG)",
            |t| t.timeout_ms as i64,
            |t, v| t.timeout_ms = v as u64,
        ),
    ],
};

/// The ext class's configuration (`struct sched_ext_ops` fields the kernel reads).
#[derive(Clone, Debug)]
pub struct ExtTunables {
    /// `SCX_OPS_SWITCH_PARTIAL`: only `SCHED_EXT` tasks join (else every normal task).
    pub partial: bool,
    /// `ops.timeout_ms`: the watchdog ejects the policy when a runnable task has not run
    /// for this long (at most 30 s, `ext.c:bpf_scx_init_member`).
    pub timeout_ms: u64,
}

impl ExtTunables {
    /// The policy's `ops_flags`, then the `sets` of [`TUNABLES`] (others are left to the
    /// caller).
    pub fn new(sets: &[(String, String)], ops_flags: u64) -> Result<ExtTunables, String> {
        let mut t = ExtTunables { partial: ops_flags & ops_flags::SWITCH_PARTIAL != 0, timeout_ms: 30_000 };
        TUNABLES.apply_known(&mut t, sets, Pass::All)?;
        Ok(t)
    }
}

/// Which queue a DSQ reference names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Q {
    Local(CpuId),
    Global(usize),
    User(u64),
}

/// Where an ext task is (`p->scx.ops_state` and `p->scx.dsq`, flattened).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum At {
    /// Not queued in the ext class.
    Off,
    /// Held by the policy (`SCX_OPSS_QUEUED`): it must insert it from `dispatch`.
    Owned,
    /// In a DSQ.
    Dsq(Q, Key),
    /// Inserted into the local DSQ of that CPU while queued on another runqueue: the kernel
    /// is moving it there (`move_remote_task_to_local_dsq`), with these enqueue flags.
    Transit(CpuId, u64),
    /// `curr` of that CPU.
    Running(CpuId),
    /// Stopped on that CPU with its slice used up; the next pick there decides whether it
    /// keeps running or goes through `enqueue` (`balance_one` runs before `put_prev_task`).
    Prev(CpuId),
}

/// A direct-dispatch verdict (`p->scx.ddsp_dsq_id`, `ddsp_enq_flags`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Verdict {
    pub dsq: u64,
    pub flags: u64,
    pub vtime: Option<u64>,
}

/// `struct sched_ext_entity`, what the model needs of it.
#[derive(Clone, Debug)]
pub(crate) struct TaskState {
    pub at: At,
    /// The runqueue the task is queued on (`task_cpu` while queued).
    pub rq: Option<CpuId>,
    pub slice: u64,
    pub vtime: u64,
    pub weight: u32,
    /// `runnable_at`: when it last became runnable or stopped running while runnable.
    pub runnable_at: Option<Ns>,
    pub enabled: bool,
    pub ddsp: Option<Verdict>,
    pub cpumask: Option<CpuSet>,
}

impl Default for TaskState {
    fn default() -> Self {
        TaskState {
            at: At::Off,
            rq: None,
            slice: 0,
            vtime: 0,
            weight: 100,
            runnable_at: None,
            enabled: false,
            ddsp: None,
            cpumask: None,
        }
    }
}

/// Per CPU (`struct scx_rq`).
#[derive(Clone, Debug, Default)]
pub(crate) struct CpuState {
    pub local: Dsq,
    pub curr: Option<TaskId>,
    pub exec_start: Ns,
    pub prev: Option<TaskId>,
    /// `cpu_released`: a higher class took the CPU and `cpu_release` was called.
    pub released: bool,
    /// The ext tasks queued on this runqueue (what the kernel counts).
    pub rq: BTreeSet<TaskId>,
    /// The policy's timer here (`bpf_timer_start`).
    pub timer: Option<Ns>,
}

/// The callback a helper is called from (`enum scx_kf_mask`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kf {
    /// `select_cpu` for this task.
    Select(TaskId),
    /// `enqueue` of this task on this runqueue.
    Enqueue(TaskId, CpuId),
    /// `dispatch` on this CPU.
    Dispatch(CpuId),
    Other,
}

/// Counters (`scx_ops` events and the example schedulers' statistics).
#[derive(Clone, Debug, Default)]
pub(crate) struct Stats {
    pub enqueues: u64,
    pub direct: u64,
    pub dispatch_calls: u64,
    pub inserts: u64,
    pub consumes: u64,
    pub remote_moves: u64,
    pub kicks: u64,
    pub keep_prev: u64,
    pub ignored: u64,
    pub ejected: u64,
}

/// The kernel side's state, which helpers borrow while the policy runs.
pub struct Core {
    pub(crate) tasks: Vec<TaskState>,
    pub(crate) cpus: Vec<CpuState>,
    pub(crate) global: Vec<Dsq>,
    pub(crate) user: BTreeMap<u64, Dsq>,
    /// `idle_masks.cpu`: CPUs idle and not claimed.
    pub(crate) idle: CpuSet,
    /// `cpumask_any_and_distribute`'s rotor.
    pub(crate) distribute: usize,
    pub(crate) transit: BTreeSet<TaskId>,
    pub(crate) node_of: Vec<usize>,
    pub(crate) kf: Kf,
    /// Inserts in the current `dispatch` call.
    pub(crate) dsp_nr: usize,
    pub(crate) dispatched: u64,
    /// The first error (`scx_ops_error`), not yet acted on.
    pub(crate) error: Option<String>,
    pub(crate) exit: Option<String>,
    pub(crate) disabled: bool,
    pub(crate) loaded: bool,
    pub(crate) watchdog_at: Option<Ns>,
    pub(crate) t: ExtTunables,
    pub(crate) flags: u64,
    pub(crate) stats: Stats,
}

/// The ext class: the kernel side and the policy.
pub struct Ext {
    pub(crate) core: Core,
    ops: Box<dyn ScxOps>,
}

/// `ext.c:sched_weight_to_cgroup` of the task's CFS weight: 100 at nice 0, 1..=10000.
fn scx_weight(nice: i32, idle: bool) -> u32 {
    let w = crate::fair::LoadWeight::for_task(nice, idle).weight;
    ((w * 100 + 512) / 1024).clamp(1, 10_000) as u32
}

impl Ext {
    pub fn new(m: &Machine, ops: Box<dyn ScxOps>, t: ExtTunables) -> Ext {
        let n = m.nr_cpus();
        let nodes = m.topology.nodes.max(1);
        let flags = ops.flags();
        Ext {
            core: Core {
                tasks: Vec::new(),
                cpus: vec![CpuState::default(); n],
                global: vec![Dsq::default(); nodes],
                user: BTreeMap::new(),
                idle: CpuSet::full(n),
                distribute: 0,
                transit: BTreeSet::new(),
                node_of: m.topology.cpus.iter().map(|c| c.node).collect(),
                kf: Kf::Other,
                dsp_nr: 0,
                dispatched: 0,
                error: None,
                exit: None,
                disabled: false,
                loaded: false,
                watchdog_at: None,
                t,
                flags,
                stats: Stats::default(),
            },
            ops,
        }
    }

    pub fn name(&self) -> &'static str {
        self.ops.name()
    }

    pub(crate) fn ops_name(&self) -> &'static str {
        self.ops.name()
    }

    /// The class is in charge (loaded and not ejected).
    pub fn enabled(&self) -> bool {
        !self.core.disabled
    }

    /// `task_should_scx` (v6.12): `SCHED_EXT` tasks, and in full mode every normal,
    /// batch and idle task, while the scheduler is enabled.
    pub fn claims(&self, pol: &TaskPolicy) -> bool {
        !self.core.disabled
            && match pol {
                TaskPolicy::Ext => true,
                TaskPolicy::Normal | TaskPolicy::Batch | TaskPolicy::Idle => !self.core.t.partial,
                _ => false,
            }
    }

    /// Runs a policy callback in context `kf` (skipped once an error is pending: the
    /// kernel bypasses the policy until it is disabled).
    pub(crate) fn call<R: Default>(
        &mut self,
        cx: &mut Ctx,
        kf: Kf,
        f: impl FnOnce(&mut dyn ScxOps, &mut ScxCtx) -> R,
    ) -> R {
        if self.core.error.is_some() || self.core.disabled {
            return R::default();
        }
        let saved = self.core.kf;
        self.core.kf = kf;
        let mut s = ScxCtx { core: &mut self.core, cx };
        let r = f(&mut *self.ops, &mut s);
        self.core.kf = saved;
        r
    }

    fn grow(&mut self, p: TaskId) {
        if self.core.tasks.len() <= p {
            self.core.tasks.resize(p + 1, TaskState::default());
        }
    }

    /// `ops.init` (on the first hook: the scheduler loads before any task runs) and the
    /// watchdog (`scx_watchdog_workfn`, every `timeout / 2`, here on CPU 0).
    fn load(&mut self, cx: &mut Ctx) {
        if self.core.loaded {
            return;
        }
        self.core.loaded = true;
        if let Some(e) = self.call(cx, Kf::Other, |o, s| o.init(s).err()) {
            self.core.raise("ops.init() failed", &e);
        }
        let at = cx.now + Ns(self.core.t.timeout_ms * 500_000);
        self.core.watchdog_at = Some(at);
        cx.timer(0, at);
    }

    /// `scx_ops_init_task` for a new task.
    pub fn task_new(&mut self, cx: &mut Ctx, p: TaskId) {
        self.grow(p);
        self.load(cx);
        self.core.tasks[p] = TaskState::default();
        if let Some(e) = self.call(cx, Kf::Other, |o, s| o.init_task(s, p).err()) {
            self.core.raise("ops.init_task() failed", &e);
        }
    }

    /// `scx_ops_exit_task`.
    pub fn task_dead(&mut self, cx: &mut Ctx, p: TaskId) {
        self.grow(p);
        self.call(cx, Kf::Other, |o, s| o.exit_task(s, p));
    }

    /// `select_task_rq_scx`: `ops.select_cpu` (not for exec); an invalid CPU is an error.
    pub fn select(&mut self, cx: &mut Ctx, p: TaskId, prev: CpuId, kind: SelectKind, wf: u32) -> CpuId {
        self.grow(p);
        self.load(cx);
        self.core.tasks[p].ddsp = None;
        if kind == SelectKind::Exec || self.core.error.is_some() {
            return prev;
        }
        let cpu = self.call(cx, Kf::Select(p), |o, s| Some(o.select_cpu(s, p, prev, wf))).unwrap_or(prev);
        if cpu >= cx.nr_cpus() {
            self.core.raise("invalid CPU", &format!("{cpu} from ops.select_cpu()"));
            return prev;
        }
        self.record_place(cx, p, prev, cpu);
        cpu
    }

    /// `enqueue_task_scx` + `do_enqueue_task`.
    pub fn enqueue(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, flags: u32) {
        self.grow(p);
        self.load(cx);
        self.core.cpus[cpu].rq.insert(p);
        let t = &mut self.core.tasks[p];
        t.rq = Some(cpu);
        let moving = flags & enqueue::MIGRATED != 0 && flags & (enqueue::WAKEUP | enqueue::INITIAL) == 0;
        if t.runnable_at.is_none() {
            t.runnable_at = Some(cx.now);
        }
        let mut ef = if flags & enqueue::WAKEUP != 0 { enq::WAKEUP } else { 0 };
        if !t.enabled {
            t.enabled = true;
            t.weight = scx_weight(cx.task(p).nice, cx.task(p).policy == TaskPolicy::Idle);
            self.call(cx, Kf::Other, |o, s| o.enable(s, p));
        }
        if self.core.tasks[p].cpumask.as_ref() != Some(&cx.task(p).affinity) {
            let first = self.core.tasks[p].cpumask.is_none();
            self.core.tasks[p].cpumask = Some(cx.task(p).affinity.clone());
            if !first {
                self.call(cx, Kf::Other, |o, s| o.set_cpumask(s, p));
            }
        }
        if !moving {
            self.call(cx, Kf::Other, |o, s| o.runnable(s, p, ef));
        }
        if let At::Transit(to, f) = self.core.tasks[p].at {
            self.core.transit.remove(&p);
            if to == cpu {
                // The move a local insert asked for arrived (`sticky_cpu`).
                self.core.local_insert(cx, cpu, p, f);
                return;
            }
            self.core.tasks[p].at = At::Off;
            self.core.transit_dropped(cx, to);
        }
        if self.core.tasks[p].ddsp.is_some() {
            ef |= enq::CPU_SELECTED;
        }
        self.do_enqueue(cx, cpu, p, ef);
    }

    /// `do_enqueue_task`: a `select_cpu` verdict, else `ops.enqueue` (which may insert
    /// the task or keep it). While an error is pending, the global DSQ (bypass).
    pub(crate) fn do_enqueue(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, ef: u64) {
        if self.core.error.is_some() {
            self.core.tasks[p].slice = SLICE_DFL;
            self.core.place(cx, p, Q::Global(self.core.node_of[cpu]), 0, None);
            return;
        }
        if let Some(v) = self.core.tasks[p].ddsp.take() {
            self.core.stats.direct += 1;
            self.core.apply_verdict(cx, p, cpu, v);
            return;
        }
        self.core.tasks[p].at = At::Owned;
        self.core.stats.enqueues += 1;
        self.call(cx, Kf::Enqueue(p, cpu), |o, s| o.enqueue(s, p, ef));
        if let Some(v) = self.core.tasks[p].ddsp.take() {
            self.core.stats.direct += 1;
            self.core.apply_verdict(cx, p, cpu, v);
        } else if self.core.error.is_some() && self.core.tasks[p].at == At::Owned {
            self.core.place(cx, p, Q::Global(self.core.node_of[cpu]), 0, None);
        }
    }

    /// `dequeue_task_scx`: out of whatever queue holds it; `ops.dequeue` if the policy
    /// held it; `stopping(false)` if it was running; `quiescent` if it sleeps.
    pub fn dequeue(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, flags: u32) {
        self.grow(p);
        self.core.cpus[cpu].rq.remove(&p);
        self.core.tasks[p].rq = None;
        let sleep = flags & dequeue::SLEEP != 0;
        let df = if sleep { super::deq::SLEEP } else { 0 };
        match self.core.tasks[p].at {
            At::Owned => self.call(cx, Kf::Other, |o, s| o.dequeue(s, p, df)),
            At::Dsq(q, k) => {
                self.core.dsq_mut(q).remove(k);
            }
            At::Transit(..) if flags & dequeue::MIGRATE != 0 && !sleep => return, // on its way
            At::Transit(to, _) => {
                self.core.transit.remove(&p);
                self.core.tasks[p].at = At::Off;
                self.core.transit_dropped(cx, to);
            }
            At::Running(c) => {
                self.core.update_curr(cx, c);
                self.core.cpus[c].curr = None;
                self.call(cx, Kf::Other, |o, s| o.stopping(s, p, false));
            }
            At::Prev(c) => self.core.cpus[c].prev = None,
            At::Off => {}
        }
        self.core.tasks[p].at = At::Off;
        self.core.tasks[p].ddsp = None;
        if sleep {
            self.core.tasks[p].runnable_at = None;
            self.call(cx, Kf::Other, |o, s| o.quiescent(s, p, df));
        } else if flags & dequeue::MIGRATE == 0 {
            self.core.tasks[p].runnable_at = None;
        }
    }

    /// `put_prev_task_scx`: a still-runnable task with slice left goes back to the head
    /// of the local DSQ (it was preempted); one whose slice ran out waits for the pick.
    pub fn put_prev(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId) {
        if self.core.cpus[cpu].curr != Some(p) {
            return;
        }
        self.core.update_curr(cx, cpu);
        self.core.cpus[cpu].curr = None;
        if self.core.tasks[p].at != At::Running(cpu) {
            return;
        }
        self.call(cx, Kf::Other, |o, s| o.stopping(s, p, true));
        let t = &mut self.core.tasks[p];
        t.runnable_at = Some(cx.now);
        if t.slice > 0 && self.core.error.is_none() {
            t.at = At::Off;
            self.core.local_insert(cx, cpu, p, enq::HEAD);
        } else {
            t.at = At::Prev(cpu);
            self.core.cpus[cpu].prev = Some(p);
        }
    }

    /// `balance_one` + `pick_task_scx` + `set_next_task_scx` on `cpu`.
    pub fn pick(&mut self, cx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        if std::mem::take(&mut self.core.cpus[cpu].released) {
            self.call(cx, Kf::Other, |o, s| o.cpu_acquire(s, cpu));
        }
        self.core.revalidate_transit(cx);
        let moves = self.core.stats.remote_moves;
        let mut got = self.found(cx, cpu);
        let mut rounds = 0;
        while !got && rounds < DSP_MAX_LOOPS && self.core.error.is_none() {
            let before = self.core.dispatched;
            let prev = self.core.cpus[cpu].prev;
            self.core.dsp_nr = 0;
            self.core.stats.dispatch_calls += 1;
            self.call(cx, Kf::Dispatch(cpu), |o, s| o.dispatch(s, cpu, prev));
            got = self.found(cx, cpu) || self.core.stats.remote_moves != moves;
            if self.core.dispatched == before {
                break;
            }
            rounds += 1;
        }
        if let Some(prev) = self.core.cpus[cpu].prev {
            if !got && self.core.flags & ops_flags::ENQ_LAST == 0 && self.core.error.is_none() {
                // Nothing else to run: keep `prev`, with a fresh slice (`SCX_RQ_BAL_KEEP`).
                self.core.stats.keep_prev += 1;
                self.core.cpus[cpu].prev = None;
                if self.core.tasks[prev].slice == 0 {
                    self.core.tasks[prev].slice = SLICE_DFL;
                }
                self.set_next(cx, cpu, prev);
                return Some(prev);
            }
            let last = if got { 0 } else { enq::LAST };
            self.flush_prev(cx, cpu, last);
        }
        let (k, p) = self.core.cpus[cpu].local.first()?;
        self.core.cpus[cpu].local.remove(k);
        if self.core.tasks[p].slice == 0 {
            self.core.tasks[p].slice = SLICE_DFL;
        }
        self.set_next(cx, cpu, p);
        Some(p)
    }

    /// The local DSQ has a task, or the global DSQ yields one (`consume_global_dsq`).
    fn found(&mut self, cx: &mut Ctx, cpu: CpuId) -> bool {
        if !self.core.cpus[cpu].local.is_empty() {
            return true;
        }
        let node = self.core.node_of[cpu];
        self.core.consume(cx, cpu, Q::Global(node))
    }

    /// The task kept after its slice ran out goes through `ops.enqueue` after all.
    fn flush_prev(&mut self, cx: &mut Ctx, cpu: CpuId, ef: u64) {
        if let Some(p) = self.core.cpus[cpu].prev.take() {
            self.core.tasks[p].at = At::Off;
            self.do_enqueue(cx, cpu, p, ef);
        }
    }

    /// `set_next_task_scx`: `p` runs on `cpu`; `ops.running`.
    fn set_next(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId) {
        let t = &mut self.core.tasks[p];
        t.at = At::Running(cpu);
        t.runnable_at = None;
        let c = &mut self.core.cpus[cpu];
        c.curr = Some(p);
        c.exec_start = cx.now;
        self.call(cx, Kf::Other, |o, s| o.running(s, p));
    }

    /// A running task changed into the ext class (`__sched_setscheduler` → `set_next_task`).
    pub fn set_running(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId) {
        match self.core.tasks[p].at {
            At::Dsq(q, k) => {
                self.core.dsq_mut(q).remove(k);
            }
            At::Transit(to, _) => {
                self.core.transit.remove(&p);
                self.core.tasks[p].at = At::Off;
                if to != cpu {
                    self.core.transit_dropped(cx, to);
                }
            }
            _ => {}
        }
        if self.core.tasks[p].slice == 0 {
            self.core.tasks[p].slice = SLICE_DFL;
        }
        self.set_next(cx, cpu, p);
    }

    /// Another class (or idle, `other == false`) won the pick on `cpu`: a kept task goes
    /// through `enqueue`; a higher class taking the CPU calls `ops.cpu_release` once
    /// (`switch_class`).
    pub fn not_picked(&mut self, cx: &mut Ctx, cpu: CpuId, other: bool) {
        self.flush_prev(cx, cpu, 0);
        if other && !self.core.cpus[cpu].released {
            self.core.cpus[cpu].released = true;
            self.call(cx, Kf::Other, |o, s| o.cpu_release(s, cpu));
        }
    }

    /// `update_idle_scx`: the CPU enters (or leaves) idle. A CPU whose `dispatch` moved a
    /// task from another runqueue is not idle: the kernel moves it into the local DSQ
    /// before the pick (`ext.c:consume_remote_task`), where the model's migration lands
    /// just after it; counting the CPU idle meanwhile would let a policy claim it for a
    /// second task that then waits.
    pub fn update_idle(&mut self, cpu: CpuId, idle: bool) {
        let incoming =
            || self.core.transit.iter().any(|&p| matches!(self.core.tasks[p].at, At::Transit(c, _) if c == cpu));
        if idle && !incoming() {
            self.core.idle.insert(cpu);
        } else {
            self.core.idle.remove(cpu);
        }
    }

    /// `task_tick_scx`: charge the slice, `ops.tick`, reschedule at zero.
    pub fn tick(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId) {
        if self.core.cpus[cpu].curr != Some(p) {
            return;
        }
        self.core.update_curr(cx, cpu);
        self.call(cx, Kf::Other, |o, s| o.tick(s, p));
        if self.core.tasks[p].slice == 0 {
            cx.resched_curr(cpu);
        }
    }

    /// `yield_task_scx`.
    pub fn yield_task(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId) {
        self.core.update_curr(cx, cpu);
        self.call(cx, Kf::Other, |o, s| o.yield_task(s, p));
    }

    /// `reweight_task_scx`.
    pub fn set_weight(&mut self, cx: &mut Ctx, p: TaskId) {
        self.grow(p);
        let w = scx_weight(cx.task(p).nice, cx.task(p).policy == TaskPolicy::Idle);
        self.core.tasks[p].weight = w;
        self.call(cx, Kf::Other, |o, s| o.set_weight(s, p, w));
    }

    /// The policy's timers and the watchdog on `cpu`; each is requested again.
    pub fn timer(&mut self, cx: &mut Ctx, cpu: CpuId) {
        if self.core.disabled {
            return;
        }
        if cpu == 0 {
            if let Some(at) = self.core.watchdog_at {
                if at <= cx.now {
                    self.core.watchdog(cx);
                    self.core.watchdog_at = Some(cx.now + Ns(self.core.t.timeout_ms * 500_000));
                }
                cx.timer(0, self.core.watchdog_at.unwrap_or(at));
            }
        }
        if let Some(at) = self.core.cpus[cpu].timer {
            if at <= cx.now {
                self.core.cpus[cpu].timer = None;
                self.call(cx, Kf::Other, |o, s| o.timer(s, cpu));
            }
        }
        if let Some(at) = self.core.cpus[cpu].timer {
            cx.timer(cpu, at);
        }
    }

    pub fn queued(&self, cpu: CpuId, out: &mut Vec<TaskId>) {
        out.extend(self.core.cpus[cpu].rq.iter().copied());
    }

    /// The error to act on, if one was raised.
    pub fn take_error(&mut self) -> bool {
        self.core.error.take().is_some()
    }

    /// `scx_ops_disable_workfn`: the class stops; every task it had queued, with the CPU
    /// it is queued on and whether it runs there, goes back to the chain (to fair).
    pub fn disable(&mut self) -> Vec<(TaskId, CpuId, bool)> {
        self.core.disabled = true;
        self.core.stats.ejected = 1;
        let mut out = Vec::new();
        for (cpu, c) in self.core.cpus.iter_mut().enumerate() {
            for &p in &c.rq {
                out.push((p, cpu, c.curr == Some(p)));
            }
            *c = CpuState::default();
        }
        for t in &mut self.core.tasks {
            t.at = At::Off;
            t.rq = None;
        }
        self.core.global.iter_mut().for_each(|d| *d = Dsq::default());
        self.core.user.clear();
        self.core.transit.clear();
        out
    }

    /// Why the class was disabled (`scx_exit_info`), once it was.
    pub fn exit_info(&self) -> Option<String> {
        self.core.exit.clone().or_else(|| self.ops.late_error().map(|m| format!("scx_bpf_error: {m}")))
    }

    pub fn task_stats(&self, p: TaskId) -> Vec<Stat> {
        let t = &self.core.tasks[p];
        vec![
            SCX_SLICE.at(if t.slice == SLICE_INF { -1 } else { t.slice as i64 }),
            SCX_DSQ_VTIME.at(t.vtime as i64),
            SCX_WEIGHT.at(i64::from(t.weight)),
        ]
    }

    pub fn tunables(&self) -> Vec<Tunable> {
        let mut v = TUNABLES.list(&self.core.t);
        v.extend(self.ops.tunables());
        v
    }

    pub fn counters(&self) -> Vec<(String, u64)> {
        let s = &self.core.stats;
        let mut v: Vec<(String, u64)> = [
            ("ext_enqueues", s.enqueues),
            ("ext_direct_dispatches", s.direct),
            ("ext_dispatch_calls", s.dispatch_calls),
            ("ext_inserts", s.inserts),
            ("ext_consumes", s.consumes),
            ("ext_remote_moves", s.remote_moves),
            ("ext_kicks", s.kicks),
            ("ext_keep_prev", s.keep_prev),
            ("ext_ignored_dispatches", s.ignored),
            ("ext_ejected", s.ejected),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        v.extend(self.ops.counters().into_iter().map(|(k, n)| (format!("ext.{k}"), n)));
        v
    }

    /// The class's own checks on `cpu` (`curr`: what the chain says runs there in ext).
    pub fn check(&self, cpu: CpuId, curr: Option<TaskId>) -> Result<(), String> {
        let c = &self.core.cpus[cpu];
        if self.core.disabled {
            return Ok(());
        }
        if c.curr != curr {
            return Err(format!("ext CPU {cpu}: curr {:?}, the chain runs {curr:?}", c.curr));
        }
        if let Some(p) = c.prev {
            return Err(format!("ext CPU {cpu}: task {p} left between put_prev and pick"));
        }
        for (_, p) in c.local.iter() {
            if self.core.tasks[p].rq != Some(cpu)
                || !matches!(self.core.tasks[p].at, At::Dsq(Q::Local(x), _) if x == cpu)
            {
                return Err(format!("ext CPU {cpu}: task {p} in the local DSQ is {:?}", self.core.tasks[p].at));
            }
        }
        for &p in &c.rq {
            let t = &self.core.tasks[p];
            if t.rq != Some(cpu) || t.at == At::Off {
                return Err(format!("ext CPU {cpu}: queued task {p} is {:?} on {:?}", t.at, t.rq));
            }
            if let At::Dsq(q, k) = t.at {
                if !self.core.dsq(q).is_some_and(|d| d.contains(k, p)) {
                    return Err(format!("ext: task {p} is not where it is recorded ({q:?})"));
                }
            }
        }
        Ok(())
    }
}
