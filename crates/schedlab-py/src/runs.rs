//! The module's functions. Arguments arrive as the Python wrapper prepared them (workload
//! name and text, an options dict); results leave as JSON text.

use crate::interrupt::{until, with_interrupts};
use crate::{input, to_py};
use pyo3::prelude::*;
use schedlab_run::{RunRecord, RunSpec};
use schedlab_sim::{parse_duration, Ns};
use serde_json::json;

/// Options shared by `run`, `compare` and `study` (a dict from the wrapper).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct Opts {
    machine: Option<String>,
    /// `KEY=VALUE` tunables; in `compare`, `SCHED:KEY` aims at one scheduler.
    pub(crate) sets: Vec<(String, String)>,
    params: Vec<(String, String)>,
    seed: u64,
    duration: Option<String>,
    sample: Option<String>,
    check: bool,
}

fn duration(what: &str, d: Option<&str>) -> PyResult<Option<Ns>> {
    d.map(|d| parse_duration(d).map_err(|m| input(format!("{what}: {m}")))).transpose()
}

/// The workload's text: TOML as given, or a dict (sent as JSON) written as TOML.
pub(crate) fn workload_text(text: &str, is_json: bool) -> PyResult<String> {
    if !is_json {
        return Ok(text.to_string());
    }
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| input(format!("workload dict: {e}")))?;
    toml::to_string(&v).map_err(|e| input(format!("workload dict: not expressible as TOML: {e}")))
}

/// The checked spec of one run.
fn spec(name: &str, text: &str, sched: &str, sets: Vec<(String, String)>, o: &Opts) -> PyResult<RunSpec> {
    let spec = unvalidated(name, text, sched, sets, o)?;
    spec.validate().map_err(to_py)?;
    Ok(spec)
}

/// The spec of one run, its scheduler name not looked up (a Python policy's label).
pub(crate) fn unvalidated(
    name: &str,
    text: &str,
    sched: &str,
    sets: Vec<(String, String)>,
    o: &Opts,
) -> PyResult<RunSpec> {
    let mut spec =
        RunSpec::load(name, text, o.machine.as_deref(), &o.params, duration("duration", o.duration.as_deref())?)
            .map_err(to_py)?;
    spec.sched = sched.to_string();
    // Policy tunables and kernel switches (`kernel.*`, `futex.*`) alike.
    for (k, v) in &sets {
        spec.set(k, v).map_err(to_py)?;
    }
    spec.seed = o.seed;
    spec.check = o.check;
    spec.sample = duration("sample", o.sample.as_deref())?;
    if spec.sample.is_some_and(|s| s.0 == 0) {
        return Err(input("sample: the interval must be positive".into()));
    }
    Ok(spec)
}

/// One spec per scheduler; `SCHED:KEY` tunables go to that scheduler only, and one
/// aimed at none of them is an error (it would be silently ignored).
fn specs(name: &str, text: &str, scheds: &[String], o: &Opts) -> PyResult<Vec<RunSpec>> {
    if scheds.is_empty() {
        return Err(input("no scheduler named".into()));
    }
    for (k, _) in &o.sets {
        if let Some((t, _)) = k.rsplit_once(':') {
            if !scheds.iter().any(|s| schedlab_sweep::spec::aims_at(t, s)) {
                return Err(input(format!("set `{k}`: `{t}` is not among the schedulers run ({})", scheds.join(", "))));
            }
        }
    }
    scheds
        .iter()
        .map(|s| {
            let sets = o
                .sets
                .iter()
                .filter_map(|(k, v)| match k.rsplit_once(':') {
                    Some((t, key)) => schedlab_sweep::spec::aims_at(t, s).then(|| (key.to_string(), v.clone())),
                    None => Some((k.clone(), v.clone())),
                })
                .collect();
            spec(name, text, s, sets, o)
        })
        .collect()
}

/// Runs specs in parallel (simulations on every core, host runs after them).
fn run_specs(py: Python<'_>, specs: &[RunSpec]) -> PyResult<Vec<RunRecord>> {
    let results = with_interrupts(py, |stop| schedlab_run::parallel::run_all(specs, &|_, _| until(stop)()))?;
    results.into_iter().map(|r| r.map_err(to_py)).collect()
}

/// One run: the record's JSON (`schedlab run --format json`).
#[pyfunction]
pub fn run(py: Python<'_>, name: &str, text: &str, is_json: bool, sched: &str, opts: Opts) -> PyResult<String> {
    let text = workload_text(text, is_json)?;
    let specs = specs(name, &text, &[sched.to_string()], &opts)?;
    Ok(schedlab_report::json(&run_specs(py, &specs)?[0]))
}

/// Several schedulers in parallel: a JSON array of records (`compare --format json`).
#[pyfunction]
pub fn compare(
    py: Python<'_>,
    name: &str,
    text: &str,
    is_json: bool,
    scheds: Vec<String>,
    opts: Opts,
) -> PyResult<String> {
    let text = workload_text(text, is_json)?;
    let scheds = if scheds.is_empty() { default_scheds(&text) } else { scheds };
    let specs = specs(name, &text, &scheds, &opts)?;
    Ok(schedlab_report::json_many(&run_specs(py, &specs)?))
}

