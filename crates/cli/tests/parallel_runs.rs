//! Parallel runs through the real binary: `compare` on several cores writes exactly what it
//! writes on one (the wall-clock `host` key aside), a bad scheduler among several fails
//! before any runs, and `schedlab sweep` writes its table or a located error.

use std::process::Command;

const WORKLOAD: &str = "machine = \"smp2\"\n[params]\nn = 3\n[[task]]\nname = \"a, \\\"b\\\"\"\ncount = \"$n\"\n\
program = [ { loop = 300, do = [ { run = \"300us\" }, { sleep = \"200us\" } ] } ]\n";

fn schedlab(threads: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_schedlab"));
    c.env("RAYON_NUM_THREADS", threads);
    c
}

fn without_host(json: &[u8]) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_slice(json).unwrap();
    for r in v.as_array_mut().unwrap() {
        r.as_object_mut().unwrap().remove("host");
    }
    v
}

#[test]
fn parallel_compare_equals_sequential_compare() {
    let d = tempfile::tempdir().unwrap();
    let w = d.path().join("w.toml");
    std::fs::write(&w, WORKLOAD).unwrap();
    let args =
        ["compare", w.to_str().unwrap(), "--sched", "eevdf,cfs,ule,o1", "--duration", "40ms", "--format", "json"];
    let one = schedlab("1").args(args).output().unwrap();
    let four = schedlab("4").args(args).output().unwrap();
    assert!(one.status.success() && four.status.success(), "{}", String::from_utf8_lossy(&four.stderr));
    let (one, four) = (without_host(&one.stdout), without_host(&four.stdout));
    assert_eq!(serde_json::to_string_pretty(&one).unwrap(), serde_json::to_string_pretty(&four).unwrap());
    let names: Vec<&str> = four.as_array().unwrap().iter().map(|r| r["scheduler"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["eevdf", "cfs", "ule", "o1"]);
}

#[test]
fn a_bad_scheduler_among_several_fails_before_any_run() {
    let d = tempfile::tempdir().unwrap();
    let w = d.path().join("w.toml");
    std::fs::write(&w, WORKLOAD).unwrap();
    // The runs before the bad one would take minutes: the error must come first.
    let out = schedlab("2")
        .args(["compare", w.to_str().unwrap(), "--sched", "cfs,nosuch", "--duration", "1000s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nosuch"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn sweep_writes_one_row_per_run_and_locates_errors() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("w.toml"), WORKLOAD).unwrap();
    let spec = d.path().join("s.toml");
    std::fs::write(&spec, "workload = \"w.toml\"\nduration = \"20ms\"\n[grid]\nschedulers = [\"cfs\", \"ule\"]\nparams = { n = [1, 2] }\n")
        .unwrap();
    let out = schedlab("2").args(["sweep", spec.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut r = csv::Reader::from_reader(&out.stdout[..]);
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(header[..6], ["run", "workload", "machine", "scheduler", "seed", "param.n"]);
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    let got: Vec<(&str, &str)> = rows.iter().map(|x| (&x[3], &x[5])).collect();
    assert_eq!(got, [("cfs", "1"), ("cfs", "2"), ("ule", "1"), ("ule", "2")]);
    std::fs::write(&spec, "workload = \"w.toml\"\n[grid]\nschedulers = \"cfs\"\nmachines = [4]\n").unwrap();
    let out = schedlab("2").args(["sweep", spec.to_str().unwrap()]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("s.toml:4:13: field `grid.machines[0]`: expected a string"), "{err}");
}
