//! The `cfs-eevdf` and `rt-latency` studies run end to end (briefly) and show what the fair,
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
