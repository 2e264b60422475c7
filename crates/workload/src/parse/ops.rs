//! A program's operations: a bare string (`"yield"`, `"wait"`, `"exit"`) or a table with
//! one verb and the keys that go with it, parsed by the verb's family: CPU work and the
//! bare verbs, loops, `fork`, pipes, the futex-based synchronisation objects, spans,
//! timers, the `set_*` syscalls on the task itself (`poll` is in `poll_mark`, the `futex_*`
//! verbs in `futex`).

use super::futex::FUTEX_VERBS;
use super::values::POLICY_PARAMS;
use super::{check_nice, join, AstOp, DeValue, IntSrc, Node, P, R, V};
use toml::de::DeTable;

/// Every verb, in the order the "needs one of" error lists them.
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

/// The keys an operation of `verb` accepts besides the verb.
fn extra_keys(verb: &str) -> &'static [&'static str] {
    match verb {
        "loop" | "for" => &["do", "count"],
        "poll" => &["each", "count", "do"],
        "barrier" => &["spin_max"],
        "mark_begin" | "mark_end" => &["id"],
        "fork" => &["count"],
        "send" => &["bytes", "current_cpu"],
        "recv" => &["bytes"],
        "cond_wait" => &["mutex"],
        "timer" => &["ref", "mode", "shared"],
        "set_policy" => POLICY_PARAMS,
        "run" => &["working_set", "mem_intensity"],
        v => FUTEX_VERBS.iter().find(|(n, _)| *n == v).map_or(&[], |(_, e)| *e),
    }
}

impl<'a> P<'a> {
    /// One operation at `field` (`task[0].program[3]`).
    pub(super) fn op(&self, v: &V<'a>, field: &str) -> R<Node> {
        let at = v.span().start;
        let op = match v.get_ref() {
            DeValue::String(s) => self.bare_op(s, at, field)?,
            _ => {
                let t = self.table(v, field)?;
                let verb = self.verb(t, at, field)?;
                let mut allowed = vec![verb];
                allowed.extend_from_slice(extra_keys(verb));
                self.check_keys(t, &allowed, field)?;
                let val = self.get(t, verb).expect("verb present");
                self.verb_op(verb, t, val, at, field)?
            }
        };
        Ok(Node { op, offset: at, path: field.to_string() })
    }

    /// `"yield"`, `"wait"` or `"exit"`.
    fn bare_op(&self, s: &str, at: usize, field: &str) -> R<AstOp> {
        match s {
            "yield" => Ok(AstOp::Yield),
            "wait" => Ok(AstOp::Wait),
            "exit" => Ok(AstOp::Exit),
            other => Err(self.err(
                at,
                field,
                format!("unknown operation `{other}`; bare strings may be yield, wait or exit"),
            )),
        }
    }

