//! Study `validate`: the simulator next to the kernel it models. Each case is one workload
//! run twice — for real on this host (`host`) and simulated under the policy matching the
//! host kernel ([`matching_scheduler`]) on a machine describing the host (a calibrated
//! machine file) — and each metric is tabulated simulated vs measured with the relative
//! error, judged against a tolerance per kind of metric ([`Kind`]).
//!
//! The experiments: the three of the student report "verifying CFS on a real system" (nice
//! pairs; four hogs while varying the slice; a CPU-bound plus an I/O-bound task), `perf
//! bench sched messaging` over pipes with threads and with processes (1 and 10 groups), a
//! pipe ping-pong pinned and unpinned, and eight hogs pinned to one CPU then unpinned.
//!
//! Simulations run first, in parallel; host runs then run one at a time, so that neither
//! disturbs the other's measurement.

use rayon::prelude::*;
use schedlab_machine::Machine;
use schedlab_metrics::TaskRecord;
use schedlab_run::{RunError, RunRecord, RunSpec};
use schedlab_sim::Ns;
use std::sync::Arc;

/// What `schedlab list` says about the study.
pub const DESCRIPTION: &str =
    "simulated (the policy matching this kernel, calibrated machine) vs measured on this host, relative errors";

/// How long the runs are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// A few milliseconds per run: for tests.
    Tiny,
    /// The default: every run at most 2 s.
    Quick,
    /// The student report's lengths (up to 10 s per run).
    Full,
}

impl Scale {
    fn pick<T>(self, tiny: T, quick: T, full: T) -> T {
        match self {
            Scale::Tiny => tiny,
            Scale::Quick => quick,
            Scale::Full => full,
        }
    }
}

/// What a metric measures, which sets the tolerance of the Goal (issue: the simulated
/// scheduler within 5 % of the host on shares and turnaround, 15 % on switches and
/// messaging time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Share,
    Turnaround,
    Switches,
    Messaging,
    /// Shown for context, not judged.
    Info,
}

impl Kind {
    /// Whether the host value comes from the untraced run.
    pub fn untraced(self) -> bool {
        matches!(self, Kind::Turnaround | Kind::Messaging)
    }

    /// The largest relative error accepted, if the metric is judged.
    pub fn tolerance(self) -> Option<f64> {
        match self {
            Kind::Share | Kind::Turnaround => Some(0.05),
            Kind::Switches | Kind::Messaging => Some(0.15),
            Kind::Info => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Share => "share",
            Kind::Turnaround => "turnaround",
            Kind::Switches => "switches",
            Kind::Messaging => "messaging",
            Kind::Info => "info",
        }
    }
}

/// A row of a case's table: a name, its kind and how to read it off a run (`None`: the run
/// did not measure it, e.g. a task that did not finish or a host run without tracing).
/// Timings ([`Kind::Turnaround`], [`Kind::Messaging`]) are read off a second host run
/// without tracing: the tracepoints cost CPU time on every switch and wakeup (about a third
/// more CPU time in a pipe ping-pong here), which the model does not have.
pub struct Metric {
    pub name: &'static str,
    pub kind: Kind,
    pub value: fn(&RunRecord) -> Option<f64>,
}

fn metric(name: &'static str, kind: Kind, value: fn(&RunRecord) -> Option<f64>) -> Metric {
    Metric { name, kind, value }
}

/// One workload with its parameters.
pub struct Case {
    /// The experiment it belongs to (`nice-pairs`, `messaging`, …).
    pub experiment: &'static str,
    /// The configuration (`0 vs 19`, `threads 10 groups`, …).
    pub name: String,
    /// The workload file's name and text.
    pub file: &'static str,
    pub workload: &'static str,
    pub params: Vec<(String, String)>,
    /// Run time limit on the host (wall time).
    pub end: Ns,
    /// Run time limit of the simulation: longer than the host's where every task ends by
    /// itself (simulated time is cheap), so a model slower than the host still finishes.
    pub sim_end: Ns,
    pub metrics: Vec<Metric>,
}

impl Case {
    /// `experiment/name` with spaces as dashes: the case's id for `--only` and file names.
    pub fn id(&self) -> String {
        format!("{}/{}", self.experiment, self.name.replace(' ', "-"))
    }
}

