//! `futex`: the write-up's claims for futex_swap, waking on the current CPU, the direct
//! switch and VIP queueing, read off the request/response pair and the VIP UI thread.

use super::{cell, measured, ratio, rec, show, waits};
use crate::contract::{Claim, Evidence, Expect, SeedRuns};

pub static CLAIMS: [Claim; 5] = [
    Claim {
        id: "swap-shortens-the-round-trip",
        location: "the write-up's futex_swap section (wake one waiter and wait, in one call)",
        statement: "futex_swap replaces wake + wait (two system calls) in a request/response pair and shortens \
                    its round trip",
        measure: "round trip with futex_swap / with wake + wait, eevdf (ratio)",
        expect: Expect::Below(1.0),
        figure: "futex-swap-time.svg",
    },
    Claim {
        id: "current-cpu-shortens-the-round-trip",
        location: "the write-up's WF_CURRENT_CPU section (the wakee placed on the waker's CPU)",
        statement: "waking the partner on the current CPU avoids the cross-CPU wakeup and idle exit, so the round \
                    trip is shorter",
        measure: "round trip with futex_swap on the current CPU / futex_swap alone, eevdf (ratio)",
        expect: Expect::Below(1.0),
        figure: "futex-swap-switches.svg",
    },
    Claim {
        id: "direct-switch-shortens-the-round-trip",
        location: "the write-up's direct thread switch section (the waker switches straight to the wakee)",
        statement: "switching straight to the wakee bypasses the scheduler's pick and shortens the round trip",
        measure: "round trip with the direct switch / futex_swap on the current CPU, eevdf (ratio)",
        expect: Expect::Below(1.0),
        figure: "futex-swap-time.svg",
    },
    Claim {
        id: "vip-shortens-the-longest-wait",
        location: "the write-up's VIP queue-jumping section (VIP waiters ahead of normal ones), its measures: \
                   maximum and total futex wait of VIP threads",
        statement: "marking the UI thread VIP shortens its longest futex wait",
        measure: "the UI thread's longest futex wait with VIP on / off, eevdf (ratio)",
        expect: Expect::Below(1.0),
        figure: "futex-vip-waits.svg",
    },
    Claim {
        id: "vip-removes-waits-over-100ms",
        location: "the write-up's VIP measures: how often a VIP wait exceeds 100 ms and 200 ms",
        statement: "with VIP on, fewer of the UI thread's waits exceed 100 ms",
        measure: "waits over 100 ms with VIP on minus with VIP off, eevdf (count)",
        expect: Expect::Below(0.0),
        figure: "futex-vip-frames.svg",
    },
];

const SWAP: &str = "futex-swap";
const VIP: &str = "futex-vip";

/// Round trip, switches and migrations per round of mechanism `m` under eevdf.
fn round(s: &SeedRuns, m: &str) -> String {
    let l = format!("eevdf {m}");
    format!(
        "{m} {} µs ({} switches, {} migrations, {} direct switches a round)",
        show(cell(s, SWAP, "round trip µs", &l)),
        show(cell(s, SWAP, "switches", &l)),
        show(cell(s, SWAP, "migrations", &l)),
        show(cell(s, SWAP, "direct switches", &l)),
    )
}

fn rt(s: &SeedRuns, m: &str) -> Option<f64> {
    cell(s, SWAP, "round trip µs", &format!("eevdf {m}"))
}

/// Per-round metric `metric` of mechanism `m` under eevdf.
fn of(s: &SeedRuns, metric: &str, m: &str) -> Option<f64> {
    cell(s, SWAP, metric, &format!("eevdf {m}"))
}

