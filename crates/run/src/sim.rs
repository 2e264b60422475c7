//! The simulator backend: the kernel model (`schedlab-kernel`) under a policy of
//! `schedlab-policies`, observed by a `Metrics` probe.

use crate::record::{self, Measured};
use crate::{RunError, RunRecord, RunSpec};
use schedlab_kernel::{FutexConfig, Kernel, KernelConfig};
use schedlab_metrics::explain::{Explained, Explainer};
use schedlab_metrics::{KernelInfo, SchedulerInfo};
use schedlab_probe::{Probe, RunSummary};
use schedlab_sched_api::SchedClass;
use schedlab_sim::Ns;

/// Simulates `spec` and assembles its record.
pub(crate) fn run(spec: &RunSpec, keep_going: &mut dyn FnMut(Ns) -> bool) -> Result<RunRecord, RunError> {
    Ok(run_observed(spec, make_policy(spec)?, None, keep_going)?.0)
}

/// Simulates `spec` under a sched_ext policy the caller built (one written in Python,
/// through `schedlab-py`) and assembles its record as [`RunSpec::run`] does; `spec.sched`
/// is only the name the record gives it. `spec.sets` go to [`schedlab_policies::ext::build`]
/// (the ext class's keys, the fair class below it) except the kernel's switches.
pub fn run_ext_record(
    spec: &RunSpec,
    ops: Box<dyn schedlab_policies::ext::ScxOps>,
    keep_going: &mut dyn FnMut(Ns) -> bool,
) -> Result<RunRecord, RunError> {
    spec.check_limits()?;
    futex_config(spec)?;
    let sets: Vec<(String, String)> = spec.sets.iter().filter(|(k, _)| !is_kernel_switch(k)).cloned().collect();
    let policy = schedlab_policies::ext::build(&spec.machine, &sets, ops).map_err(RunError::Input)?;
    Ok(run_observed(spec, policy, None, keep_going)?.0)
}

/// Simulates `spec` with decision records on, explained by an [`Explainer`] focused on the
/// tasks whose names `focus` accepts, keeping each task's `worst` longest waits. The record
/// is the one [`RunSpec::run`] returns: recording changes no result.
pub fn run_explained(
    spec: &RunSpec,
    worst: usize,
    focus: Box<dyn Fn(&str) -> bool>,
    keep_going: &mut dyn FnMut(Ns) -> bool,
) -> Result<(RunRecord, Explained), RunError> {
    spec.check_limits()?;
    if spec.backend() != crate::Backend::Sim {
        return Err(RunError::Input("explanations need the simulator: the real kernel records no decisions".into()));
    }
    let mut ex = Some(Explainer::new(spec.machine.nr_cpus(), worst, focus));
    let rec = run_observed(spec, make_policy(spec)?, ex.as_mut().map(|e| e as &mut dyn Probe), keep_going)?;
    let ex = ex.take().expect("still here");
    let explained = ex.finish(rec.1.as_ref().expect("kept when explaining"));
    Ok((rec.0, explained))
}

/// Waits each task keeps explained for the HTML report.
const REPORT_WORST: usize = 3;

/// [`run_explained`] for the HTML report and the Perfetto trace: the explanation goes into
/// the record, with every task's waits when the events are kept (the trace's wait slices).
pub(crate) fn run_into_record(spec: &RunSpec, keep_going: &mut dyn FnMut(Ns) -> bool) -> Result<RunRecord, RunError> {
    let all = spec.trace;
    let (mut rec, ex) = run_explained(spec, REPORT_WORST, Box::new(move |_: &str| all), keep_going)?;
    rec.explained = Some(Box::new(ex));
    Ok(rec)
}

/// Metrics plus a second probe, each seeing every event and decision.
struct Tee<'a> {
    a: &'a mut dyn Probe,
    b: &'a mut dyn Probe,
}

impl Probe for Tee<'_> {
    fn event(&mut self, ev: &schedlab_probe::ProbeEvent) {
        self.a.event(ev);
        self.b.event(ev);
    }
    fn sample(&mut self, view: &schedlab_probe::SampleView) {
        self.a.sample(view);
    }
    fn sample_every(&self) -> Option<Ns> {
        self.a.sample_every()
    }
    fn reserve_tasks(&mut self, n: usize) {
        self.a.reserve_tasks(n);
        self.b.reserve_tasks(n);
    }
    fn wants_decisions(&self) -> bool {
        self.a.wants_decisions() || self.b.wants_decisions()
    }
    fn wants_cpu_modes(&self) -> bool {
        self.a.wants_cpu_modes() || self.b.wants_cpu_modes()
    }
    fn decision(&mut self, time: Ns, d: &schedlab_sched_api::Decision) {
        self.a.decision(time, d);
        self.b.decision(time, d);
    }
}

