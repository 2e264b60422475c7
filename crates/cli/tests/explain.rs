//! `schedlab explain`: decision records and the explanation of waits (issue 15, items 1–3).

mod common;

use schedlab::explain::{render, Ask, Select};
use schedlab_metrics::explain::{Explained, WaitCause};
use schedlab_run::RunSpec;
use schedlab_sim::Ns;

fn study(name: &str, sched: &str, dur: Ns) -> RunSpec {
    let text = schedlab_studies::builtin_workload(name).expect("built-in study");
    let mut j = RunSpec::load(name, text, None, &[], Some(dur)).unwrap();
    j.sched = sched.into();
    // Snapshots and exact waits: the noiseless machine.
    j.set("machine.noise", "none").unwrap();
    j
}

fn explain(j: &RunSpec, task: Option<&str>) -> (schedlab_run::RunRecord, Explained) {
    let ask = Ask { task: task.map(Into::into), select: Select::Worst(3), summary: false, json: false, svg: None };
    schedlab::explain::run(j, &ask, &mut |_| true).unwrap()
}

/// Time of `task`'s waits inside `[from, to)`, by cause.
fn by_cause_between(ex: &Explained, from: u64, to: u64) -> [u64; WaitCause::ALL.len()] {
    let mut by = [0; WaitCause::ALL.len()];
    for g in ex.waits.iter().flat_map(|w| &w.segments) {
        let (a, b) = (g.start_ns.max(from), g.end_ns.min(to));
        if a < b {
            by[g.cause.index()] += b - a;
        }
    }
    by
}

/// Bouron et al.'s fibo + sysbench: under ULE the 80 workers score interactive and fibo
/// (batch) waits in the timeshare queue behind them: at least 95 % of fibo's waiting in
/// the overlap is "behind higher priority", and the words name the scores compared.
#[test]
fn fibo_waits_behind_interactive_threads_under_ule() {
    let j = study("ule-cfs-fibo-sysbench", "ule@11.1-linux", Ns::from_secs(9));
    let (_, ex) = explain(&j, Some("fibo"));
    let by = by_cause_between(&ex, 7_000_000_000, 9_000_000_000);
    let total: u64 = by.iter().sum();
    assert!(total > 1_000_000_000, "fibo waited {total} ns in the overlap");
    let prio = by[WaitCause::Priority.index()];
    assert!(prio * 100 >= total * 95, "priority {prio} of {total} ns: {by:?}");
    let seg = ex.waits.iter().flat_map(|w| &w.segments).find(|g| g.cause == WaitCause::Priority).unwrap();
    assert!(seg.why.contains("score") && seg.why.contains("realtime (interactive)"), "{}", seg.why);
    assert!(ex.names[seg.ran.unwrap()].starts_with("worker") || ex.names[seg.ran.unwrap()] == "sysbench");
}

/// Under CFS fibo shares the core: its waiting in the overlap is fair sharing, explained by
/// vruntime comparisons.
#[test]
fn fibo_waits_for_its_fair_share_under_cfs() {
    let j = study("ule-cfs-fibo-sysbench", "cfs@4.9", Ns::from_secs(9));
    let (_, ex) = explain(&j, Some("fibo"));
    let by = by_cause_between(&ex, 7_000_000_000, 9_000_000_000);
    let total: u64 = by.iter().sum();
    let fair = by[WaitCause::FairShare.index()];
    assert!(fair * 100 >= total * 95, "fair share {fair} of {total} ns: {by:?}");
    assert!(total > 500_000_000, "fibo waited {total} ns in the overlap");
    assert_eq!(by[WaitCause::Priority.index()], 0);
    let seg = ex.waits.iter().flat_map(|w| &w.segments).find(|g| g.cause == WaitCause::FairShare).unwrap();
    assert!(seg.why.contains("vruntime"), "{}", seg.why);
}

