//! The runqueue-lock studies' figures and findings (Zhang, Gu, Su 2017): completion and gain
//! of the delayed new-task wakeup against the number of hackbench groups, per CPU count;
//! acquisitions, contentions and spin per call site per kernel version; web-server requests
//! per second and runqueue-lock traffic against the wakeup granularity.

use super::rows::{experiment, mean, panel_title, row, scaled};
use crate::suite::ExperimentResult;
use schedlab_report::plots::{Axis, Chart, ChartData, ChartPanel, Unit};

/// The hackbench groups column `i` ran: its workload's `groups` parameter (so `--param
/// groups=…` shows), else its label's number.
fn groups_of(r: &ExperimentResult, i: usize) -> Option<f64> {
    let p = r.records.get(i).and_then(|rec| rec.workload.params.iter().find(|(n, _)| n == "groups"));
    match p.map(|(_, v)| v) {
        Some(schedlab_metrics::Param::Int(g)) => Some(*g as f64),
        _ => r.labels.get(i)?.trim_end_matches(" dw").parse().ok(),
    }
}

/// `(groups, value without, value with)` per group count of a delayed-wakeup table, whose
/// columns come in pairs `N`, `N dw`.
fn pairs(r: &ExperimentResult, metric: &str) -> Vec<(f64, Option<f64>, Option<f64>)> {
    let v = row(r, metric);
    let mut out = Vec::new();
    for (i, l) in r.labels.iter().enumerate() {
        if l.ends_with(" dw") {
            continue;
        }
        let Some(g) = groups_of(r, i) else { continue };
        let with = r.labels.iter().position(|x| *x == format!("{l} dw")).and_then(|j| v[j]);
        out.push((g, v[i], with));
    }
    out
}

/// `(groups, gain %)` under each `dw` column.
fn gains(r: &ExperimentResult) -> Vec<(f64, Option<f64>)> {
    let v = row(r, "gain %");
    (0..r.labels.len())
        .filter(|&i| r.labels[i].ends_with(" dw"))
        .filter_map(|i| Some((groups_of(r, i)?, v[i])))
        .collect()
}

fn line(name: &str, pts: impl Iterator<Item = (f64, Option<f64>)>) -> (String, Vec<(f64, f64)>) {
    (name.to_string(), pts.filter_map(|(x, y)| Some((x, y?))).collect())
}

/// Completion without and with the delayed wakeup against groups (one panel per machine,
/// one scale), the gain per machine, and the contended acquisitions per site.
pub(super) fn delayed_wakeup(rs: &[ExperimentResult]) -> Vec<Chart> {
    let groups = || Axis::new("hackbench groups", Unit::Plain);
    let completion = rs
        .iter()
        .map(|r| {
            let p = pairs(r, "completion ms");
            ChartPanel {
                title: panel_title(r.name),
                data: ChartData::Lines(vec![
                    line("without", p.iter().map(|&(g, a, _)| (g, a.map(|v| v * 1e6)))),
                    line("delayed wakeup", p.iter().map(|&(g, _, b)| (g, b.map(|v| v * 1e6)))),
                ]),
            }
        })
        .collect();
    let gain = rs.iter().map(|r| line(&panel_title(r.name), gains(r).into_iter())).collect();
    let sites = ["schedule", "load_balance", "try_to_wake_up", "wake_up_new_task"];
    let contention = rs
        .iter()
        .map(|r| {
            let total = |dw: bool| -> Vec<Option<f64>> {
                sites
                    .iter()
                    .map(|s| pairs(r, &format!("{s} contended")).iter().map(|p| if dw { p.2 } else { p.1 }).sum())
                    .collect()
            };
            ChartPanel {
                title: panel_title(r.name),
                data: ChartData::Bars {
                    categories: sites.iter().map(|s| s.to_string()).collect(),
                    series: vec![("without".into(), total(false)), ("delayed wakeup".into(), total(true))],
                },
            }
        })
        .collect();
    vec![
        Chart {
            name: "completion.svg".into(),
            title: "hackbench completion time without and with the delayed new-task wakeup".into(),
            note: Some("CFS, --kernel 3.4; one scale across machines".into()),
            x: groups(),
            y: Axis::new("completion time", Unit::Ns),
            panels: completion,
        },
        Chart {
            name: "gain.svg".into(),
            title: "Gain of the delayed new-task wakeup, (without − with) / without".into(),
            note: None,
            x: groups(),
            y: Axis::new("gain", Unit::Percent),
            panels: vec![ChartPanel { title: "per CPU count".into(), data: ChartData::Lines(gain) }],
        },
        Chart {
            name: "contention.svg".into(),
            title: "Contended runqueue-lock acquisitions per call site (all group counts)".into(),
            note: None,
            x: Axis::new("call site", Unit::Plain),
            y: Axis::new("contended acquisitions", Unit::Plain),
            panels: contention,
        },
    ]
}

