//! Scheduling traces → schedlab workloads.
//!
//! Reads what a kernel (or a schedlab run) recorded — `perf sched record`'s `perf.data`,
//! ftrace / trace-cmd text, Perfetto protobuf — into one normalized event list
//! ([`Trace`]), infers each thread's program from it ([`model`]: CPU bursts, sleeps, forks,
//! exits, and who woke whom as futex-word dependencies), and writes that as a native
//! workload file ([`emit`]). [`probe`] turns the same events into `ProbeEvent`s, so the
//! trace's own metrics are computed by the same `Metrics` probe as a simulation's.
//!
//! Architecture Invariant: this crate is pure — it reads bytes it is given and never
//! touches files, clocks or the environment; a malformed or truncated input is an
//! [`ImportError`] naming where, never a panic.
//!
//! Every long loop (the lines, records or packets read, the events modelled, emitted and
//! observed) asks a caller's [`KeepGoing`] every [`POLL_EVERY`] items, so a command that
//! imports a large trace stops within moments of Ctrl-C or SIGTERM: [`read_with`],
//! [`model::build_with`], [`emit::workload_with`], [`probe::observe_with`].

#![forbid(unsafe_code)]

mod compact;
pub mod emit;
mod error;
mod event;
mod ftrace;
pub mod model;
mod perf;
mod perfetto;
pub mod probe;

pub use error::ImportError;

/// Asked now and then during long work: `false` stops it ([`ImportError::interrupted`],
/// [`Interrupted`], or what was observed so far).
pub type KeepGoing<'a> = &'a dyn Fn() -> bool;

/// Items (lines, records, packets, events, threads) between two questions to a
/// [`KeepGoing`]: a few microseconds of work at most, so the question costs nothing.
pub const POLL_EVERY: u32 = 4096;

/// The work was stopped by its [`KeepGoing`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interrupted;

/// Counts items and asks the [`KeepGoing`] at the first and then every [`POLL_EVERY`]th.
pub(crate) struct Poll<'a> {
    keep_going: KeepGoing<'a>,
    n: u32,
}

impl<'a> Poll<'a> {
    pub(crate) fn new(keep_going: KeepGoing<'a>) -> Poll<'a> {
        Poll { keep_going, n: POLL_EVERY - 1 }
    }

    /// One more item: whether to stop.
    pub(crate) fn stop(&mut self) -> bool {
        self.n += 1;
        if self.n < POLL_EVERY {
            return false;
        }
        self.stop_now()
    }

    /// Whether to stop, asked now (before an item that may itself be long).
    pub(crate) fn stop_now(&mut self) -> bool {
        self.n = 0;
        !(self.keep_going)()
    }
}
pub use event::{Ev, Kind, PrevState, Trace, TraceFormat};

/// Hard limits, checked while reading: a trace larger than this is refused with a
/// [`ImportError`] rather than exhausting memory.
pub const MAX_TRACE_BYTES: usize = 512 << 20;
/// At most this many events are kept from one trace.
pub const MAX_EVENTS: usize = 20_000_000;
/// CPU numbers at or above this (an event's CPU, a migration's or a wakeup's target) are
/// refused: the machine model's limit, and a bound on every per-CPU table built here.
pub const MAX_CPUS: usize = 4096;

/// Which reader a file's first bytes call for: `PERFILE2` is `perf.data`, a leading
/// protobuf tag of `Trace.packet` (field 1, length-delimited: byte 0x0a) a Perfetto trace,
/// and anything that decodes as UTF-8 text ftrace; `None`: none of these.
pub fn detect(bytes: &[u8]) -> Option<TraceFormat> {
    if bytes.starts_with(b"PERFILE2") || bytes.starts_with(b"2ELIFREP") {
        Some(TraceFormat::Perf)
    } else if bytes.first() == Some(&0x0a) {
        Some(TraceFormat::Perfetto)
    } else if !bytes.is_empty() && std::str::from_utf8(&bytes[..bytes.len().min(4096)]).is_ok_and(ftrace::looks_like) {
        Some(TraceFormat::Ftrace)
    } else {
        None
    }
}

/// Reads a trace of any supported format; `file` names it in errors.
pub fn read(file: &str, bytes: &[u8]) -> Result<Trace, ImportError> {
    read_with(file, bytes, &|| true)
}

/// [`read`], stopped with [`ImportError::interrupted`] once `keep_going` says so.
pub fn read_with(file: &str, bytes: &[u8], keep_going: KeepGoing) -> Result<Trace, ImportError> {
    let mut poll = Poll::new(keep_going);
    if bytes.len() > MAX_TRACE_BYTES {
        return Err(ImportError::new(file, format!("{} bytes exceed the limit of {MAX_TRACE_BYTES}", bytes.len())));
    }
    let mut t = match detect(bytes) {
        Some(TraceFormat::Perf) => perf::read(file, bytes, &mut poll)?,
        Some(TraceFormat::Perfetto) => perfetto::read(file, bytes, &mut poll)?,
        Some(TraceFormat::Ftrace) => ftrace::read(file, bytes, &mut poll)?,
        None => {
            return Err(ImportError::new(
                file,
                "not a trace schedlab reads: expected perf.data (`perf sched record`), ftrace/trace-cmd \
                 text (`trace-cmd report`, `/sys/kernel/tracing/trace`) or a Perfetto trace",
            ))
        }
    };
    t.finish(file)?;
    Ok(t)
}
