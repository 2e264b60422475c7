//! `schedlab calibrate`: measure this host and write its machine file.

use crate::{write_atomic, CliError};
use schedlab_calibrate::{calibrate, Options};
use std::path::Path;

/// Runs the calibration, prints progress (stderr) and the measured table (stdout), and
/// writes the machine file atomically — after checking that it loads.
pub fn run(output: &Path, quick: bool, name: Option<String>) -> Result<(), CliError> {
    let opts = Options { quick, name, ..Options::default() };
    let c = calibrate(&opts, &mut |step| note!("calibrate: {step}"))
        .map_err(|e| CliError { message: e.to_string(), code: 1 })?;
    let text = c.machine_file();
    let file = output.display().to_string();
    schedlab_machine::parse_machine(&file, &text)
        .map_err(|e| CliError { message: format!("the machine file written would not load: {e}"), code: 1 })?;
    out!("{}", c.table())?;
    write_atomic(output, &text)?;
    note!("wrote {file}");
    Ok(())
}
