//! The `ule-cfs-*` studies: Bouron et al. (USENIX ATC 2018), one or two claims each, read
//! off the pair of runs (CFS, ULE) of each seed. The mechanism is the study's comparison
//! (`crate::bouron`): ULE's interactivity scores from the sampled series, preemptions,
//! migrations and the balancers' counters of the first seed's runs.

use super::measured;
use crate::bouron::measure::{done, is_cfs, is_ule, mean_stat, never_ran, overlap, runnable_at, share};
use crate::contract::{Claim, Evidence, Expect, SeedRuns};
use schedlab_run::RunRecord;

/// `(cfs, ule)` of one seed.
fn pair(s: &SeedRuns) -> Option<(&RunRecord, &RunRecord)> {
    let rs = &s.iter().find(|r| r.name == "main")?.records;
    Some((rs.iter().find(|r| is_cfs(r))?, rs.iter().find(|r| is_ule(r))?))
}

/// The study's comparison of one seed's runs as the mechanism (what was measured and why).
fn why(study: &'static str) -> impl Fn(&SeedRuns) -> String {
    move |s| {
        let rs: &[RunRecord] = s.iter().find(|r| r.name == "main").map_or(&[], |r| &r.records);
        match crate::bouron::comparison(study, rs) {
            Some(c) => format!("{}; {}", c.ours, strip_verdict(&c.conclusion)),
            None => "no run of both CFS and ULE".into(),
        }
    }
}

/// The comparison's own agree/differ opening, which the contract's verdict replaces.
fn strip_verdict(s: &str) -> &str {
    for p in ["agrees with the paper: ", "differs from the paper: "] {
        if let Some(rest) = s.strip_prefix(p) {
            return rest;
        }
    }
    s
}

macro_rules! claim {
    ($id:literal, $loc:literal, $stmt:literal, $measure:literal, $expect:expr, $fig:literal) => {
        Claim { id: $id, location: $loc, statement: $stmt, measure: $measure, expect: $expect, figure: $fig }
    };
}

pub static FIBO_SYSBENCH: [Claim; 2] = [
    claim!(
        "cfs-halves-fibo",
        "Bouron et al. 2018, per-core scheduling: fibo + sysbench on one core (cumulative run time per thread)",
        "CFS gives fibo about half the core while sysbench runs",
        "fibo's share of the core while sysbench runs, CFS (%)",
        Expect::Within(30.0, 70.0),
        "paper-shares.svg"
    ),
    claim!(
        "ule-starves-fibo",
        "Bouron et al. 2018, per-core scheduling: fibo + sysbench on one core (cumulative run time per thread)",
        "under ULE fibo makes no progress until sysbench ends (sysbench's threads are interactive, fibo batch)",
        "fibo's share of the core while sysbench runs, ULE (%)",
        Expect::Below(10.0),
        "paper-shares.svg"
    ),
];

fn fibo_share(r: &RunRecord) -> Option<f64> {
    share(r, "fibo", overlap(r, &["fibo", "worker"]))
}

pub fn fibo_sysbench(runs: &[SeedRuns]) -> Vec<Evidence> {
    let w = why("ule-cfs-fibo-sysbench");
    vec![
        measured("cfs-halves-fibo", runs, |s| fibo_share(pair(s)?.0), &w),
        measured("ule-starves-fibo", runs, |s| fibo_share(pair(s)?.1), &w),
    ]
}

pub static SYSBENCH128: [Claim; 1] = [claim!(
    "ule-starves-late-forks",
    "Bouron et al. 2018, per-core scheduling: sysbench with 128 threads on one core under ULE (interactivity \
     penalty per thread)",
    "threads forked after the parent turned batch start batch and may never run",
    "sysbench workers that never ran, ULE (of 128)",
    Expect::Above(0.0),
    "paper-shares.svg"
)];

pub fn sysbench128(runs: &[SeedRuns]) -> Vec<Evidence> {
    vec![measured(
        "ule-starves-late-forks",
        runs,
        |s| Some(never_ran(pair(s)?.1, "worker") as f64),
        why("ule-cfs-sysbench128"),
    )]
}

pub static UNPIN512: [Claim; 2] = [
    claim!(
        "cfs-reacts-faster",
        "Bouron et al. 2018, load balancing: 512 spinning threads pinned to core 0, then unpinned (threads per core \
         over time); abstract: CFS reacts more quickly to workload changes",
        "CFS's balancer spreads the threads sooner after the unpinning",
        "threads still on CPU 0 one second after the unpinning, ULE minus CFS",
        Expect::Above(0.0),
        ""
    ),
    claim!(
        "ule-balances-better-long-run",
        "Bouron et al. 2018, load balancing: the same experiment at its end; abstract: ULE achieves a better load \
         balance in the long run",
        "by the end ULE's balance is better than CFS's",
        "spread of threads per CPU at the end (max − min), CFS minus ULE",
        Expect::Above(0.0),
        ""
    ),
];

fn spread(r: &RunRecord) -> f64 {
    let v: Vec<u32> = (0..r.machine.cpus).map(|c| runnable_at(r, c, r.sim_ns)).collect();
    (v.iter().max().copied().unwrap_or(0) - v.iter().min().copied().unwrap_or(0)) as f64
}

