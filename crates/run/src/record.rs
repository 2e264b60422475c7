//! Assembling a [`RunRecord`] from what a backend measured, shared by every backend: the
//! backend watches its run with [`metrics`] and supplies the scheduler, machine and kernel
//! descriptions and its `RunSummary`; the workload, seed and version come from the
//! [`RunSpec`]. [`workload_info`] and [`machine_info`] describe the spec's inputs.

use crate::{RunRecord, RunSpec};
use schedlab_machine::Machine;
use schedlab_metrics::{
    HostInfo, KernelInfo, MachineInfo, Metrics, Param, SchedulerInfo, TopologyInfo, WorkloadInfo, SCHEMA_VERSION,
};
use schedlab_probe::RunSummary;
use schedlab_workload::{ParamValue, Workload};

/// The `Metrics` probe a run of `spec` is watched with: sampling and the event log as the
/// spec asks.
pub fn metrics(spec: &RunSpec) -> Metrics {
    let m = spec.sample.map_or_else(Metrics::default, Metrics::sampling);
    if spec.trace {
        m.with_trace()
    } else {
        m
    }
}

/// What a backend measured, to be assembled into a record.
pub struct Measured {
    pub scheduler: SchedulerInfo,
    /// The machine that ran: the spec's described machine for the simulator
    /// ([`machine_info`]), the real one for the host.
    pub machine: MachineInfo,
    pub kernel: KernelInfo,
    pub summary: RunSummary,
    pub metrics: Metrics,
    /// Wall-clock seconds the run took.
    pub wall_s: f64,
}

/// The record of a finished run of `spec`.
pub fn assemble(spec: &RunSpec, m: Measured) -> RunRecord {
    let Measured { scheduler, machine, kernel, summary, mut metrics, wall_s } = m;
    let series = metrics.take_series();
    let trace = metrics.take_trace(&summary);
    let latency_cdf = metrics.latency_cdf();
    let spans = metrics.spans(&spec.workload.spans, summary.end);
    let (tasks, cpus, locks) = metrics.finish(&summary);
    RunRecord {
        schema_version: SCHEMA_VERSION,
        schedlab_version: env!("CARGO_PKG_VERSION").to_string(),
        workload: workload_info(&spec.workload),
        scheduler,
        machine,
        kernel,
        seed: spec.seed,
        sim_ns: summary.end.0,
        end_reason: summary.reason,
        deadlock: summary.deadlock.clone(),
        events: summary.events,
        trace_hash: format!("{:016x}", summary.trace_hash),
        tasks,
        cpus,
        locks,
        policy_counters: summary.policy_counters.iter().cloned().collect(),
        latency_cdf,
        spans,
        groups: summary.groups.iter().map(schedlab_metrics::GroupRecord::of).collect(),
        trace,
        explained: None,
        series,
        warnings: Vec::new(),
        host: HostInfo::measured(wall_s, summary.events),
    }
}

/// The workload's name, file and parameter values.
pub fn workload_info(wl: &Workload) -> WorkloadInfo {
    let params = wl
        .params
        .iter()
        .map(|(k, v)| {
            let v = match v {
                ParamValue::Int(i) => Param::Int(*i),
                ParamValue::Text(t) => Param::Text(t.clone()),
            };
            (k.clone(), v)
        })
        .collect();
    WorkloadInfo { name: wl.name.clone(), file: wl.file.clone(), params }
}

/// A described machine as the record shows it.
pub fn machine_info(m: &Machine) -> MachineInfo {
    let t = &m.topology;
    MachineInfo {
        name: m.name.clone(),
        cpus: m.nr_cpus(),
        hz: Some(m.hz),
        topology: TopologyInfo {
            nodes: t.nodes,
            llcs_per_node: t.llcs_per_node,
            cores_per_llc: t.cores_per_llc,
            threads_per_core: t.threads_per_core,
        },
        cost_model: Some(m.cost_model.name().to_string()),
        noise: Some(m.noise.summary()),
        costs: m.costs.fields().into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
    }
}

/// JSON of a record without its `host` key: what must be identical between two runs.
pub fn deterministic_json(r: &RunRecord) -> String {
    let mut v = serde_json::to_value(r).expect("serialisable");
    v.as_object_mut().expect("object").remove("host");
    serde_json::to_string_pretty(&v).expect("serialisable")
}