fn default_scheds(text: &str) -> Vec<String> {
    schedlab_run::default_schedulers(text).split(',').map(str::to_string).collect()
}

/// A study: a built-in multi-experiment study by `name` (`text` None), else a workload (a
/// built-in single-workload study's, or the caller's) under several schedulers with the
/// comparison its paper makes. JSON with the text table and every run's record.
#[pyfunction]
pub fn study(py: Python<'_>, name: &str, text: Option<&str>, scheds: Vec<String>, mut opts: Opts) -> PyResult<String> {
    let builtin = text.is_none().then(|| schedlab_studies::suites::suite(name)).flatten();
    if let Some(suite) = builtin {
        if !scheds.is_empty() || opts.machine.is_some() || !opts.sets.is_empty() {
            return Err(input(format!(
                "study {}: sched, machine and set do not apply (each experiment sets its own)",
                suite.name
            )));
        }
        let suite = suite.with_params(&opts.params);
        let (d, s) = (duration("duration", opts.duration.as_deref())?, duration("sample", opts.sample.as_deref())?);
        let results = with_interrupts(py, |_| suite.run(opts.seed, d, s))?.map_err(to_py)?;
        let experiments: Vec<serde_json::Value> = results
            .iter()
            .map(
                |r| json!({"name": r.name, "title": r.title, "labels": r.labels, "rows": r.rows, "records": r.records}),
            )
            .collect();
        let text = schedlab_studies::suite::suite_text(&suite, &results);
        return Ok(json!({"name": suite.name, "text": text, "experiments": experiments}).to_string());
    }
    let text = match text {
        Some(t) => t.to_string(),
        None => schedlab_studies::builtin_workload(name)
            .ok_or_else(|| input(format!("no built-in study `{name}` (see schedlab.studies())")))?
            .to_string(),
    };
    let scheds = if scheds.is_empty() { default_scheds(&text) } else { scheds };
    opts.sample.get_or_insert_with(|| "10ms".into());
    let records = run_specs(py, &specs(name, &text, &scheds, &opts)?)?;
    let title = std::path::Path::new(name).file_stem().map_or("study".into(), |s| s.to_string_lossy().into_owned());
    // A `ule-cfs-*` study: the paper, its finding and the comparison first, as the CLI prints.
    let table = schedlab_studies::bouron::study_text(&title, &records);
    Ok(json!({"name": title, "text": table, "records": records}).to_string())
}

/// Machine presets: `(name, description)`.
#[pyfunction]
pub fn machines() -> Vec<(String, String)> {
    schedlab_machine::PRESETS.iter().map(|(n, d)| (n.to_string(), d.to_string())).collect()
}

/// Built-in studies: `(name, description)`, from the one registry (`schedlab_studies::STUDIES`).
#[pyfunction]
pub fn suites() -> Vec<(String, String)> {
    schedlab_studies::STUDIES.iter().map(|s| (s.name.to_string(), s.description())).collect()
}

/// Schedulers with their versions and tunables (defaults on machine `machine`), as JSON.
#[pyfunction]
#[pyo3(signature = (machine = "smp8"))]
pub fn schedulers(machine: &str) -> PyResult<String> {
    let m = schedlab_run::load_machine(machine).map_err(to_py)?;
    let list: Vec<serde_json::Value> = schedlab_policies::REGISTRY
        .iter()
        .map(|e| {
            let tunables: Vec<serde_json::Value> = (e.make)(&m, &[])
                .map(|p| p.tunables().iter().map(|t| json!({"name": t.name, "value": t.value, "doc": t.doc})).collect())
                .unwrap_or_default();
            json!({"name": e.name, "doc": e.doc, "versions": e.versions, "tunables": tunables})
        })
        .collect();
    Ok(serde_json::Value::Array(list).to_string())
}

/// A sweep's workload given inline (a dict in Python): `(the name the sweep's `workload` key
/// holds, the text, whether the text is JSON to write as TOML)`.
type Inline = Option<(String, String, bool)>;

fn parse_sweep(file: &str, text: &str, base_dir: &str, inline: Inline) -> PyResult<schedlab_sweep::Sweep> {
    let dir = std::path::PathBuf::from(base_dir);
    let inline = match inline {
        Some((name, text, is_json)) => Some((name, workload_text(&text, is_json)?)),
        None => None,
    };
    let load = |w: &str| match &inline {
        Some((name, text)) if name == w => Ok((name.clone(), text.clone())),
        _ => schedlab_sweep::load_workload(&dir, w),
    };
    schedlab_sweep::parse(file, text, &load).map_err(|e| to_py(e.into()))
}

/// A sweep given as a dict (its JSON) as the sweep file's TOML, so both are one format.
#[pyfunction]
pub fn sweep_toml(spec_json: &str) -> PyResult<String> {
    let v: serde_json::Value = serde_json::from_str(spec_json).map_err(|e| input(format!("sweep dict: {e}")))?;
    toml::to_string(&v).map_err(|e| input(format!("sweep dict: not expressible as TOML: {e}")))
}

