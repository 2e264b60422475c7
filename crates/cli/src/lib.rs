//! The `schedlab` command's machinery, as a library so tests can drive it without a shell.
//! Runs themselves are `schedlab-run`'s; this crate parses arguments, shows progress, handles
//! Ctrl-C and writes outputs.
//!
//! Architecture Invariant: this crate (with `schedlab-run`, and `schedlab-calibrate` which
//! measures the host) is the only one that touches files, the environment, stdout/stderr
//! and exit codes; the crates below are pure.

/// `print!` that never panics: [`output::stdout`] (a closed pipe exits quietly, a full
/// disk is an error). Evaluates to `Result<(), CliError>`.
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => { $crate::output::stdout(&format!($($t)*)) };
}

/// `println!` through [`output::stdout`].
#[macro_export]
macro_rules! outln {
    () => { $crate::output::stdout("\n") };
    ($($t:tt)*) => { $crate::output::stdout(&format!("{}\n", format_args!($($t)*))) };
}

/// `eprintln!` that never panics ([`output::note`]).
#[macro_export]
macro_rules! note {
    ($($t:tt)*) => { $crate::output::note(&format!($($t)*)) };
}

pub mod bench;
pub mod calibrate;
pub mod completions;
pub mod convert;
pub mod edf_simso;
pub mod examples;
pub mod explain;
pub mod flags;
pub mod fuzz;
pub mod many;
pub mod memlimit;
pub mod output;
pub mod perf_sched;
pub mod progress;
pub mod ray;
pub mod replay;
pub mod reproduce;
pub mod signals;
pub mod study;
pub mod sweep;
pub mod tables;
pub mod validate;

use schedlab_run::RunError;
use std::fmt;

/// A user-facing error; `code` is the process exit status.
#[derive(Debug)]
pub struct CliError {
    pub message: String,
    pub code: u8,
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl CliError {
    pub fn input(m: impl Into<String>) -> CliError {
        CliError { message: m.into(), code: 2 }
    }
}

/// Exit status 2 when the input is at fault (a bad file, name or value, a limit, a backend
/// this build lacks), 1 when a run failed.
impl From<RunError> for CliError {
    fn from(e: RunError) -> Self {
        let code = match e {
            RunError::Source(_)
            | RunError::Input(_)
            | RunError::Io { .. }
            | RunError::Limit(_)
            | RunError::Unavailable(_) => 2,
            RunError::Simulation(_) | RunError::Host(_) => 1,
            // Stopped by SIGINT/SIGTERM before a run began: 128 + the signal.
            RunError::Interrupted(_) => signals::exit_status().unwrap_or(130),
        };
        CliError { message: e.to_string(), code }
    }
}

/// Splits `KEY=VALUE`.
pub fn parse_kv(s: &str, what: &str) -> Result<(String, String), CliError> {
    s.split_once('=')
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .filter(|(k, _)| !k.is_empty())
        .ok_or_else(|| CliError::input(format!("{what} `{s}`: expected KEY=VALUE")))
}

/// Writes `contents` to `path` through [`output::write_file`]: regular files atomically
/// (temp file beside it, then rename), devices and FIFOs in place, symlinks followed.
pub fn write_atomic(path: &std::path::Path, contents: &str) -> Result<(), CliError> {
    output::write_file(path, contents.as_bytes())
}

/// [`write_atomic`] for bytes.
pub fn write_atomic_bytes(path: &std::path::Path, contents: &[u8]) -> Result<(), CliError> {
    output::write_file(path, contents)
}
