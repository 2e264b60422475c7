//! `schedlab calibrate`: measures the host and writes a machine file for it.
//!
//! * [`sysfs`] reads the topology from a sysfs root (pure parsing, tested on fixture trees),
//!   and [`shape`] fits it to schedlab's regular machine shape;
//! * [`bench`] holds the microbenchmarks — the only code here that touches the OS — and
//!   [`measure`] runs them on chosen CPUs;
//! * [`model`] gives the simulator's time for each benchmark as a function of the costs,
//!   and [`derive`] inverts it, turning the measurements into the cost model's values, each with a note saying
//!   how it was measured, and [`writer`] renders the commented machine file and the table.
//!
//! Architecture Invariant: this crate reads the host (sysfs, clocks, syscalls) but never
//! changes anything outside the threads it starts: affinity, scheduling policy and timer
//! slack are set per benchmark thread and die with it.

pub mod bench;
pub mod consistency;
pub mod data;
pub mod derive;
pub mod measure;
pub mod model;
pub mod power;
pub mod shape;
pub mod sysfs;
pub mod writer;

use std::path::{Path, PathBuf};

/// What to calibrate and how thoroughly.
#[derive(Clone, Debug)]
pub struct Options {
    /// Few repetitions (under 2 s, for tests) instead of the normal run (under 30 s).
    pub quick: bool,
    /// The sysfs root to read the topology from (`/sys/devices/system`).
    pub sysfs_root: PathBuf,
    /// The machine's name; default: the host name.
    pub name: Option<String>,
    /// Where module parameters are (`/sys/module`: haltpoll's).
    pub module_root: PathBuf,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            quick: false,
            sysfs_root: PathBuf::from("/sys/devices/system"),
            name: None,
            module_root: PathBuf::from("/sys/module"),
        }
    }
}

