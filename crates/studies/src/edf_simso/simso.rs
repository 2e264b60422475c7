//! SimSo's side: one Python process runs every set (`simso_runner.py`, embedded) with the
//! interpreter of the project's test environment (`scripts/setup-test-deps.sh` installs
//! SimSo 0.8.5 into `target/test-venv`), or `SCHEDLAB_SIMSO_PYTHON`.

use super::{Params, PeriodicTask, Responses};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

const RUNNER: &str = include_str!("simso_runner.py");

/// Whether SimSo ran: its version, or why not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimsoOutcome {
    Ran { version: String },
    Unavailable { why: String },
}

/// The Python to run SimSo with: `SCHEDLAB_SIMSO_PYTHON`, else `test-venv/bin/python` in
/// the first ancestor of this executable (`target/release/…`) or of the working directory
/// (`target/`) that has one. `Err` says where it looked.
pub fn simso_python() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("SCHEDLAB_SIMSO_PYTHON") {
        return Ok(PathBuf::from(p));
    }
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Ok(exe) = std::env::current_exe() {
        roots.extend(exe.ancestors().skip(1).map(PathBuf::from));
    }
    if let Ok(cwd) = std::env::current_dir() {
        roots.push(cwd.join("target"));
    }
    roots.iter().map(|r| r.join("test-venv/bin/python")).find(|p| p.exists()).ok_or_else(|| {
        "no target/test-venv/bin/python (run scripts/setup-test-deps.sh) and SCHEDLAB_SIMSO_PYTHON unset".into()
    })
}

/// Runs `sets` under SimSo's global EDF for `p.duration` each.
pub fn run(p: &Params, sets: &[&Vec<PeriodicTask>]) -> (Option<Vec<Responses>>, SimsoOutcome) {
    match try_run(p, sets) {
        Ok((v, version)) => (Some(v), SimsoOutcome::Ran { version }),
        Err(why) => (None, SimsoOutcome::Unavailable { why }),
    }
}

fn try_run(p: &Params, sets: &[&Vec<PeriodicTask>]) -> Result<(Vec<Responses>, String), String> {
    let python = simso_python()?;
    let req = serde_json::json!({
        "cpus": p.cpus,
        "duration_us": p.duration.0 / 1000,
        "sets": sets.iter().map(|s| s.iter().map(|t| serde_json::json!({
            "period_us": t.period / 1000, "wcet_us": t.wcet / 1000
        })).collect::<Vec<_>>()).collect::<Vec<_>>(),
    });
    let mut child = Command::new(&python)
        .args(["-c", RUNNER])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", python.display()))?;
    let mut stdin = child.stdin.take().expect("piped");
    let body = req.to_string();
    // Write from another thread so a full stdout pipe cannot deadlock the two.
    let writer = std::thread::spawn(move || stdin.write_all(body.as_bytes()));
    let out = child.wait_with_output().map_err(|e| format!("{}: {e}", python.display()))?;
    let _ = writer.join();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no message");
        return Err(format!("{} failed ({}): {last}", python.display(), out.status));
    }
    parse(&out.stdout, sets)
}

/// SimSo's answer: per set, per task, response times in ns (−1: unfinished).
fn parse(stdout: &[u8], sets: &[&Vec<PeriodicTask>]) -> Result<(Vec<Responses>, String), String> {
    let v: serde_json::Value =
        serde_json::from_slice(stdout).map_err(|e| format!("SimSo's output is not JSON: {e}"))?;
    let version = v["simso"].as_str().unwrap_or("?").to_string();
    let bad = || "SimSo's output has the wrong shape".to_string();
    let arr = v["sets"].as_array().ok_or_else(bad)?;
    if arr.len() != sets.len() {
        return Err(bad());
    }
    let mut out = Vec::new();
    for (s, set) in arr.iter().zip(sets) {
        let tasks = s.as_array().ok_or_else(bad)?;
        if tasks.len() != set.len() {
            return Err(bad());
        }
        let mut resp = Vec::new();
        for t in tasks {
            let jobs = t.as_array().ok_or_else(bad)?;
            resp.push(jobs.iter().map(|j| j.as_i64().and_then(|x| u64::try_from(x).ok())).collect());
        }
        out.push(resp);
    }
    Ok((out, version))
}
