//! rt-app JSON, the workload format of rt-app (`github.com/scheduler-tools/rt-app`,
//! `doc/tutorial.txt`), as a second front end: the file is read with locations
//! ([`json`]), checked and read into rt-app's model ([`model`], [`events`]) and written out
//! as native workload TOML ([`emit`]), which the TOML front end then parses. `schedlab
//! convert` prints that TOML, so an rt-app file and its conversion run identically.
//!
//! Every error names the JSON file, line, column and JSON path. An error found later, in
//! the TOML (a CPU outside the machine, deadline parameters `__checkparam_dl` refuses), is
//! mapped back to the JSON line the TOML line came from. What rt-app's file says that has
//! no meaning in a simulation (log files, ftrace, page locking, …) is accepted and listed
//! once in [`Converted::notes`].

mod emit;
mod events;
pub mod json;
mod model;

pub use json::{looks_like_json, without_bom, MAX_JSON_DEPTH};
pub use model::EVENTS;

use crate::stop::{LoadError, Stop};
use json::{Json, Spanned};
use model::{Pol, Thread};
use schedlab_sim::SourceError;
use std::collections::BTreeSet;

type R<T> = Result<T, SourceError>;

/// Bytes per nanosecond of rt-app's `mem` event (a write loop over its buffer) and of an
/// `iorun` to a file: 10 bytes/ns (10 GB/s, a desktop core's memset or copy bandwidth,
/// the machine model's `pipe_byte_ps` default of 100 ps/B).
pub const MEM_BYTES_PER_NS: i64 = 10;
/// One `write(2)` of `iorun` to `/dev/null` (`drivers/char/mem.c:write_null` returns at
/// once): the syscall alone, about 100 ns.
pub const IO_WRITE_NS: i64 = 100;

/// An rt-app file converted to native TOML.
#[derive(Clone, Debug)]
pub struct Converted {
    pub toml: String,
    /// What the file asks that the simulation does not model, one line each, no repeats.
    pub notes: Vec<String>,
    /// The JSON byte offset each TOML line came from.
    pub(crate) origin: Vec<usize>,
}

/// Where an error in the converted TOML points in the rt-app file.
#[derive(Clone, Debug)]
pub struct Origin {
    pub(crate) json: String,
    pub(crate) lines: Vec<usize>,
}

impl Origin {
    /// `e`, an error located in the converted TOML, re-located at the JSON it came from.
    pub fn relocate(&self, e: SourceError) -> SourceError {
        if e.line == 0 {
            return e;
        }
        let at = self.lines.get(e.line - 1).or(self.lines.last()).copied().unwrap_or(0);
        let msg = format!("{} (in the converted TOML: {})", e.message, e.field);
        let path = json::parse(&self.json).ok().and_then(|root| json::path_at(&root, at));
        SourceError::at(&e.file, &self.json, at, path.as_deref().unwrap_or(&e.field), msg)
    }
}

/// Global settings (`"global"`; `rt-app_parse_config.c:parse_global`).
pub(crate) struct Global {
    pub duration_s: Option<i64>,
    /// `calibration` as an integer: ns per loop of the `run` workload.
    pub ns_per_loop: Option<i64>,
    pub default_policy: Pol,
    pub pi_enabled: bool,
    pub io_null: bool,
    pub mem_buffer: i64,
}

pub(crate) struct Cx<'a> {
    file: &'a str,
    text: &'a str,
    notes: Vec<String>,
    /// The caller's stop check, a step per thread and per event ([`Cx::step`]).
    stop: Stop<'a>,
}

/// Converts rt-app JSON `text` (named `file` in errors) to native workload TOML:
/// [`convert_until`] with a stop check that never stops.
pub fn convert(file: &str, text: &str) -> R<Converted> {
    convert_until(file, text, &mut || false).map_err(|e| match e {
        LoadError::Source(e) => e,
        // Unreachable with a check that never asks to stop; said as it is if it were not.
        LoadError::Interrupted { file } => SourceError {
            file,
            line: 0,
            column: 0,
            field: String::new(),
            message: "loading interrupted".into(),
            snippet: String::new(),
        },
    })
}

/// [`convert`], interruptible: `stop` is called when conversion starts and then every
/// [`POLL_EVERY`](crate::POLL_EVERY) JSON values, threads and events; once it returns
/// `true`, conversion ends with [`LoadError::Interrupted`] (see
/// [`parse_workload_until`](crate::parse_workload_until)). A leading byte-order mark is no
/// part of the document; error positions count from after it.
pub fn convert_until(file: &str, text: &str, stop: &mut dyn FnMut() -> bool) -> Result<Converted, LoadError> {
    let text = without_bom(text);
    let mut cx = Cx { file, text, notes: Vec::new(), stop: Stop::new(stop) };
    let r = if cx.stop.stopped() { Err(cx.interrupted()) } else { convert_json(&mut cx) };
    // An error the stop check caused is no error of the file's.
    if cx.stop.stopped() {
        return Err(LoadError::Interrupted { file: file.to_string() });
    }
    Ok(r?)
}