/// The simulation limit of a case whose tasks all end: five times the host's.
fn finite(end: Ns) -> Ns {
    Ns(end.0.saturating_mul(5))
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// Tasks whose name is `prefix` or `prefix.N`.
fn tasks<'a>(r: &'a RunRecord, prefix: &'a str) -> impl Iterator<Item = &'a TaskRecord> + 'a {
    r.tasks
        .iter()
        .filter(move |t| t.name == prefix || t.name.strip_prefix(prefix).is_some_and(|s| s.strip_prefix('.').is_some()))
}

fn task<'a>(r: &'a RunRecord, name: &str) -> Option<&'a TaskRecord> {
    r.tasks.iter().find(|t| t.name == name)
}

/// Exit minus start, if the task exited.
fn turnaround(t: &TaskRecord) -> Option<f64> {
    t.exit_ns.map(|e| ms(e.saturating_sub(t.start_ns)))
}

/// When the last task named `prefix[.N]` exited, from the first one's start (`None` if one
/// did not exit).
fn completion(r: &RunRecord, prefix: &str) -> Option<f64> {
    let ts: Vec<&TaskRecord> = tasks(r, prefix).collect();
    let start = ts.iter().map(|t| t.start_ns).min()?;
    let end = ts.iter().map(|t| t.exit_ns).collect::<Option<Vec<u64>>>()?.into_iter().max()?;
    Some(ms(end.saturating_sub(start)))
}

/// Every context switch of the run's tasks (procfs on the host), including those where
/// a thread outside the run preempted one of them.
fn all_switches(r: &RunRecord) -> Option<f64> {
    Some(r.tasks.iter().map(|t| t.switches_voluntary + t.switches_involuntary).sum::<u64>() as f64)
}

/// Preemptions of one of the run's tasks by another of them (`sched_switch` with a
/// runnable `prev` and a `next` of the run): what the scheduler decided between the run's
/// tasks, without the preemptions by threads outside the run that a busy host adds.
/// Needs the event trace.
fn own_preemptions(r: &RunRecord) -> Option<f64> {
    use schedlab_probe::{PrevState, ProbeEvent};
    let t = r.trace.as_ref()?;
    let n = t
        .events
        .iter()
        .filter(|e| {
            matches!(e, ProbeEvent::Switch { prev: Some(_), prev_state: PrevState::Runnable, next: Some(_), .. })
        })
        .count();
    Some(n as f64)
}

/// Context switches between the run's own tasks: every voluntary one (a task blocked or
/// exited) and the preemptions of [`own_preemptions`].
fn switches(r: &RunRecord) -> Option<f64> {
    let vol: u64 = r.tasks.iter().map(|t| t.switches_voluntary).sum();
    Some(vol as f64 + own_preemptions(r)?)
}

fn migrations(r: &RunRecord) -> Option<f64> {
    Some(r.tasks.iter().map(|t| t.migrations).sum::<u64>() as f64)
}

/// Share (%) of the run's CPU time that tasks `prefix[.N]` got.
fn share(r: &RunRecord, prefix: &str) -> Option<f64> {
    let all: u64 = r.tasks.iter().map(|t| t.runtime_ns).sum();
    (all > 0).then(|| 100.0 * tasks(r, prefix).map(|t| t.runtime_ns).sum::<u64>() as f64 / all as f64)
}

/// Share (%) of task `a` in the pair's CPU time while both ran: the cumulative run times at
/// the last sample before the first of them exited (needs the time series).
fn pair_share(r: &RunRecord, a: &str, b: &str) -> Option<f64> {
    let (ta, tb) = (task(r, a)?, task(r, b)?);
    let s = r.series.as_ref()?;
    let first_exit = [ta.exit_ns, tb.exit_ns].into_iter().flatten().min().unwrap_or(r.sim_ns);
    let i = s.index_at(first_exit.saturating_sub(1))?;
    let (ra, rb) = (s.runtime_at(ta.tid, i), s.runtime_at(tb.tid, i));
    (ra + rb > 0).then(|| 100.0 * ra as f64 / (ra + rb) as f64)
}

