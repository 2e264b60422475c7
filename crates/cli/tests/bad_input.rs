//! Bad input gives a non-zero exit and a message naming file, line, column and field —
//! never a panic. Each case runs the real binary.

use std::process::Command;

fn schedlab(args: &[&str], workload: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.toml");
    std::fs::write(&path, workload).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_schedlab"));
    cmd.arg("run").arg(&path).args(args).arg("--duration").arg("10ms");
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    (out.status.code().unwrap_or(-1), stderr)
}

const OK_TASK: &str = "[[task]]\nname = \"t\"\nprogram = [ { run = \"1ms\" } ]\n";

/// `(case, workload, extra args, expected "line:col", expected field, expected words)`
type Case = (&'static str, &'static str, &'static [&'static str], &'static str, &'static str, &'static str);
const CASES: &[Case] = &[
    (
        "rt priority out of range",
        "[[task]]\nname = \"t\"\npolicy = \"fifo\"\nrt_priority = 100\nprogram = [ { run = \"1ms\" } ]\n",
        &[],
        ":4:15",
        "task[0].rt_priority",
        "outside 1..=99",
    ),
    (
        "rt priority missing",
        "[[task]]\nname = \"t\"\npolicy = \"rr\"\nprogram = [ { run = \"1ms\" } ]\n",
        &[],
        ":3:10",
        "task[0].rt_priority",
        "missing required field",
    ),
    (
        "policy parameter without a policy that takes it",
        "[[task]]\nname = \"t\"\npolicy = \"fifo\"\nrt_priority = 5\nruntime = \"1ms\"\nprogram = [ { run = \"1ms\" } ]\n",
        &[],
        ":5:11",
        "task[0].runtime",
        "takes no `runtime`",
    ),
    (
        "deadline runtime above its deadline",
        "[[task]]\nname = \"t\"\npolicy = \"deadline\"\nruntime = \"5ms\"\ndeadline = \"2ms\"\nperiod = \"10ms\"\nprogram = [ { run = \"1ms\" } ]\n",
        &[],
        ":3:",
        "task[0]",
        "exceeds the deadline",
    ),
    (
        "deadline admission refused",
        "[[task]]\nname = \"t\"\ncount = 3\npolicy = \"deadline\"\nruntime = \"7ms\"\nperiod = \"10ms\"\nprogram = [ { run = \"1ms\" } ]\n",
        &["--machine", "smp2", "--sched", "eevdf"],
        ":4:10",
        "task[0].policy",
        "admission",
    ),
    (
        "deadline under O(1), which has no deadline class",
        "[[task]]\nname = \"t\"\npolicy = \"deadline\"\nruntime = \"1ms\"\nperiod = \"10ms\"\nprogram = [ { run = \"1ms\" } ]\n",
        &["--sched", "o1"],
        ":3:10",
        "task[0].policy",
        "SCHED_DEADLINE does not exist in Linux 2.6's O(1) scheduler",
    ),
    (
        "deadline under ULE, which has no deadline class",
        "[[task]]\nname = \"t\"\npolicy = \"deadline\"\nruntime = \"1ms\"\nperiod = \"10ms\"\nprogram = [ { run = \"1ms\" } ]\n",
        &["--sched", "ule"],
        ":3:10",
        "task[0].policy",
        "FreeBSD has no SCHED_DEADLINE",
    ),
    (
        "set_policy deadline under ULE",
        "[[task]]\nname = \"t\"\nprogram = [ { set_policy = \"deadline\", runtime = \"1ms\", period = \"10ms\" } ]\n",
        &["--sched", "ule@current"],
        ":3:",
        "task `t` set_policy",
        "FreeBSD has no SCHED_DEADLINE",
    ),
    (
        "unknown set_policy",
        "[[task]]\nname = \"t\"\nprogram = [ { set_policy = \"sporadic\" } ]\n",
        &[],
        ":3:",
        "task[0].program[0].set_policy",
        "unknown policy",
    ),
    ("malformed syntax", "[[task]\nname = \"t\"\n", &[], ":1:", "(syntax)", ""),
    (
        "unknown field",
        "[[task]]\nname = \"t\"\nnicety = 3\nprogram = [ { run = \"1ms\" } ]\n",
        &[],
        ":3:1",
        "task[0].nicety",
        "unknown field",
    ),
    (
        "unknown op field",
        "[[task]]\nname = \"t\"\nprogram = [ { run = \"1ms\", speed = 2 } ]\n",
        &[],
        ":3:",
        "task[0].program[0].speed",
        "unknown field",
    ),
    (
        "missing unit",
        "[[task]]\nname = \"t\"\nprogram = [ { run = 5 } ]\n",
        &[],
        ":3:21",
        "task[0].program[0].run",
        "missing unit",
    ),
    (
        "missing unit in string",
        "[[task]]\nname = \"t\"\nprogram = [ { sleep = \"5\" } ]\n",
        &[],
        ":3:23",
        "task[0].program[0].sleep",
        "missing unit",
    ),
    (
        "negative duration",
        "[[task]]\nname = \"t\"\nprogram = [ { run = \"-5ms\" } ]\n",
        &[],
        ":3:",
        "task[0].program[0].run",
        "negative",
    ),
    (
        "unknown group",
        "[[group]]\nname = \"web\"\n[[task]]\nname = \"t\"\ngroup = \"db\"\nprogram = [ { run = \"1ms\" } ]\n",
        &[],
        ":5:",
        "task[0].group",
        "no `[[group]]` named `db` (web)",
    ),
    (
        "group cycle",
        "[[group]]\nname = \"a\"\nparent = \"b\"\n[[group]]\nname = \"b\"\nparent = \"a\"\n[[task]]\nname = \"t\"\nprogram = [ { run = \"1ms\" } ]\n",
        &[],
        ":3:",
        "group[0].parent",
        "its own ancestor",
    ),
    (
        "unknown parent group",
        "[[group]]\nname = \"a\"\nparent = \"zz\"\n[[task]]\nname = \"t\"\nprogram = [ { run = \"1ms\" } ]\n",
        &[],
        ":3:",
        "group[0].parent",
        "no group named `zz`",
    ),
    (
        "cpu.weight out of range",
        "[[group]]\nname = \"a\"\nweight = 10001\n[[task]]\nname = \"t\"\nprogram = [ { run = \"1ms\" } ]\n",
        &[],
        ":3:",
        "group[0].weight",
        "outside 1..=10000",
    ),
    (
        "slice too short",
        "[[task]]\nname = \"t\"\nslice = \"50us\"\nprogram = [ { run = \"1ms\" } ]\n",
        &[],
        ":3:",
        "task[0].slice",
        "outside 100us..=100ms",
    ),
    (
        "set_slice too long",
        "[[task]]\nname = \"t\"\nprogram = [ { set_slice = \"200ms\" } ]\n",
        &[],
        ":3:",
        "task[0].program[0].set_slice",
        "outside 100us..=100ms",
    ),
    (
        "unknown version in schedulers",
        "schedulers = [\"eevdf\", \"eevdf@6.7\"]\n[[task]]\nname = \"t\"\nprogram = [ { run = \"1ms\" } ]\n",
        &[],
        ":1:24",
        "schedulers[1]",
        "tunable `version`: `6.7` is not one of 6.6, 6.12 or 6.18",
    ),
    (
        "unknown scheduler in schedulers",
        "schedulers = [\"cfss\"]\n[[task]]\nname = \"t\"\nprogram = [ { run = \"1ms\" } ]\n",
        &[],
        ":1:15",
        "schedulers[0]",
        "unknown scheduler `cfss`",
    ),
    (
        "session nice out of range",
        "[[session]]\nname = \"s\"\nnice = -21\n[[task]]\nname = \"t\"\nsession = \"s\"\nprogram = [ { run = \"1ms\" } ]\n",
        &[],
        ":3:",
        "session[0].nice",
        "outside -20..=19",
    ),
    (
        "undefined pipe",
        "[[task]]\nname = \"t\"\nprogram = [ { send = \"nope\", bytes = 10 } ]\n",
        &[],
        ":3:",
        "task[0].program[0]",
        "undefined pipe `nope`",
    ),
    (
        "undefined mutex",
        "[[task]]\nname = \"t\"\nprogram = [ { lock = \"m\" } ]\n",
        &[],
        ":3:",
        "task[0].program[0]",
        "undefined mutex `m`",
    ),
    (
        "undefined barrier",
        "[[barrier]]\nname = \"b\"\nparties = 2\n[[task]]\nname = \"t\"\nprogram = [ { barrier = \"c\" } ]\n",
        &[],
        ":6:",
        "task[0].program[0]",
        "undefined barrier `c`",
    ),
    (
        "affinity outside the machine",
        "[[task]]\nname = \"t\"\naffinity = \"0-9\"\nprogram = [ { run = \"1ms\" } ]\n",
        &["--machine", "smp4"],
        ":3:",
        "task[0].affinity",
        "outside the machine",
    ),
    (
        "nice out of range",
        "[[task]]\nname = \"t\"\nnice = 25\nprogram = [ { run = \"1ms\" } ]\n",
        &[],
        ":3:",
        "task[0].nice",
        "outside -20..=19",
    ),
    (
        "fork of an unknown task",
        "[[task]]\nname = \"t\"\nprogram = [ { fork = \"ghost\" } ]\n",
        &[],
        ":3:",
        "task[0].program[0].fork",
        "no task named",
    ),
    (
        "unknown distribution",
        "[[task]]\nname = \"t\"\nprogram = [ { run = { dist = \"zipf\", mean = \"1ms\" } } ]\n",
        &[],
        ":3:",
        "task[0].program[0].run.dist",
        "unknown distribution",
    ),
    (
        "unknown parameter",
        "[[task]]\nname = \"t\"\ncount = \"$n_threads\"\nprogram = [ { run = \"1ms\" } ]\n",
        &[],
        ":3:",
        "task[0].count",
        "unknown parameter",
    ),
];

