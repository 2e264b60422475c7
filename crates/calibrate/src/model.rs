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

/// The charges along one path, in the order the kernel model makes them: (cost, time).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Charges(pub Vec<(&'static str, Ns)>);

impl Charges {
    fn add(mut self, what: &'static str, ns: Ns) -> Charges {
        self.0.push((what, ns));
        self
    }
    pub fn total(&self) -> Ns {
        Ns(self.0.iter().map(|c| c.1 .0).sum())
    }
}

/// One syscall of the futex path (`futex_wait` or `futex_wake`): entry, hashing, the
/// bucket-lock hold (`crates/kernel/src/futex.rs`).
fn futex_op(ch: Charges, c: &Costs) -> Charges {
    ch.add("syscall", c.syscall).add("futex", c.futex).add("futex_bucket_hold", c.futex_bucket_hold)
}

/// The wakee's side of a wakeup of an idle CPU: the IPI, the idle exit, `sched_ttwu_pending`,
/// `schedule`, the switch.
fn idle_target(ch: Charges, c: &Costs) -> Charges {
    ch.add("ipi_latency", c.ipi_latency)
        .add("idle_exit", c.idle_exit)
        .add("ttwu_activate", c.ttwu_activate)
        .add("schedule", c.schedule)
        .add("context_switch", c.context_switch)
}

/// A futex wakeup of a waiter on another, idle CPU, from the waker's call to the wakee
/// running ([`idle_wake_latency`], charge by charge).
pub fn idle_wake_charges(c: &Costs) -> Charges {
    idle_target(futex_op(Charges::default(), c).add("ttwu_remote", c.ttwu_remote), c)
}

/// One handoff of the 1-byte pipe ping-pong on one CPU ([`pinned_handoff`]).
pub fn pinned_handoff_charges(c: &Costs) -> Charges {
    let one = |ch: Charges| ch.add("syscall", c.syscall).add("pipe_op", c.pipe_op);
    one(one(one(Charges::default())))
        .add("ttwu_local", c.ttwu_local)
        .add("ttwu_activate", c.ttwu_activate)
        .add("schedule", c.schedule)
        .add("context_switch", c.context_switch)
}

/// One handoff of the pipe ping-pong across CPUs, the reader's CPU idle ([`remote_handoff`]).
pub fn remote_handoff_charges(c: &Costs) -> Charges {
    let one = |ch: Charges| ch.add("syscall", c.syscall).add("pipe_op", c.pipe_op);
    idle_target(one(one(Charges::default())).add("ttwu_remote", c.ttwu_remote), c)
}

/// One handoff of a futex ping-pong on one CPU: the `futex_wake` of the other thread (a
/// local wakeup that does not preempt), the waker's own `futex_wait`, `schedule`, the switch.
pub fn futex_local_handoff_charges(c: &Costs) -> Charges {
    let wake = futex_op(Charges::default(), c).add("ttwu_local", c.ttwu_local).add("ttwu_activate", c.ttwu_activate);
    futex_op(wake, c).add("schedule", c.schedule).add("context_switch", c.context_switch)
}

/// One handoff of a futex ping-pong across CPUs: the `futex_wake` of a waiter on the other,
/// idle CPU, then its side of the wakeup (the waker's `futex_wait` runs meanwhile).
pub fn futex_remote_handoff_charges(c: &Costs) -> Charges {
    idle_wake_charges(c)
}

/// How late a sleep returns past its expiry with `slack`: on an idle CPU
/// ([`sleep_overshoot`]), or on a CPU busy with a task the sleeper preempts (no idle exit).
pub fn sleep_overshoot_charges(c: &Costs, slack: Ns, idle: bool) -> Charges {
    let ch = Charges::default().add("syscall", c.syscall).add("timer_slack", slack);
    let ch = if idle { ch.add("idle_exit", c.idle_exit) } else { ch };
    ch.add("timer_irq", c.timer_irq)
        .add("ttwu_activate", c.ttwu_activate)
        .add("schedule", c.schedule)
        .add("context_switch", c.context_switch)
}

/// CPU time one sleep charges to the sleeper ([`sleep_cpu`]), busy CPU or idle alike.
pub fn sleep_cpu_charges(c: &Costs) -> Charges {
    Charges::default()
        .add("syscall", c.syscall)
        .add("hrtimer_start", c.hrtimer_start)
        .add("schedule", c.schedule)
        .add("context_switch", c.context_switch)
}

/// A process `fork` + `_exit` + `waitpid` on one CPU with `resident` bytes: the thread
/// paths of [`thread_create`], the wait, [`thread_exit_to_join`], plus the page-table copy
/// and teardown (`Mm::fork_ns`, `Mm::exit_ns`).
pub fn process_fork_exit_charges(c: &Costs, mm: &schedlab_machine::Mm, resident: u64) -> Charges {
    Charges::default()
        .add("fork", c.fork)
        .add("fork_per_page", mm.fork_ns(resident))
        .add("ttwu_activate", c.ttwu_activate)
        .add("wake_up_new_task", c.wake_up_new_task)
        .add("syscall", c.syscall)
        .add("schedule", c.schedule)
        .add("context_switch", c.context_switch)
        .add("exit", c.exit)
        .add("exit_per_page", mm.exit_ns(resident))
        .add("ttwu_local", c.ttwu_local)
        .add("ttwu_activate", c.ttwu_activate)
        .add("schedule", c.schedule)
        .add("context_switch", c.context_switch)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each path's charges sum to the formula the calibration solves with (checked
    /// against the simulator in `crates/cli/tests/calibration.rs`).
    #[test]
    fn charges_sum_to_the_formulas() {
        let c = crate::derive::tests::odd_costs();
        assert_eq!(idle_wake_charges(&c).total(), idle_wake_latency(&c));
        assert_eq!(pinned_handoff_charges(&c).total(), pinned_handoff(&c));
        assert_eq!(remote_handoff_charges(&c).total(), remote_handoff(&c));
        assert_eq!(sleep_overshoot_charges(&c, c.timer_slack, true).total(), sleep_overshoot(&c));
        assert_eq!(sleep_cpu_charges(&c).total(), sleep_cpu(&c));
        let fork_wait_exit = thread_create(&c) + c.syscall + c.schedule + c.context_switch + thread_exit_to_join(&c);
        let mm =
            schedlab_machine::Machine::new("m", 250, schedlab_machine::Topology::new(1, 1, 1, 1, None), c.clone()).mm;
        assert_eq!(process_fork_exit_charges(&c, &mm, 0).total(), fork_wait_exit);
        assert_eq!(
            process_fork_exit_charges(&c, &mm, 8192).total(),
            fork_wait_exit + mm.fork_ns(8192) + mm.exit_ns(8192)
        );
        // A busy CPU has no idle exit; a local futex handoff is two futex syscalls.
        assert_eq!(
            sleep_overshoot_charges(&c, Ns(0), false).total() + c.idle_exit,
            sleep_overshoot_charges(&c, Ns(0), true).total()
        );
        assert_eq!(
            futex_local_handoff_charges(&c).total(),
            futex_wake_none(&c) + futex_wake_none(&c) + c.ttwu_local + c.ttwu_activate + c.schedule + c.context_switch
        );
    }
}
