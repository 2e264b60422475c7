//! Spanned TOML → validated workload AST: the root of the parser, the AST and the readers
//! every section shares. Each top-level table has its own module: `header` (`[params]` and
//! the workload's own fields), `objects` (`[[pipe]]`, `[[mutex]]`, `[[cond]]`,
//! `[[barrier]]`), `futex` (`[[futex]]`), `groups` (`[[group]]`, `[[session]]`), `tasks`
//! (`[[task]]`, `[[change]]`), `daemons` (`[[daemon]]`); `ops` parses a program's operations
//! (`poll_mark` and `futex` theirs) and `values` the typed values (durations,
//! distributions, CPU lists, policies).

pub(crate) mod daemons;
mod futex;
mod group_uclamp;
mod groups;
mod header;
mod objects;
mod ops;
mod poll_mark;
mod tasks;
mod values;

pub(crate) use futex::FutexArg;
pub use futex::FUTEX_ALL;
pub use poll_mark::MAX_OPEN_SPANS;
pub use values::{SLICE_MAX, SLICE_MIN};

use crate::expr::{self, Env};
use crate::stop::{LoadError, Steps, Stop};
use crate::{ParamValue, Policy, Workload};
use schedlab_machine::CpuSet;
use schedlab_sim::{Distribution, Ns, SourceError};
use std::cell::RefCell;
use std::collections::BTreeMap;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

type V<'a> = Spanned<DeValue<'a>>;

/// An integer known at parse time, or an expression needing the instance index / loop vars.
#[derive(Clone, Debug)]
pub(crate) enum IntSrc {
    Const(i64),
    Expr(String),
}

#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub op: AstOp,
    pub offset: usize,
    pub path: String,
}

#[derive(Clone, Debug)]
pub(crate) enum AstOp {
    Run(Distribution),
    /// A `run` with its own `working_set` and/or `mem_intensity` (permille) for its duration.
    RunMem {
        run: Distribution,
        working_set: Option<u64>,
        intensity: Option<u32>,
    },
    Sleep(Distribution),
    Spin(Distribution),
    Yield,
    Wait,
    Exit,
    Loop {
        count: Option<IntSrc>,
        body: Vec<Node>,
    },
    For {
        var: String,
        count: IntSrc,
        body: Vec<Node>,
    },
    Fork {
        template: usize,
        count: IntSrc,
    },
    Send {
        pipe: String,
        bytes: IntSrc,
        /// Wake the reader with `WF_CURRENT_CPU` (simulation only).
        current_cpu: bool,
    },
    Recv {
        pipe: String,
        bytes: IntSrc,
    },
    Lock(String),
    Unlock(String),
    CondWait {
        cond: String,
        mutex: String,
    },
    Signal(String),
    Broadcast(String),
    Barrier(String),
    /// libgomp's barrier: spin up to `spin` of CPU time, then `futex_wait`.
    SpinBarrier {
        barrier: String,
        spin: Ns,
    },
    /// `poll` on the pipes `pipe` names for `var` = 0..count; when one is readable, run
    /// `body` with `var` bound to the first readable one's index.
    Poll {
        pipe: String,
        var: String,
        count: IntSrc,
        body: Vec<Node>,
    },
    /// Opens (`begin`) or closes a named span, keyed by (name, `id`) within the task.
    Mark {
        begin: bool,
        span: usize,
        id: IntSrc,
    },
    /// `timer`; `named`: an rt-app timer (`ref`), an index into `Workload::timers`.
    Timer {
        period: Ns,
        named: Option<usize>,
    },
    SetNice(IntSrc),
    SetAffinity(CpuSet),
    /// `sched_setattr(sched_runtime)`: a custom slice, or `None` for the base slice.
    SetSlice(Option<Ns>),
    SetPolicy(Policy),
    Futex(crate::futex::FutexOp<String, FutexArg>),
}

pub(super) struct P<'a> {
    file: &'a str,
    text: &'a str,
    params: BTreeMap<String, ParamValue>,
    /// The integer parameters, for expressions.
    int_params: expr::Vars,
    nr_cpus: usize,
    task_names: Vec<String>,
    /// Each task's index by name.
    task_index: BTreeMap<String, usize>,
    /// `loop`/`for` bodies open around the operation being parsed.
    nesting: std::cell::Cell<usize>,
    /// Span names in order of first mention.
    spans: std::cell::RefCell<Vec<String>>,
    /// Named (rt-app) timers in order of first mention, and each one's index by
    /// (name, shared, absolute).
    timers: std::cell::RefCell<Vec<crate::TimerDef>>,
    timer_index: std::cell::RefCell<BTreeMap<(String, bool, bool), usize>>,
    /// The caller's stop check ([`P::step`]).
    stop: &'a dyn Steps,
}

