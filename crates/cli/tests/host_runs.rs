//! Real runs on this machine's kernel (`--sched host`). They need root (tracefs, negative
//! nice is not used) and fail with a clear message where the environment cannot run them.
//! Real runs are noisy: only robust facts are asserted, and each run lasts at most 2 s.

use schedlab_metrics::RunRecord;
use schedlab_run::RunSpec as Job;
use schedlab_sim::Ns;
use std::collections::BTreeMap;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Real runs share two CPUs: one at a time within this test binary.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn require_root() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "host-run tests need root (tracefs, the sched tracepoints); CI runs them as root"
    );
}

fn host_job(text: &str, secs_ms: u64) -> Job {
    let mut j = Job::load("host-test.toml", text, Some("host"), &[], Some(Ns::from_ms(secs_ms))).unwrap();
    j.sched = "host".into();
    j
}

fn run(j: &Job) -> RunRecord {
    j.run(&mut |_| true).unwrap_or_else(|e| panic!("host run failed: {e}"))
}

/// Fails (never skips) when the run could not trace.
fn assert_traced(r: &RunRecord) {
    let t = &r.host.real.as_ref().expect("a host run").tracing;
    assert!(t.enabled, "tracing unavailable: {:?} — these tests need root and tracefs", t.unavailable);
}

const NICE_PAIR: &str = r#"
[[task]]
name = "nice0"
affinity = [0]
program = [ { loop = "forever", do = [ { run = "100ms" } ] } ]
[[task]]
name = "niced"
nice = 19
affinity = [0]
program = [ { loop = "forever", do = [ { run = "100ms" } ] } ]
"#;

/// Two hogs pinned to one CPU, nice 0 and nice 19: the kernel splits the CPU by load weight
/// (`kernel/sched/core.c: sched_prio_to_weight`, 1024 and 15), so nice 0 gets
/// 1024/1039 ≈ 98.56 % of what the pair got — whatever other processes took from that CPU.
#[test]
fn nice_pair_shares_the_cpu_by_weight() {
    require_root();
    let _s = serial();
    let r = run(&host_job(NICE_PAIR, 2000));
    let rt = |n: &str| r.tasks.iter().find(|t| t.name == n).unwrap().runtime_ns as f64;
    let share = rt("nice0") / (rt("nice0") + rt("niced"));
    let want = 1024.0 / (1024.0 + 15.0);
    assert!((share - want).abs() < 0.02, "nice-0 share {share:.4}, weights predict {want:.4}");
    assert!(rt("niced") > 0.0, "the nice-19 hog never ran");
    assert_eq!(r.end_reason.as_str(), "time_limit");
}

/// A hog in a group at `cpu.max = 20ms/100ms` on the host: the run writes the group's
/// quota and period (`cpu.cfs_quota_us`, `cpu.cfs_period_us`) and the kernel's bandwidth
/// control holds the hog near 20 % of a CPU over 1 s (10 periods; the first period's
/// phase and the ticks' granularity allow a few ms either way).
#[test]
fn a_cpu_max_group_is_limited_on_the_host_too() {
    require_root();
    let _s = serial();
    let w = "[[group]]\nname = \"lim\"\nmax = \"20ms/100ms\"\n[[task]]\nname = \"hog\"\ngroup = \"lim\"\nprogram = [ { run = \"2s\" } ]\n";
    let r = run(&host_job(w, 1000));
    let rt = r.tasks.iter().find(|t| t.name == "hog").unwrap().runtime_ns;
    assert!((150_000_000..=260_000_000).contains(&rt), "the limited hog ran {rt} ns of 1 s");
}

const PING_PONG: &str = r#"
[[pipe]]
name = "ab"
[[pipe]]
name = "ba"
[[task]]
name = "ping"
program = [ { loop = 500, do = [ { send = "ab", bytes = 1 }, { recv = "ba", bytes = 1 } ] }, { fork = "kid", count = 2 }, "wait" ]
[[task]]
name = "pong"
program = [ { loop = 500, do = [ { recv = "ab", bytes = 1 }, { send = "ba", bytes = 1 } ] }, { sleep = "3ms" } ]
[[task]]
name = "kid"
template = true
program = [ { run = "4ms" }, { sleep = "2ms" }, { run = "1ms" } ]
"#;

/// Keys of a JSON object, recursively for the objects the schema nests.
fn keys(v: &serde_json::Value) -> Vec<String> {
    v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default()
}

