//! Every output the `schedlab` command writes goes through here: stdout, stderr notes and
//! files (`--out`, `--trace`, `--html`, `--plots`, `-o`).
//!
//! - **stdout**: a closed pipe (`EPIPE`, e.g. `schedlab run … | head -1`) ends the process
//!   quietly with status [`EXIT_BROKEN_PIPE`] (141 = 128 + SIGPIPE, what a shell reports for
//!   a command killed by SIGPIPE); any other write error (a full disk: `> /dev/full`) is an
//!   error with status 1. Nothing panics.
//! - **files**: a symlink is followed and the file it names is written; an existing target
//!   written in place; a regular file (or a new one) is replaced atomically: written to a
//!   temp file `.NAME.schedlab-tmp.PID` beside it, then renamed over it (for a `NAME` too
//!   long for that to fit in a file name, its first bytes and a hash of all of it instead:
//!   [`temp_name`]). A missing parent
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

/// The longest file name Linux file systems take (`NAME_MAX`, in bytes).
const NAME_MAX: usize = 255;

/// Decimal digits of the largest pid (a `u32`).
const PID_DIGITS: usize = 10;

/// What every temp file of `target` starts with: `.NAME.schedlab-tmp.`, or, when that and a
/// pid would pass [`NAME_MAX`] (a `NAME` of 231 bytes or more), `.PREFIX~HASH.schedlab-tmp.`
/// with as much of `NAME` as fits and a hash of all of it (64-bit FNV-1a, 16 hex digits),
/// so two long names that share their first bytes still have temp files of their own.
fn temp_prefix(target: &Path) -> OsString {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let name = target.file_name().unwrap_or_default().as_bytes();
    let mut out = b".".to_vec();
    if 1 + name.len() + TMP_MARK.len() + PID_DIGITS <= NAME_MAX {
        out.extend_from_slice(name);
    } else {
        let keep = NAME_MAX - (1 + 1 + 16 + TMP_MARK.len() + PID_DIGITS);
        out.extend_from_slice(&name[..keep]);
        out.extend_from_slice(format!("~{:016x}", fnv1a(name)).as_bytes());
    }
    out.extend_from_slice(TMP_MARK.as_bytes());
    OsString::from_vec(out)
}

/// 64-bit FNV-1a (Fowler, Noll, Vo): a stable hash of a name, the same in every process.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// The temp file name for `target` written by process `pid`: `.NAME.schedlab-tmp.PID`
/// (see [`temp_prefix`] for long names); at most [`NAME_MAX`] bytes.
pub fn temp_name(target: &Path, pid: u32) -> PathBuf {
    let mut name = temp_prefix(target);
    name.push(pid.to_string());
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
    if target.file_name().is_none() {
        return;
    }
    use std::os::unix::ffi::OsStrExt;
    let prefix = temp_prefix(target);
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let file = e.file_name();
        let pid = file.as_bytes().strip_prefix(prefix.as_bytes()).and_then(|p| std::str::from_utf8(p).ok());
        let Some(pid) = pid.and_then(|p| p.parse::<u32>().ok()) else { continue };
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

    /// Names of 230–255 bytes once made temp names past 255 bytes ("File name too long").
    #[test]
    fn long_names_get_short_temp_names_and_their_stale_temps_are_removed() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = ("a".repeat(255), format!("{}b", "a".repeat(254)));
        let (ta, tb) = (d.path().join(&a), d.path().join(&b));
        for n in [1, 229, 230, 240, 255] {
            let name = temp_name(&d.path().join("é".repeat(n / 2) + &"x".repeat(n % 2)), u32::MAX);
            assert!(name.file_name().unwrap().len() <= NAME_MAX, "{n}: {name:?}");
        }
        assert_ne!(temp_name(&ta, 7), temp_name(&tb, 7), "a shared prefix, still apart");
        let (dead_a, dead_b) = (temp_name(&ta, 4_194_305), temp_name(&tb, 4_194_305));
        fs::write(&dead_a, b"partial").unwrap();
        fs::write(&dead_b, b"partial").unwrap();
        write_file(&ta, b"done").unwrap();
        assert_eq!(fs::read(&ta).unwrap(), b"done");
        assert!(!dead_a.exists(), "the dead writer's temp file of this target is removed");
        assert!(dead_b.exists(), "another target's temp file is not touched");
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
