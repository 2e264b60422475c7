//! Command-line conventions through the real binary: CSV that survives any task name,
//! `convert`, examples built into the binary, completions and the man page generated from
//! the clap definitions, the documented exit statuses (`docs/cli.md`; 130 and 143 after
//! SIGINT/SIGTERM are tested in `outputs_and_signals.rs`), the default schedulers and what
//! `schedlab list` shows of their versions, and `--set SCHED:KEY` for a scheduler whose
//! name holds a colon.

use std::process::{Command, Output};

fn schedlab(args: &[&str], dir: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab")).args(args).current_dir(dir).output().unwrap()
}

fn text(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b).into_owned();
    assert!(!s.contains("panicked"), "panic: {s}");
    s
}

const NAME: &str = "a,\"quoted\" task, with commas";

#[test]
fn csv_round_trips_task_names_with_commas_and_quotes() {
    let dir = tempfile::tempdir().unwrap();
    let toml_name = NAME.replace('"', "\\\"");
    let w = format!("[[task]]\nname = \"{toml_name}\"\ncount = 2\nprogram = [ {{ run = \"1ms\" }}, {{ sleep = \"1ms\" }} ]\n[[task]]\nname = \"plain\"\nprogram = [ {{ run = \"1ms\" }} ]\n");
    std::fs::write(dir.path().join("w.toml"), w).unwrap();
    for args in [&["run", "w.toml"][..], &["compare", "w.toml", "--sched", "eevdf,cfs"][..]] {
        let out = schedlab(&[args, &["--format", "csv", "--duration", "10ms"]].concat(), dir.path());
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let mut r = csv::Reader::from_reader(out.stdout.as_slice());
        let header = r.headers().unwrap().clone();
        assert_eq!(header.len(), 17);
        let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        let per_sched = if args[0] == "compare" { 2 } else { 1 };
        assert_eq!(rows.len(), 3 * per_sched);
        for row in &rows {
            assert_eq!(row.len(), 17, "{row:?}");
            assert!(row[5].parse::<u64>().is_ok(), "runtime_ns column: {row:?}");
        }
        let names: Vec<&str> = rows.iter().map(|r| &r[1]).collect();
        assert!(names.contains(&format!("{NAME}.0").as_str()) && names.contains(&"plain"), "{names:?}");
    }
}

fn strip(json: &[u8]) -> String {
    let mut v: serde_json::Value = serde_json::from_slice(json).unwrap();
    v.as_object_mut().unwrap().remove("host");
    v["workload"].as_object_mut().unwrap().remove("file");
    v.to_string()
}

#[test]
fn convert_prints_toml_that_runs_like_the_rt_app_file() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rt-app/condvar.json");
    std::fs::copy(&src, dir.path().join("c.json")).unwrap();
    let conv = schedlab(&["convert", "c.json"], dir.path());
    assert_eq!(conv.status.code(), Some(0), "{}", text(&conv.stderr));
    std::fs::write(dir.path().join("c.toml"), &conv.stdout).unwrap();
    let args = |f: &'static str| ["run", f, "--format", "json", "--duration", "30ms", "--check"];
    let a = schedlab(&args("c.json"), dir.path());
    let b = schedlab(&args("c.toml"), dir.path());
    assert_eq!(a.status.code(), Some(0), "{}", text(&a.stderr));
    assert_eq!(strip(&a.stdout), strip(&b.stdout));
    // A TOML file needs no conversion.
    let t = schedlab(&["convert", "c.toml"], dir.path());
    assert_eq!(t.status.code(), Some(2));
    assert!(text(&t.stderr).contains("not an rt-app file"));
}

#[test]
fn rt_app_notes_are_reported_once_per_command() {
    let dir = tempfile::tempdir().unwrap();
    let out =
        schedlab(&["compare", "example:rt-app/periodic.json", "--sched", "eevdf,cfs", "--duration", "5ms"], dir.path());
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(err.matches("global `logdir`").count(), 1, "{err}");
}

