//! AST → flat per-task programs with resolved object indices.

use crate::expr::{self, Env};
use crate::parse::{AstOp, IntSrc, Node};
use crate::{ParamValue, Workload};
use schedlab_machine::CpuSet;
use schedlab_sim::{Distribution, Ns, SourceError};

/// One operation of a lowered program. Loops are flattened into jumps.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// CPU work: this many nanoseconds of user-mode execution.
    Run(Distribution),
    /// `clock_nanosleep` for a relative duration.
    Sleep(Distribution),
    /// Busy-wait until this much wall time has passed since the op started.
    Spin(Distribution),
    /// `sched_yield`.
    Yield,
    /// Start of a loop; `count` `None` = forever; `end` = index of the matching `EndLoop`.
    Loop {
        count: Option<u64>,
        end: usize,
    },
    /// End of a loop body; jumps back to `start + 1` while iterations remain.
    EndLoop {
        start: usize,
    },
    /// `clone` `count` children running template `template`.
    Fork {
        template: usize,
        count: u64,
    },
    /// Wait until every child has exited (`wait4` loop).
    Wait,
    /// `exit`.
    Exit,
    /// Write `bytes` to a pipe, blocking while it is full.
    Send {
        pipe: usize,
        bytes: u64,
    },
    /// Read `bytes` from a pipe, blocking while it is empty.
    Recv {
        pipe: usize,
        bytes: u64,
    },
    /// Lock a user-space futex mutex (0/1/2 protocol).
    Lock(usize),
    Unlock(usize),
    /// `pthread_cond_wait(cond, mutex)`.
    CondWait {
        cond: usize,
        mutex: usize,
    },
    Signal(usize),
    Broadcast(usize),
    Barrier(usize),
    /// rt-app style periodic timer: sleep until the next absolute multiple of the period,
    /// counted from the first time this op runs.
    Timer {
        period: Ns,
    },
    SetNice(i32),
    SetAffinity(CpuSet),
    /// `sched_setattr(sched_runtime)`: a custom slice, or `None` for the base slice.
    SetSlice(Option<Ns>),
}

/// A task's program: operations and, for each, where it was written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Program {
    pub ops: Vec<Op>,
    /// `(line, field path)` of each op, for explanations.
    pub origin: Vec<(usize, String)>,
}

struct L<'a> {
    wl: &'a Workload,
    env: Env,
    prog: Program,
}

