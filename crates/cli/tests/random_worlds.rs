//! Random worlds: every policy keeps the invariants after every event and replays
//! bit-identically (see `schedlab_run::fuzz`; `schedlab fuzz --seeds N` explores more).

use schedlab_run::fuzz::check_world;

#[test]
fn random_worlds_keep_invariants_and_replay() {
    for seed in 0..8u64 {
        match check_world(seed, schedlab_sim::Ns::from_ms(120), &mut |_| true) {
            Ok(done) => assert!(done, "seed {seed} was interrupted"),
            Err(f) => panic!("seed {seed}, {} {:?} on {}: {}\nworkload:\n{}", f.sched, f.sets, f.machine, f.message, f.workload),
        }
    }
}
