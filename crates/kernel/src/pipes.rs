//! The buffers behind `send` and `recv`: a pipe's ring of page buffers (`fs/pipe.c`) and an
//! `AF_UNIX` stream socket's queue of `sk_buff`s charged to the sender's `sk_wmem_alloc`
//! (`net/unix/af_unix.c`). They decide how much a call moves and when it wakes the other
//! side; who is woken and how is `core.rs`'s `pipe_write` / `pipe_read`.

use schedlab_machine::PAGE_SIZE;
use std::collections::VecDeque;

/// One occupied slot of a pipe's ring (`struct pipe_buffer`: `offset`, `len`).
#[derive(Clone, Copy, Debug)]
struct PipeBuf {
    offset: u64,
    len: u64,
}

/// A pipe's ring of page buffers (`struct pipe_inode_info`: `bufs`, `head`, `tail`,
/// `max_usage`). Fullness and emptiness count slots, not bytes: a pipe of 16 slots that
/// 100-byte writes fill holds 40 of them per page (a write merges into the last page only
/// while it fits whole), 640 in all, not 655.
#[derive(Clone, Debug)]
pub(crate) struct PipeRing {
    bufs: VecDeque<PipeBuf>,
    max_usage: usize,
}

/// What one `anon_pipe_write` pass did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Wrote {
    pub bytes: u64,
    /// The pipe was empty when the pass began (`was_empty`: the readers are woken).
    pub was_empty: bool,
}

/// What one `pipe_read` pass did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Read {
    pub bytes: u64,
    /// A slot was freed while the ring was full (`wake_writer`: one writer is woken).
    pub wake_writer: bool,
}

impl PipeRing {
    /// A ring for a pipe of `capacity` bytes: `round_pipe_size` rounds it up to a power of
    /// two pages, one slot per page (`fs/pipe.c: pipe_set_size`, `alloc_pipe_info`: 16
    /// slots for the default 64 KiB).
    pub fn new(capacity: u64) -> PipeRing {
        let pages = capacity.div_ceil(PAGE_SIZE).max(1).next_power_of_two();
        PipeRing { bufs: VecDeque::new(), max_usage: pages as usize }
    }

    /// `pipe_empty`.
    pub fn is_empty(&self) -> bool {
        self.bufs.is_empty()
    }

    /// `pipe_full`: every slot is taken.
    pub fn is_full(&self) -> bool {
        self.bufs.len() >= self.max_usage
    }

    /// Bytes buffered (`FIONREAD`).
    pub fn bytes(&self) -> u64 {
        self.bufs.iter().map(|b| b.len).sum()
    }

    /// `fs/pipe.c:anon_pipe_write` (v6.18; the same buffer rules since the ring of v2.6.11):
    /// a write's sub-page remainder merges into the last buffer if the pipe is not empty
    /// and it fits whole behind that buffer's data (`PIPE_BUF_FLAG_CAN_MERGE`); the rest
    /// fills fresh pages while slots are free. `merge` is false for a writer resuming after
    /// a wait, which re-enters the kernel's loop past the merge.
    pub fn write(&mut self, want: u64, merge: bool) -> Wrote {
        let was_empty = self.is_empty();
        let mut left = want;
        let chars = want & (PAGE_SIZE - 1);
        if merge && chars != 0 && !was_empty {
            let last = self.bufs.back_mut().expect("not empty");
            if last.offset + last.len + chars <= PAGE_SIZE {
                last.len += chars;
                left -= chars;
            }
        }
        while left > 0 && !self.is_full() {
            let n = left.min(PAGE_SIZE);
            self.bufs.push_back(PipeBuf { offset: 0, len: n });
            left -= n;
        }
        Wrote { bytes: want - left, was_empty }
    }

    /// `fs/pipe.c:anon_pipe_read` (v6.18): take from the tail buffers until the read is
    /// satisfied or the pipe is empty; a buffer read out frees its slot, and freeing one of
    /// a full ring asks for a writer's wakeup.
    pub fn read(&mut self, want: u64) -> Read {
        let mut left = want;
        let mut wake_writer = false;
        while left > 0 {
            let full = self.is_full();
            let Some(buf) = self.bufs.front_mut() else { break };
            let n = buf.len.min(left);
            buf.offset += n;
            buf.len -= n;
            left -= n;
            if buf.len == 0 {
                wake_writer |= full;
                self.bufs.pop_front();
            }
        }
        Read { bytes: want - left, wake_writer }
    }
}

/// `sizeof(struct sk_buff)` after `SKB_DATA_ALIGN` (232 bytes rounded to the 64-byte cache
/// line, x86-64).
const SKB_STRUCT: u64 = 256;
/// `sizeof(struct skb_shared_info)` after `SKB_DATA_ALIGN` (`MAX_SKB_FRAGS` = 17, x86-64).
const SKB_SHINFO: u64 = 320;
/// `SKB_MAX_HEAD(0)`: the largest linear head that fits one page with the shared info.
const SKB_MAX_HEAD: u64 = PAGE_SIZE - SKB_SHINFO;
/// `UNIX_SKB_FRAGS_SZ` (`net/unix/af_unix.c`): at most 32 KiB of page fragments per skb.
const UNIX_SKB_FRAGS_SZ: u64 = 32_768;