#[test]
fn each_bad_input_names_file_line_column_and_field() {
    for (case, text, args, at, field, words) in CASES {
        let (code, err) = schedlab(args, text);
        assert_ne!(code, 0, "{case}: accepted");
        assert!(err.contains("w.toml") && err.contains(at), "{case}: no location {at} in: {err}");
        assert!(err.contains(&format!("field `{field}`")), "{case}: no field {field} in: {err}");
        assert!(err.contains(words), "{case}: no `{words}` in: {err}");
    }
}

#[test]
fn unknown_scheduler_tunable_machine_and_param() {
    let (code, err) = schedlab(&["--sched", "bfs"], OK_TASK);
    assert_eq!(code, 2);
    assert!(err.contains("unknown scheduler `bfs`") && err.contains("cfs"), "{err}");
    let (code, err) = schedlab(&["--sched", "cfs", "--set", "sched_latncy_ns=5"], OK_TASK);
    assert_eq!(code, 2);
    assert!(err.contains("unknown tunable `sched_latncy_ns`") && err.contains("sched_latency_ns"), "{err}");
    let (code, err) = schedlab(&["--machine", "cray-1"], OK_TASK);
    assert_eq!(code, 2);
    assert!(err.contains("unknown machine"), "{err}");
    let (code, err) = schedlab(&["--param", "groups=4"], OK_TASK);
    assert_eq!(code, 2);
    assert!(err.contains("no parameter `groups`"), "{err}");
    let (code, err) = schedlab(&["--sched", "ule", "--set", "version=12"], OK_TASK);
    assert_eq!(code, 2);
    assert!(err.contains("`version`") && err.contains("current"), "{err}");
    for (set, words) in [
        ("version=6.7", "6.6, 6.12 or 6.18"),
        ("DELAY_DEQUEUE=2", "expected 0/1"),
        ("PICK_BUDDY=1", "does not exist in fair.c v6.12"),
        ("base_slice_ns=10", "outside its range"),
    ] {
        let (code, err) = schedlab(&["--sched", "eevdf", "--set", "version=6.12", "--set", set], OK_TASK);
        assert_eq!(code, 2, "{set}");
        assert!(err.contains(words), "{set}: {err}");
    }
    let (code, err) = schedlab(&["--sample", "1ns"], OK_TASK);
    assert_eq!(code, 2);
    assert!(err.contains("limit exceeded") && err.contains("samples"), "{err}");
}

