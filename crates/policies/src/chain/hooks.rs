//! [`SchedClass`] for the chain: each hook routed to the class it concerns.

use super::bw::Mode;
use super::{Chain, Class};
use schedlab_sched_api::{
    dequeue, enqueue, BalanceKind, CorePrio, Ctx, SchedClass, SelectKind, Stat, TaskGroups, TaskPolicy, Tunable, Unit,
};
use schedlab_sim::{CpuId, Ns, TaskId};

/// The rt and deadline classes' per-task statistics (`task_stats`).
const DL_RUNTIME: Stat = Stat::def("dl_runtime", Unit::Ns, "Deadline runtime left (dl_se->runtime)");
const DL_DEADLINE: Stat = Stat::def("dl_deadline", Unit::Ns, "Absolute deadline (dl_se->deadline)");
const RT_PRIO: Stat = Stat::def("rt_prio", Unit::None, "rt priority (sched_priority 1-99; higher is better)");

impl Chain {
    /// Queues `p` in the class of its policy on `cpu`.
    fn enqueue_class(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, flags: u32, head: bool) {
        let pol = self.eff(cx, p);
        let cls = self.cls(&pol);
        let delayed_requeue = flags & enqueue::DELAYED != 0 && self.queued_in[p] == Some(Class::Fair);
        self.queued_in[p] = Some(cls);
        // enqueue_task: uclamp_rq_inc before the class's enqueue, for the classes with
        // uclamp_enabled (fair, rt), so the class's cpufreq update sees the new clamps.
        if matches!(cls, Class::Fair | Class::Rt) {
            self.uclamp.inc(cpu, p, cx.task(p), cls == Class::Rt);
        }
        match cls {
            Class::Dl => {
                let fresh = flags & enqueue::INITIAL != 0 || self.dl.tasks[p].params.is_none();
                self.dl.enqueue(cx, cpu, p, &pol, fresh, flags & enqueue::WAKEUP != 0);
            }
            Class::Rt => {
                self.rt.enqueue(cpu, p, &pol, head);
                self.kick_cpufreq_rt(cx, cpu);
            }
            Class::Fair => {
                if !delayed_requeue {
                    self.fair_nr[cpu] += 1;
                    if self.fair_nr[cpu] == 1 && self.t.mode == Mode::FairServer {
                        self.server[cpu].start(cx.now, self.t.server_runtime, self.t.server_period);
                    }
                }
                self.fair_call(cx, |f, cx| f.enqueue_task(cx, cpu, p, flags));
            }
            Class::Ext => {
                if let Some(e) = self.ext.as_mut() {
                    e.enqueue(cx, cpu, p, flags);
                }
            }
        }
        self.server_sync(cx, cpu);
    }

    /// Takes `p` out of its class on `cpu`; `false` if the fair class delayed it.
    fn dequeue_class(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, flags: u32) -> bool {
        if self.curr[cpu].is_some_and(|(c, _)| c == p) {
            self.account(cx, cpu);
        }
        // dequeue_task: uclamp_rq_dec before the class's dequeue (v6.18: even one the fair
        // class then delays, which the requeue counts again).
        self.uclamp.dec(cpu, p);
        let done = match self.queued_in[p] {
            Some(Class::Dl) => {
                self.dl.dequeue(cpu, p);
                true
            }
            Some(Class::Rt) => {
                self.rt.dequeue(cpu, p);
                self.kick_cpufreq_rt(cx, cpu);
                true
            }
            Some(Class::Fair) => {
                let done = self.fair_call(cx, |f, cx| f.dequeue_task(cx, cpu, p, flags));
                if done && self.queued_in[p].is_some() {
                    self.fair_left(cx, cpu);
                }
                done
            }
            Some(Class::Ext) => {
                if let Some(e) = self.ext.as_mut() {
                    e.dequeue(cx, cpu, p, flags);
                }
                true
            }
            None => true,
        };
        if done {
            self.queued_in[p] = None;
        }
        self.server_sync(cx, cpu);
        done
    }

