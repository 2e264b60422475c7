//! Core scheduling (`kernel/sched/core.c:pick_next_task`, `CONFIG_SCHED_CORE`, v5.15 and
//! v6.18; `docs/core-scheduling.md`): on an SMT core, tasks of different cookies never run
//! on the two siblings at once; a sibling with nothing of the running cookie is forced
//! idle, and that time is charged to the task running beside it.

mod common;
use common::{job, run, run_with_probe, Switches};
use schedlab_metrics::RunRecord;
use schedlab_run::RunSpec;
use schedlab_sim::Ns;

/// CPUs 0 and 4 of the i7-3770 are SMT siblings.
const SIBS: [usize; 2] = [0, 4];

/// Hogs `h0`, `h1`, … with these cookies (`None`: no `core_cookie` field), the first half
/// pinned to CPU 0, the second to its sibling CPU 4.
fn hogs(cookies: &[Option<u64>]) -> String {
    let mut w = String::new();
    for (i, k) in cookies.iter().enumerate() {
        let cookie = k.map_or(String::new(), |k| format!("core_cookie = {k}\n"));
        let cpu = SIBS[usize::from(i >= cookies.len() / 2)];
        w += &format!(
            "[[task]]\nname = \"h{i}\"\naffinity = [{cpu}]\n{cookie}program = [ {{ loop = \"forever\", do = [ {{ run = \"100ms\" }} ] }} ]\n"
        );
    }
    w
}

const TWO_COOKIES: [Option<u64>; 4] = [Some(1), Some(1), Some(2), Some(2)];

fn spec(w: &str, machine: &str, sched: &str) -> RunSpec {
    job(w, machine, sched, 1, &[])
}

fn counter(r: &RunRecord, name: &str) -> u64 {
    r.kernel.counters.iter().find(|(k, _)| k == name).map_or(0, |(_, v)| *v)
}

/// The time two siblings in `SIBS` both run tasks with different cookies (`cookie[t]`),
/// from the switch trace, up to `end`.
fn clash_ns(sw: &Switches, cookie: &[u64], end: Ns) -> u64 {
    let mut curr: [Option<usize>; 2] = [None, None];
    let (mut since, mut total) = (Ns(0), 0u64);
    let clash = |c: &[Option<usize>; 2]| matches!(c, [Some(a), Some(b)] if cookie[*a] != cookie[*b]);
    for &(time, cpu, _, next) in &sw.0 {
        let Some(i) = SIBS.iter().position(|&s| s == cpu) else { continue };
        if clash(&curr) {
            total += (time - since).0;
        }
        curr[i] = next;
        since = time;
    }
    if clash(&curr) {
        total += (end - since).0;
    }
    total
}

fn traced(j: &RunSpec) -> (Switches, u64) {
    let mut sw = Switches::default();
    let h = run_with_probe(j, &mut sw);
    (sw, h)
}

/// Cookies 1 and 2 on the two siblings: each runs alone on the core (the other sibling
/// forced idle), bar the IPI window after each core-wide pick; without cookies the two
/// pairs overlap most of the run. Forced idle is counted and charged to the tasks.
#[test]
fn two_cookies_never_share_a_core() {
    for sched in ["eevdf", "cfs"] {
        let end = Ns::from_secs(1);
        let (sw, _) = traced(&spec(&hogs(&TWO_COOKIES), "i7-3770", sched));
        let cookies = [1, 1, 2, 2];
        let with = clash_ns(&sw, &cookies, end);
        let (plain, _) = traced(&spec(&hogs(&[None; 4]), "i7-3770", sched));
        let without = clash_ns(&plain, &cookies, end);
        eprintln!("{sched} with {with} without {without}");
        assert!(without > end.0 * 9 / 10, "{sched}: without core scheduling the cookies overlap ({without} ns)");
        assert!(with * 100 < without, "{sched}: cookies overlapped {with} ns (without core scheduling {without})");
        let r = run(&spec(&hogs(&TWO_COOKIES), "i7-3770", sched));
        assert!(r.kernel.invariants_checked);
        assert!(counter(&r, "core.forceidle_count") > 0, "{sched}: {:?}", r.kernel.counters);
        assert!(counter(&r, "core.forceidle_ns") > end.0 / 2, "{sched}: {:?}", r.kernel.counters);
        // Forced idle is charged to the tasks that ran beside it (`core_forceidle_sum`).
        let sums: Vec<u64> = r.tasks.iter().map(|t| t.core_forceidle_sum_ns.expect("core scheduling acted")).collect();
        assert_eq!(sums.iter().sum::<u64>(), counter(&r, "core.forceidle_ns"), "{sched}");
        assert!(sums.iter().all(|&s| s > 0), "{sched}: {sums:?}");
        // Both cookies get the core in turn (`cfs_prio_less` across the siblings).
        for t in ["h0", "h2"] {
            assert!(common::task(&r, t).runtime_ns > end.0 / 8, "{sched}: {t} starved");
        }
    }
}

/// One cookie for all four: nothing is ever forced idle, and the siblings run together.
#[test]
fn one_cookie_forces_no_idle() {
    let r = run(&spec(&hogs(&[Some(7); 4]), "i7-3770", "eevdf"));
    assert_eq!(counter(&r, "core.forceidle_count"), 0, "{:?}", r.kernel.counters);
    assert_eq!(counter(&r, "core.forceidle_ns"), 0);
    for t in ["h0", "h1", "h2", "h3"] {
        assert!(common::task(&r, t).runtime_ns > 400_000_000, "{t} ran alongside its sibling");
    }
}

