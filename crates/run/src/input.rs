//! Resolving a run's inputs: machine presets and files, and the workload's machine hint.

use crate::RunError;
use schedlab_machine::{parse_machine, preset, Machine};

/// Largest input file read (workloads, machine files): 16 MiB, far above any real one.
pub const MAX_INPUT_BYTES: u64 = 16 << 20;

/// Reads an input file as UTF-8 text, at most [`MAX_INPUT_BYTES`]. A directory or device
/// is refused before reading (`/dev/zero` once read until memory ran out); a pipe is read
/// (`<(generate)`), but no further than the limit.
pub fn read_input(path: &std::path::Path) -> Result<String, RunError> {
    use std::io::Read;
    let name = path.display().to_string();
    let input = |m: String| RunError::Input(format!("{name}: {m}"));
    let file = std::fs::File::open(path).map_err(|source| RunError::Io { path: name.clone(), source })?;
    let kind = file.metadata().map_err(|source| RunError::Io { path: name.clone(), source })?.file_type();
    if !kind.is_file() && !is_fifo(&kind) {
        let what = if kind.is_dir() { "a directory" } else { "not a regular file (a device?)" };
        return Err(input(format!("is {what}; expected a TOML file")));
    }
    let mut bytes = Vec::new();
    file.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| RunError::Io { path: name.clone(), source })?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(RunError::Limit(format!("{name} is larger than {} MiB", MAX_INPUT_BYTES >> 20)));
    }
    String::from_utf8(bytes).map_err(|e| input(format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to())))
}

#[cfg(unix)]
fn is_fifo(kind: &std::fs::FileType) -> bool {
    std::os::unix::fs::FileTypeExt::is_fifo(kind)
}
#[cfg(not(unix))]
fn is_fifo(_: &std::fs::FileType) -> bool {
    false
}

/// A machine: `host` (this host's CPUs, flat), a preset name, else a machine file (TOML).
pub fn load_machine(spec: &str) -> Result<Machine, RunError> {
    if spec == crate::Backend::HOST_SCHEDULER {
        #[cfg(not(target_arch = "wasm32"))]
        return Ok(crate::host::host_machine());
        #[cfg(target_arch = "wasm32")]
        return crate::host::host_machine();
    }
    if let Some(m) = preset(spec) {
        return Ok(m);
    }
    if std::path::Path::new(spec).exists() {
        let text = read_input(std::path::Path::new(spec))?;
        return Ok(parse_machine(spec, &text)?);
    }
    let names: Vec<&str> = schedlab_machine::PRESETS.iter().map(|p| p.0).collect();
    Err(RunError::Input(format!(
        "unknown machine `{spec}`: not a preset ({}, or `host`) and no such file",
        names.join(", ")
    )))
}

/// The machine for a command running schedulers `scheds` (comma-separated): `flag` if
/// given; else, when `host` is among them and the workload names no machine, this host (so
/// simulations compared with the real run get as many CPUs).
pub fn machine_for(flag: Option<&str>, workload_text: &str, scheds: &str) -> Option<String> {
    if let Some(m) = flag {
        return Some(m.to_string());
    }
    let host = scheds.split(',').any(|s| s.trim() == crate::Backend::HOST_SCHEDULER);
    (host && workload_machine_hint(workload_text).is_none()).then(|| crate::Backend::HOST_SCHEDULER.to_string())
}

/// Reads `machine = "…"` from a workload without validating the rest (the machine is
/// needed to validate affinities).
pub fn workload_machine_hint(text: &str) -> Option<String> {
    let doc = toml::de::DeTable::parse(text).ok()?;
    let v = doc.get_ref().iter().find(|(k, _)| k.get_ref() == "machine")?.1;
    v.get_ref().as_str().map(str::to_string)
}

/// The schedulers `compare`, `report` and `study` run when none are named: the
/// workload's `schedulers`, else [`DEFAULT_COMPARE`].
pub fn default_schedulers(text: &str) -> String {
    let named = || -> Option<String> {
        let doc = toml::de::DeTable::parse(text).ok()?;
        let v = doc.get_ref().iter().find(|(k, _)| k.get_ref() == "schedulers")?.1;
        let list: Option<Vec<&str>> = v.get_ref().as_array()?.iter().map(|e| e.get_ref().as_str()).collect();
        list.filter(|l| !l.is_empty()).map(|l| l.join(","))
    };
    named().unwrap_or_else(|| DEFAULT_COMPARE.to_string())
}

/// What `compare`, `report` and `study` run by default: current Linux, the CFS it
/// replaced, and FreeBSD's ULE.
pub const DEFAULT_COMPARE: &str = "eevdf,cfs,ule";

/// The scheduler of `run` and `plot` by default: the one Linux runs today.
pub const DEFAULT_SCHEDULER: &str = "eevdf";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_machine_lists_the_presets() {
        let e = load_machine("cray-1").unwrap_err();
        assert!(matches!(e, RunError::Input(_)) && e.to_string().contains("smp4"), "{e}");
    }
}
