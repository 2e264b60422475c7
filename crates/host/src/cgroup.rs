//! `[[group]]` on the host: one cgroup of the CPU controller per declared group, made before
//! any task starts and removed when the run ends (`docs/host-runs.md`).
//!
//! The simulator's groups are `CONFIG_FAIR_GROUP_SCHED` task groups whose weight is
//! `cpu.weight` (shares = weight × 1024 / 100, `kernel/sched/core.c: cpu_weight_write_u64`
//! → `sched_group_set_shares`). The kernel offers the same task groups through either
//! hierarchy; the controller is bound to at most one of them:
//!
//! - cgroup v2 (the unified hierarchy lists `cpu` in `cgroup.controllers`): `cpu.weight`,
//!   threads placed through `cgroup.threads`, which needs a threaded subtree
//!   (`Documentation/admin-guide/cgroup-v2.rst`, "Threads"). Not done yet: refused with
//!   the reason, before anything starts.
//! - cgroup v1 (a `cgroup` mount with the `cpu` option): `cpu.shares` = weight × 1024 / 100,
//!   threads placed by writing their tid to `tasks` (`kernel/cgroup/cgroup-v1.c`).
//!
//! The groups are made inside schedlab's own cgroup of that hierarchy, as siblings of the
//! tasks left there, so a group competes with each of them as in the simulation (a group
//! made under one common directory would compete as one entity). Their names carry the
//! pid: `schedlab-<pid>-<n>-<group>`; those of a run that was killed are removed by the next.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};

use schedlab_workload::CgroupDef;

/// How long removal retries a directory the kernel still counts exiting tasks in.
const REMOVE_RETRY_MS: u64 = 2000;

static SEQ: AtomicU64 = AtomicU64::new(0);

/// The cgroup v1 hierarchy the `cpu` controller is mounted on: its mount point and
/// schedlab's own cgroup in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuHierarchy {
    pub mount: PathBuf,
    pub own: PathBuf,
}

impl CpuHierarchy {
    /// schedlab's own cgroup directory, where the groups are made.
    pub fn base(&self) -> PathBuf {
        self.mount.join(self.own.strip_prefix("/").unwrap_or(&self.own))
    }
}

/// Finds the `cpu` controller's hierarchy from `/proc/self/mounts` and `/proc/self/cgroup`,
/// or says why groups cannot run on this host.
pub fn cpu_hierarchy() -> Result<CpuHierarchy, String> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").map_err(|e| format!("/proc/self/mounts: {e}"))?;
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").map_err(|e| format!("/proc/self/cgroup: {e}"))?;
    let v2_cpu = |dir: &str| {
        std::fs::read_to_string(Path::new(dir).join("cgroup.controllers"))
            .is_ok_and(|c| c.split_whitespace().any(|w| w == "cpu"))
    };
    if let Some(found) = find_v1(&mounts, &cgroup) {
        return Ok(found);
    }
    let v2 = mounts.lines().filter_map(mount_of_type("cgroup2")).find(|(dir, _)| v2_cpu(dir));
    if let Some((dir, _)) = v2 {
        return Err(format!(
            "the cpu controller is on cgroup v2 ({dir}); placing a run's threads there needs a \
             threaded subtree, which host runs do not make yet"
        ));
    }
    Err("no cgroup hierarchy with the cpu controller is mounted (neither cgroup v2 with `cpu` in \
         cgroup.controllers nor a cgroup v1 `cpu` mount)"
        .into())
}

/// `(mount point, options)` of a `/proc/self/mounts` line of file-system type `ty`.
fn mount_of_type(ty: &str) -> impl Fn(&str) -> Option<(String, String)> + '_ {
    move |l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() >= 4 && f[2] == ty).then(|| (f[1].to_string(), f[3].to_string()))
    }
}

