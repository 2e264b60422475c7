//! AST → flat per-task programs with resolved object indices.

use crate::expr::{self, Env};
use crate::parse::{check_nice, AstOp, IntSrc, Node};
use crate::Workload;
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
    /// Write `bytes` to a pipe, blocking while it is full; `current_cpu`: wake the reader
    /// with `WF_CURRENT_CPU` (simulation only).
    Send {
        pipe: usize,
        bytes: u64,
        current_cpu: bool,
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
    /// libgomp's barrier (`GOMP_SPINCOUNT`): spin up to `spin` of CPU time for the last
    /// party, then `futex_wait`.
    SpinBarrier {
        barrier: usize,
        spin: Ns,
    },
    /// `poll` on `Program::polls[set]`'s pipes; when one is readable, continue at its arm.
    Poll {
        set: usize,
    },
    /// Continue at this op (the end of a poll arm).
    Jump(usize),
    /// Open span `span` (an index into `Workload::spans`) with key `id`.
    MarkBegin {
        span: usize,
        id: u64,
    },
    /// Close it: its latency is the time since the matching `MarkBegin`.
    MarkEnd {
        span: usize,
        id: u64,
    },
    /// rt-app style periodic timer: sleep until the next absolute multiple of the period,
    /// counted from the first time this op runs; no sleep when already late. `named`: one
    /// of rt-app's named timers (`rt-app.c:run_event`, `rtapp_timer`), counted from the
    /// task's start (a shared one: from the start of the first task using it), advancing
    /// by the period of each op that names it; on an overrun a relative timer restarts
    /// from now, an absolute one keeps its grid.
    Timer {
        period: Ns,
        named: Option<NamedTimer>,
    },
    SetNice(i32),
    SetAffinity(CpuSet),
    /// `sched_setattr(sched_runtime)`: a custom slice, or `None` for the base slice.
    SetSlice(Option<Ns>),
    /// `sched_setattr(policy)`: change the task's policy; `at` is the byte offset of the
    /// op in the file ([`crate::Workload::error_at`]) for an admission refusal.
    SetPolicy {
        policy: crate::Policy,
        at: usize,
    },
    /// An operation on `[[futex]]` words.
    Futex(crate::FutexOp),
    /// The task's working set and memory intensity from here on: a `run` with its own
    /// `working_set` or `mem_intensity` lowers to this, the run, and this again with the
    /// task's own values (simulation only; a host run skips it).
    Memory(MemPhase),
}

/// A task's memory behaviour for the operations that follow an [`Op::Memory`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemPhase {
    pub working_set: u64,
    /// Permille of its run time stalled on DRAM at local latency.
    pub intensity: u32,
}

/// An rt-app timer a `timer` op names (`ref`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NamedTimer {
    /// Index into `Workload::timers`.
    pub id: usize,
    /// One timer for the whole workload (else one per task).
    pub shared: bool,
    /// After an overrun the next period counts from now (else from the missed expiry).
    pub relative: bool,
}

/// The pipes of a `poll` and, for each, where its arm starts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PollSet {
    pub pipes: Vec<usize>,
    pub arms: Vec<usize>,
}

/// Most pipes one `poll` watches (the default `RLIMIT_NOFILE` soft limit, 1024 fds).
pub const MAX_POLL_PIPES: u64 = 1024;

/// A task's program: operations and, for each, where it was written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Program {
    pub ops: Vec<Op>,
    /// `(line, field path)` of each op, for explanations.
    pub origin: Vec<(usize, String)>,
    /// The pipe sets of the program's `poll`s (`Op::Poll::set`).
    pub polls: Vec<PollSet>,
}