/// A host run's record has the simulation's schema; the figures, the HTML report, the
/// Perfetto trace and the timeline are drawn from it; the trace's switches are ours.
#[test]
fn host_record_has_the_simulation_schema_and_feeds_every_report() {
    require_root();
    let _s = serial();
    let mut j = host_job(PING_PONG, 2000);
    j.sample = Some(Ns::from_ms(2));
    j.trace = true;
    let r = run(&j);
    assert_traced(&r);
    assert_eq!(r.end_reason.as_str(), "all_exited");
    let mut sim_job = j.clone();
    sim_job.sched = "cfs".into();
    let sim = sim_job.run(&mut |_| true).unwrap();
    let (h, s) = (serde_json::to_value(&r).unwrap(), serde_json::to_value(&sim).unwrap());
    // `warnings` is there only when a run has something to say (a host run under load may
    // warn that its trace and procfs disagree), in either backend.
    let optional = |k: &Vec<String>| k.iter().filter(|k| k.as_str() != "warnings").cloned().collect::<Vec<_>>();
    assert_eq!(optional(&keys(&h)), optional(&keys(&s)), "top-level keys");
    // A task's `costs` (what the simulated machine's cost models charged) is simulator-only.
    let sim_task: Vec<String> = keys(&s["tasks"][0]).into_iter().filter(|k| k != "costs").collect();
    assert_eq!(keys(&h["tasks"][0]), sim_task, "task keys");
    assert_eq!(keys(&h["series"]), keys(&s["series"]), "series keys");
    assert_eq!(h["scheduler"]["name"], "host");
    assert!(!h["kernel"]["release"].as_str().unwrap().is_empty());
    // Every task of the workload ran, and in 500 round trips ping or pong found its pipe
    // empty at least once. How often depends on the host's placement (a host that packs the
    // pair on one CPU blocks on nearly every read, one that spreads it on far fewer: 207 of
    // 1000 reads were seen), so only that robust lower bound is asserted.
    assert_eq!(r.tasks.len(), 4);
    for t in &r.tasks {
        assert!(t.runtime_ns > 0 && t.exit_ns.is_some(), "{t:?}");
    }
    let pp: u64 = r.tasks[..2].iter().map(|t| t.switches_voluntary).sum();
    assert!(pp >= 1, "ping+pong voluntary switches {pp}");
    let figs = schedlab_report::plots::figures(std::slice::from_ref(&r)).unwrap();
    for name in ["runtime.svg", "threads-per-cpu.svg", "latency-cdf.svg"] {
        assert!(figs.iter().any(|f| f.name == name), "no {name}");
    }
    let html = schedlab_report::html::report_with("host", std::slice::from_ref(&r), &figs, None).unwrap();
    assert!(html.contains("kid.1") && html.contains("<svg"));
    let bytes = schedlab_report::perfetto::encode(&r).expect("a trace");
    assert!(bytes.len() > 1000);
    let trace = r.trace.as_ref().unwrap();
    let switches_in =
        trace.events.iter().filter(|e| matches!(e, schedlab_probe::ProbeEvent::Switch { next: Some(_), .. })).count();
    assert!(switches_in >= r.tasks.len(), "{switches_in} switches in");
    // Which of our tasks is visible over the whole run depends on what else the host ran
    // (on a loaded machine none runs half of any 8 ms cell), so render the window of our
    // tasks' longest run: there it must show.
    let (from, to) = longest_run_of_ours(trace);
    let tl = schedlab_report::timeline::timeline(trace, from, to, 10);
    assert!(tl.contains("cpu0") && r.tasks.iter().any(|t| tl.contains(&t.name)), "{tl}");
    // Perfetto's own schema decodes the real run's trace: the switches into each CPU are
    // those of the event log, the thread names ours.
    let root = format!("{}/../..", env!("CARGO_MANIFEST_DIR"));
    let python = format!("{root}/target/test-venv/bin/python");
    assert!(std::path::Path::new(&python).exists(), "{python} missing: run scripts/setup-test-deps.sh");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("host.pftrace");
    std::fs::write(&path, &bytes).unwrap();
    let out = Command::new(&python)
        .arg(format!("{root}/scripts/perfetto_decode.py"))
        .arg(&path)
        .arg(r.sim_ns.to_string())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut want = vec![0u64; trace.nr_cpus];
    for e in &trace.events {
        if let schedlab_probe::ProbeEvent::Switch { cpu, next: Some(_), .. } = e {
            want[*cpu] += 1;
        }
    }
    for (cpu, n) in want.iter().enumerate() {
        assert_eq!(v["switches"][cpu.to_string()].as_u64().unwrap_or(0), *n, "cpu {cpu}");
    }
    for t in &r.tasks {
        let pid = schedlab_report::perfetto::pid_of(t.tid).to_string();
        assert_eq!(v["threads"][&pid].as_str().unwrap(), t.name);
    }
}

/// With the tracepoints off (as on a kernel or account without tracefs), the run says so
/// and reports procfs figures only: no latencies, no series, no trace.
#[test]
fn without_tracepoints_the_run_says_so_and_skips_those_metrics() {
    require_root();
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w.toml");
    std::fs::write(&w, PING_PONG).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["run", w.to_str().unwrap(), "--sched", "host", "--format", "json", "--sample", "5ms"])
        .args(["--duration", "1s"])
        .env(schedlab_host::NO_TRACE_ENV, "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("no sched tracepoints") && err.contains("not measured"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["host"]["tracing"]["enabled"], false);
    assert!(v.get("series").is_none(), "a series without a trace");
    assert!(v["latency_cdf"].as_array().unwrap().is_empty());
    for t in v["tasks"].as_array().unwrap() {
        assert!(t["runtime_ns"].as_u64().unwrap() > 0, "procfs run time missing: {t}");
        assert_eq!(t["wakeup_latency_ns"]["max"], 0);
        assert_eq!(t["sleep_ns"], 0, "sleep time invented without a trace: {t}");
    }
}

