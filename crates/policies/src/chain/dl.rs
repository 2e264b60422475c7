//! The deadline class (`kernel/sched/deadline.c`, v6.12): the constant bandwidth server
//! (CBS) per task — runtime, absolute deadline, period; throttling when the runtime runs out
//! and replenishment by the `dl_timer` — EDF per CPU, global EDF by push/pull over a
//! `cpudl`-like view of each CPU's earliest deadline, and admission control.

use super::slots::Slots;
use super::{Class, Curr};
use dl_why::{PullSkip, PushEnd};
use schedlab_machine::CpuSet;
use schedlab_sched_api::{Ctx, DlParams, TaskPolicy};
use schedlab_sim::{CpuId, Ns, TaskId};
use std::collections::BTreeSet;

#[path = "dl_why.rs"]
mod dl_why;

/// Per-task deadline state (`struct sched_dl_entity`).
#[derive(Clone, Copy, Default)]
pub struct DlTask {
    pub params: Option<DlParams>,
    /// Remaining runtime of the current instance (negative after an overrun).
    pub runtime: i64,
    /// Absolute deadline of the current instance.
    pub deadline: Ns,
    /// `dl_throttled`: out of runtime, waiting for `replenish_at`.
    pub throttled: bool,
    pub replenish_at: Ns,
    /// Queued on this CPU (ready or throttled).
    pub queued_on: Option<CpuId>,
    /// The deadline already counted as missed (each is counted once).
    missed: Ns,
    /// Bandwidth admitted for this task (20-bit fixed point).
    pub admitted_bw: u64,
    /// `is_dl_boosted`: running on a deadline donor's reservation through priority
    /// inheritance; out of runtime it is replenished at once, never throttled.
    pub boosted: bool,
}

pub struct Dl {
    pub tasks: Slots<DlTask>,
    /// Per CPU: ready tasks by (deadline, id), the running one included.
    ready: Vec<BTreeSet<(Ns, TaskId)>>,
    /// The CPUs with more than one ready task: the only ones that can be deadline-overloaded
    /// (`rd->dlo_mask` is a subset), so `pull_dl_task` visits these, not every CPU.
    multi: CpuSet,
    /// Per CPU: throttled tasks by (replenishment time, id).
    waiting: Vec<BTreeSet<(Ns, TaskId)>>,
    /// Admitted bandwidth in all (`dl_bw->total_bw`).
    pub total_bw: u64,
    rotor: usize,
    pub pushes: u64,
    pub pulls: u64,
    pub throttles: u64,
    pub misses: u64,
}

impl Dl {
    pub fn new(nr_cpus: usize) -> Dl {
        Dl {
            tasks: Slots::new(DlTask::default()),
            ready: vec![BTreeSet::new(); nr_cpus],
            multi: CpuSet::empty(nr_cpus),
            waiting: vec![BTreeSet::new(); nr_cpus],
            total_bw: 0,
            rotor: 0,
            pushes: 0,
            pulls: 0,
            throttles: 0,
            misses: 0,
        }
    }
    pub fn reserve_exact(&mut self, n: usize) {
        self.tasks.reserve_exact(n);
    }
    pub fn grow(&mut self, p: TaskId) {
        self.tasks.grow(p);
    }
    /// A deadline task is ready on `cpu` (its `cpudl` entry is set).
    pub fn busy(&self, cpu: CpuId) -> bool {
        !self.ready[cpu].is_empty()
    }
    /// `dl_rq->earliest_dl.curr`.
    pub fn earliest(&self, cpu: CpuId) -> Option<Ns> {
        self.ready[cpu].first().map(|&(d, _)| d)
    }
    /// `dl_rq->running_bw` of `cpu`: the bandwidth of its deadline tasks, ready or throttled
    /// (20-bit fixed point). The kernel keeps a task that blocked in it until its 0-lag
    /// time (`task_non_contending`, GRUB's inactive timer); here it leaves at once.
    pub fn running_bw(&self, cpu: CpuId) -> u64 {
        let bw = |set: &BTreeSet<(Ns, TaskId)>| set.iter().map(|&(_, p)| self.tasks[p].admitted_bw).sum::<u64>();
        bw(&self.ready[cpu]) + bw(&self.waiting[cpu])
    }
    pub fn nr(&self, cpu: CpuId) -> usize {
        self.ready[cpu].len() + self.waiting[cpu].len()
    }

