//! What each benchmark takes in the simulator, as a function of the costs: the kernel
//! model's path for it, step by step. [`crate::derive`] inverts these formulas; the tests in
//! `crates/cli/tests/calibration.rs` check each one against a simulation of the benchmark.

use schedlab_machine::Costs;
use schedlab_sim::Ns;

/// `getppid()`: syscall entry and exit.
pub fn null_syscall(c: &Costs) -> Ns {
    c.syscall
}

/// One `write` and one `read` of `bytes` on a pipe that never blocks.
pub fn pipe_write_read(c: &Costs, bytes: u64) -> Ns {
    let copy = Ns(bytes * c.pipe_byte_ps / 1000);
    Ns(2 * (c.syscall + c.pipe_op + copy).0)
}

/// `futex_wake` with nobody to wake: syscall, hashing, the bucket-lock hold.
pub fn futex_wake_none(c: &Costs) -> Ns {
    c.syscall + c.futex + c.futex_bucket_hold
}

/// `sched_yield` of the only task on a CPU: the syscall, the yield under `task_rq_lock`
/// (held `schedule`), then `__schedule` picking the same task (no switch).
pub fn yield_alone(c: &Costs) -> Ns {
    c.syscall + c.schedule + c.schedule
}

/// One `sched_yield` of two threads taking turns on a CPU: the yield, then `__schedule`
/// switching to the other thread.
pub fn yield_switch(c: &Costs) -> Ns {
    yield_alone(c) + c.context_switch
}

/// The waker's `futex_wake` of a waiter last run on the waker's CPU, which does not preempt
/// the waker: `try_to_wake_up` and `ttwu_do_activate` under the local runqueue lock.
pub fn local_wake_syscall(c: &Costs) -> Ns {
    futex_wake_none(c) + c.ttwu_local + c.ttwu_activate
}

/// The waker's `futex_wake` of a waiter on another, idle CPU: the wakeup is queued on the
/// target's wake list and an IPI sent (`ttwu_queue_wakelist`).
pub fn remote_wake_syscall(c: &Costs) -> Ns {
    futex_wake_none(c) + c.ttwu_remote
}

/// From the waker's call to the wakee running, the wakee's CPU busy with a task it
/// preempts: the waker activates it under the target's lock and sends a reschedule IPI;
/// the target's `schedule` waits for the IPI (and the lock, if the IPI is faster).
pub fn busy_wake_latency(c: &Costs) -> Ns {
    remote_wake_syscall(c) + c.ipi_latency.max(c.ttwu_activate) + c.schedule + c.context_switch
}

/// From the waker's call to the wakee running, the wakee's CPU idle: IPI, idle exit,
/// `sched_ttwu_pending` activating it, `schedule`, the switch.
pub fn idle_wake_latency(c: &Costs) -> Ns {
    remote_wake_syscall(c) + c.ipi_latency + c.idle_exit + c.ttwu_activate + c.schedule + c.context_switch
}

/// One handoff of a 1-byte pipe ping-pong with both threads on one CPU: the writer's
/// `write` wakes the reader (local wakeup, no preemption), the writer's `read` finds the
/// other pipe empty and blocks, `schedule` switches to the reader, whose `read` is retried.
pub fn pinned_handoff(c: &Costs) -> Ns {
    let rw = pipe_write_read(c, 1);
    rw + Ns(rw.0 / 2) + c.ttwu_local + c.ttwu_activate + c.schedule + c.context_switch
}

/// One handoff of the ping-pong across two CPUs, the reader's CPU idle: the write wakes it
/// remotely (wake list, IPI, idle exit), then its `read` is retried.
pub fn remote_handoff(c: &Costs) -> Ns {
    let rw = pipe_write_read(c, 1);
    rw + c.ttwu_remote + c.ipi_latency + c.idle_exit + c.ttwu_activate + c.schedule + c.context_switch
}

/// How much later than asked a sleep on an idle CPU returns: the syscall before the
/// expiry is computed, the slack (nothing else interrupts the idle CPU), the idle exit, the
/// hrtimer interrupt, `ttwu_do_activate`, `schedule` and the switch.
pub fn sleep_overshoot(c: &Costs) -> Ns {
    c.syscall + c.timer_slack + c.idle_exit + c.timer_irq + c.ttwu_activate + c.schedule + c.context_switch
}

/// CPU time one sleep charges to the sleeper: the syscall and the hrtimer arming before it
/// blocks, `schedule` and the switch after it is switched back in.
pub fn sleep_cpu(c: &Costs) -> Ns {
    c.syscall + c.hrtimer_start + c.schedule + c.context_switch
}

/// The creator's `clone` of a thread that does not preempt it: `copy_process`, `sched_fork`
/// under the creator's runqueue lock, `wake_up_new_task`.
pub fn thread_create(c: &Costs) -> Ns {
    c.fork + c.ttwu_activate + c.wake_up_new_task
}

/// From a thread's last instruction to its joiner (on the same CPU) running: `do_exit`, the
/// local wakeup of the joiner, `schedule`, the switch.
pub fn thread_exit_to_join(c: &Costs) -> Ns {
    c.exit + c.ttwu_local + c.ttwu_activate + c.schedule + c.context_switch
}

/// `sched_setaffinity` moving another thread that is queued, not running: the syscall,
/// `task_rq_lock` (held `schedule`), `move_queued_task` under both runqueue locks.
/// (No workload operation moves another task, so this one is a decomposition, not a path
/// the tests can simulate.)
pub fn setaffinity_queued(c: &Costs) -> Ns {
    c.syscall + c.schedule + c.migrate
}
