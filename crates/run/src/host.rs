//! The host backend: runs the workload on this machine's real kernel (`schedlab-host`) and
//! feeds the events of its `sched:*` tracepoints to the same `Metrics` probe the simulator
//! uses. Selected by the scheduler name `host` ([`crate::Backend::Host`]);
//! `docs/host-runs.md` describes it.

use crate::record::{self, Measured};
use crate::{Backend, RunError, RunRecord, RunSpec};
use schedlab_host::{HostConfig, HostRun};
use schedlab_machine::{Costs, Machine, Topology};
use schedlab_metrics::{
    CpuRecord, KernelInfo, MachineInfo, RealRunInfo, SchedulerInfo, TaskRecord, TopologyInfo, TracingInfo,
};
use schedlab_sim::Ns;

/// `--machine host`: this host's online CPUs as a flat machine (one LLC, no SMT), so a
/// simulation compared with a host run has as many CPUs.
pub fn host_machine() -> Machine {
    let n = schedlab_host::online_cpus();
    Machine::new(Backend::HOST_SCHEDULER, 250, Topology::new(1, 1, n, 1, None), Costs::default())
}

/// The machine of a host run is the host itself: a spec whose machine has another CPU count
/// (a workload's `machine = "smp8"` on a 2-CPU host) is refused, not silently mapped.
fn check_spec(spec: &RunSpec) -> Result<(), RunError> {
    let host = schedlab_host::online_cpus();
    let m = &spec.machine;
    if m.nr_cpus() != host {
        return Err(RunError::Input(format!(
            "a host run uses this machine ({host} CPUs), but the run's machine `{}` has {} CPUs; \
             pass --machine host (or a {host}-CPU machine) to run this workload here",
            m.name,
            m.nr_cpus()
        )));
    }
    simulation_only_switches(spec)?;
    if m.cost_model != schedlab_machine::CostModel::default() {
        return Err(RunError::Input(format!(
            "machine.cost_model={} is simulation-only: a host run pays this machine's own costs",
            m.cost_model.name()
        )));
    }
    if m.noise.is_none() {
        return Err(RunError::Input("--noise none is simulation-only: a host run has the host's own noise".into()));
    }
    if let Some((k, _)) = spec.sets.first() {
        return Err(RunError::Input(format!(
            "--set {k}: a host run uses the kernel's own scheduler, whose tunables schedlab does not change"
        )));
    }
    Ok(())
}

/// The kernel-model switches change what the *simulated* kernel does; a host run uses this
/// machine's own kernel, so asking for them is refused rather than silently ignored.
fn simulation_only_switches(spec: &RunSpec) -> Result<(), RunError> {
    let default = schedlab_kernel::KernelConfig::default().values();
    let asked = spec.kernel.values().into_iter().zip(default).find(|(a, d)| a.1 != d.1);
    match asked {
        Some(((name, value), _)) => Err(RunError::Input(format!(
            "{name}={value} is simulation-only: it changes the simulated kernel, and a host run uses this machine's own kernel"
        ))),
        None => Ok(()),
    }
}

