//! Real runs (`--sched host`): the workload file executes on this machine's kernel — one
//! thread per task (a process where the workload says `process = true`), real futexes,
//! pipes and timers — and is measured the way a simulation is: the kernel's sched tracepoints (a private tracefs instance) become the simulator's
//! [`ProbeEvent`](schedlab_probe::ProbeEvent) stream for the caller's probe, and procfs
//! gives each thread's run time, run delay, switches and migrations.
//!
//! Architecture Invariant: a host run touches only threads and processes it created and
//! settings it restores. Every exit path — normal end, error, a failing task, Ctrl-C or
//! SIGTERM (the caller's `keep_going` returns false) — stops every task, joins its threads,
//! reaps its processes and removes the tracing instance and the run's cgroups before [`run`]
//! returns; limits are checked before anything starts.
//!
//! `docs/host-runs.md` describes the mapping of each op, what is measured, what changes on
//! the host and what is missing.

pub mod autogroup;
pub mod cgroup;
mod convert;
mod exec;
pub mod info;
pub mod limits;
mod objects;
pub mod procstat;
pub mod ringbuf;
mod safety;
mod shm;
pub mod sys;
mod tasks;
pub mod tracefs;

pub use convert::CpuSplit;
pub use info::HostInfo;
pub use limits::{allowed_cpus, online_cpus, MAX_DURATION, MAX_TASKS};
pub use procstat::ProcStats;

use schedlab_machine::CpuSet;
use schedlab_probe::{EndReason, Probe, ProbeEvent, RunSummary};
use schedlab_sched_api::{TaskInfo, TaskPolicy};
use schedlab_sim::{Ns, RngStreams};
use schedlab_workload::{Policy, Workload};
use serde::Serialize;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;
use tasks::Run;

/// Environment variable that turns tracing off (as if tracefs were unavailable).
pub const NO_TRACE_ENV: &str = "SCHEDLAB_HOST_NO_TRACE";

/// How often the controller wakes up: reads trace buffers, polls `keep_going`.
const POLL_NS: u64 = 10_000_000;
/// Events are converted once they are this old, so every CPU's buffer has them.
const MERGE_DELAY_NS: u64 = 5_000_000;

#[derive(Clone, Debug)]
pub struct HostConfig {
    pub duration: Ns,
    pub seed: u64,
    /// Record the sched tracepoints (off: procfs figures only).
    pub tracing: bool,
    pub max_tasks: u64,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig { duration: Ns::from_secs(10), seed: 1, tracing: true, max_tasks: MAX_TASKS }
    }
}

/// How the run was traced, and how well.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TracingInfo {
    pub enabled: bool,
    /// Why tracing is off, when it is.
    pub unavailable: Option<String>,
    /// The tracefs instance used (removed at the end).
    pub instance: Option<String>,
    pub records: u64,
    /// Converted probe events (our threads only).
    pub events: u64,
    /// Ring-buffer pages that reported lost events, and the kernel's overrun count.
    pub missed_pages: u64,
    pub overruns: u64,
}

/// Everything a host run measured beyond what the probe saw.
pub struct HostRun {
    pub summary: RunSummary,
    /// procfs statistics per task (at its exit, or at the end of the run).
    pub procfs: Vec<Option<ProcStats>>,
    /// Per CPU: time of our threads, of other threads, idle (from `sched_switch`).
    pub cpu_split: Option<Vec<CpuSplit>>,
    pub info: HostInfo,
    pub tracing: TracingInfo,
    /// Facts about this run worth reporting (pipe capacities granted, …).
    pub notes: Vec<String>,
    /// Tasks that ran as processes of their own (`process = true`).
    pub task_processes: usize,
}

/// A host run that could not start or did not complete.
#[derive(Debug)]
pub struct HostError(pub String);

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for HostError {}

/// Checks, without starting anything, that this host can run `wl` for `cfg.duration`.
pub fn check(wl: &Workload, cfg: &HostConfig) -> Result<(), HostError> {
    limits::preflight(wl, cfg.duration, cfg.max_tasks).map_err(HostError)
}

