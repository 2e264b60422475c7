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

pub use convert::{CpuSplit, Repairs};
pub use info::HostInfo;
pub use limits::{allowed_cpus, online_cpus, MAX_DURATION, MAX_TASKS};
pub use procstat::{ProcStats, Timed};

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
/// Events are converted once they are this old, so every CPU's buffer has them (and the
/// record after an idle exit that shows whether its switch was traced, `convert.rs`).
pub(crate) const MERGE_DELAY_NS: u64 = 5_000_000;

/// The largest difference between a task's run time by the trace and by procfs that a run
/// accepts without a warning (relative to procfs, beyond the time the procfs read took).
pub const RUNTIME_TOLERANCE: f64 = 0.02;

#[derive(Clone, Debug)]
pub struct HostConfig {
    pub duration: Ns,
    pub seed: u64,
    /// Record the sched tracepoints (off: procfs figures only).
    pub tracing: bool,
    pub max_tasks: u64,
    /// Raise the session's autogroup to this nice for the run ([`autogroup::boost`],
    /// restored when the run ends); `None` leaves it (`--no-boost`).
    pub boost: Option<i32>,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            duration: Ns::from_secs(10),
            seed: 1,
            tracing: true,
            max_tasks: MAX_TASKS,
            boost: Some(autogroup::BOOST_NICE),
        }
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
    /// Per task: how far the instant its procfs run time stands for can be from the
    /// instant the trace was read at (half the time the `schedstat` read took).
    pub procfs_span: Vec<Option<u64>>,
    /// Per task: its run time by the trace at the instant of its procfs reading (`None`
    /// without a trace or a reading), for the check against procfs ([`RUNTIME_TOLERANCE`]).
    pub trace_runtime: Vec<Option<u64>>,
    /// Per CPU: time of our threads, of other threads, idle (from `sched_switch`).
    pub cpu_split: Option<Vec<CpuSplit>>,
    pub info: HostInfo,
    pub tracing: TracingInfo,
    /// Facts about this run worth reporting (pipe capacities granted, the autogroup boost, …).
    pub notes: Vec<String>,
    /// What makes the measurement doubtful: a task whose run time by the trace and by
    /// procfs differ beyond [`RUNTIME_TOLERANCE`], a boost that could not be applied.
    pub warnings: Vec<String>,
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
    let mut warnings = Vec::new();
    // Raised before any task exists; restored when `run` returns, on every path (the
    // guard is dropped last), including errors and interruptions.
    let (_boost, boost_note) = boost(cfg, &mut warnings);
    let nr_cpus = online_cpus();
    let processes = wl.templates.iter().any(|t| t.process);
    let objs = objects::Objects::new(&wl, !processes).map_err(HostError)?;
    let mut notes = objs.pipe_notes.clone();
    notes.extend(boost_note);
    safety::install_wake_handler().map_err(HostError)?;
    let (mut trace, mut tracing) = open_trace(cfg, nr_cpus, &mut notes);
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
    let steal_before = steal_ns();
    let t0 = sys::monotonic_ns();
    let mut conv = trace.as_ref().map(|_| convert::Converter::new(t0, cfg.duration, nr_cpus, probe.sample_every()));
    let mut ctl =
        Controller { run: &run, t0, cfg, trace: trace.as_mut(), conv: conv.as_mut(), probe, checked: Vec::new() };
    let outcome = {
        let _guard = safety::StopGuard(&run);
        let ended = ctl.control(keep_going);
        let stopped_at = ctl.now();
        let live_stats: Vec<(usize, Option<Timed>)> =
            run.live().into_iter().map(|(i, tgid, tid)| (i, procstat::read_timed(tgid, tid).ok())).collect();
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
    ctl.drain(end, &live_stats);
    let stolen = steal_before.zip(steal_ns()).map(|(a, b)| b.saturating_sub(a));
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
    if let Some(c) = &conv {
        notes.extend(repair_notes(&c.repairs));
    }
    let mut hr = finish(&run, t0, end, reason, conv.as_ref(), live_stats, tracing, notes, probe);
    if let Some(c) = &conv {
        hr.trace_runtime = (0..hr.procfs.len()).map(|k| c.reading(k)).collect();
        warnings.extend(runtime_check(&hr, stolen));
    }
    hr.warnings = warnings;
    Ok(hr)
}

