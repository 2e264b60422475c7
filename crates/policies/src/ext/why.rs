//! Decision records for the ext class: why one ext task runs before another, and where a
//! waking task was placed (`SchedClass::why`, `Decision::Place`).

use super::class::{At, Ext, Q};
use schedlab_sched_api::{fmt_ns, Cause, Ctx, Decision, Moment, Why};
use schedlab_sim::{CpuId, TaskId};

impl Ext {
    /// Where `p` waits, in words.
    fn where_is(&self, p: TaskId) -> String {
        let Some(t) = self.core.tasks.get(p) else { return "unknown".into() };
        match t.at {
            At::Owned => "held by the policy (enqueued, not yet inserted into any DSQ)".into(),
            At::Dsq(Q::Local(c), k) => {
                let pos = self.core.cpus[c].local.iter().take_while(|&(key, _)| key < k).count();
                format!("in CPU {c}'s local DSQ behind {pos} task(s)")
            }
            At::Dsq(Q::Global(n), _) => format!("in the global DSQ of node {n}"),
            At::Dsq(Q::User(id), k) => {
                let pos = self.core.user.get(&id).map_or(0, |d| d.iter().take_while(|&(key, _)| key < k).count());
                let order = if k.1 != 0 { format!("vtime {}", k.0) } else { "FIFO".into() };
                format!("in user DSQ {id:#x} ({order}) behind {pos} task(s)")
            }
            At::Transit(c, _) => format!("moving to CPU {c}'s local DSQ"),
            At::Running(c) | At::Prev(c) => format!("running on CPU {c}"),
            At::Off => "not queued in ext".into(),
        }
    }

    /// `first` (just picked, or running when `second` woke) before `second`, both ext.
    pub fn why(&self, cx: &Ctx, _cpu: CpuId, first: TaskId, second: TaskId, at: Moment) -> Why {
        let name = self.ops_name();
        let other = &cx.task(second).name;
        match at {
            Moment::Pick => Why::new(
                Cause::Other,
                format!(
                    "{name} put it first in this CPU's local DSQ (dispatch / select_cpu); {other} is {}",
                    self.where_is(second)
                ),
            ),
            Moment::Wakeup => {
                let left = self.core.tasks.get(first).map_or(0, |t| t.slice);
                let slice = if left == super::SLICE_INF {
                    "an infinite slice".into()
                } else {
                    fmt_ns(left as i64) + " of slice left"
                };
                Why::new(
                    Cause::NoPreempt,
                    format!(
                        "sched_ext has no wakeup preemption (wakeup_preempt_scx): the running task keeps the CPU with {slice} unless {name} kicks it; {other} is {}",
                        self.where_is(second)
                    ),
                )
            }
        }
    }

    /// Records a placement by `ops.select_cpu` (when recording).
    pub(crate) fn record_place(&self, cx: &mut Ctx, p: TaskId, prev: CpuId, cpu: CpuId) {
        if !cx.recording() {
            return;
        }
        let why = match self.core.tasks.get(p).and_then(|t| t.ddsp) {
            Some(v) => format!("{} chose CPU {cpu} and inserted the task directly (DSQ {:#x})", self.ops_name(), v.dsq),
            None => format!("{} chose CPU {cpu}; ops.enqueue decides where it waits", self.ops_name()),
        };
        cx.record(|| Decision::Place { task: p, prev, cpu, path: "ops.select_cpu", why });
    }
}
