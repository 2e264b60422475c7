//! Figures fit for a paper: axis scales and units (the latency CDF on a log time axis, no
//! tick label in raw nanoseconds), one scale across side-by-side panels, the legend right of
//! the data, a per-CPU heat map beyond 8 CPUs, crowded panels highlighting the few, figures
//! without information left out; and the headers saying what was set and checked. Checked
//! on the SVG text and its data summary, not on pixels.

mod common;
use common::*;
use schedlab_metrics::RunRecord;
use schedlab_report::plots::Figure;
use schedlab_sim::Ns;

/// The data summary every figure carries in `<metadata id="schedlab-data">`.
fn meta(svg: &str) -> serde_json::Value {
    let start = svg.find("<metadata id=\"schedlab-data\">").expect("metadata") + 29;
    let end = svg[start..].find("</metadata>").unwrap() + start;
    serde_json::from_str(&svg[start..end].replace("&lt;", "<").replace("&amp;", "&")).unwrap()
}

/// Every `<text>` of an SVG: `(x, y, content)`.
fn texts(svg: &str) -> Vec<(f64, f64, String)> {
    let attr = |tag: &str, name: &str| -> f64 {
        let k = format!(" {name}=\"");
        let i = tag.find(&k).expect("attribute") + k.len();
        tag[i..].split('"').next().unwrap().parse().unwrap()
    };
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find("<text ") {
        let open_end = rest[i..].find('>').unwrap() + i;
        let close = rest[open_end..].find("</text>").unwrap() + open_end;
        let tag = &rest[i..open_end];
        out.push((attr(tag, "x"), attr(tag, "y"), rest[open_end + 1..close].trim().to_string()));
        rest = &rest[close..];
    }
    out
}

fn named<'a>(figs: &'a [Figure], name: &str) -> &'a Figure {
    figs.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("no {name}"))
}

const MIX: &str = r#"
[[task]]
name = "cpu"
program = [ { loop = "forever", do = [ { run = "10ms" } ] } ]
[[task]]
name = "io"
program = [ { loop = "forever", do = [ { run = "300us" }, { sleep = "2ms" } ] } ]
"#;

fn mix(sched: &str, machine: &str) -> RunRecord {
    let mut j = job(MIX, machine, sched, 1, &[]);
    j.sample = Some(Ns::from_ms(5));
    run(&j)
}

/// The latency CDF's time axis is logarithmic (decade ticks equally spaced), its labels are
/// durations with a unit, and the legend sits right of the plot, outside the data.
#[test]
fn the_latency_cdf_has_a_log_time_axis_and_the_legend_outside() {
    let rs = [mix("cfs", "smp2"), mix("ule", "smp2")];
    let figs = schedlab_report::plots::figures(&rs).unwrap();
    let f = named(&figs, "latency-cdf.svg");
    let m = meta(&f.svg);
    assert_eq!(m[0]["x_scale"], "log", "{m}");
    assert_eq!(m[0]["x_unit"], "duration");
    let t = texts(&f.svg);
    // Tick labels of the time axis: the ones ending in a unit, on one baseline.
    let unit = |s: &str| ["ns", "µs", "ms", " s"].iter().any(|u| s.ends_with(u));
    let xs: Vec<&(f64, f64, String)> = t.iter().filter(|(_, _, s)| unit(s)).collect();
    assert!(xs.len() >= 3, "{t:?}");
    // Log scale: a label's x is linear in the log of its value (1, 2, 5, 10, … ticks).
    let ns = |s: &str| {
        let (v, u) = s.split_once(' ').unwrap();
        let k = match u {
            "ns" => 1.0,
            "µs" => 1e3,
            "ms" => 1e6,
            _ => 1e9,
        };
        v.parse::<f64>().unwrap() * k
    };
    let (a, b) = (xs[0], xs[xs.len() - 1]);
    let slope = (b.0 - a.0) / (ns(&b.2).log10() - ns(&a.2).log10());
    assert!(slope > 0.0, "{xs:?}");
    for x in &xs {
        let want = a.0 + slope * (ns(&x.2).log10() - ns(&a.2).log10());
        assert!((x.0 - want).abs() <= 2.0, "{} at x={}, a log axis puts it at {want:.1}: {xs:?}", x.2, x.0);
    }
    let right_of_data = xs.iter().map(|x| x.0).fold(f64::MIN, f64::max);
    for name in ["cfs", "ule"] {
        let (x, _, _) = t.iter().find(|(_, _, s)| s == name).unwrap_or_else(|| panic!("legend {name}: {t:?}"));
        assert!(*x > right_of_data, "legend entry {name} at x={x}, inside the data (last tick at {right_of_data})");
    }
}