    /// `setup_new_dl_entity`: a fresh instance at `now`.
    fn new_instance(&mut self, p: TaskId, now: Ns) {
        let t = &mut self.tasks[p];
        let d = t.params.expect("a deadline task has parameters");
        t.deadline = now + Ns(d.deadline);
        t.runtime = d.runtime as i64;
    }

    /// `dl_entity_overflow`: would the remaining runtime over the time left to the deadline
    /// exceed the reserved bandwidth `runtime / deadline`?
    fn overflow(t: &DlTask, d: &DlParams, now: Ns) -> bool {
        let left = u128::from(d.deadline) * t.runtime.max(0) as u128;
        let right = u128::from(t.deadline.0.saturating_sub(now.0)) * u128::from(d.runtime);
        right < left
    }

    /// `enqueue_task_dl`. A new task (or one that just became deadline) starts an instance;
    /// a waking one follows the CBS wakeup rule (`update_dl_entity`): it keeps its runtime
    /// and deadline unless the deadline passed or they would overflow its bandwidth; a
    /// throttled one waits for its `dl_timer`. Constrained deadlines (D < P) have two more
    /// rules: woken between the deadline and the next period, the task is throttled until
    /// that period (`dl_check_constrained_dl`); woken before the deadline with too much
    /// runtime left, it keeps the deadline with a reduced runtime (`update_dl_revised_wakeup`).
    pub fn enqueue(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, pol: &TaskPolicy, fresh: bool, wakeup: bool) {
        self.grow(p);
        let now = cx.now;
        if let TaskPolicy::Deadline(d) = *pol {
            self.tasks[p].params = Some(d);
        }
        let d = self.tasks[p].params.expect("enqueued as a deadline task");
        self.tasks[p].queued_on = Some(cpu);
        if fresh {
            if std::mem::take(&mut self.tasks[p].throttled) {
                self.record_throttle(cx, p, None);
            }
            self.new_instance(p, now);
        } else if self.tasks[p].throttled {
            if self.tasks[p].replenish_at > now {
                self.waiting[cpu].insert((self.tasks[p].replenish_at, p));
                cx.timer(cpu, self.tasks[p].replenish_at);
                return;
            }
            self.tasks[p].throttled = false;
            self.record_throttle(cx, p, None);
            self.replenish(p, now);
        } else if wakeup && self.constrained_late(p, &d, now) {
            self.throttle_until_next_period(cx, cpu, p, &d);
            return;
        } else if wakeup && (self.tasks[p].deadline < now || Self::overflow(&self.tasks[p], &d, now)) {
            if d.deadline != d.period && self.tasks[p].deadline >= now {
                self.revised_wakeup(p, &d, now);
            } else {
                self.new_instance(p, now);
            }
        }
        self.ready[cpu].insert((self.tasks[p].deadline, p));
        self.note_ready(cpu);
    }

    /// Keeps `multi` in step with `cpu`'s ready tasks.
    fn note_ready(&mut self, cpu: CpuId) {
        if self.ready[cpu].len() > 1 {
            self.multi.insert(cpu);
        } else {
            self.multi.remove(cpu);
        }
    }

    /// `dl_check_constrained_dl` (`deadline.c`, v6.12), its condition: a constrained-deadline
    /// task (D < P) waking after its deadline but before its next period starts. A fresh
    /// instance now would let it run `runtime / D`, more than its `runtime / P`.
    fn constrained_late(&self, p: TaskId, d: &DlParams, now: Ns) -> bool {
        let t = &self.tasks[p];
        let next_period = Ns((t.deadline.0 + d.period).saturating_sub(d.deadline));
        d.deadline != d.period && t.deadline < now && now < next_period
    }