/// The autogroup boost of `cfg` for the run: the guard, and what to say about it (a note
/// when it is applied, not wanted or not possible here; a warning when it was refused).
fn boost(cfg: &HostConfig, warnings: &mut Vec<String>) -> (Option<autogroup::Boost>, Option<String>) {
    let Some(nice) = cfg.boost else {
        let now = autogroup::nice().map_or("no autogroup".into(), |n| format!("nice {n}"));
        return (None, Some(format!("autogroup: left as it is ({now}; --no-boost)")));
    };
    match autogroup::boost(nice) {
        Ok(Some(b)) => {
            let note = format!(
                "autogroup: schedlab's session raised from nice {} to {} for the run (restored after it), \
                 so other sessions' work takes little CPU from it",
                b.previous, b.nice
            );
            (Some(b), Some(note))
        }
        Ok(None) => (None, Some("autogroup: off on this host (nothing to raise)".into())),
        Err(e) => {
            warnings.push(format!(
                "the session's autogroup could not be raised ({e}): other sessions' work shares the CPUs \
                 with the run by autogroup weight; run as root, or pass --no-boost to accept it"
            ));
            (None, None)
        }
    }
}

/// The tracing instance, or why there is none.
fn open_trace(
    cfg: &HostConfig,
    nr_cpus: usize,
    notes: &mut Vec<String>,
) -> (Option<tracefs::TraceSession>, TracingInfo) {
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
    (trace, tracing)
}

/// Time the hypervisor took from this machine's CPUs so far (`/proc/stat`'s `steal`, in
/// clock ticks), if the kernel reports it.
fn steal_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let steal: u64 = stat.lines().next()?.split_whitespace().nth(8)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (hz > 0).then(|| steal * (1_000_000_000 / hz as u64))
}

/// What the converter repaired, said once per kind.
fn repair_notes(r: &Repairs) -> Vec<String> {
    let mut v = Vec::new();
    if r.at_wakeup > 0 {
        v.push(format!(
            "the kernel did not trace {} switches (out of the idle task or the virtual machine's agent \
             threads); each was inferred at the wakeup that gave the CPU its next task (that stint then \
             starts a few microseconds early)",
            r.at_wakeup
        ));
    }
    if r.late_switches > 0 {
        v.push(format!(
            "{} switches the kernel did not trace showed only in a later record of their CPU, and were \
             placed there (the stints they began start late)",
            r.late_switches
        ));
    }
    if r.late_events > 0 {
        v.push(format!(
            "{} trace records were read after later ones had been converted, and converted at that later \
             time",
            r.late_events
        ));
    }
    v
}

/// Each task's run time by the trace (at the instant procfs was read) against procfs's: a
/// warning per task beyond [`RUNTIME_TOLERANCE`] plus the read's own uncertainty.
fn runtime_check(hr: &HostRun, stolen: Option<u64>) -> Vec<String> {
    let mut out = Vec::new();
    for (k, (st, info)) in hr.procfs.iter().zip(&hr.summary.tasks).enumerate() {
        let (Some(st), Some(trace)) = (st, hr.trace_runtime.get(k).copied().flatten()) else { continue };
        let mut slack = hr.procfs_span.get(k).copied().flatten().unwrap_or(0);
        // Time the hypervisor stole while the task was on a CPU is in the trace's stints but
        // not in procfs's run time (`update_rq_clock_task` subtracts steal under
        // CONFIG_PARAVIRT_TIME_ACCOUNTING): the machine's whole steal over the run bounds it.
        if trace > st.runtime_ns {
            slack += stolen.unwrap_or(0);
        }
        out.extend(runtime_mismatch(&info.name, trace, st.runtime_ns, slack));
    }
    if let (false, Some(s)) = (out.is_empty(), stolen.filter(|&s| s > 0)) {
        out.push(format!(
            "the hypervisor took {:.1} ms of CPU time from this machine during the run: procfs leaves it \
             out of run times (`update_rq_clock_task`), the trace does not",
            s as f64 / 1e6
        ));
    }
    out
}

/// The warning for a task whose run time by the trace (`trace`) and by procfs differ by
/// more than [`RUNTIME_TOLERANCE`] of procfs's plus `slack` (how far apart the two
/// instants can be), if they do.
fn runtime_mismatch(name: &str, trace: u64, procfs: u64, slack: u64) -> Option<String> {
    if trace.abs_diff(procfs) as f64 <= RUNTIME_TOLERANCE * procfs as f64 + slack as f64 {
        return None;
    }
    let rel = if procfs > 0 {
        format!("{:+.1} %", 100.0 * (trace as f64 - procfs as f64) / procfs as f64)
    } else {
        "procfs 0".into()
    };
    Some(format!(
        "task `{name}`: run time {:.3} ms by the trace, {:.3} ms by procfs ({rel}, beyond {:.0} %): the \
         trace's figures for it (waits, time series, timeline) are off",
        trace as f64 / 1e6,
        procfs as f64 / 1e6,
        100.0 * RUNTIME_TOLERANCE
    ))
}

