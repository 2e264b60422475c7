//! The input fuzzer, fast: malformed workload and machine files and command-line values
//! (`schedlab_run::fuzz_input`, seeds drawn by proptest, plus proptest's own strings for
//! durations and KEY=VALUE) never panic, and no input takes more than 1 GiB of heap (the
//! watching allocator aborts naming the seed). `schedlab fuzz --parser --seeds N` runs more.

use proptest::prelude::*;
use schedlab_run::fuzz_input::{check_input, input, Input, Kind};

#[global_allocator]
static ALLOC: schedlab::memlimit::Watching = schedlab::memlimit::Watching;

fn watched(seed: u64, i: &Input) {
    static START: std::sync::Once = std::sync::Once::new();
    START.call_once(|| schedlab::memlimit::watch(schedlab::fuzz::PARSER_MEMORY_LIMIT));
    schedlab::memlimit::checking(seed);
    let _ = check_input(i);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_inputs_never_panic(seed in any::<u64>()) {
        watched(seed, &input(seed));
    }

    #[test]
    fn command_line_values_never_panic(d in "[0-9.eE+-]{0,24}(ns|us|ms|s|m|h|x)?", v in "\\PC{0,40}") {
        let text = format!("duration {d}\nset {v}\nparam {v}\n");
        watched(u64::MAX, &Input { kind: Kind::Cli, text });
    }
}

/// The generator covers every kind of input, deterministically.
#[test]
fn inputs_are_deterministic_and_cover_every_kind() {
    let kinds: Vec<Kind> = (0..30).map(|s| input(s).kind).collect();
    for k in [Kind::Workload, Kind::Machine, Kind::Cli] {
        assert!(kinds.contains(&k), "{k:?} never generated");
    }
    assert_eq!(input(7).text, input(7).text);
}