    /// `prev_balance` (`core.c`, v6.12): the `balance` of `prev`'s class and of each class
    /// below it, so a CPU leaving a deadline task runs `balance_dl` and `balance_rt`, one
    /// leaving an rt task `balance_rt` only, and one leaving a fair, ext or no task neither
    /// (an idle CPU gets rt and deadline work by their pushes, not by pulling).
    fn pull(&mut self, cx: &mut Ctx, cpu: CpuId, prev: Class) {
        if self.dl.busy(cpu) {
            return;
        }
        if prev == Class::Dl {
            self.dl.pull(cx, cpu, &self.curr);
        }
        for src in self.rt.pull(cx, cpu, &self.curr, self.t.rt_push_ipi) {
            // `tell_cpu_to_push`: each overloaded CPU pushes from the IPI passed along.
            self.push_kick[src] = true;
            cx.kick(src);
        }
    }

    /// After a pick: `set_next_task_rt`/`_dl` queue a push of what else waits here.
    fn push(&mut self, cx: &mut Ctx, cpu: CpuId) {
        let dl = &self.dl;
        let busy = |c: CpuId| dl.busy(c);
        match self.curr[cpu] {
            Some((_, Class::Rt)) => self.rt.push(cx, cpu, &self.curr, &busy),
            Some((_, Class::Dl)) => {
                self.dl.push(cx, cpu, &self.curr);
                let dl = &self.dl;
                self.rt.push(cx, cpu, &self.curr, &|c| dl.busy(c));
            }
            _ => {}
        }
    }

    /// `__pick_next_task`: deadline (the fair server among them, by deadline), rt unless
    /// throttled, fair.
    fn pick_class(&mut self, cx: &mut Ctx, cpu: CpuId) -> Option<(TaskId, Class)> {
        let dl = self.dl.pick(cpu);
        let server = self.server_active(cpu).then_some(self.server[cpu].period_end);
        let dl_first = match (dl, server) {
            (Some(p), Some(end)) => self.dl.tasks[p].deadline <= end,
            (Some(_), None) => true,
            _ => false,
        };
        if dl_first {
            self.fair_call(cx, |f, cx| f.put_prev_fair(cx, cpu));
            return dl.map(|p| (p, Class::Dl));
        }
        if server.is_some() {
            if let Some(p) = self.fair_call(cx, |f, cx| f.pick_next_task(cx, cpu)) {
                return Some((p, Class::Fair));
            }
        }
        if self.rt_runnable(cpu) {
            if let Some(p) = self.rt.pick(cx, cpu) {
                self.fair_call(cx, |f, cx| f.put_prev_fair(cx, cpu));
                return Some((p, Class::Rt));
            }
        }
        if dl.is_some() {
            self.fair_call(cx, |f, cx| f.put_prev_fair(cx, cpu));
            return dl.map(|p| (p, Class::Dl));
        }
        if let Some(p) = self.fair_call(cx, |f, cx| f.pick_next_task(cx, cpu)) {
            return Some((p, Class::Fair));
        }
        // `balance_scx` + `pick_task_scx`: ext runs only when no higher class has work.
        self.ext.as_mut().filter(|e| e.enabled()).and_then(|e| e.pick(cx, cpu)).map(|p| (p, Class::Ext))
    }
}