    /// The one verb among `t`'s keys.
    fn verb(&self, t: &DeTable<'a>, at: usize, field: &str) -> R<&'static str> {
        let mut verbs =
            t.iter().filter_map(|(k, _)| VERBS.iter().find(|v| **v == k.get_ref().as_ref()).map(|v| (k, *v)));
        match (verbs.next(), verbs.next()) {
            (Some((_, one)), None) => Ok(one),
            (None, _) => Err(self.err(at, field, format!("an operation needs one of: {}", VERBS.join(", ")))),
            (Some(_), Some((second, _))) => {
                Err(self.err(second.span().start, field, "an operation may have only one verb"))
            }
        }
    }

    /// The operation of `verb = val`, with the rest of its table `t`, by family.
    fn verb_op(&self, verb: &str, t: &DeTable<'a>, val: &V<'a>, at: usize, field: &str) -> R<AstOp> {
        let f = join(field, verb);
        match verb {
            "run" => self.run_op(t, val, field),
            "sleep" | "spin" | "yield" | "wait" | "exit" => self.work_op(verb, val, &f),
            "loop" => self.loop_op(t, val, at, field),
            "for" => self.for_op(t, val, at, field),
            "fork" => self.fork_op(t, val, field),
            "send" | "recv" => self.pipe_op(verb, t, val, at, field),
            "lock" | "unlock" | "cond_wait" | "signal" | "broadcast" | "barrier" => {
                self.sync_op(verb, t, val, at, field)
            }
            "poll" => self.poll(t, val, at, field),
            "mark_begin" | "mark_end" => self.mark_op(verb, t, val, field),
            "timer" => self.timer(t, val, field),
            "set_nice" | "set_affinity" | "set_slice" | "set_policy" => self.set_op(verb, t, val, field),
            _ => self.futex_op(verb, val, t, at, field),
        }
    }

    /// `{ run = D }`, optionally with its own `working_set` and `mem_intensity` for the
    /// duration of this run (a phase that touches other memory).
    fn run_op(&self, t: &DeTable<'a>, val: &V<'a>, field: &str) -> R<AstOp> {
        let run = self.dist(val, &join(field, "run"))?;
        let working_set = self.get(t, "working_set").map(|v| self.bytes(v, &join(field, "working_set"))).transpose()?;
        let intensity =
            self.get(t, "mem_intensity").map(|v| self.permille(v, &join(field, "mem_intensity"))).transpose()?;
        if working_set.is_none() && intensity.is_none() {
            return Ok(AstOp::Run(run));
        }
        Ok(AstOp::RunMem { run, working_set, intensity })
    }

    /// `run`, `sleep`, `spin` (a duration or a distribution), and `yield`/`wait`/`exit`
    /// written as tables (`{ yield = true }`).
    fn work_op(&self, verb: &str, val: &V<'a>, f: &str) -> R<AstOp> {
        Ok(match verb {
            "run" => AstOp::Run(self.dist(val, f)?),
            "sleep" => AstOp::Sleep(self.dist(val, f)?),
            "spin" => AstOp::Spin(self.dist(val, f)?),
            _ => {
                if val.get_ref().as_bool() != Some(true) {
                    return Err(self.err(val.span().start, f, "write `true` (or use the bare string form)"));
                }
                match verb {
                    "yield" => AstOp::Yield,
                    "wait" => AstOp::Wait,
                    _ => AstOp::Exit,
                }
            }
        })
    }

    /// `{ loop = N | "forever", do = [ … ] }`.
    fn loop_op(&self, t: &DeTable<'a>, val: &V<'a>, at: usize, field: &str) -> R<AstOp> {
        let f = join(field, "loop");
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
        Ok(AstOp::Loop { count, body })
    }

    /// `{ for = "r", count = N, do = [ … ] }`: the body unrolled with `r` bound.
    fn for_op(&self, t: &DeTable<'a>, val: &V<'a>, at: usize, field: &str) -> R<AstOp> {
        let f = join(field, "for");
        let var = self.string(val, &f)?;
        if !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || var.is_empty() {
            return Err(self.err(val.span().start, &f, "a loop variable is a plain name such as \"r\""));
        }
        let count = self.int_src(self.require(t, "count", at, field)?, &join(field, "count"))?;
        let body = self.body(t, at, field)?;
        Ok(AstOp::For { var, count, body })
    }

    /// `{ fork = "template", count = N }`: the template may be defined anywhere in the file.
    fn fork_op(&self, t: &DeTable<'a>, val: &V<'a>, field: &str) -> R<AstOp> {
        let f = join(field, "fork");
        let tname = self.string(val, &f)?;
        let template = self
            .task_index
            .get(&tname)
            .copied()
            .ok_or_else(|| self.err(val.span().start, &f, format!("no task named `{tname}` to fork")))?;
        let count = match self.get(t, "count") {
            Some(c) => self.int_src(c, &join(field, "count"))?,
            None => IntSrc::Const(1),
        };
        Ok(AstOp::Fork { template, count })
    }

    /// `{ send = "p", bytes = N, current_cpu = bool }` and `{ recv = "p", bytes = N }`.
    fn pipe_op(&self, verb: &str, t: &DeTable<'a>, val: &V<'a>, at: usize, field: &str) -> R<AstOp> {
        let pipe = self.string(val, &join(field, verb))?;
        let bytes = self.int_src(self.require(t, "bytes", at, field)?, &join(field, "bytes"))?;
        if verb == "recv" {
            return Ok(AstOp::Recv { pipe, bytes });
        }
        let current_cpu = match self.get(t, "current_cpu") {
            Some(v) => v
                .get_ref()
                .as_bool()
                .ok_or_else(|| self.err(v.span().start, &join(field, "current_cpu"), "expected true or false"))?,
            None => false,
        };
        Ok(AstOp::Send { pipe, bytes, current_cpu })
    }

    /// The futex-based objects: mutexes, condition variables, barriers (with `spin_max`,
    /// libgomp's spinning barrier).
    fn sync_op(&self, verb: &str, t: &DeTable<'a>, val: &V<'a>, at: usize, field: &str) -> R<AstOp> {
        let f = join(field, verb);
        Ok(match verb {
            "lock" => AstOp::Lock(self.string(val, &f)?),
            "unlock" => AstOp::Unlock(self.string(val, &f)?),
            "cond_wait" => {
                let cond = self.string(val, &f)?;
                let mutex = self.string(self.require(t, "mutex", at, field)?, &join(field, "mutex"))?;
                AstOp::CondWait { cond, mutex }
            }
            "signal" => AstOp::Signal(self.string(val, &f)?),
            "broadcast" => AstOp::Broadcast(self.string(val, &f)?),
            _ => match self.get(t, "spin_max") {
                None => AstOp::Barrier(self.string(val, &f)?),
                Some(sv) => {
                    let spin = self.duration(sv, &join(field, "spin_max"))?;
                    AstOp::SpinBarrier { barrier: self.string(val, &f)?, spin }
                }
            },
        })
    }

    /// `{ mark_begin = "span", id = N }` and `mark_end`.
    fn mark_op(&self, verb: &str, t: &DeTable<'a>, val: &V<'a>, field: &str) -> R<AstOp> {
        let span = self.span(val, &join(field, verb))?;
        let id = match self.get(t, "id") {
            Some(v) => self.int_src(v, &join(field, "id"))?,
            None => IntSrc::Const(0),
        };
        Ok(AstOp::Mark { begin: verb == "mark_begin", span, id })
    }

    /// `set_nice`, `set_affinity`, `set_slice` and `set_policy`: syscalls on the task itself.
    fn set_op(&self, verb: &str, t: &DeTable<'a>, val: &V<'a>, field: &str) -> R<AstOp> {
        let f = join(field, verb);
        Ok(match verb {
            "set_nice" => {
                // A constant is checked now, an expression once lowered with its bindings.
                let n = self.int_src(val, &f)?;
                if let IntSrc::Const(c) = n {
                    check_nice(c).map_err(|m| self.err(val.span().start, &f, m))?;
                }
                AstOp::SetNice(n)
            }
            "set_affinity" => AstOp::SetAffinity(self.cpuset(val, &f)?),
            "set_slice" => AstOp::SetSlice(self.slice(val, &f)?),
            _ => AstOp::SetPolicy(self.policy(t, val, field, &f)?),
        })
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
        let id = *self.timer_index.borrow_mut().entry((name.clone(), shared, absolute)).or_insert_with(|| {
            timers.push(crate::TimerDef { name, shared, absolute });
            timers.len() - 1
        });
        Ok(AstOp::Timer { period, named: Some(id) })
    }
}
