//! CFS bandwidth control (`cpu.max`, `cpu.max.burst`; `kernel/sched/fair.c` v5.15 and
//! v6.18, `Documentation/scheduler/sched-bwc.rst`) on the simulator, under both throttle
//! models: v5.15's whole-runqueue throttling (`cfs`) and v6.18's task-based throttling
//! (`eevdf`). Every job runs checked, so the bandwidth invariants (pool within quota +
//! burst, no local slice above a slice, runtime conserved) hold after every event.

mod common;
use common::*;
use schedlab_sim::Ns;

const SCHEDS: [(&str, &[(&str, &str)]); 2] = [("cfs", &[]), ("eevdf", &[("version", "6.18")])];

fn limited(max: &str, burst: Option<&str>, tasks: &str) -> String {
    let burst = burst.map_or(String::new(), |b| format!("burst = \"{b}\"\n"));
    format!("[[group]]\nname = \"lim\"\nmax = \"{max}\"\n{burst}") + tasks
}

fn hog_in(name: &str, group: &str, cpu: usize) -> String {
    format!(
        "[[task]]\nname = \"{name}\"\naffinity = [{cpu}]\ngroup = \"{group}\"\nprogram = [ {{ loop = \"forever\", do = [ {{ run = \"100ms\" }} ] }} ]\n"
    )
}

/// A `cpu.stat` field of a group, from the record's `groups`.
fn stat(r: &schedlab_metrics::RunRecord, group: &str, field: &str) -> u64 {
    let g = r.groups.iter().find(|g| g.name == group).unwrap_or_else(|| panic!("no group {group}: {:?}", r.groups));
    let v = match field {
        "nr_periods" => Some(g.nr_periods),
        "nr_throttled" => Some(g.nr_throttled),
        "throttled_usec" => Some(g.throttled_ns / 1000),
        "nr_bursts" => g.nr_bursts,
        "burst_usec" => g.burst_ns.map(|n| n / 1000),
        _ => None,
    };
    v.unwrap_or_else(|| panic!("group {group} has no {field}: {g:?}"))
}

/// A hog in a group at `max = 20ms/100ms` gets 20 % of its CPU (within 0.5 % of a CPU)
/// over 10 periods, is throttled once per period (`nr_throttled` = `nr_periods`), and
/// runs again at each period boundary, when the period timer refills the pool.
#[test]
fn a_hog_at_20_percent_gets_20_percent() {
    for (sched, sets) in SCHEDS {
        let text = limited("20ms/100ms", None, &hog_in("h", "lim", 0));
        let j = job(&text, "smp2", sched, 1, sets);
        let mut sw = Switches::default();
        run_with_probe(&j, &mut sw);
        let r = run(&j);
        let share = task(&r, "h").runtime_ns as f64 / 1e9;
        assert!((share - 0.20).abs() <= 0.005, "{sched}: share {share:.4}");
        let (periods, throttled) = (stat(&r, "lim", "nr_periods"), stat(&r, "lim", "nr_throttled"));
        assert!(periods >= 9, "{sched}: {periods} periods");
        assert_eq!(throttled, periods, "{sched}: throttled in {throttled} of {periods} periods");
        // Each run of the hog after the first starts at a period boundary.
        let starts: Vec<Ns> = sw.0.iter().filter(|s| s.1 == 0 && s.3 == Some(0)).map(|s| s.0).collect();
        assert!(starts.len() >= 9, "{sched}: {} runs", starts.len());
        for s in &starts[1..] {
            let into = s.0 % 100_000_000;
            assert!(into < 100_000, "{sched}: a run starts {into} ns into its period");
        }
    }
}