/// 512 spinners unpinned at 1 s on opteron-32 under ULE: the threads left on CPU 0 wait
/// while other CPUs idle, and the explanation names the balancer's one-thread-per-pair
/// rule and the idle-steal threshold.
#[test]
fn spinners_left_on_cpu0_name_the_pair_rule_and_steal_threshold() {
    let j = study("ule-cfs-unpin512", "ule@11.1-linux", Ns::from_ms(2500));
    let (_, ex) = explain(&j, Some("spinner"));
    let late: Vec<_> =
        ex.waits.iter().filter(|w| w.end_ns > 1_500_000_000 && w.segments.iter().any(|g| g.cpu == 0)).collect();
    assert!(!late.is_empty());
    let named = late.iter().any(|w| {
        w.balance.iter().any(|b| b.contains("one thread per pair") && b.contains("steal_thresh"))
            && w.segments.iter().any(|g| g.cause == WaitCause::BalancerRefused)
    });
    assert!(named, "no wait on CPU 0 names the pair rule and steal_thresh");
}

fn example(name: &str) -> String {
    let p = format!("{}/../../examples/workloads/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(p).unwrap()
}

/// Every example under every scheduler: each task's explained wait segments sum to its
/// `wait_ns`, and recording decisions changes no result (the whole record, trace hash
/// included, is identical).
#[test]
fn explained_waits_sum_to_wait_ns_and_recording_changes_nothing() {
    let dir = format!("{}/../../examples/workloads", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    files.sort();
    let mut scheds: Vec<String> = schedlab_policies::REGISTRY.iter().map(|e| e.name.to_string()).collect();
    scheds.extend(["cfs@4.9", "ule@11.1-linux", "eevdf@6.6"].map(String::from));
    for f in &files {
        for s in &scheds {
            // hackbench's 400 tasks explained take seconds: 2 groups here.
            let params = if f == "hackbench.toml" { vec![("groups".to_string(), "2".to_string())] } else { Vec::new() };
            let mut j = RunSpec::load(f, &example(f), None, &params, Some(Ns::from_ms(60))).unwrap();
            j.sched = s.clone();
            let plain = j.run(&mut |_| true).unwrap();
            let (rec, ex) = explain(&j, None);
            assert_eq!(
                schedlab_run::deterministic_json(&plain),
                schedlab_run::deterministic_json(&rec),
                "{f} under {s}: recording changed the result"
            );
            for t in &rec.tasks {
                let e = &ex.tasks[t.tid];
                assert_eq!(e.wait_ns, t.wait_ns, "{f} under {s}: task {}", t.name);
                assert_eq!(e.by_cause.iter().sum::<u64>(), t.wait_ns);
                for w in &e.worst {
                    let seg: u64 = w.segments.iter().map(|g| g.end_ns - g.start_ns).sum();
                    assert_eq!(seg, w.len_ns(), "{f} under {s}: a wait of {} is not tiled", t.name);
                }
            }
        }
    }
}

/// The explanation of a small scenario, as printed.
#[test]
fn snapshot_nice_pair_under_cfs() {
    let mut j = RunSpec::load("nice-pair", &example("nice-pair.toml"), None, &[], Some(Ns::from_ms(40))).unwrap();
    j.set("machine.noise", "none").unwrap();
    j.set("machine.cost_model", "flat").unwrap();
    j.sched = "cfs".into();
    let ask = Ask { task: Some("niced".into()), select: Select::Worst(1), summary: true, json: false, svg: None };
    let (_, ex) = schedlab::explain::run(&j, &ask, &mut |_| true).unwrap();
    insta::assert_snapshot!(render(&ex, &ask).unwrap());
}

#[test]
fn snapshot_fibo_sysbench_under_ule_at() {
    let j = study("ule-cfs-fibo-sysbench", "ule@11.1-linux", Ns::from_ms(7100));
    let ask = Ask {
        task: Some("fibo".into()),
        select: Select::At(Ns::from_ms(7050)),
        summary: false,
        json: false,
        svg: None,
    };
    let (_, ex) = schedlab::explain::run(&j, &ask, &mut |_| true).unwrap();
    insta::assert_snapshot!(render(&ex, &ask).unwrap());
}
