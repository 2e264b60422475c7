//! Simple placement shared by policies that have no balancer of their own yet.

use schedlab_sched_api::{wf, Ctx, SelectKind};
use schedlab_sim::{CpuId, TaskId};

/// `prev` if it is idle and allowed; else the first idle allowed CPU scanning from
/// `prev + 1` (wrapping, like `for_each_cpu_wrap`); else `prev` if allowed; else the first
/// allowed CPU.
pub fn idle_or_prev(cx: &Ctx, p: TaskId, prev: CpuId) -> CpuId {
    let aff = &cx.task(p).affinity;
    if aff.contains(prev) && cx.idle_cpu(prev) {
        return prev;
    }
    let n = cx.nr_cpus();
    for i in 1..n {
        let c = (prev + i) % n;
        if aff.contains(c) && cx.idle_cpu(c) {
            return c;
        }
    }
    if aff.contains(prev) {
        prev
    } else {
        aff.first().unwrap_or(0)
    }
}

/// `WF_CURRENT_CPU` (v6.6 `select_task_rq_fair`): a wakeup that asks for the waking CPU
/// gets it when the wakee's affinity allows, before any other placement logic.
pub fn wake_on_current_cpu(cx: &Ctx, p: TaskId, kind: SelectKind, wake_flags: u32) -> Option<CpuId> {
    let this = cx.this_cpu;
    (kind == SelectKind::Wake && wake_flags & wf::CURRENT_CPU != 0 && cx.allowed(p, this)).then_some(this)
}

/// Records a `WF_CURRENT_CPU` placement (only while decisions are recorded).
pub fn record_current_cpu(cx: &mut Ctx, p: TaskId, prev: CpuId, cpu: CpuId) {
    cx.record(|| schedlab_sched_api::Decision::Place {
        task: p,
        prev,
        cpu,
        path: "WF_CURRENT_CPU",
        why: "the waker asked for its own CPU, and the task's affinity allows it".into(),
    });
}