/// Processes whose process group is `pgid` (the binary runs in its own group); zombies
/// (dead, waiting for their parent to reap them) too unless `living_only`.
fn group_members_of(pgid: i32, living_only: bool) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        // Fields after the `(comm)`: state ppid pgrp …
        let rest = &stat[stat.rfind(')').map_or(0, |i| i + 2)..];
        if living_only && rest.starts_with('Z') && all_threads_dead(pid) {
            continue;
        }
        if rest.split_whitespace().nth(2).and_then(|g| g.parse().ok()) == Some(pgid) {
            out.push(pid);
        }
    }
    out
}

/// A thread-group leader shows `Z` while its other threads may still run or exit.
fn all_threads_dead(pid: i32) -> bool {
    let Ok(rd) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return true };
    rd.flatten().all(|t| {
        let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
        stat.rfind(')').is_none_or(|i| stat[i + 2..].starts_with('Z') || stat[i + 2..].starts_with('X'))
    })
}

fn group_members(pgid: i32) -> Vec<i32> {
    group_members_of(pgid, false)
}

/// Tracing instances of process `pid` still present in any tracefs mount. Once the run has
/// ended (`ended`), the private tracefs mount it may have made must be gone too; while it
/// runs, that mount is where its instance lives (when tracefs was not mounted before).
fn instances_of(pid: u32, ended: bool) -> Vec<String> {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    let mut left = Vec::new();
    for l in mounts.lines().filter(|l| l.split_whitespace().nth(2) == Some("tracefs")) {
        let dir = l.split_whitespace().nth(1).unwrap();
        if let Ok(rd) = std::fs::read_dir(format!("{dir}/instances")) {
            for e in rd.flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                if n.starts_with(&format!("schedlab-{pid}-")) {
                    left.push(n);
                }
            }
        }
        if ended {
            assert!(!dir.contains(&format!("schedlab-tracefs-{pid}")), "our tracefs mount {dir} is still there");
        }
    }
    left
}

/// The window `(from, to)` of the longest stretch one of our tasks ran on a CPU, from a
/// switch into it to the next switch on that CPU.
fn longest_run_of_ours(trace: &schedlab_metrics::Trace) -> (u64, u64) {
    let mut started: std::collections::BTreeMap<usize, u64> = std::collections::BTreeMap::new();
    let mut best = (0, 0);
    for e in &trace.events {
        if let schedlab_probe::ProbeEvent::Switch { time, cpu, next, .. } = e {
            let (t, c) = (time.0, *cpu);
            if let Some(from) = started.remove(&c) {
                if t - from > best.1 - best.0 {
                    best = (from, t);
                }
            }
            if next.is_some() {
                started.insert(c, t);
            }
        }
    }
    assert!(best.1 > best.0, "no run of ours in the trace");
    best
}

/// Waits until the run of `pid` has created its tracing instance. On a loaded machine
/// the set-up can take seconds, so poll (bounded) instead of asserting after a fixed sleep.
fn wait_until_tracing(pid: u32) {
    for _ in 0..400 {
        if instances_of(pid, false).len() == 1 {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the run of pid {pid} created no tracing instance within 20 s");
}

const SLEEPERS_AND_HOGS: &str = r#"
[[mutex]]
name = "m"
[[group]]
name = "g"
weight = 50
[[group]]
name = "inner"
parent = "g"
[[task]]
name = "hog"
count = 2
group = "g"
program = [ { loop = "forever", do = [ { run = "50ms" } ] } ]
[[task]]
name = "sleeper"
count = 3
group = "inner"
program = [ { loop = "forever", do = [ { sleep = "1s" } ] } ]
[[task]]
name = "locker"
count = 2
program = [ { loop = "forever", do = [ { lock = "m" }, { sleep = "300ms" }, { unlock = "m" } ] } ]
[[task]]
name = "proc"
count = 2
process = true
program = [ { fork = "thread", count = 1 }, { loop = "forever", do = [ { lock = "m" }, { run = "5ms" }, { unlock = "m" }, { sleep = "200ms" } ] } ]
[[task]]
name = "thread"
template = true
program = [ { loop = "forever", do = [ { run = "20ms" }, { sleep = "20ms" } ] } ]
"#;

/// Runs the binary in its own process group on `text`, sends `sig` after `after`, and
/// checks that it exits promptly, leaves no process in its group and no tracing instance.
fn stops_cleanly(text: &str, sig: Option<nix::sys::signal::Signal>, after: Duration) -> (i32, String, String) {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w.toml");
    std::fs::write(&w, text).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["run", w.to_str().unwrap(), "--sched", "host", "--format", "json", "--duration", "10s"])
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    std::thread::sleep(after);
    if let Some(sig) = sig {
        wait_until_tracing(pid);
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), sig).unwrap();
    }
    #[allow(clippy::disallowed_methods)] // a real run: wall-clock time is what is measured
    let start = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(start.elapsed() < Duration::from_secs(3), "took {:?} to stop", start.elapsed());
    assert_eq!(group_members(pid as i32), Vec::<i32>::new(), "processes left in the run's group");
    assert_eq!(instances_of(pid, true), Vec::<String>::new(), "tracing instance left behind");
    assert_eq!(schedlab_host::cgroup::groups_of(pid), Vec::<std::path::PathBuf>::new(), "cgroups left behind");
    let code = out.status.code().unwrap_or(-1);
    (code, String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Ctrl-C and SIGTERM stop a run with hogs, sleepers and futex waiters: the measured part
/// is still reported (`interrupted`), nothing of the run remains.
#[test]
fn ctrl_c_and_sigterm_stop_everything_and_restore_tracefs() {
    require_root();
    let _s = serial();
    for sig in [nix::sys::signal::Signal::SIGINT, nix::sys::signal::Signal::SIGTERM] {
        let (code, out, err) = stops_cleanly(SLEEPERS_AND_HOGS, Some(sig), Duration::from_millis(700));
        assert_eq!(code, 128 + sig as i32, "{sig}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{sig}: {e}: {out}"));
        assert_eq!(v["end_reason"], "interrupted", "{sig}");
        assert_eq!(v["tasks"].as_array().unwrap().len(), 11, "{sig}");
        assert_eq!(v["host"]["task_processes"], 2, "{sig}");
        assert!(v["sim_ns"].as_u64().unwrap() < 5_000_000_000, "{sig}");
    }
}

