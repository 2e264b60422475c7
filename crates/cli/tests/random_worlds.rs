//! Random worlds: every policy keeps the invariants after every event and replays
//! bit-identically (see `schedlab_run::fuzz`; `schedlab fuzz --seeds N` explores more).

use schedlab_run::fuzz::check_world;

/// A few short worlds per run of the suite, two at a time; `schedlab fuzz` runs many more.
#[test]
fn random_worlds_keep_invariants_and_replay() {
    let seeds: Vec<u64> = (0..6).collect();
    std::thread::scope(|s| {
        for half in seeds.chunks(3) {
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
