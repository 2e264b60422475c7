//! One run of a sweep: self-contained (it carries the workload's text), so it can be sent
//! as JSON to another process or machine (a Ray task) and run there with the same result.

use schedlab_metrics::RunRecord;
use schedlab_run::{RunError, RunSpec};
use schedlab_sim::Ns;
use serde::{Deserialize, Serialize};

/// A run of the sweep, by position `run`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Point {
    pub run: usize,
    /// The workload's name in error messages (its path as the sweep file gave it).
    pub workload_file: String,
    pub workload_text: String,
    /// A preset or machine file; `None`: the workload's machine, else the default.
    pub machine: Option<String>,
    pub scheduler: String,
    pub seed: u64,
    /// Workload parameter overrides.
    pub params: Vec<(String, String)>,
    /// Tunables (`--set`).
    pub sets: Vec<(String, String)>,
    /// `None`: the workload's duration, else the default.
    pub duration_ns: Option<u64>,
    /// `--kernel`; `None`: the default.
    pub kernel: Option<String>,
}

/// A row of the table: `(column, value)` in column order.
pub type Row = Vec<(String, String)>;

impl Point {
    /// The run this point stands for, checked (workload, machine, parameters, limits).
    pub fn spec(&self) -> Result<RunSpec, RunError> {
        let mut spec = RunSpec::load(
            &self.workload_file,
            &self.workload_text,
            self.machine.as_deref(),
            &self.params,
            self.duration_ns.map(Ns),
        )?;
        spec.sched = self.scheduler.clone();
        for (k, v) in &self.sets {
            spec.set(k, v)?;
        }
        spec.seed = self.seed;
        if let Some(k) = &self.kernel {
            spec.set("kernel.version", k)?;
        }
        spec.validate()?;
        Ok(spec)
    }

    /// Runs the point; `keep_going` as in [`RunSpec::run`]. Errors name the run.
    pub fn run(&self, keep_going: &mut dyn FnMut(Ns) -> bool) -> Result<Row, RunError> {
        let record = self.spec().and_then(|s| s.run(keep_going)).map_err(|e| self.locate(e))?;
        Ok(self.row(&record))
    }

    /// Says which run an error came from (a tunable unknown to one scheduler, say).
    pub fn locate(&self, e: RunError) -> RunError {
        match e {
            RunError::Input(m) => RunError::Input(format!("sweep run {} ({}): {m}", self.run, self.label())),
            RunError::Simulation(m) => RunError::Simulation(format!("sweep run {} ({}): {m}", self.run, self.label())),
            other => other,
        }
    }

    fn label(&self) -> String {
        let mut s = format!("scheduler {}, seed {}", self.scheduler, self.seed);
        if let Some(m) = &self.machine {
            s += &format!(", machine {m}");
        }
        for (k, v) in self.params.iter().chain(&self.sets) {
            s += &format!(", {k}={v}");
        }
        s
    }

    /// The row of this point's run: the point's coordinates, then the run's metrics.
    pub fn row(&self, r: &RunRecord) -> Row {
        let mut row: Row = vec![
            ("run".into(), self.run.to_string()),
            ("workload".into(), r.workload.name.clone()),
            ("machine".into(), self.machine.clone().unwrap_or_else(|| r.machine.name.clone())),
            ("scheduler".into(), self.scheduler.clone()),
            ("seed".into(), self.seed.to_string()),
        ];
        row.extend(self.params.iter().map(|(k, v)| (format!("param.{k}"), v.clone())));
        row.extend(self.sets.iter().map(|(k, v)| (format!("set.{k}"), v.clone())));
        row.extend(crate::metrics::of(r));
        row
    }
}
