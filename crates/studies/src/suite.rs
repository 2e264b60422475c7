//! Studies of several experiments: each experiment is one workload run under several
//! configurations (scheduler, version, tunables, workload parameters), summarised as a
//! table of metrics with one column per configuration. Runs are independent and seeded,
//! so they go in parallel over the local cores and still give the same bytes.

use rayon::prelude::*;
use schedlab_run::{RunError, RunRecord, RunSpec};
use schedlab_sim::Ns;

/// One configuration an experiment runs under.
#[derive(Clone, Debug)]
pub struct Config {
    /// Column label.
    pub label: String,
    /// Scheduler (`NAME` or `NAME@VERSION`).
    pub sched: String,
    /// The policy's tunables and the kernel's switches (`kernel.*`, `futex.*`), as
    /// [`RunSpec::set`] takes them.
    pub sets: Vec<(String, String)>,
    /// Workload parameters (`[params]` overrides).
    pub params: Vec<(String, String)>,
}

impl Config {
    pub fn new(label: &str, sched: &str) -> Config {
        Config { label: label.into(), sched: sched.into(), sets: Vec::new(), params: Vec::new() }
    }
    /// Whose runqueue-locking paths the simulated kernel follows (`kernel.version`).
    pub fn kernel(self, v: schedlab_kernel::KernelVersion) -> Config {
        self.set("kernel.version", v.name())
    }
    /// The delayed new-task wakeup (`kernel.delayed_wakeup`).
    pub fn delayed_wakeup(self, on: bool) -> Config {
        self.set("kernel.delayed_wakeup", if on { "1" } else { "0" })
    }
    pub fn set(mut self, k: &str, v: &str) -> Config {
        self.sets.push((k.into(), v.into()));
        self
    }
    pub fn param(mut self, k: &str, v: &str) -> Config {
        self.params.push((k.into(), v.into()));
        self
    }
}

/// A row of an experiment's table: a name and how to read it off a run.
pub struct Metric {
    pub name: &'static str,
    pub value: fn(&RunRecord) -> String,
}

/// A row computed from all of an experiment's runs at once (one value per configuration),
/// for comparisons between columns such as a gain over a baseline column.
pub struct Derived {
    pub name: &'static str,
    pub values: fn(&[RunRecord]) -> Vec<String>,
}

/// One workload under several configurations.
pub struct Experiment {
    pub name: &'static str,
    /// What it shows, one line.
    pub title: &'static str,
    /// The workload file's text.
    pub workload: &'static str,
    pub machine: &'static str,
    pub duration: Ns,
    pub configs: Vec<Config>,
    pub metrics: Vec<Metric>,
    /// Rows after the metrics that compare configurations.
    pub derived: Vec<Derived>,
}

impl Experiment {
    /// An experiment with no derived rows: one workload on `machine` for `secs` seconds.
    pub fn plain(
        name: &'static str,
        title: &'static str,
        workload: &'static str,
        machine: &'static str,
        secs: u64,
        configs: Vec<Config>,
        metrics: Vec<Metric>,
    ) -> Experiment {
        let duration = Ns::from_secs(secs);
        Experiment { name, title, workload, machine, duration, configs, metrics, derived: Vec::new() }
    }
}

/// A built-in study of several experiments.
pub struct Suite {
    pub name: &'static str,
    pub description: &'static str,
    pub experiments: Vec<Experiment>,
    /// How the study is smaller than its source, and why (`None`: the source's set-up).
    pub scaled: Option<Scaled>,
}

/// A study run below its source's scale by default: the reason, printed with every result,
/// and the parameters of the source's set-up (`study NAME --full`, `reproduce --full`).
#[derive(Clone, Copy, Debug)]
pub struct Scaled {
    pub reason: &'static str,
    /// `(experiment, parameter, value)` at the source's scale.
    pub full: &'static [(&'static str, &'static str, &'static str)],
}

