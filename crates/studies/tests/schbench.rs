//! The schbench workload (`examples/workloads/schbench.toml`) does what schbench does, and
//! the `schbench` study reads its spans.

use schedlab_run::{RunRecord, RunSpec};
use schedlab_sim::Ns;

const SCHBENCH: &str = include_str!("../../../examples/workloads/schbench.toml");

/// A run without costs or noise, so every duration is the workload's own.
fn run(machine: &str, workers: u32, sched: &str, ms: u64) -> RunRecord {
    let params = vec![("workers".to_string(), workers.to_string())];
    let mut spec = RunSpec::load("schbench.toml", SCHBENCH, Some(machine), &params, Some(Ns::from_ms(ms))).unwrap();
    spec.sched = sched.to_string();
    spec.set("machine.cost_model", "none").unwrap();
    spec.set("machine.noise", "none").unwrap();
    spec.check = true;
    spec.run(&mut |_| true).unwrap()
}

fn span<'a>(r: &'a RunRecord, name: &str) -> &'a schedlab_metrics::SpanRecord {
    r.spans.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no span {name}"))
}

/// One worker and a CPU each: a request is schbench's usleep (100 µs) and ten matrix
/// multiplications of 1134 µs — 11 440 µs, as the source's median — one after another
/// (1 s / 11.44 ms = 87 of them), each after one wakeup and one posting round.
#[test]
fn a_request_is_the_usleep_and_the_math() {
    let r = run("smp2", 1, "cfs", 1000);
    let req = span(&r, "request");
    assert_eq!((req.latency_ns.p50, req.latency_ns.max, req.min_ns), (11_440_000, 11_440_000, 11_440_000));
    assert_eq!(req.count, 87);
    let wakeups = span(&r, "wakeup").count;
    assert!((req.count..=req.count + 1).contains(&wakeups), "{wakeups} wakeups for {} requests", req.count);
    assert!(span(&r, "wake_batch").count >= wakeups, "every wakeup follows a posting round");
}

/// More workers than CPUs: the requests are bounded by the CPUs (2 CPUs / 11.34 ms of work
/// per request = 176 a second) and every scheduler keeps both CPUs busy (work-conserving),
/// so the workers queue and their wakeups wait.
#[test]
fn overloaded_workers_are_bounded_by_the_cpus() {
    for sched in ["cfs", "eevdf@6.6", "eevdf"] {
        let r = run("smp2", 3, sched, 2000);
        let per_s = span(&r, "request").count as f64 / 2.0;
        assert!((150.0..=176.4).contains(&per_s), "{sched}: {per_s} requests/s");
        let user: u64 = r.cpus.iter().map(|c| c.user_ns).sum();
        assert!(user as f64 >= 0.95 * 2.0 * r.sim_ns as f64, "{sched}: CPUs idle with work queued");
        assert!(span(&r, "wakeup").latency_ns.p99 > 100_000, "{sched}: a woken worker waits for a CPU");
    }
}

/// The study compares the configurations the issue names, on the workload's spans.
#[test]
fn the_study_runs_every_configuration_on_the_spans() {
    let suite = schedlab_studies::suites::suite("schbench").unwrap();
    let res = suite.run(1, Some(Ns::from_ms(300)), None).unwrap();
    assert_eq!(
        res[0].labels,
        ["cfs 5.15", "eevdf 6.6", "eevdf 6.12", "eevdf 6.18", "ext:simple", "ext:central", "ext:locality"]
    );
    let row = |m: &str| res[0].rows.iter().find(|(n, _)| n == m).unwrap().1.clone();
    for (label, v) in res[0].labels.iter().zip(row("wakeup p99 µs")) {
        assert!(v.parse::<f64>().is_ok(), "{label}: wakeup p99 {v}");
    }
    for (label, r) in res[0].labels.iter().zip(&res[0].records) {
        assert!(span(r, "request").count > 0, "{label}: no request closed");
    }
}
