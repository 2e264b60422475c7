//! Which Linux release's runqueue locking the kernel model follows: who takes which
//! runqueue lock, when, and for how long (`--kernel 2.6.32|3.4|5.15`, docs/kernel-versions.md).
//!
//! The policy is the same in every version (the fair class of v5.15 where the old ones differ
//! only in load arithmetic); what changes is the shape of the core paths around it:
//!
//! | path | 2.6.32 | 3.4 | 5.15 |
//! |---|---|---|---|
//! | `try_to_wake_up` | old rq, then target rq; never queues | target rq, or the wake list when the CPUs share no cache | `ttwu_queue_cond`: the wake list for another LLC or an idle target |
//! | fork | target rq only (`sched_fork` selects unlocked) | parent rq (`task_fork_fair`), then target | as 3.4 |
//! | newly-idle balance | own rq held throughout, busiest by `double_lock_balance` | own rq dropped, `double_rq_lock` | own rq dropped |
//! | `load_balance` moves | both locks across the `move_tasks` chain | both locks across `move_tasks` | never both: `detach_tasks` under the busiest, `attach_tasks` under ours |

use crate::config::KernelVersion;
use crate::vocab::{Action, Batch, LockId, Step};
use crate::Kernel;
use schedlab_machine::{KernelPath, LockSite};
use schedlab_sched_api::Work;
use schedlab_sim::{CpuId, Ns, TaskId};

/// Each version's lock shapes (the type and its names: `config.rs`).
impl KernelVersion {
    /// `TTWU_QUEUE` exists: 2.6.32 has no remote wake list (`kernel/sched.c:try_to_wake_up
    /// (v2.6.32)` always locks the target runqueue).
    pub fn has_wake_list(self) -> bool {
        self != KernelVersion::V2_6_32
    }

    /// `try_to_wake_up` first locks the wakee's old runqueue (`task_rq_lock`), then the
    /// target's (`kernel/sched.c:try_to_wake_up (v2.6.32)`); later versions take `p->pi_lock`.
    pub(crate) fn ttwu_locks_old_rq(self) -> bool {
        self == KernelVersion::V2_6_32
    }

    /// `sched_fork` → `task_fork_fair` locks the parent's runqueue
    /// (`kernel/sched/fair.c:task_fork_fair (v3.4, v5.15)`); 2.6.32.2's `sched_fork` selects
    /// the child's CPU without any runqueue lock and `task_new_fair` runs under the target's.
    pub(crate) fn fork_locks_parent(self) -> bool {
        self != KernelVersion::V2_6_32
    }

    /// `schedule()` keeps its runqueue lock through newly-idle balancing
    /// (`kernel/sched.c:idle_balance, load_balance_newidle (v2.6.32)`); 3.4 and 5.15 drop it.
    pub(crate) fn newidle_keeps_lock(self) -> bool {
        self == KernelVersion::V2_6_32
    }

    /// `load_balance` holds both runqueue locks across the whole `move_tasks` chain,
    /// including the examination of each candidate task (`kernel/sched.c:move_tasks,
    /// balance_tasks (v2.6.32)`, `kernel/sched/fair.c:move_tasks (v3.4)`).
    pub(crate) fn lb_holds_both_locks(self) -> bool {
        self != KernelVersion::V5_15
    }
}