/// Per period (windows of `period` from 0), the CPU time task `t` ran, from its switches.
fn per_period(sw: &Switches, t: usize, period: u64, end: u64) -> Vec<u64> {
    let mut out = vec![0u64; end.div_ceil(period) as usize];
    let mut since: Vec<Option<u64>> = vec![None; 64];
    let mut add = |from: u64, to: u64| {
        let mut a = from;
        while a < to {
            let w = (a / period) as usize;
            let b = to.min((w as u64 + 1) * period);
            out[w] += b - a;
            a = b;
        }
    };
    for &(time, cpu, prev, next) in &sw.0 {
        if prev == Some(t) {
            if let Some(s) = since[cpu].take() {
                add(s, time.0);
            }
        }
        if next == Some(t) {
            since[cpu] = Some(time.0);
        }
    }
    for s in since.into_iter().flatten() {
        add(s, end);
    }
    out
}

/// `cpu.max.burst`: a task that used half its quota for five periods carries the unused
/// quota (capped at the burst) into the period where it turns into a hog. No period sees
/// more than quota + burst (plus the tick by which a spent slice is noticed), some period
/// sees more than the quota, and over the hog phase it runs at most its quotas plus one
/// burst. v6.18 counts the periods that used more than a quota (`nr_bursts`).
#[test]
fn burst_lets_a_group_exceed_its_quota_by_at_most_the_burst() {
    let tick = schedlab_run::load_machine("smp2").unwrap().tick_ns().0;
    let task = "[[task]]\nname = \"b\"\naffinity = [0]\ngroup = \"lim\"\nprogram = [ { loop = 5, do = [ { run = \"10ms\" }, { sleep = \"90ms\" } ] }, { loop = \"forever\", do = [ { run = \"100ms\" } ] } ]\n";
    let (quota, burst, period) = (20_000_000u64, 10_000_000u64, 100_000_000u64);
    for (sched, sets) in SCHEDS {
        let j = job(&limited("20ms/100ms", Some("10ms"), task), "smp2", sched, 2, sets);
        let mut sw = Switches::default();
        run_with_probe(&j, &mut sw);
        let r = run(&j);
        let periods = per_period(&sw, 0, period, 2_000_000_000);
        assert!(periods.iter().all(|&p| p <= quota + burst + tick), "{sched}: {periods:?}");
        assert!(periods.iter().any(|&p| p > quota + tick), "{sched}: never above the quota: {periods:?}");
        let hog: u64 = periods[5..].iter().sum();
        assert!(hog <= 15 * quota + burst + tick, "{sched}: {hog} ns in 15 hog periods");
        if sched == "eevdf" {
            assert!(stat(&r, "lim", "nr_bursts") >= 1, "{sched}: no burst counted");
            assert!(stat(&r, "lim", "burst_usec") <= 15 * burst / 1000, "{sched}");
        }
    }
}

/// Several tasks of a limited group on both CPUs, sleeping and waking (slices returned
/// on the last dequeue, slack distributed), beside an unlimited neighbour: the group
/// gets at most its quota per period on average, the neighbour takes the rest, and the
/// invariants hold throughout (every version of the fair class).
#[test]
fn a_multi_cpu_group_stays_within_its_quota() {
    let text = "[[group]]\nname = \"lim\"\nmax = \"50ms/100ms\"\n[[group]]\nname = \"free\"\n\
                [[task]]\nname = \"l\"\ncount = 4\ngroup = \"lim\"\nprogram = [ { loop = \"forever\", do = [ { run = { dist = \"uniform\", min = \"200us\", max = \"8ms\" } }, { sleep = { dist = \"exponential\", mean = \"3ms\" } } ] } ]\n\
                [[task]]\nname = \"f\"\ncount = 2\ngroup = \"free\"\nprogram = [ { loop = \"forever\", do = [ { run = \"10ms\" } ] } ]\n";
    let runs: [(&str, &[(&str, &str)]); 4] = [
        ("cfs", &[]),
        ("eevdf", &[("version", "6.6")]),
        ("eevdf", &[("version", "6.12")]),
        ("eevdf", &[("version", "6.18")]),
    ];
    for (sched, sets) in runs {
        let r = run(&job(text, "smp2", sched, 2, sets));
        let sum = |p: &str| r.tasks.iter().filter(|t| t.name.starts_with(p)).map(|t| t.runtime_ns).sum::<u64>();
        let (l, f) = (sum("l"), sum("f"));
        // 20 periods of 50 ms, plus at most one slice per CPU carried over (5 ms each).
        assert!(l <= 20 * 50_000_000 + 2 * 5_000_000, "{sched} {sets:?}: group ran {l} ns");
        assert!(l >= 18 * 50_000_000, "{sched} {sets:?}: group ran only {l} ns");
        assert!(f >= 4_000_000_000 - l - 100_000_000, "{sched} {sets:?}: neighbour ran {f} ns");
        assert!(stat(&r, "lim", "nr_throttled") > 0, "{sched} {sets:?}: never throttled");
    }
}

