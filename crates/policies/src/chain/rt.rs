//! The real-time class (`kernel/sched/rt.c`, v6.12): per-CPU priority arrays of 100 FIFO
//! lists with a bitmap, `SCHED_FIFO` and `SCHED_RR`, and push/pull between CPUs over a
//! `cpupri`-like view of what each CPU runs.
//!
//! Priorities here are the kernel's internal `prio` (0 = `rt_priority` 99, the most
//! important; 98 = `rt_priority` 1). The running task stays at the head of its list, as in
//! the kernel, so a preempted task resumes before equal-priority tasks that arrived later.

use super::slots::Slots;
use super::{Class, Curr};
use rt_why::PushEnd;
use schedlab_machine::CpuSet;
use schedlab_sched_api::{Ctx, TaskPolicy};
use schedlab_sim::{CpuId, TaskId};
use std::collections::VecDeque;

#[path = "rt_why.rs"]
mod rt_why;

/// `MAX_RT_PRIO`: the number of rt priority lists (and the bitmap's sentinel bit).
pub const MAX_RT_PRIO: usize = 100;

/// `cpupri` level of a CPU with a deadline task queued (`CPUPRI_HIGHER`): never a push target.
const LEVEL_HIGHER: i32 = -1;
/// `cpupri` level of a CPU with no rt task (`CPUPRI_NORMAL`): idle or running fair tasks.
const LEVEL_NORMAL: i32 = MAX_RT_PRIO as i32;

/// `struct rt_prio_array`: one FIFO list per priority and the bitmap of non-empty lists.
/// The lists are allocated on the CPU's first rt enqueue: the kernel embeds them in every
/// runqueue, but here 100 empty lists on each of 1024 CPUs that never see an rt task
/// would be 3.3 MB, and most workloads run no rt task at all.
#[derive(Clone, Default)]
pub struct PrioArray {
    bitmap: [u64; 2],
    /// Empty until the first enqueue, then `MAX_RT_PRIO` lists.
    queue: Vec<VecDeque<TaskId>>,
    nr: usize,
}

impl PrioArray {
    /// `sched_find_first_bit`: the best non-empty priority.
    pub fn first(&self) -> Option<usize> {
        self.next_from(0)
    }
    /// The best non-empty priority at or after `prio` (the bitmap's next set bit).
    fn next_from(&self, prio: usize) -> Option<usize> {
        if prio >= MAX_RT_PRIO {
            return None;
        }
        let mut w = prio / 64;
        let mut bits = self.bitmap[w] & (!0u64 << (prio % 64));
        loop {
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
            w += 1;
            bits = *self.bitmap.get(w)?;
        }
    }
    /// The list at `prio` (empty if the lists are not allocated yet).
    fn list(&self, prio: usize) -> impl Iterator<Item = &TaskId> {
        self.queue.get(prio).into_iter().flatten()
    }
    fn len_at(&self, prio: usize) -> usize {
        self.queue.get(prio).map_or(0, VecDeque::len)
    }
    fn set(&mut self, prio: usize, on: bool) {
        let (w, b) = (prio / 64, prio % 64);
        if on {
            self.bitmap[w] |= 1 << b;
        } else {
            self.bitmap[w] &= !(1 << b);
        }
    }
    /// `__enqueue_rt_entity`: tail, or head (`ENQUEUE_HEAD`).
    fn push(&mut self, prio: usize, p: TaskId, head: bool) {
        if self.queue.is_empty() {
            self.queue = vec![VecDeque::new(); MAX_RT_PRIO];
        }
        if head {
            self.queue[prio].push_front(p);
        } else {
            self.queue[prio].push_back(p);
        }
        self.set(prio, true);
        self.nr += 1;
    }
    /// `__dequeue_rt_entity`.
    fn remove(&mut self, prio: usize, p: TaskId) -> bool {
        let Some(q) = self.queue.get_mut(prio) else { return false };
        let Some(i) = q.iter().position(|&t| t == p) else { return false };
        q.remove(i);
        if q.is_empty() {
            self.set(prio, false);
        }
        self.nr -= 1;
        true
    }
    /// The non-empty priorities, best first, as the bitmap says.
    fn prios(&self) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(self.first(), |&p| self.next_from(p + 1))
    }
}

