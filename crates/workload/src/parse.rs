//! Spanned TOML → validated workload AST.

pub(crate) mod daemons;
mod futex;
mod groups;
mod poll_mark;

pub use poll_mark::MAX_OPEN_SPANS;

pub use futex::FUTEX_ALL;

use crate::expr::{self, Env};
use crate::{
    BarrierDef, Change, ParamValue, PipeDef, Policy, TaskTemplate, Workload, MAX_DURATION, MAX_SIM_TIME, MAX_TASKS,
};
use schedlab_machine::CpuSet;
use schedlab_sim::{parse_duration, Distribution, Ns, SourceError};
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
    Futex(crate::futex::FutexOp<String>),
}

struct P<'a> {
    file: &'a str,
    text: &'a str,
    params: BTreeMap<String, ParamValue>,
    nr_cpus: usize,
    task_names: Vec<String>,
    /// `loop`/`for` bodies open around the operation being parsed.
    nesting: std::cell::Cell<usize>,
    /// Span names in order of first mention.
    spans: std::cell::RefCell<Vec<String>>,
    /// Named (rt-app) timers in order of first mention.
    timers: std::cell::RefCell<Vec<crate::TimerDef>>,
}

/// Deepest nesting of `loop` and `for` bodies. Parsing and lowering recurse once per
/// level (the TOML parser itself stops at 80 levels of arrays and inline tables).
pub const MAX_LOOP_NESTING: usize = 32;

type R<T> = Result<T, SourceError>;

