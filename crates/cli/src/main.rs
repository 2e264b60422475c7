//! The `schedlab` binary: the command line (clap definitions, defined once), dispatch to
//! the run library and the studies, and the exit statuses of `docs/cli.md`.

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use schedlab::output::ensure_dir;
use schedlab::{bench, note, out, outln, parse_kv, signals, write_atomic, write_atomic_bytes, CliError};
use schedlab_run::{RunRecord, RunSpec};
use schedlab_sim::{parse_duration, Ns};
use schedlab_studies::Kind as StudyKind;
use std::path::PathBuf;
use std::process::ExitCode;

/// `schedlab --version`: the package version and the commit it was built from (`build.rs`).
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("SCHEDLAB_COMMIT"), ")");

#[derive(Parser)]
#[command(name = "schedlab", version = VERSION, about = "A laboratory for multicore CPU schedulers")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
    Csv,
}

#[derive(clap::Args, Clone)]
struct Common {
    /// Workload file: native TOML or rt-app JSON (told apart by content), or an embedded
    /// example (`example:hackbench`, `example:rt-app/periodic.json`; see `schedlab list`).
    workload: PathBuf,
    /// Machine: a preset (see `schedlab list`) or a machine file. Default: the workload's
    /// `machine`, else smp4.
    #[arg(long)]
    machine: Option<String>,
    /// Set a scheduler tunable, KEY=VALUE (repeatable); kernel.*, futex.* and machine.*
    /// names set the kernel's switches and the machine's values (`schedlab list`). In
    /// `compare`, SCHED:KEY=VALUE targets one scheduler (as named in --sched, or its base
    /// name: eevdf:… for eevdf@6.6).
    #[arg(long = "set")]
    sets: Vec<String>,
    /// Override a workload parameter, NAME=VALUE (repeatable).
    #[arg(long = "param")]
    params: Vec<String>,
    /// Root seed of every random stream.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Simulated time (e.g. 10s); default: the workload's `duration`, else 10s.
    #[arg(long)]
    duration: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Write the outputs into this directory (atomically) instead of stdout: per scheduler
    /// `S.json`, `S.txt` and the per-task table as `S.tasks.csv` and `S.tasks.parquet`.
    #[arg(long)]
    out: Option<PathBuf>,
    /// The machine's cost model: full (caches, NUMA memory, line transfers, idle states,
    /// frequency, address spaces), flat (constant costs per kernel path) or none (nothing
    /// charged). Short for --set machine.cost_model=MODEL.
    #[arg(long)]
    costs: Option<String>,
    /// The machine's noise: on (the machine's own timer lateness, per-op jitter and start
    /// offsets, the default) or none (the noiseless machine: every seed runs alike). Short
    /// for --set machine.noise=none; --set machine.noise.FIELD=VALUE sets one source.
    #[arg(long)]
    noise: Option<String>,
    /// Disable TTWU_QUEUE (remote wakeups always lock the target runqueue).
    #[arg(long)]
    no_ttwu_queue: bool,
    /// Whose runqueue-locking paths the simulated kernel follows: 2.6.32, 3.4 or 5.15
    /// (docs/kernel-versions.md).
    #[arg(long, default_value = "5.15")]
    kernel: String,
    /// The delayed new-task wakeup: wake_up_new_task trylocks the target runqueue and, if it
    /// is busy, leaves the child in a delay queue the target drains at its next schedule().
    #[arg(long)]
    delayed_wakeup: bool,
    /// Narrower load_balance critical section (2.6.32, 3.4): only detaching and attaching
    /// tasks under both runqueue locks.
    #[arg(long)]
    lb_narrow_lock: bool,
    /// Check kernel/policy invariants after every event (slow).
    #[arg(long)]
    check: bool,
    /// Record time series (runnable per CPU, run time and policy internals per task) with
    /// this sampling interval, e.g. 10ms; they go into the JSON output.
    #[arg(long)]
    sample: Option<String>,
    /// Write a Perfetto trace (open it at ui.perfetto.dev). With several schedulers the
    /// scheduler's name is inserted before the extension.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Print an ASCII per-CPU timeline after the summary.
    #[arg(long)]
    timeline: bool,
    /// Timeline width in columns (1–10000).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u16).range(1..=10_000))]
    timeline_width: u16,
    /// Timeline window start and end (durations; default: the whole run).
    #[arg(long)]
    timeline_from: Option<String>,
    #[arg(long)]
    timeline_to: Option<String>,
    /// Write SVG figures into this directory (records time series).
    #[arg(long)]
    plots: Option<PathBuf>,
    /// With --plots (or `schedlab plot`): also write each figure as PNG (at --dpi).
    #[arg(long)]
    png: bool,
    /// With --plots (or `schedlab plot`): also write each figure as a vector PDF.
    #[arg(long)]
    pdf: bool,
    /// The PNG figures' resolution in dots per inch (a 640 x 480 figure is 6.7 x 5 inches).
    #[arg(long, default_value_t = schedlab_report::plots::DEFAULT_DPI,
          value_parser = clap::value_parser!(u32).range(schedlab_report::plots::MIN_DPI as i64..=schedlab_report::plots::MAX_DPI as i64))]
    dpi: u32,
    /// Write a self-contained HTML report to this file (records time series).
    #[arg(long)]
    html: Option<PathBuf>,
    /// With --plots or --html: every figure, also those that carry no information (by
    /// default a figure whose every series is one constant, e.g. all zero, is left out).
    #[arg(long)]
    all_figures: bool,
    /// Host runs (`--sched host`, `study validate`): leave schedlab's session autogroup at
    /// its nice (by default it is raised to −20 while they run, and restored; the record's
    /// notes say which).
    #[arg(long)]
    no_boost: bool,
    /// Host runs: exit with status 1 when a run warns that its measurement is doubtful (a
    /// task's run time by the trace and by procfs more than 2 % apart, a boost refused).
    #[arg(long)]
    strict: bool,
}

