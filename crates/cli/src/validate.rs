//! `schedlab study validate`: the simulator next to this host's kernel
//! (`schedlab_studies::validate`), with the machine from a calibration (or a machine file), the
//! table on stdout and the figures side by side.

use crate::{write_atomic, CliError};
use schedlab_studies::validate::{self, Scale};
use std::path::PathBuf;
use std::sync::Arc;

/// The command's options.
pub struct Opts {
    /// A machine file or preset; else the host is calibrated.
    pub machine: Option<String>,
    /// The simulated scheduler; else the one matching the host kernel.
    pub sched: Option<String>,
    /// Tunables for the simulated scheduler, over the matching ones.
    pub sets: Vec<(String, String)>,
    pub scale: Scale,
    /// Run each case on the host too.
    pub host: bool,
    /// Raise schedlab's session autogroup to nice −20 during host runs.
    pub boost: bool,
    /// Only cases whose id contains one of these.
    pub only: Vec<String>,
    /// Repetitions of each case.
    pub repetitions: usize,
    /// A Markdown file whose table is regenerated (`docs/validation.md`).
    pub doc: Option<PathBuf>,
    pub seed: u64,
    pub plots: Option<PathBuf>,
    pub files: crate::study::FigureFiles,
    pub out: Option<PathBuf>,
}

/// The autogroup nice of schedlab's session during host runs: heavier than any other
/// session, so that other work on the host takes little from the runs.
const BOOST_NICE: i32 = -20;

