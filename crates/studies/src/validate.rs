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

/// What a metric measures, which sets its tolerance (issue 33: the simulated scheduler
/// within 5 % of the host on shares, turnaround and CPU time, 15 % on switches, wakeups,
/// migrations, messaging and ping-pong times; the balancing and timer timings, which the
/// issue does not name, are judged as scheduler-event timings at 15 %).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Share,
    Turnaround,
    /// A task's CPU time (procfs run time).
    CpuTime,
    Switches,
    Wakeups,
    Migrations,
    Messaging,
    PingPong,
    /// Time from unpinning to a balanced spread.
    Balance,
    /// How late a sleep ends.
    Timer,
    /// Shown for context, not judged.
    Info,
}

impl Kind {
    /// Whether the host value comes from the untraced run: timings and CPU times, which the
    /// tracepoints' own cost on every switch and wakeup would lengthen.
    pub fn untraced(self) -> bool {
        matches!(self, Kind::Turnaround | Kind::CpuTime | Kind::Messaging | Kind::PingPong | Kind::Timer)
    }

    /// The largest relative error accepted, if the metric is judged.
    pub fn tolerance(self) -> Option<f64> {
        match self {
            Kind::Share | Kind::Turnaround | Kind::CpuTime => Some(0.05),
            Kind::Switches
            | Kind::Wakeups
            | Kind::Migrations
            | Kind::Messaging
            | Kind::PingPong
            | Kind::Balance
            | Kind::Timer => Some(0.15),
            Kind::Info => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Share => "share",
            Kind::Turnaround => "turnaround",
            Kind::CpuTime => "CPU time",
            Kind::Switches => "switches",
            Kind::Wakeups => "wakeups",
            Kind::Migrations => "migrations",
            Kind::Messaging => "messaging",
            Kind::PingPong => "ping-pong",
            Kind::Balance => "balance",
            Kind::Timer => "timer",
            Kind::Info => "info",
        }
    }
}

/// How many times each case runs by default (each simulation with its own seed, each host
/// run traced and untraced): the table compares medians and shows the spread.
pub const REPETITIONS: usize = 5;

/// Reads a metric off a run.
pub type Value = Box<dyn Fn(&RunRecord) -> Option<f64> + Send + Sync>;

/// A row of a case's table: a name, its kind and how to read it off a run (`None`: the run
/// did not measure it, e.g. a task that did not finish or a host run without tracing).
/// Timings ([`Kind::untraced`]) are read off a second host run without tracing: the
/// tracepoints cost CPU time on every switch and wakeup (about a third more CPU time in a
/// pipe ping-pong here), which the model does not have.
pub struct Metric {
    pub name: &'static str,
    pub kind: Kind,
    pub value: Value,
}

fn metric(name: &'static str, kind: Kind, value: impl Fn(&RunRecord) -> Option<f64> + Send + Sync + 'static) -> Metric {
    Metric { name, kind, value: Box::new(value) }
}

/// Where the simulated tasks are placed in the task-group hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// As on the host: in one session (its autogroup) when the host has autogroup
    /// ([`Options::session`]), else at the root.
    AsHost,
    /// At the root group, whatever the host does.
    Root,
    /// In one autogroup ([`SESSION`]), whatever the host does.
    Autogroup,
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
    /// Where the simulated tasks are. On the host every task is a thread (or process) of
    /// schedlab, in its session's autogroup when the host has autogroup: cases that differ
    /// only here share their host runs.
    pub placement: Placement,
    pub metrics: Vec<Metric>,
}

impl Case {
    /// `experiment/name` with spaces as dashes: the case's id for `--only` and file names.
    pub fn id(&self) -> String {
        format!("{}/{}", self.experiment, self.name.replace(' ', "-"))
    }

