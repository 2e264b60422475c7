//! Futex wakeups: how long the waker's `futex_wake` takes when it wakes a waiter on its own
//! CPU or on another, and how long the woken thread takes to run (from the waker's call to
//! the wakee's first instruction back in user space).

use super::{check, enter, futex_wake, median, now_ns, sleep_ns, BenchError, BenchResult, Measured};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Where the wakee waits and how the waker treats it.
#[derive(Clone, Copy, Debug)]
pub struct WakeSetup {
    pub waker_cpu: usize,
    pub wakee_cpu: usize,
    /// Idle time the waker leaves before each wakeup (the wakee's CPU idles that long if it
    /// is another CPU and nothing else runs there).
    pub gap_ns: u64,
    /// Keep the wakee's CPU busy with a `SCHED_IDLE` spinner, which the wakee preempts: the
    /// wakeup then needs a reschedule IPI instead of an idle exit.
    pub busy_target: bool,
    /// Spin through the gap instead of sleeping: the waker's CPU stays busy, so only the
    /// wakee's CPU idles, for as long as the gap (the idle-exit-by-length benchmark).
    pub spin_gap: bool,
    pub reps: usize,
}

/// The waker's syscall time and the wakee's wakeup latency (medians).
#[derive(Clone, Copy, Debug)]
pub struct WakeTimes {
    pub waker_syscall: Measured,
    pub latency: Measured,
}

#[derive(Default)]
struct Shared {
    word: AtomicU32,
    armed: AtomicU32,
    stamp: AtomicU64,
    stop: AtomicU32,
}

const B: &str = "futex wakeup";
/// Generous: a SCHED_IDLE wakee on a loaded host can wait long for its CPU; this only
/// detects a wakee that never runs.
const TIMEOUT_NS: u64 = 2_000_000_000;
/// Busy time of the waker before each timed wakeup.
const WARM_NS: u64 = 20_000;

/// Sleeps in 20 µs steps until `cond` holds (sleeping, not spinning, so that a wakee pinned
/// to the waker's CPU can run).
fn sleep_until(cond: impl Fn() -> bool) -> BenchResult<()> {
    let end = now_ns() + TIMEOUT_NS;
    while !cond() {
        if now_ns() > end {
            let err = std::io::Error::new(std::io::ErrorKind::TimedOut, "the wakee did not respond in 2 s");
            return Err(BenchError { bench: B, what: "wait for the wakee", err });
        }
        sleep_ns(20_000);
    }
    Ok(())
}

/// The wakee: announce, wait on the futex, stamp the time it runs again.
fn wakee(sh: &Shared, cpu: usize, same_cpu: bool) -> BenchResult<()> {
    enter(B, cpu)?;
    if same_cpu {
        // A SCHED_IDLE wakee never preempts the waker, so the waker's syscall time is
        // the wakeup alone.
        super::become_sched_idle(B)?;
    }
    while sh.stop.load(Ordering::Acquire) == 0 {
        sh.word.store(0, Ordering::Release);
        sh.armed.store(1, Ordering::Release);
        super::futex_wait(&sh.word, 0);
        let t = now_ns();
        sh.armed.store(0, Ordering::Release);
        sh.stamp.store(t, Ordering::Release);
    }
    Ok(())
}

/// A `SCHED_IDLE` spinner keeping `cpu` busy until the benchmark stops.
fn busy(sh: &Shared, cpu: usize) -> BenchResult<()> {
    enter(B, cpu)?;
    super::become_sched_idle(B)?;
    while sh.stop.load(Ordering::Acquire) == 0 {
        std::hint::spin_loop();
    }
    Ok(())
}

/// The waker's loop: one timed `futex_wake` per repetition.
fn waker(sh: &Shared, w: WakeSetup) -> BenchResult<(Vec<u64>, Vec<u64>)> {
    enter(B, w.waker_cpu)?;
    let (mut syscall, mut latency) = (Vec::new(), Vec::new());
    for _ in 0..w.reps {
        if w.spin_gap {
            // Spin (the wakee is on another CPU): a sleeping poll would add its own timer
            // slack to the wakee's idle.
            if !super::wait_for(&sh.armed, 1, TIMEOUT_NS) {
                sleep_until(|| sh.armed.load(Ordering::Acquire) == 1)?;
            }
            super::spin_for(w.gap_ns);
        } else {
            sleep_until(|| sh.armed.load(Ordering::Acquire) == 1)?;
            sleep_ns(w.gap_ns);
            // Run a little first: the timed call should not pay for the waker's own idle exit.
            super::spin_for(WARM_NS);
        }
        let old = sh.stamp.load(Ordering::Acquire);
        sh.word.store(1, Ordering::Release);
        let t0 = now_ns();
        let woken = check(B, "futex_wake", futex_wake(&sh.word, 1))?;
        let t1 = now_ns();
        sleep_until(|| sh.stamp.load(Ordering::Acquire) != old)?;
        // Only a wakee that was asleep in the kernel counts (not one that saw the word change).
        if woken == 1 {
            syscall.push(t1 - t0);
            latency.push(sh.stamp.load(Ordering::Acquire).saturating_sub(t0));
        }
    }
    Ok((syscall, latency))
}

/// Runs the wakee and the waker; the medians of the wakeups that found the wakee asleep.
pub fn futex_wakeups(w: WakeSetup) -> BenchResult<WakeTimes> {
    let sh = Shared::default();
    let (waker_res, wakee_res) = std::thread::scope(|s| {
        let spinner = w.busy_target.then(|| s.spawn(|| busy(&sh, w.wakee_cpu)));
        let wakee_h = s.spawn(|| wakee(&sh, w.wakee_cpu, w.wakee_cpu == w.waker_cpu));
        let res = s.spawn(|| waker(&sh, w)).join().expect("waker does not panic");
        sh.stop.store(1, Ordering::Release);
        let res = match spinner.map(|h| h.join().expect("spinner does not panic")) {
            Some(Err(e)) => Err(e),
            _ => res,
        };
        while !wakee_h.is_finished() {
            sh.word.store(1, Ordering::Release);
            futex_wake(&sh.word, 1);
            sleep_ns(20_000);
        }
        (res, wakee_h.join().expect("wakee does not panic"))
    });
    wakee_res?;
    let (syscall, latency) = waker_res?;
    match (median(syscall), median(latency)) {
        (Some(waker_syscall), Some(latency)) => Ok(WakeTimes { waker_syscall, latency }),
        _ => {
            let err = std::io::Error::other("no wakeup found the wakee asleep");
            Err(BenchError { bench: B, what: "futex_wake", err })
        }
    }
}
