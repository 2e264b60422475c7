//! Discrete-event simulation primitives shared by every schedlab crate.
//!
//! * [`Ns`]: simulated time and durations, integer nanoseconds (the kernel's `u64` clock).
//! * [`EventQueue`]: a min-heap ordered by `(time, sequence number)`, so two events at the
//!   same instant always pop in the order they were scheduled.
//! * [`RngStreams`]: one root seed split into named, independent ChaCha8 streams.
//!
//! Architecture Invariant: nothing in this crate reads the wall clock or the OS's entropy;
//! `rand` is compiled without `getrandom`.

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

/// 64-bit FNV-1a, used for the event-trace hash (stable across platforms and runs).
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
