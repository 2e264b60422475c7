//! Executing task programs: user work, and the syscalls that enter the kernel.

use crate::vocab::{Action, Flow, FutexKey, Step};
use crate::{Kernel, TState};
use schedlab_machine::{KernelPath, LockSite};
use schedlab_sim::Distribution;
use schedlab_sim::{CpuId, Ns, TaskId};
use schedlab_workload::{NamedTimer, Op};

/// Outcome of the user-space part of a mutex lock.
enum LockStep {
    Acquired,
    Wait,
}

impl Kernel<'_> {
    pub(crate) fn next_op(&mut self, t: TaskId) {
        let task = &mut self.tasks[t];
        task.pc += 1;
        task.op_left = None;
        task.op_phase = 0;
        task.op_aux = 0;
    }

    /// A `run` or `spin` finished.
    pub(crate) fn user_op_done(&mut self, t: TaskId) {
        let task = &self.tasks[t];
        if let Some(Op::SpinBarrier { .. }) = task.prog.ops.get(task.pc) {
            self.spin_done(t);
        } else {
            self.next_op(t);
        }
    }

    /// Syscall entry and exit, charged to the syscall's path.
    fn syscall(&self, path: KernelPath) -> Step {
        Step::Delay(path, self.machine.costs.syscall)
    }

    /// `clock_nanosleep` until `until`: syscall entry, arming the hrtimer in the task's own
    /// context (charged to its run time, as `sum_exec_runtime` charges it), then blocking.
    /// Queued to run next on `cpu`, straight to the front of its step queue: neither
    /// through an array (`extend` copied it through `memcpy`) nor through the op buffer.
    fn sleep_steps(&mut self, cpu: CpuId, t: TaskId, until: Ns) {
        let (syscall, arm) = (self.syscall(KernelPath::Timer), self.machine.costs.hrtimer_start);
        let ks = &mut self.cpus[cpu].kstack;
        ks.push_front(Step::Do(Action::SleepUntil { task: t, until }));
        ks.push_front(Step::Delay(KernelPath::Timer, arm));
        ks.push_front(syscall);
    }

    fn futex_steps(&mut self, key: FutexKey, action: Action) -> [Step; 2] {
        let b = self.objs.bucket(key);
        let lock = self.lock_id(schedlab_probe::LockName::FutexBucket(b));
        let c = &self.machine.costs;
        [
            Step::Delay(KernelPath::Futex, c.syscall + c.futex),
            Step::Locked {
                locks: [lock, lock],
                n: 1,
                got: 0,
                site: LockSite::FutexBucket,
                hold: c.futex_bucket_hold,
                action,
            },
        ]
    }

    pub(crate) fn futex_wait_steps(&mut self, t: TaskId, key: FutexKey, expected: u64) -> [Step; 2] {
        self.futex_wait(t, key, expected)
    }

    pub(crate) fn futex_wake_steps(&mut self, key: FutexKey, n: u64) -> [Step; 2] {
        self.futex_wake(key, n)
    }

    fn futex_wait(&mut self, t: TaskId, key: FutexKey, expected: u64) -> [Step; 2] {
        self.futex_steps(key, Action::FutexWait { task: t, key, expected })
    }

    fn futex_wake(&mut self, key: FutexKey, n: u64) -> [Step; 2] {
        self.futex_steps(key, Action::FutexWake { key, n })
    }

    /// The user-space mutex lock (glibc `lll_lock`): CAS 0→1; on failure, loop on
    /// `xchg(word, 2)` and `futex_wait(word, 2)`. `phase` 0 = first try, 1 = retry.
    fn mutex_lock(&mut self, t: TaskId, m: usize, phase: &mut u8, steps: &mut Vec<Step>) -> LockStep {
        let mx = &mut self.objs.mutexes[m];
        if *phase == 0 {
            if mx.word == 0 {
                mx.word = 1;
                mx.owner = Some(t);
                self.vip_acquired(FutexKey::Mutex(m));
                return LockStep::Acquired;
            }
            *phase = 1;
        }
        let old = std::mem::replace(&mut mx.word, 2);
        if old == 0 {
            mx.owner = Some(t);
            self.vip_acquired(FutexKey::Mutex(m));
            return LockStep::Acquired;
        }
        steps.extend(self.futex_wait(t, FutexKey::Mutex(m), 2));
        LockStep::Wait
    }

    /// The user-space unlock: `xchg(word, 0)`; if it was 2, `futex_wake(word, 1)`.
    fn mutex_unlock(&mut self, m: usize, steps: &mut Vec<Step>) {
        let mx = &mut self.objs.mutexes[m];
        let old = std::mem::replace(&mut mx.word, 0);
        if let Some(o) = mx.owner.take() {
            self.vip_release(o);
        }
        if old == 2 {
            steps.extend(self.futex_wake(FutexKey::Mutex(m), 1));
        }
    }

    /// Runs task `t`'s program on `cpu` from its current op until it needs time: user work
    /// (busy until done) or a syscall (kernel steps queued on the CPU).
    /// No allocation and no copy per operation: the ops are borrowed from the shared
    /// program (one non-atomic reference count per call) and their kernel steps go through a reused
    /// buffer.
    pub(crate) fn run_task(&mut self, cpu: CpuId, t: TaskId) {
        let mut steps = std::mem::take(&mut self.scratch);
        self.run_ops(cpu, t, &mut steps);
        steps.clear();
        self.scratch = steps;
    }

    /// The interpreter loop: runs ops until one needs time (user work, or kernel steps,
    /// which are queued on `cpu` from `steps`) or the program ends (`exit`).
    fn run_ops(&mut self, cpu: CpuId, t: TaskId, steps: &mut Vec<Step>) {
        // A task's program never changes: held here, its ops are read without copying them.
        let prog = std::rc::Rc::clone(&self.tasks[t].prog);
        let mut guard = 0u32;
        loop {
            guard += 1;
            if guard > 100_000 {
                let task = &self.tasks[t];
                let at =
                    task.prog.origin.get(task.pc).map(|o| format!(" (line {}, `{}`)", o.0, o.1)).unwrap_or_default();
                self.fail(format!(
                    "task {} ran 100000 operations without using time at {}{at}: a loop makes no progress",
                    self.info[t].name, self.now
                ));
                return;
            }
            let pc = self.tasks[t].pc;
            let Some(op) = prog.ops.get(pc) else {
                let exit = Step::Delay(KernelPath::ForkExit, self.machine.costs.exit + self.mm_exit_ns(t));
                self.push_steps(cpu, [exit, Step::Do(Action::Exit { task: t })]);
                return;
            };
            steps.clear();
            match self.run_op(cpu, t, pc, op, steps) {
                Flow::Continue => continue,
                Flow::User => return,
                Flow::Kernel => {
                    self.push_steps_vec(cpu, steps);
                    return;
                }
            }
        }
    }

    /// One op of task `t` (at `pc`), by kind; kernel steps it needs go to `steps`.
    #[inline]
    fn run_op(&mut self, cpu: CpuId, t: TaskId, pc: usize, op: &Op, steps: &mut Vec<Step>) -> Flow {
        match op {
            Op::Run(d) => self.op_run(cpu, t, d),
            Op::Spin(d) => self.op_spin(cpu, t, d),
            Op::Loop { count, end } => self.op_loop(t, *count, *end),
            Op::EndLoop { start } => self.op_end_loop(t, *start),
            Op::Jump(to) => self.op_jump(t, *to),
            Op::MarkBegin { span, id } => self.op_mark(t, *span, *id, true),
            Op::MarkEnd { span, id } => self.op_mark(t, *span, *id, false),
            Op::Sleep(d) => self.op_sleep(cpu, t, d),
            Op::Timer { period, named } => self.op_timer(cpu, t, pc, *period, *named),
            Op::Yield => self.op_yield(cpu, t, steps),
            Op::Fork { template, count } => self.op_fork(cpu, t, *template, *count, steps),
            Op::Wait => self.op_wait(t, steps),
            Op::Exit => {
                steps.push(Step::Delay(KernelPath::ForkExit, self.machine.costs.exit + self.mm_exit_ns(t)));
                steps.push(Step::Do(Action::Exit { task: t }));
                Flow::Kernel
            }
            Op::Send { pipe, bytes, .. } => self.op_pipe(cpu, t, *pipe, *bytes, true),
            Op::Recv { pipe, bytes } => self.op_pipe(cpu, t, *pipe, *bytes, false),
            Op::Lock(m) => self.op_lock(t, *m, steps),
            Op::Unlock(m) => {
                self.next_op(t);
                self.mutex_unlock(*m, steps);
                kernel_if_any(steps)
            }
            Op::CondWait { cond, mutex } => self.op_cond_wait(t, *cond, *mutex, steps),
            Op::Signal(c) => self.op_signal(t, *c, 1, steps),
            Op::Broadcast(c) => self.op_signal(t, *c, u64::MAX, steps),
            Op::Barrier(b) => self.op_barrier(t, *b, steps),
            Op::SpinBarrier { barrier, spin } => self.spin_barrier(cpu, t, *barrier, *spin, steps),
            Op::Poll { set } => {
                self.poll_op(t, *set, steps);
                Flow::Kernel
            }
            Op::Futex(f) => match self.futex_user(t, f, steps) {
                true => Flow::Continue,
                false => Flow::Kernel,
            },
            Op::SetNice(n) => self.op_setattr(cpu, t, Action::SetNice { task: t, nice: *n }, steps),
            Op::SetAffinity(set) => self.op_setattr(cpu, t, Action::SetAffinity { task: t, set: set.clone() }, steps),
            Op::SetSlice(slice) => {
                self.op_setattr(cpu, t, Action::SetSlice { task: t, slice: slice.map(|s| s.0) }, steps)
            }
            Op::SetPolicy { policy, at } => {
                self.op_setattr(cpu, t, Action::SetPolicy(Box::new((t, *policy, *at))), steps)
            }
            Op::Memory(phase) => {
                self.next_op(t);
                self.mem_phase(cpu, t, *phase);
                Flow::Continue
            }
        }
    }

    /// `run`: user work, its length drawn when the op starts (plus any cache re-warm owed)
    /// and kept across preemptions.
    fn op_run(&mut self, cpu: CpuId, t: TaskId, d: &Distribution) -> Flow {
        // A refill the cost model charged since it last ran comes first (`cache.rs`).
        let owed = self.take_owed(t);
        let left = match self.tasks[t].op_left {
            Some(l) if owed.0 == 0 => l,
            Some(l) => {
                self.tasks[t].op_left = Some(l + owed);
                l + owed
            }
            None => {
                let l = d.sample(&mut self.wl_rng) + std::mem::take(&mut self.tasks[t].rewarm) + owed;
                self.tasks[t].op_left = Some(l);
                l
            }
        };
        if left.0 == 0 {
            self.next_op(t);
            return Flow::Continue;
        }
        self.start_user(cpu, left, false);
        Flow::User
    }

    /// `spin`: busy-waiting until a wall-clock deadline drawn when the op starts.
    fn op_spin(&mut self, cpu: CpuId, t: TaskId, d: &Distribution) -> Flow {
        let deadline = match self.tasks[t].op_left {
            Some(l) => l,
            None => {
                let l = self.now + d.sample(&mut self.wl_rng);
                self.tasks[t].op_left = Some(l);
                l
            }
        };
        if deadline <= self.now {
            self.next_op(t);
            return Flow::Continue;
        }
        // A deadline in wall-clock time: a busy sibling does not move it.
        self.start_user(cpu, deadline - self.now, true);
        Flow::User
    }

    /// The start of a loop: push its iteration count (`u64::MAX`: forever), or skip a loop
    /// of none.
    fn op_loop(&mut self, t: TaskId, count: Option<u64>, end: usize) -> Flow {
        match count {
            Some(0) => {
                self.tasks[t].pc = end + 1;
                return Flow::Continue;
            }
            Some(c) => push_small(&mut self.tasks[t].loops, c),
            None => push_small(&mut self.tasks[t].loops, u64::MAX),
        }
        self.next_op(t);
        Flow::Continue
    }

    /// The end of a loop body: back to its start while iterations remain.
    fn op_end_loop(&mut self, t: TaskId, start: usize) -> Flow {
        let task = &mut self.tasks[t];
        let top = task.loops.last_mut().expect("loop stack matches program");
        if *top != u64::MAX {
            *top -= 1;
        }
        if *top > 0 {
            task.pc = start + 1;
        } else {
            task.loops.pop();
            task.pc += 1;
        }
        Flow::Continue
    }

    /// The end of a `poll` arm: continue at `to`.
    fn op_jump(&mut self, t: TaskId, to: usize) -> Flow {
        let task = &mut self.tasks[t];
        task.pc = to;
        task.op_left = None;
        task.op_phase = 0;
        task.op_aux = 0;
        Flow::Continue
    }

    /// `mark_begin` / `mark_end`: open or close a named span (an error ends the run).
    fn op_mark(&mut self, t: TaskId, span: usize, id: u64, begin: bool) -> Flow {
        self.mark(t, span, id, begin);
        if self.fatal.is_some() {
            return Flow::User;
        }
        self.next_op(t);
        Flow::Continue
    }

    /// `sleep`: `clock_nanosleep` for a drawn duration, from the syscall's entry.
    fn op_sleep(&mut self, cpu: CpuId, t: TaskId, d: &Distribution) -> Flow {
        let until = self.now + self.machine.costs.syscall + d.sample(&mut self.wl_rng);
        self.next_op(t);
        self.sleep_steps(cpu, t, until);
        Flow::Kernel
    }

    /// `timer`: rt-app's periodic timer (`rt_timer.rs`); no sleep when the period is over.
    fn op_timer(&mut self, cpu: CpuId, t: TaskId, pc: usize, period: Ns, named: Option<NamedTimer>) -> Flow {
        let next = self.timer_next(t, pc, period, named);
        self.next_op(t);
        self.objs.stats.timers += 1;
        if next <= self.now {
            self.objs.stats.timer_overruns += 1;
            return Flow::Continue; // overrun: rt-app does not sleep when the period is already over
        }
        self.sleep_steps(cpu, t, next);
        Flow::Kernel
    }

    /// `yield`: `sched_yield` under the runqueue lock.
    fn op_yield(&mut self, cpu: CpuId, t: TaskId, steps: &mut Vec<Step>) -> Flow {
        self.next_op(t);
        steps.push(self.syscall(KernelPath::SchedSyscall));
        let hold = self.machine.costs.schedule;
        steps.push(self.locked1(cpu, LockSite::Setattr, hold, Action::Yield { task: t }));
        Flow::Kernel
    }

    /// `fork`: `count` `clone`s of children running `template`.
    fn op_fork(&mut self, cpu: CpuId, t: TaskId, template: usize, count: u64, steps: &mut Vec<Step>) -> Flow {
        self.next_op(t);
        for _ in 0..count {
            let fork = self.machine.costs.fork + self.mm_fork_ns(template);
            steps.push(Step::Delay(KernelPath::ForkExit, fork));
            steps.push(self.fork_step(cpu, t, template));
        }
        kernel_if_any(steps)
    }

    /// `wait`: `wait4` until every child has exited (no syscall without children).
    fn op_wait(&mut self, t: TaskId, steps: &mut Vec<Step>) -> Flow {
        if self.tasks[t].live_children == 0 {
            self.next_op(t);
            return Flow::Continue;
        }
        steps.push(self.syscall(KernelPath::ForkExit));
        steps.push(Step::Do(Action::WaitChildren { task: t }));
        Flow::Kernel
    }

    /// `send` / `recv` on a pipe or socket: the syscall and the copy of what is left to
    /// transfer, then the write or read under the pipe's rules (`core.rs`).
    fn op_pipe(&mut self, cpu: CpuId, t: TaskId, pipe: usize, bytes: u64, send: bool) -> Flow {
        let task = &mut self.tasks[t];
        if task.op_phase == 0 {
            task.op_phase = 1;
            task.op_aux = bytes;
        }
        let left = task.op_aux;
        if left == 0 {
            self.next_op(t);
            return Flow::Continue;
        }
        let c = &self.machine.costs;
        let copy = Ns(left.saturating_mul(c.pipe_byte_ps) / 1000);
        let call = if self.objs.pipes[pipe].socket { c.socket_op } else { c.pipe_op };
        let delay = Step::Delay(KernelPath::Pipe, c.syscall + call + copy);
        let act = Step::Do(if send { Action::PipeWrite { task: t, pipe } } else { Action::PipeRead { task: t, pipe } });
        // Straight to the front of the CPU's step queue, not through the buffer.
        let ks = &mut self.cpus[cpu].kstack;
        ks.push_front(act);
        ks.push_front(delay);
        Flow::Kernel
    }

    /// `lock`: the user-space mutex lock, continuing its phase after a wait.
    fn op_lock(&mut self, t: TaskId, m: usize, steps: &mut Vec<Step>) -> Flow {
        let mut phase = self.tasks[t].op_phase;
        let r = self.mutex_lock(t, m, &mut phase, steps);
        self.tasks[t].op_phase = phase;
        if let LockStep::Acquired = r {
            self.next_op(t);
            return Flow::Continue;
        }
        Flow::Kernel
    }

    /// `cond_wait` (glibc `pthread_cond_wait` over the sequence word). Phases: 0 register
    /// and unlock, 1 `futex_wait`, 2.. relock (the mutex's phases 0/1 as 3/4).
    fn op_cond_wait(&mut self, t: TaskId, cond: usize, mutex: usize, steps: &mut Vec<Step>) -> Flow {
        let task = &mut self.tasks[t];
        match task.op_phase {
            0 => {
                let cv = &mut self.objs.conds[cond];
                cv.waiters += 1;
                task.op_aux = cv.seq;
                task.op_phase = 1;
                self.mutex_unlock(mutex, steps);
                kernel_if_any(steps)
            }
            1 => {
                task.op_phase = 2;
                let seq = task.op_aux;
                steps.extend(self.futex_wait(t, FutexKey::Cond(cond), seq));
                Flow::Kernel
            }
            _ => {
                if task.op_phase == 2 {
                    self.objs.conds[cond].waiters -= 1;
                }
                let mut phase = self.tasks[t].op_phase.saturating_sub(2).min(1);
                let r = self.mutex_lock(t, mutex, &mut phase, steps);
                self.tasks[t].op_phase = 3 + phase;
                if let LockStep::Acquired = r {
                    self.next_op(t);
                    return Flow::Continue;
                }
                Flow::Kernel
            }
        }
    }

    /// `signal` (`n` = 1) / `broadcast` (`n` = all): bump the sequence word; `futex_wake`
    /// only if someone waits (glibc counts its waiters).
    fn op_signal(&mut self, t: TaskId, c: usize, n: u64, steps: &mut Vec<Step>) -> Flow {
        self.next_op(t);
        let cv = &mut self.objs.conds[c];
        cv.seq += 1;
        if cv.waiters == 0 {
            return Flow::Continue;
        }
        steps.extend(self.futex_wake(FutexKey::Cond(c), n));
        Flow::Kernel
    }

    /// `barrier` (glibc's futex barrier): the last party bumps the generation and wakes
    /// everyone; the others `futex_wait` on the generation they arrived in, again after a
    /// spurious wakeup.
    fn op_barrier(&mut self, t: TaskId, b: usize, steps: &mut Vec<Step>) -> Flow {
        let key = FutexKey::Barrier(b);
        if self.tasks[t].op_phase == 0 {
            let bar = &mut self.objs.barriers[b];
            bar.arrived += 1;
            if bar.arrived == bar.parties {
                bar.arrived = 0;
                bar.gen += 1;
                let alone = bar.parties == 1;
                self.next_op(t);
                if alone {
                    return Flow::Continue;
                }
                steps.extend(self.futex_wake(key, u64::MAX));
            } else {
                let g = bar.gen;
                self.tasks[t].op_phase = 1;
                self.tasks[t].op_aux = g;
                steps.extend(self.futex_wait(t, key, g));
            }
        } else if self.objs.barriers[b].gen != self.tasks[t].op_aux {
            self.next_op(t);
            return Flow::Continue;
        } else {
            let g = self.tasks[t].op_aux;
            steps.extend(self.futex_wait(t, key, g));
        }
        Flow::Kernel
    }

    /// `set_nice`, `set_affinity`, `set_slice`, `set_policy`: the syscall, then `action`
    /// under the task's runqueue lock.
    fn op_setattr(&mut self, cpu: CpuId, t: TaskId, action: Action, steps: &mut Vec<Step>) -> Flow {
        self.next_op(t);
        steps.extend(self.setattr(cpu, action));
        Flow::Kernel
    }

    /// A syscall that changes a task's scheduling attributes under its rq lock
    /// (`setpriority`, `sched_setaffinity` → `task_rq_lock`).
    fn setattr(&self, cpu: CpuId, action: Action) -> [Step; 2] {
        [
            self.syscall(KernelPath::SchedSyscall),
            self.locked1(cpu, LockSite::Setattr, self.machine.costs.schedule, action),
        ]
    }

    /// Queues `steps` to run next on `cpu`, before anything already queued.
    pub(crate) fn push_steps<I>(&mut self, cpu: CpuId, steps: I)
    where
        I: IntoIterator<Item = Step>,
        I::IntoIter: DoubleEndedIterator,
    {
        let ks = &mut self.cpus[cpu].kstack;
        for s in steps.into_iter().rev() {
            ks.push_front(s);
        }
    }

    /// [`Kernel::push_steps`] from a buffer, which is left empty: popped from its end, so no
    /// `Drain` (its iterator and its drop's tail bookkeeping, run at every op).
    pub(crate) fn push_steps_vec(&mut self, cpu: CpuId, steps: &mut Vec<Step>) {
        let ks = &mut self.cpus[cpu].kstack;
        while let Some(s) = steps.pop() {
            ks.push_front(s);
        }
    }

    /// Marks the running task as going to sleep; `schedule()` follows.
    pub(crate) fn block(&mut self, cpu: CpuId, t: TaskId, on: crate::BlockedOn) {
        self.tasks[t].state = TState::Sleeping;
        self.record_sleep(t, &on);
        self.tasks[t].blocked_on = on;
        let s = self.locked1(cpu, LockSite::Schedule, self.machine.costs.schedule, Action::Schedule { newidle: true });
        self.push_steps(cpu, [s]);
    }
}

/// Pushes onto a per-task stack (loop counters, timers) whose first allocation holds one
/// entry: most tasks nest one loop and arm one timer, and `Vec`'s first growth would
/// reserve four (48 and 80 bytes of heap per task instead of 32 each, at 100 000 tasks).
/// Later growth doubles as usual.
/// `Kernel` if an op queued steps, else on to the next op at once.
fn kernel_if_any(steps: &[Step]) -> Flow {
    if steps.is_empty() {
        Flow::Continue
    } else {
        Flow::Kernel
    }
}

fn push_small<T>(v: &mut Vec<T>, x: T) {
    if v.capacity() == 0 {
        v.reserve_exact(1);
    }
    v.push(x);
}
