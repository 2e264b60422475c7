//! Where the waiting went: an [`Explainer`] probe that cuts every wait of every task (the
//! time it was runnable but not running, exactly what `wait_ns` counts) into segments, each
//! with a cause, who ran instead and the comparison that decided it, from the decision
//! records (`schedlab_sched_api::why`) and the scheduling events.
//!
//! A waiting task's segment changes whenever something that decides its cause changes:
//! what its CPU runs or does (user, kernel, spin, idle), a reschedule becoming pending, a
//! new comparison recorded against it, an allowed CPU going idle or busy, a migration.
//! Segments of a wait tile it exactly, so the explained time of a task sums to its
//! `wait_ns`.

mod state;

use serde::Serialize;

pub use state::Explainer;

/// Why a runnable task was not running during a segment of its wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitCause {
    /// Behind a higher priority or an earlier deadline (class, rt priority, ULE's
    /// interactive queue, O(1) priority, EDF).
    Priority,
    /// Fair sharing among equals (vruntime, granularity, calendar turns, round robin).
    FairShare,
    /// EEVDF: its lag was negative.
    NotEligible,
    /// It would go first, but the policy's preemption rule lets the running task go on.
    NoPreempt,
    /// A reschedule was pending on its CPU: waiting for the next preemption point.
    PreemptionPoint,
    /// Another CPU it may run on was idle and no balancer or placement moved it there.
    BalancerRefused,
    /// Its CPU was spinning on a lock.
    LockSpin,
    /// Its class held it back: out of runtime until replenished (CBS throttling).
    Throttled,
    /// Its CPU was idle or in the kernel without a task (the wakeup's IPI, `schedule()`).
    WakeupPath,
    /// No recorded comparison covers it.
    Other,
}

impl WaitCause {
    pub const ALL: [WaitCause; 10] = [
        WaitCause::Priority,
        WaitCause::FairShare,
        WaitCause::NotEligible,
        WaitCause::NoPreempt,
        WaitCause::PreemptionPoint,
        WaitCause::BalancerRefused,
        WaitCause::LockSpin,
        WaitCause::Throttled,
        WaitCause::WakeupPath,
        WaitCause::Other,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    /// The name used in tables, JSON and Perfetto arguments.
    pub fn name(self) -> &'static str {
        match self {
            WaitCause::Priority => "priority",
            WaitCause::FairShare => "fair_share",
            WaitCause::NotEligible => "not_eligible",
            WaitCause::NoPreempt => "no_preempt",
            WaitCause::PreemptionPoint => "preemption_point",
            WaitCause::BalancerRefused => "balancer_refused",
            WaitCause::LockSpin => "lock_spin",
            WaitCause::Throttled => "throttled",
            WaitCause::WakeupPath => "wakeup_path",
            WaitCause::Other => "other",
        }
    }

    /// The cause in words, for tables and legends.
    pub fn describe(self) -> &'static str {
        match self {
            WaitCause::Priority => "behind higher priority or an earlier deadline",
            WaitCause::FairShare => "fair share among equals",
            WaitCause::NotEligible => "not eligible (negative lag)",
            WaitCause::NoPreempt => "better, but the policy does not preempt",
            WaitCause::PreemptionPoint => "reschedule pending: waiting for a preemption point",
            WaitCause::BalancerRefused => "an allowed CPU was idle; nothing moved it there",
            WaitCause::LockSpin => "its CPU spun on a lock",
            WaitCause::Throttled => "out of runtime: throttled until replenished",
            WaitCause::WakeupPath => "its CPU was in the wakeup or schedule path",
            WaitCause::Other => "no recorded comparison",
        }
    }
}

/// A part of a wait with one cause.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Segment {
    pub start_ns: u64,
    pub end_ns: u64,
    /// The CPU whose runqueue the task waited on.
    pub cpu: usize,
    pub cause: WaitCause,
    /// The task that ran on that CPU instead, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ran: Option<usize>,
    /// The comparison or state that decided it, in words with numbers.
    pub why: String,
}

