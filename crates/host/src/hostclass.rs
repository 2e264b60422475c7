//! The scheduler of a real run is the host kernel's own; sampling probes read per-task
//! policy statistics through a [`SchedClass`], and the kernel's are not observable, so this
//! stand-in reports none. Its hooks are never called: nothing is simulated in a host run.

use schedlab_sched_api::{BalanceKind, Ctx, SchedClass, SelectKind, Stat, Tunable};
use schedlab_sim::{CpuId, TaskId};

pub struct HostClass;

impl SchedClass for HostClass {
    fn name(&self) -> &'static str {
        "host"
    }
    fn tunables(&self) -> Vec<Tunable> {
        Vec::new()
    }
    fn task_new(&mut self, _: &mut Ctx, _: TaskId, _: Option<TaskId>) {}
    fn task_dead(&mut self, _: &mut Ctx, _: TaskId) {}
    fn select_task_rq(&mut self, _: &mut Ctx, _: TaskId, prev: CpuId, _: SelectKind, _: u32) -> CpuId {
        prev
    }
    fn migrate_task_rq(&mut self, _: &mut Ctx, _: TaskId, _: CpuId) {}
    fn enqueue_task(&mut self, _: &mut Ctx, _: CpuId, _: TaskId, _: u32) {}
    fn dequeue_task(&mut self, _: &mut Ctx, _: CpuId, _: TaskId, _: u32) -> bool {
        true
    }
    fn wakeup_preempt(&mut self, _: &mut Ctx, _: CpuId, _: TaskId, _: u32) {}
    fn put_prev_task(&mut self, _: &mut Ctx, _: CpuId, _: TaskId) {}
    fn pick_next_task(&mut self, _: &mut Ctx, _: CpuId) -> Option<TaskId> {
        None
    }
    fn task_tick(&mut self, _: &mut Ctx, _: CpuId, _: TaskId) {}
    fn yield_task(&mut self, _: &mut Ctx, _: CpuId, _: TaskId) {}
    fn reweight_task(&mut self, _: &mut Ctx, _: TaskId) {}
    fn balance(&mut self, _: &mut Ctx, _: CpuId, _: BalanceKind) {}
    fn queued(&self, _: CpuId, _: &mut Vec<TaskId>) {}
    fn task_stats(&self, _: TaskId) -> Vec<Stat> {
        Vec::new()
    }
    fn check_invariants(&self, _: &Ctx) -> Result<(), String> {
        Ok(())
    }
}
