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
    /// `b` is `a`'s SMT sibling (the host has no other core in `a`'s LLC).
    pub b_sibling: bool,
    /// `far` is on another NUMA node.
    pub far_node: bool,
}

/// Picks the benchmark CPUs among those this process may use.
pub fn pick_cpus(host: &HostTopology, allowed: &[usize]) -> BenchCpus {
    let usable: Vec<_> = host.cpus.iter().filter(|c| allowed.contains(&c.cpu)).collect();
    let Some(first) = usable.first() else {
        let a = allowed.first().copied().unwrap_or(0);
        return BenchCpus { a, b: None, far: None, b_sibling: false, far_node: false };
    };
    let a = first.cpu;
    let others = || usable.iter().filter(|c| c.cpu != a);
    let b = others()
        .find(|c| first.llc.contains(c.cpu) && !first.smt.contains(c.cpu))
        .or_else(|| others().find(|c| first.llc.contains(c.cpu)))
        .or_else(|| others().next())
        .map(|c| c.cpu);
    let far = others().find(|c| !first.llc.contains(c.cpu)).map(|c| c.cpu);
    let b_sibling = b.is_some_and(|b| first.smt.contains(b));
    let node_of = |cpu: usize| host.cpus.iter().find(|c| c.cpu == cpu).map(|c| c.node);
    let far_node = far.is_some_and(|f| node_of(f) != Some(first.node));
    BenchCpus { a, b, far, b_sibling, far_node }
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
    /// Wakeups of a waiter on another CPU idle for each length (the waker spins through
    /// the gap, so only the wakee's CPU idles), by idle length in ns.
    pub idle_by_length: Vec<(u64, bench::wake::WakeTimes)>,
    /// Sleeps beside a `SCHED_IDLE` spinner (the sleeper's CPU never idles).
    pub sleep_busy: bench::timers::BusySleep,
    /// Futex ping-pong, one way: both threads on one CPU, and across two CPUs.
    pub futex_local: Measured,
    pub futex_remote: Option<Measured>,
    /// One cache-line transfer between CPU pairs (first CPU, second CPU, time).
    pub lines: Vec<(usize, usize, Measured)>,
    /// Pipe ping-pong on one CPU between this process and a forked child, one way.
    pub process_pingpong: Measured,
    /// `fork` + `_exit` + `waitpid` with nothing and with [`FORK_BYTES`] more resident.
    pub fork_small: bench::mm::ForkTimes,
    pub fork_big: bench::mm::ForkTimes,
    pub caches: CacheTimes,
}

/// The cache benchmarks: load latency per sysfs level and from memory, re-warm by size.
#[derive(Clone, Debug, Default)]
pub struct CacheTimes {
    /// CPU `a`'s data and unified caches with the pointer-chase latency (ps per load) over
    /// half of each.
    pub levels: Vec<(crate::sysfs::HostCache, Measured)>,
    /// The chase over [`MEMORY_CHASE_LLCS`] × the LLC (normal mode only), ps per load.
    pub memory: Option<Measured>,
    /// Re-warm time by (working set, how it resumed).
    pub rewarm: Vec<(usize, bench::cache::Resume, Measured)>,
}

/// The memory-latency chase covers this many LLCs' worth of lines.
pub const MEMORY_CHASE_LLCS: usize = 2;

/// Idle lengths of the idle-exit benchmark, 10 µs … 10 ms (quick: 10 µs, 300 µs, 10 ms).
pub const IDLE_LENGTHS_NS: [u64; 7] = [10_000, 30_000, 100_000, 300_000, 1_000_000, 3_000_000, 10_000_000];
const IDLE_LENGTH_REPS: bench::Reps = bench::Reps { quick: 3, normal: 31 };
/// The resident size of the large fork (quick: a quarter).
pub const FORK_BYTES: usize = 64 << 20;

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
        wake::futex_wakeups(wake::WakeSetup { waker_cpu: a, wakee_cpu, gap_ns, busy_target, spin_gap: false, reps })
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
    let more = measure_costs(quick, cpus, progress)?;
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
        idle_by_length: more.idle_by_length,
        sleep_busy: more.sleep_busy,
        futex_local: more.futex_local,
        futex_remote: more.futex_remote,
        lines: more.lines,
        process_pingpong: more.process_pingpong,
        fork_small: more.fork_small,
        fork_big: more.fork_big,
        caches: CacheTimes::default(),
    })
}

