//! Scheduling policies behind [`SchedClass`](schedlab_sched_api::SchedClass), and the
//! registry that names them.
//!
//! * `fifo` — a short reference policy: per-CPU FIFO queues, optional round-robin slice.
//! * `fair` — Linux's fair class: `cfs` (v5.15 `kernel/sched/fair.c`) and `eevdf` (v6.6,
//!   v6.12, v6.18), with task groups.
//! * `o1` — the Linux 2.6 O(1) scheduler (2.6.20 `kernel/sched.c`, 2.6.11 balancer).
//! * `ule` — FreeBSD ULE as in 11.1 `sys/kern/sched_ule.c` (and `version=current`).

pub mod chain;
pub mod fair;
pub mod fifo;
pub mod o1;
mod placement;
mod registry;
pub mod ule;

pub use registry::{make_policy, PolicyEntry, REGISTRY};