struct L<'a> {
    wl: &'a Workload,
    env: Env<'a>,
    prog: Program,
    /// The task's own memory behaviour, restored after a `run` that overrides it.
    mem: MemPhase,
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
    /// Iterations of a `for` (at most [`MAX_FOR_ITERATIONS`]).
    fn for_count(&self, node: &Node, count: &IntSrc) -> Result<u64, SourceError> {
        let n = self.count(node, count)?;
        if n > MAX_FOR_ITERATIONS {
            return Err(self.err(
                node,
                format!("`for` unrolls its body; {n} iterations is too many (max {MAX_FOR_ITERATIONS}), use `loop`"),
            ));
        }
        Ok(n)
    }
    /// How many operations `nodes` lower to under the current bindings, counted without
    /// expanding anything: a `for` whose body's size does not depend on its variable costs
    /// one multiplication, one whose body does is counted iteration by iteration (each
    /// iteration counts against `work`, so counting stays as bounded as the program). Errs at
    /// the operation that takes the program past [`MAX_PROGRAM_OPS`].
    fn size(&mut self, nodes: &[Node], work: &mut u64) -> Result<u64, SourceError> {
        let mut total = 0u64;
        for node in nodes {
            let ops = match &node.op {
                AstOp::Loop { body, .. } => self.size(body, work)?.saturating_add(2),
                AstOp::Poll { var, count, body, .. } => {
                    // One `Poll`, then each arm and its `Jump`.
                    let n = self.poll_count(node, count)?;
                    self.size_each(node, var, n, body, work)?.saturating_add(n + 1)
                }
                AstOp::For { var, count, body } => {
                    let n = self.for_count(node, count)?;
                    if sizes_depend_on(body, var) {
                        self.size_each(node, var, n, body, work)?
                    } else {
                        n.saturating_mul(self.size(body, work)?)
                    }
                }
                AstOp::RunMem { .. } => 3,
                _ => 1,
            };
            total = total.saturating_add(ops);
            if total > MAX_PROGRAM_OPS {
                return Err(self.err(node, format!("the program expands to more than {MAX_PROGRAM_OPS} operations")));
            }
        }
        Ok(total)
    }
    /// The size of `n` iterations of a `for` body that depends on `var`, one by one.
    fn size_each(&mut self, node: &Node, var: &str, n: u64, body: &[Node], work: &mut u64) -> Result<u64, SourceError> {
        let saved = self.env.binding(var);
        let mut total = 0u64;
        for k in 0..n {
            *work += 1;
            if *work > MAX_PROGRAM_OPS || total > MAX_PROGRAM_OPS {
                break;
            }
            self.env.bind(var, k as i64);
            let s = self.size(body, work);
            total = total.saturating_add(s?);
        }
        self.env.restore(var, saved);
        if *work > MAX_PROGRAM_OPS {
            return Err(self.err(node, format!("nested `for`s take more than {MAX_PROGRAM_OPS} iterations to expand")));
        }
        Ok(total)
    }
    /// The index of the object of `kind` that `template` names once expanded, through the
    /// workload's name index: O(log n) per name, so starting a task of a workload with
    /// thousands of pipes does not compare its names with every pipe's.
    fn lookup(&self, node: &Node, kind: &str, template: &str) -> Result<usize, SourceError> {
        let name = expr::expand(template, &self.env).map_err(|m| self.err(node, m))?;
        if let Some(&i) = self.wl.names.of(kind).get(name.as_str()) {
            return Ok(i);
        }
        let names = self.wl.declared(kind);
        let mut hint = names.iter().take(5).copied().collect::<Vec<_>>().join(", ");
        if names.len() > 5 {
            hint.push_str(", …");
        }
        let hint = if names.is_empty() {
            format!("none is declared; add a `[[{kind}]]`")
        } else {
            format!("declared: {hint}")
        };
        Err(self.err(node, format!("undefined {kind} `{name}` ({hint})")))
    }
    fn push(&mut self, node: &Node, op: Op) {
        let line = schedlab_sim::line_of(&self.wl.line_starts, node.offset);
        self.prog.ops.push(op);
        self.prog.origin.push((line, node.path.clone()));
    }
    fn nodes(&mut self, nodes: &[Node]) -> Result<(), SourceError> {
        for node in nodes {
            match &node.op {
                AstOp::Loop { count, body } => {
                    let count = count.as_ref().map(|c| self.count(node, c)).transpose()?;
                    let start = self.prog.ops.len();
                    self.push(node, Op::Loop { count, end: 0 });
                    self.nodes(body)?;
                    let end = self.prog.ops.len();
                    self.push(node, Op::EndLoop { start });
                    self.prog.ops[start] = Op::Loop { count, end };
                }
                AstOp::For { var, count, body } => {
                    let n = self.for_count(node, count)?;
                    let saved = self.env.binding(var);
                    for k in 0..n {
                        self.env.bind(var, k as i64);
                        self.nodes(body)?;
                    }
                    self.env.restore(var, saved);
                }
                AstOp::Poll { pipe, var, count, body } => self.poll(node, pipe, var, count, body)?,
                AstOp::RunMem { run, working_set, intensity } => {
                    let own = self.mem;
                    let phase = MemPhase {
                        working_set: working_set.unwrap_or(own.working_set),
                        intensity: intensity.unwrap_or(own.intensity),
                    };
                    self.push(node, Op::Memory(phase));
                    self.push(node, Op::Run(run.clone()));
                    self.push(node, Op::Memory(own));
                }
                _ => {
                    let op = self.op(node)?;
                    self.push(node, op);
                }
            }
        }
        Ok(())
    }
    /// The one operation of a node that is no loop and no `poll`, its names resolved and
    /// its expressions evaluated under the current bindings.
    fn op(&self, node: &Node) -> Result<Op, SourceError> {
        Ok(match &node.op {
            AstOp::Run(d) => Op::Run(d.clone()),
            AstOp::Sleep(d) => Op::Sleep(d.clone()),
            AstOp::Spin(d) => Op::Spin(d.clone()),
            AstOp::Yield => Op::Yield,
            AstOp::Wait => Op::Wait,
            AstOp::Exit => Op::Exit,
            AstOp::Timer { period, named } => Op::Timer {
                period: *period,
                named: named.map(|id| {
                    let d = &self.wl.timers[id];
                    NamedTimer { id, shared: d.shared, relative: !d.absolute }
                }),
            },
            AstOp::SetAffinity(s) => Op::SetAffinity(s.clone()),
            AstOp::SetSlice(s) => Op::SetSlice(*s),
            AstOp::SetPolicy(p) => Op::SetPolicy { policy: *p, at: node.offset },
            AstOp::SetNice(n) => {
                let n = self.int(node, n)?;
                check_nice(n).map_err(|m| self.err(node, m))?;
                Op::SetNice(n as i32)
            }
            AstOp::Fork { template, count } => Op::Fork { template: *template, count: self.count(node, count)? },
            AstOp::Send { pipe, bytes, current_cpu } => Op::Send {
                pipe: self.lookup(node, "pipe", pipe)?,
                bytes: self.count(node, bytes)?,
                current_cpu: *current_cpu,
            },
            AstOp::Recv { pipe, bytes } => {
                Op::Recv { pipe: self.lookup(node, "pipe", pipe)?, bytes: self.count(node, bytes)? }
            }
            AstOp::Lock(m) => Op::Lock(self.lookup(node, "mutex", m)?),
            AstOp::Unlock(m) => Op::Unlock(self.lookup(node, "mutex", m)?),
            AstOp::CondWait { cond, mutex } => {
                Op::CondWait { cond: self.lookup(node, "cond", cond)?, mutex: self.lookup(node, "mutex", mutex)? }
            }
            AstOp::Signal(c) => Op::Signal(self.lookup(node, "cond", c)?),
            AstOp::Broadcast(c) => Op::Broadcast(self.lookup(node, "cond", c)?),
            AstOp::Barrier(b) => Op::Barrier(self.lookup(node, "barrier", b)?),
            AstOp::SpinBarrier { barrier, spin } => {
                Op::SpinBarrier { barrier: self.lookup(node, "barrier", barrier)?, spin: *spin }
            }
            AstOp::Mark { begin, span, id } => {
                let (span, id) = (*span, self.count(node, id)?);
                if *begin {
                    Op::MarkBegin { span, id }
                } else {
                    Op::MarkEnd { span, id }
                }
            }
            AstOp::Futex(f) => Op::Futex(
                f.map(|w| self.lookup(node, "futex", w), |v| v.resolve(&self.env).map_err(|m| self.err(node, m)))?,
            ),
            AstOp::Loop { .. } | AstOp::For { .. } | AstOp::Poll { .. } | AstOp::RunMem { .. } => {
                unreachable!("`nodes` lowers loops, polls and memory phases itself")
            }
        })
    }
}

