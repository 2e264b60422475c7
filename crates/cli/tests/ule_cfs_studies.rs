//! The rest of the ULE-vs-CFS experiments (Bouron et al., USENIX ATC 2018) as built-in
//! studies: each runs end to end at a small scale (`--param`) under the paper's two
//! schedulers, with invariants checked, and its study text names the paper.

mod common;
use common::*;
use schedlab_metrics::RunRecord;
use schedlab_report::completion;
use schedlab_run::RunSpec;
use schedlab_sim::Ns;

fn study(name: &str, sched: &str, params: &[(&str, &str)], secs: u64) -> RunRecord {
    let text = schedlab_studies::builtin_workload(name).unwrap_or_else(|| panic!("no built-in study {name}"));
    let params: Vec<(String, String)> = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let mut j = RunSpec::load(name, text, None, &params, Some(Ns::from_secs(secs))).unwrap();
    j.sched = sched.into();
    j.sample = Some(Ns::from_ms(10));
    j.check = true;
    run(&j)
}

fn done(r: &RunRecord, g: &str) -> Option<u64> {
    let ts: Vec<_> = r.tasks.iter().filter(|t| schedlab_report::group_of(&t.name) == g).collect();
    assert!(!ts.is_empty(), "no group {g}");
    completion(&ts)
}

const SCHEDS: [&str; 2] = ["cfs@4.9", "ule@11.1-linux"];

/// c-ray: the cascade releases every thread (each is woken by its predecessor), and all
/// compute to the end; the work cannot finish faster than threads × work / CPUs.
#[test]
fn cray_cascade_releases_every_thread() {
    for s in SCHEDS {
        let r = study("ule-cfs-cray", s, &[("threads", "64"), ("work", "20ms")], 2);
        let end = done(&r, "cray").unwrap_or_else(|| panic!("{s}: c-ray did not finish"));
        assert!(end >= 64 * 20_000_000 / 32, "{s}: done at {end} ns, faster than the CPUs allow");
        let woken = r.tasks.iter().filter(|t| t.name.starts_with("cray.") && t.wakeups >= 1).count();
        assert_eq!(woken, 64, "{s}: every thread waits for its turn in the cascade");
    }
}

/// MG: 32 threads, spinning barriers; every iteration completes, and no faster than the
/// iterations' shortest steps allow.
#[test]
fn mg_barrier_run_completes() {
    for s in SCHEDS {
        let r = study("ule-cfs-mg", s, &[("iterations", "8")], 2);
        let end = done(&r, "mg").unwrap_or_else(|| panic!("{s}: MG did not finish"));
        assert!(end >= 8 * 2_000_000, "{s}: done at {end} ns");
    }
}

/// apache + ab on one core: ab's requests are all served (each needs an httpd thread's
/// service time, so the rate is at most one per `service` + `ab_work`), and when ab closes
/// its connections every httpd worker sees the close and exits: the run ends with every
/// task exited, not in a deadlock of workers blocked on connections nobody writes.
#[test]
fn apache_serves_every_request_and_shuts_down() {
    for s in SCHEDS {
        let r = study("ule-cfs-apache", s, &[("requests", "2000")], 5);
        let end = done(&r, "ab").unwrap_or_else(|| panic!("{s}: ab did not finish"));
        assert!(end >= 2000 * 110_000, "{s}: 2000 requests in {end} ns");
        let httpd: Vec<_> = r.tasks.iter().filter(|t| t.name.starts_with("httpd")).collect();
        // Exactly `requests` services of 100 µs, none left in flight.
        let served: u64 = httpd.iter().map(|t| t.runtime_ns).sum();
        assert!((2000 * 100_000..2001 * 100_000 + 2000 * 20_000).contains(&served), "{s}: httpd ran {served} ns");
        assert_eq!(r.end_reason, schedlab_probe::EndReason::AllExited, "{s}: {:?}", r.deadlock);
        // ab closes only after its last response, so no worker exits before all 2000
        // services (100 µs each on the one CPU) ran.
        assert!(r.deadlock.is_empty() && httpd.iter().all(|t| t.exit_ns.is_some_and(|x| x >= 2000 * 100_000)), "{s}");
        let text = schedlab_studies::bouron::study_text("ule-cfs-apache", std::slice::from_ref(&r));
        assert!(!text.contains("deadlock"), "{text}");
    }
}

