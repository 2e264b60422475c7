//! `validate`: the student report's experiments on Linux 5.15 (I: shares by nice, III: an
//! I/O task beside a hog), read off the simulated side of the study's cases.

use super::{cell, measured, ratio, rec, show, top_paths};
use crate::contract::{Claim, Evidence, Expect, SeedRuns};

pub static CLAIMS: [Claim; 3] = [
    Claim {
        id: "equal-nice-equal-share",
        location: "the report's experiment I (two CPU-bound programs on one CPU, nice 0 vs 0)",
        statement: "two CPU-bound programs of equal nice get equal CPU time",
        measure: "the first program's share while both run, nice 0 vs 0 (%)",
        expect: Expect::Near { value: 50.0, rel: 0.02 },
        figure: "",
    },
    Claim {
        id: "nice-19-by-weight",
        location: "the report's experiment I (nice 19 vs 0); Linux kernel/sched/core.c sched_prio_to_weight \
                   (1024 and 15)",
        statement: "nice 0 against nice 19 shares by weight: 1024 / (1024 + 15) = 98.6 %",
        measure: "the nice-0 program's share while both run, nice 0 vs 19 (%)",
        expect: Expect::Near { value: 98.6, rel: 0.01 },
        figure: "",
    },
    Claim {
        id: "io-turnaround-near-its-sleeps",
        location: "the report's experiment III (5000 loops of a 5 ms sleep beside a CPU-bound program: about 27 s \
                   for 25 s of sleep)",
        statement: "the I/O-bound program's turnaround stays close to the sum of its sleeps: 27 / 25 = 1.08",
        measure: "the I/O program's turnaround / its loops × 5 ms of sleep (ratio)",
        expect: Expect::Near { value: 1.08, rel: 0.1 },
        figure: "",
    },
];

/// The workload parameter `name` of a run (`loops`).
fn param(s: &SeedRuns, x: &str, l: &str, name: &str) -> Option<f64> {
    let r = rec(s, x, l)?;
    r.workload.params.iter().find(|(k, _)| k == name).and_then(|(_, v)| match v {
        schedlab_metrics::Param::Int(n) => Some(*n as f64),
        schedlab_metrics::Param::Text(t) => t.parse().ok(),
    })
}

fn pair(s: &SeedRuns, l: &str) -> String {
    let c = |m: &str| show(cell(s, "nice-pairs", m, l));
    format!(
        "{l}: share {} %, turnarounds {} ms and {} ms, {} switches",
        c("a (nice 0) share % while both run"),
        c("a turnaround ms"),
        c("b turnaround ms"),
        c("switches among run tasks"),
    )
}

pub fn evidence(runs: &[SeedRuns]) -> Vec<Evidence> {
    let share = |s: &SeedRuns, l: &str| cell(s, "nice-pairs", "a (nice 0) share % while both run", l);
    let io = "io beside a hog";
    vec![
        measured("equal-nice-equal-share", runs, |s| share(s, "0 vs 0"), |s| pair(s, "0 vs 0")),
        measured(
            "nice-19-by-weight",
            runs,
            |s| share(s, "0 vs 19"),
            |s| format!("{}; {}", pair(s, "0 vs 19"), pair(s, "0 vs 10")),
        ),
        measured(
            "io-turnaround-near-its-sleeps",
            runs,
            |s| ratio(cell(s, "cpu-io", "io turnaround ms", io), param(s, "cpu-io", io, "loops").map(|n| n * 5.0)),
            |s| {
                let c = |m: &str| show(cell(s, "cpu-io", m, io));
                let paths = rec(s, "cpu-io", io).map_or_else(String::new, top_paths);
                format!(
                    "io turnaround {} ms for {} loops, its share {} %, it preempted cpu {} times (cpu's involuntary \
                     switches {}), io's p50 wakeup latency {} µs; {paths}",
                    c("io turnaround ms"),
                    show(param(s, "cpu-io", io, "loops")),
                    c("io CPU share %"),
                    c("preemptions of cpu by io"),
                    c("cpu involuntary switches (all)"),
                    c("io wakeup latency p50 µs"),
                )
            },
        ),
    ]
}
