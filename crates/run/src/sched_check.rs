//! Scheduler names and tunables written in input files, checked before anything runs so
//! that a bad one (an unknown scheduler, a version its kernel model does not have, a
//! tunable or feature that version lacks, a value out of range) is reported at its place
//! in the file: file, line, column and field.

use crate::{Backend, RunError};
use schedlab_machine::Machine;
use schedlab_sim::SourceError;

/// Whether `sched` (`NAME` or `NAME@VERSION`) with tunables and kernel switches `sets` runs
/// on `machine`: the switches are checked and the policy is built as a run builds it, and
/// dropped. `host` is accepted as it is (the real
/// kernel takes no tunables from schedlab; a host run refuses them itself).
pub fn check_scheduler(sched: &str, machine: &Machine, sets: &[(String, String)]) -> Result<(), String> {
    if Backend::for_scheduler(sched) == Backend::Host {
        return Ok(());
    }
    let mut kernel = schedlab_kernel::KernelConfig::default();
    let mut policy = Vec::with_capacity(sets.len());
    for (k, v) in sets {
        if schedlab_kernel::is_switch(k) {
            kernel.set(k, v)?;
        } else {
            policy.push((k.clone(), v.clone()));
        }
    }
    schedlab_policies::make_policy(sched, machine, &policy).map(drop)
}

/// A workload's `schedulers` (what `compare`, `report` and `study` run by default): every
/// entry must name a scheduler and version this build models. Syntax and type errors are
/// the workload parser's, which has run before.
pub(crate) fn check_workload_schedulers(file: &str, text: &str, machine: &Machine) -> Result<(), RunError> {
    let Ok(doc) = toml::de::DeTable::parse(text) else { return Ok(()) };
    let Some((_, v)) = doc.get_ref().iter().find(|(k, _)| k.get_ref() == "schedulers") else { return Ok(()) };
    let Some(list) = v.get_ref().as_array() else { return Ok(()) };
    for (i, e) in list.iter().enumerate() {
        if let Some(name) = e.get_ref().as_str() {
            check_scheduler(name, machine, &[])
                .map_err(|m| SourceError::at(file, text, e.span().start, &format!("schedulers[{i}]"), m))?;
        }
    }
    Ok(())
}
