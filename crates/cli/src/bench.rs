//! `schedlab bench`: events per second of the simulator, and how per-event cost grows with
//! the number of tasks. Timing lives here, never in tests.

use crate::CliError;
use schedlab_run::RunSpec;
use schedlab_sim::Ns;

/// A periodic workload of `tasks` tasks with total utilisation `util_x100 / 100` on `machine`.
pub fn periodic_workload(tasks: u64, machine: &str) -> String {
    format!(
        "name = \"bench-periodic-{tasks}\"\nmachine = \"{machine}\"\n[[task]]\nname = \"p\"\ncount = {tasks}\nprogram = [ {{ loop = \"forever\", do = [ {{ run = \"{run}ns\" }}, {{ timer = \"10ms\" }} ] }} ]\n",
        // Keep total utilisation at 6.0 CPUs' worth whatever the count.
        run = 60_000_000 / tasks.max(1)
    )
}

/// `tasks` threads alternating exponential bursts (mean 400 µs) and sleeps (mean 1 ms):
/// wakeups, placement and balancing on every CPU.
pub fn mixed_workload(tasks: u64, machine: &str) -> String {
    format!(
        "name = \"bench-mixed-{tasks}\"\nmachine = \"{machine}\"\n[[task]]\nname = \"p\"\ncount = {tasks}\nprogram = [ {{ loop = \"forever\", do = [ {{ run = {{ dist = \"exponential\", mean = \"400us\" }} }}, {{ sleep = {{ dist = \"exponential\", mean = \"1ms\" }} }} ] }} ]\n"
    )
}

pub struct BenchRow {
    pub label: String,
    pub events: u64,
    pub wall_s: f64,
    pub sim: Ns,
}

/// Runs one job and times it.
pub fn time_job(label: &str, job: &RunSpec) -> Result<BenchRow, CliError> {
    #[allow(clippy::disallowed_methods)] // benchmarks measure wall time by design
    let start = std::time::Instant::now();
    let r = job.run(&mut |_| true)?;
    Ok(BenchRow {
        label: label.to_string(),
        events: r.events,
        wall_s: start.elapsed().as_secs_f64(),
        sim: Ns(r.sim_ns),
    })
}
