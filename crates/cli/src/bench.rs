//! `schedlab bench`: events per second of the simulator, how per-event cost and memory grow
//! with the number of threads and CPUs, and eevdf next to cfs with and without task groups.
//! Timing lives here, never in tests. Rates are per second of the simulating thread's CPU
//! time (the machine may be shared); heap bytes per thread are the peak heap in use during
//! the row (glibc `mallinfo2`) beyond what was in use before it, divided by the threads.
//! The steady-state cost is the CPU time per event over the second half of the simulated
//! time only, without the threads' start (forks and their placement). The last two rows
//! time loading 100 000 tasks (native TOML, rt-app JSON); their events are the tasks.

use crate::CliError;
use schedlab_run::RunSpec;
use schedlab_sim::Ns;
use schedlab_workload::synthetic;

/// `examples/workloads/periodic-200.toml`, built in so `bench` runs from any directory.
pub const PERIODIC_200: &str = include_str!("../../../examples/workloads/periodic-200.toml");

/// A periodic workload of `tasks` tasks (each runs, then sleeps until its next 10 ms period
/// with an absolute timer) whose utilisations sum to `util_cpus` CPUs on `machine`.
pub fn periodic_workload(tasks: u64, machine: &str, util_cpus: u64) -> String {
    format!(
        "name = \"bench-periodic-{tasks}\"\nmachine = \"{machine}\"\n[[task]]\nname = \"p\"\ncount = {tasks}\nprogram = [ {{ loop = \"forever\", do = [ {{ run = \"{run}ns\" }}, {{ timer = \"10ms\" }} ] }} ]\n",
        run = (util_cpus * 10_000_000 / tasks.max(1)).max(1)
    )
}

/// `tasks` threads alternating exponential bursts (mean 400 µs) and sleeps (mean 1 ms):
/// wakeups, placement and balancing on every CPU.
pub fn mixed_workload(tasks: u64, machine: &str) -> String {
    format!(
        "name = \"bench-mixed-{tasks}\"\nmachine = \"{machine}\"\n[[task]]\nname = \"p\"\ncount = {tasks}\nprogram = [ {{ loop = \"forever\", do = [ {{ run = {{ dist = \"exponential\", mean = \"400us\" }} }}, {{ sleep = {{ dist = \"exponential\", mean = \"1ms\" }} }} ] }} ]\n"
    )
}

/// The mixed workload in a two-level cgroup hierarchy: `parents` groups of weight
/// `100 + 10·p`, each with `children` groups of weight `100 + 10·c`, each holding
/// `per_group` tasks.
pub fn grouped_workload(parents: u64, children: u64, per_group: u64, machine: &str) -> String {
    let mut s = format!("name = \"bench-groups-{parents}x{children}\"\nmachine = \"{machine}\"\n");
    for p in 0..parents {
        s += &format!("[[group]]\nname = \"p{p}\"\nweight = {}\n", 100 + 10 * p);
        for c in 0..children {
            s += &format!("[[group]]\nname = \"p{p}c{c}\"\nparent = \"p{p}\"\nweight = {}\n", 100 + 10 * c);
        }
    }
    for p in 0..parents {
        for c in 0..children {
            s += &format!(
                "[[task]]\nname = \"t{p}-{c}\"\ngroup = \"p{p}c{c}\"\ncount = {per_group}\nprogram = [ {{ loop = \"forever\", do = [ {{ run = {{ dist = \"exponential\", mean = \"400us\" }} }}, {{ sleep = {{ dist = \"exponential\", mean = \"1ms\" }} }} ] }} ]\n"
            );
        }
    }
    s
}

/// `parents` tasks each forking `children` children one at a time (each child runs 20 µs
/// and exits): half wait for each child, half fork one every 30 µs and exit after the last,
/// orphaning the children still running. Task creation, exit and reparenting at scale.
pub fn fork_exit_workload(parents: u64, children: u64, machine: &str) -> String {
    let half = parents / 2;
    format!(
        "name = \"bench-fork-exit\"\nmachine = \"{machine}\"\n[[task]]\nname = \"waiter\"\ncount = {half}\nprogram = [ {{ loop = {children}, do = [ {{ fork = \"child\", count = 1 }}, \"wait\" ] }} ]\n[[task]]\nname = \"leaver\"\ncount = {}\nprogram = [ {{ loop = {children}, do = [ {{ fork = \"child\", count = 1 }}, {{ run = \"30us\" }} ] }} ]\n[[task]]\nname = \"child\"\ntemplate = true\nprogram = [ {{ run = \"20us\" }} ]\n",
        parents - half
    )
}

