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
        // Both cookies get the core in turn (`cfs_prio_less` across the siblings).
        for t in ["h0", "h2"] {
            assert!(common::task(&r, t).runtime_ns > end.0 / 8, "{sched}: {t} starved");
        }
    }
}