/// Share (%) of the time of the CPUs the run used that threads outside the run took (host
/// runs; 0 simulated): how much the rest of the host interfered.
fn other_load(r: &RunRecord) -> Option<f64> {
    // CPUs the run's tasks spent a tenth of their time on (pinned runs use one CPU).
    let used =
        || r.cpus.iter().filter(|c| c.user_ns * 10 >= c.user_ns + c.kernel_ns + c.spin_ns + c.idle_ns + c.other_ns);
    let total: u64 = used().map(|c| c.user_ns + c.kernel_ns + c.spin_ns + c.idle_ns + c.other_ns).sum();
    (total > 0).then(|| 100.0 * used().map(|c| c.other_ns).sum::<u64>() as f64 / total as f64)
}

fn kv(k: &str, v: impl ToString) -> (String, String) {
    (k.to_string(), v.to_string())
}

const NICE_PAIR: &str = include_str!("../../../examples/studies/validate/nice-pair.toml");
const FOUR_HOGS: &str = include_str!("../../../examples/studies/validate/four-hogs.toml");
const CPU_IO: &str = include_str!("../../../examples/studies/validate/cpu-io.toml");
const MSG_THREADS: &str = include_str!("../../../examples/studies/validate/messaging-threads.toml");
const MSG_PROCESSES: &str = include_str!("../../../examples/studies/validate/messaging-processes.toml");
const PINGPONG: &str = include_str!("../../../examples/studies/validate/pingpong.toml");
const EIGHT_HOGS: &str = include_str!("../../../examples/studies/validate/eight-hogs.toml");

fn nice_pairs(s: Scale) -> Vec<Case> {
    let work = s.pick("20ms", "400ms", "2s");
    [0, 10, 19]
        .into_iter()
        .map(|nice| Case {
            experiment: "nice-pairs",
            name: format!("0 vs {nice}"),
            file: "nice-pair.toml",
            workload: NICE_PAIR,
            params: vec![kv("nice", nice), kv("work", work)],
            end: s.pick(Ns::from_ms(100), Ns::from_secs(2), Ns::from_secs(10)),
            sim_end: finite(s.pick(Ns::from_ms(100), Ns::from_secs(2), Ns::from_secs(10))),
            metrics: vec![
                metric("a (nice 0) share % while both run", Kind::Share, |r| pair_share(r, "a", "b")),
                metric("a turnaround ms", Kind::Turnaround, |r| task(r, "a").and_then(turnaround)),
                metric("b turnaround ms", Kind::Turnaround, |r| task(r, "b").and_then(turnaround)),
                metric("switches among run tasks", Kind::Switches, switches),
                metric("switches (all, procfs)", Kind::Info, all_switches),
            ],
        })
        .collect()
}

fn four_hogs(s: Scale) -> Vec<Case> {
    ["280us", "default", "7ms"]
        .into_iter()
        .map(|slice| Case {
            experiment: "four-hogs",
            name: format!("slice {slice}"),
            file: "four-hogs.toml",
            workload: FOUR_HOGS,
            params: vec![kv("slice", slice)],
            end: s.pick(Ns::from_ms(100), Ns::from_secs(1), Ns::from_secs(10)),
            sim_end: s.pick(Ns::from_ms(100), Ns::from_secs(1), Ns::from_secs(10)),
            metrics: vec![
                metric("preemptions between hogs", Kind::Switches, own_preemptions),
                metric("involuntary switches (all)", Kind::Info, |r| {
                    Some(tasks(r, "hog").map(|t| t.switches_involuntary).sum::<u64>() as f64)
                }),
                metric("smallest hog share %", Kind::Share, |r| {
                    let all: u64 = r.tasks.iter().map(|t| t.runtime_ns).sum();
                    let min = tasks(r, "hog").map(|t| t.runtime_ns).min()?;
                    (all > 0).then(|| 100.0 * min as f64 / all as f64)
                }),
            ],
        })
        .collect()
}

