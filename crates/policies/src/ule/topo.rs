//! The CPU-group tree (`struct cpu_group`, `sys/sys/smp.h`; built on x86 by
//! `x86topo_add_sched_group`) and the load searches over it (`sched_ule.c:cpu_search`,
//! `sched_lowest`, `sched_highest`).

use schedlab_machine::{CpuSet, Machine};
use schedlab_sched_api::Work;
use schedlab_sim::CpuId;

/// `CG_SHARE_NONE`, `CG_SHARE_L1`, `CG_SHARE_L2`, `CG_SHARE_L3`.
pub const CG_SHARE_NONE: u32 = 0;
pub const CG_SHARE_L1: u32 = 1;
pub const CG_SHARE_L2: u32 = 2;
pub const CG_SHARE_L3: u32 = 3;

#[derive(Clone, Debug)]
pub struct Group {
    pub mask: CpuSet,
    /// `cg_level`: which cache the members share.
    pub level: u32,
    /// `CG_FLAG_THREAD`: the members are SMT siblings.
    pub thread: bool,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    /// Member CPUs not in any child group (the leaves' CPUs), ascending.
    pub cpus: Vec<CpuId>,
}

/// The tree; group 0 is the root (`cpu_top`).
#[derive(Clone, Debug)]
pub struct Groups {
    pub groups: Vec<Group>,
    /// `tdq_cg`: the smallest group holding each CPU (`smp_topo_find`).
    pub leaf: Vec<usize>,
}

impl Groups {
    /// Root (all CPUs, `CG_SHARE_NONE`) → NUMA nodes (`CG_SHARE_NONE`) → LLCs
    /// (`CG_SHARE_L3`) → SMT cores (`CG_SHARE_L1`, `CG_FLAG_THREAD`). A group with
    /// the same members as its parent is dropped, and single CPUs are not groups, as the
    /// x86 builder does.
    pub fn build(m: &Machine) -> Groups {
        let topo = &m.topology;
        let n = m.nr_cpus();
        let mut g = Groups { groups: Vec::new(), leaf: vec![0; n] };
        g.groups.push(Group {
            mask: CpuSet::full(n),
            level: CG_SHARE_NONE,
            thread: false,
            parent: None,
            children: Vec::new(),
            cpus: Vec::new(),
        });
        // Levels from the outside in, each a partition of the CPUs.
        let key_node = |c: CpuId| topo.cpus[c].node;
        let key_llc = |c: CpuId| topo.cpus[c].llc;
        let key_core = |c: CpuId| topo.cpus[c].core;
        type Key<'a> = &'a dyn Fn(CpuId) -> usize;
        let levels: [(Key, u32, bool); 3] =
            [(&key_node, CG_SHARE_NONE, false), (&key_llc, CG_SHARE_L3, false), (&key_core, CG_SHARE_L1, true)];
        let mut current: Vec<usize> = vec![0; n]; // each CPU's innermost group so far
        for (key, level, thread) in levels {
            let mut by_key: Vec<(usize, usize, CpuSet)> = Vec::new(); // (parent, key, mask)
            for (c, &parent) in current.iter().enumerate() {
                let k = key(c);
                match by_key.iter_mut().find(|(p, kk, _)| *p == parent && *kk == k) {
                    Some((_, _, s)) => s.insert(c),
                    None => by_key.push((parent, k, CpuSet::single(n, c))),
                }
            }
            for (parent, _, mask) in by_key {
                if mask.count() < 2 || mask == g.groups[parent].mask {
                    continue;
                }
                let id = g.groups.len();
                for c in mask.iter() {
                    current[c] = id;
                }
                g.groups.push(Group {
                    mask,
                    level,
                    thread,
                    parent: Some(parent),
                    children: Vec::new(),
                    cpus: Vec::new(),
                });
                g.groups[parent].children.push(id);
            }
        }
        for (c, &grp) in current.iter().enumerate() {
            g.leaf[c] = grp;
            g.groups[grp].cpus.push(c);
        }
        g
    }
    pub fn root(&self) -> usize {
        0
    }
}