pub struct BenchRow {
    pub label: String,
    pub threads: u64,
    pub events: u64,
    pub wall_s: f64,
    /// CPU time of the simulating thread (the figure to read on a shared machine).
    pub cpu_s: f64,
    pub sim: Ns,
    /// Peak heap bytes in use during the run beyond what was in use before it.
    pub heap_bytes: u64,
    /// CPU seconds and events of the second half of the simulated time (`None` when the
    /// run polled too rarely to tell: fewer than two polls in that half).
    pub steady: Option<(f64, u64)>,
}

impl BenchRow {
    /// Events per second of CPU time.
    pub fn events_per_s(&self) -> f64 {
        self.events as f64 / self.cpu_s.max(1e-9)
    }
    /// CPU nanoseconds per event over the second half of the simulated time.
    pub fn steady_ns_per_event(&self) -> Option<f64> {
        self.steady.map(|(cpu, ev)| cpu * 1e9 / ev.max(1) as f64)
    }
}

/// Where the second half of a run's simulated time began: the thread's CPU seconds and
/// the events processed at the first poll past the half (the run polls `keep_going`
/// once per [`schedlab_run::PROGRESS_EVENTS`] events, so the calls count events).
struct SteadyMark {
    half: Ns,
    polls: u64,
    at: Option<(f64, u64)>,
}

impl SteadyMark {
    fn poll(&mut self, now: Ns) {
        self.polls += 1;
        if self.at.is_none() && now >= self.half {
            self.at = Some((thread_cpu_s(), self.polls * schedlab_run::PROGRESS_EVENTS));
        }
    }
    fn finish(&self, cpu_end: f64, events: u64) -> Option<(f64, u64)> {
        let (cpu, ev) = self.at?;
        (events > ev + schedlab_run::PROGRESS_EVENTS).then(|| (cpu_end - cpu, events - ev))
    }
}

/// Heap bytes in use (glibc `mallinfo2`: arena bytes in use plus `mmap`ed blocks).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn heap_in_use() -> u64 {
    // SAFETY: mallinfo2 only reads the allocator's statistics.
    let m = unsafe { libc::mallinfo2() };
    (m.uordblks + m.hblkhd) as u64
}
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn heap_in_use() -> u64 {
    0
}

