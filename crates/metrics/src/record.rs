//! [`RunRecord`]: everything one run produced, typed, in the shape of the JSON output
//! (`docs/report-format.md`). Every backend fills the same record; renderers read it.
//!
//! Maps whose order means something (a policy's tunables, the cost model, workload
//! parameters) are `Vec<(String, _)>` serialised as JSON objects in that order.

use crate::{Series, Trace};
use schedlab_probe::{EndReason, WaitFor};
use serde::{Serialize, Serializer};

/// The JSON schema version; bumped when a key changes meaning or disappears.
pub const SCHEMA_VERSION: u32 = 2;

/// The JSON Schema of [`RunRecord`], generated from the types (`schemars`), with the
/// schema version it describes as `x-schema-version`; checked in as
/// `docs/record.schema.json` (`crates/metrics/tests/schema.rs`).
pub fn json_schema() -> schemars::Schema {
    // The serialize contract: a key omitted when empty (`skip_serializing_if`) is optional.
    let generator = schemars::generate::SchemaSettings::draft2020_12().for_serialize().into_generator();
    let mut schema = generator.into_root_schema_for::<RunRecord>();
    schema.insert("title".into(), "schedlab run record".into());
    schema.insert("x-schema-version".into(), SCHEMA_VERSION.into());
    schema
}

/// Everything one run produced, in the shape of the JSON output (schema 2).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct RunRecord {
    pub schema_version: u32,
    pub schedlab_version: String,
    pub workload: WorkloadInfo,
    pub scheduler: SchedulerInfo,
    pub machine: MachineInfo,
    pub kernel: KernelInfo,
    pub seed: u64,
    /// Run time at the end (simulated, or measured on the host).
    pub sim_ns: u64,
    pub end_reason: EndReason,
    /// With `end_reason: deadlock`, who waits on what (absent otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub deadlock: Vec<WaitFor>,
    pub events: u64,
    /// a word-wise hash over every event and every pick, as 16 hex digits.
    pub trace_hash: String,
    pub tasks: Vec<TaskRecord>,
    pub cpus: Vec<CpuRecord>,
    pub locks: Vec<LockRecord>,
    /// The policy's counters (balancer runs, steals, …).
    pub policy_counters: std::collections::BTreeMap<String, u64>,
    /// Wakeup latency of all tasks as a CDF: `[latency_ns, fraction]` at 100 quantiles.
    pub latency_cdf: Vec<(u64, f64)>,
    /// Named spans (`mark_begin`/`mark_end`): count, rate and latency per name; absent
    /// when the workload marks none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub spans: Vec<crate::SpanRecord>,
    /// The bandwidth-limited groups (`cpu.max`) and their `cpu.stat`; absent when no group
    /// is limited or the scheduler enforces no limit.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupRecord>,
    /// The scheduling events, when requested (`--trace`, `--timeline`); not in the JSON.
    #[serde(skip)]
    pub trace: Option<Trace>,
    /// Where every task's waiting went, when the run was explained (`RunSpec::explain`: the
    /// HTML report and the Perfetto trace of a simulated run); not in the JSON.
    #[serde(skip)]
    pub explained: Option<Box<crate::explain::Explained>>,
    /// Sampled time series, when requested (`--sample`, `study`, plots).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<Series>,
    /// What the run wants its reader to know: a switch that changed nothing, a task
    /// policy the scheduler does not have. Printed by every output; omitted when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The only part allowed to differ between two identical runs.
    pub host: HostInfo,
}

/// A bandwidth-limited task group: its `cpu.max` / `cpu.max.burst` and its `cpu.stat`
/// at the end of the run (`kernel/sched/core.c: cpu_extra_stat_show`; `docs/bandwidth.md`).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema, PartialEq, Eq)]
pub struct GroupRecord {
    pub name: String,
    /// `cpu.max`: quota per period in ns (absent: `max`, unlimited) and the period.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_quota_ns: Option<u64>,
    pub max_period_ns: u64,
    /// `cpu.max.burst` in ns.
    pub max_burst_ns: u64,
    /// Periods elapsed while the period timer ran.
    pub nr_periods: u64,
    /// Periods that ended with one of the group's runqueues throttled.
    pub nr_throttled: u64,
    /// Time the group's runqueues spent throttled, summed over CPUs.
    pub throttled_ns: u64,
    /// Refills that found more than a quota used, and how much more in all (kernels since
    /// v5.16; absent for v5.15).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nr_bursts: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst_ns: Option<u64>,
}