impl SchedClass for Chain {
    fn name(&self) -> &'static str {
        self.ext.as_ref().map_or_else(|| self.fair.name(), |e| e.name())
    }
    fn tunables(&self) -> Vec<Tunable> {
        let mut v = self.fair.tunables();
        v.extend(super::TUNABLES.list(&self.t));
        if let Some(e) = &self.ext {
            v.extend(e.tunables());
        }
        v
    }
    fn exit_info(&self) -> Option<String> {
        self.ext.as_ref().and_then(|e| e.exit_info())
    }
    fn set_task_groups(&mut self, groups: &TaskGroups) -> Result<(), String> {
        self.uclamp.set_groups(groups);
        self.fair.set_task_groups(groups)
    }
    /// The fair class rebuilds its sched domains. The rt and deadline push/pull here
    /// still search every CPU their tasks' affinity allows (Linux's are bounded by the
    /// root domain, `rd->span`, which a cpuset partition also cuts; `cpupri` and `cpudl`
    /// per root domain are not modelled), and sched_ext has no domains (`ext.c`
    /// balances through its own dispatch queues).
    fn partition_sched_domains(&mut self, cx: &mut Ctx, doms: &[schedlab_machine::CpuSet]) {
        self.fair.partition_sched_domains(cx, doms);
    }
    fn reserve_tasks(&mut self, n: usize) {
        self.fair.reserve_tasks(n);
        self.reserve_exact(n);
    }
    /// Every task has a fair entity (as every Linux task has a `sched_entity`), so the fair
    /// class can read any task's state; only fair-class tasks are queued in it.
    fn task_new(&mut self, cx: &mut Ctx, p: TaskId, parent: Option<TaskId>) {
        self.grow(p);
        self.uclamp.note_request(cx.task(p).uclamp);
        self.fair_call(cx, |f, cx| f.task_new(cx, p, parent));
        if let Some(e) = self.ext.as_mut() {
            e.task_new(cx, p);
        }
        self.ext_settle(cx);
    }
    fn task_dead(&mut self, cx: &mut Ctx, p: TaskId) {
        if let Some(e) = self.ext.as_mut() {
            e.task_dead(cx, p);
        }
        if self.dl.tasks[p].admitted_bw != 0 {
            self.dl.total_bw -= self.dl.tasks[p].admitted_bw;
            self.dl.tasks[p].admitted_bw = 0;
        }
        self.fair_call(cx, |f, cx| f.task_dead(cx, p));
    }
    fn admit(&mut self, cx: &mut Ctx, p: TaskId, new: &TaskPolicy) -> Result<(), String> {
        self.grow(p);
        let bw = match new {
            TaskPolicy::Deadline(d) => d.bw(),
            _ => 0,
        };
        let old = self.dl.tasks[p].admitted_bw;
        let total = self.dl.total_bw - old + bw;
        if let Some(cap) = self.t.dl_cap_per_cpu() {
            let limit = cap * cx.nr_cpus() as u64;
            if bw > old && total > limit {
                return Err(format!(
                    "deadline admission (deadline.c:sched_dl_overflow): total bandwidth {:.4} would exceed {:.4} ({} CPUs × {:.4}); EBUSY",
                    total as f64 / f64::from(1 << 20),
                    limit as f64 / f64::from(1 << 20),
                    cx.nr_cpus(),
                    cap as f64 / f64::from(1 << 20),
                ));
            }
        }
        self.dl.total_bw = total;
        self.dl.tasks[p].admitted_bw = bw;
        Ok(())
    }
    fn select_task_rq(&mut self, cx: &mut Ctx, p: TaskId, prev: CpuId, kind: SelectKind, wf: u32) -> CpuId {
        self.grow(p);
        let pol = self.eff(cx, p);
        let cpu = match self.cls(&pol) {
            Class::Dl => self.dl.select(cx, p, prev, &self.curr),
            Class::Rt => {
                let dl = &self.dl;
                self.rt.select(cx, p, &pol, prev, &self.curr, &|c| dl.busy(c))
            }
            Class::Fair => self.fair_call(cx, |f, cx| f.select_task_rq(cx, p, prev, kind, wf)),
            Class::Ext => self.ext.as_mut().map_or(prev, |e| e.select(cx, p, prev, kind, wf)),
        };
        self.ext_settle(cx);
        cpu
    }
    fn migrate_task_rq(&mut self, cx: &mut Ctx, p: TaskId, new_cpu: CpuId) {
        if self.cls(&self.eff(cx, p)) == Class::Fair {
            self.fair_call(cx, |f, cx| f.migrate_task_rq(cx, p, new_cpu));
        }
    }
    fn enqueue_task(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, flags: u32) {
        self.grow(p);
        self.enqueue_class(cx, cpu, p, flags, false);
        self.ext_settle(cx);
    }
    fn dequeue_task(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, flags: u32) -> bool {
        let done = self.dequeue_class(cx, cpu, p, flags);
        self.ext_settle(cx);
        done
    }
    /// `core.c:wakeup_preempt`: a higher class preempts at once; the same class decides;
    /// a lower one waits (and an rt or deadline task that cannot run here is pushed).
    fn wakeup_preempt(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, wf: u32) {
        let Some((c, cc)) = self.curr[cpu] else {
            cx.resched_curr(cpu);
            return;
        };
        let pc = self.cls(&self.eff(cx, p));
        let blocked = pc == Class::Rt && !self.rt_runnable(cpu);
        if self.unpicked[cpu] || (pc < cc && !blocked) {
            cx.resched_curr(cpu);
            return;
        }
        match (pc, cc) {
            (Class::Dl, Class::Dl) if self.dl.preempts(cpu, p, &self.curr) => cx.resched_curr(cpu),
            (Class::Rt, Class::Rt) => {
                let dl = &self.dl;
                self.rt.wakeup_preempt(cx, cpu, p, c, &|x| dl.busy(x))
            }
            (Class::Fair, Class::Fair) => self.fair_call(cx, |f, cx| f.wakeup_preempt(cx, cpu, p, wf)),
            _ => {}
        }
        if matches!(pc, Class::Rt | Class::Dl) {
            // `task_woken_rt` / `task_woken_dl`: push what cannot run here.
            self.push(cx, cpu);
        }
    }
    fn put_prev_task(&mut self, cx: &mut Ctx, cpu: CpuId, prev: TaskId) {
        self.account(cx, cpu);
        let cls = self.curr[cpu].map(|(_, c)| c);
        if cls == Some(Class::Fair) && !self.unpicked[cpu] {
            self.fair_call(cx, |f, cx| f.put_prev_task(cx, cpu, prev));
        }
        if cls == Some(Class::Ext) {
            if let Some(e) = self.ext.as_mut() {
                e.put_prev(cx, cpu, prev);
            }
        }
        self.prev_class[cpu] = cls;
        self.curr[cpu] = None;
        self.unpicked[cpu] = false;
    }
    fn pick_next_task(&mut self, cx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        if self.curr[cpu].is_none() {
            self.account(cx, cpu); // idle time, for the fair server
        }
        if let Some(prev @ (Class::Rt | Class::Dl)) = self.prev_class[cpu].take() {
            self.pull(cx, cpu, prev);
        }
        let mut next = self.pick_class(cx, cpu);
        if let Some(e) = self.ext.as_mut() {
            if !matches!(next, Some((_, Class::Ext))) {
                e.not_picked(cx, cpu, next.is_some());
            }
            e.update_idle(cpu, next.is_none());
        }
        self.curr[cpu] = next;
        if self.ext_settle(cx) && next.is_none() {
            // The ext class was ejected while picking: its tasks are fair's now.
            next = self.pick_class(cx, cpu);
            self.curr[cpu] = next;
        }
        self.exec_start[cpu] = cx.now;
        if next.is_some() && (self.rt.nr(cpu) > 1 || self.dl.nr(cpu) > 1) {
            // `rt_queue_push_tasks` / `deadline_queue_push_tasks`: a balance callback, run
            // after the switch (the task put back may be the one to push), here from the
            // policy timer at once.
            self.push_pending[cpu] = true;
            cx.timer(cpu, cx.now);
        }
        next.map(|(p, _)| p)
    }
    fn task_tick(&mut self, cx: &mut Ctx, cpu: CpuId, curr: TaskId) {
        self.account(cx, cpu);
        match self.curr[cpu] {
            Some((_, Class::Rt)) => {
                let rr = matches!(self.eff(cx, curr), TaskPolicy::Rr { .. });
                self.rt.tick(cx, cpu, curr, rr)
            }
            Some((_, Class::Fair)) if !self.unpicked[cpu] => self.fair_call(cx, |f, cx| f.task_tick(cx, cpu, curr)),
            Some((_, Class::Ext)) => {
                if let Some(e) = self.ext.as_mut() {
                    e.tick(cx, cpu, curr);
                }
            }
            _ => {}
        }
        self.ext_settle(cx);
    }
    fn yield_task(&mut self, cx: &mut Ctx, cpu: CpuId, curr: TaskId) {
        match self.queued_in[curr] {
            Some(Class::Rt) => self.rt.requeue_tail(cpu, curr),
            Some(Class::Dl) => {
                self.account(cx, cpu);
                self.dl.yield_task(cx, cpu, curr);
            }
            Some(Class::Fair) if !self.unpicked[cpu] => self.fair_call(cx, |f, cx| f.yield_task(cx, cpu, curr)),
            Some(Class::Ext) => {
                if let Some(e) = self.ext.as_mut() {
                    e.yield_task(cx, cpu, curr);
                }
            }
            _ => {}
        }
    }
    fn reweight_task(&mut self, cx: &mut Ctx, p: TaskId) {
        self.fair_call(cx, |f, cx| f.reweight_task(cx, p));
        if self.cls(&self.eff(cx, p)) == Class::Ext {
            if let Some(e) = self.ext.as_mut() {
                e.set_weight(cx, p);
            }
            self.ext_settle(cx);
        }
    }
    fn slice_changed(&mut self, cx: &mut Ctx, p: TaskId) {
        self.fair_call(cx, |f, cx| f.slice_changed(cx, p));
    }
    fn policy_changed(&mut self, cx: &mut Ctx, p: TaskId, old: TaskPolicy) {
        self.grow(p);
        if self.boost[p].is_none() {
            self.setscheduler(cx, p, old);
        } // else a PI boost holds the effective policy; the new one applies when it ends
    }
    /// `rt_mutex_setprio` (`core.c`, v6.12): a PI boost to kernel prio `prio` < 100 runs
    /// the task in the rt class at `rt_priority` 99 − prio; a deadline donor's boost (−1)
    /// runs it in the deadline class with the donor's reservation (`p->dl.pi_se =
    /// pi_task->dl.pi_se`), replenished instead of throttled while boosted; a boost to a
    /// normal prio leaves fair tasks as they are, as upstream; `None` ends the boost.
    fn pi_setprio(&mut self, cx: &mut Ctx, p: TaskId, prio: Option<i32>, donor: Option<TaskId>) {
        self.grow(p);
        let old = self.eff(cx, p);
        self.boost[p] = match prio {
            // Never lower an rt or deadline task below its own priority.
            Some(k) if k < 100 && cx.task(p).policy.kernel_prio(0) > k => Some(self.pi_policy(cx, k, donor)),
            _ => None,
        };
        self.dl.tasks[p].boosted = matches!(self.boost[p], Some(TaskPolicy::Deadline(_)));
        if self.eff(cx, p) != old {
            self.setscheduler(cx, p, old);
        }
    }
    fn vip_changed(&mut self, cx: &mut Ctx, p: TaskId, vip: bool) {
        self.fair_call(cx, |f, cx| f.vip_changed(cx, p, vip));
    }
    /// A direct switch to `p`: only a fair-class task, by the fair class, and only if no
    /// rt or deadline task is queued here (it would have to run first).
    fn set_next_task(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId) -> bool {
        if self.queued_in.get(p).copied().flatten() != Some(Class::Fair) || self.rtdl_nr(cpu) > 0 {
            return false;
        }
        if self.curr[cpu].is_none() {
            self.account(cx, cpu);
        }
        self.prev_class[cpu] = None;
        if !self.fair_call(cx, |f, cx| f.set_next_task(cx, cpu, p)) {
            return false;
        }
        self.curr[cpu] = Some((p, Class::Fair));
        self.exec_start[cpu] = cx.now;
        true
    }
    /// Core scheduling covers the deadline, rt and fair classes; a chain with a sched_ext
    /// scheduler attached takes no part (`scx_prio_less` asks the BPF scheduler).
    fn core_sched(&self) -> bool {
        self.ext.is_none()
    }
    fn core_candidates(&mut self, cx: &mut Ctx, cpu: CpuId, out: &mut Vec<(TaskId, CorePrio)>) {
        self.core_candidates_chain(cx, cpu, out);
    }
    fn core_set_next(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId) -> bool {
        self.core_set_next_chain(cx, cpu, p)
    }
    fn core_force_idle(&mut self, cx: &mut Ctx, cpu: CpuId) {
        self.core_force_idle_chain(cx, cpu);
    }
    fn core_fi_update(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, in_fi: bool, fi_seq: u64) {
        // `task_vruntime_update` acts on fair tasks only.
        if self.queued_in.get(p).copied().flatten() == Some(Class::Fair) {
            self.fair_call(cx, |f, cx| f.core_fi_update(cx, cpu, p, in_fi, fi_seq));
        }
    }
    fn task_tick_core(&mut self, cx: &mut Ctx, cpu: CpuId, curr: TaskId) {
        if matches!(self.curr[cpu], Some((_, Class::Fair))) && !self.unpicked[cpu] {
            self.fair_call(cx, |f, cx| f.task_tick_core(cx, cpu, curr));
        }
    }
    fn timer(&mut self, cx: &mut Ctx, cpu: CpuId) {
        self.timer_fired(cx, cpu);
        // The fair class's own timers (CFS bandwidth's period and slack timers).
        self.fair_call(cx, |f, cx| f.timer(cx, cpu));
        if let Some(e) = self.ext.as_mut() {
            e.timer(cx, cpu);
        }
        self.ext_settle(cx);
    }
    fn balance(&mut self, cx: &mut Ctx, cpu: CpuId, kind: BalanceKind) {
        match kind {
            // `prev_balance` already ran, before the pick (`pick_next_task` above).
            BalanceKind::NewIdle => {}
            BalanceKind::NohzIdle if std::mem::take(&mut self.push_kick[cpu]) => {
                let dl = &self.dl;
                self.rt.push(cx, cpu, &self.curr, &|c| dl.busy(c));
                if !std::mem::take(&mut self.fair_kick[cpu]) {
                    return;
                }
            }
            BalanceKind::NohzIdle => self.fair_kick[cpu] = false,
            BalanceKind::Tick | BalanceKind::IdleWake => {}
        }
        self.fair_call(cx, |f, cx| f.balance(cx, cpu, kind));
    }
    fn queued(&self, cpu: CpuId, out: &mut Vec<TaskId>) {
        self.dl.queued(cpu, out);
        self.rt.queued(cpu, out);
        self.fair.queued(cpu, out);
        if let Some(e) = &self.ext {
            e.queued(cpu, out);
        }
    }
    fn why(
        &self,
        cx: &Ctx,
        cpu: CpuId,
        first: TaskId,
        second: TaskId,
        at: schedlab_sched_api::Moment,
    ) -> schedlab_sched_api::Why {
        self.why_chain(cx, cpu, first, second, at)
    }

    fn task_stats(&self, p: TaskId) -> Vec<Stat> {
        match self.queued_in.get(p).copied().flatten() {
            Some(Class::Dl) => {
                let t = &self.dl.tasks[p];
                vec![DL_RUNTIME.at(t.runtime), DL_DEADLINE.at(t.deadline.0 as i64)]
            }
            Some(Class::Rt) => vec![RT_PRIO.at(self.rt.prio_of(p) as i64)],
            Some(Class::Ext) => self.ext.as_ref().map_or_else(Vec::new, |e| e.task_stats(p)),
            _ => self.fair.task_stats(p),
        }
    }
    fn check_invariants(&self, cx: &Ctx) -> Result<(), String> {
        let all: Vec<CpuId> = (0..cx.nr_cpus()).collect();
        self.check_chain(&all, true)?;
        self.fair.check_invariants(cx)
    }
    fn check_cpus(&self, cx: &Ctx, cpus: &[CpuId]) -> Result<(), String> {
        self.check_chain(cpus, false)?;
        self.fair.check_cpus(cx, cpus)
    }
    fn tick_period(&self) -> Option<Ns> {
        self.fair.tick_period()
    }
    fn idle_tick(&self) -> bool {
        self.fair.idle_tick()
    }
    fn wake_list(&self) -> bool {
        self.fair.wake_list()
    }
    fn group_stats(&self) -> Vec<schedlab_sched_api::GroupStat> {
        self.fair.group_stats()
    }
    fn counters(&self) -> Vec<(String, u64)> {
        let mut v = self.fair.counters();
        let act: u64 = self.server.iter().map(|s| s.activations).sum();
        v.extend([
            ("rt_pushes".to_string(), self.rt.pushes),
            ("rt_pulls".to_string(), self.rt.pulls),
            ("rt_throttled".to_string(), self.rt_throttles),
            ("dl_pushes".to_string(), self.dl.pushes),
            ("dl_pulls".to_string(), self.dl.pulls),
            ("dl_throttled".to_string(), self.dl.throttles),
            ("dl_deadline_misses".to_string(), self.dl.misses),
            ("fair_server_activations".to_string(), act),
        ]);
        if let Some(e) = &self.ext {
            v.extend(e.counters());
        }
        v
    }
}

