//! A run: one workload on one machine under one scheduler, executed by a backend and
//! summarised as a [`RunRecord`].
//!
//! This is the seam the simulator, the host (real-kernel) backend, the CLI and language
//! bindings share: [`RunSpec`] says what to run, [`RunSpec::run`] picks the [`Backend`] from
//! the scheduler name and returns the record, [`RunError`] says what went wrong.
//!
//! ```
//! use schedlab_run::{RunError, RunSpec};
//! let text = "[[task]]\nname = \"t\"\nprogram = [ { run = \"1ms\" } ]\n";
//! let mut spec = RunSpec::load("w.toml", text, Some("smp2"), &[], None)?;
//! spec.sched = "ule".into();
//! let record = spec.run(&mut |_now| true)?;
//! assert!(record.tasks[0].runtime_ns >= 1_000_000);
//! # Ok::<(), RunError>(())
//! ```
//!
//! Architecture Invariant: every backend produces the same [`RunRecord`] from the same
//! vocabulary: it emits `schedlab_probe` events into a `Metrics` probe and ends with a
//! `RunSummary`; [`record`] assembles the record. Renderers never know which backend ran.
//! Architecture Invariant: this crate and `cli` are the only ones touching the OS: here,
//! machine files and the wall-clock time of a run (the record's `host` key).

#![forbid(unsafe_code)]

mod error;
pub mod fuzz;
pub mod fuzz_input;
#[cfg(not(target_arch = "wasm32"))]
mod host;
// wasm32 (the browser playground) has no host kernel: the host backend is unavailable.
#[cfg(target_arch = "wasm32")]
#[path = "no_host.rs"]
mod host;
mod input;
pub mod parallel;
pub mod record;
pub mod replay;
mod sched_check;
pub mod sim;
mod tee;

pub use error::RunError;
pub use input::{
    default_schedulers, load_machine, machine_for, read_input, workload_machine_hint, DEFAULT_COMPARE,
    DEFAULT_SCHEDULER, MAX_INPUT_BYTES,
};
pub use record::deterministic_json;
pub use sched_check::check_scheduler;
pub use schedlab_kernel::{KernelConfig, KernelVersion, PROGRESS_EVENTS, SWITCHES};
pub use schedlab_metrics::RunRecord;

use schedlab_machine::Machine;
use schedlab_sim::Ns;
use schedlab_workload::Workload;
/// Longest run accepted (defined with the workload language, whose `duration` it bounds).
pub use schedlab_workload::MAX_SIM_TIME;
use std::sync::Arc;

/// Time-series samples per run, and sampled values (samples × (tasks + CPUs)).
pub const MAX_SAMPLES: u64 = 2_000_000;
pub const MAX_SERIES_VALUES: u64 = 500_000_000;
/// Machine of a workload that names none.
pub const DEFAULT_MACHINE: &str = "smp4";
/// The `--set` prefix of a machine's values ([`RunSpec::set`]).
pub const MACHINE_PREFIX: &str = "machine.";
/// Run time of a workload that gives no `duration`.
pub const DEFAULT_DURATION: Ns = Ns::from_secs(10);

/// What executes a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The discrete-event simulator (`schedlab-kernel` with a policy from `schedlab-policies`).
    Sim,
    /// The real kernel of this host, observed through its `sched:*` tracepoints.
    Host,
}

impl Backend {
    /// The scheduler name that selects the host backend.
    pub const HOST_SCHEDULER: &'static str = "host";

    /// The backend that runs scheduler `name`: `host` is the real kernel, any other name a
    /// simulated policy.
    pub fn for_scheduler(name: &str) -> Backend {
        if name == Backend::HOST_SCHEDULER {
            Backend::Host
        } else {
            Backend::Sim
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::Sim => "simulator",
            Backend::Host => "host",
        })
    }
}

