//! Energy-aware scheduling on `big-little` (gs101: CPUs 0-3 capacity 160, 4-5 498, 6-7
//! 1024; schedutil, frequency-invariant): what fair.c's `find_energy_efficient_cpu`
//! predicts for a small and a big task, the fall-back to the normal wakeup path once the
//! root domain is overutilized, and the switch that turns it off.

mod common;
use common::{job, Switches};
use schedlab_sim::Ns;

/// A 1 ms-in-16 task (util ≈ 64, fitting a little CPU) and a 10 ms-in-16 one (util ≈
/// 640: fitting only a big CPU, `640 × 1280 < 1024 × 1024`, and not overutilizing it).
const SMALL_AND_BIG: &str = "[[task]]\nname = \"small\"\nprogram = [ { loop = \"forever\", do = [ { run = \"1ms\" }, { sleep = \"15ms\" } ] } ]\n\
[[task]]\nname = \"big\"\nprogram = [ { loop = \"forever\", do = [ { run = \"10ms\" }, { sleep = \"6ms\" } ] } ]\n";

/// Where each task (by tid) was switched in after `from`, and the policy's counters.
fn placements(
    wl: &str,
    sched: &str,
    secs: u64,
    sets: &[(&str, &str)],
    from: Ns,
) -> (Vec<Vec<usize>>, std::collections::BTreeMap<String, u64>) {
    let j = job(wl, "big-little", sched, secs, sets);
    let mut sw = Switches::default();
    let opts = schedlab_run::RunOptions { probe: Some(&mut sw), ..Default::default() };
    let r = j.run_with(opts, &mut |_| true).unwrap().record;
    let on = sw.cpus_by_task(r.tasks.len(), from);
    (on, r.policy_counters)
}

/// Once PELT has built up (after 1 s), EAS keeps the big task on the big cluster (it
/// fits nowhere else: `util × 1280 < capacity × 1024` fails at 160 and 498; misfit
/// balancing takes it there early). v6.18 keeps the small one on the little cluster: its
/// estimate (≈ 70, the utilisation it sleeps with, `util_est`) fits 160, and a little
/// CPU adds the least energy. v5.15 moves a task only if that saves more than 1/16 of the
/// energy of every domain with a candidate (`(prev_delta − best_delta) > (prev_delta +
/// base_energy) >> 4`), and the big task's X1 domain makes that base large: a little CPU
/// saves ≈ 37 000 of a base above 500 000, so the small task stays where the
/// overutilized start left it — one CPU, not the big task's.
#[test]
fn small_task_on_little_big_task_on_big() {
    for sched in ["eevdf", "cfs"] {
        let (on, c) = placements(SMALL_AND_BIG, sched, 2, &[], Ns::from_secs(1));
        assert!(c["eas.feec"] > 50, "{sched}: EAS placed the wakeups: {c:?}");
        assert!(!on[1].is_empty() && on[1].iter().all(|&cpu| cpu >= 6), "{sched}: big ran on {:?}", on[1]);
        if sched == "eevdf" {
            assert!(!on[0].is_empty() && on[0].iter().all(|&cpu| cpu < 4), "{sched}: small ran on {:?}", on[0]);
        } else {
            assert!(on[0].len() == 1 && !on[1].contains(&on[0][0]), "{sched}: small stays on one CPU: {on:?}");
        }
    }
}

/// The small task alone for 500 ms (EAS places its wakeups), then eight near-hogs that
/// overutilize every CPU: the tick sets `rd->overutilized`, no CPU ever fits again, and
/// the wakeups take the normal path, so `find_energy_efficient_cpu` runs no more.
#[test]
fn overutilized_falls_back_to_the_normal_wakeup_path() {
    let hogs = "[[task]]\nname = \"small\"\nprogram = [ { loop = \"forever\", do = [ { run = \"1ms\" }, { sleep = \"15ms\" } ] } ]\n\
[[task]]\nname = \"hog\"\ncount = 8\nprogram = [ { sleep = \"500ms\" }, { loop = \"forever\", do = [ { run = \"20ms\" }, { sleep = \"100us\" } ] } ]\n";
    let (_, short) = placements(hogs, "eevdf", 1, &[], Ns(0));
    let (_, long) = placements(hogs, "eevdf", 2, &[], Ns(0));
    assert!(short["eas.feec"] > 10 && short["eas.overutilized_set"] >= 1, "{short:?}");
    assert_eq!(short["eas.feec"], long["eas.feec"], "feec stopped once overutilized: {short:?} vs {long:?}");
    assert!(long["wake_affine"] + long["lb.MC.attempts"] > 0, "the normal paths ran: {long:?}");
}

