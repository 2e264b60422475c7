//! What `find_lowest_rq` (`kernel/sched/rt.c`, v6.12) and `find_later_rq`
//! (`kernel/sched/deadline.c`, v6.12) share: a task allowed on fewer than two CPUs is not
//! searched for; the search reads every CPU's priority or deadline (`cpupri_find`,
//! `cpudl_find`) and advances the rotation that spreads equal candidates
//! (`cpumask_any_and_distribute`); among the candidates the task's own CPU wins, then the
//! waking CPU, then the next one in the rotation.

use schedlab_sched_api::{Ctx, Decision};
use schedlab_sim::{CpuId, TaskId};

/// The preamble: `None` for a pinned task, else the rotation's next start.
pub(super) fn begin(cx: &mut Ctx, p: TaskId, rotor: &mut usize) -> Option<usize> {
    let n = cx.nr_cpus();
    if cx.task(p).affinity.count() < 2 {
        return None;
    }
    cx.scanned_cpus(n as u64);
    *rotor = (*rotor + 1) % n;
    Some(*rotor)
}

/// The preferred candidate among those `ok` accepts: `task_cpu(p)`, then `this_cpu`, then
/// the first from `rotor` on.
pub(super) fn prefer(cx: &Ctx, p: TaskId, rotor: usize, ok: impl Fn(CpuId) -> bool) -> Option<CpuId> {
    let here = cx.task(p).cpu;
    if ok(here) {
        return Some(here);
    }
    if ok(cx.this_cpu) {
        return Some(cx.this_cpu);
    }
    let n = cx.nr_cpus();
    (0..n).map(|i| (rotor + i) % n).find(|&c| ok(c))
}

/// Records a placement by `path` (`select_task_rq_rt`, `select_task_rq_dl`); `why` runs
/// only while recording.
pub(super) fn record(
    cx: &mut Ctx,
    p: TaskId,
    prev: CpuId,
    cpu: CpuId,
    path: &'static str,
    why: impl FnOnce() -> String,
) {
    if cx.recording() {
        let why = why();
        cx.record(|| Decision::Place { task: p, prev, cpu, path, why });
    }
}

/// A set of CPUs in words: `CPU 3`, `CPUs 0-2,5`.
pub(super) fn cpus_words(s: &schedlab_machine::CpuSet) -> String {
    if s.count() == 1 {
        format!("CPU {s}")
    } else {
        format!("CPUs {s}")
    }
}

/// Records a push on `cpu` that found no pushable task while `waiting` tasks of its class
/// wait there: each is pinned (`nr_cpus_allowed` 1 keeps a task off the pushable list in
/// `rt.c` and `deadline.c` alike). `found` says which push and how many wait.
pub(super) fn record_pinned_waiters(cx: &mut Ctx, cpu: CpuId, found: String, waiting: impl Iterator<Item = TaskId>) {
    let refused = waiting
        .map(|t| (t, format!("pinned: allowed CPUs {} (pinned tasks are not pushable)", cx.task(t).affinity)))
        .collect();
    let kind = schedlab_sched_api::BalanceKind::Tick;
    cx.record(|| Decision::Balance { cpu, kind, src: None, found, moved: Vec::new(), refused });
}
