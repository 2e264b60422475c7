//! `struct prio_array` (`kernel/sched.c`, 2.6.20): 140 FIFO lists, one per priority, and a
//! bitmap of the non-empty ones with a permanently set delimiter bit 140, so that the pick is
//! `sched_find_first_bit` over three words whatever the number of tasks.

use super::params::MAX_PRIO;
use schedlab_sim::TaskId;
use std::collections::VecDeque;

const WORDS: usize = (MAX_PRIO as usize + 1).div_ceil(64);

#[derive(Clone, Debug)]
pub struct PrioArray {
    pub nr_active: u32,
    /// Non-empty lists, counted on list transitions (independently of the bitmap).
    nonempty: u32,
    bitmap: [u64; WORDS],
    queue: Vec<VecDeque<TaskId>>,
}

impl Default for PrioArray {
    fn default() -> Self {
        let mut bitmap = [0; WORDS];
        // `sched_init`: `__set_bit(MAX_PRIO, array->bitmap)`, the delimiter.
        bitmap[MAX_PRIO as usize / 64] |= 1 << (MAX_PRIO % 64);
        PrioArray { nr_active: 0, nonempty: 0, bitmap, queue: vec![VecDeque::new(); MAX_PRIO as usize] }
    }
}

impl PrioArray {
    fn set(&mut self, prio: u32) {
        self.bitmap[prio as usize / 64] |= 1 << (prio % 64);
    }
    fn clear(&mut self, prio: u32) {
        self.bitmap[prio as usize / 64] &= !(1 << (prio % 64));
    }

    /// `enqueue_task`: tail of `queue[prio]`.
    pub fn enqueue(&mut self, p: TaskId, prio: u32) {
        if self.queue[prio as usize].is_empty() {
            self.nonempty += 1;
        }
        self.queue[prio as usize].push_back(p);
        self.set(prio);
        self.nr_active += 1;
    }

    /// `dequeue_task`.
    pub fn dequeue(&mut self, p: TaskId, prio: u32) {
        let q = &mut self.queue[prio as usize];
        if let Some(i) = q.iter().position(|&t| t == p) {
            q.remove(i);
            self.nr_active -= 1;
            if q.is_empty() {
                self.nonempty -= 1;
            }
        }
        if q.is_empty() {
            self.clear(prio);
        }
    }

    /// `requeue_task`: move to the tail of its list.
    pub fn requeue(&mut self, p: TaskId, prio: u32) {
        let q = &mut self.queue[prio as usize];
        if let Some(i) = q.iter().position(|&t| t == p) {
            q.remove(i);
            q.push_back(p);
        }
    }

    /// `sched_find_first_bit(array->bitmap)`: the best non-empty priority, or `MAX_PRIO`
    /// (the delimiter) when empty. Returns the index and the number of words read.
    pub fn find_first_bit(&self) -> (u32, u32) {
        for (w, &bits) in self.bitmap.iter().enumerate() {
            if bits != 0 {
                return (w as u32 * 64 + bits.trailing_zeros(), w as u32 + 1);
            }
        }
        (MAX_PRIO, WORDS as u32)
    }

    /// `find_next_bit(bitmap, MAX_PRIO, idx)`.
    pub fn next_bit(&self, from: u32) -> u32 {
        (from..MAX_PRIO).find(|&i| self.bitmap[i as usize / 64] & (1 << (i % 64)) != 0).unwrap_or(MAX_PRIO)
    }

    pub fn list(&self, prio: u32) -> &VecDeque<TaskId> {
        &self.queue[prio as usize]
    }

    /// The non-empty priorities, best first, read from the bitmap.
    fn set_bits(&self) -> impl Iterator<Item = u32> + '_ {
        self.bitmap
            .iter()
            .enumerate()
            .flat_map(|(w, &word)| {
                let mut bits = word;
                std::iter::from_fn(move || {
                    if bits == 0 {
                        return None;
                    }
                    let b = bits.trailing_zeros();
                    bits &= bits - 1;
                    Some(w as u32 * 64 + b)
                })
            })
            .filter(|&i| i < MAX_PRIO)
    }

    /// Every queued task with its priority, best priority first, FIFO within a list.
    pub fn iter(&self) -> impl Iterator<Item = (u32, TaskId)> + '_ {
        self.set_bits().flat_map(move |i| self.queue[i as usize].iter().map(move |&t| (i, t)))
    }

    /// The bitmap agrees with the lists and the count; the delimiter is set. Costs
    /// O(non-empty lists): every set bit has a non-empty list, their tasks add up to
    /// `nr_active`, and as many lists are non-empty as the enqueues and dequeues recorded.
    pub fn consistent(&self) -> bool {
        let delim = self.bitmap[MAX_PRIO as usize / 64] & (1 << (MAX_PRIO % 64)) != 0;
        let mut lists = 0;
        let mut tasks = 0;
        for i in self.set_bits() {
            let n = self.queue[i as usize].len();
            if n == 0 {
                return false;
            }
            lists += 1;
            tasks += n;
        }
        delim && lists == self.nonempty && tasks == self.nr_active as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pick_is_first_bit_and_lists_are_fifo() {
        let mut a = PrioArray::default();
        assert_eq!(a.find_first_bit(), (MAX_PRIO, 3), "empty: the delimiter");
        a.enqueue(1, 125);
        a.enqueue(2, 115);
        a.enqueue(3, 115);
        a.enqueue(4, 115);
        assert_eq!(a.find_first_bit().0, 115);
        assert_eq!(a.list(115).iter().copied().collect::<Vec<_>>(), [2, 3, 4]);
        a.requeue(2, 115);
        assert_eq!(a.list(115).iter().copied().collect::<Vec<_>>(), [3, 4, 2]);
        for t in [2, 3, 4] {
            a.dequeue(t, 115);
        }
        assert_eq!(a.find_first_bit().0, 125);
        assert_eq!(a.next_bit(126), MAX_PRIO);
        assert!(a.consistent());
        assert_eq!(a.nr_active, 1);
    }

    /// The pick reads the same number of bitmap words with 10 or 10 000 tasks queued.
    #[test]
    fn pick_cost_does_not_depend_on_task_count() {
        let words = |n: usize| {
            let mut a = PrioArray::default();
            for t in 0..n {
                a.enqueue(t, 120 + (t % 20) as u32);
            }
            a.find_first_bit().1
        };
        assert_eq!(words(10), words(10_000));
    }
}
