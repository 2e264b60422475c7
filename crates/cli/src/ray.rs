//! `schedlab sweep --ray ADDRESS`: a sweep's runs on a Ray cluster. The points (each
//! carries its workload's text, so any machine of the cluster can run it) go as JSON lines
//! to a Python driver, `PYTHON -m schedlab._ray_driver ADDRESS` (the schedlab Python
//! package, `docs/python.md`, with Ray), which runs them in one Ray task per batch of
//! points per CPU and prints each finished run's row; the table is then built and written
//! exactly as a local sweep's, so the two are byte for byte the same (`docs/sweep.md`).
//!
//! The driver is this process's child in its own process group: SIGINT/SIGTERM here end it
//! (and only it) by that group, and the sweep reports the interruption.

use crate::{signals, CliError};
use schedlab_sweep::{Point, Row, Table};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// Runs `points` on the Ray cluster at `address` (`HOST:PORT`, `auto` or `local`) through
/// the driver run by `python`; `done` is called as each run's row arrives.
pub fn run(points: &[Point], address: &str, python: &Path, done: &dyn Fn()) -> Result<Table, CliError> {
    for p in points {
        p.spec().map_err(|e| CliError::from(p.locate(e)))?;
    }
    let mut child = Command::new(python)
        .args(["-m", "schedlab._ray_driver", address])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0)
        .spawn()
        .map_err(|e| CliError::input(format!("--python {}: cannot start it: {e}", python.display())))?;
    let input: String = points.iter().map(|p| serde_json::to_string(p).expect("points serialise") + "\n").collect();
    let mut stdin = child.stdin.take().expect("piped");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let stdout = child.stdout.take().expect("piped");
    let pid = child.id();
    let finished = std::sync::atomic::AtomicBool::new(false);
    let rows = std::thread::scope(|s| {
        s.spawn(|| stop_on_signal(pid, &finished));
        let rows = read_rows(BufReader::new(stdout), points.len(), done);
        finished.store(true, std::sync::atomic::Ordering::SeqCst);
        rows
    });
    let _ = writer.join();
    finish(&mut child, python, points.len(), rows)
}

/// Reads the driver's rows (in any order) into their points' places.
fn read_rows(out: impl BufRead, n: usize, done: &dyn Fn()) -> Result<Vec<Option<Row>>, String> {
    let mut rows: Vec<Option<Row>> = vec![None; n];
    for line in out.lines() {
        let line = line.map_err(|e| format!("reading the Ray driver's output: {e}"))?;
        let (i, row) = parse_done(&line).ok_or_else(|| format!("the Ray driver printed `{line}`"))?;
        let slot = rows.get_mut(i).ok_or_else(|| format!("the Ray driver returned run {i} of {n}"))?;
        *slot = Some(row);
        done();
    }
    Ok(rows)
}

/// One line of the driver's output, `{"i": index, "row": [[column, value], …]}`.
fn parse_done(line: &str) -> Option<(usize, Row)> {
    let mut v: serde_json::Value = serde_json::from_str(line).ok()?;
    let i = usize::try_from(v.get("i")?.as_u64()?).ok()?;
    let row = serde_json::from_value(v.get_mut("row")?.take()).ok()?;
    Some((i, row))
}

/// Ends the driver's process group (the driver and anything it started in it) once a
/// stopping signal arrives, unless the driver finished first.
fn stop_on_signal(pid: u32, finished: &std::sync::atomic::AtomicBool) {
    while !finished.load(std::sync::atomic::Ordering::SeqCst) {
        if signals::stop_requested() {
            // SAFETY: kill(2) on the process group this process created for its own child.
            unsafe { libc::kill(-(pid as libc::pid_t), libc::SIGTERM) };
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The table once the driver has exited successfully with a row for every point.
fn finish(
    child: &mut Child,
    python: &Path,
    n: usize,
    rows: Result<Vec<Option<Row>>, String>,
) -> Result<Table, CliError> {
    let status = child.wait().map_err(|e| CliError::input(format!("waiting for the Ray driver: {e}")))?;
    if signals::stop_requested() {
        return Err(signals::interrupted("running the sweep on Ray"));
    }
    if !status.success() {
        return Err(CliError::input(format!(
            "the Ray driver (`{} -m schedlab._ray_driver`) failed ({status}); its message is above. It needs the \
             schedlab Python package and Ray in that interpreter (docs/python.md; --python names another)",
            python.display()
        )));
    }
    let rows = rows.map_err(CliError::input)?;
    let missing = rows.iter().filter(|r| r.is_none()).count();
    if missing > 0 {
        return Err(CliError::input(format!("the Ray driver returned {} of {n} runs", n - missing)));
    }
    Ok(Table::from_rows(rows.into_iter().flatten().collect()))
}
