//! Microbenchmarks: the only part of schedlab-calibrate that touches the OS.
//!
//! Each benchmark runs in threads it starts, pins and (when permitted) raises to nice −20,
//! so the calling thread's affinity, priority, policy and timer slack are never changed;
//! every setting is per thread and dies with it. Each reports the median of its
//! repetitions.

pub mod cache;
pub mod ipi;
pub mod lines;
pub mod migrate;
pub mod mm;
pub mod pingpong;
pub mod spawn;
pub mod syscalls;
pub mod tick;
pub mod timers;
pub mod wake;

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet as NixCpuSet};
use nix::time::{clock_gettime, ClockId};
use nix::unistd::Pid;
use std::sync::atomic::{AtomicU32, Ordering};

/// Why a benchmark could not run.
#[derive(Debug, thiserror::Error)]
#[error("benchmark `{bench}`: {what}: {err}")]
pub struct BenchError {
    pub bench: &'static str,
    pub what: &'static str,
    pub err: std::io::Error,
}

pub type BenchResult<T> = Result<T, BenchError>;

/// Turns an OS error into a [`BenchError`] naming the benchmark and the call.
pub(crate) fn os<T>(bench: &'static str, what: &'static str, r: nix::Result<T>) -> BenchResult<T> {
    r.map_err(|e| BenchError { bench, what, err: std::io::Error::from_raw_os_error(e as i32) })
}

/// A raw syscall's return as a [`BenchResult`] (the errno is read when it returned −1).
pub(crate) fn check(bench: &'static str, what: &'static str, ret: libc::c_long) -> BenchResult<libc::c_long> {
    if ret < 0 {
        return Err(BenchError { bench, what, err: std::io::Error::last_os_error() });
    }
    Ok(ret)
}

/// Repetition counts of one benchmark in quick and normal mode.
#[derive(Clone, Copy, Debug)]
pub struct Reps {
    pub quick: usize,
    pub normal: usize,
}

impl Reps {
    pub fn get(self, quick: bool) -> usize {
        if quick {
            self.quick
        } else {
            self.normal
        }
    }
}

/// A measured value: the median of `reps` repetitions, in ns (or ps for per-byte costs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measured {
    pub median: u64,
    pub reps: usize,
}

/// The median of `samples` (the upper one for an even count); `None` when empty.
pub fn median(mut samples: Vec<u64>) -> Option<Measured> {
    if samples.is_empty() {
        return None;
    }
    samples.sort_unstable();
    Some(Measured { median: samples[samples.len() / 2], reps: samples.len() })
}

fn clock_ns(id: ClockId) -> u64 {
    // These clocks cannot fail on Linux; a zero would only shorten one sample.
    clock_gettime(id).map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64).unwrap_or(0)
}

/// `CLOCK_MONOTONIC` in ns (vDSO, tens of ns).
pub fn now_ns() -> u64 {
    clock_ns(ClockId::CLOCK_MONOTONIC)
}

/// The calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`: its `sum_exec_runtime`).
pub fn thread_cpu_ns() -> u64 {
    clock_ns(ClockId::CLOCK_THREAD_CPUTIME_ID)
}

/// Pins the calling thread to `cpu`.
pub fn pin(bench: &'static str, cpu: usize) -> BenchResult<()> {
    let mut set = NixCpuSet::new();
    os(bench, "CpuSet::set", set.set(cpu))?;
    os(bench, "sched_setaffinity", sched_setaffinity(Pid::from_raw(0), &set))
}

/// The nice value benchmark threads ask for: other tasks on a shared machine then rarely
/// run in the middle of a measurement.
pub const BOOST_NICE: i32 = -20;

/// Raises the calling thread to [`BOOST_NICE`] if permitted (`CAP_SYS_NICE`); whether it
/// was.
fn boost() -> bool {
    // SAFETY: setpriority on the calling thread (Linux applies PRIO_PROCESS with who = 0 to
    // the calling thread only).
    unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, BOOST_NICE) == 0 }
}

/// Whether benchmark threads get [`BOOST_NICE`] (tried in a scratch thread).
pub fn can_boost() -> bool {
    std::thread::spawn(boost).join().unwrap_or(false)
}

/// Starts a benchmark thread: pins it to `cpu` and boosts it when permitted.
pub fn enter(bench: &'static str, cpu: usize) -> BenchResult<()> {
    pin(bench, cpu)?;
    boost();
    Ok(())
}

/// The CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    match sched_getaffinity(Pid::from_raw(0)) {
        Ok(set) => (0..NixCpuSet::count()).filter(|&c| set.is_set(c).unwrap_or(false)).collect(),
        Err(_) => vec![0],
    }
}

/// Busy-waits for `ns` nanoseconds.
pub fn spin_for(ns: u64) {
    let end = now_ns() + ns;
    while now_ns() < end {
        std::hint::spin_loop();
    }
}

/// `nanosleep` for `ns` nanoseconds.
pub fn sleep_ns(ns: u64) {
    std::thread::sleep(std::time::Duration::from_nanos(ns));
}

/// The calling thread's id (for `sched_setaffinity` on another thread).
pub fn gettid() -> i32 {
    nix::unistd::gettid().as_raw()
}

/// Switches the calling thread to `policy` (`SCHED_BATCH` or `SCHED_IDLE`; neither needs
/// privileges). A wakee with either never preempts the running task
/// (`kernel/sched/fair.c: check_preempt_wakeup_fair` returns early for it).
pub fn set_policy(bench: &'static str, policy: libc::c_int) -> BenchResult<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: plain syscall on the calling thread with a valid parameter block.
    let r = unsafe { libc::sched_setscheduler(0, policy, &param) };
    check(bench, "sched_setscheduler", r as libc::c_long).map(|_| ())
}

/// Switches the calling thread to `SCHED_IDLE`, which never preempts a normal task on
/// wakeup and is always preempted by one.
pub fn become_sched_idle(bench: &'static str) -> BenchResult<()> {
    set_policy(bench, libc::SCHED_IDLE)
}

/// `FUTEX_WAIT_PRIVATE` on `word` while it holds `expected`; returns the raw result.
pub fn futex_wait(word: &AtomicU32, expected: u32) -> libc::c_long {
    // SAFETY: `word` is a live, aligned u32 for the duration of the call; no timeout.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            std::ptr::null::<libc::timespec>(),
        )
    }
}

/// `FUTEX_WAKE_PRIVATE` of up to `n` waiters; returns how many were woken (or −1).
pub fn futex_wake(word: &AtomicU32, n: i32) -> libc::c_long {
    // SAFETY: as for `futex_wait`; FUTEX_WAKE only reads the address for hashing.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, n) }
}

/// Waits (spinning, then yielding) until `flag` holds `value`, at most `timeout_ns`.
pub fn wait_for(flag: &AtomicU32, value: u32, timeout_ns: u64) -> bool {
    let end = now_ns() + timeout_ns;
    while flag.load(Ordering::Acquire) != value {
        if now_ns() > end {
            return false;
        }
        std::hint::spin_loop();
    }
    true
}
