//! Outputs and signals, through the real binary: stdout closed or full, output targets that
//! are devices, FIFOs, symlinks or in missing directories, SIGINT/SIGTERM mid-run, stale
//! temp files of a killed writer.

use std::path::Path;
use std::process::{Command, Stdio};

const WORKLOAD: &str = "[[task]]\nname = \"t\"\ncount = 2\nprogram = [ { loop = \"forever\", do = [ { run = \"1ms\" }, { sleep = \"1ms\" } ] } ]\n";

fn workload(dir: &Path) -> String {
    let w = dir.join("w.toml");
    std::fs::write(&w, WORKLOAD).unwrap();
    w.to_str().unwrap().to_string()
}

fn schedlab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
}

fn no_panic(stderr: &[u8]) -> String {
    let s = String::from_utf8_lossy(stderr).into_owned();
    assert!(!s.contains("panicked"), "panic: {s}");
    s
}

/// A reader that has gone away: the run ends quietly with 141 (128 + SIGPIPE), no panic.
#[test]
fn a_closed_stdout_ends_quietly_with_141() {
    let d = tempfile::tempdir().unwrap();
    let w = workload(d.path());
    let mut fds = [0; 2];
    // SAFETY: pipe() fills two new descriptors, each owned once below.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    use std::os::fd::FromRawFd;
    drop(unsafe { std::os::fd::OwnedFd::from_raw_fd(fds[0]) });
    let writer = unsafe { std::os::fd::OwnedFd::from_raw_fd(fds[1]) };
    let out = schedlab()
        .args(["run", &w, "--duration", "20ms", "--format", "json"])
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = no_panic(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{err}");
    assert_eq!(err, "", "a closed pipe is not worth a message");
}

/// A full disk is an error naming stdout, exit 1.
#[test]
fn a_full_stdout_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    let w = workload(d.path());
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let out = schedlab().args(["run", &w, "--duration", "20ms"]).stdout(full).output().unwrap();
    let err = no_panic(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("stdout") && err.contains("No space left"), "{err}");
}

/// `--trace`, `--html` and `--out` files: a device stays a device, a symlink stays a link
/// to the file written, a FIFO is written in place.
#[test]
fn outputs_to_devices_symlinks_and_fifos_are_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let d = tempfile::tempdir().unwrap();
    let w = workload(d.path());
    let real = d.path().join("real.html");
    let link = d.path().join("link.html");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let fifo = d.path().join("trace.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let f = fifo.clone();
    let reader = std::thread::spawn(move || std::fs::read(f).unwrap());
    let out = schedlab()
        .args(["run", &w, "--duration", "20ms", "--trace"])
        .arg(&fifo)
        .arg("--html")
        .arg(&link)
        .output()
        .unwrap();
    let err = no_panic(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let trace = reader.join().unwrap();
    assert!(trace.len() > 100, "the trace went through the FIFO ({} bytes)", trace.len());
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(&real).unwrap().contains("<html"));
    let out = schedlab().args(["run", &w, "--duration", "20ms", "--trace", "/dev/null"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", no_panic(&out.stderr));
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
}

/// A missing parent directory is an error before the run starts; nothing is created.
/// `--out DIR` itself is created when its parent exists.
#[test]
fn missing_parent_directories_are_errors() {
    let d = tempfile::tempdir().unwrap();
    let w = workload(d.path());
    for flag in ["--trace", "--html", "--out", "--plots"] {
        let target = d.path().join("missing/sub/x");
        let out = schedlab().args(["run", &w, "--duration", "20ms", flag]).arg(&target).output().unwrap();
        let err = no_panic(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{flag}: {err}");
        assert!(err.contains("does not exist"), "{flag}: {err}");
        assert!(!d.path().join("missing").exists(), "{flag} created a directory");
    }
    let out = schedlab().args(["run", &w, "--duration", "20ms", "--out"]).arg(d.path().join("o")).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", no_panic(&out.stderr));
    assert!(d.path().join("o/eevdf.json").is_file());
}

/// Waits until process `pid` catches SIGINT and SIGTERM (its handler is installed), from
/// `SigCgt` in `/proc/PID/status`.
fn wait_for_handlers(pid: u32) {
    let want = (1u64 << (libc::SIGINT - 1)) | (1u64 << (libc::SIGTERM - 1));
    for _ in 0..2000 {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let caught = status
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())
            .unwrap_or(0);
        if caught & want == want {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    panic!("schedlab {pid} never installed its signal handlers");
}

/// Waits until process `pid` has used `ticks` clock ticks of CPU time (`/proc/PID/stat`
/// utime + stime): a run of a tiny workload that has computed that long has finished
/// loading it (a signal during loading ends the command before any run, by design).
fn wait_for_cpu(pid: u32, ticks: u64) {
    for _ in 0..20_000 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
        let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
        let f: Vec<u64> = rest.split_whitespace().skip(11).take(2).filter_map(|x| x.parse().ok()).collect();
        if f.iter().sum::<u64>() >= ticks {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    panic!("schedlab {pid} never got {ticks} ticks of CPU");
}

/// Starts a run that would take minutes, signals it once it runs, and returns (status,
/// stdout, stderr).
fn interrupted_run(sig: i32, extra: &[&str]) -> (Option<i32>, String, String) {
    let d = tempfile::tempdir().unwrap();
    let w = workload(d.path());
    let child = schedlab()
        .args(["run", &w, "--duration", "3600s", "--format", "json"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_handlers(child.id());
    wait_for_cpu(child.id(), 5);
    // SAFETY: signalling the child this test spawned, by its pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
    let out = child.wait_with_output().unwrap();
    let err = no_panic(&out.stderr);
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), err)
}

/// SIGINT and SIGTERM end the run with its partial report (`interrupted`) and exit with
/// 128 + the signal (130, 143), as a shell reports a command killed by it.
#[test]
fn sigint_and_sigterm_write_the_partial_report_and_exit_128_plus_signal() {
    for (sig, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let (status, out, err) = interrupted_run(sig, &[]);
        assert_eq!(status, Some(code), "signal {sig}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        assert_eq!(v["end_reason"], "interrupted", "signal {sig}");
        assert!(v["sim_ns"].as_u64().unwrap() < 3_600_000_000_000);
        assert!(err.contains("interrupted"), "{err}");
    }
}

/// An interrupted run still writes its `--out` files, and no temp file remains.
#[test]
fn an_interrupted_run_writes_its_out_directory() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("out");
    let (status, _, err) = interrupted_run(libc::SIGTERM, &["--out", dir.to_str().unwrap()]);
    assert_eq!(status, Some(143), "{err}");
    let json = std::fs::read_to_string(dir.join("eevdf.json")).unwrap();
    assert!(json.contains("\"end_reason\": \"interrupted\""));
    let names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| !n.contains("schedlab-tmp")), "{names:?}");
}

/// Ctrl-C during `fuzz`: the fuzzer stops (the world in progress, first run or replay, is
/// not a failure), reports the worlds it completed and exits 130.
#[test]
fn ctrl_c_stops_fuzz_without_a_false_failure() {
    let child = schedlab()
        .args(["fuzz", "--seeds", "1000000", "--duration", "300ms"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_handlers(child.id());
    // Let it get into a world (any point of a world will do).
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: signalling the child this test spawned, by its pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    let err = no_panic(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(!err.contains("replay") && !err.contains("seed 0:"), "a false failure: {err}");
    assert!(stdout.contains("worlds from seed 0: 0 failures"), "{stdout}");
}
