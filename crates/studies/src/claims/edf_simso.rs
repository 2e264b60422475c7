//! `edf-simso`: SimSo's ideal global EDF as the reference for Linux's `SCHED_DEADLINE`,
//! read off the per-utilisation summary of each seed's task sets.

use super::{exp, measured, row};
use crate::contract::{num, Claim, Evidence, Expect, SeedRuns};

pub static CLAIMS: [Claim; 2] = [
    Claim {
        id: "deadline-misses-as-ideal-edf",
        location: "Chéramy, Hladik, Déplanche 2014, SimSo's global EDF (simso.schedulers.EDF: no overheads)",
        statement: "an ideal global EDF is the reference: a faithful SCHED_DEADLINE misses the same share of \
                    deadlines, up to its kernel overheads",
        measure: "largest gap in deadline-miss rate, Linux − SimSo, over the utilisations (percentage points)",
        expect: Expect::Below(1.0),
        figure: "",
    },
    Claim {
        id: "response-time-gap",
        location: "Chéramy, Hladik, Déplanche 2014, SimSo's job-level results (response times per job)",
        statement: "SimSo reports response times without overheads (no number for Linux is given)",
        measure: "mean response-time difference Linux − SimSo at the highest utilisation (µs)",
        expect: Expect::Unstated,
        figure: "",
    },
];

fn gap(s: &SeedRuns) -> Option<f64> {
    let l = row(s, "edf", "linux miss %");
    let m = row(s, "edf", "simso miss %");
    if m.is_empty() {
        return None;
    }
    l.iter().zip(&m).map(|(a, b)| (a.1 - b.1).abs()).reduce(f64::max)
}

fn summary(s: &SeedRuns) -> String {
    let Some(r) = exp(s, "edf") else { return "no edf runs".into() };
    let simso = r.rows.iter().find(|(n, _)| n == "simso").and_then(|(_, v)| v.first()).cloned().unwrap_or_default();
    let per = |m: &str| row(s, "edf", m).iter().map(|(l, v)| format!("{l} {}", num(*v))).collect::<Vec<_>>().join(", ");
    format!(
        "SimSo {simso}; Linux misses %: {}; SimSo misses %: {}; throttled: {}; pushes: {}; pulls: {}",
        per("linux miss %"),
        per("simso miss %"),
        per("throttled"),
        per("pushes"),
        per("pulls"),
    )
}

pub fn evidence(runs: &[SeedRuns]) -> Vec<Evidence> {
    vec![
        measured("deadline-misses-as-ideal-edf", runs, gap, summary),
        measured(
            "response-time-gap",
            runs,
            |s| row(s, "edf", "mean diff µs").last().map(|(_, v)| *v),
            |s| {
                let per = row(s, "edf", "mean diff µs");
                let later = row(s, "edf", "later by > 100 µs");
                format!(
                    "mean Linux − SimSo per utilisation (µs): {}; jobs later by over 100 µs: {}",
                    per.iter().map(|(l, v)| format!("{l} {}", num(*v))).collect::<Vec<_>>().join(", "),
                    later.iter().map(|(l, v)| format!("{l} {}", num(*v))).collect::<Vec<_>>().join(", "),
                )
            },
        ),
    ]
}
