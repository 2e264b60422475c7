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
