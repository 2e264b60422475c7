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
    Timer {
        name: String,
        unique: bool,
        period: i64,
        absolute: bool,
    },
    Lock(String),
    Unlock(String),
    Wait {
        cond: String,
        mutex: String,
    },
    Signal(String),
    Broad(String),
    Sync {
        cond: String,
        mutex: String,
    },
    /// Suspends the thread on its own name.
    Suspend,
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
    /// The thread's `util_min` and `util_max` (−1, rt-app's "unset", as none), with where.
    pub uclamp: [Option<(i64, usize)>; 2],
    pub taskgroup: Option<(String, usize)>,
}

/// The events schedlab runs, as rt-app's tutorial names them.
pub const EVENTS: &[&str] = &[
    "lock", "unlock", "wait", "signal", "broad", "sync", "sleep", "runtime", "run", "timer", "suspend", "resume",
    "mem", "iorun", "yield", "barrier", "fork",
];

/// rt-app's events schedlab refuses, and why (each a located error naming the event).
pub const REFUSED_EVENTS: &[(&str, &str)] = &[
    (
        "memrun",
        "memory access patterns (read, write, pointer chase through a buffer) are cache and memory behaviour, \
         which the machine model does not have",
    ),
    ("sem_post", "the workload language has no counting semaphore (POSIX sem_post/sem_wait) yet"),
    ("sem_wait", "the workload language has no counting semaphore (POSIX sem_post/sem_wait) yet"),
];

/// Event keys in the order `rt-app_parse_config.c:parse_task_event_data` tries them, each a
/// prefix (`obj_is_event`): `runtime0` is a runtime event, `run1` a run event, `memrun`
/// is not a `mem`, and a key such as `lock_order` is a `lock` event.
const MATCH_ORDER: &[&str] = &[
    "runtime", "run", "sleep", "memrun", "mem", "iorun", "lock", "unlock", "signal", "broad", "wait", "sync",
    "barrier", "timer", "resume", "suspend", "yield", "fork", "sem_post", "sem_wait",
];

/// Properties a phase (or a thread without `phases`) may carry besides events
/// (`parse_task_phase_data`, `parse_cpuset_data`, `parse_numa_data`, `parse_sched_data`,
/// `parse_taskgroup_data`).
const PHASE_KEYS: &[&str] = &[
    "loop",
    "cpus",
    "nodes_membind",
    "policy",
    "priority",
    "dl-runtime",
    "dl-period",
    "dl-deadline",
    "util_min",
    "util_max",
    "taskgroup",
];
/// Properties only a thread carries (`parse_task_data`; `period` and `deadline` are the
/// legacy names of `dl-period` and `dl-deadline` that `parse_sched_data` reads for a thread).
const THREAD_KEYS: &[&str] = &["instance", "delay", "phases", "period", "deadline"];

/// The kind of event `key` is, if any.
pub fn event_kind(key: &str) -> Option<&'static str> {
    MATCH_ORDER.iter().copied().find(|e| key.starts_with(e))
}

