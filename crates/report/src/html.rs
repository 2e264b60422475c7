//! One self-contained HTML report (inline SVG figures, inline CSS and a few lines of JS for
//! sortable tables; no network access) for one run or several runs of one workload.

use crate::plots::Figure;
use minijinja::{context, Environment};
use schedlab_metrics::RunRecord;
use serde::Serialize;

const TEMPLATE: &str = include_str!("../templates/report.html");

#[derive(Serialize)]
struct Cell {
    text: String,
    diff: bool,
}

#[derive(Serialize)]
struct TaskRow {
    name: String,
    tid: usize,
    nice: i32,
    run: String,
    wait: String,
    sleep: String,
    vol: u64,
    invol: u64,
    migr: u64,
    p50: String,
    p99: String,
    max: String,
    exit: String,
}

#[derive(Serialize)]
struct LockRow {
    kind: String,
    site: String,
    acq: u64,
    cont: u64,
    pct: String,
    spin: String,
}

#[derive(Serialize)]
struct Run {
    scheduler: String,
    tunables: String,
    counters: String,
    tasks: Vec<TaskRow>,
    locks: Vec<LockRow>,
    /// Where the time went, when the run was explained.
    waits: Option<Waits>,
}

/// "Where the time went": wait time by cause per task, the figure, and the worst waits of
/// the tasks that waited longest, each a causal chain in words.
#[derive(Serialize)]
struct Waits {
    causes: Vec<CauseCol>,
    rows: Vec<WaitRow>,
    svg: String,
    worst: Vec<WorstWaits>,
}

#[derive(Serialize)]
struct CauseCol {
    short: &'static str,
    name: &'static str,
    describe: &'static str,
}

#[derive(Serialize)]
struct WaitRow {
    name: String,
    wait: String,
    waits: u64,
    cells: Vec<String>,
}

#[derive(Serialize)]
struct WorstWaits {
    task: String,
    wait: String,
    text: Vec<String>,
}

/// Tasks whose worst waits the report explains, those that waited longest first.
const WORST_TASKS: usize = 5;
/// Waits explained per task (the explainer keeps this many).
const WORST_WAITS: usize = 3;

fn waits_of(ex: &schedlab_metrics::explain::Explained) -> Waits {
    use crate::explain::{pct, short, wait_text};
    use schedlab_metrics::explain::WaitCause;
    let tasks: Vec<_> = ex.tasks.iter().filter(|t| t.wait_ns > 0).collect();
    let causes =
        WaitCause::ALL.iter().map(|&c| CauseCol { short: short(c), name: c.name(), describe: c.describe() }).collect();
    let rows = tasks
        .iter()
        .map(|t| WaitRow {
            name: t.name.clone(),
            wait: ms(t.wait_ns),
            waits: t.waits,
            cells: WaitCause::ALL
                .iter()
                .map(|c| match t.by_cause[c.index()] {
                    0 => "-".into(),
                    v => pct(v, t.wait_ns).replace(" %", ""),
                })
                .collect(),
        })
        .collect();
    let mut longest = tasks.clone();
    longest.sort_by(|a, b| b.wait_ns.cmp(&a.wait_ns).then(a.task.cmp(&b.task)));
    let worst = longest
        .iter()
        .take(WORST_TASKS)
        .map(|t| WorstWaits {
            task: t.name.clone(),
            wait: crate::explain::dur(t.wait_ns),
            text: t.worst.iter().take(WORST_WAITS).map(|w| wait_text(ex, w)).collect(),
        })
        .collect();
    let svg = crate::explain::waits_svg(&tasks).replace(" xmlns=\"http://www.w3.org/2000/svg\"", "");
    Waits { causes, rows, svg, worst }
}

#[derive(Serialize)]
struct Fig {
    title: String,
    svg: String,
}

fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}
fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e3)
}

/// The first number in a cell (`"46.80%"` → 46.8), for highlighting differences.
fn number(s: &str) -> Option<f64> {
    let t: String = s.chars().take_while(|c| c.is_ascii_digit() || *c == '.' || *c == '-').collect();
    t.parse().ok()
}

