//! Running every microbenchmark on the chosen CPUs.

use crate::bench::{self, BenchResult, Measured};
use crate::sysfs::HostTopology;

/// The CPUs the benchmarks use: `a`; `b` shares `a`'s LLC but not its core when possible;
/// `far` is in another LLC, if the host has one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BenchCpus {
    pub a: usize,
    pub b: Option<usize>,
    pub far: Option<usize>,
}

/// Picks the benchmark CPUs among those this process may use.
pub fn pick_cpus(host: &HostTopology, allowed: &[usize]) -> BenchCpus {
    let usable: Vec<_> = host.cpus.iter().filter(|c| allowed.contains(&c.cpu)).collect();
    let Some(first) = usable.first() else {
        return BenchCpus { a: allowed.first().copied().unwrap_or(0), b: None, far: None };
    };
    let a = first.cpu;
    let others = || usable.iter().filter(|c| c.cpu != a);
    let b = others()
        .find(|c| first.llc.contains(c.cpu) && !first.smt.contains(c.cpu))
        .or_else(|| others().find(|c| first.llc.contains(c.cpu)))
        .or_else(|| others().next())
        .map(|c| c.cpu);
    let far = others().find(|c| !first.llc.contains(c.cpu)).map(|c| c.cpu);
    BenchCpus { a, b, far }
}

/// Everything the host measured (medians, ns).
#[derive(Clone, Debug)]
pub struct Measurements {
    pub cpus: BenchCpus,
    pub tick: bench::tick::TickPeriod,
    pub null_syscall: Measured,
    pub pipe_1: Measured,
    pub pipe_big: Measured,
    pub futex_wake_none: Measured,
    pub yield_alone: Measured,
    /// `sched_yield` of two threads taking turns on one CPU, per call.
    pub yield_pair: Measured,
    pub wake_local: bench::wake::WakeTimes,
    /// Waking a waiter on another CPU that went idle moments ago.
    pub wake_remote: Option<bench::wake::WakeTimes>,
    /// Waking a waiter on another CPU that has been idle for [`IDLE_GAP_NS`].
    pub wake_remote_idle: Option<bench::wake::WakeTimes>,
    /// Waking a waiter on another CPU that runs a `SCHED_IDLE` spinner (a reschedule IPI).
    pub wake_remote_busy: Option<bench::wake::WakeTimes>,
    pub pingpong_local: bench::pingpong::PingPong,
    pub pingpong_remote: Option<bench::pingpong::PingPong>,
    pub sleep: bench::timers::SleepTimes,
    pub irq: bench::tick::IrqGaps,
    /// membarrier per call: (with our thread running on `b`, alone).
    pub ipi: Option<(Measured, Measured)>,
    pub thread: bench::spawn::ThreadTimes,
    pub process: Measured,
    pub setaffinity_queued: Option<Measured>,
    pub rewarm_bytes: usize,
    pub rewarm_same_llc: Option<Measured>,
    pub rewarm_cross_llc: Option<Measured>,
}

/// How long the remote CPU idles before an "idle" wakeup: past any idle polling
/// (`cpuidle-haltpoll` polls up to 200 µs by default), into a real idle state.
pub const IDLE_GAP_NS: u64 = 2_000_000;
const SHORT_GAP_NS: u64 = 0;
const WAKE_REPS: bench::Reps = bench::Reps { quick: 31, normal: 301 };
const IDLE_WAKE_REPS: bench::Reps = bench::Reps { quick: 15, normal: 121 };

/// Runs a benchmark after announcing it.
fn step<T>(progress: &mut dyn FnMut(&str), what: &str, f: impl FnOnce() -> BenchResult<T>) -> BenchResult<T> {
    progress(what);
    f()
}

