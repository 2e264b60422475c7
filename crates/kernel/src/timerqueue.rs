//! A CPU's armed sleep timers in expiry order: the model's `struct timerqueue_head`
//! (`lib/timerqueue.c`, the rbtree `kernel/time/hrtimer.c` keeps each clock base's timers
//! in, v6.12). A leaf: what the timers mean and when they fire is `hrtimer.rs`'s.

use schedlab_sim::{Ns, TaskId};
use std::collections::{BTreeMap, VecDeque};

/// An armed sleep timer: `(hard expiry, task)` and `(soft expiry, event sequence number)`.
pub(crate) type Armed = ((Ns, TaskId), (Ns, u64));

/// How long the sorted deque may be for an out-of-order timer to be placed in it by
/// shifting; past it, such a timer goes to the search tree.
const SHIFT_MAX: usize = 64;

/// A CPU's armed sleep timers, in `(hard expiry, task)` order (the kernel's timerqueue, an
/// rbtree ordered by expiry). Mostly a sorted deque: the earliest leaves from the front,
/// and a new timer usually expires after every armed one (a periodic sleeper re-arms a
/// period ahead), so it joins at the back without a search. A timer that expires earlier
/// than the last one is placed in the deque by binary search while the deque is short, and
/// otherwise goes to a search tree beside it, so that thousands of sleepers of random
/// lengths on one CPU cost O(log n) an insert, not a shift of the deque. The earliest timer
/// is the smaller of the two fronts; keys are unique (a task has one sleep timer at a time),
/// so the order, and every result, does not depend on where a timer is kept.
#[derive(Default)]
pub(crate) struct Timers {
    q: VecDeque<Armed>,
    late: BTreeMap<(Ns, TaskId), (Ns, u64)>,
}

impl Timers {
    /// Arms a timer; a task has one sleep timer at a time, so its key is new.
    pub(crate) fn insert(&mut self, key: (Ns, TaskId), val: (Ns, u64)) {
        match self.q.back() {
            Some(&(last, _)) if last > key && self.q.len() <= SHIFT_MAX => {
                let at = self.q.partition_point(|&(k, _)| k < key);
                debug_assert!(self.q.get(at).is_none_or(|&(k, _)| k != key));
                self.q.insert(at, (key, val));
            }
            Some(&(last, _)) if last > key => {
                self.late.insert(key, val);
            }
            _ => self.q.push_back((key, val)),
        }
    }
    /// Whether the earliest timer is the tree's rather than the deque's.
    fn late_first(&self) -> bool {
        match (self.q.front(), self.late.first_key_value()) {
            (Some(&(k, _)), Some((&l, _))) => l < k,
            (None, Some(_)) => true,
            _ => false,
        }
    }
    pub(crate) fn first(&self) -> Option<Armed> {
        if self.late_first() {
            self.late.first_key_value().map(|(&k, &v)| (k, v))
        } else {
            self.q.front().copied()
        }
    }
    pub(crate) fn pop_first(&mut self) -> Option<Armed> {
        if self.late_first() {
            self.late.pop_first()
        } else {
            self.q.pop_front()
        }
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.q.is_empty() && self.late.is_empty()
    }
    /// The smallest sequence number among the timers whose hard expiry is `hard` (the
    /// earliest: they lead both the deque and the tree).
    pub(crate) fn first_seq_at(&self, hard: Ns) -> Option<u64> {
        let in_q = self.q.iter().take_while(|&&((h, _), _)| h == hard).map(|&(_, (_, seq))| seq);
        let in_late = self.late.iter().take_while(|&(&(h, _), _)| h == hard).map(|(_, &(_, seq))| seq);
        in_q.chain(in_late).min()
    }
    /// Every armed timer, in no particular order (for order-independent checks).
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&(Ns, TaskId), &(Ns, u64))> {
        self.q.iter().map(|(k, v)| (k, v)).chain(self.late.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Timers armed in any order — most after every armed one, some earlier, with the deque
    /// both short and long — leave in `(hard expiry, task)` order, and the first sequence
    /// number at the earliest expiry is the smallest among the timers due then, wherever
    /// each is kept.
    #[test]
    fn timers_leave_in_expiry_order_wherever_they_are_kept() {
        let mut timers = Timers::default();
        let mut reference = BTreeMap::new();
        let mut x = 7u64;
        for task in 0..3000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            // Three in four expire later than everything armed; the rest anywhere.
            let hard = if !x.is_multiple_of(4) { Ns(u64::from(task) * 10) } else { Ns((x >> 33) % 30_000) };
            let key = (hard, task as TaskId);
            let val = (hard, x >> 40);
            timers.insert(key, val);
            reference.insert(key, val);
            if task.is_multiple_of(7) {
                let hard = reference.first_key_value().map(|(&(h, _), _)| h).unwrap();
                let seq = reference.iter().take_while(|(&(h, _), _)| h == hard).map(|(_, &(_, s))| s).min();
                assert_eq!(timers.first_seq_at(hard), seq);
                assert_eq!(timers.pop_first(), reference.pop_first());
            }
        }
        assert!(!timers.late.is_empty(), "the long deque sent out-of-order timers to the tree");
        assert_eq!(timers.iter().count(), reference.len());
        while let Some(t) = reference.pop_first() {
            assert_eq!(timers.first(), Some(t));
            assert_eq!(timers.pop_first(), Some(t));
        }
        assert!(timers.is_empty());
    }
}
