//! Resolving a run's inputs: machine presets and files, the workload's machine hint and the
//! studies built into the library.

use crate::RunError;
use schedlab_machine::{parse_machine, preset, Machine};

/// A machine: a preset name, else a machine file (TOML).
pub fn load_machine(spec: &str) -> Result<Machine, RunError> {
    if let Some(m) = preset(spec) {
        return Ok(m);
    }
    if std::path::Path::new(spec).exists() {
        let text = std::fs::read_to_string(spec).map_err(|source| RunError::Io { path: spec.to_string(), source })?;
        return Ok(parse_machine(spec, &text)?);
    }
    let names: Vec<&str> = schedlab_machine::PRESETS.iter().map(|p| p.0).collect();
    Err(RunError::Input(format!("unknown machine `{spec}`: not a preset ({}) and no such file", names.join(", "))))
}

/// Reads `machine = "…"` from a workload without validating the rest (the machine is
/// needed to validate affinities).
pub fn workload_machine_hint(text: &str) -> Option<String> {
    let doc = toml::de::DeTable::parse(text).ok()?;
    let v = doc.get_ref().iter().find(|(k, _)| k.get_ref() == "machine")?.1;
    v.get_ref().as_str().map(str::to_string)
}

/// Studies built into the library, by name: workload files of `examples/studies/`.
pub const STUDIES: &[(&str, &str)] = &[
    ("ule-cfs-fibo-sysbench", include_str!("../../../examples/studies/ule-cfs-fibo-sysbench.toml")),
    ("ule-cfs-sysbench128", include_str!("../../../examples/studies/ule-cfs-sysbench128.toml")),
    ("ule-cfs-unpin512", include_str!("../../../examples/studies/ule-cfs-unpin512.toml")),
];

/// The workload text of built-in study `name` (a trailing `.toml` is ignored).
pub fn builtin_study(name: &str) -> Option<&'static str> {
    let stem = name.trim_end_matches(".toml");
    STUDIES.iter().find(|(n, _)| *n == stem).map(|(_, t)| *t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_study_parses_on_its_machine() {
        for (name, text) in STUDIES {
            let m = load_machine(&workload_machine_hint(text).unwrap_or_else(|| "smp4".into())).unwrap();
            schedlab_workload::parse_workload(name, text, &[], m.nr_cpus()).unwrap();
            assert_eq!(builtin_study(&format!("{name}.toml")), Some(*text));
        }
    }

    #[test]
    fn an_unknown_machine_lists_the_presets() {
        let e = load_machine("cray-1").unwrap_err();
        assert!(matches!(e, RunError::Input(_)) && e.to_string().contains("smp4"), "{e}");
    }
}