/// Today's date (UTC), `YYYY-MM-DD`, for the table's header.
fn today() -> String {
    #[allow(clippy::disallowed_methods)] // the date a real measurement was made
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    // Howard Hinnant's civil_from_days.
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The machine: `--machine` (preset or file), else a calibration of this host (the normal
/// one, a few seconds: the quick one's costs are too noisy to validate against), written to
/// `--out DIR/host.toml` when given.
fn machine(o: &Opts, boost: Option<i32>) -> Result<schedlab_machine::Machine, CliError> {
    if let Some(m) = &o.machine {
        return Ok(schedlab_run::load_machine(m)?);
    }
    // Other sessions' work would otherwise take its share from the benchmarks.
    let _boost = boost.map(validate::boost_session).transpose()?;
    let opts = schedlab_calibrate::Options { quick: false, ..Default::default() };
    let c = schedlab_calibrate::calibrate(&opts, &mut |step| note!("calibrate: {step}"))
        .map_err(|e| CliError { message: format!("calibrating the host: {e}"), code: 1 })?;
    let text = c.machine_file();
    if let Some(dir) = &o.out {
        write_atomic(&dir.join("host.toml"), &text)?;
    }
    schedlab_machine::parse_machine("calibrated host", &text)
        .map_err(|e| CliError { message: format!("the calibrated machine file does not load: {e}"), code: 1 })
}

/// The study's header: what ran where, how often, and under which session settings.
fn header(
    o: &Opts,
    kernel_release: &str,
    sched: &str,
    sets: &[(String, String)],
    machine: &schedlab_machine::Machine,
    session: Option<i32>,
    boost: Option<i32>,
) -> String {
    let sets_text: Vec<String> = sets.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(
        "study validate · {} · host kernel {} · simulated {} [{}] on machine {} ({} CPUs, HZ={}) · seed {}\n\
         tasks in one session ({}); host runs: {}\n\
         each case {} times (simulations seeds {}..{}); medians compared, [min–max] shown\n",
        today(),
        kernel_release,
        sched,
        sets_text.join(" "),
        machine.name,
        machine.nr_cpus(),
        machine.hz,
        o.seed,
        session.map_or("no autogroup".into(), |n| format!("its autogroup at nice {n}")),
        match (o.host, boost) {
            (false, _) => "none".to_string(),
            (true, Some(n)) => format!(
                "schedlab's session autogroup raised to nice {n} while they run; timings from a second, untraced run"
            ),
            (true, None) => "schedlab's session autogroup as it is; timings from a second, untraced run".into(),
        },
        o.repetitions,
        o.seed,
        o.seed + o.repetitions as u64 - 1,
    )
}

/// `--only` with `--doc`: `doc`'s table with the rows of the cases run (`which`:
/// experiment and case, the first two columns) replaced by `rows` (a table as
/// `table_markdown` makes it, its header line and rule skipped) where the first of them
/// stood, the other rows kept, and the run's `header` added to the table's header block as
/// where those rows come from.
fn splice_rows(doc: &str, header: &str, rows: &str, which: &[(String, String)]) -> Result<String, String> {
    let (b, e) = (validate::DOC_BEGIN, validate::DOC_END);
    let start = doc.find(b).ok_or_else(|| format!("no line `{b}`"))?;
    let end = doc.find(e).filter(|&i| i > start).ok_or_else(|| format!("no line `{e}` after `{b}`"))?;
    // The case (index into `which`) a table row belongs to.
    let case_of = |line: &str| {
        let cols: Vec<&str> = line.split(" | ").collect();
        (cols.len() > 2)
            .then(|| which.iter().position(|(x, c)| cols[0].strip_prefix("| ") == Some(x.as_str()) && cols[1] == c))
            .flatten()
    };
    let fresh: Vec<&str> = rows.lines().skip(2).collect();
    let ids: Vec<String> = which.iter().map(|(x, c)| format!("{x}/{c}")).collect();
    let (mut out, mut placed, mut in_header) = (Vec::<String>::new(), vec![false; which.len()], false);
    for line in doc[start..end].lines() {
        if line.starts_with("```text") {
            in_header = true;
        } else if line == "```" && in_header {
            // The header block's end: say where the regenerated rows come from.
            in_header = false;
            out.push(format!("rows of {} regenerated with --only:", ids.join(", ")));
            out.extend(header.lines().map(|l| format!("  {l}")));
        }
        match case_of(line) {
            // Each case's new rows where its first old row stood.
            Some(i) if !placed[i] => {
                out.extend(fresh.iter().filter(|r| case_of(r) == Some(i)).map(|r| r.to_string()));
                placed[i] = true;
            }
            Some(_) => {}
            None => out.push(line.to_string()),
        }
    }
    if let Some(i) = placed.iter().position(|p| !p) {
        return Err(format!("its table has no rows of {}: regenerate it whole (without --only)", ids[i]));
    }
    Ok(format!("{}{}\n{}", &doc[..start], out.join("\n"), &doc[end..]))
}

/// Runs the study and writes its outputs.
pub fn run(o: &Opts, keep_going: &(dyn Fn() -> bool + Sync)) -> Result<(), CliError> {
    // The figures in the study's own subdirectory of `--plots`, as every study's.
    let plots = o.plots.as_deref().map(|d| crate::study::study_dir(d, "validate"));
    for dir in o.out.iter().chain(&o.plots).chain(&plots) {
        crate::output::ensure_dir(dir)?;
    }
    let info = validate::host_info();
    let (matched, mut sets) = validate::matching_scheduler(&info);
    let sched = o.sched.clone().unwrap_or(matched);
    if o.sched.is_some() {
        sets.clear();
    }
    sets.extend(o.sets.iter().cloned());
    let autogroup = sets.iter().any(|(k, v)| k == "autogroup" && v == "1");
    let boost = (o.host && o.boost && autogroup).then_some(BOOST_NICE);
    let machine = machine(o, boost)?;
    let cases: Vec<_> = validate::cases(o.scale, machine.nr_cpus())
        .into_iter()
        .filter(|c| o.only.is_empty() || o.only.iter().any(|f| c.id().contains(f.as_str())))
        .collect();
    if cases.is_empty() {
        let ids: Vec<String> = validate::cases(o.scale, machine.nr_cpus()).iter().map(|c| c.id()).collect();
        return Err(CliError::input(format!("--only matches no case; the cases are {}", ids.join(", "))));
    }
    let session = autogroup.then(|| boost.unwrap_or_else(|| validate::autogroup_nice().unwrap_or(0)));
    let mut header = header(o, &info.kernel_release, &sched, &sets, &machine, session, boost);
    // Boot parameters the model does not follow (a vendor's placement patch, idle settings).
    if let Some(p) = info.settings.get("boot_params") {
        header.push_str(&format!("host kernel booted with (scheduling and idle): {p}\n"));
    }
    let opts = validate::Options {
        machine: Arc::new(machine),
        sched,
        sets,
        host: o.host,
        seed: o.seed,
        repetitions: o.repetitions,
        sample: schedlab_sim::Ns::from_ms(2),
        boost,
        session,
    };
    let results = validate::run(&cases, &opts, &mut |m| note!("validate: {m}"), keep_going)?;
    let text = format!("{header}\n{}", validate::table_text(&results));
    for r in &results {
        for (w, n) in &r.host_warnings {
            note!("validate: {}: {n} of {} host runs warned: {w}", r.id, r.host_runs);
        }
    }
    if let Some(doc) = &o.doc {
        let old = std::fs::read_to_string(doc).map_err(|e| CliError::input(format!("--doc {}: {e}", doc.display())))?;
        let table = format!("```text\n{header}```\n\n{}", validate::table_markdown(&results));
        let new = if o.only.is_empty() {
            validate::splice_doc(&old, &table)
        } else {
            let which: Vec<(String, String)> =
                cases.iter().map(|c| (c.experiment.to_string(), c.name.clone())).collect();
            splice_rows(&old, &header, &validate::table_markdown(&results), &which)
        }
        .map_err(|m| CliError::input(format!("--doc {}: {m}", doc.display())))?;
        write_atomic(doc, &new)?;
        note!("regenerated the table of {}", doc.display());
    }
    for r in &results {
        let file = r.id.replace('/', "-");
        let runs: Vec<schedlab_run::RunRecord> = std::iter::once(r.sim.clone()).chain(r.host.clone()).collect();
        if let Some(dir) = &plots {
            let figs = schedlab_report::plots::figures(&runs).map_err(|m| CliError { message: m, code: 1 })?;
            crate::study::write_figures(&dir.join(&file), &figs, &o.files)?;
        }
        if let Some(dir) = &o.out {
            let untraced = r.host_untraced.iter().map(|h| ("host-untraced", h));
            for (who, rec) in [("sim", &r.sim)].into_iter().chain(r.host.iter().map(|h| ("host", h))).chain(untraced) {
                write_atomic(&dir.join(format!("{file}.{who}.json")), &schedlab_report::json(rec))?;
            }
        }
    }
    if let Some(dir) = &plots {
        note!("wrote the figures (simulated | host, side by side) to {}", dir.display());
    }
    match &o.out {
        Some(dir) => {
            write_atomic(&dir.join("validate.txt"), &text)?;
            write_atomic(&dir.join("validate.md"), &format!("{header}\n{}", validate::table_markdown(&results)))?;
            note!("wrote {}", dir.display());
        }
        None => out!("{text}")?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--only` replaces its cases' rows in place and keeps the others and the header,
    /// noting where the new rows come from.
    #[test]
    fn only_splices_the_rows_of_its_cases() {
        let (b, e) = (validate::DOC_BEGIN, validate::DOC_END);
        let doc = format!(
            "intro\n{b}\n\n```text\nold header\n```\n\n| experiment | case | metric |\n|---|---|---|\n\
             | a | x | 1 |\n| p | unpinned | 2 |\n| p | unpinned | 3 |\n| p | pinned | 4 |\n\n{e}\nprose\n"
        );
        let rows = "| experiment | case | metric |\n|---|---|---|\n| p | unpinned | 5 |\n";
        let which = [("p".to_string(), "unpinned".to_string())];
        let new = splice_rows(&doc, "new header\n", rows, &which).unwrap();
        let want = format!(
            "intro\n{b}\n\n```text\nold header\nrows of p/unpinned regenerated with --only:\n  new header\n```\n\n\
             | experiment | case | metric |\n|---|---|---|\n| a | x | 1 |\n| p | unpinned | 5 |\n| p | pinned | 4 |\n\n{e}\nprose\n"
        );
        assert_eq!(new, want);
        // Two cases: each one's rows where it stood.
        let rows2 = "| experiment | case | metric |\n|---|---|---|\n| a | x | 6 |\n| p | pinned | 7 |\n";
        let both = [("a".to_string(), "x".to_string()), ("p".to_string(), "pinned".to_string())];
        let new2 = splice_rows(&doc, "h\n", rows2, &both).unwrap();
        let table: Vec<&str> = new2.lines().filter(|l| l.starts_with("| a") || l.starts_with("| p")).collect();
        assert_eq!(table, ["| a | x | 6 |", "| p | unpinned | 2 |", "| p | unpinned | 3 |", "| p | pinned | 7 |"]);
        let none = [("q".to_string(), "z".to_string())];
        assert!(splice_rows(&doc, "h", rows, &none).is_err());
    }
}
