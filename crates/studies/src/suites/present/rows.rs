//! Reading an experiment's table back as numbers, and its configuration labels as the
//! parameters they stand for.

use crate::suite::ExperimentResult;

/// The values of row `metric`, one per configuration (`None` where not a number, e.g. `-`).
pub(super) fn row(r: &ExperimentResult, metric: &str) -> Vec<Option<f64>> {
    r.rows
        .iter()
        .find(|(n, _)| n == metric)
        .map_or_else(|| vec![None; r.labels.len()], |(_, v)| v.iter().map(|c| number(c)).collect())
}

/// The leading number of a cell (`12.5`, `46.80%`).
pub(super) fn number(c: &str) -> Option<f64> {
    let t: String = c.trim().chars().take_while(|ch| ch.is_ascii_digit() || matches!(ch, '.' | '-' | 'e')).collect();
    t.parse().ok()
}

/// `v` scaled (µs → ns: 1e3, ms → ns: 1e6).
pub(super) fn scaled(v: &[Option<f64>], by: f64) -> Vec<Option<f64>> {
    v.iter().map(|x| x.map(|x| x * by)).collect()
}

/// The experiment called `name`.
pub(super) fn experiment<'a>(rs: &'a [ExperimentResult], name: &str) -> Option<&'a ExperimentResult> {
    rs.iter().find(|r| r.name == name)
}

/// A short panel title from an experiment name (`8-cpus` → `8 CPUs`).
pub(super) fn panel_title(name: &str) -> String {
    match name.strip_suffix("-cpus") {
        Some(n) => format!("{n} CPUs"),
        None => name.to_string(),
    }
}

/// Mean of the values present.
pub(super) fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}
