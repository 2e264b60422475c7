//! rt-app JSON, the workload format of rt-app (`github.com/scheduler-tools/rt-app`,
//! `doc/tutorial.txt`), as a second front end: the file is read with locations
//! ([`json`]), checked and read into rt-app's model ([`model`], [`events`]) and written out
//! as native workload TOML ([`emit`]), which the TOML front end then parses. `schedlab
//! convert` prints that TOML, so an rt-app file and its conversion run identically.
//!
//! The grammar is json-c's non-strict one, as rt-app reads its file ([`json`]). Keys rt-app
//! does not read are ignored, as rt-app ignores them (its reader looks up the keys it
//! knows, `rt-app_parse_config.c:get_in_object`, and never lists the others), each noted
//! once; a known key of the wrong type is an error, as rt-app exits on it
//! (`assure_type_is`). Every error names the JSON file, line, column and JSON path. An
//! error found later, in the TOML (a CPU outside the machine, deadline parameters
//! `__checkparam_dl` refuses), is mapped back to the JSON line the TOML line came from.
//! What rt-app's file says that has no meaning in a simulation (log files, ftrace, page
//! locking, …) is accepted and listed once in [`Converted::notes`].

mod emit;
mod events;
pub mod json;
mod model;

pub use json::{looks_like_json, without_bom, MAX_JSON_DEPTH};
pub use model::{EVENTS, REFUSED_EVENTS};

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
    /// (where, key) of the unknown keys already noted: one note per key and kind of object.
    ignored: BTreeSet<(&'static str, String)>,
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
    let mut cx = Cx { file, text, notes: Vec::new(), ignored: BTreeSet::new(), stop: Stop::new(stop) };
    let r = if cx.stop.stopped() { Err(cx.interrupted()) } else { convert_json(&mut cx) };
    // An error the stop check caused is no error of the file's.
    if cx.stop.stopped() {
        return Err(LoadError::Interrupted { file: file.to_string() });
    }
    Ok(r?)
}

