//! Decision records of the rt class's push and pull (`kernel/sched/rt.c:push_rt_task`,
//! `pull_rt_task`, v6.12) as balancer attempts (`Decision::Balance`): each push attempt
//! names the overloaded CPU, its best pushable task, `find_lowest_rq`'s view of the allowed
//! CPUs through `cpupri` (grouped by level, least important work first), the CPU taken and
//! by which preference, or why the task stayed; each pull names the rt-overloaded CPUs,
//! each source's candidate and why it was or was not taken. Built only while recording;
//! nothing here changes state. `src` is left `None`: the records concern the rt tasks they
//! name (`moved`, `refused`), not the fair tasks waiting on the same CPUs.

use super::{Busy, Planned, PullSkip, Rt, LEVEL_HIGHER, LEVEL_NORMAL, MAX_RT_PRIO};
use crate::chain::search::cpus_words;
use crate::chain::{Class, Curr};
use schedlab_machine::CpuSet;
use schedlab_sched_api::{BalanceKind, Ctx, Decision};
use schedlab_sim::{CpuId, TaskId};

/// How one `push_rt_task` attempt ended.
pub(super) enum PushEnd {
    /// The candidate is more important than the running rt task: it preempts here.
    Preempts,
    /// No rt task runs here: the candidate runs here at the next pick.
    RunsHere,
    /// `find_lowest_rq` found no allowed CPU running less important work.
    NoLower,
    /// The CPU found is this one, or no longer runs less important work.
    NotLower(CpuId),
    /// Pushed to this CPU.
    Pushed(CpuId),
}

/// A `cpupri` level in words (`cpupri.c:convert_prio`).
fn level_words(l: i32) -> String {
    match l {
        LEVEL_HIGHER => "a deadline task (CPUPRI_HIGHER)".into(),
        LEVEL_NORMAL => "no rt task (CPUPRI_NORMAL)".into(),
        p => format!("rt priority {}", 99 - p),
    }
}

/// An internal prio as `chrt` shows it.
fn prio_words(prio: usize) -> String {
    format!("rt priority {}", 99 - prio as i32)
}

impl Rt {
    /// `find_lowest_rq`'s view of the CPUs `p` may use: each level with its CPUs, least
    /// important work first.
    fn cpupri_words(&self, cx: &Ctx, p: TaskId, dl_busy: &Busy, planned: &Planned) -> String {
        let aff = &cx.task(p).affinity;
        let mut levels: Vec<(i32, CpuSet)> = Vec::new();
        for c in aff.iter() {
            let l = self.level(c, dl_busy, planned);
            match levels.iter_mut().find(|(x, _)| *x == l) {
                Some((_, s)) => s.insert(c),
                None => levels.push((l, CpuSet::single(cx.nr_cpus(), c))),
            }
        }
        levels.sort_by_key(|(l, _)| std::cmp::Reverse(*l));
        let parts: Vec<String> =
            levels.iter().map(|(l, s)| format!("{}: {}", level_words(*l), cpus_words(s))).collect();
        let after = if planned.is_empty() { "" } else { ", counting this call's earlier pushes" };
        format!("cpupri over its allowed CPUs {aff}{after}: {}", parts.join("; "))
    }

