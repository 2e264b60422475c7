//! The policies the CLI can name, and how a name with `--set`s becomes a policy.

use schedlab_machine::Machine;
use schedlab_sched_api::{SchedClass, Tunable};

/// Builds a policy for a machine with `--set KEY=VALUE` overrides.
pub type MakePolicy = fn(&Machine, &[(String, String)]) -> Result<Box<dyn SchedClass>, String>;

/// A policy the CLI can name.
pub struct PolicyEntry {
    pub name: &'static str,
    pub doc: &'static str,
    /// Builds the policy for a machine with `--set KEY=VALUE` overrides.
    pub make: MakePolicy,
    /// The kernel versions it models (`--set version=…` or `NAME@VERSION`), default last.
    pub versions: &'static [&'static str],
}

use crate::chain::Chain;

pub const REGISTRY: &[PolicyEntry] = &[
    PolicyEntry {
        name: "eevdf",
        doc: "Linux EEVDF (fair.c v6.18; version=6.6|6.12): lag, eligibility, virtual deadlines, slice protection, delayed dequeue, task groups",
        make: |m, s| {
            // The fair server exists from v6.12 (the default version is 6.18).
            let fs = !matches!(version_set(s), Some("6.6"));
            Ok(Box::new(Chain::new(m, s, fs, |rest| crate::fair::Fair::eevdf(m, rest))?))
        },
        versions: &["6.6", "6.12", "6.18"],
    },
    PolicyEntry {
        name: "cfs",
        doc: "Linux CFS (v5.15 fair.c; version=4.9 as in the ULE-vs-CFS study): weighted vruntime, sched_slice, sleeper credit, wakeup granularity, buddies, task groups",
        make: |m, s| Ok(Box::new(Chain::new(m, s, false, |rest| crate::fair::Fair::cfs(m, rest))?)),
        versions: &["4.9", "5.15"],
    },
    PolicyEntry {
        name: "ule",
        doc: "FreeBSD ULE (11.1 sched_ule.c; version=current for 15, 11.1-linux as the ULE-vs-CFS study ran it): interactivity score, calendar queue, pickcpu, CPU-0 balancer, idle stealing",
        make: |m, s| Ok(Box::new(crate::ule::Ule::new(m, s)?)),
        versions: &["current", "11.1-linux", "11.1"],
    },
    PolicyEntry {
        name: "o1",
        doc: "Linux 2.6 O(1) (2.6.20 sched.c, 2.6.11 balancer): active/expired priority arrays, sleep_avg bonus, timeslice by nice, interactive requeueing, sched-domain balancing",
        make: |m, s| Ok(Box::new(crate::o1::O1::new(m, s)?)),
        versions: &[],
    },
    PolicyEntry {
        name: "ext:simple",
        doc: "sched_ext (ext.c v6.12) with scx_simple: one shared DSQ, weighted vtime (fifo=1: FIFO), idle CPUs filled at wakeup; fair 6.12 below/fallback",
        make: |m, s| crate::ext::build(m, s, Box::<crate::ext::examples::simple::Simple>::default()),
        versions: &[],
    },
    PolicyEntry {
        name: "ext:central",
        doc: "sched_ext with scx_central: CPU 0 decides for all CPUs, infinite slices ended by a 1 ms timer",
        make: |m, s| crate::ext::build(m, s, Box::<crate::ext::examples::central::Central>::default()),
        versions: &[],
    },
    PolicyEntry {
        name: "ext:locality",
        doc: "sched_ext with per-LLC vtime DSQs: wakeups stay in their cache, idle CPUs steal from the nearest LLC",
        make: |m, s| crate::ext::build(m, s, Box::<crate::ext::examples::locality::Locality>::default()),
        versions: &[],
    },
    PolicyEntry {
        name: "fifo",
        doc: "reference policy: per-CPU FIFO queues, no preemption; optional round-robin timeslice",
        make: |m, s| Ok(Box::new(crate::fifo::Fifo::new(m, s)?)),
        versions: &[],
    },
];

/// Builds policy `name`, or explains what exists. `NAME@VERSION` (e.g. `eevdf@6.6`) is
/// short for `NAME` with `--set version=VERSION` (later sets still apply).
pub fn make_policy(name: &str, machine: &Machine, sets: &[(String, String)]) -> Result<Box<dyn SchedClass>, String> {
    let (base, version) = match name.split_once('@') {
        Some((b, v)) => (b, Some(v)),
        None => (name, None),
    };
    let mut all = Vec::with_capacity(sets.len() + 1);
    if let Some(v) = version {
        all.push(("version".to_string(), v.to_string()));
    }
    all.extend_from_slice(sets);
    match REGISTRY.iter().find(|e| e.name == base) {
        Some(e) => {
            // Each of a policy's tables took the names it has; any other is unknown.
            let p = (e.make)(machine, &all)?;
            schedlab_sched_api::tunable::check_known(&format!("scheduler `{base}`"), &all, &p.tunables())?;
            Ok(p)
        }
        None => {
            let names: Vec<&str> = REGISTRY.iter().map(|e| e.name).collect();
            Err(format!("unknown scheduler `{name}`; available: {}", names.join(", ")))
        }
    }
}

/// The docs' table of policy `name`'s tunables from the tables `owners` (every table if
/// empty) on `machine`: each tunable any version has, with the versions that have it
/// (versioned policies), its values, its default (in the default version, else the first
/// that has it) and its meaning.
pub fn tunables_markdown(name: &str, machine: &Machine, owners: &[&str]) -> Result<String, String> {
    let e = REGISTRY.iter().find(|e| e.name == name).ok_or_else(|| format!("unknown scheduler `{name}`"))?;
    let of = |p: &dyn SchedClass| -> Vec<Tunable> {
        p.tunables().into_iter().filter(|t| owners.is_empty() || owners.contains(&t.owner)).collect()
    };
    let mut rows = of(&*make_policy(name, machine, &[])?);
    let mut per_version: Vec<(&str, Vec<Tunable>)> = Vec::new();
    for v in e.versions {
        let t = of(&*make_policy(&format!("{name}@{v}"), machine, &[])?);
        for x in &t {
            if !rows.iter().any(|r| r.name == x.name) {
                rows.push(x.clone());
            }
        }
        per_version.push((v, t));
    }
    let versions = |n: &str| -> String {
        let has: Vec<&str> =
            per_version.iter().filter(|(_, t)| t.iter().any(|x| x.name == n)).map(|(v, _)| *v).collect();
        if has.len() == per_version.len() {
            "all".into()
        } else {
            has.join(", ")
        }
    };
    Ok(schedlab_sched_api::tunable::markdown(&rows, (!e.versions.is_empty()).then_some(&versions)))
}

/// The last `version` among the `--set`s.
fn version_set(sets: &[(String, String)]) -> Option<&str> {
    sets.iter().rev().find(|(k, _)| k == "version").map(|(_, v)| v.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every policy sets itself up on a 4096-CPU machine (O(1) once spent 27 s there,
    /// before the first event, building the same groups' `cpu_power` for every CPU).
    #[test]
    fn every_policy_builds_on_4096_cpus() {
        let m = crate::testing::machine_4096();
        for e in REGISTRY {
            let p = make_policy(e.name, &m, &[]).unwrap_or_else(|err| panic!("{}: {err}", e.name));
            assert!(!p.tunables().is_empty(), "{}", e.name);
        }
    }
}
