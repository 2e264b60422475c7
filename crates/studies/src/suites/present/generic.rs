//! Figures and findings for studies without a figure of their own: per experiment, the rows
//! that are durations (`… µs`, `… ms`) as grouped bars on one duration scale, and the rows
//! that are percentages (`… %`) likewise; the finding names each experiment's largest
//! spread of its first duration or percentage row across configurations.

use super::rows::{row, scaled};
use crate::suite::ExperimentResult;
use schedlab_report::plots::{Axis, Chart, ChartData, ChartPanel, Unit};

/// How a row's name says its unit: `(scale to the axis unit, unit)`.
fn unit_of(metric: &str) -> Option<(f64, Unit)> {
    let m = metric.trim_end();
    if m.ends_with(" µs") || m.ends_with(" us") {
        Some((1e3, Unit::Ns))
    } else if m.ends_with(" ms") && !m.ends_with("per s") {
        Some((1e6, Unit::Ns))
    } else if m.ends_with('%') {
        Some((1.0, Unit::Percent))
    } else {
        None
    }
}

pub(super) fn figures(rs: &[ExperimentResult]) -> Vec<Chart> {
    let mut out = Vec::new();
    for r in rs {
        for (unit, file, desc) in [(Unit::Ns, "durations", "duration"), (Unit::Percent, "shares", "percent")] {
            let series: Vec<(String, Vec<Option<f64>>)> = r
                .rows
                .iter()
                .filter_map(|(m, _)| {
                    let (by, u) = unit_of(m)?;
                    (u == unit).then(|| (m.clone(), scaled(&row(r, m), by)))
                })
                .collect();
            if series.is_empty() || series.iter().all(|(_, v)| v.iter().all(Option::is_none)) {
                continue;
            }
            out.push(Chart {
                name: format!("{}-{file}.svg", r.name),
                title: format!("{}: {}", r.name, r.title),
                note: None,
                x: Axis::new("configuration", Unit::Plain),
                y: Axis::new(desc, unit),
                panels: vec![ChartPanel {
                    title: r.name.to_string(),
                    data: ChartData::Bars { categories: r.labels.clone(), series },
                }],
            });
        }
    }
    out
}

pub(super) fn finding(rs: &[ExperimentResult]) -> String {
    let parts: Vec<String> = rs
        .iter()
        .filter_map(|r| {
            let (m, _) = r.rows.iter().find(|(m, _)| unit_of(m).is_some())?;
            let v = row(r, m);
            let present: Vec<(usize, f64)> = v.iter().enumerate().filter_map(|(i, x)| Some((i, (*x)?))).collect();
            let lo = present.iter().min_by(|a, b| a.1.total_cmp(&b.1))?;
            let hi = present.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
            Some(format!("{}: {m} from {} ({}) to {} ({})", r.name, lo.1, r.labels[lo.0], hi.1, r.labels[hi.0]))
        })
        .collect();
    parts.join("; ")
}