struct Controller<'a, 'p> {
    run: &'a Arc<Run>,
    t0: u64,
    cfg: &'a HostConfig,
    trace: Option<&'a mut tracefs::TraceSession>,
    conv: Option<&'a mut convert::Converter>,
    probe: &'p mut dyn Probe,
    /// Slots whose own last procfs reading has been handed to the converter as a checkpoint.
    checked: Vec<bool>,
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
            if Some(slot.template()) != c.template {
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
        checkpoint_exited(self.run, conv, &mut self.checked);
        conv.emit_until(watermark, self.probe);
    }

    /// After the tasks stopped: the rest of the trace, up to the end; the tasks still live
    /// at the end are checked at the procfs reading made when the run stopped.
    fn drain(&mut self, end: u64, live_stats: &[(usize, Option<Timed>)]) {
        let (Some(trace), Some(conv)) = (self.trace.as_deref_mut(), self.conv.as_deref_mut()) else { return };
        trace.stop();
        let mut evs = Vec::new();
        trace.read_available(&mut evs);
        conv.push(&mut evs);
        let (infos, tids) = task_infos(self.run);
        conv.learn(infos, &tids);
        checkpoint_exited(self.run, conv, &mut self.checked);
        for (i, t) in live_stats {
            if let Some(t) = t {
                conv.checkpoint(*i, t.at().0);
            }
        }
        conv.set_end(Ns(end));
        conv.finish(self.probe);
    }
}

/// Hands the converter a checkpoint for every task that has published its own last procfs
/// reading since the previous call (it read it just before exiting), while the trace of
/// that instant is still to be converted (the merge delay keeps it pending).
fn checkpoint_exited(run: &Run, conv: &mut convert::Converter, checked: &mut Vec<bool>) {
    checked.resize(run.nr_slots(), false);
    for (i, done) in checked.iter_mut().enumerate() {
        if *done {
            continue;
        }
        if let Some(t) = run.slot(i).final_stats() {
            conv.checkpoint(i, t.at().0);
            *done = true;
        }
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
                uclamp: tpl.uclamp,
                core_cookie: tpl.core_cookie.unwrap_or(0),
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
    conv: Option<&convert::Converter>,
    live_stats: Vec<(usize, Option<Timed>)>,
    tracing: TracingInfo,
    notes: Vec<String>,
    probe: &mut dyn Probe,
) -> HostRun {
    let slots: Vec<&tasks::Slot> = (0..run.nr_slots()).map(|i| run.slot(i)).collect();
    let (infos, _) = task_infos(run);
    let mut timed: Vec<Option<Timed>> = slots.iter().map(|s| s.final_stats()).collect();
    for (i, st) in live_stats {
        timed[i] = st.or(timed[i]);
    }
    let procfs = timed.iter().map(|t| t.map(|t| t.stats)).collect();
    let procfs_span = timed.iter().map(|t| t.map(|t| t.at().1)).collect();
    let exit_times = slots
        .iter()
        .map(|s| {
            let e = s.exit_ns.load(SeqCst);
            (e != 0 && e - t0 <= end).then(|| Ns(e - t0))
        })
        .collect();
    let nr_cpus = online_cpus();
    let cpu_split = conv.map(|c| c.cpus.clone());
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
        notes: Vec::new(),
        end: Ns(end),
        reason,
        events: conv.map_or(0, |c| c.emitted),
        trace_hash: 0,
        cpu_times,
        cpu_paths: Vec::new(),
        locks: Vec::new(),
        tasks: infos,
        exit_times,
        core_forceidle: Vec::new(),
        policy_counters: Vec::new(),
        groups: Vec::new(),
        policy_exit: None,
        kernel_counters: Vec::new(),
        deadlock: Vec::new(),
        costs: Default::default(),
    };
    let task_processes = run.process_pids().len();
    HostRun {
        summary,
        procfs,
        procfs_span,
        cpu_split,
        info: info::read(),
        tracing,
        notes,
        warnings: Vec::new(),
        trace_runtime: Vec::new(),
        task_processes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2 % of procfs's figure, plus the read's own uncertainty, is accepted; beyond is a
    /// warning naming the task and the signed difference.
    #[test]
    fn run_times_beyond_two_percent_are_a_warning() {
        assert_eq!(runtime_mismatch("a", 102_000_000, 100_000_000, 0), None);
        assert_eq!(runtime_mismatch("a", 98_000_000, 100_000_000, 0), None);
        let w = runtime_mismatch("a", 97_000_000, 100_000_000, 0).unwrap();
        assert!(w.starts_with("task `a`:") && w.contains("-3.0 %"), "{w}");
        assert_eq!(runtime_mismatch("a", 97_000_000, 100_000_000, 1_000_000), None, "within 2 % + the read's span");
        assert!(runtime_mismatch("a", 1, 0, 0).unwrap().contains("procfs 0"));
    }
}