impl Cx<'_> {
    /// Checks a thread's keys: its properties (each once), events (read with its phase when
    /// it has no `phases`; beside `phases` rt-app never reads them) and keys rt-app ignores.
    fn thread_keys(&mut self, members: &[(String, usize, Spanned)], has_phases: bool, path: &str) -> R<()> {
        let mut seen = BTreeSet::new();
        for (k, kat, _) in members {
            let f = format!("{path}.{k}");
            // With `phases`, a thread-level `runtime` is the legacy name of `dl-runtime`.
            let prop =
                PHASE_KEYS.contains(&k.as_str()) || THREAD_KEYS.contains(&k.as_str()) || has_phases && k == "runtime";
            if prop {
                if !seen.insert(k.as_str()) {
                    return Err(self.repeated(*kat, &f, k));
                }
            } else if event_kind(k).is_none() {
                self.ignore("a thread", k, &f);
            } else if has_phases {
                self.note(format!(
                    "`{f}`: an event beside `phases` is ignored, as rt-app reads the events of the phases only"
                ));
            }
        }
        Ok(())
    }

    pub(super) fn thread(&mut self, name: &str, v: &Spanned, path: &str) -> R<Thread> {
        let members = self.object(v, path)?;
        let has_phases = self.member(members, "phases").is_some();
        self.thread_keys(members, has_phases, path)?;
        let instance = self.opt_int(members, "instance", path)?.map_or(1, |i| i.0);
        if instance < 0 {
            return Err(self.err(v.at, &format!("{path}.instance"), "instance must be >= 0"));
        }
        let delay_us = self.opt_int(members, "delay", path)?.map_or(0, |i| i.0);
        self.nonneg(delay_us, members, "delay", path)?;
        let mut sched = self.sched(members, path)?;
        for (i, legacy) in ["period", "deadline"].iter().enumerate() {
            if sched.dl[i + 1].is_none() {
                sched.dl[i + 1] = self.opt_int(members, legacy, path)?;
            }
        }
        // `parse_sched_data` reads a thread's `runtime` as the legacy `dl-runtime` whether
        // or not it has `phases`; without them it is also a runtime event.
        if sched.dl[0].is_none() {
            sched.dl[0] = self.opt_int(members, "runtime", path)?.filter(|r| r.0 != 0);
            if sched.dl[0].is_some() && !has_phases {
                self.note(format!(
                    "`{path}.runtime` is a runtime event and, as rt-app reads a thread's `runtime`, also its \
                     legacy `dl-runtime` (the deadline runtime, or the custom slice of SCHED_OTHER/SCHED_BATCH)"
                ));
            }
        }
        let uclamp = self.unmodelled(members, path, true)?;
        let (phases, repeat) = match self.member(members, "phases") {
            Some(pv) => {
                let mut phases = Vec::new();
                for (pname, _, p) in self.object(pv, &format!("{path}.phases"))? {
                    phases.push(self.phase(p, &format!("{path}.phases.{pname}"), false)?);
                }
                if phases.is_empty() {
                    return Err(self.err(pv.at, &format!("{path}.phases"), "no phase: a task needs events"));
                }
                (phases, self.opt_int(members, "loop", path)?.map_or(-1, |i| i.0))
            }
            None => {
                let mut phase = self.phase(v, path, true)?;
                // One implicit phase: the thread's own `loop` counts its repetitions and the
                // thread runs it once; without `loop` it repeats forever.
                let repeat = if phase.repeat == 1 && self.member(members, "loop").is_none() { -1 } else { 1 };
                phase.sched = Sched::default();
                (vec![phase], repeat)
            }
        };
        let cpus = self.cpus(members, path)?;
        let taskgroup = self.taskgroup(members, path)?;
        Ok(Thread {
            name: name.to_string(),
            at: v.at,
            instance,
            delay_us,
            repeat,
            phases,
            cpus,
            sched,
            uclamp,
            taskgroup,
        })
    }

    /// A phase, or (`implicit`) a thread without `phases` read as its one phase, whose keys
    /// [`Cx::thread_keys`] checked.
    fn phase(&mut self, v: &Spanned, path: &str, implicit: bool) -> R<Phase> {
        let members = self.object(v, path)?;
        let mut events = Vec::new();
        let mut seen = BTreeSet::new();
        for (k, kat, ev) in members {
            let f = format!("{path}.{k}");
            let thread_key = THREAD_KEYS.contains(&k.as_str());
            if PHASE_KEYS.contains(&k.as_str()) || implicit && thread_key {
                // A repeated event runs twice (workgen numbers the copies); a repeated
                // property would leave one of its values unread.
                if !seen.insert(k.as_str()) {
                    return Err(self.repeated(*kat, &f, k));
                }
                continue;
            }
            let Some(kind) = event_kind(k) else {
                if !implicit {
                    self.ignore("a phase", k, &f);
                }
                continue;
            };
            if let Some((e, why)) = REFUSED_EVENTS.iter().find(|(e, _)| *e == kind) {
                return Err(self.err(*kat, &f, format!("rt-app's `{e}` event is not supported: {why}")));
            }
            self.step()?;
            events.push(Event { ev: self.event(kind, ev, &f)?, at: *kat, path: f });
        }
        if events.is_empty() {
            return Err(self.err(v.at, path, "no events found: a phase needs at least one event"));
        }
        let repeat = self.opt_int(members, "loop", path)?.map_or(1, |(i, _)| i);
        if !implicit {
            self.unmodelled(members, path, false)?;
        }
        let cpus = self.cpus(members, path)?;
        let sched = self.sched(members, path)?;
        let taskgroup = self.taskgroup(members, path)?;
        Ok(Phase { at: v.at, repeat, events, cpus, sched, taskgroup })
    }

    /// Utilization clamping and NUMA memory binding, checked: a thread's own clamps are
    /// returned (−1, unset, as none) and become its task's `util_min`/`util_max`; a
    /// phase's (rt-app's `sched_setattr` at the phase switch) and NUMA binding are noted,
    /// not modelled.
    fn unmodelled(
        &mut self,
        members: &[(String, usize, Spanned)],
        path: &str,
        thread: bool,
    ) -> R<[Option<(i64, usize)>; 2]> {
        let mut out = [None; 2];
        for (i, k) in ["util_min", "util_max"].into_iter().enumerate() {
            if let Some((u, at)) = self.opt_int(members, k, path)? {
                if !(-1..=1024).contains(&u) {
                    return Err(self.err(at, &format!("{path}.{k}"), format!("{k} {u} outside 0..=1024 (or -1)")));
                }
                if thread {
                    out[i] = Some((u, at)).filter(|_| u >= 0);
                } else {
                    self.note(format!(
                        "a phase's `{k}` (utilization clamping) is accepted but not modelled: only a thread's own clamps apply"
                    ));
                }
            }
        }
        if self.member(members, "nodes_membind").is_some() {
            self.note(
                "`nodes_membind` (NUMA memory binding) is accepted but has no effect: memory is not modelled".into(),
            );
        }
        Ok(out)
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
        let Some(v) = self.member(m, "cpus") else { return Ok(None) };
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
