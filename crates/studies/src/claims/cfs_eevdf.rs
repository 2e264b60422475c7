//! `cfs-eevdf`: what the EEVDF paper and its merge into Linux say about slices, latency,
//! waking tasks and shares, read off the study's four experiments.

use super::{cell, measured, ratio, rec, show, waits};
use crate::contract::{Claim, Evidence, Expect, SeedRuns};

pub static CLAIMS: [Claim; 5] = [
    Claim {
        id: "longer-slice-fewer-preemptions",
        location: "Stoica, Abdel-Wahab 1995, §3 (a request's virtual deadline: eligible time + request / weight); \
                   Linux 6.12 kernel/sched/syscalls.c __setparam_fair (sched_attr.sched_runtime as the task's slice)",
        statement: "a task's request (slice) sets its virtual deadline: with a longer slice it runs longer before a \
                    peer preempts it",
        measure: "hogs' involuntary switches with a 7 ms custom slice / with the default slice, eevdf 6.18 (ratio)",
        expect: Expect::Below(0.75),
        figure: "four-hogs-durations.svg",
    },
    Claim {
        id: "shorter-slice-lower-latency",
        location: "Stoica, Abdel-Wahab 1995, §1 and §3 (latency bounded by the request size); \
                   Linux 6.12 kernel/sched/fair.c (PREEMPT_SHORT: a shorter slice may wakeup-preempt)",
        statement: "a task with a shorter request gets an earlier deadline when it wakes, so it waits less for \
                    the same share",
        measure: "p99 wakeup latency of the 0.1 ms-slice task / the same task at the base slice, eevdf 6.18 (ratio)",
        expect: Expect::Below(1.0),
        figure: "short-slice-durations.svg",
    },
    Claim {
        id: "lag-placement-gives-the-demand",
        location: "Linux 6.6 kernel/sched/fair.c place_entity (a waking task keeps its lag; CFS's sleeper credit, \
                   GENTLE_FAIR_SLEEPERS, is gone)",
        statement: "a task that runs 1 ms and sleeps 9 ms gets its 10 % beside a hog, no sleeper bonus beyond it",
        measure: "the sleeper's share of the CPU time beside the hog, eevdf 6.18 (%)",
        expect: Expect::Near { value: 10.0, rel: 0.1 },
        figure: "sleeper-shares.svg",
    },
    Claim {
        id: "autogroup-shares-by-session",
        location: "Linux kernel/sched/autogroup.c (2.6.38 on): every session's tasks share one group entity",
        statement: "two sessions share the CPU equally whatever their tasks' nice values",
        measure: "nice-0 task's share against a nice-10 task of another session, eevdf 6.18 with autogroup (%)",
        expect: Expect::Near { value: 50.0, rel: 0.04 },
        figure: "autogroup-nice-shares.svg",
    },
    Claim {
        id: "nice-weights-without-autogroup",
        location: "Linux kernel/sched/core.c sched_prio_to_weight (nice 0: 1024, nice 10: 110)",
        statement: "without autogroup, nice 0 against nice 10 shares by weight: 1024 / (1024 + 110) = 90.3 %",
        measure: "nice-0 task's share against the nice-10 task, eevdf 6.18 without autogroup (%)",
        expect: Expect::Near { value: 90.3, rel: 0.02 },
        figure: "autogroup-nice-shares.svg",
    },
];

const E: &str = "eevdf 6.18";

