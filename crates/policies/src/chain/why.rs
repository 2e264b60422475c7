//! Why one task goes before another in the class chain (deadline > rt > fair > ext), for
//! decision records (`SchedClass::why`).

use super::{Chain, Class};
use schedlab_sched_api::{fmt_ns, Cause, Ctx, Moment, SchedClass, Why};
use schedlab_sim::{CpuId, TaskId};

fn class_name(c: Class) -> &'static str {
    match c {
        Class::Dl => "deadline",
        Class::Rt => "rt",
        Class::Fair => "fair",
        Class::Ext => "ext",
    }
}

impl Chain {
    pub(super) fn why_chain(&self, cx: &Ctx, cpu: CpuId, first: TaskId, second: TaskId, at: Moment) -> Why {
        let class = |p: TaskId| self.queued_in.get(p).copied().flatten().unwrap_or_else(|| self.cls(&self.eff(cx, p)));
        let (c1, c2) = (class(first), class(second));
        if c1 < c2 {
            return Why::new(
                Cause::Priority,
                format!("the {} class runs before the {} class (__pick_next_task)", class_name(c1), class_name(c2)),
            );
        }
        if c1 > c2 {
            return Why::new(
                Cause::Other,
                format!(
                    "the {} class ran before the {} class: rt throttling or the fair server's reservation",
                    class_name(c1),
                    class_name(c2)
                ),
            );
        }
        match c1 {
            Class::Dl => {
                let (d1, d2) = (self.dl.tasks[first].deadline, self.dl.tasks[second].deadline);
                let due = |d: schedlab_sim::Ns| fmt_ns(d.0 as i64 - cx.now.0 as i64);
                Why::new(
                    Cause::Priority,
                    format!("earlier absolute deadline (EDF): due in {} against {}", due(d1), due(d2)),
                )
            }
            Class::Rt => {
                let (p1, p2) = (self.eff(cx, first).rt_priority(), self.eff(cx, second).rt_priority());
                if p1 != p2 {
                    Why::new(Cause::Priority, format!("rt priority {p1} > {p2} (pick_next_rt_entity)"))
                } else {
                    Why::new(
                        Cause::FairShare,
                        format!("same rt priority {p1}: FIFO order in the priority queue (RR: until its slice ends)"),
                    )
                }
            }
            Class::Fair => self.fair.why(cx, cpu, first, second, at),
            Class::Ext => self.ext.as_ref().map_or_else(
                || Why::new(Cause::Other, "the ext class is not loaded"),
                |e| e.why(cx, cpu, first, second, at),
            ),
        }
    }
}
