//! Discrete-event simulation primitives shared by every schedlab crate.
//!
//! * [`Ns`]: simulated time and durations, integer nanoseconds (the kernel's `u64` clock).
//! * [`EventQueue`]: a min-heap ordered by `(time, sequence number)`, so two events at the
//!   same instant always pop in the order they were scheduled.
//! * [`RngStreams`]: one root seed split into named, independent ChaCha8 streams.
//!
//! Architecture Invariant: nothing in this crate reads the wall clock or the OS's entropy;
//! `rand` is compiled without `getrandom`.

#![forbid(unsafe_code)]

mod diag;
mod queue;
mod rng;
mod time;

pub use diag::{line_col, line_of, line_starts, SourceError};
pub use queue::EventQueue;
pub use rng::{Distribution, RngStreams, SimRng};
pub use time::{parse_duration, Ns, NSEC_PER_MSEC, NSEC_PER_SEC, NSEC_PER_USEC};

/// Dense task identifier (index into the kernel's task table).
pub type TaskId = usize;
/// Dense CPU identifier (Linux's logical CPU number).
pub type CpuId = usize;

/// 64-bit FNV-1a over bytes: seeds the named random streams (stable across platforms and runs).
#[derive(Clone, Copy, Debug)]
pub struct Fnv64(pub u64);

impl Default for Fnv64 {
    fn default() -> Self {
        Fnv64(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv64 {
    pub fn write_u64(&mut self, v: u64) {
        for b in v.to_le_bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// The event-trace hash: one multiply-xorshift round per 64-bit word (stable across
/// platforms and runs). It runs several times per simulated event, so it mixes whole words
/// rather than FNV-1a's eight bytes; it detects divergence, it is not cryptographic.
#[derive(Clone, Copy, Debug)]
pub struct TraceHash(pub u64);

impl Default for TraceHash {
    fn default() -> Self {
        TraceHash(0xcbf2_9ce4_8422_2325)
    }
}

impl TraceHash {
    #[inline]
    pub fn write_u64(&mut self, v: u64) {
        let h = (self.0 ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = h ^ (h >> 29);
    }
}

#[cfg(test)]
mod tests {
    use super::TraceHash;
    #[test]
    fn trace_hash_depends_on_order_and_every_bit() {
        let h = |words: &[u64]| {
            let mut t = TraceHash::default();
            words.iter().for_each(|&w| t.write_u64(w));
            t.0
        };
        assert_ne!(h(&[1, 2]), h(&[2, 1]));
        for bit in 0..64 {
            assert_ne!(h(&[0, 7]), h(&[1 << bit, 7]), "bit {bit}");
            assert_ne!(h(&[7, 0]), h(&[7, 1 << bit]), "bit {bit}");
        }
    }
}
