//! Study `edf-simso`: random periodic task sets of increasing utilisation under Linux's
//! `SCHED_DEADLINE` (simulated: CBS per task, global EDF by push/pull over `cpudl`) next to
//! SimSo's ideal global EDF (`simso.schedulers.EDF`, no overheads) on the same sets.
//!
//! Task sets: UUniFast-discard (Bini & Buttazzo 2005, "Measuring the performance of
//! schedulability tests"; Davis & Burns 2009 discard any set with a task above 1), seeded
//! from one `RngStreams` stream; periods drawn from a fixed list so the hyperperiod stays
//! short; WCETs rounded to 10 µs. Both sides release every task's jobs synchronously and
//! strictly periodically, with implicit deadlines; a late job is not aborted, the next one
//! starts when it ends (rt-app's timer). Job *k* of a task is the same job on both sides,
//! so response times compare job by job.
//!
//! The simulated tasks start at `T_max − T` and call the rt-app timer at once, so their
//! first releases coincide at `T_max` (one timer grid per task, `exec.rs` `Op::Timer`);
//! a job's release is the task's first `sched_waking` plus `k·T`. Each reservation is the
//! WCET plus `margin` (the kernel work charged to the task per job: its timer syscall, the
//! switches, interrupts that hit it), so a job's own work never exhausts its CBS budget.

mod simso;

use rand::RngExt;
use rayon::prelude::*;
use schedlab_probe::{Probe, ProbeEvent};
use schedlab_run::{RunError, RunSpec};
use schedlab_sim::{Ns, RngStreams, TaskId};

pub use simso::{simso_python, SimsoOutcome};

pub const DESCRIPTION: &str =
    "SCHED_DEADLINE (CBS + push/pull global EDF) vs SimSo's ideal global EDF on UUniFast task sets";

/// The study's parameters (`--param KEY=VALUE`).
#[derive(Clone, Debug)]
pub struct Params {
    /// CPUs (machine preset `smpN`).
    pub cpus: usize,
    /// Tasks per set.
    pub tasks: usize,
    /// Total utilisations, in thousandths (3500 = 3.5 of `cpus`).
    pub utils: Vec<u64>,
    /// Sets per utilisation.
    pub sets: usize,
    /// Periods a task's is drawn from, in ms.
    pub periods_ms: Vec<u64>,
    /// Reservation beyond the WCET.
    pub margin: Ns,
    /// Measured time (from the first release).
    pub duration: Ns,
    /// The simulated scheduler (a fair class with the chain: `cfs`, `eevdf`, versions).
    pub sched: String,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            cpus: 4,
            tasks: 8,
            utils: vec![1500, 2500, 3000, 3500, 3800],
            sets: 5,
            periods_ms: vec![10, 20, 25, 40, 50, 100],
            margin: Ns::from_us(50),
            duration: Ns::from_secs(2),
            sched: "eevdf".into(),
        }
    }
}

impl Params {
    /// Applies one `--param` (its syntax checked here; the whole set by [`Params::check`]
    /// before anything runs).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), RunError> {
        let bad = |why: &str| RunError::Input(format!("study edf-simso: --param {key}={value}: {why}"));
        let int = |v: &str| v.trim().parse::<u64>().map_err(|_| bad("not a whole number"));
        match key {
            "cpus" => self.cpus = int(value)?.min(1024) as usize,
            "tasks" => self.tasks = int(value)? as usize,
            "sets" => self.sets = int(value)? as usize,
            "utils" => {
                self.utils = value
                    .split(',')
                    .map(|u| parse_util(u).ok_or_else(|| bad("utilisations are numbers like 2.5 (of the CPUs)")))
                    .collect::<Result<_, _>>()?
            }
            "periods_ms" => self.periods_ms = value.split(',').map(int).collect::<Result<_, _>>()?,
            "margin" => self.margin = schedlab_sim::parse_duration(value).map_err(|m| bad(&m))?,
            "sched" => self.sched = value.into(),
            _ => return Err(bad("unknown parameter (cpus, tasks, sets, utils, periods_ms, margin, sched)")),
        }
        Ok(())
    }

    /// Limits, checked up front.
    pub fn check(&self) -> Result<(), String> {
        if !(1..=64).contains(&self.cpus) || !(1..=256).contains(&self.tasks) || !(1..=100).contains(&self.sets) {
            return Err("cpus 1..=64, tasks 1..=256 and sets 1..=100".into());
        }
        if self.utils.is_empty() || self.utils.iter().any(|&u| u == 0 || u > 1000 * self.cpus as u64) {
            return Err(format!("each utilisation must be in (0, {}] (the CPUs)", self.cpus));
        }
        if self.utils.iter().any(|&u| u > 1000 * self.tasks as u64) {
            return Err("a utilisation above the number of tasks cannot be split".into());
        }
        if self.periods_ms.is_empty() || self.periods_ms.iter().any(|&p| !(1..=1000).contains(&p)) {
            return Err("periods are 1..=1000 ms".into());
        }
        if self.duration < Ns::from_ms(*self.periods_ms.iter().max().unwrap_or(&1)) || self.duration > Ns::from_secs(60)
        {
            return Err("the duration must cover the longest period and stay within 60 s".into());
        }
        Ok(())
    }
}

