//! Explicit futex words and the operations on them (`docs/futex.md`).
//!
//! A `[[futex]]` declares a 32-bit user-space word; programs store to it, wait on it with an
//! expected value and wake its waiters, as `kernel/futex/waitwake.c` (v6.x) serves them.
//! `futex_swap`, wake on the current CPU and the direct switch are not upstream (proposals;
//! `WF_CURRENT_CPU` exists but futexes do not use it): the simulator models them, real runs
//! refuse them.

/// A `[[futex]]`: a named word with its initial value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FutexDef {
    pub name: String,
    pub init: u32,
}

/// `FUTEX_WAKE_OP`'s operation on the second word (`FUTEX_OP_SET` … `FUTEX_OP_XOR`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeOpKind {
    Set,
    Add,
    Or,
    AndNot,
    Xor,
}

/// `FUTEX_WAKE_OP`'s comparison of the second word's old value (`FUTEX_OP_CMP_EQ` … `GE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeCmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl WakeOpKind {
    pub const NAMES: &'static [(&'static str, WakeOpKind)] = &[
        ("set", WakeOpKind::Set),
        ("add", WakeOpKind::Add),
        ("or", WakeOpKind::Or),
        ("andn", WakeOpKind::AndNot),
        ("xor", WakeOpKind::Xor),
    ];
    /// `futex_atomic_op_inuser`'s arithmetic: the new value from the old one.
    pub fn apply(self, old: u32, arg: u32) -> u32 {
        match self {
            WakeOpKind::Set => arg,
            WakeOpKind::Add => old.wrapping_add(arg),
            WakeOpKind::Or => old | arg,
            WakeOpKind::AndNot => old & !arg,
            WakeOpKind::Xor => old ^ arg,
        }
    }
}

impl WakeCmp {
    pub const NAMES: &'static [(&'static str, WakeCmp)] = &[
        ("eq", WakeCmp::Eq),
        ("ne", WakeCmp::Ne),
        ("lt", WakeCmp::Lt),
        ("le", WakeCmp::Le),
        ("gt", WakeCmp::Gt),
        ("ge", WakeCmp::Ge),
    ];
    /// The comparison on signed values, as the kernel compares `oldval` and `cmparg` (ints).
    pub fn holds(self, old: u32, arg: u32) -> bool {
        let (a, b) = (old as i32, arg as i32);
        match self {
            WakeCmp::Eq => a == b,
            WakeCmp::Ne => a != b,
            WakeCmp::Lt => a < b,
            WakeCmp::Le => a <= b,
            WakeCmp::Gt => a > b,
            WakeCmp::Ge => a >= b,
        }
    }
}

/// A futex operation; `W` names a word (its name in the AST, its index once lowered).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FutexOp<W = usize> {
    /// A plain store to the word (user space, no syscall).
    Set { word: W, value: u32 },
    /// An atomic add (wrapping; user space, no syscall).
    Add { word: W, value: u32 },
    /// `while (*word == expected) futex_wait(word, expected)`: a mismatch returns at once.
    Wait { word: W, expected: u32 },
    /// `futex_wake(word, count)`; `current_cpu`: wake with `WF_CURRENT_CPU` (simulation only).
    Wake { word: W, count: u32, current_cpu: bool },
    /// `futex_swap`: wake one waiter of `wake` and wait on `wait` while it holds `expected`,
    /// in one call (simulation only); `direct`: hand the CPU straight to the wakee.
    /// `split`: the baseline it replaces, two calls (`futex_wake(wake, 1)`, then the wait).
    Swap { wait: W, expected: u32, wake: W, current_cpu: bool, direct: bool, split: bool },
    /// `FUTEX_WAKE_OP`: apply `op(oparg)` to `word2`, wake `count` waiters of `word` and, if
    /// `cmp(old word2, cmparg)`, `count2` waiters of `word2`.
    WakeOp { word: W, count: u32, word2: W, count2: u32, op: WakeOpKind, oparg: u32, cmp: WakeCmp, cmparg: u32 },
    /// `FUTEX_CMP_REQUEUE`: if `*word == expected`, wake `wake` waiters and move up to
    /// `requeue` more onto `to`.
    CmpRequeue { word: W, to: W, wake: u32, requeue: u32, expected: u32 },
    /// `FUTEX_LOCK_PI` with the user-space fast path (CAS 0 → TID).
    LockPi(W),
    /// `FUTEX_UNLOCK_PI` with the user-space fast path (CAS TID → 0).
    UnlockPi(W),
}

impl<W> FutexOp<W> {
    /// The same operation with every word mapped by `f`.
    pub fn map<V, E>(&self, mut f: impl FnMut(&W) -> Result<V, E>) -> Result<FutexOp<V>, E> {
        Ok(match self {
            FutexOp::Set { word, value } => FutexOp::Set { word: f(word)?, value: *value },
            FutexOp::Add { word, value } => FutexOp::Add { word: f(word)?, value: *value },
            FutexOp::Wait { word, expected } => FutexOp::Wait { word: f(word)?, expected: *expected },
            FutexOp::Wake { word, count, current_cpu } => {
                FutexOp::Wake { word: f(word)?, count: *count, current_cpu: *current_cpu }
            }
            FutexOp::Swap { wait, expected, wake, current_cpu, direct, split } => FutexOp::Swap {
                wait: f(wait)?,
                expected: *expected,
                wake: f(wake)?,
                current_cpu: *current_cpu,
                direct: *direct,
                split: *split,
            },
            FutexOp::WakeOp { word, count, word2, count2, op, oparg, cmp, cmparg } => FutexOp::WakeOp {
                word: f(word)?,
                count: *count,
                word2: f(word2)?,
                count2: *count2,
                op: *op,
                oparg: *oparg,
                cmp: *cmp,
                cmparg: *cmparg,
            },
            FutexOp::CmpRequeue { word, to, wake, requeue, expected } => {
                FutexOp::CmpRequeue { word: f(word)?, to: f(to)?, wake: *wake, requeue: *requeue, expected: *expected }
            }
            FutexOp::LockPi(w) => FutexOp::LockPi(f(w)?),
            FutexOp::UnlockPi(w) => FutexOp::UnlockPi(f(w)?),
        })
    }

    /// The words the operation names.
    pub fn words(&self) -> Vec<&W> {
        match self {
            FutexOp::Set { word, .. }
            | FutexOp::Add { word, .. }
            | FutexOp::Wait { word, .. }
            | FutexOp::Wake { word, .. }
            | FutexOp::LockPi(word)
            | FutexOp::UnlockPi(word) => vec![word],
            FutexOp::Swap { wait, wake, .. } => vec![wait, wake],
            FutexOp::WakeOp { word, word2, .. } => vec![word, word2],
            FutexOp::CmpRequeue { word, to, .. } => vec![word, to],
        }
    }

    /// Mechanisms upstream Linux lacks (real runs refuse them): `futex_swap`, and a wake on
    /// the current CPU.
    pub fn simulation_only(&self) -> Option<&'static str> {
        match self {
            FutexOp::Swap { split: false, .. } | FutexOp::Swap { direct: true, .. } => {
                Some("futex_swap (a proposal, never merged)")
            }
            FutexOp::Swap { current_cpu: true, .. } => {
                Some("current_cpu (futexes do not wake with WF_CURRENT_CPU upstream)")
            }
            FutexOp::Wake { current_cpu: true, .. } => {
                Some("futex_wake with current_cpu (futexes do not use WF_CURRENT_CPU upstream)")
            }
            _ => None,
        }
    }
}
