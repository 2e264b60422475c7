//! One comparison per `ule-cfs-*` study: the paper's finding, ours under each scheduler,
//! and why (see the module above).

use super::measure::*;
use super::Comparison;
use schedlab_metrics::RunRecord;

/// `(cfs run, ule run)`: the first of each among the study's runs.
type Pair<'a> = (&'a RunRecord, &'a RunRecord);

/// Builds one study's comparison from its pair of runs.
type CompareFn = fn(Pair) -> Comparison;

/// Each study's comparison, by name, with its applications (task groups, or a prefix of
/// several stages) for the headline figure.
pub(super) const TABLE: &[(&str, CompareFn, &[&str])] = &[
    ("ule-cfs-fibo-sysbench", fibo_sysbench, &["fibo", "worker"]),
    ("ule-cfs-sysbench128", sysbench128, &["main", "worker"]),
    ("ule-cfs-unpin512", unpin512, &["spinner"]),
    ("ule-cfs-cray", cray, &["cray"]),
    ("ule-cfs-mg", mg, &["mg"]),
    ("ule-cfs-apache", apache, &["ab", "httpd"]),
    ("ule-cfs-mix-cray-ep", mix_cray_ep, &["cray", "ep"]),
    ("ule-cfs-mix-apache-sysbench", mix_apache_sysbench, &["ab", "worker"]),
    ("ule-cfs-mix-blackscholes-ferret", mix_blackscholes_ferret, &["blackscholes", "ferret"]),
];

/// The applications of study `stem`.
pub(super) fn apps(stem: &str) -> Option<&'static [&'static str]> {
    TABLE.iter().find(|(n, ..)| *n == stem).map(|(.., a)| *a)
}

pub(super) fn compare(stem: &str, rs: &[RunRecord]) -> Option<Comparison> {
    let f = TABLE.iter().find(|(n, ..)| *n == stem)?.1;
    let pair = (rs.iter().find(|r| is_cfs(r))?, rs.iter().find(|r| is_ule(r))?);
    Some(f(pair))
}

/// `"cfs@4.9 X, ule@11.1-linux Y"`.
fn both(p: Pair, f: impl Fn(&RunRecord) -> String) -> String {
    format!("{} {}, {} {}", p.0.scheduler.name, f(p.0), p.1.scheduler.name, f(p.1))
}

fn agree(yes: bool) -> &'static str {
    if yes {
        "agrees with the paper"
    } else {
        "differs from the paper"
    }
}

fn fibo_sysbench(p: Pair) -> Comparison {
    let w = |r: &RunRecord| overlap(r, &["fibo", "worker"]);
    let fibo = |r: &RunRecord| share(r, "fibo", w(r));
    let (c, u) = (fibo(p.0).unwrap_or(0.0), fibo(p.1).unwrap_or(100.0));
    let (dc, du) = (done(p.0, "worker"), done(p.1, "worker"));
    let faster = matches!((dc, du), (Some(a), Some(b)) if b < a);
    let scores = format!(
        "under ULE the workers' mean interactivity score while both run is {} against fibo's {} (threshold 30: \
         below it a thread is interactive and always goes before a batch one); CFS preempted fibo {} times",
        num(mean_stat(p.1, "worker", "score", w(p.1))),
        num(mean_stat(p.1, "fibo", "score", w(p.1))),
        preempted(p.0, "fibo"),
    );
    Comparison {
        paper: "fibo alone, sysbench from 7 s on one core: CFS gives fibo about half the core while sysbench runs; \
                under ULE fibo makes no progress until sysbench ends, and sysbench finishes much sooner",
        ours: format!(
            "fibo's share while sysbench runs: {}; sysbench done at: {}",
            both(p, |r| pct(fibo(r))),
            both(p, |r| opt_ms(done(r, "worker")))
        ),
        conclusion: format!("{}: {scores}", agree((30.0..=70.0).contains(&c) && u < 10.0 && faster)),
    }
}

fn sysbench128(p: Pair) -> Comparison {
    let (nc, nu) = (never_ran(p.0, "worker"), never_ran(p.1, "worker"));
    let end = (0, p.1.sim_ns);
    Comparison {
        paper: "sysbench alone with 128 threads on one core under ULE: threads forked early (while the parent's \
                score was still interactive) become interactive and keep the core busy; threads forked later \
                start as batch and may never run",
        ours: format!("workers that never ran: {}", both(p, |r| format!("{} of 128", never_ran(r, "worker")))),
        conclusion: format!(
            "{}: under ULE main's mean score over the run is {} (it runs without sleeping, so it turns batch \
             after its first forks, and a child inherits its history); the workers average {}; CFS places each \
             new thread at min_vruntime and runs every one",
            agree(nu > 0 && nc == 0),
            num(mean_stat(p.1, "main", "score", end)),
            num(mean_stat(p.1, "worker", "score", end)),
        ),
    }
}