    /// What the host runs of the case depend on (cases with the same key share them).
    fn host_key(&self) -> (&'static str, Vec<(String, String)>, Ns) {
        (self.file, self.params.clone(), self.end)
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

/// Wakeups of the run's tasks (the trace's `sched_wakeup` of a blocked task on the host).
fn wakeups(r: &RunRecord) -> Option<f64> {
    r.host
        .real
        .as_ref()
        .is_none_or(|h| h.tracing.enabled)
        .then(|| r.tasks.iter().map(|t| t.wakeups).sum::<u64>() as f64)
}

/// The time from `unpin` until the hogs are spread: until `n·(c−1)/c` distinct hogs (4 of
/// 8 on 2 CPUs) have run on a CPU other than 0 (needs the event trace).
fn time_to_balance(r: &RunRecord, unpin: Ns) -> Option<f64> {
    use schedlab_probe::ProbeEvent;
    let hogs: Vec<usize> = tasks(r, "hog").map(|t| t.tid).collect();
    let cpus = r.machine.cpus.max(1);
    let want = hogs.len() * (cpus - 1) / cpus;
    let mut seen = std::collections::BTreeSet::new();
    for e in &r.trace.as_ref()?.events {
        if let ProbeEvent::Switch { time, cpu, next: Some(k), .. } = e {
            if *time >= unpin && *cpu != 0 && hogs.contains(k) {
                seen.insert(*k);
                if seen.len() >= want {
                    return Some(ms(time.0 - unpin.0));
                }
            }
        }
    }
    None
}

/// The first switch of a hog onto a CPU other than 0 after `unpin` (needs the event trace).
fn first_move(r: &RunRecord, unpin: Ns) -> Option<f64> {
    use schedlab_probe::ProbeEvent;
    let hogs: Vec<usize> = tasks(r, "hog").map(|t| t.tid).collect();
    r.trace.as_ref()?.events.iter().find_map(|e| match e {
        ProbeEvent::Switch { time, cpu, next: Some(k), .. } if *time >= unpin && *cpu != 0 && hogs.contains(k) => {
            Some(ms(time.0 - unpin.0))
        }
        _ => None,
    })
}

/// How late each sleep of `sleeper` ended, in µs: (turnaround − run time − loops × sleep)
/// / loops.
fn overshoot_us(r: &RunRecord, loops: u64, sleep: Ns) -> Option<f64> {
    let t = task(r, "sleeper")?;
    let turn = t.exit_ns?.saturating_sub(t.start_ns) as f64;
    let slept = (loops * sleep.0) as f64;
    Some((turn - t.runtime_ns as f64 - slept) / loops as f64 / 1e3)
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

const TIMER: &str = include_str!("../../../examples/studies/validate/timer.toml");

/// A case with the default placement ([`Placement::AsHost`]).
#[allow(clippy::too_many_arguments)]
fn case(
    experiment: &'static str,
    name: String,
    file: &'static str,
    workload: &'static str,
    params: Vec<(String, String)>,
    end: Ns,
    sim_end: Ns,
    metrics: Vec<Metric>,
) -> Case {
    Case { experiment, name, file, workload, params, end, sim_end, placement: Placement::AsHost, metrics }
}

fn nice_pairs(s: Scale) -> Vec<Case> {
    let work = s.pick("20ms", "400ms", "2s");
    let end = s.pick(Ns::from_ms(100), Ns::from_secs(2), Ns::from_secs(10));
    [0, 10, 19]
        .into_iter()
        .map(|nice| {
            let metrics = vec![
                metric("a (nice 0) share % while both run", Kind::Share, |r| pair_share(r, "a", "b")),
                metric("a turnaround ms", Kind::Turnaround, |r| task(r, "a").and_then(turnaround)),
                metric("b turnaround ms", Kind::Turnaround, |r| task(r, "b").and_then(turnaround)),
                metric("switches among run tasks", Kind::Switches, switches),
                metric("switches (all, procfs)", Kind::Info, all_switches),
            ];
            let params = vec![kv("nice", nice), kv("work", work)];
            case("nice-pairs", format!("0 vs {nice}"), "nice-pair.toml", NICE_PAIR, params, end, finite(end), metrics)
        })
        .collect()
}

fn four_hogs(s: Scale) -> Vec<Case> {
    let end = s.pick(Ns::from_ms(100), Ns::from_secs(1), Ns::from_secs(10));
    ["280us", "default", "7ms"]
        .into_iter()
        .map(|slice| {
            let metrics = vec![
                metric("preemptions between hogs", Kind::Switches, own_preemptions),
                metric("involuntary switches (all)", Kind::Info, |r| {
                    Some(tasks(r, "hog").map(|t| t.switches_involuntary).sum::<u64>() as f64)
                }),
                metric("smallest hog share %", Kind::Share, |r| {
                    let all: u64 = r.tasks.iter().map(|t| t.runtime_ns).sum();
                    let min = tasks(r, "hog").map(|t| t.runtime_ns).min()?;
                    (all > 0).then(|| 100.0 * min as f64 / all as f64)
                }),
            ];
            let params = vec![kv("slice", slice)];
            case("four-hogs", format!("slice {slice}"), "four-hogs.toml", FOUR_HOGS, params, end, end, metrics)
        })
        .collect()
}

/// The I/O-bound program alone, and beside a CPU-bound one (the student report's
/// experiment III).
fn cpu_io(s: Scale) -> Vec<Case> {
    let end = s.pick(Ns::from_ms(100), Ns::from_secs(2), Ns::from_secs(10));
    [("io alone", 0), ("io beside a hog", 1)]
        .into_iter()
        .map(|(name, hogs)| {
            let mut metrics = vec![
                metric("io turnaround ms", Kind::Turnaround, |r| task(r, "io").and_then(turnaround)),
                metric("io CPU time ms", Kind::CpuTime, |r| task(r, "io").map(|t| ms(t.runtime_ns))),
                metric("io wakeups", Kind::Wakeups, |r| wakeups(r).and(task(r, "io")).map(|t| t.wakeups as f64)),
                metric("io wakeup latency p50 µs", Kind::Info, |r| {
                    task(r, "io").filter(|t| t.wakeups > 0).map(|t| t.wakeup_latency_ns.p50 as f64 / 1e3)
                }),
            ];
            if hogs > 0 {
                metrics.extend([
                    metric("cpu turnaround ms", Kind::Turnaround, |r| task(r, "cpu").and_then(turnaround)),
                    metric("io CPU share %", Kind::Share, |r| share(r, "io")),
                    metric("preemptions of cpu by io", Kind::Switches, own_preemptions),
                    metric("cpu involuntary switches (all)", Kind::Info, |r| {
                        task(r, "cpu").map(|t| t.switches_involuntary as f64)
                    }),
                ]);
            }
            let params =
                vec![kv("work", s.pick("20ms", "700ms", "5s")), kv("loops", s.pick(4, 150, 1000)), kv("hogs", hogs)];
            case("cpu-io", name.into(), "cpu-io.toml", CPU_IO, params, end, finite(end), metrics)
        })
        .collect()
}

/// `perf bench sched messaging`: threads and processes × pipes and sockets × 1 and 10
/// groups, each simulated at the root group and in one autogroup (one host measurement:
/// on the host the tasks are always in schedlab's session).
fn messaging(s: Scale) -> Vec<Case> {
    let end = s.pick(Ns::from_ms(200), Ns::from_secs(2), Ns::from_secs(10));
    let mut out = Vec::new();
    for (mode, file, text) in
        [("threads", "messaging-threads.toml", MSG_THREADS), ("processes", "messaging-processes.toml", MSG_PROCESSES)]
    {
        for transport in ["pipe", "socket"] {
            for groups in [1, 10] {
                for (place, placement) in [("root", Placement::Root), ("autogroup", Placement::Autogroup)] {
                    let metrics = vec![
                        metric("messaging time ms", Kind::Messaging, |r| task(r, "main").and_then(turnaround)),
                        metric("switches among run tasks", Kind::Switches, switches),
                        metric("wakeups", Kind::Wakeups, wakeups),
                        metric("migrations", Kind::Migrations, migrations),
                        metric("switches (all, procfs)", Kind::Info, all_switches),
                    ];
                    let params =
                        vec![kv("groups", groups), kv("loops", s.pick(2, 100, 1000)), kv("transport", transport)];
                    let name =
                        format!("{mode} {transport} {groups} group{} {place}", if groups == 1 { "" } else { "s" });
                    let mut c = case("messaging", name, file, text, params, end, finite(end), metrics);
                    c.placement = placement;
                    out.push(c);
                }
            }
        }
    }
    out
}

fn pingpong(s: Scale, nr_cpus: usize) -> Vec<Case> {
    let all = format!("0-{}", nr_cpus.saturating_sub(1));
    let loops: u64 = s.pick(50, 20_000, 200_000);
    let end = s.pick(Ns::from_ms(100), Ns::from_secs(2), Ns::from_secs(10));
    [("pinned", "0".to_string()), ("unpinned", all)]
        .into_iter()
        .map(|(name, cpus)| {
            let metrics = vec![
                metric("round trip µs", Kind::PingPong, move |r| {
                    completion(r, "ping").map(|t| t * 1e3 / loops as f64)
                }),
                metric("switches among run tasks", Kind::Switches, switches),
                metric("migrations", Kind::Migrations, migrations),
                metric("switches (all, procfs)", Kind::Info, all_switches),
            ];
            let params = vec![kv("loops", loops), kv("cpus", cpus)];
            case("pingpong", name.into(), "pingpong.toml", PINGPONG, params, end, finite(end), metrics)
        })
        .collect()
}

fn eight_hogs(s: Scale, nr_cpus: usize) -> Vec<Case> {
    let all = format!("0-{}", nr_cpus.saturating_sub(1));
    let end = s.pick(Ns::from_ms(100), Ns::from_secs(2), Ns::from_secs(10));
    let unpin = s.pick(Ns::from_ms(10), Ns::from_ms(100), Ns::from_secs(1));
    [("pinned", "0".to_string()), ("unpinned", all)]
        .into_iter()
        .map(|(name, after)| {
            let mut metrics = vec![
                metric("completion ms", Kind::Turnaround, |r| completion(r, "hog")),
                metric("mean turnaround ms", Kind::Turnaround, |r| {
                    let v: Option<Vec<f64>> = tasks(r, "hog").map(turnaround).collect();
                    v.filter(|v| !v.is_empty()).map(|v| v.iter().sum::<f64>() / v.len() as f64)
                }),
                metric("switches among run tasks", Kind::Switches, switches),
                metric("switches (all, procfs)", Kind::Info, all_switches),
                metric("migrations", Kind::Migrations, migrations),
            ];
            if name == "unpinned" {
                metrics.extend([
                    metric("time to balance ms (half the hogs moved)", Kind::Balance, move |r| {
                        time_to_balance(r, unpin)
                    }),
                    metric("first move after unpinning ms", Kind::Info, move |r| first_move(r, unpin)),
                ]);
            }
            let params = vec![kv("work", s.pick("5ms", "150ms", "1s")), kv("unpin", unpin), kv("after", after)];
            case("eight-hogs", name.into(), "eight-hogs.toml", EIGHT_HOGS, params, end, finite(end), metrics)
        })
        .collect()
}

/// Sleep overshoot on an idle CPU and beside a hog on the same CPU.
fn timer(s: Scale) -> Vec<Case> {
    let loops: u64 = s.pick(20, 500, 3000);
    let sleep = Ns::from_ms(1);
    let end = s.pick(Ns::from_ms(100), Ns::from_secs(2), Ns::from_secs(10));
    [("idle cpu", 0), ("beside a hog", 1)]
        .into_iter()
        .map(|(name, hogs)| {
            let metrics = vec![
                metric("sleep overshoot µs", Kind::Timer, move |r| overshoot_us(r, loops, sleep)),
                metric("sleeper turnaround ms", Kind::Turnaround, |r| task(r, "sleeper").and_then(turnaround)),
                metric("sleeper CPU time ms", Kind::CpuTime, |r| task(r, "sleeper").map(|t| ms(t.runtime_ns))),
            ];
            let params = vec![kv("loops", loops), kv("sleep", sleep), kv("hogs", hogs)];
            case("timer", name.into(), "timer.toml", TIMER, params, end, finite(end), metrics)
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
    v.extend(timer(s));
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
    /// The first repetition's seed; repetition `i` uses `seed + i`.
    pub seed: u64,
    /// How many times each case runs ([`REPETITIONS`]).
    pub repetitions: usize,
    /// Time series sampling (the figures, and the nice pairs' shares need it).
    pub sample: Ns,
    /// Host runs: raise the autogroup nice of schedlab's session to this for their
    /// duration ([`schedlab_host::autogroup::boost`]), so other sessions' work on a busy
    /// host takes little from the run (`None`: `--no-boost`, each host run says so).
    pub boost: Option<i32>,
    /// Simulations: put every task in one session with this autogroup nice, as the host
    /// run's threads are all in schedlab's session (`None`: the default session, the root
    /// group — for a host without autogroup). [`Placement::Root`] cases ignore it.
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

/// A metric over the repetitions: the median and the range of those that measured it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Spread {
    pub median: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// Repetitions that measured it.
    pub n: usize,
}

impl Spread {
    /// Of the values measured (`None`s are left out). An even count's median is the mean
    /// of the middle two.
    pub fn of(values: &[Option<f64>]) -> Spread {
        let mut v: Vec<f64> = values.iter().flatten().copied().filter(|x| x.is_finite()).collect();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = match n {
            0 => None,
            _ if n % 2 == 1 => Some(v[n / 2]),
            _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
        };
        Spread { median, min: v.first().copied(), max: v.last().copied(), n }
    }

    /// (max − min) / |median|: how far apart the repetitions were.
    pub fn relative_range(&self) -> Option<f64> {
        let (m, lo, hi) = (self.median?, self.min?, self.max?);
        (m != 0.0).then(|| (hi - lo) / m.abs())
    }
}

/// What a row's comparison concluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Within its tolerance.
    Agrees,
    /// Beyond its tolerance.
    Gap,
    /// Shown for context ([`Kind::Info`]).
    Context,
    /// One side did not measure it.
    NotMeasured,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Agrees => "ok",
            Verdict::Gap => "GAP",
            Verdict::Context => "context",
            Verdict::NotMeasured => "not measured",
        }
    }
}

/// A row of a case's table.
#[derive(Clone, Debug)]
pub struct Row {
    pub metric: &'static str,
    pub kind: Kind,
    pub sim: Spread,
    pub host: Spread,
}

impl Row {
    /// (simulated − measured) / measured of the medians, when both exist and the
    /// measurement is not 0.
    pub fn rel_error(&self) -> Option<f64> {
        match (self.sim.median, self.host.median) {
            (Some(s), Some(h)) if h != 0.0 => Some((s - h) / h.abs()),
            (Some(s), Some(h)) if s == h => Some(0.0),
            _ => None,
        }
    }

    /// Whether the error is within the kind's tolerance (`None`: not judged or not measured).
    pub fn within(&self) -> Option<bool> {
        Some(self.rel_error()?.abs() <= self.kind.tolerance()?)
    }

    pub fn verdict(&self) -> Verdict {
        match (self.kind, self.within()) {
            (Kind::Info, _) => Verdict::Context,
            (_, Some(true)) => Verdict::Agrees,
            (_, Some(false)) => Verdict::Gap,
            (_, None) => Verdict::NotMeasured,
        }
    }
}

/// A case's runs and table.
pub struct CaseResult {
    pub experiment: &'static str,
    pub name: String,
    pub id: String,
    /// The first repetition's simulation (figures, JSON).
    pub sim: RunRecord,
    /// The first traced host run (shares, switches, figures).
    pub host: Option<RunRecord>,
    /// The first untraced host run (timings).
    pub host_untraced: Option<RunRecord>,
    /// Host runs made (traced + untraced), and what they warned about (trace against procfs,
    /// a boost refused), each warning once with how many runs said it.
    pub host_runs: usize,
    pub host_warnings: Vec<(String, usize)>,
    pub rows: Vec<Row>,
}

fn spec(c: &Case, o: &Options, sched: &str, sets: &[(String, String)], end: Ns) -> Result<RunSpec, RunError> {
    let mut wl = schedlab_workload::parse_workload(c.file, c.workload, &c.params, o.machine.nr_cpus())?;
    if sched != schedlab_run::Backend::HOST_SCHEDULER {
        let nice = match c.placement {
            Placement::AsHost => o.session,
            Placement::Root => None,
            Placement::Autogroup => Some(o.session.unwrap_or(0)),
        };
        if let Some(nice) = nice {
            in_session(&mut wl, nice);
        }
    }
    let mut spec = RunSpec::new(wl, (*o.machine).clone(), end);
    spec.sched = sched.to_string();
    spec.sets = sets.to_vec();
    spec.seed = o.seed;
    spec.sample = Some(o.sample);
    spec.trace = true;
    spec.host_boost = o.boost.is_some();
    Ok(spec)
}

/// Every metric of `c` read off `r`.
fn values(c: &Case, r: &RunRecord) -> Vec<Option<f64>> {
    c.metrics.iter().map(|m| (m.value)(r)).collect()
}

/// The repetitions of one case, metric by metric; the first run kept.
struct Reps {
    first: Option<RunRecord>,
    values: Vec<Vec<Option<f64>>>,
}

impl Reps {
    fn column(&self, m: usize) -> Vec<Option<f64>> {
        self.values.iter().map(|v| v[m]).collect()
    }
}

/// The simulations of `c`, one per seed.
fn simulate(c: &Case, o: &Options, keep_going: &(dyn Fn() -> bool + Sync)) -> Result<Reps, RunError> {
    type Rep = (Vec<Option<f64>>, Option<RunRecord>);
    let runs: Vec<Result<Rep, RunError>> = (0..o.repetitions.max(1))
        .into_par_iter()
        .map(|i| {
            let mut sp = spec(c, o, &o.sched, &o.sets, c.sim_end)?;
            sp.seed = o.seed + i as u64;
            let r = sp.run(&mut |_| keep_going())?;
            Ok((values(c, &r), (i == 0).then_some(r)))
        })
        .collect();
    let mut reps = Reps { first: None, values: Vec::new() };
    for r in runs {
        let (v, first) = r?;
        reps.values.push(v);
        reps.first = reps.first.or(first);
    }
    Ok(reps)
}

/// The host runs of `c`: each repetition traced then untraced, one at a time. Returns the
/// traced and the untraced repetitions and the warnings of every run.
fn measure(
    c: &Case,
    o: &Options,
    progress: &mut dyn FnMut(&str),
    keep_going: &(dyn Fn() -> bool + Sync),
) -> Result<(Reps, Reps, Vec<String>), RunError> {
    let mut traced = Reps { first: None, values: Vec::new() };
    let mut untraced = Reps { first: None, values: Vec::new() };
    let mut warnings = Vec::new();
    for i in 0..o.repetitions.max(1) {
        if !keep_going() {
            break;
        }
        progress(&format!("host runs {} ({}/{}, traced and untraced)", c.id(), i + 1, o.repetitions.max(1)));
        let mut sp = spec(c, o, schedlab_run::Backend::HOST_SCHEDULER, &[], c.end)?;
        sp.seed = o.seed + i as u64;
        let r = sp.run(&mut |_| keep_going())?;
        warnings.extend(r.warnings.iter().cloned());
        traced.values.push(values(c, &r));
        traced.first = traced.first.take().or(Some(r));
        sp.host_tracing = false;
        sp.trace = false;
        if !keep_going() {
            break;
        }
        let r = sp.run(&mut |_| keep_going())?;
        warnings.extend(r.warnings.iter().cloned());
        untraced.values.push(values(c, &r));
        untraced.first = untraced.first.take().or(Some(r));
    }
    Ok((traced, untraced, warnings))
}

/// What a warning is about, without its numbers: the text before its first `:` or digit
/// (a trace/procfs warning is counted by its task, a steal-time one once).
fn warning_key(w: &str) -> &str {
    w.split([':', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9']).next().unwrap_or("")
}

/// Each distinct warning once (the first run's text), with how many runs said it.
fn tally(warnings: Vec<String>) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for w in warnings {
        match out.iter_mut().find(|(k, _)| warning_key(k) == warning_key(&w)) {
            Some((_, n)) => *n += 1,
            None => out.push((w, 1)),
        }
    }
    out
}

/// Runs `cases`: the simulations (`o.repetitions` seeds each) in parallel, then (with
/// `o.host`) the host runs one at a time, `o.repetitions` times each, shared by cases that
/// differ only in where the simulated tasks are; `progress` hears each host run as it
/// starts, and `keep_going` stops host runs early (Ctrl-C) with what they measured.
pub fn run(
    cases: &[Case],
    o: &Options,
    progress: &mut dyn FnMut(&str),
    keep_going: &(dyn Fn() -> bool + Sync),
) -> Result<Vec<CaseResult>, RunError> {
    progress(&format!("{} simulations ({} on {})", cases.len() * o.repetitions.max(1), o.sched, o.machine.name));
    let sims: Vec<Result<Reps, RunError>> = cases.par_iter().map(|c| simulate(c, o, keep_going)).collect();
    let _boost = match o.boost.filter(|_| o.host) {
        Some(nice) => boost_session(nice)?,
        None => None,
    };
    // Per measured case: its index, the traced and untraced repetitions, the warnings.
    type Measured = (usize, Reps, Reps, Vec<(String, usize)>);
    let mut measured: Vec<Measured> = Vec::new();
    let mut out = Vec::new();
    for (i, (c, sim)) in cases.iter().zip(sims).enumerate() {
        let sim = sim?;
        let shared = measured.iter().position(|(j, ..)| cases[*j].host_key() == c.host_key());
        let m = match shared {
            Some(k) => k,
            None if o.host && keep_going() => {
                let (t, u, w) = measure(c, o, progress, keep_going)?;
                measured.push((i, t, u, tally(w)));
                measured.len() - 1
            }
            None => usize::MAX,
        };
        let host = measured.get(m);
        let rows = c
            .metrics
            .iter()
            .enumerate()
            .map(|(k, metric)| {
                let h = host.map(|(_, t, u, _)| if metric.kind.untraced() { u } else { t });
                Row {
                    metric: metric.name,
                    kind: metric.kind,
                    sim: Spread::of(&sim.column(k)),
                    host: h.map_or_else(Spread::default, |h| Spread::of(&h.column(k))),
                }
            })
            .chain(host.map(|(_, t, ..)| Row {
                metric: "host: other threads' CPU %",
                kind: Kind::Info,
                sim: Spread::default(),
                host: Spread::of(&[t.first.as_ref().and_then(other_load)]),
            }))
            .collect();
        out.push(CaseResult {
            experiment: c.experiment,
            name: c.name.clone(),
            id: c.id(),
            sim: sim.first.ok_or_else(|| RunError::Input(format!("{}: no simulation ran", c.id())))?,
            host: host.and_then(|(_, t, ..)| t.first.clone()),
            host_untraced: host.and_then(|(_, _, u, _)| u.first.clone()),
            host_runs: host.map_or(0, |(_, t, u, _)| t.values.len() + u.values.len()),
            host_warnings: host.map_or_else(Vec::new, |(.., w)| w.clone()),
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

/// `median [min–max]`, or the value alone when every repetition agreed (a deterministic
/// simulation) or there was one.
fn spread_cell(s: &Spread) -> String {
    match (s.min, s.max) {
        (Some(lo), Some(hi)) if s.n > 1 && num(Some(lo)) != num(Some(hi)) => {
            format!("{} [{}–{}]", num(s.median), num(Some(lo)), num(Some(hi)))
        }
        _ => num(s.median),
    }
}

/// Why a row is beyond its tolerance: the measurement's own spread when the simulated
/// median lies within the range of the host's repetitions, else the known cause of the
/// experiment's gap ([`GAP_CAUSES`]).
pub fn cause(experiment: &str, case: &str, row: &Row) -> String {
    if row.verdict() != Verdict::Gap {
        return String::new();
    }
    if let (Some(s), Some(lo), Some(hi)) = (row.sim.median, row.host.min, row.host.max) {
        if row.host.n > 1 && lo <= s && s <= hi {
            return "host noise: the simulated median is within the range of the host's repetitions".into();
        }
    }
    GAP_CAUSES
        .iter()
        .find(|g| experiment == g.experiment && case.contains(g.case) && g.kinds.contains(&row.kind))
        .map_or_else(|| "not yet explained".into(), |g| g.cause.to_string())
}

/// A known cause of a gap: for rows of `experiment`, cases containing `case`, metrics of
/// `kinds`.
pub struct GapCause {
    pub experiment: &'static str,
    pub case: &'static str,
    pub kinds: &'static [Kind],
    pub cause: &'static str,
}

/// The causes of the gaps this table shows on the 2-CPU 6.18 host it was measured on
/// (issue 33 names them; the numbers are in `docs/validation.md`).
pub const GAP_CAUSES: &[GapCause] = &[
    // Before the `pinned` causes: their case filter matches `unpinned` too.
    GapCause {
        experiment: "pingpong",
        case: "unpinned",
        kinds: &[Kind::PingPong, Kind::Switches, Kind::Migrations],
        cause: "host load: measured while other helpers' builds kept both vCPUs busy, when the host packs the \
                pair on one vCPU (no idle CPU for select_idle_sibling); on a quiet host it spreads as the model \
                does, 55–68 % of round trips across CPUs, 37–49 µs a round trip (docs/validation.md)",
    },
    GapCause {
        experiment: "pingpong",
        case: "pinned",
        kinds: &[Kind::Migrations],
        cause: "the host runner: a task thread starts on its creator's CPU and then sets its affinity (one \
                migration each); the model creates it on its CPU",
    },
    GapCause {
        experiment: "eight-hogs",
        case: "pinned",
        kinds: &[Kind::Migrations],
        cause: "the host runner: a task thread starts on its creator's CPU and then sets its affinity (one \
                migration each); the model creates it on its CPU",
    },
    GapCause {
        experiment: "messaging",
        case: "",
        kinds: &[Kind::Messaging, Kind::Switches, Kind::Wakeups, Kind::Migrations],
        cause: "the model's messaging dynamics (pipe/socket wake rules, sync wakeups, wakeup preemption through \
                group entities; issue 33 item 1, being worked on by helper `msg`)",
    },
    GapCause {
        experiment: "pingpong",
        case: "pinned",
        kinds: &[Kind::PingPong, Kind::Switches],
        cause: "same-CPU pipe wakeup and switch costs (issue 33 item 2: one cost, one benchmark, one charge)",
    },
    GapCause {
        experiment: "cpu-io",
        case: "",
        kinds: &[Kind::CpuTime, Kind::Turnaround, Kind::Share, Kind::Wakeups, Kind::Switches],
        cause: "a sleep's hrtimer_start and timer_irq costs fitted on an idle CPU and charged on a busy one too \
                (issue 33 item 2: the model's io task uses more CPU beside a hog than alone, the host's less)",
    },
    GapCause {
        experiment: "timer",
        case: "",
        kinds: &[Kind::Timer, Kind::CpuTime, Kind::Turnaround],
        cause: "timer costs do not depend on whether the CPU was busy (issue 33 item 2: simulated CPU time is \
                the same idle and busy, the host's differs by 30 %); the host's overshoot measured at load ~8 \
                (its timer expiries wait for busy vCPUs)",
    },
    GapCause {
        experiment: "eight-hogs",
        case: "unpinned",
        kinds: &[Kind::Balance, Kind::Migrations, Kind::Turnaround, Kind::Switches],
        cause: "the first migration after unpinning waits for where the saturated balance_interval stands \
                (56 or 156 ms); the host moves the first task sooner, the rest more gradually (issue 33)",
    },
];

/// The table's cells: header, then one row per (case, metric).
pub fn table_cells(results: &[CaseResult]) -> Vec<Vec<String>> {
    let head = ["experiment", "case", "metric", "simulated", "measured", "rel. error", "tolerance", "verdict", "cause"];
    let mut rows = vec![head.map(String::from).to_vec()];
    for r in results {
        for row in &r.rows {
            rows.push(vec![
                r.experiment.to_string(),
                r.name.clone(),
                row.metric.to_string(),
                spread_cell(&row.sim),
                spread_cell(&row.host),
                row.rel_error().map_or("-".into(), |e| format!("{:+.1}%", 100.0 * e)),
                row.kind.tolerance().map_or("-".into(), |t| format!("{:.0}% ({})", 100.0 * t, row.kind.name())),
                row.verdict().name().to_string(),
                cause(r.experiment, &r.name, row),
            ]);
        }
    }
    rows
}

/// The table as aligned text (the cause column last, unpadded).
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
                match i {
                    _ if i + 1 == row.len() => c.clone(),
                    0..=2 | 7 => format!("{c}{}", " ".repeat(pad)),
                    _ => format!("{}{c}", " ".repeat(pad)),
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

/// Where `docs/validation.md` keeps the generated table: between these two lines.
pub const DOC_BEGIN: &str = "<!-- validate table: generated by `schedlab study validate --doc docs/validation.md` -->";
pub const DOC_END: &str = "<!-- end of the validate table -->";

/// `doc` with the text between [`DOC_BEGIN`] and [`DOC_END`] replaced by `table` (`Err`:
/// the markers are missing or out of order).
pub fn splice_doc(doc: &str, table: &str) -> Result<String, String> {
    let b = doc.find(DOC_BEGIN).ok_or_else(|| format!("no line `{DOC_BEGIN}`"))?;
    let e = doc.find(DOC_END).filter(|&e| e > b).ok_or_else(|| format!("no line `{DOC_END}` after `{DOC_BEGIN}`"))?;
    Ok(format!("{}{DOC_BEGIN}\n\n{}\n\n{}", &doc[..b], table.trim_end(), &doc[e..]))
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

    fn one(v: Option<f64>) -> Spread {
        Spread::of(&[v])
    }

    #[test]
    fn relative_errors_and_tolerances() {
        let row = |kind, sim, host| Row { metric: "m", kind, sim: one(sim), host: one(host) };
        assert_eq!(row(Kind::Share, Some(105.0), Some(100.0)).rel_error(), Some(0.05));
        assert_eq!(row(Kind::Share, Some(104.0), Some(100.0)).within(), Some(true));
        assert_eq!(row(Kind::Share, Some(94.0), Some(100.0)).within(), Some(false));
        assert_eq!(row(Kind::Switches, Some(114.0), Some(100.0)).within(), Some(true));
        assert_eq!(row(Kind::Info, Some(1.0), Some(100.0)).within(), None);
        assert_eq!(row(Kind::Switches, Some(0.0), Some(0.0)).rel_error(), Some(0.0));
        assert_eq!(row(Kind::Switches, Some(3.0), Some(0.0)).rel_error(), None);
        assert_eq!(row(Kind::Messaging, None, Some(1.0)).rel_error(), None);
        assert_eq!(row(Kind::Wakeups, Some(120.0), Some(100.0)).verdict(), Verdict::Gap);
        assert_eq!(row(Kind::CpuTime, Some(96.0), Some(100.0)).verdict(), Verdict::Agrees);
        assert_eq!(row(Kind::Info, Some(1.0), Some(100.0)).verdict(), Verdict::Context);
        assert_eq!(row(Kind::Timer, None, Some(100.0)).verdict(), Verdict::NotMeasured);
    }

    /// The median of the repetitions that measured (odd and even counts), their range, and
    /// the table's `median [min–max]`.
    #[test]
    fn spreads_take_the_median_and_range_of_what_was_measured() {
        let s = Spread::of(&[Some(3.0), None, Some(1.0), Some(2.0)]);
        assert_eq!(s, Spread { median: Some(2.0), min: Some(1.0), max: Some(3.0), n: 3 });
        assert_eq!(Spread::of(&[Some(4.0), Some(1.0), Some(2.0), Some(3.0)]).median, Some(2.5));
        assert_eq!(Spread::of(&[None, None]), Spread::default());
        assert_eq!(spread_cell(&s), "2.00 [1.00–3.00]");
        assert_eq!(spread_cell(&Spread::of(&[Some(5.0), Some(5.0)])), "5.00");
        assert_eq!(s.relative_range(), Some(1.0));
    }

    /// A gap's cause: the host's spread when it is wider than twice the tolerance, else the
    /// experiment's known cause; rows within tolerance have none.
    #[test]
    fn gaps_name_their_cause() {
        let row = |host: &[Option<f64>]| Row {
            metric: "m",
            kind: Kind::Messaging,
            sim: one(Some(200.0)),
            host: Spread::of(host),
        };
        assert!(cause("messaging", "threads pipe 1 group root", &row(&[Some(100.0)])).contains("helper `msg`"));
        let noisy = row(&[Some(50.0), Some(100.0), Some(250.0)]);
        assert!(cause("messaging", "x", &noisy).starts_with("host noise"), "{}", cause("messaging", "x", &noisy));
        let wide_but_beyond = row(&[Some(50.0), Some(100.0), Some(150.0)]);
        assert!(cause("messaging", "x", &wide_but_beyond).contains("helper `msg`"));
        assert_eq!(cause("nice-pairs", "0 vs 0", &row(&[Some(100.0)])), "not yet explained");
        assert_eq!(cause("messaging", "x", &row(&[Some(195.0)])), "");
    }

    /// Warnings are counted by what they are about, not by their numbers.
    #[test]
    fn warnings_are_tallied_by_task() {
        let t = tally(vec![
            "task `a`: run time 1.0 ms by the trace".into(),
            "task `a`: run time 2.0 ms by the trace".into(),
            "task `b`: run time 1.0 ms by the trace".into(),
            "the hypervisor took 1.0 ms".into(),
            "the hypervisor took 9.5 ms".into(),
        ]);
        let counts: Vec<usize> = t.iter().map(|(_, n)| *n).collect();
        assert_eq!(counts, [2, 1, 2], "{t:?}");
    }

    #[test]
    fn the_doc_keeps_its_prose_around_the_table() {
        let doc = format!("# T\nprose\n{DOC_BEGIN}\nold\n{DOC_END}\nmore\n");
        let new = splice_doc(&doc, "| a |\n").unwrap();
        assert_eq!(new, format!("# T\nprose\n{DOC_BEGIN}\n\n| a |\n\n{DOC_END}\nmore\n"));
        assert_eq!(splice_doc(&new, "| a |").unwrap(), new, "regenerating changes nothing else");
        assert!(splice_doc("no markers", "t").is_err());
    }

    #[test]
    fn every_case_parses_at_every_scale() {
        for s in [Scale::Tiny, Scale::Quick, Scale::Full] {
            let cs = cases(s, 2);
            assert_eq!(cs.len(), 3 + 3 + 2 + 2 * 2 * 2 * 2 + 2 + 2 + 2);
            for c in &cs {
                schedlab_workload::parse_workload(c.file, c.workload, &c.params, 2)
                    .unwrap_or_else(|e| panic!("{}: {e}", c.id()));
            }
        }
    }

    /// Cases that differ only in where the simulated tasks are share their host runs.
    #[test]
    fn root_and_autogroup_messaging_share_host_runs() {
        let cs = cases(Scale::Tiny, 2);
        let keys: std::collections::BTreeSet<_> = cs.iter().map(|c| c.host_key()).collect();
        assert_eq!(keys.len(), cs.len() - 8);
    }
}
