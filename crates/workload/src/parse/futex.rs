//! `[[futex]]` words and the futex operations of programs (`docs/futex.md`).

use super::{join, AstOp, DeValue, IntSrc, P, R, V};
use crate::expr::{self, Env};
use crate::futex::{FutexDef, FutexOp, WakeCmp, WakeOpKind};
use toml::de::DeTable;

/// The futex verbs and the extra keys each accepts.
pub(super) const FUTEX_VERBS: &[(&str, &[&str])] = &[
    ("futex_set", &["value"]),
    ("futex_add", &["value"]),
    ("futex_wait", &["expected"]),
    ("futex_wake", &["count", "current_cpu"]),
    ("futex_swap", &["expected", "wake", "current_cpu", "direct", "split"]),
    ("futex_wake_op", &["count", "word2", "count2", "op", "oparg", "cmp", "cmparg"]),
    ("futex_requeue", &["to", "wake", "requeue", "expected"]),
    ("lock_pi", &[]),
    ("unlock_pi", &[]),
];

/// Most waiters one wake or requeue names (`INT_MAX`, what `"all"` means).
pub const FUTEX_ALL: u32 = i32::MAX as u32;

/// A futex operation's value or waiter count as written: a constant (checked when read) or
/// an expression of the instance index and loop variables, checked when the program is
/// lowered with them bound.
#[derive(Clone, Debug)]
pub(crate) enum FutexArg {
    /// A word's value (`value`, `expected`, `oparg`, `cmparg`).
    Word(IntSrc),
    /// A number of waiters (`count`, `count2`, `wake`, `requeue`).
    Waiters(IntSrc),
}

impl FutexArg {
    /// The argument's number under the bindings `env`.
    pub(crate) fn resolve(&self, env: &Env) -> Result<u32, String> {
        let eval = |src: &IntSrc| match src {
            IntSrc::Const(c) => Ok(*c),
            IntSrc::Expr(e) => expr::eval(e, env),
        };
        match self {
            FutexArg::Word(src) => word_value(eval(src)?),
            FutexArg::Waiters(src) => waiters(eval(src)?),
        }
    }
    /// The number or expression as written.
    pub(crate) fn src(&self) -> &IntSrc {
        match self {
            FutexArg::Word(s) | FutexArg::Waiters(s) => s,
        }
    }
}

/// A 32-bit futex value: −2³¹ … 2³² − 1 (a negative value is its two's complement).
fn word_value(i: i64) -> Result<u32, String> {
    if i < i64::from(i32::MIN) || i > i64::from(u32::MAX) {
        return Err(format!("{i} does not fit a 32-bit futex word"));
    }
    Ok(i as u32)
}

/// A waiter count: 0 … 2³¹ − 1 ([`FUTEX_ALL`]).
fn waiters(n: i64) -> Result<u32, String> {
    let n = u64::try_from(n).map_err(|_| format!("must be >= 0, found {n}"))?;
    u32::try_from(n)
        .ok()
        .filter(|&n| n <= FUTEX_ALL)
        .ok_or_else(|| format!("{n} waiters is more than the kernel takes (`\"all\"` = 2^31 - 1)"))
}