#[test]
fn example_workloads_are_built_into_the_binary() {
    // An empty directory: nothing to read from the source tree.
    let dir = tempfile::tempdir().unwrap();
    for ex in ["example:hackbench", "example:periodic-200.toml", "example:rt-app/barrier.json"] {
        let out = schedlab(&["run", ex, "--duration", "5ms"], dir.path());
        assert_eq!(out.status.code(), Some(0), "{ex}: {}", text(&out.stderr));
    }
    let list = text(&schedlab(&["list"], dir.path()).stdout);
    assert!(list.contains("example:hackbench") && list.contains("example:rt-app/fork.json"), "{list}");
    let out = schedlab(&["run", "example:nonesuch"], dir.path());
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn completions_and_man_page_come_from_the_clap_definitions() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let out = schedlab(&["completions", shell], dir.path());
        assert_eq!(out.status.code(), Some(0));
        let s = text(&out.stdout);
        for word in ["convert", "compare", "timeline-width"] {
            assert!(s.contains(word), "{shell} lacks {word}");
        }
    }
    let man = schedlab(&["man"], dir.path());
    let s = text(&man.stdout);
    assert!(s.starts_with(".ie") || s.contains(".TH schedlab 1"), "{}", &s[..s.len().min(200)]);
    assert!(s.contains("convert") && s.contains("Exit status"));
}

/// `docs/cli.md`: 0 success, 2 bad input (a workload, an rt-app file, an option), 1 a
/// failed run or output.
#[test]
fn exit_statuses_are_as_documented() {
    let dir = tempfile::tempdir().unwrap();
    // A known key of the wrong type (an unknown key is ignored, as rt-app ignores it).
    std::fs::write(dir.path().join("bad.json"), "{ \"tasks\": {\n  \"t\": { \"run\": \"ten\", \"sleep\": 10 } } }")
        .unwrap();
    let ok = schedlab(&["run", "example:nice-pair", "--duration", "2ms"], dir.path());
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
    let bad = schedlab(&["run", "bad.json"], dir.path());
    assert_eq!(bad.status.code(), Some(2));
    let err = text(&bad.stderr);
    assert!(err.contains("bad.json:2:") && err.contains("tasks.t.run"), "{err}");
    assert_eq!(schedlab(&["run", "--no-such-flag", "x"], dir.path()).status.code(), Some(2));
    let doc =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/cli.md")).unwrap();
    for code in ["| 0 |", "| 1 |", "| 2 |", "| 130 |", "| 143 |", "| 141 |"] {
        assert!(doc.contains(code), "docs/cli.md lacks {code}");
    }
}

/// `study NAME` means the built-in study whenever NAME is exactly a registry name, even with
/// a file of that name in the working directory (that file is `./NAME`), and a path means
/// the file: one rule, stated in `--help`.
#[test]
fn a_study_name_means_the_built_in_study_and_a_path_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("futex"), "[[task]]\nname = \"mine\"\nprogram = [ { run = \"1ms\" } ]\n").unwrap();
    let builtin = schedlab(&["study", "futex", "--duration", "5ms"], dir.path());
    assert_eq!(builtin.status.code(), Some(0), "{}", text(&builtin.stderr));
    assert!(text(&builtin.stdout).starts_with("study futex"), "{}", text(&builtin.stdout));
    let file = schedlab(&["study", "./futex", "--sched", "eevdf", "--duration", "5ms"], dir.path());
    assert_eq!(file.status.code(), Some(0), "{}", text(&file.stderr));
    assert!(text(&file.stdout).contains("mine"), "{}", text(&file.stdout));
    let help = schedlab(&["study", "--help"], dir.path());
    assert!(text(&help.stdout).contains("./NAME"), "{}", text(&help.stdout));
}

/// `schedlab list` shows every study of the registry, each with its description.
#[test]
fn list_shows_every_registered_study() {
    let dir = tempfile::tempdir().unwrap();
    let out = text(&schedlab(&["list"], dir.path()).stdout);
    for s in schedlab_studies::STUDIES {
        let line = out.lines().find(|l| l.split_whitespace().next() == Some(s.name));
        let line = line.unwrap_or_else(|| panic!("{} missing from list:\n{out}", s.name));
        assert!(line.contains(&s.description()), "{line}");
    }
}

