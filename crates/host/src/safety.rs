//! Getting every task out at the end, whatever state it is in.
//!
//! Tasks poll the run's stop flag in their busy loops; a task blocked in the kernel
//! (futex, pipe, `clock_nanosleep`) is interrupted by [`WAKE_SIGNAL`], whose handler does
//! nothing and is installed without `SA_RESTART`, so the call returns `EINTR` and the task
//! sees the flag. The controller repeats the signal until every thread has finished (a
//! signal sent just before a task blocks would otherwise be missed).

use crate::tasks::Run;
use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
use std::sync::atomic::Ordering::SeqCst;
use std::time::Duration;

/// The signal that interrupts blocked tasks.
pub const WAKE_SIGNAL: Signal = Signal::SIGUSR2;

/// How long the controller waits for task threads to finish after the stop.
pub const STOP_TIMEOUT: Duration = Duration::from_secs(5);

extern "C" fn nothing(_: libc::c_int) {}

/// Installs the no-op handler of [`WAKE_SIGNAL`]. It stays installed for the life of the
/// process: a late signal must never find the default action (termination).
pub fn install_wake_handler() -> Result<(), String> {
    let act = SigAction::new(SigHandler::Handler(nothing), SaFlags::empty(), SigSet::empty());
    // SAFETY: the handler is async-signal-safe (it does nothing).
    unsafe { sigaction(WAKE_SIGNAL, &act) }.map(|_| ()).map_err(|e| format!("sigaction(SIGUSR2): {e}"))
}

/// Stops every task: sets the stop flag, signals blocked tasks until all have finished,
/// joins this process's task threads and reaps task processes. `Err` if some task did not
/// finish within [`STOP_TIMEOUT`].
pub fn stop_all(run: &Run) -> Result<(), String> {
    run.objs.stop_flag().store(true, SeqCst);
    let deadline = crate::sys::monotonic_ns() + STOP_TIMEOUT.as_nanos() as u64;
    loop {
        let live = run.live();
        if run.unfinished_threads() == 0 && run.all_done() {
            break;
        }
        if crate::sys::monotonic_ns() > deadline {
            return Err(format!("{} tasks did not stop within {STOP_TIMEOUT:?}", live.len().max(1)));
        }
        for (_, tgid, tid) in live {
            crate::sys::tgkill(tgid, tid, WAKE_SIGNAL as i32);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    run.join_threads();
    reap(run, deadline)
}

/// Waits for every task process to exit. One whose parent (another task process) is alive
/// is not ours to wait for yet; when that parent exits it is reparented to this process
/// (`PR_SET_CHILD_SUBREAPER`).
fn reap(run: &Run, deadline: u64) -> Result<(), String> {
    let mut left = run.process_pids();
    while !left.is_empty() {
        left.retain(|&pid| {
            let mut status = 0;
            // SAFETY: plain syscalls on a pid this run created.
            let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG | libc::__WALL) };
            match r {
                0 => true,
                r if r > 0 => false,
                _ => (unsafe { libc::kill(pid, 0) }) == 0,
            }
        });
        if left.is_empty() {
            break;
        }
        if crate::sys::monotonic_ns() > deadline {
            return Err(format!("task processes {left:?} did not exit within {STOP_TIMEOUT:?}"));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Ok(())
}

/// Stops the tasks if the controller leaves early (an error or a panic between start and
/// teardown), so no thread outlives the run.
pub struct StopGuard<'a>(pub &'a Run);

impl Drop for StopGuard<'_> {
    fn drop(&mut self) {
        let _ = stop_all(self.0);
    }
}

/// Makes this process the reaper of orphaned task processes for the run
/// (`PR_SET_CHILD_SUBREAPER`), restoring the previous setting on drop.
pub struct Subreaper(libc::c_int);

impl Subreaper {
    pub fn set() -> Subreaper {
        let mut prev: libc::c_int = 0;
        // SAFETY: prctl with an out-pointer to a c_int, then an integer argument.
        unsafe {
            libc::prctl(libc::PR_GET_CHILD_SUBREAPER, &mut prev as *mut libc::c_int);
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong);
        }
        Subreaper(prev)
    }
}

impl Drop for Subreaper {
    fn drop(&mut self) {
        // SAFETY: integer argument.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, self.0 as libc::c_ulong) };
    }
}