/// Per-CPU facts the searches read (`tdq_load`, `tdq_lowpri`, `tdq_transferable`).
pub struct Loads<'a> {
    pub load: &'a [u32],
    pub lowpri: &'a [u8],
    pub transferable: &'a [u32],
}

/// The random tie-breaker: 11.1 `sched_random()` (a per-CPU LCG) modulo `modulus`; it
/// also tallies what the search visited, for the cost model.
pub struct Rnd<'a> {
    pub state: &'a mut u32,
    pub modulus: u32,
    /// CPUs and groups the search has visited so far: each CPU's `tdq` read from the
    /// searching CPU, priced by distance under the full cost model (`Work::read_cpu`).
    pub work: Work,
    /// The machine and the searching CPU.
    pub from: (&'a Machine, CpuId),
}

impl Rnd<'_> {
    fn next(&mut self) -> i64 {
        *self.state = self.state.wrapping_mul(69069).wrapping_add(5);
        i64::from((*self.state >> 16) % self.modulus)
    }
    /// The search reads `cpu`'s `tdq_load`/`tdq_lowpri`.
    fn read(&mut self, cpu: CpuId) {
        self.work.read_cpu(self.from.0, self.from.1, cpu);
    }
}

/// Parameters of a LOWEST search (`struct cpu_search`).
pub struct Lowest<'a> {
    pub mask: &'a CpuSet,
    /// Candidates need `tdq_lowpri > pri` (−1: any).
    pub pri: i32,
    /// Candidates need `tdq_load <= limit`.
    pub limit: i64,
    pub prefer: CpuId,
    /// The preferred CPU's bonus in load units (64 in 11.1, 128 in current).
    pub prefer_bonus: i64,
}

impl Groups {
    /// `sched_lowest`: the least loaded qualifying CPU on the least loaded path.
    pub fn lowest(&self, g: usize, q: &Lowest, l: &Loads, rnd: &mut Rnd) -> Option<CpuId> {
        self.search_lowest(g, q, l, rnd).1.map(|(c, _)| c)
    }

    /// `cpu_search(…, CPU_SEARCH_LOWEST)`: returns the group's total load and its best
    /// candidate with the candidate's tie-break load. Child groups are visited last to
    /// first, then loose CPUs in ascending order, as the kernel iterates.
    fn search_lowest(&self, g: usize, q: &Lowest, l: &Loads, rnd: &mut Rnd) -> (i64, Option<(CpuId, i64)>) {
        let grp = &self.groups[g];
        rnd.work.groups += 1;
        let mut total = 0;
        let mut lload = i64::MAX;
        let mut best: Option<(CpuId, i64)> = None;
        let mut consider = |load: i64, cand: Option<(CpuId, i64)>, best: &mut Option<(CpuId, i64)>| {
            if let Some((c, cl)) = cand {
                let tie_better = best.is_none_or(|(_, bl)| cl < bl);
                if load < lload || (load == lload && tie_better) {
                    lload = load;
                    *best = Some((c, cl));
                }
            }
        };
        for &child in grp.children.iter().rev() {
            let (load, cand) = self.search_lowest(child, q, l, rnd);
            total += load;
            consider(load, cand, &mut best);
        }
        for &cpu in &grp.cpus {
            rnd.read(cpu);
            let mut load = i64::from(l.load[cpu]) * 256;
            let r = rnd.next();
            if cpu == q.prefer {
                load -= q.prefer_bonus;
            }
            let ok = i32::from(l.lowpri[cpu]) > q.pri && i64::from(l.load[cpu]) <= q.limit && q.mask.contains(cpu);
            total += load;
            consider(load, ok.then_some((cpu, load - r)), &mut best);
        }
        (total, best)
    }