/// Why calibration failed.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    #[error("reading the topology: {0}")]
    Sysfs(#[from] sysfs::SysfsError),
    #[error("the host topology: {0}")]
    Shape(String),
    #[error("{0}")]
    Bench(#[from] bench::BenchError),
    #[error("HZ {hz} (tick period {tick_ns} ns) is outside 1..=10000")]
    Hz { hz: u64, tick_ns: u64 },
}

/// Kernel and CPU, for the machine file's header.
#[derive(Clone, Debug)]
pub struct HostInfo {
    pub kernel: String,
    pub cpu_model: String,
    pub hostname: String,
    /// `pcid` among the CPU flags (`/proc/cpuinfo`).
    pub pcid: bool,
}

/// Reads `uname` and the CPU model (`/proc/cpuinfo`'s first `model name`).
pub fn host_info() -> HostInfo {
    let (kernel, hostname) = match nix::sys::utsname::uname() {
        Ok(u) => (
            format!(
                "{} {} {}",
                u.sysname().to_string_lossy(),
                u.release().to_string_lossy(),
                u.machine().to_string_lossy()
            ),
            u.nodename().to_string_lossy().into_owned(),
        ),
        Err(_) => ("unknown".into(), "host".into()),
    };
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let pcid =
        cpuinfo.lines().find(|l| l.starts_with("flags")).is_some_and(|l| l.split_whitespace().any(|f| f == "pcid"));
    let cpu_model = Some(cpuinfo)
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    HostInfo { kernel, cpu_model, hostname, pcid }
}

/// A finished calibration.
#[derive(Clone, Debug)]
pub struct Calibration {
    pub name: String,
    pub quick: bool,
    pub host: HostInfo,
    pub topology: sysfs::HostTopology,
    pub shape: shape::Shape,
    pub hz: u32,
    pub tick: bench::tick::TickPeriod,
    /// Whether benchmark threads ran at nice [`bench::BOOST_NICE`].
    pub boosted: bool,
    pub measurements: measure::Measurements,
    pub derived: derive::Derived,
    /// cpuidle as sysfs shows it (`None`: no driver), and haltpoll's parameters.
    pub idle: Option<power::HostIdle>,
    pub haltpoll: Vec<(&'static str, String)>,
    /// The cpufreq policies (empty: no cpufreq).
    pub freq: Vec<power::HostFreqPolicy>,
}

impl Calibration {
    /// The machine file (TOML with comments).
    pub fn machine_file(&self) -> String {
        writer::machine_file(self)
    }
    /// The measured table.
    pub fn table(&self) -> String {
        writer::table(self)
    }
}

/// HZ from the tick period `TICK_NSEC`, rounded to the nearest integer.
pub fn hz_from_tick(tick_ns: u64) -> Result<u32, CalibrateError> {
    let hz = (1_000_000_000 + tick_ns / 2) / tick_ns.max(1);
    if !(1..=10_000).contains(&hz) {
        return Err(CalibrateError::Hz { hz, tick_ns });
    }
    Ok(hz as u32)
}

/// The working set of the re-warm benchmark: half of CPU `cpu`'s L2 (256 KiB without
/// cache information), so that it fits the private caches it is re-warming.
fn rewarm_bytes(root: &Path, cpu: usize) -> usize {
    let cache = root.join(format!("cpu/cpu{cpu}/cache"));
    (0..8)
        .map(|i| cache.join(format!("index{i}")))
        .filter(|d| sysfs::read(&d.join("level")).is_ok_and(|l| l == "2"))
        .find_map(|d| sysfs::read(&d.join("size")).ok())
        .and_then(|s| s.strip_suffix('K').and_then(|k| k.parse::<usize>().ok()))
        .map_or(256 * 1024, |kib| kib * 1024 / 2)
}

/// Reads the topology, runs every benchmark and derives the costs; `progress` hears each
/// step as it starts.
pub fn calibrate(opts: &Options, progress: &mut dyn FnMut(&str)) -> Result<Calibration, CalibrateError> {
    progress("topology (sysfs)");
    let topology = sysfs::read_topology(&opts.sysfs_root)?;
    let shape = shape::regular_shape(&topology).map_err(CalibrateError::Shape)?;
    let cpus = measure::pick_cpus(&topology, &bench::allowed_cpus());
    let bytes = rewarm_bytes(&opts.sysfs_root, cpus.a);
    let boosted = bench::can_boost();
    let mut measurements = measure::measure(opts.quick, cpus, bytes, progress)?;
    let host_caches = sysfs::read_caches(&opts.sysfs_root, cpus.a);
    measurements.caches = measure::measure_caches(opts.quick, cpus, host_caches, progress)?;
    let tick = measurements.tick;
    let hz = hz_from_tick(tick.getres_ns)?;
    let mut derived = derive::derive(&measurements);
    let host = host_info();
    derived.data.mm.pcid = host.pcid;
    let name = opts.name.clone().unwrap_or_else(|| host.hostname.clone());
    let idle = power::read_idle(&opts.sysfs_root);
    let haltpoll = power::read_haltpoll(&opts.module_root);
    let freq = power::read_freq(&opts.sysfs_root);
    Ok(Calibration {
        name,
        quick: opts.quick,
        host,
        topology,
        shape,
        hz,
        tick,
        boosted,
        measurements,
        derived,
        idle,
        haltpoll,
        freq,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysfs::fixture::{write, FakeCpu};
    use schedlab_sim::Ns;

    /// The machine file loads, and gives back the derived costs, HZ and topology; every
    /// cost has a comment above it.
    #[test]
    fn machine_file_loads_with_the_derived_costs() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "0-1", &[FakeCpu(0, 0, "0", "0-1"), FakeCpu(1, 0, "1", "0-1")], &[(0, "0-1", "10")]);
        let topology = sysfs::read_topology(dir.path()).unwrap();
        let shape = shape::regular_shape(&topology).unwrap();
        let measurements = derive::tests::model_measurements(&derive::tests::odd_costs());
        let derived = derive::derive(&measurements);
        let host = HostInfo {
            kernel: "Linux 6.18.44 x86_64".into(),
            cpu_model: "test".into(),
            hostname: "h".into(),
            pcid: true,
        };
        let tick = measurements.tick;
        let c = Calibration {
            name: "box".into(),
            quick: true,
            host,
            topology,
            shape,
            hz: 250,
            tick,
            boosted: false,
            measurements,
            derived,
            idle: Some(power::HostIdle {
                driver: "haltpoll".into(),
                governor: "haltpoll".into(),
                states: vec![
                    power::HostIdleState { name: "POLL".into(), exit_latency_us: 0, target_residency_us: 0 },
                    power::HostIdleState { name: "haltpoll idle".into(), exit_latency_us: 1, target_residency_us: 1 },
                ],
            }),
            haltpoll: vec![("guest_halt_poll_ns", "\"0ns\"".into())],
            freq: Vec::new(),
        };
        let text = c.machine_file();
        let m = schedlab_machine::parse_machine("box.toml", &text).unwrap();
        assert_eq!(m.costs, c.derived.costs);
        assert_eq!((m.name.as_str(), m.hz, m.nr_cpus()), ("box", 250, 2));
        let lines: Vec<&str> = text
            .lines()
            .skip_while(|l| *l != "[costs]")
            .enumerate()
            .take_while(|(i, l)| *i == 0 || !l.starts_with('['))
            .map(|(_, l)| l)
            .collect();
        let values: Vec<usize> =
            (1..lines.len()).filter(|&i| lines[i].contains(" = ") && !lines[i].starts_with('#')).collect();
        assert_eq!(values.len(), c.derived.costs.fields().len(), "every cost and numa_scaled");
        for i in values {
            assert!(lines[i - 1].starts_with('#'), "no comment above `{}`", lines[i]);
        }
        assert!(c.table().contains("context_switch"));
        // The machine data reads back as written.
        let d = &c.derived.data;
        assert_eq!(m.mm.cr3_write, d.mm.cr3_write);
        assert_eq!((m.mm.fork_per_page, m.mm.exit_per_page, m.mm.pcid), (d.mm.fork_per_page, d.mm.exit_per_page, true));
        assert_eq!(m.lines.same_llc, Ns(d.lines[0].transfer.median));
        assert_eq!(m.idle.governor, schedlab_machine::IdleGovernor::Haltpoll);
        assert_eq!(m.idle.guest_halt_poll_ns, Ns(0));
        let halt = &m.idle.drivers[0].states[1];
        // A guest: the halt's exit is the hypervisor's state's, one state per idle length.
        assert_eq!((halt.name.as_str(), halt.exit_cost), ("haltpoll idle", Some(Ns(0))));
        let hv: Vec<(u64, u64)> =
            m.idle.hypervisor_states.iter().map(|s| (s.target_residency.0, s.wake_cost().0)).collect();
        let want: Vec<(u64, u64)> = d.idle_exits.iter().map(|e| (e.idle_ns, e.exit_ns as u64)).collect();
        assert_eq!((hv, m.idle.hypervisor_governor), (want, schedlab_machine::IdleGovernor::Menu618));
        assert!(text.contains("# Frequency: no cpufreq"), "{text}");
    }

    #[test]
    fn hz_from_the_tick_period() {
        assert_eq!(hz_from_tick(4_000_000).unwrap(), 250);
        assert_eq!(hz_from_tick(3_333_333).unwrap(), 300);
        assert_eq!(hz_from_tick(1_000_000).unwrap(), 1000);
        assert_eq!(hz_from_tick(10_000_000).unwrap(), 100);
        assert!(hz_from_tick(10).is_err());
        assert!(hz_from_tick(5_000_000_000).is_err());
    }
}
