//! What a policy calls: [`ScxCtx`], the kfuncs of `kernel/sched/ext.c` (v6.12; v6.13+
//! names), and the kernel-side moves behind them (`dispatch_enqueue`,
//! `find_dsq_for_dispatch`, `dispatch_to_local_dsq`, `consume_dispatch_q`).

use super::class::{At, Core, Kf, Verdict, Q};
use super::{enq, kick, DSP_MAX_BATCH, DSQ_FLAG_BUILTIN, DSQ_FLAG_LOCAL_ON, DSQ_GLOBAL, DSQ_LOCAL};
use super::{DSQ_LOCAL_CPU_MASK, SLICE_INF};
use schedlab_machine::{CpuSet, Machine};
use schedlab_sched_api::{Ctx, TaskInfo};
use schedlab_sim::{CpuId, Ns, TaskId};

/// The helper context a policy's callbacks receive (the BPF program's kfuncs and
/// `p->scx` fields). Errors a kfunc detects (an invalid DSQ or CPU, a helper called
/// from the wrong callback) eject the policy, as `scx_ops_error` does.
pub struct ScxCtx<'a, 'c> {
    pub(crate) core: &'a mut Core,
    pub(crate) cx: &'a mut Ctx<'c>,
}

impl ScxCtx<'_, '_> {
    pub fn now(&self) -> Ns {
        self.cx.now
    }
    /// The CPU running the callback.
    pub fn this_cpu(&self) -> CpuId {
        self.cx.this_cpu
    }
    pub fn nr_cpus(&self) -> usize {
        self.cx.nr_cpus()
    }
    pub fn machine(&self) -> &Machine {
        self.cx.machine
    }
    /// Panics on a task id not below [`ScxCtx::nr_tasks`].
    pub fn task(&self, p: TaskId) -> &TaskInfo {
        self.cx.task(p)
    }
    /// Task ids are `0..nr_tasks()` (every task the run created so far).
    pub fn nr_tasks(&self) -> usize {
        self.cx.tasks.len()
    }
    /// `scx_bpf_task_cpu`.
    pub fn task_cpu(&self, p: TaskId) -> CpuId {
        self.core.tasks.get(p).and_then(|t| t.rq).unwrap_or(self.cx.task(p).cpu)
    }
    /// `scx_bpf_task_running`: `p` is `curr` of its CPU (still so while it is put back).
    pub fn task_running(&self, p: TaskId) -> bool {
        self.core.tasks.get(p).is_some_and(|t| matches!(t.at, At::Running(_) | At::Prev(_)))
    }
    /// `p->scx.slice`: what is left of its slice, in ns (`SLICE_INF`: never expires).
    pub fn slice(&self, p: TaskId) -> u64 {
        self.core.tasks.get(p).map_or(0, |t| t.slice)
    }
    pub fn set_slice(&mut self, p: TaskId, ns: u64) {
        if let Some(t) = self.core.tasks.get_mut(p) {
            t.slice = ns;
        }
    }
    /// `p->scx.dsq_vtime`, the policy's to keep.
    pub fn dsq_vtime(&self, p: TaskId) -> u64 {
        self.core.tasks.get(p).map_or(0, |t| t.vtime)
    }
    pub fn set_dsq_vtime(&mut self, p: TaskId, vtime: u64) {
        if let Some(t) = self.core.tasks.get_mut(p) {
            t.vtime = vtime;
        }
    }
    /// `p->scx.weight`: 100 at nice 0 (1..=10000).
    pub fn weight(&self, p: TaskId) -> u32 {
        self.core.tasks.get(p).map_or(100, |t| t.weight)
    }
    /// `scx_bpf_create_dsq(id, -1)`: a user DSQ (bit 63 clear, not yet existing).
    pub fn create_dsq(&mut self, id: u64) -> Result<(), String> {
        if id & DSQ_FLAG_BUILTIN != 0 {
            return Err(format!("DSQ id {id:#x} has the builtin flag"));
        }
        if self.core.user.contains_key(&id) {
            return Err(format!("DSQ {id:#x} exists (EEXIST)"));
        }
        self.core.user.insert(id, Default::default());
        Ok(())
    }
    /// `scx_bpf_dsq_nr_queued`: tasks in a DSQ (`DSQ_LOCAL`: this CPU's; the global DSQ
    /// of this CPU's node).
    pub fn dsq_nr_queued(&self, id: u64) -> usize {
        let this = self.cx.this_cpu;
        let q = match id {
            DSQ_LOCAL => Q::Local(this),
            DSQ_GLOBAL => Q::Global(self.core.node_of[this]),
            _ if id & DSQ_FLAG_BUILTIN != 0 && id & DSQ_FLAG_LOCAL_ON != 0 => {
                Q::Local((id & DSQ_LOCAL_CPU_MASK) as usize)
            }
            _ => Q::User(id),
        };
        self.core.dsq(q).map_or(0, |d| d.len())
    }
    /// `scx_bpf_dsq_insert` (6.12: `scx_bpf_dispatch`): FIFO insert of `p` with `slice`
    /// (0 keeps the current one). From `select_cpu`/`enqueue`, a direct dispatch of the
    /// task being placed (`DSQ_LOCAL`: the CPU it is enqueued on); from `dispatch`, of a
    /// task the policy holds (others are ignored, as stale dispatches are).
    pub fn dsq_insert(&mut self, p: TaskId, dsq: u64, slice: u64, enq_flags: u64) {
        self.insert(p, dsq, slice, enq_flags, None);
    }
    /// `scx_bpf_dsq_insert_vtime`: insert ordered by `vtime` (user DSQs only).
    pub fn dsq_insert_vtime(&mut self, p: TaskId, dsq: u64, slice: u64, vtime: u64, enq_flags: u64) {
        self.insert(p, dsq, slice, enq_flags, Some(vtime));
    }
    /// `scx_bpf_dsq_move_to_local` (6.12: `scx_bpf_consume`), from `dispatch` only: the
    /// first task of user DSQ `dsq` that may run on this CPU moves to its local DSQ
    /// (migrating it if it is queued elsewhere). `false` if there is none.
    pub fn dsq_move_to_local(&mut self, dsq: u64) -> bool {
        let Kf::Dispatch(cpu) = self.core.kf else {
            self.error("dsq_move_to_local() called outside ops.dispatch()");
            return false;
        };
        if dsq & DSQ_FLAG_BUILTIN != 0 || !self.core.user.contains_key(&dsq) {
            self.error(&format!("dsq_move_to_local(): {dsq:#x} is not a user DSQ"));
            return false;
        }
        let moved = self.core.consume(self.cx, cpu, Q::User(dsq));
        if moved {
            self.core.dispatched += 1;
        }
        moved
    }
    /// `scx_bpf_kick_cpu`: reschedule `cpu`; `kick::IDLE` only if it idles;
    /// `kick::PREEMPT` first ends the slice of its ext task.
    pub fn kick_cpu(&mut self, cpu: CpuId, flags: u64) {
        if cpu >= self.cx.nr_cpus() {
            self.error(&format!("kick_cpu(): invalid CPU {cpu}"));
            return;
        }
        if flags & kick::IDLE != 0 && flags & kick::PREEMPT != 0 {
            self.error("kick_cpu(): IDLE cannot be combined with PREEMPT");
            return;
        }
        self.core.stats.kicks += 1;
        if flags & kick::IDLE != 0 {
            if self.cx.cpus[cpu].curr.is_none() {
                self.cx.resched_curr(cpu);
            }
            return;
        }
        if flags & kick::PREEMPT != 0 {
            if let Some(q) = self.core.cpus[cpu].curr {
                self.core.tasks[q].slice = 0;
            }
        }
        self.cx.resched_curr(cpu);
    }
    /// `scx_bpf_select_cpu_dfl`: the kernel's default idle-CPU search; `true` if the
    /// CPU returned was idle (and is now claimed).
    pub fn select_cpu_dfl(&mut self, p: TaskId, prev: CpuId, wake_flags: u32) -> (CpuId, bool) {
        self.core.select_cpu_dfl(self.cx, p, prev, wake_flags)
    }
    /// `scx_bpf_get_idle_cpumask`: idle CPUs not yet claimed.
    pub fn idle_cpumask(&self) -> &CpuSet {
        &self.core.idle
    }
    /// `scx_bpf_test_and_clear_cpu_idle`: claim `cpu` if it is idle.
    pub fn test_and_clear_cpu_idle(&mut self, cpu: CpuId) -> bool {
        let idle = cpu < self.cx.nr_cpus() && self.core.idle.contains(cpu);
        if idle {
            self.core.idle.remove(cpu);
        }
        idle
    }
    /// `scx_bpf_pick_idle_cpu`: claim an idle CPU of `allowed` (`core`: of a wholly idle
    /// core, `SCX_PICK_IDLE_CORE`), spreading picks (`cpumask_any_and_distribute`).
    pub fn pick_idle_cpu(&mut self, allowed: &CpuSet, core: bool) -> Option<CpuId> {
        self.core.pick_idle(self.cx, allowed, core)
    }
    /// Starts the policy's timer on `cpu` to expire at `at` (`bpf_timer_start`): its
    /// `ScxOps::timer` runs there then. One per CPU; a later start replaces it.
    pub fn timer_start(&mut self, cpu: CpuId, at: Ns) {
        if cpu >= self.cx.nr_cpus() {
            self.error(&format!("timer_start(): invalid CPU {cpu}"));
            return;
        }
        self.core.cpus[cpu].timer = Some(at);
        self.cx.timer(cpu, at);
    }
    /// `scx_bpf_error`: the policy gives up; it is ejected and its tasks go to fair.
    pub fn error(&mut self, msg: &str) {
        self.core.raise("scx_bpf_error", msg);
    }
    /// `scx_bpf_dispatch_nr_slots`: inserts this `dispatch` call may still make.
    pub fn dispatch_nr_slots(&self) -> usize {
        DSP_MAX_BATCH.saturating_sub(self.core.dsp_nr)
    }
    /// Report `n` entries the policy compared (the cost model charges them).
    pub fn compared(&mut self, n: u64) {
        self.cx.compared(n);
    }

