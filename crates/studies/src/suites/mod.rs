//! The built-in multi-experiment studies.

pub mod cfs_eevdf;
pub mod cgroup_bandwidth;
pub mod eas;
pub mod ext_examples;
pub mod futex;
pub mod lock_delayed_wakeup;
pub mod lock_sites;
pub mod lock_wakeup_granularity;
mod lockstat;
pub mod o1_bottlenecks;
mod present;
pub mod rt_latency;
pub mod schbench;

pub use present::{figures, finding, Finding};

/// The multi-experiment study called `name`, if there is one (the registry's row).
pub fn suite(name: &str) -> Option<crate::suite::Suite> {
    crate::find(name).and_then(crate::Study::suite)
}
