//! The `lock-delayed-wakeup` and `lock-sites` studies run end to end at a small scale and
//! show what the locking model predicts.

mod figs;
use schedlab_studies::suite::ExperimentResult;

fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn row(r: &ExperimentResult, metric: &str, text: &str) -> Vec<String> {
    r.rows.iter().find(|(n, _)| n == metric).unwrap_or_else(|| panic!("{metric}:\n{text}")).1.clone()
}

fn num(v: &str, text: &str) -> f64 {
    v.parse().unwrap_or_else(|_| panic!("{v}:\n{text}"))
}

/// With the delayed wakeup, `wake_up_new_task` only trylocks: it never spins on a runqueue
/// lock. Every hackbench runs to completion on both machines, and `--param` reaches every run.
#[test]
fn the_delayed_wakeup_study_runs_and_the_delayed_fork_never_spins() {
    let mut suite = schedlab_studies::suites::suite("lock-delayed-wakeup").unwrap();
    for x in &mut suite.experiments {
        x.configs.truncate(4); // 20 and 40 groups, without and with
    }
    let suite = suite.with_params(&kv(&[("groups", "3"), ("loops", "2")]));
    let results = suite.run(1, None, None).unwrap();
    let text = schedlab_studies::suite::suite_text(&suite, &results);
    assert_eq!(results.len(), 2, "one table per machine");
    for r in &results {
        assert_eq!(r.labels, ["20", "20 dw", "40", "40 dw"], "{text}");
        let cpus: Vec<usize> = r.records.iter().map(|rec| rec.cpus.len()).collect();
        assert!(cpus.iter().all(|&n| n == if r.name == "8-cpus" { 8 } else { 4 }), "{cpus:?}");
        for rec in &r.records {
            // main + 3 groups of 20 receivers and 20 senders, every one exited.
            assert_eq!(rec.tasks.len(), 1 + 3 * 40, "--param groups=3 applied:\n{text}");
            assert!(rec.tasks.iter().all(|t| t.exit_ns.is_some()), "{text}");
            assert_eq!(rec.kernel.version.as_deref(), Some("3.4"));
        }
        let spin = row(r, "wake_up_new_task spin us", &text);
        let gain = row(r, "gain %", &text);
        for (i, rec) in r.records.iter().enumerate() {
            if rec.kernel.delayed_wakeup == Some(true) {
                assert_eq!(num(&spin[i], &text), 0.0, "a trylock never spins:\n{text}");
                num(&gain[i], &text);
            } else {
                assert_eq!(gain[i], "-", "{text}");
            }
        }
        assert!(row(r, "completion ms", &text).iter().all(|c| num(c, &text) > 0.0), "{text}");
    }
    // The paper's figure: completion against groups without and with, one panel per CPU
    // count on one scale; the gain per CPU count; contention per call site.
    let f = figs::figures("lock-delayed-wakeup", &results);
    let m = figs::meta(&figs::named(&f, "completion.svg").svg);
    assert_eq!(figs::panels(&m), ["8 CPUs", "4 CPUs"]);
    assert_eq!(figs::series(&m, 0), ["without", "delayed wakeup"]);
    assert_eq!(m[0]["y_unit"], "duration");
    assert_eq!(m[0]["y_range"], m[1]["y_range"], "one scale");
    // --param groups=3 reached every run: that is where the points are.
    assert_eq!(m[0]["series"][0]["points"], 2);
    assert!(figs::has_text(&figs::named(&f, "completion.svg").svg, "hackbench groups"));
    let g = figs::meta(&figs::named(&f, "gain.svg").svg);
    assert_eq!(figs::series(&g, 0), ["8 CPUs", "4 CPUs"]);
    assert_eq!(g[0]["y_unit"], "percent");
    let c = figs::named(&f, "contention.svg");
    for site in ["schedule", "load_balance", "try_to_wake_up", "wake_up_new_task"] {
        assert!(figs::has_text(&c.svg, site), "{site}");
    }
    let finding = schedlab_studies::suites::finding("lock-delayed-wakeup", &results).unwrap();
    assert!(finding.paper.contains("Zhang, Gu, Su") && finding.conclusion.contains("8 CPUs: mean gain"), "{finding:?}");
    assert!(text.contains(&finding.conclusion), "the finding is in the text:\n{text}");
}

/// 2.6.32's `try_to_wake_up` locks the wakee's old runqueue and then the target, where 3.4
/// locks only the target (one LLC: no wake list): for the same workload it takes more
/// `try_to_wake_up` acquisitions. 5.15 queues some remote wakeups to the wake list instead
/// (`sched_ttwu_pending`), which the older kernels never do.
#[test]
fn the_lock_sites_study_runs_and_2_6_32_takes_more_wakeup_locks_than_3_4() {
    let mut suite = schedlab_studies::suites::suite("lock-sites").unwrap();
    suite.experiments.truncate(2); // 2 and 4 CPUs
    let suite = suite.with_params(&kv(&[("groups", "2"), ("loops", "5")]));
    let results = suite.run(1, None, None).unwrap();
    let text = schedlab_studies::suite::suite_text(&suite, &results);
    for r in &results {
        assert_eq!(r.labels, ["2.6.32", "3.4", "5.15"], "{text}");
        assert!(r.records.iter().all(|rec| rec.tasks.iter().all(|t| t.exit_ns.is_some())), "{text}");
        let ttwu: Vec<f64> = row(r, "try_to_wake_up acquisitions", &text).iter().map(|v| num(v, &text)).collect();
        assert!(ttwu[0] > ttwu[1], "2.6.32 locks twice per wakeup:\n{text}");
        let pending: Vec<f64> =
            row(r, "sched_ttwu_pending acquisitions", &text).iter().map(|v| num(v, &text)).collect();
        assert_eq!(pending[..2], [0.0, 0.0], "no wake list on one LLC before 5.15:\n{text}");
        assert!(row(r, "schedule acquisitions", &text).iter().all(|v| num(v, &text) > 0.0), "{text}");
    }
    // The paper's figure: per call site, one bar per kernel version, one panel per CPU count.
    let f = figs::figures("lock-sites", &results);
    for (name, unit) in [("acquisitions.svg", "plain"), ("contended.svg", "plain"), ("spin.svg", "duration")] {
        let fig = figs::named(&f, name);
        let m = figs::meta(&fig.svg);
        assert_eq!(figs::panels(&m), ["2 CPUs", "4 CPUs"], "{name}");
        assert_eq!(m[0]["kind"], "bars");
        assert_eq!(figs::series(&m, 1), ["kernel 2.6.32", "kernel 3.4", "kernel 5.15"], "{name}");
        assert_eq!(m[0]["y_unit"], unit, "{name}");
        assert_eq!(m[0]["y_range"], m[1]["y_range"], "{name}: one scale");
        assert!(figs::has_text(&fig.svg, "try_to_wake_up") && figs::has_text(&fig.svg, "wake_up_new_task"));
    }
    // Bars in the acquisitions figure are the table's numbers (the last site's, 5.15).
    let m = figs::meta(&figs::named(&f, "acquisitions.svg").svg);
    let want = num(&row(&results[0], "wake_up_new_task acquisitions", &text)[2], &text);
    assert_eq!(m[0]["series"][2]["last"].as_f64().unwrap(), want);
}