/// No tick label of any figure is a raw nanosecond count: durations carry a unit, and a
/// bare number is never ≥ 10 000 (large counts are written with k or M).
#[test]
fn no_tick_label_is_in_raw_nanoseconds() {
    let rs = [mix("cfs", "smp2"), mix("eevdf", "smp2"), mix("ule", "smp2")];
    let figs = schedlab_report::plots::figures_all(&rs).unwrap();
    assert!(figs.iter().any(|f| f.name == "stat-vruntime.svg"));
    for f in &figs {
        for (_, _, s) in texts(&f.svg) {
            if let Ok(v) = s.replace('−', "-").parse::<f64>() {
                assert!(v.abs() < 10_000.0, "{}: bare number {s}", f.name);
            }
        }
        let m = meta(&f.svg);
        if f.name.starts_with("stat-vruntime") || f.name == "runtime.svg" {
            assert_eq!(m[0]["y_unit"], "duration", "{}", f.name);
        }
    }
    // vruntime grows to about a second in this run: its ticks are in ms or s.
    let v = texts(&named(&figs, "stat-vruntime.svg").svg);
    assert!(v.iter().any(|(_, _, s)| s.ends_with(" ms") || s.ends_with(" s")), "{v:?}");
}

/// A statistic's unit and title come from the policy's `Stat` (carried in the series),
/// not from the scheduler's name: CFS's slice (ns) and ULE's (stat ticks) get a figure each,
/// whatever the runs are called.
#[test]
fn stat_units_and_captions_come_from_the_policy() {
    let mut rs = [mix("cfs", "smp2"), mix("ule", "smp2")];
    let s = rs[1].series.as_ref().unwrap();
    let k = s.stat_names.iter().position(|n| n == "slice").unwrap();
    assert_eq!((s.stat_units[k].as_str(), s.stat_names.len()), ("stat ticks", s.stat_captions.len()));
    // Swapped names: a report that chose units by name would now draw CFS's slice in ticks.
    (rs[0].scheduler.name, rs[1].scheduler.name) = ("ule".into(), "cfs".into());
    let figs = schedlab_report::plots::figures_all(&rs).unwrap();
    let ns = meta(&named(&figs, "stat-slice.svg").svg);
    let ticks = meta(&named(&figs, "stat-slice-ticks.svg").svg);
    // The CFS run (now called `ule`) in ns, the ULE run (now `cfs`) in stat ticks.
    assert_eq!(ns.as_array().unwrap().len(), 1);
    assert_eq!((ns[0]["scheduler"].as_str(), ns[0]["y_unit"].as_str()), (Some("ule"), Some("duration")));
    assert_eq!(ticks.as_array().unwrap().len(), 1);
    assert_eq!((ticks[0]["scheduler"].as_str(), ticks[0]["y_unit"].as_str()), (Some("cfs"), Some("plain")));
    let score = texts(&named(&figs, "stat-score.svg").svg);
    assert!(score.iter().any(|(_, _, t)| t.contains("Interactivity penalty")), "{score:?}");
}

/// Side-by-side panels share one x and one y range, though the runs differ.
#[test]
fn side_by_side_panels_share_one_scale() {
    let rs = [mix("cfs", "up"), mix("ule", "up")];
    let figs = schedlab_report::plots::figures(&rs).unwrap();
    for f in &figs {
        let m = meta(&f.svg);
        let panels = m.as_array().unwrap();
        for p in panels {
            assert_eq!(p["y_range"], panels[0]["y_range"], "{}", f.name);
            assert_eq!(p["x_range"], panels[0]["x_range"], "{}", f.name);
        }
    }
    let m = meta(&named(&figs, "runtime.svg").svg);
    let last = |p: usize, name: &str| {
        m[p]["series"].as_array().unwrap().iter().find(|s| s["name"] == name).unwrap()["last"].as_f64().unwrap()
    };
    assert_ne!(last(0, "io"), last(1, "io"), "the runs differ, the scale does not");
}

/// Up to 8 CPUs threads per CPU is one line per CPU; beyond, a heat map with one row per CPU.
#[test]
fn threads_per_cpu_is_a_heat_map_beyond_8_cpus() {
    let hogs = unpinned_hogs(24, "0-15");
    let mut j = job(&hogs, "opteron-32", "cfs", 2, &[]);
    j.end = Ns::from_ms(1100);
    j.sample = Some(Ns::from_ms(10));
    let r = run(&j);
    let figs = schedlab_report::plots::figures(std::slice::from_ref(&r)).unwrap();
    let m = meta(&named(&figs, "threads-per-cpu.svg").svg);
    assert_eq!(m[0]["kind"], "heatmap", "{m}");
    assert_eq!(m[0]["series"].as_array().unwrap().len(), 32);
    let small = schedlab_report::plots::figures(&[mix("cfs", "smp8")]).unwrap();
    assert_eq!(meta(&named(&small, "threads-per-cpu.svg").svg)[0]["kind"], "lines");
}