/// Options of `study validate` (simulation vs this host).
#[derive(clap::Args, Clone, Default)]
struct ValidateArgs {
    /// The source's set-up where a study is scaled down by default (its output says how and
    /// why: e.g. hackbench's 1000 loops instead of 10); `study validate`: the longer runs of
    /// the student report (up to 10 s each) instead of runs of at most 2 s.
    #[arg(long)]
    full: bool,
    /// `study validate`: runs of a few milliseconds (for tests).
    #[arg(long, conflicts_with = "full")]
    tiny: bool,
    /// `study validate`: simulations only, no host runs.
    #[arg(long)]
    sim_only: bool,
    /// `study validate`: how many times each case runs (each simulation with its own seed,
    /// each host run traced and untraced); the table compares medians and shows the range.
    #[arg(long, default_value_t = schedlab_studies::validate::REPETITIONS as u64, value_parser = clap::value_parser!(u64).range(1..=100))]
    repetitions: u64,
    /// `study validate`: also regenerate the table of this Markdown file (between its
    /// markers; `docs/validation.md`), leaving its prose as it is.
    #[arg(long)]
    doc: Option<PathBuf>,
    /// `study validate`: only the cases whose id (`experiment/case`, e.g.
    /// `nice-pairs/0-vs-19`) contains this text (repeatable).
    #[arg(long)]
    only: Vec<String>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Simulate a workload under one scheduler (`--sched host`: run it for real on this
    /// machine's kernel; see docs/host-runs.md).
    Run {
        #[command(flatten)]
        common: Common,
        /// Scheduler (see `schedlab list`; `NAME@VERSION` picks a version, e.g. eevdf@6.6),
        /// or `host` for a real run on this kernel.
        #[arg(long, default_value = schedlab_run::DEFAULT_SCHEDULER)]
        sched: String,
    },
    /// Simulate a workload under several schedulers and print them side by side.
    Compare {
        #[command(flatten)]
        common: Common,
        /// Comma-separated schedulers (`NAME@VERSION` picks a version). Default: the
        /// workload's `schedulers`, else eevdf,cfs,ule (`plot`: eevdf).
        #[arg(long)]
        sched: Option<String>,
    },
    /// Run a study: a built-in study named exactly as `schedlab list` shows it (a file of that
    /// name is run as `./NAME`), else a workload file under several schedulers, with the
    /// comparison its source makes.
    Study {
        #[command(flatten)]
        common: Common,
        /// Comma-separated schedulers (`NAME@VERSION` picks a version). Default: the
        /// workload's `schedulers`, else eevdf,cfs,ule (`plot`: eevdf). `study validate`:
        /// the simulated scheduler (default: the one matching the host kernel).
        #[arg(long)]
        sched: Option<String>,
        /// Seeds to run (from `--seed` on), every run in parallel: the contract reports mean ±
        /// 95 % interval over them (default 5; host runs: 1).
        #[arg(long)]
        seeds: Option<usize>,
        #[command(flatten)]
        validate: ValidateArgs,
    },
    /// Run every study of one source (or `all`) and write one self-contained HTML report and
    /// its Markdown twin: each claim of the source beside ours with its interval, its
    /// figure, the verdict and why (docs/reproduce/).
    Reproduce {
        /// A source key (`schedlab list` shows them) or `all`.
        #[arg(default_value = "all")]
        source: String,
        /// Output directory (the reports, and the cache of finished studies that makes a
        /// second run resume).
        #[arg(short, long, default_value = "reproduce")]
        output: PathBuf,
        /// Seeds per study (default 5).
        #[arg(long)]
        seeds: Option<usize>,
        /// First seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Ignore cached results.
        #[arg(long)]
        fresh: bool,
        /// Also write each source's Markdown to DIR/SOURCE.md (docs/reproduce).
        #[arg(long)]
        docs: Option<PathBuf>,
        /// A shorter run of every experiment (for tests): at most this simulated time.
        #[arg(long)]
        duration: Option<String>,
        /// Studies scaled down by default at their source's set-up (hours, not minutes).
        #[arg(long)]
        full: bool,
    },
    /// Simulate under several schedulers and write one self-contained HTML report.
    Report {
        #[command(flatten)]
        common: Common,
        /// Comma-separated schedulers (`NAME@VERSION` picks a version). Default: the
        /// workload's `schedulers`, else eevdf,cfs,ule (`plot`: eevdf).
        #[arg(long)]
        sched: Option<String>,
        /// Output file (default: report.html).
        #[arg(short, long, default_value = "report.html")]
        output: PathBuf,
    },
    /// Simulate under several schedulers and write the SVG figures.
    Plot {
        #[command(flatten)]
        common: Common,
        /// Comma-separated schedulers (`NAME@VERSION` picks a version). Default: the
        /// workload's `schedulers`, else eevdf,cfs,ule (`plot`: eevdf).
        #[arg(long)]
        sched: Option<String>,
        /// Output directory (default: plots).
        #[arg(short, long, default_value = "plots")]
        output: PathBuf,
    },
    /// A `perf sched timehist`-style listing of one run: a line per context switch for the
    /// task switched out (time, CPU, task, wait time, scheduling delay, run time).
    Timehist {
        #[command(flatten)]
        common: Common,
        /// Scheduler, as for `run`.
        #[arg(long, default_value = schedlab_run::DEFAULT_SCHEDULER)]
        sched: String,
    },
    /// A `perf sched latency`-style table of one run: per task run time, switches, average
    /// and maximum scheduling delay, and when the maximum began and ended.
    Latency {
        #[command(flatten)]
        common: Common,
        /// Scheduler, as for `run`.
        #[arg(long, default_value = schedlab_run::DEFAULT_SCHEDULER)]
        sched: String,
    },
    /// Turn a scheduling trace (perf.data from `perf sched record`, ftrace/trace-cmd text,
    /// a Perfetto trace such as `--trace` writes) into a workload file (docs/replay.md).
    Import {
        /// The trace file.
        trace: PathBuf,
        /// The workload file to write (default: stdout).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Keep only threads whose name starts with this (repeatable), and their children.
        #[arg(long)]
        only: Vec<String>,
    },
    /// Import a trace (the positional argument) and simulate it under several schedulers,
    /// beside the trace's own measurements ("as it happened"; docs/replay.md).
    Replay {
        #[command(flatten)]
        common: Common,
        /// Comma-separated schedulers (`NAME@VERSION` picks a version). Default: eevdf,cfs,ule.
        #[arg(long)]
        sched: Option<String>,
        /// Keep only threads whose name starts with this (repeatable), and their children.
        #[arg(long)]
        only: Vec<String>,
    },
    /// List schedulers with their tunables, machine presets and example workloads.
    List,
    /// Run random worlds (workload + machine from a seed) under every scheduler with all
    /// invariants checked after every event; a failure prints the seed and the workload.
    Fuzz {
        /// How many seeds (worlds).
        #[arg(long, default_value_t = 1000)]
        seeds: u64,
        /// First seed.
        #[arg(long, default_value_t = 0)]
        from: u64,
        /// Simulated time per world.
        #[arg(long, default_value = "25ms")]
        duration: String,
        /// Worlds run in parallel (default: every CPU). Each world's seed is fixed, so the
        /// worlds run do not depend on this.
        #[arg(long)]
        jobs: Option<usize>,
        /// Run every world under every scheduler configuration, not only its own (seeds
        /// cycle through the configurations).
        #[arg(long)]
        all_configs: bool,
        /// Fuzz the input parsers instead: malformed workload and machine files and
        /// command-line values, each checked for no panic and bounded memory (1 GiB).
        #[arg(long)]
        parser: bool,
    },
    /// Run a sweep file: a grid or list of machines × schedulers × workload parameters ×
    /// tunables × seeds on every local core, written as one tidy table, CSV or Parquet
    /// (docs/sweep.md).
    Sweep {
        /// The sweep file (TOML).
        spec: PathBuf,
        /// Runs in parallel (default: every CPU). The table does not depend on this.
        #[arg(long, conflicts_with = "ray")]
        jobs: Option<usize>,
        /// Write the table to this file instead of stdout (Parquet if its name ends in
        /// `.parquet`, else CSV).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Run on a Ray cluster: its address (HOST:PORT), `auto` (the cluster this machine
        /// belongs to) or `local` (a Ray started for this sweep). The table is the local one.
        #[arg(long, value_name = "ADDRESS")]
        ray: Option<String>,
        /// With --ray: the Python interpreter that has the schedlab package and Ray.
        #[arg(long, default_value = "python3", requires = "ray")]
        python: PathBuf,
    },
    /// Measure this host (topology, HZ, every cost of the cost model) and write a machine
    /// file for it.
    Calibrate {
        /// The machine file to write.
        #[arg(short, long, default_value = "host.toml")]
        output: PathBuf,
        /// Few repetitions (under 2 s) instead of the normal run (under 30 s).
        #[arg(long)]
        quick: bool,
        /// The machine's name (default: the host name).
        #[arg(long)]
        name: Option<String>,
    },
    /// Explain the waits of a task: who ran instead and why (the comparison, with its
    /// numbers), why no other CPU took it, how it was woken; and where every task's waiting
    /// went, by cause (docs/explain.md). Simulator only.
    Explain {
        #[command(flatten)]
        common: Common,
        /// Scheduler (default: the workload's first, else the default).
        #[arg(long)]
        sched: Option<String>,
        /// The task (a name, or a template's name for all its instances).
        #[arg(long)]
        task: Option<String>,
        /// Explain the wait in progress at this time (e.g. 7.5s).
        #[arg(long, conflicts_with_all = ["worst", "between"])]
        at: Option<String>,
        /// Explain the N longest waits (default 3).
        #[arg(long)]
        worst: Option<usize>,
        /// Explain the waits overlapping T1..T2.
        #[arg(long, num_args = 2, value_names = ["T1", "T2"], conflicts_with = "worst")]
        between: Option<Vec<String>>,
        /// Also print the table of wait time by cause per task.
        #[arg(long)]
        summary: bool,
        /// Write the wait-by-cause stacked-bar figure (SVG) here.
        #[arg(long)]
        svg: Option<PathBuf>,
        /// For a multi-experiment study (`schedlab list`): the experiment to explain.
        #[arg(long)]
        experiment: Option<String>,
        /// For a multi-experiment study: the configuration (its column label or scheduler;
        /// default: `--sched`, else the first).
        #[arg(long)]
        config: Option<String>,
    },
    /// Measure simulator speed (events per second, heap bytes per thread) and its scaling
    /// with threads (10 … 100 000) and CPUs (opteron-32, numa-1024); eevdf beside cfs, with
    /// and without a task-group hierarchy.
    Bench {
        /// Largest thread count of the scaling sweep.
        #[arg(long, default_value_t = 100_000)]
        max_tasks: u64,
        /// Simulated time of each sweep row.
        #[arg(long, default_value = "1s")]
        sweep: String,
        /// Simulated time of the two scale rows (`numa-1024`, `--max-tasks` threads, under
        /// capacity and overloaded).
        #[arg(long, default_value = "1s")]
        scale: String,
        /// One tiny row only (checks that the benchmark runs).
        #[arg(long)]
        tiny: bool,
        /// Only the rows whose label contains this text (e.g. `numa-1024`).
        #[arg(long)]
        only: Option<String>,
    },
    /// Print an rt-app JSON file as the equivalent native workload TOML (both run alike).
    Convert {
        /// The rt-app file (or `example:rt-app/NAME.json`).
        file: PathBuf,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions { shell: clap_complete::Shell },
    /// Print the man page (roff; `schedlab man > schedlab.1`).
    Man,
}

#[global_allocator]
static ALLOC: schedlab::memlimit::Watching = schedlab::memlimit::Watching;

/// Exit status (`docs/cli.md`): 0; 1 when a run or an output failed, 2 on bad input
/// (`CliError::code`; clap's usage errors are 2 too); 128 + the signal's number after SIGINT
/// or SIGTERM, 130 and 143 (the partial outputs written); 141 when stdout's reader went away.
fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(e) = signals::install() {
        note!("warning: {e}: Ctrl-C will not write a partial report");
    }
    match real_main(cli) {
        Ok(()) => signals::exit_status().map_or(ExitCode::SUCCESS, ExitCode::from),
        Err(e) => {
            note!("error: {e}");
            ExitCode::from(e.code)
        }
    }
}

fn stop_requested() -> bool {
    signals::stop_requested()
}

/// The files each figure is written as (`--png`, `--pdf`, `--dpi`).
fn figure_files(c: &Common) -> schedlab::study::FigureFiles {
    schedlab::study::FigureFiles { png: c.png, pdf: c.pdf, dpi: c.dpi }
}

/// Warns about flags of `c` that would change nothing.
fn warn_ignored(c: &Common) {
    let given = schedlab::flags::Given {
        sample: c.sample.is_some(),
        text_to_stdout: matches!(c.format, Format::Text) && c.out.is_none(),
        json_somewhere: matches!(c.format, Format::Json) || c.out.is_some(),
        plots: c.plots.is_some(),
        html: c.html.is_some(),
        png: c.png || c.pdf,
        all_figures: c.all_figures,
        timeline: c.timeline,
        timeline_options: c.timeline_width != 100 || c.timeline_from.is_some() || c.timeline_to.is_some(),
    };
    for w in schedlab::flags::ignored(&given) {
        note!("warning: {w}");
    }
}

fn real_main(cli: Cli) -> Result<(), CliError> {
    match &cli.cmd {
        Cmd::Run { common, .. } | Cmd::Compare { common, .. } | Cmd::Report { common, .. } => warn_ignored(common),
        Cmd::Study { common, .. } if !is_study(common, "validate") => warn_ignored(common),
        Cmd::Reproduce { .. } => {}
        Cmd::Plot { common, .. } => warn_ignored(&Common { plots: Some("plots".into()), ..common.clone() }),
        _ => {}
    }
    match cli.cmd {
        Cmd::Run { mut common, sched } => {
            host_default(&mut common, &sched);
            let job = prepare(&common, &sched, &common.sets)?;
            let r = run_with_progress(&job)?;
            emit(&common, std::slice::from_ref(&r), false)?;
            extras(&common, std::slice::from_ref(&r))?;
            strict(&common, &[r])
        }
        Cmd::Compare { mut common, sched } => {
            let sched = schedulers(&common, sched, None)?;
            host_default(&mut common, &sched);
            let out = run_many(&common, &sched)?;
            emit(&common, &out, true)?;
            extras(&common, &out)?;
            strict(&common, &out)
        }
        Cmd::Report { mut common, sched, output } => {
            let sched = schedulers(&common, sched, None)?;
            host_default(&mut common, &sched);
            common.html = Some(output);
            let out = run_many(&common, &sched)?;
            extras(&common, &out)
        }
        Cmd::Plot { mut common, sched, output } => {
            let sched = schedulers(&common, sched, Some(schedlab_run::DEFAULT_SCHEDULER))?;
            host_default(&mut common, &sched);
            common.plots = Some(output);
            let out = run_many(&common, &sched)?;
            extras(&common, &out)
        }
        Cmd::Reproduce { source, output, seeds, seed, fresh, docs, duration, full } => {
            let duration = duration.as_deref().map(parse_duration).transpose();
            let duration = duration.map_err(|m| CliError::input(format!("--duration: {m}")))?;
            let seeds = schedlab::study::seed_count(seeds, false);
            let o = schedlab::reproduce::Options { source, output, seeds, seed, fresh, docs, full, duration };
            schedlab::reproduce::run(&o)
        }
        Cmd::Study { common, sched, seeds, validate } => match builtin_study(&common).map(|s| &s.kind) {
            Some(StudyKind::Validate) => {
                schedlab::validate::run(&validate_opts(&common, sched, &validate)?, &|| !stop_requested())
            }
            Some(StudyKind::EdfSimso) => schedlab::edf_simso::run(
                &common.params,
                sched,
                common.seed,
                common.duration.as_deref(),
                common.out.as_deref(),
            ),
            Some(StudyKind::Suite(make)) => {
                let suite = make();
                // Each experiment names its own schedulers and tunables: refuse what would be ignored.
                if sched.is_some() || common.machine.is_some() || !common.sets.is_empty() {
                    return Err(CliError::input(format!(
                        "study {}: --sched, --machine and --set do not apply (each experiment sets its own)",
                        suite.name
                    )));
                }
                // `--param` overrides a workload parameter in every run (e.g. hackbench's loops).
                let params = common.params.iter().map(|p| parse_kv(p, "--param")).collect::<Result<Vec<_>, _>>()?;
                let suite = if validate.full { suite.at_source_scale() } else { suite };
                let seeds = schedlab::study::seed_count(seeds, false);
                run_suite(&common, &suite.with_params(&params), &params, seeds, validate.full)
            }
            Some(StudyKind::Workload(_)) | None => workload_study(common, sched, seeds),
        },
        Cmd::Timehist { common, sched } => perf_sched(&common, &sched, schedlab::perf_sched::View::Timehist),
        Cmd::Latency { common, sched } => perf_sched(&common, &sched, schedlab::perf_sched::View::Latency),
        Cmd::Explain { common, sched, task, at, worst, between, summary, svg, experiment, config } => {
            run_explain(&common, sched, ExplainArgs { task, at, worst, between, summary, svg, experiment, config })
        }
        Cmd::Sweep { spec, jobs, output, ray, python } => {
            let at = match ray.as_deref() {
                Some(address) => schedlab::sweep::Where::Ray { address, python: &python },
                None => schedlab::sweep::Where::Local { jobs },
            };
            schedlab::sweep::run(&spec, at, output.as_deref())
        }
        Cmd::Import { trace, output, only } => schedlab::replay::import(&trace, output.as_deref(), only),
        Cmd::Replay { common, sched, only } => replay(common, sched, only),
        Cmd::List => list(),
        Cmd::Calibrate { output, quick, name } => schedlab::calibrate::run(&output, quick, name),
        Cmd::Bench { max_tasks, sweep, scale, tiny, only } => run_bench(max_tasks, &sweep, &scale, tiny, only),
        Cmd::Convert { file } => schedlab::convert::run(&file, &read_workload(&file)?),
        Cmd::Completions { shell } => schedlab::completions::completions(&mut Cli::command(), shell),
        Cmd::Man => schedlab::completions::man(Cli::command()),
        Cmd::Fuzz { seeds, from, jobs, parser: true, .. } => schedlab::fuzz::parsers(from, seeds, jobs),
        Cmd::Fuzz { seeds, from, duration, jobs, all_configs, parser: false } => {
            schedlab::fuzz::run(&schedlab::fuzz::Options { from, seeds, duration, jobs, all_configs })
        }
    }
}

/// `study FILE` (or a built-in single-workload study): the workload under several
/// schedulers, sampled for figures, with its source's comparison.
fn workload_study(mut common: Common, sched: Option<String>, seeds: Option<usize>) -> Result<(), CliError> {
    let sched = schedulers(&common, sched, None)?;
    host_default(&mut common, &sched);
    if common.sample.is_none() {
        common.sample = Some("10ms".into());
    }
    let title = common.workload.file_stem().map_or("study".into(), |s| s.to_string_lossy().into_owned());
    let study = builtin_study(&common).filter(|s| s.workload().is_some());
    // Each study's figures in its own subdirectory of `--plots` (a file's under its stem).
    let sub = study.map_or(title.as_str(), |s| s.name);
    if let Some(d) = &common.plots {
        schedlab::output::ensure_dir(d)?;
    }
    common.plots = common.plots.map(|d| schedlab::study::study_dir(&d, sub));
    let host = sched.split(',').any(|s| s.trim() == "host");
    let n = if study.is_some() { schedlab::study::seed_count(seeds, host) } else { 1 };
    let seeds = schedlab_studies::contract::seeds(common.seed, n);
    let mut per_seed = Vec::with_capacity(seeds.len());
    for &seed in &seeds {
        per_seed.push(run_many(&Common { seed, ..common.clone() }, &sched)?);
    }
    let out = per_seed[0].clone();
    let mut text = schedlab_studies::bouron::study_text(&title, &out);
    if let Some(study) = study {
        text.push('\n');
        text += &schedlab_studies::runs::judge_records(study, seeds, per_seed).text();
    }
    extras_with(&common, &out, Some(&text))?;
    schedlab::study::write_paper_figures(common.plots.as_deref(), &figure_files(&common), &title, &out)?;
    match (&common.out, common.format) {
        (Some(dir), _) => {
            for r in &out {
                let s = &r.scheduler.name;
                write_atomic(&dir.join(format!("{s}.json")), &schedlab_report::json(r))?;
            }
            write_atomic(&dir.join("study.txt"), &text)?;
            note!("wrote {}", dir.display());
        }
        (None, Format::Json) => out!("{}", schedlab_report::json_many(&out))?,
        (None, _) => out!("{text}")?,
    }
    Ok(())
}

/// `timehist` / `latency`: one run with its events recorded, then the view.
fn perf_sched(c: &Common, sched: &str, view: schedlab::perf_sched::View) -> Result<(), CliError> {
    let mut job = prepare(c, sched, &c.sets)?;
    job.trace = true;
    schedlab::perf_sched::print(&run_with_progress(&job)?, view)
}

/// `study validate` (and no file of that name).
/// `schedlab replay`: the imported workload run like `compare`, the trace's record first.
fn replay(mut common: Common, sched: Option<String>, only: Vec<String>) -> Result<(), CliError> {
    let rp = schedlab::replay::Replay::import(&common.workload, only)?;
    common.workload = rp.workload().to_path_buf();
    // Loaded before the runs: an interrupted run still ends with the trace's own column.
    let trace_spec = prepare(&common, schedlab_run::DEFAULT_SCHEDULER, &[])?;
    let mut out = run_many(&common, sched.as_deref().unwrap_or("eevdf,cfs,ule"))?;
    out.insert(0, rp.as_happened(&trace_spec));
    match (&common.out, common.format) {
        (None, Format::Text) => rp.report(&out, None)?,
        (None, _) => emit(&common, &out, true)?,
        (Some(dir), _) => {
            emit(&common, &out, true)?;
            rp.report(&out, Some(dir))?;
        }
    }
    extras(&common, &out)
}

/// `study NAME` names built-in study `name` (see [`builtin_study`]).
fn is_study(common: &Common, name: &str) -> bool {
    builtin_study(common).is_some_and(|s| s.name == name)
}

/// The built-in study the workload argument names: exactly a registry name. This one rule
/// decides for every command: a file of that name in the working directory is `./NAME`.
fn builtin_study(common: &Common) -> Option<&'static schedlab_studies::Study> {
    let arg = common.workload.to_str()?;
    schedlab_studies::STUDIES.iter().find(|s| s.name == arg)
}

