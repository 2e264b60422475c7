//! What can be read about the host's scheduler: kernel release, HZ, preemption model,
//! the scheduler sysctls and the EEVDF base slice. Whatever is not readable is said so.

use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Read;

#[derive(Clone, Debug, Default, Serialize)]
pub struct HostInfo {
    /// `uname -r`.
    pub kernel_release: String,
    /// `uname -v` (build flags such as `PREEMPT_DYNAMIC`).
    pub kernel_version: String,
    pub online_cpus: usize,
    /// `CONFIG_HZ`, when readable.
    pub hz: Option<u64>,
    /// Where `hz` came from, or why it is missing.
    pub hz_source: String,
    /// Readable scheduler settings by name (sysctls, the base slice, the preemption model).
    pub settings: BTreeMap<String, String>,
    /// Settings the run could not read, with the reason.
    pub unreadable: BTreeMap<String, String>,
}

fn uname() -> (String, String) {
    match nix::sys::utsname::uname() {
        Ok(u) => (u.release().to_string_lossy().into_owned(), u.version().to_string_lossy().into_owned()),
        Err(_) => (String::new(), String::new()),
    }
}

/// The kernel's build configuration (`/proc/config.gz`, `CONFIG_IKCONFIG_PROC`).
fn kernel_config() -> Option<String> {
    let f = std::fs::File::open("/proc/config.gz").ok()?;
    let mut s = String::new();
    flate2::read::GzDecoder::new(f).read_to_string(&mut s).ok()?;
    Some(s)
}

fn config_value<'a>(config: &'a str, key: &str) -> Option<&'a str> {
    config.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
}

/// The preemption model the kernel was built with (`CONFIG_PREEMPT_*`); with
/// `PREEMPT_DYNAMIC` the boot command line (`preempt=`) may select another.
fn preempt_model(config: &str) -> Option<String> {
    let model = ["PREEMPT_NONE", "PREEMPT_VOLUNTARY", "PREEMPT", "PREEMPT_LAZY", "PREEMPT_RT"]
        .into_iter()
        .find(|m| config_value(config, &format!("CONFIG_{m}")) == Some("y"))?;
    let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
    let boot = cmdline.split_whitespace().find_map(|w| w.strip_prefix("preempt=")).map(str::to_string);
    Some(match boot {
        Some(b) => format!("preempt={b} (boot command line; built {model})"),
        None => model.to_lowercase().replace('_', "-"),
    })
}

const SYSCTLS: [&str; 5] = [
    "sched_autogroup_enabled",
    "sched_rr_timeslice_ms",
    "sched_rt_runtime_us",
    "sched_rt_period_us",
    "sched_cfs_bandwidth_slice_us",
];

/// `se.slice` of the calling thread (`/proc/thread-self/sched`): the EEVDF base slice
/// (`sysctl_sched_base_slice`) unless the thread set its own.
fn base_slice() -> Option<String> {
    let s = std::fs::read_to_string("/proc/thread-self/sched").ok()?;
    s.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == "se.slice").then(|| v.trim().to_string())
    })
}

/// Reads everything readable about the host's scheduler.
/// The kernel command line's parameters that change scheduling or idle (`sched*`,
/// `isolcpus`, `nohz*`, `idle`, `cpuidle*`, `haltpoll.*`, `intel_idle.*`,
/// `processor.max_cstate`, `rcu_nocbs`, `irqaffinity`, `preempt`), up to the `--` that
/// starts init's arguments: a run on a kernel booted with them may not behave as mainline
/// defaults (e.g. a vendor's `sched_vcpu_pack`).
pub fn sched_boot_params(cmdline: &str) -> Vec<String> {
    const PREFIXES: &[&str] = &[
        "sched",
        "isolcpus",
        "nohz",
        "idle",
        "cpuidle",
        "haltpoll.",
        "intel_idle.",
        "processor.max_cstate",
        "rcu_nocbs",
        "irqaffinity",
        "preempt",
    ];
    cmdline
        .split_whitespace()
        .take_while(|t| *t != "--")
        .filter(|t| {
            let name = t.split('=').next().unwrap_or(t);
            PREFIXES.iter().any(|p| name.starts_with(p))
        })
        .map(str::to_string)
        .collect()
}

pub fn read() -> HostInfo {
    let (release, version) = uname();
    let mut info = HostInfo {
        kernel_release: release,
        kernel_version: version,
        online_cpus: crate::limits::online_cpus(),
        ..HostInfo::default()
    };
    for name in SYSCTLS {
        match std::fs::read_to_string(format!("/proc/sys/kernel/{name}")) {
            Ok(v) => info.settings.insert(name.to_string(), v.trim().to_string()),
            Err(e) => info.unreadable.insert(name.to_string(), e.to_string()),
        };
    }
    if let Ok(c) = std::fs::read_to_string("/proc/cmdline") {
        let p = sched_boot_params(&c);
        if !p.is_empty() {
            info.settings.insert("boot_params".into(), p.join(" "));
        }
    }
    match base_slice() {
        Some(v) => info.settings.insert("base_slice_ns".into(), v),
        None => info.unreadable.insert("base_slice_ns".into(), "/proc/thread-self/sched has no se.slice".into()),
    };
    match std::fs::read_to_string("/sys/kernel/debug/sched/base_slice_ns") {
        Ok(_) => {}
        Err(e) => {
            info.unreadable.insert("debugfs sched tunables".into(), format!("/sys/kernel/debug/sched: {e}"));
        }
    }
    let config = kernel_config();
    match config.as_deref().and_then(|c| config_value(c, "CONFIG_HZ")).and_then(|v| v.parse().ok()) {
        Some(hz) => {
            info.hz = Some(hz);
            info.hz_source = "CONFIG_HZ in /proc/config.gz".into();
        }
        None => info.hz_source = "not readable: /proc/config.gz is missing (CONFIG_IKCONFIG_PROC)".into(),
    }
    if let Some(m) = config.as_deref().and_then(preempt_model) {
        info.settings.insert("preemption".into(), m);
    }
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boot_params_that_change_scheduling_or_idle() {
        let c = "mitigations=auto console=ttyS0 cpuidle_haltpoll.force=1 haltpoll.guest_halt_poll_ns=0 \
                 sched_vcpu_pack=15 nohz_full=1 idle=poll quiet -- --scheduler=x";
        assert_eq!(
            sched_boot_params(c),
            [
                "cpuidle_haltpoll.force=1",
                "haltpoll.guest_halt_poll_ns=0",
                "sched_vcpu_pack=15",
                "nohz_full=1",
                "idle=poll"
            ]
        );
        assert!(sched_boot_params("quiet\n").is_empty());
    }

    #[test]
    fn config_values_and_preemption_model() {
        let cfg = "# CONFIG_PREEMPT is not set\nCONFIG_PREEMPT_NONE=y\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n";
        assert_eq!(config_value(cfg, "CONFIG_HZ"), Some("250"));
        assert_eq!(config_value(cfg, "CONFIG_PREEMPT"), None);
        assert!(
            preempt_model(cfg).unwrap().contains("preempt-none")
                || preempt_model(cfg).unwrap().contains("built PREEMPT_NONE")
        );
    }
}