/// blackscholes + ferret: every blackscholes step ends at the barrier and every query goes
/// through all six ferret stages; the comparison names both applications' completions.
#[test]
fn blackscholes_ferret_runs_both_applications_to_the_end() {
    let params = [("bs_steps", "5"), ("queries", "64"), ("pool", "4")];
    let rs: Vec<RunRecord> = SCHEDS.iter().map(|s| study("ule-cfs-mix-blackscholes-ferret", s, &params, 2)).collect();
    for r in &rs {
        let s = &r.scheduler.name;
        assert_eq!(r.end_reason, schedlab_probe::EndReason::AllExited, "{s}");
        // 5 steps of at least 7.5 ms on 32 threads, and the barrier holds every thread
        // until the slowest arrives.
        assert!(done(r, "blackscholes").is_some_and(|t| t >= 5 * 7_500_000), "{s}");
        // Each pool thread handles queries / pool = 16 items of its stage's work.
        for (stage, work) in [("ferret-seg", 2_000_000), ("ferret-extract", 1_000_000), ("ferret-rank", 4_000_000)] {
            for t in r.tasks.iter().filter(|t| schedlab_report::group_of(&t.name) == stage) {
                assert!(t.runtime_ns >= 16 * work && t.runtime_ns < 17 * work, "{s} {}: {}", t.name, t.runtime_ns);
            }
        }
        let out = r.tasks.iter().find(|t| t.name == "ferret-out").unwrap();
        assert!(out.exit_ns.is_some() && out.wakeups >= 1, "{s}: the last stage waited for the pipeline");
    }
    let c = schedlab_studies::bouron::comparison("ule-cfs-mix-blackscholes-ferret", &rs).unwrap();
    assert!(c.ours.contains("blackscholes done at") && !c.ours.contains("not done"), "{c:?}");
    // The headline figures: completion bars are the applications' last exits.
    let charts = schedlab_studies::bouron::figures("ule-cfs-mix-blackscholes-ferret", &rs);
    let names: Vec<&str> = charts.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["paper-completion.svg", "paper-shares.svg"]);
    let schedlab_report::plots::ChartData::Bars { series, .. } = &charts[0].panels[0].data else { panic!("bars") };
    let ferret: Vec<Option<f64>> = rs
        .iter()
        .map(|r| {
            r.tasks.iter().filter(|t| t.name.starts_with("ferret-")).map(|t| t.exit_ns.unwrap()).max().map(|x| x as f64)
        })
        .collect();
    assert_eq!(series[1], ("ferret".to_string(), ferret));
    for c in charts {
        c.render().unwrap();
    }
}

/// Each study's text puts the paper's finding, ours and a reasoned conclusion first.
#[test]
fn study_text_compares_with_the_paper() {
    let rs: Vec<RunRecord> = SCHEDS.iter().map(|s| study("ule-cfs-apache", s, &[("requests", "500")], 2)).collect();
    let text = schedlab_studies::bouron::study_text("ule-cfs-apache", &rs);
    let at = |l: &str| text.find(l).unwrap_or_else(|| panic!("no {l:?}:\n{text}"));
    assert!(at("finding: ") < at("paper reports: ") && at("we measure: ") < at("conclusion: "), "{text}");
    // Under CFS woken httpd threads preempt ab; in the study's ULE port they never do.
    let c = schedlab_studies::bouron::comparison("ule-cfs-apache", &rs).unwrap();
    let (cfs, ule) = (&rs[0], &rs[1]);
    let preempted = |r: &RunRecord| r.tasks.iter().find(|t| t.name == "ab").unwrap().switches_involuntary;
    assert!(preempted(cfs) > 0 && preempted(ule) == 0, "{text}");
    assert!(c.conclusion.contains(&format!("ab was preempted cfs@4.9 {}", preempted(cfs))), "{c:?}");
}

/// The mixes run both applications to completion; the study text names the paper.
#[test]
fn mixes_run_both_applications() {
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a [&'a str], u64);
    let cases: [Case; 2] = [
        ("ule-cfs-mix-cray-ep", &[("threads", "64"), ("cray_work", "20ms"), ("ep_work", "100ms")], &["cray", "ep"], 2),
        ("ule-cfs-mix-apache-sysbench", &[("requests", "1000"), ("threads", "10")], &["ab", "worker"], 8),
    ];
    for (name, params, groups, secs) in cases {
        let rs: Vec<RunRecord> = SCHEDS.iter().map(|s| study(name, s, params, secs)).collect();
        for r in &rs {
            for g in groups {
                assert!(done(r, g).is_some(), "{name} {}: {g} did not finish", r.scheduler.name);
            }
        }
        let text = schedlab_studies::bouron::study_text(name, &rs);
        assert!(text.contains("Battle of the Schedulers") && text.contains("paper reports: "), "{text}");
    }
}
