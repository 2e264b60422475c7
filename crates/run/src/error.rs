//! What can go wrong with a run, typed so that callers choose their reaction (the CLI maps
//! input and limit errors to exit status 2, the others to 1).

use crate::Backend;
use schedlab_sim::SourceError;

/// A run could not be prepared or did not complete. Never a panic.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A workload or machine file is malformed: names file, line, column and field.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// A bad name or value given outside a file: an unknown machine, scheduler, tunable.
    #[error("{0}")]
    Input(String),
    /// An input file could not be read.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// A limit, checked up front where possible (simulated time, samples, tasks).
    #[error("limit exceeded: {0}")]
    Limit(String),
    /// The scheduler name selects a backend this build does not have.
    #[error("the {0} backend is not available in this build")]
    Unavailable(Backend),
    /// The simulation broke an invariant, or a policy broke the `SchedClass` contract.
    #[error("simulation error: {0}")]
    Simulation(String),
    /// A real run failed on the host (a task's system call failed, a task did not stop).
    #[error("host run: {0}")]
    Host(String),
    /// The caller's stop check ended a phase before any run started (loading a workload):
    /// what was stopped.
    #[error("{0}: interrupted")]
    Interrupted(String),
}

impl From<schedlab_workload::LoadError> for RunError {
    fn from(e: schedlab_workload::LoadError) -> Self {
        match e {
            schedlab_workload::LoadError::Source(s) => RunError::Source(s),
            schedlab_workload::LoadError::Interrupted { file } => RunError::Interrupted(format!("loading {file}")),
        }
    }
}

impl From<schedlab_kernel::RunError> for RunError {
    fn from(e: schedlab_kernel::RunError) -> Self {
        match e {
            schedlab_kernel::RunError::Workload(s) => RunError::Source(s),
            schedlab_kernel::RunError::Limit(m) => RunError::Limit(m),
            schedlab_kernel::RunError::Invariant(m) => RunError::Simulation(m),
            schedlab_kernel::RunError::Config(m) => RunError::Input(m),
        }
    }
}
