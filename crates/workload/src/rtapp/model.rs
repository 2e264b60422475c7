//! rt-app's task model, read from the located JSON: threads, phases, events and their
//! scheduling properties (`doc/tutorial.txt`; `src/rt-app_parse_config.c:parse_task_data`,
//! `parse_task_phase_data`, `parse_task_event_data`, `parse_sched_data`).

use super::json::{Json, Spanned};
use super::Cx;
use schedlab_sim::SourceError;
use std::collections::BTreeSet;

type R<T> = Result<T, SourceError>;

/// A scheduling policy of rt-app's `policy`/`default_policy` (`rt-app_utils.c:string_to_policy`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pol {
    Other,
    Batch,
    Idle,
    Fifo,
    Rr,
    Deadline,
}

impl Pol {
    pub fn parse(s: &str) -> Option<Pol> {
        Some(match s {
            "SCHED_OTHER" => Pol::Other,
            "SCHED_BATCH" => Pol::Batch,
            "SCHED_IDLE" => Pol::Idle,
            "SCHED_FIFO" => Pol::Fifo,
            "SCHED_RR" => Pol::Rr,
            "SCHED_DEADLINE" => Pol::Deadline,
            _ => return None,
        })
    }
}

/// Scheduling properties set on a thread or at the start of a phase.
#[derive(Clone, Debug, Default)]
pub struct Sched {
    pub policy: Option<(Pol, usize)>,
    pub prio: Option<(i64, usize)>,
    /// `dl-runtime`, `dl-period`, `dl-deadline` in µs (or the legacy thread-level keys).
    pub dl: [Option<(i64, usize)>; 3],
}

impl Sched {
    pub fn is_empty(&self) -> bool {
        self.policy.is_none() && self.prio.is_none() && self.dl.iter().all(Option::is_none)
    }
}

#[derive(Clone, Debug)]
pub enum Ev {
    Run(i64),
    Runtime(i64),
    Sleep(i64),
    Timer { name: String, unique: bool, period: i64, absolute: bool },
    Lock(String),
    Unlock(String),
    Wait { cond: String, mutex: String },
    Signal(String),
    Broad(String),
    Sync { cond: String, mutex: String },
    Suspend(String),
    Resume(String),
    Barrier(String),
    Fork(String),
    Yield,
    Mem(i64),
    Iorun(i64),
}

#[derive(Clone, Debug)]
pub struct Event {
    pub ev: Ev,
    pub at: usize,
    /// The JSON path of the event's key.
    pub path: String,
}

#[derive(Clone, Debug)]
pub struct Phase {
    pub at: usize,
    /// Times the phase repeats (rt-app's default 1); negative: forever.
    pub repeat: i64,
    pub events: Vec<Event>,
    pub cpus: Option<(Vec<i64>, usize)>,
    pub sched: Sched,
    pub taskgroup: Option<(String, usize)>,
}

#[derive(Clone, Debug)]
pub struct Thread {
    pub name: String,
    pub at: usize,
    pub instance: i64,
    pub delay_us: i64,
    /// Times the phases repeat; negative: forever.
    pub repeat: i64,
    pub phases: Vec<Phase>,
    pub cpus: Option<(Vec<i64>, usize)>,
    pub sched: Sched,
    pub taskgroup: Option<(String, usize)>,
}

/// rt-app's event keys, matched as prefixes in this order (`obj_is_event`): `runtime0`
/// is a runtime event, `run1` a run event.
pub const EVENTS: &[&str] = &[
    "lock", "unlock", "wait", "signal", "broad", "sync", "sleep", "runtime", "run", "timer", "suspend", "resume",
    "mem", "iorun", "yield", "barrier", "fork",
];

/// Properties a phase (or a thread without `phases`) may carry besides events.
const PHASE_KEYS: &[&str] = &[
    "loop",
    "cpus",
    "nodes_membind",
    "membind_nodes",
    "policy",
    "priority",
    "dl-runtime",
    "dl-period",
    "dl-deadline",
    "util_min",
    "util_max",
    "taskgroup",
];
/// Properties only a thread carries.
const THREAD_KEYS: &[&str] = &["instance", "delay", "phases", "period", "deadline"];

