//! `schedlab sweep SPEC.toml`: every run of a sweep file on the local cores, with a
//! progress bar, written as one tidy table: CSV, or Parquet to a file named `*.parquet`
//! (`docs/sweep.md`).

use crate::{signals, write_atomic, CliError};
use std::path::Path;

/// Where a sweep runs: on this machine's cores, or on a Ray cluster through a Python
/// interpreter with the schedlab package and Ray (`crate::ray`).
pub enum Where<'a> {
    /// On `jobs` threads (default: every core).
    Local { jobs: Option<usize> },
    /// On the Ray cluster at `address` (`HOST:PORT`, `auto`, `local`).
    Ray { address: &'a str, python: &'a Path },
}

/// Runs sweep file `spec` where `at` says and writes the table to `output` (default:
/// stdout). Ctrl-C ends the runs early; locally their rows say `interrupted`, on Ray the
/// sweep ends without a table.
pub fn run(spec: &Path, at: Where, output: Option<&Path>) -> Result<(), CliError> {
    let text = schedlab_run::read_input(spec)?;
    let sweep = schedlab_sweep::parse_file(spec, &text)?;
    if let Some(o) = output {
        crate::output::check_parent(o)?;
        crate::tables::check(o)?;
    }
    let n = sweep.points.len() as u64;
    let bar = indicatif::ProgressBar::new(n);
    bar.set_style(
        indicatif::ProgressStyle::with_template("sweep [{bar:40}] {pos}/{len} runs ({elapsed}, eta {eta})")
            .expect("valid template"),
    );
    let table = match at {
        Where::Local { jobs } => {
            let keep_going = |_, _| !signals::stop_requested();
            schedlab_sweep::run_local(&sweep.points, jobs.unwrap_or(0), &keep_going, &|_| bar.inc(1))
                .map_err(CliError::from)
        }
        Where::Ray { address, python } => crate::ray::run(&sweep.points, address, python, &|| bar.inc(1)),
    };
    bar.finish_and_clear();
    if signals::stop_requested() {
        note!("interrupted: the table holds what each run measured so far");
    }
    let table = table?;
    match output {
        Some(path) if crate::tables::is_parquet(path) => {
            let file = crate::tables::parquet(&table.columns, &table.rows, &table.text_columns())?;
            crate::write_atomic_bytes(path, &file)?;
            note!("wrote {} runs to {}", n, path.display());
            Ok(())
        }
        Some(path) => {
            write_atomic(path, &table.to_csv())?;
            note!("wrote {} runs to {}", n, path.display());
            Ok(())
        }
        None => out!("{}", table.to_csv()),
    }
}