fn cpu_io(s: Scale) -> Vec<Case> {
    vec![Case {
        experiment: "cpu-io",
        name: "cpu + io".into(),
        file: "cpu-io.toml",
        workload: CPU_IO,
        params: vec![kv("work", s.pick("20ms", "700ms", "5s")), kv("loops", s.pick(4, 150, 1000))],
        end: s.pick(Ns::from_ms(100), Ns::from_secs(2), Ns::from_secs(10)),
        sim_end: finite(s.pick(Ns::from_ms(100), Ns::from_secs(2), Ns::from_secs(10))),
        metrics: vec![
            metric("io turnaround ms", Kind::Turnaround, |r| task(r, "io").and_then(turnaround)),
            metric("cpu turnaround ms", Kind::Turnaround, |r| task(r, "cpu").and_then(turnaround)),
            metric("io CPU share %", Kind::Share, |r| share(r, "io")),
            metric("preemptions of cpu by io", Kind::Switches, own_preemptions),
            metric("cpu involuntary switches (all)", Kind::Info, |r| {
                task(r, "cpu").map(|t| t.switches_involuntary as f64)
            }),
            metric("io wakeup latency p50 µs", Kind::Info, |r| {
                task(r, "io").filter(|t| t.wakeups > 0).map(|t| t.wakeup_latency_ns.p50 as f64 / 1e3)
            }),
        ],
    }]
}

fn messaging(s: Scale) -> Vec<Case> {
    let mut out = Vec::new();
    for (mode, file, text) in
        [("threads", "messaging-threads.toml", MSG_THREADS), ("processes", "messaging-processes.toml", MSG_PROCESSES)]
    {
        for groups in [1, 10] {
            out.push(Case {
                experiment: "messaging",
                name: format!("{mode} {groups} groups"),
                file,
                workload: text,
                params: vec![kv("groups", groups), kv("loops", s.pick(2, 100, 1000))],
                end: s.pick(Ns::from_ms(200), Ns::from_secs(2), Ns::from_secs(10)),
                sim_end: finite(s.pick(Ns::from_ms(200), Ns::from_secs(2), Ns::from_secs(10))),
                metrics: vec![
                    metric("messaging time ms", Kind::Messaging, |r| task(r, "main").and_then(turnaround)),
                    metric("switches among run tasks", Kind::Switches, switches),
                    metric("switches (all, procfs)", Kind::Info, all_switches),
                    metric("migrations", Kind::Info, migrations),
                ],
            });
        }
    }
    out
}

fn pingpong(s: Scale, nr_cpus: usize) -> Vec<Case> {
    let all = format!("0-{}", nr_cpus.saturating_sub(1));
    let loops: u64 = s.pick(50, 20_000, 200_000);
    [("pinned", "0".to_string()), ("unpinned", all)]
        .into_iter()
        .map(|(name, cpus)| Case {
            experiment: "pingpong",
            name: name.into(),
            file: "pingpong.toml",
            workload: PINGPONG,
            params: vec![kv("loops", loops), kv("cpus", cpus)],
            end: s.pick(Ns::from_ms(100), Ns::from_secs(2), Ns::from_secs(10)),
            sim_end: finite(s.pick(Ns::from_ms(100), Ns::from_secs(2), Ns::from_secs(10))),
            metrics: vec![
                metric("messaging time ms", Kind::Messaging, |r| completion(r, "ping")),
                metric("switches among run tasks", Kind::Switches, switches),
                metric("switches (all, procfs)", Kind::Info, all_switches),
                metric("migrations", Kind::Info, migrations),
            ],
        })
        .collect()
}

fn eight_hogs(s: Scale, nr_cpus: usize) -> Vec<Case> {
    let all = format!("0-{}", nr_cpus.saturating_sub(1));
    [("pinned", "0".to_string()), ("unpinned", all)]
        .into_iter()
        .map(|(name, after)| Case {
            experiment: "eight-hogs",
            name: name.into(),
            file: "eight-hogs.toml",
            workload: EIGHT_HOGS,
            params: vec![
                kv("work", s.pick("5ms", "150ms", "1s")),
                kv("unpin", s.pick("10ms", "100ms", "1s")),
                kv("after", after),
            ],
            end: s.pick(Ns::from_ms(100), Ns::from_secs(2), Ns::from_secs(10)),
            sim_end: finite(s.pick(Ns::from_ms(100), Ns::from_secs(2), Ns::from_secs(10))),
            metrics: vec![
                metric("completion ms", Kind::Turnaround, |r| completion(r, "hog")),
                metric("mean turnaround ms", Kind::Turnaround, |r| {
                    let v: Option<Vec<f64>> = tasks(r, "hog").map(turnaround).collect();
                    v.filter(|v| !v.is_empty()).map(|v| v.iter().sum::<f64>() / v.len() as f64)
                }),
                metric("switches among run tasks", Kind::Switches, switches),
                metric("switches (all, procfs)", Kind::Info, all_switches),
                metric("migrations", Kind::Info, migrations),
            ],
        })
        .collect()
}