impl L<'_> {
    /// Pipes a `poll` watches: 1..=[`MAX_POLL_PIPES`].
    fn poll_count(&self, node: &Node, count: &IntSrc) -> Result<u64, SourceError> {
        let n = self.count(node, count)?;
        if n == 0 || n > MAX_POLL_PIPES {
            return Err(self.err(node, format!("poll watches 1..={MAX_POLL_PIPES} pipes, not {n}")));
        }
        Ok(n)
    }
    /// `Poll`, then per pipe its arm (the body with `var` bound to the pipe's index) and a
    /// `Jump` past the last arm.
    fn poll(&mut self, node: &Node, pipe: &str, var: &str, count: &IntSrc, body: &[Node]) -> Result<(), SourceError> {
        let n = self.poll_count(node, count)?;
        let saved = self.env.binding(var);
        let mut set = PollSet::default();
        for k in 0..n {
            self.env.bind(var, k as i64);
            set.pipes.push(self.lookup(node, "pipe", pipe)?);
        }
        // The set's slot is taken before the arms: a poll inside an arm takes the next one.
        let idx = self.prog.polls.len();
        self.prog.polls.push(PollSet::default());
        self.push(node, Op::Poll { set: idx });
        let mut jumps = Vec::with_capacity(n as usize);
        for k in 0..n {
            self.env.bind(var, k as i64);
            set.arms.push(self.prog.ops.len());
            self.nodes(body)?;
            jumps.push(self.prog.ops.len());
            self.push(node, Op::Jump(0));
        }
        let end = self.prog.ops.len();
        for j in jumps {
            self.prog.ops[j] = Op::Jump(end);
        }
        self.prog.polls[idx] = set;
        self.env.restore(var, saved);
        Ok(())
    }
}

