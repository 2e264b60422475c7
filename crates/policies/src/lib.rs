//! Scheduling policies behind [`SchedClass`](schedlab_sched_api::SchedClass), and the
//! registry that names them.
//!
//! * `fifo` — a short reference policy: per-CPU FIFO queues, optional round-robin slice.
//! * `cfs` — Linux CFS as in v5.15 `kernel/sched/fair.c`.
//! * `ule` — FreeBSD ULE as in 11.1 `sys/kern/sched_ule.c` (and `version=current`).

pub mod cfs;
pub mod fifo;
mod placement;
mod registry;
pub mod ule;

pub use registry::{make_policy, PolicyEntry, REGISTRY};
