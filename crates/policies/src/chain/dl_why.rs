//! Decision records of the deadline class's push and pull
//! (`kernel/sched/deadline.c:push_dl_task`, `pull_dl_task`, v6.12) as balancer attempts
//! (`Decision::Balance`): each push attempt names the overloaded CPU, its earliest pushable
//! task, `find_later_rq`'s view of the allowed CPUs through `cpudl` (the CPUs without a
//! deadline task, then the latest earliest deadlines), the CPU taken and why, or why the
//! task stayed; each pull names the CPUs with a waiting deadline task, each one's candidate
//! and why it was or was not taken. Built only while recording; nothing here changes state.
//! `src` is left `None`: the records concern the deadline tasks they name.

use super::Dl;
use crate::chain::search::cpus_words;
use crate::chain::{Class, Curr};
use schedlab_machine::CpuSet;
use schedlab_sched_api::{fmt_ns, BalanceKind, Ctx, Decision};
use schedlab_sim::{CpuId, Ns, TaskId};

/// CPUs with a deadline task listed by name in a `cpudl` view before the rest are counted.
const MAX_LISTED: usize = 6;

/// How one `push_dl_task` attempt ended.
pub(super) enum PushEnd {
    /// It runs here next: due before the running deadline task, or none runs here.
    RunsHere,
    /// `find_later_rq` found no allowed CPU where it would run.
    NoLater,
    /// The CPU found is this one, or now has a deadline due no later.
    NotLater(CpuId),
    /// Pushed to this CPU.
    Pushed(CpuId),
}

/// Why `pull_dl_task` passed over a CPU's earliest pushable deadline task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PullSkip {
    /// Its affinity excludes the pulling CPU.
    Affinity,
    /// Not due before the pulling CPU's earliest deadline.
    NotEarlier,
    /// Its own CPU runs it next (due before what runs there, or nothing deadline runs).
    RunsThere,
}

fn due(d: Ns, now: Ns) -> String {
    format!("due in {}", fmt_ns(d.0 as i64 - now.0 as i64))
}

/// A point in time as seconds with µs.
fn at(t: Ns) -> String {
    format!("{}.{:06} s", t.0 / 1_000_000_000, t.0 % 1_000_000_000 / 1_000)
}

impl Dl {
    /// Records that `p` is throttled (`rule`: why) until its replenishment, or (`None`)
    /// released by it.
    pub(super) fn record_throttle(&self, cx: &mut Ctx, p: TaskId, rule: Option<&str>) {
        if !cx.recording() {
            return;
        }
        let why = rule.map_or(String::new(), |r| {
            format!("throttled by the CBS: {r}; the dl_timer replenishes it at {}", at(self.tasks[p].replenish_at))
        });
        let throttled = rule.is_some();
        cx.record(|| Decision::Throttle { task: p, throttled, why });
    }

    /// `find_later_rq`'s view of the CPUs `p` may use through `cpudl`: those without a
    /// deadline task, then the others by their earliest deadline, latest first.
    fn cpudl_words(&self, cx: &Ctx, p: TaskId, planned: &[(CpuId, Ns)]) -> String {
        let aff = &cx.task(p).affinity;
        let mut free = CpuSet::empty(cx.nr_cpus());
        let mut busy: Vec<(Ns, CpuId)> = Vec::new();
        for c in aff.iter() {
            match self.earliest_planned(c, planned) {
                None => free.insert(c),
                Some(e) => busy.push((e, c)),
            }
        }
        busy.sort_by_key(|&(e, c)| (std::cmp::Reverse(e), c));
        let mut parts = Vec::new();
        if !free.is_empty() {
            parts.push(format!("no deadline task: {}", cpus_words(&free)));
        }
        let listed: Vec<String> =
            busy.iter().take(MAX_LISTED).map(|&(e, c)| format!("CPU {c} {}", due(e, cx.now))).collect();
        if !listed.is_empty() {
            let more = busy.len().saturating_sub(MAX_LISTED);
            let more = if more > 0 { format!(", {more} more") } else { String::new() };
            parts.push(format!("earliest deadlines, latest first: {}{more}", listed.join(", ")));
        }
        let after = if planned.is_empty() { "" } else { ", counting this call's earlier pushes" };
        format!("cpudl over its allowed CPUs {aff}{after}: {}", parts.join("; "))
    }

