//! The host backend where there is no host kernel to run on (`wasm32`: the simulator in a
//! browser tab): the scheduler `host` and `--machine host` are refused with
//! [`RunError::Unavailable`], as the rest of the crate expects of a missing backend.

use crate::{Backend, RunError, RunSpec};
use schedlab_machine::Machine;
use schedlab_sim::Ns;

/// `--machine host`: not available without a host.
pub fn host_machine() -> Result<Machine, RunError> {
    Err(RunError::Unavailable(Backend::Host))
}

/// A host run: not available without a host.
pub(crate) fn run(
    _spec: &RunSpec,
    _opts: crate::RunOptions<'_>,
    _keep_going: &mut dyn FnMut(Ns) -> bool,
) -> Result<crate::RunOutput, RunError> {
    Err(RunError::Unavailable(Backend::Host))
}
