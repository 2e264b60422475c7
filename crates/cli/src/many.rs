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
    let each: Vec<crate::progress::Bar> =
        jobs.iter().map(|j| crate::progress::Bar::new(j, bars.add(indicatif::ProgressBar::new(0)))).collect();
    let results = schedlab_run::parallel::run_all(jobs, &|i, now: Ns| {
        each[i].tick(now);
        !signals::stop_requested()
    });
    each.iter().for_each(crate::progress::Bar::finish);
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