/// `skb->truesize` of a stream skb carrying `size` bytes (`net/unix/af_unix.c:
/// unix_stream_sendmsg` splits it into a linear head and page fragments;
/// `net/core/skbuff.c: __alloc_skb` rounds the head plus the shared info up to its kmalloc
/// size, `SKB_TRUESIZE` adds the `sk_buff` and shared info; `alloc_skb_with_frags` adds each
/// fragment's pages). On this host (6.18, x86-64) a 100-byte message costs 768 bytes: 278 of
/// them fill the default 212 992-byte send buffer.
pub(crate) fn skb_truesize(size: u64) -> u64 {
    let paged = size.saturating_sub(SKB_MAX_HEAD).next_multiple_of(PAGE_SIZE).min(size);
    let head = size - paged;
    // The head's kmalloc bucket: with the shared info a head takes at least 320 bytes,
    // where the buckets are the powers of two (`kmalloc_size_roundup`).
    let alloc = (head.next_multiple_of(64) + SKB_SHINFO).next_power_of_two();
    alloc - SKB_SHINFO + SKB_STRUCT + SKB_SHINFO + paged.next_multiple_of(PAGE_SIZE)
}

/// One queued stream skb: bytes not yet read, and what it is charged to the sender.
#[derive(Clone, Copy, Debug)]
struct Skb {
    len: u64,
    truesize: u64,
}

/// An `AF_UNIX` stream connection in one direction: the receiver's `sk_receive_queue` and
/// the sending socket's `sk_wmem_alloc` against its `sk_sndbuf`.
#[derive(Clone, Debug)]
pub(crate) struct UnixStream {
    skbs: VecDeque<Skb>,
    wmem_alloc: u64,
    sndbuf: u64,
}

/// What one `unix_stream_read_generic` pass did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Recv {
    pub bytes: u64,
    /// An skb was freed and the sender became writable (`unix_write_space`: every waiting
    /// writer is woken).
    pub write_space: bool,
}

impl UnixStream {
    pub fn new(sndbuf: u64) -> UnixStream {
        UnixStream { skbs: VecDeque::new(), wmem_alloc: 0, sndbuf }
    }

    pub fn is_empty(&self) -> bool {
        self.skbs.is_empty()
    }

    /// Bytes queued for the reader.
    pub fn bytes(&self) -> u64 {
        self.skbs.iter().map(|s| s.len).sum()
    }

    /// `sock_alloc_send_pskb` would block: the send buffer is used up.
    pub fn is_full(&self) -> bool {
        self.wmem_alloc >= self.sndbuf
    }

    /// `unix_writable`: at most a quarter of the send buffer is in flight.
    fn writable(&self) -> bool {
        self.wmem_alloc * 4 <= self.sndbuf
    }

    /// `net/unix/af_unix.c:unix_stream_sendmsg` (v6.18): skbs of at most half the send
    /// buffer less 64 bytes ("keep two messages in the pipe"), and at most a page's head
    /// plus `UNIX_SKB_FRAGS_SZ`, each allocated while `sk_wmem_alloc < sk_sndbuf`
    /// (`sock_alloc_send_pskb`), queued and announced to the reader (`sk_data_ready`).
    /// Returns the bytes queued; fewer than `want` means the sender must wait for space.
    pub fn send(&mut self, want: u64) -> u64 {
        let max = (self.sndbuf / 2).saturating_sub(64).clamp(1, SKB_MAX_HEAD + UNIX_SKB_FRAGS_SZ);
        let mut left = want;
        while left > 0 && !self.is_full() {
            let n = left.min(max);
            let truesize = skb_truesize(n);
            self.wmem_alloc += truesize;
            self.skbs.push_back(Skb { len: n, truesize });
            left -= n;
        }
        want - left
    }

