//! A `ule-cfs-*` study's headline figures, the quantities the paper compares: when each
//! application completed and its share of the machine while the applications overlap,
//! one bar per scheduler. The paper's own figures over time (cumulative run time per
//! thread, interactivity penalty per thread, threads per core) are the run figures every
//! study draws (`runtime.svg`, `stat-score.svg`, `threads-per-cpu.svg`).

use super::measure::{done, overlap, share};
use schedlab_metrics::RunRecord;
use schedlab_report::plots::{Axis, Chart, ChartData, ChartPanel, Unit};

/// `paper-completion.svg` and, with two applications or more, `paper-shares.svg`; none
/// for a study the paper has no experiment for, and none without a value to draw.
pub fn figures(title: &str, rs: &[RunRecord]) -> Vec<Chart> {
    let Some(apps) = super::studies::apps(&super::stem(title)) else { return Vec::new() };
    let categories: Vec<String> = rs.iter().map(|r| r.scheduler.name.clone()).collect();
    let per_app = |f: &dyn Fn(&RunRecord, &str) -> Option<f64>| -> Vec<(String, Vec<Option<f64>>)> {
        apps.iter().map(|a| (a.to_string(), rs.iter().map(|r| f(r, a)).collect())).collect()
    };
    let mut out = Vec::new();
    let completion = per_app(&|r, a| done(r, a).map(|ns| ns as f64));
    if completion.iter().any(|(_, v)| v.iter().any(Option::is_some)) {
        out.push(chart(
            title,
            "paper-completion.svg",
            "When each application completed",
            Unit::Ns,
            &categories,
            completion,
        ));
    }
    if apps.len() >= 2 {
        let shares = per_app(&|r, a| share(r, a, overlap(r, apps)));
        if shares.iter().any(|(_, v)| v.iter().any(Option::is_some)) {
            let what = "Share of the machine while the applications overlap";
            out.push(chart(title, "paper-shares.svg", what, Unit::Percent, &categories, shares));
        }
    }
    out
}

fn chart(
    title: &str,
    name: &str,
    what: &str,
    unit: Unit,
    categories: &[String],
    series: Vec<(String, Vec<Option<f64>>)>,
) -> Chart {
    let y = match unit {
        Unit::Percent => Axis::new("share", unit).fixed(0.0, 100.0),
        _ => Axis::new("completed at", unit),
    };
    Chart {
        name: name.into(),
        title: format!("{title}: {what}"),
        note: Some(format!("the comparison of {}", "Bouron et al., USENIX ATC 2018")),
        x: Axis::new("scheduler", Unit::Plain),
        y,
        panels: vec![ChartPanel {
            title: title.into(),
            data: ChartData::Bars { categories: categories.to_vec(), series },
        }],
    }
}
