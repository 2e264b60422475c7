//! Scheduling policies behind [`SchedClass`](schedlab_sched_api::SchedClass), and the
//! registry that names them.
//!
//! * `fifo` — a short reference policy: per-CPU FIFO queues, optional round-robin slice.
//! * `fair` — Linux's fair class: `cfs` (v5.15 `kernel/sched/fair.c`) and `eevdf` (v6.6,
//!   v6.12, v6.18), with task groups.
//! * `ule` — FreeBSD ULE as in 11.1 `sys/kern/sched_ule.c` (and `version=current`).

pub mod fair;
pub mod fifo;
mod placement;
mod registry;
pub mod ule;

pub use registry::{make_policy, PolicyEntry, REGISTRY};
