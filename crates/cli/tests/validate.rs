//! `schedlab study validate` end to end: every case at the tiny scale in the simulator
//! (deterministic), and one short host run (≤ 2 s) checked only for robust properties —
//! real runs are noisy, so nothing here depends on how close the numbers are.

use std::process::Command;

fn schedlab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab")).args(args).output().expect("schedlab runs")
}

/// The Markdown table's data rows, as cells.
fn rows(md: &str) -> Vec<Vec<String>> {
    md.lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| experiment"))
        .map(|l| l.trim_matches('|').split(" | ").map(|c| c.trim().to_string()).collect())
        .collect()
}

const CASES: usize = 30;

#[test]
fn every_case_runs_in_the_simulator_with_its_table_json_and_figures() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let figs = dir.path().join("figs");
    let args = [
        "study",
        "validate",
        "--tiny",
        "--sim-only",
        "--machine",
        "smp2",
        "--sched",
        "eevdf@6.18",
        "--out",
        out.to_str().unwrap(),
        "--plots",
        figs.to_str().unwrap(),
    ];
    let o = schedlab(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(out.join("validate.md")).unwrap();
    let rows = rows(&md);
    let cases: std::collections::BTreeSet<(String, String)> =
        rows.iter().map(|r| (r[0].clone(), r[1].clone())).collect();
    assert_eq!(cases.len(), CASES, "{md}");
    for exp in ["nice-pairs", "four-hogs", "cpu-io", "messaging", "pingpong", "eight-hogs", "timer"] {
        assert!(cases.iter().any(|(e, _)| e == exp), "no {exp} in\n{md}");
    }
    for r in &rows {
        assert_eq!(r.len(), 9, "{r:?}");
        assert_eq!(r[4], "-", "no host value without host runs: {r:?}");
        assert!(["not measured", "context"].contains(&r[7].as_str()), "no verdict without host runs: {r:?}");
    }
    // Every judged metric of the simulation has a value, except where the tiny runs end
    // before a task does.
    let judged_with_value = rows.iter().filter(|r| r[6] != "-" && r[3] != "-").count();
    assert!(judged_with_value * 10 >= rows.iter().filter(|r| r[6] != "-").count() * 9, "{md}");
    let jsons = std::fs::read_dir(&out).unwrap().filter(|e| e.as_ref().unwrap().path().extension().unwrap() == "json");
    assert_eq!(jsons.count(), CASES, "one simulated run per case");
    let figs = figs.join("validate");
    let fig_dirs = std::fs::read_dir(&figs).unwrap().count();
    assert_eq!(fig_dirs, CASES, "figures per case");
    assert!(figs.join("nice-pairs-0-vs-19").join("runtime.svg").exists());
    // Deterministic: the same table again.
    let o2 = schedlab(&args);
    assert!(o2.status.success());
    assert_eq!(std::fs::read_to_string(out.join("validate.md")).unwrap(), md);
}

#[test]
fn an_unknown_case_filter_lists_the_cases() {
    let o = schedlab(&["study", "validate", "--tiny", "--sim-only", "--machine", "smp2", "--only", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("nice-pairs/0-vs-19") && err.contains("pingpong/unpinned"), "{err}");
}

/// One real case (a nice-0 pair sharing CPU 0 for 40 ms): the table has every row of it,
/// each judged metric has a finite relative error, and the session's autogroup nice is
/// back afterwards.
#[test]
fn one_host_case_gives_every_row_with_finite_errors() {
    assert!(nix::unistd::geteuid().is_root(), "host runs need root (tracefs); CI runs them as root");
    let before = std::fs::read_to_string("/proc/self/autogroup").ok();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = schedlab(&[
        "study",
        "validate",
        "--tiny",
        "--machine",
        "host",
        "--only",
        "nice-pairs/0-vs-0",
        "--repetitions",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(out.join("validate.md")).unwrap();
    let rows = rows(&md);
    let metrics: Vec<&str> = rows.iter().map(|r| r[2].as_str()).collect();
    for m in ["a (nice 0) share % while both run", "a turnaround ms", "b turnaround ms", "switches among run tasks"] {
        assert!(metrics.contains(&m), "no row {m} in\n{md}");
    }
    for r in rows.iter().filter(|r| r[6] != "-") {
        let e: f64 = r[5].trim_end_matches('%').parse().unwrap_or_else(|_| panic!("no relative error: {r:?}\n{md}"));
        assert!(e.is_finite(), "{r:?}");
        assert!(["ok", "GAP"].contains(&r[7].as_str()), "a judged row has a verdict: {r:?}");
        assert_eq!(r[8].is_empty(), r[7] == "ok", "a gap, and only a gap, names its cause: {r:?}");
    }
    assert!(out.join("nice-pairs-0-vs-0.host.json").exists());
    // The child's session is ours: its autogroup nice was raised and restored.
    assert_eq!(std::fs::read_to_string("/proc/self/autogroup").ok(), before);
}
