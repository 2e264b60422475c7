//! PI futexes (`kernel/futex/pi.c` + `kernel/locking/rtmutex.c`, v6.x) as a hand-off lock
//! with transitive priority boosting, and VIP inheritance along the same owner chains
//! (`docs/futex.md`). The `pi_state`/rt_mutex race machinery is not modelled: the word,
//! the owner and the waiters change together under the bucket lock.

use crate::core::hook;
use crate::futex::{tid, MAX_RT_PRIO, TID_MASK, WAITERS};
use crate::vocab::{FAction, FutexKey, Step};
use crate::{BlockedOn, Kernel, ProbeEvent};
use schedlab_sim::{CpuId, TaskId};

impl Kernel<'_> {
    fn pi_take(&mut self, t: TaskId, word: usize) {
        self.objs.pi_owner.insert(word, t);
        self.objs.ft(t).pi_held.push(word);
    }

    fn pi_drop(&mut self, t: TaskId, word: usize) {
        self.objs.pi_owner.remove(&word);
        self.objs.ft(t).pi_held.retain(|&w| w != word);
    }

    /// Who holds the lock behind `key`: a mutex's owner, a PI word's owner.
    pub(crate) fn lock_owner(&self, key: FutexKey) -> Option<TaskId> {
        match key {
            FutexKey::Mutex(m) => self.objs.mutexes[m].owner,
            FutexKey::Word(w) => self.objs.pi_owner.get(&w).copied(),
            _ => None,
        }
    }

    /// rt_mutex waiter order: real-time by priority, then VIP, then normal by priority
    /// (nice), FIFO among equals (`rt_waiter_node_less`, v6.x; VIP: `docs/futex.md`).
    fn pi_order(&self, t: TaskId, seq: u64) -> (u32, i32, u64) {
        let p = self.eff_prio(t);
        let class = if p < MAX_RT_PRIO {
            0
        } else if self.is_vip(t) {
            1
        } else {
            2
        };
        (class, p, seq)
    }

    /// The top PI waiter of `word`.
    fn pi_top_waiter(&self, word: usize) -> Option<TaskId> {
        let key = FutexKey::Word(word);
        let list = self.objs.buckets.get(&self.objs.bucket(key))?;
        list.iter().filter(|q| q.key == key && q.pi).min_by_key(|q| self.pi_order(q.task, q.seq)).map(|q| q.task)
    }

    /// `lock_pi`'s user-space part: done if the word already names this task (taken, or
    /// handed over by an unlock); CAS 0 → TID; else `FUTEX_LOCK_PI`.
    pub(crate) fn lock_pi_user(&mut self, t: TaskId, word: usize, steps: &mut Vec<Step>) -> bool {
        let v = self.objs.words[word];
        if v & TID_MASK == tid(t) && self.objs.pi_owner.get(&word) == Some(&t) {
            self.next_op(t);
            return true;
        }
        if v == 0 {
            self.objs.words[word] = tid(t);
            self.pi_take(t, word);
            self.next_op(t);
            return true;
        }
        let k = FutexKey::Word(word);
        steps.extend(self.futex_call([k, k], FAction::LockPi { task: t, word }));
        false
    }

    /// `unlock_pi`'s user-space part: CAS TID → 0 without waiters, else `FUTEX_UNLOCK_PI`.
    pub(crate) fn unlock_pi_user(&mut self, t: TaskId, word: usize, steps: &mut Vec<Step>) -> bool {
        let v = self.objs.words[word];
        if v & TID_MASK != tid(t) || self.objs.pi_owner.get(&word) != Some(&t) {
            self.fail(format!(
                "task {} unlocks PI futex `{}`, which it does not hold (-EPERM)",
                self.info[t].name, self.wl.futexes[word].name
            ));
            return false;
        }
        self.next_op(t);
        if v == tid(t) {
            self.objs.words[word] = 0;
            self.pi_drop(t, word);
            self.vip_release(t);
            return true;
        }
        let k = FutexKey::Word(word);
        steps.extend(self.futex_call([k, k], FAction::UnlockPi { task: t, word }));
        false
    }

    /// `futex_lock_pi` with the bucket locked: take a free word; else set `FUTEX_WAITERS`,
    /// queue, block, and boost the owner chain (`rt_mutex_adjust_prio_chain`).
    pub(crate) fn futex_lock_pi(&mut self, cpu: CpuId, task: TaskId, word: usize) {
        let v = self.objs.words[word];
        if v & TID_MASK == 0 {
            self.objs.words[word] = tid(task) | (v & WAITERS);
            self.pi_take(task, word);
            self.vip_acquired(FutexKey::Word(word));
            return;
        }
        let Some(owner) = self.objs.pi_owner.get(&word).copied().filter(|_| v & TID_MASK != tid(task)) else {
            self.fail(format!(
                "task {} locks PI futex `{}`: the word holds {v:#x}, {} (-EDEADLK/-ESRCH)",
                self.info[task].name,
                self.wl.futexes[word].name,
                if v & TID_MASK == tid(task) { "its own TID" } else { "the TID of no owner" }
            ));
            return;
        };
        self.objs.words[word] = v | WAITERS;
        let key = FutexKey::Word(word);
        self.futex_enqueue(task, key, true);
        self.block(cpu, task, BlockedOn::Futex);
        self.vip_waits_on(key, task);
        self.pi_adjust_chain(cpu, owner);
    }

    /// `futex_unlock_pi` → `wake_futex_pi`: hand the lock to the top waiter (the word gets
    /// its TID, with `FUTEX_WAITERS` while others wait), de-boost the old owner.
    pub(crate) fn futex_unlock_pi(&mut self, cpu: CpuId, task: TaskId, word: usize) {
        if self.objs.pi_owner.get(&word) != Some(&task) {
            return; // raced with nothing: only the owner reaches here
        }
        self.pi_drop(task, word);
        match self.pi_top_waiter(word) {
            Some(next) => {
                if let Some(q) = self.futex_unqueue(next) {
                    if self.wl.templates[self.tasks[next].template as usize].vip {
                        self.objs.stats.vip_waited((self.now - q.since).0);
                    }
                }
                let more = self.pi_top_waiter(word).is_some();
                self.objs.words[word] = tid(next) | if more { WAITERS } else { 0 };
                self.pi_take(next, word);
                self.vip_acquired(FutexKey::Word(word));
                self.pi_adjust_chain(cpu, next);
                self.wake_steps(cpu, next, 0);
            }
            None => self.objs.words[word] = 0,
        }
        self.pi_adjust_chain(cpu, task);
        self.vip_release(task);
    }

    /// `rt_mutex_adjust_prio_chain`: from `start`, set each owner's boost to its best PI
    /// waiter's priority (if better than its own), re-rank it where it waits, and go on to
    /// the owner of that lock, until nothing changes or `max_lock_depth` owners.
    fn pi_adjust_chain(&mut self, cpu: CpuId, start: TaskId) {
        let mut t = start;
        for _ in 0..self.cfg.futex.max_lock_depth {
            let held = self.objs.ft(t).pi_held.clone();
            // The best waiter over every lock `t` holds; ties go to the lower task id.
            let best = held.iter().filter_map(|&w| self.pi_top_waiter(w)).map(|w| (self.eff_prio(w), w)).min();
            let best = best.filter(|&(b, _)| b < self.normal_prio(t));
            let (boost, donor) = (best.map(|b| b.0), best.map(|b| b.1));
            if self.objs.ft(t).pi_boost == boost {
                return;
            }
            self.objs.ft(t).pi_boost = boost;
            self.objs.stats.pi_boosts += u64::from(boost.is_some());
            self.probe.event(&ProbeEvent::PiSetprio { time: self.now, task: t, prio: boost });
            hook!(self, cpu, |p, cx| p.pi_setprio(&mut cx, t, boost, donor));
            let Some(key) = self.objs.ft(t).waiting else { return };
            self.futex_rerank(t);
            match self.lock_owner(key) {
                Some(o) if matches!(key, FutexKey::Word(_)) => t = o,
                _ => return,
            }
        }
    }

    fn set_vip_inherited(&mut self, t: TaskId, on: bool) {
        self.objs.ft(t).vip_inherited = on;
        self.objs.stats.vip_inherits += u64::from(on);
        self.probe.event(&ProbeEvent::VipInherit { time: self.now, task: t, on });
        let cpu = self.info[t].cpu;
        hook!(self, cpu, |p, cx| p.vip_changed(&mut cx, t, on));
    }

    /// `waiter` queued on `key`: if it is a VIP, the lock's owner gets VIP treatment, and
    /// so on along the chain of owners that themselves wait (at most `max_lock_depth`).
    pub(crate) fn vip_waits_on(&mut self, key: FutexKey, waiter: TaskId) {
        if !self.is_vip(waiter) {
            return;
        }
        let mut key = key;
        for _ in 0..self.cfg.futex.max_lock_depth {
            let Some(owner) = self.lock_owner(key) else { return };
            if self.is_vip(owner) {
                return;
            }
            self.set_vip_inherited(owner, true);
            let Some(next) = self.objs.ft(owner).waiting else { return };
            self.futex_rerank(owner);
            key = next;
        }
    }

    /// The lock behind `key` has a new owner: it inherits VIP treatment if a VIP still waits there.
    pub(crate) fn vip_acquired(&mut self, key: FutexKey) {
        if !self.cfg.futex.vip || self.objs.buckets.is_empty() {
            return;
        }
        let list = self.objs.buckets.get(&self.objs.bucket(key));
        let vip = list.and_then(|l| l.iter().find(|q| q.key == key && self.is_vip(q.task)).map(|q| q.task));
        if let Some(w) = vip {
            self.vip_waits_on(key, w);
        }
    }

    /// Whether a VIP waits on some lock `t` holds.
    fn vip_waits_for(&self, t: TaskId) -> bool {
        self.objs.buckets.values().flatten().any(|q| self.is_vip(q.task) && self.lock_owner(q.key) == Some(t))
    }

    /// `t` released a lock: its inherited VIP treatment ends unless a VIP still waits on a
    /// lock it holds; the owners down its own wait chain are re-examined the same way.
    pub(crate) fn vip_release(&mut self, t: TaskId) {
        let mut t = t;
        for _ in 0..self.cfg.futex.max_lock_depth {
            if !self.objs.ft_ref(t).is_some_and(|f| f.vip_inherited) || self.vip_waits_for(t) {
                return;
            }
            self.set_vip_inherited(t, false);
            let Some(key) = self.objs.ft(t).waiting else { return };
            self.futex_rerank(t);
            match self.lock_owner(key) {
                Some(o) => t = o,
                None => return,
            }
        }
    }
}