pub fn event_kind(key: &str) -> Option<&'static str> {
    EVENTS.iter().copied().find(|e| key.starts_with(e))
}

impl Cx<'_> {
    pub(super) fn thread(&mut self, name: &str, v: &Spanned, path: &str) -> R<Thread> {
        let members = self.object(v, path)?;
        let has_phases = members.iter().any(|(k, _, _)| k == "phases");
        let mut seen = BTreeSet::new();
        for (k, kat, _) in members {
            // With `phases`, a thread-level `runtime` is the legacy name of `dl-runtime`.
            let legacy = has_phases && k == "runtime";
            let known = PHASE_KEYS.contains(&k.as_str()) || THREAD_KEYS.contains(&k.as_str()) || legacy;
            if known && !seen.insert(k.as_str()) {
                return Err(self.err(*kat, &format!("{path}.{k}"), format!("`{k}` is given twice")));
            }
            let event = !known && event_kind(k).is_some();
            if !known && !event {
                return Err(self.unknown(*kat, &format!("{path}.{k}"), k, "a task property or an event"));
            }
            if event && has_phases {
                return Err(self.err(
                    *kat,
                    &format!("{path}.{k}"),
                    "an event beside `phases`: rt-app reads the events of the phases only; move it into a phase",
                ));
            }
        }
        let int = |cx: &Self, key: &str, def: i64| cx.opt_int(members, key, path).map(|o| o.map_or(def, |(i, _)| i));
        let instance = int(self, "instance", 1)?;
        if instance < 0 {
            return Err(self.err(v.at, &format!("{path}.instance"), "instance must be >= 0"));
        }
        let delay_us = int(self, "delay", 0)?;
        self.nonneg(delay_us, members, "delay", path)?;
        let mut sched = self.sched(members, path)?;
        for (i, legacy) in ["period", "deadline"].iter().enumerate() {
            if sched.dl[i + 1].is_none() {
                sched.dl[i + 1] = self.opt_int(members, legacy, path)?;
            }
        }
        if has_phases {
            self.unmodelled(members, path)?;
        }
        if sched.dl[0].is_none() && has_phases {
            sched.dl[0] = self.opt_int(members, "runtime", path)?;
        }
        let (phases, repeat) = match members.iter().find(|(k, _, _)| k == "phases") {
            Some((_, _, pv)) => {
                let mut phases = Vec::new();
                for (pname, _, p) in self.object(pv, &format!("{path}.phases"))? {
                    phases.push(self.phase(p, &format!("{path}.phases.{pname}"))?);
                }
                if phases.is_empty() {
                    return Err(self.err(pv.at, &format!("{path}.phases"), "no phase: a task needs events"));
                }
                (phases, int(self, "loop", -1)?)
            }
            None => {
                let mut phase = self.phase(v, path)?;
                // One implicit phase: the thread's own `loop` counts its repetitions and the
                // thread runs it once; without `loop` it repeats forever.
                let repeat = if phase.repeat == 1 && self.opt_int(members, "loop", path)?.is_none() { -1 } else { 1 };
                phase.sched = Sched::default();
                (vec![phase], repeat)
            }
        };
        let cpus = self.cpus(members, path)?;
        let taskgroup = self.taskgroup(members, path)?;
        Ok(Thread { name: name.to_string(), at: v.at, instance, delay_us, repeat, phases, cpus, sched, taskgroup })
    }

    fn phase(&mut self, v: &Spanned, path: &str) -> R<Phase> {
        let members = self.object(v, path)?;
        let mut events = Vec::new();
        let mut seen = BTreeSet::new();
        for (k, kat, ev) in members {
            let f = format!("{path}.{k}");
            if PHASE_KEYS.contains(&k.as_str()) || THREAD_KEYS.contains(&k.as_str()) {
                // A repeated event runs twice (workgen numbers the copies); a repeated
                // property would leave one of its values unread.
                if !seen.insert(k.as_str()) {
                    return Err(self.err(*kat, &f, format!("`{k}` is given twice")));
                }
                continue;
            }
            let Some(kind) = event_kind(k) else {
                return Err(self.unknown(*kat, &f, k, "a phase property or an event"));
            };
            self.step()?;
            events.push(Event { ev: self.event(kind, ev, &f)?, at: *kat, path: f });
        }
        if events.is_empty() {
            return Err(self.err(v.at, path, "no events found: a phase needs at least one event"));
        }
        let repeat = self.opt_int(members, "loop", path)?.map_or(1, |(i, _)| i);
        self.unmodelled(members, path)?;
        let cpus = self.cpus(members, path)?;
        let sched = self.sched(members, path)?;
        let taskgroup = self.taskgroup(members, path)?;
        Ok(Phase { at: v.at, repeat, events, cpus, sched, taskgroup })
    }

    /// Utilization clamping and NUMA memory binding: checked, then noted (not modelled).
    fn unmodelled(&mut self, members: &[(String, usize, Spanned)], path: &str) -> R<()> {
        for k in ["util_min", "util_max"] {
            if let Some((u, at)) = self.opt_int(members, k, path)? {
                if !(-1..=1024).contains(&u) {
                    return Err(self.err(at, &format!("{path}.{k}"), format!("{k} {u} outside 0..=1024 (or -1)")));
                }
                self.note(format!("`{k}` (utilization clamping) is accepted but not modelled: no policy uses uclamp"));
            }
        }
        for k in ["nodes_membind", "membind_nodes"] {
            if members.iter().any(|(m, _, _)| m == k) {
                self.note(format!("`{k}` (NUMA memory binding) is accepted but has no effect: memory is not modelled"));
            }
        }
        Ok(())
    }

    fn sched(&mut self, m: &[(String, usize, Spanned)], path: &str) -> R<Sched> {
        let policy = match self.opt_str(m, "policy", path)? {
            Some((s, at)) => Some((
                Pol::parse(&s).ok_or_else(|| {
                    self.err(
                        at,
                        &format!("{path}.policy"),
                        format!(
                            "unknown policy `{s}`; expected SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, \
                             SCHED_RR or SCHED_DEADLINE"
                        ),
                    )
                })?,
                at,
            )),
            None => None,
        };
        let prio = self.opt_int(m, "priority", path)?;
        let dl = [
            self.opt_int(m, "dl-runtime", path)?,
            self.opt_int(m, "dl-period", path)?,
            self.opt_int(m, "dl-deadline", path)?,
        ];
        Ok(Sched { policy, prio, dl })
    }

    fn cpus(&mut self, m: &[(String, usize, Spanned)], path: &str) -> R<Option<(Vec<i64>, usize)>> {
        let Some((_, _, v)) = m.iter().find(|(k, _, _)| k == "cpus") else { return Ok(None) };
        let f = format!("{path}.cpus");
        let Json::Array(items) = &v.v else {
            return Err(self.err(v.at, &f, format!("expected an array of CPU numbers, found {}", v.v.kind())));
        };
        let mut cpus = Vec::new();
        for it in items {
            match it.v {
                Json::Int(c) if (0..schedlab_machine::MAX_CPUS as i64).contains(&c) => cpus.push(c),
                _ => return Err(self.err(it.at, &f, "expected a CPU number (an integer >= 0)")),
            }
        }
        if cpus.is_empty() {
            return Err(self.err(v.at, &f, "empty CPU list"));
        }
        Ok(Some((cpus, v.at)))
    }

    fn taskgroup(&mut self, m: &[(String, usize, Spanned)], path: &str) -> R<Option<(String, usize)>> {
        match self.opt_str(m, "taskgroup", path)? {
            Some((s, _)) if s.is_empty() => Ok(None),
            Some((s, at)) if !s.starts_with('/') || s.ends_with('/') && s.len() > 1 => Err(self.err(
                at,
                &format!("{path}.taskgroup"),
                format!("taskgroup `{s}` must be a path starting with `/` (rt-app's rule), such as \"/tg1/tg2\""),
            )),
            other => Ok(other),
        }
    }
}
