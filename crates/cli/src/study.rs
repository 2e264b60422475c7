//! A built-in multi-experiment study's outputs beyond its text: the study's own figures (its
//! paper's), each experiment's run figures, and one HTML report per experiment with the
//! study's finding first.

use crate::output::ensure_dir;
use crate::{write_atomic, write_atomic_bytes, CliError};
use schedlab_report::plots::Figure;
use schedlab_studies::suite::{suite_text, ExperimentResult, Suite};
use std::path::Path;

/// Where the outputs go and which.
pub struct Outputs<'a> {
    pub plots: Option<&'a Path>,
    pub html: Option<&'a Path>,
    pub files: FigureFiles,
    /// Every figure, also those that carry no information.
    pub all_figures: bool,
}

fn plot_err(message: String) -> CliError {
    CliError { message, code: 1 }
}

/// The study's figures (drawn from its tables).
pub fn study_figures(suite: &Suite, results: &[ExperimentResult]) -> Result<Vec<Figure>, CliError> {
    schedlab_studies::suites::figures(suite.name, results).into_iter().map(|c| c.render().map_err(plot_err)).collect()
}

/// Which files each figure is written as beside its SVG (`--png`, `--pdf`, `--dpi`).
#[derive(Clone, Copy, Debug)]
pub struct FigureFiles {
    pub png: bool,
    pub pdf: bool,
    /// The PNG's resolution.
    pub dpi: u32,
}

/// Writes every figure into `dir` as SVG, and as PNG and PDF when asked (each atomically).
pub fn write_figures(dir: &Path, figs: &[Figure], files: &FigureFiles) -> Result<(), CliError> {
    ensure_dir(dir)?;
    for f in figs {
        write_atomic(&dir.join(&f.name), &f.svg)?;
        if files.png {
            write_atomic_bytes(&dir.join(f.png_name()), &f.png(files.dpi).map_err(plot_err)?)?;
        }
        if files.pdf {
            write_atomic_bytes(&dir.join(f.pdf_name()), &f.pdf().map_err(plot_err)?)?;
        }
    }
    Ok(())
}

/// `--plots DIR`: the study's figures in `DIR/<study>/`, each experiment's run figures in
/// `DIR/<study>/<experiment>/` (so several studies can share one `DIR`); `--html FILE`: one page, a section per experiment (`FILE#name`),
/// each with the study's finding, table and figures first.
pub fn write(suite: &Suite, results: &[ExperimentResult], o: &Outputs) -> Result<(), CliError> {
    if o.plots.is_none() && o.html.is_none() {
        return Ok(());
    }
    let study_figs = study_figures(suite, results)?;
    let finding = schedlab_studies::suites::finding(suite.name, results);
    let plots = o.plots.map(|d| study_dir(d, suite.name));
    let plots = plots.as_deref();
    if let Some(dir) = plots {
        write_figures(dir, &study_figs, &o.files)?;
        note!("wrote {} study figures to {}", study_figs.len(), dir.display());
    }
    let mut pages: Vec<(&str, String)> = Vec::new();
    for r in results {
        let figs = if o.all_figures {
            schedlab_report::plots::figures_all(&r.records)
        } else {
            schedlab_report::plots::figures(&r.records)
        }
        .map_err(plot_err)?;
        if let Some(dir) = plots {
            write_figures(&dir.join(r.name), &figs, &o.files)?;
        }
        if o.html.is_some() {
            let table = suite_text(suite, std::slice::from_ref(r));
            let section = schedlab_report::html::StudySection {
                paper: finding.as_ref().map(|f| f.paper),
                conclusion: finding.as_ref().map(|f| f.conclusion.as_str()),
                table: &table,
                figures: &study_figs,
            };
            let html = schedlab_report::html::report_study(r.title, &r.records, &figs, &section).map_err(plot_err)?;
            pages.push((r.name, html));
        }
    }
    if let Some(path) = o.html {
        let title = format!("{}: {}", suite.name, suite.description);
        write_atomic(path, &schedlab_report::html::combine(&title, &pages).map_err(plot_err)?)?;
        note!("wrote {} ({} experiments)", path.display(), pages.len());
    }
    Ok(())
}

/// Where study `name` writes its figures under `--plots DIR`: its own subdirectory.
pub fn study_dir(dir: &Path, name: &str) -> std::path::PathBuf {
    dir.join(name)
}

/// `--plots DIR` of a single-workload `ule-cfs-*` study (`DIR` already its own, [`study_dir`]): the paper's comparison as figures
/// (`paper-completion.svg`, `paper-shares.svg`) beside the run figures.
pub fn write_paper_figures(
    dir: Option<&Path>,
    files: &FigureFiles,
    title: &str,
    rs: &[schedlab_run::RunRecord],
) -> Result<(), CliError> {
    let Some(dir) = dir else { return Ok(()) };
    let figs: Vec<Figure> = schedlab_studies::bouron::figures(title, rs)
        .into_iter()
        .map(|c| c.render().map_err(plot_err))
        .collect::<Result<_, _>>()?;
    if !figs.is_empty() {
        write_figures(dir, &figs, files)?;
        note!("wrote {} figures of the paper's comparison to {}", figs.len(), dir.display());
    }
    Ok(())
}

/// Runs a planned study (every run of every seed on all cores) under one progress bar that
/// counts runs and estimates the time left. SIGINT/SIGTERM end the runs early: the study is
/// then not judged (an interrupted run is not a measurement) and the command says so.
pub fn run_plan(plan: schedlab_studies::runs::Plan) -> Result<schedlab_studies::runs::StudyRun, CliError> {
    let name = plan.study.name;
    let bar = runs_bar(plan.len() as u64, name);
    let r = plan.run(&|| !crate::signals::stop_requested(), &|| bar.inc(1));
    bar.finish_and_clear();
    if crate::signals::stop_requested() {
        return Err(crate::signals::interrupted(&format!("running study {name}")));
    }
    Ok(r?)
}

/// A bar of `n` runs with the time left.
pub fn runs_bar(n: u64, prefix: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(n);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{prefix:>24} [{bar:30}] {pos}/{len} runs ({elapsed}, ~{eta} left)")
            .expect("valid template"),
    );
    bar.set_prefix(prefix.to_string());
    bar
}

/// The seeds `study` runs: `--seeds N` (at least one), else the contract's default; host
/// runs are measured once (they are not seeded).
pub fn seed_count(given: Option<usize>, host: bool) -> usize {
    if host {
        return 1;
    }
    given.unwrap_or(schedlab_studies::contract::DEFAULT_SEEDS).max(1)
}
