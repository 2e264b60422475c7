//! Futexes: the hash bucket's waiter plist, `FUTEX_WAIT`/`WAKE`/`WAKE_OP`/`CMP_REQUEUE` on
//! `[[futex]]` words (`kernel/futex/{core,waitwake,requeue}.c`, v6.x), PI futexes (`pi.c`,
//! in `futex_pi.rs` with VIP inheritance), and three mechanisms upstream lacks:
//! `futex_swap` (Oskolkov's 2020 FUTEX_SWAP proposal), wake on the current CPU for futexes
//! (`WF_CURRENT_CPU` exists since v6.6, futexes do not use it), and the direct thread switch
//! (openEuler's "direct thread switch", 2022). `docs/futex.md` documents all of them.

use crate::objects::FutexQ;
use crate::vocab::{Action, FAction, FutexKey, Step};
use crate::{BlockedOn, Kernel, TState};
use schedlab_machine::{KernelPath, LockSite};
use schedlab_sched_api::wf;
use schedlab_sim::{CpuId, Ns, TaskId};
use schedlab_workload::FutexOp;

/// `MAX_RT_PRIO`: plist priorities of waiters are `min(normal_prio, MAX_RT_PRIO)`.
pub(crate) const MAX_RT_PRIO: i32 = 100;
/// Plist rank of a VIP waiter: after every real-time waiter, before normal ones.
pub(crate) const RANK_VIP: i32 = MAX_RT_PRIO;
/// Plist rank of a normal waiter.
pub(crate) const RANK_NORMAL: i32 = MAX_RT_PRIO + 1;

/// `FUTEX_TID_MASK`, `FUTEX_WAITERS` (`include/uapi/linux/futex.h`).
pub(crate) const TID_MASK: u32 = 0x3fff_ffff;
pub(crate) const WAITERS: u32 = 0x8000_0000;

/// The TID a PI futex word stores for task `t` (never 0: 0 means unlocked).
pub(crate) fn tid(t: TaskId) -> u32 {
    ((t as u32) % TID_MASK) + 1
}