fn run_observed(
    spec: &RunSpec,
    policy: Box<dyn SchedClass>,
    extra: Option<&mut dyn Probe>,
    keep_going: &mut dyn FnMut(Ns) -> bool,
) -> Result<(RunRecord, Option<RunSummary>), RunError> {
    let mut scheduler = SchedulerInfo {
        name: spec.sched.clone(),
        tunables: policy.tunables().into_iter().map(|t| (t.name.to_string(), t.value)).collect(),
        exit: None,
        sets: spec.sets.clone(),
    };
    let mut metrics = record::metrics(spec);
    #[allow(clippy::disallowed_methods)] // host timing, reported under `host` only
    let wall = std::time::Instant::now();
    let explaining = extra.is_some();
    let summary = match extra {
        None => simulate(spec, policy, &mut metrics, keep_going)?,
        Some(b) => simulate(spec, policy, &mut Tee { a: &mut metrics, b }, keep_going)?,
    };
    let wall_s = wall.elapsed().as_secs_f64();
    scheduler.exit = summary.policy_exit.clone();
    let kernel = KernelInfo {
        ttwu_queue: Some(spec.ttwu_queue && spec.kernel.has_wake_list()),
        version: Some(spec.kernel.name().to_string()),
        delayed_wakeup: Some(spec.delayed_wakeup),
        lb_narrow_lock: Some(spec.lb_narrow_lock),
        invariants_checked: spec.check,
        counters: summary.kernel_counters.clone(),
        ..KernelInfo::default()
    };
    let machine = record::machine_info(&spec.machine);
    // Only an explanation needs the summary afterwards (task names, the end).
    let keep = explaining.then(|| summary.clone());
    Ok((record::assemble(spec, Measured { scheduler, machine, kernel, summary, metrics, wall_s }), keep))
}

/// Simulates `spec` with a caller's probe instead of `Metrics`: for tests and tools that
/// watch individual events. The trace hash is the same whatever the probe.
pub fn run_with_probe(
    spec: &RunSpec,
    probe: &mut dyn Probe,
    keep_going: &mut dyn FnMut(Ns) -> bool,
) -> Result<RunSummary, RunError> {
    spec.check_limits()?;
    simulate(spec, make_policy(spec)?, probe, keep_going)
}

/// Simulates `spec` under a policy the caller built (a sched_ext policy of its own,
/// `schedlab_policies::ext::build`) instead of the one `spec.sched` names.
pub fn run_with_policy(
    spec: &RunSpec,
    policy: Box<dyn SchedClass>,
    probe: &mut dyn Probe,
    keep_going: &mut dyn FnMut(Ns) -> bool,
) -> Result<RunSummary, RunError> {
    spec.check_limits()?;
    simulate(spec, policy, probe, keep_going)
}

/// Checks what a run would refuse at its start (the scheduler's name, its tunables, the
/// kernel switches) without running it.
pub(crate) fn validate(spec: &RunSpec) -> Result<(), RunError> {
    make_policy(spec)?;
    futex_config(spec)?;
    Ok(())
}

fn make_policy(spec: &RunSpec) -> Result<Box<dyn SchedClass>, RunError> {
    let sets: Vec<(String, String)> = spec.sets.iter().filter(|(k, _)| !is_kernel_switch(k)).cloned().collect();
    schedlab_policies::make_policy(&spec.sched, &spec.machine, &sets).map_err(RunError::Input)
}

/// `--set` names the kernel model takes rather than the policy (`futex.*`).
pub(crate) fn is_kernel_switch(name: &str) -> bool {
    name.starts_with("futex.")
}

/// The kernel's futex switches from `spec.sets`.
fn futex_config(spec: &RunSpec) -> Result<FutexConfig, RunError> {
    let mut c = FutexConfig::default();
    for (k, v) in spec.sets.iter().filter(|(k, _)| is_kernel_switch(k)) {
        c.set(k, v).map_err(RunError::Input)?;
    }
    Ok(c)
}

fn simulate(
    spec: &RunSpec,
    policy: Box<dyn SchedClass>,
    probe: &mut dyn Probe,
    keep_going: &mut dyn FnMut(Ns) -> bool,
) -> Result<RunSummary, RunError> {
    let cfg = KernelConfig {
        ttwu_queue: spec.ttwu_queue,
        version: spec.kernel,
        delayed_wakeup: spec.delayed_wakeup,
        lb_narrow_lock: spec.lb_narrow_lock,
        check_invariants: spec.check,
        end: spec.end,
        seed: spec.seed,
        max_tasks: schedlab_workload::MAX_TASKS,
        futex: futex_config(spec)?,
    };
    let mut k = Kernel::new(spec.machine.clone(), spec.workload.clone(), policy, cfg, probe)?;
    Ok(k.run(keep_going)?)
}