    fn insert(&mut self, p: TaskId, dsq: u64, slice: u64, flags: u64, vtime: Option<u64>) {
        if p >= self.core.tasks.len() || self.core.tasks[p].rq.is_none() {
            self.core.stats.ignored += 1;
            return;
        }
        let v = Verdict { dsq, flags, vtime };
        match self.core.kf {
            Kf::Select(q) | Kf::Enqueue(q, _) if q == p => {
                if self.core.tasks[p].ddsp.is_some() {
                    return self.error("dispatching a task that is already direct-dispatched");
                }
                self.core.set_slice_for_insert(p, slice);
                self.core.stats.inserts += 1;
                self.core.tasks[p].ddsp = Some(v);
            }
            Kf::Select(_) | Kf::Enqueue(..) => {
                self.error("direct dispatch of a task other than the one being enqueued")
            }
            Kf::Dispatch(cpu) => {
                if self.core.tasks[p].at != At::Owned {
                    self.core.stats.ignored += 1;
                    return;
                }
                self.core.dsp_nr += 1;
                if self.core.dsp_nr > DSP_MAX_BATCH {
                    return self.error("dispatch buffer overflow");
                }
                self.core.set_slice_for_insert(p, slice);
                self.core.stats.inserts += 1;
                self.core.dispatched += 1;
                self.core.apply_verdict(self.cx, p, cpu, v);
            }
            Kf::Other => self.error("dsq_insert() called outside select_cpu/enqueue/dispatch"),
        }
    }
}