/// Runs `spec` on the host kernel; `keep_going` is polled with the elapsed run time.
pub(crate) fn run(
    spec: &RunSpec,
    opts: crate::RunOptions<'_>,
    keep_going: &mut dyn FnMut(Ns) -> bool,
) -> Result<crate::RunOutput, RunError> {
    check_spec(spec)?;
    if opts.policy.is_some() || opts.explain.is_some() || spec.explain {
        return Err(RunError::Input(
            "explanations and a policy of one's own need the simulator: the real kernel records no decisions".into(),
        ));
    }
    let cfg = HostConfig {
        duration: spec.end,
        seed: spec.seed,
        tracing: spec.host_tracing,
        max_tasks: schedlab_host::MAX_TASKS,
        boost: spec.host_boost.then_some(schedlab_host::autogroup::BOOST_NICE),
    };
    // What the host cannot do is refused before anything starts.
    schedlab_host::check(&spec.workload, &cfg).map_err(|e| RunError::Input(e.0))?;
    let mut metrics = record::metrics(spec);
    #[allow(clippy::disallowed_methods)] // a real run: wall time is reported under `host`
    let wall = std::time::Instant::now();
    let keep_summary = opts.keep_summary;
    let hr = match opts.probe {
        None => schedlab_host::run(spec.workload.clone(), &cfg, &mut metrics, keep_going),
        Some(p) => {
            let mut tee = crate::tee::Tee { metrics: &mut metrics, extra: vec![p] };
            schedlab_host::run(spec.workload.clone(), &cfg, &mut tee, keep_going)
        }
    }
    .map_err(|e| RunError::Host(e.0))?;
    let wall_s = wall.elapsed().as_secs_f64();
    let measured = Measured {
        scheduler: scheduler_info(&hr),
        machine: machine_info(&hr),
        kernel: KernelInfo {
            ttwu_queue: None,
            release: Some(hr.info.kernel_release.clone()),
            settings: vec![("version".into(), hr.info.kernel_version.clone())],
            ..KernelInfo::default()
        },
        summary: hr.summary.clone(),
        metrics,
        wall_s,
    };
    let summary = keep_summary.then(|| measured.summary.clone());
    let mut r = record::assemble(spec, measured);
    complete(&mut r, &hr);
    Ok(crate::RunOutput { record: r, explained: None, summary })
}

fn scheduler_info(hr: &HostRun) -> SchedulerInfo {
    SchedulerInfo {
        exit: None,
        name: Backend::HOST_SCHEDULER.into(),
        tunables: hr.info.settings.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        ..SchedulerInfo::default()
    }
}

fn machine_info(hr: &HostRun) -> MachineInfo {
    let n = hr.info.online_cpus;
    MachineInfo {
        name: Backend::HOST_SCHEDULER.into(),
        cpus: n,
        hz: hr.info.hz.map(|h| h as u32),
        topology: TopologyInfo { nodes: 1, llcs_per_node: 1, cores_per_llc: n, threads_per_core: 1 },
        cost_model: None,
        noise: None,
        costs: Vec::new(),
    }
}

/// What the generic assembly cannot know: procfs counters over the trace's, the CPU split
/// with other threads' time, nothing invented without a trace, how the run was observed.
fn complete(r: &mut RunRecord, hr: &HostRun) {
    let traced = hr.tracing.enabled;
    let trace_runtime: u64 = r.tasks.iter().map(|t| t.runtime_ns).sum();
    if !traced {
        // Without events the probe only saw the tasks appear; what it would infer from
        // that (all time asleep) is not a measurement.
        r.series = None;
        r.trace = None;
        for t in &mut r.tasks {
            t.sleep_ns = 0;
            t.wakeups = 0;
        }
    }
    apply_procfs(&mut r.tasks, hr);
    if let Some(split) = &hr.cpu_split {
        r.cpus = split
            .iter()
            .enumerate()
            .map(|(cpu, s)| CpuRecord {
                cpu,
                user_ns: s.ours,
                kernel_ns: 0,
                spin_ns: 0,
                idle_ns: s.idle,
                other_ns: s.other,
                kernel_paths: Vec::new(),
                kernel_path_lines: Vec::new(),
                costs: None,
                idle_states: Vec::new(),
                freq: None,
                energy: None,
            })
            .collect();
    }
    // Doubts about the measurement itself (trace against procfs, a boost refused) are the
    // reader's to know, in every output (`--strict` makes them fail the command).
    r.warnings.extend(hr.warnings.iter().cloned());
    r.trace_hash = "not-deterministic".into();
    let t = &hr.tracing;
    r.host.real = Some(RealRunInfo {
        tracing: TracingInfo {
            enabled: t.enabled,
            unavailable: t.unavailable.clone(),
            instance: t.instance.clone(),
            records: t.records,
            events: t.events,
            missed_pages: t.missed_pages,
            overruns: t.overruns,
        },
        notes: hr.notes.clone(),
        task_processes: hr.task_processes,
        runtime_ns_procfs: hr.procfs.iter().flatten().map(|s| s.runtime_ns).sum(),
        runtime_ns_trace: if traced { trace_runtime } else { 0 },
        hz_source: hr.info.hz_source.clone(),
        unreadable: hr.info.unreadable.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
    });
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
