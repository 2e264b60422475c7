//! Running any built-in study under several seeds and judging it by its contract.
//!
//! A study's runs are planned first ([`plan`]: every run of every seed, so a bad parameter
//! fails before anything starts and a front end can count them for a progress bar), then
//! run in one parallel pool ([`Plan::run`]) and read into one [`SeedRuns`] per seed, which
//! the study's evidence function turns into [`Outcome`]s. The same path serves `schedlab
//! study` and `schedlab reproduce`.

use crate::contract::{judge_all, Outcome, SeedRuns};
use crate::suite::{ExperimentResult, RunOpts, Suite};
use crate::{edf_simso, validate, Kind, Study};
use rayon::prelude::*;
use schedlab_run::{RunError, RunRecord, RunSpec};
use schedlab_sim::Ns;

/// Tasks of an explained study run that keep their worst waits (the others keep their
/// totals by cause): more than the HTML report shows (5) and than any study's mechanism
/// quotes, few enough that 400 runs of thousands of hackbench tasks fit in memory (with
/// every task's worst waits kept, `reproduce all` was OOM-killed at 22 GB).
pub const EXPLAINED_TASKS: usize = 64;

/// The machine the `validate` study's simulated side runs on when no host is measured: the
/// student report's cases pin their programs to one CPU, so the CPU count only sets the
/// tunables' scaling (`smp4`: factor 3, latency 18 ms as in the report).
pub const VALIDATE_MACHINE: &str = "smp4";

/// A group of runs read as one experiment: its name, title and column labels.
struct Group {
    name: &'static str,
    title: &'static str,
    labels: Vec<String>,
    /// The suite experiment it is (for its table), if any.
    experiment: Option<usize>,
}

/// Every run of a study under its seeds, not yet started.
pub struct Plan {
    pub study: &'static Study,
    pub seeds: Vec<u64>,
    /// Runs in order: seed, group, column.
    pub specs: Vec<RunSpec>,
    groups: Vec<Group>,
    suite: Option<Suite>,
    edf: Option<edf_simso::Params>,
}

/// A study's runs under its seeds, judged.
pub struct StudyRun {
    pub study: &'static Study,
    pub seeds: Vec<u64>,
    /// One per seed, in seed order.
    pub runs: Vec<SeedRuns>,
    pub outcomes: Vec<Outcome>,
}

/// Plans study `study` under `seeds`; `params` override workload parameters in every run
/// (`--param`).
pub fn plan(
    study: &'static Study,
    seeds: &[u64],
    opts: &RunOpts,
    params: &[(String, String)],
) -> Result<Plan, RunError> {
    let mut p = Plan { study, seeds: seeds.to_vec(), specs: Vec::new(), groups: Vec::new(), suite: None, edf: None };
    match &study.kind {
        Kind::Suite(make) => {
            let suite = if opts.full { make().at_source_scale() } else { make() }.with_params(params);
            p.specs = suite.specs(seeds, opts)?;
            p.groups = suite
                .experiments
                .iter()
                .enumerate()
                .map(|(i, x)| Group {
                    name: x.name,
                    title: x.title,
                    labels: x.configs.iter().map(|c| c.label.clone()).collect(),
                    experiment: Some(i),
                })
                .collect();
            p.suite = Some(suite);
        }
        Kind::Workload(text) => {
            let scheds = schedlab_run::default_schedulers(text);
            let scheds: Vec<&str> = scheds.split(',').collect();
            for &seed in seeds {
                for s in &scheds {
                    let mut spec = RunSpec::load(&format!("{}.toml", study.name), text, None, params, opts.duration)?;
                    spec.sched = s.to_string();
                    spec.seed = seed;
                    spec.sample = opts.sample;
                    spec.explain = opts.explain;
                    p.specs.push(spec);
                }
            }
            let labels = scheds.iter().map(|s| s.to_string()).collect();
            p.groups = vec![Group { name: "main", title: study.name, labels, experiment: None }];
        }
        Kind::Validate => plan_validate(&mut p, seeds, opts, params)?,
        Kind::EdfSimso => {
            let mut e = edf_simso::Params::default();
            for (k, v) in params {
                e.set(k, v)?;
            }
            if let Some(d) = opts.duration {
                e.duration = d;
            }
            e.check().map_err(|m| RunError::Input(format!("study edf-simso: {m}")))?;
            p.edf = Some(e);
        }
    }
    Ok(p)
}