    /// Records one `push_dl_task` attempt on `cpu` for its earliest pushable task `next`.
    pub(super) fn record_push(
        &self,
        cx: &mut Ctx,
        cpu: CpuId,
        next: TaskId,
        curr: &[Curr],
        end: PushEnd,
        planned: &[(CpuId, Ns)],
    ) {
        if !cx.recording() {
            return;
        }
        let now = cx.now;
        let d = self.tasks[next].deadline;
        let running = match curr[cpu] {
            Some((c, Class::Dl)) => format!("running a deadline task {}", due(self.tasks[c].deadline, now)),
            Some(_) => "running no deadline task".into(),
            None => "idle".into(),
        };
        let head = format!(
            "push_dl_task on CPU {cpu} ({} deadline tasks ready, {running}): its earliest pushable task ({})",
            self.ready[cpu].len(),
            due(d, now)
        );
        let search = || self.cpudl_words(cx, next, planned);
        let (found, why) = match end {
            PushEnd::RunsHere => {
                (format!("{head} runs here next (resched_curr if a later deadline runs)"), "it runs here next")
            }
            PushEnd::NoLater => (
                format!("{head} — find_later_rq: {}; every one has a deadline due no later", search()),
                "no allowed CPU would run it: every one has a deadline due no later",
            ),
            PushEnd::NotLater(t) => (
                format!("{head} — find_later_rq: {} → CPU {t}, where it would not run: stays", search()),
                "the CPU found would not run it",
            ),
            PushEnd::Pushed(t) => {
                let rule = if self.earliest_planned(t, planned).is_none() {
                    "no deadline task there"
                } else {
                    "its earliest deadline is the latest, after this one"
                };
                (format!("{head} — find_later_rq: {} → CPU {t} ({rule}): pushed there", search()), "")
            }
        };
        let (moved, refused) = match end {
            PushEnd::Pushed(_) => (vec![next], Vec::new()),
            _ => (Vec::new(), vec![(next, why.to_string())]),
        };
        cx.record(|| Decision::Balance { cpu, kind: BalanceKind::Tick, src: None, found, moved, refused });
    }

    /// Records a push on `cpu` that found no pushable task while deadline tasks wait
    /// ready there: they are pinned.
    pub(super) fn record_nothing_pushable(&self, cx: &mut Ctx, cpu: CpuId, running: Option<TaskId>) {
        if !cx.recording() || self.ready[cpu].len() < 2 {
            return;
        }
        let found =
            format!("push_dl_task on CPU {cpu}: no pushable task ({} deadline tasks ready)", self.ready[cpu].len());
        let waiting = self.ready[cpu].iter().map(|&(_, t)| t).filter(|&t| Some(t) != running);
        crate::chain::search::record_pinned_waiters(cx, cpu, found, waiting);
    }

    /// Records a `pull_dl_task` on `this`: the CPUs with a deadline task waiting, each
    /// one's earliest pushable task that may run on `this` (or, if none may, its earliest
    /// pushable one) with why it was passed over (`None`: pulled), and the tasks pulled, in
    /// the order taken.
    pub(super) fn record_pull(
        &self,
        cx: &mut Ctx,
        this: CpuId,
        sources: &CpuSet,
        considered: Vec<(TaskId, CpuId, Option<PullSkip>)>,
        taken: &[(TaskId, CpuId)],
    ) {
        if sources.is_empty() {
            return;
        }
        let now = cx.now;
        let mine = self
            .earliest(this)
            .map_or("no deadline task".to_string(), |e| format!("earliest deadline {}", due(e, now)));
        let outcome = if taken.is_empty() {
            "nothing to pull".into()
        } else {
            let each: Vec<String> = taken
                .iter()
                .map(|&(p, s)| format!("the task {} from CPU {s}", due(self.tasks[p].deadline, now)))
                .collect();
            format!("pulled {}", each.join(", then "))
        };
        let found =
            format!("pull_dl_task on CPU {this} ({mine}): a deadline task waits on {}; {outcome}", cpus_words(sources));
        let mut refused = Vec::new();
        for (p, src, skip) in considered {
            let d = self.tasks[p].deadline;
            // The last task pulled from a CPU visited before `src`: the bar `p` had to beat.
            let before = taken.iter().rev().find(|&&(_, s)| s < src);
            let why = match (skip, before) {
                (Some(PullSkip::Affinity), _) => format!(
                    "affinity: allowed CPUs {} exclude CPU {this}, and no other task waiting on CPU {src} may run there",
                    cx.task(p).affinity
                ),
                (Some(PullSkip::NotEarlier), Some(&(_, s))) => {
                    format!("{} is not before the task just pulled from CPU {s}", due(d, now))
                }
                (Some(PullSkip::NotEarlier), None) => format!("{} is not before CPU {this}'s {mine}", due(d, now)),
                (Some(PullSkip::RunsThere), _) => format!("CPU {src} runs it next"),
                (None, _) => continue,
            };
            refused.push((p, why));
        }
        let moved = taken.iter().map(|&(p, _)| p).collect();
        cx.record(|| Decision::Balance { cpu: this, kind: BalanceKind::NewIdle, src: None, found, moved, refused });
    }
}