    /// Records one `push_rt_task` attempt on `cpu` for its best pushable task `next`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn record_push(
        &self,
        cx: &mut Ctx,
        cpu: CpuId,
        next: TaskId,
        curr: &[Curr],
        end: PushEnd,
        dl_busy: &Busy,
        planned: &Planned,
    ) {
        if !cx.recording() {
            return;
        }
        let prio = self.tasks[next].prio;
        let running = match curr[cpu] {
            Some((c, Class::Rt)) => format!("running rt priority {}", 99 - self.tasks[c].prio as i32),
            Some((_, Class::Dl)) => "running a deadline task".into(),
            Some(_) => "running a fair task".into(),
            None => "idle".into(),
        };
        let head = format!(
            "push_rt_task on CPU {cpu} (rt-overloaded: {} rt tasks queued, {running}): its best pushable task ({})",
            self.nr(cpu),
            prio_words(prio)
        );
        let search = || self.cpupri_words(cx, next, dl_busy, planned);
        let (found, moved, why) = match end {
            PushEnd::Preempts => (
                format!("{head} is more important than the running one: it preempts here (resched_curr)"),
                false,
                "it runs here next",
            ),
            PushEnd::RunsHere => (format!("{head} runs here at the next pick"), false, "it runs here next"),
            PushEnd::NoLower => (
                format!(
                    "{head} — find_lowest_rq: {}; none runs work less important than {}",
                    search(),
                    prio_words(prio)
                ),
                false,
                "no allowed CPU runs less important work",
            ),
            PushEnd::NotLower(t) => (
                format!(
                    "{head} — find_lowest_rq: {} → CPU {t}, which does not run less important work: stays",
                    search()
                ),
                false,
                "the CPU found runs no less important work",
            ),
            PushEnd::Pushed(t) => {
                let rule = self.preference_words(cx, next, t);
                (format!("{head} — find_lowest_rq: {} → CPU {t} ({rule}): pushed there", search()), true, "")
            }
        };
        let (moved, refused) =
            if moved { (vec![next], Vec::new()) } else { (Vec::new(), vec![(next, why.to_string())]) };
        cx.record(|| Decision::Balance { cpu, kind: BalanceKind::Tick, src: None, found, moved, refused });
    }

    /// Which of `find_lowest_rq`'s preferences chose `t` among the candidates.
    fn preference_words(&self, cx: &Ctx, p: TaskId, t: CpuId) -> &'static str {
        if t == cx.task(p).cpu {
            "its own CPU, task_cpu, is a candidate"
        } else if t == cx.this_cpu {
            "the CPU doing the push is a candidate"
        } else {
            "the next candidate in the rotation, cpumask_any_and_distribute"
        }
    }

    /// Records a push on `cpu` that found no pushable task while rt tasks wait there:
    /// they are pinned (`nr_cpus_allowed` 1, never on the pushable list).
    pub(super) fn record_nothing_pushable(&self, cx: &mut Ctx, cpu: CpuId, running: Option<TaskId>) {
        if !cx.recording() || self.nr(cpu) < 2 {
            return;
        }
        let mut waiting = Vec::new();
        self.queued(cpu, &mut waiting);
        waiting.retain(|&t| Some(t) != running);
        let found = format!("push_rt_task on CPU {cpu}: no pushable task ({} rt tasks queued)", self.nr(cpu));
        crate::chain::search::record_pinned_waiters(cx, cpu, found, waiting.into_iter());
    }

    /// Records a `pull_rt_task` on `this`: the rt-overloaded CPUs seen, each source's
    /// candidate with why it was passed over (`None`: pulled, or with `ipi` left to its
    /// CPU's push), and the outcome (`taken`: the tasks pulled, in the order taken; `ipi`:
    /// `RT_PUSH_IPI` asked every overloaded CPU to push instead).
    pub(super) fn record_pull(
        &self,
        cx: &mut Ctx,
        this: CpuId,
        overloaded: &CpuSet,
        considered: Vec<(TaskId, CpuId, Option<PullSkip>)>,
        taken: &[(TaskId, CpuId)],
        ipi: bool,
    ) {
        if overloaded.is_empty() {
            return;
        }
        let mine = match self.highest(this) {
            p if p < MAX_RT_PRIO => format!("its best queued task at {}", prio_words(p)),
            _ => "no rt task queued".into(),
        };
        let outcome = if ipi {
            format!("RT_PUSH_IPI asks {} to push instead (tell_cpu_to_push)", cpus_words(overloaded))
        } else if taken.is_empty() {
            "nothing to pull".into()
        } else {
            let each: Vec<String> = taken
                .iter()
                .map(|&(p, s)| format!("the task of {} from CPU {s}", prio_words(self.tasks[p].prio)))
                .collect();
            format!("pulled {}", each.join(", then "))
        };
        let found = format!("pull_rt_task on CPU {this} ({mine}): rt-overloaded {}; {outcome}", cpus_words(overloaded));
        let mut refused: Vec<(TaskId, String)> = Vec::new();
        for (p, src, skip) in considered {
            let why = match skip {
                Some(k) => self.skip_words(cx, this, src, p, k),
                None if ipi => format!("RT_PUSH_IPI: CPU {src} is asked to push it"),
                None => continue,
            };
            refused.push((p, why));
        }
        let moved = if ipi { Vec::new() } else { taken.iter().map(|&(p, _)| p).collect() };
        cx.record(|| Decision::Balance { cpu: this, kind: BalanceKind::NewIdle, src: None, found, moved, refused });
    }

    /// Why `pull_rt_task` on `this` passed over `p`, waiting on `src`.
    fn skip_words(&self, cx: &Ctx, this: CpuId, src: CpuId, p: TaskId, k: PullSkip) -> String {
        let prio = self.tasks[p].prio;
        match k {
            PullSkip::NotAbove => {
                format!("{} is not above CPU {this}'s best queued rt task by then", prio_words(prio))
            }
            PullSkip::Affinity => format!(
                "affinity: allowed CPUs {} exclude CPU {this}, and no other task waiting on CPU {src} may run there",
                cx.task(p).affinity
            ),
            PullSkip::AboutToRun => format!("CPU {src} is about to run it (more important than its running rt task)"),
            PullSkip::NoRt => format!("CPU {src} runs no rt task: it runs there at the next pick"),
        }
    }
}
