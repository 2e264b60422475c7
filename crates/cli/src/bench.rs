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

/// A periodic workload of `tasks` tasks (each runs, then sleeps until its next [`PERIOD`]
/// with an absolute timer) whose utilisations sum to `util_cpus` CPUs on `machine`.
pub fn periodic_workload(tasks: u64, machine: &str, util_cpus: u64) -> String {
    format!(
        "name = \"bench-periodic-{tasks}\"\nmachine = \"{machine}\"\n[[task]]\nname = \"p\"\ncount = {tasks}\nprogram = [ {{ loop = \"forever\", do = [ {{ run = \"{run}ns\" }}, {{ timer = \"{period}ns\" }} ] }} ]\n",
        run = (util_cpus * PERIOD.0 / tasks.max(1)).max(1),
        period = PERIOD.0
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
    /// A periodic row's check that its world stayed periodic ([`PeriodicCheck`]): `Err`
    /// says what failed, and `bench` exits non-zero after printing every row.
    pub check: Option<Result<String, String>>,
    /// Whether a failed check fails `bench` (else the row is labelled over capacity).
    pub enforced: bool,
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
    /// CPU seconds spent sampling the heap so far (left out of the row's CPU time).
    sampling: f64,
    peak: u64,
}

impl SteadyMark {
    /// Samples the heap, timing the sample: `mallinfo2` walks the allocator's free lists,
    /// which with a heap of hundreds of megabytes took more CPU than the simulation
    /// (1 365 samples in a second of 100 000 threads on `numa-1024`: 235 CPU-s against
    /// 99 for the run alone).
    fn sample_heap(&mut self) {
        let t0 = thread_cpu_s();
        self.peak = self.peak.max(heap_in_use());
        self.sampling += thread_cpu_s() - t0;
    }
    fn poll(&mut self, now: Ns) {
        self.sample_heap();
        self.polls += 1;
        if self.at.is_none() && now >= self.half {
            self.at = Some((thread_cpu_s() - self.sampling, self.polls * schedlab_run::PROGRESS_EVENTS));
        }
    }
    /// The steady window's CPU seconds (sampling left out) and events.
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

/// Runs one job (on this thread) and times it, telling `progress` the simulated time at each
/// poll and stopping at a signal (the row is then incomplete); samples the heap every 65 536 events (when the run polls
/// `keep_going`) and once at the end, while the run's record is still alive. The samples'
/// own CPU time is left out of the row's.
pub fn time_job(label: &str, job: &RunSpec, progress: &mut dyn FnMut(Ns)) -> Result<(BenchRow, RowFacts), CliError> {
    let before = heap_in_use();
    #[allow(clippy::disallowed_methods)] // benchmarks measure wall time by design
    let start = std::time::Instant::now();
    let cpu0 = thread_cpu_s();
    let mut mark = SteadyMark { half: Ns(job.end.0 / 2), polls: 0, at: None, sampling: 0.0, peak: before };
    let r = job.run(&mut |now| {
        mark.poll(now);
        progress(now);
        crate::signals::keep_going()
    })?;
    let wall_s = start.elapsed().as_secs_f64();
    mark.sample_heap();
    // The CPU time of the run, without the heap samples'.
    let cpu_end = thread_cpu_s() - mark.sampling;
    let cpu_s = cpu_end - cpu0;
    let peak = mark.peak;
    let row = BenchRow {
        label: label.to_string(),
        threads: job.workload.initial_tasks(),
        events: r.events,
        wall_s,
        cpu_s,
        sim: Ns(r.sim_ns),
        heap_bytes: peak - before,
        steady: mark.finish(cpu_end, r.events),
        check: None,
        enforced: false,
    };
    let facts = RowFacts {
        wakeups: r.tasks.iter().map(|t| t.wakeups).sum(),
        idle_ns: r.cpus.iter().map(|c| c.idle_ns).sum(),
        cpus: r.cpus.len() as u64,
    };
    Ok((row, facts))
}

/// What a periodic row's check reads from the run's record.
pub struct RowFacts {
    /// Wakeups of all tasks.
    pub wakeups: u64,
    /// Idle time summed over the CPUs.
    pub idle_ns: u64,
    pub cpus: u64,
}

/// The check of a periodic row that must stay under capacity: every thread wakes once per
/// period after its first (its timer is absolute, so a thread that falls behind wakes
/// fewer times or not at all) and the CPUs were idle some of the time.
pub struct PeriodicCheck {
    pub threads: u64,
    pub period: Ns,
}

impl PeriodicCheck {
    /// `Ok` with the figures, or `Err` naming what failed.
    pub fn verdict(&self, facts: &RowFacts, sim: Ns) -> Result<String, String> {
        let periods = sim.0 / self.period.0;
        let want = self.threads * periods.saturating_sub(1);
        let idle = facts.idle_ns as f64 / (sim.0.max(1) * facts.cpus.max(1)) as f64;
        let msg = format!("wakeups {} (threads × (periods − 1) = {want}), idle {:.1} %", facts.wakeups, 100.0 * idle);
        if facts.wakeups == want && facts.idle_ns > 0 {
            Ok(msg)
        } else {
            Err(format!("not periodic: {msg}"))
        }
    }
}

/// What `schedlab bench` runs.
pub struct BenchPlan {
    /// Largest thread count of the scaling sweep (10, 100, … up to it).
    pub max_threads: u64,
    /// Simulated time of each sweep row.
    pub sweep: Ns,
    /// Simulated time of the scale rows (`SCALE_ROWS`).
    pub scale: Ns,
    /// Only the first row of each kind (a smoke test).
    pub tiny: bool,
    /// Only the rows whose label contains this text (`--only`).
    pub only: Option<String>,
}

/// A machine of the sweep: preset name and the CPUs' worth of work its periodic rows ask
/// for (three quarters of its CPUs, or of a CPU per thread when there are fewer threads;
/// with 100 000 threads the kernel's work on top of that
/// overloads both machines, so the sweep's rows report their check without failing).
const SWEEP_MACHINES: [(&str, u64); 2] = [("opteron-32", 24), ("numa-1024", 768)];

/// The period of the periodic workloads ([`periodic_workload`]).
pub const PERIOD: Ns = Ns::from_ms(10);

/// The scale rows' threads (`--max-tasks` may lower it).
const SCALE_THREADS: u64 = 100_000;

/// The scale rows on `numa-1024`, as the CPUs' worth of work [`SCALE_THREADS`] threads ask
/// for (fewer threads ask for proportionally less, each running as long): 393 (38.4 %), a
/// world that stays under capacity (its check must pass, or the row fails), and 768 (75 %),
/// which the kernel's work per wakeup overloads at 100 000 threads (labelled so; its check
/// is reported, not enforced).
const SCALE_ROWS: [(u64, bool); 2] = [(393, true), (768, false)];

/// One simulated row of the plan: label, workload text, scheduler, simulated time, and
/// the periodic check (threads, enforced) of a periodic row.
struct SimRow {
    label: String,
    text: String,
    sched: &'static str,
    dur: Ns,
    check: Option<(u64, bool)>,
}

/// The simulated rows `plan` asks for, in order (before `--only` filters them).
fn sim_rows(plan: &BenchPlan) -> Vec<SimRow> {
    let mut rows = Vec::new();
    let mut add = |label: String, text: String, sched: &'static str, dur: Ns, check: Option<(u64, bool)>| {
        rows.push(SimRow { label, text, sched, dur, check });
    };
    let p200 = if plan.tiny { Ns::from_ms(100) } else { Ns::from_secs(10) };
    add(format!("periodic-200, smp8, eevdf, {p200}"), PERIODIC_200.into(), "eevdf", p200, Some((200, true)));
    if plan.tiny {
        return rows;
    }
    add(format!("periodic-200, smp8, cfs, {p200}"), PERIODIC_200.into(), "cfs", p200, Some((200, true)));
    for (machine, util) in SWEEP_MACHINES {
        let mut n = 10;
        while n <= plan.max_threads {
            // Each thread asks at most three quarters of a CPU (a thread cannot use more than
            // one, so fewer threads than the machine's ask would overload from the start).
            let ask = util.min((3 * n / 4).max(1));
            let label = format!("{n} threads, {machine}, eevdf, {}", plan.sweep);
            add(label, periodic_workload(n, machine, ask), "eevdf", plan.sweep, Some((n, false)));
            n *= 10;
        }
    }
    let n = plan.max_threads.min(SCALE_THREADS);
    for (util, under) in SCALE_ROWS {
        let util = (util * n / SCALE_THREADS).max(1);
        let kind = if under { "under capacity" } else { "overloaded at 100 000 threads" };
        let label =
            format!("{n} threads, numa-1024, {:.1} % asked, {kind}, eevdf, {}", util as f64 / 10.24, plan.scale);
        add(label, periodic_workload(n, "numa-1024", util), "eevdf", plan.scale, Some((n, under)));
    }
    let two = Ns::from_secs(2);
    for sched in ["eevdf", "cfs", "ule"] {
        add(format!("512 mixed, opteron-32, {sched}, {two}"), mixed_workload(512, "opteron-32"), sched, two, None);
    }
    for sched in ["eevdf", "cfs"] {
        let label = format!("500 in 110 groups, opteron-32, {sched}, {two}");
        add(label, grouped_workload(10, 10, 5, "opteron-32"), sched, two, None);
    }
    // 100 parents and 99 900 children: every task is created and exits (until all have).
    let w = fork_exit_workload(100, 999, "opteron-32");
    add("100000 forked, exited, opteron-32, cfs".into(), w, "cfs", Ns::from_secs(10), None);
    rows
}

/// Builds and runs every row, with one progress bar over the rows' simulated time (on a
/// terminal; its estimate assumes the rows left cost what the ones done did per simulated
/// millisecond). A row whose enforced check fails is printed, and `run` returns an error
/// after the last row. SIGINT/SIGTERM end the current row at its next poll; the rows
/// finished are already printed, and `run` returns the interrupted error.
pub fn run(
    plan: &BenchPlan,
    on_row: &mut dyn FnMut(&BenchRow) -> Result<(), CliError>,
) -> Result<Vec<BenchRow>, CliError> {
    let wanted = |label: &str| plan.only.as_deref().is_none_or(|o| label.contains(o));
    let todo: Vec<SimRow> = sim_rows(plan).into_iter().filter(|r| wanted(&r.label)).collect();
    let bar = indicatif::ProgressBar::new(todo.iter().map(|r| r.dur.0 / 1_000_000).sum());
    bar.set_style(
        indicatif::ProgressStyle::with_template("bench [{bar:30}] {pos}/{len} ms simulated · row {msg} (eta {eta})")
            .expect("valid template"),
    );
    let (mut rows, mut failed) = (Vec::new(), Vec::new());
    let mut done_ms = 0;
    for (i, spec) in todo.iter().enumerate() {
        bar.set_message(format!("{} of {}: {}", i + 1, todo.len(), spec.label));
        let mut job = RunSpec::load("bench", &spec.text, None, &[], Some(spec.dur))?;
        job.sched = spec.sched.into();
        let (mut row, facts) = time_job(&spec.label, &job, &mut |now| bar.set_position(done_ms + now.0 / 1_000_000))?;
        if crate::signals::stop_requested() {
            bar.abandon();
            return Err(crate::signals::interrupted(&format!("benchmarking row `{}`", spec.label)));
        }
        done_ms += spec.dur.0 / 1_000_000;
        if let Some((threads, enforced)) = spec.check {
            let verdict = PeriodicCheck { threads, period: PERIOD }.verdict(&facts, row.sim);
            if enforced && verdict.is_err() {
                failed.push(spec.label.clone());
            }
            row.check = Some(verdict);
            row.enforced = enforced;
        }
        bar.suspend(|| on_row(&row))?;
        rows.push(row);
    }
    bar.finish_and_clear();
    if !plan.tiny {
        load_rows(&wanted, &mut rows, on_row)?;
    }
    finish(rows, &failed)
}

/// The two loading rows ([`time_load`]) `wanted` keeps.
fn load_rows(
    wanted: &dyn Fn(&str) -> bool,
    rows: &mut Vec<BenchRow>,
    on_row: &mut dyn FnMut(&BenchRow) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let n = LOAD_TASKS;
    for (kind, text) in [("native", synthetic::native(n)), ("rt-app", synthetic::rtapp(n))] {
        let label = format!("load {n} tasks, {kind} (events = tasks)");
        if !wanted(&label) {
            continue;
        }
        if crate::signals::stop_requested() {
            return Err(crate::signals::interrupted("benchmarking the loading rows"));
        }
        let row = time_load(&label, &text)?;
        on_row(&row)?;
        rows.push(row);
    }
    Ok(())
}

/// The rows, or an error naming the rows whose enforced check failed.
fn finish(rows: Vec<BenchRow>, failed: &[String]) -> Result<Vec<BenchRow>, CliError> {
    if failed.is_empty() {
        Ok(rows)
    } else {
        Err(CliError::input(format!("bench: rows not periodic: {}", failed.join("; "))))
    }
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
    Ok(BenchRow {
        label: label.into(),
        threads,
        events,
        wall_s,
        cpu_s,
        sim: Ns(0),
        heap_bytes,
        steady: None,
        check: None,
        enforced: false,
    })
}

/// The table header and one row.
pub fn header() -> String {
    format!(
        "{:<44} {:>12} {:>9} {:>9} {:>12} {:>9} {:>12} {:>11}  {}",
        "run", "events", "wall s", "CPU s", "events/s", "ns/event", "steady ns/ev", "B/thread", "check"
    )
}
pub fn format_row(r: &BenchRow) -> String {
    let steady = r.steady_ns_per_event().map_or_else(|| "-".to_string(), |ns| format!("{ns:.1}"));
    format!(
        "{:<44} {:>12} {:>9.3} {:>9.3} {:>12.0} {:>9.1} {:>12} {:>11.0}  {}",
        r.label,
        r.events,
        r.wall_s,
        r.cpu_s,
        r.events_per_s(),
        r.cpu_s * 1e9 / r.events.max(1) as f64,
        steady,
        r.heap_bytes as f64 / r.threads.max(1) as f64,
        match &r.check {
            None => String::new(),
            Some(Ok(m)) => format!("ok: {m}"),
            Some(Err(m)) if r.enforced => format!("FAILED: {m}"),
            Some(Err(m)) => format!("over capacity (reported, not enforced): {m}"),
        }
    )
}

/// The committed cost baseline (`bench_baseline.tsv`): per scheduler, periodic-200's events
/// per wakeup over [`GUARD_RUN`] (the deterministic guard the tests hold) and its
/// instructions per event under callgrind (`scripts/bench-instructions.sh`).
pub const BASELINE: &str = include_str!("bench_baseline.tsv");

/// The simulated time of the events-per-wakeup guard.
pub const GUARD_RUN: Ns = Ns::from_ms(500);

/// A regression beyond this fraction of the baseline fails the guard.
pub const GUARD_TOLERANCE: f64 = 0.05;

/// The baseline's rows: scheduler, events per wakeup, instructions per event.
pub fn baseline() -> Vec<(String, f64, f64)> {
    BASELINE
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let num = |i: usize| f.get(i).and_then(|x| x.trim().parse().ok()).expect("a number in bench_baseline.tsv");
            (f[0].to_string(), num(1), num(2))
        })
        .collect()
}