/// `sched_energy_aware=0` (`kernel.sched_energy_aware`): no energy-aware wakeups and no
/// EAS counters.
#[test]
fn sched_energy_aware_off() {
    let (_, c) = placements(SMALL_AND_BIG, "eevdf", 1, &[("sched_energy_aware", "0")], Ns(0));
    assert!(!c.contains_key("eas.feec"), "{c:?}");
}

/// A hog that starts on little CPU 0 (its affinity widened to every CPU by its first
/// action, so it never wakes again) and the 1 ms-in-16 task. The hog's utilisation soon
/// exceeds 80 % of 160 (`task_fits_cpu` fails), so the tick sets `misfit_task_load`
/// (`update_misfit_status`), `nohz_balancer_kick` kicks an idle CPU
/// (`check_misfit_status`), and the idle balance of a bigger CPU finds the group
/// `group_misfit_task`, `migrate_misfit` and, the hog running alone, pushes it by active
/// balance (`need_active_balance`) — through CPU 4/5 (498 < 1.25 × its utilisation) to a
/// big CPU. The small task fits a little CPU, so no misfit balance touches it.
const HOG_ON_LITTLE: &str = "[[task]]\nname = \"hog\"\naffinity = \"0\"\n\
program = [ { set_affinity = \"all\" }, { loop = \"forever\", do = [ { run = \"100ms\" } ] } ]\n\
[[task]]\nname = \"small\"\nprogram = [ { loop = \"forever\", do = [ { run = \"1ms\" }, { sleep = \"15ms\" } ] } ]\n";

#[test]
fn misfit_hog_moves_to_a_big_cpu() {
    for sched in ["eevdf", "cfs"] {
        let j = job(HOG_ON_LITTLE, "big-little", sched, 1, &[]);
        let mut sw = Switches::default();
        let opts = schedlab_run::RunOptions { probe: Some(&mut sw), ..Default::default() };
        let r = j.run_with(opts, &mut |_| true).unwrap().record;
        let id = |name: &str| r.tasks.iter().position(|t| t.name == name).unwrap();
        let (hog, small) = (id("hog"), id("small"));
        let ins = |t: usize| sw.0.iter().filter(move |s| s.3 == Some(t)).map(|s| (s.0, s.1));
        let hog_ins: Vec<_> = ins(hog).collect();
        assert_eq!(hog_ins.first().map(|s| s.1), Some(0), "{sched}: the hog starts on CPU 0: {hog_ins:?}");
        let late: Vec<_> = hog_ins.iter().filter(|s| s.0 >= Ns::from_ms(300)).collect();
        let last = hog_ins.last().unwrap();
        assert!(last.1 >= 6, "{sched}: the hog ends on a big CPU: {hog_ins:?}");
        assert!(late.iter().all(|s| s.1 >= 6), "{sched}: after 300 ms only big CPUs: {late:?}");
        assert!(hog_ins.iter().any(|s| s.0 < Ns::from_ms(300) && s.1 >= 6), "{sched}: moved by 300 ms: {hog_ins:?}");
        let c = &r.policy_counters;
        assert!(c["lb.misfit"] > 0 && c["nohz_misfit_kicks"] > 0, "{sched}: misfit balancing ran: {c:?}");
        // Its estimate (≈ 107: 1 ms of work stretched over a slow little CPU) fits a little
        // CPU, but at 1.25 × 107 of 160 the little domain would run near its top OPP, so
        // `find_energy_efficient_cpu` finds a mid CPU at its lowest OPP cheaper; either way
        // it is not a misfit and stays off the big CPUs.
        let small_cpus: Vec<_> = ins(small).filter(|s| s.0 >= Ns::from_ms(300)).map(|s| s.1).collect();
        assert!(!small_cpus.is_empty() && small_cpus.iter().all(|&c| c < 6), "{sched}: small ran on {small_cpus:?}");
    }
}
