//! Random worlds: every policy keeps the invariants after every event and replays
//! bit-identically (see `schedlab_run::fuzz`; `schedlab fuzz --seeds N` explores more).

mod common;
use common::*;
use schedlab_run::deterministic_json;
use schedlab_run::fuzz::world;

#[test]
fn random_worlds_keep_invariants_and_replay() {
    for seed in 0..8u64 {
        let (text, machine) = world(seed);
        let configs: [(&str, &[(&str, &str)]); 4] =
            [("cfs", &[]), ("ule", &[]), ("ule", &[("version", "current")]), ("fifo", &[])];
        for (sched, sets) in configs {
            let mut j = job(&text, machine, sched, 1, sets);
            j.seed = seed;
            j.end = schedlab_sim::Ns::from_ms(120);
            let r = j
                .run(&mut |_| true)
                .unwrap_or_else(|e| panic!("seed {seed}, {sched} on {machine}: {e}\nworkload:\n{text}"));
            let again = j.run(&mut |_| true).unwrap();
            assert_eq!(
                deterministic_json(&r),
                deterministic_json(&again),
                "seed {seed}, {sched} on {machine} does not replay\nworkload:\n{text}"
            );
        }
    }
}