impl Kernel<'_> {
    /// The futex invariants (full checks): every queued waiter is alive, recorded as waiting
    /// on its key, in its key's bucket, and each bucket is in plist order; a task recorded as
    /// waiting is queued; a PI word's owner holds it and the word names it.
    pub(crate) fn check_futexes(&self) -> Result<(), String> {
        let mut queued = 0usize;
        for (&b, list) in &self.objs.buckets {
            if list.windows(2).any(|w| (w[0].rank, w[0].seq) > (w[1].rank, w[1].seq)) {
                return Err(format!("futex bucket {b}: waiters out of plist order"));
            }
            for q in list {
                let name = &self.info[q.task].name;
                if self.objs.bucket(q.key) != b || self.tasks[q.task].state == crate::TState::Dead {
                    return Err(format!("task {name} is queued in futex bucket {b} but should not be"));
                }
                if self.objs.ft_ref(q.task).and_then(|f| f.waiting) != Some(q.key) {
                    return Err(format!("task {name} is queued on a futex it is not recorded as waiting on"));
                }
                queued += 1;
            }
        }
        let waiting = self.objs.ftasks.iter().filter(|f| f.waiting.is_some()).count();
        if waiting != queued {
            return Err(format!("{waiting} tasks recorded as futex waiters, {queued} queued"));
        }
        for (&w, &o) in &self.objs.pi_owner {
            if self.objs.words[w] & TID_MASK != tid(o) || !self.objs.ft_ref(o).is_some_and(|f| f.pi_held.contains(&w)) {
                return Err(format!(
                    "PI futex `{}`: owner {} and word {:#x} disagree",
                    self.wl.futexes[w].name, self.info[o].name, self.objs.words[w]
                ));
            }
        }
        Ok(())
    }
}