fn unpin512(p: Pair) -> Comparison {
    let at = |r: &RunRecord, t: u64| runnable_at(r, 0, t);
    let (c2, u2) = (at(p.0, 2_000_000_000), at(p.1, 2_000_000_000));
    // Long run: the spread of threads per CPU at the end.
    let spread = |r: &RunRecord| {
        let v: Vec<u32> = (0..r.machine.cpus).map(|c| runnable_at(r, c, r.sim_ns)).collect();
        v.iter().max().copied().unwrap_or(0) - v.iter().min().copied().unwrap_or(0)
    };
    let (sc, su) = (spread(p.0), spread(p.1));
    Comparison {
        paper: "512 spinning threads pinned to core 0, then unpinned: CFS's load balancer reacts more quickly to \
                the change (ULE's balancer runs only from CPU 0 every 0.5-1.5 s and moves one thread per \
                donor/receiver pair; idle CPUs steal one thread), but ULE achieves the better balance in the long run",
        ours: format!(
            "threads on CPU 0 one second after the unpinning: {}; at the end: {}; spread of threads per CPU at the \
             end (max - min): {}",
            both(p, |r| at(r, 2_000_000_000).to_string()),
            both(p, |r| at(r, r.sim_ns).to_string()),
            both(p, |r| spread(r).to_string()),
        ),
        conclusion: format!(
            "CFS reacting faster {}; ULE balancing better by the end of this run {}: CFS's balancer moved {} \
             threads; ULE's ran {} times and moved {}, and idle CPUs stole {}",
            agree(c2 < u2),
            agree(su < sc),
            cfs_moved(p.0),
            counter(p.1, "balance_runs"),
            counter(p.1, "balance_moves"),
            counter(p.1, "idle_steals"),
        ),
    }
}

fn cray(p: Pair) -> Comparison {
    let w = |r: &RunRecord| (0, done(r, "cray").unwrap_or(r.sim_ns));
    Comparison {
        paper: "c-ray: 512 threads released by a wakeup cascade, then computing; the paper reports the \
                completion time under each scheduler (no number is quoted here)",
        ours: format!(
            "c-ray done at: {}; its share of the machine until then: {}",
            both(p, |r| opt_ms(done(r, "cray"))),
            both(p, |r| pct(share(r, "cray", w(r))))
        ),
        conclusion: format!(
            "faster: {}: CPUs with runnable threads 100 ms after the release: {}; c-ray's migrations: {}; \
             CFS's balancer moved {} and woke {} affine; ULE's balancer moved {} and idle CPUs stole {}",
            faster(p, "cray"),
            both(p, |r| busy_cpus_at(r, 100_000_000).to_string()),
            both(p, |r| migrations(r, "cray").to_string()),
            cfs_moved(p.0),
            counter(p.0, "wake_affine"),
            counter(p.1, "balance_moves"),
            counter(p.1, "idle_steals"),
        ),
    }
}

/// Which scheduler finished application `a` first.
fn faster(p: Pair, a: &str) -> String {
    match (done(p.0, a), done(p.1, a)) {
        (Some(x), Some(y)) if x.abs_diff(y) * 100 < x.max(y) => "neither (within 1 %)".into(),
        (Some(x), Some(y)) if x < y => format!("{} by {:.0} %", p.0.scheduler.name, 100.0 * (y - x) as f64 / y as f64),
        (Some(x), Some(y)) if y < x => format!("{} by {:.0} %", p.1.scheduler.name, 100.0 * (x - y) as f64 / x as f64),
        _ => "not known (a run did not finish)".into(),
    }
}

fn mg(p: Pair) -> Comparison {
    Comparison {
        paper: "NAS MG: one thread per core, at each barrier a thread spins for up to 100 ms, then sleeps; the \
                paper reports the completion time under each scheduler (no number is quoted here)",
        ours: format!("MG done at: {}", both(p, |r| opt_ms(done(r, "mg")))),
        conclusion: format!(
            "faster: {}: threads that slept after spinning their bound (wakeups) {}; migrations {}; \
             preemptions {} (one thread per core: with no sleeps and no moves both run the same schedule)",
            faster(p, "mg"),
            both(p, |r| app(r, "mg").iter().map(|t| t.wakeups).sum::<u64>().to_string()),
            both(p, |r| migrations(r, "mg").to_string()),
            both(p, |r| preempted(r, "mg").to_string()),
        ),
    }
}

