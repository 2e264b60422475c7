//! Cache-line transfers between two CPUs: two threads take turns incrementing one counter
//! (each waits, spinning, for the value it may increment), so every increment moves the
//! line from the other CPU's cache in the Modified state — the transfer `[lines]` charges
//! (the core-to-core benchmark of `nviennot/core-to-core-latency`, one line, no atomics
//! beyond the store).

use super::{enter, median, now_ns, BenchResult, Measured, Reps};
use std::sync::atomic::{AtomicU64, Ordering};

const REPS: Reps = Reps { quick: 9, normal: 61 };
/// Hand-offs per repetition: long enough that the two clock reads vanish, short enough that
/// a preemption of either thread spoils few repetitions.
const HANDOFFS: u64 = 2_000;
const B: &str = "cache-line transfer";

/// A 64-byte-aligned counter, alone in its line.
#[repr(align(128))]
struct Line(AtomicU64);

/// A thread that fails writes this, so that the other stops waiting.
const ABORT: u64 = u64::MAX;

/// Spins until the counter holds `want`; false if the other thread aborted.
fn wait_value(line: &Line, want: u64) -> bool {
    loop {
        match line.0.load(Ordering::Acquire) {
            v if v == want => return true,
            ABORT => return false,
            _ => std::hint::spin_loop(),
        }
    }
}

fn aborted() -> super::BenchError {
    super::BenchError { bench: B, what: "hand-off", err: std::io::Error::other("the other thread failed") }
}

/// One transfer between `a` and `b`: the median over repetitions of a repetition's time
/// divided by its hand-offs (each hand-off is one line transfer: the waiter's read miss
/// brings the line over, its store finds it exclusive).
pub fn transfer(quick: bool, a: usize, b: usize) -> BenchResult<Measured> {
    let line = Line(AtomicU64::new(0));
    let reps = REPS.get(quick) as u64;
    let total = (reps + 1) * HANDOFFS;
    std::thread::scope(|s| {
        // The echo thread increments odd values to even ones.
        let echo = s.spawn(|| -> BenchResult<()> {
            if let Err(e) = enter(B, b) {
                line.0.store(ABORT, Ordering::Release);
                return Err(e);
            }
            let mut next = 1;
            while next < total {
                if !wait_value(&line, next) {
                    return Err(aborted());
                }
                line.0.store(next + 1, Ordering::Release);
                next += 2;
            }
            Ok(())
        });
        let res = s
            .spawn(|| -> BenchResult<Measured> {
                if let Err(e) = enter(B, a) {
                    line.0.store(ABORT, Ordering::Release);
                    return Err(e);
                }
                let mut samples = Vec::new();
                let mut v = 0;
                for rep in 0..=reps {
                    let t0 = now_ns();
                    for _ in 0..HANDOFFS / 2 {
                        if !wait_value(&line, v) {
                            return Err(aborted());
                        }
                        line.0.store(v + 1, Ordering::Release);
                        v += 2;
                    }
                    if rep > 0 {
                        samples.push((now_ns() - t0) / HANDOFFS);
                    }
                }
                // The echo thread's last hand-off.
                if !wait_value(&line, total) {
                    return Err(aborted());
                }
                Ok(median(samples).expect("at least one repetition"))
            })
            .join()
            .expect("benchmark thread does not panic");
        let echoed = echo.join().expect("echo thread does not panic");
        res.and_then(|m| echoed.map(|()| m))
    })
}