impl GroupRecord {
    /// The record of a policy's [`schedlab_sched_api::GroupStat`].
    pub fn of(g: &schedlab_sched_api::GroupStat) -> GroupRecord {
        GroupRecord {
            name: g.name.clone(),
            max_quota_ns: g.max.quota,
            max_period_ns: g.max.period,
            max_burst_ns: g.max.burst,
            nr_periods: g.nr_periods,
            nr_throttled: g.nr_throttled,
            throttled_ns: g.throttled_ns,
            nr_bursts: g.nr_bursts,
            burst_ns: g.burst_ns,
        }
    }
}

/// The workload that ran.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema, PartialEq)]
pub struct WorkloadInfo {
    pub name: String,
    pub file: String,
    /// Parameter values after `--param` overrides, in name order.
    #[serde(serialize_with = "as_map")]
    #[schemars(with = "std::collections::BTreeMap<String, Param>")]
    pub params: Vec<(String, Param)>,
}

/// A workload parameter's value.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema, PartialEq, Eq)]
#[serde(untagged)]
pub enum Param {
    Int(i64),
    Text(String),
}

/// The scheduler: a simulated policy's name, or `host` for the real kernel.
#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema, PartialEq)]
pub struct SchedulerInfo {
    pub name: String,
    /// Effective tunables (after CPU-count scaling and `--set`) in the policy's order; on
    /// the host, the scheduler settings the kernel exposes.
    #[serde(serialize_with = "as_map")]
    #[schemars(with = "std::collections::BTreeMap<String, String>")]
    pub tunables: Vec<(String, String)>,
    /// Why the policy stopped governing tasks during the run (a sched_ext scheduler
    /// ejected by its watchdog or an error; its tasks ran in fair from then on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit: Option<String>,
    /// The `--set KEY=VALUE` overrides as given, in order (omitted when none), so every
    /// output can say what differed from the defaults.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sets: Vec<(String, String)>,
}

/// The machine the run describes.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema, PartialEq)]
pub struct MachineInfo {
    pub name: String,
    pub cpus: usize,
    /// `CONFIG_HZ`; `None` when a host run cannot read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hz: Option<u32>,
    pub topology: TopologyInfo,
    /// Which cost model ran (`full`, `flat`, `none`; simulator only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_model: Option<String>,
    /// Which noise ran (simulator only): `none`, or each source that was on
    /// (`timer 1us/13us, op ±10‰, start +16us`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise: Option<String>,
    /// The cost model's constants (simulator only), in their declaration order.
    #[serde(serialize_with = "as_map", skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "std::collections::BTreeMap<String, String>")]
    pub costs: Vec<(String, String)>,
}

/// CPU counts per level: NUMA node → LLC → core → SMT thread.
#[derive(Clone, Copy, Debug, Serialize, schemars::JsonSchema, PartialEq, Eq)]
pub struct TopologyInfo {
    pub nodes: usize,
    pub llcs_per_node: usize,
    pub cores_per_llc: usize,
    pub threads_per_core: usize,
}

