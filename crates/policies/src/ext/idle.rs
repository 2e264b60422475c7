//! Built-in idle tracking (`ext.c`, v6.12; `ext_idle.c` from v6.15): the idle mask a
//! CPU joins when it goes idle and leaves when it runs a task or is claimed, and
//! `scx_select_cpu_dfl`, the default placement of a waking task.

use super::class::Core;
use schedlab_machine::CpuSet;
use schedlab_sched_api::{wf, Ctx};
use schedlab_sim::{CpuId, TaskId};

impl Core {
    /// Every SMT sibling of `cpu` (itself included) is idle (`idle_masks.smt`).
    fn core_idle(&self, cx: &Ctx, cpu: CpuId) -> bool {
        cx.machine.topology.smt_siblings(cpu).all(|s| self.idle.contains(s))
    }

    /// `scx_pick_idle_cpu`: claim an idle CPU in `allowed` (of a wholly idle core if
    /// `core`), starting after the last one picked (`cpumask_any_and_distribute`).
    pub(crate) fn pick_idle(&mut self, cx: &mut Ctx, allowed: &CpuSet, core: bool) -> Option<CpuId> {
        let n = cx.nr_cpus();
        let mut scanned = 0;
        let mut found = None;
        for i in 0..n {
            let c = (self.distribute + 1 + i) % n;
            scanned += 1;
            if allowed.contains(c) && self.idle.contains(c) && (!core || self.core_idle(cx, c)) {
                found = Some(c);
                break;
            }
        }
        cx.scanned_cpus(scanned);
        let c = found?;
        self.distribute = c;
        self.idle.remove(c);
        Some(c)
    }

    fn claim(&mut self, cpu: CpuId) -> bool {
        let idle = self.idle.contains(cpu);
        self.idle.remove(cpu);
        idle
    }

    /// `scx_select_cpu_dfl` (v6.12): a synchronous waker's CPU if some CPU idles and its
    /// local DSQ is empty; with SMT, `prev` if its whole core idles, else any wholly idle
    /// core; `prev` if idle; any idle CPU; else `prev`, not idle.
    pub(crate) fn select_cpu_dfl(&mut self, cx: &mut Ctx, p: TaskId, prev: CpuId, wake_flags: u32) -> (CpuId, bool) {
        let allowed = cx.task(p).affinity.clone();
        let this = cx.this_cpu;
        if wake_flags & wf::SYNC != 0
            && allowed.count() > 1
            && !self.idle.is_empty()
            && allowed.contains(this)
            && self.cpus[this].local.is_empty()
        {
            return (this, true);
        }
        if cx.machine.topology.threads_per_core > 1 {
            if allowed.contains(prev) && self.core_idle(cx, prev) && self.claim(prev) {
                return (prev, true);
            }
            if let Some(c) = self.pick_idle(cx, &allowed, true) {
                return (c, true);
            }
        }
        if allowed.contains(prev) && self.claim(prev) {
            return (prev, true);
        }
        match self.pick_idle(cx, &allowed, false) {
            Some(c) => (c, true),
            None => (prev, false),
        }
    }
}