/// Per-task rt state (`struct sched_rt_entity`).
#[derive(Clone, Copy, Default)]
struct RtTask {
    /// The prio it is queued at (its list), while queued.
    prio: usize,
    queued_on: Option<CpuId>,
    /// `time_slice` in ticks (SCHED_RR; not reset by sleeping).
    time_slice: u64,
}

pub struct Rt {
    rq: Vec<PrioArray>,
    /// The CPUs with more than one rt task queued: the only ones that can be rt-overloaded
    /// (`rd->rto_mask` is a subset), so `pull_rt_task` visits these, not every CPU.
    multi: CpuSet,
    tasks: Slots<RtTask>,
    /// `sched_rr_timeslice` in ticks.
    pub rr_ticks: u64,
    /// `find_lowest_rq`'s rotation among equal candidates (`cpumask_any_and_distribute`).
    rotor: usize,
    pub pushes: u64,
    pub pulls: u64,
}

/// What tells whether a CPU has a deadline task queued.
pub type Busy<'a> = dyn Fn(CpuId) -> bool + 'a;

/// Why `pull_rt_task` passed over an overloaded CPU's best pushable task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PullSkip {
    /// Not more important than what the pulling CPU has queued.
    NotAbove,
    /// Its affinity excludes the pulling CPU.
    Affinity,
    /// More important than its CPU's running rt task: that CPU runs it next.
    AboutToRun,
    /// Its CPU runs no rt task: it runs there at the next pick.
    NoRt,
}

/// Levels of CPUs already targeted by the pushes of this call: (CPU, the pushed prio).
type Planned = [(CpuId, usize)];

/// The internal prio of an rt policy (`99 − rt_priority`).
pub fn rt_prio(pol: &TaskPolicy) -> usize {
    (99 - i32::from(pol.rt_priority())).clamp(0, MAX_RT_PRIO as i32 - 1) as usize
}

/// An internal rt prio in words, as `chrt` shows it.
fn rt_words(prio: usize) -> String {
    format!("the task (rt priority {}, prio {prio})", 99 - prio as i32)
}

impl Rt {
    pub fn new(nr_cpus: usize, rr_ticks: u64) -> Rt {
        Rt {
            rq: vec![PrioArray::default(); nr_cpus],
            multi: CpuSet::empty(nr_cpus),
            tasks: Slots::new(RtTask { prio: 0, queued_on: None, time_slice: rr_ticks }),
            rr_ticks,
            rotor: 0,
            pushes: 0,
            pulls: 0,
        }
    }
    pub fn reserve_exact(&mut self, n: usize) {
        self.tasks.reserve_exact(n);
    }
    pub fn grow(&mut self, p: TaskId) {
        self.tasks.grow(p);
    }
    pub fn nr(&self, cpu: CpuId) -> usize {
        self.rq[cpu].nr
    }
    /// `rt_rq->highest_prio.curr`, `MAX_RT_PRIO` if none.
    pub fn highest(&self, cpu: CpuId) -> usize {
        self.rq[cpu].first().unwrap_or(MAX_RT_PRIO)
    }
    pub fn prio_of(&self, p: TaskId) -> usize {
        self.tasks[p].prio
    }

    /// `enqueue_task_rt` at `pol`'s priority; `head` for a task whose priority was lowered.
    pub fn enqueue(&mut self, cpu: CpuId, p: TaskId, pol: &TaskPolicy, head: bool) {
        self.grow(p);
        let prio = rt_prio(pol);
        self.tasks[p].prio = prio;
        self.tasks[p].queued_on = Some(cpu);
        self.rq[cpu].push(prio, p, head);
        self.note_nr(cpu);
    }
    /// `dequeue_task_rt`.
    pub fn dequeue(&mut self, cpu: CpuId, p: TaskId) {
        let prio = self.tasks[p].prio;
        self.rq[cpu].remove(prio, p);
        self.tasks[p].queued_on = None;
        self.note_nr(cpu);
    }
    /// Keeps `multi` in step with `cpu`'s count.
    fn note_nr(&mut self, cpu: CpuId) {
        if self.rq[cpu].nr > 1 {
            self.multi.insert(cpu);
        } else {
            self.multi.remove(cpu);
        }
    }
    /// `pick_next_rt_entity`: the head of the best non-empty list.
    pub fn pick(&self, cx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        cx.compared(1);
        let prio = self.rq[cpu].first()?;
        self.rq[cpu].list(prio).next().copied()
    }
    /// `requeue_task_rt` to the tail of its list (`yield_task_rt`, RR expiry).
    pub fn requeue_tail(&mut self, cpu: CpuId, p: TaskId) {
        let prio = self.tasks[p].prio;
        if self.rq[cpu].remove(prio, p) {
            self.rq[cpu].push(prio, p, false);
        }
    }

