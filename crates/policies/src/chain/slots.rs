//! Per-task state that only some tasks use (the deadline and rt classes' entities): each
//! task holds an index into a dense list, so a task that never runs in the class costs
//! 4 bytes instead of the whole entity (96 bytes for a deadline entity, 32 for a PI
//! boost), which matters at 100 000 tasks.

use std::ops::{Index, IndexMut};

/// One `T` per task: tasks never written read a shared default; the first write gives the
/// task its own copy of it.
#[derive(Clone)]
pub struct Slots<T> {
    /// Per task: 0 = never written (reads `items[0]`), else its index in `items`.
    index: Vec<u32>,
    /// `items[0]` is the default, never handed out mutably.
    items: Vec<T>,
}

impl<T: Clone> Slots<T> {
    pub fn new(default: T) -> Self {
        Slots { index: Vec::new(), items: vec![default] }
    }
    pub fn reserve_exact(&mut self, n: usize) {
        self.index.reserve_exact(n.saturating_sub(self.index.len()));
    }
    /// Task `p`'s entry, if `p` has room.
    pub fn get(&self, p: usize) -> Option<&T> {
        self.index.get(p).map(|&i| &self.items[i as usize])
    }
    /// Room for tasks `0..=p`.
    pub fn grow(&mut self, p: usize) {
        if self.index.len() <= p {
            self.index.resize(p + 1, 0);
        }
    }
}

impl<T> Index<usize> for Slots<T> {
    type Output = T;
    fn index(&self, p: usize) -> &T {
        &self.items[self.index[p] as usize]
    }
}

impl<T: Clone> IndexMut<usize> for Slots<T> {
    fn index_mut(&mut self, p: usize) -> &mut T {
        if self.index[p] == 0 {
            // The workload limits tasks to a million, far below u32::MAX.
            self.index[p] = u32::try_from(self.items.len()).expect("fewer than 2^32 tasks");
            self.items.push(self.items[0].clone());
        }
        &mut self.items[self.index[p] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::Slots;

    #[test]
    fn unwritten_tasks_read_the_default_and_writes_stay_per_task() {
        let mut s = Slots::new(7u64);
        s.grow(3);
        assert_eq!((s[0], s[3]), (7, 7));
        s[2] = 9;
        s[3] += 1;
        assert_eq!((s[0], s[1], s[2], s[3]), (7, 7, 9, 8));
        assert_eq!(s.items.len(), 3, "only the written tasks got their own entry");
        s[2] = 10;
        assert_eq!((s[2], s.items.len()), (10, 3));
        assert_eq!((s.get(1), s.get(3), s.get(4)), (Some(&7), Some(&8), None));
    }
}