impl<'a> P<'a> {
    fn err(&self, offset: usize, field: &str, msg: impl Into<String>) -> SourceError {
        SourceError::at(self.file, self.text, offset, field, msg)
    }
    fn param_env(&self) -> Env {
        self.params
            .iter()
            .filter_map(|(k, v)| match v {
                ParamValue::Int(i) => Some((k.clone(), *i)),
                ParamValue::Text(_) => None,
            })
            .collect()
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
    /// `kind = "pipe" | "socket"` of a `[[pipe]]` (a parameter may stand for it).
    fn pipe_kind(&self, t: &DeTable<'a>, field: &str) -> R<bool> {
        let Some(v) = self.get(t, "kind") else { return Ok(false) };
        match self.string(v, &join(field, "kind"))?.as_str() {
            "pipe" => Ok(false),
            "socket" => Ok(true),
            o => Err(self.err(
                v.span().start,
                &join(field, "kind"),
                format!("unknown kind `{o}`; expected pipe or socket"),
            )),
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
                if vars.iter().all(|v| env.contains_key(v)) {
                    expr::eval(inner, &env).map(IntSrc::Const).map_err(|m| self.err(at, field, m))
                } else {
                    Ok(IntSrc::Expr(inner.to_string()))
                }
            }
            _ => Err(self.err(at, field, "expected an integer")),
        }
    }
    /// An integer that must be known at parse time (only parameters may appear).
    /// A policy name `v` and the parameters beside it in table `t` (`sched_attr`):
    /// `rt_priority` 1..=99 for fifo/rr; `runtime` with `deadline` and/or `period` (each
    /// defaulting to the other: an implicit deadline) for deadline, valid per
    /// `deadline.c:__checkparam_dl`. A parameter the policy does not take is an error.
    fn policy(&self, t: &DeTable<'a>, v: &V, table: &str, field: &str) -> R<Policy> {
        let name = self.string(v, field)?;
        let take: &[&str] = match name.as_str() {
            "fifo" | "rr" => &["rt_priority"],
            "deadline" => &["runtime", "deadline", "period"],
            "normal" | "batch" | "idle" | "ext" => &[],
            o => {
                return Err(self.err(
                    v.span().start,
                    field,
                    format!("unknown policy `{o}`; expected normal, batch, idle, ext, fifo, rr or deadline"),
                ))
            }
        };
        for k in POLICY_PARAMS.iter().filter(|k| !take.contains(k)) {
            if let Some(x) = self.get(t, k) {
                return Err(self.err(x.span().start, &join(table, k), format!("policy `{name}` takes no `{k}`")));
            }
        }
        let at = v.span().start;
        Ok(match name.as_str() {
            "normal" => Policy::Normal,
            "batch" => Policy::Batch,
            "idle" => Policy::Idle,
            "ext" => Policy::Ext,
            "fifo" | "rr" => {
                let f = join(table, "rt_priority");
                let x = self.require(t, "rt_priority", at, table)?;
                let n = self.int(x, &f)?;
                let (lo, hi) = (schedlab_sched_api::RT_PRIO_MIN, schedlab_sched_api::RT_PRIO_MAX);
                if n < i64::from(lo) || n > i64::from(hi) {
                    return Err(self.err(x.span().start, &f, format!("rt_priority {n} outside {lo}..={hi}")));
                }
                let prio = n as u8;
                if name == "fifo" {
                    Policy::Fifo { prio }
                } else {
                    Policy::Rr { prio }
                }
            }
            _ => Policy::Deadline(self.dl_params(t, at, table)?),
        })
    }
    fn dl_params(&self, t: &DeTable<'a>, at: usize, table: &str) -> R<crate::DlParams> {
        let runtime = self.duration(self.require(t, "runtime", at, table)?, &join(table, "runtime"))?.0;
        let dur = |k: &str| self.get(t, k).map(|x| self.duration(x, &join(table, k))).transpose();
        let (deadline, period) = match (dur("deadline")?, dur("period")?) {
            (Some(d), Some(p)) => (d.0, p.0),
            (Some(d), None) => (d.0, d.0),
            (None, Some(p)) => (p.0, p.0),
            (None, None) => {
                return Err(self.err(at, &join(table, "period"), "deadline needs `period` and/or `deadline`"))
            }
        };
        let dl = crate::DlParams { runtime, deadline, period };
        dl.check().map_err(|m| self.err(at, table, format!("invalid deadline parameters: {m}")))?;
        Ok(dl)
    }
    /// Without `policy`, no policy parameter may be given.
    fn no_policy_params(&self, t: &DeTable<'a>, table: &str) -> R<()> {
        for k in POLICY_PARAMS {
            if let Some(x) = self.get(t, k) {
                return Err(self.err(x.span().start, &join(table, k), format!("`{k}` needs a `policy` that takes it")));
            }
        }
        Ok(())
    }
    /// `{ timer = "10ms" }`, or an rt-app timer `{ timer = "10ms", ref = "t", mode =
    /// "relative" | "absolute", shared = bool }`: the ops naming the same `ref`, `shared` and
    /// `mode` use one timer. A named timer's period may be 0 (rt-app's default: always late,
    /// never sleeps).
    fn timer(&self, t: &DeTable<'a>, val: &V, field: &str) -> R<AstOp> {
        let f = join(field, "timer");
        let period = self.duration(val, &f)?;
        let Some(rv) = self.get(t, "ref") else {
            if let Some((k, _)) = t.iter().find(|(k, _)| k.get_ref() != "timer") {
                return Err(self.err(k.span().start, &join(field, k.get_ref()), "`mode` and `shared` need a `ref`"));
            }
            if period.0 == 0 {
                return Err(self.err(val.span().start, &f, "a timer period must be > 0"));
            }
            return Ok(AstOp::Timer { period, named: None });
        };
        let name = self.string(rv, &join(field, "ref"))?;
        let shared = match self.get(t, "shared") {
            Some(v) => v
                .get_ref()
                .as_bool()
                .ok_or_else(|| self.err(v.span().start, &join(field, "shared"), "expected true or false"))?,
            None => false,
        };
        let absolute = match self.get(t, "mode") {
            None => false,
            Some(v) => match self.string(v, &join(field, "mode"))?.as_str() {
                "relative" => false,
                "absolute" => true,
                o => {
                    let m = format!("unknown timer mode `{o}`; expected relative or absolute");
                    return Err(self.err(v.span().start, &join(field, "mode"), m));
                }
            },
        };
        let mut timers = self.timers.borrow_mut();
        let def = crate::TimerDef { name, shared, absolute };
        let id = timers.iter().position(|d| *d == def).unwrap_or_else(|| {
            timers.push(def);
            timers.len() - 1
        });
        Ok(AstOp::Timer { period, named: Some(id) })
    }
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
    /// A duration of at most [`MAX_DURATION`].
    fn duration(&self, v: &V, field: &str) -> R<Ns> {
        let at = v.span().start;
        match v.get_ref() {
            DeValue::String(s) => {
                let s = self.subst_text(s);
                let d = parse_duration(&s).map_err(|m| self.err(at, field, m))?;
                if d > MAX_DURATION {
                    return Err(self.err(
                        at,
                        field,
                        format!("{d} exceeds the limit of {MAX_DURATION} for a single duration"),
                    ));
                }
                Ok(d)
            }
            DeValue::Integer(i) if i.as_str() == "0" => Ok(Ns(0)),
            DeValue::Integer(i) => Err(self.err(
                at,
                field,
                format!("missing unit: write a string such as \"{}ms\" (units: ns, us, ms, s)", i.as_str()),
            )),
            DeValue::Float(f) => {
                Err(self.err(at, field, format!("missing unit: write \"{}ms\" (units: ns, us, ms, s)", f.as_str())))
            }
            _ => Err(self.err(at, field, "expected a duration such as \"5ms\"")),
        }
    }
    fn dist(&self, v: &V, field: &str) -> R<Distribution> {
        let DeValue::Table(t) = v.get_ref() else {
            return Ok(Distribution::Constant(self.duration(v, field)?));
        };
        let at = v.span().start;
        let kind_v = self.require(t, "dist", at, field)?;
        let kind = self.string(kind_v, &join(field, "dist"))?;
        let d = |k: &str| -> R<Ns> { self.duration(self.require(t, k, at, field)?, &join(field, k)) };
        Ok(match kind.as_str() {
            "constant" => {
                self.check_keys(t, &["dist", "value"], field)?;
                Distribution::Constant(d("value")?)
            }
            "uniform" => {
                self.check_keys(t, &["dist", "min", "max"], field)?;
                let (min, max) = (d("min")?, d("max")?);
                if max < min {
                    return Err(self.err(at, &join(field, "max"), "max must be >= min"));
                }
                Distribution::Uniform { min, max }
            }
            "exponential" => {
                self.check_keys(t, &["dist", "mean"], field)?;
                Distribution::Exponential { mean: d("mean")? }
            }
            "normal" => {
                self.check_keys(t, &["dist", "mean", "stddev", "min", "max"], field)?;
                let mean = d("mean")?;
                let stddev = d("stddev")?;
                let min = if self.get(t, "min").is_some() { d("min")? } else { Ns(0) };
                let max = if self.get(t, "max").is_some() {
                    d("max")?
                } else {
                    Ns(mean.0.saturating_mul(2).max(mean.0 + 4 * stddev.0))
                };
                if max < min {
                    return Err(self.err(at, &join(field, "max"), "max must be >= min"));
                }
                Distribution::Normal { mean, stddev, min, max }
            }
            other => {
                return Err(self.err(
                    kind_v.span().start,
                    &join(field, "dist"),
                    format!("unknown distribution `{other}`; expected constant, uniform, exponential or normal"),
                ))
            }
        })
    }
    /// A custom slice: a duration in `SLICE_MIN..=SLICE_MAX`, or `"default"` / 0 for the
    /// scheduler's base slice (a parameter may stand for either).
    fn slice(&self, v: &V, field: &str) -> R<Option<Ns>> {
        if let DeValue::String(s) = v.get_ref() {
            if self.subst_text(s) == "default" {
                return Ok(None);
            }
        }
        let d = self.duration(v, field)?;
        if d.0 == 0 {
            return Ok(None);
        }
        if d < SLICE_MIN || d > SLICE_MAX {
            return Err(self.err(v.span().start, field, format!("slice {d} outside {SLICE_MIN}..={SLICE_MAX}")));
        }
        Ok(Some(d))
    }

