//! Random worlds (after TigerBeetle's simulator): a seed builds a random workload on a
//! random machine; `schedlab fuzz` and the tests run it under every policy with the kernel's
//! and the policies' invariants checked after every event. A failure names the seed and
//! prints the workload, so it replays exactly.

use crate::{RunError, RunSpec};
use rand::{Rng, RngExt};
use schedlab_metrics::{HostInfo, RunRecord};
use schedlab_probe::EndReason;
use schedlab_sim::{Ns, RngStreams, TraceHash};

/// Machines worlds are drawn on.
pub const MACHINES: &[&str] = &["up", "smp2", "smp4", "i7-3770", "opteron-32"];

/// Every scheduler and version a world runs under, with the switches worth exercising.
pub const CONFIGS: &[(&str, &[(&str, &str)])] = &[
    ("eevdf", &[]),
    ("eevdf", &[("version", "6.12")]),
    ("eevdf", &[("version", "6.6")]),
    ("eevdf", &[("autogroup", "0"), ("RUN_TO_PARITY", "0")]),
    ("cfs", &[]),
    ("cfs", &[("autogroup", "0")]),
    ("cfs", &[("version", "4.9")]),
    ("ule", &[]),
    ("ule", &[("version", "current")]),
    ("ule", &[("version", "11.1-linux")]),
    ("o1", &[]),
    ("fifo", &[]),
    ("cfs", &[("kernel.version", "3.4")]),
    ("cfs", &[("kernel.version", "2.6.32")]),
    ("cfs", &[("kernel.version", "5.15"), ("kernel.delayed_wakeup", "1")]),
    ("cfs", &[("kernel.version", "3.4"), ("kernel.delayed_wakeup", "1"), ("kernel.lb_narrow_lock", "1")]),
    ("cfs", &[("kernel.version", "2.6.32"), ("kernel.delayed_wakeup", "1")]),
    ("cfs", &[("kernel.version", "2.6.32"), ("kernel.lb_narrow_lock", "1")]),
    ("o1", &[("kernel.version", "2.6.32"), ("kernel.delayed_wakeup", "1")]),
    ("ule", &[("kernel.version", "3.4"), ("kernel.delayed_wakeup", "1")]),
    ("ext:simple", &[]),
    ("ext:simple", &[("fifo", "1"), ("switch_partial", "1")]),
    ("ext:central", &[]),
    ("ext:locality", &[]),
    ("ext:central", &[("switch_partial", "1"), ("watchdog_timeout_ms", "20")]),
];

/// Why a world failed under one configuration.
#[derive(Debug)]
pub struct Failure {
    pub sched: String,
    pub sets: Vec<(String, String)>,
    pub machine: &'static str,
    pub message: String,
    pub workload: String,
}

/// The configuration world `seed` runs under: seeds cycle through [`CONFIGS`], so any
/// `CONFIGS.len()` consecutive seeds cover every scheduler, version and switch.
pub fn config_of(seed: u64) -> (&'static str, &'static [(&'static str, &'static str)]) {
    CONFIGS[(seed % CONFIGS.len() as u64) as usize]
}

/// Runs world `seed` (its workload, machine and configuration, [`world`], [`config_of`])
/// for `end` with every invariant checked after every event (incrementally, plus full
/// checks periodically and at the end), and again to check it replays bit-identically.
/// A run that `keep_going` interrupts is neither a failure nor compared; `Ok(false)` says
/// the world was cut short.
pub fn check_world(seed: u64, end: Ns, keep_going: &mut dyn FnMut(Ns) -> bool) -> Result<bool, Failure> {
    let (text, machine) = world(seed);
    let (sched, sets) = config_of(seed);
    check_world_under(seed, &text, machine, end, sched, sets, keep_going)
}

/// [`check_world`] under `CONFIGS[config]` instead of its own configuration.
pub fn check_world_config(
    seed: u64,
    config: usize,
    end: Ns,
    keep_going: &mut dyn FnMut(Ns) -> bool,
) -> Result<bool, Failure> {
    let (sched, sets) = CONFIGS[config];
    let (text, machine) = world_for(seed, sched);
    check_world_under(seed, &text, machine, end, sched, sets, keep_going)
}

/// A configuration as `fuzz` prints it: the scheduler and its settings.
pub fn config_label(config: usize) -> String {
    let (sched, sets) = CONFIGS[config];
    let sets: Vec<String> = sets.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{sched} [{}]", sets.join(" "))
}

