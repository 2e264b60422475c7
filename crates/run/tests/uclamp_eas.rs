//! uclamp on `big-little` (gs101: CPUs 0-3 capacity 160, 4-5 498, 6-7 1024; schedutil
//! v6.18, frequency-invariant): a task's clamps in energy-aware placement and the fitness
//! tests (fair.c `util_fits_cpu`, `find_energy_efficient_cpu`, `update_misfit_status`,
//! v6.18 and v5.15), and a group's `cpu.uclamp.min/max` restricting its tasks' clamps and
//! so schedutil's request (core.c `cpu_util_update_eff`, `uclamp_tg_restrict`).

mod common;
use common::{job, Switches};
use schedlab_sim::Ns;

/// The CPUs each task (by tid) was switched in on after `from`, and the record.
fn placements(wl: &str, sched: &str, secs: u64, from: Ns) -> (Vec<Vec<usize>>, schedlab_metrics::RunRecord) {
    let j = job(wl, "big-little", sched, secs, &[]);
    let mut sw = Switches::default();
    let opts = schedlab_run::RunOptions { probe: Some(&mut sw), ..Default::default() };
    let r = j.run_with(opts, &mut |_| true).unwrap().record;
    let on = sw.cpus_by_task(r.tasks.len(), from);
    (on, r)
}

/// A 1 ms-in-16 task (util ≈ 64: it fits a little CPU, and `eas.rs` shows EAS keeps it
/// there) with `util_min = 400`. v6.18's `util_fits_cpu` gives −1 on a little CPU (the
/// utilisation fits 160 but the minimum asks for more than its capacity) and 1 on a mid
/// or big one, and `find_energy_efficient_cpu` takes a better fit before less energy: the
/// task runs on CPUs 4-7. v5.15 clamps the utilisation first (`uclamp_rq_util_with`: 400)
/// and asks `fits_capacity(400, capacity)`, which fails at 160 and at 498 (400 × 1280 >
/// 498 × 1024): only a big CPU.
#[test]
fn uclamp_min_keeps_a_small_task_off_the_little_cpus() {
    let wl = "[[task]]\nname = \"small\"\nutil_min = 400\n\
program = [ { loop = \"forever\", do = [ { run = \"1ms\" }, { sleep = \"15ms\" } ] } ]\n";
    for (sched, lowest) in [("eevdf", 4), ("cfs", 6)] {
        let (on, r) = placements(wl, sched, 2, Ns::from_secs(1));
        let c = &r.policy_counters;
        assert!(c["eas.feec"] > 50, "{sched}: EAS placed the wakeups: {c:?}");
        assert!(!on[0].is_empty() && on[0].iter().all(|&cpu| cpu >= lowest), "{sched}: ran on {:?}", on[0]);
    }
}

/// A hog started on little CPU 0 (then free to run anywhere, as in `eas.rs`'s misfit
/// test, where it moves to a big CPU) with `util_max = 100`. v6.18: `util_fits_cpu`
/// counts a task capped at or below a CPU's capacity as fitting (`uclamp_max ≤
/// capacity_orig`), so `task_fits_cpu` holds on CPU 0, `update_misfit_status` never marks
/// it and `cpu_overutilized` (with the runqueue's clamps) stays false: it stays on CPU 0.
#[test]
fn uclamp_max_keeps_a_hog_on_a_little_cpu() {
    let wl = "[[task]]\nname = \"hog\"\naffinity = \"0\"\nutil_max = 100\n\
program = [ { set_affinity = \"all\" }, { loop = \"forever\", do = [ { run = \"100ms\" } ] } ]\n";
    let (on, r) = placements(wl, "eevdf", 1, Ns(0));
    assert_eq!(on[0], vec![0], "the capped hog ran only on CPU 0");
    let c = &r.policy_counters;
    assert_eq!(c.get("lb.misfit").copied().unwrap_or(0), 0, "never a misfit: {c:?}");
    assert_eq!(c.get("eas.overutilized_set").copied().unwrap_or(0), 0, "never overutilized: {c:?}");
}