/// SIGKILL cannot be handled: the task processes die with schedlab (their parent-death
/// signal), and the next run removes the tracing instance the killed one left.
#[test]
fn after_sigkill_no_process_remains_and_the_next_run_removes_the_instance() {
    use std::os::unix::process::CommandExt;
    require_root();
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w.toml");
    std::fs::write(&w, SLEEPERS_AND_HOGS).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["run", w.to_str().unwrap(), "--sched", "host", "--duration", "10s"])
        .process_group(0)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    std::thread::sleep(Duration::from_millis(700));
    wait_until_tracing(pid);
    child.kill().unwrap();
    child.wait().unwrap();
    // Orphaned zombies are init's to reap; what must not remain is a living process.
    let mut left = group_members_of(pid as i32, true);
    for _ in 0..100 {
        if left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
        left = group_members_of(pid as i32, true);
    }
    assert_eq!(left, Vec::<i32>::new(), "task processes outlived a killed schedlab");
    let r = run(&host_job(PING_PONG, 1000));
    assert_traced(&r);
    assert_eq!(instances_of(pid, true), Vec::<String>::new(), "the killed run's instance was not removed");
}

/// A task that fails (here: forking past the thread cap while 1024 others sleep) ends the
/// run with an error, and every other thread is stopped and the instance removed.
#[test]
fn a_failing_task_ends_the_run_and_everything_is_cleaned_up() {
    require_root();
    let _s = serial();
    let forker = r#"
[[group]]
name = "forkers"
[[task]]
name = "forker"
group = "forkers"
program = [ { loop = "forever", do = [ { fork = "sleepy", count = 1 } ] } ]
[[task]]
name = "sleepy"
template = true
program = [ { sleep = "60s" } ]
"#;
    let (code, _, err) = stops_cleanly(forker, None, Duration::ZERO);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("a task failed") && err.contains("limit exceeded"), "{err}");
}

/// `[[group]]`s are cgroups of the `cpu` controller: the kernel shares a CPU between
/// groups by weight first and between a group's tasks second (`kernel/sched/fair.c:
/// calc_group_shares`, `CONFIG_FAIR_GROUP_SCHED`). One hog in a group of weight 200 and two
/// in a group of weight 100, all on one CPU: 2/3 of what the three got goes to the first
/// (1/3 without groups), 1/6 to each of the others. The groups are gone after the run.
#[test]
fn groups_share_the_cpu_by_cgroup_weight_and_are_removed() {
    require_root();
    let _s = serial();
    let text = r#"
[[group]]
name = "heavy"
weight = 200
[[group]]
name = "light"
[[task]]
name = "h"
group = "heavy"
affinity = [0]
program = [ { loop = "forever", do = [ { run = "100ms" } ] } ]
[[task]]
name = "l"
count = 2
group = "light"
affinity = [0]
program = [ { loop = "forever", do = [ { run = "100ms" } ] } ]
"#;
    let r = run(&host_job(text, 1500));
    let rt = |name: &str| r.tasks.iter().find(|t| t.name == name).unwrap().runtime_ns as f64;
    let total = rt("h") + rt("l.0") + rt("l.1");
    let (h, l0, l1) = (rt("h") / total, rt("l.0") / total, rt("l.1") / total);
    assert!((h - 2.0 / 3.0).abs() < 0.05, "heavy group's share {h:.3}, expected 0.667 (0.333 without groups)");
    assert!((l0 - l1).abs() < 0.05, "the light group's hogs got {l0:.3} and {l1:.3}");
    let notes = &r.host.real.as_ref().unwrap().notes;
    assert!(notes.iter().any(|n| n.contains("cpu.shares")), "{notes:?}");
    assert_eq!(schedlab_host::cgroup::groups_of(std::process::id()), Vec::<std::path::PathBuf>::new());
}