/// The v1 `cpu` hierarchy: a `cgroup` mount with the `cpu` option, and the
/// `/proc/self/cgroup` line (`N:controllers:path`) whose controllers include `cpu`.
pub fn find_v1(mounts: &str, cgroup: &str) -> Option<CpuHierarchy> {
    let has_cpu = |list: &str| list.split(',').any(|w| w == "cpu");
    let (mount, _) = mounts.lines().filter_map(mount_of_type("cgroup")).find(|(_, opts)| has_cpu(opts))?;
    let own = cgroup.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, ctl, path) = (f.next()?, f.next()?, f.next()?);
        has_cpu(ctl).then(|| PathBuf::from(path))
    })?;
    Some(CpuHierarchy { mount: PathBuf::from(mount.replace("\\040", " ")), own })
}

/// Moves thread `tid` into the group whose attach file is `file` ([`Cgroups::attach_files`]).
pub fn enter(file: &Path, tid: i32) -> Result<(), String> {
    std::fs::write(file, tid.to_string()).map_err(|e| format!("{}: {e}", file.display()))
}

/// `cpu.shares` for a `cpu.weight` (`kernel/sched/core.c: cpu_weight_write_u64`: the
/// weight scaled so 100 is the nice-0 load 1024; v1 clamps shares to 2..=262144).
pub fn shares_of(weight: u32) -> u64 {
    (u64::from(weight) * 1024 / 100).clamp(2, 262_144)
}

/// A directory name for a group: its own when that is a plain path component.
fn dir_name(i: usize, name: &str) -> String {
    let plain = !name.is_empty()
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if plain {
        name.to_string()
    } else {
        format!("group{i}")
    }
}

/// A group's `cpu.max` and `cpu.max.burst` in the v1 files this hierarchy has
/// (`cpu.cfs_period_us`, `cpu.cfs_quota_us`, `cpu.cfs_burst_us`; `tg_set_cfs_bandwidth`,
/// kernel/sched/core.c): the period first, since the kernel checks the quota against it.
fn write_max(dir: &Path, d: &CgroupDef) -> Result<(), String> {
    let Some(quota) = d.max.quota else { return Ok(()) };
    let files = [("cpu.cfs_period_us", d.max.period), ("cpu.cfs_quota_us", quota), ("cpu.cfs_burst_us", d.max.burst)];
    for (file, ns) in files {
        if file == "cpu.cfs_burst_us" && ns == 0 {
            continue;
        }
        let us = ns / 1000;
        std::fs::write(dir.join(file), us.to_string())
            .map_err(|e| format!("group `{}`: {file} = {us} (cpu.max.burst needs Linux 5.14 or later): {e}", d.name))?;
    }
    Ok(())
}

/// The run's cgroups, one per `[[group]]` (same index); removed by [`Cgroups::remove`] or,
/// failing that, when dropped.
#[derive(Debug)]
pub struct Cgroups {
    /// Each group's directory, parents before children.
    pub dirs: Vec<PathBuf>,
    removed: bool,
}

impl Cgroups {
    /// Makes the groups (weights set) in schedlab's own `cpu` cgroup.
    pub fn create(defs: &[CgroupDef]) -> Result<Cgroups, String> {
        let h = cpu_hierarchy()?;
        let base = h.base();
        remove_stale(&base);
        let prefix = format!("schedlab-{}-{}-", std::process::id(), SEQ.fetch_add(1, SeqCst));
        let mut cg = Cgroups { dirs: Vec::with_capacity(defs.len()), removed: false };
        for (i, d) in defs.iter().enumerate() {
            let dir = match d.parent {
                Some(p) => cg.dirs[p].join(dir_name(i, &d.name)),
                None => base.join(format!("{prefix}{}", dir_name(i, &d.name))),
            };
            std::fs::create_dir(&dir).map_err(|e| format!("group `{}`: mkdir {}: {e}", d.name, dir.display()))?;
            cg.dirs.push(dir.clone());
            // `weight_nice` gives its nice level's shares exactly (`cpu_weight_nice_write_s64`).
            let shares = d.nice.map_or_else(|| shares_of(d.weight), schedlab_sched_api::shares_of_nice);
            std::fs::write(dir.join("cpu.shares"), shares.to_string())
                .map_err(|e| format!("group `{}`: cpu.shares = {shares}: {e}", d.name))?;
            // `cpu.idle` (v1 and v2 since v5.15, `cpu_idle_write_s64`); written after the
            // shares, which it replaces with WEIGHT_IDLEPRIO. A kernel without it refuses.
            if d.idle {
                std::fs::write(dir.join("cpu.idle"), "1")
                    .map_err(|e| format!("group `{}`: cpu.idle = 1 (needs Linux 5.15 or later): {e}", d.name))?;
            }
            write_max(&dir, d)?;
        }
        Ok(cg)
    }