/// ab's requests: the workload's `requests` parameter.
fn requests(r: &RunRecord) -> Option<u64> {
    match r.workload.params.iter().find(|(k, _)| k == "requests")?.1 {
        schedlab_metrics::Param::Int(n) => u64::try_from(n).ok(),
        schedlab_metrics::Param::Text(ref t) => t.parse().ok(),
    }
}

fn rate(r: &RunRecord) -> String {
    match (requests(r), done(r, "ab")) {
        (Some(n), Some(t)) if t > 0 => format!("{:.0}/s", n as f64 * 1e9 / t as f64),
        _ => "-".into(),
    }
}

fn apache(p: Pair) -> Comparison {
    Comparison {
        paper: "apache (100 threads) + ab keeping 100 requests in flight on one core: the request rate under \
                each scheduler; under CFS a woken httpd thread may preempt ab, in the port user threads never \
                preempt user threads (no number is quoted here)",
        ours: format!("requests per second: {}", both(p, rate)),
        conclusion: format!(
            "faster: {}: ab was preempted {} times; ab's p99 wakeup latency {}",
            faster(p, "ab"),
            both(p, |r| preempted(r, "ab").to_string()),
            both(p, |r| dur(worst_p99(r, "ab"))),
        ),
    }
}

fn mix_cray_ep(p: Pair) -> Comparison {
    let w = |r: &RunRecord| overlap(r, &["cray", "ep"]);
    Comparison {
        paper: "c-ray + EP on 32 cores: each application's completion and share while both run; CFS shares by \
                weight over 512 + 32 equal threads, ULE balances thread counts (no number is quoted here)",
        ours: format!(
            "EP's share while both run: {}; c-ray done at {}; EP done at {}",
            both(p, |r| pct(share(r, "ep", w(r)))),
            both(p, |r| opt_ms(done(r, "cray"))),
            both(p, |r| opt_ms(done(r, "ep")))
        ),
        conclusion: format!(
            "EP, 32 of 544 threads, would get 5.9 % of the machine under pure weight sharing; EP was preempted {} \
             times and migrated {}; CFS's balancer moved {}, ULE's moved {} and idle CPUs stole {}",
            both(p, |r| preempted(r, "ep").to_string()),
            both(p, |r| migrations(r, "ep").to_string()),
            cfs_moved(p.0),
            counter(p.1, "balance_moves"),
            counter(p.1, "idle_steals"),
        ),
    }
}

fn mix_apache_sysbench(p: Pair) -> Comparison {
    let w = |r: &RunRecord| overlap(r, &["ab", "worker"]);
    Comparison {
        paper: "apache + sysbench on one core: both mostly sleep, so ULE scores both interactive and runs them \
                by priority while CFS shares by weight (no number is quoted here)",
        ours: format!(
            "ab's share while sysbench runs: {}; ab done at {}; sysbench done at {}",
            both(p, |r| pct(share(r, "ab", w(r)))),
            both(p, |r| opt_ms(done(r, "ab"))),
            both(p, |r| opt_ms(done(r, "worker")))
        ),
        conclusion: {
            let score = |a: &str| mean_stat(p.1, a, "score", w(p.1));
            let all = ["ab", "httpd", "worker"].map(score);
            format!(
                "{}: under ULE the mean interactivity scores while both run are ab {}, httpd {}, sysbench \
                 workers {} (below 30: interactive; lower goes first); ab was preempted {} times",
                agree(all.iter().all(|s| s.is_some_and(|v| v < 30.0))),
                num(all[0]),
                num(all[1]),
                num(all[2]),
                both(p, |r| preempted(r, "ab").to_string()),
            )
        },
    }
}

fn mix_blackscholes_ferret(p: Pair) -> Comparison {
    let w = |r: &RunRecord| overlap(r, &["blackscholes", "ferret"]);
    Comparison {
        paper: "blackscholes + ferret on 32 cores: each application's completion and share while both run (no \
                number is quoted here)",
        ours: format!(
            "blackscholes done at {}; ferret done at {}; ferret's share while both run: {}",
            both(p, |r| opt_ms(done(r, "blackscholes"))),
            both(p, |r| opt_ms(done(r, "ferret"))),
            both(p, |r| pct(share(r, "ferret", w(r))))
        ),
        conclusion: format!(
            "ferret finished first under {}: its stages' worst p99 wakeup latency {} (a woken stage waits for a \
             blackscholes thread's slice when nothing preempts it); ferret preempted {} times, migrated {}",
            faster(p, "ferret"),
            both(p, |r| dur(worst_p99(r, "ferret"))),
            both(p, |r| preempted(r, "ferret").to_string()),
            both(p, |r| migrations(r, "ferret").to_string()),
        ),
    }
}
