//! The described machine: topology (NUMA node → LLC → core → SMT thread), tick rate, the
//! constant costs of kernel paths, and the data of the cost model's other parts — caches
//! and memory, cache-line transfers and spinlock hand-over, idle states, frequency domains
//! and capacities, address spaces — with the pure functions the kernel charges them by.
//!
//! Architecture Invariant: a `Machine` is a value built from a preset or a file's text; it is
//! never read from the host.

#![forbid(unsafe_code)]

mod caches;
mod cost;
mod cpuset;
mod file;
mod freq;
mod idle;
mod lines;
mod mm;
mod model;
mod path;
mod presets;
pub mod spec;
mod topology;
mod write;

pub use caches::{
    exp_neg, numa_rate_permille, refill_time_ns, CacheLevel, CacheScope, Caches, Inclusion, Memory, Refill,
    Replacement, Source, CACHE_LEVEL, MAX_LEVELS, MEMORY,
};
pub use cost::{Costs, KernelPath, LockSite, WorkUnits, COSTS, MAX_COST};
pub use cpuset::CpuSet;
pub use file::{parse_machine, MachineError};
pub use freq::{
    em_power_uw, normalize_capacities, Freq, FreqDomain, FreqGovernor, SugovVersion, EM_MAX_POWER, FREQ, FREQ_DOMAIN,
    SCHED_CAPACITY_SCALE,
};
pub use idle::{Idle, IdleDriver, IdleGovernor, IdleState, CPUIDLE_STATE_MAX, IDLE, IDLE_DRIVER, IDLE_STATE};
pub use lines::{Lines, Spinlock, LINES, QSPINLOCK_SINCE};
pub use mm::{Mm, MM, PAGE_SIZE, TLB_NR_DYN_ASIDS};
pub use model::{CostModel, Models};
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
    /// The constant costs: all a `flat` run charges.
    pub costs: Costs,
    /// Which model a run charges (`--costs`).
    pub cost_model: CostModel,
    pub caches: Caches,
    pub lines: Lines,
    pub idle: Idle,
    pub freq: Freq,
    pub mm: Mm,
}

impl Machine {
    /// A machine of `topology` with `costs` and the generic data of the other models (an
    /// i7-3770-class core hierarchy, one HLT idle state, no cpufreq; `docs/machine.md`,
    /// *Generic defaults*), charging the full model.
    pub fn new(name: impl Into<String>, hz: u32, topology: Topology, costs: Costs) -> Machine {
        Machine {
            name: name.into(),
            hz,
            caches: presets::generic_caches(&topology),
            lines: presets::generic_lines(),
            idle: presets::generic_idle(topology.nr_cpus()),
            freq: presets::generic_freq(),
            mm: presets::generic_mm(),
            topology,
            costs,
            cost_model: CostModel::Full,
        }
    }

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

    /// Moving a cache line last written by CPU `from` to CPU `to` as the constant-cost
    /// machine charges it: nothing within a core (SMT siblings share L1/L2), else
    /// `line_same_llc`, `line_cross_llc` or `line_cross_node`.
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

