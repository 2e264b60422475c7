//! `schedlab explain`: run a workload with decision records on and explain the waits of a
//! task — who ran instead and why, why no other CPU took it, how it was woken — and where
//! every task's waiting went, by cause.

use crate::{CliError, RunError};
use schedlab_metrics::explain::{Explained, TaskWaits, Wait};
use schedlab_run::{RunRecord, RunSpec};
use schedlab_sim::Ns;

/// Which waits of the focus task to explain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Select {
    /// The one in progress at this time.
    At(Ns),
    /// The N longest.
    Worst(usize),
    /// Those overlapping this window.
    Between(Ns, Ns),
}

/// What `schedlab explain` was asked.
#[derive(Clone, Debug)]
pub struct Ask {
    /// Task name: exact, or a template's instances (`worker` matches `worker.3`).
    pub task: Option<String>,
    pub select: Select,
    pub summary: bool,
    pub json: bool,
    /// Write the wait-by-cause figure here.
    pub svg: Option<std::path::PathBuf>,
}

/// Whether `name` is the task `want` or one of its template's instances.
pub fn matches(want: &str, name: &str) -> bool {
    name == want
        || name
            .strip_prefix(want)
            .and_then(|r| r.strip_prefix('.'))
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
}

/// Runs `spec` explained; each task keeps its 3 longest waits (for summaries and reports).
pub fn run(
    spec: &RunSpec,
    ask: &Ask,
    keep_going: &mut dyn FnMut(Ns) -> bool,
) -> Result<(RunRecord, Explained), CliError> {
    let want = ask.task.clone();
    let focus: Box<dyn Fn(&str) -> bool> = match want {
        Some(w) => Box::new(move |n: &str| matches(&w, n)),
        None => Box::new(|_: &str| false),
    };
    let opts = schedlab_run::RunOptions {
        explain: Some(schedlab_run::ExplainOptions { worst: 3, focus }),
        ..Default::default()
    };
    let out = spec.run_with(opts, keep_going).map_err(|e: RunError| CliError::from(e))?;
    let explained = out.explained.ok_or_else(|| CliError::input("explain: the run gave no explanation"))?;
    Ok((out.record, explained))
}

/// The waits `ask` selects, in time order (the longest first for `Worst`).
pub fn select<'a>(ex: &'a Explained, ask: &Ask) -> Vec<&'a Wait> {
    let mut v: Vec<&Wait> = ex.waits.iter().collect();
    match ask.select {
        Select::At(t) => v.retain(|w| w.start_ns <= t.0 && t.0 < w.end_ns.max(w.start_ns + 1)),
        Select::Between(a, b) => v.retain(|w| w.end_ns > a.0 && w.start_ns < b.0),
        Select::Worst(n) => {
            v.sort_by(|a, b| b.len_ns().cmp(&a.len_ns()).then(a.start_ns.cmp(&b.start_ns)));
            v.truncate(n);
        }
    }
    v
}

/// The tasks the summary covers: the focus task's instances, or every task that waited.
pub fn summary_tasks<'a>(ex: &'a Explained, ask: &Ask) -> Vec<&'a TaskWaits> {
    ex.tasks.iter().filter(|t| ask.task.as_deref().map_or(t.wait_ns > 0, |w| matches(w, &t.name))).collect()
}

/// The text or JSON `schedlab explain` prints.
pub fn render(ex: &Explained, ask: &Ask) -> Result<String, CliError> {
    if let Some(w) = &ask.task {
        if !ex.tasks.iter().any(|t| matches(w, &t.name)) {
            return Err(CliError::input(format!("--task {w}: no task of that name ran")));
        }
    }
    let waits = if ask.task.is_some() { select(ex, ask) } else { Vec::new() };
    let tasks = summary_tasks(ex, ask);
    if ask.json {
        return Ok(schedlab_report::explain::explain_json(&waits, &tasks));
    }
    let mut s = String::new();
    if ask.task.is_some() {
        s.push_str(&schedlab_report::explain::explain_text(ex, &waits));
    }
    if ask.summary || ask.task.is_none() {
        if !s.is_empty() {
            s.push('\n');
        }
        s.push_str(&schedlab_report::explain::summary_text(&tasks));
    }
    Ok(s)
}

/// The run of a multi-experiment study to explain: `experiment` names one of its
/// experiments (it may be left out when there is only one), `config` one configuration by
/// its column label, its scheduler or the scheduler's base name (`eevdf` matches the first
/// `eevdf@…`; default: the first configuration). Unknown names are errors that
/// list the choices.
pub fn study_spec(
    suite: &schedlab_studies::suite::Suite,
    experiment: Option<&str>,
    config: Option<&str>,
    seed: u64,
    duration: Option<Ns>,
) -> Result<RunSpec, CliError> {
    let names: Vec<&str> = suite.experiments.iter().map(|x| x.name).collect();
    let x = match experiment {
        Some(e) => suite.experiments.iter().find(|x| x.name == e).ok_or_else(|| {
            CliError::input(format!(
                "--experiment {e}: study {} has no such experiment ({})",
                suite.name,
                names.join(", ")
            ))
        })?,
        None if suite.experiments.len() == 1 => &suite.experiments[0],
        None => {
            return Err(CliError::input(format!(
                "study {} has {} experiments: choose one with --experiment ({})",
                suite.name,
                names.len(),
                names.join(", ")
            )))
        }
    };
    let c = match config {
        None => 0,
        Some(want) => x
            .configs
            .iter()
            .position(|c| c.label == want || c.sched == want || c.sched.split('@').next() == Some(want))
            .ok_or_else(|| {
                let labels: Vec<String> = x.configs.iter().map(|c| format!("{} ({})", c.label, c.sched)).collect();
                CliError::input(format!(
                    "--config {want}: experiment {} has no configuration of that label or scheduler ({})",
                    x.name,
                    labels.join(", ")
                ))
            })?,
    };
    Ok(x.config_spec(c, seed, duration)?)
}
