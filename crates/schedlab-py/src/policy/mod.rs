//! Policies written in Python (`docs/write-a-scheduler.md`, "In Python"): an object with
//! the callbacks of `struct sched_ext_ops` runs as the ext class's policy through
//! [`ops::PyOps`], the callbacks receiving a [`ctx::PyCtx`].
//!
//! The run holds the GIL from start to end, on the calling thread (a policy is Python
//! code, called at every decision), so it checks for Ctrl-C between batches of events
//! itself, and a `KeyboardInterrupt` (or `SystemExit`) raised inside a callback stops
//! the run and propagates instead of ejecting the policy. A callback that raises ejects the policy as a BPF error would: the run ends
//! under fair and the record says why; the exception goes back to the caller beside the
//! record.

mod ctx;
mod ops;

use crate::runs::{unvalidated, workload_text, Opts};
use crate::to_py;
use pyo3::exceptions::PyBaseException;
use pyo3::prelude::*;
use schedlab_run::{RunError, RunSpec};
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
    let mut keep_going = |_| {
        // Ctrl-C arrives as `KeyboardInterrupt` raised in a callback (Python code runs
        // most of the time) or, between callbacks, from the signal check.
        if failure.borrow().as_ref().is_some_and(|e| stops_the_run(py, e)) {
            interrupted = failure.borrow_mut().take();
            return false;
        }
        match py.check_signals() {
            Ok(()) => true,
            Err(e) => {
                interrupted = Some(e);
                false
            }
        }
    };
    let rec = ext_policy(&spec, ops).and_then(|policy| {
        let opts = schedlab_run::RunOptions { policy: Some(policy), ..Default::default() };
        spec.run_with(opts, &mut keep_going).map(|o| o.record)
    });
    if let Some(e) = interrupted {
        return Err(e);
    }
    let rec = rec.map_err(to_py)?;
    if failure.borrow().as_ref().is_some_and(|e| stops_the_run(py, e)) {
        return Err(failure.borrow_mut().take().expect("just seen"));
    }
    let raised = failure.borrow_mut().take().map(|e| e.into_value(py));
    Ok((schedlab_report::json(&rec), raised))
}

/// The sched_ext policy around the Python object's callbacks: the ext class's tunables and
/// the fair class below it from the spec's `sets`.
fn ext_policy(spec: &RunSpec, ops: ops::PyOps) -> Result<Box<dyn schedlab_sched_api::SchedClass>, RunError> {
    schedlab_policies::ext::build(&spec.machine, &spec.sets, Box::new(ops)).map_err(RunError::Input)
}

/// `KeyboardInterrupt`, `SystemExit`: not the policy's error but the user stopping.
fn stops_the_run(py: Python<'_>, e: &PyErr) -> bool {
    !e.is_instance_of::<pyo3::exceptions::PyException>(py)
}
