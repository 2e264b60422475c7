//! The study contract end to end: every registered study runs (briefly, two seeds) and
//! answers each of its claims with a verdict and a mechanism read from its runs; flipping a
//! switch in the runs changes the mechanism; an effect inside the noise band is "no effect".

use schedlab_sim::Ns;
use schedlab_studies::contract::{judge_all, seeds, Verdict};
use schedlab_studies::runs::plan;
use schedlab_studies::suite::RunOpts;

/// Short runs: what is checked is that the contract is filled from the runs, not the
/// sources' numbers (those need the default scale: `schedlab reproduce`).
const SHORT: RunOpts =
    RunOpts { duration: Some(Ns::from_ms(30)), sample: Some(Ns::from_ms(10)), explain: true, full: false };

#[test]
fn every_study_answers_every_claim_from_its_runs() {
    for study in schedlab_studies::STUDIES {
        // edf-simso's runs must cover its longest period (100 ms).
        let opts = match study.kind {
            schedlab_studies::Kind::EdfSimso => RunOpts { duration: Some(Ns::from_ms(200)), ..SHORT },
            _ => SHORT,
        };
        // The runqueue-lock studies fork up to 200 hackbench groups a run: two here.
        let params: Vec<(String, String)> = if matches!(study.name, "lock-delayed-wakeup" | "lock-sites") {
            vec![("groups".into(), "2".into())]
        } else {
            Vec::new()
        };
        let r = plan(study, &seeds(1, 2), &opts, &params).unwrap().run(&|| true, &|| ()).unwrap();
        assert_eq!(r.runs.len(), 2, "{}: one set of runs per seed", study.name);
        assert_eq!(r.outcomes.len(), study.claims.len(), "{}", study.name);
        let text = r.text();
        for o in &r.outcomes {
            assert!(!o.mechanism.trim().is_empty(), "{} {}: no mechanism", study.name, o.claim.id);
            assert!(!o.mechanism.contains("no experiment that measures it"), "{} {}", study.name, o.claim.id);
            assert!(text.contains(&o.mechanism) && text.contains(o.claim.location), "{}", study.name);
            if let Some(e) = &o.ours {
                assert!(e.samples.len() <= 2 && e.half >= 0.0, "{} {}: {e:?}", study.name, o.claim.id);
            }
        }
        for part in ["claim ", "  ours: ", "  verdict: ", "  why: "] {
            assert!(text.contains(part), "{}: the contract text lacks `{part}`:\n{text}", study.name);
        }
    }
}

/// A study marked `explained` has mechanisms that quote the decision records (they change
/// when the runs are explained); every other study's read only counters (explaining its runs
/// changes nothing), so running it unexplained loses nothing.
#[test]
fn the_explained_mark_says_which_mechanisms_read_the_decision_records() {
    for study in schedlab_studies::STUDIES.iter().filter(|s| !matches!(s.kind, schedlab_studies::Kind::EdfSimso)) {
        let params: Vec<(String, String)> = if matches!(study.name, "lock-delayed-wakeup" | "lock-sites") {
            vec![("groups".into(), "2".into())]
        } else {
            Vec::new()
        };
        let mechanisms = |explain: bool| {
            let opts = RunOpts { explain, ..SHORT };
            let r = plan(study, &seeds(1, 1), &opts, &params).unwrap().run(&|| true, &|| ()).unwrap();
            r.outcomes.iter().map(|o| o.mechanism.clone()).collect::<Vec<_>>()
        };
        let (plain, explained) = (mechanisms(false), mechanisms(true));
        if study.explained {
            assert_ne!(
                plain, explained,
                "{}: marked explained, but its mechanisms read no decision record",
                study.name
            );
        } else {
            assert_eq!(plain, explained, "{}: its mechanisms read decision records: mark it explained", study.name);
        }
    }
}

