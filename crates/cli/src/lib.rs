//! The `schedlab` command's machinery, as a library so tests can drive it without a shell.
//!
//! Architecture Invariant: this crate is the only one that touches files, the environment,
//! stdout/stderr and exit codes; everything below it is pure.

pub mod bench;
pub mod fuzz;
pub mod host;

use schedlab_kernel::{EndReason, Kernel, KernelConfig, RunError};
use schedlab_machine::{parse_machine, preset, Machine};
use schedlab_metrics::{Metrics, RunRecord, SCHEMA_VERSION};
use schedlab_sim::{Ns, SourceError};
use schedlab_workload::{parse_workload, ParamValue, Workload};
use serde_json::json;
use std::fmt;
use std::sync::Arc;

/// Limits checked before a run starts.
pub const MAX_SIM_TIME: Ns = Ns::from_secs(24 * 3600);
/// Time-series samples per run, and sampled values (samples × (tasks + CPUs)).
pub const MAX_SAMPLES: u64 = 2_000_000;
pub const MAX_SERIES_VALUES: u64 = 500_000_000;

/// A user-facing error; `code` is the process exit status.
#[derive(Debug)]
pub struct CliError {
    pub message: String,
    pub code: u8,
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl CliError {
    pub fn input(m: impl Into<String>) -> CliError {
        CliError { message: m.into(), code: 2 }
    }
}

impl From<SourceError> for CliError {
    fn from(e: SourceError) -> Self {
        CliError::input(e.to_string())
    }
}

/// `--machine`: a preset name or a TOML file.
pub fn load_machine(spec: &str) -> Result<Machine, CliError> {
    if spec == host::HOST {
        return Ok(host::host_machine());
    }
    if let Some(m) = preset(spec) {
        return Ok(m);
    }
    if std::path::Path::new(spec).exists() {
        let text = std::fs::read_to_string(spec).map_err(|e| CliError::input(format!("{spec}: {e}")))?;
        return Ok(parse_machine(spec, &text)?);
    }
    let names: Vec<&str> = schedlab_machine::PRESETS.iter().map(|p| p.0).collect();
    Err(CliError::input(format!(
        "unknown machine `{spec}`: not a preset ({}, or `host`) and no such file",
        names.join(", ")
    )))
}

/// Reads `machine = "…"` from a workload without validating the rest (the machine is
/// needed to validate affinities).
pub fn workload_machine_hint(text: &str) -> Option<String> {
    let doc = toml::de::DeTable::parse(text).ok()?;
    let v = doc.get_ref().iter().find(|(k, _)| k.get_ref() == "machine")?.1;
    v.get_ref().as_str().map(str::to_string)
}

/// The machine for a command running schedulers `scheds`: `--machine` if given; else, when
/// a host run is among them and the workload names no machine, this host (so simulations
/// compared with it get as many CPUs).
pub fn machine_for(flag: Option<&str>, workload_text: &str, scheds: &str) -> Option<String> {
    if let Some(m) = flag {
        return Some(m.to_string());
    }
    let host = scheds.split(',').any(|s| s.trim() == host::HOST);
    (host && workload_machine_hint(workload_text).is_none()).then(|| host::HOST.to_string())
}

/// Splits `KEY=VALUE`.
pub fn parse_kv(s: &str, what: &str) -> Result<(String, String), CliError> {
    s.split_once('=')
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .filter(|(k, _)| !k.is_empty())
        .ok_or_else(|| CliError::input(format!("{what} `{s}`: expected KEY=VALUE")))
}

/// Everything needed to simulate one workload under one scheduler.
#[derive(Clone)]
pub struct Job {
    pub workload: Arc<Workload>,
    pub machine: Arc<Machine>,
    pub sched: String,
    pub sets: Vec<(String, String)>,
    pub seed: u64,
    pub end: Ns,
    pub ttwu_queue: bool,
    pub check: bool,
    /// Record time series with this sampling interval.
    pub sample: Option<Ns>,
    /// Keep every scheduling event (for the Perfetto trace and the ASCII timeline).
    pub trace: bool,
}

impl Job {
    /// Loads a workload file and resolves machine and duration.
    pub fn load(
        path: &str,
        text: &str,
        machine: Option<&str>,
        params: &[(String, String)],
        duration: Option<Ns>,
    ) -> Result<Job, CliError> {
        let spec = machine.map(str::to_string).or_else(|| workload_machine_hint(text)).unwrap_or_else(|| "smp4".into());
        let machine = load_machine(&spec)?;
        let wl = parse_workload(path, text, params, machine.nr_cpus())?;
        let end = duration.or(wl.duration).unwrap_or(Ns::from_secs(10));
        if end > MAX_SIM_TIME {
            return Err(CliError::input(format!("simulated time {end} exceeds the limit of {MAX_SIM_TIME}")));
        }
        Ok(Job {
            workload: Arc::new(wl),
            machine: Arc::new(machine),
            sched: "cfs".into(),
            sets: Vec::new(),
            seed: 1,
            end,
            ttwu_queue: true,
            check: false,
            sample: None,
            trace: false,
        })
    }

