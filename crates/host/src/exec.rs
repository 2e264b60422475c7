//! A task thread: set its scheduling attributes, interpret its program with real system
//! calls, and report how it ended. Mirrors `crates/kernel/src/exec.rs` op by op.

use crate::objects::ObjError;
use crate::sys;
use crate::tasks::{Run, Slot};
use schedlab_sim::Distribution;
use schedlab_workload::{NamedTimer, Op, Policy, Program};
use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::sync::Arc;

/// Why a program stopped before its end.
enum End {
    /// The run is stopping (end of the duration, Ctrl-C, another task failed).
    Stopped,
    /// An `exit` op.
    Exit,
    Failed(String),
}

impl From<ObjError> for End {
    fn from(e: ObjError) -> End {
        match e {
            ObjError::Interrupted => End::Stopped,
            ObjError::Failed(m) => End::Failed(m),
        }
    }
}

impl From<crate::objects::Interrupted> for End {
    fn from(_: crate::objects::Interrupted) -> End {
        End::Stopped
    }
}

/// The `sched_attr` of a policy (`include/uapi/linux/sched.h` numbers) with the task's nice
/// and, for the fair policies, its custom slice (`runtime`).
fn sched_attr(p: Policy, nice: i32, slice: u64) -> sys::SchedAttr {
    let fair = |policy: u32| sys::SchedAttr { policy, nice, runtime: slice, ..Default::default() };
    match p {
        Policy::Normal => fair(libc::SCHED_OTHER as u32),
        Policy::Batch => fair(libc::SCHED_BATCH as u32),
        Policy::Idle => fair(libc::SCHED_IDLE as u32),
        // `SCHED_EXT` (v6.12): the kernel runs it in the fair class while no sched_ext
        // scheduler is loaded; older kernels refuse it (EINVAL).
        Policy::Ext => fair(7),
        Policy::Fifo { prio } => rt(libc::SCHED_FIFO as u32, prio, nice),
        Policy::Rr { prio } => rt(libc::SCHED_RR as u32, prio, nice),
        Policy::Deadline(d) => sys::SchedAttr {
            policy: 6, // SCHED_DEADLINE
            nice,
            runtime: d.runtime,
            deadline: d.deadline,
            period: d.period,
            ..Default::default()
        },
    }
}

fn rt(policy: u32, prio: u8, nice: i32) -> sys::SchedAttr {
    sys::SchedAttr { policy, nice, priority: u32::from(prio), ..Default::default() }
}

/// `sched_setattr` of `p` on the calling thread; a deadline refusal says why.
fn apply_policy(p: Policy, nice: i32, slice: u64) -> Result<(), String> {
    sys::set_attr(sys::gettid(), &sched_attr(p, nice, slice)).map_err(|e| {
        let hint = if matches!(p, Policy::Deadline(_)) && e == libc::EBUSY {
            " (deadline admission: the total runtime/period would exceed the rt bandwidth, \
             kernel.sched_rt_runtime_us / sched_rt_period_us per CPU)"
        } else {
            ""
        };
        format!("sched_setattr({p:?}): {}{hint}", sys::strerror(e))
    })
}

/// The template's nice, policy and affinity, set by the new thread on itself before its
/// first op (a clone inherits its creator's; the simulator creates tasks with the
/// template's).
fn set_attributes(run: &Run, slot: &Slot, tid: i32) -> Result<(), String> {
    let tpl = &run.wl.templates[slot.template()];
    let name = slot.name(&run.wl);
    if let Some(s) = tpl.session {
        start_session(&run.wl.groups.sessions[s]).map_err(|m| format!("task `{name}`: {m}"))?;
    }
    // A group named by the template; without one the thread stays in its creator's cgroup
    // (the kernel's fork inherits it), as the simulator gives a forked task its parent's.
    if let Some(g) = tpl.group {
        let group = &run.wl.groups.cgroups[g].name;
        crate::cgroup::enter(&run.group_files[g], tid).map_err(|m| format!("task `{name}`: group `{group}`: {m}"))?;
    }
    let slice = slot.slice.load(SeqCst);
    apply_policy(tpl.policy, tpl.nice, slice).map_err(|m| format!("task `{name}`: {m}"))?;
    if let Some(set) = &tpl.affinity {
        set_affinity(0, set).map_err(|m| format!("task `{name}`: {m}"))?;
    }
    Ok(())
}

