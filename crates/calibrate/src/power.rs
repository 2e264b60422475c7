//! The host's cpuidle and cpufreq as sysfs shows them (read from a root, so tests can use
//! fixture trees): the idle driver, governor and states of CPU 0
//! (`cpu/cpuidle/current_{driver,governor}`, `cpu/cpu0/cpuidle/stateN/{name,latency,residency}`,
//! as `drivers/cpuidle/sysfs.c` exports them, in µs), and the cpufreq policies
//! (`cpu/cpufreq/policyN/{affected_cpus,scaling_governor,cpuinfo_{min,max}_freq,
//! scaling_available_frequencies}`, `drivers/cpufreq/cpufreq.c`), or that there are none.

use crate::sysfs::read;
use std::path::Path;

/// One idle state as the driver declares it to the governor.
#[derive(Clone, Debug, PartialEq)]
pub struct HostIdleState {
    pub name: String,
    pub exit_latency_us: u64,
    pub target_residency_us: u64,
}

/// cpuidle on the host, or `None` without a driver.
#[derive(Clone, Debug, PartialEq)]
pub struct HostIdle {
    pub driver: String,
    pub governor: String,
    pub states: Vec<HostIdleState>,
}

/// One cpufreq policy.
#[derive(Clone, Debug, PartialEq)]
pub struct HostFreqPolicy {
    pub name: String,
    pub cpus: String,
    pub governor: String,
    pub min_khz: u64,
    pub max_khz: u64,
    /// `scaling_available_frequencies` (empty where the driver has no table, e.g.
    /// `intel_pstate` in active mode).
    pub khz: Vec<u64>,
}

fn num(path: &Path) -> Option<u64> {
    read(path).ok()?.parse().ok()
}

/// CPU 0's idle states under `root` (`/sys/devices/system`).
pub fn read_idle(root: &Path) -> Option<HostIdle> {
    let cpuidle = root.join("cpu/cpuidle");
    let driver = read(&cpuidle.join("current_driver")).ok()?;
    let governor = read(&cpuidle.join("current_governor"))
        .or_else(|_| read(&cpuidle.join("current_governor_ro")))
        .unwrap_or_else(|_| "unknown".into());
    let states = (0..MAX_STATES)
        .map(|i| root.join(format!("cpu/cpu0/cpuidle/state{i}")))
        .take_while(|d| d.exists())
        .filter_map(|d| {
            Some(HostIdleState {
                name: read(&d.join("name")).ok()?,
                exit_latency_us: num(&d.join("latency"))?,
                target_residency_us: num(&d.join("residency"))?,
            })
        })
        .collect();
    Some(HostIdle { driver, governor, states })
}

/// `CPUIDLE_STATE_MAX`.
const MAX_STATES: usize = schedlab_machine::CPUIDLE_STATE_MAX;

/// The cpufreq policies under `root`; empty when the host has no cpufreq driver.
pub fn read_freq(root: &Path) -> Vec<HostFreqPolicy> {
    let dir = root.join("cpu/cpufreq");
    let Ok(rd) = std::fs::read_dir(&dir) else { return Vec::new() };
    let mut names: Vec<String> = rd
        .filter_map(|e| e.ok()?.file_name().to_str().map(str::to_string))
        .filter(|n| n.starts_with("policy"))
        .collect();
    names.sort_by_key(|n| n["policy".len()..].parse::<usize>().unwrap_or(usize::MAX));
    names
        .into_iter()
        .filter_map(|name| {
            let d = dir.join(&name);
            let khz = read(&d.join("scaling_available_frequencies"))
                .map(|t| t.split_whitespace().filter_map(|f| f.parse().ok()).collect())
                .unwrap_or_default();
            Some(HostFreqPolicy {
                cpus: read(&d.join("affected_cpus")).ok()?,
                governor: read(&d.join("scaling_governor")).unwrap_or_else(|_| "unknown".into()),
                min_khz: num(&d.join("cpuinfo_min_freq"))?,
                max_khz: num(&d.join("cpuinfo_max_freq"))?,
                khz,
                name,
            })
        })
        .collect()
}

