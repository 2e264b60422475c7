//! ULE's decision records: why one thread goes before another (`SchedClass::why`) and the
//! balancer's attempts (`sched_balance` pairs, `tdq_idled` steals), in words with numbers.

use super::interact::interact_score;
use super::params::Preempt;
use super::Ule;
use schedlab_sched_api::{BalanceKind, Cause, Ctx, Decision, Moment, Why};
use schedlab_sim::{CpuId, TaskId};

/// Which of ULE's three run queues a priority lands in (`tdq_runq_add`).
fn queue_of(u: &Ule, pri: u8) -> (u8, &'static str) {
    if pri < u.lay.min_kern {
        (0, "realtime (rtprio)")
    } else if pri < u.lay.min_batch {
        (0, "realtime (interactive)")
    } else if pri <= u.lay.max_batch {
        (1, "timeshare (batch)")
    } else {
        (2, "idle")
    }
}

impl Ule {
    fn who(&self, p: TaskId) -> String {
        let td = &self.td[p];
        format!("priority {}, score {}", td.priority, interact_score(&td.hist, self.t.interact))
    }

    pub(super) fn why_ule(&self, cx: &Ctx, cpu: CpuId, first: TaskId, second: TaskId, at: Moment) -> Why {
        let (p1, p2) = (self.td[first].priority, self.td[second].priority);
        if at == Moment::Wakeup && p2 < p1 {
            return self.why_not_preempted(cx, cpu, first, second);
        }
        let ((q1, n1), (q2, n2)) = (queue_of(self, p1), queue_of(self, p2));
        let thresh = self.t.interact;
        if q1 < q2 {
            return Why::new(
                Cause::Priority,
                format!(
                    "{n1} queue before {n2}: {} against {} (interactive below score {thresh})",
                    self.who(first),
                    self.who(second)
                ),
            );
        }
        if q1 == 0 && p1 < p2 {
            return Why::new(
                Cause::Priority,
                format!("better priority: {} against {}", self.who(first), self.who(second)),
            );
        }
        let text = if q1 == 1 {
            format!(
                "timeshare threads take turns on the calendar queue ({} against {})",
                self.who(first),
                self.who(second)
            )
        } else {
            format!("same queue, first in line ({} against {})", self.who(first), self.who(second))
        };
        Why::new(Cause::FairShare, text)
    }

    /// The woken `second` has the better priority, yet `first` keeps running.
    fn why_not_preempted(&self, cx: &Ctx, _cpu: CpuId, first: TaskId, second: TaskId) -> Why {
        let text = if self.t.preempt == Preempt::Kthread && !cx.task(first).kthread {
            format!(
                "only kernel threads preempt in the Linux port (preempt=kthread): {} waits for the running thread ({}) to block or end its slice",
                self.who(second),
                self.who(first)
            )
        } else {
            format!(
                "{} against the running {}: sched_shouldpreempt says no (preempt_thresh {})",
                self.who(second),
                self.who(first),
                self.t.preempt_thresh
            )
        };
        Why::new(Cause::NoPreempt, text)
    }

    /// `sched_balance_pair` moved `moved` (if any) from `high` to `low`: every other thread
    /// queued on `high` stays, by the one-thread-per-pair rule.
    pub(super) fn record_pair(&self, cx: &mut Ctx, high: CpuId, low: CpuId, loads: (u32, u32), moved: Option<TaskId>) {
        if !cx.recording() {
            return;
        }
        let idle: Vec<CpuId> = (0..self.tdq.len()).filter(|&c| self.tdq[c].load == 0 && c != low).collect();
        let steal = if self.t.steal_idle {
            format!(
                "idle CPUs ({} of them) steal only in tdq_idled, when they go idle, and only from a CPU with load ≥ steal_thresh {}",
                idle.len(),
                self.t.steal_thresh
            )
        } else {
            "idle stealing is off (steal_idle = 0)".to_string()
        };
        let found = format!(
            "sched_balance on CPU {} (every {}–{} stat ticks): most loaded CPU {high} (load {}) paired with CPU {low} (load {}); sched_balance_pair moves one thread per pair per round; {steal}",
            cx.this_cpu,
            self.t.balance_interval / 2,
            self.t.balance_interval * 3 / 2,
            loads.0,
            loads.1
        );
        let mut queued = Vec::new();
        self.queued_on(high, &mut queued);
        let refused = queued
            .into_iter()
            .filter(|&t| Some(t) != moved && self.tdq[high].curr != Some(t))
            .map(|t| (t, format!("one thread per pair per round: CPU {high} gave CPU {low} one thread")))
            .collect();
        let moved = moved.into_iter().collect();
        let me = cx.this_cpu;
        cx.record(|| Decision::Balance { cpu: me, kind: BalanceKind::Tick, src: Some(high), found, moved, refused });
    }

    /// `tdq_idled` on `me` looked at `victim` with steal threshold `thresh`.
    pub(super) fn record_idled(
        &self,
        cx: &mut Ctx,
        me: CpuId,
        victim: Option<CpuId>,
        thresh: u32,
        moved: Option<TaskId>,
    ) {
        if !cx.recording() {
            return;
        }
        let found = match victim {
            Some(v) => format!(
                "tdq_idled on idle CPU {me}: most loaded CPU {v} has load {} and {} transferable (steal_thresh {thresh}); steals one thread",
                self.tdq[v].load, self.tdq[v].transferable
            ),
            None => format!("tdq_idled on idle CPU {me}: no CPU with load ≥ steal_thresh {thresh}"),
        };
        let moved = moved.into_iter().collect();
        cx.record(|| Decision::Balance {
            cpu: me,
            kind: BalanceKind::NewIdle,
            src: victim,
            found,
            moved,
            refused: Vec::new(),
        });
    }

    fn queued_on(&self, cpu: CpuId, out: &mut Vec<TaskId>) {
        let q = &self.tdq[cpu];
        out.extend(q.realtime.iter().map(|(_, t)| t));
        out.extend(q.timeshare.rq.iter().map(|(_, t)| t));
        out.extend(q.idle.iter().map(|(_, t)| t));
    }
}