    /// `net/unix/af_unix.c:unix_stream_read_generic` (v6.18): copy from the queued skbs
    /// until the read is satisfied or the queue is empty; an skb read out is freed
    /// (`consume_skb` → `sock_wfree` → `unix_write_space`).
    pub fn recv(&mut self, want: u64) -> Recv {
        let mut left = want;
        let mut write_space = false;
        while left > 0 {
            let Some(skb) = self.skbs.front_mut() else { break };
            let n = skb.len.min(left);
            skb.len -= n;
            left -= n;
            if skb.len == 0 {
                self.wmem_alloc -= skb.truesize;
                self.skbs.pop_front();
                write_space |= self.writable();
            }
        }
        Recv { bytes: want - left, write_space }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `fs/pipe.c`: 16 slots of 4 KiB by default; 100-byte writes merge 40 to a page
    /// (40 × 100 = 4000 ≤ 4096 < 4100), so 640 fit before the ring is full.
    #[test]
    fn a_default_pipe_holds_640_messages_of_100_bytes() {
        let mut p = PipeRing::new(65_536);
        let mut n = 0;
        while p.write(100, true).bytes == 100 {
            n += 1;
            assert!(n <= 1000, "never full");
        }
        assert_eq!(n, 640);
        assert!(p.is_full());
        assert_eq!(p.bytes(), 64_000);
    }

    /// Only a write into an empty pipe reports `was_empty` (it alone wakes a reader).
    #[test]
    fn only_the_first_write_into_an_empty_pipe_wakes_readers() {
        let mut p = PipeRing::new(65_536);
        assert!(p.write(100, true).was_empty);
        assert!(!p.write(100, true).was_empty);
        assert_eq!(p.read(200), Read { bytes: 200, wake_writer: false });
        assert!(p.write(1, true).was_empty);
    }

    /// `anon_pipe_read`: a writer is woken once per page a reader frees from a full ring,
    /// not once per message read: 39 reads of a full ring of 100-byte messages wake none,
    /// the 40th (which empties the first page) wakes one.
    #[test]
    fn reads_from_a_full_pipe_wake_a_writer_once_per_freed_page() {
        let mut p = PipeRing::new(65_536);
        while p.write(100, true).bytes == 100 {}
        for _ in 0..39 {
            assert_eq!(p.read(100), Read { bytes: 100, wake_writer: false });
        }
        assert_eq!(p.read(100), Read { bytes: 100, wake_writer: true });
        // The ring is no longer full: the next page freed wakes nobody.
        for _ in 0..40 {
            assert!(!p.read(100).wake_writer);
        }
    }

    /// A full ring refuses the whole message (no partial write of a sub-page message), and
    /// a short read returns what is there.
    #[test]
    fn a_full_pipe_takes_nothing_and_a_short_read_returns_what_is_there() {
        let mut p = PipeRing::new(4096);
        assert_eq!(p.write(4000, true).bytes, 4000);
        assert_eq!(p.write(100, true).bytes, 0);
        assert_eq!(p.read(10_000), Read { bytes: 4000, wake_writer: true });
        // Large writes fill whole pages, several slots each: 4096 + 4096 + 1808; the next
        // write's sub-page remainder (1808) merges behind the last page's 1808 bytes, then
        // the last free slot takes a page of the rest.
        let mut q = PipeRing::new(16_384);
        assert_eq!(q.write(10_000, true).bytes, 10_000);
        assert_eq!(q.write(10_000, true).bytes, 1808 + 4096);
        assert!(q.is_full());
    }

    /// `pipe_set_size` rounds a capacity up to a power of two pages.
    #[test]
    fn capacities_round_up_to_a_power_of_two_pages() {
        assert_eq!(PipeRing::new(1).max_usage, 1);
        assert_eq!(PipeRing::new(4097).max_usage, 2);
        assert_eq!(PipeRing::new(3 * 4096).max_usage, 4);
        assert_eq!(PipeRing::new(65_536).max_usage, 16);
    }

    /// Measured on this host (Linux 6.18, x86-64, a non-blocking `socketpair` filled until
    /// `EAGAIN`): 278 messages of 1 or 100 bytes, 93 of 1000, 49 of 3000, 44 of 4000, 24 of
    /// 8000 fill the default 212 992-byte send buffer; `skb_truesize` must reproduce each.
    #[test]
    fn skb_truesize_fills_the_send_buffer_as_this_kernel_does() {
        for (size, fit) in [(1, 278), (100, 278), (1000, 93), (3000, 49), (4000, 44), (8000, 24)] {
            let mut s = UnixStream::new(212_992);
            let mut n = 0;
            while !s.is_full() {
                assert_eq!(s.send(size), size);
                n += 1;
            }
            assert_eq!(n, fit, "{size}-byte messages");
        }
        assert_eq!(skb_truesize(100), 768);
    }

    /// `unix_write_space`: freed skbs wake the writers only once at most a quarter of the
    /// send buffer is in flight — the sender blocks at 278 queued 100-byte messages and is
    /// woken when 69 remain (69 × 768 ≤ 53 248 < 70 × 768).
    #[test]
    fn socket_writers_wake_at_a_quarter_of_the_send_buffer() {
        let mut s = UnixStream::new(212_992);
        while !s.is_full() {
            s.send(100);
        }
        let mut reads = 0;
        while !s.recv(100).write_space {
            reads += 1;
        }
        assert_eq!(278 - reads - 1, 69);
        assert_eq!(s.bytes(), 6900);
    }

    /// A read takes what is queued across skbs and returns short when the queue empties.
    #[test]
    fn a_socket_read_spans_skbs_and_returns_short() {
        let mut s = UnixStream::new(212_992);
        s.send(100);
        s.send(100);
        assert_eq!(s.recv(150).bytes, 150);
        assert_eq!(s.recv(150).bytes, 50);
        assert!(s.is_empty());
        // Half the send buffer less 64 bytes per skb: 4032 + 968 bytes.
        let mut t = UnixStream::new(8192);
        assert_eq!(t.send(5000), 5000);
        assert_eq!(t.skbs.len(), 2);
        // A send that finds the buffer used up queues nothing.
        assert_eq!(t.send(5000), 4032);
        assert!(t.is_full());
        assert_eq!(t.send(1), 0);
    }
}
