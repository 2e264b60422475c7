//! `lock-delayed-wakeup`: Zhang, Gu and Su's second optimisation, the delayed new-task
//! wakeup, read off hackbench's completion without and with it on 8 and 4 CPUs. The
//! mechanism weighs the change in completion time against what the fix removes — the spin
//! at `wake_up_new_task` — and names what else moved when that does not account for it.

use super::{exp, measured, row};
use crate::contract::{num, Claim, Evidence, Expect, SeedRuns};

pub static CLAIMS: [Claim; 2] = [
    Claim {
        id: "delayed-wakeup-gain-8-cpus",
        location: "Zhang, Gu, Su 2017, optimisation 2 (delayed new-task wakeup): hackbench, 20..200 groups, \
                   completion time without and with, i7-3770 with 8 logical CPUs",
        statement: "the delayed new-task wakeup shortens hackbench's completion time at every group count",
        measure: "mean gain over the group counts, (without − with) / without, 8 CPUs (%)",
        expect: Expect::Above(0.0),
        figure: "gain.svg",
    },
    Claim {
        id: "delayed-wakeup-gain-4-cpus",
        location: "Zhang, Gu, Su 2017, optimisation 2: the same experiment with 4 logical CPUs",
        statement: "the delayed new-task wakeup shortens hackbench's completion time at every group count",
        measure: "mean gain over the group counts, (without − with) / without, 4 CPUs (%)",
        expect: Expect::Above(0.0),
        figure: "gain.svg",
    },
];

/// The sum of row `metric` over the columns without (`false`) or with (`true`) the
/// delayed wakeup.
fn total(s: &SeedRuns, x: &str, metric: &str, with: bool) -> f64 {
    row(s, x, metric).iter().filter(|(l, _)| l.ends_with(" dw") == with).map(|(_, v)| v).sum()
}

fn mean_gain(s: &SeedRuns, x: &str) -> Option<f64> {
    let g = row(s, x, "gain %");
    (!g.is_empty()).then(|| g.iter().map(|(_, v)| v).sum::<f64>() / g.len() as f64)
}

/// What moved between the runs without and with the switch, summed over the group counts.
fn why(s: &SeedRuns, x: &str) -> String {
    if exp(s, x).is_none() {
        return format!("no `{x}` experiment in this run");
    }
    let d = |m: &str| (total(s, x, m, false), total(s, x, m, true));
    let (c0, c1) = d("completion ms");
    let (spin0, spin1) = d("wake_up_new_task spin us");
    let removed_ms = (spin0 - spin1) / 1e3;
    let saved_ms = c0 - c1;
    let (t0, t1) = d("try_to_wake_up contended");
    let (s0, s1) = d("schedule contended");
    let (tsp0, tsp1) = d("try_to_wake_up spin us");
    let (f0, f1) = d("fork to first run us");
    let delayed = total(s, x, "delayed wakeups", true);
    let overflows = total(s, x, "delay-queue overflows", true);
    let head = format!(
        "over all group counts: completion {} ms without, {} ms with ({} ms saved); the fix removes {} ms of spin \
         at wake_up_new_task ({} children delayed, {} ring overflows)",
        num(c0),
        num(c1),
        num(saved_ms),
        num(removed_ms),
        num(delayed),
        num(overflows),
    );
    let moved = format!(
        "contended try_to_wake_up {} → {} ({} → {} µs spun), contended schedule {} → {}, mean fork-to-first-run \
         summed {} → {} µs",
        num(t0),
        num(t1),
        num(tsp0),
        num(tsp1),
        num(s0),
        num(s1),
        num(f0),
        num(f1),
    );
    // The removed spin is an upper bound on what the fix saves directly (a CPU spinning at
    // fork is the only time it takes back): a change much larger than that is another
    // schedule, not the fix.
    if saved_ms.abs() > 0.0 && removed_ms.abs() >= 0.5 * saved_ms.abs() {
        format!("{head}: the removed spin accounts for the change; {moved}")
    } else {
        format!(
            "{head}: unexplained by the removed spin ({} % of the change); ruled out: ring overflows ({}); what \
             moved instead: {moved} — the children start at the target's next schedule() instead of at once, \
             which reorders the run",
            num(if saved_ms != 0.0 { 100.0 * removed_ms / saved_ms.abs() } else { 0.0 }),
            num(overflows),
        )
    }
}

pub fn evidence(runs: &[SeedRuns]) -> Vec<Evidence> {
    vec![
        measured("delayed-wakeup-gain-8-cpus", runs, |s| mean_gain(s, "8-cpus"), |s| why(s, "8-cpus")),
        measured("delayed-wakeup-gain-4-cpus", runs, |s| mean_gain(s, "4-cpus"), |s| why(s, "4-cpus")),
    ]
}
