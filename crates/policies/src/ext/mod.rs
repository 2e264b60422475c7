//! sched_ext: a scheduling class whose decisions a policy written against [`ScxOps`]
//! makes, shaped like Linux's `struct sched_ext_ops` (`kernel/sched/ext.c`,
//! `include/linux/sched/ext.h`, v6.12; kfunc names of v6.13+).
//!
//! The kernel side ([`Ext`], `class.rs`) owns the dispatch queues (DSQs): one local DSQ
//! per CPU (the only queue a CPU runs tasks from), a global FIFO per NUMA node, and DSQs
//! the policy creates, each used either as a FIFO or ordered by `dsq_vtime`. A policy sees
//! callbacks (`select_cpu`, `enqueue`, `dispatch`, `running`, `stopping`, …) and calls
//! helpers on [`ScxCtx`] (`dsq_insert`, `dsq_move_to_local`, `kick_cpu`,
//! `select_cpu_dfl`, …) as a BPF scheduler calls kfuncs. The class sits below fair in the
//! chain (`chain/`): in partial mode only `policy = "ext"` tasks join it; in full mode
//! every normal, batch and idle task does. Misbehaviour (a stalled runnable task, an
//! invalid dispatch) ejects the policy and moves every task back to fair, with the reason
//! reported (`ext.c:scx_ops_error`, `scx_ops_disable_workfn`).
//!
//! Examples (`examples/`): `ext:simple` (`scx_simple`), `ext:central` (`scx_central`),
//! `ext:locality` (per-LLC queues). `docs/write-a-scheduler.md` is the tutorial.

mod class;
mod ctx;
mod dsq;
pub mod examples;
mod idle;
#[cfg(test)]
mod tests;
mod why;

pub use class::{Ext, ExtTunables, TUNABLES};
pub use ctx::ScxCtx;
use schedlab_machine::Machine;
use schedlab_sched_api::{SchedClass, Tunable};
use schedlab_sim::{CpuId, TaskId};

/// `SCX_DSQ_FLAG_BUILTIN`: ids with bit 63 set are the kernel's (`include/linux/sched/ext.h`).
pub const DSQ_FLAG_BUILTIN: u64 = 1 << 63;
/// `SCX_DSQ_FLAG_LOCAL_ON`: with the builtin flag, the low 32 bits name a CPU.
pub const DSQ_FLAG_LOCAL_ON: u64 = 1 << 62;
/// `SCX_DSQ_INVALID`.
pub const DSQ_INVALID: u64 = DSQ_FLAG_BUILTIN;
/// `SCX_DSQ_GLOBAL`: the global FIFO (one per NUMA node, `ext.c:find_global_dsq`).
pub const DSQ_GLOBAL: u64 = DSQ_FLAG_BUILTIN | 1;
/// `SCX_DSQ_LOCAL`: the local DSQ of the CPU the task is enqueued on (from `select_cpu`
/// and `enqueue`) or of the dispatching CPU (from `dispatch`).
pub const DSQ_LOCAL: u64 = DSQ_FLAG_BUILTIN | 2;
/// `SCX_DSQ_LOCAL_ON`: or-ed with a CPU number, that CPU's local DSQ.
pub const DSQ_LOCAL_ON: u64 = DSQ_FLAG_BUILTIN | DSQ_FLAG_LOCAL_ON;
/// `SCX_DSQ_LOCAL_CPU_MASK`.
pub const DSQ_LOCAL_CPU_MASK: u64 = 0xffff_ffff;

/// `SCX_DSQ_LOCAL_ON | cpu`.
pub fn local_on(cpu: CpuId) -> u64 {
    DSQ_LOCAL_ON | cpu as u64
}

/// `SCX_SLICE_DFL`: 20 ms.
pub const SLICE_DFL: u64 = 20_000_000;
/// `SCX_SLICE_INF`: never expires.
pub const SLICE_INF: u64 = u64::MAX;
/// `SCX_WATCHDOG_MAX_TIMEOUT`: 30 s, the default and the largest `timeout_ms`.
pub const WATCHDOG_MAX_TIMEOUT_MS: u64 = 30_000;
/// `SCX_DSP_DFL_MAX_BATCH`: inserts one `dispatch` call may make.
pub const DSP_MAX_BATCH: usize = 32;
/// `SCX_DSP_MAX_LOOPS`: `dispatch` rounds per pick before giving up.
pub const DSP_MAX_LOOPS: usize = 32;