/// `[[change]]`, `set_nice` and `set_affinity` act on the real threads. CPU 0: two hogs, and
/// at 500 ms a `[[change]]` renices `b` to 19, so `b` gets half of CPU 0 before and 15/1039
/// after (measured from the trace in windows clear of the change's moment). CPU 1: `c` renices itself to 19 (`set_nice`), and `mover`,
/// started pinned to CPU 0, moves itself there (`set_affinity`): it migrates, and beside a
/// nice-19 hog it waits for little of its 200 ms (as long as it runs beside a nice-0 one).
#[test]
fn change_set_nice_and_set_affinity_act_on_the_threads() {
    require_root();
    let _s = serial();
    let text = r#"
[[task]]
name = "a"
affinity = [0]
program = [ { loop = "forever", do = [ { run = "50ms" } ] } ]
[[task]]
name = "b"
affinity = [0]
program = [ { loop = "forever", do = [ { run = "50ms" } ] } ]
[[change]]
at = "500ms"
tasks = "b"
set_nice = 19
[[task]]
name = "c"
affinity = [1]
program = [ { set_nice = 19 }, { loop = "forever", do = [ { run = "50ms" } ] } ]
[[task]]
name = "mover"
affinity = [0]
start = "100ms"
program = [ { set_affinity = "1" }, { run = "200ms" } ]
"#;
    let mut j = host_job(text, 1500);
    j.trace = true;
    let r = run(&j);
    assert_traced(&r);
    let t = |n: &str| r.tasks.iter().find(|t| t.name == n).unwrap();
    // CPU 0 from 1 s on, well after the change: the controller applies it when it wakes, which
    // a loaded host may delay, so the window leaves it half a second. Before the change the
    // pair split CPU 0 evenly; after it `b` (nice 19) gets 15/1039 of what the two get.
    let trace = r.trace.as_ref().expect("a traced run");
    let on0 = run_time_between(trace, 0, 1_000_000_000, 1_500_000_000);
    let (a0, b0) = (on0.get(&t("a").tid).copied().unwrap_or(0), on0.get(&t("b").tid).copied().unwrap_or(0));
    let b_share = b0 as f64 / (a0 + b0).max(1) as f64;
    assert!(
        a0 > 0 && b_share < 0.1,
        "b's share of CPU 0 after the change {b_share:.3} (a {a0} ns, b {b0} ns): nice 19 predicts 0.014"
    );
    let before = run_time_between(trace, 0, 0, 450_000_000);
    let (a1, b1) = (before.get(&t("a").tid).copied().unwrap_or(0), before.get(&t("b").tid).copied().unwrap_or(0));
    assert!(
        b1 > 0 && a1 > 0 && b1 * 4 > a1 && a1 * 4 > b1,
        "before the change a {a1} ns, b {b1} ns: equal nice predicts an even split"
    );
    let m = t("mover");
    let exit = m.exit_ns.unwrap_or_else(|| panic!("mover did not finish: {m:?}"));
    assert!(m.migrations >= 1, "{m:?}");
    // While `mover` lived, what CPU 1 gave the run's two tasks there (other sessions' work
    // on this shared machine takes its own part, whoever of the two it delays).
    let on1 = run_time_between(trace, 1, m.start_ns, exit);
    let (mv, c) = (on1.get(&m.tid).copied().unwrap_or(0), on1.get(&t("c").tid).copied().unwrap_or(0));
    let share = mv as f64 / (mv + c) as f64;
    assert!(share > 0.9, "mover got {share:.3} of CPU 1 beside the reniced c (1024/1039 = 0.986; 0.5 at nice 0)");
}

/// Each task's time on `cpu` within `[from, to)`, from the trace's switches.
fn run_time_between(trace: &schedlab_metrics::Trace, cpu: usize, from: u64, to: u64) -> BTreeMap<usize, u64> {
    let mut out = BTreeMap::new();
    let mut cur: Option<(usize, u64)> = None;
    for e in &trace.events {
        if let schedlab_probe::ProbeEvent::Switch { time, cpu: c, next, .. } = e {
            if *c != cpu {
                continue;
            }
            if let Some((task, since)) = cur.take() {
                let (a, b) = (since.max(from), time.0.min(to));
                *out.entry(task).or_insert(0) += b.saturating_sub(a);
            }
            cur = next.map(|n| (n, time.0));
        }
    }
    if let Some((task, since)) = cur {
        *out.entry(task).or_insert(0) += to.saturating_sub(since.max(from));
    }
    out
}

/// `yield` is `sched_yield` and `spin` busy-waits on the wall clock. Two hogs on CPU 0 that
/// yield after every 100 µs of work take turns (EEVDF's `yield_task_fair` moves the yielder's
/// vruntime to its deadline, so the other is picked): each is switched out about once per
/// yield, where the tick and the 1.4 ms base slice alone would switch them a few dozen times.
/// Beside a hog, a 100 ms `spin` ends after 100 ms of wall time having had about half of it
/// on the CPU, where a 100 ms `run` would need all 100 ms of CPU time.
#[test]
fn yield_and_spin_act_as_the_kernel_does() {
    require_root();
    let _s = serial();
    let text = r#"
[[task]]
name = "y"
count = 2
affinity = [0]
program = [ { loop = 200, do = [ { run = "100us" }, "yield" ] } ]
[[task]]
name = "hog"
affinity = [1]
program = [ { loop = "forever", do = [ { run = "50ms" } ] } ]
[[task]]
name = "spinner"
affinity = [1]
program = [ { spin = "100ms" } ]
"#;
    let r = run(&host_job(text, 1500));
    let t = |n: &str| r.tasks.iter().find(|t| t.name == n).unwrap();
    for name in ["y.0", "y.1"] {
        let y = t(name);
        assert!(y.exit_ns.is_some(), "{y:?}");
        // Half the yields: without yielding the tick and the slice would switch them about
        // ten times in their 40 ms on CPU 0; other load on the host (a job at any nice
        // level shares CPU 0 with them) takes some turns, so not every yield shows.
        assert!(
            y.switches_involuntary >= 100,
            "{name} was switched out {} times in 200 yields",
            y.switches_involuntary
        );
    }
    let s = t("spinner");
    assert!(s.exit_ns.is_some() && s.runtime_ns < 80_000_000, "spinner: {s:?}");
}