/// Whether the size of `nodes` depends on variable `var`: some `for` count inside mentions it.
fn sizes_depend_on(nodes: &[Node], var: &str) -> bool {
    nodes.iter().any(|node| match &node.op {
        AstOp::Loop { body, .. } => sizes_depend_on(body, var),
        AstOp::Poll { count, body, .. } => {
            matches!(count, IntSrc::Expr(e) if expr::variables(e).iter().any(|v| v == var))
                || sizes_depend_on(body, var)
        }
        AstOp::For { count, body, .. } => {
            matches!(count, IntSrc::Expr(e) if expr::variables(e).iter().any(|v| v == var))
                || sizes_depend_on(body, var)
        }
        _ => false,
    })
}

/// Most iterations one `for` unrolls.
pub const MAX_FOR_ITERATIONS: u64 = 100_000;
/// Most operations one task's program may expand to (`for` unrolls its body; `loop` costs
/// two). Checked before anything is expanded: a `for` of 10 000 inside a `for` of 10 000
/// once expanded to 7 GB.
pub const MAX_PROGRAM_OPS: u64 = 1_000_000;

/// The bindings of instance `n`'s program: integer parameters and `n`.
fn instance_env(wl: &Workload, n: u64) -> Env<'_> {
    let mut env = Env::new(&wl.int_params);
    env.bind("n", n as i64);
    env
}

/// How many operations the program of instance `n` of template `t` has, without lowering it.
pub(crate) fn size(wl: &Workload, t: usize, n: u64) -> Result<u64, SourceError> {
    let mut l = L { wl, env: instance_env(wl, n), prog: Program::default(), mem: own_phase(wl, t) };
    l.size(&wl.templates[t].body, &mut 0)
}

/// Template `t`'s own memory behaviour.
fn own_phase(wl: &Workload, t: usize) -> MemPhase {
    let m = &wl.templates[t].memory;
    MemPhase { working_set: m.working_set, intensity: m.intensity }
}

pub(crate) fn lower(wl: &Workload, t: usize, n: u64) -> Result<Program, SourceError> {
    let mut l = L { wl, env: instance_env(wl, n), prog: Program::default(), mem: own_phase(wl, t) };
    let size = l.size(&wl.templates[t].body, &mut 0)?;
    l.prog.ops.reserve_exact(size as usize);
    l.prog.origin.reserve_exact(size as usize);
    l.nodes(&wl.templates[t].body)?;
    Ok(l.prog)
}

#[cfg(test)]
mod tests {
    use crate::parse_workload;

    /// The up-front size is exactly what lowering emits, for `for`s whose body size does
    /// and does not depend on the loop variable.
    #[test]
    fn size_counts_exactly_what_lowering_emits() {
        let text = "[[task]]\nname = \"t\"\nprogram = [ { run = \"1ms\" }, \
            { for = \"i\", count = 5, do = [ { for = \"j\", count = \"{i}\", do = [ { run = \"1us\" } ] }, \
            { loop = 3, do = [ \"yield\", { for = \"k\", count = 4, do = [ { sleep = \"1us\" } ] } ] } ] } ]\n";
        let wl = parse_workload("w.toml", text, &[], 2).unwrap();
        let size = super::size(&wl, 0, 0).unwrap();
        assert_eq!(size as usize, wl.program(0, 0).unwrap().ops.len());
        assert_eq!(size, 1 + (1 + 2 + 3 + 4) + 5 * (2 + 1 + 4));
    }
}
