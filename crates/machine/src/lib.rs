//! The described machine: topology (NUMA node → LLC → core → SMT thread), tick rate and the
//! cost model of kernel paths.
//!
//! Architecture Invariant: a `Machine` is a value built from a preset or a file's text; it is
//! never read from the host.

mod cost;
mod cpuset;
mod file;
mod presets;
pub mod spec;
mod topology;

pub use cost::{Costs, KernelPath, LockSite, WorkUnits, COSTS, MAX_COST};
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

    /// Moving a cache line last written by CPU `from` to CPU `to`: nothing within a core
    /// (SMT siblings share L1/L2), else `line_same_llc`, `line_cross_llc` or `line_cross_node`.
    pub fn line_ns(&self, from: usize, to: usize) -> Ns {
        let t = &self.topology;
        let c = &self.costs;
        if t.same_core(from, to) {
            Ns(0)
        } else if t.shares_llc(from, to) {
            c.line_same_llc
        } else if t.cpus[from].node == t.cpus[to].node {
            c.line_cross_llc
        } else {
            c.line_cross_node
        }
    }

    /// Whether SMT threads slow each other down on this machine.
    #[inline]
    pub fn smt_shares(&self) -> bool {
        self.topology.threads_per_core > 1 && self.costs.smt_factor < 1000
    }

    /// Per-thread speed, in permille, of a thread of a core with `busy` busy threads (itself
    /// included): a whole core alone, `smt_factor` each for two, `smt_factor × 2 / n` for `n`.
    #[inline]
    pub fn smt_rate(&self, busy: usize) -> u32 {
        if busy <= 1 || !self.smt_shares() {
            1000
        } else {
            (self.costs.smt_factor * 2 / busy as u32).max(1)
        }
    }
}