impl Kernel<'_> {
    /// Whether a wakeup by `this` onto `target` goes through the target's wake list:
    /// `kernel/sched/core.c:ttwu_queue_cond (v5.15)` — another LLC, or an idle target;
    /// `kernel/sched/core.c:ttwu_queue (v3.4)` — only when the CPUs share no cache;
    /// never in 2.6.32 (`cfg.ttwu_queue` is off there).
    pub(crate) fn ttwu_queue_cond(&self, this: CpuId, target: CpuId) -> bool {
        if !self.cfg.ttwu_queue || target == this {
            return false;
        }
        let shares = self.machine.topology.shares_llc(this, target);
        match self.cfg.version {
            KernelVersion::V2_6_32 => false,
            KernelVersion::V3_4 => !shares,
            KernelVersion::V5_15 => !shares || self.views[target].nr_running == 0,
        }
    }

    /// The step `try_to_wake_up` takes first for a sleeping wakee that is off its runqueue, or
    /// `None` to claim it and select at once. 2.6.32 locks the old runqueue (`task_rq_lock`,
    /// `update_rq_clock`, `TASK_WAKING`), releases it, and only then selects a CPU
    /// (`kernel/sched.c:try_to_wake_up (v2.6.32)`).
    pub(crate) fn ttwu_old_rq_step(&self, t: TaskId, wake_flags: u32) -> Option<Step> {
        if !self.cfg.version.ttwu_locks_old_rq() {
            return None;
        }
        let rq = self.info[t].cpu;
        let hold = self.machine.costs.ttwu_old_rq;
        Some(self.locked1(rq, LockSite::TryToWakeUp, hold, Action::TtwuRunnable { task: t, wf: wake_flags, cpu: rq }))
    }

    /// The step that runs `sched_fork` for a `fork` by `parent` on `cpu`: under the
    /// parent's runqueue lock (`task_fork_fair`, 3.4 and 5.15) or without one (2.6.32).
    pub(crate) fn fork_step(&self, cpu: CpuId, parent: TaskId, template: usize) -> Step {
        let action = Action::ForkChild { parent, template };
        if self.cfg.version.fork_locks_parent() {
            self.locked1(cpu, LockSite::SchedFork, self.machine.costs.ttwu_activate, action)
        } else {
            Step::Do(action)
        }
    }

    /// Whether the old kernels' `move_tasks` chain runs under both locks in this run (not
    /// with `lb_narrow_lock`, the paper's first optimisation).
    fn lb_chain_locked(&self) -> bool {
        self.cfg.version.lb_holds_both_locks() && !self.cfg.lb_narrow_lock
    }

    /// Whether a balance pass that found a busiest runqueue with more than one task but
    /// moves nothing still takes the locks: 2.6.32 and 3.4 lock both runqueues before
    /// `move_tasks` examines the candidates (`kernel/sched.c:load_balance (v2.6.32)`,
    /// `kernel/sched/fair.c:load_balance (v3.4)`), so the examination is held under them
    /// whatever it finds. Not with `lb_narrow_lock` (the examination runs unlocked, and with
    /// nothing to detach there is nothing to lock), and not modelled under 5.15, whose
    /// `detach_tasks` holds the busiest runqueue's lock (`docs/kernel-versions.md`).
    pub(crate) fn lb_locks_empty_pass(&self) -> bool {
        self.lb_chain_locked()
    }

    /// Splits a balance hook's work: the per-task examination is part of the `move_tasks`
    /// chain, which the old kernels run under both runqueue locks; it is set aside for the
    /// move's hold (`lb_chain`). Returns the work left to charge on the balance path.
    pub(crate) fn split_lb_chain(&mut self, path: KernelPath, work: &Work) -> Work {
        if path != KernelPath::Balance || !self.lb_chain_locked() || work.tasks == 0 {
            return *work;
        }
        self.lb_chain += Ns(work.tasks * self.machine.costs.work_task.0);
        Work { tasks: 0, ..*work }
    }

    /// Balancer work set aside for a move that was never requested is ordinary balance work.
    pub(crate) fn flush_lb_chain(&mut self) {
        let ns = std::mem::take(&mut self.lb_chain);
        if ns.0 > 0 {
            self.pending_work_add(KernelPath::Balance, ns);
        }
    }

    /// The step moving `count` of `tasks` from `from` to `to` for the balancer run by
    /// `this`: both locks for the moves (`migrate` each), plus the examination of the
    /// candidates where the version holds them across the chain. A newly-idle balance in
    /// 2.6.32 still holds `this` runqueue's lock from `schedule()`: it takes the busiest
    /// with `double_lock_balance` (`Action::DoubleLockBalance`). The second value says so.
    pub(crate) fn lb_move_step(
        &mut self,
        this: CpuId,
        from: CpuId,
        to: CpuId,
        tasks: Vec<TaskId>,
        count: usize,
    ) -> (Step, bool) {
        let hold = Ns(self.machine.costs.migrate.0 * count as u64) + std::mem::take(&mut self.lb_chain);
        let action = Action::MoveQueuedBatch(Box::new(Batch { tasks, from, to, count }));
        let keeps = self.in_newidle
            && self.cfg.version.newidle_keeps_lock()
            && to == this
            && self.locks[this].owner == Some(this)
            && self.cpus[this].kept.is_none();
        if keeps {
            self.cpus[this].kept = Some(this as LockId);
            return (Step::Do(Action::DoubleLockBalance { this, busiest: from, hold, action: Box::new(action) }), true);
        }
        if !self.cfg.version.lb_holds_both_locks() {
            // v5.15: never both locks; the moves' cost is split between the two holds.
            let detach = Ns(hold.0 / 2);
            let Action::MoveQueuedBatch(batch) = action else { unreachable!("built above") };
            let action = Action::DetachBatch { batch, attach_hold: hold - detach };
            return (self.locked1(from, LockSite::LoadBalance, detach, action), false);
        }
        (self.locked2(from, to, LockSite::LoadBalance, hold, action), false)
    }

    /// `detach_tasks` (`kernel/sched/fair.c (v5.15)`) under `from`'s lock only: the first
    /// `count` of `tasks` still queued there, not running and allowed on `to` are dequeued
    /// and given to `to` (`set_task_cpu`); in transit, nobody can touch them until
    /// `attach_tasks` takes `to`'s lock and enqueues them.
    pub(crate) fn detach_tasks(
        &mut self,
        cpu: CpuId,
        tasks: Vec<TaskId>,
        from: CpuId,
        to: CpuId,
        count: usize,
        attach_hold: Ns,
    ) {
        let mut moved = Vec::with_capacity(count);
        for task in tasks {
            if moved.len() == count {
                break;
            }
            let ok = self.tasks[task].on_rq
                && self.info[task].cpu == from
                && self.cpus[from].curr != Some(task)
                && self.info[task].affinity.contains(to);
            if ok {
                self.dequeue(cpu, from, task, schedlab_sched_api::dequeue::MIGRATE);
                self.set_task_cpu(cpu, task, to);
                self.tasks[task].in_transit = true;
                moved.push(task);
            }
        }
        if !moved.is_empty() {
            let s = self.locked1(to, LockSite::LoadBalance, attach_hold, Action::AttachBatch { tasks: moved, to });
            self.cpus[cpu].kstack.push_front(s);
        }
    }

    /// `move_tasks` under both runqueue locks (`kernel/sched.c:move_tasks, balance_tasks
    /// (v2.6.32)`, `kernel/sched/fair.c:move_tasks (v3.4)`): the first `count` of `tasks`
    /// still queued on `from`, not running and allowed on `to` move there at once.
    pub(crate) fn move_tasks(&mut self, cpu: CpuId, batch: Batch) {
        let Batch { tasks, from, to, count } = batch;
        let mut moved = 0;
        for task in tasks {
            if moved == count {
                break;
            }
            if self.move_queued(cpu, task, from, to) {
                moved += 1;
            }
        }
    }

    /// `attach_tasks` (`kernel/sched/fair.c (v5.15)`) under `to`'s lock.
    pub(crate) fn attach_tasks(&mut self, cpu: CpuId, tasks: Vec<TaskId>, to: CpuId) {
        for task in tasks {
            if !self.info[task].affinity.contains(to) {
                // Its affinity changed in transit: on to an allowed CPU, as the stopper would.
                let to2 = self.distribute_cpu(task);
                let hold = self.machine.costs.migrate;
                let s = self.locked1(to2, LockSite::Migrate, hold, Action::ActivateMoved { task, to: to2 });
                self.cpus[cpu].kstack.push_front(s);
                continue;
            }
            self.tasks[task].in_transit = false;
            self.enqueue(cpu, to, task, schedlab_sched_api::enqueue::MIGRATED);
            self.check_preempt(cpu, to, task, schedlab_sched_api::wf::MIGRATED);
        }
    }

    /// `_double_lock_balance` (non-preemptible kernel; `kernel/sched.c (v2.6.32)`), run by
    /// `this` while it still holds its own runqueue lock from `schedule()`: a trylock of
    /// `busiest`; if that fails and `busiest` orders first, release our own lock and take
    /// both in order (a waiter on ours may slip in); otherwise spin on `busiest` holding ours.
    pub(crate) fn double_lock_balance(&mut self, this: CpuId, busiest: CpuId, hold: Ns, action: Action) {
        self.cpus[this].kept = None;
        let site = LockSite::LoadBalance;
        if busiest == this {
            self.release(this as LockId);
            let s = self.locked1(this, site, hold, action);
            self.cpus[this].kstack.push_front(s);
            return;
        }
        let lo = this.min(busiest);
        let hi = this.max(busiest);
        if self.locks[busiest].owner.is_some() && busiest < this {
            self.release(this as LockId);
        }
        // Our own lock, still held, is passed over by the acquisition loop; a released one
        // is taken again in order.
        let s = Step::Locked { locks: [lo as LockId, hi as LockId], n: 2, got: 0, site, hold, action };
        self.cpus[this].kstack.push_front(s);
    }
}