impl Core {
    /// `scx_ops_error`: the first error wins; the chain ejects the class after the hook.
    pub(crate) fn raise(&mut self, kind: &str, msg: &str) {
        if self.exit.is_none() {
            self.exit = Some(format!("{kind}: {msg}"));
            self.error = self.exit.clone();
        }
    }

    fn set_slice_for_insert(&mut self, p: TaskId, slice: u64) {
        let t = &mut self.tasks[p];
        if slice != 0 {
            t.slice = slice;
        } else if t.slice == 0 {
            t.slice = 1;
        }
    }

    pub(crate) fn dsq(&self, q: Q) -> Option<&super::dsq::Dsq> {
        match q {
            Q::Local(c) => self.cpus.get(c).map(|c| &c.local),
            Q::Global(n) => self.global.get(n),
            Q::User(id) => self.user.get(&id),
        }
    }

    pub(crate) fn dsq_mut(&mut self, q: Q) -> &mut super::dsq::Dsq {
        match q {
            Q::Local(c) => &mut self.cpus[c].local,
            Q::Global(n) => &mut self.global[n],
            Q::User(id) => self.user.entry(id).or_default(),
        }
    }

    /// `find_dsq_for_dispatch` + the local-DSQ affinity check of `dispatch_to_local_dsq`:
    /// an invalid target is an error and the task falls back to the global DSQ.
    fn resolve(&mut self, cx: &Ctx, p: TaskId, id: u64, local: CpuId) -> Q {
        let fallback = Q::Global(self.node_of[self.tasks[p].rq.unwrap_or(local)]);
        let target = if id == DSQ_LOCAL {
            local
        } else if id & DSQ_FLAG_BUILTIN != 0 && id & DSQ_FLAG_LOCAL_ON != 0 {
            let c = (id & DSQ_LOCAL_CPU_MASK) as usize;
            if c >= cx.nr_cpus() {
                self.raise("invalid CPU", &format!("{c} in SCX_DSQ_LOCAL_ON for task {}", cx.task(p).name));
                return fallback;
            }
            c
        } else if id == DSQ_GLOBAL {
            return fallback;
        } else if id & DSQ_FLAG_BUILTIN != 0 || !self.user.contains_key(&id) {
            self.raise("invalid DSQ", &format!("non-existent DSQ {id:#x} for task {}", cx.task(p).name));
            return fallback;
        } else {
            return Q::User(id);
        };
        if !cx.task(p).affinity.contains(target) {
            let name = &cx.task(p).name;
            self.raise(
                "invalid dispatch",
                &format!("SCX_DSQ_LOCAL[_ON] verdict target cpu {target} not allowed for {name}"),
            );
            return fallback;
        }
        Q::Local(target)
    }