    /// `dl_check_constrained_dl`'s action: throttled (runtime at most zero) with the
    /// `dl_timer` at the next period, whose replenishment starts the next instance.
    fn throttle_until_next_period(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, d: &DlParams) {
        let t = &mut self.tasks[p];
        t.runtime = t.runtime.min(0);
        t.throttled = true;
        t.replenish_at = Ns((t.deadline.0 + d.period).saturating_sub(d.deadline));
        let at = t.replenish_at;
        self.throttles += 1;
        self.waiting[cpu].insert((at, p));
        cx.timer(cpu, at);
        self.record_throttle(cx, p, Some("woken after its deadline, before its next period (dl_check_constrained_dl)"));
    }

    /// `update_dl_revised_wakeup` (`deadline.c`, v6.12): a constrained-deadline task woken
    /// before its deadline with more runtime than its density allows keeps its deadline and
    /// gets `runtime = density × laxity`, `density = runtime / D` in 20-bit fixed point.
    fn revised_wakeup(&mut self, p: TaskId, d: &DlParams, now: Ns) {
        let t = &mut self.tasks[p];
        let laxity = t.deadline.0 - now.0;
        let density = schedlab_sched_api::to_ratio(d.deadline, d.runtime);
        t.runtime = ((u128::from(density) * u128::from(laxity)) >> 20) as i64;
    }

    /// `dequeue_task_dl`: off the ready or the throttled set (a throttled task that blocks
    /// keeps its throttle until its replenishment time).
    pub fn dequeue(&mut self, cpu: CpuId, p: TaskId) {
        let t = self.tasks[p];
        self.ready[cpu].remove(&(t.deadline, p));
        self.note_ready(cpu);
        self.waiting[cpu].remove(&(t.replenish_at, p));
        self.tasks[p].queued_on = None;
    }

    /// `replenish_dl_entity`: add runtime a period at a time (postponing the deadline by
    /// a period each) until positive; a deadline left in the past restarts the instance.
    fn replenish(&mut self, p: TaskId, now: Ns) {
        let t = &mut self.tasks[p];
        let d = t.params.expect("a deadline task has parameters");
        if t.runtime <= 0 {
            // Whole periods at once: an overrun of k runtimes costs k periods.
            let k = (-t.runtime) as u64 / d.runtime + 1;
            t.deadline += Ns(k * d.period);
            t.runtime += (k * d.runtime) as i64;
        }
        if t.deadline < now {
            t.deadline = now + Ns(d.deadline);
            t.runtime = d.runtime as i64;
        }
    }

    /// `update_curr_dl_se`: charge `delta` to the running task; a deadline passed while
    /// its instance still runs counts as a miss; out of runtime, it is throttled until
    /// its next period (`start_dl_timer` at `deadline − D + P`) and the CPU rescheduled.
    pub fn update_curr(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, delta: u64) {
        let now = cx.now;
        let t = &mut self.tasks[p];
        if t.queued_on != Some(cpu) || t.throttled {
            return;
        }
        t.runtime -= delta as i64;
        if now > t.deadline && t.missed != t.deadline {
            t.missed = t.deadline;
            self.misses += 1;
        }
        if self.tasks[p].runtime <= 0 {
            if self.tasks[p].boosted {
                self.replenish_boosted(cx, cpu, p);
            } else {
                self.throttle(cx, cpu, p);
            }
        }
    }

    /// `update_curr_dl_se` for a PI-boosted task (deadline.c v6.12): instead of the
    /// `dl_timer`, an immediate `ENQUEUE_REPLENISH` — the deadline moves a period at a time
    /// and the CPU reschedules in case another task's deadline is now earlier.
    fn replenish_boosted(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId) {
        let before = self.tasks[p].deadline;
        self.ready[cpu].remove(&(before, p));
        self.replenish(p, cx.now);
        self.ready[cpu].insert((self.tasks[p].deadline, p));
        cx.resched_curr(cpu);
    }