/// CPU time of the calling thread, in seconds.
pub fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Runs one job (on this thread) and times it; samples the heap every 65 536 events (when the run polls
/// `keep_going`) and once at the end, while the run's record is still alive.
pub fn time_job(label: &str, job: &RunSpec) -> Result<BenchRow, CliError> {
    let before = heap_in_use();
    let mut peak = before;
    #[allow(clippy::disallowed_methods)] // benchmarks measure wall time by design
    let start = std::time::Instant::now();
    let cpu0 = thread_cpu_s();
    let mut mark = SteadyMark { half: Ns(job.end.0 / 2), polls: 0, at: None };
    let r = job.run(&mut |now| {
        peak = peak.max(heap_in_use());
        mark.poll(now);
        true
    })?;
    let wall_s = start.elapsed().as_secs_f64();
    let cpu_end = thread_cpu_s();
    let cpu_s = cpu_end - cpu0;
    peak = peak.max(heap_in_use());
    Ok(BenchRow {
        label: label.to_string(),
        threads: job.workload.initial_tasks(),
        events: r.events,
        wall_s,
        cpu_s,
        sim: Ns(r.sim_ns),
        heap_bytes: peak - before,
        steady: mark.finish(cpu_end, r.events),
    })
}

/// What `schedlab bench` runs.
pub struct BenchPlan {
    /// Largest thread count of the scaling sweep (10, 100, … up to it).
    pub max_threads: u64,
    /// Simulated time of each sweep row.
    pub sweep: Ns,
    /// Only the first row of each kind (a smoke test).
    pub tiny: bool,
}

/// A machine of the sweep: preset name and the CPUs' worth of work its periodic rows ask
/// for (three quarters of its CPUs).
const SWEEP_MACHINES: [(&str, u64); 2] = [("opteron-32", 24), ("numa-1024", 768)];

/// Builds and runs every row.
pub fn run(
    plan: &BenchPlan,
    on_row: &mut dyn FnMut(&BenchRow) -> Result<(), CliError>,
) -> Result<Vec<BenchRow>, CliError> {
    let mut rows = Vec::new();
    let mut go = |label: String, text: String, sched: &str, dur: Ns| -> Result<(), CliError> {
        let mut job = RunSpec::load("bench", &text, None, &[], Some(dur))?;
        job.sched = sched.into();
        let row = time_job(&label, &job)?;
        on_row(&row)?;
        rows.push(row);
        Ok(())
    };
    let p200 = if plan.tiny { Ns::from_ms(100) } else { Ns::from_secs(10) };
    go(format!("periodic-200, smp8, eevdf, {p200}"), PERIODIC_200.into(), "eevdf", p200)?;
    if plan.tiny {
        return Ok(rows);
    }
    go(format!("periodic-200, smp8, cfs, {p200}"), PERIODIC_200.into(), "cfs", p200)?;
    for (machine, util) in SWEEP_MACHINES {
        let mut n = 10;
        while n <= plan.max_threads {
            let label = format!("{n} threads, {machine}, eevdf, {}", plan.sweep);
            go(label, periodic_workload(n, machine, util), "eevdf", plan.sweep)?;
            n *= 10;
        }
    }
    let two = Ns::from_secs(2);
    for sched in ["eevdf", "cfs", "ule"] {
        go(format!("512 mixed, opteron-32, {sched}, {two}"), mixed_workload(512, "opteron-32"), sched, two)?;
    }
    for sched in ["eevdf", "cfs"] {
        let label = format!("500 in 110 groups, opteron-32, {sched}, {two}");
        go(label, grouped_workload(10, 10, 5, "opteron-32"), sched, two)?;
    }
    // 100 parents and 99 900 children: every task is created and exits (until all have).
    let ten = Ns::from_secs(10);
    go("100000 forked, exited, opteron-32, cfs".into(), fork_exit_workload(100, 999, "opteron-32"), "cfs", ten)?;
    let n = LOAD_TASKS;
    for (kind, text) in [("native", synthetic::native(n)), ("rt-app", synthetic::rtapp(n))] {
        let row = time_load(&format!("load {n} tasks, {kind} (events = tasks)"), &text)?;
        on_row(&row)?;
        rows.push(row);
    }
    Ok(rows)
}

/// Tasks of the loading rows (`schedlab_workload::synthetic`: forks, changes, cgroups,
/// sessions and timers naming one another).
const LOAD_TASKS: u64 = 100_000;

/// Times loading a workload (`RunSpec::load`: parse, check, lower every program); the row's
/// events are the tasks loaded, its heap what the loaded workload holds.
fn time_load(label: &str, text: &str) -> Result<BenchRow, CliError> {
    let before = heap_in_use();
    #[allow(clippy::disallowed_methods)] // benchmarks measure wall time by design
    let start = std::time::Instant::now();
    let cpu0 = thread_cpu_s();
    let job = RunSpec::load("bench", text, None, &[], None)?;
    let (wall_s, cpu_s) = (start.elapsed().as_secs_f64(), thread_cpu_s() - cpu0);
    let wl = &job.workload;
    let (threads, events) = (wl.initial_tasks(), wl.templates.len() as u64);
    let heap_bytes = heap_in_use().saturating_sub(before);
    Ok(BenchRow { label: label.into(), threads, events, wall_s, cpu_s, sim: Ns(0), heap_bytes, steady: None })
}

/// The table header and one row.
pub fn header() -> String {
    format!(
        "{:<44} {:>12} {:>9} {:>9} {:>12} {:>9} {:>12} {:>11}",
        "run", "events", "wall s", "CPU s", "events/s", "ns/event", "steady ns/ev", "B/thread"
    )
}
pub fn format_row(r: &BenchRow) -> String {
    let steady = r.steady_ns_per_event().map_or_else(|| "-".to_string(), |ns| format!("{ns:.1}"));
    format!(
        "{:<44} {:>12} {:>9.3} {:>9.3} {:>12.0} {:>9.1} {:>12} {:>11.0}",
        r.label,
        r.events,
        r.wall_s,
        r.cpu_s,
        r.events_per_s(),
        r.cpu_s * 1e9 / r.events.max(1) as f64,
        steady,
        r.heap_bytes as f64 / r.threads.max(1) as f64
    )
}

#[cfg(test)]
mod tests {
    /// The fork-exit row's workload loads: its parents start, its children are forked.
    #[test]
    fn fork_exit_workload_starts_its_parents_and_forks_the_rest() {
        let text = super::fork_exit_workload(100, 999, "opteron-32");
        let job = schedlab_run::RunSpec::load("bench", &text, None, &[], None).expect("loads");
        assert_eq!(job.workload.initial_tasks(), 100);
        let child = job.workload.templates.iter().find(|t| t.name == "child").expect("child template");
        assert!(child.template && child.count == 0);
    }
}