fn convert_json(cx: &mut Cx) -> R<Converted> {
    let (file, text) = (cx.file, cx.text);
    let root = json::parse_until(text, &mut cx.stop).map_err(|(at, m)| cx.err(at, "(syntax)", m))?;
    let members = cx.object(&root, "(root)")?;
    cx.check_keys(members, &["global", "tasks", "resources"], "")?;
    let global = match members.iter().find(|(k, _, _)| k == "global") {
        Some((_, _, g)) => cx.global(g)?,
        None => cx.global(&Spanned { at: root.at, v: Json::Object(Vec::new()) })?,
    };
    if let Some((_, _, r)) = members.iter().find(|(k, _, _)| k == "resources") {
        cx.object(r, "resources")?;
        cx.note(
            "`resources` is accepted and not needed: rt-app and schedlab create resources where events name them"
                .into(),
        );
    }
    let Some((_, _, tasks)) = members.iter().find(|(k, _, _)| k == "tasks") else {
        return Err(cx.err(root.at, "tasks", "missing required object `tasks`"));
    };
    let mut threads: Vec<Thread> = Vec::new();
    let mut names = BTreeSet::new();
    for (name, kat, t) in cx.object(tasks, "tasks")? {
        cx.step()?;
        if !names.insert(name.as_str()) {
            return Err(cx.err(*kat, &format!("tasks.{name}"), format!("two tasks are named `{name}`")));
        }
        threads.push(cx.thread(name, t, &format!("tasks.{name}"))?);
    }
    if threads.is_empty() {
        return Err(cx.err(tasks.at, "tasks", "no task: `tasks` needs at least one thread object"));
    }
    let name = std::path::Path::new(file).file_stem().map_or(file.to_string(), |s| s.to_string_lossy().into_owned());
    let (toml, origin) = emit::emit(cx, &name, &global, &threads)?;
    Ok(Converted { toml, notes: std::mem::take(&mut cx.notes), origin })
}

impl Converted {
    pub fn origin(&self, json: &str) -> Origin {
        Origin { json: json.to_string(), lines: self.origin.clone() }
    }
}

