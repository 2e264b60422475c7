//! The simulator backend: the kernel model (`schedlab-kernel`) under a policy of
//! `schedlab-policies`, observed by a `Metrics` probe.

use crate::record::{self, Measured};
use crate::{RunError, RunRecord, RunSpec};
use schedlab_kernel::{FutexConfig, Kernel, KernelConfig};
use schedlab_metrics::{KernelInfo, SchedulerInfo};
use schedlab_probe::{Probe, RunSummary};
use schedlab_sched_api::SchedClass;
use schedlab_sim::Ns;

/// Simulates `spec` and assembles its record.
pub(crate) fn run(spec: &RunSpec, keep_going: &mut dyn FnMut(Ns) -> bool) -> Result<RunRecord, RunError> {
    let policy = make_policy(spec)?;
    let scheduler = SchedulerInfo {
        name: spec.sched.clone(),
        tunables: policy.tunables().into_iter().map(|t| (t.name.to_string(), t.value)).collect(),
        sets: spec.sets.clone(),
    };
    let mut metrics = record::metrics(spec);
    #[allow(clippy::disallowed_methods)] // host timing, reported under `host` only
    let wall = std::time::Instant::now();
    let summary = simulate(spec, policy, &mut metrics, keep_going)?;
    let wall_s = wall.elapsed().as_secs_f64();
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
    Ok(record::assemble(spec, Measured { scheduler, machine, kernel, summary, metrics, wall_s }))
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
