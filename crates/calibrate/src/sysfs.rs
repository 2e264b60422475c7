//! The host's CPU topology as sysfs describes it, read from a directory root (normally
//! `/sys/devices/system`) so that tests can point it at fixture trees.
//!
//! Sources: `cpu/online`; per CPU `cpu/cpuN/topology/{thread_siblings_list,physical_package_id}`
//! and the highest-level data or unified cache `cpu/cpuN/cache/index*/{level,type,shared_cpu_list}`
//! (the LLC, as `arch/x86/kernel/cpu/cacheinfo.c` exports it); `node/nodeN/{cpulist,distance}`.

use schedlab_machine::CpuSet;
use std::path::{Path, PathBuf};

/// A sysfs file that is missing or malformed.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct SysfsError {
    pub path: PathBuf,
    pub message: String,
}

/// One online CPU.
#[derive(Clone, Debug, PartialEq)]
pub struct HostCpu {
    pub cpu: usize,
    pub package: u32,
    /// `thread_siblings_list`: the SMT threads of its core, itself included.
    pub smt: CpuSet,
    /// `shared_cpu_list` of its last-level cache.
    pub llc: CpuSet,
    /// The LLC's cache level (3 for an L3), 0 when sysfs has no cache information.
    pub llc_level: u32,
    /// Index into [`HostTopology::nodes`].
    pub node: usize,
}

/// What sysfs says about the online CPUs.
#[derive(Clone, Debug, PartialEq)]
pub struct HostTopology {
    pub cpus: Vec<HostCpu>,
    /// NUMA nodes that have CPUs: (node id, its CPUs).
    pub nodes: Vec<(usize, CpuSet)>,
    /// SLIT distances between those nodes (10 = local).
    pub distance: Vec<Vec<u32>>,
}

pub(crate) fn read(path: &Path) -> Result<String, SysfsError> {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .map_err(|e| SysfsError { path: path.to_path_buf(), message: e.to_string() })
}

fn read_list(path: &Path) -> Result<CpuSet, SysfsError> {
    CpuSet::parse_list(&read(path)?).map_err(|message| SysfsError { path: path.to_path_buf(), message })
}

fn read_num(path: &Path) -> Result<u32, SysfsError> {
    let text = read(path)?;
    text.parse().map_err(|_| SysfsError { path: path.to_path_buf(), message: format!("`{text}` is not a number") })
}

/// The numbered entries `prefix<N>` of a directory, ascending (empty if it does not exist).
fn numbered_entries(dir: &Path, prefix: &str) -> Vec<usize> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut ids: Vec<usize> =
        rd.filter_map(|e| e.ok()?.file_name().to_str()?.strip_prefix(prefix)?.parse().ok()).collect();
    ids.sort_unstable();
    ids
}

/// Reads the topology of the online CPUs under `root` (e.g. `/sys/devices/system`).
pub fn read_topology(root: &Path) -> Result<HostTopology, SysfsError> {
    let cpu_dir = root.join("cpu");
    let online: Vec<usize> = match read_list(&cpu_dir.join("online")) {
        Ok(set) => set.iter().collect(),
        Err(e) if cpu_dir.join("online").exists() => return Err(e),
        Err(_) => numbered_entries(&cpu_dir, "cpu"),
    };
    if online.is_empty() {
        return Err(SysfsError { path: cpu_dir, message: "no online CPUs".into() });
    }
    let (nodes, distance) = read_nodes(root, &online)?;
    let mut cpus = Vec::with_capacity(online.len());
    for &cpu in &online {
        let dir = cpu_dir.join(format!("cpu{cpu}"));
        let topo = dir.join("topology");
        let smt = match topo.join("thread_siblings_list").exists() {
            true => read_list(&topo.join("thread_siblings_list"))?,
            false => CpuSet::parse_list(&cpu.to_string()).expect("a CPU number is a list"),
        };
        let package = match topo.join("physical_package_id").exists() {
            true => read_num(&topo.join("physical_package_id"))?,
            false => 0,
        };
        let (llc, llc_level) = read_llc(&dir, package, &online, &cpu_dir)?;
        let node = nodes.iter().position(|(_, set)| set.contains(cpu)).unwrap_or(0);
        cpus.push(HostCpu { cpu, package, smt, llc, llc_level, node });
    }
    Ok(HostTopology { cpus, nodes, distance })
}