/// Kernel switches and, for a host run, what the real kernel is.
#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema, PartialEq)]
pub struct KernelInfo {
    /// `TTWU_QUEUE`; `None` when a host run cannot read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttwu_queue: Option<bool>,
    /// The Linux release whose runqueue locking the simulated kernel follows
    /// (`2.6.32`, `3.4`, `5.15`; simulator only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The delayed new-task wakeup switch (simulator only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delayed_wakeup: Option<bool>,
    /// The narrower `load_balance` critical-section switch (simulator only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lb_narrow_lock: Option<bool>,
    /// Every kernel switch's effective value (`kernel.*`, `futex.*`; simulator only), in
    /// the kernel's table order.
    #[serde(serialize_with = "as_map", skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "std::collections::BTreeMap<String, String>")]
    pub switches: Vec<(String, String)>,
    /// The switches that took effect and differ from the defaults under this policy, as
    /// `name=value` (what output headers name).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
    /// Whether the kernel and policy invariants were checked after every event (`--check`)
    /// and all held (a violation ends the run with an error instead); omitted when off.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub invariants_checked: bool,
    /// The kernel model's counters: `forks_run`, `fork_to_first_run_ns_mean`/`_max`, and
    /// with the delayed wakeup `delayed_wakeups` and `delayed_overflows`.
    #[serde(serialize_with = "as_map", skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "std::collections::BTreeMap<String, u64>")]
    pub counters: Vec<(String, u64)>,
    /// `uname -r` of a host run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub release: Option<String>,
    /// Further settings a host run could read (sysctls, scheduler features), in read order.
    #[serde(serialize_with = "as_map", skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "std::collections::BTreeMap<String, String>")]
    pub settings: Vec<(String, String)>,
}

/// How the run went on the computer that ran it: the only non-deterministic key.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema, PartialEq)]
pub struct HostInfo {
    pub wall_s: f64,
    pub events_per_sec: f64,
    /// A real run (`--sched host`): how it was observed.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub real: Option<RealRunInfo>,
}

/// How a real run was observed (`docs/host-runs.md`).
#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema, PartialEq)]
pub struct RealRunInfo {
    /// The sched tracepoints: whether they were recorded, or why not, and how well.
    pub tracing: TracingInfo,
    /// Facts worth knowing about the run (capacities granted, what was not measured).
    pub notes: Vec<String>,
    /// Tasks that ran as processes of their own.
    pub task_processes: usize,
    /// Total run time of the tasks from procfs and from the trace (a check of the trace).
    pub runtime_ns_procfs: u64,
    pub runtime_ns_trace: u64,
    /// Where `machine.hz` came from, or why it is missing.
    pub hz_source: String,
    /// Scheduler settings that could not be read, with the reason.
    #[serde(serialize_with = "as_map")]
    #[schemars(with = "std::collections::BTreeMap<String, String>")]
    pub unreadable: Vec<(String, String)>,
}

/// The tracing of a real run.
#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema, PartialEq)]
pub struct TracingInfo {
    pub enabled: bool,
    /// Why tracing is off, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// The tracefs instance used (removed at the end).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// Ring-buffer records read, probe events converted (the run's own threads only).
    pub records: u64,
    pub events: u64,
    /// Pages that reported lost events, and the kernel's overrun count.
    pub missed_pages: u64,
    pub overruns: u64,
}

impl HostInfo {
    /// `events` handled in `wall_s` seconds; µs resolution, whole events per second.
    pub fn measured(wall_s: f64, events: u64) -> HostInfo {
        HostInfo {
            wall_s: (wall_s * 1e6).round() / 1e6,
            events_per_sec: if wall_s > 0.0 { (events as f64 / wall_s).round() } else { 0.0 },
            real: None,
        }
    }
}

