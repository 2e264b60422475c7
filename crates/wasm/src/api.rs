//! The requests the page sends and what it gets back, as JSON.
//!
//! A request is an object with an `op`: `catalog` (schedulers with their versions and
//! tunables, kernel switches, machine presets, example workloads, limits), `check` (load a
//! workload and validate a run of it without running: the CLI's up-front checks), `run`
//! (the record, as `schedlab run --format json` prints it, and the timeline) and `explain`
//! (the waits of one task in progress at a time, as `schedlab explain --task T --at T`
//! prints them). The answer is `{"ok": …}` or `{"error": {…}}`, the error carrying the
//! CLI's message and, for a workload error, its file, line, column and field.

use crate::examples;
use crate::timeline::Timeline;
use schedlab_metrics::explain::Wait;
use schedlab_run::{ExplainOptions, RunError, RunOptions, RunSpec};
use schedlab_sim::Ns;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// One request (`op` names it).
#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    Catalog,
    Check(RunArgs),
    Run(RunArgs),
    Explain {
        #[serde(flatten)]
        run: RunArgs,
        /// The task, by its exact name.
        task: String,
        /// The wait in progress at this time.
        at_ns: u64,
    },
}

/// What to run, with the CLI's flags' meanings.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunArgs {
    /// The workload's file name, for errors and the format (`*.json` is rt-app).
    pub file: String,
    pub text: String,
    /// `--machine` (a preset; default: the workload's, else smp4).
    #[serde(default)]
    pub machine: Option<String>,
    /// `--sched` (`NAME` or `NAME@VERSION`).
    pub sched: String,
    /// `--set KEY=VALUE`, in order.
    #[serde(default)]
    pub sets: Vec<String>,
    /// `--param KEY=VALUE`.
    #[serde(default)]
    pub params: Vec<String>,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// `--duration` (default: the workload's, else 10 s).
    #[serde(default)]
    pub duration: Option<String>,
    /// `--kernel`.
    #[serde(default = "default_kernel")]
    pub kernel: String,
    /// Also return the timeline (`run` only).
    #[serde(default)]
    pub timeline: bool,
}

fn default_seed() -> u64 {
    1
}

/// The CLI's `--kernel` default.
fn default_kernel() -> String {
    "5.15".into()
}

