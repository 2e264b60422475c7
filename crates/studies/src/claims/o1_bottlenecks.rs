//! `o1-bottlenecks`: the 2005 talk's account of the O(1) scheduler — constant-time picks,
//! cross-CPU wakeups as the remaining cost — read off the pick-scale and wakeup runs.

use super::{cell, measured, ratio, rec, show, top_paths};
use crate::contract::{Claim, Evidence, Expect, SeedRuns};

pub static CLAIMS: [Claim; 2] = [
    Claim {
        id: "o1-pick-does-not-grow",
        location: "the talk's O(1) scheduler overview (per-CPU priority arrays, a bitmap of non-empty lists)",
        statement: "the O(1) scheduler's pick costs the same with 10 and with 10 000 runnable tasks",
        measure: "O(1) pick work per pick with n = 10 000 / with n = 10 (ratio)",
        expect: Expect::Near { value: 1.0, rel: 0.1 },
        figure: "pick-scale-work.svg",
    },
    Claim {
        id: "cross-cpu-wakeups-cost-more",
        location: "the talk's try_to_wake_up section: the target rq->lock and the task → thread_info → cpu chain \
                   miss cache when another CPU last wrote them",
        statement: "a wakeup costs more kernel time when wakers and wakees spread over more CPUs",
        measure: "kernel time per wakeup under O(1) on 32 CPUs / on 2 CPUs (ratio)",
        expect: Expect::Above(1.0),
        figure: "",
    },
];

fn wake(s: &SeedRuns, x: &str) -> String {
    let c = |m: &str| show(cell(s, x, m, "o1"));
    let paths = rec(s, x, "o1").map_or_else(String::new, |r| format!("; {}", top_paths(r)));
    format!(
        "{x}: {} ns a wakeup over {} wakeups, {} try_to_wake_up rq locks ({} % contended), {} µs spun, {} \
         migrations{paths}",
        c("wakeup ns per wakeup"),
        c("wakeups"),
        c("try_to_wake_up rq locks"),
        c("ttwu contended %"),
        c("rq spin us"),
        c("migrations"),
    )
}

pub fn evidence(runs: &[SeedRuns]) -> Vec<Evidence> {
    let work = |s: &SeedRuns, l: &str| cell(s, "pick-scale", "pick work per pick", l);
    vec![
        measured(
            "o1-pick-does-not-grow",
            runs,
            |s| ratio(work(s, "o1 n=10000"), work(s, "o1 n=10")),
            |s| {
                format!(
                    "pick work per pick (bitmap words or tree steps): o1 {} → {}, cfs {} → {}, eevdf {} → {} from \
                     n = 10 to 10 000; schedule() ns a call, o1: {} → {}",
                    show(work(s, "o1 n=10")),
                    show(work(s, "o1 n=10000")),
                    show(work(s, "cfs n=10")),
                    show(work(s, "cfs n=10000")),
                    show(work(s, "eevdf n=10")),
                    show(work(s, "eevdf n=10000")),
                    show(cell(s, "pick-scale", "schedule ns per call", "o1 n=10")),
                    show(cell(s, "pick-scale", "schedule ns per call", "o1 n=10000")),
                )
            },
        ),
        measured(
            "cross-cpu-wakeups-cost-more",
            runs,
            |s| {
                ratio(
                    cell(s, "wakeup-32", "wakeup ns per wakeup", "o1"),
                    cell(s, "wakeup-2", "wakeup ns per wakeup", "o1"),
                )
            },
            |s| format!("{}; {}", wake(s, "wakeup-2"), wake(s, "wakeup-32")),
        ),
    ]
}