/// periodic-200 under `sched` for [`GUARD_RUN`]: events and wakeups.
pub fn guard_counts(sched: &str) -> Result<(u64, u64), CliError> {
    let mut job = RunSpec::load("bench", PERIODIC_200, None, &[], Some(GUARD_RUN))?;
    job.sched = sched.into();
    let r = job.run(&mut |_| true)?;
    Ok((r.events, r.tasks.iter().map(|t| t.wakeups).sum()))
}

#[cfg(test)]
mod tests {
    /// The regression guard that cannot flake: periodic-200's events per wakeup (a
    /// deterministic count, so no timing) within 5 % of the committed baseline under each
    /// scheduler. An engine that queues more events per wakeup fails here; one that queues
    /// fewer fails too, so that the baseline is lowered deliberately, with the change.
    #[test]
    fn events_per_wakeup_stay_at_the_committed_baseline() {
        let rows = super::baseline();
        assert!(rows.len() >= 5, "bench_baseline.tsv lists the schedulers");
        for (sched, want, _) in rows {
            let (events, wakeups) = super::guard_counts(&sched).expect("runs");
            let got = events as f64 / wakeups.max(1) as f64;
            let drift = got / want - 1.0;
            assert!(
                drift.abs() <= super::GUARD_TOLERANCE,
                "{sched}: {got:.3} events a wakeup against the baseline's {want:.3} ({:+.1} %): \
                 update crates/cli/src/bench_baseline.tsv deliberately if the change is meant",
                100.0 * drift
            );
        }
    }