/// How a sleeping task got back onto a runqueue: what it waited on, who woke it, and its
/// wakeup latency before it was queued.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WakeInfo {
    /// When it blocked and on what (`None`: a new task).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on: Option<String>,
    /// `sched_waking`: when and on which CPU; the task running there (`None`: an interrupt
    /// such as a timer).
    pub waking_ns: u64,
    pub waker_cpu: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waker: Option<usize>,
    /// From waking to queued: the waker's kernel path, its lock spin, and the rest (the IPI
    /// and the target's activation of a remote wakeup).
    pub wakeup_path_ns: u64,
    pub lock_spin_ns: u64,
    pub ipi_ns: u64,
    /// The placement the policy recorded, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placed: Option<String>,
}

/// One wait of a task: from queued (woken, or preempted) to running again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Wait {
    pub task: usize,
    pub start_ns: u64,
    pub end_ns: u64,
    /// It was preempted (still runnable) rather than woken.
    pub preempted: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wake: Option<WakeInfo>,
    pub segments: Vec<Segment>,
    /// Why no other CPU took it: the balancer attempts that concerned it or its CPU.
    pub balance: Vec<String>,
    /// The balancer attempts that moved it during this wait (a pull, a push, a
    /// `load_balance`), with what they found.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub moved_by: Vec<String>,
}

impl Wait {
    pub fn len_ns(&self) -> u64 {
        self.end_ns - self.start_ns
    }
}

/// A task's waiting over the run, by cause, and its worst waits explained.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TaskWaits {
    pub task: usize,
    pub name: String,
    pub wait_ns: u64,
    /// Indexed like [`WaitCause::ALL`].
    pub by_cause: Vec<u64>,
    pub waits: u64,
    /// The longest waits, longest first.
    pub worst: Vec<Wait>,
    /// Time it ran, and what the machine's cost models charged it (simulator only): how
    /// much of that run was cache refill, and where the lines came from.
    pub run_ns: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub costs: Option<schedlab_probe::CostTimes>,
}

/// What an [`Explainer`] found over a run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Explained {
    pub tasks: Vec<TaskWaits>,
    /// Every wait of the focus tasks, in order.
    pub waits: Vec<Wait>,
    pub names: Vec<String>,
}

impl Explained {
    /// Keeps every task's totals but the worst waits of only the `keep` tasks that waited
    /// longest (ties: the lower task index), and drops the every-wait list: what a study
    /// holds of each of its hundreds of runs at once. A study's mechanism quotes a task's
    /// totals and longest wait; an HTML report shows the few tasks that waited longest.
    pub fn compact(&mut self, keep: usize) {
        let mut order: Vec<usize> = (0..self.tasks.len()).collect();
        order.sort_by(|&a, &b| self.tasks[b].wait_ns.cmp(&self.tasks[a].wait_ns).then(a.cmp(&b)));
        for &i in order.iter().skip(keep) {
            self.tasks[i].worst = Vec::new();
        }
        self.waits = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait(task: usize, len: u64) -> Wait {
        Wait {
            task,
            start_ns: 0,
            end_ns: len,
            preempted: true,
            wake: None,
            segments: Vec::new(),
            balance: Vec::new(),
            moved_by: Vec::new(),
        }
    }

    #[test]
    fn compact_keeps_the_longest_waiters_worst_and_every_total() {
        let lens = [5, 9, 9, 1];
        let tasks = lens
            .iter()
            .enumerate()
            .map(|(i, &l)| TaskWaits {
                task: i,
                name: format!("t{i}"),
                wait_ns: l,
                by_cause: vec![l; WaitCause::ALL.len()],
                waits: 1,
                worst: vec![wait(i, l)],
                run_ns: 0,
                costs: None,
            })
            .collect();
        let mut e = Explained { tasks, waits: vec![wait(0, 5)], names: Vec::new() };
        e.compact(2);
        let kept: Vec<usize> = e.tasks.iter().filter(|t| !t.worst.is_empty()).map(|t| t.task).collect();
        assert_eq!(kept, [1, 2], "the two that waited longest (a tie kept by index)");
        assert!(e.waits.is_empty());
        assert_eq!(e.tasks.iter().map(|t| t.wait_ns).collect::<Vec<_>>(), lens, "totals stay");
        assert!(e.tasks.iter().all(|t| t.by_cause[0] == t.wait_ns));
    }
}