impl Chain {
    /// The chain's own checks on `cpus`: each class's structure, each running task
    /// queued in the class it runs in, and the fair counts. `full`: also the rt lists the
    /// bitmap marks empty (the periodic full check).
    fn check_chain(&self, cpus: &[CpuId], full: bool) -> Result<(), String> {
        for &c in cpus {
            self.rt.check(c, full)?;
            self.dl.check(c)?;
            if let Some((p, cls)) = self.curr[c] {
                if self.queued_in[p].is_some_and(|q| q != cls) && !self.unpicked[c] {
                    return Err(format!(
                        "chain CPU {c}: task {p} runs as {cls:?} but is queued as {:?}",
                        self.queued_in[p]
                    ));
                }
            }
            if let Some(e) = &self.ext {
                let curr = self.curr[c].and_then(|(p, k)| (k == Class::Ext).then_some(p));
                e.check(c, curr)?;
            }
            let fair = self.fair.nr_queued_tasks(c);
            if fair != self.fair_nr[c] {
                return Err(format!("chain CPU {c}: {fair} fair tasks queued, {} counted", self.fair_nr[c]));
            }
        }
        Ok(())
    }

    /// The policy's timer on `cpu`: deadline replenishments, the rt period, the fair
    /// server; then the next expiry of each is requested again.
    fn timer_fired(&mut self, cx: &mut Ctx, cpu: CpuId) {
        self.account(cx, cpu);
        if std::mem::take(&mut self.push_pending[cpu]) {
            self.push(cx, cpu);
        }
        if let Some(next) = self.dl.timer(cx, cpu, &self.curr) {
            cx.timer(cpu, next);
        }
        if let Some(at) = self.throttle[cpu].timer {
            if at <= cx.now {
                self.throttle[cpu].timer = None;
                let runtime = self.t.rt_runtime_us.max(0) as u64 * 1000;
                if self.throttle[cpu].period(runtime) && self.rt.nr(cpu) > 0 {
                    cx.resched_curr(cpu);
                }
                if self.throttle[cpu].rt_time > 0 || self.rt.nr(cpu) > 0 {
                    self.arm_rt_period(cx, cpu);
                }
            } else {
                cx.timer(cpu, at);
            }
        }
        if self.t.mode == Mode::FairServer {
            let (q, p) = (self.t.server_runtime, self.t.server_period);
            if self.server[cpu].fire(cx.now, q, p) {
                cx.resched_curr(cpu);
            }
            self.arm(cx, cpu);
        }
        if cx.cpus[cpu].curr.is_none() && self.curr[cpu].is_none() {
            // An idle CPU with work made runnable by the timer.
            if self.rtdl_nr(cpu) > 0 || self.fair_nr[cpu] > 0 {
                cx.resched_curr(cpu);
            }
        }
    }