/// Enqueue flags (`enum scx_enq_flags`, v6.12).
pub mod enq {
    /// `SCX_ENQ_WAKEUP`: the task is waking up.
    pub const WAKEUP: u64 = 1;
    /// `SCX_ENQ_HEAD`: insert at the head of a FIFO DSQ.
    pub const HEAD: u64 = 1 << 4;
    /// `SCX_ENQ_CPU_SELECTED`: `select_cpu` ran for this wakeup.
    pub const CPU_SELECTED: u64 = 1 << 10;
    /// `SCX_ENQ_PREEMPT`: into a local DSQ, at its head, and preempt the CPU's ext task.
    pub const PREEMPT: u64 = 1 << 32;
    /// `SCX_ENQ_LAST`: the CPU would otherwise go idle (only with `ops_flags::ENQ_LAST`).
    pub const LAST: u64 = 1 << 41;
}

/// Dequeue flags (`enum scx_deq_flags`).
pub mod deq {
    /// `SCX_DEQ_SLEEP`: the task is going to sleep.
    pub const SLEEP: u64 = 1;
}

/// `scx_bpf_kick_cpu` flags (`enum scx_kick_flags`).
pub mod kick {
    /// `SCX_KICK_IDLE`: only if the CPU is idle.
    pub const IDLE: u64 = 1;
    /// `SCX_KICK_PREEMPT`: zero the slice of the CPU's ext task, then reschedule it.
    pub const PREEMPT: u64 = 1 << 1;
}

/// `enum scx_ops_flags` a policy may declare.
pub mod ops_flags {
    /// `SCX_OPS_ENQ_LAST`: a task whose slice ran out is passed to `enqueue` with
    /// `enq::LAST` even if nothing else would run (otherwise it just keeps running).
    pub const ENQ_LAST: u64 = 1 << 1;
    /// `SCX_OPS_SWITCH_PARTIAL`: only `SCHED_EXT` tasks join (same as `switch_partial=1`).
    pub const SWITCH_PARTIAL: u64 = 1 << 3;
}

/// `vtime_before` as the example schedulers write it: wrap-safe `a < b`.
pub fn vtime_before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

