//! The scheduler core: `__schedule`, `try_to_wake_up`, `wake_up_new_task`,
//! `scheduler_tick`, migrations, and the syscall actions that block or wake tasks.
//! Each action runs on the CPU executing it, with its locks already held (see `cpu.rs`),
//! and returns any extra lock hold time.

use crate::objects::Buffer;
use crate::vocab::{Action, Batch, Event, Ipi, Step};
use crate::{BlockedOn, Kernel, PrevState, ProbeEvent, TState, Task};
use schedlab_machine::{KernelPath, LockSite};
use schedlab_sched_api::{dequeue, enqueue, wf, BalanceKind, OptIdx, Request, SelectKind, TaskInfo, TaskPolicy};
use schedlab_sim::{CpuId, Ns, TaskId};

/// Calls a policy hook with a freshly built [`Ctx`], charges the work it reports to the
/// current step's path (or to `path = …`), then applies its requests.
macro_rules! hook {
    ($k:expr, $cpu:expr, |$p:ident, $cx:ident| $body:expr) => {{
        let path = $k.cur_path;
        hook!($k, $cpu, path = path, |$p, $cx| $body)
    }};
    ($k:expr, $cpu:expr, path = $path:expr, |$p:ident, $cx:ident| $body:expr) => {{
        $k.touch($cpu);
        let mut reqs = std::mem::take(&mut $k.requests);
        let (r, work) = {
            let mut $cx = schedlab_sched_api::Ctx {
                now: $k.now,
                this_cpu: $cpu,
                machine: &$k.machine,
                tasks: &$k.info,
                cpus: &$k.views,
                rng: &mut $k.policy_rng,
                requests: &mut reqs,
                work: Default::default(),
                decisions: $k.why.as_mut(),
                scale: &$k.speed.scale,
                scaled: $k.speed.scaled,
                cpufreq: $k.speed.listens,
                em: &$k.em,
            };
            let $p = &mut $k.policy;
            let r = $body;
            (r, $cx.work)
        };
        $k.requests = reqs;
        $k.deliver_decisions();
        $k.charge_work($path, &work);
        $k.apply_requests($cpu);
        r
    }};
}
pub(crate) use hook;

