//! Migration: moving a queued (not running) task to another CPU with `sched_setaffinity`,
//! and the extra time a thread's working set takes to re-warm after it moved.

use super::{check, enter, gettid, median, now_ns, spin_for, BenchResult, Measured, Reps};
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

const REPS: Reps = Reps { quick: 41, normal: 401 };
const REWARM_REPS: Reps = Reps { quick: 11, normal: 61 };

fn set_affinity(tid: i32, cpu: usize) -> libc::c_long {
    // SAFETY: `set` is a valid cpu_set_t; `tid` is a thread of this process.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) as libc::c_long
    }
}

/// `sched_setaffinity` of another thread that is queued but not running, alternately to
/// `a` and `b`: `kernel/sched/core.c: affine_move_task` → `move_queued_task` under both
/// runqueue locks. The mover runs on `a` and a normal spinner holds `b`, so the moved
/// `SCHED_IDLE` spinner waits its turn on either CPU.
pub fn setaffinity_queued(quick: bool, a: usize, b: usize) -> BenchResult<Measured> {
    const B: &str = "sched_setaffinity (queued task)";
    let stop = AtomicU32::new(0);
    let tid = AtomicI32::new(0);
    std::thread::scope(|s| {
        let hog = s.spawn(|| -> BenchResult<()> {
            enter(B, b)?;
            while stop.load(Ordering::Acquire) == 0 {
                std::hint::spin_loop();
            }
            Ok(())
        });
        let moved = s.spawn(|| -> BenchResult<()> {
            enter(B, a)?;
            super::become_sched_idle(B)?;
            tid.store(gettid(), Ordering::Release);
            while stop.load(Ordering::Acquire) == 0 {
                std::hint::spin_loop();
            }
            Ok(())
        });
        let res = s
            .spawn(|| -> BenchResult<Measured> {
                enter(B, a)?;
                while tid.load(Ordering::Acquire) == 0 {
                    super::sleep_ns(50_000);
                }
                let t = tid.load(Ordering::Acquire);
                let mut samples = Vec::new();
                for i in 0..REPS.get(quick) {
                    let to = if i % 2 == 0 { b } else { a };
                    let t0 = now_ns();
                    check(B, "sched_setaffinity", set_affinity(t, to))?;
                    samples.push(now_ns() - t0);
                    spin_for(20_000); // keep `a` busy so the spinner stays queued
                }
                Ok(median(samples).expect("at least one repetition"))
            })
            .join()
            .expect("mover does not panic");
        stop.store(1, Ordering::Release);
        hog.join().expect("hog does not panic")?;
        moved.join().expect("moved thread does not panic")?;
        res
    })
}

/// One pass over `buf` touching every cache line; returns its duration.
fn pass(buf: &[u64]) -> u64 {
    let t0 = now_ns();
    let mut sum = 0u64;
    for chunk in buf.chunks(8) {
        sum = sum.wrapping_add(chunk[0]);
    }
    std::hint::black_box(sum);
    now_ns() - t0
}

/// Re-warm cost of a working set of `bytes` after moving from `a` to `b`: the first pass on
/// the new CPU minus a warm pass. The thread moves itself back and forth.
pub fn rewarm(quick: bool, a: usize, b: usize, bytes: usize) -> BenchResult<Measured> {
    const B: &str = "cache re-warm";
    std::thread::scope(|s| {
        s.spawn(|| -> BenchResult<Measured> {
            enter(B, a)?;
            let buf: Vec<u64> = (0..bytes as u64 / 8).collect();
            let (mut cold, mut warm) = (Vec::new(), Vec::new());
            for i in 0..REWARM_REPS.get(quick) * 2 {
                super::pin(B, if i % 2 == 0 { a } else { b })?;
                cold.push(pass(&buf));
                pass(&buf);
                warm.push(pass(&buf));
            }
            let (c, w) = (median(cold).expect("reps"), median(warm).expect("reps"));
            Ok(Measured { median: c.median.saturating_sub(w.median), reps: c.reps })
        })
        .join()
        .expect("benchmark thread does not panic")
    })
}