/// A sched_ext policy: the callbacks of `struct sched_ext_ops` (`kernel/sched/ext.c`,
/// v6.12). Every callback has the kernel's default behaviour when not implemented.
/// Callbacks run with the runqueue lock held, atomically, and may call the helpers on
/// [`ScxCtx`] that the callback's context allows (`enum scx_kf_mask`): inserting a task
/// from `select_cpu`/`enqueue` (the task being placed) or `dispatch` (any task the policy
/// holds), `dsq_move_to_local` from `dispatch` only.
pub trait ScxOps {
    /// `ops.name`.
    fn name(&self) -> &'static str;
    /// `ops.flags` (`ops_flags::*`).
    fn flags(&self) -> u64 {
        0
    }
    /// The policy's knobs (command-line options of the example schedulers), from its
    /// [`schedlab_sched_api::TunableTable`] (`TunableTable::list`).
    fn tunables(&self) -> Vec<Tunable> {
        Vec::new()
    }
    /// Sets knob `key` (`TunableTable::set`); `Ok(false)` if it is not the policy's.
    fn set_tunable(&mut self, _key: &str, _value: &str) -> Result<bool, String> {
        Ok(false)
    }
    /// `ops.init`: the scheduler is loaded (create DSQs, start timers). `Err` fails the load.
    fn init(&mut self, _cx: &mut ScxCtx) -> Result<(), String> {
        Ok(())
    }
    /// `ops.select_cpu`: a CPU hint for a waking or new task; may insert `p` directly
    /// (then `enqueue` is skipped). Default: `scx_select_cpu_dfl`, and an idle CPU found
    /// gets the task in its local DSQ with the default slice (`select_task_rq_scx`).
    fn select_cpu(&mut self, cx: &mut ScxCtx, p: TaskId, prev_cpu: CpuId, wake_flags: u32) -> CpuId {
        let (cpu, idle) = cx.select_cpu_dfl(p, prev_cpu, wake_flags);
        if idle {
            cx.dsq_insert(p, DSQ_LOCAL, SLICE_DFL, 0);
        }
        cpu
    }
    /// `ops.enqueue`: `p` became runnable; insert it into a DSQ or keep it (then the
    /// policy must insert it from `dispatch` later, or the watchdog ejects the policy).
    /// Default: the global DSQ with the default slice.
    fn enqueue(&mut self, cx: &mut ScxCtx, p: TaskId, enq_flags: u64) {
        cx.dsq_insert(p, DSQ_GLOBAL, SLICE_DFL, enq_flags);
    }
    /// `ops.dequeue`: a task the policy holds leaves (sleep, property change).
    fn dequeue(&mut self, _cx: &mut ScxCtx, _p: TaskId, _deq_flags: u64) {}
    /// `ops.dispatch`: `cpu`'s local DSQ and the global DSQ are empty; fill the local DSQ
    /// (`dsq_insert` with `DSQ_LOCAL`, `dsq_move_to_local`). `prev`: the ext task that
    /// just ran here and is still runnable; doing nothing keeps it running.
    fn dispatch(&mut self, _cx: &mut ScxCtx, _cpu: CpuId, _prev: Option<TaskId>) {}
    /// `ops.runnable`: `p` became runnable (not for migrations).
    fn runnable(&mut self, _cx: &mut ScxCtx, _p: TaskId, _enq_flags: u64) {}
    /// `ops.running`: `p` starts running on its CPU.
    fn running(&mut self, _cx: &mut ScxCtx, _p: TaskId) {}
    /// `ops.stopping`: `p` stops running; `runnable`: it stays runnable.
    fn stopping(&mut self, _cx: &mut ScxCtx, _p: TaskId, _runnable: bool) {}
    /// `ops.quiescent`: `p` is no longer runnable (it sleeps).
    fn quiescent(&mut self, _cx: &mut ScxCtx, _p: TaskId, _deq_flags: u64) {}
    /// `ops.tick`: every scheduler tick while `p` runs; a zero slice reschedules.
    fn tick(&mut self, _cx: &mut ScxCtx, _p: TaskId) {}
    /// `ops.yield`: `p` calls `sched_yield`. Default (`yield_task_scx`): its slice ends.
    fn yield_task(&mut self, cx: &mut ScxCtx, p: TaskId) {
        cx.set_slice(p, 0);
    }
    /// `ops.set_weight`: `p`'s weight changed (nice; 100 is nice 0, 1..=10000).
    fn set_weight(&mut self, _cx: &mut ScxCtx, _p: TaskId, _weight: u32) {}
    /// `ops.set_cpumask`: `p`'s affinity changed (seen at its next enqueue).
    fn set_cpumask(&mut self, _cx: &mut ScxCtx, _p: TaskId) {}
    /// `ops.init_task`: a task is created while the scheduler is loaded. `Err` is an error.
    fn init_task(&mut self, _cx: &mut ScxCtx, _p: TaskId) -> Result<(), String> {
        Ok(())
    }
    /// `ops.enable`: `p` joins the scheduler (its first enqueue in the ext class).
    fn enable(&mut self, _cx: &mut ScxCtx, _p: TaskId) {}
    /// `ops.exit_task`: `p` exited.
    fn exit_task(&mut self, _cx: &mut ScxCtx, _p: TaskId) {}
    /// `ops.cpu_acquire`: the ext class gets `cpu` back after a higher class used it.
    fn cpu_acquire(&mut self, _cx: &mut ScxCtx, _cpu: CpuId) {}
    /// `ops.cpu_release`: a higher class (fair in partial mode, rt, deadline) takes `cpu`.
    fn cpu_release(&mut self, _cx: &mut ScxCtx, _cpu: CpuId) {}
    /// A timer the policy started with [`ScxCtx::timer_start`] expired on `cpu` (a BPF
    /// timer, `bpf_timer_start`).
    fn timer(&mut self, _cx: &mut ScxCtx, _cpu: CpuId) {}
    /// The policy's own statistics (the example schedulers' `stat_inc` counters).
    fn counters(&self) -> Vec<(String, u64)> {
        Vec::new()
    }
    /// An error the policy raised where no `ScxCtx` could take it (`counters`, read when
    /// the run ends): reported as the class's exit, as a callback's error would be.
    fn late_error(&self) -> Option<String> {
        None
    }
}

/// A sched_ext scheduler `ops` on `machine`: the chain (deadline > rt > fair > ext) with
/// the fair class of EEVDF 6.12 (the first release with sched_ext; `version=6.18` or any
/// eevdf version may be set). Each of the ext class, the policy's own knobs and the
/// chain/fair class takes the `--set`s its table has; a name none of them has is an error
/// listing every tunable of the policy.
pub fn build(m: &Machine, sets: &[(String, String)], mut ops: Box<dyn ScxOps>) -> Result<Box<dyn SchedClass>, String> {
    for (k, v) in sets {
        ops.set_tunable(k, v)?;
    }
    let t = ExtTunables::new(sets, ops.flags())?;
    let mut rest = vec![("version".to_string(), "6.12".to_string())];
    rest.extend_from_slice(sets);
    let version = rest.iter().rev().find(|(k, _)| k == "version").map(|(_, v)| v.trim().to_string());
    let fair_server = version.as_deref() != Some("6.6");
    let mut chain = crate::chain::Chain::new(m, &rest, fair_server, |r| crate::fair::Fair::eevdf(m, r))?;
    chain.attach_ext(Ext::new(m, ops, t));
    let who = format!("scheduler `{}`", chain.name());
    schedlab_sched_api::tunable::check_known(&who, sets, &chain.tunables())?;
    Ok(Box::new(chain))
}
