//! The `cfs-eevdf`, `rt-latency` and `cgroup-bandwidth` studies run end to end (briefly) and show what the fair,
//! rt and deadline classes predict. (Moved with the policy tests from `crates/cli/tests`:
//! `eevdf_oracle.rs` and `rt_deadline.rs` now live in `crates/run/tests`, below the
//! studies.)

use schedlab_sim::Ns;

const MS: u64 = 1_000_000;

fn task<'a>(r: &'a schedlab_metrics::RunRecord, name: &str) -> &'a schedlab_metrics::TaskRecord {
    r.tasks.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no task {name}"))
}

/// The `cfs-eevdf` study runs end to end (briefly here) and shows what changed: a 7 ms
/// base or custom slice halves the four hogs' switches, and autogroup makes two sessions
/// share equally whatever their nice values.
#[test]
fn the_cfs_eevdf_study_shows_what_changed() {
    let suite = schedlab_studies::suites::suite("cfs-eevdf").unwrap();
    let results = suite.run(1, Some(Ns::from_secs(2)), None).unwrap();
    let text = schedlab_studies::suite::suite_text(&suite, &results);
    for name in ["four-hogs", "short-slice", "sleeper", "autogroup-nice"] {
        assert!(text.contains(name), "{name} missing:\n{text}");
    }
    let row = |exp: &str, metric: &str| -> Vec<f64> {
        let r = results.iter().find(|r| r.name == exp).unwrap();
        r.rows.iter().find(|(n, _)| n == metric).unwrap().1.iter().map(|v| v.parse().unwrap()).collect()
    };
    // cfs, 6.6, 6.12, 6.18: one switch per 4 ms tick (500 in 2 s); 7 ms: one per two ticks.
    let sw = row("four-hogs", "involuntary switches");
    assert!(sw[..4].iter().all(|&s| (s - 500.0).abs() <= 2.0), "{sw:?}");
    assert!(sw[4..6].iter().all(|&s| (s - 250.0).abs() <= 2.0), "{sw:?}");
    let share = row("autogroup-nice", "nice 0 share %");
    assert!((share[0] - 50.0).abs() < 1.0 && (share[2] - 50.0).abs() < 1.0, "{share:?}");
    assert!((share[1] - 90.3).abs() < 1.0 && (share[3] - 90.3).abs() < 1.0, "{share:?}");
}

/// The `rt-latency` study runs end to end (2 s here) and shows what the classes predict:
/// a FIFO thread among fair hogs waits only for the wakeup path; as a fair thread beside a
/// FIFO hog it runs about 5 % under throttling and the fair server and nothing without
/// either; among rt threads its latency is bounded by the higher-priority burst (2 ms) from
/// v6.12, while before it the rt throttling window (50 ms) stops it too.
#[test]
fn rt_latency_study_shows_class_order_throttling_and_the_fair_server() {
    let suite = schedlab_studies::suites::suite("rt-latency").unwrap();
    let res = suite.run(1, Some(Ns::from_secs(2)), None).unwrap();
    let cyc = |r: &schedlab_metrics::RunRecord| task(r, "cyclic").clone();
    for r in &res[0].records {
        assert!(cyc(r).wakeup_latency_ns.p99 < 50_000, "{}: p99 {}", r.scheduler.name, cyc(r).wakeup_latency_ns.p99);
    }
    for (label, r) in res[1].labels.iter().zip(&res[1].records) {
        let share = cyc(r).runtime_ns as f64 / r.sim_ns as f64;
        if label.contains("none") {
            assert!(share < 0.01, "{label}: {share}");
        } else {
            assert!((0.03..0.08).contains(&share), "{label}: {share}");
        }
    }
    for (label, r) in res[2].labels.iter().zip(&res[2].records) {
        let max = cyc(r).wakeup_latency_ns.max;
        if label.contains("throttle") {
            assert!(max > 40 * MS, "{label}: max {max}");
        } else {
            assert!(max < 2 * MS + 200_000, "{label}: max {max}");
        }
    }
}

/// The `cgroup-bandwidth` study runs end to end (2 s here) and shows what
/// `sched-bwc.rst` describes: 10ms/50ms gives the group 20 % of a CPU; the same share as
/// 100ms/500ms lets a request wait up to the longer period's throttled part (period −
/// quota = 400 ms against 40 ms); a 10 ms burst lets a 25 ms request through a 20 ms quota
/// with no throttling, where without it every request that outlasts the quota is throttled.
#[test]
fn cgroup_bandwidth_study_shows_share_period_and_burst() {
    let suite = schedlab_studies::suites::suite("cgroup-bandwidth").unwrap();
    let res = suite.run(1, Some(Ns::from_secs(2)), None).unwrap();
    let cell = |exp: usize, metric: &str, col: usize| -> f64 {
        res[exp].rows.iter().find(|(n, _)| n == metric).unwrap().1[col].parse().unwrap()
    };
    // Columns: short and long period under 6.18, then under 5.15.
    for col in 0..4 {
        assert!((cell(0, "group CPU share %", col) - 20.0).abs() < 0.5, "{}", res[0].labels[col]);
    }
    for (short, long) in [(0, 1), (2, 3)] {
        let (s, l) = (cell(0, "request max µs", short), cell(0, "request max µs", long));
        assert!(s <= 40_000.0 + 15_000.0 && l > 300_000.0, "{}: max {s} µs vs {l} µs", res[0].labels[long]);
    }
    for (none, burst) in [(0, 1), (2, 3)] {
        assert!(cell(1, "nr_throttled", none) > 0.0 && cell(1, "nr_throttled", burst) == 0.0);
        assert!(cell(1, "request max µs", burst) < 26_000.0, "25 ms of work, never throttled");
        assert!(cell(1, "request mean µs", none) > cell(1, "request mean µs", burst));
    }
}

/// The `eas` study runs end to end (2 s here) and shows what `sched-energy.rst` and
/// `sched-util-clamp.rst` predict where the kernel's code decides it: the CPU-bound mix
/// overutilizes the machine, so `find_energy_efficient_cpu` places no wakeup and EAS on
/// and off run the same schedule (the same energy to the nanojoule); under `performance`
/// every cluster runs at its top OPP, costing more than schedutil; the top-app cgroup's
/// `cpu.uclamp.min` shortens the frames.
#[test]
fn eas_study_shows_overutilized_fallback_governor_and_boost() {
    let suite = schedlab_studies::suites::suite("eas").unwrap();
    let res = suite.run(1, Some(Ns::from_secs(2)), None).unwrap();
    let cell = |exp: usize, metric: &str, label: &str| -> f64 {
        let col = res[exp].labels.iter().position(|l| l == label).unwrap();
        res[exp].rows.iter().find(|(n, _)| n == metric).unwrap().1[col].parse().unwrap()
    };
    use schedlab_studies::suites::eas::{BOOST_618, EAS_618, OFF_618, PERF_618};
    assert_eq!(cell(1, "feec placements", EAS_618), 0.0);
    assert!(cell(1, "overutilized set", EAS_618) >= 1.0);
    assert_eq!(cell(1, "active energy mJ", EAS_618), cell(1, "active energy mJ", OFF_618));
    assert!(cell(0, "feec placements", EAS_618) > 100.0, "the light mix is placed by energy");
    assert!(cell(0, "active energy mJ", PERF_618) > cell(0, "active energy mJ", EAS_618));
    assert_eq!(cell(0, "big mean MHz", PERF_618), 2802.0, "performance: the X1s' top OPP");
    assert!(cell(0, "frame p50 ms", BOOST_618) < cell(0, "frame p50 ms", EAS_618));
}