fn convert_json(cx: &mut Cx) -> R<Converted> {
    let (file, text) = (cx.file, cx.text);
    let doc = json::parse_until(text, &mut cx.stop).map_err(|(at, m)| cx.err(at, "(syntax)", m))?;
    if let Some(at) = doc.trailing {
        let (line, _) = schedlab_sim::line_col(text, at);
        cx.note(format!(
            "text after the JSON document (from line {line}) is ignored, as json-c stops reading after the root object"
        ));
    }
    let root = doc.root;
    let members = cx.object(&root, "(root)")?;
    cx.known_keys(members, &["global", "tasks", "resources"], "", "the root object")?;
    let global = match cx.member(members, "global") {
        Some(g) => cx.global(g)?,
        None => cx.global(&Spanned { at: root.at, v: Json::Object(Vec::new()) })?,
    };
    if let Some(r) = cx.member(members, "resources") {
        cx.resources(r)?;
    }
    let Some(tasks) = cx.member(members, "tasks") else {
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

/// `int` as rt-app reads it (`json_object_get_int`, json-c's `json_object.c`: a 64-bit
/// value outside C's `int` is clamped to `INT32_MIN`/`INT32_MAX`), and whether it was.
fn c_int(n: i64) -> (i64, bool) {
    let c = n.clamp(i64::from(i32::MIN), i64::from(i32::MAX));
    (c, c != n)
}

/// The keys of rt-app's `global` object (`rt-app_parse_config.c:parse_global`).
const GLOBAL_KEYS: &[&str] = &[
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

/// The `ftrace` categories rt-app knows (`rt-app_utils.c:ftrace_setup`, matched without case).
const FTRACE_CATEGORIES: &[&str] = &["main", "task", "loop", "event", "stats", "none"];

/// The `type`s of a legacy `resources` entry (`rt-app_utils.c:string_to_resource`).
const RESOURCE_TYPES: &[&str] = &["mutex", "signal", "wait", "broadcast", "sync", "sleep", "run", "timer"];

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
    pub(crate) fn note(&mut self, n: String) {
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }
    /// A key rt-app never reads in `what` (an object kind: "a thread", "a phase", …): one
    /// note per key and kind, naming the first place it appears.
    pub(crate) fn ignore(&mut self, what: &'static str, key: &str, field: &str) {
        if self.ignored.insert((what, key.to_string())) {
            self.note(format!(
                "unknown key `{key}` in {what} is ignored, as rt-app ignores keys it does not read (first at {field})"
            ));
        }
    }
    fn object<'v>(&self, v: &'v Spanned, path: &str) -> R<&'v [(String, usize, Spanned)]> {
        match &v.v {
            Json::Object(m) => Ok(m),
            other => Err(self.err(v.at, path, format!("expected an object, found {}", other.kind()))),
        }
    }
    /// Notes the keys of `m` outside `known` as ignored; a repeated known key is an error.
    fn known_keys(&mut self, m: &[(String, usize, Spanned)], known: &[&str], path: &str, what: &'static str) -> R<()> {
        let mut seen = BTreeSet::new();
        for (k, at, _) in m {
            let f = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
            if !known.contains(&k.as_str()) {
                self.ignore(what, k, &f);
            } else if !seen.insert(k.as_str()) {
                return Err(self.repeated(*at, &f, k));
            }
        }
        Ok(())
    }
    /// A property given twice: json-c keeps the last value, workgen renames the second
    /// (`doc/workgen:check_unikid_json`) so rt-app reads the first; the two disagree.
    pub(crate) fn repeated(&self, at: usize, field: &str, key: &str) -> SourceError {
        self.err(
            at,
            field,
            format!("`{key}` is given twice (rt-app reads the last, workgen's renaming makes it read the first)"),
        )
    }
    /// The value of `key`; a `null` value is no value, as rt-app's `get_in_object` returns
    /// no object for it and the caller takes its default.
    pub(crate) fn member<'v>(&self, m: &'v [(String, usize, Spanned)], key: &str) -> Option<&'v Spanned> {
        m.iter().find(|(k, _, v)| k == key && v.v != Json::Null).map(|(_, _, v)| v)
    }
    /// An integer as rt-app reads it: clamped to a C `int` (noted when it is).
    pub(crate) fn int_value(&mut self, v: &Spanned, field: &str) -> R<i64> {
        match v.v {
            Json::Int(i) => {
                let (c, clamped) = c_int(i);
                if clamped {
                    self.note(format!(
                        "`{field}` = {i} is beyond a C int: rt-app reads it as {c} (json_object_get_int clamps it)"
                    ));
                }
                Ok(c)
            }
            _ => Err(self.err(v.at, field, format!("expected an integer, found {}", v.v.kind()))),
        }
    }
    pub(crate) fn opt_int(&mut self, m: &[(String, usize, Spanned)], key: &str, path: &str) -> R<Option<(i64, usize)>> {
        match self.member(m, key) {
            None => Ok(None),
            Some(v) => Ok(Some((self.int_value(v, &format!("{path}.{key}"))?, v.at))),
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

    /// The legacy `resources` object (`parse_resources`): rt-app checks each entry's
    /// `type` and creates resources where events name them anyway.
    fn resources(&mut self, r: &Spanned) -> R<()> {
        for (name, _, v) in self.object(r, "resources")? {
            let Json::Object(m) = &v.v else { continue };
            let f = format!("resources.{name}");
            if let Some((t, at)) = self.opt_str(m, "type", &f)? {
                if !RESOURCE_TYPES.contains(&t.as_str()) {
                    let m = format!("invalid resource type `{t}`; rt-app knows {}", RESOURCE_TYPES.join(", "));
                    return Err(self.err(at, &format!("{f}.type"), m));
                }
            }
        }
        self.note(
            "`resources` is accepted and not needed: rt-app and schedlab create resources where events name them"
                .into(),
        );
        Ok(())
    }

    fn global(&mut self, g: &Spanned) -> R<Global> {
        let m = self.object(g, "global")?;
        self.known_keys(m, GLOBAL_KEYS, "global", "`global`")?;
        let duration_s = self.opt_int(m, "duration", "global")?.map(|d| d.0).filter(|&d| d > 0);
        if duration_s.is_none() {
            self.note(
                "`duration` -1 (or none): the run ends when every task exited, or after --duration (default 10s)"
                    .into(),
            );
        }
        let ns_per_loop = self.calibration(m)?;
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
        self.logging(m)?;
        let io_null = self.opt_str(m, "io_device", "global")?.is_none_or(|(d, _)| d == "/dev/null");
        let mem_buffer = self.opt_int(m, "mem_buffer_size", "global")?.map_or(4 << 20, |x| x.0);
        if mem_buffer <= 0 {
            return Err(self.err(g.at, "global.mem_buffer_size", "must be > 0"));
        }
        Ok(Global { duration_s, ns_per_loop, default_policy, pi_enabled, io_null, mem_buffer })
    }

    /// `calibration`: ns per loop (an integer) or the CPU rt-app calibrates on (`"CPUn"`).
    fn calibration(&mut self, m: &[(String, usize, Spanned)]) -> R<Option<i64>> {
        match self.member(m, "calibration") {
            None => Ok(None),
            Some(v @ Spanned { v: Json::Int(_), at }) => {
                let p = self.int_value(v, "global.calibration")?;
                if p <= 0 {
                    return Err(self.err(*at, "global.calibration", "ns per loop must be > 0"));
                }
                Ok(Some(p))
            }
            Some(Spanned { v: Json::Str(s), at }) => {
                if !s.strip_prefix("CPU").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) {
                    return Err(self.err(
                        *at,
                        "global.calibration",
                        format!("expected \"CPUn\" or ns per loop, found `{s}`"),
                    ));
                }
                self.note(format!("calibration `{s}`: the simulated CPU is the calibrated one, a `run` takes exactly its duration of full-speed work"));
                Ok(None)
            }
            Some(v) => Err(self.err(
                v.at,
                "global.calibration",
                format!("expected \"CPUn\" or an integer, found {}", v.v.kind()),
            )),
        }
    }

    /// `logdir`, `log_basename`, `log_size` and `ftrace`: checked as rt-app checks them
    /// (`parse_global`, `ftrace_setup`), then noted: schedlab reports its own measurements.
    fn logging(&mut self, m: &[(String, usize, Spanned)]) -> R<()> {
        for k in ["logdir", "log_basename"] {
            self.opt_str(m, k, "global")?;
        }
        if let Some(v) = self.member(m, "log_size") {
            if !matches!(v.v, Json::Int(_) | Json::Str(_)) {
                let msg = format!("expected a size in MB or \"file\", \"disable\", \"auto\"; found {}", v.v.kind());
                return Err(self.err(v.at, "global.log_size", msg));
            }
        }
        match self.member(m, "ftrace") {
            None | Some(Spanned { v: Json::Bool(_), .. }) => {}
            Some(Spanned { v: Json::Str(s), at }) => {
                // `strtok` on commas: empty items vanish.
                if let Some(bad) = s
                    .split(',')
                    .filter(|c| !c.is_empty())
                    .find(|c| !FTRACE_CATEGORIES.iter().any(|k| k.eq_ignore_ascii_case(c)))
                {
                    let msg = format!("invalid ftrace category `{bad}`; rt-app knows {}", FTRACE_CATEGORIES.join(", "));
                    return Err(self.err(*at, "global.ftrace", msg));
                }
            }
            Some(v) => {
                let msg = format!("expected categories (\"main,task\") or a boolean, found {}", v.v.kind());
                return Err(self.err(v.at, "global.ftrace", msg));
            }
        }
        for k in ["logdir", "log_basename", "log_size", "ftrace"] {
            if self.member(m, k).is_some() {
                self.note(format!("global `{k}` is accepted and ignored: schedlab reports its own measurements"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