    /// No sweep row asks a thread for more than three quarters of a CPU's period: a row with
    /// fewer threads than the machine's ask would otherwise overload from its first period.
    #[test]
    fn sweep_rows_ask_each_thread_for_at_most_three_quarters_of_a_cpu() {
        use super::{sim_rows, BenchPlan, PERIOD};
        use schedlab_sim::Ns;
        let plan =
            BenchPlan { max_threads: 100_000, sweep: Ns::from_ms(20), scale: Ns::from_ms(20), tiny: false, only: None };
        let sweep: Vec<_> =
            sim_rows(&plan).into_iter().filter(|r| r.label.contains(" threads, ") && !r.label.contains('%')).collect();
        assert_eq!(sweep.len(), 10, "10 … 100 000 threads on two machines");
        for r in sweep {
            let run: u64 = r.text.split("run = \"").nth(1).and_then(|t| t.split("ns").next()).unwrap().parse().unwrap();
            assert!(4 * run <= 3 * PERIOD.0, "{}: {run} ns a period", r.label);
        }
    }

    /// The periodic check fails a world whose threads missed periods, or that was never idle.
    #[test]
    fn periodic_check_fails_missed_periods_and_no_idle() {
        use super::{PeriodicCheck, RowFacts};
        use schedlab_sim::Ns;
        let check = PeriodicCheck { threads: 10, period: Ns::from_ms(10) };
        let facts = |wakeups, idle_ns| RowFacts { wakeups, idle_ns, cpus: 2 };
        let sim = Ns::from_ms(100); // 10 periods: 9 wakeups each after the first run
        assert!(check.verdict(&facts(90, 5), sim).is_ok());
        assert!(check.verdict(&facts(89, 5), sim).is_err());
        assert!(check.verdict(&facts(90, 0), sim).is_err());
    }

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
