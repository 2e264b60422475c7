//! Decision records: why a policy (and the kernel around it) did what it did.
//!
//! Recording is off by default. When a probe asks for decisions, the kernel hands every
//! hook a buffer through [`crate::Ctx::decisions`]; a policy appends [`Decision`]s to it
//! (balancer attempts, placements) and the kernel adds its own around the hooks (each pick
//! with the competitors, each wakeup preemption check, each tick, sleeps and affinities),
//! asking the policy through [`crate::SchedClass::why`] why one task goes before another.
//! Nothing recorded feeds back into a decision, so recording changes no result.

use crate::BalanceKind;
use schedlab_machine::CpuSet;
use schedlab_sim::{CpuId, TaskId};

/// The kind of rule that put one task before another, as a wait cause.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Cause {
    /// A higher priority or an earlier deadline: a better class (deadline > rt > fair), a
    /// better real-time or O(1) priority, ULE's interactive queue over timeshare, an
    /// earlier (virtual) deadline.
    Priority,
    /// Fair sharing among equals: a smaller vruntime, the difference under the wakeup
    /// granularity, a slice not used up, round robin.
    FairShare,
    /// EEVDF: the waiting task has negative lag (`!entity_eligible`).
    NotEligible,
    /// The woken task would go first, but the policy's preemption rule lets the running
    /// task go on until it blocks or its slice ends (ULE's `preempt_thresh`, a port where
    /// only kernel threads preempt).
    NoPreempt,
    /// The policy gave no reason.
    Other,
}

/// Why `first` goes (or stays) before `second`: a cause and the numbers compared, in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Why {
    pub cause: Cause,
    /// E.g. `vruntime 12.0 ms < 14.5 ms (pick_next_entity: leftmost)`.
    pub text: String,
}

impl Why {
    pub fn new(cause: Cause, text: impl Into<String>) -> Why {
        Why { cause, text: text.into() }
    }
}

/// When the kernel asks [`crate::SchedClass::why`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moment {
    /// `first` was just picked on a CPU where `second` is queued too.
    Pick,
    /// `second` was just woken (or moved) onto the CPU `first` runs on, and the wakeup
    /// preemption check left `first` running.
    Wakeup,
}

/// One recorded decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// `pick_next_task` on `cpu` chose `chosen`; `passed` are the other tasks queued there,
    /// each with why it was not chosen (recorded by the kernel through `SchedClass::why`).
    Pick { cpu: CpuId, chosen: TaskId, passed: Vec<(TaskId, Why)> },
    /// The wakeup preemption check on `cpu` after `woken` was queued behind `curr`:
    /// `preempt` whether `curr` must reschedule; `why` explains it (for no preemption: why
    /// `curr` stays before `woken`).
    Preempt { cpu: CpuId, curr: TaskId, woken: TaskId, preempt: bool, why: Why },
    /// The tick on `cpu` found `curr`'s slice used up (`resched`) or not.
    Tick { cpu: CpuId, curr: TaskId, resched: bool },
    /// Placement of a waking or new task: `path` is the policy's path (`wake_affine`,
    /// `select_idle_sibling`, `sched_pickcpu`, …), `why` says why that CPU.
    Place { task: TaskId, prev: CpuId, cpu: CpuId, path: &'static str, why: String },
    /// A balancer attempt on `cpu`: what it found (`found`: the imbalance, the busiest and
    /// the thresholds, in words), which tasks it moved from `src` and why each task it
    /// considered was not moved.
    Balance {
        cpu: CpuId,
        kind: BalanceKind,
        src: Option<CpuId>,
        found: String,
        moved: Vec<TaskId>,
        refused: Vec<(TaskId, String)>,
    },
    /// The class holds `task` back although it is runnable (`throttled`; `why` says until
    /// when: the deadline class's CBS ran out of its runtime), or releases it again
    /// (`!throttled`: replenished).
    Throttle { task: TaskId, throttled: bool, why: String },
    /// The task blocked on `on` (`mutex`, `timer`, `pipe 3`, …); recorded by the kernel.
    Sleep { task: TaskId, on: String },
    /// The task exists with this name, and its affinity is now `cpus` (creation,
    /// `sched_setaffinity`); recorded by the kernel.
    Task { task: TaskId, name: String, cpus: CpuSet },
}

/// A duration (or a difference of virtual times) in words: `850 ns`, `12.5 µs`, `3.20 ms`,
/// `1.250 s`; negative values keep their sign. For decision texts; integers only.
pub fn fmt_ns(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    let (whole, frac, digits, unit) = match a {
        0..=999 => return format!("{sign}{a} ns"),
        1_000..=999_999 => (a / 1_000, a % 1_000 / 100, 1, "µs"),
        1_000_000..=999_999_999 => (a / 1_000_000, a % 1_000_000 / 10_000, 2, "ms"),
        _ => (a / 1_000_000_000, a % 1_000_000_000 / 1_000_000, 3, "s"),
    };
    format!("{sign}{whole}.{frac:0digits$} {unit}")
}

#[cfg(test)]
mod tests {
    use super::fmt_ns;

    #[test]
    fn durations_read_in_their_unit() {
        assert_eq!(fmt_ns(850), "850 ns");
        assert_eq!(fmt_ns(12_540), "12.5 µs");
        assert_eq!(fmt_ns(3_204_000), "3.20 ms");
        assert_eq!(fmt_ns(-1_250_000_000), "-1.250 s");
    }
}