/// Deepest nesting of `loop` and `for` bodies. Parsing and lowering recurse once per
/// level (the TOML parser itself stops at 80 levels of arrays and inline tables).
pub const MAX_LOOP_NESTING: usize = 32;

type R<T> = Result<T, SourceError>;

impl<'a> P<'a> {
    fn err(&self, offset: usize, field: &str, msg: impl Into<String>) -> SourceError {
        SourceError::at(self.file, self.text, offset, field, msg)
    }
    /// One step of work (a table, a declared object, an operation, a lowered program),
    /// polling the stop check now and then: once it asks to stop, an error that unwinds
    /// the parse, which [`parse_toml`] reports as [`LoadError::Interrupted`].
    fn step(&self) -> R<()> {
        if self.stop.step() {
            return Err(self.err(0, "", "loading interrupted"));
        }
        Ok(())
    }
    fn param_env(&self) -> Env<'_> {
        Env::new(&self.int_params)
    }
    fn table<'v>(&self, v: &'v V<'a>, field: &str) -> R<&'v DeTable<'a>> {
        match v.get_ref() {
            DeValue::Table(t) => Ok(t),
            _ => Err(self.err(v.span().start, field, "expected a table")),
        }
    }
    /// An optional boolean field (false when absent); a parameter may stand for it, holding
    /// 0/1 (`process = "$process"`) or the text `"true"`/`"false"`.
    fn flag(&self, t: &DeTable<'a>, key: &str, field: &str) -> R<bool> {
        let Some(v) = self.get(t, key) else { return Ok(false) };
        if let Some(b) = v.get_ref().as_bool() {
            return Ok(b);
        }
        let f = join(field, key);
        if let Some(s) = v.get_ref().as_str().filter(|s| self.param_ref(s).is_some()) {
            match self.subst_text(s).as_str() {
                "true" => return Ok(true),
                "false" => return Ok(false),
                _ => {}
            }
        }
        match self.int(v, &f) {
            Ok(0) => Ok(false),
            Ok(1) => Ok(true),
            _ => Err(self.err(v.span().start, &f, "expected true or false (or a parameter that is 0 or 1)")),
        }
    }
    fn check_keys(&self, t: &DeTable, allowed: &[&str], field: &str) -> R<()> {
        for (k, _) in t.iter() {
            if !allowed.contains(&k.get_ref().as_ref()) {
                return Err(self.err(
                    k.span().start,
                    &join(field, k.get_ref()),
                    format!("unknown field `{}`; expected one of {}", k.get_ref(), allowed.join(", ")),
                ));
            }
        }
        Ok(())
    }
    fn get<'v>(&self, t: &'v DeTable<'a>, key: &str) -> Option<&'v V<'a>> {
        t.iter().find(|(k, _)| k.get_ref() == key).map(|(_, v)| v)
    }
    fn require<'v>(&self, t: &'v DeTable<'a>, key: &str, at: usize, field: &str) -> R<&'v V<'a>> {
        self.get(t, key).ok_or_else(|| self.err(at, &join(field, key), format!("missing required field `{key}`")))
    }
    fn string(&self, v: &V, field: &str) -> R<String> {
        let s = v.get_ref().as_str().ok_or_else(|| self.err(v.span().start, field, "expected a string"))?;
        Ok(self.subst_text(s))
    }
    /// `"$name"` / `"${name}"` → the parameter's text.
    fn param_ref<'s>(&self, s: &'s str) -> Option<&'s str> {
        s.strip_prefix("${").and_then(|r| r.strip_suffix('}')).or_else(|| s.strip_prefix('$'))
    }
    fn subst_text(&self, s: &str) -> String {
        match self.param_ref(s).and_then(|n| self.params.get(n)) {
            Some(ParamValue::Text(t)) => t.clone(),
            Some(ParamValue::Int(i)) => i.to_string(),
            None => s.to_string(),
        }
    }
    fn int_src(&self, v: &V, field: &str) -> R<IntSrc> {
        let at = v.span().start;
        match v.get_ref() {
            DeValue::Integer(i) => i
                .as_str()
                .parse::<i64>()
                .ok()
                .filter(|_| i.radix() == 10)
                .map(IntSrc::Const)
                .ok_or_else(|| self.err(at, field, "integer out of range")),
            DeValue::String(s) => {
                if let Some(name) = self.param_ref(s) {
                    return match self.params.get(name) {
                        Some(ParamValue::Int(i)) => Ok(IntSrc::Const(*i)),
                        Some(ParamValue::Text(_)) => {
                            Err(self.err(at, field, format!("parameter `{name}` is not an integer")))
                        }
                        None => Err(self.err(at, field, format!("unknown parameter `{name}`"))),
                    };
                }
                let inner = s.strip_prefix('{').and_then(|r| r.strip_suffix('}')).ok_or_else(|| {
                    self.err(at, field, format!("expected an integer or an expression `{{…}}`, found `{s}`"))
                })?;
                let env = self.param_env();
                let vars = expr::variables(inner);
                if vars.iter().all(|v| env.contains(v)) {
                    expr::eval(inner, &env).map(IntSrc::Const).map_err(|m| self.err(at, field, m))
                } else {
                    Ok(IntSrc::Expr(inner.to_string()))
                }
            }
            _ => Err(self.err(at, field, "expected an integer")),
        }
    }
    /// An integer that must be known at parse time (only parameters may appear).
    fn int(&self, v: &V, field: &str) -> R<i64> {
        match self.int_src(v, field)? {
            IntSrc::Const(i) => Ok(i),
            IntSrc::Expr(e) => {
                let m = expr::eval(&e, &self.param_env()).unwrap_err();
                Err(self.err(v.span().start, field, m))
            }
        }
    }
    fn nonneg(&self, v: &V, field: &str) -> R<u64> {
        let i = self.int(v, field)?;
        u64::try_from(i).map_err(|_| self.err(v.span().start, field, format!("must be >= 0, found {i}")))
    }
    /// The body (`do`) of a `loop` or `for` at `at`, at most [`MAX_LOOP_NESTING`] deep.
    fn body(&self, t: &DeTable<'a>, at: usize, field: &str) -> R<Vec<Node>> {
        let depth = self.nesting.get() + 1;
        if depth > MAX_LOOP_NESTING {
            return Err(self.err(at, field, format!("loops nested more than {MAX_LOOP_NESTING} deep")));
        }
        self.nesting.set(depth);
        let body = self.program(self.require(t, "do", at, field)?, &join(field, "do"));
        self.nesting.set(depth - 1);
        body
    }

    fn program(&self, v: &V, field: &str) -> R<Vec<Node>> {
        let DeValue::Array(a) = v.get_ref() else {
            return Err(self.err(v.span().start, field, "expected an array of operations"));
        };
        a.iter()
            .enumerate()
            .map(|(i, e)| {
                self.step()?;
                self.op(e, &format!("{field}[{i}]"))
            })
            .collect()
    }
}