/// Runs `wl` on the host for `cfg.duration` (or until every task exited, or `keep_going`
/// returns false), feeding converted events to `probe`.
pub fn run(
    wl: Arc<Workload>,
    cfg: &HostConfig,
    probe: &mut dyn Probe,
    keep_going: &mut dyn FnMut(Ns) -> bool,
) -> Result<HostRun, HostError> {
    check(&wl, cfg)?;
    let nr_cpus = online_cpus();
    let processes = wl.templates.iter().any(|t| t.process);
    let objs = objects::Objects::new(&wl, !processes).map_err(HostError)?;
    let mut notes = objs.pipe_notes.clone();
    safety::install_wake_handler().map_err(HostError)?;
    let mut tracing = TracingInfo::default();
    let mut trace = None;
    if !cfg.tracing || std::env::var_os(NO_TRACE_ENV).is_some() {
        tracing.unavailable = Some(format!("tracing disabled ({NO_TRACE_ENV} or --no-trace)"));
    } else {
        match tracefs::TraceSession::open(nr_cpus) {
            Ok(s) => trace = Some(s),
            Err(e) => tracing.unavailable = Some(e.0),
        }
    }
    if let Some(why) = &tracing.unavailable {
        notes.push(format!(
            "no sched tracepoints ({why}): wakeup latencies, sleep time, per-CPU time, time series, \
             the timeline and the Perfetto trace are not measured"
        ));
    }
    tracing.enabled = trace.is_some();
    tracing.instance = trace.as_ref().map(|t| t.instance().display().to_string());
    let streams = RngStreams::new(cfg.seed);
    // Made before any task exists, removed after every task has been stopped and reaped.
    let groups = (!wl.groups.cgroups.is_empty())
        .then(|| cgroup::Cgroups::create(&wl.groups.cgroups))
        .transpose()
        .map_err(HostError)?;
    if let Some(g) = &groups {
        notes.push(format!("groups: cgroup v1 cpu.shares = weight × 1024 / 100, in {}", g.dirs[0].display()));
    }
    let mut run = Run::new(wl.clone(), objs, streams.stream("workload", 0), cfg.max_tasks).map_err(HostError)?;
    run.group_files = groups.as_ref().map_or_else(Vec::new, |g| g.attach_files());
    let run = Arc::new(run);
    let _reaper = processes.then(safety::Subreaper::set);
    let t0 = sys::monotonic_ns();
    let mut conv = trace.as_ref().map(|_| convert::Converter::new(t0, cfg.duration, nr_cpus, probe.sample_every()));
    let mut ctl = Controller { run: &run, t0, cfg, trace: trace.as_mut(), conv: conv.as_mut(), probe };
    let outcome = {
        let _guard = safety::StopGuard(&run);
        let ended = ctl.control(keep_going);
        let stopped_at = ctl.now();
        let live_stats: Vec<(usize, Option<ProcStats>)> =
            run.live().into_iter().map(|(i, tgid, tid)| (i, procstat::read(tgid, tid).ok())).collect();
        safety::stop_all(&run).map_err(HostError)?;
        // When every task exited, the end is after their last exit (all of it traced).
        let end = if matches!(ended, Ok(EndReason::AllExited)) { ctl.now() } else { stopped_at };
        (ended, end.min(cfg.duration.0), live_stats)
    };
    let (ended, end, live_stats) = outcome;
    let groups_removed = groups.map_or(Ok(()), cgroup::Cgroups::remove);
    if let Some(m) = run.failure() {
        return Err(HostError(format!("a task failed: {m}")));
    }
    let reason = ended.map_err(HostError)?;
    groups_removed.map_err(HostError)?;
    ctl.drain(end);
    if let Some(t) = &trace {
        tracing.records = t.records;
        tracing.missed_pages = t.missed_pages;
        tracing.overruns = t.overruns();
    }
    drop(trace);
    tracing.events = conv.as_ref().map_or(0, |c| c.emitted);
    if tracing.missed_pages > 0 || tracing.overruns > 0 {
        notes.push(format!(
            "the kernel dropped trace events ({} overruns): trace-derived figures undercount",
            tracing.overruns
        ));
    }
    Ok(finish(&run, t0, end, reason, conv, live_stats, tracing, notes, probe))
}

