//! The input fuzzer (`schedlab fuzz --parser`, `crates/cli/tests/parser_fuzz.rs`): a seed
//! builds a malformed input — a workload or machine file mutated from a valid one, or a
//! command-line value (`--duration`, `--set KEY=VALUE`, `--param`) — and [`check_input`]
//! feeds it through the parsers (parse, validate, lower; tunables on a machine). The contract: a clear
//! error or a result, never a panic, an abort or unbounded memory (the caller watches
//! panics and memory).

use crate::RunSpec;
use rand::{Rng, RngExt};
use schedlab_sim::{Ns, RngStreams};

/// What an input is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Workload,
    Machine,
    /// `--duration`, `--set` or `--param` values, each a line.
    Cli,
}

/// One generated input.
#[derive(Clone, Debug)]
pub struct Input {
    pub kind: Kind,
    pub text: String,
}

/// Longest input generated.
const MAX_LEN: usize = 32 * 1024;

const MACHINE: &str = include_str!("../../../examples/machines/two-llc.toml");
const WORKLOADS: &[&str] = &[
    include_str!("../../../examples/workloads/hackbench.toml"),
    include_str!("../../../examples/workloads/cpu-io-mix.toml"),
    include_str!("../../../examples/workloads/nice-pair.toml"),
    // rt-app JSON (the second front end).
    include_str!("../../../examples/rt-app/phases.json"),
    include_str!("../../../examples/rt-app/condvar.json"),
];

/// Larger seeds: the single-workload studies' files (the studies themselves live above
/// this crate).
const STUDY_WORKLOADS: &[&str] = &[
    include_str!("../../../examples/studies/ule-cfs-fibo-sysbench.toml"),
    include_str!("../../../examples/studies/ule-cfs-unpin512.toml"),
    include_str!("../../../examples/studies/ule-cfs-mg.toml"),
    include_str!("../../../examples/studies/ule-cfs-apache.toml"),
    include_str!("../../../examples/studies/ule-cfs-mix-blackscholes-ferret.toml"),
];

/// Fragments spliced into inputs: TOML structure, extreme numbers and durations,
/// expressions, odd characters.
const TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "[[",
    "]]",
    "\"",
    "'",
    "=",
    ",",
    "\n",
    "#",
    ".",
    "[[task]]\n",
    "[[change]]\n",
    "loop = ",
    "\"forever\"",
    "count = ",
    "parties = ",
    "0",
    "-1",
    "1e9",
    "1e400",
    "nan",
    "inf",
    "18446744073709551615",
    "9223372036854775808",
    "-9223372036854775808",
    "\"18446744073s\"",
    "\"0ns\"",
    "\"1ns\"",
    "\"1h\"",
    "{n}",
    "{ n * 1000 }",
    "((((((((",
    "))))))))",
    "for = ",
    "\"0-1023\"",
    "\u{e9}",
    "\u{0}",
    "\u{feff}",
    "true",
    "{ run = \"1ms\" }",
    "{ fork = \"t\", count = 1000000 }",
    "\"\"\"",
    "'''",
    "nodes = ",
    "cpus = ",
];

/// Input `seed`: a third each of workloads, machine files and command-line values.
pub fn input(seed: u64) -> Input {
    let mut rng = RngStreams::new(seed).stream("input", 0);
    match rng.random_range(0..3) {
        0 => {
            let base = match rng.random_range(0..WORKLOADS.len() + 2) {
                i if i < WORKLOADS.len() => WORKLOADS[i].to_string(),
                i if i == WORKLOADS.len() => STUDY_WORKLOADS[rng.random_range(0..STUDY_WORKLOADS.len())].to_string(),
                _ => crate::fuzz::world(rng.random()).0,
            };
            Input { kind: Kind::Workload, text: mutate(&mut rng, &base) }
        }
        1 => Input { kind: Kind::Machine, text: mutate(&mut rng, MACHINE) },
        _ => Input { kind: Kind::Cli, text: cli_values(&mut rng) },
    }
}