    /// Carries out an insert whose target is `v.dsq` (`DSQ_LOCAL`: `local`'s).
    pub(crate) fn apply_verdict(&mut self, cx: &mut Ctx, p: TaskId, local: CpuId, v: Verdict) {
        let q = self.resolve(cx, p, v.dsq, local);
        let mut vtime = v.vtime;
        if vtime.is_some() && !matches!(q, Q::User(_)) {
            self.raise("invalid dispatch", "cannot use vtime ordering for built-in DSQs");
            vtime = None;
        }
        self.place(cx, p, q, v.flags, vtime);
    }

    /// `dispatch_enqueue`: into queue `q`; a local DSQ of another runqueue's CPU moves the
    /// task there first (`move_remote_task_to_local_dsq`, here a migration request).
    pub(crate) fn place(&mut self, cx: &mut Ctx, p: TaskId, q: Q, flags: u64, vtime: Option<u64>) {
        if let Some(v) = vtime {
            self.tasks[p].vtime = v;
        }
        let res = match q {
            Q::Local(c) if self.tasks[p].rq == Some(c) => return self.local_insert(cx, c, p, flags),
            Q::Local(c) => {
                self.tasks[p].at = At::Transit(c, flags);
                self.transit.insert(p);
                self.stats.remote_moves += 1;
                cx.migrate(p, c);
                return;
            }
            Q::Global(_) => self.dsq_mut(q).insert_fifo(p, flags & enq::HEAD != 0),
            Q::User(_) => match vtime {
                Some(v) => self.dsq_mut(q).insert_vtime(p, v),
                None => self.dsq_mut(q).insert_fifo(p, flags & enq::HEAD != 0),
            },
        };
        match res {
            Ok(k) => self.tasks[p].at = At::Dsq(q, k),
            Err(e) => {
                self.raise("invalid dispatch", &e);
                let g = Q::Global(self.node_of[self.tasks[p].rq.unwrap_or(0)]);
                if let Ok(k) = self.dsq_mut(g).insert_fifo(p, false) {
                    self.tasks[p].at = At::Dsq(g, k);
                }
            }
        }
    }

