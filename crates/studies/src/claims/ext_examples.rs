//! `ext-examples`: what sched_ext's example schedulers are documented to do, read off the
//! study's runs beside CFS.

use super::{cell, measured, show};
use crate::contract::{Claim, Evidence, Expect, SeedRuns};

pub static CLAIMS: [Claim; 2] = [
    Claim {
        id: "scx-simple-shares-like-cfs",
        location: "Linux 6.12 tools/sched_ext/scx_simple.bpf.c (a global weighted-vtime queue)",
        statement: "scx_simple's vtime mode shares a CPU by weight, as CFS does: fibo keeps its share beside sysbench",
        measure: "fibo's share with ext:simple minus with cfs, fibo + sysbench on one core (percentage points)",
        expect: Expect::Within(-10.0, 10.0),
        figure: "fibo-sysbench-shares.svg",
    },
    Claim {
        id: "scx-central-decides-on-one-cpu",
        location: "Linux 6.12 tools/sched_ext/scx_central.bpf.c (one CPU makes every scheduling decision)",
        statement: "scx_central dispatches from one CPU: a wakeup elsewhere waits for it (no number given)",
        measure: "p99 wakeup latency of periodic-200 with ext:central / with ext:simple (ratio)",
        expect: Expect::Unstated,
        figure: "periodic-200-durations.svg",
    },
];

fn line(s: &SeedRuns, x: &str, l: &str) -> String {
    let c = |m: &str| show(cell(s, x, m, l));
    format!("{l}: p50 {} µs, p99 {} µs, {} migrations", c("lat p50 µs"), c("lat p99 µs"), c("migrations"))
}

pub fn evidence(runs: &[SeedRuns]) -> Vec<Evidence> {
    let fibo = |s: &SeedRuns, l: &str| cell(s, "fibo-sysbench", "fibo share %", l);
    let p99 = |s: &SeedRuns, l: &str| cell(s, "periodic-200", "lat p99 µs", l);
    vec![
        measured(
            "scx-simple-shares-like-cfs",
            runs,
            |s| Some(fibo(s, "ext:simple")? - fibo(s, "cfs")?),
            |s| {
                format!(
                    "fibo's share: cfs {} %, ext:simple {} %, ext:simple fifo {} %, ule {} %; {}; {}",
                    show(fibo(s, "cfs")),
                    show(fibo(s, "ext:simple")),
                    show(fibo(s, "ext:simple fifo")),
                    show(fibo(s, "ule")),
                    line(s, "fibo-sysbench", "cfs"),
                    line(s, "fibo-sysbench", "ext:simple"),
                )
            },
        ),
        measured(
            "scx-central-decides-on-one-cpu",
            runs,
            |s| super::ratio(p99(s, "ext:central"), p99(s, "ext:simple")),
            |s| format!("{}; {}", line(s, "periodic-200", "ext:central"), line(s, "periodic-200", "ext:simple")),
        ),
    ]
}