/// The kernel model's version and switches, for the parameters table.
fn switches(r: &RunRecord) -> String {
    crate::header::switches(r)
}

fn run_of(r: &RunRecord) -> Run {
    let tunables = r.scheduler.tunables.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ");
    let tasks = r
        .tasks
        .iter()
        .map(|t| TaskRow {
            name: t.name.clone(),
            tid: t.tid,
            nice: t.nice,
            run: ms(t.runtime_ns),
            wait: ms(t.wait_ns),
            sleep: ms(t.sleep_ns),
            vol: t.switches_voluntary,
            invol: t.switches_involuntary,
            migr: t.migrations,
            p50: us(t.wakeup_latency_ns.p50),
            p99: us(t.wakeup_latency_ns.p99),
            max: us(t.wakeup_latency_ns.max),
            exit: t.exit_ns.map_or("-".into(), ms),
        })
        .collect();
    // By lock kind (rq, futex_bucket) and site, summed over the lock instances.
    let mut locks: Vec<LockRow> = Vec::new();
    for l in &r.locks {
        let kind = l.lock.split('[').next().unwrap_or("").to_string();
        match locks.iter_mut().find(|x| x.kind == kind && x.site == l.site) {
            Some(x) => {
                x.acq += l.acquisitions;
                x.cont += l.contended;
                let spin: f64 = x.spin.parse().unwrap_or(0.0);
                x.spin = format!("{:.1}", spin + l.spin_ns as f64 / 1e3);
            }
            None => locks.push(LockRow {
                kind,
                site: l.site.clone(),
                acq: l.acquisitions,
                cont: l.contended,
                pct: String::new(),
                spin: us(l.spin_ns),
            }),
        }
    }
    for l in &mut locks {
        l.pct = if l.acq == 0 { "-".into() } else { format!("{:.2}", l.cont as f64 * 100.0 / l.acq as f64) };
    }
    Run {
        scheduler: r.scheduler.name.clone(),
        tunables,
        counters: r.policy_counters.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", "),
        tasks,
        locks,
        waits: r.explained.as_deref().map(waits_of),
    }
}

/// Renders the report. `figures` are usually `plots::figures(rs)`.
pub fn report(title: &str, rs: &[RunRecord], figures: &[Figure]) -> Result<String, String> {
    report_with(title, rs, figures, None)
}

/// A study's finding, shown first in its report: the paper it reproduces, a one-line
/// conclusion from this run's numbers, its comparison table and its own figures.
#[derive(Default)]
pub struct StudySection<'a> {
    pub paper: Option<&'a str>,
    pub conclusion: Option<&'a str>,
    pub table: &'a str,
    pub figures: &'a [Figure],
}

/// [`report`] for a study: its finding first, then the runs' report.
pub fn report_study(title: &str, rs: &[RunRecord], figures: &[Figure], study: &StudySection) -> Result<String, String> {
    render(title, rs, figures, Some(study))
}

/// [`report`] with a preformatted comparison (a study's table) shown first.
pub fn report_with(
    title: &str,
    rs: &[RunRecord],
    figures: &[Figure],
    comparison: Option<&str>,
) -> Result<String, String> {
    let study = comparison.map(|table| StudySection { table, ..StudySection::default() });
    render(title, rs, figures, study.as_ref())
}

