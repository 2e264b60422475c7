//! Policies written in Python (`docs/write-a-scheduler.md`, "In Python"): an object with
//! the callbacks of `struct sched_ext_ops` runs as the ext class's policy through
//! [`ops::PyOps`], the callbacks receiving a [`ctx::PyCtx`].
//!
//! The run holds the GIL from start to end, on the calling thread (a policy is Python
//! code, called at every decision), so it checks for Ctrl-C between batches of events
//! itself. A callback that raises ejects the policy as a BPF error would: the run ends
//! under fair and the record says why; the exception goes back to the caller beside the
//! record.

mod ctx;
mod ops;

use crate::runs::{unvalidated, workload_text, Opts};
use crate::to_py;
use pyo3::exceptions::PyBaseException;
use pyo3::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;

pub use ctx::PyCtx;

/// Runs the workload under `policy` (named `label` in the record): the record's JSON and
/// the first exception a callback raised, if any.
#[pyfunction]
pub fn run_policy(
    py: Python<'_>,
    name: &str,
    text: &str,
    is_json: bool,
    label: &str,
    policy: &Bound<'_, PyAny>,
    opts: Opts,
) -> PyResult<(String, Option<Py<PyBaseException>>)> {
    let text = workload_text(text, is_json)?;
    let sets = opts.sets.clone();
    let spec = unvalidated(name, &text, label, sets, &opts)?;
    let failure: ops::Failure = Rc::new(RefCell::new(None));
    let ops = ops::PyOps::new(policy, label.to_string(), failure.clone())?;
    let mut interrupted = None;
    let mut keep_going = |_| match py.check_signals() {
        Ok(()) => true,
        Err(e) => {
            interrupted = Some(e);
            false
        }
    };
    let rec = schedlab_run::sim::run_ext_record(&spec, Box::new(ops), &mut keep_going);
    if let Some(e) = interrupted {
        return Err(e);
    }
    let rec = rec.map_err(to_py)?;
    let raised = failure.borrow_mut().take().map(|e| e.into_value(py));
    Ok((schedlab_report::json(&rec), raised))
}
