//! cgroup v2 `cpu.idle` groups and the `cpu.weight.nice` view (`kernel/sched/fair.c`:
//! `sched_group_set_idle`, `se_is_idle`, `check_preempt_wakeup` v5.15 /
//! `check_preempt_wakeup_fair` v6.18, `sched_idle_cpu` in `select_idle_sibling`;
//! `kernel/sched/core.c`: `cpu_weight_nice_write_s64`, `cpu_weight_nice_read_s64`), on
//! CFS (v5.15) and EEVDF (v6.18). Every job runs checked.

mod common;
use common::*;

const SCHEDS: [(&str, &[(&str, &str)]); 2] = [("cfs", &[]), ("eevdf", &[("version", "6.18")])];

const IDLE_GROUP: &str = "[[group]]\nname = \"bg\"\nidle = true\n";

fn hog_in(name: &str, group: &str, cpu: usize) -> String {
    format!(
        "[[task]]\nname = \"{name}\"\naffinity = [{cpu}]\ngroup = \"{group}\"\nprogram = [ {{ loop = \"forever\", do = [ {{ run = \"100ms\" }} ] }} ]\n"
    )
}

/// Two hogs on one CPU, one in an idle group: the idle group's entity weighs
/// `WEIGHT_IDLEPRIO` = 3 against the other's 1024, so the normal hog gets 1024/1027 of
/// the CPU. Over 20 s that leaves the idle one 58.4 ms; it runs in whole ticks (CFS) or
/// slices (EEVDF), so allow 3 ms either side. Without the idle weight the two would split
/// the CPU evenly.
#[test]
fn an_idle_group_gets_the_sched_idle_share() {
    for (sched, sets) in SCHEDS {
        let text = format!("{IDLE_GROUP}{}{}", hog("n", 0, 0), hog_in("i", "bg", 0));
        let r = run(&job(&text, "smp2", sched, 20, sets));
        let (n, i) = (task(&r, "n").runtime_ns, task(&r, "i").runtime_ns);
        let want = (n + i) * 3 / 1027;
        assert!(i.abs_diff(want) <= 3_000_000, "{sched}: idle-group hog ran {i} ns, want {want} ± 3 ms (normal {n})");
    }
}

/// A nice-19 task waking every 10 ms on a CPU held by a hog. When the hog is in an idle
/// group, `find_matching_se` compares the waker with the idle group's entity: a non-idle
/// entity preempts an idle one at once, so every wakeup waits only for the context switch
/// (well under 20 µs here, against the 4 ms tick a missed preemption would cost). Against a
/// normal nice-0 hog the nice-19 waker does not preempt (its wakeup granularity, scaled
/// by its weight 15, is far above its sleeper credit), so it waits — the test's control.
#[test]
fn a_waking_task_preempts_an_idle_group_at_once() {
    for (sched, sets) in SCHEDS {
        let waker = sleeper("w", 19, 0, "100us", "10ms");
        let text = format!("{IDLE_GROUP}{waker}{}", hog_in("h", "bg", 0));
        let r = run(&job(&text, "smp2", sched, 2, sets));
        let w = task(&r, "w");
        assert!(w.wakeups > 150, "{sched}: {} wakeups", w.wakeups);
        assert!(w.wakeup_latency_ns.max < 20_000, "{sched}: a wakeup waited: {:?}", w.wakeup_latency_ns);
        let control = format!("{waker}{}", hog("h", 0, 0));
        let c = run(&job(&control, "smp2", sched, 2, sets));
        let cw = task(&c, "w");
        assert!(cw.wakeup_latency_ns.max > 1_000_000, "{sched}: control: {:?}", cw.wakeup_latency_ns);
    }
}

/// Wakeup placement (`select_idle_sibling`: `available_idle_cpu || sched_idle_cpu`, v5.15
/// and later): a task waking on CPU 0, busy with a normal hog, goes to CPU 1, which runs
/// only an idle-group hog (a `sched_idle_cpu`), the only other CPU. With CPU 1's hog in the
/// root group instead (control) CPU 1 is no better than CPU 0, and the waker stays on its
/// previous CPU at least sometimes.
#[test]
fn wakeup_placement_prefers_a_cpu_running_only_idle_group_tasks() {
    for (sched, sets) in SCHEDS {
        let waker = "[[task]]\nname = \"w\"\nprogram = [ { loop = \"forever\", do = [ { run = \"200us\" }, { sleep = \"5ms\" } ] } ]\n";
        let text = format!("{IDLE_GROUP}{}{}{waker}", hog("n", 0, 0), hog_in("i", "bg", 1));
        let mut sw = Switches::default();
        let j = job(&text, "smp2", sched, 2, sets);
        run_with_probe(&j, &mut sw);
        let w = task(&run(&j), "w").tid;
        let on = |sw: &Switches, w: usize, cpu: usize| sw.0.iter().filter(|s| s.3 == Some(w) && s.1 == cpu).count();
        let (c0, c1) = (on(&sw, w, 0), on(&sw, w, 1));
        assert!(c1 > 300, "{sched}: the waker ran on CPU 1 {c1} times");
        assert!(c0 <= 2, "{sched}: the waker ran on the busy CPU 0 {c0} times (CPU 1 {c1})");
        let control = format!("{}{}{waker}", hog("n", 0, 0), hog("i", 0, 1));
        let j = job(&control, "smp2", sched, 2, sets);
        let mut sw = Switches::default();
        run_with_probe(&j, &mut sw);
        let w = task(&run(&j), "w").tid;
        let (c0, c1) = (on(&sw, w, 0), on(&sw, w, 1));
        assert!(c0 > 10, "{sched}: control: the waker ran on CPU 0 {c0} times, CPU 1 {c1}");
    }
}

