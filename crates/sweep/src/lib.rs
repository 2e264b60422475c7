//! Sweeps: one workload over a grid or a list of machines × schedulers × workload
//! parameters × tunables × seeds, run on every local core, as one tidy table (one row per
//! run; CSV). Each run is a self-contained [`Point`], so other executors (the Python
//! package's Ray backend) run the same points and assemble the same [`Table`].
//!
//! ```
//! let spec = "workload = \"w.toml\"\nduration = \"20ms\"\n[grid]\nschedulers = [\"cfs\", \"ule\"]\nseeds = [1, 2]\n";
//! let wl = "[[task]]\nname = \"t\"\nprogram = [ { run = \"5ms\" }, { sleep = \"1ms\" } ]\n";
//! let sweep = schedlab_sweep::parse("s.toml", spec, &|p| Ok((p.to_string(), wl.to_string())))?;
//! let table = schedlab_sweep::run_local(&sweep.points, 2, &|_, _| true, &|_| {})?;
//! assert_eq!(table.rows.len(), 4);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Determinism: every run depends only on its point, rows are put in run order, columns in
//! order of first appearance, so the table is the same on 1 core, 64, or a Ray cluster.

#![forbid(unsafe_code)]

pub mod metrics;
pub mod point;
pub mod spec;
pub mod table;

pub use point::{Point, Row};
pub use spec::{parse, Sweep, MAX_RUNS};
pub use table::Table;

use rayon::prelude::*;
use schedlab_run::RunError;
use schedlab_sim::Ns;

/// Runs `points` on `jobs` threads (0: every core). `keep_going(run, now)` is polled as in
/// `RunSpec::run`; `done(run)` is called as each run finishes. Every point is checked
/// before any runs; the first failing run (in run order) is the error.
pub fn run_local(
    points: &[Point],
    jobs: usize,
    keep_going: &(dyn Fn(usize, Ns) -> bool + Sync),
    done: &(dyn Fn(usize) + Sync),
) -> Result<Table, RunError> {
    for p in points {
        p.spec().map_err(|e| p.locate(e))?;
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| RunError::Input(format!("cannot start {jobs} worker threads: {e}")))?;
    let rows: Vec<Result<Row, RunError>> = pool.install(|| {
        points
            .par_iter()
            .map(|p| {
                let r = p.run(&mut |now| keep_going(p.run, now));
                done(p.run);
                r
            })
            .collect()
    });
    Ok(Table::from_rows(rows.into_iter().collect::<Result<Vec<_>, _>>()?))
}

/// Resolves a sweep file's `workload` value: a path relative to the sweep file's
/// directory `dir`, else a built-in study's name.
pub fn load_workload(dir: &std::path::Path, name: &str) -> Result<(String, String), String> {
    let path = dir.join(name);
    match schedlab_run::read_input(&path) {
        Ok(text) => Ok((path.display().to_string(), text)),
        Err(RunError::Io { .. }) => match schedlab_studies::builtin_workload(name) {
            Some(text) => Ok((name.to_string(), text.to_string())),
            None => Err(format!("no workload file `{}` and no built-in study of that name", path.display())),
        },
        Err(e) => Err(e.to_string()),
    }
}

/// Parses sweep file `path` (its text `text`), resolving its workload beside it.
pub fn parse_file(path: &std::path::Path, text: &str) -> Result<Sweep, RunError> {
    let dir = path.parent().map(std::path::Path::to_path_buf).unwrap_or_default();
    Ok(parse(&path.display().to_string(), text, &|w| load_workload(&dir, w))?)
}
