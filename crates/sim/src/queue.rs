//! The event queue: a binary heap ordered by (time, sequence number), so simultaneous
//! events pop in the order they were queued and runs are deterministic.

use crate::Ns;

/// A heap entry: `(time, seq)` packed into one `u128` (time in the high half), so a
/// comparison is a single 128-bit compare and an entry with a 16-byte event is 32 bytes
/// (half a cache line; the heap's sift moves copy whole entries).
#[derive(Clone, Copy)]
struct Entry<E> {
    key: u128,
    event: E,
}

impl<E> Entry<E> {
    #[inline]
    fn new(time: Ns, seq: u64, event: E) -> Self {
        Entry { key: (u128::from(time.0) << 64) | u128::from(seq), event }
    }
    #[inline]
    fn time(&self) -> Ns {
        Ns((self.key >> 64) as u64)
    }
    #[inline]
    fn seq(&self) -> u64 {
        self.key as u64
    }
}

/// The simulation's single event queue.
///
/// Architecture Invariant: events pop in `(time, seq)` order, where `seq` is the order of
/// scheduling; ties are therefore broken deterministically, never by heap layout.
///
/// The earliest entry may wait beside the heap, in `front`, when it was pushed earlier than
/// everything in the heap (a CPU's short kernel step whose completion is the next event):
/// it then pops without a heap round trip. `front`
/// holds an entry only while its key is strictly smaller than every key in the heap, so
/// entries pop in `(time, seq)` order as from the heap alone, and an entry whose key equals
/// one already queued goes to the heap. Of the rare entries sharing one key (`Heap`), the
/// heap's layout decides which pops first, and that layout is not the one the heap alone
/// would have: such a pair (a stale clock event and its live twin) may pop in the other
/// order, which changes the trace hash and nothing else.
pub struct EventQueue<E> {
    front: Option<Entry<E>>,
    heap: Heap<E>,
    next_seq: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self { front: None, heap: Heap { data: Vec::new() }, next_seq: 0 }
    }
}