/// The CPU's last-level cache: the highest-level cache that is not instruction-only. Without
/// cache information the LLC is taken to be the package.
fn read_llc(dir: &Path, package: u32, online: &[usize], cpu_dir: &Path) -> Result<(CpuSet, u32), SysfsError> {
    let cache = dir.join("cache");
    let mut best: Option<(u32, CpuSet)> = None;
    for idx in numbered_entries(&cache, "index") {
        let d = cache.join(format!("index{idx}"));
        if read(&d.join("type"))? == "Instruction" {
            continue;
        }
        let level = read_num(&d.join("level"))?;
        if best.as_ref().is_none_or(|(l, _)| level > *l) {
            best = Some((level, read_list(&d.join("shared_cpu_list"))?));
        }
    }
    if let Some((level, set)) = best {
        return Ok((set, level));
    }
    let mut set = CpuSet::empty(1);
    for &c in online {
        let p = cpu_dir.join(format!("cpu{c}/topology/physical_package_id"));
        if !p.exists() || read_num(&p)? == package {
            set.insert(c);
        }
    }
    Ok((set, 0))
}

/// NUMA nodes with CPUs (node id, its CPUs), and their distance matrix.
type Nodes = (Vec<(usize, CpuSet)>, Vec<Vec<u32>>);

/// Nodes that have online CPUs, and their distance matrix. Without `node/` the machine is one
/// node at distance 10 from itself.
fn read_nodes(root: &Path, online: &[usize]) -> Result<Nodes, SysfsError> {
    let node_dir = root.join("node");
    let all = numbered_entries(&node_dir, "node");
    let mut nodes = Vec::new();
    let mut rows = Vec::new();
    for (i, &id) in all.iter().enumerate() {
        let d = node_dir.join(format!("node{id}"));
        let text = read(&d.join("cpulist"))?;
        if text.is_empty() {
            continue; // a memory-only node
        }
        let set = read_list(&d.join("cpulist"))?;
        if !online.iter().any(|&c| set.contains(c)) {
            continue;
        }
        let dist_path = d.join("distance");
        let dist: Vec<u32> = read(&dist_path)?
            .split_whitespace()
            .map(|w| w.parse())
            .collect::<Result<_, _>>()
            .map_err(|_| SysfsError { path: dist_path.clone(), message: "expected numbers".into() })?;
        if dist.len() != all.len() {
            let message = format!("{} distances for {} nodes", dist.len(), all.len());
            return Err(SysfsError { path: dist_path, message });
        }
        nodes.push((id, set));
        rows.push((i, dist));
    }
    if nodes.is_empty() {
        let mut set = CpuSet::empty(1);
        online.iter().for_each(|&c| set.insert(c));
        return Ok((vec![(0, set)], vec![vec![10]]));
    }
    // Keep only the columns of nodes that have CPUs.
    let cols: Vec<usize> = rows.iter().map(|(i, _)| *i).collect();
    let distance = rows.iter().map(|(_, r)| cols.iter().map(|&c| r[c]).collect()).collect();
    Ok((nodes, distance))
}

/// One data or unified cache of a CPU (`cpu/cpuN/cache/indexM/{level,type,size,
/// coherency_line_size,shared_cpu_list}`, as `drivers/base/cacheinfo.c` exports them).
#[derive(Clone, Debug, PartialEq)]
pub struct HostCache {
    pub level: u32,
    pub bytes: u64,
    pub line: u64,
    pub shared: CpuSet,
}

/// CPU `cpu`'s data and unified caches, nearest first; empty without cache information.
pub fn read_caches(root: &Path, cpu: usize) -> Vec<HostCache> {
    let dir = root.join(format!("cpu/cpu{cpu}/cache"));
    let mut out: Vec<HostCache> = numbered_entries(&dir, "index")
        .into_iter()
        .map(|i| dir.join(format!("index{i}")))
        .filter(|d| read(&d.join("type")).is_ok_and(|t| t != "Instruction"))
        .filter_map(|d| {
            let size = read(&d.join("size")).ok()?;
            let kib: u64 = size.strip_suffix('K')?.parse().ok()?;
            Some(HostCache {
                level: read_num(&d.join("level")).ok()?,
                bytes: kib * 1024,
                line: read_num(&d.join("coherency_line_size")).map_or(64, u64::from),
                shared: read_list(&d.join("shared_cpu_list")).ok()?,
            })
        })
        .collect();
    out.sort_by_key(|c| c.level);
    out
}