impl Scaled {
    /// The source's set-up in words: `8-cpus: loops=1000, 4-cpus: loops=1000`.
    pub fn full_text(&self) -> String {
        self.full.iter().map(|(x, k, v)| format!("{x}: {k}={v}")).collect::<Vec<_>>().join(", ")
    }
}

/// What an experiment produced: its runs (in configuration order) and its table.
pub struct ExperimentResult {
    pub name: &'static str,
    pub title: &'static str,
    pub labels: Vec<String>,
    pub records: Vec<RunRecord>,
    /// `(metric, one value per configuration)`.
    pub rows: Vec<(String, Vec<String>)>,
}

impl Suite {
    /// Overrides workload parameters in every configuration of every experiment (`--param`;
    /// later overrides win over an experiment's own).
    pub fn with_params(mut self, params: &[(String, String)]) -> Suite {
        for x in &mut self.experiments {
            for c in &mut x.configs {
                c.params.extend(params.iter().cloned());
            }
        }
        self
    }

    /// The suite at its source's scale: [`Scaled::full`]'s parameters set (over any other),
    /// and no longer marked scaled. Unchanged when it already is.
    pub fn at_source_scale(mut self) -> Suite {
        let Some(scaled) = self.scaled.take() else { return self };
        for (name, key, value) in scaled.full {
            for x in self.experiments.iter_mut().filter(|x| x.name == *name) {
                for c in &mut x.configs {
                    c.params.push((key.to_string(), value.to_string()));
                }
            }
        }
        self
    }

    /// Runs every experiment (each for `duration` if given, else its own); `sample` records
    /// time series for figures.
    pub fn run(&self, seed: u64, duration: Option<Ns>, sample: Option<Ns>) -> Result<Vec<ExperimentResult>, RunError> {
        self.run_with(seed, duration, sample, false)
    }

    /// [`Suite::run`]; `explain` also explains every run's waits into
    /// `RunRecord::explained` (for the HTML reports; changes no result).
    pub fn run_with(
        &self,
        seed: u64,
        duration: Option<Ns>,
        sample: Option<Ns>,
        explain: bool,
    ) -> Result<Vec<ExperimentResult>, RunError> {
        let opts = RunOpts { duration, sample, explain, full: false };
        let mut all = self.run_seeds(&[seed], &opts, &|| true)?;
        Ok(all.pop().expect("one seed"))
    }

    /// Every experiment under every seed, one result list per seed (in `seeds` order). All
    /// runs of all seeds go to one parallel pool, so a study keeps every core busy; the
    /// results do not depend on the pool. `keep_going` is polled by every run: when it
    /// turns false, runs end early with what they measured (the caller says so).
    pub fn run_seeds(
        &self,
        seeds: &[u64],
        opts: &RunOpts,
        keep_going: &(dyn Fn() -> bool + Sync),
    ) -> Result<Vec<Vec<ExperimentResult>>, RunError> {
        let specs = self.specs(seeds, opts)?;
        let records: Vec<Result<RunRecord, RunError>> =
            specs.into_par_iter().map(|spec| spec.run(&mut |_| keep_going())).collect();
        let mut records = records.into_iter();
        let mut out = Vec::with_capacity(seeds.len());
        for _ in seeds {
            let mut per = Vec::new();
            for x in &self.experiments {
                let rs = (0..x.configs.len())
                    .map(|_| records.next().expect("one per job"))
                    .collect::<Result<Vec<_>, _>>()?;
                per.push(x.result(rs));
            }
            out.push(per);
        }
        Ok(out)
    }

    /// Every run [`Suite::run_seeds`] starts, in its order (seed, experiment,
    /// configuration): all built first, so a bad parameter fails before any run starts.
    pub fn specs(&self, seeds: &[u64], opts: &RunOpts) -> Result<Vec<RunSpec>, RunError> {
        let mut specs = Vec::new();
        for &seed in seeds {
            for x in &self.experiments {
                for c in &x.configs {
                    let mut spec = x.spec(c, seed, opts.duration.unwrap_or(x.duration))?;
                    spec.sample = opts.sample;
                    spec.explain = opts.explain;
                    specs.push(spec);
                }
            }
        }
        Ok(specs)
    }
}

