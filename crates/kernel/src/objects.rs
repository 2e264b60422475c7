//! Kernel objects shared by tasks: pipes and the futex table, plus the user-space words
//! (mutex state, condition sequence, barrier generation) that futexes wait on.

use crate::pipes::{PipeRing, UnixStream};
use crate::vocab::{FutexKey, LockId};
use schedlab_sim::{Ns, TaskId};
use schedlab_workload::Workload;
use std::collections::{BTreeMap, VecDeque};

pub(crate) struct Pipe {
    pub capacity: u64,
    /// An `AF_UNIX` stream socket: costs `socket_op` per call instead of `pipe_op`.
    pub socket: bool,
    /// Tasks asleep in `poll` on this pipe (non-exclusive waiters: all woken by a write).
    pub pollers: Vec<TaskId>,
    /// What is buffered: a pipe's ring of pages or a socket's queue of skbs.
    pub buf: Buffer,
    /// Readers blocked on an empty pipe (a pipe wakes one at a time: exclusive waits, ≥5.5;
    /// a socket wakes them all).
    pub readers: VecDeque<TaskId>,
    /// Writers blocked on a full pipe (a pipe wakes one at a time and each wakes the next
    /// while room is left; a socket wakes them all).
    pub writers: VecDeque<TaskId>,
}

/// A pipe's or a socket's buffer.
pub(crate) enum Buffer {
    Pipe(PipeRing),
    Socket(UnixStream),
}

impl Pipe {
    /// Nothing to read (`pipe_empty`; an empty `sk_receive_queue`).
    pub fn is_empty(&self) -> bool {
        match &self.buf {
            Buffer::Pipe(r) => r.is_empty(),
            Buffer::Socket(s) => s.is_empty(),
        }
    }

