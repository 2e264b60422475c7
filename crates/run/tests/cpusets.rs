//! cgroup v2 cpusets: `[[group]] cpus` is `cpuset.cpus`; a task's affinity is kept within
//! its group's effective CPUs (`kernel/cgroup/cpuset.c: compute_effective_cpumask`,
//! `cpuset_fork`; `kernel/sched/core.c: __set_cpus_allowed_ptr`, `__sched_setaffinity`,
//! v6.12). Every job runs checked.

mod common;
use common::*;

const TWO_GROUPS: &str = r#"
[[group]]
name = "batch"
cpus = "0-1"
[[group]]
name = "web"
cpus = "2-3"
[[task]]
name = "b"
group = "batch"
count = 4
program = [ { loop = "forever", do = [ { run = "20ms" } ] } ]
[[task]]
name = "w"
group = "web"
count = 2
program = [ { loop = "forever", do = [ { run = "1ms" }, { sleep = "3ms" } ] } ]
"#;

/// Four hogs confined to CPUs 0-1 and two sleepers to 2-3: under every class each group's
/// tasks run only on its CPUs, the hogs on both (placement at fork and wakeup and the balancer honour the
/// affinity the cpuset gives), and the hogs share their two CPUs.
#[test]
fn tasks_run_only_on_their_cpuset() {
    for sched in ["cfs", "eevdf", "ule", "o1"] {
        let j = job(TWO_GROUPS, "smp4", sched, 1, &[]);
        let mut sw = Switches::default();
        run_with_probe(&j, &mut sw);
        let r = run(&j);
        assert_eq!(sw.cpus_used(&r, "b"), [0, 1], "{sched}");
        // Two 25 % sleepers may share one CPU (O(1) wakes them where they last ran).
        let w = sw.cpus_used(&r, "w");
        assert!(!w.is_empty() && w.iter().all(|&c| c == 2 || c == 3), "{sched}: sleepers ran on {w:?}");
        let hogs: u64 = r.tasks.iter().filter(|t| t.name.starts_with('b')).map(|t| t.runtime_ns).sum();
        assert!(hogs > 1_900_000_000 && hogs <= 2_000_000_000, "{sched}: hogs ran {hogs} ns on two CPUs");
    }
}

/// A child's `cpus` outside its parent's is cut to the parent's effective CPUs
/// (`cpuset.cpus.effective`); one that leaves none takes the parent's.
#[test]
fn effective_cpus_lie_within_the_parent() {
    let text = r#"
[[group]]
name = "top"
cpus = "0-1"
[[group]]
name = "inner"
parent = "top"
cpus = "1-3"
[[group]]
name = "away"
parent = "top"
cpus = "3"
[[task]]
name = "i"
group = "inner"
count = 2
program = [ { loop = "forever", do = [ { run = "10ms" } ] } ]
[[task]]
name = "a"
group = "away"
count = 2
program = [ { loop = "forever", do = [ { run = "10ms" } ] } ]
"#;
    let j = job(text, "smp4", "eevdf", 1, &[]);
    let mut sw = Switches::default();
    run_with_probe(&j, &mut sw);
    let r = run(&j);
    assert_eq!(sw.cpus_used(&r, "i"), [1], "inner: 1-3 within 0-1");
    let a = sw.cpus_used(&r, "a");
    assert!(!a.is_empty() && a.iter().all(|&c| c <= 1), "away: the parent's 0-1, ran on {a:?}");
}

/// A task's own affinity is kept within its cpuset: `set_affinity` to CPUs partly inside
/// gives the intersection; to CPUs wholly outside fails (EINVAL, noted) and changes nothing.
#[test]
fn set_affinity_within_the_cpuset_or_einval() {
    let text = |to: &str| {
        format!(
            "[[group]]\nname = \"g\"\ncpus = \"2-3\"\n[[task]]\nname = \"t\"\ngroup = \"g\"\nprogram = [ {{ run = \"5ms\" }}, {{ set_affinity = \"{to}\" }}, {{ loop = \"forever\", do = [ {{ run = \"5ms\" }}, {{ sleep = \"1ms\" }} ] }} ]\n"
        )
    };
    let j = job(&text("1,3"), "smp4", "cfs", 1, &[]);
    let mut sw = Switches::default();
    run_with_probe(&j, &mut sw);
    let r = run(&j);
    let after: Vec<usize> = sw.0.iter().filter(|s| s.0 .0 > 10_000_000 && s.3 == Some(0)).map(|s| s.1).collect();
    assert!(!after.is_empty() && after.iter().all(|&c| c == 3), "1,3 ∩ 2-3 = 3; ran on {after:?}");
    assert!(r.warnings.iter().all(|w| !w.contains("EINVAL")), "{:?}", r.warnings);
    let r = run(&job(&text("0-1"), "smp4", "cfs", 1, &[]));
    assert!(r.warnings.iter().any(|w| w.contains("-EINVAL")), "warnings: {:?}", r.warnings);
}

/// A task pinned outside its cpuset by its own `affinity` runs within the cpuset (the
/// cpuset's mask when the two do not meet, as attaching to a cpuset does); a CPU of the
/// cpuset going offline moves its tasks to the rest of it.
#[test]
fn cpuset_wins_over_a_disjoint_affinity_and_follows_hotplug() {
    let text = r#"
[[group]]
name = "g"
cpus = "2-3"
[[task]]
name = "p"
group = "g"
affinity = [0]
program = [ { loop = "forever", do = [ { run = "10ms" } ] } ]
[[task]]
name = "q"
group = "g"
program = [ { loop = "forever", do = [ { run = "10ms" } ] } ]
[[change]]
at = "500ms"
cpu_offline = 3
"#;
    let j = job(text, "smp4", "eevdf", 1, &[]);
    let mut sw = Switches::default();
    run_with_probe(&j, &mut sw);
    let r = run(&j);
    assert!(sw.cpus_used(&r, "p").iter().all(|&c| c == 2 || c == 3));
    let late: Vec<usize> = sw.0.iter().filter(|s| s.0 .0 > 501_000_000 && s.3.is_some()).map(|s| s.1).collect();
    assert!(!late.is_empty() && late.iter().all(|&c| c == 2), "after CPU 3 went offline: {late:?}");
}

/// Bad input: a CPU outside the machine, an empty list, a host run.
#[test]
fn bad_cpusets_are_refused_with_their_location() {
    let bad = |cpus: &str| {
        let text = format!("[[group]]\nname = \"g\"\ncpus = {cpus}\n[[task]]\nname = \"t\"\ngroup = \"g\"\nprogram = [ {{ run = \"1ms\" }} ]\n");
        let e = schedlab_run::RunSpec::load("w.toml", &text, Some("smp4"), &[], None).map(|_| ()).unwrap_err();
        e.to_string()
    };
    let e = bad("\"2-9\"");
    assert!(e.contains("w.toml:3") && e.contains("group[0].cpus") && e.contains("outside the machine"), "{e}");
    let e = bad("[]");
    assert!(e.contains("group[0].cpus") && e.contains("empty"), "{e}");
}