fn validate_opts(c: &Common, sched: Option<String>, v: &ValidateArgs) -> Result<schedlab::validate::Opts, CliError> {
    use schedlab_studies::validate::Scale;
    Ok(schedlab::validate::Opts {
        machine: c.machine.clone(),
        sched,
        sets: c.sets.iter().map(|s| parse_kv(s, "--set")).collect::<Result<Vec<_>, _>>()?,
        scale: if v.full {
            Scale::Full
        } else if v.tiny {
            Scale::Tiny
        } else {
            Scale::Quick
        },
        host: !v.sim_only,
        boost: !c.no_boost,
        only: v.only.clone(),
        repetitions: v.repetitions as usize,
        doc: v.doc.clone(),
        seed: c.seed,
        plots: c.plots.clone(),
        files: figure_files(c),
        out: c.out.clone(),
    })
}

/// With `--sched host` among the schedulers and no machine named anywhere, the machine is
/// this host (`schedlab_run::machine_for`).
fn host_default(common: &mut Common, sched: &str) {
    if common.machine.is_none() {
        let text = read_workload(&common.workload).unwrap_or_default();
        common.machine = schedlab_run::machine_for(None, &text, sched);
    }
}

/// Runs the workload under each comma-separated scheduler; `SCHED:KEY=VALUE` sets go to
/// one scheduler only.
/// A built-in multi-experiment study named by the workload argument.
fn suite_named(common: &Common) -> Option<schedlab_studies::suite::Suite> {
    builtin_study(common).and_then(schedlab_studies::Study::suite)
}

