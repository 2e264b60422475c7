//! Syscalls that do not block: the null syscall, pipe write+read, `sched_yield` alone on a
//! CPU, and `futex_wake` with no waiter. Each repetition times a batch and divides.

use super::{check, enter, median, now_ns, os, BenchResult, Measured, Reps};
use std::os::fd::AsRawFd;
use std::sync::atomic::AtomicU32;

const REPS: Reps = Reps { quick: 15, normal: 101 };
const BATCH: u64 = 200;
/// Bytes per write in the copy-cost measurement (well under the 64 KiB pipe capacity).
pub const PIPE_BIG: u64 = 16_384;

/// Times `BATCH` calls of `f` per repetition; the median per-call time.
fn per_call(quick: bool, batch: u64, mut f: impl FnMut() -> BenchResult<()>) -> BenchResult<Measured> {
    for _ in 0..batch {
        f()?; // warm-up
    }
    let mut samples = Vec::new();
    for _ in 0..REPS.get(quick) {
        let t0 = now_ns();
        for _ in 0..batch {
            f()?;
        }
        samples.push((now_ns() - t0) / batch);
    }
    Ok(median(samples).expect("at least one repetition"))
}

/// Runs `f` in a benchmark thread on `cpu`.
fn on_cpu<T: Send>(cpu: usize, f: impl FnOnce() -> BenchResult<T> + Send) -> BenchResult<T> {
    std::thread::scope(|s| {
        s.spawn(|| {
            enter("syscall", cpu)?;
            f()
        })
        .join()
        .expect("benchmark thread does not panic")
    })
}

/// `getppid()`: syscall entry and exit with no work.
pub fn null_syscall(quick: bool, cpu: usize) -> BenchResult<Measured> {
    on_cpu(cpu, || {
        per_call(quick, BATCH, || {
            // SAFETY: getppid has no arguments and cannot fail.
            unsafe { libc::syscall(libc::SYS_getppid) };
            Ok(())
        })
    })
}

/// One `write` of `bytes` and one `read` of them back, on a pipe, by one thread.
pub fn pipe_write_read(quick: bool, cpu: usize, bytes: u64) -> BenchResult<Measured> {
    on_cpu(cpu, || pipe_write_read_here(quick, bytes))
}

fn pipe_write_read_here(quick: bool, bytes: u64) -> BenchResult<Measured> {
    const B: &str = "pipe write+read";
    let (r, w) = os(B, "pipe", nix::unistd::pipe())?;
    let buf = vec![7u8; bytes as usize];
    let mut back = vec![0u8; bytes as usize];
    let batch = if bytes > 1 { BATCH / 10 } else { BATCH };
    per_call(quick, batch, || {
        // SAFETY: valid fds and buffers of `bytes` bytes; a pipe this empty never blocks.
        let n = unsafe { libc::write(w.as_raw_fd(), buf.as_ptr().cast(), buf.len()) };
        check(B, "write", n as libc::c_long)?;
        // SAFETY: as above.
        let n = unsafe { libc::read(r.as_raw_fd(), back.as_mut_ptr().cast(), back.len()) };
        check(B, "read", n as libc::c_long).map(|_| ())
    })
}

/// `sched_yield()` on a CPU where the caller is (normally) the only runnable task: syscall
/// plus a `schedule()` that picks the caller again.
pub fn yield_alone(quick: bool, cpu: usize) -> BenchResult<Measured> {
    on_cpu(cpu, || {
        per_call(quick, BATCH, || {
            // SAFETY: no arguments.
            unsafe { libc::sched_yield() };
            Ok(())
        })
    })
}

/// `sched_yield()` by two threads on one CPU, taking turns: each call is the syscall, the
/// yield, and a `schedule()` that switches to the other thread (lmbench's `lat_ctx` with
/// no data). Per call, over both threads.
pub fn yield_pair(quick: bool, cpu: usize) -> BenchResult<Measured> {
    let stop = std::sync::atomic::AtomicBool::new(false);
    let other = || -> BenchResult<()> {
        enter("sched_yield pair", cpu)?;
        while !stop.load(std::sync::atomic::Ordering::Acquire) {
            // SAFETY: no arguments.
            unsafe { libc::sched_yield() };
        }
        Ok(())
    };
    std::thread::scope(|s| {
        let h = s.spawn(other);
        // The timed thread times batches of its own calls; each lets the other run one.
        let r = on_cpu(cpu, || {
            let m = per_call(quick, BATCH, || {
                // SAFETY: no arguments.
                unsafe { libc::sched_yield() };
                Ok(())
            })?;
            Ok(Measured { median: m.median / 2, ..m })
        });
        stop.store(true, std::sync::atomic::Ordering::Release);
        h.join().expect("yielding thread does not panic")?;
        r
    })
}

/// `futex(FUTEX_WAKE_PRIVATE)` on a word nobody waits on: syscall, hashing, bucket lock.
pub fn futex_wake_none(quick: bool, cpu: usize) -> BenchResult<Measured> {
    on_cpu(cpu, || {
        let word = AtomicU32::new(0);
        per_call(quick, BATCH, || check("futex_wake", "futex", super::futex_wake(&word, 1)).map(|_| ()))
    })
}
