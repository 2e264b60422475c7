//! Seeing inside a run: figures, the HTML report, the Perfetto trace and the ASCII
//! timeline agree with the metrics they are drawn from.

mod common;
use common::*;
use prost::Message;
use schedlab_metrics::RunRecord;
use schedlab_report::perfetto::{pid_of, Event, Trace};
use schedlab_run::RunSpec;
use schedlab_sim::Ns;

fn example(name: &str, secs: u64) -> RunSpec {
    let path = format!("{}/../../examples/workloads/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    RunSpec::load(name, &text, None, &[], Some(Ns::from_secs(secs))).unwrap()
}

/// The data summary every figure carries in `<metadata id="schedlab-data">`.
fn meta(svg: &str) -> serde_json::Value {
    let start = svg.find("<metadata id=\"schedlab-data\">").expect("metadata") + 29;
    let end = svg[start..].find("</metadata>").unwrap() + start;
    serde_json::from_str(&svg[start..end].replace("&lt;", "<").replace("&amp;", "&")).unwrap()
}

fn figure(r: &[RunRecord], name: &str) -> String {
    let figs = schedlab_report::plots::figures(r).unwrap();
    figs.into_iter().find(|f| f.name == name).unwrap_or_else(|| panic!("no {name}")).svg
}

const UNPIN8: &str = r#"
[[task]]
name = "hog"
count = 8
affinity = [0]
program = [ { set_affinity = "0-1" }, { loop = "forever", do = [ { run = "10ms" } ] } ]
"#;

/// Threads per core for 8 hogs unpinned on smp2: one series per CPU, summing to 8.
#[test]
fn threads_per_cpu_figure_counts_every_thread() {
    for sched in ["cfs", "ule"] {
        let mut j = job(UNPIN8, "smp2", sched, 3, &[]);
        j.sample = Some(Ns::from_ms(10));
        let r = run(&j);
        let m = meta(&figure(&[r], "threads-per-cpu.svg"));
        let series = m[0]["series"].as_array().unwrap();
        assert_eq!(series.len(), 2, "{sched}");
        let sum: f64 = series.iter().map(|s| s["last"].as_f64().unwrap()).sum();
        assert_eq!(sum, 8.0, "{sched}: {m}");
        assert!(series.iter().all(|s| s["points"].as_u64().unwrap() > 100));
    }
}

/// The cumulative-run-time figure of nice-pair ends at the JSON metrics' run times.
#[test]
fn runtime_figure_ends_at_the_metrics() {
    let mut j = example("nice-pair.toml", 2);
    j.sample = Some(Ns::from_ms(7));
    let r = run(&j);
    let m = meta(&figure(std::slice::from_ref(&r), "runtime.svg"));
    for s in m[0]["series"].as_array().unwrap() {
        let t = task(&r, s["name"].as_str().unwrap());
        // Durations are carried in ns (the axis labels them in µs/ms/s).
        let last_ns = s["last"].as_f64().unwrap();
        assert_eq!(last_ns, t.runtime_ns as f64, "{}", t.name);
    }
    // ULE's penalty figure has one line per thread too.
    let mut j = example("cpu-io-mix.toml", 2);
    j.sched = "ule".into();
    j.sample = Some(Ns::from_ms(10));
    let r = run(&j);
    let m = meta(&figure(std::slice::from_ref(&r), "stat-score.svg"));
    assert_eq!(m[0]["series"].as_array().unwrap().len(), r.tasks.len());
}

/// The HTML report is one self-contained file (no URL at all) that renders in headless
/// Chromium to a page that is not blank.
#[test]
fn html_report_is_self_contained_and_renders() {
    let mut rs = Vec::new();
    for sched in ["cfs", "ule"] {
        let mut j = example("cpu-io-mix.toml", 1);
        j.sched = sched.into();
        j.sample = Some(Ns::from_ms(5));
        rs.push(run(&j));
    }
    let figs = schedlab_report::plots::figures(&rs).unwrap();
    let html = schedlab_report::html::report("cpu-io-mix", &rs, &figs).unwrap();
    assert!(!html.contains("http"), "the report refers to a URL");
    assert!(!html.contains("src=") && !html.contains("<link"), "the report loads an asset");
    assert!(html.contains("<svg") && html.contains("class=\"sortable\""));
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    std::fs::write(&page, &html).unwrap();
    assert_renders_a_page(&page);
}

/// The Perfetto trace decodes with the protobuf definitions into one scheduling slice per
/// switch to a task, per CPU, and the same run time per task as the metrics.
#[test]
fn perfetto_trace_round_trips_to_the_metrics() {
    let mut j = example("hackbench.toml", 1);
    j.workload = std::sync::Arc::new(
        schedlab_workload::parse_workload(
            "hackbench.toml",
            &std::fs::read_to_string(format!("{}/../../examples/workloads/hackbench.toml", env!("CARGO_MANIFEST_DIR")))
                .unwrap(),
            &[("groups".into(), "2".into()), ("loops".into(), "10".into())],
            j.machine.nr_cpus(),
        )
        .unwrap(),
    );
    j.trace = true;
    j.sample = Some(Ns::from_ms(1));
    let r = run(&j);
    let bytes = schedlab_report::perfetto::encode(&r).unwrap();
    let trace = Trace::decode(bytes.as_slice()).unwrap();
    let log = r.trace.as_ref().unwrap();
    let mut want_slices = vec![0usize; log.nr_cpus];
    for e in &log.events {
        if let schedlab_probe::ProbeEvent::Switch { cpu, next: Some(_), .. } = e {
            want_slices[*cpu] += 1;
        }
    }
    let mut slices = vec![0usize; log.nr_cpus];
    let mut run_ns = vec![0u64; r.tasks.len() + 1];
    let mut counters = 0;
    for p in &trace.packet {
        if p.track_event.is_some() {
            counters += 1;
        }
        let Some(b) = &p.ftrace_events else { continue };
        let cpu = b.cpu.unwrap() as usize;
        for e in &b.event {
            if let Some(Event::SchedSwitch(sw)) = &e.event {
                if sw.next_pid.unwrap() != 0 {
                    slices[cpu] += 1;
                }
            }
        }
    }
    assert_eq!(slices, want_slices);
    assert!(counters > 0, "no counter tracks");
    // Run time per pid from the decoded switch events, per CPU in order.
    let mut since: Vec<Option<(u64, i32)>> = vec![None; log.nr_cpus];
    for p in &trace.packet {
        let Some(b) = &p.ftrace_events else { continue };
        let cpu = b.cpu.unwrap() as usize;
        for e in &b.event {
            if let Some(Event::SchedSwitch(sw)) = &e.event {
                let ts = e.timestamp.unwrap();
                if let Some((s, pid)) = since[cpu].take() {
                    run_ns[pid as usize] += ts - s;
                }
                let next = sw.next_pid.unwrap();
                since[cpu] = (next != 0).then_some((ts, next));
            }
        }
    }
    for (cpu, s) in since.iter().enumerate() {
        if let Some((s, pid)) = *s {
            run_ns[pid as usize] += log.end_ns - s;
            let _ = cpu;
        }
    }
    for t in &r.tasks {
        assert_eq!(run_ns[pid_of(t.tid) as usize], t.runtime_ns, "{}", t.name);
    }
}

fn timeline(text: &str, machine: &str, sched: &str, ms: u64, width: usize) -> String {
    let mut j = RunSpec::load("t.toml", text, Some(machine), &[], Some(Ns::from_ms(ms))).unwrap();
    j.sched = sched.into();
    j.trace = true;
    j.check = true;
    // Snapshots: the noiseless machine.
    j.set("machine.noise", "none").unwrap();
    let r = run(&j);
    schedlab_report::timeline::timeline(r.trace.as_ref().unwrap(), 0, Ns::from_ms(ms).0, width)
}

/// Snapshots of the per-CPU timeline for small scenarios (review changes with
/// `cargo insta review`).
#[test]
fn timeline_snapshots() {
    let two_hogs_one_cpu = format!("{}{}", hog("a", 0, 0), hog("b", 0, 0));
    insta::assert_snapshot!("cfs_two_hogs_one_cpu", timeline(&two_hogs_one_cpu, "smp2", "cfs", 60, 60));
    insta::assert_snapshot!("ule_two_hogs_one_cpu", timeline(&two_hogs_one_cpu, "smp2", "ule", 400, 80));
    let sleeper_and_hog = format!("{}{}", hog("hog", 0, 0), sleeper("io", 0, 0, "1ms", "4ms"));
    insta::assert_snapshot!("cfs_sleeper_preempts_hog", timeline(&sleeper_and_hog, "up", "cfs", 30, 60));
    let forked = r#"
[[task]]
name = "main"
program = [ { fork = "w", count = 3 }, "wait" ]
[[task]]
name = "w"
template = true
program = [ { run = "5ms" }, { sleep = "2ms" }, { run = "5ms" } ]
"#;
    insta::assert_snapshot!("fifo_forked_workers_smp2", timeline(forked, "smp2", "fifo", 30, 60));
    insta::assert_snapshot!("ule_forked_workers_smp2", timeline(forked, "smp2", "ule", 30, 60));
}

/// The trace decodes with Perfetto's *own* protobuf definitions (PyPI `perfetto`, set up by
/// `scripts/setup-test-deps.sh`): the hand-declared field numbers agree with the real
/// schema, and the switches, run times and names read back match the metrics.
#[test]
fn perfetto_trace_decodes_with_the_official_schema() {
    let root = format!("{}/../..", env!("CARGO_MANIFEST_DIR"));
    let python = format!("{root}/target/test-venv/bin/python");
    assert!(
        std::path::Path::new(&python).exists(),
        "{python} missing: run scripts/setup-test-deps.sh (part of .ci/run)"
    );
    let mut j = RunSpec::load(
        "hackbench.toml",
        &std::fs::read_to_string(format!("{root}/examples/workloads/hackbench.toml")).unwrap(),
        Some("i7-3770"),
        &[("groups".into(), "2".into()), ("loops".into(), "10".into())],
        Some(Ns::from_secs(1)),
    )
    .unwrap();
    j.trace = true;
    j.sample = Some(Ns::from_ms(1));
    let r = run(&j);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.pftrace");
    std::fs::write(&path, schedlab_report::perfetto::encode(&r).unwrap()).unwrap();
    let out = std::process::Command::new(&python)
        .arg(format!("{root}/scripts/perfetto_decode.py"))
        .arg(&path)
        .arg(r.sim_ns.to_string())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let log = r.trace.as_ref().unwrap();
    let mut want = vec![0u64; log.nr_cpus];
    for e in &log.events {
        if let schedlab_probe::ProbeEvent::Switch { cpu, next: Some(_), .. } = e {
            want[*cpu] += 1;
        }
    }
    for (cpu, n) in want.iter().enumerate() {
        assert_eq!(v["switches"][cpu.to_string()].as_u64().unwrap_or(0), *n, "cpu {cpu}");
    }
    for t in &r.tasks {
        let pid = pid_of(t.tid).to_string();
        assert_eq!(v["run_ns"][&pid].as_u64().unwrap_or(0), t.runtime_ns, "{}", t.name);
        assert_eq!(v["threads"][&pid].as_str().unwrap(), t.name);
    }
    for kind in ["sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new", "task_newtask"] {
        assert!(v["kinds"][kind].as_u64().unwrap_or(0) > 0, "no {kind}: {}", v["kinds"]);
    }
    assert!(v["counter_tracks"].as_array().unwrap().iter().any(|t| t == "cpu0 runnable"));
    assert!(v["counter_values"].as_u64().unwrap() > 0);
}

/// PNG renderings (vendored font, no system fonts) decode, are not blank, and are the same
/// bytes every time.
#[test]
fn png_figures_render_deterministically() {
    let mut j = example("nice-pair.toml", 1);
    j.sample = Some(Ns::from_ms(5));
    let r = run(&j);
    let figs = schedlab_report::plots::figures(std::slice::from_ref(&r)).unwrap();
    let f = figs.iter().find(|f| f.name == "runtime.svg").unwrap();
    assert_eq!(f.png_name(), "runtime.png");
    // At 96 DPI a CSS pixel is a pixel.
    let a = f.png(96).unwrap();
    assert_eq!(a, f.png(96).unwrap());
    let mut reader = png::Decoder::new(std::io::Cursor::new(&a)).read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (640, 480));
    let px = &buf[..info.buffer_size()];
    let bpp = info.color_type.samples();
    let white = px.chunks(bpp).filter(|p| p.iter().take(3).all(|&c| c >= 250)).count();
    assert!(white < px.len() / bpp * 99 / 100, "blank PNG");
    assert!(f.png(23).is_err() && f.png(1201).is_err(), "a resolution outside the limits is refused");
}
