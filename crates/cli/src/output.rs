//! Every output the `schedlab` command writes goes through here: stdout, stderr notes and
//! files (`--out`, `--trace`, `--html`, `--plots`, `-o`).
//!
//! - **stdout**: a closed pipe (`EPIPE`, e.g. `schedlab run … | head -1`) ends the process
//!   quietly with status [`EXIT_BROKEN_PIPE`] (141 = 128 + SIGPIPE, what a shell reports for
//!   a command killed by SIGPIPE); any other write error (a full disk: `> /dev/full`) is an
//!   error with status 1. Nothing panics.
//! - **files**: a symlink is followed and the file it names is written; an existing target
//!   that is not a regular file (`/dev/null`, a FIFO, a character device) is opened and
//!   written in place; a regular file (or a new one) is replaced atomically: written to a
//!   temp file `.NAME.schedlab-tmp.PID` beside it, then renamed over it. A missing parent
//!   directory is an error (nothing is created silently), except that an output *directory*
//!   given by the user (`--out DIR`, `--plots DIR`) is created if its own parent exists.
//! - **stale temp files**: a temp file left by a process that no longer exists (one killed
//!   by SIGKILL mid-write) is removed the next time the same target is written.

use crate::CliError;
use std::ffi::OsString;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Exit status after stdout's reader went away (128 + SIGPIPE).
pub const EXIT_BROKEN_PIPE: u8 = 141;

/// What a temp file's name carries between the target's name and the writer's pid.
const TMP_MARK: &str = ".schedlab-tmp.";

/// Symlinks followed before giving up (Linux's `MAXSYMLINKS`).
const MAX_SYMLINKS: usize = 40;

fn io_error(what: &Path, e: &io::Error) -> CliError {
    CliError { message: format!("{}: {e}", what.display()), code: 1 }
}

/// Writes `s` to stdout and flushes. A closed pipe exits quietly ([`EXIT_BROKEN_PIPE`]);
/// another failure is an error naming stdout.
pub fn stdout(s: &str) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => std::process::exit(EXIT_BROKEN_PIPE.into()),
        Err(e) => Err(CliError { message: format!("writing to stdout: {e}"), code: 1 }),
    }
}

/// A note for the user on stderr (progress, "wrote …"); a closed or full stderr is ignored,
/// since there is nowhere left to say so.
pub fn note(s: &str) {
    let mut err = io::stderr().lock();
    let _ = writeln!(err, "{s}");
}

/// Makes sure output directory `dir` exists, creating it (one level: its parent must
/// exist) if it does not.
pub fn ensure_dir(dir: &Path) -> Result<(), CliError> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.is_dir() {
            return Err(CliError {
                message: format!("{}: the directory {} does not exist", dir.display(), parent.display()),
                code: 1,
            });
        }
    }
    match fs::create_dir(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(e) => Err(io_error(dir, &e)),
    }
}

/// Writes `contents` to `path` (see the module doc: symlinks followed, devices and FIFOs
/// written in place, regular files replaced atomically, no missing directory created).
pub fn write_file(path: &Path, contents: &[u8]) -> Result<(), CliError> {
    let target = resolve_symlinks(path)?;
    match fs::metadata(&target) {
        Ok(m) if !m.is_file() && !m.is_dir() => write_in_place(&target, contents),
        Ok(m) if m.is_dir() => Err(CliError { message: format!("{}: is a directory", target.display()), code: 1 }),
        _ => write_replacing(&target, contents),
    }
}

/// `path` with every symlink (of the last component, repeatedly) resolved, so the real
/// file is written and the link stays a link. A dangling link names the file to create.
fn resolve_symlinks(path: &Path) -> Result<PathBuf, CliError> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_SYMLINKS {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = fs::read_link(&p).map_err(|e| io_error(&p, &e))?;
                p = match p.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(CliError { message: format!("{}: too many levels of symbolic links", path.display()), code: 1 })
}

/// Opens an existing non-regular file (device, FIFO) for writing and writes to it.
fn write_in_place(target: &Path, contents: &[u8]) -> Result<(), CliError> {
    let mut f = OpenOptions::new().write(true).open(target).map_err(|e| io_error(target, &e))?;
    f.write_all(contents).and_then(|()| f.flush()).map_err(|e| io_error(target, &e))
}

/// The directory a file `target` lives in; it must exist.
fn parent_dir(target: &Path) -> Result<PathBuf, CliError> {
    let dir = target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(CliError {
            message: format!("{}: the directory {} does not exist", target.display(), dir.display()),
            code: 1,
        });
    }
    Ok(dir.to_path_buf())
}

