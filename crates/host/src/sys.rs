//! Thin wrappers over the system calls a real run needs and `nix` does not wrap: futexes,
//! thread CPU clocks, per-thread `setpriority`, `sched_setattr`, `tgkill`.
//!
//! Every wrapper returns `Err(errno)` instead of panicking; callers decide what an error
//! means (a task that fails ends the run).

use std::sync::atomic::AtomicU32;

pub type Errno = i32;

fn errno() -> Errno {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// The kernel's id of the calling thread.
pub fn gettid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::gettid() }
}

fn clock(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid out-pointer; both clocks used here always exist on Linux.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `CLOCK_MONOTONIC` in ns: the clock the trace instance is switched to (`trace_clock = mono`).
pub fn monotonic_ns() -> u64 {
    clock(libc::CLOCK_MONOTONIC)
}

/// `CLOCK_THREAD_CPUTIME_ID`: CPU time the calling thread has consumed.
pub fn thread_cpu_ns() -> u64 {
    clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` until `deadline_ns`; `Err(EINTR)` when
/// a signal interrupted it.
pub fn sleep_until(deadline_ns: u64) -> Result<(), Errno> {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: valid timespec; a null remainder is allowed with TIMER_ABSTIME.
    let r = unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
    if r == 0 {
        Ok(())
    } else {
        Err(r)
    }
}

fn futex_op(op: i32, private: bool) -> i32 {
    if private {
        op | libc::FUTEX_PRIVATE_FLAG
    } else {
        op
    }
}

/// `futex(FUTEX_WAIT[_PRIVATE])`: sleeps while `*word == expected`. Private as glibc's default
/// mutexes; shared (keyed by the page, not the address space) when processes share the word.
pub fn futex_wait(word: &AtomicU32, expected: u32, private: bool) -> Result<(), Errno> {
    // SAFETY: `word` is a live, aligned u32 for the duration of the call; no timeout.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            futex_op(libc::FUTEX_WAIT, private),
            expected,
            std::ptr::null::<libc::timespec>(),
            0usize,
            0u32,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(errno())
    }
}

/// `futex(FUTEX_WAKE[_PRIVATE])`: wakes up to `n` waiters of `word`.
pub fn futex_wake(word: &AtomicU32, n: u32, private: bool) {
    let n = n.min(i32::MAX as u32);
    // SAFETY: as for `futex_wait`; FUTEX_WAKE only reads the address.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), futex_op(libc::FUTEX_WAKE, private), n, 0usize, 0usize, 0u32);
    }
}

/// `setpriority(PRIO_PROCESS, tid, nice)`: on Linux this sets one thread's nice value.
pub fn set_nice(tid: i32, nice: i32) -> Result<(), Errno> {
    // SAFETY: plain syscall on integers.
    let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) };
    if r == 0 {
        Ok(())
    } else {
        Err(errno())
    }
}

/// The fields of `struct sched_attr` (`include/uapi/linux/sched/types.h`) a host run sets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedAttr {
    pub policy: u32,
    /// Used by the fair policies (and kept by the kernel for the others).
    pub nice: i32,
    /// `sched_priority`, 1..=99 for `SCHED_FIFO`/`SCHED_RR`, else 0.
    pub priority: u32,
    /// `SCHED_DEADLINE`'s runtime; for a fair task a custom slice (v6.12+, which clamps it
    /// to 0.1–100 ms; 0 is the base slice).
    pub runtime: u64,
    pub deadline: u64,
    pub period: u64,
}

/// `sched_setattr(tid, attr, 0)`.
pub fn set_attr(tid: i32, a: &SchedAttr) -> Result<(), Errno> {
    // SAFETY: `sched_attr` is plain data; zeroed is a valid starting value.
    let mut attr: libc::sched_attr = unsafe { std::mem::zeroed() };
    attr.size = std::mem::size_of::<libc::sched_attr>() as u32;
    attr.sched_policy = a.policy;
    attr.sched_nice = a.nice;
    attr.sched_priority = a.priority;
    attr.sched_runtime = a.runtime;
    attr.sched_deadline = a.deadline;
    attr.sched_period = a.period;
    // SAFETY: `attr` is valid and sized; flags 0.
    let r = unsafe { libc::syscall(libc::SYS_sched_setattr, tid, &attr as *const libc::sched_attr, 0u32) };
    if r == 0 {
        Ok(())
    } else {
        Err(errno())
    }
}

/// `tgkill(tgid, tid, sig)`: a signal to one thread (of this or a child process).
pub fn tgkill(tgid: i32, tid: i32, sig: i32) {
    // SAFETY: plain syscall on integers; a thread that already exited gives ESRCH.
    unsafe {
        libc::syscall(libc::SYS_tgkill, tgid, tid, sig);
    }
}

/// A readable description of an errno.
pub fn strerror(e: Errno) -> String {
    std::io::Error::from_raw_os_error(e).to_string()
}