/// `weight_nice = 5` gives the group the shares of nice 5, 335 (`sched_prio_to_weight`), and
/// `cpu.weight` reads 33 (`sched_weight_to_cgroup`: 335 × 100 / 1024 rounded); the nice
/// view reads back 5 (`cpu_weight_nice_read_s64`). On one CPU against a nice-0 hog in the
/// root, the group's hog gets 335/(1024 + 335) of it.
#[test]
fn weight_nice_gives_the_nice_levels_weight() {
    let text = format!("[[group]]\nname = \"g\"\nweight_nice = 5\n{}{}", hog("n", 0, 0), hog_in("g1", "g", 0));
    let j = job(&text, "smp2", "cfs", 10, &[]);
    let g = &j.workload.groups.cgroups[0];
    assert_eq!((g.nice, g.weight), (Some(5), 33));
    assert_eq!(schedlab_sched_api::shares_of_nice(5), 335);
    assert_eq!(schedlab_sched_api::cpu_weight_nice_of(335), 5);
    // `cpu.weight` 33 alone would give 338 shares, not 335: the nice view is kept exactly.
    assert_eq!(schedlab_sched_api::sched_weight_to_cgroup(338), 33);
    for (sched, sets) in SCHEDS {
        let r = run(&job(&text, "smp2", sched, 10, sets));
        let (n, g1) = (task(&r, "n").runtime_ns, task(&r, "g1").runtime_ns);
        let want = (n + g1) * 335 / 1359;
        assert!(g1.abs_diff(want) <= (n + g1) / 200, "{sched}: group hog {g1} ns, want {want} (normal {n})");
    }
}

/// Every nice level's weight reads back as that nice level, and the read of shares between
/// two levels gives the nearer one.
#[test]
fn the_nice_view_reads_the_nearest_level() {
    for nice in -20..=19 {
        assert_eq!(schedlab_sched_api::cpu_weight_nice_of(schedlab_sched_api::shares_of_nice(nice)), nice);
    }
    // 1024 (nice 0) and 820 (nice 1): 930 is nearer 1024, 910 nearer 820.
    assert_eq!(schedlab_sched_api::cpu_weight_nice_of(930), 0);
    assert_eq!(schedlab_sched_api::cpu_weight_nice_of(910), 1);
    assert_eq!(schedlab_sched_api::cpu_weight_nice_of(1 << 18), -20);
    assert_eq!(schedlab_sched_api::cpu_weight_nice_of(2), 19);
}

fn load_err(text: &str) -> String {
    match schedlab_run::RunSpec::load("bad.toml", text, Some("smp2"), &[], None) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// Bad input: `idle = 2` (cpu.idle takes 0 or 1), `weight_nice = 20` (ERANGE), `weight`
/// and `weight_nice` together, a weight on an idle group — each an error naming the file,
/// line and field.
#[test]
fn bad_idle_and_weight_nice_input_is_refused_with_its_location() {
    let t = hog_in("h", "g", 0);
    for (group, line, field, says) in [
        ("idle = 2", 3, "group[0].idle", "true or false"),
        ("weight_nice = 20", 3, "group[0].weight_nice", "outside -20..=19"),
        ("weight = 50\nweight_nice = 1", 4, "group[0].weight_nice", "both set"),
        ("idle = true\nweight = 50", 4, "group[0].weight", "idle group"),
    ] {
        let e = load_err(&format!("[[group]]\nname = \"g\"\n{group}\n{t}"));
        assert!(e.contains(&format!("bad.toml:{line}:")), "{group}: {e}");
        assert!(e.contains(field) && e.contains(says), "{group}: {e}");
    }
}

/// Schedulers without group scheduling refuse an idle group rather than run it at full
/// weight (the default `SchedClass::set_task_groups`).
#[test]
fn schedulers_without_group_scheduling_refuse_an_idle_group() {
    let text = format!("{IDLE_GROUP}{}", hog_in("h", "bg", 0));
    for sched in ["ule", "o1", "fifo"] {
        let j = job(&text, "smp2", sched, 1, &[]);
        let e = j.run(&mut |_| true).expect_err(sched).to_string();
        assert!(e.contains("cpu.idle") && e.contains("bg"), "{sched}: {e}");
    }
}

/// An idle group under `cpu.max` (20 ms per 100 ms) with a hog and a sleeper, beside a
/// normal sleeper on the same CPU: throttling takes the group's tasks out of the idle
/// counts and unthrottling puts them back (`throttle_cfs_rq`/`unthrottle_cfs_rq` count
/// every task above an idle group's runqueue as idle), which the checker verifies after
/// every event against the entities (`idle_h_nr_running`); the group stays within its
/// quota and is throttled.
#[test]
fn an_idle_group_under_cpu_max_keeps_its_idle_counts() {
    for (sched, sets) in SCHEDS {
        let group = "[[group]]\nname = \"bg\"\nidle = true\nmax = \"20ms/100ms\"\n";
        let inner = "[[task]]\nname = \"s\"\naffinity = [1]\ngroup = \"bg\"\nprogram = [ { loop = \"forever\", do = [ { run = \"1ms\" }, { sleep = \"3ms\" } ] } ]\n";
        let text = format!("{group}{}{inner}{}", hog_in("i", "bg", 1), sleeper("w", 0, 1, "2ms", "5ms"));
        let r = run(&job(&text, "smp2", sched, 2, sets));
        let used = task(&r, "i").runtime_ns + task(&r, "s").runtime_ns;
        assert!(used <= 2 * 20_000_000 * 10 + 5_000_000, "{sched}: the group used {used} ns in 2 s");
        let g = r.groups.iter().find(|g| g.name == "bg").expect("cpu.stat of bg");
        assert!(g.nr_throttled > 5, "{sched}: {g:?}");
    }
}
