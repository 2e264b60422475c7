//! The `timer` op: rt-app's periodic timers (`rt-app.c:run_event`, case `rtapp_timer`).
//!
//! A timer keeps the absolute time of its next expiry. Each use adds the op's period and
//! sleeps until then (`clock_nanosleep(TIMER_ABSTIME)`); a use that finds the expiry
//! already past does not sleep. rt-app's named timers start counting from `t_first`, the
//! task's start (a timer shared by several tasks from the start of the first to use it);
//! after such an overrun a relative timer restarts from now and an absolute one keeps its
//! grid, so the uses after it run back to back until they catch up. An unnamed `timer` op
//! is its own timer, counted from its first use, and keeps its grid.

use crate::Kernel;
use schedlab_sim::{Ns, TaskId};
use schedlab_workload::NamedTimer;

impl Kernel<'_> {
    /// The expiry the `timer` op at `pc` of task `t` waits for (≤ now: an overrun, no sleep).
    pub(crate) fn timer_next(&mut self, t: TaskId, pc: usize, period: Ns, named: Option<NamedTimer>) -> Ns {
        let now = self.now;
        let task = &mut self.tasks[t];
        let Some(nt) = named else {
            return match task.timers.iter_mut().find(|(p, _)| *p == pc) {
                Some((_, n)) => {
                    *n += period;
                    *n
                }
                None => {
                    // Most tasks have one timer op: room for one, not `push`'s four.
                    task.timers.reserve_exact(1);
                    task.timers.push((pc, now + period));
                    now + period
                }
            };
        };
        let anchor = task.started;
        let last = if nt.shared {
            self.objs.shared_timers[nt.id]
        } else {
            task.extra.as_ref().and_then(|x| x.rt_timers.iter().find(|(id, _)| *id == nt.id)).map(|x| x.1)
        };
        let next = last.unwrap_or(anchor) + period;
        let keep = if next <= now && nt.relative { now } else { next };
        if nt.shared {
            self.objs.shared_timers[nt.id] = Some(keep);
        } else {
            let rt = &mut task.extra_mut().rt_timers;
            match rt.iter_mut().find(|(id, _)| *id == nt.id) {
                Some(x) => x.1 = keep,
                None => rt.push((nt.id, keep)),
            }
        }
        next
    }
}
