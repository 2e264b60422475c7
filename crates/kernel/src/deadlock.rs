//! A deadlock: tasks are alive but none can ever run again — none is runnable, and the
//! event queue is empty, so no timer, start or wakeup is pending that could change that.
//! The kernel has no such detector (a real deadlock simply hangs, visible through
//! `/proc/PID/stack` or a hung-task warning); a simulator can prove it, and says who waits
//! on what so the cycle (a lock cycle, a barrier short of parties, a condition nobody will
//! signal, a pipe nobody will write) can be read off.
//!
//! Under a policy whose tick keeps running on idle CPUs (`SchedClass::idle_tick`, o1's
//! periodic jiffy tick), or that wakes idle CPUs periodically (`SchedClass::idle_wakeup`,
//! ULE's hardclock every 0.5 s, counted with the ticks), the queue is never empty. There
//! an idle CPU's tick
//! (`scheduler_tick` → `rebalance_tick(SCHED_IDLE)` in Linux 2.6.8) can only pull a task
//! that is already runnable, and expires only the sleep timers due, each of which has its
//! own clock event: so when every pending event is a tick, no CPU has a task or kernel work,
//! and no task is runnable or about to start, nothing can ever wake a blocked task either.
//! The test costs one comparison per event; the walk over the CPUs runs only when it passes.
//!
//! Without an idle tick the queue empties only once every stale event in it has popped: a
//! stopped tick's last event, a preempted work's `CpuDone` — up to a tick period (ULE's
//! stathz: 7.9 ms) after the last task blocked. So when a CPU goes idle
//! ([`Kernel::idle_entered`]) the run also asks whether every CPU is idle and every pending
//! event is stale or an idle CPU's tick, idle wakeup or timer interrupt, which can wake nobody
//! as above (their balancing finds nothing runnable), or a policy's timer, which acts only on
//! tasks the policy has queued (there are none; a policy has no request that wakes a task);
//! then the deadlock is certain at that moment, and `sim_ns` says so.

use crate::vocab::FutexKey;
use crate::{BlockedOn, Kernel, TState};
use schedlab_probe::WaitFor;
use schedlab_sim::TaskId;