/// `study NAME` for a multi-experiment study: every experiment's runs in parallel, one table
/// per experiment; `--plots DIR` writes each experiment's figures to `DIR/<experiment>/`,
/// `--html FILE` one page with a section per experiment, `--out DIR` the tables and every
/// run's JSON.
fn run_suite(
    c: &Common,
    suite: &schedlab_studies::suite::Suite,
    params: &[(String, String)],
    seeds: usize,
    full: bool,
) -> Result<(), CliError> {
    let duration = c
        .duration
        .as_deref()
        .map(|d| parse_duration(d).map_err(|m| CliError::input(format!("--duration: {m}"))))
        .transpose()?;
    check_outputs(c)?;
    let sample = (c.plots.is_some() || c.html.is_some()).then_some(schedlab_sim::Ns::from_ms(10));
    let study = builtin_study(c).ok_or_else(|| CliError::input(format!("{}: not a built-in study", suite.name)))?;
    let seeds = schedlab_studies::contract::seeds(c.seed, seeds);
    note!("study {}: {} experiments × {} seeds in parallel…", suite.name, suite.experiments.len(), seeds.len());
    // Explained where the mechanisms quote the decision records, and for an HTML report
    // (it says where each run's time went); a study keeps the worst waits of a run's
    // longest waiters only (`schedlab_studies::runs::EXPLAINED_TASKS`).
    let explain = study.explained || c.html.is_some();
    let opts = schedlab_studies::suite::RunOpts { duration, sample, explain, full };
    let run = schedlab::study::run_plan(schedlab_studies::runs::plan(study, &seeds, &opts, params)?)?;
    let results = run.first();
    let text = schedlab_studies::suite::suite_text_with(suite, results, Some(&run.text()));
    let outputs = schedlab::study::Outputs {
        plots: c.plots.as_deref(),
        html: c.html.as_deref(),
        files: figure_files(c),
        all_figures: c.all_figures,
    };
    schedlab::study::write(suite, results, &outputs)?;
    if let Some(dir) = &c.out {
        for r in results {
            for rec in &r.records {
                let label = format!("{}-{}", r.name, rec.scheduler.name);
                write_atomic(&dir.join(format!("{label}.json")), &schedlab_report::json(rec))?;
            }
        }
    }
    match &c.out {
        Some(dir) => write_atomic(&dir.join("study.txt"), &text)?,
        None => out!("{text}")?,
    }
    Ok(())
}

