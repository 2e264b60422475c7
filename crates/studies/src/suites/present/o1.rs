//! The `o1-bottlenecks` study's figure and finding: where each scheduler's kernel work
//! lives as the runnable tasks grow (O(1)'s constant pick and list operations against
//! CFS's constant pick and O(log n) enqueue), then the generic figures of the other
//! experiments, and the wakeup experiments' runqueue-lock contention.

use super::rows::{experiment, row};
use crate::suite::ExperimentResult;
use schedlab_report::plots::{Axis, Chart, ChartData, ChartPanel, Unit};

/// The pick-scale rows of work per operation, in the order drawn.
const WORK: [&str; 3] = ["pick work per pick", "enqueue work per op", "dequeue work per op"];

pub(super) fn figures(rs: &[ExperimentResult]) -> Vec<Chart> {
    let mut out = super::generic::figures(rs);
    let Some(r) = experiment(rs, "pick-scale") else { return out };
    let series: Vec<(String, Vec<Option<f64>>)> = WORK.iter().map(|m| (m.to_string(), row(r, m))).collect();
    if series.iter().all(|(_, v)| v.iter().all(Option::is_none)) {
        return out;
    }
    out.push(Chart {
        name: "pick-scale-work.svg".into(),
        title: "Kernel work per operation with few and many runnable tasks".into(),
        note: Some("o1: bitmap words per pick, one list operation per enqueue/dequeue; cfs/eevdf: tree steps".into()),
        x: Axis::new("configuration", Unit::Plain),
        y: Axis::new("steps per operation", Unit::Plain),
        panels: vec![ChartPanel {
            title: r.name.to_string(),
            data: ChartData::Bars { categories: r.labels.clone(), series },
        }],
    });
    out
}

/// `policy`'s first and last configuration (fewest and most tasks) of row `metric`.
fn ends(r: &ExperimentResult, metric: &str, policy: &str) -> Option<(f64, f64)> {
    let prefix = format!("{policy} ");
    let v = row(r, metric);
    let cols: Vec<usize> = (0..r.labels.len()).filter(|&i| r.labels[i].starts_with(&prefix)).collect();
    Some((v[*cols.first()?]?, v[*cols.last()?]?))
}

fn pick_scale(r: &ExperimentResult) -> Option<String> {
    let (o1_lo, o1_hi) = ends(r, WORK[0], "o1")?;
    let (cp_lo, cp_hi) = ends(r, WORK[0], "cfs")?;
    let (ce_lo, ce_hi) = ends(r, WORK[1], "cfs")?;
    Some(format!(
        "pick-scale ({} → {}): o1 reads {o1_lo:.2} → {o1_hi:.2} bitmap words per pick; cfs takes {cp_lo:.2} → \
         {cp_hi:.2} steps per pick (the cached leftmost) but compares {ce_lo:.2} → {ce_hi:.2} nodes per enqueue \
         (O(log n))",
        r.labels.first()?.trim_start_matches("o1 "),
        r.labels.last()?.rsplit(' ').next()?,
    ))
}

fn wakeups(rs: &[ExperimentResult]) -> Option<String> {
    let first = |name: &str, m: &str| experiment(rs, name).and_then(|r| row(r, m).first().copied().flatten());
    let (c2, c32) = (first("wakeup-2", "ttwu contended %")?, first("wakeup-32", "ttwu contended %")?);
    let (w2, w32) = (first("wakeup-2", "wakeup ns per wakeup")?, first("wakeup-32", "wakeup ns per wakeup")?);
    Some(format!(
        "o1 wakeups on 2 → 32 CPUs: {c2:.0} % → {c32:.0} % of try_to_wake_up's runqueue locks contended, \
         {w2:.0} → {w32:.0} ns of wakeup path per wakeup"
    ))
}

pub(super) fn finding(rs: &[ExperimentResult]) -> String {
    let parts: Vec<String> =
        [experiment(rs, "pick-scale").and_then(pick_scale), wakeups(rs)].into_iter().flatten().collect();
    if parts.is_empty() {
        return super::generic::finding(rs);
    }
    parts.join("; ")
}