    /// `__sched_setscheduler` / `rt_mutex_setprio` after the kernel changed `p`'s
    /// effective policy from `old`: requeue it in its new class (at the head of its rt
    /// list if its priority was lowered), settle the fair class if it leaves it while
    /// running, and reschedule its CPU.
    /// The policy a PI boost to kernel prio `k` (< 100) runs the owner at: the deadline
    /// donor's own reservation (its effective policy, so a boost passed along a chain
    /// carries the first donor's), else FIFO at `rt_priority` 99 − k.
    fn pi_policy(&self, cx: &Ctx, k: i32, donor: Option<TaskId>) -> TaskPolicy {
        match donor.map(|d| self.eff(cx, d)) {
            Some(dl @ TaskPolicy::Deadline(_)) if k < 0 => dl,
            _ => TaskPolicy::Fifo { prio: (99 - k).clamp(1, 99) as u8 },
        }
    }

    fn setscheduler(&mut self, cx: &mut Ctx, p: TaskId, old: TaskPolicy) {
        self.grow(p);
        let new = self.eff(cx, p);
        let cpu = cx.task(p).cpu;
        let (oc, nc) = (self.cls(&old), self.cls(&new));
        if oc == Class::Fair && nc == Class::Fair {
            self.fair_call(cx, |f, cx| f.policy_changed(cx, p, old));
            return;
        }
        if nc == Class::Dl {
            self.dl.tasks[p].params = None; // a fresh instance with the new parameters
        }
        let running = self.curr[cpu].is_some_and(|(c, _)| c == p);
        if self.queued_in[p].is_some() {
            if running {
                self.account(cx, cpu);
            }
            let was = self.queued_in[p];
            let done = self.dequeue_class(cx, cpu, p, dequeue::SPECIAL);
            debug_assert!(done, "a non-sleep dequeue is never delayed");
            if running && was == Some(Class::Fair) && !self.unpicked[cpu] {
                self.fair_call(cx, |f, cx| f.put_prev_task(cx, cpu, p));
                self.fair_call(cx, |f, cx| f.put_prev_fair(cx, cpu));
            }
            let lowered = new.kernel_prio(0) > old.kernel_prio(0);
            self.enqueue_class(cx, cpu, p, 0, lowered && nc == Class::Rt);
        }
        if running {
            self.curr[cpu] = Some((p, nc));
            self.unpicked[cpu] = nc == Class::Fair;
            if nc == Class::Ext {
                if let Some(e) = self.ext.as_mut() {
                    e.set_running(cx, cpu, p);
                }
            }
        }
        cx.resched_curr(cpu);
    }