    /// Throttles `p` (queued on `cpu`) until its next period; `sched_yield` uses this with
    /// the runtime zeroed (`yield_task_dl`).
    pub fn throttle(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId) {
        let t = self.tasks[p];
        let d = t.params.expect("a deadline task has parameters");
        self.ready[cpu].remove(&(t.deadline, p));
        self.note_ready(cpu);
        self.throttles += 1;
        let at = Ns((t.deadline.0 + d.period).saturating_sub(d.deadline));
        self.tasks[p].throttled = true;
        self.tasks[p].replenish_at = at;
        self.waiting[cpu].insert((at, p));
        cx.timer(cpu, at);
        cx.resched_curr(cpu);
        self.record_throttle(cx, p, Some("its runtime is used up (update_curr_dl_se)"));
    }

    /// `yield_task_dl`: the instance ends; the task sleeps until its next period.
    pub fn yield_task(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId) {
        if self.tasks[p].queued_on == Some(cpu) && !self.tasks[p].throttled {
            self.tasks[p].runtime = 0;
            self.throttle(cx, cpu, p);
        }
    }

    /// `dl_task_timer` on `cpu`: replenish every throttled task whose time has come and
    /// requeue it; preempt if it beats what runs. Returns the next expiry, if any.
    pub fn timer(&mut self, cx: &mut Ctx, cpu: CpuId, curr: &[Curr]) -> Option<Ns> {
        while let Some(&(at, p)) = self.waiting[cpu].first() {
            if at > cx.now {
                return Some(at);
            }
            self.waiting[cpu].remove(&(at, p));
            self.tasks[p].throttled = false;
            self.record_throttle(cx, p, None);
            self.replenish(p, cx.now);
            self.ready[cpu].insert((self.tasks[p].deadline, p));
            self.note_ready(cpu);
            if self.preempts(cpu, p, curr) {
                cx.resched_curr(cpu);
            }
        }
        None
    }

    /// Whether `p` should run instead of `cpu`'s current task: it is not deadline, or it
    /// is with a later deadline (`wakeup_preempt_dl`; equal deadlines do not preempt).
    pub fn preempts(&self, cpu: CpuId, p: TaskId, curr: &[Curr]) -> bool {
        match curr[cpu] {
            Some((c, Class::Dl)) => c != p && self.tasks[p].deadline < self.tasks[c].deadline,
            _ => true,
        }
    }

    /// `find_later_rq` over `cpudl_find`: an allowed CPU with no deadline task (`task_cpu`,
    /// then `this_cpu`, then a rotation), else the one whose earliest deadline is latest,
    /// if later than `p`'s.
    /// `cpudl` of `cpu` with this call's planned pushes applied: its earliest deadline.
    fn earliest_planned(&self, cpu: CpuId, planned: &[(CpuId, Ns)]) -> Option<Ns> {
        let mut e = self.earliest(cpu);
        for &(c, d) in planned {
            if c == cpu {
                e = Some(e.map_or(d, |x| x.min(d)));
            }
        }
        e
    }

    fn find_later_rq(&mut self, cx: &mut Ctx, p: TaskId, planned: &[(CpuId, Ns)]) -> Option<CpuId> {
        let rotor = super::search::begin(cx, p, &mut self.rotor)?;
        let n = cx.nr_cpus();
        let aff = &cx.task(p).affinity;
        let free = |c: CpuId| aff.contains(c) && self.earliest_planned(c, planned).is_none();
        if let Some(c) = super::search::prefer(cx, p, rotor, free) {
            return Some(c);
        }
        let dl = self.tasks[p].deadline;
        (0..n)
            .filter(|&c| aff.contains(c))
            .filter_map(|c| self.earliest_planned(c, planned).map(|e| (e, c)))
            .filter(|&(e, _)| dl < e)
            .max_by_key(|&(e, c)| (e, std::cmp::Reverse(c)))
            .map(|(_, c)| c)
    }