pub(crate) fn check_nice(n: i64) -> Result<(), String> {
    if (-20..=19).contains(&n) {
        Ok(())
    } else {
        Err(format!("nice {n} outside -20..=19"))
    }
}

/// The integer parameters of `params`: the variables every expression sees.
fn int_params(params: &BTreeMap<String, ParamValue>) -> expr::Vars {
    params
        .iter()
        .filter_map(|(k, v)| match v {
            ParamValue::Int(i) => Some((k.clone(), *i)),
            ParamValue::Text(_) => None,
        })
        .collect()
}

fn join(field: &str, key: &str) -> String {
    if field.is_empty() {
        key.to_string()
    } else {
        format!("{field}.{key}")
    }
}

/// The top-level tables and fields of a workload file.
const ROOT_KEYS: &[&str] = &[
    "name",
    "description",
    "duration",
    "machine",
    "params",
    "pipe",
    "mutex",
    "cond",
    "barrier",
    "futex",
    "group",
    "session",
    "task",
    "change",
    "schedulers",
    "daemon",
];

/// Parses and validates a workload: [`parse_workload_until`] with a stop check that never
/// stops.
///
/// `overrides` are `--param NAME=VALUE` pairs (each must name a declared parameter);
/// `nr_cpus` is the machine's CPU count, against which affinities are checked.
pub fn parse_workload(
    file: &str,
    text: &str,
    overrides: &[(String, String)],
    nr_cpus: usize,
) -> Result<Workload, SourceError> {
    parse_workload_until(file, text, overrides, nr_cpus, &mut || false).map_err(|e| match e {
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

/// [`parse_workload`], interruptible. `stop` is called when loading starts and then every
/// [`POLL_EVERY`](crate::POLL_EVERY) steps of work (tables, declared objects, a program's
/// operations, lowered programs; for an rt-app file also JSON values, threads and events);
/// once it returns `true`, loading ends within those steps (milliseconds) with
/// [`LoadError::Interrupted`]. The intended check is a signal handler's flag,
/// `&mut || STOP.load(Ordering::Relaxed)`. Only the TOML reader itself
/// (`toml::de::DeTable::parse`, some 30 MB/s) runs without polling.
///
/// A leading UTF-8 byte-order mark is no part of the document (of either kind): it is
/// dropped before JSON is told from TOML, and error positions count from after it.
pub fn parse_workload_until(
    file: &str,
    text: &str,
    overrides: &[(String, String)],
    nr_cpus: usize,
    stop: &mut dyn FnMut() -> bool,
) -> Result<Workload, LoadError> {
    let text = crate::rtapp::without_bom(text);
    if !crate::rtapp::looks_like_json(text) {
        return parse_toml(file, text, overrides, nr_cpus, stop);
    }
    // An rt-app file: converted to TOML, whose errors point back into the JSON.
    let c = crate::rtapp::convert_until(file, text, stop)?;
    let origin = c.origin(text);
    let mut wl = match parse_toml(file, &c.toml, overrides, nr_cpus, stop) {
        Err(LoadError::Source(e)) => return Err(origin.relocate(e).into()),
        r => r?,
    };
    wl.notes = c.notes;
    wl.origin = Some(std::sync::Arc::new(origin));
    Ok(wl)
}

/// [`parse_workload_until`] of native TOML.
fn parse_toml(
    file: &str,
    text: &str,
    overrides: &[(String, String)],
    nr_cpus: usize,
    stop: &mut dyn FnMut() -> bool,
) -> Result<Workload, LoadError> {
    let stop = RefCell::new(Stop::new(stop));
    let p = P {
        file,
        text,
        params: BTreeMap::new(),
        int_params: expr::Vars::new(),
        nr_cpus: nr_cpus.max(1),
        task_names: Vec::new(),
        task_index: BTreeMap::new(),
        nesting: Default::default(),
        spans: Default::default(),
        timers: Default::default(),
        timer_index: Default::default(),
        stop: &stop,
    };
    let r = sections(p, overrides);
    // An error the stop check caused is no error of the file's.
    if stop.borrow().stopped() {
        return Err(LoadError::Interrupted { file: file.to_string() });
    }
    Ok(r?)
}

/// The document's tables, in the order they may refer to one another, and the workload.
fn sections(mut p: P, overrides: &[(String, String)]) -> Result<Workload, SourceError> {
    let (file, text) = (p.file, p.text);
    p.step()?;
    let doc = DeTable::parse(text).map_err(|e| {
        SourceError::at(file, text, e.span().map_or(0, |s| s.start), "(syntax)", e.message().trim().to_string())
    })?;
    let root = doc.get_ref();
    p.check_keys(root, ROOT_KEYS, "")?;
    // Parameters first: everything else may refer to them.
    p.params = p.params(root, overrides)?;
    p.int_params = int_params(&p.params);
    let header = p.header(root)?;
    let objects = p.objects(root)?;
    let futexes = p.futexes(root)?;
    let mut groups = p.task_groups(root)?;
    let tasks = p.task_tables(root)?;
    (p.task_names, p.task_index) = p.task_names(&tasks)?;
    let templates = p.tasks(root, &tasks, &mut groups)?;
    let changes = p.changes(root, &templates)?;
    let mut wl = Workload {
        names: crate::NameIndex::default(),
        spans: p.spans.take(),
        timers: p.timers.take(),
        notes: Vec::new(),
        origin: None,
        schedulers: header.schedulers,
        changes,
        groups: groups.defs,
        file: file.to_string(),
        text: text.to_string(),
        line_starts: schedlab_sim::line_starts(text),
        name: header.name,
        description: header.description,
        duration: header.duration,
        machine: header.machine,
        params: std::mem::take(&mut p.params),
        int_params: std::mem::take(&mut p.int_params),
        pipes: objects.pipes,
        mutexes: objects.mutexes,
        conds: objects.conds,
        barriers: objects.barriers,
        futexes,
        templates,
    };
    wl.names = crate::NameIndex::of_workload(&wl);
    p.check_programs(&wl, &tasks)?;
    Ok(wl)
}
