//! The `ctx` object a Python policy's callbacks receive: the kfuncs of [`ScxCtx`] under
//! the same names. It points at the kernel side only while a callback runs; a `ctx` kept
//! and used later raises `RuntimeError` instead of touching freed state.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use schedlab_machine::CpuSet;
use schedlab_policies::ext::ScxCtx;
use std::cell::Cell;

/// A callback's `ScxCtx`, its lifetimes erased: valid between [`PyCtx::enter`] and
/// [`PyCtx::leave`] only.
type Raw = *mut ScxCtx<'static, 'static>;

/// `schedlab._native.ScxCtx`: what `ScxCtx` offers a Rust policy, offered to Python.
#[pyclass(unsendable, name = "ScxCtx", module = "schedlab._native")]
pub struct PyCtx {
    raw: Cell<Raw>,
}

impl PyCtx {
    pub fn new() -> PyCtx {
        PyCtx { raw: Cell::new(std::ptr::null_mut()) }
    }

    /// Points at `cx` for the duration of one callback.
    pub fn enter(&self, cx: &mut ScxCtx) {
        self.raw.set((cx as *mut ScxCtx<'_, '_>).cast());
    }

    pub fn leave(&self) {
        self.raw.set(std::ptr::null_mut());
    }

    fn with<R>(&self, f: impl FnOnce(&mut ScxCtx) -> PyResult<R>) -> PyResult<R> {
        let raw = self.raw.get();
        if raw.is_null() {
            return Err(PyRuntimeError::new_err(
                "ctx used outside a policy callback (it is valid during the call only)",
            ));
        }
        // SAFETY: `raw` is non-null only while the adapter (`ops.rs`) is inside a call into
        // Python for a callback, made with the `&mut ScxCtx` it points at, which the
        // adapter leaves untouched until the call returns; the class is unsendable, so
        // only this thread reaches it, and helpers never call back into Python, so no
        // second reference exists while this one lives.
        f(unsafe { &mut *raw })
    }

    fn task(&self, p: usize) -> PyResult<()> {
        self.with(|c| {
            if p < c.nr_tasks() {
                Ok(())
            } else {
                Err(PyValueError::new_err(format!("no task {p} (tasks are 0..{})", c.nr_tasks())))
            }
        })
    }

    fn cpu(&self, cpu: usize) -> PyResult<()> {
        self.with(|c| {
            if cpu < c.nr_cpus() {
                Ok(())
            } else {
                Err(PyValueError::new_err(format!("no CPU {cpu} (CPUs are 0..{})", c.nr_cpus())))
            }
        })
    }

    /// A task's field, the id checked first.
    fn of_task<R>(&self, p: usize, f: impl FnOnce(&mut ScxCtx) -> R) -> PyResult<R> {
        self.task(p)?;
        self.with(|c| Ok(f(c)))
    }

    /// A CPU's property, the CPU checked first.
    fn of_cpu<R>(&self, cpu: usize, f: impl FnOnce(&mut ScxCtx) -> R) -> PyResult<R> {
        self.cpu(cpu)?;
        self.with(|c| Ok(f(c)))
    }
}

fn list(s: &CpuSet) -> Vec<usize> {
    s.iter().collect()
}