    /// A non-empty array of strings.
    fn string_list(&self, v: &V, field: &str) -> R<Vec<String>> {
        let DeValue::Array(a) = v.get_ref() else {
            return Err(self.err(v.span().start, field, "expected an array of strings"));
        };
        let out = a.iter().enumerate().map(|(i, e)| self.string(e, &format!("{field}[{i}]"))).collect::<R<Vec<_>>>()?;
        if out.is_empty() {
            return Err(self.err(v.span().start, field, "name at least one"));
        }
        Ok(out)
    }

    fn cpuset(&self, v: &V, field: &str) -> R<CpuSet> {
        let at = v.span().start;
        let set = match v.get_ref() {
            DeValue::String(s) if self.subst_text(s) == "all" => CpuSet::full(self.nr_cpus),
            DeValue::String(s) => CpuSet::parse_list(&self.subst_text(s)).map_err(|m| self.err(at, field, m))?,
            DeValue::Integer(_) => CpuSet::single(1, self.nonneg(v, field)? as usize),
            DeValue::Array(a) => {
                let mut set = CpuSet::empty(self.nr_cpus);
                for e in a.iter() {
                    let c = self.nonneg(e, field)?;
                    if c as usize >= schedlab_machine::MAX_CPUS {
                        return Err(self.err(e.span().start, field, format!("CPU {c} is beyond any machine")));
                    }
                    set.insert(c as usize);
                }
                if set.is_empty() {
                    return Err(self.err(at, field, "empty CPU list"));
                }
                set
            }
            _ => return Err(self.err(at, field, "expected a CPU list such as \"0-3,6\" or [0, 1]")),
        };
        if let Some(bad) = set.iter().find(|&c| c >= self.nr_cpus) {
            return Err(self.err(
                at,
                field,
                format!("CPU {bad} is outside the machine, which has CPUs 0-{}", self.nr_cpus - 1),
            ));
        }
        Ok(set)
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
        a.iter().enumerate().map(|(i, e)| self.op(e, &format!("{field}[{i}]"))).collect()
    }