    /// `task_tick_rt` (v6.12): an RR task's slice counts down in ticks; at zero it is
    /// reloaded and, unless the task is alone at its priority, moved to the tail.
    pub fn tick(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, rr: bool) {
        if !rr {
            return;
        }
        let t = &mut self.tasks[p];
        t.time_slice = t.time_slice.saturating_sub(1);
        if t.time_slice > 0 {
            return;
        }
        t.time_slice = self.rr_ticks;
        let prio = t.prio;
        if self.rq[cpu].len_at(prio) > 1 {
            self.requeue_tail(cpu, p);
            cx.resched_curr(cpu);
        }
    }

    /// `wakeup_preempt_rt` (`rt.c`, v6.12): a strictly better priority preempts; an equal
    /// one only through `check_preempt_equal_prio`, unless a reschedule is already due.
    pub fn wakeup_preempt(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, curr: TaskId, dl_busy: &Busy) {
        if self.tasks[p].prio < self.tasks[curr].prio {
            cx.resched_curr(cpu);
        } else if self.tasks[p].prio == self.tasks[curr].prio && !cx.cpus[cpu].need_resched {
            self.check_preempt_equal_prio(cx, cpu, p, curr, dl_busy);
        }
    }

    /// `check_preempt_equal_prio` (`rt.c`, v6.12): a woken task of the running task's
    /// priority that can run nowhere else, while the running one could, goes to the head
    /// of its list and the CPU reschedules, so the running task is pushed away instead of
    /// both waiting here. A migratable wakee is left to push/pull.
    fn check_preempt_equal_prio(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, curr: TaskId, dl_busy: &Busy) {
        if cx.task(curr).affinity.count() < 2 || !self.cpupri_find(cx, curr, dl_busy) {
            return;
        }
        if cx.task(p).affinity.count() > 1 && self.cpupri_find(cx, p, dl_busy) {
            return;
        }
        let prio = self.tasks[p].prio;
        if self.rq[cpu].remove(prio, p) {
            self.rq[cpu].push(prio, p, true);
        }
        cx.resched_curr(cpu);
    }

    /// `cpupri_find` (`cpupri.c`, v6.12): some CPU `p` may use runs less important work
    /// than `p`'s priority.
    fn cpupri_find(&self, cx: &mut Ctx, p: TaskId, dl_busy: &Busy) -> bool {
        cx.scanned_cpus(cx.nr_cpus() as u64);
        let prio = self.tasks[p].prio as i32;
        (0..cx.nr_cpus()).any(|c| cx.allowed(p, c) && self.level0(c, dl_busy) > prio)
    }

    /// The `cpupri` level of `cpu`: its best queued rt prio, `LEVEL_NORMAL` without rt
    /// tasks, `LEVEL_HIGHER` with a deadline task queued (`cpupri.c:convert_prio`).
    fn level(&self, cpu: CpuId, dl_busy: &Busy, planned: &Planned) -> i32 {
        let mut l = self.level0(cpu, dl_busy);
        for &(c, prio) in planned {
            if c == cpu {
                l = l.min(prio as i32);
            }
        }
        l
    }
    fn level0(&self, cpu: CpuId, dl_busy: &Busy) -> i32 {
        if dl_busy(cpu) {
            LEVEL_HIGHER
        } else {
            self.rq[cpu].first().map_or(LEVEL_NORMAL, |p| p as i32)
        }
    }

