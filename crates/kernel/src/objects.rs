//! Kernel objects shared by tasks: pipes and the futex table, plus the user-space words
//! (mutex state, condition sequence, barrier generation) that futexes wait on.

use crate::cpu::LockId;
use schedlab_sim::TaskId;
use schedlab_workload::Workload;
use std::collections::{BTreeMap, VecDeque};

pub(crate) struct Pipe {
    pub capacity: u64,
    /// An `AF_UNIX` stream socket: costs `socket_op` per call instead of `pipe_op`.
    pub socket: bool,
    /// Tasks asleep in `poll` on this pipe (non-exclusive waiters: all woken by a write).
    pub pollers: Vec<TaskId>,
    pub len: u64,
    /// Readers blocked on an empty pipe (woken one at a time: exclusive waits, ≥5.5).
    pub readers: VecDeque<TaskId>,
    /// Writers blocked on a full pipe (all woken when space appears).
    pub writers: VecDeque<TaskId>,
}

/// The user-space mutex word of Drepper's "mutex2": 0 unlocked, 1 locked, 2 locked with
/// (possible) waiters.
#[derive(Default)]
pub(crate) struct Mutex {
    pub word: u64,
    pub owner: Option<TaskId>,
}

#[derive(Default)]
pub(crate) struct Cond {
    /// The futex word: bumped by every signal/broadcast.
    pub seq: u64,
    /// Tasks between `cond_wait`'s registration and its return (glibc tracks waiters so
    /// that a signal without waiters stays in user space).
    pub waiters: u64,
}

pub(crate) struct Barrier {
    pub parties: u64,
    pub arrived: u64,
    /// The futex word: bumped when the last party arrives.
    pub gen: u64,
    /// Tasks spinning on `gen` (a `barrier` with `spin`), to be told when it changes.
    pub spinners: Vec<TaskId>,
}

/// Which user-space word a futex operation names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum FutexKey {
    Mutex(usize),
    Cond(usize),
    Barrier(usize),
}

pub(crate) struct Objects {
    pub pipes: Vec<Pipe>,
    pub mutexes: Vec<Mutex>,
    pub conds: Vec<Cond>,
    pub barriers: Vec<Barrier>,
    /// `futex_queues`: per bucket, the waiters in queue order (all SCHED_OTHER waiters share
    /// one priority, so the kernel's plist is FIFO).
    pub buckets: BTreeMap<usize, VecDeque<(FutexKey, TaskId)>>,
    /// `futex_hashsize` = roundup_pow_of_two(256 × CPUs) (`futex_init`).
    pub nbuckets: usize,
    pub bucket_locks: BTreeMap<usize, LockId>,
}

impl Objects {
    pub fn new(wl: &Workload, nr_cpus: usize) -> Objects {
        Objects {
            pipes: wl
                .pipes
                .iter()
                .map(|p| Pipe {
                    capacity: p.capacity,
                    socket: p.socket,
                    pollers: Vec::new(),
                    len: 0,
                    readers: VecDeque::new(),
                    writers: VecDeque::new(),
                })
                .collect(),
            mutexes: wl.mutexes.iter().map(|_| Mutex::default()).collect(),
            conds: wl.conds.iter().map(|_| Cond::default()).collect(),
            barriers: wl
                .barriers
                .iter()
                .map(|b| Barrier { parties: b.parties, arrived: 0, gen: 0, spinners: Vec::new() })
                .collect(),
            buckets: BTreeMap::new(),
            nbuckets: (256 * nr_cpus).next_power_of_two(),
            bucket_locks: BTreeMap::new(),
        }
    }

    /// The futex word's current value.
    pub fn value(&self, key: FutexKey) -> u64 {
        match key {
            FutexKey::Mutex(i) => self.mutexes[i].word,
            FutexKey::Cond(i) => self.conds[i].seq,
            FutexKey::Barrier(i) => self.barriers[i].gen,
        }
    }

    /// `hash_futex`: a synthetic user address per word, mixed into a bucket index.
    pub fn bucket(&self, key: FutexKey) -> usize {
        let addr: u64 = match key {
            FutexKey::Mutex(i) => 0x1000_0000 + 64 * i as u64,
            FutexKey::Cond(i) => 0x4000_0000 + 64 * i as u64,
            FutexKey::Barrier(i) => 0x7000_0000 + 64 * i as u64,
        };
        // splitmix64 finaliser: a well-mixed, platform-independent stand-in for jhash2.
        let mut z = addr.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z as usize) & (self.nbuckets - 1)
    }
}