    /// Bytes buffered for readers.
    pub fn bytes(&self) -> u64 {
        match &self.buf {
            Buffer::Pipe(r) => r.bytes(),
            Buffer::Socket(s) => s.bytes(),
        }
    }
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

/// A queued waiter (`struct futex_q`): its place in the bucket's plist is `(rank, seq)`.
#[derive(Clone, Debug)]
pub(crate) struct FutexQ {
    pub key: FutexKey,
    pub task: TaskId,
    /// Plist priority: deadline (−1) and real-time waiters by priority (0..=99), then VIP
    /// (100), then normal (101), FIFO within a rank (`core.c:__futex_queue`, v6.x; VIP:
    /// `docs/futex.md`).
    pub rank: i32,
    pub seq: u64,
    /// When it queued (the VIP starvation guard compares against it).
    pub since: Ns,
    /// A `FUTEX_LOCK_PI` waiter (plain wakes skip it, as `futex_wake` refuses PI waiters).
    pub pi: bool,
}

/// Per-task futex state.
#[derive(Clone, Debug, Default)]
pub(crate) struct FutexTask {
    /// The futex it is queued on.
    pub waiting: Option<FutexKey>,
    /// VIP treatment inherited from a VIP waiting on a lock it holds.
    pub vip_inherited: bool,
    /// The priority a PI boost gives it (`p->pi_top_task`'s prio), if better than its own.
    pub pi_boost: Option<i32>,
    /// The PI futex words it owns.
    pub pi_held: Vec<usize>,
}

/// What the futex paths did (reported as `kernel.*` counters when non-zero).
#[derive(Clone, Debug, Default)]
pub(crate) struct FutexStats {
    pub swaps: u64,
    pub direct_switches: u64,
    pub direct_fallbacks: u64,
    pub vip_jumps: u64,
    pub vip_guarded: u64,
    pub vip_inherits: u64,
    pub pi_boosts: u64,
    pub requeued: u64,
    /// Futex waits of tasks with `vip = true` that ended in a wakeup (whether VIP queueing
    /// is on or off): how many, total and longest, and how many lasted over 100 / 200 ms.
    pub vip_waits: u64,
    pub vip_wait_ns: u64,
    pub vip_wait_max_ns: u64,
    pub vip_waits_over_100ms: u64,
    pub vip_waits_over_200ms: u64,
    /// `timer` operations run, and those that found their period already over (the work
    /// of the previous period ended late: a missed frame).
    pub timers: u64,
    pub timer_overruns: u64,
}

impl FutexStats {
    /// A VIP task's futex wait of `ns` ended.
    pub fn vip_waited(&mut self, ns: u64) {
        self.vip_waits += 1;
        self.vip_wait_ns += ns;
        self.vip_wait_max_ns = self.vip_wait_max_ns.max(ns);
        self.vip_waits_over_100ms += u64::from(ns > 100_000_000);
        self.vip_waits_over_200ms += u64::from(ns > 200_000_000);
    }
}

pub(crate) struct Objects {
    pub pipes: Vec<Pipe>,
    pub mutexes: Vec<Mutex>,
    pub conds: Vec<Cond>,
    pub barriers: Vec<Barrier>,
    /// `[[futex]]` words' values.
    pub words: Vec<u32>,
    /// `futex_queues`: per bucket, the waiters in plist order (`FutexQ::rank`, then FIFO).
    pub buckets: BTreeMap<usize, Vec<FutexQ>>,
    /// Per task (grown on demand).
    pub ftasks: Vec<FutexTask>,
    /// The owner of each held PI futex word.
    pub pi_owner: BTreeMap<usize, TaskId>,
    /// Queueing order of waiters (FIFO within a plist priority).
    pub seq: u64,
    pub stats: FutexStats,
    /// rt-app timers shared by every task naming them: the next expiry, once first used.
    pub shared_timers: Vec<Option<Ns>>,
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
                    buf: if p.socket {
                        Buffer::Socket(UnixStream::new(p.capacity))
                    } else {
                        Buffer::Pipe(PipeRing::new(p.capacity))
                    },
                    readers: VecDeque::new(),
                    writers: VecDeque::new(),
                })
                .collect(),
            shared_timers: vec![None; wl.timers.len()],
            mutexes: wl.mutexes.iter().map(|_| Mutex::default()).collect(),
            conds: wl.conds.iter().map(|_| Cond::default()).collect(),
            barriers: wl
                .barriers
                .iter()
                .map(|b| Barrier { parties: b.parties, arrived: 0, gen: 0, spinners: Vec::new() })
                .collect(),
            words: wl.futexes.iter().map(|f| f.init).collect(),
            buckets: BTreeMap::new(),
            ftasks: Vec::new(),
            pi_owner: BTreeMap::new(),
            seq: 0,
            stats: FutexStats::default(),
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
            FutexKey::Word(i) => u64::from(self.words[i]),
        }
    }

    /// `hash_futex`: a synthetic user address per word, mixed into a bucket index.
    pub fn bucket(&self, key: FutexKey) -> usize {
        let addr: u64 = match key {
            FutexKey::Mutex(i) => 0x1000_0000 + 64 * i as u64,
            FutexKey::Cond(i) => 0x4000_0000 + 64 * i as u64,
            FutexKey::Barrier(i) => 0x7000_0000 + 64 * i as u64,
            FutexKey::Word(i) => 0xa000_0000 + 4 * i as u64,
        };
        // splitmix64 finaliser: a well-mixed, platform-independent stand-in for jhash2.
        let mut z = addr.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z as usize) & (self.nbuckets - 1)
    }

    /// Task `t`'s futex state, grown on first use.
    pub fn ft(&mut self, t: TaskId) -> &mut FutexTask {
        if self.ftasks.len() <= t {
            self.ftasks.resize(t + 1, FutexTask::default());
        }
        &mut self.ftasks[t]
    }

    /// Task `t`'s futex state, read-only (the default for a task never seen).
    pub fn ft_ref(&self, t: TaskId) -> Option<&FutexTask> {
        self.ftasks.get(t)
    }
}
