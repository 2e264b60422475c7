//! rt-app's model written out as native workload TOML, one line per event, each line
//! remembering the JSON offset it came from.
//!
//! rt-app's resources are created where events name them, one namespace per kind
//! (`rt-app_parse_config.c:get_resource_index` matches name and type): mutexes (`lock`,
//! `unlock`, the `mutex` of `wait`/`sync`, the thread name of `suspend`/`resume`),
//! condition variables (`signal`, `broad`, the `ref` of `wait`/`sync`, `suspend`/`resume`),
//! barriers (as many parties as the instances of the threads naming them, counted once per
//! event) and timers.

use super::model::{Ev, Phase, Pol, Sched, Thread};
use super::{Cx, Global, IO_WRITE_NS, MEM_BYTES_PER_NS};
use schedlab_sim::SourceError;
use std::collections::{BTreeMap, BTreeSet};

type R<T> = Result<T, SourceError>;

struct Out {
    lines: Vec<String>,
    origin: Vec<usize>,
}

impl Out {
    fn line(&mut self, at: usize, s: impl Into<String>) {
        self.lines.push(s.into());
        self.origin.push(at);
    }
}

/// A TOML basic string.
fn q(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => o.push_str(&format!("\\u{:04X}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn us(n: i64) -> String {
    format!("\"{n}us\"")
}

/// Nanoseconds, in µs when whole.
fn ns(n: i64) -> String {
    if n % 1000 == 0 {
        us(n / 1000)
    } else {
        format!("\"{n}ns\"")
    }
}

/// Resources the events name, and how each timer behaves.
#[derive(Default)]
struct Resources {
    mutexes: BTreeSet<String>,
    /// Mutexes a condition variable waits with (never PI: `FUTEX_WAIT_REQUEUE_PI` is not modelled).
    cond_mutexes: BTreeSet<String>,
    conds: BTreeSet<String>,
    /// Barrier → (parties, the JSON offset of the first event naming it).
    barriers: BTreeMap<String, (i64, usize)>,
    /// Timer → absolute? Key: (thread for a unique timer, name).
    timers: BTreeMap<(Option<String>, String), bool>,
    groups: BTreeSet<String>,
}

fn scan(cx: &Cx, threads: &[Thread]) -> R<Resources> {
    let mut r = Resources::default();
    let names: BTreeSet<&str> = threads.iter().map(|t| t.name.as_str()).collect();
    for t in threads {
        for tg in t.taskgroup.iter().chain(t.phases.iter().flat_map(|p| &p.taskgroup)) {
            let mut path = String::new();
            for part in tg.0.split('/').filter(|s| !s.is_empty()) {
                path = format!("{path}/{part}");
                r.groups.insert(path.clone());
            }
        }
        for e in t.phases.iter().flat_map(|p| &p.events) {
            match &e.ev {
                Ev::Lock(m) | Ev::Unlock(m) => {
                    r.mutexes.insert(m.clone());
                }
                Ev::Wait { cond, mutex } | Ev::Sync { cond, mutex } => {
                    r.mutexes.insert(mutex.clone());
                    r.cond_mutexes.insert(mutex.clone());
                    r.conds.insert(cond.clone());
                }
                Ev::Signal(c) | Ev::Broad(c) => {
                    r.conds.insert(c.clone());
                }
                Ev::Suspend | Ev::Resume(_) => {
                    let n = if let Ev::Resume(s) = &e.ev { s.clone() } else { t.name.clone() };
                    if n.is_empty() {
                        return Err(cx.err(e.at, &e.path, "`resume` names the thread to wake; it is empty"));
                    }
                    r.mutexes.insert(n.clone());
                    r.cond_mutexes.insert(n.clone());
                    r.conds.insert(n);
                }
                Ev::Barrier(b) => {
                    let (p, _) = r.barriers.entry(b.clone()).or_insert((0, e.at));
                    *p = p.saturating_add(t.instance);
                }
                Ev::Fork(f) if !names.contains(f.as_str()) => {
                    return Err(cx.err(e.at, &e.path, format!("`fork` of `{f}`: no task of that name")));
                }
                Ev::Timer { name, unique, absolute, .. } => {
                    let key = (unique.then(|| t.name.clone()), name.clone());
                    *r.timers.entry(key).or_default() |= *absolute;
                }
                _ => {}
            }
        }
    }
    Ok(r)
}

pub(super) fn emit(cx: &mut Cx, name: &str, g: &Global, threads: &[Thread]) -> R<(String, Vec<usize>)> {
    let r = scan(cx, threads)?;
    let mut o = Out { lines: Vec::new(), origin: Vec::new() };
    o.line(0, format!("# Converted from the rt-app file {} by `schedlab convert`.", cx.file.replace('\n', " ")));
    o.line(0, format!("name = {}", q(name)));
    o.line(0, format!("description = {}", q(&format!("rt-app workload {name}"))));
    if let Some(d) = g.duration_s {
        o.line(0, format!("duration = \"{d}s\""));
    }
    let pi = |m: &str| g.pi_enabled && !r.cond_mutexes.contains(m);
    if g.pi_enabled && !r.cond_mutexes.is_empty() {
        cx.note("pi_enabled: a mutex used with a condition variable (wait, sync, suspend, resume) stays a plain futex mutex (FUTEX_WAIT_REQUEUE_PI is not modelled)".into());
    }
    for m in &r.mutexes {
        let kind = if pi(m) { "futex" } else { "mutex" };
        o.line(0, format!("[[{kind}]]\nname = {}", q(m)));
    }
    for c in &r.conds {
        o.line(0, format!("[[cond]]\nname = {}", q(c)));
    }
    for (b, &(parties, at)) in &r.barriers {
        if parties <= 0 {
            return Err(cx.err(
                at,
                "barrier",
                format!(
                    "barrier `{b}` has no party: only forked tasks (instance 0) name it, and rt-app counts instances"
                ),
            ));
        }
        o.line(at, format!("[[barrier]]\nname = {}\nparties = {parties}", q(b)));
    }
    for grp in &r.groups {
        let parent = grp.rsplit_once('/').map(|(p, _)| p).filter(|p| !p.is_empty());
        let parent = parent.map_or(String::new(), |p| format!("\nparent = {}", q(p)));
        o.line(0, format!("[[group]]\nname = {}{parent}", q(grp)));
    }
    for t in threads {
        cx.step()?;
        task(cx, &mut o, g, &r, t, &pi)?;
    }
    // Each pushed entry may hold several lines: expand the origins to one per line.
    // Programs are indented by loop depth.
    let mut text = String::new();
    let mut origin = Vec::new();
    let mut depth = 0usize;
    for (l, at) in o.lines.iter().zip(&o.origin) {
        for part in l.split('\n') {
            if part == "] }," || part == "]" {
                depth = depth.saturating_sub(1);
            }
            text.push_str(&"    ".repeat(depth));
            text.push_str(part);
            text.push('\n');
            origin.push(*at);
            if part.ends_with('[') {
                depth += 1;
            }
        }
    }
    Ok((text, origin))
}

/// A policy as the workload language sets it: `sched_attr` keys (`policy`,
/// `rt_priority`, `runtime`, …), the nice value for normal/batch/idle and a custom slice.
struct Attrs {
    kv: Vec<(&'static str, String)>,
    nice: Option<i64>,
    /// The custom slice in ns (`slice`, `set_slice`).
    slice: Option<i64>,
}

/// A fair thread's `dl-runtime` as rt-app passes it: `sched_attr.sched_runtime` of
/// `SCHED_OTHER`/`SCHED_BATCH` (`rt-app.c:__set_thread_sched_other_attrs`; not for
/// `SCHED_IDLE`), the custom slice of Linux 6.12, which the kernel clamps to 0.1–100 ms
/// (`kernel/sched/syscalls.c:__setscheduler_params`, v6.12). `dl-period` and `dl-deadline`
/// mean nothing there.
fn fair_slice(cx: &mut Cx, s: &Sched, pol: Pol, path: &str) -> Option<i64> {
    for (d, k) in s.dl[1..].iter().zip(["dl-period", "dl-deadline"]) {
        if d.is_some() {
            cx.note(format!(
                "`{path}.{k}` of a {pol:?} thread is ignored, as rt-app passes only `dl-runtime` (its custom slice)"
            ));
        }
    }
    let (rt, _) = s.dl[0].filter(|d| d.0 != 0)?;
    if pol == Pol::Idle {
        cx.note(format!("`{path}.dl-runtime` of a SCHED_IDLE thread is ignored, as rt-app sets a custom slice only for SCHED_OTHER and SCHED_BATCH"));
        return None;
    }
    let ns = rt.saturating_mul(1000);
    let slice = ns.clamp(crate::SLICE_MIN.0 as i64, crate::SLICE_MAX.0 as i64);
    if slice != ns {
        cx.note(format!("`{path}.dl-runtime` {rt} µs as a custom slice is clamped to {} µs, as the kernel clamps `sched_runtime` to 0.1–100 ms", slice / 1000));
    }
    Some(slice)
}

/// A policy as [`Attrs`]: `s`'s own policy, else `inherited`, with rt-app's default
/// priority (`parse_sched_data`: nice 0, rt priority 10).
fn policy_attrs(cx: &mut Cx, s: &Sched, inherited: Pol, path: &str) -> R<Attrs> {
    let (pol, at) = s.policy.unwrap_or((inherited, s.prio.map_or(0, |p| p.1)));
    let prio = |def: i64| s.prio.unwrap_or((def, at));
    Ok(match pol {
        Pol::Other | Pol::Batch | Pol::Idle => {
            let (nice, nat) = prio(0);
            if !(-20..=19).contains(&nice) {
                let m = format!("priority {nice} of a {pol:?} task is a nice value, outside -20..=19");
                return Err(cx.err(nat, &format!("{path}.priority"), m));
            }
            let name = match pol {
                Pol::Other => "normal",
                Pol::Batch => "batch",
                _ => "idle",
            };
            let slice = fair_slice(cx, s, pol, path);
            Attrs { kv: vec![("policy", q(name))], nice: Some(nice), slice }
        }
        Pol::Fifo | Pol::Rr => {
            let (p, pat) = prio(10);
            if !(1..=99).contains(&p) {
                return Err(cx.err(
                    pat,
                    &format!("{path}.priority"),
                    format!("priority {p} of a {pol:?} task outside 1..=99"),
                ));
            }
            if s.dl.iter().any(Option::is_some) {
                cx.note(format!("`{path}`: dl-runtime, dl-period and dl-deadline of a {pol:?} thread are ignored, as rt-app ignores them"));
            }
            let name = if pol == Pol::Fifo { "fifo" } else { "rr" };
            Attrs { kv: vec![("policy", q(name)), ("rt_priority", p.to_string())], nice: None, slice: None }
        }
        Pol::Deadline => {
            let Some((rt, _)) = s.dl[0] else {
                return Err(cx.err(at, &format!("{path}.dl-runtime"), "SCHED_DEADLINE needs `dl-runtime` (µs)"));
            };
            let period = s.dl[1].map_or(rt, |p| p.0);
            let deadline = s.dl[2].map_or(period, |d| d.0);
            for (v, k) in [(rt, "dl-runtime"), (period, "dl-period"), (deadline, "dl-deadline")] {
                if v <= 0 {
                    return Err(cx.err(at, &format!("{path}.{k}"), format!("{k} must be > 0 µs")));
                }
            }
            let kv = vec![
                ("policy", q("deadline")),
                ("runtime", us(rt)),
                ("deadline", us(deadline)),
                ("period", us(period)),
            ];
            Attrs { kv, nice: None, slice: None }
        }
    })
}

/// The policy a phase's `Sched` leaves in force, given the one before it.
fn policy_after(s: &Sched, before: Pol) -> Pol {
    s.policy.map_or(before, |p| p.0)
}

fn cpu_list(cpus: &Option<(Vec<i64>, usize)>) -> String {
    match cpus {
        Some((c, _)) => format!("[{}]", c.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")),
        None => q("all"),
    }
}

fn task(cx: &mut Cx, o: &mut Out, g: &Global, r: &Resources, t: &Thread, pi: &dyn Fn(&str) -> bool) -> R<()> {
    let path = format!("tasks.{}", t.name);
    let Attrs { kv, nice, slice } = policy_attrs(cx, &t.sched, g.default_policy, &path)?;
    let pol_at = t.sched.policy.map_or(t.at, |p| p.1);
    let start_pol = t.sched.policy.map_or(g.default_policy, |p| p.0);
    o.line(t.at, "[[task]]");
    o.line(t.at, format!("name = {}", q(&t.name)));
    if t.instance == 0 {
        // rt-app creates the thread's structures but no thread: only `fork` starts it.
        o.line(t.at, "template = true");
    } else {
        o.line(t.at, format!("count = {}", t.instance));
    }
    for (k, v) in &kv {
        o.line(pol_at, format!("{k} = {v}"));
    }
    if let Some(n) = nice {
        o.line(t.sched.prio.map_or(pol_at, |p| p.1), format!("nice = {n}"));
    }
    if let (Some(ns), Some((_, at))) = (slice, t.sched.dl[0]) {
        o.line(at, format!("slice = {}", self::ns(ns)));
    }
    for (k, u) in ["util_min", "util_max"].iter().zip(t.uclamp) {
        if let Some((v, at)) = u {
            o.line(at, format!("{k} = {v}"));
        }
    }
    if let Some((_, at)) = &t.cpus {
        o.line(*at, format!("affinity = {}", cpu_list(&t.cpus)));
    }
    if t.delay_us > 0 {
        o.line(t.at, format!("start = {}", us(t.delay_us)));
    }
    if let Some((tg, at)) = task_group(cx, t, start_pol)? {
        o.line(*at, format!("group = {}", q(tg)));
    }
    o.line(t.at, "program = [");
    let wrap = t.repeat != 1;
    if wrap {
        o.line(t.at, format!("{{ loop = {}, do = [", repeat(t.repeat)));
    }
    let phase_cpus = t.phases.iter().any(|p| p.cpus.is_some());
    let mut pol = start_pol;
    for (i, p) in t.phases.iter().enumerate() {
        let ppath = format!("{path}.phases[{i}]");
        if !p.sched.is_empty() {
            phase_policy(cx, o, &p.sched, pol, p.at, &ppath)?;
            pol = policy_after(&p.sched, pol);
        }
        if phase_cpus {
            // A phase without `cpus` returns to the thread's affinity (rt-app's rule).
            let c = if p.cpus.is_some() { &p.cpus } else { &t.cpus };
            o.line(p.cpus.as_ref().map_or(p.at, |c| c.1), format!("{{ set_affinity = {} }},", cpu_list(c)));
        }
        phase(cx, o, g, r, t, p, pi)?;
    }
    if wrap {
        o.line(t.at, "] },");
    }
    o.line(t.at, "]");
    Ok(())
}

/// A phase's scheduling properties, set at its start (`rt-app.c:set_thread_param`). With
/// neither `policy` nor `priority` a fair or rt thread keeps its attributes, as
/// `_set_thread_cfs` and `_set_thread_rt` return when the priority is unchanged; a deadline
/// thread takes the phase's `dl-*` (`_set_thread_deadline`).
fn phase_policy(cx: &mut Cx, o: &mut Out, s: &Sched, pol: Pol, at: usize, path: &str) -> R<()> {
    if s.policy.is_none() && s.prio.is_none() && pol != Pol::Deadline {
        if s.dl.iter().any(Option::is_some) {
            cx.note(format!(
                "`{path}`: dl-* without `policy` or `priority` changes nothing for a {pol:?} thread, as in rt-app"
            ));
        }
        return Ok(());
    }
    let Attrs { kv, nice, slice } = policy_attrs(cx, s, pol, path)?;
    let body: Vec<String> =
        kv.iter().map(|(k, v)| format!("{} = {v}", if *k == "policy" { "set_policy" } else { k })).collect();
    o.line(at, format!("{{ {} }},", body.join(", ")));
    if let Some(n) = nice {
        o.line(at, format!("{{ set_nice = {n} }},"));
    }
    if let Some(n) = slice {
        o.line(at, format!("{{ set_slice = {} }},", ns(n)));
    }
    Ok(())
}

fn repeat(n: i64) -> String {
    if n < 0 {
        q("forever")
    } else {
        n.to_string()
    }
}

/// The task's taskgroup: its own, else its first phase's. rt-app refuses a taskgroup for a
/// task whose policy is not SCHED_OTHER or SCHED_IDLE (`check_taskgroup_policy_dep`); a
/// phase moving the thread to another group is not modelled (a task's group is its own for
/// life).
fn task_group<'t>(cx: &Cx, t: &'t Thread, start: Pol) -> R<Option<&'t (String, usize)>> {
    let group = t.taskgroup.as_ref().or(t.phases[0].taskgroup.as_ref());
    let mut pol = start;
    for p in &t.phases {
        pol = policy_after(&p.sched, pol);
        if let Some((tg, at)) = &p.taskgroup {
            if group.is_some_and(|g| g.0 != *tg) {
                let m = "a phase moving the task to another taskgroup is not modelled: \
                         give the task one taskgroup (the same in every phase)";
                return Err(cx.err(*at, &format!("tasks.{}.taskgroup", t.name), m));
            }
        }
        if group.is_some() && !matches!(pol, Pol::Other | Pol::Batch | Pol::Idle) {
            let m = format!("no taskgroup support for policy {pol:?} (rt-app allows SCHED_OTHER and SCHED_IDLE)");
            return Err(cx.err(group.map_or(t.at, |g| g.1), &format!("tasks.{}.taskgroup", t.name), m));
        }
    }
    Ok(group)
}

/// `run`: rt-app runs `floor(t · 1000 / ns_per_loop)` loops of its calibrated workload,
/// one second at a time (`rt-app.c:loadwait`); uncalibrated, the duration itself.
fn run_ns(g: &Global, us: i64) -> i64 {
    let Some(p) = g.ns_per_loop else { return us.saturating_mul(1000) };
    let secs = us / 1_000_000;
    let rem = us % 1_000_000;
    secs.saturating_mul(1_000_000_000 / p).saturating_add(rem * 1000 / p).saturating_mul(p)
}

/// `a / b` rounded up, for `a >= 0`, `b > 0`.
fn ceil_div(a: i64, b: i64) -> i64 {
    a / b + i64::from(a % b != 0)
}

/// `iorun`: `write(2)`s of at most `mem_buffer_size` bytes each (`rt-app.c:ioload`); to
/// `/dev/null` each costs the syscall, to a file also the copy.
fn iorun_ns(g: &Global, bytes: i64) -> i64 {
    let writes = ceil_div(bytes, g.mem_buffer);
    let copy = if g.io_null { 0 } else { bytes / MEM_BYTES_PER_NS };
    writes.saturating_mul(IO_WRITE_NS).saturating_add(copy)
}

fn phase(
    cx: &mut Cx,
    o: &mut Out,
    g: &Global,
    r: &Resources,
    t: &Thread,
    p: &Phase,
    pi: &dyn Fn(&str) -> bool,
) -> R<()> {
    let wrap = p.repeat != 1;
    if wrap {
        o.line(p.at, format!("{{ loop = {}, do = [", repeat(p.repeat)));
    }
    for e in &p.events {
        cx.step()?;
        let ops: Vec<String> = match &e.ev {
            Ev::Run(n) => vec![format!("run = {}", ns(run_ns(g, *n)))],
            Ev::Runtime(n) => vec![format!("spin = {}", us(*n))],
            Ev::Sleep(n) => vec![format!("sleep = {}", us(*n))],
            Ev::Mem(b) => {
                cx.note(format!("`mem`: user work of bytes / {MEM_BYTES_PER_NS} ns (a 10 GB/s memset); caches and memory are not modelled"));
                vec![format!("run = {}", ns(ceil_div(*b, MEM_BYTES_PER_NS)))]
            }
            Ev::Iorun(b) => {
                cx.note(format!("`iorun`: {IO_WRITE_NS} ns per write(2) of mem_buffer_size bytes (plus the copy for a file), as CPU work; no device is modelled"));
                vec![format!("run = {}", ns(iorun_ns(g, *b)))]
            }
            Ev::Timer { name, unique, period, .. } => {
                let absolute = r.timers[&(unique.then(|| t.name.clone()), name.clone())];
                let mode = if absolute { "absolute" } else { "relative" };
                vec![format!("timer = {}, ref = {}, mode = {}, shared = {}", us(*period), q(name), q(mode), !unique)]
            }
            Ev::Lock(m) if pi(m) => vec![format!("lock_pi = {}", q(m))],
            Ev::Unlock(m) if pi(m) => vec![format!("unlock_pi = {}", q(m))],
            Ev::Lock(m) => vec![format!("lock = {}", q(m))],
            Ev::Unlock(m) => vec![format!("unlock = {}", q(m))],
            Ev::Wait { cond, mutex } => vec![format!("cond_wait = {}, mutex = {}", q(cond), q(mutex))],
            // `rtapp_sig_and_wait`: signal, then wait, with the mutex a `lock` event took.
            Ev::Sync { cond, mutex } => {
                vec![format!("signal = {}", q(cond)), format!("cond_wait = {}, mutex = {}", q(cond), q(mutex))]
            }
            Ev::Signal(c) => vec![format!("signal = {}", q(c))],
            Ev::Broad(c) => vec![format!("broadcast = {}", q(c))],
            // `rtapp_suspend`: lock, wait on the thread's own condition, unlock.
            Ev::Suspend => {
                let n = q(&t.name);
                vec![format!("lock = {n}"), format!("cond_wait = {n}, mutex = {n}"), format!("unlock = {n}")]
            }
            // `rtapp_resume`: lock, broadcast, unlock.
            Ev::Resume(s) => {
                let n = q(s);
                vec![format!("lock = {n}"), format!("broadcast = {n}"), format!("unlock = {n}")]
            }
            Ev::Barrier(b) => vec![format!("barrier = {}", q(b))],
            Ev::Fork(f) => vec![format!("fork = {}", q(f))],
            Ev::Yield => vec!["\"yield\"".to_string()],
        };
        for op in ops {
            if op.starts_with('"') {
                o.line(e.at, format!("{op},"));
            } else {
                o.line(e.at, format!("{{ {op} }},"));
            }
        }
    }
    if wrap {
        o.line(p.at, "] },");
    }
    Ok(())
}