fn parse_util(s: &str) -> Option<u64> {
    let v: f64 = s.trim().parse().ok()?;
    (v.is_finite() && v > 0.0).then(|| (v * 1000.0).round() as u64)
}

/// One periodic task: period and WCET, in ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeriodicTask {
    pub period: u64,
    pub wcet: u64,
}

/// UUniFast-discard: `n` utilisations summing to `total` (thousandths), none above 1.
fn uunifast(rng: &mut schedlab_sim::SimRng, n: usize, total: u64) -> Vec<f64> {
    let target = total as f64 / 1000.0;
    loop {
        let mut left = target;
        let mut u = Vec::with_capacity(n);
        for i in 1..n {
            let r: f64 = rng.random();
            let next = left * r.powf(1.0 / (n - i) as f64);
            u.push(left - next);
            left = next;
        }
        u.push(left);
        if u.iter().all(|&x| x <= 1.0) {
            return u;
        }
    }
}

/// The task sets: for each utilisation, `sets` sets of `tasks` tasks.
pub fn generate(p: &Params, seed: u64) -> Vec<(u64, Vec<Vec<PeriodicTask>>)> {
    let mut rng = RngStreams::new(seed).stream("edf-simso", 0);
    let step = 10_000; // WCETs in 10 µs steps
    p.utils
        .iter()
        .map(|&total| {
            let sets = (0..p.sets)
                .map(|_| {
                    uunifast(&mut rng, p.tasks, total)
                        .into_iter()
                        .map(|u| {
                            let period = p.periods_ms[rng.random_range(0..p.periods_ms.len())] * 1_000_000;
                            let wcet =
                                ((u * period as f64 / step as f64).round() as u64).clamp(1, period / step) * step;
                            PeriodicTask { period, wcet }
                        })
                        .collect()
                })
                .collect();
            (total, sets)
        })
        .collect()
}

/// The workload of one set: deadline tasks started so their first releases coincide.
pub fn workload_text(set: &[PeriodicTask], margin: Ns) -> String {
    let tmax = set.iter().map(|t| t.period).max().unwrap_or(0);
    let mut w = String::from("# edf-simso: one UUniFast task set\n");
    for (i, t) in set.iter().enumerate() {
        let runtime = (t.wcet + margin.0).min(t.period);
        w += &format!(
            "[[task]]\nname = \"t{i}\"\npolicy = \"deadline\"\nruntime = \"{runtime}ns\"\nperiod = \"{}ns\"\nstart = \"{}ns\"\n\
             program = [ {{ loop = \"forever\", do = [ {{ timer = \"{}ns\" }}, {{ mark_begin = \"job\" }}, {{ run = \"{}ns\" }}, {{ mark_end = \"job\" }} ] }} ]\n",
            t.period,
            tmax - t.period,
            t.period,
            t.wcet
        );
    }
    w
}

/// Per task: the first `sched_waking` (its first release) and each job's completion; and
/// the migrations.
#[derive(Default)]
struct Jobs {
    first_release: Vec<Option<Ns>>,
    ends: Vec<Vec<Ns>>,
    migrations: u64,
}

impl Jobs {
    fn grow(&mut self, t: TaskId) {
        if self.ends.len() <= t {
            self.ends.resize(t + 1, Vec::new());
            self.first_release.resize(t + 1, None);
        }
    }
}

impl Probe for Jobs {
    fn event(&mut self, ev: &ProbeEvent) {
        match *ev {
            ProbeEvent::Waking { time, task, .. } => {
                self.grow(task);
                self.first_release[task].get_or_insert(time);
            }
            ProbeEvent::Span { time, task, .. } => {
                self.grow(task);
                self.ends[task].push(time);
            }
            ProbeEvent::Migrate { .. } => self.migrations += 1,
            _ => {}
        }
    }
}

