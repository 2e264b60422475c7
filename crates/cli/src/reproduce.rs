//! `schedlab reproduce [SOURCE|all]`: every study of one source (or of all), run under the
//! study contract's seeds on all cores, written as one self-contained HTML report and its
//! Markdown twin: the summary first ("N of M claims agree, …"), then per claim the source's
//! statement and where it is, ours with its 95 % interval, the figure in the source's form
//! and the contract's own figure (ours per seed against the source's bound), the verdict
//! and the mechanism.
//!
//! Resumable: each finished study is cached under `OUTPUT/cache/` by a hash of its inputs —
//! the study, its seeds and duration, and this executable's bytes (a rebuilt `schedlab` is
//! another model) — so a second run, or one after Ctrl-C, redoes only what is missing.
//! Deterministic: the reports carry no time or host name, only what the runs produced.

use crate::output::ensure_dir;
use crate::{write_atomic, CliError};
use schedlab_report::plots::{Axis, Chart, ChartData, ChartPanel, Unit};
use schedlab_studies::contract::{num, Expect, Outcome, Verdict};
use schedlab_studies::runs::StudyRun;
use schedlab_studies::{Kind, Source, Study};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The command's options.
pub struct Options {
    pub source: String,
    pub output: PathBuf,
    pub seeds: usize,
    pub seed: u64,
    pub fresh: bool,
    pub docs: Option<PathBuf>,
    pub duration: Option<schedlab_sim::Ns>,
    /// Scaled-down studies at their source's set-up.
    pub full: bool,
}

