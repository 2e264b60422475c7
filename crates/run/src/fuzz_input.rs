//! The input fuzzer (`schedlab fuzz --parser`, `crates/cli/tests/parser_fuzz.rs`): a seed
//! builds a malformed input — a workload, machine, rt-app or sweep file mutated from a valid
//! one, a trace (`perf.data`, ftrace text, Perfetto) with bytes changed, or a command-line
//! value (`--duration`, `--set KEY=VALUE`, `--param`) — and [`check_input`] feeds it through
//! the parsers (parse, validate, lower; tunables on a machine; a trace read, modelled, its
//! workload written, loaded and measured as it happened). Sweep files are checked by the
//! caller (`schedlab_sweep` depends on this crate). The contract: a clear error or a
//! result, never a panic, an abort or unbounded memory (the caller watches panics and
//! memory).

use crate::RunSpec;
use rand::{Rng, RngExt};
use schedlab_sim::{Ns, RngStreams};
use std::borrow::Cow;

/// What an input is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Workload,
    Machine,
    /// `--duration`, `--set` or `--param` values, each a line.
    Cli,
    /// rt-app JSON, mutated with JSON's own punctuation and rt-app's keys.
    RtApp,
    /// `perf.data` (`perf sched record`), bytes changed.
    Perf,
    /// ftrace text (tracefs, `trace-cmd report`, `perf script`).
    Ftrace,
    /// A Perfetto trace as `--trace` writes it, bytes changed.
    Perfetto,
    /// A sweep file (`schedlab sweep`): checked by the caller.
    Sweep,
}

/// Every kind, in the order seeds cycle through them.
pub const KINDS: [Kind; 8] =
    [Kind::Workload, Kind::Machine, Kind::Cli, Kind::RtApp, Kind::Perf, Kind::Ftrace, Kind::Perfetto, Kind::Sweep];

/// One generated input.
#[derive(Clone, Debug)]
pub struct Input {
    pub kind: Kind,
    pub data: Vec<u8>,
}

impl Input {
    /// A text input.
    pub fn text_input(kind: Kind, text: String) -> Input {
        Input { kind, data: text.into_bytes() }
    }

    /// The input as text (binary bytes replaced), for the parsers of text and for a report.
    pub fn text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.data)
    }

    /// Whether the input is a binary file (shown by its seed, not its bytes).
    pub fn is_binary(&self) -> bool {
        matches!(self.kind, Kind::Perf | Kind::Perfetto)
    }
}

/// Longest input generated.
const MAX_LEN: usize = 32 * 1024;

/// Longest binary input generated (the `perf.data` fixture is 418 KiB).
const MAX_BINARY_LEN: usize = 512 * 1024;

const MACHINE: &str = include_str!("../../../examples/machines/two-llc.toml");
const RTAPP: &[&str] = &[
    include_str!("../../../examples/rt-app/barrier.json"),
    include_str!("../../../examples/rt-app/condvar.json"),
    include_str!("../../../examples/rt-app/deadline.json"),
    include_str!("../../../examples/rt-app/fork.json"),
    include_str!("../../../examples/rt-app/mutex-pi.json"),
    include_str!("../../../examples/rt-app/periodic.json"),
    include_str!("../../../examples/rt-app/phases.json"),
    include_str!("../../../examples/rt-app/shared-timer.json"),
    include_str!("../../../examples/rt-app/suspend-resume.json"),
    include_str!("../../../examples/rt-app/sync.json"),
    include_str!("../../../examples/rt-app/timer-modes.json"),
];
const PERF_DATA: &[u8] = include_bytes!("../../trace-import/tests/fixtures/messaging.perf.data");
const FTRACE: &str = include_str!("../../trace-import/tests/fixtures/messaging.ftrace.txt");
const SWEEP: &str = include_str!("../../../examples/sweeps/hackbench-groups.toml");
/// What the sweep fuzz files name as their workload (`workload = "…"`): the one name the
/// caller's loader resolves, to the hackbench example.
pub const SWEEP_WORKLOAD: &str = "../workloads/hackbench.toml";
/// The workload [`SWEEP_WORKLOAD`] names.
pub const SWEEP_WORKLOAD_TEXT: &str = include_str!("../../../examples/workloads/hackbench.toml");

/// rt-app JSON's punctuation and keys, extreme values, and what json-c's lax grammar takes.
const JSON_TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "null",
    "true",
    "false",
    "-1",
    "0",
    "1e308",
    "-1e308",
    "1.5",
    "18446744073709551615",
    "\"\"",
    "//",
    "/*",
    "*/",
    "\"loop\": -1",
    "\"loop\": 1000000000",
    "\"instance\": 100000",
    "\"run\": ",
    "\"sleep\": ",
    "\"runtime\": ",
    "\"period\": 0",
    "\"priority\": 100",
    "\"policy\": \"SCHED_DEADLINE\"",
    "\"timer\": { \"ref\": \"t\", \"period\": 0 }",
    "\"lock\": \"m\"",
    "\"unlock\": \"m\"",
    "\"barrier\": \"b\"",
    "\"fork\": \"x\"",
    "\"phases\": {",
    "\"tasks\": {",
    "\"global\": {",
    "\"cpus\": [99999]",
    "\"duration\": -5",
    "\u{feff}",
    "\\u0000",
    "\\ud800",
];

