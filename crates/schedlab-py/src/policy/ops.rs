//! [`PyOps`]: a Python object's methods as an [`ScxOps`] policy. Each callback calls the
//! method of the same name with the `ctx` first; a method the object lacks keeps the
//! kernel's default (`ext.c`'s behaviour without the op). A callback that raises is the
//! policy's error (`scx_bpf_error`): the ext class ejects it and every task goes on under
//! fair, the reason in the record; the exception itself is kept for the caller.

use super::ctx::PyCtx;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use pyo3::IntoPyObjectExt;
use schedlab_policies::ext::{ScxCtx, ScxOps, DSQ_GLOBAL, DSQ_LOCAL, SLICE_DFL};
use schedlab_sim::{CpuId, TaskId};
use std::cell::RefCell;
use std::rc::Rc;

/// The callbacks, in `struct sched_ext_ops` order; the Python method names. `yield` is a
/// Python keyword, so the method is `yield_task`, as in the Rust trait.
const CALLBACKS: [&str; 19] = [
    "select_cpu",
    "enqueue",
    "dequeue",
    "dispatch",
    "tick",
    "runnable",
    "running",
    "stopping",
    "quiescent",
    "yield_task",
    "set_weight",
    "set_cpumask",
    "cpu_acquire",
    "cpu_release",
    "init_task",
    "exit_task",
    "enable",
    "init",
    "timer",
];

/// A callback: its index in [`CALLBACKS`] (same order).
#[derive(Clone, Copy)]
enum Cb {
    SelectCpu,
    Enqueue,
    Dequeue,
    Dispatch,
    Tick,
    Runnable,
    Running,
    Stopping,
    Quiescent,
    Yield,
    SetWeight,
    SetCpumask,
    CpuAcquire,
    CpuRelease,
    InitTask,
    ExitTask,
    Enable,
    Init,
    Timer,
}

/// The first exception a policy's callback raised, shared with the caller of the run.
pub type Failure = Rc<RefCell<Option<PyErr>>>;

pub struct PyOps {
    name: &'static str,
    flags: u64,
    ctx: Py<PyCtx>,
    /// The object's bound methods, indexed by [`Cb`] (`None`: the kernel's default).
    methods: Vec<Option<Py<PyAny>>>,
    counters: Option<Py<PyAny>>,
    failure: Failure,
    /// What `counters()` raised, described: the class's exit once the run ends.
    late: RefCell<Option<String>>,
}

/// A name for `ScxOps::name`, kept for the process's life: a few bytes per distinct
/// policy name, not per run.
fn intern(name: String) -> &'static str {
    static NAMES: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = names.iter().find(|n| **n == name) {
        return n;
    }
    let n: &'static str = Box::leak(name.into_boxed_str());
    names.push(n);
    n
}