    fn op(&self, v: &V, field: &str) -> R<Node> {
        let at = v.span().start;
        let node = |op| Ok(Node { op, offset: at, path: field.to_string() });
        if let DeValue::String(s) = v.get_ref() {
            return match s.as_ref() {
                "yield" => node(AstOp::Yield),
                "wait" => node(AstOp::Wait),
                "exit" => node(AstOp::Exit),
                other => Err(self.err(
                    at,
                    field,
                    format!("unknown operation `{other}`; bare strings may be yield, wait or exit"),
                )),
            };
        }
        let t = self.table(v, field)?;
        let verbs: Vec<&Spanned<std::borrow::Cow<str>>> =
            t.iter().map(|(k, _)| k).filter(|k| VERBS.contains(&k.get_ref().as_ref())).collect();
        let verb = match verbs.as_slice() {
            [one] => one.get_ref().to_string(),
            [] => return Err(self.err(at, field, format!("an operation needs one of: {}", VERBS.join(", ")))),
            [_, second, ..] => return Err(self.err(second.span().start, field, "an operation may have only one verb")),
        };
        let val = self.get(t, &verb).expect("verb present");
        let f = join(field, &verb);
        let extra: &[&str] = match verb.as_str() {
            "loop" | "for" => &["do", "count"],
            "poll" => &["each", "count", "do"],
            "barrier" => &["spin_max"],
            "mark_begin" | "mark_end" => &["id"],
            "fork" => &["count"],
            "send" => &["bytes", "current_cpu"],
            "recv" => &["bytes"],
            v if futex::FUTEX_VERBS.iter().any(|(n, _)| *n == v) => {
                futex::FUTEX_VERBS.iter().find(|(n, _)| *n == v).map(|(_, e)| *e).unwrap_or(&[])
            }
            "cond_wait" => &["mutex"],
            "timer" => &["ref", "mode", "shared"],
            "set_policy" => POLICY_PARAMS,
            _ => &[],
        };
        let mut allowed = vec![verb.as_str()];
        allowed.extend_from_slice(extra);
        self.check_keys(t, &allowed, field)?;
        let name = |s: &str| -> R<String> { self.string(self.require(t, s, at, field)?, &join(field, s)) };
        let op = match verb.as_str() {
            "run" => AstOp::Run(self.dist(val, &f)?),
            "sleep" => AstOp::Sleep(self.dist(val, &f)?),
            "spin" => AstOp::Spin(self.dist(val, &f)?),
            "yield" | "wait" | "exit" => {
                if val.get_ref().as_bool() != Some(true) {
                    return Err(self.err(val.span().start, &f, "write `true` (or use the bare string form)"));
                }
                match verb.as_str() {
                    "yield" => AstOp::Yield,
                    "wait" => AstOp::Wait,
                    _ => AstOp::Exit,
                }
            }
            "loop" => {
                if self.get(t, "count").is_some() {
                    return Err(self.err(at, &join(field, "count"), "give the repetitions as `loop = N`"));
                }
                let count = match val.get_ref() {
                    DeValue::String(s) if s.as_ref() == "forever" => None,
                    _ => Some(self.int_src(val, &f)?),
                };
                if let Some(IntSrc::Const(c)) = count {
                    if c < 0 {
                        return Err(self.err(val.span().start, &f, "loop count must be >= 0 or \"forever\""));
                    }
                }
                let body = self.body(t, at, field)?;
                AstOp::Loop { count, body }
            }
            "for" => {
                let var = self.string(val, &f)?;
                if !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || var.is_empty() {
                    return Err(self.err(val.span().start, &f, "a loop variable is a plain name such as \"r\""));
                }
                let count = self.int_src(self.require(t, "count", at, field)?, &join(field, "count"))?;
                let body = self.body(t, at, field)?;
                AstOp::For { var, count, body }
            }
            "fork" => {
                let tname = self.string(val, &f)?;
                let template = self
                    .task_names
                    .iter()
                    .position(|n| *n == tname)
                    .ok_or_else(|| self.err(val.span().start, &f, format!("no task named `{tname}` to fork")))?;
                let count = match self.get(t, "count") {
                    Some(c) => self.int_src(c, &join(field, "count"))?,
                    None => IntSrc::Const(1),
                };
                AstOp::Fork { template, count }
            }
            "send" | "recv" => {
                let pipe = self.string(val, &f)?;
                let bytes = self.int_src(self.require(t, "bytes", at, field)?, &join(field, "bytes"))?;
                if verb == "send" {
                    let current_cpu = match self.get(t, "current_cpu") {
                        Some(v) => v.get_ref().as_bool().ok_or_else(|| {
                            self.err(v.span().start, &join(field, "current_cpu"), "expected true or false")
                        })?,
                        None => false,
                    };
                    AstOp::Send { pipe, bytes, current_cpu }
                } else {
                    AstOp::Recv { pipe, bytes }
                }
            }
            "lock" => AstOp::Lock(self.string(val, &f)?),
            "unlock" => AstOp::Unlock(self.string(val, &f)?),
            "cond_wait" => AstOp::CondWait { cond: self.string(val, &f)?, mutex: name("mutex")? },
            "signal" => AstOp::Signal(self.string(val, &f)?),
            "broadcast" => AstOp::Broadcast(self.string(val, &f)?),
            "barrier" => match self.get(t, "spin_max") {
                None => AstOp::Barrier(self.string(val, &f)?),
                Some(sv) => {
                    let spin = self.duration(sv, &join(field, "spin_max"))?;
                    AstOp::SpinBarrier { barrier: self.string(val, &f)?, spin }
                }
            },
            "poll" => self.poll(t, val, at, field)?,
            "mark_begin" | "mark_end" => {
                let span = self.span(val, &f)?;
                let id = match self.get(t, "id") {
                    Some(v) => self.int_src(v, &join(field, "id"))?,
                    None => IntSrc::Const(0),
                };
                AstOp::Mark { begin: verb == "mark_begin", span, id }
            }
            "timer" => self.timer(t, val, field)?,
            "set_nice" => {
                let n = self.int(val, &f)?;
                check_nice(n).map_err(|m| self.err(val.span().start, &f, m))?;
                AstOp::SetNice(IntSrc::Const(n))
            }
            "set_affinity" => AstOp::SetAffinity(self.cpuset(val, &f)?),
            "set_slice" => AstOp::SetSlice(self.slice(val, &f)?),
            "set_policy" => AstOp::SetPolicy(self.policy(t, val, field, &f)?),
            v if futex::FUTEX_VERBS.iter().any(|(n, _)| *n == v) => self.futex_op(v, val, t, at, field)?,
            _ => unreachable!("verb list and match agree"),
        };
        node(op)
    }
}