/// Durations drawn from a distribution come from the simulator's seeded `workload` stream:
/// with one task the host draws the same sequence as the simulation of the same seed, so
/// the CPU time it asks for is the same (within what the host adds around it: thread set-up
/// and the kernel's work for it), and another seed asks for a clearly different total.
#[test]
fn distributions_draw_the_simulations_sequence() {
    require_root();
    let _s = serial();
    let text = r#"
[[task]]
name = "d"
program = [ { loop = 6, do = [ { run = { dist = "exponential", mean = "20ms" } } ] } ]
"#;
    let mut host = host_job(text, 1500);
    host.seed = 7;
    let runtime = |j: &Job| run(j).tasks[0].runtime_ns as f64;
    let mut sim = host.clone();
    sim.sched = "eevdf".into();
    let (sim7, h7) = (runtime(&sim), runtime(&host));
    sim.seed = 8;
    let sim8 = runtime(&sim);
    assert!((sim8 - sim7).abs() > 0.1 * sim7, "seeds 7 and 8 ask for {sim7} and {sim8} ns: pick another seed");
    assert!((h7 - sim7).abs() < 0.03 * sim7, "host {h7} ns, simulation {sim7} ns for seed 7");
}

/// `SCHED_FIFO` on the host (`sched_setattr`): a real-time task preempts the fair ones on
/// its CPU and runs until it ends (`kernel/sched/rt.c`); fair tasks get only what
/// real-time throttling or the fair server leaves them (50 ms a second by default). One
/// task is FIFO from its start, another becomes FIFO with `set_policy`; as fair tasks
/// beside a fair hog they would wait about as long as they run, as FIFO tasks well under half.
#[test]
fn fifo_tasks_run_ahead_of_fair_ones() {
    require_root();
    let _s = serial();
    let text = r#"
[[task]]
name = "fair"
affinity = [0]
program = [ { loop = "forever", do = [ { run = "100ms" } ] } ]
[[task]]
name = "rt"
policy = "fifo"
rt_priority = 10
affinity = [0]
start = "100ms"
program = [ { run = "200ms" } ]
[[task]]
name = "flip"
affinity = [0]
start = "500ms"
program = [ { set_policy = "fifo", rt_priority = 5 }, { run = "200ms" } ]
"#;
    let r = run(&host_job(text, 1500));
    for name in ["rt", "flip"] {
        let t = r.tasks.iter().find(|t| t.name == name).unwrap();
        assert!(t.exit_ns.is_some(), "{name} did not finish its 200 ms: {t:?}");
        assert!(t.runtime_ns >= 200_000_000, "{name}: {t:?}");
        assert!(t.wait_ns * 2 < t.runtime_ns, "{name} waited {} ns for {} ns of run time", t.wait_ns, t.runtime_ns);
    }
}

/// Without privilege (here: the unprivileged user `nobody`, `RLIMIT_NICE` and
/// `RLIMIT_RTPRIO` 0), a negative nice, a FIFO priority and `SCHED_DEADLINE` are refused
/// before anything starts, naming the privilege.
#[test]
fn without_privilege_negative_nice_and_real_time_are_refused_up_front() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    require_root();
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let w = dir.path().join("w.toml");
    let hog = "[[task]]\nname = \"h\"\nprogram = [ { run = \"1ms\" } ]\n";
    for (field, says) in [
        ("nice = -5", "needs privilege (CAP_SYS_NICE or RLIMIT_NICE)"),
        ("policy = \"fifo\"\nrt_priority = 10", "needs privilege (CAP_SYS_NICE, or RLIMIT_RTPRIO ≥ 10"),
        ("policy = \"deadline\"\nruntime = \"1ms\"\nperiod = \"10ms\"", "SCHED_DEADLINE needs privilege"),
    ] {
        std::fs::write(&w, hog.replace("name = \"h\"", &format!("name = \"h\"\n{field}"))).unwrap();
        std::fs::set_permissions(&w, std::fs::Permissions::from_mode(0o644)).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_schedlab"));
        cmd.args(["run", w.to_str().unwrap(), "--sched", "host"]).env("TMPDIR", dir.path()).uid(65534).gid(65534);
        // SAFETY: only async-signal-safe setrlimit calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                let zero = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
                libc::setrlimit(libc::RLIMIT_NICE, &zero);
                libc::setrlimit(libc::RLIMIT_RTPRIO, &zero);
                Ok(())
            });
        }
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{field}: {err}");
        assert!(err.contains(says), "{field}: {err}");
    }
}

