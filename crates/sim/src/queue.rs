use crate::Ns;

/// Which lane of the [`EventQueue`] an event goes to: events of one CPU share a lane.
/// Lanes only make the queue cheaper; they never change the pop order.
pub trait Lane {
    fn lane(&self) -> usize;
}

/// `(time, seq)` as one integer: a single comparison orders two entries.
#[inline]
fn key(time: Ns, seq: u64) -> u128 {
    (u128::from(time.0) << 64) | u128::from(seq)
}

/// The key of an empty lane: above every real key (`seq` never reaches `u64::MAX`).
const EMPTY: u128 = u128::MAX;

struct Entry<E> {
    key: u128,
    event: E,
}

/// A node of the winner tree: the earliest key below it and its lane.
#[derive(Clone, Copy)]
struct Node {
    key: u128,
    lane: u32,
}

/// The simulation's single event queue.
///
/// Architecture Invariant: events pop in `(time, seq)` order, where `seq` is the order of
/// scheduling; ties are therefore broken deterministically, never by heap layout. The one
/// way two pending events share a `(time, seq)` is a CPU's clock event re-armed with its
/// timer's reserved number while the stale one is pending (`hrtimer.rs`): both are in that
/// CPU's lane, and they pop in push order. (The binary heap this replaced popped such a
/// pair in heap-layout order, so the trace hash of a run with one may differ from before;
/// nothing else in the run does.)
///
/// Layout: one short sorted list per lane (a CPU's few pending events: its work's end, its
/// tick, its clock event, stale ones of each; the earliest last) and a winner tree over
/// the lanes' earliest keys. A pop takes the root's lane, pops the end of its list and
/// replays one leaf-to-root path: O(log lanes) comparisons of one integer each, where a
/// single binary heap of every event moved 40-byte entries through log(all events) levels
/// twice on every pop. A push appends to its lane (usually its earliest event: a CPU's
/// next work ends before its tick) and climbs the tree only while it is the earliest.
pub struct EventQueue<E> {
    /// Per lane, its events by descending key (the earliest at the end).
    lanes: Vec<Vec<Entry<E>>>,
    /// Winner tree: node `j` (root 1) holds the earliest key below it; leaf `width + i`
    /// holds lane `i`'s earliest ([`EMPTY`] if none).
    nodes: Vec<Node>,
    width: usize,
    len: usize,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::with_lanes(1)
    }
}

impl<E> EventQueue<E> {
    /// A queue with room for lanes `0..n` (more are added when an event names one).
    pub fn with_lanes(n: usize) -> Self {
        let mut q = EventQueue { lanes: Vec::new(), nodes: Vec::new(), width: 0, len: 0, next_seq: 0 };
        q.grow(n.max(1));
        q
    }

    /// Makes room for lanes `0..n` and rebuilds the tree.
    #[cold]
    fn grow(&mut self, n: usize) {
        self.lanes.resize_with(n, Vec::new);
        let width = n.next_power_of_two();
        self.width = width;
        self.nodes = vec![Node { key: EMPTY, lane: 0 }; 2 * width];
        for i in 0..width {
            let key = self.lanes.get(i).and_then(|l| l.last()).map_or(EMPTY, |e| e.key);
            self.nodes[width + i] = Node { key, lane: i as u32 }; // lanes ≤ CPUs
        }
        for j in (1..width).rev() {
            let (a, b) = (self.nodes[2 * j], self.nodes[2 * j + 1]);
            self.nodes[j] = if b.key < a.key { b } else { a };
        }
    }

    /// Lane `lane`'s earliest key is now `key`: replays its path to the root.
    #[inline]
    fn replay(&mut self, lane: usize, key: u128) {
        let mut j = self.width + lane;
        let mut cur = Node { key, lane: lane as u32 };
        self.nodes[j] = cur;
        while j > 1 {
            let sib = self.nodes[j ^ 1];
            if sib.key < cur.key {
                cur = sib;
            }
            j >>= 1;
            self.nodes[j] = cur;
        }
    }

    /// Lane `lane`'s earliest key fell to `key`: it wins up to the first node already
    /// holding an earlier one (nothing above that changes).
    #[inline]
    fn lower(&mut self, lane: usize, key: u128) {
        let mut j = self.width + lane;
        let cur = Node { key, lane: lane as u32 };
        self.nodes[j] = cur;
        while j > 1 {
            j >>= 1;
            if self.nodes[j].key < key {
                return;
            }
            self.nodes[j] = cur;
        }
    }

    #[inline]
    fn insert(&mut self, lane: usize, key: u128, event: E) {
        if lane >= self.lanes.len() {
            self.grow(lane + 1);
        }
        self.len += 1;
        let v = &mut self.lanes[lane];
        // Equal keys (a clock event re-armed with its timer's reserved number after a
        // stale one) pop in push order: the new entry goes before (below) the old.
        let mut i = v.len();
        while i > 0 && v[i - 1].key <= key {
            i -= 1;
        }
        if i == v.len() {
            v.push(Entry { key, event });
            self.lower(lane, key);
        } else {
            v.insert(i, Entry { key, event });
        }
    }

