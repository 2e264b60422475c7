//! Random worlds: every policy keeps the invariants after every event and replays
//! bit-identically (see `schedlab_run::fuzz`; `schedlab fuzz --seeds N` explores more).

use schedlab_run::fuzz::check_world;

/// Short worlds, two at a time, twice through every scheduler configuration (seeds cycle
/// through them); `schedlab fuzz` runs many more.
#[test]
fn random_worlds_keep_invariants_and_replay() {
    let seeds: Vec<u64> = (0..2 * schedlab_run::fuzz::CONFIGS.len() as u64).collect();
    std::thread::scope(|s| {
        for half in seeds.chunks(seeds.len() / 2) {
            s.spawn(move || {
                for &seed in half {
                    match check_world(seed, schedlab_sim::Ns::from_ms(60), &mut |_| true) {
                        Ok(done) => assert!(done, "seed {seed} was interrupted"),
                        Err(f) => panic!(
                            "seed {seed}, {} {:?} on {}: {}\nworkload:\n{}",
                            f.sched, f.sets, f.machine, f.message, f.workload
                        ),
                    }
                }
            });
        }
    });
}

/// SMT machines are among the random worlds: the first world on `i7-3770` (siblings that
/// slow each other down, work re-timed as they start and stop) keeps every invariant too.
#[test]
fn a_random_world_on_an_smt_machine() {
    let seed = (0..1000).find(|&s| schedlab_run::fuzz::world(s).1 == "i7-3770").expect("some world is on i7-3770");
    match check_world(seed, schedlab_sim::Ns::from_ms(60), &mut |_| true) {
        Ok(done) => assert!(done, "seed {seed} was interrupted"),
        Err(f) => {
            panic!("seed {seed}, {} {:?} on {}: {}\nworkload:\n{}", f.sched, f.sets, f.machine, f.message, f.workload)
        }
    }
}

/// Worlds the fuzzer once failed on, kept as regressions. 477353 (eevdf 6.18 on `i7-3770`):
/// a `futex_swap` direct switch took a delayed-dequeue sleeper that the balancer had detached
/// but not yet attached, so it was enqueued twice (on the waker's CPU and at the attach).
#[test]
fn worlds_that_once_failed_keep_their_invariants() {
    for seed in [477_353] {
        match check_world(seed, schedlab_sim::Ns::from_ms(25), &mut |_| true) {
            Ok(done) => assert!(done, "seed {seed} was interrupted"),
            Err(f) => {
                panic!(
                    "seed {seed}, {} {:?} on {}: {}\nworkload:\n{}",
                    f.sched, f.sets, f.machine, f.message, f.workload
                )
            }
        }
    }
}
