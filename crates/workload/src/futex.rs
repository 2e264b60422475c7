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

/// A futex operation; `W` names a word (its name in the AST, its index once lowered), `V`
/// is a value or waiter count (an expression in the AST, the number once lowered).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FutexOp<W = usize, V = u32> {
    /// A plain store to the word (user space, no syscall).
    Set { word: W, value: V },
    /// An atomic add (wrapping; user space, no syscall).
    Add { word: W, value: V },
    /// `while (*word == expected) futex_wait(word, expected)`: a mismatch returns at once.
    Wait { word: W, expected: V },
    /// `futex_wake(word, count)`; `current_cpu`: wake with `WF_CURRENT_CPU` (simulation only).
    Wake { word: W, count: V, current_cpu: bool },
    /// `futex_swap`: wake one waiter of `wake` and wait on `wait` while it holds `expected`,
    /// in one call (simulation only); `direct`: hand the CPU straight to the wakee.
    /// `split`: the baseline it replaces, two calls (`futex_wake(wake, 1)`, then the wait).
    Swap { wait: W, expected: V, wake: W, current_cpu: bool, direct: bool, split: bool },
    /// `FUTEX_WAKE_OP`: apply `op(oparg)` to `word2`, wake `count` waiters of `word` and, if
    /// `cmp(old word2, cmparg)`, `count2` waiters of `word2`.
    WakeOp { word: W, count: V, word2: W, count2: V, op: WakeOpKind, oparg: V, cmp: WakeCmp, cmparg: V },
    /// `FUTEX_CMP_REQUEUE`: if `*word == expected`, wake `wake` waiters and move up to
    /// `requeue` more onto `to`.
    CmpRequeue { word: W, to: W, wake: V, requeue: V, expected: V },
    /// `FUTEX_LOCK_PI` with the user-space fast path (CAS 0 → TID).
    LockPi(W),
    /// `FUTEX_UNLOCK_PI` with the user-space fast path (CAS TID → 0).
    UnlockPi(W),
}

impl<W, V> FutexOp<W, V> {
    /// The same operation with every word mapped by `w` and every value by `v`.
    pub fn map<W2, V2, E>(
        &self,
        mut w: impl FnMut(&W) -> Result<W2, E>,
        mut v: impl FnMut(&V) -> Result<V2, E>,
    ) -> Result<FutexOp<W2, V2>, E> {
        Ok(match self {
            FutexOp::Set { word, value } => FutexOp::Set { word: w(word)?, value: v(value)? },
            FutexOp::Add { word, value } => FutexOp::Add { word: w(word)?, value: v(value)? },
            FutexOp::Wait { word, expected } => FutexOp::Wait { word: w(word)?, expected: v(expected)? },
            FutexOp::Wake { word, count, current_cpu } => {
                FutexOp::Wake { word: w(word)?, count: v(count)?, current_cpu: *current_cpu }
            }
            FutexOp::Swap { wait, expected, wake, current_cpu, direct, split } => FutexOp::Swap {
                wait: w(wait)?,
                expected: v(expected)?,
                wake: w(wake)?,
                current_cpu: *current_cpu,
                direct: *direct,
                split: *split,
            },
            FutexOp::WakeOp { word, count, word2, count2, op, oparg, cmp, cmparg } => FutexOp::WakeOp {
                word: w(word)?,
                count: v(count)?,
                word2: w(word2)?,
                count2: v(count2)?,
                op: *op,
                oparg: v(oparg)?,
                cmp: *cmp,
                cmparg: v(cmparg)?,
            },
            FutexOp::CmpRequeue { word, to, wake, requeue, expected } => FutexOp::CmpRequeue {
                word: w(word)?,
                to: w(to)?,
                wake: v(wake)?,
                requeue: v(requeue)?,
                expected: v(expected)?,
            },
            FutexOp::LockPi(x) => FutexOp::LockPi(w(x)?),
            FutexOp::UnlockPi(x) => FutexOp::UnlockPi(w(x)?),
        })
    }

    /// The values and counts the operation takes.
    pub fn values(&self) -> Vec<&V> {
        match self {
            FutexOp::Set { value, .. } | FutexOp::Add { value, .. } => vec![value],
            FutexOp::Wait { expected, .. } | FutexOp::Swap { expected, .. } => vec![expected],
            FutexOp::Wake { count, .. } => vec![count],
            FutexOp::WakeOp { count, count2, oparg, cmparg, .. } => vec![count, count2, oparg, cmparg],
            FutexOp::CmpRequeue { wake, requeue, expected, .. } => vec![wake, requeue, expected],
            FutexOp::LockPi(_) | FutexOp::UnlockPi(_) => Vec::new(),
        }
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