struct Controller<'a, 'p> {
    run: &'a Arc<Run>,
    t0: u64,
    cfg: &'a HostConfig,
    trace: Option<&'a mut tracefs::TraceSession>,
    conv: Option<&'a mut convert::Converter>,
    probe: &'p mut dyn Probe,
}

impl Controller<'_, '_> {
    fn now(&self) -> u64 {
        sys::monotonic_ns() - self.t0
    }

    /// Starts tasks and applies `[[change]]`s at their times, reads the trace, and decides
    /// when the run ends.
    fn control(&mut self, keep_going: &mut dyn FnMut(Ns) -> bool) -> Result<EndReason, String> {
        let wl = self.run.wl.clone();
        let mut starts: Vec<(u64, usize)> = Vec::new();
        for (t, tpl) in wl.templates.iter().enumerate() {
            starts.extend((0..tpl.count).map(|_| (tpl.start.0, t)));
        }
        starts.sort_by_key(|s| s.0);
        let mut changes: Vec<(u64, usize)> = wl.changes.iter().enumerate().map(|(i, c)| (c.at.0, i)).collect();
        changes.sort();
        let (mut si, mut ci) = (0, 0);
        let end = self.cfg.duration.0;
        loop {
            let now = self.now();
            while si < starts.len() && starts[si].0 <= now && !self.run.stopping() {
                self.run.spawn(starts[si].1, None)?;
                si += 1;
            }
            while ci < changes.len() && changes[ci].0 <= now {
                self.apply_change(changes[ci].1)?;
                ci += 1;
            }
            self.read_trace(now);
            if self.run.stopping() {
                return Ok(EndReason::Interrupted);
            }
            if now >= end {
                return Ok(EndReason::TimeLimit);
            }
            if !keep_going(Ns(now)) {
                return Ok(EndReason::Interrupted);
            }
            if si == starts.len() && self.run.all_done() {
                return Ok(EndReason::AllExited);
            }
            let next = [starts.get(si).map(|s| s.0), changes.get(ci).map(|c| c.0), Some(end), Some(now + POLL_NS)]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(end);
            let _ = sys::sleep_until(self.t0 + next);
        }
    }

    /// A `[[change]]`: `setpriority`/`sched_setaffinity` on every live thread of the task.
    fn apply_change(&self, idx: usize) -> Result<(), String> {
        let c = &self.run.wl.changes[idx];
        for (i, _, tid) in self.run.live() {
            let slot = self.run.slot(i);
            if slot.template() != c.template {
                continue;
            }
            if let Some(n) = c.nice {
                // A thread that exited meanwhile (ESRCH) is no error.
                match sys::set_nice(tid, n) {
                    Ok(()) => slot.nice.store(n, SeqCst),
                    Err(libc::ESRCH) => {}
                    Err(e) => return Err(format!("[[change]] at {}: setpriority: {}", c.at, sys::strerror(e))),
                }
            }
            if let Some(set) = &c.affinity {
                if let Err(m) = exec::set_affinity(tid, set) {
                    if !m.contains("ESRCH") {
                        return Err(format!("[[change]] at {}: {m}", c.at));
                    }
                }
            }
        }
        Ok(())
    }

    /// Reads the buffers and converts what is old enough (and cannot concern a thread that
    /// has not published its tid yet).
    fn read_trace(&mut self, now: u64) {
        let (Some(trace), Some(conv)) = (self.trace.as_deref_mut(), self.conv.as_deref_mut()) else { return };
        let mut evs = Vec::new();
        trace.read_available(&mut evs);
        conv.push(&mut evs);
        let mut watermark = (self.t0 + now).saturating_sub(MERGE_DELAY_NS);
        if let Some(c) = self.run.oldest_unregistered() {
            watermark = watermark.min(c);
        }
        let (infos, tids) = task_infos(self.run);
        conv.learn(infos, &tids);
        conv.emit_until(watermark, self.probe);
    }