const VERBS: &[&str] = &[
    "run",
    "sleep",
    "spin",
    "yield",
    "wait",
    "exit",
    "loop",
    "for",
    "fork",
    "send",
    "recv",
    "lock",
    "unlock",
    "cond_wait",
    "signal",
    "broadcast",
    "barrier",
    "poll",
    "mark_begin",
    "mark_end",
    "timer",
    "set_nice",
    "set_affinity",
    "set_slice",
    "set_policy",
    "futex_set",
    "futex_add",
    "futex_wait",
    "futex_wake",
    "futex_swap",
    "futex_wake_op",
    "futex_requeue",
    "lock_pi",
    "unlock_pi",
];

/// The keys that go with a policy (`sched_attr`): `rt_priority` for fifo/rr, `runtime`,
/// `deadline` and `period` for deadline.
const POLICY_PARAMS: &[&str] = &["rt_priority", "runtime", "deadline", "period"];

/// A pipe's buffer by default: 16 pages (`fs/pipe.c: PIPE_DEF_BUFFERS`).
pub const PIPE_CAPACITY: u64 = 65_536;
/// An `AF_UNIX` socket's send buffer by default: `net.core.wmem_default` (`SK_WMEM_MAX`,
/// 212 992 bytes). The kernel also counts each message's `sk_buff` overhead against it, which
/// the model leaves out (set `capacity` to account for it).
pub const SOCKET_CAPACITY: u64 = 212_992;

/// Custom slice bounds (`kernel/sched/syscalls.c: __setscheduler_params`, v6.12: the
/// kernel clamps `sched_runtime` to 0.1–100 ms; a workload file outside them is an error).
pub const SLICE_MIN: Ns = Ns(100_000);
pub const SLICE_MAX: Ns = Ns(100_000_000);

fn check_nice(n: i64) -> Result<(), String> {
    if (-20..=19).contains(&n) {
        Ok(())
    } else {
        Err(format!("nice {n} outside -20..=19"))
    }
}

fn join(field: &str, key: &str) -> String {
    if field.is_empty() {
        key.to_string()
    } else {
        format!("{field}.{key}")
    }
}

fn mentions_n(nodes: &[Node]) -> bool {
    let has = |s: &str| {
        let mut rest = s;
        while let Some(o) = rest.find('{') {
            let Some(c) = rest[o..].find('}') else { return false };
            if expr::variables(&rest[o + 1..o + c]).iter().any(|v| v == "n") {
                return true;
            }
            rest = &rest[o + c + 1..];
        }
        false
    };
    let int = |i: &IntSrc| matches!(i, IntSrc::Expr(e) if expr::variables(e).iter().any(|v| v == "n"));
    nodes.iter().any(|node| match &node.op {
        AstOp::Loop { count, body } => count.as_ref().is_some_and(int) || mentions_n(body),
        AstOp::For { count, body, .. } => int(count) || mentions_n(body),
        AstOp::Fork { count, .. } | AstOp::SetNice(count) => int(count),
        AstOp::Send { pipe, bytes, .. } | AstOp::Recv { pipe, bytes } => has(pipe) || int(bytes),
        AstOp::Futex(op) => op.words().into_iter().any(|w| has(w)),
        AstOp::Lock(s) | AstOp::Unlock(s) | AstOp::Signal(s) | AstOp::Broadcast(s) | AstOp::Barrier(s) => has(s),
        AstOp::SpinBarrier { barrier, .. } => has(barrier),
        AstOp::Poll { pipe, count, body, .. } => has(pipe) || int(count) || mentions_n(body),
        AstOp::Mark { id, .. } => int(id),
        AstOp::CondWait { cond, mutex } => has(cond) || has(mutex),
        _ => false,
    })
}

/// Most operations the programs of all started tasks may hold together.
pub const MAX_TOTAL_OPS: u64 = 10_000_000;

fn p_err_total(wl: &Workload, at: usize, t: usize) -> SourceError {
    SourceError::at(
        &wl.file,
        &wl.text,
        at,
        &format!("task[{t}]"),
        format!("the started tasks' programs expand to more than {MAX_TOTAL_OPS} operations in all"),
    )
}