/// An error as the page shows it: the CLI's message, located when it is a workload error.
#[derive(Debug, Serialize, PartialEq)]
pub struct ErrorInfo {
    /// `source` (a located workload or machine error), `input`, `limit`, `unavailable`,
    /// `simulation`, `request` (a malformed request: a bug of the page).
    pub kind: &'static str,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

impl ErrorInfo {
    fn new(kind: &'static str, message: String) -> ErrorInfo {
        ErrorInfo { kind, message, file: None, line: None, column: None, field: None }
    }
}

impl From<RunError> for ErrorInfo {
    fn from(e: RunError) -> ErrorInfo {
        let kind = match &e {
            RunError::Source(s) => {
                return ErrorInfo {
                    kind: "source",
                    message: e.to_string(),
                    file: Some(s.file.clone()),
                    line: Some(s.line),
                    column: Some(s.column),
                    field: Some(s.field.clone()),
                }
            }
            RunError::Input(_) | RunError::Io { .. } | RunError::Interrupted(_) => "input",
            RunError::Limit(_) => "limit",
            RunError::Unavailable(_) => "unavailable",
            RunError::Simulation(_) | RunError::Host(_) => "simulation",
        };
        ErrorInfo::new(kind, e.to_string())
    }
}

/// Answers `request` (JSON bytes) with JSON; `progress` gets the clock of a run.
pub fn call(request: &[u8], progress: &mut dyn FnMut(Ns) -> bool) -> String {
    let answer = match serde_json::from_slice::<Request>(request) {
        Ok(r) => answer(r, progress),
        Err(e) => Err(ErrorInfo::new("request", format!("malformed request: {e}"))),
    };
    let v = match answer {
        Ok(ok) => json!({ "ok": ok }),
        Err(e) => json!({ "error": e }),
    };
    serde_json::to_string(&v).expect("JSON values serialise")
}

/// The answer to one request.
pub fn answer(r: Request, progress: &mut dyn FnMut(Ns) -> bool) -> Result<Value, ErrorInfo> {
    match r {
        Request::Catalog => Ok(catalog()),
        Request::Check(a) => check(&a),
        Request::Run(a) => run(&a, progress),
        Request::Explain { run, task, at_ns } => explain(&run, &task, Ns(at_ns), progress),
    }
}

/// `KEY=VALUE` as the CLI's `parse_kv` reads it.
fn parse_kv(s: &str, what: &str) -> Result<(String, String), ErrorInfo> {
    s.split_once('=')
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .filter(|(k, _)| !k.is_empty())
        .ok_or_else(|| ErrorInfo::new("input", format!("{what} `{s}`: expected KEY=VALUE")))
}

/// The run `a` describes, built as the CLI's `prepare` builds it (same defaults, same
/// order of `--kernel` and `--set`), and checked as the CLI checks it before running.
pub fn spec(a: &RunArgs) -> Result<RunSpec, ErrorInfo> {
    if a.text.len() as u64 > schedlab_run::MAX_INPUT_BYTES {
        let mib = schedlab_run::MAX_INPUT_BYTES >> 20;
        return Err(ErrorInfo::new("limit", format!("limit exceeded: {} is larger than {mib} MiB", a.file)));
    }
    let params = a.params.iter().map(|p| parse_kv(p, "--param")).collect::<Result<Vec<_>, _>>()?;
    let duration = a
        .duration
        .as_deref()
        .filter(|d| !d.trim().is_empty())
        .map(|d| schedlab_sim::parse_duration(d.trim()))
        .transpose()
        .map_err(|m| ErrorInfo::new("input", format!("--duration: {m}")))?;
    let machine = a.machine.as_deref().filter(|m| !m.is_empty());
    let mut spec = RunSpec::load(&a.file, &a.text, machine, &params, duration)?;
    spec.sched = a.sched.clone();
    // The page simulates; a real run needs the CLI on the host (and, natively, this call
    // must never start one).
    if spec.backend() == schedlab_run::Backend::Host {
        return Err(RunError::Unavailable(schedlab_run::Backend::Host).into());
    }
    spec.seed = a.seed;
    let flag = |e: RunError, f: &str| ErrorInfo::new("input", format!("{f}: {e}"));
    spec.set("kernel.version", &a.kernel).map_err(|e| flag(e, "--kernel"))?;
    for s in &a.sets {
        let (k, v) = parse_kv(s, "--set")?;
        spec.set(&k, &v).map_err(|e| flag(e, "--set"))?;
    }
    spec.validate()?;
    Ok(spec)
}

fn check(a: &RunArgs) -> Result<Value, ErrorInfo> {
    let s = spec(a)?;
    Ok(json!({
        "tasks": s.workload.initial_tasks(),
        "cpus": s.machine.nr_cpus(),
        "machine": s.machine.name,
        "end_ns": s.end.0,
    }))
}

fn run(a: &RunArgs, progress: &mut dyn FnMut(Ns) -> bool) -> Result<Value, ErrorInfo> {
    let s = spec(a)?;
    let mut timeline = a.timeline.then(|| Timeline::new(s.machine.nr_cpus()));
    let opts =
        RunOptions { probe: timeline.as_mut().map(|t| t as &mut dyn schedlab_probe::Probe), ..RunOptions::default() };
    let out = s.run_with(opts, progress)?;
    let record = serde_json::to_value(&out.record).expect("records serialise");
    let timeline = timeline.map(|mut t| {
        t.finish(Ns(out.record.sim_ns));
        t
    });
    Ok(json!({ "record": record, "timeline": timeline }))
}

/// The waits of `task` in progress at `at`, as `schedlab explain --task TASK --at AT`
/// selects them, with the CLI's JSON and text for them.
fn explain(a: &RunArgs, task: &str, at: Ns, progress: &mut dyn FnMut(Ns) -> bool) -> Result<Value, ErrorInfo> {
    let s = spec(a)?;
    let want = task.to_string();
    let opts = RunOptions {
        explain: Some(ExplainOptions { worst: 3, focus: Box::new(move |n: &str| n == want) }),
        ..RunOptions::default()
    };
    let out = s.run_with(opts, progress)?;
    let ex = out.explained.ok_or_else(|| ErrorInfo::new("input", "the run gave no explanation".into()))?;
    let Some(summary) = ex.tasks.iter().find(|t| t.name == task) else {
        return Err(ErrorInfo::new("input", format!("--task {task}: no task of that name ran")));
    };
    let waits: Vec<&Wait> =
        ex.waits.iter().filter(|w| w.start_ns <= at.0 && at.0 < w.end_ns.max(w.start_ns + 1)).collect();
    let json: Value =
        serde_json::from_str(&schedlab_report::explain::explain_json(&waits, &[summary])).expect("explain JSON");
    let text = schedlab_report::explain::explain_text(&ex, &waits);
    Ok(json!({ "explain": json, "text": text }))
}

/// Everything the page's pickers offer, from the registries the CLI's `schedlab list` reads.
pub fn catalog() -> Value {
    let smp8 = schedlab_machine::preset("smp8").expect("preset");
    let schedulers: Vec<Value> = schedlab_policies::REGISTRY
        .iter()
        .map(|e| {
            let tunables: Vec<Value> = (e.make)(&smp8, &[])
                .map(|p| {
                    p.tunables()
                        .iter()
                        .map(|t| {
                            let values = if t.read_only { "read only".into() } else { t.kind.values() };
                            json!({ "name": t.name, "default": t.value, "doc": t.doc, "values": values })
                        })
                        .collect()
                })
                .unwrap_or_default();
            json!({ "name": e.name, "doc": e.doc, "versions": e.versions, "tunables": tunables })
        })
        .collect();
    let switches: Vec<Value> = schedlab_run::SWITCHES
        .list(&schedlab_run::KernelConfig::default())
        .iter()
        .map(|t| json!({ "name": t.name, "default": t.value, "doc": t.doc, "values": t.kind.values() }))
        .collect();
    let machines: Vec<Value> = schedlab_machine::PRESETS
        .iter()
        .map(|(n, d)| json!({ "name": n, "doc": d, "cpus": schedlab_machine::preset(n).map(|m| m.nr_cpus()) }))
        .collect();
    let ex = |dir: &str, l: &[(&str, &str)], ext: &str| -> Vec<Value> {
        l.iter()
            .map(|(n, t)| {
                let file = if n.ends_with(ext) { n.to_string() } else { format!("{n}{ext}") };
                json!({ "name": format!("{dir}{}", n.trim_end_matches(ext)), "file": file, "text": t })
            })
            .collect()
    };
    let mut examples = ex("", examples::WORKLOADS, ".toml");
    examples.extend(ex("rt-app/", examples::RTAPP, ".json"));
    examples.extend(ex("study/", examples::STUDIES, ".toml"));
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "schedulers": schedulers,
        "default_scheduler": schedlab_run::DEFAULT_SCHEDULER,
        "default_compare": schedlab_run::DEFAULT_COMPARE,
        "default_machine": schedlab_run::DEFAULT_MACHINE,
        "kernel_versions": schedlab_run::KernelVersion::ALL.iter().map(|v| v.name()).collect::<Vec<_>>(),
        "switches": switches,
        "machines": machines,
        "examples": examples,
        "limits": {
            "max_sim_time_ns": schedlab_run::MAX_SIM_TIME.0,
            "max_tasks": schedlab_workload::MAX_TASKS,
            "max_cpus": schedlab_machine::MAX_CPUS,
            "max_input_bytes": schedlab_run::MAX_INPUT_BYTES,
            "timeline_items": crate::timeline::MAX_ITEMS,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(v: Value) -> Value {
        serde_json::from_str(&call(v.to_string().as_bytes(), &mut |_| true)).unwrap()
    }

    fn four_hogs() -> Value {
        let text = examples::WORKLOADS.iter().find(|(n, _)| *n == "four-hogs").unwrap().1;
        json!({ "file": "four-hogs.toml", "text": text, "sched": "cfs", "seed": 2, "duration": "200ms" })
    }

    fn with(mut v: Value, extra: Value) -> Value {
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    }

    /// A run answers the record `RunSpec::run` gives for the CLI's defaults (`--kernel
    /// 5.15`), with the timeline beside it.
    #[test]
    fn a_run_answers_the_record_of_the_cli_spec() {
        let a = ask(with(four_hogs(), json!({ "op": "run", "timeline": true })));
        let r = &a["ok"]["record"];
        let text = four_hogs()["text"].as_str().unwrap().to_string();
        let mut s = RunSpec::load("four-hogs.toml", &text, None, &[], Some(Ns::from_ms(200))).unwrap();
        s.sched = "cfs".into();
        s.seed = 2;
        s.set("kernel.version", "5.15").unwrap();
        let want = s.run(&mut |_| true).unwrap();
        assert_eq!(r["trace_hash"], want.trace_hash.as_str());
        assert_eq!(r["tasks"], serde_json::to_value(&want.tasks).unwrap());
        let tl = &a["ok"]["timeline"];
        assert_eq!(tl["nr_cpus"], r["machine"]["cpus"]);
        let ran: u64 =
            tl["slices"].as_array().unwrap().iter().map(|s| s[2].as_u64().unwrap() - s[1].as_u64().unwrap()).sum();
        let runtime: u64 = want.tasks.iter().map(|t| t.runtime_ns).sum();
        // The slices are the tasks' time on CPUs: their run time plus the kernel paths run
        // between switches on their behalf, so at least the run time and at most the run.
        assert!(ran >= runtime && ran <= 200_000_000 * want.cpus.len() as u64, "{ran} vs {runtime}");
    }

    /// The timeline's waits are the explainer's: explaining the middle of one finds a wait
    /// with the same start and end.
    #[test]
    fn the_timeline_waits_are_the_explained_waits() {
        let a = ask(with(four_hogs(), json!({ "op": "run", "timeline": true })));
        let names: Vec<String> =
            a["ok"]["record"]["tasks"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().into()).collect();
        let waits = a["ok"]["timeline"]["waits"].as_array().unwrap();
        assert!(waits.len() > 10, "{}", waits.len());
        for w in [&waits[0], &waits[waits.len() / 2], &waits[waits.len() - 1]] {
            let (task, start, end) = (w[0].as_u64().unwrap() as usize, w[1].as_u64().unwrap(), w[2].as_u64().unwrap());
            let e = ask(with(four_hogs(), json!({ "op": "explain", "task": names[task], "at_ns": (start + end) / 2 })));
            let found = &e["ok"]["explain"]["waits"];
            assert_eq!(found.as_array().map(Vec::len), Some(1), "{e}");
            assert_eq!((found[0]["start_ns"].as_u64(), found[0]["end_ns"].as_u64()), (Some(start), Some(end)), "{e}");
            assert!(e["ok"]["text"].as_str().unwrap().contains(&names[task]), "{e}");
        }
    }

    /// Errors carry the CLI's message and, for a workload, its location.
    #[test]
    fn errors_are_located_and_typed() {
        let bad = json!({ "op": "check", "file": "w.toml", "sched": "eevdf",
            "text": "[[task]]\nname = \"t\"\nprogram = [ { run = \"5 parsecs\" } ]\n" });
        let e = &ask(bad)["error"];
        assert_eq!(
            (e["kind"].as_str(), e["line"].as_u64(), e["file"].as_str()),
            (Some("source"), Some(3), Some("w.toml")),
            "{e}"
        );
        assert!(e["message"].as_str().unwrap().starts_with("w.toml:3:"), "{e}");
        let e = &ask(with(four_hogs(), json!({ "op": "check", "duration": "100000s" })))["error"];
        assert_eq!(e["kind"], "limit", "{e}");
        let e = &ask(with(four_hogs(), json!({ "op": "run", "sched": "bfs" })))["error"];
        assert_eq!(e["kind"], "input", "{e}");
        let e = &ask(with(four_hogs(), json!({ "op": "run", "sets": ["nonsense"] })))["error"];
        assert!(e["message"].as_str().unwrap().contains("expected KEY=VALUE"), "{e}");
        let e = &ask(with(four_hogs(), json!({ "op": "run", "sched": "host" })))["error"];
        assert_eq!(e["kind"], "unavailable", "{e}");
        let e = &ask(json!({ "op": "fly" }))["error"];
        assert_eq!(e["kind"], "request", "{e}");
    }

    /// The pickers offer every scheduler of the registry with its versions, and every example.
    #[test]
    fn the_catalog_has_every_scheduler_and_example() {
        let c = ask(json!({ "op": "catalog" }));
        let s = c["ok"]["schedulers"].as_array().unwrap();
        assert_eq!(s.len(), schedlab_policies::REGISTRY.len());
        for (e, v) in schedlab_policies::REGISTRY.iter().zip(s) {
            assert_eq!((v["name"].as_str(), v["versions"].as_array().unwrap().len()), (Some(e.name), e.versions.len()));
        }
        let n = examples::WORKLOADS.len() + examples::RTAPP.len() + examples::STUDIES.len();
        assert_eq!(c["ok"]["examples"].as_array().unwrap().len(), n);
        assert!(s.iter().any(|e| !e["tunables"].as_array().unwrap().is_empty()));
    }
}
