//! The built-in multi-experiment studies.

mod cfs_eevdf;
mod ext_examples;
mod futex;
mod lock_delayed_wakeup;
mod lock_sites;
mod lock_wakeup_granularity;
mod lockstat;
mod o1_bottlenecks;
mod present;
mod rt_latency;

pub use present::{figures, finding, Finding};

use crate::suite::Suite;

/// A built-in suite: name, one-line description, constructor.
pub type SuiteEntry = (&'static str, &'static str, fn() -> Suite);

/// Built-in suites by name.
pub const SUITES: &[SuiteEntry] = &[
    ("cfs-eevdf", cfs_eevdf::DESCRIPTION, cfs_eevdf::suite),
    ("futex", futex::DESCRIPTION, futex::suite),
    ("rt-latency", rt_latency::DESCRIPTION, rt_latency::suite),
    ("lock-wakeup-granularity", lock_wakeup_granularity::DESCRIPTION, lock_wakeup_granularity::suite),
    ("lock-delayed-wakeup", lock_delayed_wakeup::DESCRIPTION, lock_delayed_wakeup::suite),
    ("lock-sites", lock_sites::DESCRIPTION, lock_sites::suite),
    ("o1-bottlenecks", o1_bottlenecks::DESCRIPTION, o1_bottlenecks::suite),
    ("ext-examples", ext_examples::DESCRIPTION, ext_examples::suite),
];

/// The suite called `name`, if there is one.
pub fn suite(name: &str) -> Option<Suite> {
    SUITES.iter().find(|(n, _, _)| *n == name).map(|(_, _, make)| make())
}
