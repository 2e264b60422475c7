//! `schedlab fuzz`: random worlds (`schedlab_run::fuzz`) on every core. Each world's seed
//! fixes its workload, machine and configuration, so which worlds run — and whether they
//! fail — does not depend on `--jobs`; only the order of the lines printed does.

use crate::{signals, CliError};
use schedlab_sim::parse_duration;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

pub struct Options {
    pub from: u64,
    pub seeds: u64,
    pub duration: String,
    pub jobs: Option<usize>,
    pub all_configs: bool,
}

/// Worlds between progress lines on stderr.
const PROGRESS_EVERY: u64 = 1000;

/// Runs the worlds, prints each failure (seed, configuration, machine, message and the
/// workload, which replays it) and a summary with the rate; `Err` if any world failed.
pub fn run(o: &Options) -> Result<(), CliError> {
    let end = parse_duration(&o.duration).map_err(|m| CliError::input(format!("--duration: {m}")))?;
    let jobs = o.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let count = seed_count(o.from, o.seeds);
    // The index of the next world, `from + index` its seed: it stops at `count` rather than
    // being incremented past it, so no seed counter wraps past 2^64 − 1 back to 0.
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let failed = Mutex::new(Vec::new());
    // With --all-configs: CPU seconds and worlds per configuration (which ones cost most).
    let cost = Mutex::new(vec![(0.0f64, 0u64); schedlab_run::fuzz::CONFIGS.len()]);
    #[allow(clippy::disallowed_methods)] // the rate printed is host timing, not a result
    let wall = std::time::Instant::now();
    let cpu0 = cpu_seconds();
    let bar = count_bar(count, "worlds");
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                if signals::stop_requested() {
                    break;
                }
                let Ok(i) = next.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |i| (i < count).then_some(i + 1))
                else {
                    break;
                };
                let seed = o.from + i;
                let keep_going = &mut |_| !signals::stop_requested();
                let r = if o.all_configs {
                    every_config(seed, end, keep_going, &cost)
                } else {
                    schedlab_run::fuzz::check_world(seed, end, keep_going)
                };
                match r {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(f) => {
                        let sets: Vec<String> = f.sets.iter().map(|(k, v)| format!("{k}={v}")).collect();
                        bar.suspend(|| {
                            note!(
                                "seed {seed}: {} [{}] on {}: {}\n{}",
                                f.sched,
                                sets.join(" "),
                                f.machine,
                                f.message,
                                f.workload
                            )
                        });
                        failed.lock().expect("no panics while held").push(seed);
                    }
                }
                let n = done.fetch_add(1, Ordering::SeqCst) + 1;
                let f = || failed.lock().expect("no panics while held").len();
                progress(&bar, n, PROGRESS_EVERY, &|| format!("{n} worlds, {} failures so far", f()));
            });
        }
    });
    bar.finish_and_clear();
    let (done, mut failed) = (done.into_inner(), failed.into_inner().expect("no panics while held"));
    failed.sort_unstable();
    let (wall, cpu) = (wall.elapsed().as_secs_f64(), cpu_seconds() - cpu0);
    if signals::stop_requested() {
        note!("interrupted: the worlds in progress are not counted");
    }
    if o.all_configs {
        cost_table(&cost.into_inner().expect("no panics while held"));
    }
    note!(
        "{done} worlds in {wall:.1} s ({jobs} jobs), {cpu:.1} CPU-s: {:.1} worlds per CPU-second",
        done as f64 / cpu.max(1e-9)
    );
    outln!("{done} worlds from seed {}: {} failures", o.from, failed.len())?;
    if !failed.is_empty() {
        let list: Vec<String> = failed.iter().map(u64::to_string).collect();
        return Err(CliError { message: format!("failing seeds: {}", list.join(" ")), code: 1 });
    }
    Ok(())
}

