//! Why one fair task goes before another, for decision records (`SchedClass::why`): the
//! comparison the pick or the wakeup check made, re-read from the same state.

use super::{vdiff, Fair, Se};
use schedlab_sched_api::{fmt_ns, Cause, Ctx, Moment, TaskPolicy, Why};
use schedlab_sim::{CpuId, TaskId};

impl Fair {
    /// `first` is running or was just picked; `second` is queued on the same CPU.
    pub(super) fn why_fair(&self, cx: &Ctx, _cpu: CpuId, first: TaskId, second: TaskId, at: Moment) -> Why {
        let (se, pse) = self.find_matching_se(self.task_se(first), self.task_se(second));
        if self.e(se).idle_policy != self.e(pse).idle_policy {
            let (w1, w2) = (self.e(se).load.weight, self.e(pse).load.weight);
            return Why::new(Cause::Priority, format!("SCHED_IDLE entity: weight {w1} against {w2}"));
        }
        if at == Moment::Wakeup {
            if let Some(w) = self.why_no_wakeup_preempt(cx, first, second, se, pse) {
                return w;
            }
        }
        if self.eevdf_on() {
            self.why_eevdf(se, pse)
        } else {
            self.why_cfs(se, pse, at)
        }
    }

    /// The wakeup check's early outs (`check_preempt_wakeup_fair`): batch and idle wakers
    /// do not preempt; CFS's granularity.
    fn why_no_wakeup_preempt(&self, cx: &Ctx, curr: TaskId, woken: TaskId, se: Se, pse: Se) -> Option<Why> {
        let pol = cx.task(woken).policy;
        if pol != TaskPolicy::Normal {
            return Some(Why::new(Cause::FairShare, format!("a waking {pol:?} task does not preempt")));
        }
        if !self.t.feat.wakeup_preemption {
            return Some(Why::new(Cause::FairShare, "WAKEUP_PREEMPTION is off"));
        }
        if self.eevdf_on() {
            return None;
        }
        let _ = curr;
        let d = vdiff(self.e(se).vruntime, self.e(pse).vruntime);
        let gran = self.wakeup_gran(pse);
        let text = if d <= 0 {
            format!(
                "the woken task's vruntime is not smaller (running {} ahead by {}) (check_preempt_wakeup)",
                fmt_ns(self.e(se).vruntime as i64 - self.e(pse).vruntime as i64),
                fmt_ns(-d)
            )
        } else {
            format!(
                "the woken task's vruntime leads by {} ≤ wakeup_gran {} (wakeup_preempt_entity)",
                fmt_ns(d),
                fmt_ns(gran)
            )
        };
        Some(Why::new(Cause::FairShare, text))
    }

    fn why_cfs(&self, se: Se, pse: Se, at: Moment) -> Why {
        let (v1, v2) = (self.e(se).vruntime, self.e(pse).vruntime);
        let d = vdiff(v2, v1);
        let rq = self.cfs_rq_of(se);
        let base = self.rq(rq).min_vruntime;
        let rel = |v: u64| fmt_ns(vdiff(v, base));
        let text = if d >= 0 || at == Moment::Wakeup {
            format!(
                "vruntime {} < {} (above min_vruntime): the leftmost entity runs, for a slice of {}",
                rel(v1),
                rel(v2),
                fmt_ns(self.sched_slice(rq, se) as i64)
            )
        } else {
            format!("a buddy (next/last) picked at vruntime {} over {} within wakeup_gran", rel(v1), rel(v2))
        };
        Why::new(Cause::FairShare, text)
    }

    fn why_eevdf(&self, se: Se, pse: Se) -> Why {
        let rq = self.cfs_rq_of(se);
        let base = self.rq(rq).min_vruntime;
        let (e1, e2) = (self.e(se), self.e(pse));
        let rel = |v: u64| fmt_ns(vdiff(v, base));
        if !self.entity_eligible(rq, pse) {
            let v = self.avg_vruntime(rq);
            return Why::new(
                Cause::NotEligible,
                format!("not eligible: vruntime {} > V {} (negative lag)", rel(e2.vruntime), rel(v)),
            );
        }
        let text = if vdiff(e1.deadline, e2.deadline) <= 0 {
            format!("earlier virtual deadline {} < {} (pick_eevdf)", rel(e1.deadline), rel(e2.deadline))
        } else {
            format!(
                "the running entity's slice is protected (RUN_TO_PARITY) until vruntime {}; deadlines {} vs {}",
                rel(e1.vprot),
                rel(e1.deadline),
                rel(e2.deadline)
            )
        };
        Why::new(Cause::FairShare, text)
    }
}