    /// Acts on an error the ext class raised during the hook (`scx_ops_error` →
    /// `scx_ops_disable_workfn`): the class is disabled and every task it had queued moves
    /// to fair where it is, a running one keeps running until the reschedule. `true` if
    /// the class was ejected now.
    ///
    /// Inlined into every hook for its first test (no sched_ext class attached, the common
    /// case); the ejection itself is out of line.
    #[inline]
    pub(crate) fn ext_settle(&mut self, cx: &mut Ctx) -> bool {
        let ejected = self.ext.as_mut().is_some_and(|e| e.take_error());
        if ejected {
            self.ext_eject(cx);
        }
        ejected
    }

    #[cold]
    #[inline(never)]
    fn ext_eject(&mut self, cx: &mut Ctx) {
        let e = self.ext.as_mut().expect("ejecting an attached class");
        for (p, cpu, running) in e.disable() {
            self.queued_in[p] = None;
            self.enqueue_class(cx, cpu, p, 0, false);
            if running {
                self.curr[cpu] = Some((p, Class::Fair));
                self.unpicked[cpu] = true;
            }
            cx.resched_curr(cpu);
        }
        for c in 0..self.curr.len() {
            if let Some((p, Class::Ext)) = self.curr[c] {
                // Running, but no longer queued (it is going to sleep): idle's until the switch.
                let _ = p;
                self.curr[c] = None;
            }
        }
    }
}
