//! Where the time went, in the HTML report and the Perfetto trace: the explained causes of
//! every wait reach both, and explaining changes no result.

mod common;
use common::*;
use schedlab_metrics::explain::WaitCause;
use schedlab_report::perfetto::pid_of;
use schedlab_run::RunSpec;
use schedlab_sim::Ns;

fn nice_pair(secs: u64) -> RunSpec {
    let root = format!("{}/../..", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(format!("{root}/examples/workloads/nice-pair.toml")).unwrap();
    let mut j = RunSpec::load("nice-pair.toml", &text, None, &[], Some(Ns::from_secs(secs))).unwrap();
    j.sched = "cfs".into();
    j.check = true;
    j
}

/// nice-pair under CFS: the niced task waits while nice 0 runs, by fair sharing (its
/// vruntime grows 1024/weight times faster). The report carries the table by cause and the
/// worst waits in words; the record is the one an unexplained run gives.
#[test]
fn html_report_explains_where_the_time_went() {
    let plain = run(&nice_pair(1));
    let mut j = nice_pair(1);
    j.explain = true;
    let r = run(&j);
    assert_eq!(r.trace_hash, plain.trace_hash, "explaining changed the run");
    assert_eq!(serde_json::to_value(&r.tasks).unwrap(), serde_json::to_value(&plain.tasks).unwrap());
    let ex = r.explained.as_deref().expect("explained");
    let niced = ex.tasks.iter().find(|t| t.name == "niced").unwrap();
    assert_eq!(niced.wait_ns, task(&r, "niced").wait_ns);
    assert!(niced.by_cause[WaitCause::FairShare.index()] * 100 >= niced.wait_ns * 90, "{:?}", niced.by_cause);

    let html = schedlab_report::html::report("nice-pair", std::slice::from_ref(&r), &[]).unwrap();
    let at = html.find("Where the time went · cfs").expect("the section");
    let section = &html[at..];
    for want in ["fair_share", "<th title=\"fair share among equals\">fair %</th>", "Worst waits explained"] {
        assert!(section.contains(want), "no {want}");
    }
    // niced's row: its wait in ms, and the fair-share cell a large percentage.
    let row = section.split("<tr><td>niced</td>").nth(1).expect("niced row").split("</tr>").next().unwrap();
    assert!(row.starts_with(&format!("<td>{:.3}</td>", task(&r, "niced").wait_ns as f64 / 1e6)), "{row}");
    // Its worst wait in words: preempted, who ran instead, and the vruntime comparison.
    let worst = section.split("<pre class=\"wait\">niced waited").nth(1).expect("niced's worst wait");
    let worst = worst.split("</pre>").next().unwrap();
    assert!(worst.contains("nice0 ran on CPU 0") && worst.contains("vruntime"), "{worst}");
    // Not explained: no section.
    let html = schedlab_report::html::report("nice-pair", std::slice::from_ref(&plain), &[]).unwrap();
    assert!(!html.contains("Where the time went"));
}

/// The trace carries a slice per wait segment on each task's thread, with the cause, CPU,
/// who ran and why as arguments; read back with Perfetto's own protos, each task's slices
/// sum to its `wait_ns` (segments tile the waits).
#[test]
fn perfetto_wait_slices_carry_the_causes() {
    let mut j = nice_pair(1);
    j.trace = true;
    j.explain = true;
    let r = run(&j);
    let v = decode_with_perfettos_protos(&r);
    for t in &r.tasks {
        let got = v["wait_ns"][pid_of(t.tid).to_string()].as_u64().unwrap_or(0);
        assert_eq!(got, t.wait_ns, "{}", t.name);
    }
    assert!(v["wait_causes"]["fair_share"].as_u64().unwrap_or(0) > 0, "{}", v["wait_causes"]);
    assert_eq!(
        v["wait_args"],
        serde_json::json!(["balance", "cause", "cpu", "ran", "why"]),
        "nice-pair has no wakeups: no wake arguments"
    );
    // Without explaining, the trace has no wait slices.
    j.explain = false;
    let plain = run(&j);
    assert_eq!(plain.trace_hash, r.trace_hash);
    let bytes = schedlab_report::perfetto::encode(&plain).unwrap();
    assert!(bytes.len() < schedlab_report::perfetto::encode(&r).unwrap().len());
}

/// `compare --html` explains each simulated run: the report has a section per scheduler.
#[test]
fn compare_with_html_explains_each_run() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("r.html");
    let root = format!("{}/../..", env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args([
            "compare",
            &format!("{root}/examples/workloads/nice-pair.toml"),
            "--sched",
            "cfs,ule",
            "--duration",
            "1s",
        ])
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.contains("Where the time went · cfs") && text.contains("Where the time went · ule"));
}

/// A woken wait's first slice says who woke it, what it had blocked on and how long the
/// wakeup path took, and ends a flow started on the waker's track at `sched_waking`: read
/// back with Perfetto's own protos, every flow that ends started, none loops back to its
/// own track, and there is one per wait the explainer saw woken by a task.
#[test]
fn perfetto_wakeup_flows_go_from_waker_to_wakee() {
    let root = format!("{}/../..", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(format!("{root}/examples/workloads/hackbench.toml")).unwrap();
    let params = [("groups".to_string(), "1".to_string()), ("loops".to_string(), "5".to_string())];
    let mut j = RunSpec::load("hackbench.toml", &text, None, &params, Some(Ns::from_ms(20))).unwrap();
    j.sched = "eevdf".into();
    j.trace = true;
    j.explain = true;
    let r = run(&j);
    let ex = r.explained.as_ref().expect("explained");
    let by_task = ex.waits.iter().filter(|w| w.wake.as_ref().is_some_and(|k| k.waker.is_some())).count();
    assert!(by_task > 10, "hackbench's receivers are woken by senders: {by_task} task wakeups");
    let v = decode_with_perfettos_protos(&r);
    assert_eq!(v["flows_ended"].as_u64(), Some(by_task as u64), "{v}");
    assert_eq!(v["flows_started"].as_u64(), Some(by_task as u64), "{v}");
    assert_eq!(v["flows_unmatched"].as_u64(), Some(0), "{v}");
    assert_eq!(v["flows_to_self"].as_u64(), Some(0), "{v}");
    let args: Vec<&str> = v["wait_args"].as_array().unwrap().iter().filter_map(|a| a.as_str()).collect();
    for want in ["woken_by", "blocked_on", "wakeup_path_ns", "why", "ran"] {
        assert!(args.contains(&want), "no `{want}` argument: {args:?}");
    }
    let senders = v["woken_by"].as_object().unwrap().keys().filter(|k| k.starts_with("sender")).count();
    assert!(senders > 0, "no wait woken by a sender: {}", v["woken_by"]);
}

/// The run's Perfetto trace read back by `scripts/perfetto_decode.py` with Perfetto's own
/// protos (the test venv's Python), as its JSON summary.
fn decode_with_perfettos_protos(r: &schedlab_metrics::RunRecord) -> serde_json::Value {
    let root = format!("{}/../..", env!("CARGO_MANIFEST_DIR"));
    let python = format!("{root}/target/test-venv/bin/python");
    assert!(std::path::Path::new(&python).exists(), "{python} missing: run scripts/setup-test-deps.sh");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.pftrace");
    std::fs::write(&path, schedlab_report::perfetto::encode(r).unwrap()).unwrap();
    let out = std::process::Command::new(&python)
        .arg(format!("{root}/scripts/perfetto_decode.py"))
        .arg(&path)
        .arg(r.sim_ns.to_string())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}