/// `--sched`, else `default`, else the workload's `schedulers`, else eevdf,cfs,ule.
fn schedulers(common: &Common, given: Option<String>, default: Option<&str>) -> Result<String, CliError> {
    match (given, default) {
        (Some(s), _) => Ok(s),
        (None, Some(d)) => Ok(d.to_string()),
        (None, None) => Ok(schedlab_run::default_schedulers(&read_workload(&common.workload)?)),
    }
}

fn run_many(common: &Common, sched: &str) -> Result<Vec<RunRecord>, CliError> {
    let scheds: Vec<&str> = sched.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    if scheds.is_empty() {
        return Err(CliError::input(format!("--sched `{sched}` names no scheduler (see `schedlab list`)")));
    }
    let targeted = targeted_sets(&common.sets, &scheds)?;
    let mut jobs = Vec::new();
    for s in scheds {
        let sets: Vec<String> =
            targeted.iter().filter(|(t, _)| t.is_none_or(|t| aims_at(t, s))).map(|(_, kv)| kv.clone()).collect();
        jobs.push(prepare(common, s, &sets)?);
    }
    schedlab::many::run_jobs(&jobs)
}

/// Splits each `--set` into its target scheduler (`SCHED:KEY=VALUE`) and `KEY=VALUE`. The
/// target ends at the key's last colon, since a scheduler name may hold one
/// (`ext:simple:fifo=1` sets `fifo` of `ext:simple`). A target that is none of `scheds` is
/// an error: it would be silently ignored.
fn targeted_sets<'a>(sets: &'a [String], scheds: &[&str]) -> Result<Vec<(Option<&'a str>, String)>, CliError> {
    sets.iter()
        .map(|kv| match split_target(kv) {
            Some((t, rest)) => {
                if scheds.iter().any(|s| aims_at(t, s)) {
                    Ok((Some(t), rest.to_string()))
                } else {
                    Err(CliError::input(format!(
                        "--set `{kv}`: `{t}` is not among the schedulers run ({})",
                        scheds.join(", ")
                    )))
                }
            }
            _ => Ok((None, kv.clone())),
        })
        .collect()
}

