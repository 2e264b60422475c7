//! Run queues: `struct runq` (`kern_switch.c`: FIFO lists with a status bitmap) and the
//! timeshare calendar built on it (`sched_ule.c:tdq_runq_add`, `tdq_runq_rem`, the index
//! rotation in `sched_clock`).

use schedlab_sim::TaskId;
use std::collections::VecDeque;

/// `struct runq`: up to 256 FIFO lists and a bitmap of the non-empty ones.
#[derive(Clone, Debug)]
pub struct Runq {
    lists: Vec<VecDeque<TaskId>>,
    bits: [u64; 4],
}

impl Runq {
    pub fn new(nlists: usize) -> Runq {
        assert!(nlists <= 256);
        Runq { lists: vec![VecDeque::new(); nlists], bits: [0; 4] }
    }
    pub fn len(&self) -> usize {
        self.lists.len()
    }
    pub fn list(&self, idx: usize) -> &VecDeque<TaskId> {
        &self.lists[idx]
    }
    /// `runq_add_pri`: insert at the head (`SRQ_PREEMPTED`) or the tail of list `idx`.
    pub fn add(&mut self, idx: usize, t: TaskId, head: bool) {
        if head {
            self.lists[idx].push_front(t);
        } else {
            self.lists[idx].push_back(t);
        }
        self.bits[idx / 64] |= 1 << (idx % 64);
    }
    /// `runq_remove_idx`: unlink; returns true if the list became empty.
    pub fn remove(&mut self, idx: usize, t: TaskId) -> bool {
        let l = &mut self.lists[idx];
        if let Some(pos) = l.iter().position(|&x| x == t) {
            l.remove(pos);
        }
        if l.is_empty() {
            self.bits[idx / 64] &= !(1 << (idx % 64));
            true
        } else {
            false
        }
    }
    /// `runq_findbit_from`: first non-empty list at or after `start`, wrapping once.
    pub fn first_from(&self, start: usize) -> Option<usize> {
        let n = self.lists.len();
        (start..n).chain(0..start).find(|&i| self.bits[i / 64] & (1 << (i % 64)) != 0)
    }
    /// `runq_choose`: the head of the best non-empty list.
    pub fn choose(&self) -> Option<TaskId> {
        self.first_from(0).and_then(|i| self.lists[i].front().copied())
    }
    /// `runq_choose_from`.
    pub fn choose_from(&self, start: usize) -> Option<TaskId> {
        self.first_from(start).and_then(|i| self.lists[i].front().copied())
    }
    pub fn is_empty_list(&self, idx: usize) -> bool {
        self.lists[idx].is_empty()
    }
    /// Every queued thread with its list index, lists in index order.
    /// Queued threads in list order, visiting only the lists the bitmap marks non-empty.
    pub fn iter(&self) -> impl Iterator<Item = (usize, TaskId)> + '_ {
        self.bits.iter().enumerate().flat_map(move |(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    w * 64 + b
                })
            })
            .flat_map(move |i| self.lists[i].iter().map(move |&t| (i, t)))
        })
    }
    /// Appends the queued threads in list order (what [`Runq::iter`] yields, without its
    /// list indices), with plain loops: the checks list every CPU's threads after every event.
    pub fn append_to(&self, out: &mut Vec<TaskId>) {
        for (w, &word) in self.bits.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                out.extend(self.lists[i].iter().copied());
            }
        }
    }
    /// The bitmap agrees with the lists: a bit is set exactly for each non-empty list
    /// (bits past the last list are not looked at). Built word by word, branch-free: the
    /// check runs after every event on every list.
    pub fn consistent(&self) -> bool {
        self.lists.chunks(64).zip(self.bits).all(|(lists, word)| {
            // Bit b: list b is not empty (folded from the chunk's last list down).
            let busy = lists.iter().rev().fold(0u64, |m, l| m << 1 | u64::from(!l.is_empty()));
            busy == word & u64::MAX >> (64 - lists.len())
        })
    }
}

/// The timeshare calendar: `tdq_timeshare` with its insertion index `tdq_idx` and removal
/// index `tdq_ridx` (current: `tdq_ts_off`, `tdq_ts_deq_off`, `tdq_ts_ticks`).
#[derive(Clone, Debug)]
pub struct Calendar {
    pub rq: Runq,
    /// Insertion index ("today" for a priority-0 offset).
    pub idx: usize,
    /// Removal index: the slot being drained.
    pub ridx: usize,
    /// current: sub-tick counter of the 7/4 advance.
    pub sub: u32,
    /// current: the 7/4 rule and skip-empty removal; 11.1: one slot per tick.
    current: bool,
}

impl Calendar {
    pub fn new(slots: usize, current: bool) -> Calendar {
        Calendar { rq: Runq::new(slots), idx: 0, ridx: 0, sub: 0, current }
    }
    fn slots(&self) -> usize {
        self.rq.len()
    }

