//! `lock-delayed-wakeup`: Zhang, Gu and Su's second optimisation, the delayed new-task
//! wakeup, read off hackbench's completion without and with it on 8 and 4 CPUs. The
//! mechanism weighs the change in completion time against what the fix removes — the spin
//! at `wake_up_new_task` — and names what else moved when that does not account for it.

use super::{exp, row};
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

/// What moved between the runs without and with the switch in one seed, summed over the
/// group counts.
fn moved(s: &SeedRuns, x: &str) -> String {
    let d = |m: &str| (total(s, x, m, false), total(s, x, m, true));
    let (t0, t1) = d("try_to_wake_up contended");
    let (s0, s1) = d("schedule contended");
    let (tsp0, tsp1) = d("try_to_wake_up spin us");
    let (f0, f1) = d("fork to first run us");
    format!(
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
    )
}

/// The fix's direct effect against what the seeds show. The delayed wakeup takes back only
/// the time a forking CPU spun on a busy target's `rq->lock` in `wake_up_new_task`: the
/// spin it removes bounds the completion time it can save (less, where the spinning CPU was
/// not on the critical path). A bound far inside the seeds' spread means the model predicts
/// no gain one could see at this scale, whatever the sign of one seed's difference — that
/// difference is another schedule (the delayed children start at the target's next
/// `schedule()`), not the fix.
fn why(runs: &[SeedRuns], x: &str, gains: &[f64]) -> String {
    let Some(first) = runs.first().filter(|s| exp(s, x).is_some()) else {
        return format!("no `{x}` experiment in this run");
    };
    let n = runs.len() as f64;
    let mean = |f: &dyn Fn(&SeedRuns) -> f64| runs.iter().map(f).sum::<f64>() / n;
    let c0 = mean(&|s| total(s, x, "completion ms", false));
    let c1 = mean(&|s| total(s, x, "completion ms", true));
    let removed_ms = mean(&|s| {
        (total(s, x, "wake_up_new_task spin us", false) - total(s, x, "wake_up_new_task spin us", true)) / 1e3
    });
    let delayed = mean(&|s| total(s, x, "delayed wakeups", true));
    let overflows = mean(&|s| total(s, x, "delay-queue overflows", true));
    let bound = if c0 > 0.0 { 100.0 * removed_ms / c0 } else { 0.0 };
    let (lo, hi) = gains.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &g| (l.min(g), h.max(g)));
    let spread = if gains.len() > 1 { (hi - lo) / 2.0 } else { 0.0 };
    let head = format!(
        "over all group counts (mean of {} seeds): completion {} ms without, {} ms with; the fix removes {} ms of \
         spin at wake_up_new_task ({} µs for each of {} delayed children, {} ring overflows), so it can save at \
         most {} % of the completion time",
        runs.len(),
        num(c0),
        num(c1),
        num(removed_ms),
        num(if delayed > 0.0 { 1e3 * removed_ms / delayed } else { 0.0 }),
        num(delayed),
        num(overflows),
        num(bound),
    );
    let tail = format!("what moved in seed 1: {}", moved(first, x));
    if gains.len() > 1 && bound < spread {
        format!(
            "{head}; the seeds' mean gains range from {} to {} % (± {} %): the model predicts no \
             gain measurable at this scale — a gain as large as the spread would need the forking CPU to spin {}× \
             longer per child than the model's rq-lock hold times make it; {tail}",
            num(lo),
            num(hi),
            num(spread),
            num(spread / bound.max(f64::MIN_POSITIVE)),
        )
    } else {
        format!("{head}: the removed spin bounds the change the seeds show; {tail}")
    }
}

pub fn evidence(runs: &[SeedRuns]) -> Vec<Evidence> {
    let judged = |claim: &'static str, x: &str| {
        let samples: Vec<f64> = runs.iter().filter_map(|s| mean_gain(s, x)).collect();
        let mechanism = if runs.is_empty() { "no runs".to_string() } else { why(runs, x, &samples) };
        Evidence { claim, samples, mechanism }
    };
    vec![judged("delayed-wakeup-gain-8-cpus", "8-cpus"), judged("delayed-wakeup-gain-4-cpus", "4-cpus")]
}