/// `SCHED:KEY=VALUE` → `(SCHED, KEY=VALUE)`, splitting the part before `=` at its last colon.
fn split_target(kv: &str) -> Option<(&str, String)> {
    let key_end = kv.find('=').unwrap_or(kv.len());
    let (t, key) = kv[..key_end].rsplit_once(':')?;
    Some((t, format!("{key}{}", &kv[key_end..])))
}

/// Whether target `t` of a `--set` names scheduler `s`: exactly, or by its base name
/// (`eevdf:…` aims at `eevdf@6.6` too).
fn aims_at(t: &str, s: &str) -> bool {
    t == s || s.split_once('@').is_some_and(|(base, _)| base == t)
}

/// A workload's text: an embedded example's (`example:NAME`), a built-in single-workload
/// study's (named exactly; also `NAME.toml` when no such file exists), or a file's. Each
/// path is read once and its text kept: the argument may be a pipe (`/dev/stdin`, `<(…)`),
/// which a second read would find drained.
fn read_workload(path: &std::path::Path) -> Result<String, CliError> {
    static READ: std::sync::Mutex<Vec<(PathBuf, String)>> = std::sync::Mutex::new(Vec::new());
    let known = |r: &[(PathBuf, String)]| r.iter().find(|(p, _)| p == path).map(|(_, t)| t.clone());
    if let Some(t) = known(&READ.lock().expect("no panics while held")) {
        return Ok(t);
    }
    let text = read_workload_file(path)?;
    READ.lock().expect("no panics while held").push((path.to_path_buf(), text.clone()));
    Ok(text)
}

fn read_workload_file(path: &std::path::Path) -> Result<String, CliError> {
    let arg = path.to_string_lossy();
    if let Some(t) = schedlab::examples::lookup(&arg) {
        return Ok(t.to_string());
    }
    if let Some(t) = schedlab_studies::STUDIES.iter().find(|s| s.name == arg).and_then(|s| s.workload()) {
        return Ok(t.to_string());
    }
    match schedlab_run::read_input(path) {
        Ok(t) => Ok(t),
        Err(e @ schedlab_run::RunError::Io { .. }) => match schedlab_studies::builtin_workload(&arg) {
            Some(t) => Ok(t.to_string()),
            None => Err(e.into()),
        },
        Err(e) => Err(e.into()),
    }
}

/// Before anything runs: output directories exist (created if their parent does), and
/// output files' directories exist — a long run never ends in a write error.
fn check_outputs(c: &Common) -> Result<(), CliError> {
    for dir in [&c.out, &c.plots].into_iter().flatten() {
        ensure_dir(dir)?;
    }
    for file in [&c.trace, &c.html].into_iter().flatten() {
        schedlab::output::check_parent(file)?;
    }
    Ok(())
}

/// `--param KEY=VALUE`s, parsed.
type Params = Vec<(String, String)>;

/// The `--param`s and the `--duration` of the common options, parsed.
fn params_and_duration(c: &Common) -> Result<(Params, Option<Ns>), CliError> {
    let params = c.params.iter().map(|p| parse_kv(p, "--param")).collect::<Result<Vec<_>, _>>()?;
    let duration = c
        .duration
        .as_deref()
        .map(|d| parse_duration(d).map_err(|m| CliError::input(format!("--duration: {m}"))))
        .transpose()?;
    Ok((params, duration))
}

/// `--strict`: a host run whose record warns (its measurement is doubtful) fails the
/// command, after every output was written.
fn strict(c: &Common, runs: &[RunRecord]) -> Result<(), CliError> {
    let doubtful = runs.iter().filter(|r| r.host.real.is_some() && !r.warnings.is_empty()).count();
    if c.strict && doubtful > 0 {
        return Err(CliError {
            message: format!("--strict: {doubtful} host run(s) warned that their measurement is doubtful (see above)"),
            code: 1,
        });
    }
    Ok(())
}