/// 1 fibo among 20 workers: the legend names fibo (highlighted) and the workers once as a
/// group of 20.
#[test]
fn crowded_panels_group_the_many_and_name_the_few() {
    let text = r#"
[[task]]
name = "fibo"
program = [ { loop = "forever", do = [ { run = "10ms" } ] } ]
[[task]]
name = "worker"
count = 20
program = [ { loop = "forever", do = [ { run = "200us" }, { sleep = "3ms" } ] } ]
"#;
    let mut j = job(text, "up", "cfs", 1, &[]);
    j.end = Ns::from_ms(300);
    j.sample = Some(Ns::from_ms(5));
    let r = run(&j);
    let figs = schedlab_report::plots::figures(std::slice::from_ref(&r)).unwrap();
    let t: Vec<String> = texts(&named(&figs, "runtime.svg").svg).into_iter().map(|x| x.2).collect();
    assert!(t.iter().any(|s| s == "fibo"), "{t:?}");
    assert!(t.iter().any(|s| s == "worker (×20)"), "{t:?}");
    assert!(!t.iter().any(|s| s == "worker.3"), "{t:?}");
}

/// On one CPU no runqueue lock is ever contended: that all-zero figure is left out by
/// default and kept on request.
#[test]
fn figures_without_information_are_left_out() {
    let rs = [mix("cfs", "up")];
    let all = schedlab_report::plots::figures_all(&rs).unwrap();
    let f = named(&all, "rq-lock-contention.svg");
    assert!(!f.informative());
    let some = schedlab_report::plots::figures(&rs).unwrap();
    assert!(some.iter().all(|f| f.name != "rq-lock-contention.svg"));
    assert!(some.iter().any(|f| f.name == "runtime.svg") && some.len() < all.len());
}

/// `--set` overrides, kernel switches and `--check` are echoed in the text header.
#[test]
fn headers_echo_sets_switches_and_checks() {
    let mut j = job(MIX, "smp2", "cfs", 1, &[("sched_wakeup_granularity_ns", "2ms")]);
    j.end = Ns::from_ms(50);
    j.kernel.version = schedlab_run::KernelVersion::V3_4;
    let r = run(&j);
    let head: String = schedlab_report::text(&r).lines().take(3).collect::<Vec<_>>().join("\n");
    assert!(head.contains("set sched_wakeup_granularity_ns=2ms"), "{head}");
    assert!(head.contains("kernel 3.4"), "{head}");
    assert!(head.contains("invariants checked after every event"), "{head}");
    let cmp = schedlab_report::compare_text(std::slice::from_ref(&r));
    assert!(cmp.contains("set sched_wakeup_granularity_ns=2ms"), "{cmp}");
    let mut j = job(MIX, "smp2", "cfs", 1, &[]);
    j.end = Ns::from_ms(50);
    j.check = false;
    let plain = schedlab_report::text(&run(&j));
    assert!(!plain.contains("invariants checked") && !plain.contains(" set "), "{plain}");
    assert!(plain.contains("run %: "), "the run % column is defined:\n{plain}");
}

/// A study's HTML report starts with its finding: the paper, the conclusion and the table
/// come before the run parameters.
#[test]
fn a_study_report_shows_its_finding_first() {
    let rs = [mix("cfs", "up"), mix("ule", "up")];
    let figs = schedlab_report::plots::figures(&rs).unwrap();
    let text = schedlab_report::study_text_with("mix", Some("A. Author: \"A Paper\""), &rs);
    let conclusion = schedlab_report::study_conclusion(&rs);
    let section = schedlab_report::html::StudySection {
        paper: Some("A. Author: \"A Paper\""),
        conclusion: conclusion.as_deref(),
        table: &text,
        figures: &[],
    };
    let conclusion = section.conclusion.unwrap().to_string();
    assert!(conclusion.contains("cpu's CPU share while the task groups overlap"), "{conclusion}");
    let html = schedlab_report::html::report_study("mix", &rs, &figs, &section).unwrap();
    let at = |s: &str| html.find(s).unwrap_or_else(|| panic!("no {s}"));
    assert!(at("Finding:") < at("Run parameters") && at("A Paper") < at("Run parameters"));
    let line = |p: &str| text.lines().position(|l| l.starts_with(p)).unwrap_or_else(|| panic!("no {p}:\n{text}"));
    assert!(line("paper: ") < line("finding: ") && line("finding: ") < line("----"), "{text}");
}