    /// Into `cpu`'s local DSQ (`p` is queued there): an idle CPU is rescheduled;
    /// `enq::PREEMPT` goes to the head and ends the slice of the CPU's ext task.
    pub(crate) fn local_insert(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, flags: u64) {
        let head = flags & (enq::HEAD | enq::PREEMPT) != 0;
        if let Ok(k) = self.cpus[cpu].local.insert_fifo(p, head) {
            self.tasks[p].at = At::Dsq(Q::Local(cpu), k);
        }
        if cx.cpus[cpu].curr.is_none() {
            cx.resched_curr(cpu);
        } else if flags & enq::PREEMPT != 0 {
            if let Some(q) = self.cpus[cpu].curr {
                self.tasks[q].slice = 0;
                cx.resched_curr(cpu);
            }
        }
    }

    /// `consume_dispatch_q`: the first task of `q` allowed on `cpu` moves to its local DSQ.
    pub(crate) fn consume(&mut self, cx: &mut Ctx, cpu: CpuId, q: Q) -> bool {
        let Some(d) = self.dsq(q) else { return false };
        let mut n = 0;
        let found = d.iter().find(|&(_, p)| {
            n += 1;
            cx.task(p).affinity.contains(cpu)
        });
        cx.compared(n);
        let Some((k, p)) = found else { return false };
        self.dsq_mut(q).remove(k);
        self.stats.consumes += 1;
        self.tasks[p].at = At::Off;
        self.place(cx, p, Q::Local(cpu), 0, None);
        true
    }

    /// `update_curr_scx`: the running task's slice shrinks by the time it ran.
    pub(crate) fn update_curr(&mut self, cx: &Ctx, cpu: CpuId) {
        let c = &mut self.cpus[cpu];
        let delta = cx.now.0.saturating_sub(c.exec_start.0);
        c.exec_start = cx.now;
        if let Some(p) = c.curr {
            let t = &mut self.tasks[p];
            if t.slice != SLICE_INF {
                t.slice = t.slice.saturating_sub(delta);
            }
        }
    }

    /// A move to a local DSQ that can no longer happen (the task's affinity changed on
    /// the way) falls back to the global DSQ, as an invalid local verdict does.
    pub(crate) fn revalidate_transit(&mut self, cx: &mut Ctx) {
        if self.transit.is_empty() {
            return;
        }
        let stale: Vec<TaskId> = self
            .transit
            .iter()
            .copied()
            .filter(|&p| matches!(self.tasks[p].at, At::Transit(c, _) if !cx.task(p).affinity.contains(c)))
            .collect();
        for p in stale {
            self.transit.remove(&p);
            let to = match self.tasks[p].at {
                At::Transit(c, _) => c,
                _ => continue,
            };
            let g = Q::Global(self.node_of[self.tasks[p].rq.unwrap_or(0)]);
            self.place(cx, p, g, 0, None);
            self.transit_dropped(cx, to);
        }
    }

    /// A move to `to`'s local DSQ that will not arrive (affinity changed on the way, the
    /// task left or ran elsewhere): `to`, kept out of the idle mask while the move was
    /// on its way (`update_idle`), rejoins it if it idles with nothing else coming, so
    /// `select_cpu_dfl` and `pick_idle` can claim it again.
    pub(crate) fn transit_dropped(&mut self, cx: &Ctx, to: CpuId) {
        let incoming = self.transit.iter().any(|&q| matches!(self.tasks[q].at, At::Transit(c, _) if c == to));
        if !incoming && self.cpus[to].curr.is_none() && cx.idle_cpu(to) {
            self.idle.insert(to);
        }
    }

    /// `check_rq_for_timeouts`: a runnable task that has not run for the timeout is a
    /// stall (`SCX_EXIT_ERROR_STALL`).
    pub(crate) fn watchdog(&mut self, cx: &Ctx) {
        let timeout = self.t.timeout_ms * 1_000_000;
        let stalled =
            self.tasks.iter().enumerate().find(|(_, t)| {
                t.rq.is_some() && t.runnable_at.is_some_and(|at| cx.now.0.saturating_sub(at.0) > timeout)
            });
        if let Some((p, t)) = stalled {
            let ms = cx.now.0.saturating_sub(t.runnable_at.map_or(0, |a| a.0)) / 1_000_000;
            let name = cx.task(p).name.clone();
            self.raise(
                "runnable task stall",
                &format!("{name}[{p}] failed to run for {}.{:03}s", ms / 1000, ms % 1000),
            );
        }
    }
}