/// Runs the cache benchmarks on `cpus` for the levels sysfs lists.
pub fn measure_caches(
    quick: bool,
    cpus: BenchCpus,
    host: Vec<crate::sysfs::HostCache>,
    progress: &mut dyn FnMut(&str),
) -> BenchResult<CacheTimes> {
    use bench::cache::{self, Resume};
    let a = cpus.a;
    progress("cache latency by level (pointer chase)");
    let mut levels = Vec::new();
    for h in host {
        // Half of each level (quick: a quarter, still within it, and quicker to build).
        let m = cache::chase_latency(quick, a, (h.bytes / if quick { 4 } else { 2 }) as usize)?;
        levels.push((h, m));
    }
    let llc = levels.last().map_or(0, |l| l.0.bytes as usize);
    let memory = if quick || llc == 0 {
        None
    } else {
        progress("memory latency (pointer chase)");
        Some(cache::chase_latency(quick, a, MEMORY_CHASE_LLCS * llc)?)
    };
    // Working sets up to the level before the LLC (the last private one); the same-core
    // eviction streams twice it.
    let private = if levels.len() >= 2 { levels[levels.len() - 2].0.bytes as usize } else { 0 };
    let mut rewarm = Vec::new();
    if private > 0 {
        progress("cache re-warm by working-set size");
        let mut hows = vec![Resume::SameCore { evict: 2 * private }];
        hows.extend([cpus.b, cpus.far].into_iter().flatten().map(|to| Resume::Moved { to }));
        // Quick mode: half the private level only.
        let sizes = if quick { vec![private / 2] } else { vec![private / 8, private / 2, private] };
        for ws in sizes {
            for &how in &hows {
                rewarm.push((ws, how, cache::rewarm(quick, a, ws, how)?));
            }
        }
    }
    Ok(CacheTimes { levels, memory, rewarm })
}

/// The benchmarks of the cost model's machine data (idle states, timers on busy CPUs,
/// line transfers, address spaces) and the end-to-end futex ping-pong.
struct More {
    idle_by_length: Vec<(u64, bench::wake::WakeTimes)>,
    sleep_busy: bench::timers::BusySleep,
    futex_local: Measured,
    futex_remote: Option<Measured>,
    lines: Vec<(usize, usize, Measured)>,
    process_pingpong: Measured,
    fork_small: bench::mm::ForkTimes,
    fork_big: bench::mm::ForkTimes,
}

fn measure_costs(quick: bool, cpus: BenchCpus, progress: &mut dyn FnMut(&str)) -> BenchResult<More> {
    use bench::*;
    let a = cpus.a;
    let mut idle_by_length = Vec::new();
    if let Some(b) = cpus.b {
        progress("idle exit by idle length (10us..10ms)");
        for (i, &gap_ns) in IDLE_LENGTHS_NS.iter().enumerate() {
            if quick && i % 3 != 0 {
                continue;
            }
            let reps = IDLE_LENGTH_REPS.get(quick);
            let setup =
                wake::WakeSetup { waker_cpu: a, wakee_cpu: b, gap_ns, busy_target: false, spin_gap: true, reps };
            idle_by_length.push((gap_ns, wake::futex_wakeups(setup)?));
        }
    }
    let sleep_busy = step(progress, "sleep beside a busy task", || timers::sleep_beside_spinner(quick, a))?;
    let futex_local = step(progress, "futex ping-pong, one CPU", || pingpong::futex_pingpong(quick, a, a))?;
    let futex_remote = cpus
        .b
        .map(|b| step(progress, "futex ping-pong, two CPUs", || pingpong::futex_pingpong(quick, a, b)))
        .transpose()?;
    let mut lines = Vec::new();
    for other in [cpus.b, cpus.far].into_iter().flatten() {
        lines.push((a, other, step(progress, "cache-line transfer", || lines::transfer(quick, a, other))?));
    }
    let process_pingpong =
        step(progress, "pipe ping-pong between processes, one CPU", || mm::process_pingpong(quick, a))?;
    let big = if quick { FORK_BYTES / 4 } else { FORK_BYTES };
    let fork_small = step(progress, "process fork/exit/wait", || mm::fork_exit(quick, 0))?;
    let fork_big = step(progress, "process fork/exit/wait, more resident", || mm::fork_exit(quick, big))?;
    Ok(More { idle_by_length, sleep_busy, futex_local, futex_remote, lines, process_pingpong, fork_small, fork_big })
}