/// `setsid` (a process task: the limits allow sessions only there), and the session's
/// autogroup nice (`/proc/self/autogroup`) when it is not 0.
fn start_session(s: &schedlab_workload::SessionDef) -> Result<(), String> {
    nix::unistd::setsid().map_err(|e| format!("setsid: {e}"))?;
    if s.nice != 0 {
        std::fs::write("/proc/self/autogroup", s.nice.to_string())
            .map_err(|e| format!("session `{}`: autogroup nice {}: {e}", s.name, s.nice))?;
    }
    Ok(())
}

/// `sched_setaffinity(tid, set)` (0 = the calling thread).
pub fn set_affinity(tid: i32, set: &schedlab_machine::CpuSet) -> Result<(), String> {
    let mut cs = nix::sched::CpuSet::new();
    for c in set.iter() {
        cs.set(c).map_err(|e| format!("CPU {c}: {e}"))?;
    }
    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(tid), &cs).map_err(|e| format!("sched_setaffinity: {e}"))
}

/// Entry point of a task thread.
pub fn task_main(run: &Arc<Run>, idx: usize, prog: &Program) {
    let slot = run.slot(idx);
    let tid = sys::gettid();
    slot.tgid.store(std::process::id() as i32, SeqCst);
    slot.tid.store(tid, SeqCst);
    run.registered();
    let end = match set_attributes(run, slot, tid) {
        Ok(()) => Interp {
            run,
            idx,
            prog,
            pc: 0,
            loops: Vec::new(),
            timers: Vec::new(),
            rt_timers: Vec::new(),
            started: sys::monotonic_ns(),
            poll_next: Vec::new(),
            policy: run.wl.templates[slot.template()].policy,
        }
        .run(),
        Err(m) => Err(End::Failed(m)),
    };
    let natural = match end {
        Ok(()) => true,
        Err(End::Failed(m)) => {
            run.fail(m);
            false
        }
        Err(_) => false,
    };
    finish(run, slot, natural);
    linger_for_processes(run, slot);
}

/// A task that forked processes stays as a parked thread until they have ended: their
/// parent-death signal (`PR_SET_PDEATHSIG`, sent when the forking *thread* exits) must only
/// fire when schedlab itself dies.
fn linger_for_processes(run: &Run, slot: &Slot) {
    if !slot.forked_process.load(SeqCst) {
        return;
    }
    loop {
        let v = slot.live_children.load(SeqCst);
        if v == 0 {
            return;
        }
        let _ = sys::futex_wait(&slot.live_children, v, run.objs.private);
    }
}

/// Records the task's final procfs statistics and, if its program ended by itself, its exit
/// time; tells its parent.
fn finish(run: &Run, slot: &Slot, natural: bool) {
    if let Ok(st) = crate::procstat::read_self() {
        slot.set_final_stats(&st);
    }
    if natural {
        slot.exit_ns.store(sys::monotonic_ns(), SeqCst);
    }
    slot.done.store(true, SeqCst);
    if let Some(p) = slot.parent() {
        let parent = run.slot(p);
        parent.live_children.fetch_sub(1, SeqCst);
        sys::futex_wake(&parent.live_children, u32::MAX, run.objs.private);
    }
}

struct Interp<'a> {
    run: &'a Arc<Run>,
    /// The task's policy now (the template's, then each `set_policy`'s).
    policy: Policy,
    idx: usize,
    prog: &'a Program,
    pc: usize,
    loops: Vec<u64>,
    /// `(pc of a timer op, its next absolute expiry)`.
    timers: Vec<(usize, u64)>,
    /// `(NamedTimer::id, next absolute expiry)` of the task's own rt-app timers.
    rt_timers: Vec<(usize, u64)>,
    /// When the task started (rt-app's `t_first`, where its named timers count from).
    started: u64,
    /// Per `poll` set: where its next scan starts.
    poll_next: Vec<usize>,
}