/// Everything needed to run one workload under one scheduler.
#[derive(Clone)]
pub struct RunSpec {
    pub workload: Arc<Workload>,
    pub machine: Arc<Machine>,
    /// A policy of `schedlab_policies::REGISTRY`, or `host` ([`Backend::for_scheduler`]).
    pub sched: String,
    /// The policy's tunables, `name = value`, applied over its defaults (kernel switches
    /// go to [`RunSpec::kernel`]: use [`RunSpec::set`], which routes both).
    pub sets: Vec<(String, String)>,
    pub seed: u64,
    /// Run time (simulated, or wall time on the host).
    pub end: Ns,
    /// The kernel model's switches (simulator only): its version, the wake list, the
    /// runqueue-lock paper's mechanisms, the futex switches. Set by name with
    /// [`RunSpec::set`] (`kernel.*`, `futex.*`) from every front end; the record reports
    /// the effective ones ([`schedlab_kernel::KernelConfig::effective`]).
    pub kernel: schedlab_kernel::KernelConfig,
    /// Check the kernel's and the policy's invariants after every event (simulator only).
    pub check: bool,
    /// Record time series with this sampling interval.
    pub sample: Option<Ns>,
    /// Keep every scheduling event (for the Perfetto trace and the ASCII timeline).
    pub trace: bool,
    /// Explain every wait into `RunRecord::explained` (decision records on; simulator only;
    /// changes no result): each task's worst waits, and every wait when `trace` is on.
    pub explain: bool,
    /// Host runs: observe the run through the sched tracepoints (false: procfs figures
    /// only, for timings without the tracing cost on every switch and wakeup).
    pub host_tracing: bool,
    /// Host runs: raise schedlab's session autogroup for the run (`schedlab_host::autogroup`;
    /// false: `--no-boost`, left as it is, and said so in the record's notes).
    pub host_boost: bool,
}

/// What a caller adds to a run ([`RunSpec::run_with`]).
#[derive(Default)]
pub struct RunOptions<'a> {
    /// A probe beside the record's `Metrics`, seeing every event and decision record (it
    /// asks for them with `Probe::wants_decisions`). Probes observe: the trace hash is the
    /// same with or without it.
    pub probe: Option<&'a mut dyn schedlab_probe::Probe>,
    /// A policy the caller built (a sched_ext policy written in Python, a test's wrapper)
    /// instead of the one [`RunSpec::sched`] names; the record still calls it `sched`.
    /// Simulator only.
    pub policy: Option<Box<dyn schedlab_sched_api::SchedClass>>,
    /// Explain waits into [`RunOutput::explained`] (simulator only; changes no result).
    pub explain: Option<ExplainOptions>,
    /// Keep the backend's end-of-run summary (every task's final state, the kernel's and
    /// policy's counters) in [`RunOutput::summary`], for tools and tests that inspect it.
    pub keep_summary: bool,
}

/// Which waits to explain: each focused task's `worst` longest, or all of a task when the
/// events are kept.
pub struct ExplainOptions {
    pub worst: usize,
    /// Tasks (by name) whose every wait is kept, beside every task's worst.
    pub focus: Box<dyn Fn(&str) -> bool>,
}

/// What [`RunSpec::run_with`] returns.
pub struct RunOutput {
    pub record: RunRecord,
    /// The explanation [`RunOptions::explain`] asked for.
    pub explained: Option<schedlab_metrics::explain::Explained>,
    /// The run's summary, with [`RunOptions::keep_summary`].
    pub summary: Option<schedlab_probe::RunSummary>,
}

impl RunSpec {
    /// A run of `workload` on `machine` under [`DEFAULT_SCHEDULER`] for `end`, seed 1, with
    /// the defaults.
    pub fn new(workload: Workload, machine: Machine, end: Ns) -> RunSpec {
        RunSpec {
            workload: Arc::new(workload),
            machine: Arc::new(machine),
            sched: DEFAULT_SCHEDULER.into(),
            sets: Vec::new(),
            seed: 1,
            end,
            kernel: schedlab_kernel::KernelConfig::default(),
            check: false,
            sample: None,
            trace: false,
            explain: false,
            host_tracing: true,
            host_boost: true,
        }
    }

    /// Parses workload `text` (named `path` in errors) and resolves the machine (`machine`,
    /// else the workload's `machine`, else [`DEFAULT_MACHINE`]) and the run time (`duration`,
    /// else the workload's `duration`, else [`DEFAULT_DURATION`]).
    pub fn load(
        path: &str,
        text: &str,
        machine: Option<&str>,
        params: &[(String, String)],
        duration: Option<Ns>,
    ) -> Result<RunSpec, RunError> {
        RunSpec::load_until(path, text, machine, params, duration, &mut || false)
    }

