//! Assembling a [`RunRecord`] from what a backend measured, shared by every backend.

use crate::{RunRecord, RunSpec};
use schedlab_metrics::{Metrics, SCHEMA_VERSION};
use schedlab_probe::RunSummary;
use schedlab_workload::ParamValue;
use serde_json::json;

/// The record of a finished run: `tunables` are the policy's effective values in its order,
/// `wall_s` the run's wall-clock time.
pub(crate) fn assemble(
    spec: &RunSpec,
    tunables: Vec<(String, String)>,
    summary: &RunSummary,
    mut metrics: Metrics,
    wall_s: f64,
) -> RunRecord {
    let series = metrics.take_series();
    let trace = metrics.take_trace(summary);
    let latency_cdf = metrics.latency_cdf();
    let (tasks, cpus, locks) = metrics.finish(summary);
    let tunables: serde_json::Map<String, serde_json::Value> =
        tunables.into_iter().map(|(k, v)| (k, json!(v))).collect();
    let m = &spec.machine;
    let topo = &m.topology;
    let params: serde_json::Map<String, serde_json::Value> = spec
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
    RunRecord {
        schema_version: SCHEMA_VERSION,
        schedlab_version: env!("CARGO_PKG_VERSION").to_string(),
        workload: json!({ "name": spec.workload.name, "file": spec.workload.file, "params": params }),
        scheduler: json!({ "name": spec.sched, "tunables": tunables }),
        machine: json!({
            "name": m.name, "cpus": m.nr_cpus(), "hz": m.hz,
            "topology": { "nodes": topo.nodes, "llcs_per_node": topo.llcs_per_node,
                          "cores_per_llc": topo.cores_per_llc, "threads_per_core": topo.threads_per_core },
            "costs": m.costs.fields().into_iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
        }),
        kernel: json!({ "ttwu_queue": spec.ttwu_queue }),
        seed: spec.seed,
        sim_ns: summary.end.0,
        end_reason: summary.reason.as_str().to_string(),
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
    }
}

/// JSON of a record without its `host` key: what must be identical between two runs.
pub fn deterministic_json(r: &RunRecord) -> String {
    let mut v = serde_json::to_value(r).expect("serialisable");
    v.as_object_mut().expect("object").remove("host");
    serde_json::to_string_pretty(&v).expect("serialisable")
}