    /// `find_lowest_rq` over `cpupri_find`: the allowed CPUs at the lowest level strictly
    /// below `p`'s priority; among them `task_cpu(p)`, else `this_cpu`, else the next in a
    /// rotation. `None` if `p` is pinned or no CPU runs less important work.
    fn find_lowest_rq(&mut self, cx: &mut Ctx, p: TaskId, dl_busy: &Busy, planned: &Planned) -> Option<CpuId> {
        let rotor = super::search::begin(cx, p, &mut self.rotor)?;
        let n = cx.nr_cpus();
        let aff = &cx.task(p).affinity;
        let prio = self.tasks[p].prio as i32;
        let mut best = prio;
        for c in 0..n {
            if aff.contains(c) {
                best = best.max(self.level(c, dl_busy, planned));
            }
        }
        if best <= prio {
            return None;
        }
        let ok = |c: CpuId| aff.contains(c) && self.level(c, dl_busy, planned) == best;
        super::search::prefer(cx, p, rotor, ok)
    }

    /// `select_task_rq_rt`: if the previous CPU runs an rt or deadline task that is pinned
    /// or at least as important as `p`, look for a CPU running lower-priority work, and
    /// move there only if `p` would be its best rt task.
    pub fn select(
        &mut self,
        cx: &mut Ctx,
        p: TaskId,
        pol: &TaskPolicy,
        prev: CpuId,
        curr: &[Curr],
        dl_busy: &Busy,
    ) -> CpuId {
        self.grow(p);
        self.tasks[p].prio = rt_prio(pol);
        let path = "select_task_rq_rt";
        let Some((c, cls)) = curr[prev] else {
            super::search::record(cx, p, prev, prev, path, || "nothing runs on the previous CPU".into());
            return prev;
        };
        let busy = match cls {
            Class::Dl => true,
            Class::Rt => cx.task(c).affinity.count() < 2 || self.tasks[c].prio <= self.tasks[p].prio,
            Class::Fair | Class::Ext => false,
        };
        if !busy {
            let why =
                || format!("the previous CPU runs {cls:?}-class work that {} preempts", rt_words(self.tasks[p].prio));
            super::search::record(cx, p, prev, prev, path, why);
            return prev;
        }
        let prio = self.tasks[p].prio;
        let target = self.find_lowest_rq(cx, p, dl_busy, &[]);
        let cpu = match target {
            Some(t) if prio < self.highest(t) => t,
            _ => prev,
        };
        let pinned = cx.task(p).affinity.count() < 2;
        let why = || match target {
            _ if pinned => "pinned: find_lowest_rq does not search".to_string(),
            None => format!(
                "the previous CPU runs more important work, and no allowed CPU runs work less important than {}",
                rt_words(prio)
            ),
            Some(t) if cpu == t => format!(
                "find_lowest_rq: CPU {t} runs the least important work among the allowed CPUs ({} wins there)",
                rt_words(prio)
            ),
            Some(t) => {
                format!("find_lowest_rq found CPU {t}, but {} would not be its best rt task: stays", rt_words(prio))
            }
        };
        super::search::record(cx, p, prev, cpu, path, why);
        cpu
    }

    /// The best pushable task of `cpu`: queued, not running, allowed elsewhere
    /// (`pick_next_pushable_task`).
    fn pushable(&self, cx: &Ctx, cpu: CpuId, running: Option<TaskId>) -> Option<TaskId> {
        self.first_pushable(cx, cpu, running, |_| true)
    }
    fn pushable_except(&self, cx: &Ctx, cpu: CpuId, running: Option<TaskId>, moved: &[TaskId]) -> Option<TaskId> {
        self.first_pushable(cx, cpu, running, |t| !moved.contains(&t))
    }
    /// `pick_highest_pushable_task` (`rt.c`, v6.12): the best pushable task of `src` that
    /// may run on `this` (`task_is_pushable`), passing over better ones whose affinity
    /// excludes `this`.
    fn pushable_to(&self, cx: &Ctx, src: CpuId, running: Option<TaskId>, this: CpuId) -> Option<TaskId> {
        self.first_pushable(cx, src, running, |t| cx.allowed(t, this))
    }
    /// The first task of `cpu`'s lists, best priority first, that is not running, may run
    /// on more than one CPU (the kernel's pushable list) and passes `ok`.
    fn first_pushable(
        &self,
        cx: &Ctx,
        cpu: CpuId,
        running: Option<TaskId>,
        ok: impl Fn(TaskId) -> bool,
    ) -> Option<TaskId> {
        let a = &self.rq[cpu];
        let mut prio = a.first()?;
        loop {
            let fits = |t: TaskId| Some(t) != running && cx.task(t).affinity.count() > 1 && ok(t);
            if let Some(&t) = a.list(prio).find(|&&t| fits(t)) {
                return Some(t);
            }
            prio = a.next_from(prio + 1)?;
        }
    }

