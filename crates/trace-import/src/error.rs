//! `ImportError`: a trace that cannot be imported, located by line and column or byte
//! offset, with the event field at fault.

use std::fmt;

/// A trace that cannot be imported: the file, where in it (a line and column for text,
/// a byte offset for binary formats, or nothing for the whole file), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    pub file: String,
    /// `12:5` (line:column) or `byte 4096`; empty when the whole file is at fault.
    pub at: String,
    /// The event field at fault (`sched_switch.prev_pid`), if any.
    pub field: String,
    pub message: String,
    /// Stopped by the caller (`read_with`'s `keep_going`), not a fault of the file.
    pub interrupted: bool,
}

impl ImportError {
    pub fn new(file: &str, message: impl Into<String>) -> ImportError {
        ImportError {
            file: file.into(),
            at: String::new(),
            field: String::new(),
            message: message.into(),
            interrupted: false,
        }
    }

    /// Reading stopped at `at` because the caller asked.
    pub fn interrupted(file: &str, at: impl Into<String>) -> ImportError {
        ImportError { at: at.into(), interrupted: true, ..ImportError::new(file, "interrupted") }
    }

    pub fn at(file: &str, at: impl Into<String>, field: &str, message: impl Into<String>) -> ImportError {
        ImportError { at: at.into(), field: field.into(), ..ImportError::new(file, message) }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if !self.at.is_empty() {
            write!(f, ":{}", self.at)?;
        }
        if !self.field.is_empty() {
            write!(f, ": field `{}`", self.field)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ImportError {}
