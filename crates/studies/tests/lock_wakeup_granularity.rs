//! The `lock-wakeup-granularity` study runs end to end at a small scale and shows the
//! mechanism the paper relies on: a larger wakeup granularity means fewer wakeup
//! preemptions.

mod figs;
use schedlab_sim::Ns;

#[test]
fn the_wakeup_granularity_study_runs_and_fewer_wakeups_preempt_at_larger_granularity() {
    let mut suite = schedlab_studies::suites::suite("lock-wakeup-granularity").unwrap();
    // Small: 2 hackbench groups, 300 ms of web serving.
    for x in &mut suite.experiments {
        for c in &mut x.configs {
            if x.name == "hackbench" {
                c.params.push(("groups".into(), "2".into()));
            }
        }
    }
    let results = suite.run(1, Some(Ns::from_ms(300)), None).unwrap();
    let text = schedlab_studies::suite::suite_text(&suite, &results);
    let row = |exp: &str, metric: &str| -> Vec<f64> {
        let r = results.iter().find(|r| r.name == exp).unwrap();
        let vals = &r.rows.iter().find(|(n, _)| n == metric).unwrap_or_else(|| panic!("{metric}:\n{text}")).1;
        vals.iter().map(|v| v.parse().unwrap_or_else(|_| panic!("{metric} = {v}:\n{text}"))).collect()
    };
    assert_eq!(row("apache", "wakeup granularity ns"), [4e6, 8e6, 12e6, 16e6], "1x..4x of 4 ms on 8 CPUs");
    let rps = row("apache", "requests/s");
    assert!(rps.iter().all(|&x| x > 10_000.0), "{text}");
    // A wakee preempts only when it leads by more than the granularity.
    let invol = row("apache", "involuntary switches");
    assert!(invol[3] < invol[0], "{text}");
    // Every request needs at least its 50 µs of service.
    assert!(row("apache", "latency p50 us").iter().all(|&l| l >= 50.0), "{text}");
    assert_eq!(row("hackbench", "wakeup granularity ns"), [4e6, 8e6]);
    assert!(row("hackbench", "completion ms").iter().all(|&c| c > 0.0), "hackbench completes:\n{text}");
    // The paper's figures: requests/s and rq-lock traffic against the granularity (in ms,
    // not raw ns), hackbench at 1x and 2x.
    let f = figs::figures("lock-wakeup-granularity", &results);
    let m = figs::meta(&figs::named(&f, "apache-requests.svg").svg);
    assert_eq!(m[0]["x_unit"], "duration");
    assert_eq!(m[0]["series"][0]["points"], 4);
    assert_eq!(m[0]["series"][0]["last"].as_f64().unwrap(), rps[3]);
    let svg = &figs::named(&f, "apache-requests.svg").svg;
    assert!(figs::texts(svg).iter().any(|t| t.ends_with(" ms")) && figs::no_raw_ns(svg), "granularity ticks in ms");
    let m = figs::meta(&figs::named(&f, "apache-rq-locks.svg").svg);
    assert_eq!(figs::series(&m, 0), ["schedule() rq locks", "involuntary switches"]);
    let m = figs::meta(&figs::named(&f, "hackbench.svg").svg);
    assert_eq!((m[0]["kind"].as_str(), m[0]["y_unit"].as_str()), (Some("bars"), Some("duration")));
    let finding = schedlab_studies::suites::finding("lock-wakeup-granularity", &results).unwrap();
    assert!(finding.conclusion.contains("most requests/s at"), "{finding:?}");
}