/// Runs every benchmark; `progress` hears the name of each as it starts.
pub fn measure(
    quick: bool,
    cpus: BenchCpus,
    rewarm_bytes: usize,
    progress: &mut dyn FnMut(&str),
) -> BenchResult<Measurements> {
    use bench::*;
    let a = cpus.a;
    let wake = |wakee_cpu, gap_ns, reps: Reps, busy_target| {
        let reps = reps.get(quick);
        wake::futex_wakeups(wake::WakeSetup { waker_cpu: a, wakee_cpu, gap_ns, busy_target, reps })
    };
    let tick = step(progress, "tick period (coarse clock resolution, jiffies)", || tick::tick_period(quick))?;
    let null_syscall = step(progress, "null syscall", || syscalls::null_syscall(quick, a))?;
    let pipe_1 = step(progress, "pipe write+read, 1 byte", || syscalls::pipe_write_read(quick, a, 1))?;
    let pipe_big =
        step(progress, "pipe write+read, 16 KiB", || syscalls::pipe_write_read(quick, a, syscalls::PIPE_BIG))?;
    let futex_wake_none = step(progress, "futex_wake, no waiter", || syscalls::futex_wake_none(quick, a))?;
    let yield_alone = step(progress, "sched_yield alone", || syscalls::yield_alone(quick, a))?;
    let yield_pair = step(progress, "sched_yield, two threads", || syscalls::yield_pair(quick, a))?;
    let wake_local = step(progress, "futex wakeup, same CPU", || wake(a, 20_000, WAKE_REPS, false))?;
    let wake_remote = cpus
        .b
        .map(|b| step(progress, "futex wakeup, other CPU", || wake(b, SHORT_GAP_NS, WAKE_REPS, false)))
        .transpose()?;
    let wake_remote_idle = cpus
        .b
        .map(|b| step(progress, "futex wakeup, idle CPU", || wake(b, IDLE_GAP_NS, IDLE_WAKE_REPS, false)))
        .transpose()?;
    let wake_remote_busy = cpus
        .b
        .map(|b| step(progress, "futex wakeup, busy CPU", || wake(b, SHORT_GAP_NS, WAKE_REPS, true)))
        .transpose()?;
    let pingpong_local = step(progress, "pipe ping-pong, one CPU", || pingpong::pipe_pingpong(quick, a, a))?;
    let pingpong_remote = cpus
        .b
        .map(|b| step(progress, "pipe ping-pong, two CPUs", || pingpong::pipe_pingpong(quick, a, b)))
        .transpose()?;
    let sleep = step(progress, "sleep overshoot", || timers::sleep_overshoot(quick, a))?;
    let irq = step(progress, "interrupt gaps (tick, hrtimer)", || tick::irq_gaps(quick, a, tick.getres_ns))?;
    let ipi = match cpus.b {
        Some(b) => step(progress, "IPI (membarrier)", || ipi::membarrier_ipi(quick, a, b))?,
        None => None,
    };
    let thread = step(progress, "thread create/exit", || spawn::thread_create_exit(quick, a))?;
    let process = step(progress, "process fork/exit", || spawn::process_fork_exit(quick))?;
    let setaffinity_queued = cpus
        .b
        .map(|b| step(progress, "migration of a queued task", || migrate::setaffinity_queued(quick, a, b)))
        .transpose()?;
    let rewarm_same_llc = cpus
        .b
        .map(|b| step(progress, "cache re-warm, same LLC", || migrate::rewarm(quick, a, b, rewarm_bytes)))
        .transpose()?;
    let rewarm_cross_llc = cpus
        .far
        .map(|f| step(progress, "cache re-warm, other LLC", || migrate::rewarm(quick, a, f, rewarm_bytes)))
        .transpose()?;
    Ok(Measurements {
        cpus,
        tick,
        null_syscall,
        pipe_1,
        pipe_big,
        futex_wake_none,
        yield_alone,
        yield_pair,
        wake_local,
        wake_remote,
        wake_remote_idle,
        wake_remote_busy,
        pingpong_local,
        pingpong_remote,
        sleep,
        irq,
        ipi,
        thread,
        process,
        setaffinity_queued,
        rewarm_bytes,
        rewarm_same_llc,
        rewarm_cross_llc,
    })
}