#[cfg(test)]
pub(crate) mod fixture {
    use std::path::Path;

    /// One CPU of a fake sysfs tree: (cpu, package, SMT siblings, LLC list).
    pub struct FakeCpu<'a>(pub usize, pub u32, pub &'a str, pub &'a str);

    fn put(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("{text}\n")).unwrap();
    }

    /// Writes a fake `/sys/devices/system` under `root`: CPUs with L1d, L1i, L2 (private to
    /// the core) and the given LLC (level 3); nodes as (id, cpulist, distance row).
    pub fn write(root: &Path, online: &str, cpus: &[FakeCpu], nodes: &[(usize, &str, &str)]) {
        put(root, "cpu/online", online);
        for FakeCpu(cpu, pkg, smt, llc) in cpus {
            let c = format!("cpu/cpu{cpu}");
            put(root, &format!("{c}/topology/thread_siblings_list"), smt);
            put(root, &format!("{c}/topology/physical_package_id"), &pkg.to_string());
            let caches = [(1, "Data", *smt), (1, "Instruction", *smt), (2, "Unified", *smt), (3, "Unified", *llc)];
            for (i, (level, ty, shared)) in caches.iter().enumerate() {
                put(root, &format!("{c}/cache/index{i}/level"), &level.to_string());
                put(root, &format!("{c}/cache/index{i}/type"), ty);
                put(root, &format!("{c}/cache/index{i}/shared_cpu_list"), shared);
            }
        }
        for (id, list, dist) in nodes {
            put(root, &format!("node/node{id}/cpulist"), list);
            put(root, &format!("node/node{id}/distance"), dist);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixture::{write, FakeCpu};
    use super::*;

    #[test]
    fn reads_smt_llc_and_nodes() {
        let dir = tempfile::tempdir().unwrap();
        let cpus: Vec<FakeCpu> = (0..4).map(|c| FakeCpu(c, 0, if c % 2 == 0 { "0,2" } else { "1,3" }, "0-3")).collect();
        write(dir.path(), "0-3", &cpus, &[(0, "0-3", "10")]);
        let t = read_topology(dir.path()).unwrap();
        assert_eq!(t.cpus.len(), 4);
        assert_eq!(t.cpus[2].smt.to_string(), "0,2");
        assert_eq!(t.cpus[3].llc.to_string(), "0-3");
        assert_eq!(t.cpus[3].llc_level, 3);
        assert_eq!(t.distance, vec![vec![10]]);
    }

    #[test]
    fn memory_only_nodes_and_offline_cpus_are_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let cpus = [FakeCpu(0, 0, "0", "0-1"), FakeCpu(1, 0, "1", "0-1")];
        // CPU 2 exists in node 1's list but is offline; node 2 has memory only.
        write(dir.path(), "0-1", &cpus, &[(0, "0-1", "10 20 30"), (1, "2", "20 10 30"), (2, "", "30 30 10")]);
        let t = read_topology(dir.path()).unwrap();
        assert_eq!(t.nodes.len(), 1);
        assert_eq!(t.distance, vec![vec![10]]);
    }

    #[test]
    fn missing_files_name_the_path() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "0-1", &[FakeCpu(0, 0, "0", "0-1")], &[]);
        // cpu1 has no directory at all: its SMT list defaults to itself, its LLC to the package.
        let t = read_topology(dir.path()).unwrap();
        assert_eq!(t.cpus[1].smt.to_string(), "1");
        std::fs::write(dir.path().join("cpu/cpu0/cache/index3/level"), "three\n").unwrap();
        let e = read_topology(dir.path()).unwrap_err();
        assert!(e.to_string().contains("cpu0/cache/index3/level: `three` is not a number"), "{e}");
    }
}