    /// Whether `cpu` is rt-overloaded (`rt_set_overload`: it has a pushable task).
    fn overloaded(&self, cx: &Ctx, cpu: CpuId, running: Option<TaskId>) -> bool {
        self.rq[cpu].nr > 1 && self.pushable(cx, cpu, running).is_some()
    }

    /// `push_rt_tasks` (v6.12): while `cpu` has a pushable task that would not run here at
    /// once, move it to a CPU running less important work. The kernel applies the moves
    /// after the hook, so the CPUs already chosen count at their new level (`planned`).
    /// Each attempt is recorded while decisions are (`rt_why.rs`).
    pub fn push(&mut self, cx: &mut Ctx, cpu: CpuId, curr: &[Curr], dl_busy: &Busy) {
        let running = curr[cpu].map(|(t, _)| t);
        let mut planned: Vec<(CpuId, usize)> = Vec::new();
        let mut moved: Vec<TaskId> = Vec::new();
        while let Some(next) = self.pushable_except(cx, cpu, running, &moved) {
            let end = match curr[cpu] {
                Some((c, Class::Rt)) if self.tasks[next].prio < self.tasks[c].prio => {
                    cx.resched_curr(cpu);
                    Some(PushEnd::Preempts)
                }
                Some((_, Class::Fair | Class::Ext)) | None => Some(PushEnd::RunsHere),
                _ => None,
            };
            if let Some(end) = end {
                self.record_push(cx, cpu, next, curr, end, dl_busy, &planned);
                return;
            }
            let Some(t) = self.find_lowest_rq(cx, next, dl_busy, &planned) else {
                self.record_push(cx, cpu, next, curr, PushEnd::NoLower, dl_busy, &planned);
                return;
            };
            if t == cpu || self.level(t, dl_busy, &planned) <= self.tasks[next].prio as i32 {
                self.record_push(cx, cpu, next, curr, PushEnd::NotLower(t), dl_busy, &planned);
                return;
            }
            self.pushes += 1;
            cx.migrate(next, t);
            self.record_push(cx, cpu, next, curr, PushEnd::Pushed(t), dl_busy, &planned);
            planned.push((t, self.tasks[next].prio));
            moved.push(next);
        }
        if moved.is_empty() {
            self.record_nothing_pushable(cx, cpu, running);
        }
    }

    /// Why `pull_rt_task` passes over `p`, the candidate of the overloaded `src`, when the
    /// pulling CPU's best queued prio is `mine`, or `None` if `p` is pulled.
    fn pull_skip(&self, src: CpuId, p: TaskId, mine: usize, curr: &[Curr]) -> Option<PullSkip> {
        let prio = self.tasks[p].prio;
        if prio >= mine {
            return Some(PullSkip::NotAbove);
        }
        match curr[src] {
            // The source is about to run it itself.
            Some((c, Class::Rt)) if prio < self.tasks[c].prio => Some(PullSkip::AboutToRun),
            Some((_, Class::Fair | Class::Ext)) | None => Some(PullSkip::NoRt),
            _ => None,
        }
    }