fn prepare(c: &Common, sched: &str, sets: &[String]) -> Result<RunSpec, CliError> {
    check_outputs(c)?;
    let path = c.workload.display().to_string();
    let text = read_workload(&c.workload)?;
    let (params, duration) = params_and_duration(c)?;
    let mut job = RunSpec::load_until(&path, &text, c.machine.as_deref(), &params, duration, &mut stop_requested)?;
    schedlab::convert::report_notes(&job.workload);
    job.sched = sched.to_string();
    job.seed = c.seed;
    job.host_boost = !c.no_boost;
    // The kernel flags are shorthands for their switches; `--set` may name any switch too.
    let flag = |m: schedlab_run::RunError, f: &str| CliError::input(format!("{f}: {m}"));
    job.set("kernel.version", &c.kernel).map_err(|m| flag(m, "--kernel"))?;
    job.kernel.ttwu_queue = !c.no_ttwu_queue;
    if let Some(m) = &c.costs {
        job.set("machine.cost_model", m).map_err(|m| flag(m, "--costs"))?;
    }
    if let Some(n) = &c.noise {
        job.set("machine.noise", n).map_err(|m| flag(m, "--noise"))?;
    }
    job.kernel.delayed_wakeup = c.delayed_wakeup;
    job.kernel.lb_narrow_lock = c.lb_narrow_lock;
    for s in sets {
        let (k, v) = parse_kv(s, "--set")?;
        job.set(&k, &v).map_err(|m| flag(m, "--set"))?;
    }
    job.check = c.check;
    job.sample = c
        .sample
        .as_deref()
        .map(|d| parse_duration(d).map_err(|m| CliError::input(format!("--sample: {m}"))))
        .transpose()?;
    if job.sample.is_some_and(|s| s.0 == 0) {
        return Err(CliError::input("--sample: the interval must be positive"));
    }
    if job.sample.is_none() && (c.plots.is_some() || c.html.is_some()) {
        // About 2000 samples per run, at least 1 ms apart.
        job.sample = Some(Ns((job.end.0 / 2000).max(1_000_000)));
    }
    job.trace = c.trace.is_some() || c.timeline;
    // Where the time went, for the report and the trace's wait slices (simulator only).
    job.explain = (c.html.is_some() || c.trace.is_some()) && job.backend() == schedlab_run::Backend::Sim;
    Ok(job)
}

/// The outputs beyond the summary: Perfetto traces, the timeline, figures, the HTML report.
fn extras(c: &Common, rs: &[RunRecord]) -> Result<(), CliError> {
    extras_with(c, rs, None)
}

/// [`extras`], with a study's comparison for the HTML report.
fn extras_with(c: &Common, rs: &[RunRecord], comparison: Option<&str>) -> Result<(), CliError> {
    let dur = |d: &Option<String>, what: &str| {
        d.as_deref().map(|d| parse_duration(d).map_err(|m| CliError::input(format!("{what}: {m}")))).transpose()
    };
    if let Some(path) = &c.trace {
        for r in rs {
            let Some(bytes) = schedlab_report::perfetto::encode(r) else {
                note!("no trace for {} (its events were not recorded): no Perfetto file", sched_name(r));
                continue;
            };
            let p = if rs.len() > 1 { per_scheduler(path, r) } else { path.clone() };
            write_atomic_bytes(&p, &bytes)?;
            note!("wrote {} (open it at ui.perfetto.dev)", p.display());
        }
    }
    if c.timeline {
        let from = dur(&c.timeline_from, "--timeline-from")?.map_or(0, |d| d.0);
        for r in rs {
            let Some(t) = r.trace.as_ref() else {
                note!("no trace for {} (its events were not recorded): no timeline", sched_name(r));
                continue;
            };
            // The window ends with the run at the latest (bucket arithmetic stays in range).
            let to = dur(&c.timeline_to, "--timeline-to")?.map_or(t.end_ns, |d| d.0.min(t.end_ns));
            if to <= from {
                return Err(CliError::input("--timeline-to must be after --timeline-from, within the run"));
            }
            outln!("\n[{}]", r.scheduler.name)?;
            out!("{}", schedlab_report::timeline::timeline(t, from, to, usize::from(c.timeline_width)))?;
        }
    }
    let need_figs = c.plots.is_some() || c.html.is_some();
    let figs = if need_figs && c.all_figures {
        schedlab_report::plots::figures_all(rs).map_err(|m| CliError { message: m, code: 1 })?
    } else if need_figs {
        schedlab_report::plots::figures(rs).map_err(|m| CliError { message: m, code: 1 })?
    } else {
        Vec::new()
    };
    for f in figs.iter().filter(|f| !f.drawn()) {
        note!(
            "warning: {}: no series has two points (the run ended within one sampling interval; try --sample)",
            f.name
        );
    }
    if let Some(dir) = &c.plots {
        schedlab::study::write_figures(dir, &figs, &figure_files(c))?;
        note!("wrote {} figures to {}", figs.len(), dir.display());
    }
    if let Some(path) = &c.html {
        let title = c.workload.file_stem().map_or("run".into(), |s| s.to_string_lossy().into_owned());
        // A study's report starts with its finding: the paper, the conclusion, the table.
        let conclusion = comparison.and_then(|_| schedlab_studies::bouron::study_conclusion(&title, rs));
        let study = comparison.map(|table| schedlab_report::html::StudySection {
            paper: schedlab_studies::source_of(&title).map(|s| s.citation),
            conclusion: conclusion.as_deref(),
            table,
            figures: &[],
        });
        let html = match &study {
            Some(s) => schedlab_report::html::report_study(&title, rs, &figs, s),
            None => schedlab_report::html::report(&title, rs, &figs),
        }
        .map_err(|m| CliError { message: m, code: 1 })?;
        write_atomic(path, &html)?;
        note!("wrote {}", path.display());
    }
    Ok(())
}

fn sched_name(r: &RunRecord) -> &str {
    &r.scheduler.name
}

/// `out.pftrace` → `out.cfs.pftrace`.
fn per_scheduler(path: &std::path::Path, r: &RunRecord) -> PathBuf {
    let s = &r.scheduler.name;
    let stem = path.file_stem().map_or("trace".into(), |x| x.to_string_lossy().into_owned());
    let ext = path.extension().map_or("pftrace".into(), |x| x.to_string_lossy().into_owned());
    path.with_file_name(format!("{stem}.{s}.{ext}"))
}

fn run_with_progress(job: &RunSpec) -> Result<RunRecord, CliError> {
    let bar = schedlab::progress::Bar::new(job, indicatif::ProgressBar::new(0));
    let r = job.run(&mut |now: Ns| {
        bar.tick(now);
        !stop_requested()
    });
    bar.finish();
    if stop_requested() {
        note!("interrupted: writing what was measured so far");
    }
    let r = r?;
    schedlab::many::notes(job, &r);
    Ok(r)
}

fn emit(c: &Common, rs: &[RunRecord], compare: bool) -> Result<(), CliError> {
    if let Some(dir) = &c.out {
        for r in rs {
            let s = &r.scheduler.name;
            write_atomic(&dir.join(format!("{s}.json")), &schedlab_report::json(r))?;
            write_atomic(&dir.join(format!("{s}.tasks.csv")), &schedlab_report::csv(r))?;
            if let Some(file) = schedlab::tables::tasks(std::slice::from_ref(r)) {
                write_atomic_bytes(&dir.join(format!("{s}.tasks.parquet")), &file?)?;
            }
            write_atomic(&dir.join(format!("{s}.txt")), &schedlab_report::text(r))?;
        }
        if compare {
            write_atomic(&dir.join("compare.txt"), &schedlab_report::compare_text(rs))?;
        }
        note!("wrote {}", dir.display());
        return Ok(());
    }
    let out = match (c.format, compare) {
        (Format::Json, false) => schedlab_report::json(&rs[0]),
        (Format::Json, true) => schedlab_report::json_many(rs),
        (Format::Csv, _) => schedlab_report::csv_many(rs),
        (Format::Text, false) => schedlab_report::text(&rs[0]),
        (Format::Text, true) => schedlab_report::compare_text(rs),
    };
    out!("{out}")?;
    Ok(())
}

