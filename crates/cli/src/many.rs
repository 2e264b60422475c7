//! `compare`, `report`, `plot` and `study` over several schedulers: every run prepared
//! first (a bad name fails before anything runs), then simulations in parallel on the local
//! cores (`schedlab_run::parallel`), one progress bar per run.

use crate::{signals, CliError};
use schedlab_run::{Backend, RunRecord, RunSpec};
use schedlab_sim::Ns;

/// Runs `jobs` (simulations in parallel, host runs after them one at a time) and returns
/// their records in order. Ctrl-C ends every run early with what it measured.
pub fn run_jobs(jobs: &[RunSpec]) -> Result<Vec<RunRecord>, CliError> {
    for j in jobs {
        j.validate()?;
    }
    let bars = indicatif::MultiProgress::new();
    let style = indicatif::ProgressStyle::with_template("{prefix:>12} [{bar:40}] {pos}/{len} ms simulated ({elapsed})")
        .expect("valid template");
    let each: Vec<indicatif::ProgressBar> = jobs
        .iter()
        .map(|j| {
            let b = bars.add(indicatif::ProgressBar::new(j.end.0 / 1_000_000));
            b.set_style(style.clone());
            b.set_prefix(j.sched.clone());
            b
        })
        .collect();
    let results = schedlab_run::parallel::run_all(jobs, &|i, now: Ns| {
        each[i].set_position(now.0 / 1_000_000);
        !signals::stop_requested()
    });
    each.iter().for_each(indicatif::ProgressBar::finish_and_clear);
    if signals::stop_requested() {
        note!("interrupted: writing what was measured so far");
    }
    let mut out = Vec::with_capacity(jobs.len());
    for (job, r) in jobs.iter().zip(results) {
        let r = r?;
        notes(job, &r);
        out.push(r);
    }
    Ok(out)
}

/// What a finished run says beside its outputs: a simulated deadlock's wait-for graph, and
/// what a real run could not measure.
pub fn notes(job: &RunSpec, r: &RunRecord) {
    if job.check {
        note!(
            "{}: --check: kernel and policy invariants checked after every event ({} events): all held",
            job.sched,
            r.events
        );
    }
    if !r.deadlock.is_empty() && job.backend() != Backend::Host {
        note!("{}", schedlab_report::deadlock_text(r).trim_end());
    }
    for n in r.host.real.iter().flat_map(|h| &h.notes) {
        note!("host run: {n}");
    }
}