fn method(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Option<Py<PyAny>>> {
    match obj.getattr_opt(name)? {
        Some(m) if m.is_callable() => Ok(Some(m.unbind())),
        Some(_) => Err(pyo3::exceptions::PyTypeError::new_err(format!("policy attribute `{name}` is not callable"))),
        None => Ok(None),
    }
}

impl PyOps {
    /// The adapter of `obj` named `name`, with its `flags` attribute (`ops_flags`, default 0).
    pub fn new(obj: &Bound<'_, PyAny>, name: String, failure: Failure) -> PyResult<PyOps> {
        let py = obj.py();
        let flags = match obj.getattr_opt("flags")? {
            Some(f) if !f.is_none() => f.extract::<u64>()?,
            _ => 0,
        };
        let methods = CALLBACKS.iter().map(|m| method(obj, m)).collect::<PyResult<Vec<_>>>()?;
        Ok(PyOps {
            name: intern(name),
            flags,
            ctx: Py::new(py, PyCtx::new())?,
            methods,
            counters: method(obj, "counters")?,
            failure,
            late: RefCell::new(None),
        })
    }

    fn has(&self, cb: Cb) -> bool {
        self.methods[cb as usize].is_some()
    }

    /// Calls callback `cb` with `args` (the `ctx` first); `Err` is the message of what it
    /// raised, already reported through [`PyOps::fail`].
    fn call<'py, A>(&self, py: Python<'py>, cx: &mut ScxCtx, cb: Cb, args: A) -> Result<Bound<'py, PyAny>, String>
    where
        A: FnOnce(Bound<'py, PyCtx>) -> Bound<'py, PyTuple>,
    {
        let Some(m) = &self.methods[cb as usize] else { return Ok(py.None().into_bound(py)) };
        let ctx = self.ctx.bind(py).clone();
        ctx.borrow().enter(cx);
        let r = m.bind(py).call1(args(ctx.clone()));
        ctx.borrow().leave();
        r.map_err(|e| self.fail(py, cb, e))
    }

    /// Calls a callback whose result is not used; a raise is the policy's error.
    fn notify<A>(&self, cx: &mut ScxCtx, cb: Cb, args: A)
    where
        A: for<'a> FnOnce(Python<'a>, Bound<'a, PyCtx>) -> Bound<'a, PyTuple>,
    {
        if !self.has(cb) {
            return;
        }
        Python::attach(|py| {
            if let Err(msg) = self.call(py, cx, cb, |ctx| args(py, ctx)) {
                cx.error(&msg);
            }
        });
    }

    /// Keeps the first exception and describes it: the callback, the exception, and where
    /// in the policy's source it was raised.
    fn fail(&self, py: Python<'_>, cb: Cb, e: PyErr) -> String {
        let msg = describe(py, CALLBACKS[cb as usize], &e);
        let mut first = self.failure.borrow_mut();
        if first.is_none() {
            *first = Some(e);
        }
        msg
    }
}

/// `ops.NAME() raised TYPE: MESSAGE (FILE:LINE in FUNCTION)`.
fn describe(py: Python<'_>, cb: &str, e: &PyErr) -> String {
    let ty = e.get_type(py).name().map(|n| n.to_string()).unwrap_or_else(|_| "exception".into());
    let mut msg = format!("ops.{cb}() raised {ty}: {}", e.value(py));
    if let Some(at) = e.traceback(py).and_then(|tb| innermost(tb.into_any()).ok()) {
        msg.push_str(&format!(" ({at})"));
    }
    msg
}

/// `FILE:LINE in FUNCTION` of a traceback's innermost frame.
fn innermost(mut tb: Bound<'_, PyAny>) -> PyResult<String> {
    loop {
        let next = tb.getattr("tb_next")?;
        if next.is_none() {
            break;
        }
        tb = next;
    }
    let code = tb.getattr("tb_frame")?.getattr("f_code")?;
    let file: String = code.getattr("co_filename")?.extract()?;
    let func: String = code.getattr("co_name")?.extract()?;
    let line: u32 = tb.getattr("tb_lineno")?.extract()?;
    Ok(format!("{file}:{line} in {func}"))
}

fn tuple<'py, const N: usize>(py: Python<'py>, items: [Bound<'py, PyAny>; N]) -> Bound<'py, PyTuple> {
    PyTuple::new(py, items).expect("a tuple of objects")
}

/// `(ctx, a, b, …)` from Rust values.
macro_rules! args {
    ($py:expr, $ctx:expr $(, $a:expr)*) => {
        tuple($py, [$ctx.into_any() $(, $a.into_bound_py_any($py).expect("integers, booleans and None convert"))*])
    };
}

impl ScxOps for PyOps {
    fn name(&self) -> &'static str {
        self.name
    }
    fn flags(&self) -> u64 {
        self.flags
    }
    fn init(&mut self, cx: &mut ScxCtx) -> Result<(), String> {
        Python::attach(|py| self.call(py, cx, Cb::Init, |ctx| args!(py, ctx)).map(drop))
    }
    fn select_cpu(&mut self, cx: &mut ScxCtx, p: TaskId, prev_cpu: CpuId, wake_flags: u32) -> CpuId {
        if !self.has(Cb::SelectCpu) {
            let (cpu, idle) = cx.select_cpu_dfl(p, prev_cpu, wake_flags);
            if idle {
                cx.dsq_insert(p, DSQ_LOCAL, SLICE_DFL, 0);
            }
            return cpu;
        }
        let r = Python::attach(|py| {
            let v = self.call(py, cx, Cb::SelectCpu, |ctx| args!(py, ctx, p, prev_cpu, wake_flags))?;
            v.extract::<CpuId>().map_err(|e| self.fail(py, Cb::SelectCpu, e))
        });
        r.unwrap_or_else(|msg| {
            cx.error(&msg);
            prev_cpu
        })
    }
    fn enqueue(&mut self, cx: &mut ScxCtx, p: TaskId, enq_flags: u64) {
        if !self.has(Cb::Enqueue) {
            return cx.dsq_insert(p, DSQ_GLOBAL, SLICE_DFL, enq_flags);
        }
        self.notify(cx, Cb::Enqueue, |py, ctx| args!(py, ctx, p, enq_flags));
    }
    fn dequeue(&mut self, cx: &mut ScxCtx, p: TaskId, deq_flags: u64) {
        self.notify(cx, Cb::Dequeue, |py, ctx| args!(py, ctx, p, deq_flags));
    }
    fn dispatch(&mut self, cx: &mut ScxCtx, cpu: CpuId, prev: Option<TaskId>) {
        self.notify(cx, Cb::Dispatch, |py, ctx| args!(py, ctx, cpu, prev));
    }
    fn runnable(&mut self, cx: &mut ScxCtx, p: TaskId, enq_flags: u64) {
        self.notify(cx, Cb::Runnable, |py, ctx| args!(py, ctx, p, enq_flags));
    }
    fn running(&mut self, cx: &mut ScxCtx, p: TaskId) {
        self.notify(cx, Cb::Running, |py, ctx| args!(py, ctx, p));
    }
    fn stopping(&mut self, cx: &mut ScxCtx, p: TaskId, runnable: bool) {
        self.notify(cx, Cb::Stopping, |py, ctx| args!(py, ctx, p, runnable));
    }
    fn quiescent(&mut self, cx: &mut ScxCtx, p: TaskId, deq_flags: u64) {
        self.notify(cx, Cb::Quiescent, |py, ctx| args!(py, ctx, p, deq_flags));
    }
    fn tick(&mut self, cx: &mut ScxCtx, p: TaskId) {
        self.notify(cx, Cb::Tick, |py, ctx| args!(py, ctx, p));
    }
    fn yield_task(&mut self, cx: &mut ScxCtx, p: TaskId) {
        if !self.has(Cb::Yield) {
            return cx.set_slice(p, 0);
        }
        self.notify(cx, Cb::Yield, |py, ctx| args!(py, ctx, p));
    }
    fn set_weight(&mut self, cx: &mut ScxCtx, p: TaskId, weight: u32) {
        self.notify(cx, Cb::SetWeight, |py, ctx| args!(py, ctx, p, weight));
    }
    fn set_cpumask(&mut self, cx: &mut ScxCtx, p: TaskId) {
        self.notify(cx, Cb::SetCpumask, |py, ctx| args!(py, ctx, p));
    }
    fn init_task(&mut self, cx: &mut ScxCtx, p: TaskId) -> Result<(), String> {
        Python::attach(|py| self.call(py, cx, Cb::InitTask, |ctx| args!(py, ctx, p)).map(drop))
    }
    fn enable(&mut self, cx: &mut ScxCtx, p: TaskId) {
        self.notify(cx, Cb::Enable, |py, ctx| args!(py, ctx, p));
    }
    fn exit_task(&mut self, cx: &mut ScxCtx, p: TaskId) {
        self.notify(cx, Cb::ExitTask, |py, ctx| args!(py, ctx, p));
    }
    fn cpu_acquire(&mut self, cx: &mut ScxCtx, cpu: CpuId) {
        self.notify(cx, Cb::CpuAcquire, |py, ctx| args!(py, ctx, cpu));
    }
    fn cpu_release(&mut self, cx: &mut ScxCtx, cpu: CpuId) {
        self.notify(cx, Cb::CpuRelease, |py, ctx| args!(py, ctx, cpu));
    }
    fn timer(&mut self, cx: &mut ScxCtx, cpu: CpuId) {
        self.notify(cx, Cb::Timer, |py, ctx| args!(py, ctx, cpu));
    }
    /// `counters()`: a dict (or pairs) of name → count. What it raises, or what fails to
    /// convert, is the policy's error as a callback's would be: no counters are shown,
    /// the exception goes back to the caller and the record's exit names it (the run has
    /// ended, so there is nothing left to eject).
    fn counters(&self) -> Vec<(String, u64)> {
        let Some(m) = &self.counters else { return Vec::new() };
        Python::attach(|py| {
            let got = m.bind(py).call0().and_then(|v| match v.cast::<PyDict>() {
                Ok(d) => d.items().extract::<Vec<(String, u64)>>(),
                Err(_) => v.extract::<Vec<(String, u64)>>(),
            });
            got.unwrap_or_else(|e| {
                let msg = describe(py, "counters", &e);
                self.late.borrow_mut().get_or_insert(msg);
                let mut first = self.failure.borrow_mut();
                if first.is_none() {
                    *first = Some(e);
                }
                Vec::new()
            })
        })
    }
    fn late_error(&self) -> Option<String> {
        self.late.borrow().clone()
    }
}
