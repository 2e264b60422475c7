//! `schedlab import` and `schedlab replay` through the real binary: the committed perf.data
//! fixture becomes a workload that loads; a foreign or truncated trace is exit status 2 with
//! a message naming the file, never a panic; `replay` prints the trace beside the
//! simulated scheduler.

use std::path::PathBuf;
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../trace-import/tests/fixtures").join(name)
}

fn schedlab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab")).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).to_string(), stderr)
}

#[test]
fn import_writes_a_workload_that_runs() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("m.toml");
    let trace = fixture("messaging.ftrace.txt");
    let (code, _, err) = schedlab(&["import", trace.to_str().unwrap(), "-o", w.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("wake dependencies"), "{err}");
    let text = std::fs::read_to_string(&w).unwrap();
    assert!(text.starts_with("# Imported by `schedlab import`"));
    let (code, out, err) = schedlab(&["run", w.to_str().unwrap(), "--sched", "eevdf", "--check"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("all_exited"), "{out}");
}

#[test]
fn foreign_and_truncated_traces_exit_2_with_the_file_named() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("not-a-trace.toml");
    std::fs::write(&toml, "[[task]]\nname = \"t\"\nprogram = [ { run = \"1ms\" } ]\n").unwrap();
    let bytes = std::fs::read(fixture("messaging.perf.data")).unwrap();
    let cut = dir.path().join("cut.perf.data");
    std::fs::write(&cut, &bytes[..bytes.len() / 3]).unwrap();
    for (p, words) in [(&toml, "not a trace"), (&cut, "truncated")] {
        let (code, _, err) = schedlab(&["import", p.to_str().unwrap()]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(p.to_str().unwrap()) && err.contains(words), "{err}");
    }
}

#[test]
fn replay_prints_the_trace_beside_the_simulation() {
    let trace = fixture("messaging.perf.data");
    let (code, out, err) = schedlab(&[
        "replay",
        trace.to_str().unwrap(),
        "--sched",
        "eevdf",
        "--machine",
        "smp2",
        "--only",
        "sched-messaging",
    ]);
    assert_eq!(code, 0, "{err}");
    let header = out.lines().find(|l| l.trim_start().starts_with("trace")).unwrap_or_default();
    assert!(header.contains("eevdf"), "{out}");
    assert!(out.contains("per-task run time Δ mean/max"), "{out}");
}

/// Hostile files through the binary: each is exit status 2 with the file named — not a
/// signal (a perf.data whose feature index claims a huge section once made the perf reader
/// allocate it and abort the process).
#[test]
fn hostile_traces_exit_2_not_a_signal() {
    let dir = tempfile::tempdir().unwrap();
    let perf = std::fs::read(fixture("messaging.perf.data")).unwrap();
    let data_end = (40..56).step_by(8).map(|o| u64::from_le_bytes(perf[o..o + 8].try_into().unwrap())).sum::<u64>();
    let mut index = perf.clone();
    let at = data_end as usize + 8;
    index[at..at + 8].copy_from_slice(&(1u64 << 59).to_le_bytes());
    let mut magic = perf.clone();
    magic[..8].copy_from_slice(b"PERFILE1");
    let garbage: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8 | 0x80).collect();
    let cases: [(&str, Vec<u8>, &str); 5] = [
        ("empty.data", Vec::new(), "not a trace"),
        ("garbage.bin", garbage, "not a trace"),
        ("magic.perf.data", magic, "not a trace"),
        ("index.perf.data", index, "lies outside the file"),
        ("cut.perf.data", perf[..perf.len() / 2].to_vec(), "truncated"),
    ];
    for (name, bytes, words) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        for cmd in ["import", "replay"] {
            let (code, _, err) = schedlab(&[cmd, p.to_str().unwrap()]);
            assert_eq!(code, 2, "{cmd} {name}: {err}");
            assert!(err.contains(p.to_str().unwrap()) && err.contains(words), "{cmd} {name}: {err}");
        }
    }
}
