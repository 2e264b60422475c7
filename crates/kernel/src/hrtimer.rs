//! Sleepers' hrtimers with timer slack (`kernel/time/hrtimer.c`, v6.12).
//!
//! A sleeping task's timer has a soft expiry (what it asked for) and a hard expiry (soft +
//! `timer_slack`). The clock-event device is programmed for the earliest *hard* expiry
//! (`__hrtimer_next_event_base` reads `hrtimer_get_expires`), so on an otherwise quiet CPU a
//! sleeper wakes at the end of its slack. Any hrtimer interrupt on that CPU — another
//! sleeper's hard expiry, or the tick of a busy CPU (in high-resolution mode the tick is the
//! hrtimer `tick_sched_timer`) — expires every timer whose soft expiry has passed
//! (`__hrtimer_run_queues`), which is how slack coalesces wakeups.
//!
//! As in the kernel, each CPU's clock event is programmed for its earliest hard expiry only
//! (`hrtimer_reprogram` when an earlier timer is armed, `hrtimer_update_next_event` after
//! the queues ran), so the event queue holds one timer event per CPU, not one per sleeper.
//! Each timer keeps the event sequence number reserved when it was armed, and the clock
//! event carries the smallest of those among the timers due at its expiry, so events
//! happening at the same instant are ordered exactly as if every timer had its own event.

use crate::vocab::{Action, Event, Step};
use crate::Kernel;
use schedlab_machine::KernelPath;
use schedlab_sim::{CpuId, Ns, TaskId};

impl Kernel<'_> {
    /// `hrtimer_nanosleep`: arms `task`'s sleep timer on `cpu` for [soft, soft + slack].
    /// Its hard expiry gets an interrupt event; an earlier interrupt may expire it first.
    /// Real-time and deadline tasks sleep without slack (`kernel/time/hrtimer.c:
    /// hrtimer_nanosleep`, v6.12 `rt_or_dl_task`; v5.15 `rt_task`, which covers deadline
    /// priorities too).
    pub(crate) fn arm_sleep_timer(&mut self, cpu: CpuId, task: TaskId, soft: Ns) {
        let pol = self.info[task].policy;
        let slack = if pol.is_rt() || pol.is_dl() { Ns(0) } else { self.machine.costs.timer_slack };
        let hard = soft + slack;
        self.tasks[task].timer_cpu = cpu as u32;
        let seq = self.events.reserve_seq();
        self.cpus[cpu].hrtimers.insert((hard, task), (soft, seq));
        if self.cpus[cpu].hrtimer_next.is_none_or(|next| hard < next) {
            self.program_clock_event(cpu);
        }
    }

    /// Programs `cpu`'s clock event for its earliest hard expiry, if that changed; the event
    /// programmed before, if any, goes stale. A timer whose hard expiry has already passed
    /// fires at once (the clock event's minimum delta).
    pub(crate) fn program_clock_event(&mut self, cpu: CpuId) {
        let c = &mut self.cpus[cpu];
        let first = c.hrtimers.first().map(|((hard, _), _)| hard);
        if first == c.hrtimer_next {
            return;
        }
        c.hrtimer_next = first;
        c.hrtimer_gen += 1;
        let gen = c.hrtimer_gen;
        if let Some(hard) = first {
            let seq = c.hrtimers.first_seq_at(hard).expect("the first timer is due");
            // The interrupt comes when the device delivers it: the machine's timer noise.
            let late = self.noise.timer_lateness();
            self.events.push_seq(hard.max(self.now) + late, seq, Event::Timer { cpu: cpu as u32, gen });
        }
    }

    /// Arms the policy's timer on `cpu` for `at` (`Request::Timer`), unless an earlier
    /// expiry is already armed there; the later one is dropped (the policy re-requests its
    /// next expiry when the timer fires). An expiry in the past fires at once.
    pub(crate) fn arm_policy_timer(&mut self, cpu: CpuId, at: Ns) {
        let c = &mut self.cpus[cpu];
        if c.policy_timer.is_some_and(|t| t <= at) {
            return;
        }
        c.policy_timer = Some(at);
        c.policy_timer_gen += 1;
        let gen = c.policy_timer_gen;
        self.events.push(at.max(self.now), Event::PolicyTimer { cpu: cpu as u32, gen });
    }

    /// `__hrtimer_run_queues` in an hrtimer interrupt on `cpu`: walks the armed timers in
    /// hard-expiry order and expires each whose soft expiry has passed, stopping at the first
    /// that has not (as the kernel does). The interrupt's work: per expired sleeper
    /// `timer_irq`, then its `try_to_wake_up`, appended to `steps`.
    pub(crate) fn expire_hrtimers(&mut self, cpu: CpuId, steps: &mut Vec<Step>) {
        let now = self.now;
        while let Some((_, (soft, _))) = self.cpus[cpu].hrtimers.first() {
            if soft > now {
                break;
            }
            let ((_, task), _) = self.cpus[cpu].hrtimers.pop_first().expect("just read");
            steps.push(Step::Delay(KernelPath::Timer, self.machine.costs.timer_irq));
            steps.push(Step::Do(Action::TtwuStart { task, wf: schedlab_sched_api::wf::IRQ, claimed: false }));
        }
        self.program_clock_event(cpu);
    }
}
