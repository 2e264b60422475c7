//! `cgroup-bandwidth`: the examples of `Documentation/scheduler/sched-bwc.rst`, read off a
//! limited group's share, its client-timed request latency and its `cpu.stat`.

use super::{cell, measured, ratio, rec, show};
use crate::contract::{Claim, Evidence, Expect, SeedRuns};
use crate::suites::cgroup_bandwidth::{BURST_618, LONG_618, NO_BURST_618, SHORT_618};

pub static CLAIMS: [Claim; 3] = [
    Claim {
        id: "quota-over-period-is-the-share",
        location: "Linux Documentation/scheduler/sched-bwc.rst, Examples 3 (10 ms quota per 50 ms period)",
        statement: "with a 50ms period, 10ms quota will be equivalent to 20% of 1 CPU",
        measure: "the limited group's share of one CPU at 10ms/50ms while its batch worker could use a whole one, \
                  eevdf 6.18 (%)",
        expect: Expect::Near { value: 20.0, rel: 0.03 },
        figure: "period-shares.svg",
    },
    Claim {
        id: "a-short-period-keeps-latency-consistent",
        location: "Linux Documentation/scheduler/sched-bwc.rst, Examples 3",
        statement: "by using a small period here we are ensuring a consistent latency response at the expense of \
                    burst capacity",
        measure: "p99 request latency of the throttled service at 100ms/500ms over that at 10ms/50ms (the same 20 %), \
                  eevdf 6.18 (ratio)",
        expect: Expect::Above(1.0),
        figure: "period-durations.svg",
    },
    Claim {
        id: "burst-carries-unused-quota-over",
        location: "Linux Documentation/scheduler/sched-bwc.rst, Management (cpu.cfs_burst_us) and Examples 4",
        statement: "unused quota will be accumulated and allowed to be used in the following periods; a larger \
                    buffer setting (no larger than quota) allows greater burst capacity",
        measure: "mean latency of 25 ms requests at 20ms/50ms without a burst over that with a 10 ms burst, \
                  eevdf 6.18 (ratio)",
        expect: Expect::Above(1.0),
        figure: "burst-durations.svg",
    },
];

/// One column's latency and `cpu.stat`, for the mechanism.
fn column(s: &SeedRuns, x: &str, l: &str) -> String {
    let c = |m: &str| show(cell(s, x, m, l));
    let r = rec(s, x, l);
    let versions = r.map_or_else(String::new, |r| format!(" [{}]", r.scheduler.name));
    // The longest a request can wait for a refill: the period's part after the quota is spent.
    let bound = r
        .and_then(|r| r.groups.iter().find(|g| g.name == "svc"))
        .and_then(|g| Some(g.max_period_ns.saturating_sub(g.max_quota_ns?)))
        .map_or_else(String::new, |b| format!(" (period − quota {} ms)", b / 1_000_000));
    format!(
        "{l}{versions}{bound}: {} requests, mean {} µs, p99 {} µs, max {} µs; group share {} %; cpu.stat nr_periods {}, \
         nr_throttled {}, throttled {} ms, nr_bursts {}, burst {} ms",
        c("requests"),
        c("request mean µs"),
        c("request p99 µs"),
        c("request max µs"),
        c("group CPU share %"),
        c("nr_periods"),
        c("nr_throttled"),
        c("throttled ms"),
        c("nr_bursts"),
        c("burst ms"),
    )
}

pub fn evidence(runs: &[SeedRuns]) -> Vec<Evidence> {
    vec![
        measured(
            "quota-over-period-is-the-share",
            runs,
            |s| cell(s, "period", "group CPU share %", SHORT_618),
            |s| column(s, "period", SHORT_618),
        ),
        measured(
            "a-short-period-keeps-latency-consistent",
            runs,
            |s| ratio(cell(s, "period", "request p99 µs", LONG_618), cell(s, "period", "request p99 µs", SHORT_618)),
            |s| {
                format!(
                    "a request arriving while the group is throttled waits for the refill; {}; {}; 5.15 \
                     (whole-runqueue throttling): {}",
                    column(s, "period", SHORT_618),
                    column(s, "period", LONG_618),
                    column(s, "period", "100ms/500ms cfs 5.15"),
                )
            },
        ),
        measured(
            "burst-carries-unused-quota-over",
            runs,
            |s| {
                ratio(cell(s, "burst", "request mean µs", NO_BURST_618), cell(s, "burst", "request mean µs", BURST_618))
            },
            |s| {
                format!(
                    "without a burst a 25 ms request outlasts the 20 ms quota and is throttled to the next refill; \
                     with one the refill caps the pool at quota + burst: {}; {}",
                    column(s, "burst", NO_BURST_618),
                    column(s, "burst", BURST_618),
                )
            },
        ),
    ]
}