/// Tasks that are processes (`process = true`) share the workload's mutex and pipe with
/// threads, fork threads of their own, and are reaped: nothing of the run remains.
#[test]
fn process_tasks_share_objects_and_are_reaped() {
    require_root();
    let _s = serial();
    let w = r#"
[[pipe]]
name = "p"
[[mutex]]
name = "m"
[[task]]
name = "main"
program = [ { fork = "child", count = 3 }, "wait", { lock = "m" }, { unlock = "m" } ]
[[task]]
name = "child"
template = true
process = true
program = [ { lock = "m" }, { run = "2ms" }, { unlock = "m" }, { send = "p", bytes = 10 }, { fork = "grandkid", count = 1 }, "wait" ]
[[task]]
name = "grandkid"
template = true
program = [ { run = "1ms" } ]
[[task]]
name = "reader"
program = [ { recv = "p", bytes = 30 } ]
"#;
    let (code, out, err) = stops_cleanly(w, None, Duration::ZERO);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["end_reason"], "all_exited");
    assert_eq!(v["host"]["task_processes"], 3);
    let tasks = v["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 8);
    for t in tasks {
        assert!(t["runtime_ns"].as_u64().unwrap() > 0 && t["exit_ns"].is_u64(), "{t}");
    }
}

/// Sessions are `setsid` processes; with autogroup on (`sched_autogroup_enabled`), each is a
/// task group of its own (`kernel/sched/autogroup.c`), so one hog alone in its session gets
/// about half of a CPU shared with three hogs of another session; with autogroup off, a
/// quarter (`sched_prio_to_weight`: equal weights).
#[test]
fn sessions_are_setsid_processes_with_their_own_autogroup() {
    require_root();
    let _s = serial();
    let w = r#"
[[task]]
name = "alone"
process = true
session = "a"
affinity = [0]
program = [ { loop = "forever", do = [ { run = "10ms" } ] } ]
[[task]]
name = "crowd"
process = true
session = "b"
affinity = [0]
program = [ { fork = "member", count = 2 }, { loop = "forever", do = [ { run = "10ms" } ] } ]
[[task]]
name = "member"
template = true
program = [ { loop = "forever", do = [ { run = "10ms" } ] } ]
"#;
    let r = run(&host_job(w, 1500));
    let total: u64 = r.tasks.iter().map(|t| t.runtime_ns).sum();
    let alone = r.tasks.iter().find(|t| t.name == "alone").unwrap().runtime_ns as f64 / total as f64;
    let autogroup = std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled").unwrap_or_default();
    if autogroup.trim() == "1" {
        assert!(alone > 0.40, "autogroup on: `alone` got {alone:.3} of the CPU, expected about 1/2");
    } else {
        assert!(alone < 0.35, "autogroup off: `alone` got {alone:.3} of the CPU, expected about 1/4");
    }
    assert_eq!(r.host.real.as_ref().unwrap().task_processes, 2);
}

/// What the host cannot do is refused before anything starts.
#[test]
fn impossible_host_runs_are_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w.toml");
    let refuse = |text: &str, extra: &[&str]| {
        std::fs::write(&w, text).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
            .args(["run", w.to_str().unwrap(), "--sched", "host"])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stdout));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let hog = "[[task]]\nname = \"h\"\nprogram = [ { run = \"1ms\" } ]\n";
    let err = refuse(&format!("machine = \"smp8\"\n{hog}"), &[]);
    assert!(err.contains("smp8") && err.contains("--machine host"), "{err}");
    let err = refuse(hog, &["--duration", "700s"]);
    assert!(err.contains("at most 600"), "{err}");
    let err = refuse(&hog.replace("name = \"h\"", "name = \"h\"\ncount = 2000"), &[]);
    assert!(err.contains("at most 1024"), "{err}");
    let err = refuse(&hog.replace("name = \"h\"", "name = \"h\"\nsession = \"s\""), &[]);
    assert!(err.contains("needs a process of its own") && err.contains("process = true"), "{err}");
    let cpus = schedlab_host::online_cpus();
    let err = refuse(&hog.replace("name = \"h\"", &format!("name = \"h\"\naffinity = [{cpus}]")), &[]);
    assert!(err.contains(&format!("CPU {cpus}")), "{err}");
    // The futex mechanisms upstream lacks are simulation-only, and say so.
    let words = "[[futex]]\nname = \"a\"\n[[futex]]\nname = \"b\"\n";
    let swap = "{ futex_swap = \"a\", expected = 0, wake = \"b\" }";
    let err = refuse(&format!("{words}{}", hog.replace("{ run = \"1ms\" }", swap)), &[]);
    assert!(err.contains("futex_swap") && err.contains("simulation-only"), "{err}");
    let wake = "{ futex_wake = \"a\", current_cpu = true }";
    let err = refuse(&format!("{words}{}", hog.replace("{ run = \"1ms\" }", wake)), &[]);
    assert!(err.contains("simulation-only"), "{err}");
    let err = refuse(&hog.replace("name = \"h\"", "name = \"h\"\nvip = true"), &[]);
    assert!(err.contains("`vip` is simulation-only"), "{err}");
    // With CONFIG_RT_GROUP_SCHED a new cgroup has no real-time runtime: a FIFO task in a
    // group, or one that becomes FIFO there, could not run.
    let rt_groups = schedlab_host::cgroup::cpu_hierarchy().is_ok_and(|h| h.base().join("cpu.rt_runtime_us").exists());
    if rt_groups {
        let grouped =
            format!("[[group]]\nname = \"g\"\n{}", hog.replace("name = \"h\"", "name = \"h\"\ngroup = \"g\""));
        let fifo = grouped.replace("group = \"g\"", "group = \"g\"\npolicy = \"fifo\"\nrt_priority = 1");
        let err = refuse(&fifo, &[]);
        assert!(err.contains("CONFIG_RT_GROUP_SCHED"), "{err}");
        let becomes = grouped.replace("{ run = \"1ms\" }", "{ set_policy = \"rr\", rt_priority = 1 }");
        let err = refuse(&becomes, &[]);
        assert!(err.contains("CONFIG_RT_GROUP_SCHED") && err.contains("line"), "{err}");
    }
    // So are the simulated kernel's switches: the host runs its own kernel.
    let switches = [
        (&["--kernel", "2.6.32"][..], "kernel.version=2.6.32"),
        (&["--delayed-wakeup"], "kernel.delayed_wakeup=1"),
        (&["--lb-narrow-lock"], "kernel.lb_narrow_lock=1"),
        (&["--set", "futex.vip=0"], "futex.vip=0"),
    ];
    for (flag, switch) in switches {
        let err = refuse(hog, flag);
        assert!(err.contains(switch) && err.contains("simulation-only"), "{flag:?}: {err}");
    }
}

