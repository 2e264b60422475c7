//! Scheduling policies behind [`SchedClass`](schedlab_sched_api::SchedClass), and the
//! registry that names them.
//!
//! * `fifo` — a short reference policy: per-CPU FIFO queues, optional round-robin slice.
//! * `fair` — Linux's fair class: `cfs` (v5.15 `kernel/sched/fair.c`) and `eevdf` (v6.6,
//!   v6.12, v6.18), with task groups.
//! * `o1` — the Linux 2.6 O(1) scheduler (2.6.20 `kernel/sched.c`, 2.6.11 balancer).
//! * `ext` — sched_ext: a class whose decisions a policy written against `ext::ScxOps`
//!   makes (`kernel/sched/ext.c`, v6.12), with example policies `ext:simple`,
//!   `ext:central`, `ext:locality`.
//! * `ule` — FreeBSD ULE as in 11.1 `sys/kern/sched_ule.c` (and `version=current`).

#![forbid(unsafe_code)]

pub mod chain;
pub mod ext;
pub mod fair;
pub mod fifo;
pub mod o1;
mod placement;
mod registry;
#[cfg(test)]
mod testing;
mod uclamp;
pub mod ule;

pub use registry::{make_policy, tunables_markdown, PolicyEntry, REGISTRY};
