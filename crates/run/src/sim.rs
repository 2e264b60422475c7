//! The simulator backend: the kernel model (`schedlab-kernel`) under a policy of
//! `schedlab-policies`, observed by a `Metrics` probe (and the caller's, through
//! [`crate::RunOptions`]).

use crate::record::{self, Measured};
use crate::{RunError, RunOptions, RunOutput, RunSpec};
use schedlab_kernel::{Kernel, SimParams};
use schedlab_metrics::explain::Explainer;
use schedlab_metrics::{KernelInfo, SchedulerInfo};
use schedlab_probe::{Probe, RunSummary};
use schedlab_sched_api::SchedClass;
use schedlab_sim::Ns;

/// Waits each task keeps explained for the HTML report (`RunSpec::explain`).
const REPORT_WORST: usize = 3;

/// Simulates `spec` with `opts` and assembles its record.
pub(crate) fn run(
    spec: &RunSpec,
    opts: RunOptions<'_>,
    keep_going: &mut dyn FnMut(Ns) -> bool,
) -> Result<RunOutput, RunError> {
    let RunOptions { probe, policy, explain, keep_summary } = opts;
    let policy = match policy {
        Some(p) => p,
        None => make_policy(spec)?,
    };
    // An explanation the caller asks for, else the report's (every task's worst few waits,
    // and every wait when the events are kept for the trace's wait slices) into the record.
    let into_record = explain.is_none() && spec.explain;
    let explain = explain.or_else(|| {
        let all = spec.trace;
        into_record.then(|| crate::ExplainOptions { worst: REPORT_WORST, focus: Box::new(move |_: &str| all) })
    });
    let mut explainer = explain.map(|e| Explainer::new(spec.machine.nr_cpus(), e.worst, e.focus));
    let mut extra: Vec<&mut dyn Probe> = Vec::with_capacity(2);
    if let Some(p) = probe {
        extra.push(p);
    }
    if let Some(e) = explainer.as_mut() {
        extra.push(e);
    }
    let observed = observe(spec, policy, extra, keep_going)?;
    let explained = explainer.map(|e| e.finish(&observed.summary));
    let summary = keep_summary.then(|| observed.summary.clone());
    let mut record = observed.into_record(spec);
    if into_record {
        record.explained = explained.map(Box::new);
        return Ok(RunOutput { record, explained: None, summary });
    }
    Ok(RunOutput { record, explained, summary })
}

/// Checks what a run would refuse at its start (the scheduler's name, its tunables) without
/// running it.
pub(crate) fn validate(spec: &RunSpec) -> Result<(), RunError> {
    make_policy(spec).map(drop)
}

fn make_policy(spec: &RunSpec) -> Result<Box<dyn SchedClass>, RunError> {
    if let Some((k, _)) = spec.sets.iter().find(|(k, _)| schedlab_kernel::is_switch(k)) {
        return Err(RunError::Input(format!(
            "`{k}` is a kernel switch, not a tunable of the policy: set it with RunSpec::set"
        )));
    }
    schedlab_policies::make_policy(&spec.sched, &spec.machine, &spec.sets).map_err(RunError::Input)
}

/// What a simulation measured, before it becomes a record.
struct Observed {
    scheduler: SchedulerInfo,
    kernel: KernelInfo,
    warnings: Vec<String>,
    summary: RunSummary,
    metrics: schedlab_metrics::Metrics,
    wall_s: f64,
}

impl Observed {
    fn into_record(self, spec: &RunSpec) -> crate::RunRecord {
        let Observed { scheduler, kernel, warnings, summary, metrics, wall_s } = self;
        let machine = record::machine_info(&spec.machine);
        let mut rec = record::assemble(spec, Measured { scheduler, machine, kernel, summary, metrics, wall_s });
        rec.warnings.extend(warnings);
        rec
    }
}

fn observe(
    spec: &RunSpec,
    policy: Box<dyn SchedClass>,
    extra: Vec<&mut dyn Probe>,
    keep_going: &mut dyn FnMut(Ns) -> bool,
) -> Result<Observed, RunError> {
    let mut scheduler = SchedulerInfo {
        name: spec.sched.clone(),
        tunables: policy.tunables().into_iter().map(|t| (t.name.to_string(), t.value)).collect(),
        exit: None,
        sets: spec.sets.clone(),
    };
    let at = schedlab_kernel::RunsOn::new(policy.as_ref(), &spec.machine);
    let params = SimParams {
        end: spec.end,
        seed: spec.seed,
        check_invariants: spec.check,
        max_tasks: schedlab_workload::MAX_TASKS,
    };
    let mut metrics = record::metrics(spec);
    let wall = WallClock::start();
    let (summary, effective) = if extra.is_empty() {
        simulate(spec, policy, params, &mut metrics, keep_going)?
    } else {
        simulate(spec, policy, params, &mut crate::tee::Tee { metrics: &mut metrics, extra }, keep_going)?
    };
    let wall_s = wall.elapsed_s();
    scheduler.exit = summary.policy_exit.clone();
    let kernel = KernelInfo {
        ttwu_queue: Some(effective.ttwu_queue),
        version: Some(effective.version.name().to_string()),
        delayed_wakeup: Some(effective.delayed_wakeup),
        lb_narrow_lock: Some(effective.lb_narrow_lock),
        switches: effective.values().into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        changed: spec.kernel.changed(at),
        invariants_checked: spec.check,
        counters: summary.kernel_counters.clone(),
        ..KernelInfo::default()
    };
    let mut warnings = spec.kernel.ineffective(at);
    warnings.extend(summary.notes.iter().cloned());
    Ok(Observed { scheduler, kernel, warnings, summary, metrics, wall_s })
}

fn simulate(
    spec: &RunSpec,
    policy: Box<dyn SchedClass>,
    params: SimParams,
    probe: &mut dyn Probe,
    keep_going: &mut dyn FnMut(Ns) -> bool,
) -> Result<(RunSummary, schedlab_kernel::KernelConfig), RunError> {
    let mut k = Kernel::new(spec.machine.clone(), spec.workload.clone(), policy, spec.kernel.clone(), params, probe)?;
    let effective = k.config().clone();
    Ok((k.run(keep_going)?, effective))
}

/// The wall-clock time a run took, reported under the record's `host` key only.
/// `wasm32-unknown-unknown` has no clock (`Instant::now` panics there): the page times its
/// runs itself, and the record says 0 s.
struct WallClock(#[cfg(not(target_arch = "wasm32"))] std::time::Instant);

impl WallClock {
    fn start() -> WallClock {
        #[cfg(not(target_arch = "wasm32"))]
        #[allow(clippy::disallowed_methods)] // host timing, reported under `host` only
        return WallClock(std::time::Instant::now());
        #[cfg(target_arch = "wasm32")]
        return WallClock();
    }

    fn elapsed_s(&self) -> f64 {
        #[cfg(not(target_arch = "wasm32"))]
        return self.0.elapsed().as_secs_f64();
        #[cfg(target_arch = "wasm32")]
        return 0.0;
    }
}