fn list_or_none(v: &[&str]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

fn list() -> Result<(), CliError> {
    outln!("Schedulers (--sched NAME, tunables via --set KEY=VALUE):")?;
    let m = schedlab_machine::preset("smp8").expect("preset");
    for e in schedlab_policies::REGISTRY {
        outln!("  {:<6} {}", e.name, e.doc)?;
        let Ok(p) = (e.make)(&m, &[]) else { continue };
        let names: Vec<&str> = p.tunables().iter().map(|t| t.name).collect();
        for t in p.tunables() {
            let values = if t.read_only { "read only".into() } else { t.kind.values() };
            outln!("           {:<30} {:>10}  {} [{values}]", t.name, t.value, t.doc)?;
        }
        if let Some((default, others)) = e.versions.split_last() {
            outln!(
                "         versions: {} (default {default}; NAME@VERSION or --set version=…)",
                e.versions.join(", ")
            )?;
            for v in others {
                let Ok(pv) = (e.make)(&m, &[("version".into(), v.to_string())]) else { continue };
                let these: Vec<&str> = pv.tunables().iter().map(|t| t.name).collect();
                let lacks: Vec<&str> = names.iter().copied().filter(|n| !these.contains(n)).collect();
                let adds: Vec<&str> = these.iter().copied().filter(|n| !names.contains(n)).collect();
                if !lacks.is_empty() || !adds.is_empty() {
                    outln!("           {v}: lacks {}; adds {}", list_or_none(&lacks), list_or_none(&adds))?;
                }
            }
        }
    }
    outln!("  (defaults shown for smp8; CPU-count-scaled values follow the machine)")?;
    outln!("  host   not simulated: runs the workload for real on this kernel (docs/host-runs.md)")?;
    outln!("\nKernel switches (--set NAME=VALUE; sweep files and Python take the same names):")?;
    for t in schedlab_run::SWITCHES.list(&schedlab_run::KernelConfig::default()) {
        outln!("  {:<28} {:>10}  {}  [{}]", t.name, t.value, t.doc, t.kind.values())?;
    }
    outln!("\nMachine presets (--machine NAME or a machine file):")?;
    for (n, d) in schedlab_machine::PRESETS {
        outln!("  {n:<11} {d}")?;
    }
    outln!("\nStudies (schedlab study NAME):")?;
    for s in schedlab_studies::STUDIES {
        outln!("  {:<32} {}", s.name, s.description())?;
    }
    outln!("\nExample workloads (built in; examples/workloads/ and examples/rt-app/):")?;
    for n in schedlab::examples::names() {
        outln!("  {n}")?;
    }
    Ok(())
}

fn run_bench(max_tasks: u64, sweep: &str, scale: &str, tiny: bool, only: Option<String>) -> Result<(), CliError> {
    let sweep = parse_duration(sweep).map_err(|e| CliError::input(format!("--sweep: {e}")))?;
    let scale = parse_duration(scale).map_err(|e| CliError::input(format!("--scale: {e}")))?;
    let plan = bench::BenchPlan { max_threads: max_tasks, sweep, scale, tiny, only };
    outln!("{}", bench::header())?;
    bench::run(&plan, &mut |row| outln!("{}", bench::format_row(row)))?;
    Ok(())
}

struct ExplainArgs {
    task: Option<String>,
    at: Option<String>,
    worst: Option<usize>,
    between: Option<Vec<String>>,
    summary: bool,
    svg: Option<PathBuf>,
    experiment: Option<String>,
    config: Option<String>,
}

/// The run of a multi-experiment study `explain` takes, with the common options that apply
/// to one run (`--param`, `--set`, `--seed`, `--duration`, `--check`).
fn explain_study_job(
    c: &Common,
    suite: schedlab_studies::suite::Suite,
    config: Option<String>,
    experiment: Option<&str>,
) -> Result<RunSpec, CliError> {
    let (params, duration) = params_and_duration(c)?;
    let suite = suite.with_params(&params);
    let mut job = schedlab::explain::study_spec(&suite, experiment, config.as_deref(), c.seed, duration)?;
    for s in &c.sets {
        let (k, v) = parse_kv(s, "--set")?;
        job.set(&k, &v).map_err(|m| CliError::input(format!("--set: {m}")))?;
    }
    job.check = c.check;
    Ok(job)
}

fn run_explain(common: &Common, sched: Option<String>, a: ExplainArgs) -> Result<(), CliError> {
    use schedlab::explain::{Ask, Select};
    let dur = |flag: &str, v: &str| parse_duration(v).map_err(|m| CliError::input(format!("{flag}: {m}")));
    let select = match (&a.at, &a.between, a.worst) {
        (Some(t), _, _) => Select::At(dur("--at", t)?),
        (_, Some(b), _) => Select::Between(dur("--between", &b[0])?, dur("--between", &b[1])?),
        (_, _, n) => Select::Worst(n.unwrap_or(3)),
    };
    let json = match common.format {
        Format::Text => false,
        Format::Json => true,
        Format::Csv => return Err(CliError::input("explain: --format is text or json")),
    };
    let job = match suite_named(common) {
        Some(suite) => explain_study_job(common, suite, a.config.or(sched), a.experiment.as_deref())?,
        None if a.experiment.is_some() || a.config.is_some() => {
            let w = common.workload.display();
            return Err(CliError::input(format!("--experiment/--config: {w} is not a multi-experiment study")));
        }
        None => {
            let sched = schedulers(common, sched, None)?;
            let sched = sched.split(',').next().unwrap_or(schedlab_run::DEFAULT_SCHEDULER).trim().to_string();
            prepare(common, &sched, &common.sets)?
        }
    };
    let ask = Ask { task: a.task, select, summary: a.summary, json, svg: a.svg };
    let (_, ex) = schedlab::explain::run(&job, &ask, &mut |_| !stop_requested())?;
    if let Some(path) = &ask.svg {
        let tasks = schedlab::explain::summary_tasks(&ex, &ask);
        write_atomic(path, &schedlab_report::explain::waits_svg(&tasks))?;
    }
    out!("{}", schedlab::explain::render(&ex, &ask)?)
}
