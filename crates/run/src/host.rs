//! The host backend: runs the workload on this machine's real kernel and feeds the events of
//! its `sched:*` tracepoints to the same `Metrics` probe the simulator uses. Selected by the
//! scheduler name `host` ([`crate::Backend::Host`]); this build does not include it.

use crate::{Backend, RunError, RunRecord, RunSpec};
use schedlab_sim::Ns;

/// Runs `spec` on the host kernel; `keep_going` is polled with the elapsed run time.
pub(crate) fn run(_spec: &RunSpec, _keep_going: &mut dyn FnMut(Ns) -> bool) -> Result<RunRecord, RunError> {
    Err(RunError::Unavailable(Backend::Host))
}