impl L<'_> {
    fn err(&self, node: &Node, msg: String) -> SourceError {
        SourceError::at(&self.wl.file, &self.wl.text, node.offset, &node.path, msg)
    }
    fn int(&self, node: &Node, i: &IntSrc) -> Result<i64, SourceError> {
        match i {
            IntSrc::Const(c) => Ok(*c),
            IntSrc::Expr(e) => expr::eval(e, &self.env).map_err(|m| self.err(node, m)),
        }
    }
    fn count(&self, node: &Node, i: &IntSrc) -> Result<u64, SourceError> {
        let v = self.int(node, i)?;
        u64::try_from(v).map_err(|_| self.err(node, format!("count evaluates to {v}, which is negative")))
    }
    fn lookup(&self, node: &Node, kind: &str, template: &str, names: &[&str]) -> Result<usize, SourceError> {
        let name = expr::expand(template, &self.env).map_err(|m| self.err(node, m))?;
        names.iter().position(|n| *n == name).ok_or_else(|| {
            let mut hint = names.iter().take(5).copied().collect::<Vec<_>>().join(", ");
            if names.len() > 5 {
                hint.push_str(", …");
            }
            let hint = if names.is_empty() {
                format!("none is declared; add a `[[{kind}]]`")
            } else {
                format!("declared: {hint}")
            };
            self.err(node, format!("undefined {kind} `{name}` ({hint})"))
        })
    }
    fn push(&mut self, node: &Node, op: Op) {
        let line = schedlab_sim::line_of(&self.wl.line_starts, node.offset);
        self.prog.ops.push(op);
        self.prog.origin.push((line, node.path.clone()));
    }
    fn nodes(&mut self, nodes: &[Node]) -> Result<(), SourceError> {
        let pipes: Vec<&str> = self.wl.pipes.iter().map(|p| p.name.as_str()).collect();
        let mutexes: Vec<&str> = self.wl.mutexes.iter().map(String::as_str).collect();
        let conds: Vec<&str> = self.wl.conds.iter().map(String::as_str).collect();
        let barriers: Vec<&str> = self.wl.barriers.iter().map(|b| b.name.as_str()).collect();
        for node in nodes {
            let op = match &node.op {
                AstOp::Run(d) => Op::Run(d.clone()),
                AstOp::Sleep(d) => Op::Sleep(d.clone()),
                AstOp::Spin(d) => Op::Spin(d.clone()),
                AstOp::Yield => Op::Yield,
                AstOp::Wait => Op::Wait,
                AstOp::Exit => Op::Exit,
                AstOp::Timer(p) => Op::Timer { period: *p },
                AstOp::SetAffinity(s) => Op::SetAffinity(s.clone()),
                AstOp::SetSlice(s) => Op::SetSlice(*s),
                AstOp::SetNice(n) => Op::SetNice(self.int(node, n)? as i32),
                AstOp::Loop { count, body } => {
                    let count = count.as_ref().map(|c| self.count(node, c)).transpose()?;
                    let start = self.prog.ops.len();
                    self.push(node, Op::Loop { count, end: 0 });
                    self.nodes(body)?;
                    let end = self.prog.ops.len();
                    self.push(node, Op::EndLoop { start });
                    self.prog.ops[start] = Op::Loop { count, end };
                    continue;
                }
                AstOp::For { var, count, body } => {
                    let n = self.count(node, count)?;
                    if n > 100_000 {
                        return Err(self.err(
                            node,
                            format!("`for` unrolls its body; {n} iterations is too many (max 100000), use `loop`"),
                        ));
                    }
                    let saved = self.env.get(var).copied();
                    for k in 0..n {
                        self.env.insert(var.clone(), k as i64);
                        self.nodes(body)?;
                    }
                    match saved {
                        Some(v) => self.env.insert(var.clone(), v),
                        None => self.env.remove(var),
                    };
                    continue;
                }
                AstOp::Fork { template, count } => Op::Fork { template: *template, count: self.count(node, count)? },
                AstOp::Send { pipe, bytes } => {
                    Op::Send { pipe: self.lookup(node, "pipe", pipe, &pipes)?, bytes: self.count(node, bytes)? }
                }
                AstOp::Recv { pipe, bytes } => {
                    Op::Recv { pipe: self.lookup(node, "pipe", pipe, &pipes)?, bytes: self.count(node, bytes)? }
                }
                AstOp::Lock(m) => Op::Lock(self.lookup(node, "mutex", m, &mutexes)?),
                AstOp::Unlock(m) => Op::Unlock(self.lookup(node, "mutex", m, &mutexes)?),
                AstOp::CondWait { cond, mutex } => Op::CondWait {
                    cond: self.lookup(node, "cond", cond, &conds)?,
                    mutex: self.lookup(node, "mutex", mutex, &mutexes)?,
                },
                AstOp::Signal(c) => Op::Signal(self.lookup(node, "cond", c, &conds)?),
                AstOp::Broadcast(c) => Op::Broadcast(self.lookup(node, "cond", c, &conds)?),
                AstOp::Barrier(b) => Op::Barrier(self.lookup(node, "barrier", b, &barriers)?),
            };
            self.push(node, op);
        }
        Ok(())
    }
}

pub(crate) fn lower(wl: &Workload, t: usize, n: u64) -> Result<Program, SourceError> {
    let mut env: Env = wl
        .params
        .iter()
        .filter_map(|(k, v)| match v {
            ParamValue::Int(i) => Some((k.clone(), *i)),
            ParamValue::Text(_) => None,
        })
        .collect();
    env.insert("n".into(), n as i64);
    let mut l = L { wl, env, prog: Program::default() };
    l.nodes(&wl.templates[t].body)?;
    Ok(l.prog)
}