/// [`check_world`] under every [`CONFIGS`] entry.
pub fn check_world_everywhere(seed: u64, end: Ns, keep_going: &mut dyn FnMut(Ns) -> bool) -> Result<bool, Failure> {
    for (sched, sets) in CONFIGS {
        let (text, machine) = world_for(seed, sched);
        if !check_world_under(seed, &text, machine, end, sched, sets, keep_going)? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn check_world_under(
    seed: u64,
    text: &str,
    machine: &'static str,
    end: Ns,
    sched: &str,
    sets: &[(&str, &str)],
    keep_going: &mut dyn FnMut(Ns) -> bool,
) -> Result<bool, Failure> {
    let fail = |message: String| Failure {
        sched: sched.to_string(),
        sets: sets.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        machine,
        message,
        workload: text.to_string(),
    };
    let spec = world_spec(seed, text, machine, end, sched, sets).map_err(|e| fail(e.to_string()))?;
    let first = spec.run(keep_going).map_err(|e| fail(e.to_string()))?;
    if first.end_reason == EndReason::Interrupted {
        return Ok(false);
    }
    // The replay checks determinism. The first run checked every invariant after every
    // event; a replay identical to it event by event and pick by pick (the trace hash)
    // passes through the same states, so it runs without the checks — which also checks
    // that checking changes nothing. It is interruptible too; an interrupted replay is
    // not compared (it would differ from the complete first run without anything being
    // wrong).
    let mut unchecked = spec.clone();
    unchecked.check = false;
    let again = unchecked.run(keep_going).map_err(|e| fail(e.to_string()))?;
    if again.end_reason == EndReason::Interrupted {
        return Ok(false);
    }
    if first.trace_hash != again.trace_hash || output_hash(first) != output_hash(again) {
        return Err(fail("does not replay bit-identically".into()));
    }
    Ok(true)
}

/// A hash of a record's JSON without its `host` timing (what [`crate::deterministic_json`]
/// compares) and without the flag saying whether invariants were checked (the one field
/// the unchecked replay differs in), computed as serde writes it rather than from a built
/// text.
fn output_hash(mut r: RunRecord) -> u64 {
    r.host = HostInfo::measured(0.0, 0);
    r.kernel.invariants_checked = false;
    let mut w = HashWriter(TraceHash::default(), 0, 0);
    serde_json::to_writer(&mut w, &r).expect("a record serialises");
    w.finish()
}

/// An `io::Write` that hashes what it is given, 8 bytes to a word (the trace hash's mix).
struct HashWriter(TraceHash, u64, u32);

impl std::io::Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for &b in buf {
            self.1 = self.1 << 8 | u64::from(b);
            self.2 += 1;
            if self.2 == 8 {
                self.0.write_u64(self.1);
                (self.1, self.2) = (0, 0);
            }
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl HashWriter {
    fn finish(mut self) -> u64 {
        self.0.write_u64(self.1);
        self.0.write_u64(u64::from(self.2));
        self.0 .0
    }
}

fn world_spec(
    seed: u64,
    text: &str,
    machine: &str,
    end: Ns,
    sched: &str,
    sets: &[(&str, &str)],
) -> Result<RunSpec, RunError> {
    // Only the fair class of v5.15 on has bandwidth control; the other schedulers (and
    // v4.9's fair class) refuse `cpu.max`: their worlds run without the limits.
    let v4_9 = sched == "cfs" && sets.contains(&("version", "4.9"));
    let limits = !v4_9 && (sched.starts_with("cfs") || sched.starts_with("eevdf") || sched.starts_with("ext:"));
    let unlimited: String;
    let text = if !limits {
        unlimited = text
            .lines()
            .filter(|l| !l.starts_with("max = ") && !l.starts_with("burst = "))
            .map(|l| l.to_string() + "\n")
            .collect();
        &unlimited
    } else {
        text
    };
    let mut spec = RunSpec::load(&format!("world-{seed}.toml"), text, Some(machine), &[], Some(end))?;
    spec.sched = sched.to_string();
    for (k, v) in sets {
        spec.set(k, v)?;
    }
    spec.seed = seed;
    spec.check = true;
    Ok(spec)
}

fn dur(rng: &mut impl Rng, lo_us: u64, hi_us: u64) -> String {
    format!("{}us", rng.random_range(lo_us..=hi_us))
}

/// Schedulers whose kernels had no deadline class, so their `admit` refuses
/// `SCHED_DEADLINE` (Linux 2.6's O(1), FreeBSD's ULE): their worlds draw `SCHED_RR` where
/// the others draw a deadline reservation.
const NO_DEADLINE_CLASS: &[&str] = &["o1", "ule"];

/// Whether scheduler `sched` (`NAME` or `NAME@VERSION`) has a deadline class.
fn has_deadline_class(sched: &str) -> bool {
    !NO_DEADLINE_CLASS.contains(&sched.split('@').next().unwrap_or(sched))
}

/// A random policy with its parameters, as the value of `policy`/`set_policy` followed
/// by its keys: mostly normal (or ext), sometimes rt or a small deadline reservation (2 % each, so
/// that admission never refuses a world's few tasks; `SCHED_RR` without a deadline class).
fn policy(rng: &mut impl Rng, deadline: bool) -> String {
    match rng.random_range(0..8) {
        0 => format!("\"fifo\", rt_priority = {}", rng.random_range(1..=99)),
        1 => format!("\"rr\", rt_priority = {}", rng.random_range(1..=3)),
        2 if deadline => "\"deadline\", runtime = \"200us\", period = \"10ms\"".into(),
        2 => format!("\"rr\", rt_priority = {}", rng.random_range(1..=99)),
        3 => "\"batch\"".into(),
        4 => "\"idle\"".into(),
        // `SCHED_EXT`: the ext class's in partial mode, fair's elsewhere.
        5 => "\"ext\"".into(),
        _ => "\"normal\"".into(),
    }
}

/// A random but well-formed program body: locks are released, pipes used by pairs.
fn op(rng: &mut impl Rng, ncpu: usize, depth: u32, deadline: bool) -> String {
    match rng.random_range(0..16) {
        0..=3 => format!("{{ run = \"{}\" }}", dur(rng, 10, 3000)),
        4 | 5 => format!("{{ sleep = \"{}\" }}", dur(rng, 10, 5000)),
        6 => format!("{{ run = {{ dist = \"exponential\", mean = \"{}\" }} }}", dur(rng, 50, 2000)),
        7 => "\"yield\"".into(),
        8 => format!("{{ lock = \"m\" }}, {{ run = \"{}\" }}, {{ unlock = \"m\" }}", dur(rng, 5, 200)),
        9 => format!("{{ set_nice = {} }}", rng.random_range(-5..=10)),
        10 => {
            let a = rng.random_range(0..ncpu);
            let b = rng.random_range(a..ncpu);
            format!("{{ set_affinity = \"{a}-{b}\" }}")
        }
        11 => format!("{{ spin = \"{}\" }}", dur(rng, 5, 300)),
        13 => match rng.random_range(0..3) {
            0 => "{ set_slice = \"default\" }".into(),
            _ => format!("{{ set_slice = \"{}\" }}", dur(rng, 100, 5000)),
        },
        14 => format!("{{ set_policy = {} }}", policy(rng, deadline)),
        12 if depth < 2 => {
            let inner: Vec<String> = (0..rng.random_range(1..4)).map(|_| op(rng, ncpu, depth + 1, deadline)).collect();
            format!("{{ loop = {}, do = [ {} ] }}", rng.random_range(1..5), inner.join(", "))
        }
        _ => format!("{{ timer = \"{}\" }}", dur(rng, 500, 4000)),
    }
}

/// Sometimes a `cpu.max` (period 2..=100 ms, quota 1 ms..=2 periods) and a burst.
fn cpu_max(rng: &mut impl Rng) -> String {
    if !rng.random_bool(0.4) {
        return String::new();
    }
    let period = rng.random_range(2..=100u64);
    let quota = rng.random_range(1..=2 * period);
    let mut out = format!("max = \"{quota}ms/{period}ms\"\n");
    if rng.random_bool(0.5) {
        out += &format!("burst = \"{}ms\"\n", rng.random_range(0..=quota));
    }
    out
}

/// The workload text and machine preset of world `seed`, for its own configuration
/// ([`config_of`]).
pub fn world(seed: u64) -> (String, &'static str) {
    world_for(seed, config_of(seed).0)
}

/// The workload text and machine preset of world `seed` for scheduler `sched`: the same
/// draws, with `SCHED_RR` for deadline reservations where `sched` has no deadline class.
pub fn world_for(seed: u64, sched: &str) -> (String, &'static str) {
    let deadline = has_deadline_class(sched);
    let mut rng = RngStreams::new(seed).stream("world", 0);
    let machine = MACHINES[rng.random_range(0..MACHINES.len())];
    let ncpu = schedlab_machine::preset(machine).unwrap().nr_cpus();
    let mut w =
        String::from("[[mutex]]\nname = \"m\"\n[[pipe]]\nname = \"p\"\n[[barrier]]\nname = \"b\"\nparties = 2\n");
    let groups = rng.random_range(0..4);
    // Bandwidth limits draw from a stream of their own, so that the rest of each world
    // stays what it was before they existed.
    let mut bw_rng = RngStreams::new(seed).stream("world-bandwidth", 0);
    for g in 0..groups {
        let parent = if g > 0 && rng.random_bool(0.5) {
            format!("parent = \"g{}\"\n", rng.random_range(0..g))
        } else {
            String::new()
        };
        w += &format!("[[group]]\nname = \"g{g}\"\nweight = {}\n{parent}", rng.random_range(1..=1000));
        w += &cpu_max(&mut bw_rng);
    }
    w += &format!("[[session]]\nname = \"s0\"\nnice = {}\n", rng.random_range(-5..=5));
    // Small worlds (a few tasks, a few ops) keep a world to some ten thousand events, so
    // thousands of worlds a minute fit on a core with every invariant checked.
    for t in 0..rng.random_range(1..4) {
        let body: Vec<String> = (0..rng.random_range(1..5)).map(|_| op(&mut rng, ncpu, 0, deadline)).collect();
        let count = rng.random_range(1..4);
        let nice = rng.random_range(-5..=5);
        let policy = policy(&mut rng, deadline).replacen(", ", "\n", 2);
        let mut extra = match rng.random_range(0..4) {
            0 if groups > 0 => format!("group = \"g{}\"\n", rng.random_range(0..groups)),
            1 => format!("session = \"s{}\"\n", rng.random_range(0..2)),
            _ => String::new(),
        };
        if rng.random_bool(0.3) {
            extra += &format!("slice = \"{}\"\n", dur(&mut rng, 100, 8000));
        }
        w += &format!(
            "[[task]]\nname = \"t{t}\"\ncount = {count}\nnice = {nice}\npolicy = {policy}\n{extra}program = [ {{ loop = \"forever\", do = [ {} ] }} ]\n",
            body.join(", ")
        );
    }
    // A forking parent, a pipe pair and a barrier pair exercise fork/exit, pipes, barriers.
    w +=
        "[[task]]\nname = \"parent\"\nprogram = [ { loop = 3, do = [ { fork = \"child\", count = 3 }, \"wait\" ] } ]\n";
    w += &format!(
        "[[task]]\nname = \"child\"\ntemplate = true\nprogram = [ {{ run = \"{}\" }}, \"exit\" ]\n",
        dur(&mut rng, 10, 2000)
    );
    w += "[[task]]\nname = \"tx\"\nprogram = [ { loop = \"forever\", do = [ { send = \"p\", bytes = 64 }, { run = \"30us\" } ] } ]\n";
    w += "[[task]]\nname = \"rx\"\nprogram = [ { loop = \"forever\", do = [ { recv = \"p\", bytes = 64 }, { run = \"20us\" } ] } ]\n";
    // The barrier pair spins before sleeping half of the time (libgomp's barrier).
    let spin = if rng.random_bool(0.5) { format!(", spin_max = \"{}\"", dur(&mut rng, 1, 500)) } else { String::new() };
    w += &format!(
        "[[task]]\nname = \"bar\"\ncount = 2\nprogram = [ {{ loop = \"forever\", do = [ {{ run = \"200us\" }}, {{ barrier = \"b\"{spin} }} ] }} ]\n"
    );
    w += &request_loop(&mut rng);
    if rng.random_bool(0.5) {
        w += &format!("[[daemon]]\npreset = \"{}\"\n", ["kworker", "ksoftirqd", "rcu"][rng.random_range(0..3)]);
    }
    w += &futex_tasks(&mut rng);
    (w, machine)
}

/// A client keeping two requests outstanding (a `request` span each) against a server,
/// both waiting with `poll` on two connections, over pipes or sockets.
fn request_loop(rng: &mut impl Rng) -> String {
    let kind = ["pipe", "socket"][rng.random_range(0..2)];
    let service = dur(rng, 10, 500);
    format!(
        "[[pipe]]\nname = \"q\"\ncount = 2\nkind = \"{kind}\"\n[[pipe]]\nname = \"r\"\ncount = 2\nkind = \"{kind}\"\n\
         [[task]]\nname = \"cli\"\nprogram = [ {{ for = \"c\", count = 2, do = [ {{ mark_begin = \"request\", id = \"{{c}}\" }}, \
         {{ send = \"q.{{c}}\", bytes = 64 }} ] }}, {{ loop = \"forever\", do = [ {{ poll = \"r.{{c}}\", each = \"c\", count = 2, do = [ \
         {{ recv = \"r.{{c}}\", bytes = 64 }}, {{ mark_end = \"request\", id = \"{{c}}\" }}, {{ mark_begin = \"request\", id = \"{{c}}\" }}, \
         {{ send = \"q.{{c}}\", bytes = 64 }} ] }} ] }} ]\n\
         [[task]]\nname = \"srv\"\nprogram = [ {{ loop = \"forever\", do = [ {{ poll = \"q.{{c}}\", each = \"c\", count = 2, do = [ \
         {{ recv = \"q.{{c}}\", bytes = 64 }}, {{ run = \"{service}\" }}, {{ send = \"r.{{c}}\", bytes = 64 }} ] }} ] }} ]\n"
    )
}

/// Futex words at work: a request/response pair over wake + wait or `futex_swap` (on the
/// current CPU, with a direct switch), PI lockers of mixed nice values (some VIP, some
/// also taking the mutex), and a condition-variable broadcast by `CMP_REQUEUE` and
/// `WAKE_OP`. Drawn after everything else, so the rest of a seed's world is unchanged.
fn futex_tasks(rng: &mut impl Rng) -> String {
    let mut w = String::from("[[futex]]\nname = \"req\"\n[[futex]]\nname = \"resp\"\n[[futex]]\nname = \"pf\"\n");
    w += "[[futex]]\nname = \"cv\"\n[[futex]]\nname = \"cm\"\n";
    let (cur, direct) = (rng.random_bool(0.5), rng.random_bool(0.3));
    let flags = format!("current_cpu = {cur}, direct = {direct}");
    let (call_c, call_s) = if rng.random_bool(0.7) {
        (
            format!("{{ futex_swap = \"resp\", expected = 0, wake = \"req\", {flags} }}"),
            format!("{{ futex_swap = \"req\", expected = 0, wake = \"resp\", {flags} }}"),
        )
    } else {
        (
            format!("{{ futex_wake = \"req\", current_cpu = {cur} }}, {{ futex_wait = \"resp\", expected = 0 }}"),
            format!("{{ futex_wake = \"resp\", current_cpu = {cur} }}, {{ futex_wait = \"req\", expected = 0 }}"),
        )
    };
    let rounds = rng.random_range(1..200);
    w += &format!(
        "[[task]]\nname = \"client\"\nprogram = [ {{ loop = {rounds}, do = [ {{ run = \"{}\" }}, {{ futex_set = \"req\", value = 1 }}, {call_c}, {{ futex_set = \"resp\", value = 0 }} ] }}, {{ futex_set = \"req\", value = 1 }}, {{ futex_wake = \"req\" }} ]\n",
        dur(rng, 1, 50)
    );
    w += &format!(
        "[[task]]\nname = \"server\"\nprogram = [ {{ futex_wait = \"req\", expected = 0 }}, {{ loop = {rounds}, do = [ {{ futex_set = \"req\", value = 0 }}, {{ run = \"{}\" }}, {{ futex_set = \"resp\", value = 1 }}, {call_s} ] }} ]\n",
        dur(rng, 1, 50)
    );
    for i in 0..rng.random_range(1..4) {
        let vip = rng.random_bool(0.4);
        let nice = rng.random_range(-10..=10);
        let inner = if rng.random_bool(0.5) {
            format!("{{ lock = \"m\" }}, {{ run = \"{}\" }}, {{ unlock = \"m\" }}", dur(rng, 5, 100))
        } else {
            format!("{{ run = \"{}\" }}", dur(rng, 5, 100))
        };
        w += &format!(
            "[[task]]\nname = \"pi{i}\"\nnice = {nice}\nvip = {vip}\nprogram = [ {{ loop = {}, do = [ {{ lock_pi = \"pf\" }}, {inner}, {{ unlock_pi = \"pf\" }}, {{ sleep = \"{}\" }} ] }} ]\n",
            rng.random_range(1..20),
            dur(rng, 10, 500)
        );
    }
    let waiters = rng.random_range(1..4);
    w += &format!(
        "[[task]]\nname = \"cw\"\ncount = {waiters}\nvip = {}\nprogram = [ {{ futex_wait = \"cv\", expected = 0 }}, {{ futex_wait = \"cm\", expected = 0 }}, {{ run = \"20us\" }} ]\n",
        rng.random_bool(0.3)
    );
    let release = if rng.random_bool(0.5) {
        "{ futex_wake_op = \"cv\", count = 1, word2 = \"cm\", count2 = \"all\", op = \"set\", oparg = 1, cmp = \"eq\", cmparg = 0 }"
    } else {
        "{ futex_set = \"cm\", value = 1 }, { futex_wake = \"cm\", count = \"all\" }"
    };
    w += &format!(
        "[[task]]\nname = \"bcast\"\nstart = \"{}\"\nprogram = [ {{ futex_set = \"cv\", value = 1 }}, {{ futex_requeue = \"cv\", to = \"cm\", wake = 1, requeue = \"all\", expected = 1 }}, {{ sleep = \"100us\" }}, {release}, {{ sleep = \"1ms\" }}, {{ futex_set = \"cm\", value = 1 }}, {{ futex_wake = \"cm\", count = \"all\" }} ]\n",
        dur(rng, 100, 3000)
    );
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worlds for O(1) and ULE carry real-time tasks (their kernels had them) but no
    /// deadline reservation (they had none, and refuse one); the same seeds give the others
    /// deadline tasks, on the same machine.
    #[test]
    fn worlds_without_a_deadline_class_get_rt_tasks_instead() {
        let (mut rt, mut dl) = (0, 0);
        for seed in 0..300 {
            let (ours, m1) = world_for(seed, "o1");
            let (theirs, m2) = world_for(seed, "eevdf");
            assert_eq!(m1, m2);
            assert!(!ours.contains("deadline") && !world_for(seed, "ule@current").0.contains("deadline"), "{seed}");
            rt += usize::from(ours.contains("\"fifo\"") || ours.contains("\"rr\""));
            dl += usize::from(theirs.contains("\"deadline\""));
        }
        assert!(rt > 50 && dl > 20, "rt worlds {rt}, deadline worlds {dl}");
    }

    /// The replay's comparison ignores exactly the host timing and the `--check` flag:
    /// a record differing in anything else (an event count, a task's run time) hashes
    /// differently.
    #[test]
    fn output_hash_ignores_host_timing_and_the_check_flag_only() {
        let (text, machine) = world(4);
        let spec = world_spec(4, &text, machine, Ns::from_ms(5), "eevdf", &[]).unwrap();
        let a = spec.run(&mut |_| true).unwrap();
        assert!(a.kernel.invariants_checked);
        let mut b = a.clone();
        b.host = HostInfo::measured(1.5, 99);
        b.kernel.invariants_checked = false;
        assert_eq!(output_hash(a.clone()), output_hash(b));
        let mut c = a.clone();
        c.events += 1;
        assert_ne!(output_hash(a.clone()), output_hash(c));
        let mut d = a.clone();
        d.tasks[0].runtime_ns += 1;
        assert_ne!(output_hash(a), output_hash(d));
    }

    /// The unchecked replay is the checked run, event for event: same trace hash, same
    /// record apart from the flag.
    #[test]
    fn a_world_replays_identically_without_the_checks() {
        for seed in [0, 7, 13] {
            let (text, machine) = world(seed);
            let (sched, sets) = config_of(seed);
            let spec = world_spec(seed, &text, machine, Ns::from_ms(10), sched, sets).unwrap();
            let mut unchecked = spec.clone();
            unchecked.check = false;
            let (a, b) = (spec.run(&mut |_| true).unwrap(), unchecked.run(&mut |_| true).unwrap());
            assert_eq!(a.trace_hash, b.trace_hash, "seed {seed}");
            assert_eq!(output_hash(a), output_hash(b), "seed {seed}");
        }
    }
}
