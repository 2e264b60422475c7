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
    let mut on: Vec<Vec<usize>> = vec![Vec::new(); r.tasks.len()];
    for &(t, cpu, _, next) in &sw.0 {
        if let Some(n) = next.filter(|_| t >= from) {
            if !on[n].contains(&cpu) {
                on[n].push(cpu);
            }
        }
    }
    (on, r.policy_counters)
}

/// Once PELT has built up (after 1 s), EAS keeps the small task on the little cluster
/// (the cheapest place it fits: `fits_capacity(64, 160)`) and the big task on the big
/// one (it fits nowhere else: `util × 1280 < capacity × 1024` fails at 160 and 498), under
/// both the v6.18 and the v5.15 `find_energy_efficient_cpu`.
#[test]
fn small_task_on_little_big_task_on_big() {
    for sched in ["eevdf", "cfs"] {
        let (on, c) = placements(SMALL_AND_BIG, sched, 2, &[], Ns::from_secs(1));
        assert!(c["eas.feec"] > 50, "{sched}: EAS placed the wakeups: {c:?}");
        assert!(!on[0].is_empty() && on[0].iter().all(|&cpu| cpu < 4), "{sched}: small ran on {:?}", on[0]);
        assert!(!on[1].is_empty() && on[1].iter().all(|&cpu| cpu >= 6), "{sched}: big ran on {:?}", on[1]);
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