/// The sources `key` names (`all`: every one).
fn sources(key: &str) -> Result<Vec<&'static Source>, CliError> {
    if key == "all" {
        return Ok(schedlab_studies::SOURCES.to_vec());
    }
    match schedlab_studies::SOURCES.iter().find(|s| s.key == key) {
        Some(s) => Ok(vec![s]),
        None => Err(CliError::input(format!(
            "reproduce: no source `{key}` (sources: {}, or all)",
            schedlab_studies::SOURCES.iter().map(|s| s.key).collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// The studies of `source`, in registry order.
fn studies_of(source: &Source) -> Vec<&'static Study> {
    schedlab_studies::STUDIES.iter().filter(|s| std::ptr::eq(s.source, source)).collect()
}

/// FNV-1a, 64 bits: a stable hash for cache keys (not for security).
fn fnv(h: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(h, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// The hash of this executable (the model that produced a cached result).
fn exe_hash() -> Result<u64, CliError> {
    let exe = std::env::current_exe().map_err(|e| io_err(format!("reproduce: this executable: {e}")))?;
    let bytes = std::fs::read(&exe).map_err(|e| io_err(format!("reproduce: reading {}: {e}", exe.display())))?;
    Ok(fnv(FNV_START, &bytes))
}

/// The cache file of study `s` under these options.
fn cache_path(o: &Options, exe: u64, s: &Study) -> PathBuf {
    let key = format!("{}|{}|{}|{:?}|{}", s.name, o.seed, o.seeds, o.duration.map(|d| d.0), o.full);
    o.output.join("cache").join(format!("{}-{:016x}.json", s.name, fnv(exe, key.as_bytes())))
}

pub fn run(o: &Options) -> Result<(), CliError> {
    let srcs = sources(&o.source)?;
    ensure_dir(&o.output)?;
    ensure_dir(&o.output.join("cache"))?;
    let exe = exe_hash()?;
    let seeds = schedlab_studies::contract::seeds(o.seed, o.seeds);
    // Explained where the mechanisms quote the decision records (explaining the 400
    // hackbench runs of lock-delayed-wakeup took minutes and, with every task's worst waits
    // kept, 22 GB), and sampled only where a mechanism reads the series (the ULE-vs-CFS
    // scores; validate's shares while both programs run).
    let opts = |s: &Study| schedlab_studies::suite::RunOpts {
        duration: o.duration,
        sample: matches!(s.kind, Kind::Workload(_) | Kind::Validate).then_some(schedlab_sim::Ns::from_ms(10)),
        explain: s.explained,
        full: o.full,
    };
    // Plan everything first: a bad study fails before any run, and the bar knows the total.
    let mut todo = Vec::new();
    let mut runs = 0u64;
    for s in srcs.iter().flat_map(|s| studies_of(s)) {
        let path = cache_path(o, exe, s);
        if !o.fresh && path.exists() {
            continue;
        }
        let plan = schedlab_studies::runs::plan(s, &seeds, &opts(s), &[])?;
        runs += plan.len() as u64;
        todo.push((s.name, path, plan));
    }
    let cached = srcs.iter().map(|s| studies_of(s).len()).sum::<usize>() - todo.len();
    note!(
        "reproduce {}: {} studies to run ({runs} runs, {} seeds each, all cores), {cached} from the cache in {}",
        o.source,
        todo.len(),
        seeds.len(),
        o.output.display()
    );
    let bar = crate::study::runs_bar(runs, "reproduce");
    for (name, path, plan) in todo {
        bar.set_message(name);
        let r = plan.run(&|| !crate::signals::stop_requested(), &|| bar.inc(1));
        if crate::signals::stop_requested() {
            bar.finish_and_clear();
            return Err(crate::signals::interrupted(&format!(
                "running study {name} (finished studies are cached: run again to resume)"
            )));
        }
        write_atomic(&path, &section(&r?, o.full)?.to_string())?;
    }
    bar.finish_and_clear();
    let mut sections = Vec::new();
    for src in &srcs {
        let studies: Vec<Value> =
            studies_of(src).iter().map(|s| read_cache(&cache_path(o, exe, s))).collect::<Result<_, _>>()?;
        sections.push((*src, studies));
    }
    let name = if srcs.len() == 1 { srcs[0].key } else { "all" };
    write_atomic(&o.output.join(format!("{name}.html")), &html(&sections))?;
    write_atomic(&o.output.join(format!("{name}.md")), &markdown(&sections))?;
    if let Some(dir) = &o.docs {
        ensure_dir(dir)?;
        for s in &sections {
            write_atomic(&dir.join(format!("{}.md", s.0.key)), &markdown(std::slice::from_ref(s)))?;
        }
    }
    let all: Vec<&Value> = sections.iter().flat_map(|(_, st)| st.iter().flat_map(claims)).collect();
    outln!("{}", summary_line(&all))?;
    note!(
        "wrote {} and {}",
        o.output.join(format!("{name}.html")).display(),
        o.output.join(format!("{name}.md")).display()
    );
    Ok(())
}

fn read_cache(path: &Path) -> Result<Value, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| io_err(format!("{}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| io_err(format!("{}: not a cached study: {e}", path.display())))
}

fn claims(study: &Value) -> impl Iterator<Item = &Value> {
    study["claims"].as_array().into_iter().flatten()
}

/// A finished study as the cache keeps it: per claim everything the reports print,
/// figures as SVG text.
fn section(r: &StudyRun, full: bool) -> Result<Value, CliError> {
    let figs = source_figures(r)?;
    let claims: Vec<Value> = r
        .outcomes
        .iter()
        .map(|o| {
            let source_fig = figs.iter().find(|(n, _)| !o.claim.figure.is_empty() && n == o.claim.figure);
            Ok(json!({
                "id": o.claim.id,
                "location": o.claim.location,
                "statement": o.claim.statement,
                "measure": o.claim.measure,
                "tolerance": o.claim.expect.describe(),
                "ours": o.ours.as_ref().map(|e| json!({"mean": e.mean, "half": e.half, "samples": e.samples})),
                "verdict": o.verdict.name(),
                "mechanism": o.mechanism,
                "figure": source_fig.map(|(n, svg)| json!({"name": n, "svg": svg})),
                "contract_figure": contract_figure(r, o)?,
            }))
        })
        .collect::<Result<_, CliError>>()?;
    Ok(json!({
        "study": r.study.name,
        "description": r.study.description(),
        "scale": r.study.scale_note(full),
        "seeds": r.seeds,
        "claims": claims,
    }))
}

/// The study's own figures (the source's form), drawn from the first seed's runs.
fn source_figures(r: &StudyRun) -> Result<Vec<(String, String)>, CliError> {
    let charts = match &r.study.kind {
        Kind::Suite(_) => schedlab_studies::suites::figures(r.study.name, r.first()),
        Kind::Workload(_) => schedlab_studies::bouron::figures(r.study.name, &r.first()[0].records),
        Kind::Validate | Kind::EdfSimso => Vec::new(),
    };
    charts
        .into_iter()
        .map(|c| c.render().map(|f| (f.name, f.svg)).map_err(|m| CliError { message: m, code: 1 }))
        .collect()
}

/// Ours per seed against the source's bound or value, as lines over the seeds.
fn contract_figure(r: &StudyRun, o: &Outcome) -> Result<Option<String>, CliError> {
    let Some(e) = &o.ours else { return Ok(None) };
    let xs: Vec<f64> = r.seeds.iter().take(e.samples.len()).map(|&s| s as f64).collect();
    let (x0, x1) = (xs[0], xs[xs.len() - 1].max(xs[0] + 1.0));
    let flat = |name: &str, y: f64| (name.to_string(), vec![(x0, y), (x1, y)]);
    let mut lines = vec![("ours".to_string(), xs.iter().copied().zip(e.samples.iter().copied()).collect::<Vec<_>>())];
    lines.push(flat("our mean", e.mean));
    match o.claim.expect {
        Expect::Above(t) | Expect::Below(t) => lines.push(flat("source's bound", t)),
        Expect::Within(lo, hi) => {
            lines.push(flat("source's low", lo));
            lines.push(flat("source's high", hi));
        }
        Expect::Near { value, .. } => lines.push(flat("source", value)),
        Expect::Unstated => {}
    }
    let chart = Chart {
        name: format!("{}-contract.svg", o.claim.id),
        title: format!("{}: ours per seed against the source", o.claim.id),
        note: Some(format!("{}; {}", o.claim.expect.describe(), e.text())),
        x: Axis::new("seed", Unit::Plain),
        y: Axis::new(o.claim.measure, Unit::Plain),
        panels: vec![ChartPanel { title: o.claim.id.into(), data: ChartData::Lines(lines) }],
    };
    chart.render().map(|f| Some(f.svg)).map_err(|m| CliError { message: m, code: 1 })
}

/// `N of M claims agree, K differ, J not comparable` (and how many show no effect).
fn summary_line(claims: &[&Value]) -> String {
    let count = |v: Verdict| claims.iter().filter(|c| c["verdict"] == v.name()).count();
    format!(
        "{} of {} claims agree, {} differ, {} not comparable ({} no effect: inside the noise band)",
        count(Verdict::Agree),
        claims.len(),
        count(Verdict::Differ),
        count(Verdict::NotComparable),
        count(Verdict::NoEffect)
    )
}

/// `12.3 ± 0.4 (n = 5)`, or `not measured`.
fn ours(c: &Value) -> String {
    match c["ours"].as_object() {
        Some(e) => format!(
            "{} ± {} (n = {})",
            num(e["mean"].as_f64().unwrap_or(f64::NAN)),
            num(e["half"].as_f64().unwrap_or(f64::NAN)),
            e["samples"].as_array().map_or(0, Vec::len)
        ),
        None => "not measured".into(),
    }
}

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

/// The Markdown twin: summary, then per source a table of claims, then each claim's why.
pub fn markdown(sections: &[(&Source, Vec<Value>)]) -> String {
    let all: Vec<&Value> = sections.iter().flat_map(|(_, st)| st.iter().flat_map(claims)).collect();
    let mut m = String::new();
    let _ = writeln!(m, "# Reproduction report\n\n**{}**\n", summary_line(&all));
    let _ = writeln!(m, "Regenerate: `schedlab reproduce all --docs docs/reproduce` (docs/reproduce/README.md).\n");
    for (src, studies) in sections {
        let mine: Vec<&Value> = studies.iter().flat_map(claims).collect();
        let _ = writeln!(m, "## {} — {}\n\n{}\n", src.key, src.citation, summary_line(&mine));
        let _ = writeln!(m, "| study | claim | where in the source | ours (95 % interval) | verdict |");
        let _ = writeln!(m, "|---|---|---|---|---|");
        for st in studies {
            for c in claims(st) {
                let _ = writeln!(
                    m,
                    "| {} | {} | {} | {} | **{}** |",
                    s(&st["study"]),
                    cell(s(&c["statement"])),
                    cell(s(&c["location"])),
                    ours(c),
                    s(&c["verdict"])
                );
            }
        }
        for st in studies {
            let seeds = st["seeds"].as_array().map_or(0, Vec::len);
            let _ = writeln!(m, "\n### {} ({seeds} seeds)\n\n{}\n", s(&st["study"]), s(&st["description"]));
            if let Some(scale) = st["scale"].as_str() {
                let _ = writeln!(m, "*{scale}*\n");
            }
            for c in claims(st) {
                let fig = c["figure"]["name"].as_str().map_or_else(String::new, |n| format!(" Figure: `{n}`."));
                let _ = writeln!(
                    m,
                    "- **{}** ({}): {}\n  - ours: {}: {} — tolerance: {}\n  - verdict: **{}**.{fig}\n  - why: {}",
                    s(&c["id"]),
                    s(&c["location"]),
                    s(&c["statement"]),
                    s(&c["measure"]),
                    ours(c),
                    s(&c["tolerance"]),
                    s(&c["verdict"]),
                    s(&c["mechanism"]),
                );
            }
        }
        m.push('\n');
    }
    m
}

/// A table cell: no pipes or line breaks.
fn cell(t: &str) -> String {
    t.replace('|', "/").replace('\n', " ")
}

fn esc(t: &str) -> String {
    t.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The self-contained HTML report: the same content with every figure inline.
pub fn html(sections: &[(&Source, Vec<Value>)]) -> String {
    let all: Vec<&Value> = sections.iter().flat_map(|(_, st)| st.iter().flat_map(claims)).collect();
    let mut h = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>schedlab reproduction report</title>\
         <style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}\
         table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top}\
         .agree{color:#161}.differ{color:#a11}.no-effect{color:#a60}.not-comparable{color:#555}\
         figure{display:inline-block;margin:0.5em}section.claim{border-top:1px solid #ddd;margin-top:1em}</style>\
         </head><body>\n<h1>Reproduction report</h1>\n",
    );
    let _ = writeln!(h, "<p class=\"summary\"><strong>{}</strong></p>", esc(&summary_line(&all)));
    for (src, studies) in sections {
        let mine: Vec<&Value> = studies.iter().flat_map(claims).collect();
        let _ = writeln!(h, "<h2 id=\"{}\">{}</h2>\n<p>{}</p>", src.key, esc(src.key), esc(src.citation));
        let _ = writeln!(h, "<p><strong>{}</strong></p>", esc(&summary_line(&mine)));
        for st in studies {
            let _ = writeln!(h, "<h3>{}</h3><p>{}</p>", esc(s(&st["study"])), esc(s(&st["description"])));
            if let Some(scale) = st["scale"].as_str() {
                let _ = writeln!(h, "<p><em>{}</em></p>", esc(scale));
            }
            for c in claims(st) {
                claim_html(&mut h, s(&st["study"]), c);
            }
        }
    }
    h.push_str("</body></html>\n");
    h
}

fn claim_html(h: &mut String, study: &str, c: &Value) {
    let v = s(&c["verdict"]);
    let _ = writeln!(
        h,
        "<section class=\"claim\" id=\"{study}--{id}\"><h4>{id}</h4>\
         <table><tr><th>source</th><td>{stmt}<br><em>{loc}</em></td></tr>\
         <tr><th>ours</th><td>{measure}: <strong>{ours}</strong></td></tr>\
         <tr><th>verdict</th><td class=\"{class}\"><strong>{v}</strong> ({tol})</td></tr>\
         <tr><th>why</th><td>{why}</td></tr></table>",
        id = esc(s(&c["id"])),
        stmt = esc(s(&c["statement"])),
        loc = esc(s(&c["location"])),
        measure = esc(s(&c["measure"])),
        ours = esc(&ours(c)),
        class = v.replace(' ', "-"),
        tol = esc(s(&c["tolerance"])),
        why = esc(s(&c["mechanism"])),
    );
    if let Some(svg) = c["figure"]["svg"].as_str() {
        let _ = writeln!(
            h,
            "<figure class=\"source-form\">{svg}<figcaption>{}</figcaption></figure>",
            esc(s(&c["figure"]["name"]))
        );
    }
    if let Some(svg) = c["contract_figure"].as_str() {
        let _ = writeln!(
            h,
            "<figure class=\"contract\">{svg}<figcaption>ours per seed against the source</figcaption></figure>"
        );
    }
    if c["figure"].is_null() && c["contract_figure"].is_null() {
        let _ = writeln!(h, "<p>no figure: nothing was measured for this claim (see why)</p>");
    }
    h.push_str("</section>\n");
}

/// A file the command could not read or write (exit status 1).
fn io_err(message: String) -> CliError {
    CliError { message, code: 1 }
}