/// Every case of the study at scale `s` on a machine of `nr_cpus` CPUs.
pub fn cases(s: Scale, nr_cpus: usize) -> Vec<Case> {
    let mut v = nice_pairs(s);
    v.extend(four_hogs(s));
    v.extend(cpu_io(s));
    v.extend(messaging(s));
    v.extend(pingpong(s, nr_cpus));
    v.extend(eight_hogs(s, nr_cpus));
    v
}

/// The simulated scheduler matching the host kernel: the EEVDF version whose behaviour the
/// release has (6.18, 6.12, 6.6; CFS 5.15 before 6.6), with the host's autogroup switch and
/// base slice. Also says what was read.
pub fn matching_scheduler(info: &schedlab_host::HostInfo) -> (String, Vec<(String, String)>) {
    let mut nums = info.kernel_release.split(|c: char| !c.is_ascii_digit()).filter_map(|x| x.parse::<u32>().ok());
    let v = (nums.next().unwrap_or(0), nums.next().unwrap_or(0));
    let sched = match v {
        v if v >= (6, 18) => "eevdf@6.18",
        v if v >= (6, 12) => "eevdf@6.12",
        v if v >= (6, 6) => "eevdf@6.6",
        _ => "cfs",
    };
    let mut sets = Vec::new();
    if let Some(a) = info.settings.get("sched_autogroup_enabled") {
        sets.push(kv("autogroup", a));
    }
    if sched != "cfs" {
        if let Some(b) = info.settings.get("base_slice_ns").filter(|b| b.parse::<u64>().is_ok_and(|n| n > 0)) {
            sets.push(kv("base_slice_ns", format!("{b}ns")));
        }
    }
    (sched.to_string(), sets)
}

/// What this host's kernel says about its scheduler (release, sysctls, base slice).
pub fn host_info() -> schedlab_host::HostInfo {
    schedlab_host::info::read()
}

/// The autogroup nice of schedlab's session, if the host has autogroup.
pub fn autogroup_nice() -> Option<i32> {
    schedlab_host::autogroup::nice()
}

/// Raises the autogroup nice of schedlab's session to `nice` until the guard is dropped
/// (`None`: no autogroup here); e.g. while calibrating on a busy host.
pub fn boost_session(nice: i32) -> Result<Option<schedlab_host::autogroup::Boost>, RunError> {
    schedlab_host::autogroup::boost(nice).map_err(RunError::Host)
}

/// How to run the study.
pub struct Options {
    /// The machine the simulations run on (the calibrated host).
    pub machine: Arc<Machine>,
    /// The simulated scheduler and its tunables ([`matching_scheduler`]).
    pub sched: String,
    pub sets: Vec<(String, String)>,
    /// Also run each case on the host (else simulations only).
    pub host: bool,
    pub seed: u64,
    /// Time series sampling (the figures, and the nice pairs' shares need it).
    pub sample: Ns,
    /// Host runs: raise the autogroup nice of schedlab's session to this for their
    /// duration ([`schedlab_host::autogroup::boost`]), so other sessions' work on a busy
    /// host takes little from the run.
    pub boost: Option<i32>,
    /// Simulations: put every task in one session with this autogroup nice, as the host
    /// run's threads are all in schedlab's session (`None`: the default session, the root
    /// group — for a host without autogroup).
    pub session: Option<i32>,
}

/// The session simulated tasks share ([`Options::session`]).
pub const SESSION: &str = "schedlab";

/// Puts every task the workload starts in session [`SESSION`] (forked tasks inherit it).
fn in_session(wl: &mut schedlab_workload::Workload, nice: i32) {
    let idx = wl.groups.sessions.len();
    wl.groups.sessions.push(schedlab_sched_api::SessionDef { name: SESSION.into(), nice });
    for t in wl.templates.iter_mut().filter(|t| !t.template && t.session.is_none()) {
        t.session = Some(idx);
    }
}

/// A row of a case's table.
#[derive(Clone, Debug)]
pub struct Row {
    pub metric: &'static str,
    pub kind: Kind,
    pub sim: Option<f64>,
    pub host: Option<f64>,
}

