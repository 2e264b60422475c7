//! `schedlab study edf-simso`: SCHED_DEADLINE next to SimSo's global EDF
//! (`schedlab_studies::edf_simso`); the table on stdout, or `--out DIR/study.txt` with the task
//! sets' workloads beside it.

use crate::{parse_kv, write_atomic, CliError};
use schedlab_studies::edf_simso::{self, Params, SimsoOutcome};
use std::path::Path;

/// Runs the study with `--param`s, `--sched` (the simulated scheduler), `--duration` (the
/// measured time per set), `--seed`, `--out`.
pub fn run(
    params: &[String],
    sched: Option<String>,
    seed: u64,
    duration: Option<&str>,
    out_dir: Option<&Path>,
) -> Result<(), CliError> {
    let mut p = Params::default();
    if let Some(s) = sched {
        p.sched = s;
    }
    if let Some(d) = duration {
        p.duration = schedlab_sim::parse_duration(d).map_err(|m| CliError::input(format!("--duration: {m}")))?;
    }
    for kv in params {
        let (k, v) = parse_kv(kv, "--param")?;
        p.set(&k, &v)?;
    }
    p.check().map_err(|m| CliError::input(format!("study edf-simso: {m}")))?;
    let n = p.utils.len() * p.sets;
    note!("study edf-simso: {n} task sets under {} and SimSo…", p.sched);
    let study = edf_simso::run(&p, seed)?;
    if let SimsoOutcome::Unavailable { why } = &study.simso {
        note!("study edf-simso: SimSo skipped: {why}");
    }
    let text = edf_simso::text(&study);
    match out_dir {
        Some(dir) => {
            for r in &study.results {
                for (i, set) in r.sets.iter().enumerate() {
                    let name = format!("set-u{}-{i}.toml", r.util);
                    write_atomic(&dir.join(name), &edf_simso::workload_text(set, p.margin))?;
                }
            }
            write_atomic(&dir.join("study.txt"), &text)?;
            note!("wrote {}", dir.display());
            Ok(())
        }
        None => out!("{text}"),
    }
}
