//! Sleepers' hrtimers with timer slack (`kernel/time/hrtimer.c`, v6.12).
//!
//! A sleeping task's timer has a soft expiry (what it asked for) and a hard expiry (soft +
//! `timer_slack`). The clock-event device is programmed for the earliest *hard* expiry
//! (`__hrtimer_next_event_base` reads `hrtimer_get_expires`), so on an otherwise quiet CPU a
//! sleeper wakes at the end of its slack. Any hrtimer interrupt on that CPU — another
//! sleeper's hard expiry, or the tick of a busy CPU (in high-resolution mode the tick is the
//! hrtimer `tick_sched_timer`) — expires every timer whose soft expiry has passed
//! (`__hrtimer_run_queues`), which is how slack coalesces wakeups.

use crate::cpu::{Action, Event, Step};
use crate::Kernel;
use schedlab_machine::KernelPath;
use schedlab_sim::{CpuId, Ns, TaskId};

impl Kernel<'_> {
    /// `hrtimer_nanosleep`: arms `task`'s sleep timer on `cpu` for [soft, soft + slack].
    /// Its hard expiry gets an interrupt event; an earlier interrupt may expire it first.
    pub(crate) fn arm_sleep_timer(&mut self, cpu: CpuId, task: TaskId, soft: Ns) {
        let hard = soft + self.machine.costs.timer_slack;
        let tk = &mut self.tasks[task];
        tk.timer_gen += 1;
        tk.timer_cpu = cpu;
        let gen = tk.timer_gen;
        self.cpus[cpu].hrtimers.insert((hard, task), soft);
        // A timer whose hard expiry has already passed fires at once (the clock event's
        // minimum delta).
        self.events.push(hard.max(self.now), Event::Timer { task, gen });
    }

    /// `__hrtimer_run_queues` in an hrtimer interrupt on `cpu`: walks the armed timers in
    /// hard-expiry order and expires each whose soft expiry has passed, stopping at the first
    /// that has not (as the kernel does). Returns the interrupt's work: per expired sleeper
    /// `timer_irq`, then its `try_to_wake_up`.
    pub(crate) fn expire_hrtimers(&mut self, cpu: CpuId) -> Vec<Step> {
        let mut steps = Vec::new();
        while let Some((&(hard, task), &soft)) = self.cpus[cpu].hrtimers.first_key_value() {
            if soft > self.now {
                break;
            }
            self.cpus[cpu].hrtimers.remove(&(hard, task));
            // Its own hard-expiry event, if still pending, is now stale.
            self.tasks[task].timer_gen += 1;
            steps.push(Step::Delay(KernelPath::Timer, self.machine.costs.timer_irq));
            steps.push(Step::Do(Action::TtwuStart { task, wf: 0, claimed: false }));
        }
        steps
    }
}
