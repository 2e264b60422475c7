//! Address spaces: the extra cost of switching between processes rather than threads (a
//! pipe ping-pong on one CPU between a thread and a forked child, against the same between
//! two threads), and `fork` + `_exit` + `waitpid` by resident size (the per-page costs of
//! `copy_page_range` and `exit_mmap`).
//!
//! A child runs only async-signal-safe calls (`read`, `write`, `_exit`): it inherits the
//! forking thread's affinity and policy, so it needs no setup. Every child is reaped by
//! its pid before the benchmark returns, killed first if the benchmark failed.

use super::{check, enter, median, now_ns, os, BenchResult, Measured, Reps};
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::waitpid;
use nix::unistd::{fork, ForkResult, Pid};
use std::os::fd::{AsRawFd, OwnedFd};

const REPS: Reps = Reps { quick: 7, normal: 41 };
const ROUND_TRIPS: u64 = 100;
const FORK_REPS: Reps = Reps { quick: 5, normal: 21 };
const B: &str = "process ping-pong";

fn xfer(fd: &OwnedFd, read: bool) -> BenchResult<()> {
    let mut b = [0u8; 1];
    // SAFETY: a valid fd and a 1-byte buffer.
    let n = unsafe {
        if read {
            libc::read(fd.as_raw_fd(), b.as_mut_ptr().cast(), 1)
        } else {
            libc::write(fd.as_raw_fd(), b.as_ptr().cast(), 1)
        }
    };
    match check(B, if read { "read" } else { "write" }, n as libc::c_long)? {
        0 => Err(super::BenchError { bench: B, what: "read", err: std::io::ErrorKind::UnexpectedEof.into() }),
        _ => Ok(()),
    }
}

/// The child's echo loop: only raw syscalls, then `_exit`.
fn child_echo(r: i32, w: i32, total: u64) -> ! {
    let mut b = [0u8; 1];
    for _ in 0..total {
        // SAFETY: valid fds and a 1-byte buffer; async-signal-safe calls only.
        unsafe {
            if libc::read(r, b.as_mut_ptr().cast(), 1) != 1 || libc::write(w, b.as_ptr().cast(), 1) != 1 {
                libc::_exit(1);
            }
        }
    }
    // SAFETY: `_exit` is async-signal-safe.
    unsafe { libc::_exit(0) }
}

/// The timing loop of the parent: one-way handoff times per repetition.
fn time_handoffs(w1: &OwnedFd, r2: &OwnedFd, reps: usize) -> BenchResult<Measured> {
    let mut samples = Vec::new();
    for rep in 0..=reps {
        let t0 = now_ns();
        for _ in 0..ROUND_TRIPS {
            xfer(w1, false)?;
            xfer(r2, true)?;
        }
        if rep > 0 {
            samples.push((now_ns() - t0) / (2 * ROUND_TRIPS));
        }
    }
    Ok(median(samples).expect("at least one repetition"))
}

/// One-way handoff of a 1-byte pipe ping-pong between this process and a forked child,
/// both `SCHED_BATCH` on `cpu` (as the thread ping-pong of `pingpong.rs`, so the two
/// differ only in the address-space switch).
pub fn process_pingpong(quick: bool, cpu: usize) -> BenchResult<Measured> {
    let reps = REPS.get(quick);
    let total = (reps as u64 + 1) * ROUND_TRIPS;
    std::thread::scope(|s| {
        s.spawn(|| -> BenchResult<Measured> {
            enter(B, cpu)?;
            super::set_policy(B, libc::SCHED_BATCH)?;
            let (r1, w1) = os(B, "pipe", nix::unistd::pipe())?;
            let (r2, w2) = os(B, "pipe", nix::unistd::pipe())?;
            // SAFETY: the child calls only async-signal-safe functions (`child_echo`).
            let child = match os(B, "fork", unsafe { fork() })? {
                ForkResult::Child => child_echo(r1.as_raw_fd(), w2.as_raw_fd(), total),
                ForkResult::Parent { child } => child,
            };
            drop((r1, w2));
            let res = time_handoffs(&w1, &r2, reps);
            reap(child, res.is_err())?;
            res
        })
        .join()
        .expect("benchmark thread does not panic")
    })
}

/// Waits for `child`, killing it first if `kill_first` (the benchmark failed midway).
fn reap(child: Pid, kill_first: bool) -> BenchResult<()> {
    if kill_first {
        let _ = kill(child, Signal::SIGKILL);
    }
    os(B, "waitpid", waitpid(child, None)).map(|_| ())
}

/// `fork` costs by resident size: the parent's `fork()` call (`copy_page_range`) and the
/// rest until `waitpid` returns (the child's `exit_mmap` and the reaping), medians.
#[derive(Clone, Copy, Debug)]
pub struct ForkTimes {
    /// Resident anonymous pages of this process when it forked, the extra mapping included.
    pub pages: u64,
    pub fork_call: Measured,
    pub exit_wait: Measured,
}

/// An anonymous private mapping of `bytes`, in 4 KiB pages (`MADV_NOHUGEPAGE`), every
/// page written; unmapped on drop.
struct Resident {
    ptr: *mut libc::c_void,
    bytes: usize,
}

impl Resident {
    fn new(bytes: usize) -> BenchResult<Resident> {
        // SAFETY: a fresh anonymous mapping; the pages are written within its bounds.
        unsafe {
            let ptr = libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if ptr == libc::MAP_FAILED {
                return Err(super::BenchError { bench: B, what: "mmap", err: std::io::Error::last_os_error() });
            }
            libc::madvise(ptr, bytes, libc::MADV_NOHUGEPAGE);
            for off in (0..bytes).step_by(PAGE) {
                *(ptr as *mut u8).add(off) = 1;
            }
            Ok(Resident { ptr, bytes })
        }
    }
}

impl Drop for Resident {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.ptr, self.bytes) };
    }
}

const PAGE: usize = 4096;

/// This process's resident anonymous pages (`/proc/self/status`: `RssAnon`, in kB; 0 if
/// unreadable): the private pages `copy_page_range` copies the entries of (file-backed
/// shared mappings are skipped, `mm/memory.c: vma_needs_copy`).
fn resident_pages() -> u64 {
    let kb: u64 = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|t| t.lines().find_map(|l| l.strip_prefix("RssAnon:")?.split_whitespace().next()?.parse().ok()))
        .unwrap_or(0);
    kb * 1024 / PAGE as u64
}

/// `fork` + `_exit(0)` + `waitpid` with `bytes` more resident (0: the process as it is).
pub fn fork_exit(quick: bool, bytes: usize) -> BenchResult<ForkTimes> {
    const F: &str = "process fork/exit";
    let _mem = if bytes > 0 { Some(Resident::new(bytes)?) } else { None };
    let (mut fork_call, mut exit_wait) = (Vec::new(), Vec::new());
    for _ in 0..FORK_REPS.get(quick) {
        let t0 = now_ns();
        // SAFETY: the child only calls `_exit`, which is async-signal-safe.
        match os(F, "fork", unsafe { fork() })? {
            ForkResult::Child => unsafe { libc::_exit(0) },
            ForkResult::Parent { child } => {
                let t1 = now_ns();
                os(F, "waitpid", waitpid(child, None))?;
                fork_call.push(t1 - t0);
                exit_wait.push(now_ns() - t1);
            }
        }
    }
    let m = |v| median(v).expect("at least one repetition");
    Ok(ForkTimes { pages: resident_pages(), fork_call: m(fork_call), exit_wait: m(exit_wait) })
}