    /// [`RunSpec::load`], polling `stop` while the workload is parsed (a 100 000-task file
    /// takes a second or more): when it returns true, loading ends with
    /// [`RunError::Interrupted`].
    pub fn load_until(
        path: &str,
        text: &str,
        machine: Option<&str>,
        params: &[(String, String)],
        duration: Option<Ns>,
        stop: &mut dyn FnMut() -> bool,
    ) -> Result<RunSpec, RunError> {
        let spec = machine
            .map(str::to_string)
            .or_else(|| workload_machine_hint(text))
            .unwrap_or_else(|| DEFAULT_MACHINE.into());
        let machine = load_machine(&spec)?;
        let wl = schedlab_workload::parse_workload_until(path, text, params, machine.nr_cpus(), stop)?;
        if wl.schedulers.is_some() {
            sched_check::check_workload_schedulers(path, text, &machine)?;
        }
        let end = duration.or(wl.duration).unwrap_or(DEFAULT_DURATION);
        if end > MAX_SIM_TIME {
            return Err(RunError::Limit(format!("run time {end} exceeds the limit of {MAX_SIM_TIME}")));
        }
        Ok(RunSpec::new(wl, machine, end))
    }

    /// Sets `name` to `value`: a kernel switch (`kernel.*`, `futex.*`), a value of the
    /// machine (`machine.` + a dotted name of `Machine::set`: `machine.cost_model=flat`,
    /// `machine.costs.context_switch=2us`), both checked here, or a tunable of the policy
    /// (checked when the run starts, or by [`RunSpec::validate`]).
    /// The one way every front end sets a knob: CLI, sweep files, Python, studies.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), RunError> {
        if schedlab_kernel::is_switch(name) {
            return self.kernel.set(name, value).map_err(RunError::Input);
        }
        if let Some(path) = name.strip_prefix(MACHINE_PREFIX) {
            // `machine.cost_model`, `machine.costs.context_switch`, `machine.cache.L2.size`, …
            return Arc::make_mut(&mut self.machine).set(path, value).map_err(RunError::Input);
        }
        self.sets.push((name.to_string(), value.to_string()));
        Ok(())
    }

    /// Which backend runs this spec.
    pub fn backend(&self) -> Backend {
        Backend::for_scheduler(&self.sched)
    }

    /// Runs the spec on its backend. `keep_going` is polled with the run's clock (simulated
    /// time); returning false ends the run early with what was measured (`interrupted`).
    pub fn run(&self, keep_going: &mut dyn FnMut(Ns) -> bool) -> Result<RunRecord, RunError> {
        self.run_with(RunOptions::default(), keep_going).map(|o| o.record)
    }

    /// [`RunSpec::run`] with the options a tool needs beyond the record: a probe of its own
    /// beside the record's metrics, a policy it built, an explanation of chosen waits. The
    /// one way in: every front end, study and test runs through here.
    pub fn run_with(
        &self,
        opts: RunOptions<'_>,
        keep_going: &mut dyn FnMut(Ns) -> bool,
    ) -> Result<RunOutput, RunError> {
        self.check_limits()?;
        match self.backend() {
            Backend::Sim => sim::run(self, opts, keep_going),
            Backend::Host => host::run(self, opts, keep_going),
        }
    }

    /// Everything checkable without running: the limits and, for a simulation, the
    /// scheduler's name, its tunables and the kernel switches. Callers that start several
    /// runs check them all first, so a bad one fails before any starts.
    pub fn validate(&self) -> Result<(), RunError> {
        self.check_limits()?;
        match self.backend() {
            Backend::Sim => sim::validate(self),
            Backend::Host => Ok(()),
        }
    }

    /// Limits that do not depend on the backend, checked before anything runs.
    pub fn check_limits(&self) -> Result<(), RunError> {
        if self.end > MAX_SIM_TIME {
            return Err(RunError::Limit(format!("run time {} exceeds the limit of {MAX_SIM_TIME}", self.end)));
        }
        let Some(every) = self.sample else { return Ok(()) };
        let samples = self.end.0 / every.0.max(1);
        let series = samples.saturating_mul(self.workload.initial_tasks().max(1) + self.machine.nr_cpus() as u64);
        if samples > MAX_SAMPLES || series > MAX_SERIES_VALUES {
            return Err(RunError::Limit(format!(
                "sampling every {every} for {} records {samples} samples ({series} values); \
                 the limits are {MAX_SAMPLES} samples and {MAX_SERIES_VALUES} values — sample less often",
                self.end
            )));
        }
        Ok(())
    }
}