fn schedlab(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .unwrap()
}

/// `--sample` with text output is warned about (the series go only into JSON, figures and
/// HTML); `--check` says that it checked; a study's text starts with its finding; the study
/// writes its figures.
#[test]
fn the_command_line_warns_checks_and_finds() {
    let out =
        schedlab(&["run", "examples/workloads/four-hogs.toml", "--duration", "20ms", "--sample", "1ms", "--check"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("warning: --sample"), "{err}");
    assert!(err.contains("invariants checked after every event"), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().nth(1).is_some_and(|l| l.contains("invariants checked")), "{text}");
    let out = schedlab(&[
        "run",
        "examples/workloads/four-hogs.toml",
        "--duration",
        "20ms",
        "--sample",
        "1ms",
        "--format",
        "json",
    ]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("warning"), "JSON carries the series");
    let dir = tempfile::tempdir().unwrap();
    let plots = dir.path().join("figs");
    let out = schedlab(&[
        "study",
        "lock-sites",
        "--param",
        "groups=1",
        "--param",
        "loops=2",
        "--plots",
        plots.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.lines().nth(1).is_some_and(|l| l.starts_with("paper: Zhang, Gu, Su")), "{text}");
    assert!(text.lines().nth(2).is_some_and(|l| l.starts_with("finding: 2 CPUs: acquisitions")), "{text}");
    // The study's own subdirectory: several studies can share one --plots directory.
    let own = plots.join("lock-sites");
    for f in ["acquisitions.svg", "contended.svg", "spin.svg"] {
        assert!(own.join(f).exists(), "{f}");
    }
    assert!(own.join("2-cpus").is_dir());
    assert_eq!(std::fs::read_dir(&plots).unwrap().count(), 1, "nothing else in --plots");
}

/// Every figure kind — a run's figures (all of them, also the uninformative), a study's
/// charts (lines over a swept parameter, grouped bars) and the ULE-vs-CFS paper's — keeps
/// every text on its canvas and off every other text (laid out in the vendored font, as PNG and PDF render it),
/// draws each line series with two points or more, and renders as a 300-DPI PNG of the
/// SVG's size and as a PDF.
#[test]
fn no_text_leaves_the_canvas_and_every_figure_renders() {
    let runs = [mix("cfs", "smp8"), mix("ule", "smp8")];
    let mut figs = schedlab_report::plots::figures_all(&runs).unwrap();
    let study = schedlab_studies::suites::suite("cfs-eevdf").unwrap();
    let opts = schedlab_studies::suite::RunOpts { duration: Some(Ns::from_ms(60)), ..Default::default() };
    let results = study.run_seeds(&[1], &opts, &|| true).unwrap().remove(0);
    figs.extend(schedlab_studies::suites::figures(study.name, &results).into_iter().map(|c| c.render().unwrap()));
    let lock = schedlab_studies::suites::suite("lock-sites").unwrap().with_params(&[("groups".into(), "2".into())]);
    let results = lock.run_seeds(&[1], &opts, &|| true).unwrap().remove(0);
    figs.extend(schedlab_studies::suites::figures(lock.name, &results).into_iter().map(|c| c.render().unwrap()));
    figs.extend(schedlab_studies::bouron::figures("ule-cfs-cray", &runs).into_iter().map(|c| c.render().unwrap()));
    assert!(figs.len() >= 12, "{} figures", figs.len());
    for f in &figs {
        let faults = f.layout_faults().unwrap();
        assert!(faults.is_empty(), "{}: {faults:#?}", f.name);
        for panel in meta(&f.svg).as_array().unwrap() {
            if panel["kind"] == "lines" {
                for s in panel["series"].as_array().unwrap() {
                    assert!(s["points"].as_u64().unwrap() >= 2, "{}: {s}", f.name);
                }
            }
        }
        let png = f.png(300).unwrap();
        let info = png::Decoder::new(std::io::Cursor::new(&png)).read_info().unwrap().info().clone();
        let w: f64 = f.svg.split("width=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        assert_eq!(info.width, (w * 300.0 / 96.0).round() as u32, "{}: 300 DPI of {w} CSS pixels", f.name);
        assert!(f.pdf().unwrap().starts_with(b"%PDF-"), "{}", f.name);
    }
}