impl<E: Copy> EventQueue<E> {
    #[inline]
    pub fn push(&mut self, time: Ns, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.insert(Entry::new(time, seq, event));
    }
    /// Queues `e` in `front` if it is earlier than everything queued, else in the heap
    /// (an entry leaving `front` for a yet earlier one goes to the heap).
    #[inline]
    fn insert(&mut self, e: Entry<E>) {
        match self.front {
            Some(f) if e.key < f.key => {
                self.front = Some(e);
                self.heap.push(f);
            }
            Some(_) => self.heap.push(e),
            None if self.heap.data.first().is_none_or(|h| e.key < h.key) => self.front = Some(e),
            None => self.heap.push(e),
        }
    }
    #[inline]
    fn pop_entry(&mut self) -> Option<Entry<E>> {
        match self.front.take() {
            Some(f) => Some(f),
            None => self.heap.pop(),
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
    /// Schedules `event` with a sequence number from [`EventQueue::reserve_seq`].
    pub fn push_seq(&mut self, time: Ns, seq: u64, event: E) {
        debug_assert!(seq < self.next_seq);
        self.insert(Entry::new(time, seq, event));
    }
    #[inline]
    pub fn pop(&mut self) -> Option<(Ns, E)> {
        self.pop_entry().map(|e| (e.time(), e.event))
    }
    /// [`EventQueue::pop`] with the event's sequence number (an event that queues its
    /// successor with the next reserved number needs not carry its own).
    #[inline]
    pub fn pop_with_seq(&mut self) -> Option<(Ns, u64, E)> {
        self.pop_entry().map(|e| (e.time(), e.seq(), e.event))
    }
    #[inline]
    pub fn peek_time(&self) -> Option<Ns> {
        self.front.as_ref().or(self.heap.data.first()).map(|e| e.time())
    }
    pub fn reserve_exact(&mut self, n: usize) {
        self.heap.data.reserve_exact(n);
    }
    /// Every pending event, in no particular order (for order-independent questions only).
    pub fn iter(&self) -> impl Iterator<Item = (Ns, &E)> {
        self.front.iter().chain(&self.heap.data).map(|e| (e.time(), &e.event))
    }
    pub fn len(&self) -> usize {
        self.heap.data.len() + usize::from(self.front.is_some())
    }
    pub fn is_empty(&self) -> bool {
        self.front.is_none() && self.heap.data.is_empty()
    }
}

/// A binary min-heap on `Entry::key`, with exactly the sift steps of the standard library's
/// `BinaryHeap` (a push sifts up; a pop moves the last entry to the root, sifts it down to
/// the bottom along the smaller children, then up), so its layout after any series of
/// operations is the one `BinaryHeap` of reversed keys would have: the rare entries that
/// share one key (a CPU's clock event re-armed with its timer's reserved sequence number
/// while its stale twin is still queued, `hrtimer.rs`) pop in the order they always did.
/// Entries are `Copy` and moved by plain assignment, so the sifts compile to loads and
/// stores without the standard heap's `Option` and hole bookkeeping (the test
/// `layout_matches_std_binary_heap` checks the layouts agree).
struct Heap<E> {
    data: Vec<Entry<E>>,
}

impl<E: Copy> Heap<E> {
    #[inline]
    fn push(&mut self, e: Entry<E>) {
        let pos = self.data.len();
        self.data.push(e);
        self.sift_up(pos, e);
    }

    /// Moves `e` (whose slot is `pos`) up while its parent's key is larger.
    #[inline]
    fn sift_up(&mut self, mut pos: usize, e: Entry<E>) {
        let d = &mut self.data[..];
        while pos > 0 {
            let parent = (pos - 1) / 2;
            if e.key >= d[parent].key {
                break;
            }
            d[pos] = d[parent];
            pos = parent;
        }
        d[pos] = e;
    }

    #[inline]
    fn pop(&mut self) -> Option<Entry<E>> {
        let last = self.data.pop()?;
        if self.data.is_empty() {
            return Some(last);
        }
        let top = self.data[0];
        let d = &mut self.data[..];
        let end = d.len();
        // Down to the bottom along the smaller child (the later one on a tie), as
        // `sift_down_to_bottom` does, then up.
        let mut pos = 0;
        let mut child = 1;
        while child + 1 < end {
            child += usize::from(d[child].key >= d[child + 1].key);
            d[pos] = d[child];
            pos = child;
            child = 2 * pos + 1;
        }
        if child == end - 1 {
            d[pos] = d[child];
            pos = child;
        }
        self.sift_up(pos, last);
        Some(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
    /// The entry waiting in `front` counts in `len`, `iter` and `peek_time`, and leaves it
    /// for the heap when an earlier one arrives.
    #[test]
    fn front_entry_is_queued_like_any_other() {
        let mut q = EventQueue::default();
        q.push(Ns(9), 'a'); // empty queue: waits in front
        assert!(q.front.is_some() && q.heap.data.is_empty());
        q.push(Ns(4), 'b'); // earlier: takes the front, 'a' goes to the heap
        q.push(Ns(7), 'c'); // later than the front: heap
        assert_eq!((q.len(), q.peek_time()), (3, Some(Ns(4))));
        let mut all: Vec<char> = q.iter().map(|(_, &e)| e).collect();
        all.sort();
        assert_eq!(all, vec!['a', 'b', 'c']);
        assert_eq!(q.pop(), Some((Ns(4), 'b')));
        assert!(q.front.is_none());
        q.push(Ns(7), 'd'); // ties the heap's earliest key time but not its seq: heap
        assert!(q.front.is_none());
        q.push(Ns(5), 'e'); // earlier than everything in the heap: front
        assert!(q.front.is_some());
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['e', 'c', 'd', 'a']);
        assert!(q.is_empty());
    }
    /// `pop_with_seq` gives each event the number it was queued with, reserved or not.
    #[test]
    fn pop_with_seq_gives_queue_numbers() {
        let mut q = EventQueue::default();
        q.push(Ns(5), 'a');
        let s = q.reserve_seq();
        q.push(Ns(5), 'b');
        q.push_seq(Ns(5), s, 'c');
        q.push(Ns(4), 'd');
        let out: Vec<_> = std::iter::from_fn(|| q.pop_with_seq()).collect();
        assert_eq!(out, vec![(Ns(4), 3, 'd'), (Ns(5), 0, 'a'), (Ns(5), 1, 'c'), (Ns(5), 2, 'b')]);
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

    /// The heap's layout, and so the pop order of entries sharing a key, is the standard
    /// `BinaryHeap`'s (with keys reversed) after any series of pushes and pops; keys are
    /// drawn from a small range so that ties are frequent.
    #[test]
    fn layout_matches_std_binary_heap() {
        use std::cmp::Ordering;
        use std::collections::BinaryHeap;
        struct Rev(u128, u32);
        impl PartialEq for Rev {
            fn eq(&self, o: &Self) -> bool {
                self.0 == o.0
            }
        }
        impl Eq for Rev {}
        impl PartialOrd for Rev {
            fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
                Some(self.cmp(o))
            }
        }
        impl Ord for Rev {
            fn cmp(&self, o: &Self) -> Ordering {
                o.0.cmp(&self.0)
            }
        }
        let mut std_heap = BinaryHeap::new();
        let mut ours = Heap { data: Vec::new() };
        let mut x = 99u64;
        for i in 0..20_000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if x % 5 < 3 || ours.data.is_empty() {
                let key = u128::from((x >> 40) % 16);
                std_heap.push(Rev(key, i));
                ours.push(Entry { key, event: i });
            } else {
                let a = std_heap.pop().map(|r| (r.0, r.1));
                let b = ours.pop().map(|e| (e.key, e.event));
                assert_eq!(a, b, "pop {i}");
            }
            let layout: Vec<(u128, u32)> = std_heap.as_slice().iter().map(|r| (r.0, r.1)).collect();
            let mine: Vec<(u128, u32)> = ours.data.iter().map(|e| (e.key, e.event)).collect();
            assert_eq!(layout, mine, "after operation {i}");
        }
    }
}