impl Kernel<'_> {
    /// Charges a hook's reported work to `path`, after the current step's own cost: per
    /// unit (`Costs::work_ns`), and the runqueue reads the policy named (`Ctx::read_cpu`)
    /// at what they cost by distance under the full cost model.
    #[inline(always)]
    pub(crate) fn charge_work(&mut self, path: KernelPath, work: &schedlab_sched_api::Work) {
        if !work.is_zero() {
            self.charge_work_now(path, work); // most hooks report no work: nothing to charge
        }
    }

    #[inline(never)]
    fn charge_work_now(&mut self, path: KernelPath, work: &schedlab_sched_api::Work) {
        let work = self.split_lb_chain(path, work);
        if work.is_zero() {
            return;
        }
        let ns = self.machine.costs.work_ns(&work.units()) + Ns(work.placed_ns);
        self.pending_work_add(path, ns);
    }

    /// Adds `ns` of work on `path` to the current step's pending work.
    pub(crate) fn pending_work_add(&mut self, path: KernelPath, ns: Ns) {
        match self.pending_work.iter_mut().find(|(p, _)| *p == path) {
            Some(slot) => slot.1 += ns,
            None => self.pending_work.push((path, ns)),
        }
    }

    /// Whether the per-CPU views policies read agree with the CPUs on `cpus` (they are
    /// updated where the CPUs change, not copied before every hook). The three fields are
    /// written in four places, each of which touches the CPU it writes (`touch`), so the
    /// incremental check after an event sees every CPU whose view could have gone stale.
    pub(crate) fn views_consistent(&self, cpus: &[CpuId]) -> Result<(), String> {
        for &i in cpus {
            let (v, c) = (&self.views[i], &self.cpus[i]);
            if v.curr != c.curr || v.ttwu_pending == c.wake_list.is_empty() || v.need_resched != c.need_resched {
                return Err(format!("CPU {i}: the policy's view of curr/ttwu_pending/need_resched is stale"));
            }
        }
        Ok(())
    }

    /// Sets `TIF_NEED_RESCHED` of `cpu`'s current task (and the policies' view of it).
    pub(crate) fn set_need_resched(&mut self, cpu: CpuId, on: bool) {
        self.touch(cpu);
        self.cpus[cpu].need_resched = on;
        self.views[cpu].need_resched = on;
    }

    /// Applies policy requests made while running on `this`.
    #[inline]
    pub(crate) fn apply_requests(&mut self, this: CpuId) {
        if self.requests.is_empty() && self.lb_chain.0 == 0 {
            return; // most hooks request nothing (and nothing waits in `lb_chain`)
        }
        self.apply_requests_now(this);
    }

    fn apply_requests_now(&mut self, this: CpuId) {
        let reqs = std::mem::take(&mut self.requests);
        let mut first = None;
        for r in &reqs {
            match r.clone() {
                Request::Resched(c) => self.resched_curr(this, c),
                Request::Timer { cpu, at } => {
                    if cpu < self.cpus.len() {
                        self.arm_policy_timer(cpu, at);
                    }
                }
                Request::Blocked(t) => self.delayed_dequeue_done(this, t),
                Request::Cpufreq { cpu, flags, util } => self.cpufreq_update_util(cpu, flags, util),
                Request::Kick(cpu) => {
                    if cpu < self.cpus.len() && cpu != this {
                        let at = self.now + self.machine.costs.ipi_latency;
                        self.events.push(at, Event::Ipi { cpu: cpu as u32, kind: Ipi::Balance });
                    }
                }
                Request::ActiveBalance { from, to } => {
                    let Some(t) = self.cpus.get(from).and_then(|c| c.curr) else { continue };
                    let ok = to < self.cpus.len()
                        && to != from
                        && self.info[t].affinity.contains(to)
                        && self.cpu_active(from)
                        && self.info[t].cpu == from
                        && !self.tasks[t].migrate_pending;
                    if ok {
                        // The stopper preempts the task; `__schedule` then moves it to `to`.
                        self.tasks[t].migrate_pending = true;
                        self.tasks[t].migrate_to = Some(to as u32);
                        self.resched_curr(this, from);
                    }
                }
                Request::MigrateBatch { from, to, tasks, count } => {
                    let ok = to < self.cpus.len() && to != from && self.cpu_active(to);
                    if ok && (count > 0 || self.lb_locks_empty_pass()) {
                        match self.lb_move_step(this, from, to, tasks, count) {
                            // Runs first, straight after the hold whose lock it keeps.
                            (s, true) => first = Some(s),
                            (s, false) => self.cpus[this].kstack.push_front(s),
                        }
                    }
                }
                Request::Migrate { task, to } => {
                    let from = self.info[task].cpu;
                    let ok = to < self.cpus.len()
                        && to != from
                        && self.info[task].affinity.contains(to)
                        && self.tasks[task].on_rq
                        && self.cpus[from].curr != Some(task);
                    if ok {
                        let hold = self.machine.costs.migrate;
                        let s = self.locked2(from, to, LockSite::Migrate, hold, Action::MoveQueued { task, from, to });
                        self.cpus[this].kstack.push_front(s);
                    }
                }
            }
        }
        if let Some(s) = first {
            self.cpus[this].kstack.push_front(s);
        }
        self.flush_lb_chain();
        self.requests = reqs;
        self.requests.clear();
    }

    /// `resched_curr`: set need_resched; a remote CPU gets a reschedule IPI.
    pub(crate) fn resched_curr(&mut self, this: CpuId, cpu: CpuId) {
        if self.cpus[cpu].need_resched {
            return;
        }
        self.set_need_resched(cpu, true);
        if cpu != this {
            let at = self.now + self.ipi_latency(this, cpu);
            self.events.push(at, Event::Ipi { cpu: cpu as u32, kind: Ipi::Resched });
        }
    }

    /// `set_task_cpu`: tell the policy (`migrate_task_rq`) and count a migration.
    pub(crate) fn set_task_cpu(&mut self, this: CpuId, t: TaskId, to: CpuId) {
        let from = self.info[t].cpu;
        if from == to {
            return;
        }
        hook!(self, this, |p, cx| p.migrate_task_rq(&mut cx, t, to));
        self.info[t].cpu = to;
        self.tasks[t].wake_migrated = true;
        self.probe.event(&ProbeEvent::Migrate { time: self.now, task: t, from, to });
    }

    pub(crate) fn enqueue(&mut self, this: CpuId, cpu: CpuId, t: TaskId, flags: u32) {
        debug_assert!(!self.tasks[t].on_rq);
        self.tasks[t].on_rq = true;
        self.views[cpu].nr_running += 1;
        self.core_task_changed(cpu);
        hook!(self, this, |p, cx| p.enqueue_task(&mut cx, cpu, t, flags));
    }

    pub(crate) fn dequeue(&mut self, this: CpuId, cpu: CpuId, t: TaskId, flags: u32) {
        let done = hook!(self, this, |p, cx| p.dequeue_task(&mut cx, cpu, t, flags));
        self.core_task_changed(cpu);
        if done {
            self.tasks[t].on_rq = false;
            self.views[cpu].nr_running -= 1;
            // A delayed task moved to another runqueue stays delayed there (v6.12
            // `detach_task`): only a sleep dequeue ends the delay.
            if flags & dequeue::SLEEP != 0 {
                self.tasks[t].delayed = false;
            }
        } else if flags & dequeue::SLEEP != 0 && flags & dequeue::SPECIAL == 0 {
            // DELAY_DEQUEUE: asleep, but still queued and counted here.
            self.tasks[t].delayed = true;
        } else {
            self.fail(format!("policy `{}` delayed a dequeue it may not delay", self.policy.name()));
        }
    }

    /// The policy completed a delayed dequeue (`__block_task`): the sleeping task leaves
    /// its runqueue.
    fn delayed_dequeue_done(&mut self, _this: CpuId, t: TaskId) {
        if !self.tasks[t].delayed || !self.tasks[t].on_rq {
            self.fail(format!("policy `{}` reported task {} blocked, but it was not delayed", self.policy.name(), t));
            return;
        }
        self.tasks[t].delayed = false;
        self.tasks[t].on_rq = false;
        let cpu = self.info[t].cpu;
        self.views[cpu].nr_running -= 1;
    }

    /// `check_preempt_curr` after an enqueue on `cpu`.
    pub(crate) fn check_preempt(&mut self, this: CpuId, cpu: CpuId, t: TaskId, wake_flags: u32) {
        match self.cpus[cpu].curr {
            None => self.resched_curr(this, cpu),
            Some(c) if c == t => {}
            Some(c) => {
                let was = self.cpus[cpu].need_resched;
                hook!(self, this, |p, cx| p.wakeup_preempt(&mut cx, cpu, t, wake_flags));
                self.record_preempt(cpu, c, t, was);
            }
        }
    }

    /// A CPU allowed by `t`'s affinity, chosen by the policy and validated here
    /// (`select_task_rq` + `select_fallback_rq`).
    pub(crate) fn select(&mut self, this: CpuId, t: TaskId, prev: CpuId, kind: SelectKind, wake_flags: u32) -> CpuId {
        let c = hook!(self, this, path = KernelPath::Placement, |p, cx| p
            .select_task_rq(&mut cx, t, prev, kind, wake_flags));
        if c < self.cpus.len() && self.info[t].affinity.contains(c) {
            return c;
        }
        self.info[t].affinity.first().unwrap_or(0)
    }

    /// Creates a task of `template` (instance number allocated here).
    fn create_task(&mut self, template: usize, parent: Option<TaskId>, cpu: CpuId) -> Option<TaskId> {
        if self.tasks.len() as u64 >= self.params.max_tasks {
            self.fatal = Some(crate::RunError::Limit(format!(
                "more than {} tasks would exist at {} (fork of `{}`)",
                self.params.max_tasks, self.now, self.wl.templates[template].name
            )));
            return None;
        }
        let n = self.instances[template];
        self.instances[template] += 1;
        let prog = self.task_program(template, n)?;
        let tpl = &self.wl.templates[template];
        let total = tpl.count.max(self.instances[template]);
        let name = if total > 1 || tpl.template { format!("{}.{n}", tpl.name) } else { tpl.name.clone() };
        let affinity = match (&tpl.affinity, parent) {
            // `kthread_create_on_cpu`: instance n of a per-CPU task is bound to CPU n.
            _ if tpl.per_cpu => schedlab_machine::CpuSet::single(self.cpus.len(), n as usize % self.cpus.len()),
            (Some(a), _) => a.clone(),
            (None, Some(p)) => self.info[p].affinity.clone(),
            (None, None) => self.all_cpus.clone(),
        };
        let policy = tpl.policy;
        let cpu = if affinity.contains(cpu) { cpu } else { affinity.first().unwrap_or(0) };
        let id = self.tasks.len();
        let inherited = |f: fn(&TaskInfo) -> Option<usize>| parent.and_then(|p| f(&self.info[p]));
        let cgroup = tpl.group.or_else(|| inherited(|i| i.cgroup.get()));
        let session = tpl.session.or_else(|| inherited(|i| i.session.get()));
        let slice = tpl.slice.map(|s| s.0).or_else(|| parent.and_then(|p| self.info[p].slice));
        let kthread = tpl.kthread;
        // uclamp_fork (core.c, v5.15 and v6.18): the child keeps the parent's requests
        // (no reset_on_fork here); the template's own replace them.
        let up = parent.map(|p| self.info[p].uclamp).unwrap_or_default();
        let uclamp = schedlab_sched_api::UclampReq { min: tpl.uclamp.min.or(up.min), max: tpl.uclamp.max.or(up.max) };
        // sched_core_fork (core_sched.c, v5.15 and v6.18): the child shares its parent's cookie.
        let core_cookie = tpl.core_cookie.or_else(|| parent.map(|p| self.info[p].core_cookie)).unwrap_or(0);
        self.info.push(TaskInfo {
            name,
            nice: tpl.nice,
            policy,
            affinity,
            cpu,
            parent: parent.into(),
            cgroup: cgroup.into(),
            session: session.into(),
            slice,
            kthread,
            uclamp,
            core_cookie,
        });
        let born = parent.map(|_| self.now);
        self.tasks.push(Task::new(template, policy, prog, cpu, self.now, born));
        self.cost_task_new(id, template, parent);
        self.exit_times.push(None);
        self.alive += 1;
        if let Some(p) = parent {
            self.tasks[p].live_children += 1;
            self.link_child(p, id);
        }
        self.hotplug_new_task(id, parent);
        self.probe.event(&ProbeEvent::TaskNew { time: self.now, task: id, parent, cpu });
        self.record_affinity(id);
        Some(id)
    }

    /// The program of instance `n` of `template`: shared by every instance when it does not
    /// depend on the instance (lowered once), else lowered for this one. A lowering error
    /// ends the run.
    fn task_program(&mut self, template: usize, n: u64) -> Option<std::rc::Rc<schedlab_workload::Program>> {
        if let Some(p) = &self.shared_programs[template] {
            return Some(p.clone());
        }
        match self.wl.program(template, n) {
            Ok(p) => {
                let p = std::rc::Rc::new(p);
                if !self.wl.templates[template].instance_dependent {
                    self.shared_programs[template] = Some(p.clone());
                }
                Some(p)
            }
            Err(e) => {
                self.fatal = Some(crate::RunError::Workload(e));
                None
            }
        }
    }

    /// A workload-started task appears: `sched_fork` + `wake_up_new_task`, performed at its
    /// start time without charging any CPU (it has no creator in the workload).
    pub(crate) fn start_task(&mut self, template: usize) {
        let first = self.wl.templates[template].affinity.as_ref().and_then(|a| a.first()).unwrap_or(0);
        let Some(t) = self.create_task(template, None, first) else { return };
        let first = self.info[t].cpu;
        if !self.admit_new(first, t, template) {
            return;
        }
        hook!(self, first, |p, cx| p.task_new(&mut cx, t, None));
        let target = self.select(first, t, first, SelectKind::Fork, wf::FORK);
        self.info[t].cpu = target;
        self.enqueue(target, target, t, enqueue::INITIAL);
        self.probe.event(&ProbeEvent::Wakeup { time: self.now, task: t, cpu: target, new: true });
        self.check_preempt(target, target, t, wf::FORK);
        // No CPU runs this creation: its hooks' work is not charged.
        self.pending_work.clear();
        // The check above ran as if on `target`, so a resched it asked for is only a flag
        // there. In Linux the creator runs elsewhere and `resched_curr` sends `target` an
        // IPI (`core.c:wake_up_new_task` → `wakeup_preempt` → `resched_curr`, v6.12); with
        // no creator in the workload, deliver it at once, to an idle CPU as to one running
        // user code (kernel work in progress sees the flag when it returns).
        let user = self.cpus[target].busy == crate::cpu::Busy::User;
        if self.cpus[target].curr.is_none() || (self.cpus[target].need_resched && user) {
            self.interrupt(target, []);
        }
    }

    /// A `[[change]]`: an outside process sets the affinity and/or nice of every live task
    /// of a template, or takes a CPU offline/online (`hotplug.rs`). Each task's own CPU
    /// does the work under its runqueue lock; a running task on a CPU it may no longer use
    /// is pushed off by the stopper, a queued one moved.
    pub(crate) fn apply_change(&mut self, idx: usize) {
        let c = self.wl.changes[idx].clone();
        if let Some(h) = c.hotplug {
            self.cpu_hotplug(h);
            return;
        }
        let Some(template) = c.template else { return };
        for t in 0..self.tasks.len() {
            if self.tasks[t].template as usize != template || self.tasks[t].state == TState::Dead {
                continue;
            }
            let cpu = self.info[t].cpu;
            if let Some(n) = c.nice {
                let s = self.locked1(
                    cpu,
                    LockSite::Setattr,
                    self.machine.costs.schedule,
                    Action::SetNice { task: t, nice: n },
                );
                self.interrupt(cpu, [s]);
            }
            if let Some(set) = &c.affinity {
                if self.restricting() {
                    self.restrict_affinity(t, set.clone(), cpu);
                    continue;
                }
                self.info[t].affinity = set.clone();
                self.record_affinity(t);
                self.move_disallowed(t);
            }
        }
    }

    /// Executes `action` on `cpu` (its step's locks held). Returns extra lock hold time.
    /// One arm per kernel path; each path is the function named after its kernel
    /// counterpart.
    pub(crate) fn act(&mut self, cpu: CpuId, action: Action) -> Ns {
        match action {
            Action::Schedule { newidle } => return self.schedule(cpu, newidle, None),
            Action::NohzBalance => self.nohz_idle_balance(cpu),
            Action::IdleWake => self.idle_wake_balance(cpu),
            Action::Tick => self.scheduler_tick(cpu),
            Action::TtwuStart { task, wf, claimed } => self.ttwu(cpu, task, wf, claimed),
            Action::TtwuRunnable { task, wf, cpu: rq } => self.ttwu_runnable(cpu, task, wf, rq),
            Action::TtwuActivate { task, wf, cpu: rq } => self.ttwu_activate(cpu, rq, task, wf),
            Action::TtwuPending => self.sched_ttwu_pending(cpu),
            Action::ForkChild { parent, template } => self.kernel_clone(cpu, parent, template),
            Action::WakeUpNewTask { child, cpu: rq } => self.wake_up_new_task(cpu, child, rq),
            Action::WakeUpNewTaskTry { child, cpu: rq } => self.wake_up_new_task_try(cpu, child, rq),
            Action::DetachBatch { batch, attach_hold } => {
                let Batch { tasks, from, to, count } = *batch;
                self.detach_tasks(cpu, tasks, from, to, count, attach_hold)
            }
            Action::AttachBatch { tasks, to } => self.attach_tasks(cpu, tasks, to),
            Action::DoubleLockBalance { this, busiest, hold, action } => {
                self.double_lock_balance(this, busiest, hold, *action)
            }
            Action::MoveQueuedBatch(batch) => self.move_tasks(cpu, *batch),
            Action::MoveQueued { task, from, to } => {
                self.move_queued(cpu, task, from, to);
            }
            Action::ActivateMoved { task, to } => self.move_queued_task_activate(cpu, task, to),
            Action::Yield { task } => self.do_sched_yield(cpu, task),
            Action::SetNice { task, nice } => self.set_user_nice(cpu, task, nice),
            Action::SetPolicy(b) => {
                let (task, policy, at) = *b;
                self.setscheduler(cpu, task, policy, at)
            }
            Action::PolicyTimer => self.policy_timer(cpu),
            Action::SetSlice { task, slice } => self.set_slice(cpu, task, slice),
            Action::SetAffinity { task, set } => self.set_cpus_allowed(cpu, task, set),
            Action::SleepUntil { task, until } => self.do_nanosleep(cpu, task, until),
            Action::Exit { task } => self.do_exit(cpu, task),
            Action::WaitChildren { task } => self.do_wait(cpu, task),
            Action::PipeWrite { task, pipe } => self.pipe_write(cpu, task, pipe),
            Action::PipeRead { task, pipe } => self.pipe_read(cpu, task, pipe),
            Action::Poll { task } => self.do_poll(cpu, task),
            Action::FutexWait { task, key, expected } => self.futex_wait_locked(cpu, task, key, expected),
            Action::FutexWake { key, n } => self.futex_wake_locked(cpu, key, n, 0),
            Action::Futex(a) => return self.futex_act(cpu, *a),
        }
        Ns(0)
    }

    /// `nohz_idle_balance` (`kernel/sched/fair.c`, v5.15): the SCHED_SOFTIRQ of an idle CPU
    /// kicked by `nohz_balancer_kick` balances on behalf of the idle CPUs.
    fn nohz_idle_balance(&mut self, cpu: CpuId) {
        if !self.cpu_active(cpu) {
            return; // an offline CPU's domains are detached (`sched_cpu_deactivate`)
        }
        hook!(self, cpu, path = KernelPath::Balance, |p, cx| p.balance(&mut cx, cpu, BalanceKind::NohzIdle));
    }

    /// An idle CPU whose tick is stopped, woken by the timer interrupt the policy declares
    /// (`SchedClass::idle_wakeup`: FreeBSD's event timers skip at most `hz / 2` ticks,
    /// `sys/kern/kern_clocksource.c:getnextcpuevent`), looks for work; only a CPU still
    /// idle looks, as work may have arrived before the interrupt ran.
    fn idle_wake_balance(&mut self, cpu: CpuId) {
        if self.cpus[cpu].curr.is_none() && self.views[cpu].nr_running == 0 && self.cpu_active(cpu) {
            hook!(self, cpu, path = KernelPath::Balance, |p, cx| p.balance(&mut cx, cpu, BalanceKind::IdleWake));
        }
    }

    /// `scheduler_tick` (`kernel/sched/core.c`, v5.15): the class's `task_tick` for the
    /// running task, then `trigger_load_balance` (the balancer's tick).
    fn scheduler_tick(&mut self, cpu: CpuId) {
        if self.dtq.has_pending(cpu) {
            // Delayed new tasks wait for this CPU's next `schedule()` (`delayed.rs`).
            self.set_need_resched(cpu, true);
        }
        if let Some(t) = self.cpus[cpu].curr {
            let was = self.cpus[cpu].need_resched;
            hook!(self, cpu, |p, cx| p.task_tick(&mut cx, cpu, t));
            self.record_tick(cpu, t, was);
        }
        if self.core.on {
            self.sched_core_tick(cpu, self.cpus[cpu].curr);
        }
        if self.cpu_active(cpu) {
            hook!(self, cpu, path = KernelPath::Balance, |p, cx| p.balance(&mut cx, cpu, BalanceKind::Tick));
        }
    }

    /// `ttwu_runnable` (`kernel/sched/core.c`, v5.15; the delayed entity's requeue from
    /// v6.12) with `rq` locked, after `__task_rq_lock`'s checks: a task between
    /// `detach_tasks` and `attach_tasks` (`TASK_ON_RQ_MIGRATING`) makes the waker wait and
    /// retry, as `__task_rq_lock` spins; a task still queued on `rq` never really slept and
    /// is only marked running; a task that left `rq` meanwhile is woken in full (2.6.32
    /// releases the old runqueue's lock before selecting, `kernel/sched.c:try_to_wake_up
    /// (v2.6.32)`); a task now queued elsewhere is retried on its new runqueue.
    fn ttwu_runnable(&mut self, cpu: CpuId, task: TaskId, wf: u32, rq: CpuId) {
        let tk = &self.tasks[task];
        if tk.in_transit {
            let now_on = self.info[task].cpu;
            let hold = self.machine.costs.ttwu_activate;
            let s = self.locked1(now_on, LockSite::TryToWakeUp, hold, Action::TtwuRunnable { task, wf, cpu: now_on });
            self.cpus[cpu].kstack.push_front(s);
            self.cpus[cpu].kstack.push_front(Step::Delay(KernelPath::Wakeup, hold));
        } else if tk.on_rq && self.info[task].cpu == rq {
            self.tasks[task].state = TState::Running;
            self.tasks[task].waking = false;
            self.tasks[task].blocked_on = BlockedOn::Nothing;
            if std::mem::take(&mut self.tasks[task].delayed) {
                // v6.12: requeue the delayed entity in place, then check preemption.
                hook!(self, cpu, |p, cx| p.enqueue_task(&mut cx, rq, task, enqueue::DELAYED | enqueue::WAKEUP));
                self.probe.event(&ProbeEvent::Wakeup { time: self.now, task, cpu: rq, new: false });
                self.check_preempt(cpu, rq, task, wf);
            }
        } else if !tk.on_rq && self.cfg.version.ttwu_locks_old_rq() {
            self.cpus[cpu].kstack.push_front(Step::Do(Action::TtwuStart { task, wf, claimed: true }));
        } else if !tk.on_rq {
            self.ttwu(cpu, task, wf, true);
        } else {
            let now_on = self.info[task].cpu;
            let hold = self.machine.costs.ttwu_activate;
            let s = self.locked1(now_on, LockSite::TryToWakeUp, hold, Action::TtwuRunnable { task, wf, cpu: now_on });
            self.cpus[cpu].kstack.push_front(s);
        }
    }

    /// `sched_ttwu_pending` (`kernel/sched/core.c`, v5.15): the wake-list IPI's handler
    /// activates every queued wakee under this CPU's own runqueue lock, in one hold.
    fn sched_ttwu_pending(&mut self, cpu: CpuId) {
        self.touch(cpu);
        let list = std::mem::take(&mut self.cpus[cpu].wake_list);
        self.views[cpu].ttwu_pending = false;
        for t in list {
            self.ttwu_activate(cpu, cpu, t, 0);
        }
    }

    /// `kernel_clone` (`kernel/fork.c`, v5.15) from the scheduler's side: `copy_process`
    /// creates the child (its `sched_fork`: the class's `task_fork`, here `task_new`), then
    /// the child's CPU is selected (`select_task_rq(WF_FORK)`, `__set_task_cpu`: no
    /// `migrate_task_rq` for a task never queued) and `wake_up_new_task` is queued.
    fn kernel_clone(&mut self, cpu: CpuId, parent: TaskId, template: usize) {
        let Some(child) = self.create_task(template, Some(parent), cpu) else { return };
        if !self.admit_new(cpu, child, template) {
            return;
        }
        hook!(self, cpu, |p, cx| p.task_new(&mut cx, child, Some(parent)));
        let prev = self.info[child].cpu;
        let target = self.select(cpu, child, prev, SelectKind::Fork, wf::FORK);
        self.info[child].cpu = target;
        self.push_wake_up_new_task(cpu, child, target);
    }

    /// The second half of `move_queued_task` (`kernel/sched/core.c`, v5.15) under the new
    /// runqueue's lock: a task the stopper took off its CPU (`migrate_pending`) or whose
    /// affinity changed in transit is activated on `to`, and may preempt there.
    fn move_queued_task_activate(&mut self, cpu: CpuId, task: TaskId, to: CpuId) {
        self.set_task_cpu(cpu, task, to);
        self.tasks[task].in_transit = false;
        self.enqueue(cpu, to, task, enqueue::MIGRATED);
        self.check_preempt(cpu, to, task, wf::MIGRATED);
    }

    /// `do_sched_yield` (`kernel/sched/core.c`, v5.15): the class's `yield_task` under the
    /// runqueue lock, then `schedule()`.
    fn do_sched_yield(&mut self, cpu: CpuId, task: TaskId) {
        if self.cpus[cpu].curr == Some(task) {
            hook!(self, cpu, |p, cx| p.yield_task(&mut cx, cpu, task));
        }
        let s = self.locked1(cpu, LockSite::Schedule, self.machine.costs.schedule, Action::Schedule { newidle: true });
        self.cpus[cpu].kstack.push_front(s);
    }

    /// `set_user_nice` (`kernel/sched/core.c`, v5.15): the new nice, then the class
    /// reweights the task (`reweight_task`; the dequeue/requeue is the class's).
    fn set_user_nice(&mut self, cpu: CpuId, task: TaskId, nice: i32) {
        self.info[task].nice = nice;
        hook!(self, cpu, |p, cx| p.reweight_task(&mut cx, task));
    }

    /// The policy's own timer (`Request::Timer`: `dl_timer`, the rt period timer, …)
    /// expired on `cpu`, under its runqueue lock.
    fn policy_timer(&mut self, cpu: CpuId) {
        hook!(self, cpu, |p, cx| p.timer(&mut cx, cpu));
    }

    /// `sched_setattr(sched_runtime)` of a fair task (`kernel/sched/core.c:
    /// __setscheduler_params`, v6.12: `p->se.custom_slice`).
    fn set_slice(&mut self, cpu: CpuId, task: TaskId, slice: Option<u64>) {
        self.info[task].slice = slice;
        hook!(self, cpu, |p, cx| p.slice_changed(&mut cx, task));
    }

    /// `__set_cpus_allowed_ptr` (`kernel/sched/core.c`, v5.15) for the running task: the new
    /// mask; if it excludes this CPU, `affine_move_task` has the stopper push the task off
    /// (here: `migrate_pending`, acted on by the `schedule()` that follows).
    ///
    /// While masks are restricted (`hotplug.rs`), `__sched_setaffinity` (v6.12) asks for
    /// `set` within the task's cpuset and the active CPUs and keeps `set` as its
    /// `user_cpus_ptr`; with no such CPU the call fails with EINVAL and nothing changes.
    fn set_cpus_allowed(&mut self, cpu: CpuId, task: TaskId, set: schedlab_machine::CpuSet) {
        let Some(set) = self.setaffinity_mask(task, set) else { return };
        let here = self.info[task].cpu;
        self.info[task].affinity = set;
        self.record_affinity(task);
        if !self.info[task].affinity.contains(here) {
            self.tasks[task].migrate_pending = true;
            self.set_need_resched(cpu, true);
        }
    }

    /// `do_nanosleep` (`kernel/time/hrtimer.c`, v5.15): arm the sleep timer, then block.
    fn do_nanosleep(&mut self, cpu: CpuId, task: TaskId, until: Ns) {
        self.arm_sleep_timer(cpu, task, until);
        self.block(cpu, task, BlockedOn::Timer);
    }

    /// `do_exit` (`kernel/exit.c`, v5.15): the task is dead; `exit_notify` wakes a parent
    /// waiting for its last child and `forget_original_parent` reparents the live children
    /// (to nobody: an orphan's exit wakes no one); then the final `schedule()`.
    fn do_exit(&mut self, cpu: CpuId, task: TaskId) {
        self.tasks[task].state = TState::Dead;
        self.exit_times[task] = Some(self.now);
        self.alive -= 1;
        self.probe.event(&ProbeEvent::Exit { time: self.now, task });
        let mut steps = Vec::new();
        if let Some(p) = self.info[task].parent.get() {
            let pt = &mut self.tasks[p];
            pt.live_children -= 1;
            if pt.live_children == 0 && pt.blocked_on == BlockedOn::Children && pt.state == TState::Sleeping {
                steps.push(Step::Delay(KernelPath::Wakeup, self.ttwu_cost(cpu, p)));
                steps.push(Step::Do(Action::TtwuStart { task: p, wf: 0, claimed: false }));
            }
            self.unlink_child(p, task);
        }
        self.forget_original_parent(task);
        steps.push(self.locked1(
            cpu,
            LockSite::Schedule,
            self.machine.costs.schedule,
            Action::Schedule { newidle: true },
        ));
        self.push_steps(cpu, steps);
    }

    /// Puts `child` on `parent`'s list of children (`copy_process` links `p->sibling`
    /// into `p->real_parent->children`, `kernel/fork.c`, v5.15; at the head here: the
    /// order of the list changes no result).
    fn link_child(&mut self, parent: TaskId, child: TaskId) {
        let head = self.tasks[parent].children;
        if let Some(h) = head.get() {
            self.tasks[h].sibling_prev = OptIdx::some(child);
        }
        let c = &mut self.tasks[child];
        c.sibling_prev = OptIdx::NONE;
        c.sibling_next = head;
        self.tasks[parent].children = OptIdx::some(child);
    }

    /// Takes the exiting `child` off `parent`'s list (`release_task` → `__unhash_process`:
    /// `list_del_init(&p->sibling)`, `kernel/exit.c`, v5.15; the model reaps at exit).
    fn unlink_child(&mut self, parent: TaskId, child: TaskId) {
        let (prev, next) = (self.tasks[child].sibling_prev, self.tasks[child].sibling_next);
        match prev.get() {
            Some(p) => self.tasks[p].sibling_next = next,
            None => self.tasks[parent].children = next,
        }
        if let Some(n) = next.get() {
            self.tasks[n].sibling_prev = prev;
        }
        let c = &mut self.tasks[child];
        c.sibling_prev = OptIdx::NONE;
        c.sibling_next = OptIdx::NONE;
    }

    /// `forget_original_parent` (`kernel/exit.c`, v5.15) for the exiting `father`: each
    /// live child on its list is reparented — to nobody (the model has no reaper: an
    /// orphan's exit wakes no one) — and the list is emptied: it has no children left.
    fn forget_original_parent(&mut self, father: TaskId) {
        self.tasks[father].live_children = 0;
        let mut next = std::mem::take(&mut self.tasks[father].children);
        while let Some(c) = next.get() {
            self.info[c].parent = OptIdx::NONE;
            let tk = &mut self.tasks[c];
            next = std::mem::take(&mut tk.sibling_next);
            tk.sibling_prev = OptIdx::NONE;
        }
    }

    /// `do_wait` (`kernel/exit.c`, v5.15) for any child: blocks while children live (the
    /// last one's exit wakes it).
    fn do_wait(&mut self, cpu: CpuId, task: TaskId) {
        if self.tasks[task].live_children > 0 {
            self.block(cpu, task, BlockedOn::Children);
        }
    }

    /// `move_queued_task` / `detach_task` + `attach_task` with both locks held, if `task`
    /// is still queued on `from`, not running, and allowed on `to`.
    pub(crate) fn move_queued(&mut self, cpu: CpuId, task: TaskId, from: CpuId, to: CpuId) -> bool {
        let ok = self.tasks[task].on_rq
            && self.info[task].cpu == from
            && self.cpus[from].curr != Some(task)
            && self.info[task].affinity.contains(to);
        if ok {
            self.dequeue(cpu, from, task, dequeue::MIGRATE);
            self.set_task_cpu(cpu, task, to);
            self.enqueue(cpu, to, task, enqueue::MIGRATED);
            self.check_preempt(cpu, to, task, wf::MIGRATED);
        }
        ok
    }

    /// `try_to_wake_up`'s work before any runqueue lock, run by `cpu` for wakee `t`: the
    /// wakee's lines (`p->pi_lock`, `p->state`, `task_thread_info(p)->cpu`, …) are where it
    /// last ran. Within a core they are in the shared L1/L2 (`ttwu_local`); within the LLC
    /// they cost `ttwu_remote`; from another LLC or node each of `ttwu_lines` lines costs the
    /// extra transfer time on top (the misses a 2005 talk on Linux 2.6 bottlenecks names).
    fn ttwu_cost(&self, cpu: CpuId, t: TaskId) -> Ns {
        let m = &self.machine;
        let c = &m.costs;
        let last = self.info[t].cpu;
        if last == cpu || m.topology.same_core(last, cpu) {
            c.ttwu_local
        } else if m.topology.shares_llc(last, cpu) {
            c.ttwu_remote
        } else {
            let extra = m.line_transfer_ns(last, cpu).saturating_sub(c.line_same_llc);
            c.ttwu_remote + Ns(extra.0 * u64::from(c.ttwu_lines))
        }
    }

    /// Queues a `try_to_wake_up(t)` to run next on `cpu`.
    pub(crate) fn wake_steps(&mut self, cpu: CpuId, t: TaskId, wake_flags: u32) {
        let cost = self.ttwu_cost(cpu, t);
        self.push_steps(
            cpu,
            [
                Step::Delay(KernelPath::Wakeup, cost),
                Step::Do(Action::TtwuStart { task: t, wf: wake_flags, claimed: false }),
            ],
        );
    }

    /// `try_to_wake_up` (core.c, v5.15): claim the task, then either `ttwu_runnable` (still
    /// queued), or select a CPU and queue to its wake list or lock it and activate. The
    /// version decides the lock shape (`version.rs`): 2.6.32 locks the old runqueue first
    /// (`kernel/sched.c:try_to_wake_up (v2.6.32)`), 3.4 queues only across caches
    /// (`kernel/sched/core.c:ttwu_queue (v3.4)`).
    fn ttwu(&mut self, cpu: CpuId, t: TaskId, wake_flags: u32, claimed: bool) {
        if !claimed {
            let tk = &self.tasks[t];
            if tk.state != TState::Sleeping || tk.waking {
                return; // already awake, dead, or being woken by someone else
            }
            self.tasks[t].waking = true;
            let irq = wake_flags & schedlab_sched_api::wf::IRQ != 0;
            self.probe.event(&ProbeEvent::Waking { time: self.now, task: t, waker_cpu: cpu, irq });
            if !self.tasks[t].on_rq && !self.tasks[t].in_transit {
                if let Some(s) = self.ttwu_old_rq_step(t, wake_flags) {
                    self.cpus[cpu].kstack.push_front(s);
                    return;
                }
            }
            if self.tasks[t].on_rq || self.tasks[t].in_transit {
                let rq = self.info[t].cpu;
                let s = self.locked1(
                    rq,
                    LockSite::TryToWakeUp,
                    self.machine.costs.ttwu_activate,
                    Action::TtwuRunnable { task: t, wf: wake_flags, cpu: rq },
                );
                self.cpus[cpu].kstack.push_front(s);
                return;
            }
        }
        self.tasks[t].wake_migrated = false;
        let prev = self.info[t].cpu;
        let target = self.select(cpu, t, prev, SelectKind::Wake, wake_flags);
        self.set_task_cpu(cpu, t, target);
        if self.ttwu_queue_cond(cpu, target) {
            // `ttwu_queue_wakelist`: the target activates it under its own lock after an IPI.
            let first = self.cpus[target].wake_list.is_empty();
            self.touch(target);
            self.cpus[target].wake_list.push(t);
            self.views[target].ttwu_pending = true;
            if first {
                let at = self.now + self.ipi_latency(cpu, target);
                self.events.push(at, Event::Ipi { cpu: target as u32, kind: Ipi::WakeList });
            }
        } else {
            let s = self.locked1(
                target,
                LockSite::TryToWakeUp,
                self.machine.costs.ttwu_activate,
                Action::TtwuActivate { task: t, wf: wake_flags, cpu: target },
            );
            self.cpus[cpu].kstack.push_front(s);
        }
    }

    /// `ttwu_do_activate` on runqueue `rq` (locked), executed by `cpu`.
    fn ttwu_activate(&mut self, cpu: CpuId, rq: CpuId, t: TaskId, wake_flags: u32) {
        let mut flags = enqueue::WAKEUP;
        let mut wf_ = wake_flags;
        if self.tasks[t].wake_migrated {
            flags |= enqueue::MIGRATED;
            wf_ |= wf::MIGRATED;
        }
        self.enqueue(cpu, rq, t, flags);
        let tk = &mut self.tasks[t];
        tk.state = TState::Running;
        tk.waking = false;
        tk.blocked_on = BlockedOn::Nothing;
        self.probe.event(&ProbeEvent::Wakeup { time: self.now, task: t, cpu: rq, new: false });
        self.check_preempt(cpu, rq, t, wf_);
    }

    /// `__schedule` (`kernel/sched/core.c`, v5.15) on `cpu` with its runqueue locked.
    /// Returns the context-switch time, which extends the lock hold (the lock is released
    /// in `finish_task_switch`). `forced`: a direct switch (`futex.rs`) hands the CPU to
    /// this queued task without a pick, if the class can (`SchedClass::set_next_task`).
    pub(crate) fn schedule(&mut self, cpu: CpuId, newidle: bool, forced: Option<TaskId>) -> Ns {
        // Delayed new tasks enter this runqueue before the pick (`delayed.rs`).
        let drained = self.drain_delayed(cpu);
        let prev = self.cpus[cpu].curr;
        let (prev_state, moving) = match prev {
            Some(p) => self.deactivate_prev(cpu, p),
            None => (PrevState::Runnable, None),
        };
        let next = self.pick_next(cpu, forced);
        // `clear_tsk_need_resched(prev)` comes after the pick: a reschedule requested while
        // picking (e.g. by `update_curr`) is satisfied by this very switch.
        self.set_need_resched(cpu, false);
        if let Some(n) = next {
            if !self.tasks[n].on_rq || self.info[n].cpu != cpu || self.tasks[n].state == TState::Dead {
                self.fail(format!(
                    "policy `{}` picked task {} on CPU {cpu}, but it is not queued there",
                    self.policy.name(),
                    self.info[n].name
                ));
                return Ns(0);
            }
            self.record_pick(cpu, n);
        }
        let cost = self.context_switch(cpu, prev, prev_state, next);
        if let Some(p) = prev {
            if prev_state == PrevState::Dead {
                hook!(self, cpu, |pol, cx| pol.task_dead(&mut cx, p));
            }
        }
        if let Some(p) = moving {
            let to = match self.tasks[p].migrate_to.take().map(|c| c as usize) {
                Some(to) if self.info[p].affinity.contains(to) => to,
                _ => self.distribute_cpu(p),
            };
            let s =
                self.locked1(to, LockSite::Migrate, self.machine.costs.migrate, Action::ActivateMoved { task: p, to });
            self.cpus[cpu].kstack.push_front(s);
        }
        match next {
            Some(_) => self.start_tick(cpu),
            None if newidle && self.cpu_active(cpu) => {
                self.in_newidle = true;
                hook!(self, cpu, path = KernelPath::Balance, |pol, cx| pol.balance(&mut cx, cpu, BalanceKind::NewIdle));
                self.in_newidle = false;
            }
            None => {}
        }
        cost + drained
    }

    /// `__schedule`'s handling of `prev`: a task going to sleep or dead is dequeued
    /// (`deactivate_task`), a running one the stopper must move (`migrate_pending`) leaves
    /// for the move; then the class's `put_prev_task`. Returns how `prev` leaves the CPU
    /// and the task in transit, if any.
    fn deactivate_prev(&mut self, cpu: CpuId, p: TaskId) -> (PrevState, Option<TaskId>) {
        let mut prev_state = PrevState::Runnable;
        let mut moving = None;
        match self.tasks[p].state {
            TState::Sleeping => {
                prev_state = PrevState::Blocked;
                self.dequeue(cpu, cpu, p, dequeue::SLEEP);
            }
            TState::Dead => {
                prev_state = PrevState::Dead;
                self.dequeue(cpu, cpu, p, dequeue::SLEEP | dequeue::SPECIAL);
            }
            TState::Running => {
                if self.tasks[p].migrate_pending {
                    self.tasks[p].migrate_pending = false;
                    self.dequeue(cpu, cpu, p, dequeue::MIGRATE);
                    self.tasks[p].in_transit = true;
                    moving = Some(p);
                }
            }
        }
        hook!(self, cpu, |pol, cx| pol.put_prev_task(&mut cx, cpu, p));
        (prev_state, moving)
    }

    /// `pick_next_task`, or the direct switch to `forced` when the class takes it.
    /// With core scheduling on, the pick is core-wide (`coresched.rs`) and a direct switch
    /// falls back to it: handing the CPU to a task of another cookie would break the core's.
    fn pick_next(&mut self, cpu: CpuId, forced: Option<TaskId>) -> Option<TaskId> {
        if self.core.on {
            self.objs.stats.direct_fallbacks += u64::from(forced.is_some());
            return self.sched_core_pick(cpu);
        }
        let direct = forced.is_some_and(|n| hook!(self, cpu, |pol, cx| pol.set_next_task(&mut cx, cpu, n)));
        if direct {
            self.objs.stats.direct_switches += 1;
            forced
        } else {
            self.objs.stats.direct_fallbacks += u64::from(forced.is_some());
            hook!(self, cpu, |pol, cx| pol.pick_next_task(&mut cx, cpu))
        }
    }

    /// `context_switch` from `prev` to `next` on `cpu` (nothing if they are the same):
    /// `rq->curr`, the `sched_switch` event, the switch's cost and the cache re-warm the
    /// next task owes.
    fn context_switch(&mut self, cpu: CpuId, prev: Option<TaskId>, prev_state: PrevState, next: Option<TaskId>) -> Ns {
        self.hash.write_u64(0x5c4e_d000 + cpu as u64);
        self.hash.write_u64(next.map_or(u64::MAX, |n| n as u64));
        if next == prev {
            return Ns(0);
        }
        self.touch(cpu);
        self.energy_close(cpu);
        self.cpus[cpu].curr = next;
        self.views[cpu].curr = next;
        self.probe.event(&ProbeEvent::Switch { time: self.now, cpu, prev, prev_state, next });
        let mut cost = self.machine.costs.context_switch;
        if let Some(n) = next {
            self.note_first_run(n);
            if self.cost.caches_on {
                // The cache model replaces the constant re-warm (`Machine::charges_rewarm`).
                self.cost_switch_in(cpu, n);
            } else {
                cost += self.rewarm(cpu, n);
                if self.cost.numa_on {
                    self.cost_switch_in(cpu, n);
                }
            }
            if self.cost.mm_on {
                cost += self.mm_switch(cpu, n);
            }
            self.tasks[n].last_ran = Some(cpu as u32);
        }
        cost
    }

    /// `sched_setattr` admission of a new task created with a non-fair policy: a refusal
    /// ends the run with an error located at the template's `policy`.
    fn admit_new(&mut self, cpu: CpuId, t: TaskId, template: usize) -> bool {
        let policy = self.info[t].policy;
        if !policy.is_rt() && !policy.is_dl() {
            return true;
        }
        match hook!(self, cpu, |p, cx| p.admit(&mut cx, t, &policy)) {
            Ok(()) => true,
            Err(m) => {
                let at = self.wl.templates[template].policy_at;
                let field = format!("task[{template}].policy");
                let msg = format!("task `{}`: sched_setattr refused: {m}", self.info[t].name);
                self.fatal = Some(crate::RunError::Workload(self.wl.error_at(at, &field, msg)));
                false
            }
        }
    }

    /// `__sched_setscheduler` (`syscalls.c`, v6.12) for a task's `set_policy` op: admission,
    /// then the new normal policy; the effective one follows unless a PI boost holds it.
    fn setscheduler(&mut self, cpu: CpuId, task: TaskId, policy: TaskPolicy, at: usize) {
        if policy == self.tasks[task].normal_policy {
            return; // nothing changes, nothing is requeued
        }
        if let Err(m) = hook!(self, cpu, |p, cx| p.admit(&mut cx, task, &policy)) {
            let field = format!("task `{}` set_policy", self.info[task].name);
            let msg = format!("sched_setattr refused: {m}");
            self.fatal = Some(crate::RunError::Workload(self.wl.error_at(at, &field, msg)));
            return;
        }
        self.tasks[task].normal_policy = policy;
        self.sched_change_policy(cpu, task, policy);
    }

    /// The class change of `__sched_setscheduler` (`syscalls.c`, v6.12): sets `task`'s
    /// policy and lets the class requeue it (`policy_changed`). A PI boost does not come
    /// here: it reaches the class through `pi_setprio` (`futex_pi.rs`), and a class that
    /// holds a boost defers the new policy until the boost ends, as `rt_mutex_setprio`
    /// keeps `p->prio` while `__sched_setscheduler` changes `p->normal_prio`. Runs on
    /// `cpu` with the task's runqueue locked.
    fn sched_change_policy(&mut self, cpu: CpuId, task: TaskId, policy: TaskPolicy) {
        let old = self.info[task].policy;
        if old == policy {
            return;
        }
        self.info[task].policy = policy;
        hook!(self, cpu, |p, cx| p.policy_changed(&mut cx, task, old));
    }

    /// Cache re-warm penalty for running on `cpu` after last running elsewhere; charged as
    /// extra work of the task's next `run`.
    fn rewarm(&mut self, cpu: CpuId, t: TaskId) -> Ns {
        let Some(last) = self.tasks[t].last_ran.map(|c| c as usize) else { return Ns(0) };
        if last == cpu {
            return Ns(0);
        }
        let topo = &self.machine.topology;
        let c = &self.machine.costs;
        let pen = if topo.same_core(last, cpu) {
            Ns(0)
        } else if topo.shares_llc(last, cpu) {
            c.rewarm_same_llc
        } else if c.numa_scaled {
            Ns(c.rewarm_cross_llc.0 * u64::from(topo.distance(last, cpu)) / 10)
        } else {
            c.rewarm_cross_llc
        };
        self.tasks[t].rewarm += pen;
        Ns(0)
    }

    /// `cpumask_any_and_distribute`: spread affinity-forced moves over the allowed CPUs.
    pub(crate) fn distribute_cpu(&mut self, t: TaskId) -> CpuId {
        let aff = &self.info[t].affinity;
        let n = self.cpus.len();
        for i in 1..=n {
            let c = (self.distribute + i) % n;
            if aff.contains(c) {
                self.distribute = c;
                return c;
            }
        }
        aff.first().unwrap_or(0)
    }
}

