//! Decision records beyond ULE (issue 15): the fair class's and O(1)'s balancer attempts
//! and every class's placements appear in `explain`, and every built-in study, including
//! the multi-experiment ones, can be explained.

mod common;

use schedlab::explain::{render, study_spec, Ask, Select};
use schedlab_metrics::explain::Explained;
use schedlab_run::RunSpec;
use schedlab_sim::Ns;

fn ask(task: Option<&str>, n: usize) -> Ask {
    Ask { task: task.map(Into::into), select: Select::Worst(n), summary: false, json: false, svg: None }
}

fn explain(j: &RunSpec, task: Option<&str>) -> (schedlab_run::RunRecord, Explained) {
    schedlab::explain::run(j, &ask(task, 3), &mut |_| true).unwrap()
}

fn example(name: &str) -> String {
    let p = format!("{}/../../examples/workloads/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(p).unwrap()
}

/// Two hogs pinned to CPU 0 of two: CPU 1 idles, and its balancer finds CPU 0 the busiest
/// but may move neither task (`can_migrate_task`: `cpus_ptr` excludes CPU 1). The
/// explanation of the waiting hog names the balancer and the affinity rule, under the
/// fair class (v5.15 `load_balance`, v6.6) and O(1) (2.6 `load_balance`).
#[test]
fn pinned_hogs_name_the_balancer_and_affinity() {
    for sched in ["cfs", "cfs@4.9", "eevdf", "o1"] {
        let mut j = RunSpec::load("nice-pair", &example("nice-pair.toml"), None, &[], Some(Ns::from_ms(200))).unwrap();
        j.set("machine.noise", "none").unwrap();
        j.sched = sched.into();
        j.check = true;
        let (_, ex) = explain(&j, Some("niced"));
        let notes: Vec<&String> = ex.waits.iter().flat_map(|w| &w.balance).collect();
        assert!(
            notes.iter().any(|b| b.contains("load_balance on CPU 1")
                && b.contains("busiest CPU 0")
                && b.contains("affinity: allowed CPUs 0 exclude CPU 1")),
            "{sched}: no note names the balancer and affinity: {notes:?}"
        );
    }
}

/// Four unpinned hogs on two CPUs under CFS: after the first balance each CPU runs two,
/// so the balancer's passes on the other CPU find the domain balanced — the explanation
/// says why nothing moved (a balanced verdict, or the task running / cache-hot).
#[test]
fn balanced_hogs_say_why_nothing_moved_under_cfs() {
    let text =
        "name = \"hogs\"\nmachine = \"smp2\"\n[[task]]\nname = \"hog\"\ncount = 4\nprogram = [ { run = \"10s\" } ]\n";
    let mut j = RunSpec::load("hogs", text, None, &[], Some(Ns::from_ms(300))).unwrap();
    j.set("machine.noise", "none").unwrap();
    j.sched = "cfs".into();
    j.check = true;
    let (_, ex) = explain(&j, Some("hog"));
    let notes: Vec<&String> = ex.waits.iter().flat_map(|w| &w.balance).collect();
    assert!(
        notes.iter().any(|b| b.contains("load_balance") && (b.contains("balanced — ") || b.contains("not moved: "))),
        "no note says why the balancer left the hogs: {notes:?}"
    );
}

/// Wakeups record their placement path: the fair class's `select_task_rq_fair`
/// (`select_idle_sibling`, after `wake_affine` when the waker's CPU is not the previous
/// one), O(1)'s `try_to_wake_up`, and `select_task_rq_rt` for a FIFO task; recording them
/// changes no result (the same record, trace hash included).
#[test]
fn wakeups_name_their_placement_path() {
    let rt = "[[task]]\nname = \"rt\"\npolicy = \"fifo\"\nrt_priority = 10\nprogram = [ { loop = \"forever\", do = [ { run = \"1ms\" }, { timer = \"5ms\" } ] } ]\n";
    let hogs = "[[task]]\nname = \"hog\"\ncount = 3\nprogram = [ { run = \"10s\" } ]\n";
    let sleeper = "[[task]]\nname = \"sl\"\ncount = 3\nprogram = [ { loop = \"forever\", do = [ { run = \"1ms\" }, { sleep = \"2ms\" } ] } ]\n";
    let cases = [
        ("cfs", format!("name = \"w\"\nmachine = \"smp4\"\n{sleeper}{hogs}"), "sl", "select_idle_sibling"),
        ("eevdf", format!("name = \"w\"\nmachine = \"smp4\"\n{sleeper}{hogs}"), "sl", "select_idle_sibling"),
        ("o1", format!("name = \"w\"\nmachine = \"smp4\"\n{sleeper}{hogs}"), "sl", "try_to_wake_up"),
        (
            "eevdf",
            format!("name = \"w\"\nmachine = \"smp4\"\n{rt}{}", hogs.replace("count = 3", "count = 5")),
            "rt",
            "select_task_rq_rt",
        ),
    ];
    for (sched, text, task, path) in cases {
        let mut j = RunSpec::load("w", &text, None, &[], Some(Ns::from_ms(100))).unwrap();
        j.set("machine.noise", "none").unwrap();
        j.sched = sched.into();
        j.check = true;
        let (rec, ex) = explain(&j, Some(task));
        let plain = j.run(&mut |_| true).unwrap();
        assert_eq!(
            schedlab_run::deterministic_json(&plain),
            schedlab_run::deterministic_json(&rec),
            "{sched}: recording the placements changed the result"
        );
        let placed: Vec<&String> = ex.waits.iter().filter_map(|w| w.wake.as_ref()?.placed.as_ref()).collect();
        assert!(placed.iter().any(|p| p.starts_with(path)), "{sched}: no {task} wakeup placed by {path}: {placed:?}");
    }
}

/// Every experiment of every multi-experiment study can be explained (its first
/// configuration, briefly): each task's explained waiting sums to its `wait_ns`.
#[test]
fn every_study_experiment_can_be_explained() {
    for (name, suite) in schedlab_studies::STUDIES.iter().filter_map(|s| Some((s.name, s.suite()?))) {
        for x in &suite.experiments {
            let j = study_spec(&suite, Some(x.name), None, 1, Some(Ns::from_ms(20))).unwrap();
            let (rec, ex) = explain(&j, None);
            for t in &rec.tasks {
                assert_eq!(ex.tasks[t.tid].wait_ns, t.wait_ns, "{name}/{}: task {}", x.name, t.name);
            }
        }
    }
}

/// A study of several experiments needs `--experiment`; the error lists them, as does an
/// unknown experiment or configuration.
#[test]
fn study_explain_names_the_choices() {
    let suite = schedlab_studies::suites::suite("cfs-eevdf").unwrap();
    let err = |e: Option<&str>, c: Option<&str>| match study_spec(&suite, e, c, 1, None) {
        Ok(_) => panic!("{e:?} {c:?} accepted"),
        Err(x) => x.to_string(),
    };
    let first = suite.experiments[0].name;
    assert!(err(None, None).contains(first), "{}", err(None, None));
    assert!(err(Some("nope"), None).contains(first));
    let c = err(Some(first), Some("nope"));
    assert!(c.contains(&suite.experiments[0].configs[0].label), "{c}");
    let by_sched = study_spec(&suite, Some(first), Some(&suite.experiments[0].configs[1].sched), 1, None).unwrap();
    assert_eq!(by_sched.sched, suite.experiments[0].configs[1].sched);
}

/// The explanation of the pinned pair under O(1), as printed: its balancer's note.
#[test]
fn snapshot_nice_pair_under_o1() {
    let mut j = RunSpec::load("nice-pair", &example("nice-pair.toml"), None, &[], Some(Ns::from_ms(40))).unwrap();
    j.set("machine.noise", "none").unwrap();
    j.sched = "o1".into();
    let a = Ask { summary: true, ..ask(Some("niced"), 1) };
    let (_, ex) = schedlab::explain::run(&j, &a, &mut |_| true).unwrap();
    insta::assert_snapshot!(render(&ex, &a).unwrap());
}

/// A wakeup's placement under CFS, as printed (three sleepers beside three hogs on four
/// CPUs: `select_idle_sibling` finds a CPU, or none is idle).
#[test]
fn snapshot_sleeper_placement_under_cfs() {
    let text = "name = \"w\"\nmachine = \"smp4\"\n[[task]]\nname = \"sl\"\ncount = 3\nprogram = [ { loop = \"forever\", do = [ { run = \"1ms\" }, { sleep = \"2ms\" } ] } ]\n[[task]]\nname = \"hog\"\ncount = 3\nprogram = [ { run = \"10s\" } ]\n";
    let mut j = RunSpec::load("w", text, None, &[], Some(Ns::from_ms(30))).unwrap();
    j.set("machine.noise", "none").unwrap();
    j.set("machine.cost_model", "flat").unwrap();
    j.sched = "cfs".into();
    let a = Ask { select: Select::Between(Ns::from_ms(10), Ns::from_ms(13)), ..ask(Some("sl.0"), 1) };
    let (_, ex) = schedlab::explain::run(&j, &a, &mut |_| true).unwrap();
    insta::assert_snapshot!(render(&ex, &a).unwrap());
}

/// A multi-experiment study explained through the same entry point as the CLI.
#[test]
fn snapshot_study_experiment() {
    let suite = schedlab_studies::suites::suite("rt-latency").unwrap();
    let x = &suite.experiments[0];
    let mut j = study_spec(&suite, Some(x.name), None, 1, Some(Ns::from_ms(30))).unwrap();
    j.set("machine.noise", "none").unwrap();
    let (_, ex) = explain(&j, None);
    insta::assert_snapshot!(render(&ex, &ask(None, 1)).unwrap());
}

/// `study NAME --html` for a multi-experiment study writes one page and explains its runs:
/// each experiment's section has a *Where the time went* part per configuration.
#[test]
fn study_html_reports_say_where_the_time_went() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("s.html");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["study", "rt-latency", "--duration", "50ms", "--html"])
        .arg(&html)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let suite = schedlab_studies::suites::suite("rt-latency").unwrap();
    // One page per invocation: no file beside it, a section per experiment.
    let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(files, ["s.html"], "{files:?}");
    let page = std::fs::read_to_string(&html).unwrap();
    for x in &suite.experiments {
        let at = page.find(&format!("<section id=\"{}\">", x.name)).unwrap_or_else(|| panic!("no section {}", x.name));
        let text = &page[at..page[at..].find("</section>").unwrap() + at];
        for c in &x.configs {
            let want = format!("Where the time went · {}", c.sched);
            assert!(text.contains(&want), "{}: no `{want}`", x.name);
        }
    }
}

/// A plain `study` (no `--html`) explains its runs too: the mechanisms that quote a task's
/// waits have them (the short-slice claim of cfs-eevdf named two empty parts, "0.1 ms: ;
/// base: ", when only an HTML report explained the runs).
#[test]
fn study_mechanisms_quote_the_decision_records_without_html() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["study", "cfs-eevdf", "--duration", "60ms", "--seeds", "1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let why = text.lines().find(|l| l.contains("0.1 ms:")).unwrap_or_else(|| panic!("no short-slice why:\n{text}"));
    assert!(!why.contains(": ;") && !why.trim_end().ends_with(':'), "an empty part: {why}");
    assert!(why.contains("lat") && why.contains("waited"), "no task's waits quoted: {why}");
}
