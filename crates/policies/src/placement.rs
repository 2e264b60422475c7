//! Simple placement shared by policies that have no balancer of their own yet.

use schedlab_sched_api::Ctx;
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