/// `op_phase` of a pipe op whose task has waited on the pipe (`fs/pipe.c` sets
/// `wake_next_writer` / `wake_next_reader` after a wait).
const PIPE_WAITED: u8 = 2;

impl Kernel<'_> {
    /// `send`: `fs/pipe.c:anon_pipe_write` (v6.18) or `net/unix/af_unix.c:unix_stream_sendmsg`
    /// (v6.18), the buffer's rules in `pipes.rs`. A pipe written while empty wakes one reader
    /// (`was_empty`; readers wait exclusively, so `wake_up_interruptible_sync_poll` wakes
    /// one, with `WF_SYNC`), and a writer that had waited and leaves a slot free wakes the
    /// next writer (`wake_next_writer`). A socket's every skb calls `sk_data_ready`
    /// (`sock_def_readable`: every sleeping reader, non-exclusive waits, `WF_SYNC`). A writer
    /// that finds no room waits at the tail of the writers' queue.
    fn pipe_write(&mut self, cpu: CpuId, task: TaskId, pipe: usize) {
        let waited = self.tasks[task].op_phase == PIPE_WAITED;
        let tk = &self.tasks[task];
        let cur_cpu = matches!(tk.prog.ops.get(tk.pc), Some(schedlab_workload::Op::Send { current_cpu: true, .. }));
        let want = self.tasks[task].op_aux;
        let p = &mut self.objs.pipes[pipe];
        let (n, wake_readers, full) = match &mut p.buf {
            Buffer::Pipe(r) => {
                let w = r.write(want, !waited);
                (w.bytes, w.bytes > 0 && w.was_empty, r.is_full())
            }
            Buffer::Socket(s) => {
                let n = s.send(want);
                (n, n > 0, s.is_full())
            }
        };
        self.tasks[task].op_aux -= n;
        let socket = p.socket;
        let readers: Vec<TaskId> = match (wake_readers, socket) {
            (false, _) => Vec::new(),
            (true, false) => p.readers.pop_front().into_iter().collect(),
            (true, true) => p.readers.drain(..).collect(),
        };
        let pollers = if wake_readers { std::mem::take(&mut p.pollers) } else { Vec::new() };
        let next_writer = if waited && !full && !socket { p.writers.pop_front() } else { None };
        if self.tasks[task].op_aux == 0 {
            self.next_op(task);
        } else {
            self.tasks[task].op_phase = PIPE_WAITED;
            self.objs.pipes[pipe].writers.push_back(task);
            self.block(cpu, task, BlockedOn::PipeWrite(pipe as u32));
        }
        // A `send` with `current_cpu` wakes the reader onto this CPU (`WF_CURRENT_CPU`, as
        // `wake_up_poll_on_current_cpu` does for seccomp's synchronous notifications).
        let here = if cur_cpu { wf::CURRENT_CPU } else { 0 };
        for t in readers.into_iter().chain(next_writer) {
            self.wake_steps(cpu, t, wf::SYNC | here);
        }
        self.wake_pollers(cpu, pollers);
    }

    /// `recv`: `fs/pipe.c:anon_pipe_read` (v6.18) or `net/unix/af_unix.c:
    /// unix_stream_read_generic` (v6.18). A pipe read that frees a slot of a full ring wakes
    /// one writer (`wake_writer`; exclusive waits, `WF_SYNC`), and a reader that had waited
    /// and leaves data wakes the next reader (`wake_next_reader`). A socket read that frees
    /// an skb and leaves the sender writable (`unix_write_space`: at most a quarter of its
    /// send buffer in flight) wakes every waiting writer (`sock_wait_for_wmem` waits
    /// non-exclusively, `WF_SYNC`). A reader that finds nothing waits at the tail of the
    /// readers' queue.
    fn pipe_read(&mut self, cpu: CpuId, task: TaskId, pipe: usize) {
        let waited = self.tasks[task].op_phase == PIPE_WAITED;
        let want = self.tasks[task].op_aux;
        let p = &mut self.objs.pipes[pipe];
        let (n, wake_writers) = match &mut p.buf {
            Buffer::Pipe(r) => {
                let got = r.read(want);
                (got.bytes, got.wake_writer)
            }
            Buffer::Socket(s) => {
                let got = s.recv(want);
                (got.bytes, got.write_space)
            }
        };
        self.tasks[task].op_aux -= n;
        let writers: Vec<TaskId> = match (wake_writers, p.socket) {
            (false, _) => Vec::new(),
            (true, false) => p.writers.pop_front().into_iter().collect(),
            (true, true) => p.writers.drain(..).collect(),
        };
        let next_reader = if waited && !p.is_empty() && !p.socket { p.readers.pop_front() } else { None };
        if self.tasks[task].op_aux == 0 {
            self.next_op(task);
        } else {
            self.tasks[task].op_phase = PIPE_WAITED;
            self.objs.pipes[pipe].readers.push_back(task);
            self.block(cpu, task, BlockedOn::PipeRead(pipe as u32));
        }
        for t in writers.into_iter().chain(next_reader) {
            self.wake_steps(cpu, t, wf::SYNC);
        }
    }
}
