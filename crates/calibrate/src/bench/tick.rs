//! The tick: HZ from the steps of `CLOCK_MONOTONIC_COARSE`, and the time an interrupt takes
//! away from a spinning thread (the tick's, and an hrtimer's).

use super::{enter, median, now_ns, os, BenchResult, Measured};
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId as TfdClock, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use nix::time::{clock_getres, ClockId};

const B: &str = "tick";

/// The tick period as the kernel reports it, and the jiffies rate as measured.
#[derive(Clone, Copy, Debug)]
pub struct TickPeriod {
    /// `clock_getres(CLOCK_MONOTONIC_COARSE)`: the coarse clocks advance once per tick, and
    /// the kernel reports their resolution as `TICK_NSEC`
    /// (`kernel/time/posix-timers.c: posix_get_coarse_res` → `LOW_RES_NSEC`).
    pub getres_ns: u64,
    /// `jiffies` advanced this much over this many ns of `now` (`/proc/timer_list`, root
    /// only), or `None` when it is unreadable.
    pub jiffies: Option<(u64, u64)>,
}

/// (`now at … nsecs`, the first `jiffies:`) from `/proc/timer_list`.
fn timer_list_jiffies() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/timer_list").ok()?;
    let now = text.lines().find_map(|l| l.strip_prefix("now at ")?.strip_suffix(" nsecs")?.trim().parse().ok())?;
    let jiffies = text.lines().find_map(|l| l.strip_prefix("jiffies:")?.trim().parse().ok())?;
    Some((now, jiffies))
}

/// Reads the coarse clock's resolution, and counts jiffies over 100 ms (quick) or 1 s.
pub fn tick_period(quick: bool) -> BenchResult<TickPeriod> {
    let res = os(B, "clock_getres", clock_getres(ClockId::CLOCK_MONOTONIC_COARSE))?;
    let getres_ns = res.tv_sec() as u64 * 1_000_000_000 + res.tv_nsec() as u64;
    let jiffies = timer_list_jiffies().and_then(|(t0, j0)| {
        super::sleep_ns(if quick { 100_000_000 } else { 1_000_000_000 });
        let (t1, j1) = timer_list_jiffies()?;
        Some((j1.checked_sub(j0)?, t1.checked_sub(t0)?))
    });
    Ok(TickPeriod { getres_ns, jiffies })
}

/// Interrupt gaps seen by a spinning thread, each the sum of the gaps around one expiry.
#[derive(Clone, Copy, Debug)]
pub struct IrqGaps {
    /// At the expiries of a timerfd (an hrtimer whose callback wakes nobody).
    pub timer: Option<Measured>,
    /// At the tick (the tick is aligned to multiples of `TICK_NSEC` in `CLOCK_MONOTONIC`:
    /// `kernel/time/tick-sched.c: tick_init_jiffy_update`).
    pub tick: Option<Measured>,
}

/// Involuntary context switches of the calling thread so far.
fn preemptions() -> i64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    ru.ru_nivcsw as i64
}

/// How far an interrupt's gaps may lie from its expiry (a hypervisor may inject a timer
/// interrupt early and hold the vCPU until the deadline).
const WINDOW_NS: u64 = 40_000;

/// Spins on `cpu` for `ticks` tick periods with a timerfd expiring half-way between ticks;
/// sums the gaps in the thread's clock readings around each tick and each timer expiry.
/// A gap during which the thread was preempted (its involuntary switch count moved) spoils
/// its expiry, which is dropped.
fn spin_gaps(cpu: usize, ticks: u64, tick_ns: u64) -> BenchResult<(Vec<u64>, Vec<u64>)> {
    enter(B, cpu)?;
    let tfd = os(B, "timerfd_create", TimerFd::new(TfdClock::CLOCK_MONOTONIC, TimerFlags::TFD_NONBLOCK))?;
    let start = (now_ns() / tick_ns + 1) * tick_ns;
    let ts = |ns| TimeSpec::from_duration(std::time::Duration::from_nanos(ns));
    let exp = Expiration::IntervalDelayed(ts(start + tick_ns / 2), ts(tick_ns));
    os(B, "timerfd_settime", tfd.set(exp, TimerSetTimeFlags::TFD_TIMER_ABSTIME))?;
    // Per half-tick slot: summed gap, and whether a preemption spoiled it.
    let slots = (2 * ticks + 2) as usize;
    let mut sums = vec![(0u64, false); slots];
    let end = start + ticks * tick_ns;
    let (mut prev, mut switched) = (now_ns(), preemptions());
    while prev < end {
        let t = now_ns();
        if t - prev > 400 {
            let half = tick_ns / 2;
            let slot = ((prev + WINDOW_NS).saturating_sub(start) / half) as usize;
            let off = (prev + WINDOW_NS).saturating_sub(start) % half;
            let now_switched = preemptions();
            if prev >= start.saturating_sub(WINDOW_NS) && off < 2 * WINDOW_NS && slot < slots {
                sums[slot].0 += t - prev;
                sums[slot].1 |= now_switched != switched;
            }
            switched = now_switched;
        }
        prev = now_ns();
    }
    let pick = |parity: usize| -> Vec<u64> {
        sums.iter().enumerate().filter(|(i, s)| i % 2 == parity && s.0 > 0 && !s.1).map(|(_, s)| s.0).collect()
    };
    Ok((pick(1), pick(0)))
}

/// Measures interrupt gaps on `cpu` (in a thread of its own); `tick_ns` is the tick period.
pub fn irq_gaps(quick: bool, cpu: usize, tick_ns: u64) -> BenchResult<IrqGaps> {
    let ticks = if quick { 10 } else { 100 };
    let (timer, tick) = std::thread::scope(|s| {
        s.spawn(|| spin_gaps(cpu, ticks, tick_ns)).join().expect("benchmark thread does not panic")
    })?;
    Ok(IrqGaps { timer: median(timer), tick: median(tick) })
}
