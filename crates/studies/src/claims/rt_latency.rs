//! `rt-latency`: cyclictest practice and the kernel's documented rt bandwidth, read off the
//! periodic `cyclic` thread's latency and share.

use super::{cell, measured, rec, show, top_paths, waits};
use crate::contract::{Claim, Evidence, Expect, SeedRuns};

pub static CLAIMS: [Claim; 5] = [
    Claim {
        id: "fifo-among-fair-waits-only-for-the-wakeup",
        location: "cyclictest(8) (rt-tests); Linux kernel/sched/core.c wakeup_preempt: a higher class preempts at once",
        statement: "a SCHED_FIFO thread among fair hogs waits only for the wakeup path: tens of microseconds",
        measure: "p99 wakeup latency of the FIFO thread among three fair hogs, eevdf 6.18 (µs)",
        expect: Expect::Below(50.0),
        figure: "among-fair-durations.svg",
    },
    Claim {
        id: "throttling-leaves-fair-5-percent",
        location: "Linux Documentation/scheduler/sched-rt-group.rst §1.4 (sched_rt_runtime_us 950000 of \
                   sched_rt_period_us 1000000)",
        statement: "rt throttling leaves fair tasks 5 % of each second beside a FIFO hog",
        measure: "the fair thread's CPU share beside a FIFO hog, cfs 5.15 (throttling) (%)",
        expect: Expect::Near { value: 5.0, rel: 0.3 },
        figure: "fair-vs-fifo-hog-shares.svg",
    },
    Claim {
        id: "fair-server-leaves-fair-5-percent",
        location: "Linux 6.12 kernel/sched/deadline.c dl_server (the fair server: 50 ms every second)",
        statement: "from 6.12 the fair server, a deadline reservation of 50 ms a second, runs fair tasks beside an \
                    rt hog",
        measure: "the fair thread's CPU share beside a FIFO hog, eevdf 6.18 (fair server) (%)",
        expect: Expect::Near { value: 5.0, rel: 0.3 },
        figure: "fair-vs-fifo-hog-shares.svg",
    },
    Claim {
        id: "no-bandwidth-starves-fair",
        location: "Linux Documentation/scheduler/sched-rt-group.rst §1.4 (sched_rt_runtime_us = -1 disables the limit)",
        statement: "without rt bandwidth control a FIFO hog starves fair tasks",
        measure: "the fair thread's CPU share beside a FIFO hog, eevdf 6.18, rt_bandwidth=none (%)",
        expect: Expect::Below(1.0),
        figure: "fair-vs-fifo-hog-shares.svg",
    },
    Claim {
        id: "fifo-among-rt-bounded-by-the-higher-burst",
        location: "sched(7) SCHED_FIFO: a thread runs until a higher-priority one is runnable",
        statement: "among rt threads the FIFO thread's latency is bounded by the higher-priority thread's burst \
                    (2 ms)",
        measure: "the FIFO thread's longest wakeup latency beside a 2 ms / 10 ms higher-priority thread, eevdf 6.18 \
                  (fair server) (µs)",
        expect: Expect::Below(2200.0),
        figure: "among-rt-durations.svg",
    },
];

const E: &str = "eevdf 6.18 (fair server)";

fn lat(s: &SeedRuns, x: &str, l: &str) -> String {
    let c = |m: &str| show(cell(s, x, m, l));
    let paths = rec(s, x, l).map_or_else(String::new, |r| format!("; {}; {}", top_paths(r), waits(r, "cyclic")));
    format!(
        "{l}: {} wakeups, p50 {} µs, p99 {} µs, max {} µs, share {} %{paths}",
        c("wakeups"),
        c("lat p50 µs"),
        c("lat p99 µs"),
        c("lat max µs"),
        c("cyclic CPU share %")
    )
}

pub fn evidence(runs: &[SeedRuns]) -> Vec<Evidence> {
    let share = |x: &'static str, l: &'static str| move |s: &SeedRuns| cell(s, x, "cyclic CPU share %", l);
    vec![
        measured(
            "fifo-among-fair-waits-only-for-the-wakeup",
            runs,
            |s| cell(s, "among-fair", "lat p99 µs", E),
            |s| lat(s, "among-fair", E),
        ),
        measured("throttling-leaves-fair-5-percent", runs, share("fair-vs-fifo-hog", "cfs 5.15 (throttle)"), |s| {
            lat(s, "fair-vs-fifo-hog", "cfs 5.15 (throttle)")
        }),
        measured("fair-server-leaves-fair-5-percent", runs, share("fair-vs-fifo-hog", E), |s| {
            lat(s, "fair-vs-fifo-hog", E)
        }),
        measured("no-bandwidth-starves-fair", runs, share("fair-vs-fifo-hog", "6.18 rt_bandwidth=none"), |s| {
            lat(s, "fair-vs-fifo-hog", "6.18 rt_bandwidth=none")
        }),
        measured(
            "fifo-among-rt-bounded-by-the-higher-burst",
            runs,
            |s| cell(s, "among-rt", "lat max µs", E),
            |s| format!("{}; {}", lat(s, "among-rt", E), lat(s, "among-rt", "cfs 5.15 (throttle)")),
        ),
    ]
}
