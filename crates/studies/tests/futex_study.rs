//! The `futex` study runs end to end at a small scale and draws its figures: per round of
//! the request/response pair, a bar per scheduler for each mechanism; the VIP UI thread's
//! waits and missed frames per configuration.

mod figs;
use schedlab_sim::Ns;

#[test]
fn the_futex_study_draws_mechanisms_by_scheduler_and_vip_off_and_on() {
    let mut suite = schedlab_studies::suites::suite("futex").unwrap();
    for c in &mut suite.experiments[0].configs {
        c.params.push(("rounds".into(), "300".into()));
    }
    let results = suite.run(1, Some(Ns::from_ms(400)), None).unwrap();
    let text = schedlab_studies::suite::suite_text(&suite, &results);
    let f = figs::figures("futex", &results);
    let time = figs::named(&f, "futex-swap-time.svg");
    let m = figs::meta(&time.svg);
    assert_eq!(figs::panels(&m), ["round trip", "CPU time (all CPUs)"]);
    assert_eq!(figs::series(&m, 0), ["eevdf", "cfs", "ule"], "{text}");
    assert_eq!((m[0]["kind"].as_str(), m[0]["y_unit"].as_str()), (Some("bars"), Some("duration")));
    assert_eq!(m[0]["y_range"], m[1]["y_range"], "one scale");
    for mech in ["wake+wait", "swap", "swap+cpu", "direct"] {
        assert!(figs::has_text(&time.svg, mech), "{mech}");
    }
    assert!(figs::no_raw_ns(&time.svg));
    let sw = figs::meta(&figs::named(&f, "futex-swap-switches.svg").svg);
    assert_eq!(figs::panels(&sw), ["switches", "migrations"]);
    let vip = figs::named(&f, "futex-vip-waits.svg");
    let m = figs::meta(&vip.svg);
    assert_eq!(figs::series(&m, 0), ["max wait", "total wait"]);
    assert_eq!(m[0]["y_scale"], "log");
    assert!(figs::has_text(&vip.svg, "VIP off") && figs::has_text(&vip.svg, "VIP on"));
    let frames = figs::meta(&figs::named(&f, "futex-vip-frames.svg").svg);
    assert_eq!(figs::series(&frames, 0), ["missed frames", "waits > 100 ms", "waits > 200 ms"]);
    let finding = schedlab_studies::suites::finding("futex", &results).unwrap();
    assert!(finding.conclusion.contains("VIP off") && finding.conclusion.contains("round trip"), "{finding:?}");
}