impl P<'_> {
    /// A 32-bit futex value known when the file is read (a `[[futex]]`'s initial value).
    fn word_value(&self, v: &V, field: &str) -> R<u32> {
        word_value(self.int(v, field)?).map_err(|m| self.err(v.span().start, field, m))
    }
    /// An operation's word value: a constant, checked now, or an expression.
    fn word_arg(&self, v: &V, field: &str) -> R<FutexArg> {
        let src = self.int_src(v, field)?;
        if let IntSrc::Const(i) = src {
            word_value(i).map_err(|m| self.err(v.span().start, field, m))?;
        }
        Ok(FutexArg::Word(src))
    }
    /// An operation's waiter count: `"all"`, a constant, checked now, or an expression.
    fn waiter_count(&self, v: &V, field: &str) -> R<FutexArg> {
        if let DeValue::String(s) = v.get_ref() {
            if s.as_ref() == "all" {
                return Ok(FutexArg::Waiters(IntSrc::Const(i64::from(FUTEX_ALL))));
            }
        }
        let src = self.int_src(v, field)?;
        if let IntSrc::Const(n) = src {
            waiters(n).map_err(|m| self.err(v.span().start, field, m))?;
        }
        Ok(FutexArg::Waiters(src))
    }
    fn named<T: Copy>(&self, v: &V, field: &str, names: &[(&str, T)]) -> R<T> {
        let s = self.string(v, field)?;
        names.iter().find(|(n, _)| *n == s).map(|(_, k)| *k).ok_or_else(|| {
            let all: Vec<&str> = names.iter().map(|(n, _)| *n).collect();
            self.err(v.span().start, field, format!("unknown `{s}`; expected one of {}", all.join(", ")))
        })
    }

    /// A futex operation `verb = val` with the rest of its table `t`.
    pub(super) fn futex_op(&self, verb: &str, val: &V, t: &DeTable, at: usize, field: &str) -> R<AstOp> {
        let f = join(field, verb);
        let word = self.string(val, &f)?;
        let req = |k: &str| self.require(t, k, at, field);
        let value = |k: &str| -> R<FutexArg> { self.word_arg(req(k)?, &join(field, k)) };
        let count = |k: &str, dflt: u32| -> R<FutexArg> {
            let c = self.get(t, k).map(|v| self.waiter_count(v, &join(field, k))).transpose()?;
            Ok(c.unwrap_or(FutexArg::Waiters(IntSrc::Const(i64::from(dflt)))))
        };
        let other = |k: &str| -> R<String> { self.string(req(k)?, &join(field, k)) };
        let op = match verb {
            "futex_set" => FutexOp::Set { word, value: value("value")? },
            "futex_add" => FutexOp::Add { word, value: value("value")? },
            "futex_wait" => FutexOp::Wait { word, expected: value("expected")? },
            "futex_wake" => {
                FutexOp::Wake { word, count: count("count", 1)?, current_cpu: self.flag(t, "current_cpu", field)? }
            }
            "futex_swap" => FutexOp::Swap {
                wait: word,
                expected: value("expected")?,
                wake: other("wake")?,
                current_cpu: self.flag(t, "current_cpu", field)?,
                direct: self.flag(t, "direct", field)?,
                split: self.flag(t, "split", field)?,
            },
            "futex_wake_op" => FutexOp::WakeOp {
                word,
                count: count("count", 1)?,
                word2: other("word2")?,
                count2: count("count2", 1)?,
                op: self.named(req("op")?, &join(field, "op"), WakeOpKind::NAMES)?,
                oparg: value("oparg")?,
                cmp: self.named(req("cmp")?, &join(field, "cmp"), WakeCmp::NAMES)?,
                cmparg: value("cmparg")?,
            },
            "futex_requeue" => FutexOp::CmpRequeue {
                word,
                to: other("to")?,
                wake: count("wake", 1)?,
                requeue: count("requeue", FUTEX_ALL)?,
                expected: value("expected")?,
            },
            "lock_pi" => FutexOp::LockPi(word),
            _ => FutexOp::UnlockPi(word),
        };
        Ok(AstOp::Futex(op))
    }

    /// `[[futex]]` tables: `name`, optional `count` (names `name.0` …) and `value` (initial).
    pub(super) fn futexes(&self, root: &DeTable) -> R<Vec<FutexDef>> {
        let mut out: Vec<FutexDef> = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        let Some(v) = self.get(root, "futex") else { return Ok(out) };
        let DeValue::Array(items) = v.get_ref() else {
            return Err(self.err(v.span().start, "futex", "expected `[[futex]]` tables"));
        };
        for (i, item) in items.iter().enumerate() {
            let f = format!("futex[{i}]");
            let t = self.table(item, &f)?;
            self.check_keys(t, &["name", "count", "value"], &f)?;
            let base = self.string(self.require(t, "name", item.span().start, &f)?, &join(&f, "name"))?;
            let init = self.get(t, "value").map(|v| self.word_value(v, &join(&f, "value"))).transpose()?.unwrap_or(0);
            let count = self.get(t, "count").map(|c| self.nonneg(c, &join(&f, "count"))).transpose()?;
            if count.unwrap_or(1) > crate::MAX_TASKS {
                return Err(self.err(
                    item.span().start,
                    &join(&f, "count"),
                    format!("more than {} words", crate::MAX_TASKS),
                ));
            }
            let names: Vec<String> = match count {
                Some(c) => (0..c).map(|k| format!("{base}.{k}")).collect(),
                None => vec![base],
            };
            for name in names {
                self.step()?;
                if !seen.insert(name.clone()) {
                    return Err(self.err(
                        item.span().start,
                        &join(&f, "name"),
                        format!("futex `{name}` is declared twice"),
                    ));
                }
                out.push(FutexDef { name, init });
            }
        }
        Ok(out)
    }
}