/// The defaults: `run` (and `plot`) simulate eevdf, Linux 6.18; `compare` runs eevdf, cfs
/// and ule unless the workload names its own; `schedlab list` shows each fair version and
/// what its features.h lacks.
#[test]
fn eevdf_is_the_default_and_list_shows_versions_and_features() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w.toml");
    std::fs::write(&w, "[[task]]\nname = \"t\"\nprogram = [ { run = \"1ms\" } ]\n").unwrap();
    let bin = env!("CARGO_BIN_EXE_schedlab");
    let out = |args: &[&str]| {
        let o = std::process::Command::new(bin).args(args).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let wp = w.to_str().unwrap();
    let one: serde_json::Value = serde_json::from_str(&out(&["run", wp, "--format", "json"])).unwrap();
    assert_eq!(one["scheduler"]["name"], "eevdf");
    assert_eq!(one["scheduler"]["tunables"]["version"], "6.18");
    let many: serde_json::Value = serde_json::from_str(&out(&["compare", wp, "--format", "json"])).unwrap();
    let names: Vec<&str> = many.as_array().unwrap().iter().map(|r| r["scheduler"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["eevdf", "cfs", "ule"]);
    std::fs::write(
        &w,
        "schedulers = [\"eevdf@6.6\", \"cfs\"]\n[[task]]\nname = \"t\"\nprogram = [ { run = \"1ms\" } ]\n",
    )
    .unwrap();
    let many: serde_json::Value = serde_json::from_str(&out(&["compare", wp, "--format", "json"])).unwrap();
    let names: Vec<&str> = many.as_array().unwrap().iter().map(|r| r["scheduler"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["eevdf@6.6", "cfs"]);
    let list = out(&["list"]);
    for want in [
        "versions: 6.6, 6.12, 6.18 (default 6.18",
        "6.6: lacks PLACE_REL_DEADLINE, PREEMPT_SHORT, PICK_BUDDY, DELAY_DEQUEUE, DELAY_ZERO",
        "6.12: lacks PICK_BUDDY",
        "DELAY_DEQUEUE",
        "RUN_TO_PARITY",
        "autogroup",
        "versions: 4.9, 5.15",
    ] {
        assert!(list.contains(want), "`schedlab list` lacks `{want}`:\n{list}");
    }
}

/// `--set SCHED:KEY=VALUE` targets a scheduler whose name holds a colon: `ext:simple:fifo=1`
/// sets `fifo` of `ext:simple` only (cfs would refuse the key), and a target that is not run
/// is refused rather than ignored.
#[test]
fn targeted_set_reaches_a_scheduler_named_with_a_colon() {
    let bin = env!("CARGO_BIN_EXE_schedlab");
    let root = format!("{}/../..", env!("CARGO_MANIFEST_DIR"));
    let w = format!("{root}/examples/workloads/nice-pair.toml");
    let compare = |set: &str| {
        std::process::Command::new(bin)
            .args(["compare", &w, "--sched", "ext:simple,cfs", "--duration", "20ms", "--set", set])
            .output()
            .unwrap()
    };
    let ok = compare("ext:simple:fifo=1");
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    let bad = compare("ext:central:fifo=1");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not among the schedulers run"));
}

/// `schedlab --version` names the commit the binary was built from: the checkout's HEAD
/// when it was built from one (as CI's clean clone is).
#[test]
fn version_names_the_commit() {
    let dir = tempfile::tempdir().unwrap();
    let out = schedlab(&["--version"], dir.path());
    assert_eq!(out.status.code(), Some(0));
    let line = text(&out.stdout);
    assert!(line.starts_with(&format!("schedlab {} (commit ", env!("CARGO_PKG_VERSION"))), "{line}");
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match head {
        Some(hash) => assert!(line.contains(&format!("commit {hash}")), "built from {hash}: {line}"),
        None => assert!(line.contains("commit unknown"), "no git checkout, yet: {line}"),
    }
}