impl Interp<'_> {
    fn stopping(&self) -> bool {
        self.run.objs.stop_flag().load(Relaxed)
    }

    /// A duration for this use of `d`: constants directly, others from the shared stream.
    fn draw(&self, d: &Distribution) -> u64 {
        match d {
            Distribution::Constant(v) => v.0,
            _ => self.run.draw(|rng| d.sample(rng)).0,
        }
    }

    fn run(&mut self) -> Result<(), End> {
        while let Some(op) = self.prog.ops.get(self.pc) {
            if self.stopping() {
                return Err(End::Stopped);
            }
            match self.op(op) {
                Ok(()) => {}
                Err(End::Exit) => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn op(&mut self, op: &Op) -> Result<(), End> {
        let objs = &self.run.objs;
        match op {
            Op::Loop { count, end } => match count {
                Some(0) => {
                    self.pc = end + 1;
                    return Ok(());
                }
                Some(c) => self.loops.push(*c),
                None => self.loops.push(u64::MAX),
            },
            Op::EndLoop { start } => {
                let top = self.loops.last_mut().ok_or_else(|| End::Failed("loop stack underflow".into()))?;
                if *top != u64::MAX {
                    *top -= 1;
                }
                if *top > 0 {
                    self.pc = start + 1;
                    return Ok(());
                }
                self.loops.pop();
            }
            Op::Run(d) => self.run_cpu(self.draw(d))?,
            Op::Spin(d) => self.spin(self.draw(d))?,
            Op::Sleep(d) => self.sleep_until(sys::monotonic_ns() + self.draw(d))?,
            Op::Timer { period, named } => self.timer(period.0, *named)?,
            Op::Yield => {
                // SAFETY: no arguments.
                unsafe { libc::sched_yield() };
            }
            Op::Fork { template, count } => {
                for _ in 0..*count {
                    self.run.spawn(*template, Some(self.idx)).map_err(End::Failed)?;
                }
            }
            Op::Wait => self.wait_children()?,
            Op::Exit => return Err(End::Exit),
            Op::Send { pipe, bytes, .. } => objs.send(*pipe, *bytes)?,
            Op::Futex(f) => objs.futex(f)?,
            Op::Recv { pipe, bytes } => objs.recv(*pipe, *bytes)?,
            Op::Lock(m) => objs.lock(*m)?,
            Op::Unlock(m) => objs.unlock(*m),
            Op::CondWait { cond, mutex } => objs.cond_wait(*cond, *mutex)?,
            Op::Signal(c) => objs.signal(*c, false),
            Op::Broadcast(c) => objs.signal(*c, true),
            Op::Barrier(b) => objs.barrier(*b)?,
            Op::SpinBarrier { barrier, spin } => objs.spin_barrier(*barrier, spin.0)?,
            Op::Poll { set } => {
                let ps = &self.prog.polls[*set];
                let from = self.poll_next.get(*set).copied().unwrap_or(0);
                let i = objs.poll(&ps.pipes, from)?;
                if self.poll_next.len() < self.prog.polls.len() {
                    self.poll_next.resize(self.prog.polls.len(), 0);
                }
                self.poll_next[*set] = (i + 1) % ps.pipes.len();
                self.pc = ps.arms[i];
                return Ok(());
            }
            Op::Jump(to) => {
                self.pc = *to;
                return Ok(());
            }
            Op::MarkBegin { .. } | Op::MarkEnd { .. } => {
                return Err(End::Failed("mark_begin/mark_end are simulation-only (refused up front)".into()))
            }
            Op::SetNice(n) => {
                sys::set_nice(sys::gettid(), *n)
                    .map_err(|e| End::Failed(format!("setpriority({n}): {}", sys::strerror(e))))?;
                self.run.slot(self.idx).nice.store(*n, SeqCst);
            }
            Op::SetAffinity(set) => set_affinity(0, set).map_err(End::Failed)?,
            // The machine's cost model only: a host task touches what it touches.
            Op::Memory(_) => {}
            Op::SetSlice(s) => self.set_slice(s.map_or(0, |s| s.0))?,
            Op::SetPolicy { policy, .. } => {
                let slot = self.run.slot(self.idx);
                apply_policy(*policy, slot.nice.load(SeqCst), slot.slice.load(SeqCst)).map_err(End::Failed)?;
                self.policy = *policy;
            }
        }
        self.pc += 1;
        Ok(())
    }

    /// `set_slice`: `sched_setattr` with the task's policy and nice and a new runtime.
    fn set_slice(&self, ns: u64) -> Result<(), End> {
        let slot = self.run.slot(self.idx);
        apply_policy(self.policy, slot.nice.load(SeqCst), ns).map_err(End::Failed)?;
        slot.slice.store(ns, SeqCst);
        Ok(())
    }

    /// `run`: use `ns` of CPU time (time off the CPU does not count, as in the simulator).
    ///
    /// The thread CPU clock is a system call whose read updates the running task's run time
    /// (`kernel/sched/cputime.c`/`core.c: task_sched_runtime` → `update_curr`), and under
    /// EEVDF `update_curr` ends an expired slice at once (`kernel/sched/fair.c:
    /// update_deadline` → `resched_curr`, v6.6+). Polled in a tight loop, it would make the
    /// kernel preempt at slice granularity rather than at the tick, unlike a CPU-bound
    /// program. So the work spins on the wall clock (vDSO `CLOCK_MONOTONIC`, which does not
    /// touch the scheduler) for the CPU time still owed, and reads the CPU clock only then:
    /// time off the CPU during a spin is owed again, so a `run` reads it a few times.
    fn run_cpu(&self, ns: u64) -> Result<(), End> {
        let start = sys::thread_cpu_ns();
        loop {
            let used = sys::thread_cpu_ns().saturating_sub(start);
            if used >= ns {
                return Ok(());
            }
            self.spin(ns - used)?;
        }
    }

    /// `spin`: busy-wait on the wall clock.
    fn spin(&self, ns: u64) -> Result<(), End> {
        let deadline = sys::monotonic_ns() + ns;
        while sys::monotonic_ns() < deadline {
            if self.stopping() {
                return Err(End::Stopped);
            }
            std::hint::spin_loop();
        }
        Ok(())
    }

    fn sleep_until(&self, deadline: u64) -> Result<(), End> {
        loop {
            match sys::sleep_until(deadline) {
                Ok(()) => return Ok(()),
                Err(libc::EINTR) if self.stopping() => return Err(End::Stopped),
                Err(libc::EINTR) => {}
                Err(e) => return Err(End::Failed(format!("clock_nanosleep: {}", sys::strerror(e)))),
            }
        }
    }

    /// rt-app periodic timer: the next absolute multiple of the period counted from the first
    /// call; no sleep when already late. `named` (id, relative): one of the task's rt-app
    /// timers, counted from the task's start; after an overrun a relative one restarts now.
    fn timer(&mut self, period: u64, named: Option<NamedTimer>) -> Result<(), End> {
        let now = sys::monotonic_ns();
        if let Some(nt) = named {
            let next = if nt.shared {
                self.shared_timer_next(nt, period, now)
            } else {
                let i = match self.rt_timers.iter().position(|(t, _)| *t == nt.id) {
                    Some(i) => i,
                    None => {
                        self.rt_timers.push((nt.id, self.started));
                        self.rt_timers.len() - 1
                    }
                };
                let next = self.rt_timers[i].1 + period;
                self.rt_timers[i].1 = if next <= now && nt.relative { now } else { next };
                next
            };
            return if next > now { self.sleep_until(next) } else { Ok(()) };
        }
        let pc = self.pc;
        let next = match self.timers.iter_mut().find(|(p, _)| *p == pc) {
            Some((_, n)) => {
                *n += period;
                *n
            }
            None => {
                self.timers.push((pc, now + period));
                now + period
            }
        };
        if next > now {
            self.sleep_until(next)?;
        }
        Ok(())
    }

    /// The expiry a use of shared timer `nt` waits for: one timeline for every task naming
    /// it (rt-app's timer resource, `rt-app.c:run_event`, case `rtapp_timer`), started at
    /// the start of the first task to use it, each use advancing it by `period`. rt-app
    /// updates the resource's `t_next` unguarded; here the read-advance-store is one
    /// compare-and-swap on the shared mapping, so two tasks (threads or processes) never
    /// take the same period.
    fn shared_timer_next(&self, nt: NamedTimer, period: u64, now: u64) -> u64 {
        let cell = &self.run.objs.timers[nt.id];
        let mut last = cell.load(SeqCst);
        loop {
            let next = if last == 0 { self.started } else { last } + period;
            // After an overrun a relative timer restarts from now; an absolute one keeps
            // its grid.
            let keep = if next <= now && nt.relative { now } else { next };
            match cell.compare_exchange(last, keep, SeqCst, SeqCst) {
                Ok(_) => return next,
                Err(seen) => last = seen,
            }
        }
    }

    /// `wait`: until every child has exited (a futex on the live-children count).
    fn wait_children(&self) -> Result<(), End> {
        let me = self.run.slot(self.idx);
        loop {
            let v = me.live_children.load(SeqCst);
            if v == 0 {
                return Ok(());
            }
            if sys::futex_wait(&me.live_children, v, self.run.objs.private) == Err(libc::EINTR) && self.stopping() {
                return Err(End::Stopped);
            }
        }
    }
}
