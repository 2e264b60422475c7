//! Helpers shared by the CLI's tests: specs from inline workload text, probes that record
//! events.

#![allow(dead_code)]
use schedlab_metrics::RunRecord;
use schedlab_probe::{Probe, ProbeEvent};
use schedlab_run::RunSpec;
use schedlab_sim::Ns;
use std::sync::Arc;

/// A job from inline workload text on the noiseless machine (`--noise none`: the tests
/// assert what the kernel predicts, exactly); invariants are checked after every event.
pub fn job(text: &str, machine: &str, sched: &str, secs: u64, sets: &[(&str, &str)]) -> RunSpec {
    let mut j = RunSpec::load("test.toml", text, Some(machine), &[], Some(Ns::from_secs(secs))).unwrap();
    j.set("machine.noise", "none").unwrap();
    j.sched = sched.into();
    j.sets = sets.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    j.check = true;
    j
}

pub fn run(j: &RunSpec) -> RunRecord {
    j.run(&mut |_| true).unwrap()
}

pub fn task<'a>(r: &'a RunRecord, name: &str) -> &'a schedlab_metrics::TaskRecord {
    r.tasks.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no task {name}"))
}

/// Records `sched_switch` events.
#[derive(Default)]
pub struct Switches(pub Vec<(Ns, usize, Option<usize>, Option<usize>)>);
impl Probe for Switches {
    fn event(&mut self, ev: &ProbeEvent) {
        if let ProbeEvent::Switch { time, cpu, prev, next, .. } = *ev {
            self.0.push((time, cpu, prev, next));
        }
    }
}

/// Runs a job with a custom probe; returns the trace hash.
pub fn run_with_probe(j: &RunSpec, probe: &mut dyn Probe) -> u64 {
    let opts = schedlab_run::RunOptions { probe: Some(probe), ..Default::default() };
    let r = j.run_with(opts, &mut |_| true).unwrap().record;
    u64::from_str_radix(&r.trace_hash, 16).unwrap()
}

/// Lengths of the uninterrupted runs of task `t` on `cpu` (switch-in to switch-out).
pub fn bursts(sw: &Switches, cpu: usize, t: usize) -> Vec<Ns> {
    let mut out = Vec::new();
    let mut since = None;
    for &(time, c, prev, next) in &sw.0 {
        if c != cpu {
            continue;
        }
        if prev == Some(t) {
            if let Some(s) = since.take() {
                out.push(time - s);
            }
        }
        if next == Some(t) {
            since = Some(time);
        }
    }
    out
}

pub fn hog(name: &str, nice: i32, cpu: usize) -> String {
    format!(
        "[[task]]\nname = \"{name}\"\nnice = {nice}\naffinity = [{cpu}]\nprogram = [ {{ loop = \"forever\", do = [ {{ run = \"100ms\" }} ] }} ]\n"
    )
}

pub fn sleeper(name: &str, nice: i32, cpu: usize, run: &str, sleep: &str) -> String {
    format!(
        "[[task]]\nname = \"{name}\"\nnice = {nice}\naffinity = [{cpu}]\nprogram = [ {{ loop = \"forever\", do = [ {{ run = \"{run}\" }}, {{ sleep = \"{sleep}\" }} ] }} ]\n"
    )
}

pub fn _arc<T>(t: T) -> Arc<T> {
    Arc::new(t)
}

/// `n` hogs started pinned to CPU 0 and unpinned to `cpus` at once at 1 s (`[[change]]`).
pub fn unpinned_hogs(n: usize, cpus: &str) -> String {
    format!(
        "[[task]]\nname = \"hog\"\ncount = {n}\naffinity = [0]\nprogram = [ {{ loop = \"forever\", do = [ {{ run = \"50ms\" }} ] }} ]\n[[change]]\nat = \"1s\"\ntasks = \"hog\"\nset_affinity = \"{cpus}\"\n"
    )
}

/// Headless Chromium's path (`SCHEDLAB_CHROMIUM`, else the Debian package's); fails, never
/// skips, when it is missing (the set-up script installs it).
pub fn chromium() -> String {
    let path = std::env::var("SCHEDLAB_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        std::path::Path::new(&path).exists(),
        "headless Chromium not found at {path}: run scripts/setup-test-deps.sh (part of .ci/run)"
    );
    path
}

/// The flags every headless Chromium of the tests runs with: no sandbox (root), no GPU, and
/// nothing that reaches the network on its own.
pub const HEADLESS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

/// Renders the HTML file `page` in headless Chromium and checks the screenshot is a page:
/// neither blank nor solid (a rendered report is mostly white with text, tables and lines).
pub fn assert_renders_a_page(page: &std::path::Path) {
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("shot.png");
    let out = std::process::Command::new(chromium())
        .args(HEADLESS)
        .arg("--window-size=1200,1600")
        .arg(format!("--user-data-dir={}", dir.path().join("profile").display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(shot.exists(), "no screenshot: {}", String::from_utf8_lossy(&out.stderr));
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = &buf[..info.buffer_size()];
    let bpp = info.color_type.samples();
    let white = px.chunks(bpp).filter(|p| p.iter().take(3).all(|&c| c >= 250)).count();
    let total = px.len() / bpp;
    assert!(white < total * 99 / 100, "screenshot is blank ({white} of {total} pixels white)");
    assert!(white > total / 3, "screenshot is not a page ({white} of {total} pixels white)");
}