/// The big cluster's (CPUs 6-7) time at each frequency, kHz → ns, after a run of `wl`.
fn big_residency(wl: &str, secs: u64) -> (Vec<(u64, u64)>, Vec<u64>) {
    let r = common::run(&job(wl, "big-little", "eevdf", secs, &[]));
    let table = schedlab_machine::preset("big-little").unwrap().freq.domains[2].khz.clone();
    (r.cpus[6].freq.as_ref().expect("frequency model on").time_in_state.clone(), table)
}

/// schedutil v6.18 (`get_next_freq`, invariant): `fmax × perf / 1024`, resolved to the
/// lowest table frequency at or above it (`cpufreq_driver_resolve_freq`).
fn opp_for(table: &[u64], perf: u64) -> u64 {
    let fmax = *table.last().unwrap();
    let raw = fmax * perf / 1024;
    *table.iter().find(|&&f| f >= raw).unwrap_or(&fmax)
}

/// A hog pinned to big CPU 6 in a group with `uclamp_max = 50` (512): its utilisation
/// reaches 1024, but `sugov_effective_cpu_perf` caps the request at the runqueue's
/// maximum, 512 → `fmax × 512 / 1024`, so the domain never goes above that OPP and spends
/// nearly the whole run there. The hog alone in the root group reaches the top.
#[test]
fn a_group_uclamp_max_caps_a_hogs_frequency() {
    let hog = |group: &str| {
        format!("[[group]]\nname = \"capped\"\nuclamp_max = 50\n[[task]]\nname = \"hog\"\naffinity = \"6\"\n{group}program = [ {{ run = \"2s\" }} ]\n")
    };
    let (tis, table) = big_residency(&hog("group = \"capped\"\n"), 1);
    let want = opp_for(&table, 512);
    assert!(want < *table.last().unwrap());
    let at = |f: u64| tis.iter().find(|e| e.0 == f).map_or(0, |e| e.1);
    assert!(at(want) >= 900_000_000, "most of the second at {want} kHz: {tis:?}");
    assert!(tis.iter().all(|e| e.0 <= want || e.1 == 0), "never above {want} kHz: {tis:?}");
    let (free, _) = big_residency(&hog(""), 1);
    assert!(free.iter().any(|e| e.0 == *table.last().unwrap() && e.1 > 500_000_000), "unclamped: {free:?}");
}

/// `uclamp_tg_restrict`: a task asking `util_min = 819` (80 %) in a group with
/// `uclamp_max = 50` (512) gets an effective minimum of 512. A 1 ms-in-16 task pinned to
/// CPU 6 (util ≈ 64) then asks `max(min, min(1.25 × util, max))` = 512 while runnable:
/// the OPP for 512 is the highest its domain reaches (asleep, the shared domain drops:
/// `sugov_update_shared` has no `sugov_hold_freq`); in the root group it keeps its 819 and
/// the OPP for 819 is the highest.
#[test]
fn a_group_restricts_a_tasks_uclamp_min() {
    let task = |group: &str| {
        format!("[[group]]\nname = \"half\"\nuclamp_max = 50\n[[task]]\nname = \"p\"\naffinity = \"6\"\nutil_min = 819\n{group}\
program = [ {{ loop = \"forever\", do = [ {{ run = \"1ms\" }}, {{ sleep = \"15ms\" }} ] }} ]\n")
    };
    for (group, perf) in [("group = \"half\"\n", 512), ("", 819)] {
        let (tis, table) = big_residency(&task(group), 1);
        let want = opp_for(&table, perf);
        let highest = tis.iter().filter(|e| e.1 > 0).map(|e| e.0).max();
        assert_eq!(highest, Some(want), "{group:?}: the highest frequency is the OPP for {perf}: {tis:?}");
        let at = |f: u64| tis.iter().find(|e| e.0 == f).map_or(0, |e| e.1);
        assert!(at(want) >= 100_000_000, "{group:?}: at {want} kHz while it runs: {tis:?}");
    }
}
