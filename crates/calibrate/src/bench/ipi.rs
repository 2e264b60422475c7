//! Inter-processor interrupts, measured with `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`:
//! the kernel (`kernel/sched/membarrier.c: membarrier_private_expedited`) sends an IPI to
//! every other CPU currently running a thread of this process and waits until each has run
//! the handler. Timed with a thread of ours spinning on another CPU, and again without, the
//! difference is one IPI's delivery plus its (empty) handler.

use super::{check, enter, median, now_ns, BenchResult, Measured, Reps};
use std::sync::atomic::{AtomicU32, Ordering};

const REPS: Reps = Reps { quick: 9, normal: 61 };
const BATCH: u64 = 20;
const B: &str = "membarrier IPI";
// `include/uapi/linux/membarrier.h`.
const CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
const CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

fn membarrier(cmd: libc::c_long) -> libc::c_long {
    // SAFETY: membarrier takes two integers and touches no user memory.
    unsafe { libc::syscall(libc::SYS_membarrier, cmd, 0, 0) }
}

fn time_batches(reps: usize) -> BenchResult<Measured> {
    let mut samples = Vec::new();
    for _ in 0..reps {
        let t0 = now_ns();
        for _ in 0..BATCH {
            check(B, "membarrier", membarrier(CMD_PRIVATE_EXPEDITED))?;
        }
        samples.push((now_ns() - t0) / BATCH);
    }
    Ok(median(samples).expect("at least one repetition"))
}

/// (with a spinner on `other`, alone) per-call times; `None` if membarrier is unavailable.
pub fn membarrier_ipi(quick: bool, cpu: usize, other: usize) -> BenchResult<Option<(Measured, Measured)>> {
    if membarrier(CMD_REGISTER_PRIVATE_EXPEDITED) < 0 {
        return Ok(None);
    }
    let reps = REPS.get(quick);
    let stop = AtomicU32::new(0);
    let started = AtomicU32::new(0);
    let busy = std::thread::scope(|s| {
        let spinner = s.spawn(|| -> BenchResult<()> {
            enter(B, other)?;
            started.store(1, Ordering::Release);
            while stop.load(Ordering::Acquire) == 0 {
                std::hint::spin_loop();
            }
            Ok(())
        });
        let res = s
            .spawn(|| {
                enter(B, cpu)?;
                super::wait_for(&started, 1, 100_000_000);
                time_batches(reps)
            })
            .join()
            .expect("benchmark thread does not panic");
        stop.store(1, Ordering::Release);
        spinner.join().expect("spinner does not panic").and(res)
    })?;
    let alone = std::thread::scope(|s| {
        s.spawn(|| {
            enter(B, cpu)?;
            time_batches(reps)
        })
        .join()
        .expect("benchmark thread does not panic")
    })?;
    Ok(Some((busy, alone)))
}