/// A quota above period × CPUs is accepted, as the kernel accepts it (it never binds);
/// a quota below 1 ms, a period outside 1 ms..=1 s and a burst above the quota are
/// refused with the file, line, column and field.
#[test]
fn cpu_max_limits_are_the_kernels() {
    let tasks = hog_in("a", "lim", 0) + &hog_in("b", "lim", 1);
    let r = run(&job(&limited("300ms/100ms", None, &tasks), "smp2", "cfs", 1, &[]));
    assert!(task(&r, "a").runtime_ns + task(&r, "b").runtime_ns > 1_950_000_000);
    for (max, burst, field, words) in [
        ("999us/100ms", None, "group[0].max", "below 1ms"),
        ("10ms/500us", None, "group[0].max", "outside 1ms..=1s"),
        ("10ms/2s", None, "group[0].max", "outside 1ms..=1s"),
        ("10ms/100", None, "group[0].max", "period"),
        ("1500ns/100ms", None, "group[0].max", "whole number of µs"),
        ("10ms/100ms", Some("11ms"), "group[0].burst", "above the quota"),
    ] {
        let text = limited(max, burst, &tasks);
        let e = schedlab_run::RunSpec::load("test.toml", &text, Some("smp2"), &[], Some(Ns::from_secs(1)))
            .err()
            .unwrap_or_else(|| panic!("{max} {burst:?} accepted"))
            .to_string();
        let line = if field.ends_with("burst") { 4 } else { 3 };
        assert!(e.contains(&format!("test.toml:{line}:")), "{max}: {e}");
        assert!(e.contains(field) && e.contains(words), "{max} {burst:?}: {e}");
    }
}

/// Random worlds whose groups have `cpu.max` limits (and bursts) run checked under their
/// configurations and replay bit-identically without the checks.
#[test]
fn random_worlds_with_limits_hold_the_invariants() {
    let mut limited = 0;
    for seed in 0..250 {
        let (text, _) = schedlab_run::fuzz::world(seed);
        if !text.contains("max = ") {
            continue;
        }
        limited += 1;
        if let Err(f) = schedlab_run::fuzz::check_world(seed, Ns::from_ms(100), &mut |_| true) {
            panic!("seed {seed} {} {:?} on {}: {}\n{}", f.sched, f.sets, f.machine, f.message, f.workload);
        }
    }
    assert!(limited > 30, "{limited} worlds with limits");
}

/// A scheduler without CPU bandwidth control (FreeBSD's ULE, Linux 2.6's O(1), the FIFO
/// reference, and CFS of v4.9, whose bandwidth control is not modelled) refuses a group's
/// `cpu.max` with a message naming the group, rather than running it unlimited.
#[test]
fn schedulers_without_bandwidth_control_refuse_a_limit() {
    let w = limited("20ms/100ms", None, &hog_in("h", "lim", 0));
    for (sched, want) in [("ule", "group `lim`"), ("o1", "group `lim`"), ("fifo", "group `lim`"), ("cfs@4.9", "v4.9")] {
        let mut s = schedlab_run::RunSpec::load("w.toml", &w, Some("smp2"), &[], Some(Ns::from_ms(10))).unwrap();
        s.sched = sched.into();
        let e = s.run(&mut |_| true).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("cpu.max") && e.contains(want), "{sched}: {e}");
    }
}
