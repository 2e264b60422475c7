//! The input fuzzer, fast: malformed workload, machine, rt-app and sweep files, traces
//! (`perf.data`, ftrace text, Perfetto) and command-line values (`schedlab_run::fuzz_input`,
//! seeds drawn by proptest, plus proptest's own strings for durations and KEY=VALUE) never
//! panic, and no input takes more than 1 GiB of heap (the watching allocator aborts naming
//! the seed). `schedlab fuzz --parser --seeds N` runs more.

use proptest::prelude::*;
use schedlab::fuzz::check_input;
use schedlab_run::fuzz_input::{input, Input, Kind, KINDS};

#[global_allocator]
static ALLOC: schedlab::memlimit::Watching = schedlab::memlimit::Watching;

fn watched(seed: u64, i: &Input) -> Result<(), String> {
    static START: std::sync::Once = std::sync::Once::new();
    START.call_once(|| schedlab::memlimit::watch(schedlab::fuzz::PARSER_MEMORY_LIMIT));
    schedlab::memlimit::checking(seed);
    check_input(i)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_inputs_never_panic(seed in any::<u64>()) {
        let _ = watched(seed, &input(seed));
    }

    #[test]
    fn command_line_values_never_panic(d in "[0-9.eE+-]{0,24}(ns|us|ms|s|m|h|x)?", v in "\\PC{0,40}") {
        let text = format!("duration {d}\nset {v}\nparam {v}\n");
        let _ = watched(u64::MAX, &Input::text_input(Kind::Cli, text));
    }
}

/// The generator covers every kind of input, deterministically, and each kind's base is
/// a valid input (the mutations start from something the parsers accept): some seeds of
/// every kind are accepted and some refused.
#[test]
fn inputs_are_deterministic_and_cover_every_kind() {
    let mut accepted = vec![0u32; KINDS.len()];
    let mut refused = vec![0u32; KINDS.len()];
    for seed in 0..400 {
        let i = input(seed);
        let k = KINDS.iter().position(|&k| k == i.kind).unwrap();
        match watched(seed, &i) {
            Ok(()) => accepted[k] += 1,
            Err(_) => refused[k] += 1,
        }
    }
    for (k, kind) in KINDS.iter().enumerate() {
        assert!(accepted[k] + refused[k] > 0, "{kind:?} never generated");
        if *kind != Kind::Cli {
            assert!(accepted[k] > 0 && refused[k] > 0, "{kind:?}: {} accepted, {} refused", accepted[k], refused[k]);
        }
    }
    assert_eq!(input(7).data, input(7).data);
}