/// `--sched host` runs on this machine: a machine of another size is refused up front with
/// exit status 2, and `--set` (the kernel's tunables are not schedlab's to change) too.
#[test]
fn a_host_run_refuses_another_machine_and_tunables() {
    let cpus = schedlab_run::load_machine("host").unwrap().nr_cpus();
    let other = if cpus == 8 { "smp4" } else { "smp8" };
    let (code, err) = schedlab(&["--sched", "host", "--machine", other], OK_TASK);
    assert_eq!(code, 2);
    assert!(err.contains("--machine host"), "{err}");
    let (code, err) = schedlab(&["--sched", "host", "--machine", "host", "--set", "base_slice_ns=3ms"], OK_TASK);
    assert_eq!(code, 2);
    assert!(err.contains("--set base_slice_ns"), "{err}");
}

/// A `[[change]]` naming a task that does not exist, or changing nothing, is an error
/// with its location.
#[test]
fn bad_change_tables() {
    let w = format!("{OK_TASK}[[change]]\nat = \"1s\"\ntasks = \"nobody\"\nset_nice = 3\n");
    let (code, err) = schedlab(&[], &w);
    assert_eq!(code, 2);
    assert!(err.contains("change[0].tasks") && err.contains("no task named `nobody`"), "{err}");
    let w = format!("{OK_TASK}[[change]]\nat = \"1s\"\ntasks = \"t\"\n");
    let (code, err) = schedlab(&[], &w);
    assert_eq!(code, 2);
    assert!(err.contains("set_affinity") && err.contains("change[0]"), "{err}");
}