    /// Each group's file a thread is moved in by writing its tid (v1: `tasks`).
    pub fn attach_files(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.join("tasks")).collect()
    }

    /// Removes every group, children first. The run's threads have all exited; the kernel
    /// may still count an exiting one for a moment (`EBUSY`), so each removal is retried.
    pub fn remove(mut self) -> Result<(), String> {
        self.removed = true;
        remove_dirs(&self.dirs)
    }
}

impl Drop for Cgroups {
    fn drop(&mut self) {
        if !self.removed {
            let _ = remove_dirs(&self.dirs);
        }
    }
}

fn remove_dirs(dirs: &[PathBuf]) -> Result<(), String> {
    let mut first_error = None;
    for d in dirs.iter().rev() {
        let mut waited = 0;
        loop {
            match std::fs::remove_dir(d) {
                Ok(()) => break,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) && waited < REMOVE_RETRY_MS => {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    waited += 5;
                }
                Err(e) => {
                    first_error.get_or_insert(format!("removing cgroup {}: {e}", d.display()));
                    break;
                }
            }
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Groups left by runs that were killed (SIGKILL cannot be caught): named after a pid that
/// no longer exists. Removed depth first.
fn remove_stale(base: &Path) {
    let Ok(rd) = std::fs::read_dir(base) else { return };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix("schedlab-").and_then(|r| r.split('-').next()) else { continue };
        if pid.parse::<u32>().is_ok() && !Path::new(&format!("/proc/{pid}")).exists() {
            remove_tree(&e.path());
        }
    }
}

fn remove_tree(dir: &Path) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                remove_tree(&e.path());
            }
        }
    }
    let _ = std::fs::remove_dir(dir);
}

/// The `schedlab-<pid>-…` groups of process `pid` in the `cpu` hierarchy (for tests and
/// checks that a run left nothing behind).
pub fn groups_of(pid: u32) -> Vec<PathBuf> {
    let Ok(h) = cpu_hierarchy() else { return Vec::new() };
    let Ok(rd) = std::fs::read_dir(h.base()) else { return Vec::new() };
    let prefix = format!("schedlab-{pid}-");
    rd.flatten().filter(|e| e.file_name().to_string_lossy().starts_with(&prefix)).map(|e| e.path()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTS: &str = "tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0\n\
        cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0\n\
        cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,nosuid,cpu,cpuacct 0 0\n\
        cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n";

    #[test]
    fn the_v1_cpu_hierarchy_is_the_mount_with_the_cpu_option_and_our_line() {
        let cgroup = "3:cpuacct:/x\n2:cpu,cpuacct:/user.slice/a\n0::/\n";
        let h = find_v1(MOUNTS, cgroup).unwrap();
        assert_eq!(h.mount, PathBuf::from("/sys/fs/cgroup/cpu,cpuacct"));
        assert_eq!(h.base(), PathBuf::from("/sys/fs/cgroup/cpu,cpuacct/user.slice/a"));
        // `cpuacct` alone is not `cpu`.
        assert_eq!(find_v1("cgroup /c cgroup rw,cpuacct 0 0\n", "2:cpuacct:/\n"), None);
    }

    #[test]
    fn shares_scale_weight_100_to_1024() {
        assert_eq!(shares_of(100), 1024);
        assert_eq!(shares_of(1), 10);
        assert_eq!(shares_of(10_000), 102_400);
        assert_eq!(shares_of(300), 3072);
    }

    #[test]
    fn only_plain_names_become_directory_names() {
        assert_eq!(dir_name(0, "web"), "web");
        assert_eq!(dir_name(1, "../x"), "group1");
        assert_eq!(dir_name(2, ".hidden"), "group2");
        assert_eq!(dir_name(3, "a b"), "group3");
    }
}