/// Helpers named and behaving as [`ScxCtx`]'s (docs/write-a-scheduler.md maps each to
/// its sched_ext kfunc).
#[pymethods]
impl PyCtx {
    fn now(&self) -> PyResult<u64> {
        self.with(|c| Ok(c.now().0))
    }
    fn this_cpu(&self) -> PyResult<usize> {
        self.with(|c| Ok(c.this_cpu()))
    }
    fn nr_cpus(&self) -> PyResult<usize> {
        self.with(|c| Ok(c.nr_cpus()))
    }
    fn nr_tasks(&self) -> PyResult<usize> {
        self.with(|c| Ok(c.nr_tasks()))
    }
    fn task_name(&self, p: usize) -> PyResult<String> {
        self.of_task(p, |c| c.task(p).name.clone())
    }
    fn task_nice(&self, p: usize) -> PyResult<i32> {
        self.of_task(p, |c| c.task(p).nice)
    }
    fn task_kthread(&self, p: usize) -> PyResult<bool> {
        self.of_task(p, |c| c.task(p).kthread)
    }
    fn task_affinity(&self, p: usize) -> PyResult<Vec<usize>> {
        self.of_task(p, |c| list(&c.task(p).affinity))
    }
    fn task_cpu(&self, p: usize) -> PyResult<usize> {
        self.of_task(p, |c| c.task_cpu(p))
    }
    fn task_running(&self, p: usize) -> PyResult<bool> {
        self.of_task(p, |c| c.task_running(p))
    }
    fn slice(&self, p: usize) -> PyResult<u64> {
        self.of_task(p, |c| c.slice(p))
    }
    fn set_slice(&self, p: usize, ns: u64) -> PyResult<()> {
        self.of_task(p, |c| c.set_slice(p, ns))
    }
    fn dsq_vtime(&self, p: usize) -> PyResult<u64> {
        self.of_task(p, |c| c.dsq_vtime(p))
    }
    fn set_dsq_vtime(&self, p: usize, vtime: u64) -> PyResult<()> {
        self.of_task(p, |c| c.set_dsq_vtime(p, vtime))
    }
    fn weight(&self, p: usize) -> PyResult<u32> {
        self.of_task(p, |c| c.weight(p))
    }
    fn create_dsq(&self, id: u64) -> PyResult<()> {
        self.with(|c| c.create_dsq(id).map_err(PyValueError::new_err))
    }
    fn dsq_nr_queued(&self, id: u64) -> PyResult<usize> {
        self.with(|c| Ok(c.dsq_nr_queued(id)))
    }
    #[pyo3(signature = (p, dsq, slice, enq_flags = 0))]
    fn dsq_insert(&self, p: usize, dsq: u64, slice: u64, enq_flags: u64) -> PyResult<()> {
        self.of_task(p, |c| c.dsq_insert(p, dsq, slice, enq_flags))
    }
    #[pyo3(signature = (p, dsq, slice, vtime, enq_flags = 0))]
    fn dsq_insert_vtime(&self, p: usize, dsq: u64, slice: u64, vtime: u64, enq_flags: u64) -> PyResult<()> {
        self.of_task(p, |c| c.dsq_insert_vtime(p, dsq, slice, vtime, enq_flags))
    }
    fn dsq_move_to_local(&self, dsq: u64) -> PyResult<bool> {
        self.with(|c| Ok(c.dsq_move_to_local(dsq)))
    }
    #[pyo3(signature = (cpu, flags = 0))]
    fn kick_cpu(&self, cpu: usize, flags: u64) -> PyResult<()> {
        self.of_cpu(cpu, |c| c.kick_cpu(cpu, flags))
    }
    fn select_cpu_dfl(&self, p: usize, prev_cpu: usize, wake_flags: u32) -> PyResult<(usize, bool)> {
        self.cpu(prev_cpu)?;
        self.of_task(p, |c| c.select_cpu_dfl(p, prev_cpu, wake_flags))
    }
    fn idle_cpumask(&self) -> PyResult<Vec<usize>> {
        self.with(|c| Ok(list(c.idle_cpumask())))
    }
    fn test_and_clear_cpu_idle(&self, cpu: usize) -> PyResult<bool> {
        self.of_cpu(cpu, |c| c.test_and_clear_cpu_idle(cpu))
    }
    /// `allowed`: CPU numbers (default every CPU).
    #[pyo3(signature = (allowed = None, core = false))]
    fn pick_idle_cpu(&self, allowed: Option<Vec<usize>>, core: bool) -> PyResult<Option<usize>> {
        let n = self.nr_cpus()?;
        let mut set = CpuSet::empty(n);
        match allowed {
            None => set = CpuSet::full(n),
            Some(cpus) => {
                for cpu in cpus {
                    self.cpu(cpu)?;
                    set.insert(cpu);
                }
            }
        }
        self.with(|c| Ok(c.pick_idle_cpu(&set, core)))
    }
    fn timer_start(&self, cpu: usize, at: u64) -> PyResult<()> {
        self.of_cpu(cpu, |c| c.timer_start(cpu, schedlab_sim::Ns(at)))
    }
    fn error(&self, msg: &str) -> PyResult<()> {
        self.with(|c| {
            c.error(msg);
            Ok(())
        })
    }
    fn dispatch_nr_slots(&self) -> PyResult<usize> {
        self.with(|c| Ok(c.dispatch_nr_slots()))
    }
    fn compared(&self, n: u64) -> PyResult<()> {
        self.with(|c| {
            c.compared(n);
            Ok(())
        })
    }
    fn cpu_llc(&self, cpu: usize) -> PyResult<usize> {
        self.of_cpu(cpu, |c| c.machine().topology.cpus[cpu].llc)
    }
    fn cpu_node(&self, cpu: usize) -> PyResult<usize> {
        self.of_cpu(cpu, |c| c.machine().topology.cpus[cpu].node)
    }
    fn cpu_core(&self, cpu: usize) -> PyResult<usize> {
        self.of_cpu(cpu, |c| c.machine().topology.cpus[cpu].core)
    }
    fn llc_cpus(&self, cpu: usize) -> PyResult<Vec<usize>> {
        self.of_cpu(cpu, |c| list(&c.machine().topology.llc_mask(cpu)))
    }
    fn smt_cpus(&self, cpu: usize) -> PyResult<Vec<usize>> {
        self.of_cpu(cpu, |c| list(&c.machine().topology.smt_mask(cpu)))
    }
    fn node_cpus(&self, cpu: usize) -> PyResult<Vec<usize>> {
        self.of_cpu(cpu, |c| list(&c.machine().topology.node_mask(cpu)))
    }
    fn numa_distance(&self, node_a: usize, node_b: usize) -> PyResult<u32> {
        self.with(|c| {
            let d = &c.machine().topology.numa_distance;
            d.get(node_a)
                .and_then(|r| r.get(node_b))
                .copied()
                .ok_or_else(|| PyValueError::new_err(format!("no NUMA node pair ({node_a}, {node_b})")))
        })
    }
}
