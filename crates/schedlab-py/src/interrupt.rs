//! Long runs without the GIL, interruptible with Ctrl-C.
//!
//! Python handles signals only on its main thread, holding the GIL. The work runs on a
//! scoped thread; the caller waits for it in slices without the GIL and checks for signals
//! between them. On `KeyboardInterrupt` it raises the stop flag every run polls (so the
//! runs end within a few thousand events), waits for the work to return, and re-raises.

use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// How long the caller waits without looking at signals.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Runs `work(stop)` off the GIL; `stop` becomes true when the user interrupts.
pub fn with_interrupts<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce(&AtomicBool) -> T + Send,
{
    let stop = AtomicBool::new(false);
    let mut interrupted: Option<PyErr> = None;
    let value = std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel();
        let stop = &stop;
        scope.spawn(move || {
            // The receiver outlives the thread (the loop below waits for this message).
            let _ = tx.send(work(stop));
        });
        let mut rx = rx;
        loop {
            // The receiver is not `Sync`: it moves into the GIL-free closure and back.
            let (got, back) = py.detach(move || (rx.recv_timeout(SIGNAL_POLL), rx));
            rx = back;
            match got {
                Ok(v) => break Some(v),
                Err(mpsc::RecvTimeoutError::Disconnected) => break None,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if interrupted.is_none() {
                if let Err(e) = py.check_signals() {
                    stop.store(true, Ordering::Relaxed);
                    interrupted = Some(e);
                }
            }
        }
    });
    if let Some(e) = interrupted {
        return Err(e);
    }
    // A panic in the work thread is re-raised by `scope`; without one, the value was sent.
    value.ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("the run's thread ended without a result"))
}

/// The `keep_going` of a run that stops when `stop` is raised.
pub fn until(stop: &AtomicBool) -> impl Fn() -> bool + '_ {
    move || !stop.load(Ordering::Relaxed)
}
