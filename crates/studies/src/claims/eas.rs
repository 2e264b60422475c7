//! `eas`: the claims of `Documentation/scheduler/sched-energy.rst` (and uclamp's of
//! `sched-util-clamp.rst`), read off the record's energy, the clusters' busy shares and
//! frequencies, and the fair class's `eas.*` counters.

use super::{cell, measured, ratio, show};
use crate::contract::{Claim, Evidence, Expect, SeedRuns};
use crate::suites::eas::{BOOST_618, EAS_515, EAS_618, OFF_515, OFF_618, PERF_618};

pub static CLAIMS: [Claim; 5] = [
    Claim {
        id: "eas-saves-energy",
        location: "Linux Documentation/scheduler/sched-energy.rst, 1. Introduction and 4. Energy-Aware task placement",
        statement: "EAS relies on an Energy Model (EM) of the CPUs to select an energy efficient CPU for each task; \
                    the goal of EAS is to minimize energy, while still getting the job done",
        measure: "active CPU energy per frame of the light mix with EAS off over with EAS (schedutil both), \
                  eevdf 6.18 (ratio)",
        expect: Expect::Above(1.0),
        figure: "mix-durations.svg",
    },
    Claim {
        id: "eas-keeps-the-job-done",
        location: "Linux Documentation/scheduler/sched-energy.rst, 1. Introduction",
        statement: "EAS ... select[s] an energy efficient CPU for each task, with a minimal impact on throughput",
        measure: "frames completed in 5 s with EAS over with EAS off, eevdf 6.18 (ratio; minimal: above 0.9)",
        expect: Expect::Above(0.9),
        figure: "mix-durations.svg",
    },
    Claim {
        id: "opps-follow-utilization",
        location: "Linux Documentation/scheduler/sched-energy.rst, 6.4 Schedutil governor",
        statement: "it is assumed that OPPs of CPUs follow their utilization ... the only sane governor to use \
                    together with EAS is schedutil",
        measure: "active CPU energy of the light mix under the performance governor (no EAS) over schedutil with \
                  EAS, eevdf 6.18 (ratio)",
        expect: Expect::Above(1.0),
        figure: "mix-durations.svg",
    },
    Claim {
        id: "overutilized-disables-eas",
        location: "Linux Documentation/scheduler/sched-energy.rst, 5. Over-utilization",
        statement: "as soon as one CPU goes above the 80% tipping point, ... the 'overutilized' flag is raised for \
                    the entire root domain, EAS is disabled, and the load-balancer is re-enabled",
        measure: "share of the CPU-bound mix's wakeups placed by find_energy_efficient_cpu, eevdf 6.18 (%; below 1)",
        expect: Expect::Below(1.0),
        figure: "busy-shares.svg",
    },
    Claim {
        id: "uclamp-min-boosts",
        location: "Linux Documentation/scheduler/sched-util-clamp.rst, 1. Introduction",
        statement: "uclamp is a hinting mechanism that allows the scheduler to understand the performance \
                    requirements ... and when schedutil cpufreq governor is used, util clamp will influence the CPU \
                    frequency selection as well",
        measure: "p99 frame time of the light mix without over with the top-app cgroup's cpu.uclamp.min = 50, \
                  EAS eevdf 6.18 (ratio)",
        expect: Expect::Above(1.0),
        figure: "mix-durations.svg",
    },
];

/// One column's energy, frames and where its work ran, for the mechanism.
fn column(s: &SeedRuns, x: &str, l: &str) -> String {
    let c = |m: &str| show(cell(s, x, m, l));
    format!(
        "{l}: {} mJ active ({} mJ a frame), {} frames (p50 {} ms, p99 {} ms); busy little {} % at {} MHz, mid {} % at {} MHz, \
         big {} % at {} MHz; find_energy_efficient_cpu placed {} of {} wakeups ({} %), overutilized set {} times",
        c("active energy mJ"),
        c("energy per frame mJ"),
        c("frames"),
        c("frame p50 ms"),
        c("frame p99 ms"),
        c("little busy %"),
        c("little mean MHz"),
        c("mid busy %"),
        c("mid mean MHz"),
        c("big busy %"),
        c("big mean MHz"),
        c("feec placements"),
        c("wakeups"),
        c("feec % of wakeups"),
        c("overutilized set"),
    )
}

fn energy_ratio(s: &SeedRuns, num: &str, den: &str) -> Option<f64> {
    ratio(cell(s, "mix", "active energy mJ", num), cell(s, "mix", "active energy mJ", den))
}

pub fn evidence(runs: &[SeedRuns]) -> Vec<Evidence> {
    vec![
        measured(
            "eas-saves-energy",
            runs,
            |s| ratio(cell(s, "mix", "energy per frame mJ", OFF_618), cell(s, "mix", "energy per frame mJ", EAS_618)),
            |s| {
                format!(
                    "energy is busy time × the domain's power at its frequency, so it falls when work runs on \
                     a cluster at an efficient OPP; {}; {}; 5.15 (6 % margin over all domains' energy): {}; {}",
                    column(s, "mix", EAS_618),
                    column(s, "mix", OFF_618),
                    column(s, "mix", EAS_515),
                    column(s, "mix", OFF_515),
                )
            },
        ),
        measured(
            "eas-keeps-the-job-done",
            runs,
            |s| ratio(cell(s, "mix", "frames", EAS_618), cell(s, "mix", "frames", OFF_618)),
            |s| {
                format!(
                    "a frame starts every 16 ms unless the last one is still running (312 in 5 s at most); {}; {}",
                    column(s, "mix", EAS_618),
                    column(s, "mix", OFF_618),
                )
            },
        ),
        measured(
            "opps-follow-utilization",
            runs,
            |s| energy_ratio(s, PERF_618, EAS_618),
            |s| {
                format!(
                    "performance runs every cluster at its top OPP whatever the utilisation (and EAS needs \
                     schedutil, so it is off): {}; {}",
                    column(s, "mix", PERF_618),
                    column(s, "mix", EAS_618),
                )
            },
        ),
        measured(
            "overutilized-disables-eas",
            runs,
            |s| cell(s, "busy", "feec % of wakeups", EAS_618),
            |s| {
                format!(
                    "eight threads of 6 ms in 16 need more than a little CPU can give, so a CPU's utilisation \
                     exceeds 80 % of its capacity and the tick sets rd->overutilized: {}; with EAS off: {}",
                    column(s, "busy", EAS_618),
                    column(s, "busy", OFF_618),
                )
            },
        ),
        measured(
            "uclamp-min-boosts",
            runs,
            |s| ratio(cell(s, "mix", "frame p99 ms", EAS_618), cell(s, "mix", "frame p99 ms", BOOST_618)),
            |s| {
                format!(
                    "the top-app tasks' effective uclamp_min 512 raises their CPUs' requested frequency and \
                     makes a little CPU unfit for them (util_fits_cpu): {}; {}",
                    column(s, "mix", BOOST_618),
                    column(s, "mix", EAS_618),
                )
            },
        ),
    ]
}
