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
    if bytes.len() > MAX_TRACE_BYTES {
        return Err(ImportError::new(file, format!("{} bytes exceed the limit of {MAX_TRACE_BYTES}", bytes.len())));
    }
    let mut t = match detect(bytes) {
        Some(TraceFormat::Perf) => perf::read(file, bytes)?,
        Some(TraceFormat::Perfetto) => perfetto::read(file, bytes)?,
        Some(TraceFormat::Ftrace) => ftrace::read(file, bytes)?,
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