/// ftrace text's fields and the values that break readers.
const FTRACE_TOKENS: &[&str] = &[
    "\n",
    " ",
    ":",
    "=",
    "==>",
    "[",
    "]",
    "[4096]",
    "[99999]",
    " 18446744073.709551615: ",
    " 0.000000: ",
    "sched_switch: ",
    "sched_waking: ",
    "sched_wakeup_new: ",
    "sched_migrate_task: ",
    "sched_process_fork: ",
    "sched_process_exit: ",
    "prev_pid=",
    "next_pid=-1",
    "prev_state=X",
    "prev_state=R+",
    "prev_state=?",
    "target_cpu=4294967295",
    "dest_cpu=4096",
    "child_pid=0",
    "prio=-2147483648",
    "# tracer: nop\n",
    "cpus=4\n",
    "CPU:3 [LOST 99 EVENTS]\n",
    "d.h2. ",
    "\u{0}",
    "\u{e9}",
    "\u{202e}",
];
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

/// Input `seed`: each of the [`KINDS`] equally often (the kind drawn from the seed).
pub fn input(seed: u64) -> Input {
    let mut rng = RngStreams::new(seed).stream("input", 0);
    let kind = KINDS[rng.random_range(0..KINDS.len())];
    let text = |s: String| Input::text_input(kind, s);
    match kind {
        Kind::Workload => {
            let base = match rng.random_range(0..WORKLOADS.len() + 2) {
                i if i < WORKLOADS.len() => WORKLOADS[i].to_string(),
                i if i == WORKLOADS.len() => STUDY_WORKLOADS[rng.random_range(0..STUDY_WORKLOADS.len())].to_string(),
                _ => crate::fuzz::world(rng.random()).0,
            };
            text(mutate(&mut rng, &base, TOKENS))
        }
        Kind::Machine => text(mutate(&mut rng, MACHINE, TOKENS)),
        Kind::Cli => text(cli_values(&mut rng)),
        Kind::RtApp => {
            let base = RTAPP[rng.random_range(0..RTAPP.len())];
            text(mutate(&mut rng, base, JSON_TOKENS))
        }
        Kind::Sweep => text(mutate(&mut rng, SWEEP, TOKENS)),
        Kind::Ftrace => {
            // A window of whole lines of the fixture (it is larger than MAX_LEN), mutated.
            let from = rng.random_range(0..FTRACE.len() / 2);
            let from = FTRACE[from..].find('\n').map_or(0, |i| from + i + 1);
            let base = &FTRACE[from..(from + MAX_LEN / 2).min(FTRACE.len())];
            let base = base.rfind('\n').map_or(base, |i| &base[..=i]);
            Input { kind, data: mutate_bytes(&mut rng, base.as_bytes(), FTRACE_TOKENS, MAX_LEN) }
        }
        Kind::Perf => Input { kind, data: mutate_binary(&mut rng, PERF_DATA) },
        Kind::Perfetto if rng.random_bool(0.5) => Input { kind, data: mutate_binary(&mut rng, PERFETTO) },
        Kind::Perfetto => Input { kind, data: mutate_packets(&mut rng, PERFETTO) },
    }
}

/// A Perfetto trace of a short simulated run, schedlab's own export (forks, sleeps, yields,
/// exits; `crates/trace-import/tests/fixtures.rs: perfetto_fixture_imports` says how it
/// was made).
const PERFETTO: &[u8] = include_bytes!("../../trace-import/tests/fixtures/forks.pftrace");

/// A Perfetto trace's top-level packets (`Trace.packet`, field 1: tag byte 0x0a, a varint
/// length), each with its framing; what follows a damaged frame is one last piece.
fn packets(b: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let (mut len, mut shift, mut j) = (0usize, 0, i + 1);
        while j < b.len() && shift < 63 {
            len |= usize::from(b[j] & 0x7f) << shift;
            shift += 7;
            j += 1;
            if b[j - 1] & 0x80 == 0 {
                break;
            }
        }
        let end = j.saturating_add(len);
        if b[i] != 0x0a || end > b.len() {
            out.push(&b[i..]);
            break;
        }
        out.push(&b[i..end]);
        i = end;
    }
    out
}

/// Mutations that keep a Perfetto trace decodable as packets, so the readers behind the
/// decoder are reached: whole packets dropped, repeated or swapped (events out of order,
/// switches twice or never), and bytes inside a packet changed in their low 7 bits only
/// (a varint keeps its length; a length it changes fails that packet alone).
fn mutate_packets(rng: &mut impl Rng, base: &[u8]) -> Vec<u8> {
    let mut ps = packets(base);
    let mut inner: Vec<(usize, usize, u8)> = Vec::new();
    for _ in 0..rng.random_range(1..=6) {
        let n = ps.len();
        if n == 0 {
            break;
        }
        let i = rng.random_range(0..n);
        match rng.random_range(0..4) {
            0 => drop(ps.remove(i)),
            1 if n < 4096 => ps.insert(rng.random_range(0..=n), ps[i]),
            2 => ps.swap(i, rng.random_range(0..n)),
            _ => {
                let at = rng.random_range(0..ps[i].len());
                inner.push((i, at, rng.random::<u8>() & 0x7f));
            }
        }
    }
    let mut out: Vec<Vec<u8>> = ps.iter().map(|p| p.to_vec()).collect();
    for (i, at, bits) in inner {
        if let Some(b) = out.get_mut(i).and_then(|p| p.get_mut(at)) {
            *b = (*b & 0x80) | bits;
        }
    }
    out.concat()
}

