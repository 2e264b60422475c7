//! The described machine: topology (NUMA node → LLC → core → SMT thread), tick rate and the
//! cost model of kernel paths.
//!
//! Architecture Invariant: a `Machine` is a value built from a preset or a file's text; it is
//! never read from the host.

mod cost;
mod cpuset;
mod file;
mod presets;
mod topology;

pub use cost::{Costs, LockSite, MAX_COST};
pub use cpuset::CpuSet;
pub use file::{parse_machine, MachineError};
pub use presets::{preset, PRESETS};
pub use topology::{CpuInfo, Topology};

use schedlab_sim::Ns;

/// Hard limits checked up front, so a typo cannot ask for a machine that exhausts memory.
pub const MAX_CPUS: usize = 4096;

/// A complete machine description.
#[derive(Clone, Debug, PartialEq)]
pub struct Machine {
    pub name: String,
    /// Timer interrupt frequency (`CONFIG_HZ`); the tick period is `1s / hz`.
    pub hz: u32,
    pub topology: Topology,
    pub costs: Costs,
}

impl Machine {
    pub fn nr_cpus(&self) -> usize {
        self.topology.cpus.len()
    }
    /// `TICK_NSEC`.
    pub fn tick_ns(&self) -> Ns {
        Ns(schedlab_sim::NSEC_PER_SEC / u64::from(self.hz))
    }
    pub fn all_cpus(&self) -> CpuSet {
        CpuSet::full(self.nr_cpus())
    }
}
