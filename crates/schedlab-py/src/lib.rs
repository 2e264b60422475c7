//! `schedlab._native`: the Python package's native module, a thin layer over the run
//! library (`schedlab-run`), the renderers and sweeps. It speaks JSON: every run comes back
//! as the record's JSON (exactly `schedlab run --format json`), and the pure-Python
//! `schedlab` package (`python/schedlab/__init__.py`) builds the DataFrames from it, so the
//! DataFrames and the JSON cannot disagree.
//!
//! Runs release the GIL; the calling thread waits for them and turns Ctrl-C into
//! `KeyboardInterrupt` after stopping the runs ([`interrupt::with_interrupts`]).

mod interrupt;
mod policy;
mod runs;

use pyo3::prelude::*;

pyo3::create_exception!(
    _native,
    SchedlabError,
    pyo3::exceptions::PyException,
    "A run could not be prepared or did not complete."
);
pyo3::create_exception!(
    _native,
    InputError,
    SchedlabError,
    "Bad input: a malformed workload, machine or sweep file (the message names file:line:col and the field), an unknown name or value, a limit."
);
pyo3::create_exception!(
    _native,
    SimulationError,
    SchedlabError,
    "A run failed: the simulation broke an invariant, or a host run failed."
);

/// The exception for a run error: the message is the CLI's, word for word.
pub(crate) fn to_py(e: schedlab_run::RunError) -> PyErr {
    use schedlab_run::RunError as E;
    match e {
        E::Simulation(_) | E::Host(_) => SimulationError::new_err(e.to_string()),
        _ => InputError::new_err(e.to_string()),
    }
}

/// The exception for an error of the CLI library (exit status 2: bad input).
pub(crate) fn from_cli(e: schedlab::CliError) -> PyErr {
    if e.code == 2 {
        InputError::new_err(e.message)
    } else {
        SimulationError::new_err(e.message)
    }
}

/// An input error with `message`.
pub(crate) fn input(message: String) -> PyErr {
    InputError::new_err(message)
}

#[pymodule]
mod _native {
    use super::*;

    #[pymodule_export]
    use super::policy::{run_policy, PyCtx};
    #[pymodule_export]
    use super::runs::{
        compare, explain, machines, run, schedulers, study, suites, sweep_csv, sweep_local, sweep_points, sweep_run,
    };

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        let py = m.py();
        m.add("SchedlabError", py.get_type::<SchedlabError>())?;
        m.add("InputError", py.get_type::<InputError>())?;
        m.add("SimulationError", py.get_type::<SimulationError>())?;
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        Ok(())
    }
}