    /// `tdq_runq_add` for a batch priority with offset `k` (0..slots): returns the slot.
    /// `borrowing_or_preempted` queues into the slot being drained.
    pub fn add(&mut self, t: TaskId, k: usize, borrowing_or_preempted: bool, head: bool) -> usize {
        let n = self.slots();
        let slot = if borrowing_or_preempted {
            self.ridx
        } else {
            let mut s = (k + self.idx) % n;
            // Never join the slot being drained: go to the far end of the circle.
            if self.ridx != self.idx && s == self.ridx {
                s = (s + n - 1) % n;
            }
            s
        };
        self.rq.add(slot, t, head);
        slot
    }

    /// `tdq_runq_rem` for the calendar.
    pub fn remove(&mut self, slot: usize, t: TaskId) {
        let emptied = self.rq.remove(slot, t);
        if self.current {
            if emptied && slot == self.ridx {
                self.advance_deq();
            }
        } else if emptied && self.idx != self.ridx && slot == self.ridx {
            // `runq_remove_idx` with &tdq_ridx advances it past the drained slot.
            self.ridx = (self.ridx + 1) % self.slots();
        }
    }

    /// current `tdq_advance_ts_deq_off`: move the dequeue offset toward the insert offset,
    /// stopping at the first non-empty slot.
    fn advance_deq(&mut self) {
        let n = self.slots();
        while self.ridx != self.idx && self.rq.is_empty_list(self.ridx) {
            self.ridx = (self.ridx + 1) % n;
        }
    }

    /// The calendar step of `sched_clock`, once per stat tick.
    pub fn tick(&mut self) {
        let n = self.slots();
        if self.current {
            if self.idx == self.ridx {
                self.sub += 1;
                self.idx = (self.idx + 2 - (self.sub / 4) as usize) % n;
                self.sub %= 4;
                self.advance_deq();
            }
        } else if self.idx == self.ridx {
            self.idx = (self.idx + 1) % n;
            if self.rq.is_empty_list(self.ridx) {
                self.ridx = self.idx;
            }
        }
    }

    /// `runq_choose_from(tdq_timeshare, tdq_ridx)`.
    pub fn choose(&self) -> Option<TaskId> {
        self.rq.choose_from(self.ridx)
    }

    /// 11.1 invariant: `ridx ∈ {idx − 1, idx}` (mod slots).
    pub fn indices_ok(&self) -> bool {
        let n = self.slots();
        self.current || self.ridx == self.idx || (self.ridx + 1) % n == self.idx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bitmap check (after every event) sees a stale bit either way, in the first
    /// word and past it (109 lists: the current calendar), and ignores bits past the last
    /// list, which name no list.
    #[test]
    fn consistent_catches_a_stale_bit_either_way() {
        for n in [8, 64, 109] {
            let last = n - 1;
            let mut q = Runq::new(n);
            q.add(last, 7, false);
            assert!(q.consistent());
            q.bits[last / 64] &= !(1 << (last % 64));
            assert!(!q.consistent(), "{n} lists: list {last} holds a task, its bit is clear");
            q.bits[last / 64] |= 1 << (last % 64);
            q.bits[0] |= 1;
            assert!(!q.consistent(), "{n} lists: bit 0 set over an empty list");
            q.bits[0] &= !1;
            if n % 64 != 0 {
                q.bits[n / 64] |= 1 << 63;
                assert!(q.consistent(), "{n} lists: bit 63 of word {} names no list", n / 64);
            }
        }
    }

    #[test]
    fn runq_is_fifo_per_list_and_bitmap_tracks_lists() {
        let mut q = Runq::new(64);
        q.add(30, 1, false);
        q.add(30, 2, false);
        q.add(31, 3, false);
        q.add(30, 4, true);
        assert_eq!(q.choose(), Some(4));
        assert!(q.remove(31, 3));
        assert!(!q.remove(30, 4));
        assert_eq!(q.choose(), Some(1));
        assert_eq!(q.first_from(31), Some(30), "wraps once");
        assert!(q.consistent());
    }

    #[test]
    fn calendar_advances_one_slot_per_tick_only_after_draining() {
        let mut c = Calendar::new(64, false);
        // A hog at offset 45 and a fresh thread at offset 0.
        c.add(1, 45, false, false);
        let s0 = c.add(2, 0, false, false);
        assert_eq!(s0, 0);
        assert_eq!(c.choose(), Some(2));
        c.tick(); // idx == ridx → idx 1; slot 0 not empty → ridx stays 0
        assert_eq!((c.idx, c.ridx), (1, 0));
        c.tick(); // idx != ridx: nothing moves until slot 0 drains
        assert_eq!((c.idx, c.ridx), (1, 0));
        // A new offset-0 thread may not join the draining slot: it goes to slot 63.
        assert_eq!(c.add(3, 63, false, false), 63 + 1 - 1);
        c.remove(s0, 2);
        assert_eq!(c.ridx, 1, "emptying the draining slot advances ridx");
        assert!(c.indices_ok());
        // Preempted threads go to the head of the draining slot.
        assert_eq!(c.add(4, 50, true, true), c.ridx);
    }

    #[test]
    fn current_calendar_advances_seven_slots_per_four_ticks() {
        let mut c = Calendar::new(109, true);
        for _ in 0..4 {
            c.tick();
        }
        assert_eq!(c.idx, 7);
        assert_eq!(c.ridx, 7, "empty slots are skipped");
    }
}