/// Checks that the directory output file `path` goes into exists (after following a
/// symlink at `path`).
pub fn check_parent(path: &Path) -> Result<(), CliError> {
    parent_dir(&resolve_symlinks(path)?).map(|_| ())
}

/// The temp file name for `target` written by process `pid`: `.NAME.schedlab-tmp.PID`.
pub fn temp_name(target: &Path, pid: u32) -> PathBuf {
    let mut name = OsString::from(".");
    name.push(target.file_name().unwrap_or_default());
    name.push(format!("{TMP_MARK}{pid}"));
    target.with_file_name(name)
}

/// Writes a temp file beside `target` and renames it over `target`; the temp file is
/// removed on any failure.
fn write_replacing(target: &Path, contents: &[u8]) -> Result<(), CliError> {
    let dir = parent_dir(target)?;
    remove_stale_temps(&dir, target);
    let tmp = temp_name(target, std::process::id());
    let result =
        write_temp(&tmp, target, contents).and_then(|()| fs::rename(&tmp, target).map_err(|e| io_error(target, &e)));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

fn write_temp(tmp: &Path, target: &Path, contents: &[u8]) -> Result<(), CliError> {
    let mut opts = OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Outputs are ordinary files, readable by others, like `>` would make them.
        opts.mode(0o644);
    }
    let mut f = opts.open(tmp).map_err(|e| io_error(tmp, &e))?;
    f.write_all(contents).and_then(|()| f.flush()).map_err(|e| io_error(target, &e))
}

/// Removes `dir`'s temp files for `target` whose writer process no longer exists.
fn remove_stale_temps(dir: &Path, target: &Path) {
    let Some(name) = target.file_name() else { return };
    let mut prefix = OsString::from(".");
    prefix.push(name);
    prefix.push(TMP_MARK);
    let prefix = prefix.to_string_lossy().into_owned();
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let file = e.file_name();
        let file = file.to_string_lossy();
        let Some(pid) = file.strip_prefix(&prefix).and_then(|p| p.parse::<u32>().ok()) else { continue };
        if pid != std::process::id() && !process_exists(pid) {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// Whether a process `pid` exists (Linux: its `/proc` entry; elsewhere assume it does).
fn process_exists(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new("/proc").join(pid.to_string()).exists()
    } else {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_hidden_and_carry_the_pid() {
        assert_eq!(temp_name(Path::new("d/out.json"), 42), PathBuf::from("d/.out.json.schedlab-tmp.42"));
    }

    #[test]
    fn a_symlink_is_followed_and_stays_a_link() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real.txt");
        let link = d.path().join("link.txt");
        std::os::unix::fs::symlink("real.txt", &link).unwrap();
        write_file(&link, b"hello").unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(fs::read(&real).unwrap(), b"hello");
    }

    #[test]
    fn a_missing_parent_directory_is_an_error_and_nothing_is_created() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("no/such/dir/out.json");
        let e = write_file(&p, b"x").unwrap_err();
        assert!(e.message.contains("does not exist"), "{}", e.message);
        assert!(!d.path().join("no").exists());
        let e = ensure_dir(&d.path().join("no/out")).unwrap_err();
        assert!(e.message.contains("does not exist"), "{}", e.message);
        ensure_dir(&d.path().join("out")).unwrap();
        assert!(d.path().join("out").is_dir());
    }

    #[test]
    fn dev_null_stays_a_device() {
        write_file(Path::new("/dev/null"), b"discarded").unwrap();
        use std::os::unix::fs::FileTypeExt;
        assert!(fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    }

    #[test]
    fn a_full_device_is_an_error() {
        let e = write_file(Path::new("/dev/full"), b"x").unwrap_err();
        assert!(e.message.contains("/dev/full") && e.message.contains("space"), "{}", e.message);
    }

    #[test]
    fn stale_temp_files_of_dead_processes_are_removed_live_ones_kept() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("out.json");
        // A pid above the kernel's pid_max (2^22) never exists.
        let dead = temp_name(&target, 4_194_305);
        let live = temp_name(&target, 1);
        let other = temp_name(&d.path().join("other.json"), 4_194_305);
        for p in [&dead, &live, &other] {
            fs::write(p, b"partial").unwrap();
        }
        write_file(&target, b"done").unwrap();
        assert!(!dead.exists(), "a dead writer's temp file is removed");
        assert!(live.exists(), "a live writer's temp file is kept");
        assert!(other.exists(), "another target's temp file is not touched");
        assert_eq!(fs::read(&target).unwrap(), b"done");
        let left: Vec<_> = fs::read_dir(d.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(left.len(), 3, "{left:?}");
    }
}