    /// `pull_rt_task` (v6.12): `this` lowered its priority. With `RT_PUSH_IPI` it pulls
    /// nothing itself: every rt-overloaded CPU is asked to push (`tell_cpu_to_push`, the
    /// IPI passed along `rto_mask`), returned here. Without, it visits the overloaded CPUs
    /// in order and from each takes the best waiting task that may run on `this`
    /// (`pick_highest_pushable_task`), if it beats what `this` has by then — so a later,
    /// more important one is pulled too — unless its own CPU is about to run it.
    ///
    /// Only the CPUs in `rto_mask` are visited (here: those with more than one rt task
    /// that have a pushable one), each a CPU read; with none the kernel returns after
    /// reading `rto_count`, so the pull costs nothing per CPU of the machine.
    pub fn pull(&mut self, cx: &mut Ctx, this: CpuId, curr: &[Curr], push_ipi: bool) -> Vec<CpuId> {
        if self.multi.is_empty() {
            return Vec::new();
        }
        let n = cx.nr_cpus();
        let mut overloaded: Vec<CpuId> = Vec::new();
        // Each source's candidate and why it stayed, only while decisions are recorded.
        let mut seen = cx.recording().then(Vec::new);
        let mut mine = self.highest(this);
        let mut taken: Vec<(TaskId, CpuId)> = Vec::new();
        for src in self.multi.iter().filter(|&c| c != this) {
            let running = curr[src].map(|(t, _)| t);
            if !self.overloaded(cx, src, running) {
                continue;
            }
            cx.scanned_cpus(1);
            overloaded.push(src);
            let (p, skip) = match self.pushable_to(cx, src, running, this) {
                Some(p) => (p, self.pull_skip(src, p, mine, curr)),
                None => match self.pushable(cx, src, running) {
                    Some(p) => (p, Some(PullSkip::Affinity)),
                    None => continue,
                },
            };
            if let Some(v) = seen.as_mut() {
                v.push((p, src, skip));
            }
            if skip.is_none() && !push_ipi {
                mine = self.tasks[p].prio;
                taken.push((p, src));
            }
        }
        if let Some(v) = seen {
            let mut set = CpuSet::empty(n);
            overloaded.iter().for_each(|&c| set.insert(c));
            self.record_pull(cx, this, &set, v, &taken, push_ipi);
        }
        if push_ipi {
            return overloaded;
        }
        for &(p, _) in &taken {
            self.pulls += 1;
            cx.migrate(p, this);
        }
        Vec::new()
    }

    /// The tasks queued on `cpu`, best priority first (the lists the bitmap marks: a task
    /// in an unmarked list is missing here, so the kernel's comparison of runqueue
    /// contents catches it).
    pub fn queued(&self, cpu: CpuId, out: &mut Vec<TaskId>) {
        let a = &self.rq[cpu];
        for prio in a.prios() {
            out.extend(a.list(prio).copied());
        }
    }

