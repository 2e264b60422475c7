//! The inferred [`Model`] as a native workload file, headed by what was read, what was
//! inferred and what was assumed.

use crate::model::{Model, Op, Thread};
use crate::{ImportError, Trace};
use std::fmt::Write;

/// Operations a task's program may hold (the workload language's limit).
const MAX_OPS_PER_TASK: usize = 1_000_000;
/// The replay may take longer than the trace under another scheduler: the run is given
/// this many times the trace's length (it ends when every task has exited anyway).
const DURATION_FACTOR: u64 = 10;
/// The workload language's longest run.
const MAX_DURATION_NS: u64 = 86_400 * 1_000_000_000;

/// `prio` (kernel scale, `include/linux/sched/prio.h`) as the task's policy keys:
/// real-time below 100 (`MAX_RT_PRIO`), else nice; -1 is `SCHED_DEADLINE`'s (`MAX_DL_PRIO -
/// 1`), whose runtime and period no sched tracepoint carries, so it is said, not replayed.
fn policy(prio: Option<i32>) -> String {
    match prio {
        Some(p @ 0..=99) => format!("policy = \"fifo\"\nrt_priority = {}\n", (99 - p).clamp(1, 99)),
        Some(p @ 100..=139) if p != 120 => format!("nice = {}\n", p - 120),
        Some(-1) => "# SCHED_DEADLINE in the trace (prio -1): its runtime and period are not in a trace, \
                     so it replays as SCHED_OTHER\n"
            .into(),
        _ => String::new(),
    }
}

