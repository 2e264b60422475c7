//! Parquet tables through the real binary: a sweep written as CSV and as Parquet holds the
//! same rows, cell for cell, with numbers typed as numbers; `--out DIR` writes each run's
//! per-task table both ways. Read back with the same `parquet` crate the writer uses.
#![cfg(feature = "parquet")]

use schedlab_report::parquet::{read, schema, Kind};
use std::process::Command;

/// A workload with a named span (span columns in the sweep table) and a task whose name
/// holds a comma and quotes (the per-task table).
const WORKLOAD: &str = "machine = \"smp2\"\n[params]\nn = 2\n[[task]]\nname = \"a, \\\"b\\\"\"\ncount = \"$n\"\n\
program = [ { loop = 100, do = [ { mark_begin = \"req\" }, { run = \"300us\" }, { mark_end = \"req\" }, { sleep = \"200us\" } ] } ]\n";

fn schedlab(args: &[&str]) -> std::process::Output {
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab")).args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out
}

fn csv_table(bytes: &[u8]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_reader(bytes);
    let header = r.headers().unwrap().iter().map(str::to_string).collect();
    let rows = r.records().map(|x| x.unwrap().iter().map(str::to_string).collect()).collect();
    (header, rows)
}

#[test]
fn a_sweep_as_csv_and_as_parquet_holds_the_same_rows() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("w.toml"), WORKLOAD).unwrap();
    let spec = d.path().join("s.toml");
    std::fs::write(
        &spec,
        "workload = \"w.toml\"\nduration = \"30ms\"\n[grid]\nschedulers = [\"cfs\", \"eevdf\"]\n\
         params = { n = [1, 3] }\nseeds = [1, 2]\nset = { \"eevdf:version\" = [\"6.6\", \"6.12\"] }\n",
    )
    .unwrap();
    let (csv_path, pq_path) = (d.path().join("t.csv"), d.path().join("t.parquet"));
    schedlab(&["sweep", spec.to_str().unwrap(), "-o", csv_path.to_str().unwrap()]);
    schedlab(&["sweep", spec.to_str().unwrap(), "-o", pq_path.to_str().unwrap()]);
    let csv = csv_table(&std::fs::read(&csv_path).unwrap());
    let pq = std::fs::read(&pq_path).unwrap();
    assert_eq!(read(pq.clone()).unwrap(), csv);
    assert_eq!(csv.1.len(), 12, "cfs: 2 n × 2 seeds; eevdf: 2 n × 2 seeds × 2 versions");
    let kinds = schema(pq).unwrap();
    let kind = |c: &str| kinds.iter().find(|(n, _)| n == c).unwrap_or_else(|| panic!("no column {c}: {kinds:?}")).1;
    for c in ["run", "seed", "param.n", "sim_ns", "runtime_ns", "span.req.count", "span.req.p99_ns"] {
        assert_eq!(kind(c), Some(Kind::Int), "{c}");
    }
    // Names, the hash and versions stay text whatever their cells look like.
    for c in ["workload", "scheduler", "trace_hash", "end_reason", "set.version"] {
        assert_eq!(kind(c), Some(Kind::Text), "{c}");
    }
}

#[test]
fn out_dir_writes_each_run_s_task_table_as_csv_and_parquet() {
    let d = tempfile::tempdir().unwrap();
    let w = d.path().join("w.toml");
    std::fs::write(&w, WORKLOAD).unwrap();
    let out = d.path().join("out");
    schedlab(&[
        "compare",
        w.to_str().unwrap(),
        "--sched",
        "cfs,ule",
        "--duration",
        "20ms",
        "--out",
        out.to_str().unwrap(),
    ]);
    for s in ["cfs", "ule"] {
        let csv = csv_table(&std::fs::read(out.join(format!("{s}.tasks.csv"))).unwrap());
        let pq = std::fs::read(out.join(format!("{s}.tasks.parquet"))).unwrap();
        assert_eq!(read(pq).unwrap(), csv, "{s}");
        assert_eq!(csv.1[0][1], "a, \"b\".0", "the name (instance 0) survives both");
    }
}
