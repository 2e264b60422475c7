//! `lock-wakeup-granularity`: Zhang, Gu and Su's third optimisation (tuning the wakeup
//! granularity), read off the web server and hackbench runs.

use super::{cell, change_pct, measured, show};
use crate::contract::{Claim, Evidence, Expect, SeedRuns};

pub static CLAIMS: [Claim; 3] = [
    Claim {
        id: "2x-granularity-more-requests",
        location: "Zhang, Gu, Su 2017, optimisation 3 (tuning sysctl_sched_wakeup_granularity): Apache \
                   (phoronix pts/apache) requests per second at 1x..4x the default, 8 logical CPUs",
        statement: "twice the default wakeup granularity serves more requests per second than the default",
        measure: "web server requests/s at 2x over 1x the granularity (%)",
        expect: Expect::Above(0.0),
        figure: "apache-requests.svg",
    },
    Claim {
        id: "2x-granularity-is-the-best",
        location: "Zhang, Gu, Su 2017, optimisation 3: the sweep's best value is 2x",
        statement: "beyond 2x, responsiveness suffers: 2x serves more than 3x and 4x",
        measure: "requests/s at 2x over the better of 3x and 4x (%)",
        expect: Expect::Above(0.0),
        figure: "apache-requests.svg",
    },
    Claim {
        id: "2x-granularity-hackbench-faster",
        location: "Zhang, Gu, Su 2017, optimisation 3: hackbench at 2x the default granularity",
        statement: "hackbench completes sooner at 2x the default granularity",
        measure: "hackbench completion time saved at 2x over 1x (%)",
        expect: Expect::Above(0.0),
        figure: "hackbench.svg",
    },
];

fn web(s: &SeedRuns, l: &str) -> String {
    let c = |m: &str| show(cell(s, "apache", m, l));
    format!(
        "{l}: {} requests/s, p99 {} µs, {} involuntary switches, {} schedule() per request, {} rq locks contended, \
         {} µs spun",
        c("requests/s"),
        c("latency p99 us"),
        c("involuntary switches"),
        c("schedule() per request"),
        c("rq locks contended"),
        c("rq spin us"),
    )
}

pub fn evidence(runs: &[SeedRuns]) -> Vec<Evidence> {
    let rps = |s: &SeedRuns, l: &str| cell(s, "apache", "requests/s", l);
    let done = |s: &SeedRuns, l: &str| cell(s, "hackbench", "completion ms", l);
    vec![
        measured(
            "2x-granularity-more-requests",
            runs,
            |s| change_pct(rps(s, "1x"), rps(s, "2x")),
            |s| format!("{}; {}", web(s, "1x"), web(s, "2x")),
        ),
        measured(
            "2x-granularity-is-the-best",
            runs,
            |s| {
                let best = rps(s, "3x")?.max(rps(s, "4x")?);
                change_pct(Some(best), rps(s, "2x"))
            },
            |s| format!("{}; {}; {}", web(s, "2x"), web(s, "3x"), web(s, "4x")),
        ),
        measured(
            "2x-granularity-hackbench-faster",
            runs,
            |s| change_pct(done(s, "1x"), done(s, "2x")).map(|c| -c),
            |s| {
                let c = |m: &str, l: &str| show(cell(s, "hackbench", m, l));
                format!(
                    "completion {} ms at 1x, {} ms at 2x; involuntary switches {} → {}; schedule() rq locks {} → {}; \
                     contended try_to_wake_up {} → {}",
                    c("completion ms", "1x"),
                    c("completion ms", "2x"),
                    c("involuntary switches", "1x"),
                    c("involuntary switches", "2x"),
                    c("schedule() rq locks", "1x"),
                    c("schedule() rq locks", "2x"),
                    c("try_to_wake_up contended", "1x"),
                    c("try_to_wake_up contended", "2x"),
                )
            },
        ),
    ]
}
