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

use crate::cpu::{Action, Event, Step};
use crate::Kernel;
use schedlab_machine::KernelPath;
use schedlab_sim::{CpuId, Ns, TaskId};
use std::collections::{BTreeMap, VecDeque};

/// An armed sleep timer: `(hard expiry, task)` and `(soft expiry, event sequence number)`.
type Armed = ((Ns, TaskId), (Ns, u64));

/// How long the sorted deque may be for an out-of-order timer to be placed in it by
/// shifting; past it, such a timer goes to the search tree.
const SHIFT_MAX: usize = 64;

/// A CPU's armed sleep timers, in `(hard expiry, task)` order (the kernel's timerqueue, an
/// rbtree ordered by expiry). Mostly a sorted deque: the earliest leaves from the front,
/// and a new timer usually expires after every armed one (a periodic sleeper re-arms a
/// period ahead), so it joins at the back without a search. A timer that expires earlier
/// than the last one is placed in the deque by binary search while the deque is short, and
/// otherwise goes to a search tree beside it, so that thousands of sleepers of random
/// lengths on one CPU cost O(log n) an insert, not a shift of the deque. The earliest timer
/// is the smaller of the two fronts; keys are unique (a task has one sleep timer at a time),
/// so the order, and every result, does not depend on where a timer is kept.
#[derive(Default)]
pub(crate) struct Timers {
    q: VecDeque<Armed>,
    late: BTreeMap<(Ns, TaskId), (Ns, u64)>,
}

impl Timers {
    /// Arms a timer; a task has one sleep timer at a time, so its key is new.
    pub(crate) fn insert(&mut self, key: (Ns, TaskId), val: (Ns, u64)) {
        match self.q.back() {
            Some(&(last, _)) if last > key && self.q.len() <= SHIFT_MAX => {
                let at = self.q.partition_point(|&(k, _)| k < key);
                debug_assert!(self.q.get(at).is_none_or(|&(k, _)| k != key));
                self.q.insert(at, (key, val));
            }
            Some(&(last, _)) if last > key => {
                self.late.insert(key, val);
            }
            _ => self.q.push_back((key, val)),
        }
    }
    /// Whether the earliest timer is the tree's rather than the deque's.
    fn late_first(&self) -> bool {
        match (self.q.front(), self.late.first_key_value()) {
            (Some(&(k, _)), Some((&l, _))) => l < k,
            (None, Some(_)) => true,
            _ => false,
        }
    }
    pub(crate) fn first(&self) -> Option<Armed> {
        if self.late_first() {
            self.late.first_key_value().map(|(&k, &v)| (k, v))
        } else {
            self.q.front().copied()
        }
    }
    pub(crate) fn pop_first(&mut self) -> Option<Armed> {
        if self.late_first() {
            self.late.pop_first()
        } else {
            self.q.pop_front()
        }
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.q.is_empty() && self.late.is_empty()
    }
    /// The smallest sequence number among the timers whose hard expiry is `hard` (the
    /// earliest: they lead both the deque and the tree).
    fn first_seq_at(&self, hard: Ns) -> Option<u64> {
        let in_q = self.q.iter().take_while(|&&((h, _), _)| h == hard).map(|&(_, (_, seq))| seq);
        let in_late = self.late.iter().take_while(|&(&(h, _), _)| h == hard).map(|(_, &(_, seq))| seq);
        in_q.chain(in_late).min()
    }
    /// Every armed timer, in no particular order (for order-independent checks).
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&(Ns, TaskId), &(Ns, u64))> {
        self.q.iter().map(|(k, v)| (k, v)).chain(self.late.iter())
    }
}

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
            self.events.push_seq(hard.max(self.now), seq, Event::Timer { cpu: cpu as u32, gen });
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Timers armed in any order — most after every armed one, some earlier, with the deque
    /// both short and long — leave in `(hard expiry, task)` order, and the first sequence
    /// number at the earliest expiry is the smallest among the timers due then, wherever
    /// each is kept.
    #[test]
    fn timers_leave_in_expiry_order_wherever_they_are_kept() {
        let mut timers = Timers::default();
        let mut reference = BTreeMap::new();
        let mut x = 7u64;
        for task in 0..3000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            // Three in four expire later than everything armed; the rest anywhere.
            let hard = if !x.is_multiple_of(4) { Ns(u64::from(task) * 10) } else { Ns((x >> 33) % 30_000) };
            let key = (hard, task as TaskId);
            let val = (hard, x >> 40);
            timers.insert(key, val);
            reference.insert(key, val);
            if task.is_multiple_of(7) {
                let hard = reference.first_key_value().map(|(&(h, _), _)| h).unwrap();
                let seq = reference.iter().take_while(|(&(h, _), _)| h == hard).map(|(_, &(_, s))| s).min();
                assert_eq!(timers.first_seq_at(hard), seq);
                assert_eq!(timers.pop_first(), reference.pop_first());
            }
        }
        assert!(!timers.late.is_empty(), "the long deque sent out-of-order timers to the tree");
        assert_eq!(timers.iter().count(), reference.len());
        while let Some(t) = reference.pop_first() {
            assert_eq!(timers.first(), Some(t));
            assert_eq!(timers.pop_first(), Some(t));
        }
        assert!(timers.is_empty());
    }
}
