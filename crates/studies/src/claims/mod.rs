//! Every study's claims — what its source says, where — and how its runs are read into
//! evidence for them (the contract, `crate::contract`). One module per study (the
//! `ule-cfs-*` studies share `bouron`); the registry (`crate::STUDIES`) names each study's
//! claims and evidence function, so a study without them does not build.
//!
//! An evidence function measures each claim's quantity once per seed and builds the
//! mechanism from the first seed's runs: counters, per-path kernel time, lock statistics and
//! decision records of that run, never a fixed sentence standing in for a result.

pub mod bouron;
pub mod cfs_eevdf;
pub mod cgroup_bandwidth;
pub mod eas;
pub mod edf_simso;
pub mod ext_examples;
pub mod futex;
pub mod lock_delayed_wakeup;
pub mod lock_sites;
pub mod lock_wakeup_granularity;
pub mod o1_bottlenecks;
pub mod rt_latency;
pub mod schbench;
pub mod validate;

use crate::contract::{num, Evidence, SeedRuns};
use crate::suite::ExperimentResult;
use schedlab_run::RunRecord;

/// Experiment `name` of one seed's runs.
pub(crate) fn exp<'a>(seed: &'a SeedRuns, name: &str) -> Option<&'a ExperimentResult> {
    seed.iter().find(|r| r.name == name)
}

/// The run of column `label` of experiment `name`.
pub(crate) fn rec<'a>(seed: &'a SeedRuns, name: &str, label: &str) -> Option<&'a RunRecord> {
    let r = exp(seed, name)?;
    r.labels.iter().position(|l| l == label).and_then(|i| r.records.get(i))
}

/// The number in row `metric`, column `label` of experiment `name` (`None`: no such cell,
/// or not a number, as `-`).
pub(crate) fn cell(seed: &SeedRuns, name: &str, metric: &str, label: &str) -> Option<f64> {
    let r = exp(seed, name)?;
    let i = r.labels.iter().position(|l| l == label)?;
    let (_, vals) = r.rows.iter().find(|(m, _)| m == metric)?;
    vals.get(i)?.trim().trim_end_matches('%').parse::<f64>().ok().filter(|v| v.is_finite())
}

/// All numbers of row `metric` of experiment `name`, with their column labels.
pub(crate) fn row<'a>(seed: &'a SeedRuns, name: &str, metric: &str) -> Vec<(&'a str, f64)> {
    let Some(r) = exp(seed, name) else { return Vec::new() };
    let Some((_, vals)) = r.rows.iter().find(|(m, _)| m == metric) else { return Vec::new() };
    r.labels.iter().zip(vals).filter_map(|(l, v)| Some((l.as_str(), v.trim().parse::<f64>().ok()?))).collect()
}

/// `a / b` when both are known and `b` is not zero.
pub(crate) fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b != 0.0 => Some(a / b),
        _ => None,
    }
}

/// `(b − a) / a` in %: the change from `a` to `b`.
pub(crate) fn change_pct(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    ratio(b, a).map(|r| (r - 1.0) * 100.0)
}

/// The evidence for `claim`: `measure` of every seed (a seed where it is not measurable
/// contributes no sample), and `why` of the first seed.
pub(crate) fn measured(
    claim: &'static str,
    runs: &[SeedRuns],
    measure: impl Fn(&SeedRuns) -> Option<f64>,
    why: impl Fn(&SeedRuns) -> String,
) -> Evidence {
    let samples = runs.iter().filter_map(&measure).collect();
    let mechanism = runs.first().map_or_else(|| "no runs".to_string(), why);
    Evidence { claim, samples, mechanism }
}

/// The two kernel paths that took the most time in a run, as `path X ms`.
pub(crate) fn top_paths(r: &RunRecord) -> String {
    let mut all: Vec<(String, u64)> = Vec::new();
    for (p, ns) in r.cpus.iter().flat_map(|c| c.kernel_paths.iter()) {
        match all.iter_mut().find(|(q, _)| q == p) {
            Some(e) => e.1 += ns,
            None => all.push((p.clone(), *ns)),
        }
    }
    all.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let parts: Vec<String> = all.iter().take(2).map(|(p, ns)| format!("{p} {} ms", num(*ns as f64 / 1e6))).collect();
    if parts.is_empty() {
        "no kernel time recorded".into()
    } else {
        format!("most kernel time in {}", parts.join(", "))
    }
}

/// A value or `-`.
pub(crate) fn show(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), num)
}

/// Where task `task`'s waiting went in a run that was explained (`RunSpec::explain`): its
/// total, the two largest causes from the decision records, and the comparison that decided
/// its longest wait's longest part (who ran instead). Empty for a run not explained.
pub(crate) fn waits(r: &RunRecord, task: &str) -> String {
    use schedlab_metrics::explain::WaitCause;
    let Some(e) = r.explained.as_deref() else { return String::new() };
    let prefix = format!("{task}.");
    let Some(t) = e.tasks.iter().find(|t| t.name == task || t.name.starts_with(&prefix)) else {
        return String::new();
    };
    let mut causes: Vec<(WaitCause, u64)> = WaitCause::ALL.iter().copied().zip(t.by_cause.iter().copied()).collect();
    causes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.index().cmp(&b.0.index())));
    let total = t.wait_ns.max(1) as f64;
    let top: Vec<String> = causes
        .iter()
        .filter(|(_, ns)| *ns > 0)
        .take(2)
        .map(|(c, ns)| format!("{} % {}", num(100.0 * *ns as f64 / total), c.describe()))
        .collect();
    let worst = t.worst.first().and_then(|w| w.segments.iter().max_by_key(|s| (s.end_ns - s.start_ns, s.start_ns)));
    let decided = worst.map_or_else(String::new, |s| {
        let ran = s.ran.and_then(|i| e.names.get(i)).map_or_else(String::new, |n| format!(", {n} ran"));
        format!("; its longest wait: {} µs, {}{ran}", num((s.end_ns - s.start_ns) as f64 / 1e3), s.why)
    });
    format!(
        "{} waited {} ms over {} waits ({}){decided}",
        t.name,
        num(t.wait_ns as f64 / 1e6),
        t.waits,
        if top.is_empty() { "no recorded cause".to_string() } else { top.join(", ") },
    )
}
