//! A dispatch queue (`struct scx_dispatch_q`, `kernel/sched/ext.c` v6.12): FIFO, or
//! ordered by `dsq_vtime` with ties in insertion order (`dispatch_enqueue`). A DSQ is one
//! or the other while it holds tasks; mixing is the policy's error.

use schedlab_sim::TaskId;
use std::collections::BTreeMap;

/// Where a task sits in a [`Dsq`]: its ordering key.
pub(crate) type Key = (u64, u64);

/// A FIFO's middle: tail inserts count up from it, head inserts down.
const MID: u64 = 1 << 63;

#[derive(Clone, Debug, Default)]
pub(crate) struct Dsq {
    q: BTreeMap<Key, TaskId>,
    /// The order of the tasks it holds (meaningful while non-empty).
    vtime: bool,
    tail: u64,
    head: u64,
    seq: u64,
}

impl Dsq {
    /// Inserts `p` at the tail (or head); `Err` if the DSQ holds vtime-ordered tasks.
    pub(crate) fn insert_fifo(&mut self, p: TaskId, head: bool) -> Result<Key, String> {
        if self.vtime && !self.q.is_empty() {
            return Err("cannot use FIFO insert on a DSQ holding vtime-ordered tasks".into());
        }
        self.vtime = false;
        let k = if head {
            self.head += 1;
            (MID - self.head, 0)
        } else {
            self.tail += 1;
            (MID + self.tail, 0)
        };
        self.q.insert(k, p);
        Ok(k)
    }

    /// Inserts `p` ordered by `vtime` (after equal ones); `Err` if the DSQ holds FIFO tasks.
    pub(crate) fn insert_vtime(&mut self, p: TaskId, vtime: u64) -> Result<Key, String> {
        if !self.vtime && !self.q.is_empty() {
            return Err("cannot use vtime insert on a DSQ holding FIFO tasks".into());
        }
        self.vtime = true;
        self.seq += 1;
        let k = (vtime, self.seq);
        self.q.insert(k, p);
        Ok(k)
    }

    pub(crate) fn remove(&mut self, k: Key) -> Option<TaskId> {
        self.q.remove(&k)
    }

    pub(crate) fn len(&self) -> usize {
        self.q.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// The tasks in queue order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Key, TaskId)> + '_ {
        self.q.iter().map(|(k, p)| (*k, *p))
    }

    pub(crate) fn first(&self) -> Option<(Key, TaskId)> {
        self.q.first_key_value().map(|(k, p)| (*k, *p))
    }

    pub(crate) fn contains(&self, k: Key, p: TaskId) -> bool {
        self.q.get(&k) == Some(&p)
    }
}
