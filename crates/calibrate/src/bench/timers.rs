//! Sleeping: how late `clock_nanosleep` returns with the default timer slack and with
//! (almost) none, and how much CPU time one sleep charges to the sleeper.

use super::{enter, median, now_ns, os, thread_cpu_ns, BenchResult, Measured, Reps};
use nix::sys::prctl;

const REPS: Reps = Reps { quick: 15, normal: 121 };
const B: &str = "sleep overshoot";
/// The sleep: long enough for the CPU to enter a real idle state, past any idle polling
/// (and the length of the sleeps in `examples/workloads/sleep-loop.toml`).
pub const SLEEP_NS: u64 = 5_000_000;

/// What the sleep benchmark measured.
#[derive(Clone, Copy, Debug)]
pub struct SleepTimes {
    /// `current->timer_slack_ns` of a new thread (`PR_GET_TIMERSLACK`).
    pub default_slack_ns: u64,
    /// Return time minus call time minus the requested sleep, with the default slack.
    pub overshoot: Measured,
    /// The same with the slack set to 1 ns.
    pub overshoot_no_slack: Measured,
    /// CPU time charged to the sleeper per sleep (`CLOCK_THREAD_CPUTIME_ID` across the call,
    /// minus one read of that clock).
    pub cpu_per_sleep: Measured,
}

/// Sleeps `reps` times; (overshoots, CPU time per sleep).
fn sleeps(reps: usize, clock_read: u64) -> (Vec<u64>, Vec<u64>) {
    let (mut over, mut cpu) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        let (t0, c0) = (now_ns(), thread_cpu_ns());
        super::sleep_ns(SLEEP_NS);
        let (c1, t1) = (thread_cpu_ns(), now_ns());
        over.push((t1 - t0).saturating_sub(SLEEP_NS));
        cpu.push((c1 - c0).saturating_sub(clock_read));
    }
    (over, cpu)
}

/// The cost of reading `CLOCK_THREAD_CPUTIME_ID` (a real syscall, not vDSO).
fn cpu_clock_read() -> u64 {
    let samples: Vec<u64> = (0..101)
        .map(|_| {
            let a = thread_cpu_ns();
            thread_cpu_ns() - a
        })
        .collect();
    median(samples).map_or(0, |m| m.median)
}

/// Runs the sleeps on `cpu` in a thread of its own (the slack is per thread).
pub fn sleep_overshoot(quick: bool, cpu: usize) -> BenchResult<SleepTimes> {
    std::thread::scope(|s| {
        s.spawn(|| {
            enter(B, cpu)?;
            let default_slack_ns = os(B, "PR_GET_TIMERSLACK", prctl::get_timerslack())? as u64;
            let clock_read = cpu_clock_read();
            let reps = REPS.get(quick);
            let (over, cpu_time) = sleeps(reps, clock_read);
            os(B, "PR_SET_TIMERSLACK", prctl::set_timerslack(1))?;
            let (over_none, _) = sleeps(reps, clock_read);
            os(B, "PR_SET_TIMERSLACK", prctl::set_timerslack(default_slack_ns as libc::c_ulong))?;
            let m = |v| median(v).expect("at least one repetition");
            Ok(SleepTimes {
                default_slack_ns,
                overshoot: m(over),
                overshoot_no_slack: m(over_none),
                cpu_per_sleep: m(cpu_time),
            })
        })
        .join()
        .expect("benchmark thread does not panic")
    })
}

/// Sleeping beside a busy task: the same sleeps with the slack at 1 ns, on a CPU a
/// `SCHED_IDLE` spinner keeps busy (the sleeper preempts it at each expiry,
/// `check_preempt_wakeup_fair`), so no idle state is entered or left.
#[derive(Clone, Copy, Debug)]
pub struct BusySleep {
    pub overshoot_no_slack: Measured,
    pub cpu_per_sleep: Measured,
}

/// Fewer quick repetitions than the idle sleeps: quick mode stays within its 2 s budget.
const BUSY_REPS: Reps = Reps { quick: 5, normal: 121 };

/// Runs the sleeps on `cpu` beside a `SCHED_IDLE` spinner.
pub fn sleep_beside_spinner(quick: bool, cpu: usize) -> BenchResult<BusySleep> {
    let stop = std::sync::atomic::AtomicU32::new(0);
    std::thread::scope(|s| {
        let spinner = s.spawn(|| -> BenchResult<()> {
            enter(B, cpu)?;
            super::become_sched_idle(B)?;
            while stop.load(std::sync::atomic::Ordering::Acquire) == 0 {
                std::hint::spin_loop();
            }
            Ok(())
        });
        let res = s
            .spawn(|| -> BenchResult<BusySleep> {
                enter(B, cpu)?;
                let clock_read = cpu_clock_read();
                os(B, "PR_SET_TIMERSLACK", prctl::set_timerslack(1))?;
                let (over, cpu_time) = sleeps(BUSY_REPS.get(quick), clock_read);
                let m = |v| median(v).expect("at least one repetition");
                Ok(BusySleep { overshoot_no_slack: m(over), cpu_per_sleep: m(cpu_time) })
            })
            .join()
            .expect("benchmark thread does not panic");
        stop.store(1, std::sync::atomic::Ordering::Release);
        spinner.join().expect("spinner does not panic").and(res)
    })
}