pub(super) fn delayed_wakeup_finding(rs: &[ExperimentResult]) -> String {
    let parts: Vec<String> = rs
        .iter()
        .filter_map(|r| {
            let g: Vec<(f64, f64)> = gains(r).into_iter().filter_map(|(x, v)| Some((x, v?))).collect();
            let best = g.iter().copied().fold(None, |b: Option<(f64, f64)>, x| match b {
                Some(b) if b.1 >= x.1 => Some(b),
                _ => Some(x),
            })?;
            let m = mean(&g.iter().map(|x| x.1).collect::<Vec<_>>())?;
            Some(format!("{}: mean gain {m:.2} % (best {:.2} % at {} groups)", panel_title(r.name), best.1, best.0))
        })
        .collect();
    format!("gain of the delayed new-task wakeup in hackbench's completion time (> 0: faster) — {}", parts.join("; "))
}

const SITES: [&str; 4] = ["schedule", "load_balance", "try_to_wake_up", "wake_up_new_task"];

/// Acquisitions, contended acquisitions and spin time per call site, bars per kernel
/// version, one panel per CPU count on one scale.
pub(super) fn sites(rs: &[ExperimentResult]) -> Vec<Chart> {
    let chart = |file: &str, title: &str, suffix: &str, y: Axis, by: f64| Chart {
        name: file.into(),
        title: title.into(),
        note: Some("hackbench threads over pipes, CFS; one scale across CPU counts".into()),
        x: Axis::new("call site", Unit::Plain),
        y,
        panels: rs
            .iter()
            .map(|r| {
                let per_site: Vec<Vec<Option<f64>>> =
                    SITES.iter().map(|s| scaled(&row(r, &format!("{s} {suffix}")), by)).collect();
                ChartPanel {
                    title: panel_title(r.name),
                    data: ChartData::Bars {
                        categories: SITES.iter().map(|s| s.to_string()).collect(),
                        series: r
                            .labels
                            .iter()
                            .enumerate()
                            .map(|(i, l)| (format!("kernel {l}"), per_site.iter().map(|v| v[i]).collect()))
                            .collect(),
                    },
                }
            })
            .collect(),
    };
    vec![
        chart(
            "acquisitions.svg",
            "Runqueue-lock acquisitions per call site",
            "acquisitions",
            Axis::new("acquisitions", Unit::Plain),
            1.0,
        ),
        chart(
            "contended.svg",
            "Contended runqueue-lock acquisitions per call site",
            "contended",
            Axis::new("contended acquisitions", Unit::Plain),
            1.0,
        ),
        chart("spin.svg", "Spin time on runqueue locks per call site", "spin us", Axis::new("spin", Unit::Ns), 1e3),
    ]
}

pub(super) fn sites_finding(rs: &[ExperimentResult]) -> String {
    let parts: Vec<String> = rs
        .iter()
        .filter_map(|r| {
            let totals: Vec<f64> = (0..r.labels.len())
                .map(|i| SITES.iter().map(|s| row(r, &format!("{s} acquisitions"))[i].unwrap_or(0.0)).sum())
                .collect();
            let top = SITES
                .iter()
                .max_by(|a, b| {
                    let sum = |s: &str| row(r, &format!("{s} contended")).iter().flatten().sum::<f64>();
                    sum(a).total_cmp(&sum(b))
                })
                .copied()?;
            let per: Vec<String> = r.labels.iter().zip(&totals).map(|(l, t)| format!("{l} {t:.0}")).collect();
            Some(format!("{}: acquisitions {} (most contended: {top})", panel_title(r.name), per.join(" / ")))
        })
        .collect();
    parts.join("; ")
}

