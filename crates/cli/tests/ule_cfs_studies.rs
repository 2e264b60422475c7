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
    let text = schedlab_run::builtin_study(name).unwrap_or_else(|| panic!("no built-in study {name}"));
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
/// service time, so the rate is at most one per `service` + `ab_work`).
#[test]
fn apache_serves_every_request() {
    for s in SCHEDS {
        let r = study("ule-cfs-apache", s, &[("requests", "2000")], 5);
        let end = done(&r, "ab").unwrap_or_else(|| panic!("{s}: ab did not finish"));
        assert!(end >= 2000 * 110_000, "{s}: 2000 requests in {end} ns");
        let served: u64 = r.tasks.iter().filter(|t| t.name.starts_with("httpd")).map(|t| t.wakeups).sum();
        assert!(served >= 2000, "{s}: httpd woke {served} times");
    }
}

/// The mixes run both applications to completion; the study text names the paper.
#[test]
fn mixes_run_both_applications() {
    let cases: [(&str, &[(&str, &str)], &[&str], u64); 2] = [
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
        let text = schedlab_report::study_text_with(name, schedlab_run::study_paper(name), &rs);
        assert!(text.contains("Battle of the Schedulers"), "{text}");
    }
}
