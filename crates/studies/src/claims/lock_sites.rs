//! `lock-sites`: where the runqueue locks are taken per kernel version, the measurement of
//! Zhang, Gu and Su's first table, read off hackbench over pipes on 8 CPUs.

use super::{cell, measured, ratio, show};
use crate::contract::{num, Claim, Evidence, Expect, SeedRuns};

pub static CLAIMS: [Claim; 2] = [
    Claim {
        id: "2.6.32-locks-twice-per-wakeup",
        location: "Zhang, Gu, Su 2017, the per-call-site table (2.6.32 and 3.4); Linux 2.6.32 kernel/sched.c \
                   try_to_wake_up (task_rq_lock of the old runqueue, then the target's) vs 3.4 \
                   kernel/sched/core.c try_to_wake_up (p->pi_lock, then the target's only)",
        statement: "2.6.32 takes more runqueue locks in try_to_wake_up than 3.4 for the same wakeups",
        measure: "try_to_wake_up acquisitions under 2.6.32 / 3.4, 8 CPUs (ratio)",
        expect: Expect::Above(1.0),
        figure: "acquisitions.svg",
    },
    Claim {
        id: "schedule-share-of-contention",
        location: "Zhang, Gu, Su 2017, the per-call-site table: acquisitions, contentions and spin per site",
        statement: "the paper counts contentions per call site (its numbers are not restated here)",
        measure: "schedule()'s share of the contended runqueue-lock acquisitions at the four sites, 3.4, 8 CPUs (%)",
        expect: Expect::Unstated,
        figure: "contended.svg",
    },
];

const SITES: [&str; 4] = ["schedule", "load_balance", "try_to_wake_up", "wake_up_new_task"];

fn per_site(s: &SeedRuns, what: &str, v: &str) -> String {
    SITES
        .iter()
        .map(|site| format!("{site} {}", show(cell(s, "8-cpus", &format!("{site} {what}"), v))))
        .collect::<Vec<_>>()
        .join(", ")
}

fn schedule_share(s: &SeedRuns) -> Option<f64> {
    let all: Option<f64> = SITES.iter().map(|site| cell(s, "8-cpus", &format!("{site} contended"), "3.4")).sum();
    ratio(cell(s, "8-cpus", "schedule contended", "3.4"), all).map(|r| 100.0 * r)
}

pub fn evidence(runs: &[SeedRuns]) -> Vec<Evidence> {
    let ttwu = |s: &SeedRuns, v: &str| cell(s, "8-cpus", "try_to_wake_up acquisitions", v);
    vec![
        measured(
            "2.6.32-locks-twice-per-wakeup",
            runs,
            |s| ratio(ttwu(s, "2.6.32"), ttwu(s, "3.4")),
            |s| {
                format!(
                    "acquisitions on 8 CPUs — 2.6.32: {}; 3.4: {}; 5.15: {} (and {} wake-list drains)",
                    per_site(s, "acquisitions", "2.6.32"),
                    per_site(s, "acquisitions", "3.4"),
                    per_site(s, "acquisitions", "5.15"),
                    show(cell(s, "8-cpus", "sched_ttwu_pending acquisitions", "5.15")),
                )
            },
        ),
        measured("schedule-share-of-contention", runs, schedule_share, |s| {
            format!(
                "contended on 8 CPUs under 3.4: {} (schedule() {} % of them); spin µs: {}",
                per_site(s, "contended", "3.4"),
                schedule_share(s).map_or("-".into(), num),
                per_site(s, "spin us", "3.4"),
            )
        }),
    ]
}
