//! Which cost model a run charges (`--costs full|flat|none`), and which of the machine's
//! models that leaves active.

/// The cost model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CostModel {
    /// Every model this machine has data for: caches, NUMA memory, line transfers by
    /// distance, lock hand-over, idle states, frequency and capacity, address spaces. A
    /// constant cost a model replaces is not charged as well (`rewarm_*` by the cache
    /// model, `idle_exit` by the idle state's exit latency).
    #[default]
    Full,
    /// Exactly the constant-cost machine of [`crate::Costs`]: every other model off.
    Flat,
    /// Nothing charged: [`crate::Costs::zero`] and every model off (the pure-policy
    /// machine).
    None,
}

impl CostModel {
    pub const ALL: [CostModel; 3] = [CostModel::Full, CostModel::Flat, CostModel::None];
    pub const NAMES: &'static [&'static str] = &["full", "flat", "none"];

    /// How `--costs`, the machine file, the record and the text header spell it.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn parse(s: &str) -> Result<CostModel, String> {
        Self::NAMES
            .iter()
            .position(|n| *n == s.trim())
            .map(|i| Self::ALL[i])
            .ok_or_else(|| format!("unknown cost model `{s}`; expected one of full, flat, none"))
    }
}

/// The models a run charges, from the cost model and the machine's data
/// ([`crate::Machine::models`]); computed once, read per event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Models {
    /// Working-set refill from the cache hierarchy ([`crate::Caches`]); replaces
    /// `rewarm_same_llc`/`rewarm_cross_llc`.
    pub caches: bool,
    /// Remote-node memory slows memory-bound work, and refills from remote memory cost
    /// more (more than one node).
    pub numa_memory: bool,
    /// Line transfers by distance class ([`crate::Lines`]) instead of `line_*`.
    pub lines: bool,
    /// Spinlock hand-over by lock kind ([`crate::Spinlock`]).
    pub locks: bool,
    /// Idle states and the idle governor; replaces `idle_exit`.
    pub idle: bool,
    /// Frequency domains and the cpufreq governor (there is at least one domain).
    pub freq: bool,
    /// CPUs of different capacity (some CPU's capacity is below 1024).
    pub capacity: bool,
    /// Address spaces: mm switches, TLB refills, fork and exit by resident size.
    pub mm: bool,
}

impl Models {
    /// Nothing but the constant costs.
    pub const OFF: Models = Models {
        caches: false,
        numa_memory: false,
        lines: false,
        locks: false,
        idle: false,
        freq: false,
        capacity: false,
        mm: false,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn names_round_trip() {
        for m in CostModel::ALL {
            assert_eq!(CostModel::parse(m.name()), Ok(m));
        }
        assert_eq!(CostModel::default(), CostModel::Full);
        assert!(CostModel::parse("cheap").unwrap_err().contains("full, flat, none"));
    }
}