/// Response times of one set's jobs, per task in release order: `Some(ns)`, or `None`
/// for a job unfinished at the end. Only jobs whose deadline falls within the duration.
pub type Responses = Vec<Vec<Option<u64>>>;

/// What the simulated kernel did with one set.
#[derive(Clone, Debug, Default)]
pub struct LinuxSet {
    pub responses: Responses,
    pub throttled: u64,
    pub pushes: u64,
    pub pulls: u64,
    pub migrations: u64,
}

/// Runs one set under the simulated `SCHED_DEADLINE`.
pub fn run_linux(set: &[PeriodicTask], p: &Params, seed: u64) -> Result<LinuxSet, RunError> {
    let tmax = set.iter().map(|t| t.period).max().unwrap_or(0);
    let end = Ns(tmax) + p.duration + Ns::from_ms(1);
    let machine = format!("smp{}", p.cpus);
    let mut spec = RunSpec::load("edf-simso.toml", &workload_text(set, p.margin), Some(&machine), &[], Some(end))?;
    spec.sched = p.sched.clone();
    // SimSo has no admission test; lift the cap so every set up to U = CPUs runs.
    spec.sets = vec![("sched_rt_runtime_us".into(), "-1".into())];
    spec.seed = seed;
    let mut jobs = Jobs::default();
    let opts = schedlab_run::RunOptions { probe: Some(&mut jobs), ..Default::default() };
    let rec = spec.run_with(opts, &mut |_| true)?.record;
    let mut out = LinuxSet::default();
    for (i, t) in set.iter().enumerate() {
        // Task ids follow start times, not the workload's order.
        let name = format!("t{i}");
        let id = rec.tasks.iter().find(|x| x.name == name).map_or(usize::MAX, |x| x.tid);
        let (Some(first), Some(ends)) = (jobs.first_release.get(id).copied().flatten(), jobs.ends.get(id)) else {
            return Err(RunError::Simulation(format!("edf-simso: task t{i} was never released")));
        };
        let horizon = first + p.duration;
        let mut resp = Vec::new();
        for k in 0.. {
            let release = first + Ns(k * t.period);
            if release + Ns(t.period) > horizon {
                break;
            }
            resp.push(ends.get(k as usize).map(|&e| e.saturating_sub(release).0));
        }
        out.responses.push(resp);
    }
    let counter = |n: &str| rec.policy_counters.get(n).copied().unwrap_or(0);
    out.throttled = counter("dl_throttled");
    out.pushes = counter("dl_pushes");
    out.pulls = counter("dl_pulls");
    out.migrations = jobs.migrations;
    Ok(out)
}

/// The study's result for one utilisation.
pub struct UtilResult {
    pub util: u64,
    pub sets: Vec<Vec<PeriodicTask>>,
    pub linux: Vec<LinuxSet>,
    /// `None` when SimSo could not run (the reason is in [`Study::simso`]).
    pub simso: Option<Vec<Responses>>,
}

/// The whole study.
pub struct Study {
    pub params: Params,
    pub seed: u64,
    pub results: Vec<UtilResult>,
    /// SimSo's version, or why it did not run.
    pub simso: SimsoOutcome,
}

/// Runs the study: every set under the simulated kernel in parallel, then all sets in one
/// SimSo process.
pub fn run(p: &Params, seed: u64) -> Result<Study, RunError> {
    p.check().map_err(|m| RunError::Input(format!("study edf-simso: {m}")))?;
    let gen = generate(p, seed);
    let flat: Vec<&Vec<PeriodicTask>> = gen.iter().flat_map(|(_, s)| s.iter()).collect();
    let linux: Vec<LinuxSet> = flat.par_iter().map(|s| run_linux(s, p, seed)).collect::<Result<_, _>>()?;
    let (simso, outcome) = simso::run(p, &flat);
    let mut linux = linux.into_iter();
    let mut simso = simso.map(|v| v.into_iter());
    let results = gen
        .into_iter()
        .map(|(util, sets)| {
            let n = sets.len();
            UtilResult {
                util,
                linux: linux.by_ref().take(n).collect(),
                simso: simso.as_mut().map(|s| s.by_ref().take(n).collect()),
                sets,
            }
        })
        .collect();
    Ok(Study { params: p.clone(), seed, results, simso: outcome })
}

mod table;
pub use table::{summary, text, Summary};