impl Kernel<'_> {
    /// With the tick running on idle CPUs: whether tasks are alive, none can run, and the
    /// only pending events are ticks (of CPUs that are, and stay, idle) — a deadlock.
    pub(crate) fn only_idle_ticks_left(&self) -> bool {
        if self.events.len() != self.ticks_pending || self.pending_starts != 0 || self.alive == 0 {
            return false;
        }
        (0..self.cpus.len()).all(|c| self.cpu_at_rest(c))
    }

    /// Whether tasks are alive, none can run, and no pending event can change that: every
    /// CPU idle with nothing queued, and every event in the queue stale (an older
    /// generation than its CPU's), an idle CPU's tick or hrtimer interrupt with no timer
    /// armed, or a policy timer. Walks the CPUs (stopping at the first busy one), then the
    /// queue.
    pub(crate) fn quiescent(&self) -> bool {
        use crate::vocab::Event;
        if self.pending_starts != 0 || self.alive == 0 {
            return false;
        }
        if !(0..self.cpus.len()).all(|c| self.cpu_at_rest(c)) {
            return false;
        }
        self.events.iter().all(|(_, ev)| match *ev {
            Event::CpuDone { cpu, gen } => gen != self.cpus[cpu as usize].gen,
            // An idle wakeup only looks for runnable work, and there is none.
            Event::Tick { .. } | Event::Timer { .. } | Event::IdleWake { .. } => true,
            // A policy's timer (a deadline replenishment, the rt period, sched_ext's watchdog
            // and BPF timers) acts on the tasks the policy has queued — a throttled task
            // stays queued — and no CPU has any: no request a policy can make wakes a
            // blocked task. (sched_ext's watchdog re-arms itself forever: counting it kept
            // every `ext:*` deadlock running to the time limit.)
            Event::PolicyTimer { .. } => true,
            Event::Resume { .. }
            | Event::Ipi { .. }
            | Event::Change { .. }
            | Event::Start { .. }
            | Event::StartLate { .. } => false,
        })
    }

    /// `cpu` has no task, no kernel work, nothing queued, pending or armed.
    fn cpu_at_rest(&self, c: usize) -> bool {
        let (cpu, view) = (&self.cpus[c], &self.views[c]);
        cpu.curr.is_none()
            && cpu.kstack.is_empty()
            && matches!(cpu.busy, crate::cpu::Busy::None)
            && !cpu.need_resched
            && cpu.wake_list.is_empty()
            && cpu.hrtimers.is_empty()
            && view.nr_running == 0
            && !view.ttwu_pending
    }

    /// Every blocked task and what it waits on, in task order; mutex waits carry the
    /// holder and, when following holders leads back to the waiter, the cycle.
    pub(crate) fn wait_for_graph(&self) -> Vec<WaitFor> {
        let mut out: Vec<WaitFor> =
            (0..self.tasks.len()).filter(|&t| self.tasks[t].state != TState::Dead).map(|t| self.waits_for(t)).collect();
        let holder: Vec<(TaskId, Option<TaskId>)> = out.iter().map(|w| (w.task, w.held_by)).collect();
        for w in &mut out {
            if let Some(cycle) = cycle_from(w.task, &holder) {
                let names: Vec<&str> = cycle.iter().map(|&t| self.info[t].name.as_str()).collect();
                w.detail += &format!("; a cycle: {}", names.join(" → "));
            }
        }
        out
    }

    fn waits_for(&self, t: TaskId) -> WaitFor {
        let (object, held_by, detail) = match self.tasks[t].blocked_on {
            BlockedOn::Futex => self.futex_wait_of(t),
            BlockedOn::PipeRead(p) => (
                format!("pipe {}", self.wl.pipes[p as usize].name),
                None,
                format!(
                    "reading, {} bytes buffered; no task that could write it can run",
                    self.objs.pipes[p as usize].bytes()
                ),
            ),
            BlockedOn::PipeWrite(p) => (
                format!("pipe {}", self.wl.pipes[p as usize].name),
                None,
                format!(
                    "writing, full ({} bytes); no task that could read it can run",
                    self.objs.pipes[p as usize].capacity
                ),
            ),
            BlockedOn::Children => (
                "children".into(),
                None,
                format!("{} live children, none of which can run", self.tasks[t].live_children),
            ),
            BlockedOn::Poll => {
                ("poll".into(), None, "polling pipes that are all empty; no task that could write one can run".into())
            }
            BlockedOn::Timer => ("timer".into(), None, "a sleep whose timer is gone".into()),
            BlockedOn::Nothing => ("nothing".into(), None, "blocked on no known object".into()),
        };
        WaitFor { task: t, name: self.info[t].name.clone(), object, held_by, detail }
    }

    /// The futex word task `t` sleeps on (from the futex hash table) and its state.
    fn futex_wait_of(&self, t: TaskId) -> (String, Option<TaskId>, String) {
        let key = self.objs.ft_ref(t).and_then(|f| f.waiting);
        match key {
            Some(FutexKey::Mutex(m)) => {
                let owner = self.objs.mutexes[m].owner;
                let detail = match owner {
                    Some(o) => format!("held by {} (task {o})", self.info[o].name),
                    None => "unlocked, but its waiters were never woken".into(),
                };
                (format!("mutex {}", self.wl.mutexes[m]), owner, detail)
            }
            Some(FutexKey::Barrier(b)) => {
                let bar = &self.objs.barriers[b];
                let detail = format!("{} of {} parties arrived; no other task can arrive", bar.arrived, bar.parties);
                (format!("barrier {}", self.wl.barriers[b].name), None, detail)
            }
            Some(FutexKey::Cond(c)) => {
                (format!("cond {}", self.wl.conds[c]), None, "no task that could signal it can run".into())
            }
            Some(FutexKey::Word(w)) => {
                let owner = self.lock_owner(FutexKey::Word(w));
                let detail = match owner {
                    Some(o) => format!("PI futex held by {} (task {o})", self.info[o].name),
                    None => format!("word = {}; no task that could wake it can run", self.objs.words[w]),
                };
                (format!("futex {}", self.wl.futexes[w].name), owner, detail)
            }
            None => ("futex".into(), None, "not queued on any futex".into()),
        }
    }
}

/// The cycle of "waits for a mutex held by" links starting and ending at `start`, if any.
fn cycle_from(start: TaskId, holder: &[(TaskId, Option<TaskId>)]) -> Option<Vec<TaskId>> {
    let next = |t: TaskId| holder.iter().find(|&&(w, _)| w == t).and_then(|&(_, h)| h);
    let mut path = vec![start];
    let mut at = next(start)?;
    while path.len() <= holder.len() {
        path.push(at);
        if at == start {
            return Some(path);
        }
        at = next(at)?;
    }
    None
}