/// `validate`'s simulated side: the student report's experiments (`nice-pairs`,
/// `four-hogs`, `cpu-io`) under CFS on [`VALIDATE_MACHINE`], at the default scale.
fn plan_validate(p: &mut Plan, seeds: &[u64], opts: &RunOpts, params: &[(String, String)]) -> Result<(), RunError> {
    const REPORT: [&str; 3] = ["nice-pairs", "four-hogs", "cpu-io"];
    let m = schedlab_run::load_machine(VALIDATE_MACHINE)?;
    let cases: Vec<validate::Case> = validate::cases(validate::Scale::Quick, m.nr_cpus())
        .into_iter()
        .filter(|c| REPORT.contains(&c.experiment))
        .collect();
    for &seed in seeds {
        for c in &cases {
            let mut ps = c.params.clone();
            ps.extend(params.iter().cloned());
            let end = opts.duration.unwrap_or(c.sim_end);
            let mut spec = RunSpec::load(c.file, c.workload, Some(VALIDATE_MACHINE), &ps, Some(end))?;
            spec.sched = "cfs".into();
            spec.seed = seed;
            spec.end = end;
            spec.sample = opts.sample;
            spec.explain = opts.explain;
            // The switch and preemption counts are read off the events (short runs).
            spec.trace = true;
            p.specs.push(spec);
        }
    }
    for name in REPORT {
        let of: Vec<&validate::Case> = cases.iter().filter(|c| c.experiment == name).collect();
        p.groups.push(Group {
            name,
            title: "the student report's experiment, simulated under CFS",
            labels: of.iter().map(|c| c.name.clone()).collect(),
            experiment: None,
        });
    }
    // Each case's metrics become its group's rows (read back by the evidence function).
    Ok(())
}