    /// `sched_highest`: the most loaded CPU with `load >= minload` and something
    /// transferable, on the most loaded path.
    pub fn highest(&self, g: usize, mask: &CpuSet, minload: u32, l: &Loads, rnd: &mut Rnd) -> Option<CpuId> {
        self.search_highest(g, mask, minload, l, rnd).1.map(|(c, _)| c)
    }

    fn search_highest(
        &self,
        g: usize,
        mask: &CpuSet,
        minload: u32,
        l: &Loads,
        rnd: &mut Rnd,
    ) -> (i64, Option<(CpuId, i64)>) {
        let grp = &self.groups[g];
        rnd.work.groups += 1;
        let mut total = 0;
        let mut hload = i64::MIN;
        let mut best: Option<(CpuId, i64)> = None;
        let mut consider = |load: i64, cand: Option<(CpuId, i64)>, best: &mut Option<(CpuId, i64)>| {
            if let Some((c, cl)) = cand {
                let tie_better = best.is_none_or(|(_, bl)| cl > bl);
                if load > hload || (load == hload && tie_better) {
                    hload = load;
                    *best = Some((c, cl));
                }
            }
        };
        for &child in grp.children.iter().rev() {
            let (load, cand) = self.search_highest(child, mask, minload, l, rnd);
            total += load;
            consider(load, cand, &mut best);
        }
        for &cpu in &grp.cpus {
            rnd.read(cpu);
            let load = i64::from(l.load[cpu]) * 256;
            let r = rnd.next();
            let ok = l.load[cpu] >= minload && l.transferable[cpu] > 0 && mask.contains(cpu);
            total += load;
            consider(load, ok.then_some((cpu, load - r)), &mut best);
        }
        (total, best)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_machine::preset;

    #[test]
    fn tree_follows_the_topology() {
        let m = preset("i7-3770").unwrap(); // 1 LLC, 4 cores x 2 threads
        let g = Groups::build(&m);
        // Root is the LLC (same mask, dropped), children are the 4 SMT cores.
        assert_eq!(g.groups[0].children.len(), 4);
        for &c in &g.groups[0].children {
            assert!(g.groups[c].thread);
            assert_eq!(g.groups[c].mask.count(), 2);
        }
        assert!(g.groups[0].cpus.is_empty());
        let o = preset("opteron-32").unwrap(); // 2 nodes x 2 LLCs x 8 cores
        let g = Groups::build(&o);
        assert_eq!(g.groups[0].children.len(), 2);
        let node = g.groups[0].children[0];
        assert_eq!(g.groups[node].children.len(), 2);
        let llc = g.groups[node].children[0];
        assert_eq!(g.groups[llc].level, CG_SHARE_L3);
        assert_eq!(g.groups[llc].cpus.len(), 8);
        assert_eq!(g.leaf[0], llc);
        let up = preset("smp4").unwrap();
        let g = Groups::build(&up);
        assert_eq!(g.groups.len(), 1);
        assert_eq!(g.groups[0].cpus, vec![0, 1, 2, 3]);
    }

    #[test]
    fn lowest_prefers_least_loaded_path_then_cpu() {
        let o = preset("opteron-32").unwrap();
        let g = Groups::build(&o);
        let mut load = vec![1u32; 32];
        // Node 1's first LLC (CPUs 16..24) is the least loaded path; CPU 20 idle there.
        load[..16].fill(2);
        load[20] = 0;
        load[3] = 0; // idle CPU on a busier path
        let lowpri = vec![200u8; 32];
        let trans = vec![0u32; 32];
        let l = Loads { load: &load, lowpri: &lowpri, transferable: &trans };
        let mut st = 1;
        let mut rnd = Rnd { state: &mut st, modulus: 32, work: Default::default(), from: (&o, 0) };
        let mask = CpuSet::full(32);
        let q = Lowest { mask: &mask, pri: -1, limit: i64::MAX, prefer: 0, prefer_bonus: 64 };
        assert_eq!(g.lowest(0, &q, &l, &mut rnd), Some(20));
    }
}