pub fn unpin512(runs: &[SeedRuns]) -> Vec<Evidence> {
    let w = why("ule-cfs-unpin512");
    let at = |r: &RunRecord| runnable_at(r, 0, 2_000_000_000) as f64;
    vec![
        measured("cfs-reacts-faster", runs, |s| pair(s).map(|(c, u)| at(u) - at(c)), &w),
        measured("ule-balances-better-long-run", runs, |s| pair(s).map(|(c, u)| spread(c) - spread(u)), &w),
    ]
}

/// ULE's completion of application `a` relative to CFS's, in % (> 0: ULE later).
fn later_pct(s: &SeedRuns, a: &str) -> Option<f64> {
    let (c, u) = pair(s)?;
    let (c, u) = (done(c, a)? as f64, done(u, a)? as f64);
    (c > 0.0).then(|| 100.0 * (u - c) / c)
}

pub static CRAY: [Claim; 1] = [claim!(
    "cray-completion",
    "Bouron et al. 2018, multicore performance: c-ray (512 threads released by a wakeup cascade)",
    "the paper reports c-ray's completion under each scheduler (no number is restated here)",
    "c-ray's completion under ULE relative to CFS (%, > 0: ULE later)",
    Expect::Unstated,
    "paper-completion.svg"
)];

pub fn cray(runs: &[SeedRuns]) -> Vec<Evidence> {
    vec![measured("cray-completion", runs, |s| later_pct(s, "cray"), why("ule-cfs-cray"))]
}

pub static MG: [Claim; 1] = [claim!(
    "mg-completion",
    "Bouron et al. 2018, multicore performance: NAS MG (one thread per core, spin-then-sleep barriers)",
    "the paper reports MG's completion under each scheduler (no number is restated here)",
    "MG's completion under ULE relative to CFS (%, > 0: ULE later)",
    Expect::Unstated,
    "paper-completion.svg"
)];

pub fn mg(runs: &[SeedRuns]) -> Vec<Evidence> {
    vec![measured("mg-completion", runs, |s| later_pct(s, "mg"), why("ule-cfs-mg"))]
}

pub static APACHE: [Claim; 1] = [claim!(
    "apache-rate",
    "Bouron et al. 2018, per-core scheduling: apache (100 threads) and ab on one core",
    "the paper reports the request rate under each scheduler (no number is restated here)",
    "ab's completion under ULE relative to CFS (%, > 0: ULE slower)",
    Expect::Unstated,
    "paper-completion.svg"
)];

pub fn apache(runs: &[SeedRuns]) -> Vec<Evidence> {
    vec![measured("apache-rate", runs, |s| later_pct(s, "ab"), why("ule-cfs-apache"))]
}

pub static MIX_CRAY_EP: [Claim; 1] = [claim!(
    "ep-share",
    "Bouron et al. 2018, multi-application workloads: c-ray + EP on 32 cores",
    "the paper reports each application's completion (no number is restated here)",
    "EP's share of the machine while both run, ULE minus CFS (percentage points)",
    Expect::Unstated,
    "paper-shares.svg"
)];

pub fn mix_cray_ep(runs: &[SeedRuns]) -> Vec<Evidence> {
    let ep = |r: &RunRecord| share(r, "ep", overlap(r, &["cray", "ep"]));
    vec![measured("ep-share", runs, |s| pair(s).and_then(|(c, u)| Some(ep(u)? - ep(c)?)), why("ule-cfs-mix-cray-ep"))]
}

pub static MIX_APACHE_SYSBENCH: [Claim; 1] = [claim!(
    "ule-scores-both-interactive",
    "Bouron et al. 2018, multi-application workloads: apache + sysbench on one core",
    "both mostly sleep, so ULE scores both interactive (score below 30) and runs them by priority",
    "the highest mean ULE interactivity score of ab, httpd and the sysbench workers while both run",
    Expect::Below(30.0),
    "paper-shares.svg"
)];

pub fn mix_apache_sysbench(runs: &[SeedRuns]) -> Vec<Evidence> {
    let worst = |s: &SeedRuns| {
        let (_, u) = pair(s)?;
        let w = overlap(u, &["ab", "worker"]);
        ["ab", "httpd", "worker"]
            .iter()
            .map(|a| mean_stat(u, a, "score", w))
            .collect::<Option<Vec<f64>>>()?
            .into_iter()
            .reduce(f64::max)
    };
    vec![measured("ule-scores-both-interactive", runs, worst, why("ule-cfs-mix-apache-sysbench"))]
}

pub static MIX_BLACKSCHOLES_FERRET: [Claim; 1] = [claim!(
    "ferret-completion",
    "Bouron et al. 2018, multi-application workloads: blackscholes + ferret on 32 cores",
    "the paper reports each application's completion (no number is restated here)",
    "ferret's completion under ULE relative to CFS (%, > 0: ULE later)",
    Expect::Unstated,
    "paper-completion.svg"
)];

pub fn mix_blackscholes_ferret(runs: &[SeedRuns]) -> Vec<Evidence> {
    vec![measured("ferret-completion", runs, |s| later_pct(s, "ferret"), why("ule-cfs-mix-blackscholes-ferret"))]
}