/// One page of several reports rendered by [`report_study`] (a study's experiments): the
/// head of the first, a table of contents, then each report's body in a `<section>` with
/// `id` its name. One file per invocation, whatever the number of experiments.
pub fn combine(title: &str, pages: &[(&str, String)]) -> Result<String, String> {
    let part = |html: &str, open: &str, close: &str| -> Result<String, String> {
        let a = html.find(open).ok_or_else(|| format!("report without {open}"))? + open.len();
        let b = html[a..].find(close).ok_or_else(|| format!("report without {close}"))? + a;
        Ok(html[a..b].to_string())
    };
    let Some((_, first)) = pages.first() else { return Err("no reports to combine".into()) };
    let head = part(first, "<head>", "</head>")?;
    let head = match (head.find("<title>"), head.find("</title>")) {
        (Some(a), Some(b)) => format!("{}<title>{}</title>{}", &head[..a], escape(title), &head[b + 8..]),
        _ => head,
    };
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>{head}</head>\n<body>\n<nav><h1>{}</h1><ul>",
        escape(title)
    );
    for (name, _) in pages {
        out += &format!("<li><a href=\"#{0}\">{0}</a></li>", escape(name));
    }
    out += "</ul></nav>\n";
    for (name, html) in pages {
        out += &format!("<section id=\"{}\">{}</section>\n", escape(name), part(html, "<body>", "</body>")?);
    }
    out += "</body>\n</html>\n";
    Ok(out)
}

/// `text` safe inside HTML text and attribute values.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn inline(figures: &[Figure]) -> Vec<Fig> {
    // Inline SVG in HTML needs no namespace declaration; dropping it leaves the file with
    // no URL at all.
    figures
        .iter()
        .map(|f| Fig { title: f.title.clone(), svg: f.svg.replace(" xmlns=\"http://www.w3.org/2000/svg\"", "") })
        .collect()
}

fn render(title: &str, rs: &[RunRecord], figures: &[Figure], study: Option<&StudySection>) -> Result<String, String> {
    let Some(r0) = rs.first() else { return Err("no runs to report".into()) };
    let rows = crate::compare_rows(rs);
    let header = rows.first().cloned().unwrap_or_default();
    let summary: Vec<Vec<Cell>> = rows
        .iter()
        .skip(1)
        .map(|row| {
            let base = row.get(1).and_then(|c| number(c));
            row.iter()
                .enumerate()
                .map(|(i, c)| {
                    let diff = i > 1
                        && match (base, number(c)) {
                            (Some(b), Some(x)) => (x - b).abs() > 0.1 * b.abs().max(1e-9),
                            _ => false,
                        };
                    Cell { text: c.clone(), diff }
                })
                .collect()
        })
        .collect();
    let m = &r0.machine;
    let machine = format!(
        "{} — {} CPUs, HZ={}, topology {}",
        m.name,
        m.cpus,
        crate::hz(r0),
        serde_json::to_string(&m.topology).map_err(|e| e.to_string())?
    );
    // As a JSON object, in the workload's order.
    let params: serde_json::Map<String, serde_json::Value> = r0
        .workload
        .params
        .iter()
        .map(|(k, v)| Ok((k.clone(), serde_json::to_value(v)?)))
        .collect::<Result<_, serde_json::Error>>()
        .map_err(|e| e.to_string())?;
    let mut env = Environment::new();
    env.add_template("report.html", TEMPLATE).map_err(|e| e.to_string())?;
    let tpl = env.get_template("report.html").map_err(|e| e.to_string())?;
    let figs = inline(figures);
    let runs: Vec<Run> = rs.iter().map(run_of).collect();
    tpl.render(context! {
        title => title,
        version => r0.schedlab_version.clone(),
        workload => r0.workload.name.clone(),
        workload_file => r0.workload.file.clone(),
        params => serde_json::Value::Object(params).to_string(),
        machine => machine,
        seed => r0.seed,
        sim_ms => ms(r0.sim_ns),
        end_reason => r0.end_reason.as_str(),
        runs => minijinja::value::Serde(&runs),
        summary_header => header,
        summary => minijinja::value::Serde(&summary),
        figures => minijinja::value::Serde(&figs),
        comparison => study.map(|s| s.table),
        paper => study.and_then(|s| s.paper),
        conclusion => study.and_then(|s| s.conclusion),
        study_figures => minijinja::value::Serde(&study.map(|s| inline(s.figures)).unwrap_or_default()),
        switches => switches(r0),
    })
    .map_err(|e| format!("report template: {e}"))
}
