//! `schedlab calibrate --quick` on this host (its own test binary, so no other test runs
//! beside it): the machine file loads, describes this host's CPUs, has every cost within a
//! sane range, and runs a workload. Ranges only: the values depend on the host and its load.

use schedlab_calibrate::derive::{SANE, UNMEASURED};
use schedlab_machine::parse_machine;
use schedlab_sim::parse_duration;
use std::process::Command;

fn schedlab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab")).args(args).output().expect("schedlab runs")
}

#[test]
fn quick_calibration_writes_a_machine_file_that_loads_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("host.toml");
    let path = file.to_str().unwrap();
    let out = schedlab(&["calibrate", "--quick", "-o", path, "--name", "testbox"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("calibrate: null syscall") && stderr.contains("wrote"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("context_switch"));

    let text = std::fs::read_to_string(&file).unwrap();
    let m = parse_machine(path, &text).unwrap();
    assert_eq!(m.name, "testbox");
    // /proc/cpuinfo lists the online CPUs: a source independent of sysfs.
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap();
    let online = cpuinfo.lines().filter(|l| l.starts_with("processor")).count();
    assert_eq!(m.nr_cpus(), online);
    assert!((1..=10_000).contains(&m.hz));
    for (key, value) in m.costs.fields() {
        let Some(&(_, lo, hi)) = SANE.iter().find(|s| s.0 == key) else {
            assert!(key == "numa_scaled" || UNMEASURED.contains(&key), "{key} has no sane range");
            continue;
        };
        let v = if key == "pipe_byte_ps" { value.parse().unwrap() } else { parse_duration(&value).unwrap().0 };
        assert!((lo..=hi).contains(&v), "{key} = {value} outside {lo}..={hi} ns\n{text}");
    }

    let wl = format!("{}/../../examples/workloads/nice-pair.toml", env!("CARGO_MANIFEST_DIR"));
    let run = schedlab(&["run", &wl, "--machine", path, "--duration", "1s"]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    assert!(String::from_utf8_lossy(&run.stdout).contains("nice0"));
}