/// Binary mutations: 1 to 8 of byte changes, a 64-bit field set to an extreme value, a
/// deletion, a duplication, a cut.
fn mutate_binary(rng: &mut impl Rng, base: &[u8]) -> Vec<u8> {
    let mut b = base.to_vec();
    for _ in 0..rng.random_range(1..=8) {
        let at = rng.random_range(0..b.len().max(1));
        match rng.random_range(0..5) {
            0 => {
                for i in at..(at + rng.random_range(1..8)).min(b.len()) {
                    b[i] = rng.random();
                }
            }
            1 if at + 8 <= b.len() => {
                let v = [0u64, 1, 0x7f, 0xff, 1 << 31, u64::from(u32::MAX), 1 << 40, u64::MAX - 8, u64::MAX];
                b[at..at + 8].copy_from_slice(&v[rng.random_range(0..v.len())].to_le_bytes());
            }
            2 if !b.is_empty() => {
                let end = (at + rng.random_range(1..256)).min(b.len());
                b.drain(at..end);
            }
            3 if b.len() < MAX_BINARY_LEN => {
                let end = (at + rng.random_range(1..4096)).min(b.len());
                let piece = b[at..end].to_vec();
                let to = rng.random_range(0..=b.len());
                b.splice(to..to, piece);
            }
            _ => b.truncate(rng.random_range(0..=b.len())),
        }
    }
    b.truncate(MAX_BINARY_LEN);
    b
}

/// 1 to 8 mutations: deletions, token insertions, duplications, number replacements.
fn mutate(rng: &mut impl Rng, base: &str, tokens: &[&str]) -> String {
    String::from_utf8_lossy(&mutate_bytes(rng, base.as_bytes(), tokens, MAX_LEN)).into_owned()
}

/// [`mutate`] on bytes, at most `max` of them.
fn mutate_bytes(rng: &mut impl Rng, base: &[u8], tokens: &[&str], max: usize) -> Vec<u8> {
    let mut b: Vec<u8> = base.to_vec();
    for _ in 0..rng.random_range(1..=8) {
        let at = rng.random_range(0..=b.len());
        match rng.random_range(0..4) {
            0 if !b.is_empty() => {
                let end = (at + rng.random_range(1..64)).min(b.len());
                b.drain(at.min(end)..end);
            }
            1 if b.len() < max => {
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
                let t = tokens[rng.random_range(0..tokens.len())];
                b.splice(at..at, t.bytes());
            }
        }
        b.truncate(max);
    }
    b
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
    let text = input.text();
    match input.kind {
        Kind::Workload | Kind::RtApp => {
            // Parse, validate and lower; not run: a valid workload may legitimately fork up
            // to the task limit, which is the world fuzzer's and the limits' business.
            let name = if input.kind == Kind::RtApp { "fuzz.json" } else { "fuzz.toml" };
            RunSpec::load(name, &text, Some("smp4"), &[], Some(Ns::from_ms(1))).map(drop).map_err(|e| e.to_string())
        }
        Kind::Perf | Kind::Ftrace | Kind::Perfetto => check_trace(&input.data),
        Kind::Sweep => Err("a sweep file is checked by the caller (schedlab_sweep::parse)".into()),
        Kind::Machine => {
            let m = schedlab_machine::parse_machine("fuzz-machine.toml", &text).map_err(|e| e.to_string())?;
            if m.nr_cpus() > 4096 {
                return Err("more CPUs than tried here".into());
            }
            for e in schedlab_policies::REGISTRY {
                (e.make)(&m, &[]).map_err(|e| e.to_string())?;
            }
            Ok(())
        }
        Kind::Cli => cli_check(&text),
    }
}

/// A trace through the whole import: read, model, its workload written, loaded (parsed,
/// validated, lowered) and the trace measured as it happened.
fn check_trace(bytes: &[u8]) -> Result<(), String> {
    let opts = schedlab_trace_import::model::Options::default();
    let imp = crate::replay::import_bytes("fuzz.trace", bytes, &opts).map_err(|e| e.to_string())?;
    // The machine as `replay` picks it: the workload's, else the default.
    let spec = RunSpec::load("fuzz.toml", &imp.text, None, &[], None).map_err(|e| e.to_string())?;
    let r = crate::replay::as_happened(&spec, &imp);
    // A mismatch is a defect, not a rejection: it panics, and the fuzzer reports it.
    assert_eq!(r.tasks.len(), imp.model.threads.len(), "every imported thread is measured");
    Ok(())
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
