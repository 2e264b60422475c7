//! `schbench`: what the EEVDF series and schbench's author reported for schbench, read off
//! the workers' `wakeup` and `request` spans, with the counters behind them.

use super::{cell, change_pct, measured, ratio, rec, show, top_paths, waits};
use crate::contract::{Claim, Evidence, Expect, SeedRuns};
use crate::suites::schbench::{CFS, EEVDF_6_18, EEVDF_6_6, EXT_SIMPLE};

const MASON: &str = "Chris Mason, \"schbench v1.0\", LKML 2023-04-17 (Message-ID \
                     bc85a40c-1ea0-9b57-6ba3-b920c436a02c@meta.com), table \"F128 N10 no-locking\": EEVDF \
                     (8c59a975d5ee) vs Linus 6.3-rc6";

pub static CLAIMS: [Claim; 5] = [
    Claim {
        id: "eevdf-cuts-wakeup-p99",
        location: MASON,
        statement: "EEVDF is a huge improvement on wakeup latency: p99 823 µs against CFS's 1 118 µs (−26 %) for \
                    schbench -F128 -n 10 -L",
        measure: "the workers' p99 wakeup latency under eevdf 6.6, change from cfs 5.15 (%)",
        expect: Expect::Below(0.0),
        figure: "schbench-durations.svg",
    },
    Claim {
        id: "eevdf-pays-in-request-p99",
        location: MASON,
        statement: "we pay for it with preemptions during the request itself: p99 request latency 17 184 µs against \
                    14 192 µs (+21 %)",
        measure: "the workers' p99 request latency under eevdf 6.6, change from cfs 5.15 (%)",
        expect: Expect::Above(0.0),
        figure: "schbench-durations.svg",
    },
    Claim {
        id: "eevdf-schedules-more-consistently",
        location: "Peter Zijlstra, \"[PATCH 00/10] sched: EEVDF using latency-nice\", LKML 2023-03-06 (Message-ID \
                   20230306132521.968182689@infradead.org), the cover letter",
        statement: "some of the schbench results seem to indicate EEVDF schedules a lot more consistent than CFS and \
                    has a bunch of latency wins (no numbers given)",
        measure: "the spread of wakeup latency, p99 / p50, under eevdf 6.6 over that under cfs 5.15 (ratio)",
        expect: Expect::Unstated,
        figure: "schbench-durations.svg",
    },
    Claim {
        id: "eevdf-6-18-wakeup-p99",
        location: "the same sources: the series quoted schbench for the 6.6 code only (delayed dequeue and custom \
                   slices came in 6.12)",
        statement: "no schbench figure for EEVDF as of 6.12 or 6.18 in the series",
        measure: "the workers' p99 wakeup latency under eevdf 6.18, change from cfs 5.15 (%)",
        expect: Expect::Unstated,
        figure: "schbench-durations.svg",
    },
    Claim {
        id: "sched-ext-wakeup-p99",
        location: MASON,
        statement: "David Vernet's production measurements ordered EEVDF < CFS < CFS shared wake queue < sched_ext \
                    BPF, and schbench matched his differences (a BPF scheduler of his, not the kernel's examples)",
        measure: "the workers' p99 wakeup latency under ext:simple, change from cfs 5.15 (%)",
        expect: Expect::Unstated,
        figure: "schbench-durations.svg",
    },
];

const X: &str = "schbench";

fn c(s: &SeedRuns, metric: &str, l: &str) -> Option<f64> {
    cell(s, X, metric, l)
}

/// One configuration's numbers and counters, from the first seed's run.
fn line(s: &SeedRuns, l: &str) -> String {
    let v = |m: &str| show(c(s, m, l));
    let extra = rec(s, X, l).map_or_else(String::new, |r| {
        let w = waits(r, "worker");
        format!("; {}{}", top_paths(r), if w.is_empty() { String::new() } else { format!("; {w}") })
    });
    format!(
        "{l}: wakeup p50 {} / p99 {} / max {} µs, request p50 {} / p99 {} µs, {} requests/s, {} worker preemptions \
         per request, message thread's posting round p99 {} µs, {} worker migrations, CPU use {} % at {} MHz{extra}",
        v("wakeup p50 µs"),
        v("wakeup p99 µs"),
        v("wakeup max µs"),
        v("request p50 µs"),
        v("request p99 µs"),
        v("requests per s"),
        v("worker preemptions per request"),
        v("posting round p99 µs"),
        v("worker migrations"),
        v("CPU use %"),
        v("mean MHz"),
    )
}

/// `metric`'s change from cfs to `l` (%).
fn vs_cfs(s: &SeedRuns, metric: &str, l: &str) -> Option<f64> {
    change_pct(c(s, metric, CFS), c(s, metric, l))
}

fn spread(s: &SeedRuns, l: &str) -> Option<f64> {
    ratio(c(s, "wakeup p99 µs", l), c(s, "wakeup p50 µs", l))
}

pub fn evidence(runs: &[SeedRuns]) -> Vec<Evidence> {
    let both = |l: &'static str| move |s: &SeedRuns| format!("{}; {}", line(s, l), line(s, CFS));
    vec![
        measured("eevdf-cuts-wakeup-p99", runs, |s| vs_cfs(s, "wakeup p99 µs", EEVDF_6_6), both(EEVDF_6_6)),
        measured("eevdf-pays-in-request-p99", runs, |s| vs_cfs(s, "request p99 µs", EEVDF_6_6), both(EEVDF_6_6)),
        measured(
            "eevdf-schedules-more-consistently",
            runs,
            |s| ratio(spread(s, EEVDF_6_6), spread(s, CFS)),
            |s| {
                format!(
                    "p99/p50 of wakeup latency: {} under {EEVDF_6_6}, {} under {CFS}; {}",
                    show(spread(s, EEVDF_6_6)),
                    show(spread(s, CFS)),
                    both(EEVDF_6_6)(s)
                )
            },
        ),
        measured("eevdf-6-18-wakeup-p99", runs, |s| vs_cfs(s, "wakeup p99 µs", EEVDF_6_18), both(EEVDF_6_18)),
        measured("sched-ext-wakeup-p99", runs, |s| vs_cfs(s, "wakeup p99 µs", EXT_SIMPLE), both(EXT_SIMPLE)),
    ]
}