    /// Takes the next sequence number without scheduling anything: an event pushed later
    /// with it ([`EventQueue::push_seq`]) is ordered as if it had been pushed now.
    pub fn reserve_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }
    /// Takes `n` consecutive sequence numbers at once and returns the first: `n` events
    /// pushed later with them, one after another ([`EventQueue::push_seq`]), pop in the order
    /// they would have had if all had been pushed now. This lets a long series of events at
    /// one time keep a single entry in the queue (the next is pushed when one pops).
    pub fn reserve_seqs(&mut self, n: u64) -> u64 {
        let seq = self.next_seq;
        self.next_seq += n;
        seq
    }
    pub fn pop(&mut self) -> Option<(Ns, E)> {
        let root = self.nodes[1];
        if root.key == EMPTY {
            return None;
        }
        let lane = root.lane as usize;
        let v = &mut self.lanes[lane];
        let e = v.pop().expect("a lane with a key has an entry");
        let next = v.last().map_or(EMPTY, |n| n.key);
        self.replay(lane, next);
        self.len -= 1;
        Some((Ns((e.key >> 64) as u64), e.event))
    }
    pub fn peek_time(&self) -> Option<Ns> {
        let k = self.nodes[1].key;
        (k != EMPTY).then_some(Ns((k >> 64) as u64))
    }
    /// Every pending event, in no particular order (for order-independent questions only).
    pub fn iter(&self) -> impl Iterator<Item = (Ns, &E)> {
        self.lanes.iter().flat_map(|l| l.iter()).map(|e| (Ns((e.key >> 64) as u64), &e.event))
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<E: Lane> EventQueue<E> {
    pub fn push(&mut self, time: Ns, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.insert(event.lane(), key(time, seq), event);
    }
    /// Schedules `event` with a sequence number from [`EventQueue::reserve_seq`].
    pub fn push_seq(&mut self, time: Ns, seq: u64, event: E) {
        debug_assert!(seq < self.next_seq);
        self.insert(event.lane(), key(time, seq), event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    impl Lane for char {
        fn lane(&self) -> usize {
            *self as usize % 3
        }
    }
    impl Lane for u64 {
        fn lane(&self) -> usize {
            (*self % 5) as usize
        }
    }
    impl Lane for (i32, i32) {
        fn lane(&self) -> usize {
            self.0 as usize
        }
    }
    #[test]
    fn ties_pop_in_push_order() {
        let mut q = EventQueue::default();
        q.push(Ns(5), 'a');
        q.push(Ns(3), 'b');
        q.push(Ns(5), 'c');
        q.push(Ns(3), 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
    }

    /// Interleaved pushes and pops come out in `(time, seq)` order, as a sort would give.
    #[test]
    fn pops_in_time_then_push_order_under_interleaving() {
        let mut q = EventQueue::default();
        let mut reference = Vec::new();
        let mut x = 12345u64;
        let mut popped = Vec::new();
        let mut expected = Vec::new();
        for i in 0..5000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let t = Ns((x >> 33) % 500);
            q.push(t, i);
            reference.push((t, i));
            if x.is_multiple_of(3) {
                reference.sort();
                expected.push(reference.remove(0));
                popped.push(q.pop().unwrap());
            }
        }
        reference.sort();
        expected.extend(reference);
        popped.extend(std::iter::from_fn(|| q.pop()));
        assert_eq!(popped, expected);
    }
    /// Entries of one lane with one `(time, seq)` (a CPU's clock event re-armed with its
    /// timer's reserved number while its stale twin is pending) pop in push order.
    #[test]
    fn equal_keys_pop_in_push_order() {
        let mut q = EventQueue::default();
        let s = q.reserve_seq();
        q.push_seq(Ns(4), s, (1, 0));
        q.push(Ns(9), (1, 5));
        q.push(Ns(3), (2, 9));
        q.push_seq(Ns(4), s, (1, 1));
        q.push_seq(Ns(4), s, (1, 2));
        q.push_seq(Ns(4), s, (1, 3));
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e.1)).collect();
        assert_eq!(order, vec![9, 0, 1, 2, 3, 5]);
    }
    /// Lanes added while events are pending (a lane beyond the current width) keep the
    /// order: the tree is rebuilt over every lane's earliest key.
    #[test]
    fn lanes_added_while_pending_keep_the_order() {
        let mut q = EventQueue::default();
        let mut expected = Vec::new();
        for i in 0..40u64 {
            let t = Ns((i * 7919) % 13);
            q.push(t, (i as i32, 0)); // lane i: the queue grows at 2, 3, 5, 9, 17, 33
            expected.push((t, (i as i32, 0)));
        }
        expected.sort_by_key(|&(t, e)| (t, e.0)); // seq = push order = lane order here
        assert_eq!(q.len(), 40);
        let popped: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(popped, expected);
        assert!(q.is_empty() && q.peek_time().is_none());
    }
    /// A series queued one at a time with reserved sequence numbers (each pushed when the
    /// previous pops) pops in the same order among other events as the whole series queued
    /// at once: how the kernel starts a template's instances.
    #[test]
    fn reserved_series_pops_as_if_queued_at_once() {
        let run = |lazy: bool| {
            let mut q = EventQueue::default();
            q.push(Ns(2), (0, 0));
            if lazy {
                let s = q.reserve_seqs(3);
                q.push_seq(Ns(2), s, (1, 0));
            } else {
                (0..3).for_each(|i| q.push(Ns(2), (1, i)));
            }
            q.push(Ns(2), (2, 0));
            q.push(Ns(1), (3, 0));
            let mut out = Vec::new();
            let mut seq = 1; // the series' first reserved number (the first push took 0)
            while let Some((t, e)) = q.pop() {
                out.push((t, e));
                if e == (0, 0) {
                    q.push(Ns(2), (4, 0)); // queued while the series is pending: after it
                }
                if lazy && e.0 == 1 && e.1 < 2 {
                    seq += 1;
                    q.push_seq(t, seq, (1, e.1 + 1));
                }
            }
            out
        };
        assert_eq!(run(true), run(false));
        assert_eq!(run(false).iter().map(|&(_, e)| e.0).collect::<Vec<_>>(), vec![3, 0, 1, 1, 1, 2, 4]);
    }
}
