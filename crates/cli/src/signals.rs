//! SIGINT (Ctrl-C) and SIGTERM (what `timeout` and `kill` send) stop a run the same way:
//! the run ends at its next poll with what it measured (`"end_reason": "interrupted"`), the
//! outputs are written, and the process exits with 128 + the signal's number (130 for
//! SIGINT, 143 for SIGTERM), as a shell reports a command the signal killed.
//!
//! The phases before and after a simulation ask too ([`keep_going`]): reading a trace,
//! modelling it and writing its workload (`import`, `replay`), converting an rt-app file.
//! One stopped before it has anything to write ends with [`interrupted`].
//!
//! One `sigaction` with an atomic rather than the `signal-hook` crate: the exit status must
//! name the *first* stopping signal (130 or 143) when both arrive, a `compare_exchange` in
//! the handler, where `signal-hook`'s flag helpers store the last one; `libc` is already a
//! dependency, and this is the whole of the handler.

use crate::CliError;
use std::sync::atomic::{AtomicI32, Ordering};

/// The first stopping signal received (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // Async-signal-safe: one atomic operation. The first signal is the one reported.
    let _ = RECEIVED.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
}

/// Installs the handler for SIGINT and SIGTERM (`SA_RESTART`: interrupted reads and
/// writes resume).
pub fn install() -> Result<(), String> {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction is valid; the handler is async-signal-safe.
        let r = unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            act.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(sig, &act, std::ptr::null_mut())
        };
        if r != 0 {
            return Err(format!("sigaction({sig}): {}", std::io::Error::last_os_error()));
        }
    }
    Ok(())
}

/// Whether SIGINT or SIGTERM has arrived.
pub fn stop_requested() -> bool {
    RECEIVED.load(Ordering::SeqCst) != 0
}

/// Whether no stopping signal has arrived: the `keep_going` callback of long phases.
pub fn keep_going() -> bool {
    !stop_requested()
}

/// The error of a phase a signal stopped with nothing to write: "interrupted while `what`",
/// exit status 128 + the signal's number.
pub fn interrupted(what: &str) -> CliError {
    CliError { message: format!("interrupted while {what}; nothing written"), code: exit_status().unwrap_or(130) }
}

/// `r`, or [`interrupted`] when a signal arrived meanwhile (the phase's error is then its
/// reaction to the signal, not a fault of the input).
pub fn or_interrupted<T, E: Into<CliError>>(r: Result<T, E>, what: &str) -> Result<T, CliError> {
    match r {
        Err(_) if stop_requested() => Err(interrupted(what)),
        r => r.map_err(Into::into),
    }
}

/// The exit status an interrupted process ends with: 128 + the first signal's number.
pub fn exit_status() -> Option<u8> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(128u8.saturating_add(sig as u8)),
    }
}