/// A sweep's runs, each a self-contained JSON point (for dispatching them elsewhere).
#[pyfunction]
#[pyo3(signature = (file, text, base_dir, workload=None))]
pub fn sweep_points(file: &str, text: &str, base_dir: &str, workload: Inline) -> PyResult<Vec<String>> {
    let sweep = parse_sweep(file, text, base_dir, workload)?;
    for p in &sweep.points {
        p.spec().map_err(|e| to_py(p.locate(e)))?;
    }
    Ok(sweep.points.iter().map(|p| serde_json::to_string(p).expect("points serialise")).collect())
}

/// Runs one point: its row as JSON `[[column, value], …]`.
#[pyfunction]
pub fn sweep_run(py: Python<'_>, point: &str) -> PyResult<String> {
    let p: schedlab_sweep::Point = serde_json::from_str(point).map_err(|e| input(format!("not a sweep point: {e}")))?;
    let row = with_interrupts(py, |stop| p.run(&mut |_| until(stop)()))?.map_err(to_py)?;
    Ok(serde_json::to_string(&row).expect("rows serialise"))
}

/// The CSV table of rows from [`sweep_run`] (in any order).
#[pyfunction]
pub fn sweep_csv(rows: Vec<String>) -> PyResult<String> {
    let rows = rows
        .iter()
        .map(|r| serde_json::from_str(r).map_err(|e| input(format!("not a sweep row: {e}"))))
        .collect::<PyResult<Vec<schedlab_sweep::Row>>>()?;
    Ok(schedlab_sweep::Table::from_rows(rows).to_csv())
}

/// Every run of a sweep on `jobs` local threads (0: every core): the CSV table.
#[pyfunction]
#[pyo3(signature = (file, text, base_dir, jobs, workload=None))]
pub fn sweep_local(
    py: Python<'_>,
    file: &str,
    text: &str,
    base_dir: &str,
    jobs: usize,
    workload: Inline,
) -> PyResult<String> {
    let sweep = parse_sweep(file, text, base_dir, workload)?;
    let table =
        with_interrupts(py, |stop| schedlab_sweep::run_local(&sweep.points, jobs, &|_, _| until(stop)(), &|_| {}))?
            .map_err(to_py)?;
    Ok(table.to_csv())
}

/// The run of built-in study `name` that `explain(..., experiment=, config=)` explains, as
/// `schedlab explain STUDY --experiment X --config C` picks it.
fn study_job(name: &str, experiment: &str, config: Option<&str>, opts: &Opts) -> PyResult<RunSpec> {
    let suite = schedlab_studies::suites::suite(name)
        .ok_or_else(|| {
            input(format!("experiment=: `{name}` is not a multi-experiment study (see schedlab.studies())"))
        })?
        .with_params(&opts.params);
    let d = duration("duration", opts.duration.as_deref())?;
    let mut job =
        schedlab::explain::study_spec(&suite, Some(experiment), config, opts.seed, d).map_err(crate::from_cli)?;
    for (k, v) in &opts.sets {
        job.set(k, v).map_err(to_py)?;
    }
    Ok(job)
}

/// What `explain` is asked (a dict from the wrapper): the task, and which of its waits.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct ExplainOpts {
    task: Option<String>,
    at: Option<String>,
    worst: Option<usize>,
    between: Option<(String, String)>,
    summary: bool,
    /// With a built-in study's name as the workload: which experiment and configuration.
    experiment: Option<String>,
    config: Option<String>,
}

/// `schedlab explain`: one simulated run with decision records; returns the text and the
/// JSON the command prints.
#[pyfunction]
pub fn explain(
    py: Python<'_>,
    name: &str,
    text: &str,
    is_json: bool,
    sched: &str,
    opts: Opts,
    ask: ExplainOpts,
) -> PyResult<(String, String)> {
    use schedlab::explain::{Ask, Select};
    let job = match &ask.experiment {
        Some(x) => study_job(name, x, ask.config.as_deref(), &opts)?,
        None => spec(name, &workload_text(text, is_json)?, sched, opts.sets.clone(), &opts)?,
    };
    let at = |what: &str, v: &str| duration(what, Some(v)).map(|d| d.expect("given"));
    let select = match (&ask.at, &ask.between, ask.worst) {
        (Some(t), _, _) => Select::At(at("at", t)?),
        (_, Some((a, b)), _) => Select::Between(at("between", a)?, at("between", b)?),
        (_, _, n) => Select::Worst(n.unwrap_or(3)),
    };
    let mut q = Ask { task: ask.task, select, summary: ask.summary, json: false, svg: None };
    let (_, ex) = with_interrupts(py, |stop| schedlab::explain::run(&job, &q, &mut |_| until(stop)()))?
        .map_err(crate::from_cli)?;
    let text = schedlab::explain::render(&ex, &q).map_err(crate::from_cli)?;
    q.json = true;
    let json = schedlab::explain::render(&ex, &q).map_err(crate::from_cli)?;
    Ok((text, json))
}
