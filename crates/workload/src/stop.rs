//! Interruptible loading: the caller's stop check (a signal handler's flag), polled every
//! [`POLL_EVERY`] steps — tasks, objects, operations, JSON values, rt-app events — so that
//! Ctrl-C or SIGTERM ends the load of a large file within milliseconds, with
//! [`LoadError::Interrupted`].

use schedlab_sim::SourceError;

/// Steps between two calls of the stop check (a step costs well under a microsecond).
pub const POLL_EVERY: u32 = 4096;

/// Why loading a workload ended without one.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file is wrong: where and why.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// The caller's stop check asked to stop; nothing is known to be wrong with the file.
    #[error("{file}: loading interrupted")]
    Interrupted { file: String },
}

/// The stop check and the steps counted since it was last called.
pub(crate) struct Stop<'s> {
    check: &'s mut dyn FnMut() -> bool,
    steps: u32,
    stopped: bool,
}

impl<'s> Stop<'s> {
    /// Asks `check` once at once (a stop requested before loading began ends it there).
    pub(crate) fn new(check: &'s mut dyn FnMut() -> bool) -> Self {
        let stopped = check();
        Stop { check, steps: 0, stopped }
    }
    /// Counts one step of work, asking the check every [`POLL_EVERY`] steps. Whether to
    /// stop: once the check said so, every later step says so too, and the callers unwind
    /// with an error of their own kind that [`Stop::stopped`] tells from a real one.
    pub(crate) fn step(&mut self) -> bool {
        if !self.stopped {
            self.steps += 1;
            if self.steps >= POLL_EVERY {
                self.steps = 0;
                self.stopped = (self.check)();
            }
        }
        self.stopped
    }
    pub(crate) fn stopped(&self) -> bool {
        self.stopped
    }
}

/// The stop check as the parser's `&self` methods count steps on it (a trait object keeps
/// the parser's lifetime covariant).
pub(crate) trait Steps {
    /// [`Stop::step`].
    fn step(&self) -> bool;
}

impl Steps for std::cell::RefCell<Stop<'_>> {
    fn step(&self) -> bool {
        self.borrow_mut().step()
    }
}
