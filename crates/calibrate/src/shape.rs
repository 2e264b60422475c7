//! Fitting the host topology to schedlab's regular machine shape
//! (nodes × LLCs per node × cores per LLC × threads per core).

use crate::sysfs::HostTopology;
use schedlab_machine::{CpuSet, Topology};

/// A regular shape, or why the host has none.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    pub nodes: usize,
    pub llcs_per_node: usize,
    pub cores_per_llc: usize,
    pub threads_per_core: usize,
    pub numa_distance: Vec<Vec<u32>>,
    /// Whether the host numbers its CPUs as schedlab does (first SMT thread of every core,
    /// then the second …): if not, affinity lists in workloads mean schedlab's numbering.
    pub numbering_matches: bool,
}

/// The distinct sets among `sets`, in order of first appearance.
fn distinct<'a>(sets: impl Iterator<Item = &'a CpuSet>) -> Vec<&'a CpuSet> {
    let mut out: Vec<&CpuSet> = Vec::new();
    for s in sets {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// One count that must be the same everywhere (e.g. cores per LLC), or an error naming
/// where it differs.
fn uniform(what: &str, counts: &[(String, usize)]) -> Result<usize, String> {
    let first = counts.first().map_or(1, |c| c.1);
    match counts.iter().find(|c| c.1 != first) {
        None => Ok(first),
        Some(odd) => Err(format!(
            "{} has {} {what} but {} has {first}: schedlab machines are regular, so write this \
             machine file's [topology] by hand",
            odd.0, odd.1, counts[0].0
        )),
    }
}

/// Fits `host` to a regular shape.
pub fn regular_shape(host: &HostTopology) -> Result<Shape, String> {
    let mut llcs_per_node = Vec::new();
    for (ni, (id, _)) in host.nodes.iter().enumerate() {
        let llcs = distinct(host.cpus.iter().filter(|c| c.node == ni).map(|c| &c.llc));
        llcs_per_node.push((format!("node {id}"), llcs.len()));
    }
    let mut cores_per_llc = Vec::new();
    for llc in distinct(host.cpus.iter().map(|c| &c.llc)) {
        let members: Vec<_> = host.cpus.iter().filter(|c| &c.llc == llc).collect();
        if members.iter().any(|c| c.node != members[0].node) {
            return Err(format!("the LLC shared by CPUs {llc} spans NUMA nodes"));
        }
        let cores = distinct(members.iter().map(|c| &c.smt));
        if cores.iter().any(|smt| smt.iter().any(|s| !llc.contains(s))) {
            return Err(format!("an SMT core crosses the LLC shared by CPUs {llc}"));
        }
        cores_per_llc.push((format!("the LLC of CPUs {llc}"), cores.len()));
    }
    let threads: Vec<(String, usize)> =
        host.cpus.iter().map(|c| (format!("CPU {} (siblings {})", c.cpu, c.smt), c.smt.count())).collect();
    let shape = Shape {
        nodes: host.nodes.len(),
        llcs_per_node: uniform("LLCs", &llcs_per_node)?,
        cores_per_llc: uniform("cores", &cores_per_llc)?,
        threads_per_core: uniform("SMT threads", &threads)?,
        numa_distance: host.distance.clone(),
        numbering_matches: false,
    };
    let total = shape.nodes * shape.llcs_per_node * shape.cores_per_llc * shape.threads_per_core;
    if total != host.cpus.len() {
        return Err(format!(
            "{} online CPUs do not fill {} nodes × {} LLCs × {} cores × {} threads (some siblings offline?)",
            host.cpus.len(),
            shape.nodes,
            shape.llcs_per_node,
            shape.cores_per_llc,
            shape.threads_per_core
        ));
    }
    let numbering_matches = same_numbering(host, &shape);
    Ok(Shape { numbering_matches, ..shape })
}

/// Labels each position by the first position in the same group, per level, so two
/// numberings with the same partitions get the same labels.
fn labels<T: PartialEq>(keys: &[T]) -> Vec<usize> {
    keys.iter().map(|k| keys.iter().position(|o| o == k).expect("k is in keys")).collect()
}

/// Whether host CPU `i` (the i-th online CPU) sits where schedlab's CPU `i` does.
fn same_numbering(host: &HostTopology, s: &Shape) -> bool {
    let t = Topology::new(s.nodes, s.llcs_per_node, s.cores_per_llc, s.threads_per_core, None);
    let ours: Vec<(usize, usize, usize)> = t.cpus.iter().map(|c| (c.node, c.llc, c.core)).collect();
    let theirs: Vec<(usize, &CpuSet, &CpuSet)> = host.cpus.iter().map(|c| (c.node, &c.llc, &c.smt)).collect();
    let split3 = |v: &[(usize, usize, usize)]| {
        (
            labels(&v.iter().map(|x| x.0).collect::<Vec<_>>()),
            labels(&v.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>()),
            labels(v),
        )
    };
    let a = split3(&ours);
    let b = (
        labels(&theirs.iter().map(|x| x.0).collect::<Vec<_>>()),
        labels(&theirs.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>()),
        labels(&theirs),
    );
    a == b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysfs::fixture::{write, FakeCpu};
    use crate::sysfs::read_topology;

    fn shape_of(online: &str, cpus: &[FakeCpu], nodes: &[(usize, &str, &str)]) -> Result<Shape, String> {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), online, cpus, nodes);
        regular_shape(&read_topology(dir.path()).unwrap())
    }

    #[test]
    fn two_sockets_with_smt_numbered_like_x86() {
        // 2 packages × 4 cores × 2 threads: CPUs 0-3 and 8-11 on node 0, siblings n and n+8.
        let cpus: Vec<FakeCpu> = (0..16)
            .map(|c| {
                let core = c % 8;
                let (smt, llc) = (format!("{core},{}", core + 8), if core < 4 { "0-3,8-11" } else { "4-7,12-15" });
                FakeCpu(c, (core / 4) as u32, Box::leak(smt.into_boxed_str()), llc)
            })
            .collect();
        let s = shape_of("0-15", &cpus, &[(0, "0-3,8-11", "10 21"), (1, "4-7,12-15", "21 10")]).unwrap();
        assert_eq!((s.nodes, s.llcs_per_node, s.cores_per_llc, s.threads_per_core), (2, 1, 4, 2));
        assert_eq!(s.numa_distance, vec![vec![10, 21], vec![21, 10]]);
        assert!(s.numbering_matches);
    }

    #[test]
    fn adjacent_smt_siblings_fit_but_number_differently() {
        // Siblings (0,1), (2,3): a common numbering on some AMD and ARM parts.
        let cpus: Vec<FakeCpu> = (0..4).map(|c| FakeCpu(c, 0, if c < 2 { "0-1" } else { "2-3" }, "0-3")).collect();
        let s = shape_of("0-3", &cpus, &[(0, "0-3", "10")]).unwrap();
        assert_eq!((s.nodes, s.llcs_per_node, s.cores_per_llc, s.threads_per_core), (1, 1, 2, 2));
        assert!(!s.numbering_matches);
    }

    #[test]
    fn one_cpu_without_node_directory() {
        let s = shape_of("0", &[FakeCpu(0, 0, "0", "0")], &[]).unwrap();
        assert_eq!((s.nodes, s.llcs_per_node, s.cores_per_llc, s.threads_per_core), (1, 1, 1, 1));
        assert_eq!(s.numa_distance, vec![vec![10]]);
        assert!(s.numbering_matches);
    }

    #[test]
    fn split_llcs_in_one_package() {
        // Two LLCs of two cores each (a chiplet part).
        let cpus: Vec<FakeCpu> =
            (0..4).map(|c| FakeCpu(c, 0, ["0", "1", "2", "3"][c], if c < 2 { "0-1" } else { "2-3" })).collect();
        let s = shape_of("0-3", &cpus, &[(0, "0-3", "10")]).unwrap();
        assert_eq!((s.nodes, s.llcs_per_node, s.cores_per_llc, s.threads_per_core), (1, 2, 2, 1));
    }

    #[test]
    fn hybrid_cores_are_not_regular() {
        // Two SMT performance cores and two single-thread efficiency cores.
        let cpus = [
            FakeCpu(0, 0, "0,1", "0-5"),
            FakeCpu(1, 0, "0,1", "0-5"),
            FakeCpu(2, 0, "2,3", "0-5"),
            FakeCpu(3, 0, "2,3", "0-5"),
            FakeCpu(4, 0, "4", "0-5"),
            FakeCpu(5, 0, "5", "0-5"),
        ];
        let e = shape_of("0-5", &cpus, &[(0, "0-5", "10")]).unwrap_err();
        assert!(e.contains("SMT threads") && e.contains("by hand"), "{e}");
    }
}
