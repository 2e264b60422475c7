//! `schedlab convert FILE.json`: an rt-app file as native workload TOML, and the notes of
//! what an rt-app file asks that the simulation does not model (printed once per process).

use crate::{signals, CliError};
use std::sync::atomic::{AtomicBool, Ordering};

/// Prints `FILE`'s conversion to TOML on stdout, its notes as comments at the top.
pub fn run(path: &std::path::Path, text: &str) -> Result<(), CliError> {
    let name = path.display().to_string();
    if !schedlab_workload::rtapp::looks_like_json(text) {
        return Err(CliError::input(format!(
            "{name}: not an rt-app file (JSON starting with `{{`); a TOML workload needs no conversion"
        )));
    }
    let c = schedlab_workload::rtapp::convert_until(&name, text, &mut signals::stop_requested);
    let c = c.map_err(|e| match e {
        schedlab_workload::LoadError::Source(s) => CliError::from(schedlab_run::RunError::from(s)),
        schedlab_workload::LoadError::Interrupted { .. } => signals::interrupted(&format!("converting {name}")),
    })?;
    if signals::stop_requested() {
        return Err(signals::interrupted(&format!("converting {name}")));
    }
    let mut s = String::new();
    for n in &c.notes {
        s.push_str(&format!("# note: {n}\n"));
    }
    s.push_str(&c.toml);
    out!("{s}")
}

static NOTED: AtomicBool = AtomicBool::new(false);

/// The workload's notes (an rt-app file's unmodelled settings) on stderr, the first time
/// a workload is loaded: `compare` loads it once per scheduler.
pub fn report_notes(wl: &schedlab_workload::Workload) {
    if wl.notes.is_empty() || NOTED.swap(true, Ordering::SeqCst) {
        return;
    }
    for n in &wl.notes {
        note!("rt-app: {n}");
    }
}