impl Row {
    /// (simulated − measured) / measured, when both exist and the measurement is not 0.
    pub fn rel_error(&self) -> Option<f64> {
        match (self.sim, self.host) {
            (Some(s), Some(h)) if h != 0.0 => Some((s - h) / h.abs()),
            (Some(s), Some(h)) if s == h => Some(0.0),
            _ => None,
        }
    }
    /// Whether the error is within the kind's tolerance (`None`: not judged or not measured).
    pub fn within(&self) -> Option<bool> {
        Some(self.rel_error()?.abs() <= self.kind.tolerance()?)
    }
}

/// A case's runs and table.
pub struct CaseResult {
    pub experiment: &'static str,
    pub name: String,
    pub id: String,
    pub sim: RunRecord,
    /// The traced host run (shares, switches, figures).
    pub host: Option<RunRecord>,
    /// The untraced host run (timings).
    pub host_untraced: Option<RunRecord>,
    pub rows: Vec<Row>,
}

fn spec(c: &Case, o: &Options, sched: &str, sets: &[(String, String)], end: Ns) -> Result<RunSpec, RunError> {
    let mut wl = schedlab_workload::parse_workload(c.file, c.workload, &c.params, o.machine.nr_cpus())?;
    if let Some(nice) = o.session.filter(|_| sched != schedlab_run::Backend::HOST_SCHEDULER) {
        in_session(&mut wl, nice);
    }
    let mut spec = RunSpec::new(wl, (*o.machine).clone(), end);
    spec.sched = sched.to_string();
    spec.sets = sets.to_vec();
    spec.seed = o.seed;
    spec.sample = Some(o.sample);
    spec.trace = true;
    Ok(spec)
}

/// Runs `cases`: the simulations in parallel, then (with `o.host`) the host runs one at a
/// time; `progress` hears each host run as it starts, and `keep_going` stops host runs early
/// (Ctrl-C) with what they measured.
pub fn run(
    cases: &[Case],
    o: &Options,
    progress: &mut dyn FnMut(&str),
    keep_going: &(dyn Fn() -> bool + Sync),
) -> Result<Vec<CaseResult>, RunError> {
    progress(&format!("{} simulations ({} on {})", cases.len(), o.sched, o.machine.name));
    let sims: Vec<Result<RunRecord, RunError>> =
        cases.par_iter().map(|c| spec(c, o, &o.sched, &o.sets, c.sim_end)?.run(&mut |_| keep_going())).collect();
    let _boost = match o.boost.filter(|_| o.host) {
        Some(nice) => boost_session(nice)?,
        None => None,
    };
    let mut out = Vec::new();
    for (c, sim) in cases.iter().zip(sims) {
        let sim = sim?;
        let (host, host_untraced) = if o.host && keep_going() {
            progress(&format!("host runs {} (traced, untraced)", c.id()));
            let mut spec = spec(c, o, schedlab_run::Backend::HOST_SCHEDULER, &[], c.end)?;
            let traced = spec.run(&mut |_| keep_going())?;
            spec.host_tracing = false;
            spec.trace = false;
            let untraced = if keep_going() { Some(spec.run(&mut |_| keep_going())?) } else { None };
            (Some(traced), untraced)
        } else {
            (None, None)
        };
        let host_value = |m: &Metric| {
            let r = if m.kind.untraced() { host_untraced.as_ref() } else { host.as_ref() };
            r.and_then(m.value)
        };
        let rows = c
            .metrics
            .iter()
            .map(|m| Row { metric: m.name, kind: m.kind, sim: (m.value)(&sim), host: host_value(m) })
            .chain(host.as_ref().map(|h| Row {
                metric: "host: other threads' CPU %",
                kind: Kind::Info,
                sim: None,
                host: other_load(h),
            }))
            .collect();
        out.push(CaseResult {
            experiment: c.experiment,
            name: c.name.clone(),
            id: c.id(),
            sim,
            host,
            host_untraced,
            rows,
        });
    }
    Ok(out)
}

fn num(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(x) if x.abs() >= 100.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.2}"),
    }
}

