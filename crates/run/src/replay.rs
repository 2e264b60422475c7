//! Trace replay: a recorded trace imported as a workload (`schedlab-trace-import`), and
//! the trace's own measurements — "as it happened" — as a [`RunRecord`] built by the same
//! `Metrics` probe and [`record::assemble`] as a simulation's, so the two compare field by
//! field. `docs/replay.md` describes the import.

use crate::record::{self, Measured};
use crate::{RunError, RunRecord, RunSpec};
use schedlab_machine::CpuSet;
use schedlab_metrics::{KernelInfo, SchedulerInfo};
use schedlab_probe::{EndReason, Probe, RunSummary};
use schedlab_sched_api::{TaskInfo, TaskPolicy};
use schedlab_sim::Ns;
use schedlab_trace_import::model::{self, Model, Options};
use schedlab_trace_import::{emit, probe, Trace};

/// The scheduler name of the "as it happened" record.
pub const AS_HAPPENED: &str = "trace";

/// A trace read and turned into a workload.
pub struct Imported {
    pub trace: Trace,
    pub model: Model,
    /// The workload file's text.
    pub text: String,
}

/// Reads a trace file and infers its workload; `name` becomes the workload's name.
pub fn import_file(path: &std::path::Path, opts: &Options) -> Result<Imported, RunError> {
    import_file_with(path, opts, &|| true)
}

/// [`import_file`], stopped (an `interrupted` error) once `keep_going` says so: it is asked
/// throughout reading, modelling and writing the workload.
pub fn import_file_with(
    path: &std::path::Path,
    opts: &Options,
    keep_going: schedlab_trace_import::KeepGoing,
) -> Result<Imported, RunError> {
    use std::io::Read;
    let file = path.display().to_string();
    let io = |source| RunError::Io { path: file.clone(), source };
    let f = std::fs::File::open(path).map_err(io)?;
    if f.metadata().map_err(io)?.is_dir() {
        return Err(RunError::Input(format!("{file}: is a directory; expected a trace file")));
    }
    let max = schedlab_trace_import::MAX_TRACE_BYTES;
    let mut bytes = Vec::new();
    f.take(max as u64 + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() > max {
        return Err(RunError::Limit(format!("{file} is larger than {} MiB", max >> 20)));
    }
    import_bytes_with(&file, &bytes, opts, keep_going)
}

/// [`import_file`] of bytes already read.
pub fn import_bytes(file: &str, bytes: &[u8], opts: &Options) -> Result<Imported, RunError> {
    import_bytes_with(file, bytes, opts, &|| true)
}

/// [`import_bytes`], stopped once `keep_going` says so.
pub fn import_bytes_with(
    file: &str,
    bytes: &[u8],
    opts: &Options,
    keep_going: schedlab_trace_import::KeepGoing,
) -> Result<Imported, RunError> {
    let trace =
        schedlab_trace_import::read_with(file, bytes, keep_going).map_err(|e| RunError::Input(e.to_string()))?;
    let model = model::build_with(&trace, opts, keep_going)
        .map_err(|_| RunError::Input(format!("{file}: interrupted while modelling the trace")))?;
    if model.threads.is_empty() {
        return Err(RunError::Input(format!("{file}: no thread of the trace is kept (check --only)")));
    }
    let name = std::path::Path::new(file).file_stem().map_or("trace".into(), |s| s.to_string_lossy().into_owned());
    let text = emit::workload_with(&model, &trace, file, &name, keep_going).map_err(|e| match e.interrupted {
        true => RunError::Input(e.to_string()),
        false => RunError::Limit(e.to_string()),
    })?;
    Ok(Imported { trace, model, text })
}

fn task_info(m: &Model, i: usize, nr_cpus: usize) -> TaskInfo {
    let t = &m.threads[i];
    let (nice, policy) = match t.prio {
        Some(p @ 0..=99) => (0, TaskPolicy::Fifo { prio: (99 - p).clamp(1, 99) as u8 }),
        Some(p @ 100..=139) => (p - 120, TaskPolicy::Normal),
        _ => (0, TaskPolicy::Normal),
    };
    TaskInfo {
        // The simulator names a forked template's instance `name.0`.
        name: if t.parent.is_some() { format!("{}.0", t.name) } else { t.name.clone() },
        nice,
        policy,
        affinity: CpuSet::full(nr_cpus),
        cpu: t.cpus.first().map_or(0, |&c| c as usize),
        parent: t.parent.into(),
        cgroup: schedlab_sched_api::OptIdx::NONE,
        session: schedlab_sched_api::OptIdx::NONE,
        slice: None,
        kthread: false,
        uclamp: Default::default(),
        core_cookie: 0,
    }
}

/// The trace's own record: what happened, measured like a run of `spec` (the imported
/// workload on its machine). CPU time of threads left out counts as `other`.
pub fn as_happened(spec: &RunSpec, imp: &Imported) -> RunRecord {
    as_happened_with(spec, imp, &|| true)
}

/// [`as_happened`], ended early once `keep_going` says so: the record of the trace up to
/// then, `interrupted` as an interrupted run's is.
pub fn as_happened_with(spec: &RunSpec, imp: &Imported, keep_going: schedlab_trace_import::KeepGoing) -> RunRecord {
    // The observation is the long part (one pass over the trace); feeding what it saw to
    // the metrics is a fraction of it.
    let obs = probe::observe_with(&imp.trace, &imp.model, keep_going);
    let mut metrics = record::metrics(spec);
    let n = imp.model.threads.len();
    metrics.reserve_tasks(n);
    for e in &obs.events {
        metrics.event(e);
    }
    let all_exited = obs.exit_times.iter().all(Option::is_some);
    let summary = RunSummary {
        notes: Vec::new(),
        end: obs.end,
        reason: match (obs.interrupted, all_exited) {
            (true, _) => EndReason::Interrupted,
            (false, true) => EndReason::AllExited,
            (false, false) => EndReason::TimeLimit,
        },
        events: obs.events.len() as u64,
        trace_hash: 0,
        cpu_times: obs.cpu_time.iter().map(|c| [Ns(c[0]), Ns(0), Ns(0), Ns(c[1] + c[2])]).collect(),
        cpu_paths: Vec::new(),
        locks: Vec::new(),
        tasks: (0..n).map(|i| task_info(&imp.model, i, obs.nr_cpus)).collect(),
        exit_times: obs.exit_times.clone(),
        core_forceidle: Vec::new(),
        policy_counters: Vec::new(),
        groups: Vec::new(),
        policy_exit: None,
        kernel_counters: Vec::new(),
        deadlock: Vec::new(),
        costs: Default::default(),
    };
    let measured = Measured {
        scheduler: SchedulerInfo { name: AS_HAPPENED.into(), ..SchedulerInfo::default() },
        machine: record::machine_info(&spec.machine),
        kernel: KernelInfo::default(),
        summary,
        metrics,
        wall_s: 0.0,
    };
    let mut r = record::assemble(spec, measured);
    for (c, t) in r.cpus.iter_mut().zip(&obs.cpu_time) {
        c.idle_ns = t[2];
        c.other_ns = t[1];
    }
    r.trace_hash = "recorded".into();
    r
}