/// Serialises ordered pairs as a JSON object, keeping their order.
fn as_map<S: Serializer, V: Serialize>(pairs: &[(String, V)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema, PartialEq)]
pub struct Latency {
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema, PartialEq)]
pub struct TaskRecord {
    pub name: String,
    pub tid: usize,
    pub nice: i32,
    pub start_ns: u64,
    pub runtime_ns: u64,
    pub wait_ns: u64,
    pub sleep_ns: u64,
    pub switches_voluntary: u64,
    pub switches_involuntary: u64,
    pub migrations: u64,
    pub wakeups: u64,
    /// From `sched_waking` to the task running (includes IPI and lock delays).
    pub wakeup_latency_ns: Latency,
    pub exit_ns: Option<u64>,
    /// What the machine's cost models charged this task (simulator only): cache refill
    /// by where its lines came from, remote-memory slowdown, address-space switches and
    /// TLB refills, lock line transfers on its behalf. Part of `runtime_ns`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub costs: Option<schedlab_probe::CostTimes>,
    /// The active energy of the CPUs while this task was `curr` on them (its user and
    /// kernel time at the frequency they ran), nJ; simulator only, with an energy model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_nj: Option<u64>,
    /// Its forced-idle time under core scheduling (`p->stats.core_forceidle_sum`, ns: the
    /// time SMT siblings idled with tasks queued while it ran, `docs/core-scheduling.md`);
    /// simulator only, present only when core scheduling acted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub core_forceidle_sum_ns: Option<u64>,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema, PartialEq)]
pub struct CpuRecord {
    pub cpu: usize,
    pub user_ns: u64,
    pub kernel_ns: u64,
    pub spin_ns: u64,
    pub idle_ns: u64,
    /// Host runs: time the CPU ran threads outside the run (other processes, kernel
    /// threads). Always 0 in a simulation, and then left out of the JSON.
    #[serde(skip_serializing_if = "is_zero")]
    pub other_ns: u64,
    /// Kernel time by path (`schedule`, `wakeup`, `placement`, `balance`, …), summing to
    /// `kernel_ns`; empty (and left out of the JSON) when the backend cannot tell (host runs).
    #[serde(serialize_with = "as_map", skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "std::collections::BTreeMap<String, u64>")]
    pub kernel_paths: Vec<(String, u64)>,
    /// Of each path's kernel time, the lock cache-line transfers done inside it (paths
    /// with any; simulator only).
    #[serde(serialize_with = "as_map", skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "std::collections::BTreeMap<String, u64>")]
    pub kernel_path_lines: Vec<(String, u64)>,
    /// What the cost models charged on this CPU (the sum of its tasks' charges, plus line
    /// transfers done with no task; simulator only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub costs: Option<schedlab_probe::CostTimes>,
    /// Time in and entries of each idle state, idles counted when they end (the idle
    /// model on; `cpuidle/stateN/{time,usage}`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub idle_states: Vec<schedlab_probe::IdleStateUse>,
    /// Its frequency domain's time at each frequency (the frequency model on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub freq: Option<FreqRecord>,
    /// Its energy from the machine's energy model (simulator only, with one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy: Option<schedlab_probe::CpuEnergy>,
}

/// A CPU's frequency over the run (`cpufreq_stats`).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema, PartialEq)]
pub struct FreqRecord {
    /// The time-weighted mean frequency, kHz.
    pub mean_khz: u64,
    /// `[kHz, ns]` per table frequency, ascending (`time_in_state`).
    pub time_in_state: Vec<(u64, u64)>,
    /// Frequency changes of its domain (`total_trans`).
    pub transitions: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema, PartialEq)]
pub struct LockRecord {
    pub lock: String,
    pub site: String,
    pub acquisitions: u64,
    pub contended: u64,
    pub spin_ns: u64,
    /// Cache-line transfers taking the lock here caused (hand-overs included) and the time
    /// they added inside the critical section; omitted when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub line_transfers: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub line_ns: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ordered maps keep their order in the JSON, and optional host-only keys are absent
    /// from a simulated run's record.
    #[test]
    fn ordered_maps_keep_order_and_host_keys_are_optional() {
        let s = SchedulerInfo {
            name: "x".into(),
            tunables: vec![("z".into(), "1".into()), ("a".into(), "2".into())],
            ..Default::default()
        };
        assert_eq!(serde_json::to_string(&s).unwrap(), r#"{"name":"x","tunables":{"z":"1","a":"2"}}"#);
        let k = KernelInfo { ttwu_queue: Some(true), ..KernelInfo::default() };
        assert_eq!(serde_json::to_string(&k).unwrap(), r#"{"ttwu_queue":true}"#);
        let w = WorkloadInfo {
            name: "w".into(),
            file: "w.toml".into(),
            params: vec![("n".into(), Param::Int(3)), ("m".into(), Param::Text("smp2".into()))],
        };
        assert_eq!(serde_json::to_string(&w).unwrap(), r#"{"name":"w","file":"w.toml","params":{"n":3,"m":"smp2"}}"#);
    }

    #[test]
    fn host_timing_is_rounded_and_safe_at_zero() {
        assert_eq!(
            HostInfo::measured(1.23456789, 1000),
            HostInfo { wall_s: 1.234568, events_per_sec: 810.0, real: None }
        );
        assert_eq!(HostInfo::measured(0.0, 5).events_per_sec, 0.0);
    }
}