/// Without any cookie core scheduling stays off: the run is the same event for event as
/// the same workload with `core_cookie = 0` (no cookie) written out, and no counter appears.
#[test]
fn no_cookie_changes_nothing() {
    let (_, plain) = traced(&spec(&hogs(&[None; 4]), "i7-3770", "eevdf"));
    let (_, zero) = traced(&spec(&hogs(&[Some(0); 4]), "i7-3770", "eevdf"));
    assert_eq!(plain, zero);
    let r = run(&spec(&hogs(&[None; 4]), "i7-3770", "eevdf"));
    assert!(r.kernel.counters.iter().all(|(k, _)| !k.starts_with("core.")), "{:?}", r.kernel.counters);
    assert!(r.tasks.iter().all(|t| t.core_forceidle_sum_ns.is_none()));
    assert!(r.warnings.iter().all(|w| !w.contains("core_cookie")), "{:?}", r.warnings);
}

/// A cookied task and an uncookied one (cookie 0 matches only cookie 0, `cookie_match`),
/// one on each sibling, alone on their runqueues: they take turns, `task_tick_core`
/// rescheduling the runner once it used its share of a slice while the other is forced
/// idle. Both get the core; neither ever shares it with the other.
#[test]
fn cookied_and_uncookied_take_turns() {
    for sched in ["eevdf", "cfs"] {
        let w = hogs(&[Some(5), None]);
        let (sw, _) = traced(&spec(&w, "i7-3770", sched));
        assert!(clash_ns(&sw, &[5, 0], Ns::from_secs(1)) < 10_000, "{sched}");
        let r = run(&spec(&w, "i7-3770", sched));
        for t in ["h0", "h1"] {
            let ran = common::task(&r, t).runtime_ns;
            assert!((300_000_000..700_000_000).contains(&ran), "{sched}: {t} ran {ran} ns");
        }
        assert!(counter(&r, "core.forceidle_count") > 10, "{sched}: {:?}", r.kernel.counters);
    }
}

/// On a machine without SMT a cookie is accepted, does nothing, and the record says so;
/// ULE has no core scheduling and says so too.
#[test]
fn cookies_without_smt_or_linux_warn() {
    let w = "[[task]]\nname = \"a\"\ncore_cookie = 1\nprogram = [ { run = \"10ms\" } ]\n\
             [[task]]\nname = \"b\"\ncore_cookie = 2\nprogram = [ { run = \"10ms\" } ]\n";
    let plain = w.replace("core_cookie = 1\n", "").replace("core_cookie = 2\n", "");
    let r = run(&spec(w, "smp4", "eevdf"));
    assert!(r.warnings.iter().any(|m| m.contains("no SMT")), "{:?}", r.warnings);
    assert_eq!(r.trace_hash, run(&spec(&plain, "smp4", "eevdf")).trace_hash, "no effect");
    let r = run(&spec(w, "i7-3770", "ule"));
    assert!(r.warnings.iter().any(|m| m.contains("no core scheduling")), "{:?}", r.warnings);
    assert_eq!(r.trace_hash, run(&spec(&plain, "i7-3770", "ule")).trace_hash, "ignored");
}

/// A bad cookie is a located error.
#[test]
fn bad_cookie_is_located() {
    for (v, what) in [("-1", "core_cookie"), ("\"x\"", "core_cookie"), ("4294967296", "outside")] {
        let w = format!("[[task]]\nname = \"a\"\ncore_cookie = {v}\nprogram = [ {{ run = \"1ms\" }} ]\n");
        let e = RunSpec::load("test.toml", &w, Some("i7-3770"), &[], None).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains("test.toml:3") && e.contains(what), "{v}: {e}");
    }
}

/// The same seed gives the same run, noise on.
#[test]
fn core_scheduling_is_deterministic() {
    let mut j = RunSpec::load("test.toml", &hogs(&TWO_COOKIES), Some("i7-3770"), &[], Some(Ns::from_ms(300))).unwrap();
    j.sched = "eevdf".into();
    j.check = true;
    assert_eq!(run(&j).trace_hash, run(&j).trace_hash);
}

/// A mixed workload on all eight CPUs: cookied and cookieless hogs and sleepers, free to
/// migrate, a forking parent whose children share its cookie (`sched_core_fork`). The
/// `--check` invariant holds after every event, under CFS and EEVDF, and the core-wide
/// paths all run (selections, siblings taking the choice made for them, the fast path).
#[test]
fn mixed_workload_keeps_the_invariant() {
    let mut w = String::new();
    for (i, k) in [1, 1, 2, 2, 3, 0, 0, 0].iter().enumerate() {
        w += &format!(
            "[[task]]\nname = \"hog{i}\"\ncore_cookie = {k}\nprogram = [ {{ loop = \"forever\", do = [ {{ run = \"100ms\" }} ] }} ]\n"
        );
        w += &format!(
            "[[task]]\nname = \"nap{i}\"\ncore_cookie = {k}\nprogram = [ {{ loop = \"forever\", do = [ {{ run = \"300us\" }}, {{ sleep = \"700us\" }} ] }} ]\n"
        );
    }
    w += "[[task]]\nname = \"kid\"\ntemplate = true\nprogram = [ { run = \"2ms\" } ]\n\
          [[task]]\nname = \"parent\"\ncore_cookie = 4\nprogram = [ { loop = 20, do = [ { fork = \"kid\" }, { sleep = \"5ms\" } ] } ]\n";
    for sched in ["eevdf", "cfs"] {
        let mut j = job(&w, "i7-3770", sched, 1, &[]);
        j.end = Ns::from_ms(300);
        let r = run(&j);
        assert!(r.kernel.invariants_checked, "{sched}");
        for c in ["core.selections", "core.picks_taken", "core.forceidle_count"] {
            assert!(counter(&r, c) > 0, "{sched}: {c} in {:?}", r.kernel.counters);
        }
    }
}