impl Kernel<'_> {
    /// `core.c:normal_prio` (v6.12): task `t`'s priority from the policy it set, kernel
    /// scale, lower is better: −1 for `SCHED_DEADLINE` (ahead of every real-time task),
    /// 0..=99 = 99 − `rt_priority` for FIFO/RR, 100..=139 = 120 + nice otherwise.
    /// `TaskInfo::policy` is the set policy: a PI boost lives in `FutexTask::pi_boost`
    /// and the class, never in it.
    pub(crate) fn normal_prio(&self, t: TaskId) -> i32 {
        self.info[t].policy.kernel_prio(self.info[t].nice)
    }

    /// `p->prio`: the normal priority, or a better one a PI boost gives.
    pub(crate) fn eff_prio(&self, t: TaskId) -> i32 {
        let own = self.normal_prio(t);
        self.objs.ft_ref(t).and_then(|f| f.pi_boost).map_or(own, |b| b.min(own))
    }

    /// Whether `t` gets VIP treatment now (its own `vip`, or inherited), with VIP on.
    pub(crate) fn is_vip(&self, t: TaskId) -> bool {
        self.cfg.futex.vip
            && (self.wl.templates[self.tasks[t].template as usize].vip
                || self.objs.ft_ref(t).is_some_and(|f| f.vip_inherited))
    }

    /// The plist rank `t` queues at on `key` now: real-time by priority, then VIP, then
    /// normal — unless the starvation guard holds the VIP back (`docs/futex.md`).
    fn waiter_rank(&mut self, t: TaskId, key: FutexKey) -> i32 {
        let p = self.normal_prio(t).min(MAX_RT_PRIO);
        if p < MAX_RT_PRIO {
            return p;
        }
        if !self.is_vip(t) {
            return RANK_NORMAL;
        }
        let b = self.objs.bucket(key);
        let first_normal =
            self.objs.buckets.get(&b).and_then(|l| l.iter().find(|q| q.key == key && q.rank == RANK_NORMAL));
        match first_normal {
            Some(q) if self.now - q.since > self.cfg.futex.vip_starvation => {
                self.objs.stats.vip_guarded += 1;
                RANK_NORMAL
            }
            Some(_) => {
                self.objs.stats.vip_jumps += 1;
                RANK_VIP
            }
            None => RANK_VIP,
        }
    }

    /// `__futex_queue`: `plist_add` after every waiter of equal or better rank.
    pub(crate) fn futex_enqueue(&mut self, task: TaskId, key: FutexKey, pi: bool) {
        let rank = self.waiter_rank(task, key);
        self.objs.seq += 1;
        let q = FutexQ { key, task, rank, seq: self.objs.seq, since: self.now, pi };
        let list = self.objs.buckets.entry(self.objs.bucket(key)).or_default();
        let at = list.partition_point(|x| x.rank <= rank);
        list.insert(at, q);
        self.objs.ft(task).waiting = Some(key);
    }

    /// Takes `task`'s entry off its bucket (woken, requeued or re-ranked).
    pub(crate) fn futex_unqueue(&mut self, task: TaskId) -> Option<FutexQ> {
        let key = self.objs.ft(task).waiting.take()?;
        let b = self.objs.bucket(key);
        let list = self.objs.buckets.get_mut(&b)?;
        let i = list.iter().position(|q| q.task == task)?;
        let q = list.remove(i);
        if list.is_empty() {
            self.objs.buckets.remove(&b);
        }
        Some(q)
    }

    /// Re-ranks a queued waiter whose priority or VIP state changed (`rt_mutex_adjust_prio_chain`
    /// requeues the waiter; the plist is re-sorted the same way). Keeps its queueing time.
    pub(crate) fn futex_rerank(&mut self, task: TaskId) {
        let Some(q) = self.futex_unqueue(task) else { return };
        let rank = self.waiter_rank(task, q.key);
        let list = self.objs.buckets.entry(self.objs.bucket(q.key)).or_default();
        let at = list.partition_point(|x| (x.rank, x.seq) <= (rank, q.seq));
        list.insert(at, FutexQ { rank, ..q });
        self.objs.ft(task).waiting = Some(q.key);
    }

    /// `futex_wait_setup` + `futex_wait_queue` with the bucket locked: queue and sleep if
    /// the word still holds `expected`, else return at once (`-EAGAIN`).
    pub(crate) fn futex_wait_locked(&mut self, cpu: CpuId, task: TaskId, key: FutexKey, expected: u64) {
        if self.objs.value(key) == expected {
            self.futex_enqueue(task, key, false);
            self.vip_waits_on(key, task);
            self.block(cpu, task, BlockedOn::Futex);
        }
    }

    /// `futex_wake_mark` for up to `n` non-PI waiters of `key`, in plist order.
    fn futex_collect(&mut self, key: FutexKey, n: u64) -> Vec<TaskId> {
        let b = self.objs.bucket(key);
        let mut woken = Vec::new();
        if let Some(list) = self.objs.buckets.get_mut(&b) {
            let mut i = 0;
            while i < list.len() && (woken.len() as u64) < n {
                if list[i].key == key && !list[i].pi {
                    let q = list.remove(i);
                    if self.wl.templates[self.tasks[q.task].template as usize].vip {
                        self.objs.stats.vip_waited((self.now - q.since).0);
                    }
                    woken.push(q.task);
                } else {
                    i += 1;
                }
            }
            if list.is_empty() {
                self.objs.buckets.remove(&b);
            }
        }
        for &t in &woken {
            self.objs.ft(t).waiting = None;
        }
        woken
    }

    /// `wake_up_q`: the wakeups run after the bucket lock is dropped, in collection order.
    fn wake_all(&mut self, cpu: CpuId, woken: Vec<TaskId>, wake_flags: u32) {
        for t in woken.into_iter().rev() {
            self.wake_steps(cpu, t, wake_flags);
        }
    }

    /// `futex_wake` with the bucket locked.
    pub(crate) fn futex_wake_locked(&mut self, cpu: CpuId, key: FutexKey, n: u64, wake_flags: u32) {
        let woken = self.futex_collect(key, n);
        self.wake_all(cpu, woken, wake_flags);
    }

    /// Executes a futex action on `cpu`; returns extra lock hold time.
    pub(crate) fn futex_act(&mut self, cpu: CpuId, a: FAction) -> Ns {
        match a {
            FAction::Wait { task, word, expected } => {
                self.futex_wait_locked(cpu, task, FutexKey::Word(word), u64::from(expected))
            }
            FAction::Wake { key, n, wf } => self.futex_wake_locked(cpu, key, n, wf),
            FAction::Swap { task, wait, expected, wake, wf, direct } => {
                self.futex_swap_locked(cpu, task, wait, expected, wake, wf, direct)
            }
            FAction::WakeOp { word, count, word2, count2, op, oparg, cmp, cmparg } => {
                // `futex_wake_op`: the atomic op on word2 first, then both wakes.
                let old = self.objs.words[word2];
                self.objs.words[word2] = op.apply(old, oparg);
                let mut woken = self.futex_collect(FutexKey::Word(word), u64::from(count));
                if cmp.holds(old, cmparg) {
                    woken.extend(self.futex_collect(FutexKey::Word(word2), u64::from(count2)));
                }
                self.wake_all(cpu, woken, 0);
            }
            FAction::CmpRequeue { word, to, wake, requeue, expected } => {
                self.futex_requeue_locked(cpu, word, to, wake, requeue, expected)
            }
            FAction::LockPi { task, word } => self.futex_lock_pi(cpu, task, word),
            FAction::UnlockPi { task, word } => self.futex_unlock_pi(cpu, task, word),
            FAction::DirectSwitch { prev, next, wf } => return self.direct_switch(cpu, prev, next, wf),
        }
        Ns(0)
    }

    /// `futex_requeue` (CMP variant): if `*word == expected`, wake `wake` waiters of `word`
    /// and move up to `requeue` more to `to`, where they wait on without waking.
    fn futex_requeue_locked(&mut self, cpu: CpuId, word: usize, to: usize, wake: u32, requeue: u32, expected: u32) {
        if self.objs.words[word] != expected {
            return; // -EAGAIN
        }
        let (from_key, to_key) = (FutexKey::Word(word), FutexKey::Word(to));
        let woken = self.futex_collect(from_key, u64::from(wake));
        let moved = self.futex_collect(from_key, u64::from(requeue));
        for &t in &moved {
            // `requeue_futex`: the same place in line (rank, then original order).
            self.objs.seq += 1;
            let rank = self.waiter_rank(t, to_key);
            let list = self.objs.buckets.entry(self.objs.bucket(to_key)).or_default();
            let at = list.partition_point(|x| x.rank <= rank);
            list.insert(at, FutexQ { key: to_key, task: t, rank, seq: self.objs.seq, since: self.now, pi: false });
            self.objs.ft(t).waiting = Some(to_key);
        }
        self.objs.stats.requeued += moved.len() as u64;
        self.wake_all(cpu, woken, 0);
    }

    /// `futex_swap` with both buckets locked: take at most one waiter of `wake`; then the
    /// `FUTEX_WAIT` on `wait`; the wakee is woken just before this task sleeps (or at once
    /// if the value check fails), on this CPU with `WF_CURRENT_CPU`, or by a direct switch.
    #[allow(clippy::too_many_arguments)]
    fn futex_swap_locked(
        &mut self,
        cpu: CpuId,
        task: TaskId,
        wait: usize,
        expected: u32,
        wake: usize,
        wake_flags: u32,
        direct: bool,
    ) {
        self.objs.stats.swaps += 1;
        let next = self.futex_collect(FutexKey::Word(wake), 1).pop();
        let key = FutexKey::Word(wait);
        if self.objs.words[wait] != expected {
            self.wake_all(cpu, next.into_iter().collect(), wake_flags);
            return;
        }
        self.futex_enqueue(task, key, false);
        self.vip_waits_on(key, task);
        self.tasks[task].state = TState::Sleeping;
        self.tasks[task].blocked_on = BlockedOn::Futex;
        self.record_sleep(task, &BlockedOn::Futex);
        match next {
            Some(n) if direct => {
                let a = Action::Futex(Box::new(FAction::DirectSwitch { prev: task, next: n, wf: wake_flags }));
                let s = self.locked1(cpu, LockSite::Schedule, self.machine.costs.schedule, a);
                self.push_steps(cpu, [s]);
            }
            _ => {
                let s = self.locked1(
                    cpu,
                    LockSite::Schedule,
                    self.machine.costs.schedule,
                    Action::Schedule { newidle: true },
                );
                self.push_steps(cpu, [s]);
                self.wake_all(cpu, next.into_iter().collect(), wake_flags);
            }
        }
    }

    /// The direct thread switch, with `cpu`'s runqueue locked: `next` is activated here
    /// without `select_task_rq` or `wakeup_preempt`, and `__schedule` switches to it
    /// without `pick_next_task` (`SchedClass::set_next_task`; `docs/futex.md`). Falls back
    /// to a plain wakeup and schedule when the switch is no longer possible.
    fn direct_switch(&mut self, cpu: CpuId, prev: TaskId, next: TaskId, wake_flags: u32) -> Ns {
        let nt = &self.tasks[next];
        // A task the balancer detached and has not attached yet (`TASK_ON_RQ_MIGRATING`, e.g.
        // a delayed-dequeue sleeper being moved) is not off its runqueue for good: the
        // ordinary wakeup waits for the move, as `task_rq_lock` does.
        let can_take = nt.state == TState::Sleeping
            && !nt.waking
            && !nt.on_rq
            && !nt.in_transit
            && self.info[next].affinity.contains(cpu);
        let prev_sleeps = self.tasks[prev].state == TState::Sleeping && self.cpus[cpu].curr == Some(prev);
        if !can_take || !prev_sleeps {
            self.objs.stats.direct_fallbacks += 1;
            if prev_sleeps {
                let s = self.locked1(
                    cpu,
                    LockSite::Schedule,
                    self.machine.costs.schedule,
                    Action::Schedule { newidle: true },
                );
                self.push_steps(cpu, [s]);
            }
            self.wake_steps(cpu, next, wake_flags | wf::CURRENT_CPU);
            return Ns(0);
        }
        self.tasks[next].waking = true;
        self.probe.event(&schedlab_probe::ProbeEvent::Waking {
            time: self.now,
            task: next,
            waker_cpu: cpu,
            irq: false,
        });
        self.tasks[next].wake_migrated = false;
        self.set_task_cpu(cpu, next, cpu);
        let mut flags = schedlab_sched_api::enqueue::WAKEUP;
        if self.tasks[next].wake_migrated {
            flags |= schedlab_sched_api::enqueue::MIGRATED;
        }
        self.enqueue(cpu, cpu, next, flags);
        let tk = &mut self.tasks[next];
        tk.state = TState::Running;
        tk.waking = false;
        tk.blocked_on = BlockedOn::Nothing;
        self.probe.event(&schedlab_probe::ProbeEvent::Wakeup { time: self.now, task: next, cpu, new: false });
        self.schedule(cpu, true, Some(next))
    }

    /// The kernel steps of a futex syscall on `keys`' bucket(s) (`double_lock_hb`: the
    /// lower lock first; one lock when both hash to the same bucket).
    pub(crate) fn futex_call(&mut self, keys: [FutexKey; 2], action: FAction) -> [Step; 2] {
        let a = self.lock_id(schedlab_probe::LockName::FutexBucket(self.objs.bucket(keys[0])));
        let b = self.lock_id(schedlab_probe::LockName::FutexBucket(self.objs.bucket(keys[1])));
        let c = &self.machine.costs;
        let (locks, n) = if a == b { ([a, a], 1) } else { ([a.min(b), a.max(b)], 2) };
        [
            Step::Delay(KernelPath::Futex, c.syscall + c.futex),
            Step::Locked {
                locks,
                n,
                got: 0,
                site: LockSite::FutexBucket,
                hold: c.futex_bucket_hold,
                action: Action::Futex(Box::new(action)),
            },
        ]
    }

    /// The user-space side of a futex operation of task `t`. Returns `true` when it needed
    /// no kernel entry (the program goes on at once); else its steps are in `steps`.
    pub(crate) fn futex_user(&mut self, t: TaskId, op: &FutexOp, steps: &mut Vec<Step>) -> bool {
        let w = |i: usize| FutexKey::Word(i);
        let cur = |on: bool| if on { wf::CURRENT_CPU } else { 0 };
        match *op {
            FutexOp::Set { word, value } => self.objs.words[word] = value,
            FutexOp::Add { word, value } => self.objs.words[word] = self.objs.words[word].wrapping_add(value),
            FutexOp::Wait { word, expected } => {
                if self.objs.words[word] == expected {
                    steps.extend(self.futex_call([w(word); 2], FAction::Wait { task: t, word, expected }));
                    return false;
                }
            }
            FutexOp::Wake { word, count, current_cpu } => {
                let a = FAction::Wake { key: w(word), n: u64::from(count), wf: cur(current_cpu) };
                steps.extend(self.futex_call([w(word); 2], a));
            }
            FutexOp::Swap { wait, expected, wake, current_cpu, direct, split } => {
                // Phase 0: the swap call (or, split, a plain wake); then a wait loop on `wait`.
                if self.tasks[t].op_phase == 0 {
                    self.tasks[t].op_phase = 1;
                    let wf_ = cur(current_cpu || direct);
                    if split {
                        steps.extend(self.futex_call([w(wake); 2], FAction::Wake { key: w(wake), n: 1, wf: wf_ }));
                        return false;
                    }
                    let a = FAction::Swap { task: t, wait, expected, wake, wf: wf_, direct };
                    steps.extend(self.futex_call([w(wait), w(wake)], a));
                    return false;
                }
                if self.objs.words[wait] == expected {
                    steps.extend(self.futex_call([w(wait); 2], FAction::Wait { task: t, word: wait, expected }));
                    return false;
                }
            }
            FutexOp::WakeOp { word, count, word2, count2, op, oparg, cmp, cmparg } => {
                let a = FAction::WakeOp { word, count, word2, count2, op, oparg, cmp, cmparg };
                steps.extend(self.futex_call([w(word), w(word2)], a));
            }
            FutexOp::CmpRequeue { word, to, wake, requeue, expected } => {
                let a = FAction::CmpRequeue { word, to, wake, requeue, expected };
                steps.extend(self.futex_call([w(word), w(to)], a));
            }
            FutexOp::LockPi(word) => return self.lock_pi_user(t, word, steps),
            FutexOp::UnlockPi(word) => return self.unlock_pi_user(t, word, steps),
        }
        // Operations that finish with their call (or without one) move on now.
        self.next_op(t);
        steps.is_empty()
    }
}