pub fn evidence(runs: &[SeedRuns]) -> Vec<Evidence> {
    let sw = |s: &SeedRuns, l: &str| cell(s, "four-hogs", "involuntary switches", l);
    let burst = |s: &SeedRuns, l: &str| cell(s, "four-hogs", "mean burst ms", l);
    let lat = |s: &SeedRuns, m: &str, l: &str| cell(s, "short-slice", m, l);
    let sl = |s: &SeedRuns, m: &str, l: &str| cell(s, "sleeper", m, l);
    let ag = |s: &SeedRuns, m: &str, l: &str| cell(s, "autogroup-nice", m, l);
    vec![
        measured(
            "longer-slice-fewer-preemptions",
            runs,
            |s| ratio(sw(s, "6.18 slice 7ms"), sw(s, E)),
            |s| {
                format!(
                    "{E}: {} involuntary switches among the hogs, a mean burst of {} ms; with a 7 ms custom slice {} \
                     ({} ms bursts); with a 7 ms base slice {}: a hog is preempted only once its deadline has \
                     passed, checked at the tick, so a slice longer than a tick period skips every other tick",
                    show(sw(s, E)),
                    show(burst(s, E)),
                    show(sw(s, "6.18 slice 7ms")),
                    show(burst(s, "6.18 slice 7ms")),
                    show(sw(s, "6.18 base 7ms")),
                )
            },
        ),
        measured(
            "shorter-slice-lower-latency",
            runs,
            |s| ratio(lat(s, "lat p99 µs", E), lat(s, "lat p99 µs", "6.18 base slice")),
            |s| {
                format!(
                    "p99 {} µs and {} µs waited per wakeup with the 0.1 ms slice, against {} µs and {} µs at the \
                     base slice, for CPU shares of {} % and {} %; 0.1 ms: {}; base: {}",
                    show(lat(s, "lat p99 µs", E)),
                    show(lat(s, "lat wait per wakeup µs", E)),
                    show(lat(s, "lat p99 µs", "6.18 base slice")),
                    show(lat(s, "lat wait per wakeup µs", "6.18 base slice")),
                    show(lat(s, "lat CPU share %", E)),
                    show(lat(s, "lat CPU share %", "6.18 base slice")),
                    rec(s, "short-slice", E).map_or_else(String::new, |r| waits(r, "lat")),
                    rec(s, "short-slice", "6.18 base slice").map_or_else(String::new, |r| waits(r, "lat")),
                )
            },
        ),
        measured(
            "lag-placement-gives-the-demand",
            runs,
            |s| sl(s, "sleeper share %", E),
            |s| {
                format!(
                    "{E}: the sleeper woke {} times (p50 {} µs, p99 {} µs) and preempted the hog {} times; \
                     cfs 5.15 with the sleeper credit: {} % share, p99 {} µs, {} preemptions",
                    show(sl(s, "sleeper wakeups", E)),
                    show(sl(s, "sleeper p50 µs", E)),
                    show(sl(s, "sleeper p99 µs", E)),
                    show(sl(s, "hog preempted", E)),
                    show(sl(s, "sleeper share %", "cfs 5.15")),
                    show(sl(s, "sleeper p99 µs", "cfs 5.15")),
                    show(sl(s, "hog preempted", "cfs 5.15")),
                )
            },
        ),
        measured(
            "autogroup-shares-by-session",
            runs,
            |s| ag(s, "nice 0 share %", "eevdf autogroup"),
            |s| {
                format!(
                    "with autogroup the two sessions' group entities weigh the same: nice 0 {} %, nice 10 {} % \
                     (cfs: {} % / {} %)",
                    show(ag(s, "nice 0 share %", "eevdf autogroup")),
                    show(ag(s, "nice 10 share %", "eevdf autogroup")),
                    show(ag(s, "nice 0 share %", "cfs autogroup")),
                    show(ag(s, "nice 10 share %", "cfs autogroup")),
                )
            },
        ),
        measured(
            "nice-weights-without-autogroup",
            runs,
            |s| ag(s, "nice 0 share %", "eevdf no autogroup"),
            |s| {
                format!(
                    "without autogroup both tasks are entities of the root runqueue: nice 0 {} %, nice 10 {} % \
                     (cfs: {} % / {} %)",
                    show(ag(s, "nice 0 share %", "eevdf no autogroup")),
                    show(ag(s, "nice 10 share %", "eevdf no autogroup")),
                    show(ag(s, "nice 0 share %", "cfs no autogroup")),
                    show(ag(s, "nice 10 share %", "cfs no autogroup")),
                )
            },
        ),
    ]
}