/// The granularity of each column in ns (row `wakeup granularity ns`).
fn granularity_x(r: &ExperimentResult) -> Vec<Option<f64>> {
    row(r, "wakeup granularity ns")
}

/// Requests per second, latency, and runqueue-lock traffic against the wakeup granularity;
/// hackbench's completion at 1× and 2×.
pub(super) fn granularity(rs: &[ExperimentResult]) -> Vec<Chart> {
    let mut out = Vec::new();
    let x = || Axis::new("sched_wakeup_granularity", Unit::Ns);
    let over = |r: &ExperimentResult, metrics: &[(&str, &str, f64)]| -> ChartData {
        let gx = granularity_x(r);
        ChartData::Lines(
            metrics
                .iter()
                .map(|(m, name, by)| {
                    let ys = scaled(&row(r, m), *by);
                    line(name, gx.iter().zip(ys).filter_map(|(g, y)| g.map(|g| (g, y))))
                })
                .collect(),
        )
    };
    if let Some(a) = experiment(rs, "apache") {
        let one = |file: &str, title: &str, y: Axis, data: ChartData| Chart {
            name: file.into(),
            title: title.into(),
            note: Some("web server, 16 threads, 64 requests outstanding; CFS, --kernel 3.4, i7-3770".into()),
            x: x(),
            y,
            panels: vec![ChartPanel { title: "apache".into(), data }],
        };
        out.push(one(
            "apache-requests.svg",
            "Web-server requests per second against the wakeup granularity",
            Axis::new("requests / s", Unit::Plain),
            over(a, &[("requests/s", "requests/s", 1.0)]),
        ));
        out.push(one(
            "apache-latency.svg",
            "Request latency against the wakeup granularity",
            Axis::new("latency", Unit::Ns),
            over(a, &[("latency p50 us", "p50", 1e3), ("latency p99 us", "p99", 1e3)]),
        ));
        out.push(one(
            "apache-rq-locks.svg",
            "Runqueue-lock traffic against the wakeup granularity",
            Axis::new("count over the run", Unit::Plain),
            over(
                a,
                &[
                    ("schedule() rq locks", "schedule() rq locks", 1.0),
                    ("involuntary switches", "involuntary switches", 1.0),
                ],
            ),
        ));
    }
    if let Some(h) = experiment(rs, "hackbench") {
        out.push(Chart {
            name: "hackbench.svg".into(),
            title: "hackbench completion at 1× and 2× the wakeup granularity".into(),
            note: None,
            x: Axis::new("granularity", Unit::Plain),
            y: Axis::new("completion time", Unit::Ns),
            panels: vec![ChartPanel {
                title: "hackbench".into(),
                data: ChartData::Bars {
                    categories: h.labels.clone(),
                    series: vec![("completion".into(), scaled(&row(h, "completion ms"), 1e6))],
                },
            }],
        });
    }
    out
}

pub(super) fn granularity_finding(rs: &[ExperimentResult]) -> String {
    let mut parts = Vec::new();
    if let Some(a) = experiment(rs, "apache") {
        let rps = row(a, "requests/s");
        let best = rps.iter().enumerate().filter_map(|(i, v)| Some((i, (*v)?))).max_by(|x, y| x.1.total_cmp(&y.1));
        if let (Some((i, v)), Some(Some(base))) = (best, rps.first()) {
            parts.push(format!(
                "web server: most requests/s at {} ({v:.0}/s, {:+.2} % over 1x)",
                a.labels[i],
                (v - base) / base * 100.0
            ));
        }
    }
    if let Some(h) = experiment(rs, "hackbench") {
        if let [Some(a), Some(b), ..] = row(h, "completion ms")[..] {
            parts.push(format!("hackbench at 2x: {:+.2} % completion time", (b - a) / a * 100.0));
        }
    }
    parts.join("; ")
}
