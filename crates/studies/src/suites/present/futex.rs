//! The futex study's figures and finding: per round of a request/response pair, each
//! mechanism (wake + wait, `futex_swap`, on the current CPU, direct switch) under each
//! scheduler; the VIP UI thread's futex waits and missed frames with VIP off and on.

use super::rows::{experiment, row, scaled};
use crate::suite::ExperimentResult;
use schedlab_report::plots::{Axis, Chart, ChartData, ChartPanel, Unit};

/// Labels `SCHED MECHANISM` → the mechanisms in order and the schedulers in order.
fn split(labels: &[String]) -> (Vec<String>, Vec<String>) {
    let (mut mech, mut scheds) = (Vec::new(), Vec::new());
    for l in labels {
        let (s, m) = l.split_once(' ').unwrap_or((l, ""));
        if !mech.contains(&m.to_string()) {
            mech.push(m.to_string());
        }
        if !scheds.contains(&s.to_string()) {
            scheds.push(s.to_string());
        }
    }
    (mech, scheds)
}

/// Bars: categories = mechanisms, one bar per scheduler, for `metric` scaled by `by`.
fn by_mechanism(r: &ExperimentResult, metric: &str, by: f64) -> ChartData {
    let (mech, scheds) = split(&r.labels);
    let v = scaled(&row(r, metric), by);
    let at = |s: &str, m: &str| r.labels.iter().position(|l| *l == format!("{s} {m}")).and_then(|i| v[i]);
    ChartData::Bars {
        categories: mech.clone(),
        series: scheds.iter().map(|s| (s.clone(), mech.iter().map(|m| at(s, m)).collect())).collect(),
    }
}

pub(super) fn figures(rs: &[ExperimentResult]) -> Vec<Chart> {
    let mut out = Vec::new();
    if let Some(r) = experiment(rs, "futex-swap") {
        let mech = || Axis::new("mechanism", Unit::Plain);
        out.push(Chart {
            name: "futex-swap-time.svg".into(),
            title: "Request/response pair: time per round by mechanism".into(),
            note: Some("2 CPUs; both panels on one scale".into()),
            x: mech(),
            y: Axis::new("per round", Unit::Ns),
            panels: vec![
                ChartPanel { title: "round trip".into(), data: by_mechanism(r, "round trip µs", 1e3) },
                ChartPanel { title: "CPU time (all CPUs)".into(), data: by_mechanism(r, "CPU µs", 1e3) },
            ],
        });
        out.push(Chart {
            name: "futex-swap-switches.svg".into(),
            title: "Request/response pair: context switches and migrations per round".into(),
            note: Some("both panels on one scale".into()),
            x: mech(),
            y: Axis::new("per round", Unit::Plain),
            panels: vec![
                ChartPanel { title: "switches".into(), data: by_mechanism(r, "switches", 1.0) },
                ChartPanel { title: "migrations".into(), data: by_mechanism(r, "migrations", 1.0) },
            ],
        });
    }
    if let Some(r) = experiment(rs, "futex-vip") {
        let bars = |metrics: &[(&str, &str, f64)]| ChartData::Bars {
            categories: r.labels.clone(),
            series: metrics.iter().map(|(m, n, by)| (n.to_string(), scaled(&row(r, m), *by))).collect(),
        };
        out.push(Chart {
            name: "futex-vip-waits.svg".into(),
            title: "VIP UI thread: its futex waits with VIP off and on".into(),
            // The longest wait is tens of ms, the total seconds: one log scale shows both.
            note: Some("log scale".into()),
            x: Axis::new("configuration", Unit::Plain),
            y: Axis::new("wait (log scale)", Unit::Ns).log(),
            panels: vec![ChartPanel {
                title: "UI thread".into(),
                data: bars(&[("VIP max wait ms", "max wait", 1e6), ("VIP total wait ms", "total wait", 1e6)]),
            }],
        });
        out.push(Chart {
            name: "futex-vip-frames.svg".into(),
            title: "VIP UI thread: missed frames and long waits".into(),
            note: None,
            x: Axis::new("configuration", Unit::Plain),
            y: Axis::new("count", Unit::Plain),
            panels: vec![ChartPanel {
                title: "UI thread".into(),
                data: bars(&[
                    ("missed frames", "missed frames", 1.0),
                    ("waits > 100 ms", "waits > 100 ms", 1.0),
                    ("waits > 200 ms", "waits > 200 ms", 1.0),
                ]),
            }],
        });
    }
    out
}

pub(super) fn finding(rs: &[ExperimentResult]) -> String {
    let mut parts = Vec::new();
    if let Some(r) = experiment(rs, "futex-swap") {
        let v = row(r, "round trip µs");
        let (mech, scheds) = split(&r.labels);
        if let (Some(first), Some(last), Some(s)) = (mech.first(), mech.last(), scheds.first()) {
            let at = |m: &str| r.labels.iter().position(|l| *l == format!("{s} {m}")).and_then(|i| v[i]);
            if let (Some(a), Some(b)) = (at(first), at(last)) {
                parts.push(format!("round trip under {s}: {a:.2} µs with {first}, {b:.2} µs with {last}"));
            }
        }
    }
    if let Some(r) = experiment(rs, "futex-vip") {
        let max = row(r, "VIP max wait ms");
        let at = |l: &str| r.labels.iter().position(|x| x == l).and_then(|i| max[i]);
        if let (Some(off), Some(on)) = (at("VIP off"), at("VIP on")) {
            parts.push(format!("the UI thread's longest futex wait: {off:.1} ms with VIP off, {on:.1} ms with VIP on"));
        }
    }
    parts.join("; ")
}
