//! Getting every task out at the end, whatever state it is in.
//!
//! Tasks poll the run's stop flag in their busy loops; a task blocked in the kernel
//! (futex, pipe, `clock_nanosleep`) is interrupted by [`WAKE_SIGNAL`], whose handler does
//! nothing and is installed without `SA_RESTART`, so the call returns `EINTR` and the task
//! sees the flag. The controller repeats the signal until every thread has finished (a
//! signal sent just before a task blocks would otherwise be missed).

use crate::tasks::{lock, Run};
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

/// Stops every task: sets the stop flag, signals blocked threads until all have finished,
/// and joins them. `Err` if some thread did not finish within [`STOP_TIMEOUT`].
pub fn stop_all(run: &Run) -> Result<(), String> {
    run.objs.stop.store(true, SeqCst);
    let deadline = crate::sys::monotonic_ns() + STOP_TIMEOUT.as_nanos() as u64;
    loop {
        let live = run.live();
        let unfinished = lock(&run.tasks).handles.iter().filter(|h| !h.is_finished()).count();
        if unfinished == 0 {
            break;
        }
        if crate::sys::monotonic_ns() > deadline {
            return Err(format!("{unfinished} task threads did not stop within {STOP_TIMEOUT:?}"));
        }
        for (_, tid) in live {
            crate::sys::tgkill(tid, WAKE_SIGNAL as i32);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let handles = std::mem::take(&mut lock(&run.tasks).handles);
    for h in handles {
        let _ = h.join();
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
