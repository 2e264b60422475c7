//! Tidy tables written as Parquet when the output file's name ends in `.parquet` (the
//! sweep table, the per-task tables under `--out`). Parquet support is the cargo feature
//! `parquet` (on by default); a build without it refuses a `.parquet` output before any run
//! starts, rather than after the runs.

use crate::CliError;
use std::path::Path;

/// Whether this build writes Parquet.
pub const PARQUET: bool = cfg!(feature = "parquet");

/// Whether `path` names a Parquet file.
pub fn is_parquet(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

/// Refuses a Parquet output in a build without the `parquet` feature (exit status 2).
pub fn check(path: &Path) -> Result<(), CliError> {
    if is_parquet(path) && !PARQUET {
        return Err(CliError::input(format!(
            "{}: this schedlab was built without Parquet support (build it with `--features parquet`), \
             or write CSV",
            path.display()
        )));
    }
    Ok(())
}

/// The Parquet file of a table of text cells (`columns` in `text` stay strings).
#[cfg(feature = "parquet")]
pub fn parquet(columns: &[String], rows: &[Vec<String>], text: &[&str]) -> Result<Vec<u8>, CliError> {
    schedlab_report::parquet::table(columns, rows, text).map_err(|message| CliError { message, code: 1 })
}

#[cfg(not(feature = "parquet"))]
pub fn parquet(_: &[String], _: &[Vec<String>], _: &[&str]) -> Result<Vec<u8>, CliError> {
    Err(CliError::input("this schedlab was built without Parquet support (build it with `--features parquet`)"))
}

/// The per-task table of `rs` as Parquet (`None` in a build without the feature).
pub fn tasks(rs: &[schedlab_metrics::RunRecord]) -> Option<Result<Vec<u8>, CliError>> {
    #[cfg(feature = "parquet")]
    return Some(schedlab_report::parquet::tasks(rs).map_err(|message| CliError { message, code: 1 }));
    #[cfg(not(feature = "parquet"))]
    {
        let _ = rs;
        None
    }
}
