use crate::{Costs, Machine, Topology};
use schedlab_sim::Ns;

/// Built-in machines: `(name, description)`.
pub const PRESETS: &[(&str, &str)] = &[
    ("up", "1 CPU (uniprocessor)"),
    ("smp2", "2 CPUs, one LLC, no SMT"),
    ("smp4", "4 CPUs, one LLC, no SMT"),
    ("smp8", "8 CPUs, one LLC, no SMT"),
    (
        "i7-3770",
        "Intel Core i7-3770: 4 cores x 2 SMT threads, one 8 MB LLC (the lock-contention and ULE-vs-CFS desktop)",
    ),
    ("i7-3770-4c", "the i7-3770 with its SMT siblings offline (maxcpus=4, or HT off): 4 cores x 1 thread, one LLC"),
    (
        "opteron-32",
        "32 cores, 2 NUMA nodes of 16 cores, 8 cores per LLC, SLIT distance 20 (the ULE-vs-CFS server, simplified)",
    ),
    ("numa-1024", "1024 CPUs: 16 NUMA nodes x 4 LLCs x 8 cores x 2 SMT threads, SLIT distance 20 (scale benchmarks)"),
];

/// Builds a preset by name.
pub fn preset(name: &str) -> Option<Machine> {
    let (nodes, llcs, cores, threads) = match name {
        "up" => (1, 1, 1, 1),
        "smp2" => (1, 1, 2, 1),
        "smp4" => (1, 1, 4, 1),
        "smp8" => (1, 1, 8, 1),
        "i7-3770" => (1, 1, 4, 2),
        "i7-3770-4c" => (1, 1, 4, 1),
        "opteron-32" => (2, 2, 8, 1),
        "numa-1024" => (16, 4, 8, 2),
        _ => return None,
    };
    let mut costs = Costs::default();
    if name == "opteron-32" {
        // AMD Opteron 6172 (2.1 GHz): David, Guerraoui and Trigonakis (SOSP 2013) measured a
        // modified line at ≈ 81 cycles on the same die, ≈ 161 on the package's other die,
        // ≈ 252 two HyperTransport hops away.
        costs.line_same_llc = Ns(40);
        costs.line_cross_llc = Ns(77);
        costs.line_cross_node = Ns(120);
    }
    Some(Machine { name: name.to_string(), hz: 250, topology: Topology::new(nodes, llcs, cores, threads, None), costs })
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn every_preset_builds() {
        for (name, _) in PRESETS {
            let m = preset(name).unwrap();
            assert!(m.nr_cpus() >= 1);
        }
        assert_eq!(preset("i7-3770").unwrap().nr_cpus(), 8);
        assert_eq!(preset("i7-3770-4c").unwrap().nr_cpus(), 4);
        assert_eq!(preset("opteron-32").unwrap().nr_cpus(), 32);
        assert_eq!(preset("numa-1024").unwrap().nr_cpus(), 1024);
        assert!(preset("cray-1").is_none());
    }
}
