//! Example sched_ext policies, each modelled on one of sched_ext's teaching schedulers
//! (`tools/sched_ext/`, Linux 6.12) and runnable as `--sched ext:NAME`.

pub mod central;
pub mod locality;
pub mod simple;
