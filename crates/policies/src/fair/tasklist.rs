//! `rq->cfs_tasks`: each CPU's queued fair tasks, most recently run first, as the kernel
//! keeps them — a doubly linked list through the task (`se->group_node`), so that
//! `list_add` at enqueue, `list_del_init` at dequeue and `list_move` when a task is picked
//! (`set_next_entity` via `pick_next_task_fair`) cost O(1) however many tasks are queued.
//! The balancer walks it from either end (`detach_tasks`).
//!
//! The links live in one array indexed by task, 12 bytes a task: next, previous and the
//! CPU whose list holds the task.

use schedlab_sim::{CpuId, TaskId};

const NIL: u32 = u32::MAX;

/// One CPU's list: its first (most recently run) and last task.
#[derive(Clone, Copy, Debug)]
pub struct TaskList {
    head: u32,
    tail: u32,
}

impl Default for TaskList {
    fn default() -> Self {
        TaskList { head: NIL, tail: NIL }
    }
}

#[derive(Clone, Copy, Debug)]
struct Link {
    next: u32,
    prev: u32,
    /// The CPU whose list holds the task, `NIL` when on none.
    cpu: u32,
}

const UNLINKED: Link = Link { next: NIL, prev: NIL, cpu: NIL };

/// The links of every task.
#[derive(Clone, Debug, Default)]
pub struct Links {
    l: Vec<Link>,
}

impl Links {
    /// Room for `n` tasks in all, allocated exactly.
    pub fn reserve_exact(&mut self, n: usize) {
        self.l.reserve_exact(n.saturating_sub(self.l.len()));
    }

    fn on(&self, p: TaskId, cpu: CpuId) -> bool {
        self.l.get(p).is_some_and(|k| k.cpu == cpu as u32)
    }

    /// `list_add`: `p` becomes the first task of `cpu`'s list.
    pub fn push_front(&mut self, list: &mut TaskList, cpu: CpuId, p: TaskId) {
        if self.l.len() <= p {
            self.l.resize(p + 1, UNLINKED);
        }
        debug_assert_eq!(self.l[p].cpu, NIL, "task {p} is on a cfs_tasks list already");
        let id = p as u32;
        self.l[p] = Link { next: list.head, prev: NIL, cpu: cpu as u32 };
        if list.head == NIL {
            list.tail = id;
        } else {
            self.l[list.head as usize].prev = id;
        }
        list.head = id;
    }

    /// `list_del_init`: takes `p` off `cpu`'s list; false if it was not on it.
    pub fn remove(&mut self, list: &mut TaskList, cpu: CpuId, p: TaskId) -> bool {
        if !self.on(p, cpu) {
            return false;
        }
        let Link { next, prev, .. } = self.l[p];
        match prev {
            NIL => list.head = next,
            _ => self.l[prev as usize].next = next,
        }
        match next {
            NIL => list.tail = prev,
            _ => self.l[next as usize].prev = prev,
        }
        self.l[p] = UNLINKED;
        true
    }

    /// `list_move`: `p`, if on `cpu`'s list, becomes its first task.
    pub fn move_front(&mut self, list: &mut TaskList, cpu: CpuId, p: TaskId) {
        if self.remove(list, cpu, p) {
            self.push_front(list, cpu, p);
        }
    }

    /// Up to `max` tasks of the list, from the first (most recently run) or, with `rev`,
    /// from the last.
    pub fn collect(&self, list: &TaskList, rev: bool, max: usize, out: &mut Vec<TaskId>) {
        let mut at = if rev { list.tail } else { list.head };
        while at != NIL && out.len() < max {
            out.push(at as TaskId);
            let k = &self.l[at as usize];
            at = if rev { k.prev } else { k.next };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    proptest! {
        /// Against the list the kernel's operations describe (a deque searched
        /// linearly): the same tasks in the same order from both ends after every step.
        #[test]
        fn links_agree_with_a_deque(ops in proptest::collection::vec((0usize..3, 0usize..12, 0usize..3), 1..300)) {
            let mut links = Links::default();
            let mut lists = [TaskList::default(); 3];
            let mut model: [VecDeque<TaskId>; 3] = Default::default();
            for (op, p, cpu) in ops {
                let listed = model.iter().any(|m| m.contains(&p));
                match op {
                    0 if !listed => {
                        links.push_front(&mut lists[cpu], cpu, p);
                        model[cpu].push_front(p);
                    }
                    1 => {
                        let found = model[cpu].iter().position(|&t| t == p);
                        if let Some(i) = found {
                            model[cpu].remove(i);
                        }
                        prop_assert_eq!(links.remove(&mut lists[cpu], cpu, p), found.is_some());
                    }
                    2 => {
                        if let Some(i) = model[cpu].iter().position(|&t| t == p) {
                            model[cpu].remove(i);
                            model[cpu].push_front(p);
                        }
                        links.move_front(&mut lists[cpu], cpu, p);
                    }
                    _ => continue,
                }
                for c in 0..3 {
                    let (mut fwd, mut back) = (Vec::new(), Vec::new());
                    links.collect(&lists[c], false, usize::MAX, &mut fwd);
                    links.collect(&lists[c], true, usize::MAX, &mut back);
                    prop_assert_eq!(&fwd, &model[c].iter().copied().collect::<Vec<_>>());
                    prop_assert_eq!(&back, &model[c].iter().rev().copied().collect::<Vec<_>>());
                    let mut two = Vec::new();
                    links.collect(&lists[c], true, 2, &mut two);
                    prop_assert_eq!(&two[..], &back[..back.len().min(2)]);
                }
            }
        }
    }
}
