//! `schedlab import` (a trace → a workload file) and the parts of `schedlab replay` beyond
//! an ordinary comparison: the imported workload kept in a temporary file the runs read,
//! and the trace's own record ("as it happened") put first.

use crate::{signals, write_atomic, CliError};
use schedlab_run::replay::{self, Imported};
use schedlab_run::{RunRecord, RunSpec};
use schedlab_trace_import::model::Options;
use std::path::{Path, PathBuf};

/// `schedlab import TRACE [-o FILE] [--only NAME…]`.
pub fn import(trace: &Path, output: Option<&Path>, only: Vec<String>) -> Result<(), CliError> {
    let imp = read(trace, only)?;
    match output {
        Some(p) => {
            write_atomic(p, &imp.text)?;
            note!("wrote {}", p.display());
        }
        None => out!("{}", imp.text)?,
    }
    Ok(())
}

/// Imports `trace` (stopping at SIGINT/SIGTERM) and says what it found, warnings first.
fn read(trace: &Path, only: Vec<String>) -> Result<Imported, CliError> {
    let r = replay::import_file_with(trace, &Options { only }, &signals::keep_going);
    let imp = signals::or_interrupted(r, &format!("importing {}", trace.display()))?;
    for w in &imp.trace.warnings {
        note!("warning: {}", schedlab_report::escape(w));
    }
    summary(&imp);
    Ok(imp)
}

fn summary(imp: &Imported) {
    let m = &imp.model;
    note!(
        "imported {} threads ({} wake dependencies over {} pairs, {} external wakeups) from a {} trace of {:.3} ms",
        m.threads.len(),
        m.wakes_by_thread,
        m.edges.len(),
        m.wakes_external,
        imp.trace.format.name(),
        m.end as f64 / 1e6
    );
}

/// A trace imported for replay: the workload file lives as long as this does.
pub struct Replay {
    pub imported: Imported,
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Replay {
    /// Imports `trace` and writes its workload where the runs read it.
    pub fn import(trace: &Path, only: Vec<String>) -> Result<Replay, CliError> {
        let imported = read(trace, only)?;
        let dir =
            tempfile::tempdir().map_err(|e| CliError { message: format!("temporary directory: {e}"), code: 1 })?;
        let stem = trace.file_stem().map_or("trace".into(), |s| s.to_string_lossy().into_owned());
        let path = dir.path().join(format!("{stem}.toml"));
        write_atomic(&path, &imported.text)?;
        Ok(Replay { imported, _dir: dir, path })
    }

    /// The imported workload file.
    pub fn workload(&self) -> &Path {
        &self.path
    }

    /// The trace's record, measured as a run of `spec` (the workload on the chosen machine).
    pub fn as_happened(&self, spec: &RunSpec) -> RunRecord {
        let r = replay::as_happened_with(spec, &self.imported, &signals::keep_going);
        if r.end_reason.to_string() == "interrupted" {
            note!("interrupted: the trace's own column covers its first {:.3} ms", r.sim_ns as f64 / 1e6);
        }
        r
    }

    /// Prints the replay table, or writes it (and the workload) into `dir`.
    pub fn report(&self, rs: &[RunRecord], dir: Option<&Path>) -> Result<(), CliError> {
        let table = schedlab_report::replay::table(rs);
        match dir {
            Some(d) => {
                write_atomic(&d.join("replay.txt"), &table)?;
                write_atomic(&d.join("workload.toml"), &self.imported.text)?;
            }
            None => out!("{table}")?,
        }
        Ok(())
    }
}