    /// `select_task_rq_dl`: if the previous CPU runs a deadline task that is pinned or due
    /// no later than `p`, look for a CPU where `p` would run.
    pub fn select(&mut self, cx: &mut Ctx, p: TaskId, prev: CpuId, curr: &[Curr]) -> CpuId {
        self.grow(p);
        let path = "select_task_rq_dl";
        let Some((c, Class::Dl)) = curr[prev] else {
            super::search::record(cx, p, prev, prev, path, || "no deadline task runs on the previous CPU".into());
            return prev;
        };
        let dl = self.tasks[p].deadline;
        if cx.task(c).affinity.count() >= 2 && dl < self.tasks[c].deadline {
            let why = || {
                format!(
                    "its deadline {} ms is earlier than the running deadline task's: it preempts there",
                    dl.0 / 1_000_000
                )
            };
            super::search::record(cx, p, prev, prev, path, why);
            return prev;
        }
        let target = self.find_later_rq(cx, p, &[]);
        let cpu = match target {
            Some(t) if self.earliest(t).is_none_or(|e| dl < e) => t,
            _ => prev,
        };
        let pinned = cx.task(p).affinity.count() < 2;
        let why = || match target {
            _ if pinned => "pinned: find_later_rq does not search".to_string(),
            None => "find_later_rq: every allowed CPU runs a deadline task due no later: stays".to_string(),
            Some(t) if t == cpu && self.earliest(t).is_none() => format!("find_later_rq: CPU {t} has no deadline task"),
            Some(t) if t == cpu => {
                format!("find_later_rq: CPU {t}'s earliest deadline is the latest, after this one's")
            }
            Some(t) => format!("find_later_rq found CPU {t}, but its earliest deadline is no later: stays"),
        };
        super::search::record(cx, p, prev, cpu, path, why);
        cpu
    }

    /// The earliest-deadline ready task of `cpu` that is not running and may move.
    fn pushable(&self, cx: &Ctx, cpu: CpuId, running: Option<TaskId>) -> Option<TaskId> {
        self.ready[cpu].iter().map(|&(_, t)| t).find(|&t| Some(t) != running && cx.task(t).affinity.count() > 1)
    }

    /// `push_dl_tasks`: while `cpu` has a pushable task that would not run here at once,
    /// move it to a CPU where it would run; targets already chosen in this call count
    /// with their new deadline (the kernel applies the moves after the hook). Each attempt
    /// is recorded while decisions are (`dl_why.rs`).
    pub fn push(&mut self, cx: &mut Ctx, cpu: CpuId, curr: &[Curr]) {
        let running = curr[cpu].map(|(t, _)| t);
        let mut planned: Vec<(CpuId, Ns)> = Vec::new();
        let mut moved: Vec<TaskId> = Vec::new();
        loop {
            let next = self.ready[cpu]
                .iter()
                .map(|&(_, t)| t)
                .find(|&t| Some(t) != running && !moved.contains(&t) && cx.task(t).affinity.count() > 1);
            let Some(next) = next else {
                if moved.is_empty() {
                    self.record_nothing_pushable(cx, cpu, running);
                }
                return;
            };
            if self.preempts(cpu, next, curr) {
                if matches!(curr[cpu], Some((_, Class::Dl))) {
                    cx.resched_curr(cpu);
                }
                self.record_push(cx, cpu, next, curr, PushEnd::RunsHere, &planned);
                return;
            }
            let d = self.tasks[next].deadline;
            let Some(t) = self.find_later_rq(cx, next, &planned) else {
                self.record_push(cx, cpu, next, curr, PushEnd::NoLater, &planned);
                return;
            };
            if t == cpu || self.earliest_planned(t, &planned).is_some_and(|e| e <= d) {
                self.record_push(cx, cpu, next, curr, PushEnd::NotLater(t), &planned);
                return;
            }
            self.pushes += 1;
            cx.migrate(next, t);
            self.record_push(cx, cpu, next, curr, PushEnd::Pushed(t), &planned);
            planned.push((t, d));
            moved.push(next);
        }
    }

    /// `pick_earliest_pushable_dl_task` (`deadline.c`, v6.12): the earliest-deadline
    /// pushable task of `src` that may run on `this` (`task_is_pushable`).
    fn pushable_to(&self, cx: &Ctx, src: CpuId, running: Option<TaskId>, this: CpuId) -> Option<TaskId> {
        self.ready[src]
            .iter()
            .map(|&(_, t)| t)
            .find(|&t| Some(t) != running && cx.task(t).affinity.count() > 1 && cx.allowed(t, this))
    }