#[test]
fn zero_cpu_machine_file_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.toml");
    std::fs::write(&m, "name = \"empty\"\n[topology]\ncores_per_llc = 0\n").unwrap();
    let (code, err) = schedlab(&["--machine", m.to_str().unwrap()], OK_TASK);
    assert_eq!(code, 2);
    assert!(err.contains("m.toml:3:17") && err.contains("topology.cores_per_llc"), "{err}");
}

#[test]
fn a_good_run_writes_json_with_the_schema_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.toml");
    std::fs::write(&path, OK_TASK).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["run", path.to_str().unwrap(), "--format", "json", "--machine", "up"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for k in ["schema_version", "scheduler", "machine", "seed", "sim_ns", "events", "tasks", "cpus", "locks", "host"] {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    let t = &v["tasks"][0];
    for k in [
        "name",
        "tid",
        "runtime_ns",
        "wait_ns",
        "sleep_ns",
        "switches_voluntary",
        "switches_involuntary",
        "migrations",
        "exit_ns",
    ] {
        assert!(t.get(k).is_some(), "task missing {k}");
    }
    assert!(t["runtime_ns"].as_u64().unwrap() >= 1_000_000);
}

/// `bench` is a benchmark, not a test: only its smallest row runs here, from a directory
/// that is not the repository root (the periodic-200 workload is built in).
#[test]
fn bench_runs_its_tiny_row_from_any_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["bench", "--tiny"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let row = stdout.lines().find(|l| l.starts_with("periodic-200, smp8, eevdf")).expect("the tiny row");
    let events: u64 = row.split_whitespace().nth(4).unwrap().parse().unwrap();
    assert!(events > 1000, "{row}");
}