    /// After the tasks stopped: the rest of the trace, up to the end.
    fn drain(&mut self, end: u64) {
        let (Some(trace), Some(conv)) = (self.trace.as_deref_mut(), self.conv.as_deref_mut()) else { return };
        trace.stop();
        let mut evs = Vec::new();
        trace.read_available(&mut evs);
        conv.push(&mut evs);
        let (infos, tids) = task_infos(self.run);
        conv.learn(infos, &tids);
        conv.set_end(Ns(end));
        conv.finish(self.probe);
    }
}

fn task_policy(p: Policy) -> TaskPolicy {
    p
}

/// `TaskInfo` of every slot (task id = slot index) and the tids published so far.
fn task_infos(run: &Run) -> (Vec<TaskInfo>, Vec<(usize, i32)>) {
    let nr = online_cpus();
    let slots: Vec<&tasks::Slot> = (0..run.nr_slots()).map(|i| run.slot(i)).collect();
    let infos = slots
        .iter()
        .map(|s| {
            let tpl = &run.wl.templates[s.template()];
            TaskInfo {
                name: s.name(&run.wl),
                nice: s.nice.load(SeqCst),
                policy: task_policy(tpl.policy),
                affinity: tpl.affinity.clone().unwrap_or_else(|| CpuSet::full(nr)),
                cpu: 0,
                parent: s.parent().into(),
                cgroup: schedlab_sched_api::OptIdx::NONE,
                session: schedlab_sched_api::OptIdx::NONE,
                slice: Some(s.slice.load(SeqCst)).filter(|&v| v != 0),
                kthread: tpl.kthread,
            }
        })
        .collect();
    let tids = slots.iter().enumerate().map(|(i, s)| (i, s.tid.load(SeqCst))).filter(|&(_, t)| t != 0).collect();
    (infos, tids)
}

#[allow(clippy::too_many_arguments)]
fn finish(
    run: &Run,
    t0: u64,
    end: u64,
    reason: EndReason,
    conv: Option<convert::Converter>,
    live_stats: Vec<(usize, Option<ProcStats>)>,
    tracing: TracingInfo,
    notes: Vec<String>,
    probe: &mut dyn Probe,
) -> HostRun {
    let slots: Vec<&tasks::Slot> = (0..run.nr_slots()).map(|i| run.slot(i)).collect();
    let (infos, _) = task_infos(run);
    let mut procfs: Vec<Option<ProcStats>> = slots.iter().map(|s| s.final_stats()).collect();
    for (i, st) in live_stats {
        procfs[i] = st.or(procfs[i]);
    }
    let exit_times = slots
        .iter()
        .map(|s| {
            let e = s.exit_ns.load(SeqCst);
            (e != 0 && e - t0 <= end).then(|| Ns(e - t0))
        })
        .collect();
    let nr_cpus = online_cpus();
    let cpu_split = conv.as_ref().map(|c| c.cpus.clone());
    if conv.is_none() {
        // Without a trace, the tasks' existence is all the probe can be told.
        for (i, s) in slots.iter().enumerate() {
            let time = Ns(s.created_ns.load(SeqCst).saturating_sub(t0).min(end));
            probe.event(&ProbeEvent::TaskNew { time, task: i, parent: s.parent(), cpu: 0 });
        }
    }
    let cpu_times = match &cpu_split {
        Some(split) => split.iter().map(|c| [Ns(c.ours), Ns(0), Ns(0), Ns(c.idle)]).collect(),
        None => vec![[Ns(0); 4]; nr_cpus],
    };
    let summary = RunSummary {
        end: Ns(end),
        reason,
        events: conv.as_ref().map_or(0, |c| c.emitted),
        trace_hash: 0,
        cpu_times,
        cpu_paths: Vec::new(),
        locks: Vec::new(),
        tasks: infos,
        exit_times,
        policy_counters: Vec::new(),
        policy_exit: None,
        kernel_counters: Vec::new(),
        deadlock: Vec::new(),
    };
    let task_processes = run.process_pids().len();
    HostRun { summary, procfs, cpu_split, info: info::read(), tracing, notes, task_processes }
}
