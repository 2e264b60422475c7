//! The run's task table: one slot per task ever created, in creation order, and the
//! creation of tasks — threads, or processes (`process = true`).
//!
//! The table, the workload stream and the failure message live in shared memory, so a task
//! that is a forked process updates the same table as the controller. A slot is created and
//! its thread or process cloned under one lock, so the kernel's `sched_process_fork` events
//! come in slot order and slot indices can be the run's dense task ids. A task publishes its
//! kernel tid as its first action.

use crate::objects::Objects;
use crate::procstat::{ProcStats, Timed};
use crate::shm::{Shared, ZeroValid};
use crate::sys;
use schedlab_sim::SimRng;
use schedlab_workload::{Program, Workload};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// Stack of a task thread: programs are interpreted iteratively (a `recv` buffer is on the
/// heap).
const STACK_BYTES: usize = 256 * 1024;

/// One task, in shared memory. Written by its creator before the task starts, then by the
/// task itself (tid, stats, exit) and the controller (nice after a `[[change]]`).
pub struct Slot {
    template: AtomicU64,
    /// Instance number within the template, and whether the name carries it (`name.n`).
    n: AtomicU64,
    dotted: AtomicBool,
    /// Parent slot + 1 (0: started by the workload).
    parent: AtomicU64,
    /// `CLOCK_MONOTONIC` just before the task was cloned.
    pub created_ns: AtomicU64,
    /// Kernel tid and thread-group id, 0 until the task has published them.
    pub tid: AtomicI32,
    pub tgid: AtomicI32,
    /// For a task that is a process: its pid, to reap at the end.
    pub pid: AtomicI32,
    pub live_children: AtomicU32,
    /// This task forked a process (it then outlives its program until that one ends).
    pub forked_process: AtomicBool,
    /// Current nice value (the template's, then `set_nice` and `[[change]]`s).
    pub nice: AtomicI32,
    /// Custom slice in ns (`sched_setattr` `sched_runtime`); 0: the base slice.
    pub slice: AtomicU64,
    pub done: AtomicBool,
    /// `CLOCK_MONOTONIC` when the program ended by itself (0 while running, or when the
    /// run stopped it).
    pub exit_ns: AtomicU64,
    /// procfs statistics the task read about itself just before exiting: a presence flag,
    /// then run time, run delay, voluntary, involuntary, migrations + 1 (0: unknown), and
    /// the monotonic times before and after the read.
    stats: [AtomicU64; 8],
}

// SAFETY: atomics only.
unsafe impl ZeroValid for Slot {}
// SAFETY: atomics only.
unsafe impl ZeroValid for AtomicI32 {}

impl Slot {
    pub fn template(&self) -> usize {
        self.template.load(SeqCst) as usize
    }

    pub fn parent(&self) -> Option<usize> {
        self.parent.load(SeqCst).checked_sub(1).map(|p| p as usize)
    }

    /// `name` or `name.n`, as the simulator names instances.
    pub fn name(&self, wl: &Workload) -> String {
        let tpl = &wl.templates[self.template()];
        if self.dotted.load(SeqCst) {
            format!("{}.{}", tpl.name, self.n.load(SeqCst))
        } else {
            tpl.name.clone()
        }
    }

    /// Publishes the task's last procfs reading (the presence flag last, so a reader that
    /// sees it sees the rest).
    pub fn set_final_stats(&self, t: &Timed) {
        let st = &t.stats;
        let v = [st.runtime_ns, st.run_delay_ns, st.voluntary, st.involuntary, st.migrations.map_or(0, |m| m + 1)];
        for (a, x) in self.stats[1..].iter().zip(v.into_iter().chain([t.before_ns, t.after_ns])) {
            a.store(x, SeqCst);
        }
        self.stats[0].store(1, SeqCst);
    }

    pub fn final_stats(&self) -> Option<Timed> {
        let v: Vec<u64> = self.stats.iter().map(|a| a.load(SeqCst)).collect();
        (v[0] == 1).then(|| Timed {
            stats: ProcStats {
                runtime_ns: v[1],
                run_delay_ns: v[2],
                voluntary: v[3],
                involuntary: v[4],
                migrations: v[5].checked_sub(1),
            },
            before_ns: v[6],
            after_ns: v[7],
        })
    }
}

/// The shared head of the table.
struct Head {
    lock: AtomicU32,
    count: AtomicU64,
    unregistered: AtomicU64,
    failed: AtomicBool,
    failure_len: AtomicU32,
}

// SAFETY: atomics only.
unsafe impl ZeroValid for Head {}

/// The first failure's message, written once under the table lock.
struct Failure(UnsafeCell<[u8; 512]>);
// SAFETY: written once under the table lock before `failed` is set; read after.
unsafe impl Sync for Failure {}

/// The workload stream and its lock.
struct RngCell {
    lock: AtomicU32,
    rng: UnsafeCell<SimRng>,
}
// SAFETY: `rng` is only touched while `lock` is held.
unsafe impl Sync for RngCell {}