    /// The bitmap matches the lists and the counts. `full`: every list, also those the
    /// bitmap marks empty (the periodic full check); otherwise the marked lists, each
    /// non-empty and holding tasks recorded there, and their total against the count —
    /// which also catches a task left in an unmarked list that is still counted.
    pub fn check(&self, cpu: CpuId, full: bool) -> Result<(), String> {
        let a = &self.rq[cpu];
        let mut nr = 0;
        let mut check_list = |prio: usize, q: &VecDeque<TaskId>| {
            let bit = a.bitmap[prio / 64] >> (prio % 64) & 1 == 1;
            if bit == q.is_empty() {
                return Err(format!("rt CPU {cpu}: bitmap bit {prio} disagrees with its list"));
            }
            for &t in q {
                if self.tasks[t].queued_on != Some(cpu) || self.tasks[t].prio != prio {
                    return Err(format!("rt CPU {cpu}: task {t} is in list {prio} but not recorded there"));
                }
            }
            nr += q.len();
            Ok(())
        };
        if a.queue.is_empty() {
            if a.bitmap != [0; 2] {
                return Err(format!("rt CPU {cpu}: bitmap set before any list exists"));
            }
        } else if full {
            for (prio, q) in a.queue.iter().enumerate() {
                check_list(prio, q)?;
            }
        } else {
            for prio in a.prios() {
                check_list(prio, &a.queue[prio])?;
            }
        }
        if nr != a.nr {
            return Err(format!("rt CPU {cpu}: {nr} tasks listed, {} counted", a.nr));
        }
        if self.multi.contains(cpu) != (a.nr > 1) {
            return Err(format!("rt CPU {cpu}: {} tasks but the overload candidates say otherwise", a.nr));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fifo(prio: u8) -> TaskPolicy {
        TaskPolicy::Fifo { prio }
    }

    /// A CPU's 100 lists exist only once an rt task was queued there; queued tasks come
    /// out best priority first and FIFO within a priority, and both checks pass.
    #[test]
    fn lists_are_allocated_on_a_cpus_first_rt_task() {
        let mut rt = Rt::new(4, 10);
        assert!(rt.rq.iter().all(|a| a.queue.is_empty()));
        rt.enqueue(2, 7, &fifo(10), false);
        rt.enqueue(2, 8, &fifo(50), false);
        rt.enqueue(2, 9, &fifo(10), false);
        rt.enqueue(2, 6, &fifo(99), true);
        assert_eq!(rt.rq[2].queue.len(), MAX_RT_PRIO);
        assert!([0, 1, 3].iter().all(|&c| rt.rq[c].queue.is_empty()));
        let mut out = Vec::new();
        rt.queued(2, &mut out);
        assert_eq!(out, [6, 8, 7, 9]);
        assert_eq!(rt.highest(2), 0);
        assert_eq!(rt.highest(1), MAX_RT_PRIO);
        for c in 0..4 {
            rt.check(c, true).unwrap();
            rt.check(c, false).unwrap();
        }
        rt.dequeue(2, 6);
        assert_eq!(rt.highest(2), 49);
        assert_eq!(rt.rq[2].next_from(50), Some(89));
        assert_eq!(rt.rq[2].next_from(90), None);
    }

    /// `pull_rt_task` (v6.12) reads `rto_count` and visits only the CPUs of `rto_mask`: on
    /// 32 CPUs a pull with no rt task anywhere reads no CPU; with one overloaded CPU it
    /// reads that one and takes its waiting task; and the check catches a candidate set
    /// out of step with a CPU's count.
    #[test]
    fn a_pull_reads_only_the_overloaded_cpus() {
        use super::super::Class;
        use crate::testing::World;
        use schedlab_machine::preset;
        use schedlab_sched_api::Request;
        let mut w = World::new(preset("opteron-32").unwrap());
        w.add_task(0, fifo(50), 5);
        w.add_task(0, fifo(10), 5);
        w.this = 9;
        let mut curr = vec![None; w.m.nr_cpus()];
        let mut rt = Rt::new(w.m.nr_cpus(), 10);
        let mut pull = |rt: &mut Rt, curr: &[Curr]| {
            w.reqs.clear();
            let read = w.ctx(|cx| {
                rt.pull(cx, 9, curr, false);
                cx.work.cpus
            });
            (read, std::mem::take(&mut w.reqs))
        };
        assert_eq!(pull(&mut rt, &curr), (0, vec![]));
        rt.enqueue(5, 0, &fifo(50), false);
        curr[5] = Some((0, Class::Rt));
        assert_eq!(pull(&mut rt, &curr), (0, vec![]), "one rt task: nothing to pull");
        rt.enqueue(5, 1, &fifo(10), false);
        assert_eq!(pull(&mut rt, &curr), (1, vec![Request::Migrate { task: 1, to: 9 }]));
        rt.check(5, true).unwrap();
        rt.multi.remove(5);
        assert!(rt.check(5, false).unwrap_err().contains("overload candidates"));
    }

    /// A task left in a list whose bitmap bit is clear: the full check names the list;
    /// the incremental check sees more tasks counted than the marked lists hold.
    #[test]
    fn a_task_in_an_unmarked_list_is_caught() {
        let mut rt = Rt::new(1, 10);
        rt.enqueue(0, 1, &fifo(10), false);
        rt.rq[0].set(89, false);
        assert!(rt.check(0, true).unwrap_err().contains("bitmap bit 89"));
        assert!(rt.check(0, false).unwrap_err().contains("1 counted"));
        let mut out = Vec::new();
        rt.queued(0, &mut out);
        assert!(out.is_empty(), "the kernel's comparison of runqueue contents sees it missing");
    }
}
