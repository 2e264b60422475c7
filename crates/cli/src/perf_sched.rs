//! `schedlab timehist` and `schedlab latency`: `perf sched timehist` / `perf sched latency`
//! views of one run, rendered by `schedlab_report::perf_sched` from the run's events.

use crate::CliError;
use schedlab_run::RunRecord;

/// Which view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    Timehist,
    Latency,
}

/// Prints `view` of `r` (run with its events recorded).
pub fn print(r: &RunRecord, view: View) -> Result<(), CliError> {
    let Some(t) = &r.trace else {
        return Err(CliError { message: format!("{}: the run recorded no events", r.scheduler.name), code: 1 });
    };
    let header = format!(
        "schedlab {} · workload {} · scheduler {} · {} CPUs · seed {}\n\n",
        match view {
            View::Timehist => "timehist",
            View::Latency => "latency",
        },
        r.workload.file,
        r.scheduler.name,
        t.nr_cpus,
        r.seed
    );
    let body = match view {
        View::Timehist => schedlab_report::perf_sched::timehist(t, 0, u64::MAX),
        View::Latency => schedlab_report::perf_sched::latency(t),
    };
    crate::out!("{header}{body}")
}