/// Parses and validates a workload.
///
/// `overrides` are `--param NAME=VALUE` pairs (each must name a declared parameter);
/// `nr_cpus` is the machine's CPU count, against which affinities are checked.
pub fn parse_workload(
    file: &str,
    text: &str,
    overrides: &[(String, String)],
    nr_cpus: usize,
) -> Result<Workload, SourceError> {
    if !crate::rtapp::looks_like_json(text) {
        return parse_toml(file, text, overrides, nr_cpus);
    }
    // An rt-app file: converted to TOML, whose errors point back into the JSON.
    let c = crate::rtapp::convert(file, text)?;
    let origin = c.origin(text);
    let mut wl = parse_toml(file, &c.toml, overrides, nr_cpus).map_err(|e| origin.relocate(e))?;
    wl.notes = c.notes;
    wl.origin = Some(std::sync::Arc::new(origin));
    Ok(wl)
}

/// [`parse_workload`] of native TOML.
fn parse_toml(file: &str, text: &str, overrides: &[(String, String)], nr_cpus: usize) -> Result<Workload, SourceError> {
    let doc = DeTable::parse(text).map_err(|e| {
        SourceError::at(file, text, e.span().map_or(0, |s| s.start), "(syntax)", e.message().trim().to_string())
    })?;
    let root = doc.get_ref();
    let mut p = P {
        file,
        text,
        params: BTreeMap::new(),
        nr_cpus: nr_cpus.max(1),
        task_names: Vec::new(),
        nesting: Default::default(),
        spans: Default::default(),
        timers: Default::default(),
    };
    p.check_keys(
        root,
        &[
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
        ],
        "",
    )?;

    // Parameters first: everything else may refer to them.
    if let Some(v) = p.get(root, "params") {
        for (k, pv) in p.table(v, "params")?.iter() {
            let f = join("params", k.get_ref());
            let val = match pv.get_ref() {
                DeValue::Integer(_) => ParamValue::Int(p.int(pv, &f)?),
                DeValue::String(s) => ParamValue::Text(s.to_string()),
                _ => return Err(p.err(pv.span().start, &f, "a parameter is an integer or a string")),
            };
            p.params.insert(k.get_ref().to_string(), val);
        }
    }
    for (k, raw) in overrides {
        let Some(old) = p.params.get(k) else {
            let known: Vec<&str> = p.params.keys().map(String::as_str).collect();
            return Err(SourceError {
                file: "--param".into(),
                line: 0,
                column: 0,
                field: k.clone(),
                message: format!("`{file}` declares no parameter `{k}` (it has: {})", known.join(", ")),
                snippet: String::new(),
            });
        };
        let v = match old {
            ParamValue::Int(_) => ParamValue::Int(raw.trim().parse().map_err(|_| SourceError {
                file: "--param".into(),
                line: 0,
                column: 0,
                field: k.clone(),
                message: format!("parameter `{k}` is an integer, not `{raw}`"),
                snippet: String::new(),
            })?),
            ParamValue::Text(_) => ParamValue::Text(raw.clone()),
        };
        p.params.insert(k.clone(), v);
    }

    let str_field = |key: &str| -> R<Option<String>> { p.get(root, key).map(|v| p.string(v, key)).transpose() };
    let name = str_field("name")?.unwrap_or_else(|| file.to_string());
    let description = str_field("description")?.unwrap_or_default();
    let machine = str_field("machine")?;
    let schedulers = p.get(root, "schedulers").map(|v| p.string_list(v, "schedulers")).transpose()?;
    let duration = p.get(root, "duration").map(|v| p.duration(v, "duration")).transpose()?;
    if let (Some(d), Some(v)) = (duration, p.get(root, "duration")) {
        if d > MAX_SIM_TIME {
            return Err(p.err(v.span().start, "duration", format!("run time {d} exceeds the limit of {MAX_SIM_TIME}")));
        }
    }

    // Kernel objects: `[[pipe]]`, `[[mutex]]`, `[[cond]]`, `[[barrier]]`.
    let mut pipes = Vec::new();
    let mut mutexes = Vec::new();
    let mut conds = Vec::new();
    let mut barriers = Vec::new();
    let mut seen = BTreeMap::new();
    for kind in ["pipe", "mutex", "cond", "barrier"] {
        let Some(v) = p.get(root, kind) else { continue };
        let DeValue::Array(items) = v.get_ref() else {
            return Err(p.err(v.span().start, kind, format!("expected `[[{kind}]]` tables")));
        };
        for (i, item) in items.iter().enumerate() {
            let f = format!("{kind}[{i}]");
            let t = p.table(item, &f)?;
            let extra: &[&str] = match kind {
                "pipe" => &["name", "count", "capacity", "kind"],
                "barrier" => &["name", "count", "parties"],
                _ => &["name", "count"],
            };
            p.check_keys(t, extra, &f)?;
            let base = p.string(p.require(t, "name", item.span().start, &f)?, &join(&f, "name"))?;
            let count = match p.get(t, "count") {
                Some(c) => Some(p.nonneg(c, &join(&f, "count"))?),
                None => None,
            };
            if count.unwrap_or(1) > MAX_TASKS {
                return Err(p.err(item.span().start, &join(&f, "count"), format!("more than {MAX_TASKS} objects")));
            }
            let names: Vec<String> = match count {
                Some(c) => (0..c).map(|k| format!("{base}.{k}")).collect(),
                None => vec![base.clone()],
            };
            for n in names {
                if let Some(prev) = seen.insert((kind, n.clone()), i) {
                    let _ = prev;
                    return Err(p.err(item.span().start, &join(&f, "name"), format!("{kind} `{n}` is declared twice")));
                }
                match kind {
                    "pipe" => {
                        let socket = p.pipe_kind(t, &f)?;
                        let capacity = match p.get(t, "capacity") {
                            Some(c) => p.nonneg(c, &join(&f, "capacity"))?,
                            None if socket => SOCKET_CAPACITY,
                            None => PIPE_CAPACITY,
                        };
                        if capacity == 0 {
                            return Err(p.err(item.span().start, &join(&f, "capacity"), "capacity must be > 0"));
                        }
                        pipes.push(PipeDef { name: n, capacity, socket });
                    }
                    "mutex" => mutexes.push(n),
                    "cond" => conds.push(n),
                    _ => {
                        let parties =
                            p.nonneg(p.require(t, "parties", item.span().start, &f)?, &join(&f, "parties"))?;
                        if parties == 0 {
                            return Err(p.err(item.span().start, &join(&f, "parties"), "parties must be > 0"));
                        }
                        barriers.push(BarrierDef { name: n, parties });
                    }
                }
            }
        }
    }

    let futexes = p.futexes(root)?;
    let mut groups = p.task_groups(root)?;

    // Tasks: collect names first so `fork` can name a template defined further down.
    let tasks = match p.get(root, "task") {
        Some(v) => match v.get_ref() {
            DeValue::Array(a) => a.iter().collect::<Vec<_>>(),
            _ => return Err(p.err(v.span().start, "task", "expected `[[task]]` tables")),
        },
        None => return Err(p.err(0, "task", "a workload needs at least one `[[task]]`")),
    };
    for (i, tv) in tasks.iter().enumerate() {
        let f = format!("task[{i}]");
        let t = p.table(tv, &f)?;
        let n = p.string(p.require(t, "name", tv.span().start, &f)?, &join(&f, "name"))?;
        if p.task_names.contains(&n) {
            return Err(p.err(tv.span().start, &join(&f, "name"), format!("two tasks are named `{n}`")));
        }
        p.task_names.push(n);
    }
    let mut templates = Vec::new();
    let mut total = 0u64;
    for (i, tv) in tasks.iter().enumerate() {
        let f = format!("task[{i}]");
        let t = p.table(tv, &f)?;
        p.check_keys(
            t,
            &[
                "name",
                "count",
                "template",
                "nice",
                "policy",
                "rt_priority",
                "runtime",
                "deadline",
                "period",
                "affinity",
                "start",
                "group",
                "session",
                "slice",
                "process",
                "kthread",
                "per_cpu",
                "program",
                "vip",
            ],
            &f,
        )?;
        let template = match p.get(t, "template") {
            Some(v) => v
                .get_ref()
                .as_bool()
                .ok_or_else(|| p.err(v.span().start, &join(&f, "template"), "expected true or false"))?,
            None => false,
        };
        let process = p.flag(t, "process", &f)?;
        let kthread = p.flag(t, "kthread", &f)?;
        let per_cpu = p.flag(t, "per_cpu", &f)?;
        let vip = p.flag(t, "vip", &f)?;
        let count = match p.get(t, "count") {
            Some(c) if per_cpu => {
                return Err(p.err(c.span().start, &join(&f, "count"), "a per_cpu task has one instance per CPU"))
            }
            Some(c) => p.nonneg(c, &join(&f, "count"))?,
            None if per_cpu => p.nr_cpus as u64,
            None => u64::from(!template),
        };
        if per_cpu && (template || p.get(t, "affinity").is_some()) {
            return Err(p.err(
                tv.span().start,
                &join(&f, "per_cpu"),
                "a per_cpu task is started bound to each CPU: no `template`, no `affinity`",
            ));
        }
        if template && count > 0 && p.get(t, "count").is_some() {
            return Err(p.err(tv.span().start, &join(&f, "count"), "a template is only forked; it has no count"));
        }
        total = total.saturating_add(count);
        if total > MAX_TASKS {
            return Err(p.err(tv.span().start, &join(&f, "count"), format!("more than {MAX_TASKS} tasks in all")));
        }
        let nice = match p.get(t, "nice") {
            Some(v) => {
                let n = p.int(v, &join(&f, "nice"))?;
                check_nice(n).map_err(|m| p.err(v.span().start, &join(&f, "nice"), m))?;
                n as i32
            }
            None => 0,
        };
        let (policy, policy_at) = match p.get(t, "policy") {
            Some(v) => (p.policy(t, v, &f, &join(&f, "policy"))?, v.span().start),
            None => {
                p.no_policy_params(t, &f)?;
                (Policy::Normal, tv.span().start)
            }
        };
        let affinity = p.get(t, "affinity").map(|v| p.cpuset(v, &join(&f, "affinity"))).transpose()?;
        let start = p.get(t, "start").map(|v| p.duration(v, &join(&f, "start"))).transpose()?.unwrap_or(Ns(0));
        let group = p.get(t, "group").map(|v| p.group_ref(v, &join(&f, "group"), &groups)).transpose()?;
        let session = p.get(t, "session").map(|v| p.session_ref(v, &join(&f, "session"), &mut groups)).transpose()?;
        let slice = p.get(t, "slice").map(|v| p.slice(v, &join(&f, "slice"))).transpose()?.flatten();
        let body = p.program(p.require(t, "program", tv.span().start, &f)?, &join(&f, "program"))?;
        let instance_dependent = mentions_n(&body);
        templates.push(TaskTemplate {
            name: p.task_names[i].clone(),
            count,
            template,
            nice,
            policy,
            policy_at,
            affinity,
            start,
            group,
            session,
            slice,
            process,
            kthread,
            per_cpu,
            vip,
            body,
            instance_dependent,
        });
    }
    let daemons = p.daemons(root, &p.task_names)?;
    total = total.saturating_add(daemons.iter().map(|d| d.count).sum());
    if total > MAX_TASKS {
        return Err(p.err(0, "daemon", format!("more than {MAX_TASKS} tasks in all")));
    }
    templates.extend(daemons);
    if total == 0 {
        return Err(p.err(0, "task", "no task is started: every `[[task]]` is a template"));
    }

    // `[[change]]`: set the affinity and/or nice of every live task of a template at a
    // time, from outside the tasks (an administrator's `taskset`/`renice`).
    let mut changes = Vec::new();
    if let Some(v) = p.get(root, "change") {
        let DeValue::Array(items) = v.get_ref() else {
            return Err(p.err(v.span().start, "change", "expected `[[change]]` tables"));
        };
        for (i, item) in items.iter().enumerate() {
            let f = format!("change[{i}]");
            let t = p.table(item, &f)?;
            p.check_keys(t, &["at", "tasks", "set_affinity", "set_nice"], &f)?;
            let at = p.duration(p.require(t, "at", item.span().start, &f)?, &join(&f, "at"))?;
            let tv = p.require(t, "tasks", item.span().start, &f)?;
            let tname = p.string(tv, &join(&f, "tasks"))?;
            let Some(template) = templates.iter().position(|x: &TaskTemplate| x.name == tname) else {
                return Err(p.err(tv.span().start, &join(&f, "tasks"), format!("no task named `{tname}`")));
            };
            let affinity = p.get(t, "set_affinity").map(|v| p.cpuset(v, &join(&f, "set_affinity"))).transpose()?;
            let nice = match p.get(t, "set_nice") {
                Some(v) => {
                    let n = p.int(v, &join(&f, "set_nice"))?;
                    check_nice(n).map_err(|m| p.err(v.span().start, &join(&f, "set_nice"), m))?;
                    Some(n as i32)
                }
                None => None,
            };
            if affinity.is_none() && nice.is_none() {
                return Err(p.err(item.span().start, &f, "a change sets `set_affinity`, `set_nice` or both"));
            }
            changes.push(Change { at, template, affinity, nice });
        }
    }

    let mut wl = Workload {
        names: crate::NameIndex::default(),
        spans: p.spans.take(),
        timers: p.timers.take(),
        notes: Vec::new(),
        origin: None,
        schedulers,
        changes,
        groups,
        file: file.to_string(),
        text: text.to_string(),
        line_starts: schedlab_sim::line_starts(text),
        name,
        description,
        duration,
        machine,
        params: p.params,
        pipes,
        mutexes,
        conds,
        barriers,
        futexes,
        templates,
    };
    wl.names = crate::NameIndex::of_workload(&wl);
    // Lower every program once now, so that undefined objects are reported before the run,
    // and bound what the started tasks' programs hold in all (instances of a template that
    // does not mention `n` share one program).
    let instances = |tpl: &TaskTemplate| if tpl.instance_dependent { tpl.count.max(1) } else { 1 };
    let mut held = 0u64;
    for (t, tpl) in wl.templates.iter().enumerate() {
        for n in 0..instances(tpl) {
            held += crate::lower::size(&wl, t, n)?;
            if held > MAX_TOTAL_OPS {
                return Err(p_err_total(&wl, tasks.get(t).map_or(0, |v| v.span().start), t));
            }
        }
    }
    for (t, tpl) in wl.templates.iter().enumerate() {
        for n in 0..instances(tpl) {
            wl.program(t, n)?;
        }
    }
    Ok(wl)
}