    /// Runs the simulation. `keep_going` is polled with the simulated time.
    pub fn run(&self, keep_going: &mut dyn FnMut(Ns) -> bool) -> Result<RunRecord, CliError> {
        if self.sched == host::HOST {
            return host::run(self, keep_going);
        }
        if let Some(every) = self.sample {
            let samples = self.end.0 / every.0.max(1);
            let series = samples.saturating_mul(self.workload.initial_tasks().max(1) + self.machine.nr_cpus() as u64);
            if samples > MAX_SAMPLES || series > MAX_SERIES_VALUES {
                return Err(CliError::input(format!(
                    "limit exceeded: sampling every {every} for {} records {samples} samples ({series} values); \
                     the limits are {MAX_SAMPLES} samples and {MAX_SERIES_VALUES} values — sample less often",
                    self.end
                )));
            }
        }
        let policy = schedlab_policies::make_policy(&self.sched, &self.machine, &self.sets).map_err(CliError::input)?;
        let tunables: serde_json::Map<String, serde_json::Value> =
            policy.tunables().into_iter().map(|t| (t.name.to_string(), json!(t.value))).collect();
        let cfg = KernelConfig {
            ttwu_queue: self.ttwu_queue,
            check_invariants: self.check,
            end: self.end,
            seed: self.seed,
            max_tasks: schedlab_workload::MAX_TASKS,
        };
        let mut metrics = self.sample.map_or_else(Metrics::default, Metrics::sampling);
        if self.trace {
            metrics = metrics.with_trace();
        }
        #[allow(clippy::disallowed_methods)] // host timing, reported under `host` only
        let wall = std::time::Instant::now();
        let summary = {
            let mut k = Kernel::new(self.machine.clone(), self.workload.clone(), policy, cfg, &mut metrics)
                .map_err(run_error)?;
            k.run(keep_going).map_err(run_error)?
        };
        let wall_s = wall.elapsed().as_secs_f64();
        let series = metrics.take_series();
        let trace = metrics.take_trace(&summary);
        let latency_cdf = metrics.latency_cdf();
        let (tasks, cpus, locks) = metrics.finish(&summary);
        let m = &self.machine;
        let topo = &m.topology;
        let params: serde_json::Map<String, serde_json::Value> = self
            .workload
            .params
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    match v {
                        ParamValue::Int(i) => json!(i),
                        ParamValue::Text(t) => json!(t),
                    },
                )
            })
            .collect();
        Ok(RunRecord {
            schema_version: SCHEMA_VERSION,
            schedlab_version: env!("CARGO_PKG_VERSION").to_string(),
            workload: json!({ "name": self.workload.name, "file": self.workload.file, "params": params }),
            scheduler: json!({ "name": self.sched, "tunables": tunables }),
            machine: json!({
                "name": m.name, "cpus": m.nr_cpus(), "hz": m.hz,
                "topology": { "nodes": topo.nodes, "llcs_per_node": topo.llcs_per_node,
                              "cores_per_llc": topo.cores_per_llc, "threads_per_core": topo.threads_per_core },
                "costs": m.costs.fields().into_iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
            }),
            kernel: json!({ "ttwu_queue": self.ttwu_queue }),
            seed: self.seed,
            sim_ns: summary.end.0,
            end_reason: match summary.reason {
                EndReason::TimeLimit => "time_limit",
                EndReason::AllExited => "all_exited",
                EndReason::Interrupted => "interrupted",
            }
            .to_string(),
            events: summary.events,
            trace_hash: format!("{:016x}", summary.trace_hash),
            tasks,
            cpus,
            locks,
            policy_counters: summary.policy_counters.iter().cloned().collect(),
            latency_cdf,
            trace,
            series,
            host: json!({
                "wall_s": (wall_s * 1e6).round() / 1e6,
                "events_per_sec": if wall_s > 0.0 { (summary.events as f64 / wall_s).round() } else { 0.0 },
            }),
        })
    }
}

fn run_error(e: RunError) -> CliError {
    match e {
        RunError::Workload(s) => CliError::input(s.to_string()),
        RunError::Limit(m) => CliError::input(format!("limit exceeded: {m}")),
        RunError::Config(m) => CliError::input(m),
        RunError::Invariant(m) => CliError { message: format!("simulation error: {m}"), code: 1 },
    }
}

/// JSON of a record without its `host` key: what must be identical between two runs.
pub fn deterministic_json(r: &RunRecord) -> String {
    let mut v = serde_json::to_value(r).expect("serialisable");
    v.as_object_mut().expect("object").remove("host");
    serde_json::to_string_pretty(&v).expect("serialisable")
}

/// Writes `contents` to `path` atomically (temp file in the same directory, then rename).
pub fn write_atomic(path: &std::path::Path, contents: &str) -> Result<(), CliError> {
    write_atomic_bytes(path, contents.as_bytes())
}

/// [`write_atomic`] for bytes.
pub fn write_atomic_bytes(path: &std::path::Path, contents: &[u8]) -> Result<(), CliError> {
    use std::io::Write;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| CliError { message: format!("{}: {e}", dir.display()), code: 1 })?;
    let mut f = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| CliError { message: format!("{}: {e}", dir.display()), code: 1 })?;
    f.write_all(contents).map_err(|e| CliError { message: format!("{}: {e}", path.display()), code: 1 })?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Outputs are ordinary files (the temp file starts private).
        let _ = f.as_file().set_permissions(std::fs::Permissions::from_mode(0o644));
    }
    f.persist(path).map_err(|e| CliError { message: format!("{}: {e}", path.display()), code: 1 })?;
    Ok(())
}