    /// The line transfer the cost model charges: by distance class from [`Lines`] (SMT
    /// sibling, same LLC, other LLC, other node by SLIT distance) when the line model is
    /// on, else [`Machine::line_ns`].
    pub fn line_transfer_ns(&self, from: usize, to: usize) -> Ns {
        if self.cost_model == CostModel::Full {
            self.lines.between(&self.topology, from, to)
        } else {
            self.line_ns(from, to)
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

    /// Switches the cost model. `None` also replaces the costs by [`Costs::zero`] (they stay
    /// zero if the model is switched again).
    pub fn set_cost_model(&mut self, model: CostModel) {
        self.cost_model = model;
        if model == CostModel::None {
            self.costs = Costs::zero();
        }
    }

    /// The models a run charges: under `full`, each model this machine has data for;
    /// under `flat` and `none`, none.
    pub fn models(&self) -> Models {
        if self.cost_model != CostModel::Full {
            return Models::OFF;
        }
        Models {
            caches: !self.caches.levels.is_empty(),
            numa_memory: self.topology.nodes > 1,
            lines: true,
            locks: true,
            idle: true,
            freq: !self.freq.domains.is_empty(),
            capacity: self.freq.asymmetric(),
            mm: true,
        }
    }

    /// Whether `rewarm_same_llc`/`rewarm_cross_llc` are charged (the cache model is off).
    pub fn charges_rewarm(&self) -> bool {
        !self.models().caches
    }

    /// Whether `idle_exit` is charged (the idle-state model is off).
    pub fn charges_idle_exit(&self) -> bool {
        !self.models().idle
    }

    /// `arch_scale_cpu_capacity(cpu)`: 1024 unless the capacity model is on; O(domains),
    /// so a kernel reading it per decision keeps [`Machine::capacities`] instead.
    pub fn cpu_capacity(&self, cpu: usize) -> u64 {
        if self.cost_model == CostModel::Full {
            self.freq.capacity_of(cpu)
        } else {
            SCHED_CAPACITY_SCALE
        }
    }

    /// Every CPU's capacity, for a kernel that keeps them ([`Machine::cpu_capacity`]).
    pub fn capacities(&self) -> Vec<u64> {
        if self.cost_model == CostModel::Full {
            self.freq.capacities(self.nr_cpus())
        } else {
            vec![SCHED_CAPACITY_SCALE; self.nr_cpus()]
        }
    }

    /// The frequency domain (cpufreq policy) of `cpu`, if the machine has cpufreq.
    pub fn freq_domain(&self, cpu: usize) -> Option<usize> {
        self.freq.domains.iter().position(|d| d.cpus.contains(cpu))
    }

    /// Load latency, in ps, from `cpu` to memory on node `mem_node`: the local latency ×
    /// SLIT distance / 10 (the SLIT as relative latency, `include/linux/topology.h:
    /// LOCAL_DISTANCE` = 10), truncated.
    pub fn memory_latency_ps(&self, cpu: usize, mem_node: usize) -> u64 {
        let d = self.topology.numa_distance[self.topology.cpus[cpu].node][mem_node];
        self.caches.memory.latency_ps * u64::from(d) / 10
    }

    /// Sizes every CPU set of the idle drivers and frequency domains to the machine's CPU
    /// count, so equal sets compare equal however they were built (a parsed `0` and
    /// `CpuSet::single(128, 0)`).
    pub(crate) fn size_cpusets(&mut self) {
        let n = self.nr_cpus();
        let sized = |s: &CpuSet| {
            let mut out = CpuSet::empty(n.max(s.last().map_or(0, |c| c + 1)));
            s.iter().for_each(|c| out.insert(c));
            out
        };
        for d in &mut self.idle.drivers {
            d.cpus = sized(&d.cpus);
        }
        for d in &mut self.freq.domains {
            d.cpus = sized(&d.cpus);
        }
    }

    /// Whether the machine's data is consistent: each section's checks, `(field, reason)`
    /// naming the first field at fault as a machine file spells it.
    pub fn check(&self) -> Result<(), (String, String)> {
        let n = self.nr_cpus();
        self.caches.check(&self.topology)?;
        self.lines.check()?;
        self.idle.check(n)?;
        self.freq.check(n)?;
        Ok(())
    }

    /// Sets one value by its dotted name — `cost_model`, `hz`, `costs.context_switch`
    /// (also `cost.…`), `memory.latency`, `cache.L2.size` or `cache[1].size`,
    /// `lines.same_llc`, `lines.distance.22`, `idle.governor`,
    /// `idle.driver[0].state.C6.exit_latency`, `freq.domain[1].khz`, `mm.pcid` — from its
    /// text form, then checks the whole machine; on an error nothing changes.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let mut m = self.clone();
        path::set(&mut m, name, value).map_err(|e| format!("machine value `{name}`: {e}"))?;
        m.size_cpusets();
        m.check().map_err(|(field, e)| format!("machine value `{name}`: {field}: {e}"))?;
        *self = m;
        Ok(())
    }

    /// Every value with its dotted name (arrays by index), for the record and `schedlab
    /// list`; [`Machine::set`] reads each back.
    pub fn fields(&self) -> Vec<(String, String)> {
        path::fields(self)
    }

    /// This machine as a machine file, which [`parse_machine`] reads back to an equal
    /// machine.
    pub fn to_toml(&self) -> String {
        write::machine_file(self)
    }
}