/// What to say about frequency in the table and the machine file.
pub fn freq_note(policies: &[HostFreqPolicy]) -> String {
    if policies.is_empty() {
        return "no cpufreq (sysfs cpu/cpufreq has no policy): every CPU runs at one speed; frequency behaviour \
                not measurable here"
            .into();
    }
    let each: Vec<String> = policies
        .iter()
        .map(|p| format!("{} (CPUs {}): {} kHz..{} kHz, governor {}", p.name, p.cpus, p.min_khz, p.max_khz, p.governor))
        .collect();
    each.join("; ")
}

/// haltpoll's module parameters (`/sys/module/haltpoll/parameters/*`, root given) that
/// the machine file's `[idle]` knows, as (field, value) in machine-file syntax.
pub fn read_haltpoll(module_root: &Path) -> Vec<(&'static str, String)> {
    let dir = module_root.join("haltpoll/parameters");
    let ns = |v: String| format!("\"{v}ns\"");
    let plain = |v: String| v;
    let yes = |v: String| (v == "Y" || v == "1").to_string();
    let fields: [(&'static str, &dyn Fn(String) -> String); 5] = [
        ("guest_halt_poll_ns", &ns),
        ("guest_halt_poll_grow", &plain),
        ("guest_halt_poll_grow_start", &ns),
        ("guest_halt_poll_shrink", &plain),
        ("guest_halt_poll_allow_shrink", &yes),
    ];
    fields.iter().filter_map(|(name, conv)| Some((*name, conv(read(&dir.join(name)).ok()?)))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn haltpoll_idle_and_no_cpufreq() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        put(r, "cpu/cpuidle/current_driver", "haltpoll\n");
        put(r, "cpu/cpuidle/current_governor_ro", "haltpoll\n");
        for (i, (n, l)) in [("POLL", "0"), ("haltpoll idle", "1")].iter().enumerate() {
            put(r, &format!("cpu/cpu0/cpuidle/state{i}/name"), n);
            put(r, &format!("cpu/cpu0/cpuidle/state{i}/latency"), l);
            put(r, &format!("cpu/cpu0/cpuidle/state{i}/residency"), l);
        }
        std::fs::create_dir_all(r.join("cpu/cpufreq")).unwrap();
        let idle = read_idle(r).unwrap();
        assert_eq!((idle.driver.as_str(), idle.governor.as_str()), ("haltpoll", "haltpoll"));
        assert_eq!(
            idle.states[1],
            HostIdleState { name: "haltpoll idle".into(), exit_latency_us: 1, target_residency_us: 1 }
        );
        assert!(read_freq(r).is_empty());
        assert!(freq_note(&[]).contains("no cpufreq"));
    }

    #[test]
    fn cpufreq_policies_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        for (p, cpus) in [("policy10", "10"), ("policy2", "2-3")] {
            put(r, &format!("cpu/cpufreq/{p}/affected_cpus"), cpus);
            put(r, &format!("cpu/cpufreq/{p}/scaling_governor"), "schedutil");
            put(r, &format!("cpu/cpufreq/{p}/cpuinfo_min_freq"), "800000");
            put(r, &format!("cpu/cpufreq/{p}/cpuinfo_max_freq"), "3400000");
        }
        put(r, "cpu/cpufreq/policy2/scaling_available_frequencies", "800000 1600000 3400000 \n");
        let f = read_freq(r);
        assert_eq!(f.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["policy2", "policy10"]);
        assert_eq!(f[0].khz, [800_000, 1_600_000, 3_400_000]);
        assert!(f[1].khz.is_empty());
        assert!(read_idle(r).is_none(), "no cpuidle driver");
        assert!(freq_note(&f).contains("policy2 (CPUs 2-3): 800000 kHz..3400000 kHz, governor schedutil"));
    }
}