/// Why futex_swap alone does or does not shorten the round trip: where the system call it
/// saves lies relative to the round trip's critical path. The FUTEX_SWAP patch (Oskolkov,
/// LKML 2020, "futex: introduce FUTEX_SWAP operation") collects the waiter of the wake word,
/// queues the caller on the wait word and only then wakes the waiter; with the wakee on the
/// other CPU, the waker's own wait (the call the swap saves) overlaps with the wakee's
/// wakeup there, so it costs CPU time but not round-trip time. The series' second patch
/// woke the waiter on the caller's CPU (`wake_up_process_prefer_current_cpu`): the
/// `swap+cpu` row, compared here with wake + wait too.
fn swap_why(s: &SeedRuns) -> String {
    let d = |metric: &str| Some(of(s, metric, "swap")? - of(s, metric, "wake+wait")?);
    let (Some(d_cpu), Some(d_rt), Some(idle)) = (d("CPU µs"), d("round trip µs"), of(s, "idle µs", "wake+wait"))
    else {
        return format!("{}; {}", round(s, "wake+wait"), round(s, "swap"));
    };
    let path = if d_cpu < 0.0 && d_rt >= d_cpu / 2.0 {
        format!(
            "the swap saves {:.3} µs of CPU a round (one system call fewer a hand-off) but moves the round trip by \
             {d_rt:+.3} µs: the call it saves is the waker's wait, which runs while the wakee's CPU leaves idle (the \
             CPUs idle {idle:.2} µs a round), off the round trip's critical path, and the swap wakes only after \
             queueing the caller",
            -d_cpu
        )
    } else {
        format!("the swap changes CPU time by {d_cpu:+.3} µs and the round trip by {d_rt:+.3} µs a round")
    };
    let series = ratio(rt(s, "swap+cpu"), rt(s, "wake+wait")).map_or_else(String::new, |r| {
        format!("; as the patch series posted it (waking on the current CPU) the round trip is {r:.3} of wake + wait's")
    });
    format!("{}; {}: {path}{series}", round(s, "wake+wait"), round(s, "swap"))
}

/// The VIP experiment's counters under configuration `l`.
fn vip(s: &SeedRuns, l: &str) -> String {
    let c = |m: &str| show(cell(s, VIP, m, l));
    format!(
        "{l}: longest wait {} ms, total {} ms over {} waits, {} over 100 ms, {} VIP jumps, {} held back by the \
         starvation guard, {} inheritances, {} missed frames{}",
        c("VIP max wait ms"),
        c("VIP total wait ms"),
        c("VIP futex waits"),
        c("waits > 100 ms"),
        c("VIP jumps"),
        c("guard held back"),
        c("inheritances"),
        c("missed frames"),
        rec(s, VIP, l).map_or_else(String::new, |r| format!("; {}", waits(r, "ui"))),
    )
}

pub fn evidence(runs: &[SeedRuns]) -> Vec<Evidence> {
    let two = |a: &'static str, b: &'static str| move |s: &SeedRuns| format!("{}; {}", round(s, a), round(s, b));
    vec![
        measured("swap-shortens-the-round-trip", runs, |s| ratio(rt(s, "swap"), rt(s, "wake+wait")), swap_why),
        measured(
            "current-cpu-shortens-the-round-trip",
            runs,
            |s| ratio(rt(s, "swap+cpu"), rt(s, "swap")),
            two("swap", "swap+cpu"),
        ),
        measured(
            "direct-switch-shortens-the-round-trip",
            runs,
            |s| ratio(rt(s, "direct"), rt(s, "swap+cpu")),
            two("swap+cpu", "direct"),
        ),
        measured(
            "vip-shortens-the-longest-wait",
            runs,
            |s| ratio(cell(s, VIP, "VIP max wait ms", "VIP on"), cell(s, VIP, "VIP max wait ms", "VIP off")),
            |s| format!("{}; {}", vip(s, "VIP off"), vip(s, "VIP on")),
        ),
        measured(
            "vip-removes-waits-over-100ms",
            runs,
            |s| Some(cell(s, VIP, "waits > 100 ms", "VIP on")? - cell(s, VIP, "waits > 100 ms", "VIP off")?),
            |s| {
                let off = cell(s, VIP, "VIP max wait ms", "VIP off");
                let none = off.is_some_and(|m| m < 100.0);
                format!(
                    "{}{}",
                    vip(s, "VIP off"),
                    if none { ": no wait reaches 100 ms even without VIP, so the count cannot fall" } else { "" }
                )
            },
        ),
    ]
}