    /// Why `pull_dl_task` passes over `p`, the candidate of `src`, when the pulling CPU's
    /// earliest deadline is `mine`, or `None` if `p` is pulled.
    fn pull_skip(&self, src: CpuId, p: TaskId, mine: Option<Ns>, curr: &[Curr]) -> Option<PullSkip> {
        let d = self.tasks[p].deadline;
        if mine.is_some_and(|m| m <= d) {
            Some(PullSkip::NotEarlier)
        } else if self.preempts(src, p, curr) {
            Some(PullSkip::RunsThere)
        } else {
            None
        }
    }

    /// `pull_dl_task` (v6.12): visit the CPUs with more than one deadline task, in order,
    /// and from each take the earliest-deadline waiting task that may run on `this`
    /// (`pick_earliest_pushable_dl_task`) if it is due before everything `this` has by
    /// then — so a later source's earlier task is pulled too — and not before the task
    /// running on its own CPU (which would run it next).
    ///
    /// Only the CPUs in `dlo_mask` are visited (here: those with more than one ready task
    /// and a pushable one), each a CPU read; with none the kernel returns after
    /// `dl_overloaded`, so the pull costs nothing per CPU of the machine.
    pub fn pull(&mut self, cx: &mut Ctx, this: CpuId, curr: &[Curr]) {
        if self.multi.is_empty() {
            return;
        }
        let n = cx.nr_cpus();
        // What the pull saw, only while decisions are recorded.
        let mut seen = cx.recording().then(|| (CpuSet::empty(n), Vec::new()));
        let mut mine = self.earliest(this);
        let mut taken: Vec<(TaskId, CpuId)> = Vec::new();
        for src in self.multi.iter().filter(|&c| c != this) {
            let running = curr[src].map(|(t, _)| t);
            let (p, skip) = match self.pushable_to(cx, src, running, this) {
                Some(p) => (p, self.pull_skip(src, p, mine, curr)),
                None => match self.pushable(cx, src, running) {
                    Some(p) => (p, Some(PullSkip::Affinity)),
                    None => continue,
                },
            };
            cx.scanned_cpus(1);
            if let Some((o, v)) = seen.as_mut() {
                o.insert(src);
                v.push((p, src, skip));
            }
            if skip.is_none() {
                mine = Some(self.tasks[p].deadline);
                taken.push((p, src));
            }
        }
        if let Some((o, v)) = seen {
            self.record_pull(cx, this, &o, v, &taken);
        }
        for &(p, _) in &taken {
            self.pulls += 1;
            cx.migrate(p, this);
        }
    }

    pub fn pick(&self, cpu: CpuId) -> Option<TaskId> {
        self.ready[cpu].first().map(|&(_, t)| t)
    }

    pub fn queued(&self, cpu: CpuId, out: &mut Vec<TaskId>) {
        out.extend(self.ready[cpu].iter().map(|&(_, t)| t));
        out.extend(self.waiting[cpu].iter().map(|&(_, t)| t));
    }

    pub fn check(&self, cpu: CpuId) -> Result<(), String> {
        if self.multi.contains(cpu) != (self.ready[cpu].len() > 1) {
            return Err(format!(
                "dl CPU {cpu}: {} ready but the overload candidates say otherwise",
                self.ready[cpu].len()
            ));
        }
        for &(d, t) in &self.ready[cpu] {
            let x = &self.tasks[t];
            if x.deadline != d || x.throttled || x.queued_on != Some(cpu) {
                return Err(format!("dl CPU {cpu}: ready task {t} out of step (deadline, throttle or CPU)"));
            }
        }
        for &(at, t) in &self.waiting[cpu] {
            let x = &self.tasks[t];
            if x.replenish_at != at || !x.throttled || x.queued_on != Some(cpu) {
                return Err(format!("dl CPU {cpu}: throttled task {t} out of step"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "dl_tests.rs"]
mod tests;