/// The mechanism is the run's: the same claim judged on runs with the base slice set to
/// 7 ms for every EEVDF configuration names other switch counts (and the verdict turns).
#[test]
fn a_flipped_switch_changes_the_mechanism() {
    let study = schedlab_studies::find("cfs-eevdf").unwrap();
    let opts = RunOpts { duration: Some(Ns::from_ms(400)), ..RunOpts::default() };
    let judge = |flip: bool| {
        let mut suite = study.suite().unwrap();
        if flip {
            for c in &mut suite.experiments[0].configs {
                c.sets.push(("base_slice_ns".into(), "7ms".into()));
            }
            // cfs has no base_slice_ns: keep the EEVDF columns only.
            suite.experiments[0].configs.retain(|c| c.sched.starts_with("eevdf"));
        }
        let runs = suite.run_seeds(&[1], &opts, &|| true).unwrap();
        judge_all(study.claims, &(study.evidence)(&runs))
    };
    let (base, flipped) = (judge(false), judge(true));
    let claim = |os: &[schedlab_studies::contract::Outcome]| {
        os.iter()
            .find(|o| o.claim.id == "longer-slice-fewer-preemptions")
            .map(|o| (o.mechanism.clone(), o.verdict))
            .unwrap()
    };
    let ((m0, v0), (m1, v1)) = (claim(&base), claim(&flipped));
    assert_ne!(m0, m1, "the mechanism did not follow the runs");
    assert_eq!(v0, Verdict::Agree, "{m0}");
    // Every column at 7 ms: the custom 7 ms slice changes nothing, ratio 1.
    assert_eq!(v1, Verdict::Differ, "{m1}");
}

/// Without noise the seeds give the same runs, so the interval is zero wide; a claimed
/// effect that the runs do not show (VIP's waits over 100 ms: none either way) is then
/// "no effect", not a difference.
#[test]
fn a_difference_inside_the_interval_is_no_effect() {
    let study = schedlab_studies::find("futex").unwrap();
    let opts = RunOpts { duration: Some(Ns::from_ms(300)), ..RunOpts::default() };
    let r = plan(study, &seeds(1, 3), &opts, &[]).unwrap().run(&|| true, &|| ()).unwrap();
    let o = r.outcomes.iter().find(|o| o.claim.id == "vip-removes-waits-over-100ms").unwrap();
    let e = o.ours.as_ref().expect("measured");
    assert!(e.lo() <= 0.0 && e.hi() >= 0.0, "{e:?}");
    assert_eq!(o.verdict, Verdict::NoEffect, "{}", o.mechanism);
    assert!(r.text().contains("verdict: no effect"), "{}", r.text());
}

/// A study scaled down by default says so in its text, and its source's set-up names real
/// experiments and parameters: `--full` plans runs with them (and no longer says scaled).
#[test]
fn a_scaled_study_says_so_and_full_runs_the_source_set_up() {
    let mut scaled = 0;
    for study in schedlab_studies::STUDIES {
        let Some(suite) = study.suite() else { continue };
        let Some(sc) = suite.scaled else { continue };
        scaled += 1;
        assert!(study.scale_note(false).unwrap().contains(sc.reason), "{}", study.name);
        let names: Vec<&str> = suite.experiments.iter().map(|x| x.name).collect();
        for (x, _, _) in sc.full {
            assert!(names.contains(x), "{}: no experiment {x}", study.name);
        }
        let full = suite.at_source_scale();
        assert!(full.scaled.is_none());
        for (x, k, v) in sc.full {
            let exp = full.experiments.iter().find(|e| e.name == *x).unwrap();
            assert!(exp.configs.iter().all(|c| c.params.last().is_some_and(|(pk, pv)| pk == k && pv == v)));
        }
        let opts = RunOpts { duration: Some(Ns::from_ms(1)), full: true, ..RunOpts::default() };
        let p = plan(study, &seeds(1, 1), &opts, &[]).unwrap();
        let text = |v: &schedlab_workload::ParamValue| match v {
            schedlab_workload::ParamValue::Int(n) => n.to_string(),
            schedlab_workload::ParamValue::Text(t) => t.clone(),
        };
        let carries = |k: &str, v: &str| {
            p.specs.iter().any(|s| s.workload.params.iter().any(|(pk, pv)| pk == k && text(pv) == v))
        };
        assert!(
            sc.full.iter().all(|(_, k, v)| carries(k, v)),
            "{}: the planned runs do not carry the source's set-up",
            study.name
        );
    }
    assert!(scaled >= 2, "lock-delayed-wakeup and lock-wakeup-granularity are scaled down");
}