/// How a study's runs are started beyond their seeds.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOpts {
    /// Every run for this long instead of its experiment's own duration.
    pub duration: Option<Ns>,
    /// Record time series at this interval (for figures and the sampled mechanisms).
    pub sample: Option<Ns>,
    /// Explain every run's waits (`RunRecord::explained`).
    pub explain: bool,
    /// A scaled-down suite at its source's set-up ([`Suite::at_source_scale`]).
    pub full: bool,
}

impl Experiment {
    /// The table of this experiment's runs (`rs`, in configuration order).
    pub fn result(&self, rs: Vec<RunRecord>) -> ExperimentResult {
        let mut rows: Vec<(String, Vec<String>)> =
            self.metrics.iter().map(|m| (m.name.to_string(), rs.iter().map(m.value).collect())).collect();
        rows.extend(self.derived.iter().map(|d| (d.name.to_string(), (d.values)(&rs))));
        ExperimentResult {
            name: self.name,
            title: self.title,
            labels: self.configs.iter().map(|c| c.label.clone()).collect(),
            records: rs,
            rows,
        }
    }

    /// The run of configuration `config` (an index into `configs`) as [`Suite::run`] starts
    /// it: for `duration` if given, else the experiment's own.
    pub fn config_spec(&self, config: usize, seed: u64, duration: Option<Ns>) -> Result<RunSpec, RunError> {
        self.spec(&self.configs[config], seed, duration.unwrap_or(self.duration))
    }

    fn spec(&self, c: &Config, seed: u64, end: Ns) -> Result<RunSpec, RunError> {
        let mut spec =
            RunSpec::load(&format!("{}.toml", self.name), self.workload, Some(self.machine), &c.params, Some(end))?;
        spec.sched = c.sched.clone();
        for (k, v) in &c.sets {
            spec.set(k, v)?;
        }
        spec.seed = seed;
        spec.end = end;
        Ok(spec)
    }
}

/// The study's tables as text.
pub fn suite_text(suite: &Suite, results: &[ExperimentResult]) -> String {
    suite_text_with(suite, results, None)
}

/// [`suite_text`] with the study's contract (`crate::runs::StudyRun::text`) after its
/// finding, before the tables.
pub fn suite_text_with(suite: &Suite, results: &[ExperimentResult], contract: Option<&str>) -> String {
    use std::fmt::Write;
    let mut s = format!("study {} · {}\n", suite.name, suite.description);
    if let Some(sc) = &suite.scaled {
        let _ = writeln!(s, "scaled down: {}; --full runs the source's set-up ({})", sc.reason, sc.full_text());
    }
    if let Some(f) = crate::suites::finding(suite.name, results) {
        s += &f.text();
    }
    if let Some(c) = contract {
        s.push('\n');
        s += c;
    }
    for r in results {
        let _ = writeln!(s, "\n{} — {}", r.name, r.title);
        let w0 = r.rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0).max(6);
        let widths: Vec<usize> = (0..r.labels.len())
            .map(|i| r.rows.iter().map(|(_, v)| v[i].len()).max().unwrap_or(0).max(r.labels[i].len()))
            .collect();
        let _ = write!(s, "{:<w0$}", "");
        for (l, w) in r.labels.iter().zip(&widths) {
            let _ = write!(s, "  {l:>w$}");
        }
        s.push('\n');
        for (name, vals) in &r.rows {
            let _ = write!(s, "{name:<w0$}");
            for (v, w) in vals.iter().zip(&widths) {
                let _ = write!(s, "  {v:>w$}");
            }
            s.push('\n');
        }
    }
    s
}