/// The table's cells: header, then one row per (case, metric).
pub fn table_cells(results: &[CaseResult]) -> Vec<Vec<String>> {
    let mut rows = vec![["experiment", "case", "metric", "simulated", "measured", "rel. error", "tolerance", "ok"]
        .map(String::from)
        .to_vec()];
    for r in results {
        for row in &r.rows {
            rows.push(vec![
                r.experiment.to_string(),
                r.name.clone(),
                row.metric.to_string(),
                num(row.sim),
                num(row.host),
                row.rel_error().map_or("-".into(), |e| format!("{:+.1}%", 100.0 * e)),
                row.kind.tolerance().map_or("-".into(), |t| format!("{:.0}% ({})", 100.0 * t, row.kind.name())),
                match row.within() {
                    Some(true) => "yes".into(),
                    Some(false) => "NO".into(),
                    None => "-".into(),
                },
            ]);
        }
    }
    rows
}

/// The table as aligned text.
pub fn table_text(results: &[CaseResult]) -> String {
    let cells = table_cells(results);
    let widths: Vec<usize> =
        (0..cells[0].len()).map(|i| cells.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    let mut s = String::new();
    for row in &cells {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| {
                let pad = w - c.chars().count();
                if i < 3 {
                    format!("{c}{}", " ".repeat(pad))
                } else {
                    format!("{}{c}", " ".repeat(pad))
                }
            })
            .collect();
        s.push_str(line.join("  ").trim_end());
        s.push('\n');
    }
    s
}

/// The table as Markdown.
pub fn table_markdown(results: &[CaseResult]) -> String {
    let cells = table_cells(results);
    let mut s = String::new();
    for (i, row) in cells.iter().enumerate() {
        s.push_str(&format!("| {} |\n", row.join(" | ")));
        if i == 0 {
            s.push_str(&format!("|{}\n", "---|".repeat(row.len())));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(release: &str) -> schedlab_host::HostInfo {
        let mut i = schedlab_host::HostInfo { kernel_release: release.into(), ..Default::default() };
        i.settings.insert("sched_autogroup_enabled".into(), "1".into());
        i.settings.insert("base_slice_ns".into(), "1400000".into());
        i
    }

    #[test]
    fn the_matching_scheduler_follows_the_release() {
        assert_eq!(matching_scheduler(&info("6.18.44-fc-v657")).0, "eevdf@6.18");
        assert_eq!(matching_scheduler(&info("6.19.0")).0, "eevdf@6.18");
        assert_eq!(matching_scheduler(&info("6.13.1")).0, "eevdf@6.12");
        assert_eq!(matching_scheduler(&info("6.8.0-45-generic")).0, "eevdf@6.6");
        let (s, sets) = matching_scheduler(&info("5.15.0"));
        assert_eq!(s, "cfs");
        assert_eq!(sets, vec![kv("autogroup", "1")], "CFS has no base slice");
        let (_, sets) = matching_scheduler(&info("6.18.0"));
        assert!(sets.contains(&kv("base_slice_ns", "1400000ns")));
    }

    #[test]
    fn relative_errors_and_tolerances() {
        let row = |kind, sim, host| Row { metric: "m", kind, sim, host };
        assert_eq!(row(Kind::Share, Some(105.0), Some(100.0)).rel_error(), Some(0.05));
        assert_eq!(row(Kind::Share, Some(104.0), Some(100.0)).within(), Some(true));
        assert_eq!(row(Kind::Share, Some(94.0), Some(100.0)).within(), Some(false));
        assert_eq!(row(Kind::Switches, Some(114.0), Some(100.0)).within(), Some(true));
        assert_eq!(row(Kind::Info, Some(1.0), Some(100.0)).within(), None);
        assert_eq!(row(Kind::Switches, Some(0.0), Some(0.0)).rel_error(), Some(0.0));
        assert_eq!(row(Kind::Switches, Some(3.0), Some(0.0)).rel_error(), None);
        assert_eq!(row(Kind::Messaging, None, Some(1.0)).rel_error(), None);
    }

    #[test]
    fn every_case_parses_at_every_scale() {
        for s in [Scale::Tiny, Scale::Quick, Scale::Full] {
            let cs = cases(s, 2);
            assert_eq!(cs.len(), 3 + 3 + 1 + 4 + 2 + 2);
            for c in &cs {
                schedlab_workload::parse_workload(c.file, c.workload, &c.params, 2)
                    .unwrap_or_else(|e| panic!("{}: {e}", c.id()));
            }
        }
    }
}