/// A per-CPU kernel thread's CPU from its name (`ksoftirqd/1`, `migration/0`,
/// `kworker/1:0H`); unbound workers (`kworker/u8:2`) have none.
pub fn per_cpu_thread(comm: &str) -> Option<u32> {
    let (head, tail) = comm.split_once('/')?;
    if !matches!(head, "migration" | "ksoftirqd" | "cpuhp" | "idle_inject" | "watchdog" | "kworker" | "rcuc") {
        return None;
    }
    let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

fn ns(v: u64) -> String {
    format!("\"{v}ns\"")
}

/// The task's own timer for wakeups from outside the traced set.
const WAKE_TIMER: &str = "outside";

fn program(m: &Model, t: &Thread, out: &mut String) -> usize {
    let mut n = 0;
    // An absolute rt-app timer counts from the task's start and keeps its grid: each use
    // sleeps until the start plus the periods so far, here the wakeup's time in the trace
    // (no sleep if the replay is already past it).
    let mut expiry = t.start;
    out.push_str("program = [\n");
    for op in &t.ops {
        let line = match op {
            Op::Run(d) => format!("{{ run = {} }}", ns(*d)),
            Op::WakeAt(at) => {
                let period = at.saturating_sub(expiry);
                expiry = expiry.max(*at);
                format!("{{ timer = {}, ref = \"{WAKE_TIMER}\", mode = \"absolute\" }}", ns(period))
            }
            Op::Signal { edge } => {
                n += 1;
                format!("{{ futex_add = \"e.{edge}\", value = 1 }}, {{ futex_wake = \"e.{edge}\" }}")
            }
            Op::Wait { edge, seen } => format!("{{ futex_wait = \"e.{edge}\", expected = {seen} }}"),
            Op::Fork(c) => format!("{{ fork = \"{}\" }}", m.threads[*c].name),
        };
        n += 1;
        let _ = writeln!(out, "  {line},");
    }
    out.push_str("]\n");
    n
}

fn header(m: &Model, trace: &Trace, file: &str, out: &mut String) {
    let ms = |v: u64| v as f64 / 1e6;
    let _ = writeln!(
        out,
        "# Imported by `schedlab import` from {file} ({}): {} threads over {:.3} ms on {} CPUs.",
        trace.format.name(),
        m.threads.len(),
        ms(m.end),
        m.nr_cpus
    );
    let _ = writeln!(
        out,
        "#\n# Inferred from the trace:\n\
         # - each thread's CPU demand between the points where it blocked (`prev_state` not R), summed over\n\
         #   its preemptions (preemption is the scheduler's doing, so it is not replayed);\n\
         # - {} wakeups by a traced thread: dependencies — the waker adds 1 to a futex word `e.N` of the\n\
         #   (waker, wakee) pair and wakes it, the wakee waits while the word holds the count it has seen,\n\
         #   so each wake still follows its cause when timing changes (from {});\n\
         # - {} wakeups from outside the traced set (timers, interrupts, the idle task, wakes in interrupt\n\
         #   context where the format records it): an absolute timer `outside` per task that fires at\n\
         #   the time seen (counted from the task's start; no sleep if the replay is already later);\n\
         # - forks within the trace (`template` tasks forked by their parent); exits (`prev_state` X/Z);\n\
         # - nice or a real-time priority from the first `prio` seen; per-CPU kernel threads\n\
         #   (`ksoftirqd/N`, `migration/N`, `kworker/N:…`) bound to CPU N.",
        m.wakes_by_thread,
        if m.used_waking { "sched_waking" } else { "sched_wakeup: no sched_waking in the trace" },
        m.wakes_external,
    );
    let _ = writeln!(
        out,
        "#\n# Assumed (not in the trace):\n\
         # - threads seen at the start existed before it: running ones ran from its first event, sleeping\n\
         #   ones slept from it; threads asleep at the end sleep to its end, then exit;\n\
         # - affinity all CPUs (except per-CPU kernel threads), policy SCHED_OTHER or SCHED_FIFO, no\n\
         #   cgroups; nice changes within the trace are not replayed;\n\
         # - a wake's cost and the kernel time of blocking are inside the measured bursts (the replay adds\n\
         #   its own futex and scheduling costs on top);\n\
         # - the waker of a wakeup is the thread current on the CPU that recorded `sched_waking`."
    );
    if m.left_out > 0 {
        let _ = writeln!(
            out,
            "# - {} threads of the trace were left out (--only): their wakeups are external.",
            m.left_out
        );
    }
    if !trace.skipped.is_empty() {
        let s: Vec<String> = trace.skipped.iter().map(|(k, v)| format!("{k} ×{v}")).collect();
        let _ = writeln!(out, "# Not used: {}.", s.join(", "));
    }
    for w in &trace.warnings {
        let _ = writeln!(out, "# Warning: {w}.");
    }
    out.push('\n');
}

/// The workload file text; `file` names the trace, `name` the workload.
pub fn workload(m: &Model, trace: &Trace, file: &str, name: &str) -> Result<String, ImportError> {
    workload_with(m, trace, file, name, &|| true)
}

/// [`workload`], stopped with [`ImportError::interrupted`] once `keep_going` says so.
pub fn workload_with(
    m: &Model,
    trace: &Trace,
    file: &str,
    name: &str,
    keep_going: crate::KeepGoing,
) -> Result<String, ImportError> {
    let mut poll = crate::Poll::new(keep_going);
    let mut out = String::new();
    header(m, trace, file, &mut out);
    let _ = writeln!(out, "name = {}", toml_str(name));
    let _ = writeln!(out, "description = {}", toml_str(&format!("replay of {file}")));
    let dur = (m.end.saturating_mul(DURATION_FACTOR)).clamp(1_000_000, MAX_DURATION_NS);
    let _ = writeln!(out, "duration = {}", ns(dur));
    if matches!(m.nr_cpus, 2 | 4 | 8) {
        let _ = writeln!(out, "machine = \"smp{}\"", m.nr_cpus);
    } else {
        let _ = writeln!(out, "# machine: the trace had {} CPUs; pass --machine", m.nr_cpus);
    }
    if !m.edges.is_empty() {
        let _ = writeln!(out, "\n# One word per (waker, wakee) pair: `e.N` counts N's wakeups.");
        let _ = writeln!(out, "[[futex]]\nname = \"e\"\ncount = {}", m.edges.len());
    }
    for (i, t) in m.threads.iter().enumerate() {
        // A thread's program can be long: asked before every thread.
        if poll.stop_now() {
            return Err(ImportError::interrupted(file, format!("thread {i}")));
        }
        let _ = writeln!(out, "\n[[task]]\nname = \"{}\"", t.name);
        if t.parent.is_some() {
            out.push_str("template = true\n");
        } else if t.start > 0 {
            let _ = writeln!(out, "start = {}", ns(t.start));
        }
        out.push_str(&policy(t.prio));
        if let Some(c) = per_cpu_thread(&t.comm).filter(|c| *c < m.nr_cpus && t.cpus.iter().all(|x| x == c)) {
            let _ = writeln!(out, "affinity = [{c}]");
        }
        let n = program(m, t, &mut out);
        if n > MAX_OPS_PER_TASK {
            return Err(ImportError::new(
                file,
                format!(
                    "thread {} ({}) needs {n} operations, over the workload limit of {MAX_OPS_PER_TASK}: \
                     import a shorter trace or fewer threads (--only)",
                    t.tid, t.comm
                ),
            ));
        }
    }
    Ok(out)
}

fn toml_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_prio_becomes_policy_or_nice() {
        assert_eq!(policy(Some(0)), "policy = \"fifo\"\nrt_priority = 99\n");
        assert_eq!(policy(Some(98)), "policy = \"fifo\"\nrt_priority = 1\n");
        assert_eq!(policy(Some(100)), "nice = -20\n");
        assert_eq!(policy(Some(139)), "nice = 19\n");
        assert_eq!(policy(Some(120)), "");
        assert!(policy(Some(-1)).starts_with("# SCHED_DEADLINE"));
        assert_eq!(policy(Some(140)), "", "beyond the kernel's range: nothing inferred");
    }
}