/// Plain futex words run for real: a request/response pair over `futex_wake` + `futex_wait`
/// completes every round (a lost wakeup would hang it until the run's end).
#[test]
fn a_futex_word_pair_runs_for_real() {
    require_root();
    let _s = serial();
    let text = r#"
[[futex]]
name = "req"
[[futex]]
name = "resp"
[[task]]
name = "client"
program = [ { loop = 2000, do = [ { futex_set = "req", value = 1 }, { futex_wake = "req" }, { futex_wait = "resp", expected = 0 }, { futex_set = "resp", value = 0 } ] }, { futex_set = "req", value = 1 }, { futex_wake = "req" } ]
[[task]]
name = "server"
program = [ { futex_wait = "req", expected = 0 }, { loop = 2000, do = [ { futex_set = "req", value = 0 }, { futex_set = "resp", value = 1 }, { futex_wake = "resp" }, { futex_wait = "req", expected = 0 } ] } ]
"#;
    let r = run(&host_job(text, 2000));
    assert_eq!(r.end_reason, schedlab_probe::EndReason::AllExited, "the pair finished every round");
}

/// `compare --sched cfs,host` runs the simulation and the real run side by side, with the
/// difference per measure.
#[test]
fn compare_puts_simulation_and_reality_side_by_side() {
    require_root();
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w.toml");
    std::fs::write(&w, NICE_PAIR).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["compare", w.to_str().unwrap(), "--sched", "eevdf,host", "--duration", "1s"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let header = text.lines().find(|l| l.contains("eevdf") && l.contains("host")).unwrap_or_else(|| panic!("{text}"));
    assert!(header.contains("host − eevdf"), "{text}");
    let share = text.lines().find(|l| l.starts_with("nice0 ×1 run share")).unwrap();
    assert!(share.contains(" pp"), "{share}");
}

/// A timer shared between tasks (rt-app's timer resource, `shared = true`) is one timeline:
/// each use advances it by the period, whichever thread or process uses it. Twelve uses of
/// a 10 ms timer (two threads and a process, four each) cannot all return before the
/// twelfth period since the first start — `clock_nanosleep(TIMER_ABSTIME)` never returns
/// early — while twelve per-task timelines would end after four periods.
#[test]
fn a_shared_timer_paces_threads_and_processes_together() {
    require_root();
    let _s = serial();
    let body =
        "program = [ { loop = 4, do = [ { run = \"100us\" }, { timer = \"10ms\", ref = \"tick\", shared = true } ] } ]";
    let text = format!("[[task]]\nname = \"t\"\ncount = 2\n{body}\n[[task]]\nname = \"p\"\nprocess = true\n{body}\n");
    let r = run(&host_job(&text, 2000));
    assert_traced(&r);
    assert_eq!(r.end_reason, schedlab_probe::EndReason::AllExited);
    let first_start = r.tasks.iter().map(|t| t.start_ns).min().unwrap();
    let last_exit = r.tasks.iter().filter_map(|t| t.exit_ns).max().unwrap();
    // 1 ms for the trace clock's reading of the start against the task's own.
    assert!(last_exit - first_start >= 119_000_000, "{} ns: the timer was not shared", last_exit - first_start);
    let unique = run(&host_job(&text.replace("shared = true", "shared = false"), 2000));
    let ends: Vec<u64> = unique.tasks.iter().map(|t| t.exit_ns.unwrap() - t.start_ns).collect();
    assert!(ends.iter().all(|&e| e >= 39_000_000), "each task's own timer takes four periods: {ends:?}");
}