/// What only the process that made it can use: its threads' handles, lowered programs.
struct Local {
    handles: Vec<JoinHandle<()>>,
    programs: Vec<Option<Arc<Program>>>,
}

/// Everything the tasks share.
pub struct Run {
    pub wl: Arc<Workload>,
    pub objs: Objects,
    pub max_tasks: u64,
    head: Shared<Head>,
    slots: Shared<Slot>,
    instances: Shared<AtomicU64>,
    failure: Shared<Failure>,
    rng: Shared<RngCell>,
    local: Mutex<Local>,
    /// Per `[[group]]`, the file a thread writes its tid to to enter that cgroup.
    pub group_files: Vec<std::path::PathBuf>,
}

/// A poisoned lock only means another task panicked; the data is still usable for cleanup.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Run {
    pub fn new(wl: Arc<Workload>, objs: Objects, rng: SimRng, max_tasks: u64) -> Result<Run, String> {
        let n = wl.templates.len();
        Ok(Run {
            head: Shared::zeroed(1)?,
            slots: Shared::zeroed(max_tasks as usize)?,
            instances: Shared::zeroed(n)?,
            failure: Shared::one(Failure(UnsafeCell::new([0; 512])))?,
            rng: Shared::one(RngCell { lock: AtomicU32::new(0), rng: UnsafeCell::new(rng) })?,
            local: Mutex::new(Local { handles: Vec::new(), programs: vec![None; n] }),
            wl,
            objs,
            max_tasks,
            group_files: Vec::new(),
        })
    }

    pub fn stopping(&self) -> bool {
        self.objs.stopping()
    }

    /// Draws from the workload stream.
    pub fn draw<R>(&self, f: impl FnOnce(&mut SimRng) -> R) -> R {
        let cell = &self.rng[0];
        // SAFETY: the lock word serialises every access to the stream.
        self.objs.with_word(&cell.lock, || f(unsafe { &mut *cell.rng.get() }))
    }

    /// Records the first failure and stops the run.
    pub fn fail(&self, msg: String) {
        let h = &self.head[0];
        self.objs.with_word(&h.lock, || {
            if !h.failed.load(SeqCst) {
                let b = msg.as_bytes();
                let len = b.len().min(512);
                // SAFETY: written once, under the table lock, before `failed` is set.
                unsafe { (&mut *self.failure[0].0.get())[..len].copy_from_slice(&b[..len]) };
                h.failure_len.store(len as u32, SeqCst);
                h.failed.store(true, SeqCst);
            }
        });
        self.objs.stop_flag().store(true, SeqCst);
    }

    pub fn failure(&self) -> Option<String> {
        let h = &self.head[0];
        if !h.failed.load(SeqCst) {
            return None;
        }
        let len = h.failure_len.load(SeqCst) as usize;
        // SAFETY: complete once `failed` is set; never written again.
        let b = unsafe { &(&*self.failure[0].0.get())[..len] };
        Some(String::from_utf8_lossy(b).into_owned())
    }

    pub fn nr_slots(&self) -> usize {
        self.head[0].count.load(SeqCst) as usize
    }

    pub fn slot(&self, i: usize) -> &Slot {
        &self.slots[i]
    }

    fn program(&self, template: usize, n: u64) -> Result<Arc<Program>, String> {
        let mut l = lock(&self.local);
        if let Some(p) = &l.programs[template] {
            return Ok(p.clone());
        }
        let p = Arc::new(self.wl.program(template, n).map_err(|e| e.to_string())?);
        if !self.wl.templates[template].instance_dependent {
            l.programs[template] = Some(p.clone());
        }
        Ok(p)
    }

    /// Creates a task of `template` and starts its thread (or process).
    pub fn spawn(self: &Arc<Run>, template: usize, parent: Option<usize>) -> Result<(), String> {
        let h = &self.head[0];
        self.objs.with_word(&h.lock, || self.spawn_locked(template, parent))
    }

    fn spawn_locked(self: &Arc<Run>, template: usize, parent: Option<usize>) -> Result<(), String> {
        let h = &self.head[0];
        if self.stopping() {
            return Ok(());
        }
        let idx = h.count.load(SeqCst) as usize;
        let tpl = &self.wl.templates[template];
        if idx as u64 >= self.max_tasks {
            return Err(format!(
                "limit exceeded: more than {} tasks would exist (creating `{}`); host runs are capped at {}",
                self.max_tasks, tpl.name, self.max_tasks
            ));
        }
        let n = self.instances[template].fetch_add(1, SeqCst);
        let prog = self.program(template, n)?;
        let s = &self.slots[idx];
        s.template.store(template as u64, SeqCst);
        s.n.store(n, SeqCst);
        s.dotted.store(tpl.count.max(n + 1) > 1 || tpl.template, SeqCst);
        s.parent.store(parent.map_or(0, |p| p as u64 + 1), SeqCst);
        s.nice.store(tpl.nice, SeqCst);
        // The template's slice, else the parent's (as the simulator inherits it).
        let slice = match (tpl.slice, parent) {
            (Some(v), _) => v.0,
            (None, Some(p)) => self.slots[p].slice.load(SeqCst),
            (None, None) => 0,
        };
        s.slice.store(slice, SeqCst);
        s.created_ns.store(sys::monotonic_ns(), SeqCst);
        h.unregistered.fetch_add(1, SeqCst);
        if let Some(p) = parent {
            self.slots[p].live_children.fetch_add(1, SeqCst);
        }
        h.count.store(idx as u64 + 1, SeqCst);
        if tpl.process {
            if let Some(p) = parent {
                self.slots[p].forked_process.store(true, SeqCst);
            }
        }
        let started = if tpl.process { self.fork_process(idx, &prog) } else { self.start_thread(idx, prog) };
        if let Err(e) = started {
            // The task never ran: account for it as exited at once.
            s.done.store(true, SeqCst);
            h.unregistered.fetch_sub(1, SeqCst);
            if let Some(p) = parent {
                self.slots[p].live_children.fetch_sub(1, SeqCst);
            }
            return Err(e);
        }
        Ok(())
    }

    fn start_thread(self: &Arc<Run>, idx: usize, prog: Arc<Program>) -> Result<(), String> {
        let run = self.clone();
        let name = self.slots[idx].name(&self.wl);
        // The comm the kernel shows is at most 15 bytes.
        let comm: String = name.chars().take(15).collect();
        let h = std::thread::Builder::new()
            .name(comm)
            .stack_size(STACK_BYTES)
            .spawn(move || crate::exec::task_main(&run, idx, &prog))
            .map_err(|e| format!("creating a thread for `{name}`: {e}"))?;
        lock(&self.local).handles.push(h);
        Ok(())
    }

    /// A task that is a process: `fork`, and the child runs the program on its only thread,
    /// then ends that thread (the process lives on while threads it created run).
    fn fork_process(self: &Arc<Run>, idx: usize, prog: &Program) -> Result<(), String> {
        // SAFETY: the child only runs the interpreter (shared-memory state, system calls,
        // allocation — glibc's malloc is fork-safe) and never returns from here; the table
        // lock held by this thread is released by the parent.
        let parent_pid = std::process::id() as i32;
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(format!("fork: {}", std::io::Error::last_os_error()));
        }
        if pid == 0 {
            // If schedlab dies (even by SIGKILL), so does this process: the forking thread
            // lives until its process children have ended (`exec::linger_for_processes`).
            // SAFETY: prctl and getppid on integers; `_exit` if the parent is already gone.
            unsafe {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
                if libc::getppid() != parent_pid {
                    libc::_exit(0);
                }
            }
            crate::exec::task_main(self, idx, prog);
            // SAFETY: ends this thread only, without unwinding or running atexit handlers.
            unsafe { libc::syscall(libc::SYS_exit, 0) };
        }
        self.slots[idx].pid.store(pid, SeqCst);
        Ok(())
    }

    /// A task published its ids.
    pub fn registered(&self) {
        self.head[0].unregistered.fetch_sub(1, SeqCst);
    }

    /// Creation time of the oldest slot whose tid is not yet known (events before it cannot
    /// concern an unknown task).
    pub fn oldest_unregistered(&self) -> Option<u64> {
        if self.head[0].unregistered.load(SeqCst) == 0 {
            return None;
        }
        (0..self.nr_slots())
            .map(|i| &self.slots[i])
            .filter(|s| s.tid.load(SeqCst) == 0 && !s.done.load(SeqCst))
            .map(|s| s.created_ns.load(SeqCst))
            .min()
    }

    /// `(slot, tgid, tid)` of every task still running its program.
    pub fn live(&self) -> Vec<(usize, i32, i32)> {
        (0..self.nr_slots())
            .filter(|&i| !self.slots[i].done.load(SeqCst))
            .map(|i| (i, self.slots[i].tgid.load(SeqCst), self.slots[i].tid.load(SeqCst)))
            .filter(|&(_, _, t)| t != 0)
            .collect()
    }

    /// Whether every task created so far has finished its program.
    pub fn all_done(&self) -> bool {
        (0..self.nr_slots()).all(|i| self.slots[i].done.load(SeqCst))
    }

    /// Handles of this process's task threads that have not finished.
    pub fn unfinished_threads(&self) -> usize {
        lock(&self.local).handles.iter().filter(|h| !h.is_finished()).count()
    }

    pub fn join_threads(&self) {
        let handles = std::mem::take(&mut lock(&self.local).handles);
        for h in handles {
            let _ = h.join();
        }
    }

    /// Pids of tasks that are processes.
    pub fn process_pids(&self) -> Vec<i32> {
        (0..self.nr_slots()).map(|i| self.slots[i].pid.load(SeqCst)).filter(|&p| p > 0).collect()
    }
}
