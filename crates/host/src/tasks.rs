//! The run's task table: one slot per task ever created, in creation order, and the
//! creation of task threads.
//!
//! A slot is created and its thread cloned under one lock, so the kernel's
//! `sched_process_fork` events come in slot order and slot indices can be the run's dense
//! task ids. A thread publishes its kernel tid as its first action.

use crate::objects::Objects;
use crate::procstat::ProcStats;
use crate::sys;
use schedlab_sim::SimRng;
use schedlab_workload::{Program, Workload};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// Stack of a task thread: programs are interpreted iteratively, the largest frame is a
/// 64 KiB pipe buffer.
const STACK_BYTES: usize = 256 * 1024;

pub struct Slot {
    pub name: String,
    pub template: usize,
    pub parent: Option<usize>,
    /// `CLOCK_MONOTONIC` just before the thread was cloned.
    pub created_ns: u64,
    /// Kernel tid, 0 until the thread has published it.
    pub tid: AtomicI32,
    pub live_children: AtomicU32,
    /// Current nice value (the template's, then `set_nice` and `[[change]]`s).
    pub nice: AtomicI32,
    /// Custom slice in ns (`sched_setattr` `sched_runtime`); 0: the base slice.
    pub slice: AtomicU64,
    pub done: AtomicBool,
    /// `CLOCK_MONOTONIC` when the program ended by itself (0 while running, or when the
    /// run stopped it).
    pub exit_ns: AtomicU64,
    /// procfs statistics the thread read about itself just before exiting.
    pub final_stats: Mutex<Option<ProcStats>>,
}

pub struct Tasks {
    pub slots: Vec<Arc<Slot>>,
    pub handles: Vec<JoinHandle<()>>,
    instances: Vec<u64>,
    shared_programs: Vec<Option<Arc<Program>>>,
}

/// Everything the task threads share.
pub struct Run {
    pub wl: Arc<Workload>,
    pub objs: Objects,
    /// The simulator's `"workload"` stream: durations are drawn from it in the order ops
    /// start, as the simulator draws them in simulated-time order.
    pub rng: Mutex<SimRng>,
    pub tasks: Mutex<Tasks>,
    pub failure: Mutex<Option<String>>,
    pub max_tasks: u64,
    /// Slots whose thread has not published its tid yet.
    pub unregistered: AtomicU64,
}

/// A poisoned lock only means another task panicked; the data is still usable for cleanup.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Run {
    pub fn new(wl: Arc<Workload>, objs: Objects, rng: SimRng, max_tasks: u64) -> Run {
        let n = wl.templates.len();
        Run {
            tasks: Mutex::new(Tasks {
                slots: Vec::new(),
                handles: Vec::new(),
                instances: vec![0; n],
                shared_programs: vec![None; n],
            }),
            wl,
            objs,
            rng: Mutex::new(rng),
            failure: Mutex::new(None),
            max_tasks,
            unregistered: AtomicU64::new(0),
        }
    }

    pub fn stopping(&self) -> bool {
        self.objs.stopping()
    }

    /// Records the first failure and stops the run.
    pub fn fail(&self, msg: String) {
        let mut f = lock(&self.failure);
        if f.is_none() {
            *f = Some(msg);
        }
        self.objs.stop.store(true, SeqCst);
    }

    /// Creates a task of `template` and starts its thread.
    pub fn spawn(self: &Arc<Run>, template: usize, parent: Option<usize>) -> Result<(), String> {
        let mut g = lock(&self.tasks);
        if self.stopping() {
            return Ok(());
        }
        if g.slots.len() as u64 >= self.max_tasks {
            return Err(format!(
                "limit exceeded: more than {} tasks would exist (creating `{}`); host runs are capped at {}",
                self.max_tasks, self.wl.templates[template].name, self.max_tasks
            ));
        }
        let n = g.instances[template];
        g.instances[template] += 1;
        let tpl = &self.wl.templates[template];
        let prog = match &g.shared_programs[template] {
            Some(p) => p.clone(),
            None => {
                let p = Arc::new(self.wl.program(template, n).map_err(|e| e.to_string())?);
                if !tpl.instance_dependent {
                    g.shared_programs[template] = Some(p.clone());
                }
                p
            }
        };
        let total = tpl.count.max(g.instances[template]);
        let name = if total > 1 || tpl.template { format!("{}.{n}", tpl.name) } else { tpl.name.clone() };
        let idx = g.slots.len();
        let slot = Arc::new(Slot {
            name: name.clone(),
            template,
            parent,
            created_ns: sys::monotonic_ns(),
            tid: AtomicI32::new(0),
            live_children: AtomicU32::new(0),
            nice: AtomicI32::new(tpl.nice),
            // The template's slice, else the parent's (as the simulator inherits it).
            slice: AtomicU64::new(match (tpl.slice, parent) {
                (Some(s), _) => s.0,
                (None, Some(p)) => g.slots[p].slice.load(SeqCst),
                (None, None) => 0,
            }),
            done: AtomicBool::new(false),
            exit_ns: AtomicU64::new(0),
            final_stats: Mutex::new(None),
        });
        g.slots.push(slot.clone());
        self.unregistered.fetch_add(1, SeqCst);
        if let Some(p) = parent {
            g.slots[p].live_children.fetch_add(1, SeqCst);
        }
        let run = self.clone();
        // The comm the kernel shows is at most 15 bytes.
        let comm: String = name.chars().take(15).collect();
        let h = std::thread::Builder::new()
            .name(comm)
            .stack_size(STACK_BYTES)
            .spawn(move || crate::exec::task_main(&run, idx, &slot, &prog))
            .map_err(|e| format!("creating a thread for `{name}`: {e}"));
        match h {
            Ok(h) => {
                g.handles.push(h);
                Ok(())
            }
            Err(e) => {
                // The slot never ran: account for it as exited at once.
                g.slots[idx].done.store(true, SeqCst);
                self.unregistered.fetch_sub(1, SeqCst);
                Err(e)
            }
        }
    }

    /// Creation time of the oldest slot whose tid is not yet known (events before it cannot
    /// concern an unknown task).
    pub fn oldest_unregistered(&self) -> Option<u64> {
        if self.unregistered.load(SeqCst) == 0 {
            return None;
        }
        let g = lock(&self.tasks);
        g.slots.iter().filter(|s| s.tid.load(SeqCst) == 0 && !s.done.load(SeqCst)).map(|s| s.created_ns).min()
    }

    /// `(slot, tid)` of every task whose thread is still running its program.
    pub fn live(&self) -> Vec<(usize, i32)> {
        let g = lock(&self.tasks);
        g.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.done.load(SeqCst))
            .map(|(i, s)| (i, s.tid.load(SeqCst)))
            .filter(|&(_, t)| t != 0)
            .collect()
    }

    pub fn slots(&self) -> Vec<Arc<Slot>> {
        lock(&self.tasks).slots.clone()
    }

    /// Whether every task created so far has finished its program.
    pub fn all_done(&self) -> bool {
        lock(&self.tasks).slots.iter().all(|s| s.done.load(SeqCst))
    }
}