/// A bar of `count` `what` with the time left, drawn on a terminal only.
fn count_bar(count: u64, what: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(count);
    let t = format!("fuzz [{{bar:30}}] {{pos}}/{{len}} {what} ({{elapsed}}, ~{{eta}} left)");
    bar.set_style(indicatif::ProgressStyle::with_template(&t).expect("valid template"));
    bar
}

/// One more item done (`n` so far): the bar moves on a terminal; elsewhere (a log) a line
/// every `every` items says how far it got.
fn progress(bar: &indicatif::ProgressBar, n: u64, every: u64, line: &dyn Fn() -> String) {
    if bar.is_hidden() {
        if n.is_multiple_of(every) {
            note!("{}", line());
        }
    } else {
        bar.inc(1);
    }
}

/// How many of the `seeds` seeds from `from` exist: they end at 2^64 − 1 (a note says so
/// when that cuts the count).
fn seed_count(from: u64, seeds: u64) -> u64 {
    let Some(rest) = seeds.checked_sub(1) else { return 0 };
    let n = rest.min(u64::MAX - from) + 1;
    if n < seeds {
        note!("--seeds {seeds} from {from}: seeds end at 2^64 − 1 = {}, so {n} run", u64::MAX);
    }
    n
}

/// World `seed` under every configuration in turn, adding each one's CPU time to `cost`.
fn every_config(
    seed: u64,
    end: schedlab_sim::Ns,
    keep_going: &mut dyn FnMut(schedlab_sim::Ns) -> bool,
    cost: &Mutex<Vec<(f64, u64)>>,
) -> Result<bool, schedlab_run::fuzz::Failure> {
    for i in 0..schedlab_run::fuzz::CONFIGS.len() {
        let t0 = crate::bench::thread_cpu_s();
        let r = schedlab_run::fuzz::check_world_config(seed, i, end, keep_going);
        let mut c = cost.lock().expect("no panics while held");
        c[i].0 += crate::bench::thread_cpu_s() - t0;
        c[i].1 += 1;
        drop(c);
        if !r? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Per configuration: worlds, CPU seconds, milliseconds a world and its cost against the
/// median configuration's (on stderr: host timing, not a result).
fn cost_table(cost: &[(f64, u64)]) {
    let per = |&(s, n): &(f64, u64)| s * 1e3 / n.max(1) as f64;
    let mut sorted: Vec<f64> = cost.iter().map(per).collect();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2].max(1e-9);
    note!("{:<58} {:>7} {:>8} {:>9} {:>8}", "configuration", "worlds", "CPU s", "ms/world", "× median");
    for (i, c) in cost.iter().enumerate() {
        let label = schedlab_run::fuzz::config_label(i);
        note!("{label:<58} {:>7} {:>8.2} {:>9.1} {:>8.2}", c.1, c.0, per(c), per(c) / median);
    }
}

/// Heap allowed while one input is checked.
pub const PARSER_MEMORY_LIMIT: usize = 1 << 30;

/// Inputs between progress lines of the parser fuzzer on stderr.
const PARSER_PROGRESS_EVERY: u64 = 10_000;

/// [`schedlab_run::fuzz_input::check_input`], and the sweep files it leaves to its caller:
/// parsed by `schedlab_sweep::parse`, whose `workload` resolves to the one example the
/// inputs name, or to a built-in study.
pub fn check_input(input: &schedlab_run::fuzz_input::Input) -> Result<(), String> {
    use schedlab_run::fuzz_input::{Kind, SWEEP_WORKLOAD, SWEEP_WORKLOAD_TEXT};
    if input.kind != Kind::Sweep {
        return schedlab_run::fuzz_input::check_input(input);
    }
    let load = |p: &str| match p {
        SWEEP_WORKLOAD => Ok((p.to_string(), SWEEP_WORKLOAD_TEXT.to_string())),
        _ => {
            schedlab_studies::builtin_workload(p).map(|t| (p.to_string(), t.to_string())).ok_or(format!("no file {p}"))
        }
    };
    schedlab_sweep::parse("fuzz-sweep.toml", &input.text(), &load).map(drop).map_err(|e| e.to_string())
}

/// One input checked: `Err` with the report of a panic.
fn check_one(seed: u64) -> Result<bool, String> {
    let input = schedlab_run::fuzz_input::input(seed);
    match std::panic::catch_unwind(|| check_input(&input)) {
        Ok(r) => Ok(r.is_ok()),
        Err(p) => {
            let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
            let shown = if input.is_binary() {
                format!("({} bytes; `schedlab_run::fuzz_input::input({seed})` makes them again)", input.data.len())
            } else {
                input.text().into_owned()
            };
            Err(format!("seed {seed} ({:?}): panic: {}\n{shown}", input.kind, msg.unwrap_or_default()))
        }
    }
}

/// `schedlab fuzz --parser`: inputs `from..from + seeds` ([`schedlab_run::fuzz_input`]) on
/// `jobs` threads (default: every CPU), under one heap limit for all inputs in progress; a
/// panic is a failure naming the seed and the input; exceeding the limit aborts naming the
/// seed (with several jobs, the one last started). Which inputs fail does not depend on
/// `jobs`.
pub fn parsers(from: u64, seeds: u64, jobs: Option<usize>) -> Result<(), CliError> {
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let count = seed_count(from, seeds);
    crate::memlimit::watch(PARSER_MEMORY_LIMIT);
    std::panic::set_hook(Box::new(|_| {}));
    let (next, done, accepted) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let (failed, peak) = (Mutex::new(Vec::new()), std::sync::atomic::AtomicUsize::new(0));
    #[allow(clippy::disallowed_methods)] // the rate printed is host timing, not a result
    let wall = std::time::Instant::now();
    let bar = count_bar(count, "inputs");
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                while !signals::stop_requested() {
                    let Ok(i) = next.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |i| (i < count).then_some(i + 1))
                    else {
                        break;
                    };
                    let seed = from + i;
                    peak.fetch_max(crate::memlimit::checking(seed), Ordering::Relaxed);
                    match check_one(seed) {
                        Ok(ok) => drop(accepted.fetch_add(u64::from(ok), Ordering::Relaxed)),
                        Err(report) => {
                            bar.suspend(|| note!("{report}"));
                            failed.lock().expect("no panics while held").push(seed);
                        }
                    }
                    let n = done.fetch_add(1, Ordering::SeqCst) + 1;
                    let f = || failed.lock().expect("no panics while held").len();
                    let line =
                        || format!("{n} inputs, {} failures so far ({:.0} s)", f(), wall.elapsed().as_secs_f64());
                    progress(&bar, n, PARSER_PROGRESS_EVERY, &line);
                }
            });
        }
    });
    bar.finish_and_clear();
    let peak = peak.into_inner().max(crate::memlimit::checking(u64::MAX));
    let _ = std::panic::take_hook();
    let (done, accepted) = (done.into_inner(), accepted.into_inner());
    let mut failed = failed.into_inner().expect("no panics while held");
    failed.sort_unstable();
    if signals::stop_requested() {
        note!("interrupted: the inputs in progress are not counted");
    }
    let wall = wall.elapsed().as_secs_f64();
    note!("{done} inputs in {wall:.1} s ({jobs} jobs), {accepted} accepted; peak heap {} KiB", peak / 1024);
    outln!("{done} inputs from seed {from}: {} failures", failed.len())?;
    if !failed.is_empty() {
        let list: Vec<String> = failed.iter().map(u64::to_string).collect();
        return Err(CliError { message: format!("failing seeds: {}", list.join(" ")), code: 1 });
    }
    Ok(())
}

/// CPU time (user + system) this process has used, in seconds.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(ru.ru_utime) + t(ru.ru_stime)
}