impl Cx<'_> {
    pub(crate) fn err(&self, at: usize, field: &str, msg: impl Into<String>) -> SourceError {
        SourceError::at(self.file, self.text, at, field, msg)
    }
    /// The error that unwinds a conversion the stop check ended.
    fn interrupted(&self) -> SourceError {
        self.err(0, "", "loading interrupted")
    }
    /// One step of work (a thread, an event): `Err` once the stop check asked to stop.
    pub(crate) fn step(&mut self) -> R<()> {
        if self.stop.step() {
            return Err(self.interrupted());
        }
        Ok(())
    }
    fn unknown(&self, at: usize, field: &str, key: &str, what: &str) -> SourceError {
        self.err(at, field, format!("unknown key `{key}`: not {what} rt-app knows (doc/tutorial.txt)"))
    }
    pub(crate) fn note(&mut self, n: String) {
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }
    fn object<'v>(&self, v: &'v Spanned, path: &str) -> R<&'v [(String, usize, Spanned)]> {
        match &v.v {
            Json::Object(m) => Ok(m),
            other => Err(self.err(v.at, path, format!("expected an object, found {}", other.kind()))),
        }
    }
    fn check_keys(&self, m: &[(String, usize, Spanned)], allowed: &[&str], path: &str) -> R<()> {
        for (k, at, _) in m {
            if !allowed.contains(&k.as_str()) {
                let f = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                return Err(self.err(*at, &f, format!("unknown key `{k}`; expected one of {}", allowed.join(", "))));
            }
        }
        // A repeated property is ambiguous (events may repeat: workgen numbers them).
        let mut seen = BTreeSet::new();
        for (k, at, _) in m {
            if !seen.insert(k.as_str()) {
                return Err(self.err(*at, &format!("{path}.{k}"), format!("`{k}` is given twice")));
            }
        }
        Ok(())
    }
    fn member<'v>(&self, m: &'v [(String, usize, Spanned)], key: &str) -> Option<&'v Spanned> {
        m.iter().find(|(k, _, _)| k == key).map(|(_, _, v)| v)
    }
    fn opt_int(&self, m: &[(String, usize, Spanned)], key: &str, path: &str) -> R<Option<(i64, usize)>> {
        match self.member(m, key) {
            None => Ok(None),
            Some(Spanned { at, v: Json::Int(i) }) => Ok(Some((*i, *at))),
            Some(v) => {
                Err(self.err(v.at, &format!("{path}.{key}"), format!("expected an integer, found {}", v.v.kind())))
            }
        }
    }
    fn opt_str(&self, m: &[(String, usize, Spanned)], key: &str, path: &str) -> R<Option<(String, usize)>> {
        match self.member(m, key) {
            None => Ok(None),
            Some(Spanned { at, v: Json::Str(s) }) => Ok(Some((s.clone(), *at))),
            Some(v) => {
                Err(self.err(v.at, &format!("{path}.{key}"), format!("expected a string, found {}", v.v.kind())))
            }
        }
    }
    fn opt_bool(&self, m: &[(String, usize, Spanned)], key: &str) -> R<Option<bool>> {
        match self.member(m, key) {
            None => Ok(None),
            Some(Spanned { v: Json::Bool(b), .. }) => Ok(Some(*b)),
            Some(v) => {
                Err(self.err(v.at, &format!("global.{key}"), format!("expected true or false, found {}", v.v.kind())))
            }
        }
    }
    fn nonneg(&self, n: i64, m: &[(String, usize, Spanned)], key: &str, path: &str) -> R<()> {
        match self.member(m, key) {
            Some(v) if n < 0 => Err(self.err(v.at, &format!("{path}.{key}"), format!("must be >= 0, found {n}"))),
            _ => Ok(()),
        }
    }

    fn global(&mut self, g: &Spanned) -> R<Global> {
        const KEYS: &[&str] = &[
            "duration",
            "calibration",
            "default_policy",
            "pi_enabled",
            "lock_pages",
            "logdir",
            "log_basename",
            "log_size",
            "ftrace",
            "gnuplot",
            "io_device",
            "mem_buffer_size",
            "cumulative_slack",
        ];
        let m = self.object(g, "global")?;
        self.check_keys(m, KEYS, "global")?;
        let duration_s = self.opt_int(m, "duration", "global")?.map(|d| d.0).filter(|&d| d > 0);
        if duration_s.is_none() {
            self.note(
                "`duration` -1 (or none): the run ends when every task exited, or after --duration (default 10s)"
                    .into(),
            );
        }
        let ns_per_loop = match self.member(m, "calibration") {
            None => None,
            Some(Spanned { v: Json::Int(p), at }) if *p <= 0 => {
                return Err(self.err(*at, "global.calibration", "ns per loop must be > 0"))
            }
            Some(Spanned { v: Json::Int(p), .. }) => Some(*p),
            Some(Spanned { v: Json::Str(s), at }) => {
                if !s.strip_prefix("CPU").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) {
                    return Err(self.err(
                        *at,
                        "global.calibration",
                        format!("expected \"CPUn\" or ns per loop, found `{s}`"),
                    ));
                }
                self.note(format!("calibration `{s}`: the simulated CPU is the calibrated one, a `run` takes exactly its duration of full-speed work"));
                None
            }
            Some(v) => {
                return Err(self.err(
                    v.at,
                    "global.calibration",
                    format!("expected \"CPUn\" or an integer, found {}", v.v.kind()),
                ))
            }
        };
        let default_policy = match self.opt_str(m, "default_policy", "global")? {
            None => Pol::Other,
            Some((s, at)) => {
                Pol::parse(&s).ok_or_else(|| self.err(at, "global.default_policy", format!("unknown policy `{s}`")))?
            }
        };
        let pi_enabled = self.opt_bool(m, "pi_enabled")?.unwrap_or(false);
        for k in ["lock_pages", "gnuplot", "cumulative_slack"] {
            if self.opt_bool(m, k)?.is_some() {
                self.note(format!("global `{k}` is accepted and has no meaning in a simulation"));
            }
        }
        for k in ["logdir", "log_basename", "log_size", "ftrace"] {
            if self.member(m, k).is_some() {
                self.note(format!("global `{k}` is accepted and ignored: schedlab reports its own measurements"));
            }
        }
        let io_null = self.opt_str(m, "io_device", "global")?.is_none_or(|(d, _)| d == "/dev/null");
        let mem_buffer = self.opt_int(m, "mem_buffer_size", "global")?.map_or(4 << 20, |x| x.0);
        if mem_buffer <= 0 {
            return Err(self.err(g.at, "global.mem_buffer_size", "must be > 0"));
        }
        Ok(Global { duration_s, ns_per_loop, default_policy, pi_enabled, io_null, mem_buffer })
    }
}

#[cfg(test)]
mod tests;