/// 1 to 8 mutations: deletions, token insertions, duplications, number replacements.
fn mutate(rng: &mut impl Rng, base: &str) -> String {
    let mut b: Vec<u8> = base.as_bytes().to_vec();
    for _ in 0..rng.random_range(1..=8) {
        let at = rng.random_range(0..=b.len());
        match rng.random_range(0..4) {
            0 if !b.is_empty() => {
                let end = (at + rng.random_range(1..64)).min(b.len());
                b.drain(at.min(end)..end);
            }
            1 if b.len() < MAX_LEN => {
                let from = rng.random_range(0..=b.len());
                let to = (from + rng.random_range(1..256)).min(b.len());
                let piece = b[from..to].to_vec();
                b.splice(at..at, piece);
            }
            2 => {
                // Replace the digits at a random number with an extreme one.
                if let Some(p) = b[at..].iter().position(u8::is_ascii_digit).map(|p| p + at) {
                    let end = b[p..].iter().position(|c| !c.is_ascii_digit()).map_or(b.len(), |e| e + p);
                    let n = ["0", "1", "65536", "4294967296", "18446744073709551615", "99999999999999999999"];
                    b.splice(p..end, n[rng.random_range(0..n.len())].bytes());
                }
            }
            _ => {
                let t = TOKENS[rng.random_range(0..TOKENS.len())];
                b.splice(at..at, t.bytes());
            }
        }
        b.truncate(MAX_LEN);
    }
    String::from_utf8_lossy(&b).into_owned()
}

/// Random `--duration`, `--set` and `--param` values, one per line (`KIND VALUE`).
fn cli_values(rng: &mut impl Rng) -> String {
    let pieces =
        ["", "0", "1", "-", "1e9", "18446744073709551615", "2.5", ".", "e", "ns", "us", "ms", "s", " ", "x", "="];
    let mut value =
        || (0..rng.random_range(0..5)).map(|_| pieces[rng.random_range(0..pieces.len())]).collect::<String>();
    format!("duration {}\nset {}\nparam {}\n", value(), value(), value())
}

/// Feeds `input` through the parsers it targets; `Err` is a located rejection (fine), `Ok`
/// an accepted input. Panics and memory are for the caller to watch.
pub fn check_input(input: &Input) -> Result<(), String> {
    match input.kind {
        Kind::Workload => {
            // Parse, validate and lower; not run: a valid workload may legitimately fork up
            // to the task limit, which is the world fuzzer's and the limits' business.
            RunSpec::load("fuzz.toml", &input.text, Some("smp4"), &[], Some(Ns::from_ms(1)))
                .map(drop)
                .map_err(|e| e.to_string())
        }
        Kind::Machine => {
            let m = schedlab_machine::parse_machine("fuzz-machine.toml", &input.text).map_err(|e| e.to_string())?;
            if m.nr_cpus() > 4096 {
                return Err("more CPUs than tried here".into());
            }
            for e in schedlab_policies::REGISTRY {
                (e.make)(&m, &[]).map_err(|e| e.to_string())?;
            }
            Ok(())
        }
        Kind::Cli => cli_check(&input.text),
    }
}

fn cli_check(text: &str) -> Result<(), String> {
    let machine = schedlab_machine::preset("smp4").expect("preset");
    for line in text.lines() {
        let (kind, value) = line.split_once(' ').unwrap_or((line, ""));
        match kind {
            "duration" => drop(schedlab_sim::parse_duration(value)),
            "set" => {
                for e in schedlab_policies::REGISTRY {
                    let Ok(p) = (e.make)(&machine, &[]) else { continue };
                    for t in p.tunables() {
                        let _ = (e.make)(&machine, &[(t.name.to_string(), value.to_string())]);
                    }
                }
            }
            _ => {
                let text = "[params]\nn = 2\n[[task]]\nname = \"t\"\nprogram = [ { loop = \"$n\", do = [ { run = \"1ms\" } ] } ]\n";
                let _ =
                    RunSpec::load("p.toml", text, Some("smp4"), &[("n".into(), value.into())], Some(Ns::from_ms(1)));
            }
        }
    }
    Ok(())
}