impl Plan {
    /// How many runs [`Plan::run`] makes (an `edf-simso` seed counts as one).
    pub fn len(&self) -> usize {
        if self.edf.is_some() {
            self.seeds.len()
        } else {
            self.specs.len()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Runs every planned run in one parallel pool (an explained run keeps the worst waits of
    /// only its [`EXPLAINED_TASKS`] longest waiters: a study holds all its runs at once); `keep_going` is polled by every run (a
    /// false ends them early), `done` is called as each finishes.
    pub fn run(self, keep_going: &(dyn Fn() -> bool + Sync), done: &(dyn Fn() + Sync)) -> Result<StudyRun, RunError> {
        let runs = match &self.edf {
            Some(e) => self.run_edf(e, done)?,
            None => {
                let records: Vec<Result<RunRecord, RunError>> = self
                    .specs
                    .par_iter()
                    .map(|spec| {
                        let mut r = spec.run(&mut |_: Ns| keep_going());
                        if let Some(e) = r.as_mut().ok().and_then(|r| r.explained.as_deref_mut()) {
                            e.compact(EXPLAINED_TASKS);
                        }
                        done();
                        r
                    })
                    .collect();
                self.assemble(records.into_iter().collect::<Result<Vec<_>, _>>()?)
            }
        };
        let outcomes = judge_all(self.study.claims, &(self.study.evidence)(&runs));
        Ok(StudyRun { study: self.study, seeds: self.seeds, runs, outcomes })
    }

    /// The records (in plan order) as one [`SeedRuns`] per seed.
    fn assemble(&self, records: Vec<RunRecord>) -> Vec<SeedRuns> {
        let mut it = records.into_iter();
        let mut out = Vec::with_capacity(self.seeds.len());
        for _ in &self.seeds {
            let mut per = Vec::new();
            for g in &self.groups {
                let rs: Vec<RunRecord> = it.by_ref().take(g.labels.len()).collect();
                per.push(match (&self.suite, g.experiment) {
                    (Some(s), Some(i)) => s.experiments[i].result(rs),
                    _ => self.plain(g, rs),
                });
            }
            out.push(per);
        }
        out
    }

    /// A group without a suite table: `validate`'s cases get their metrics as rows.
    fn plain(&self, g: &Group, records: Vec<RunRecord>) -> ExperimentResult {
        let mut rows = Vec::new();
        if matches!(self.study.kind, Kind::Validate) {
            let cases = validate::cases(validate::Scale::Quick, records.first().map_or(1, |r| r.machine.cpus));
            let of: Vec<&validate::Case> = cases.iter().filter(|c| c.experiment == g.name).collect();
            // One row per metric any case has (cases differ: only "io beside a hog" has the
            // hog's rows), in order of first appearance; `-` where a case lacks it.
            let mut names: Vec<&str> = Vec::new();
            for m in of.iter().flat_map(|c| &c.metrics) {
                if !names.contains(&m.name) {
                    names.push(m.name);
                }
            }
            for name in names {
                let vals = of
                    .iter()
                    .zip(&records)
                    .map(|(c, r)| {
                        let m = c.metrics.iter().find(|m| m.name == name);
                        m.and_then(|m| (m.value)(r)).map_or("-".into(), |v| format!("{v}"))
                    })
                    .collect();
                rows.push((name.to_string(), vals));
            }
        }
        ExperimentResult { name: g.name, title: g.title, labels: g.labels.clone(), records, rows }
    }

    /// `edf-simso`: the study's own run per seed (each seed draws other task sets), its
    /// summary as rows, one column per utilisation.
    fn run_edf(&self, e: &edf_simso::Params, done: &(dyn Fn() + Sync)) -> Result<Vec<SeedRuns>, RunError> {
        let mut out = Vec::new();
        for &seed in &self.seeds {
            let s = edf_simso::run(e, seed)?;
            done();
            let sum = edf_simso::summary(&s);
            let col = |f: &dyn Fn(&edf_simso::Summary) -> Option<f64>| -> Vec<String> {
                sum.iter().map(|x| f(x).map_or("-".into(), |v| format!("{v}"))).collect()
            };
            let simso = match &s.simso {
                edf_simso::SimsoOutcome::Ran { version } => format!("ran SimSo {version}"),
                edf_simso::SimsoOutcome::Unavailable { why } => format!("unavailable: {why}"),
            };
            let rows = vec![
                ("simso".to_string(), vec![simso; sum.len()]),
                ("linux miss %".to_string(), col(&|x| Some(x.linux.miss_pct()))),
                ("simso miss %".to_string(), col(&|x| x.simso.map(|s| s.miss_pct()))),
                ("linux max response %".to_string(), col(&|x| Some(x.linux.max_rt_pct))),
                ("simso max response %".to_string(), col(&|x| x.simso.map(|s| s.max_rt_pct))),
                ("paired jobs".to_string(), col(&|x| Some(x.paired as f64))),
                ("later by > 100 µs".to_string(), col(&|x| Some(x.later as f64))),
                ("mean diff µs".to_string(), col(&|x| (x.paired > 0).then_some(x.mean_diff_us))),
                ("throttled".to_string(), col(&|x| Some(x.throttled as f64))),
                ("pushes".to_string(), col(&|x| Some(x.pushes as f64))),
                ("pulls".to_string(), col(&|x| Some(x.pulls as f64))),
                ("migrations".to_string(), col(&|x| Some(x.migrations as f64))),
            ];
            let labels = sum.iter().map(|x| format!("U={}", x.util as f64 / 1000.0)).collect();
            out.push(vec![ExperimentResult {
                name: "edf",
                title: "SCHED_DEADLINE beside SimSo's global EDF, per utilisation",
                labels,
                records: Vec::new(),
                rows,
            }]);
        }
        Ok(out)
    }
}

impl StudyRun {
    /// The first seed's runs (tables and figures are drawn from them).
    pub fn first(&self) -> &SeedRuns {
        &self.runs[0]
    }

    /// The contract as text: the seeds, then each claim.
    pub fn text(&self) -> String {
        let seeds = match self.seeds.as_slice() {
            [one] => format!("seed {one}"),
            s => format!("{} seeds ({}..={}), 95 % intervals", s.len(), s[0], s[s.len() - 1]),
        };
        format!("source: {}\ncontract ({seeds}): {}", self.study.source.citation, crate::contract::text(&self.outcomes))
    }
}

/// A single-workload study judged from runs made elsewhere (`schedlab study NAME` runs them
/// with the command's own options): `per_seed` holds each seed's runs, one per scheduler.
pub fn judge_records(study: &'static Study, seeds: Vec<u64>, per_seed: Vec<Vec<RunRecord>>) -> StudyRun {
    let runs: Vec<SeedRuns> = per_seed
        .into_iter()
        .map(|rs| {
            let labels = rs.iter().map(|r| r.scheduler.name.clone()).collect();
            vec![ExperimentResult { name: "main", title: study.name, labels, records: rs, rows: Vec::new() }]
        })
        .collect();
    let outcomes = judge_all(study.claims, &(study.evidence)(&runs));
    StudyRun { study, seeds, runs, outcomes }
}
