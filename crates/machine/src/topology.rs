//! Where every logical CPU sits: NUMA node → LLC → core → SMT thread, numbered as Linux
//! numbers x86 CPUs, and the SLIT distances between nodes.

use crate::CpuSet;

/// Where one logical CPU sits in the machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuInfo {
    pub node: usize,
    /// Global LLC index (an LLC never spans nodes).
    pub llc: usize,
    /// Global physical-core index.
    pub core: usize,
    /// SMT thread index within the core.
    pub thread: usize,
}

/// A regular topology: `nodes × llcs_per_node × cores_per_llc × threads_per_core`.
///
/// CPUs are numbered as Linux numbers them on x86: the first SMT thread of every core first
/// (CPU 0 … cores−1), then the second thread of every core, so that on `i7-3770` CPUs 0 and
/// 4 are siblings.
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    pub nodes: usize,
    pub llcs_per_node: usize,
    pub cores_per_llc: usize,
    pub threads_per_core: usize,
    /// `numa_distance[a][b]`, SLIT units (10 = local).
    pub numa_distance: Vec<Vec<u32>>,
    pub cpus: Vec<CpuInfo>,
}

impl Topology {
    pub fn new(
        nodes: usize,
        llcs_per_node: usize,
        cores_per_llc: usize,
        threads_per_core: usize,
        numa_distance: Option<Vec<Vec<u32>>>,
    ) -> Topology {
        let total_cores = nodes * llcs_per_node * cores_per_llc;
        let mut cpus = Vec::with_capacity(total_cores * threads_per_core);
        for thread in 0..threads_per_core {
            for core in 0..total_cores {
                let llc = core / cores_per_llc;
                cpus.push(CpuInfo { node: llc / llcs_per_node, llc, core, thread });
            }
        }
        let numa_distance = numa_distance.unwrap_or_else(|| {
            (0..nodes).map(|a| (0..nodes).map(|b| if a == b { 10 } else { 20 }).collect()).collect()
        });
        Topology { nodes, llcs_per_node, cores_per_llc, threads_per_core, numa_distance, cpus }
    }

    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }
    pub fn shares_llc(&self, a: usize, b: usize) -> bool {
        self.cpus[a].llc == self.cpus[b].llc
    }
    pub fn same_core(&self, a: usize, b: usize) -> bool {
        self.cpus[a].core == self.cpus[b].core
    }
    pub fn distance(&self, a: usize, b: usize) -> u32 {
        self.numa_distance[self.cpus[a].node][self.cpus[b].node]
    }
    fn mask_where(&self, f: impl Fn(&CpuInfo) -> bool) -> CpuSet {
        let mut s = CpuSet::empty(self.nr_cpus());
        for (i, c) in self.cpus.iter().enumerate() {
            if f(c) {
                s.insert(i);
            }
        }
        s
    }
    /// The SMT siblings of `cpu`, itself included, in CPU order, without building a mask.
    pub fn smt_siblings(&self, cpu: usize) -> impl Iterator<Item = usize> + '_ {
        let total_cores = self.nodes * self.llcs_per_node * self.cores_per_llc;
        let core = self.cpus[cpu].core;
        (0..self.threads_per_core).map(move |t| t * total_cores + core)
    }
    /// `cpu_smt_mask`: the SMT siblings of `cpu`, itself included.
    pub fn smt_mask(&self, cpu: usize) -> CpuSet {
        let core = self.cpus[cpu].core;
        self.mask_where(|c| c.core == core)
    }
    /// `cpu_coregroup_mask`: the CPUs sharing `cpu`'s last-level cache.
    pub fn llc_mask(&self, cpu: usize) -> CpuSet {
        let llc = self.cpus[cpu].llc;
        self.mask_where(|c| c.llc == llc)
    }
    /// `cpumask_of_node`.
    pub fn node_mask(&self, cpu: usize) -> CpuSet {
        let node = self.cpus[cpu].node;
        self.mask_where(|c| c.node == node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn smt_siblings_numbered_like_linux() {
        let t = Topology::new(1, 1, 4, 2, None);
        assert_eq!(t.nr_cpus(), 8);
        assert!(t.same_core(0, 4));
        assert!(!t.same_core(0, 1));
        assert_eq!(t.smt_mask(1).to_string(), "1,5");
        assert_eq!(t.smt_siblings(5).collect::<Vec<_>>(), vec![1, 5]);
        let o = Topology::new(2, 2, 8, 1, None);
        assert_eq!(o.node_mask(0).to_string(), "0-15");
        assert_eq!(o.llc_mask(9).to_string(), "8-15");
        assert_eq!(o.distance(0, 16), 20);
    }
}
