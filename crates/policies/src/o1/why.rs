//! O(1)'s decision records: why one task goes before another (`SchedClass::why`): the
//! active array before the expired one, then the dynamic priority (static priority minus
//! the sleep bonus; real-time priorities 0..99 before all of them), then round robin within a
//! priority list.

use super::O1;
use schedlab_sched_api::{Cause, Ctx, Moment, Why};
use schedlab_sim::{CpuId, TaskId};

impl O1 {
    fn o1_keys(&self, p: TaskId) -> (bool, String) {
        let tk = &self.td[p];
        let expired = tk.array.is_some_and(|(c, w)| w != self.rq[c].active);
        if super::rt_prio(tk.prio) {
            return (false, format!("real-time prio {} ({:?}, rt_priority {})", tk.prio, tk.policy, tk.rt_priority));
        }
        let keys = format!(
            "prio {} (static {}, bonus {}){}",
            tk.prio,
            tk.static_prio,
            self.t.current_bonus(tk.sleep_avg),
            if expired { ", expired array" } else { "" }
        );
        (expired, keys)
    }

    pub(super) fn why_o1(&self, _cx: &Ctx, _cpu: CpuId, first: TaskId, second: TaskId, at: Moment) -> Why {
        let ((e1, k1), (e2, k2)) = (self.o1_keys(first), self.o1_keys(second));
        let (p1, p2) = (self.td[first].prio, self.td[second].prio);
        if at == Moment::Wakeup && p2 < p1 {
            return Why::new(Cause::NoPreempt, format!("woken {k2} is better than running {k1}: preemption pending"));
        }
        if !e1 && e2 {
            return Why::new(
                Cause::FairShare,
                format!(
                    "{k2} used its time slice: it waits in the expired array until the arrays swap ({k1} is active)"
                ),
            );
        }
        if p1 < p2 {
            return Why::new(Cause::Priority, format!("better dynamic priority: {k1} against {k2}"));
        }
        Why::new(Cause::FairShare, format!("same priority list, round robin: {k1} against {k2}"))
    }
}
