//! `--sched host`: a [`Job`] run for real on this machine's kernel by `schedlab-host`,
//! measured by the same `Metrics` probe and reported in the same record as a simulation.

use crate::{CliError, Job};
use schedlab_host::{HostConfig, HostRun};
use schedlab_machine::{Costs, Machine, Topology};
use schedlab_metrics::{CpuRecord, Metrics, RunRecord, TaskRecord, SCHEMA_VERSION};
use schedlab_sim::Ns;
use schedlab_workload::ParamValue;
use serde_json::json;

/// The scheduler name that selects a real run.
pub const HOST: &str = "host";

/// `--machine host`: this host's online CPUs as a flat machine (one LLC, no SMT), so a
/// simulation compared with a host run has as many CPUs.
pub fn host_machine() -> Machine {
    let n = schedlab_host::online_cpus();
    Machine { name: HOST.into(), hz: 250, topology: Topology::new(1, 1, n, 1, None), costs: Costs::default() }
}

/// The machine of a host run is the host itself: a job whose machine has another CPU count
/// (a workload's `machine = "smp8"` on a 2-CPU host) is refused, not silently mapped.
fn check_machine(job: &Job) -> Result<(), CliError> {
    let host = schedlab_host::online_cpus();
    let m = &job.machine;
    if m.nr_cpus() != host {
        return Err(CliError::input(format!(
            "a host run uses this machine ({host} CPUs), but the job's machine `{}` has {} CPUs; \
             pass --machine host (or a {host}-CPU machine) to run this workload here",
            m.name,
            m.nr_cpus()
        )));
    }
    Ok(())
}

/// Replaces the trace-derived counters with procfs's, where procfs had them.
fn apply_procfs(tasks: &mut [TaskRecord], hr: &HostRun) {
    for (t, st) in tasks.iter_mut().zip(&hr.procfs) {
        let Some(st) = st else { continue };
        t.runtime_ns = st.runtime_ns;
        t.wait_ns = st.run_delay_ns;
        t.switches_voluntary = st.voluntary;
        t.switches_involuntary = st.involuntary;
        if let Some(m) = st.migrations {
            t.migrations = m;
        }
    }
}

fn cpu_records(hr: &HostRun, from_metrics: Vec<CpuRecord>) -> Vec<CpuRecord> {
    match &hr.cpu_split {
        Some(split) => split
            .iter()
            .enumerate()
            .map(|(cpu, s)| CpuRecord {
                cpu,
                user_ns: s.ours,
                kernel_ns: 0,
                spin_ns: 0,
                idle_ns: s.idle,
                other_ns: s.other,
            })
            .collect(),
        None => from_metrics,
    }
}

/// Runs `job` on the host.
pub fn run(job: &Job, keep_going: &mut dyn FnMut(Ns) -> bool) -> Result<RunRecord, CliError> {
    check_machine(job)?;
    if let Some((k, _)) = job.sets.first() {
        return Err(CliError::input(format!(
            "--set {k}: a host run uses the kernel's own scheduler, whose tunables schedlab does not change"
        )));
    }
    let cfg = HostConfig { duration: job.end, seed: job.seed, tracing: true, max_tasks: schedlab_host::MAX_TASKS };
    // What the host cannot do is bad input (exit 2), refused before anything starts.
    schedlab_host::check(&job.workload, &cfg).map_err(|e| CliError::input(e.0))?;
    let mut metrics = job.sample.map_or_else(Metrics::default, Metrics::sampling);
    if job.trace {
        metrics = metrics.with_trace();
    }
    #[allow(clippy::disallowed_methods)] // host timing, reported under `host` only
    let wall = std::time::Instant::now();
    let hr = schedlab_host::run(job.workload.clone(), &cfg, &mut metrics, keep_going)
        .map_err(|e| CliError { message: format!("host run: {e}"), code: 1 })?;
    let wall_s = wall.elapsed().as_secs_f64();
    for n in &hr.notes {
        eprintln!("host run: {n}");
    }
    let traced = hr.tracing.enabled;
    let series = metrics.take_series().filter(|_| traced);
    let trace = metrics.take_trace(&hr.summary).filter(|_| traced);
    let latency_cdf = metrics.latency_cdf();
    let (mut tasks, cpus, locks) = metrics.finish(&hr.summary);
    let trace_runtime: u64 = tasks.iter().map(|t| t.runtime_ns).sum();
    if !traced {
        // Without events the probe only saw the tasks appear; what it would infer from
        // that (all time asleep) is not a measurement.
        for t in &mut tasks {
            t.sleep_ns = 0;
            t.wakeups = 0;
        }
    }
    apply_procfs(&mut tasks, &hr);
    let cpus = cpu_records(&hr, cpus);
    Ok(record(job, hr, tasks, cpus, locks, latency_cdf, trace, series, wall_s, trace_runtime))
}

fn params(job: &Job) -> serde_json::Map<String, serde_json::Value> {
    job.workload
        .params
        .iter()
        .map(|(k, v)| {
            let v = match v {
                ParamValue::Int(i) => json!(i),
                ParamValue::Text(t) => json!(t),
            };
            (k.clone(), v)
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn record(
    job: &Job,
    hr: HostRun,
    tasks: Vec<TaskRecord>,
    cpus: Vec<CpuRecord>,
    locks: Vec<schedlab_metrics::LockRecord>,
    latency_cdf: Vec<(u64, f64)>,
    trace: Option<schedlab_metrics::Trace>,
    series: Option<schedlab_metrics::Series>,
    wall_s: f64,
    trace_runtime: u64,
) -> RunRecord {
    let info = &hr.info;
    let procfs_runtime: u64 = hr.procfs.iter().flatten().map(|s| s.runtime_ns).sum();
    RunRecord {
        schema_version: SCHEMA_VERSION,
        schedlab_version: env!("CARGO_PKG_VERSION").to_string(),
        workload: json!({ "name": job.workload.name, "file": job.workload.file, "params": params(job) }),
        scheduler: json!({
            "name": HOST,
            "kernel_release": info.kernel_release,
            "tunables": info.settings,
            "unreadable": info.unreadable,
        }),
        machine: json!({
            "name": HOST, "cpus": info.online_cpus, "hz": info.hz, "hz_source": info.hz_source,
            "topology": { "nodes": 1, "llcs_per_node": 1, "cores_per_llc": info.online_cpus, "threads_per_core": 1 },
            "costs": {},
        }),
        kernel: json!({ "release": info.kernel_release, "version": info.kernel_version }),
        seed: job.seed,
        sim_ns: hr.summary.end.0,
        end_reason: match hr.summary.reason {
            schedlab_kernel::EndReason::TimeLimit => "time_limit",
            schedlab_kernel::EndReason::AllExited => "all_exited",
            schedlab_kernel::EndReason::Interrupted => "interrupted",
        }
        .to_string(),
        events: hr.summary.events,
        trace_hash: "not-deterministic".into(),
        tasks,
        cpus,
        locks,
        policy_counters: Default::default(),
        latency_cdf,
        trace,
        series,
        host: json!({
            "wall_s": (wall_s * 1e6).round() / 1e6,
            "real_run": true,
            "tracing": hr.tracing,
            "notes": hr.notes,
            "task_processes": hr.task_processes,
            "runtime_ns_procfs": procfs_runtime,
            "runtime_ns_trace": trace_runtime,
        }),
    }
}
