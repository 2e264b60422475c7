//! The comparison the ULE-vs-CFS paper makes, from runs of one workload under several
//! schedulers: completion times, CPU shares while the task groups overlap, and how run
//! time is spread over the threads of each group.

use schedlab_metrics::{RunRecord, TaskRecord};
use std::fmt::Write;

/// A task group: tasks of one template (`worker.0`, `worker.1`, … → `worker`).
pub fn group_of(name: &str) -> &str {
    match name.rsplit_once('.') {
        Some((g, n)) if n.chars().all(|c| c.is_ascii_digit()) => g,
        _ => name,
    }
}

/// Groups in order of first appearance, with their tasks.
pub fn groups(r: &RunRecord) -> Vec<(String, Vec<&TaskRecord>)> {
    let mut out: Vec<(String, Vec<&TaskRecord>)> = Vec::new();
    for t in &r.tasks {
        let g = group_of(&t.name);
        match out.iter_mut().find(|(n, _)| n == g) {
            Some((_, v)) => v.push(t),
            None => out.push((g.to_string(), vec![t])),
        }
    }
    out
}

/// When a group completed: the last exit, or `None` if some task never exited.
pub fn completion(tasks: &[&TaskRecord]) -> Option<u64> {
    tasks.iter().map(|t| t.exit_ns).collect::<Option<Vec<u64>>>().and_then(|v| v.into_iter().max())
}

/// The overlap window: from the latest group start to the earliest group completion (or
/// the end of the run).
pub fn overlap(r: &RunRecord) -> (u64, u64) {
    let gs = groups(r);
    let start = gs.iter().map(|(_, ts)| ts.iter().map(|t| t.start_ns).min().unwrap_or(0)).max().unwrap_or(0);
    let end = gs.iter().filter_map(|(_, ts)| completion(ts)).min().unwrap_or(r.sim_ns).max(start);
    (start, end)
}

/// Run time of task `tid` within `[a, b]`, from the sampled series (exact at sample
/// points; `None` without a series).
pub fn runtime_between(r: &RunRecord, tid: usize, a: u64, b: u64) -> Option<u64> {
    let s = r.series.as_ref()?;
    let at = |t: u64| s.index_at(t).map_or(0, |i| s.runtime_at(tid, i));
    // At the end of the run the exact total is known.
    let end = if b >= r.sim_ns { r.tasks[tid].runtime_ns } else { at(b) };
    Some(end.saturating_sub(at(a)))
}

fn ms(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e6)
}

/// The study report: one column per scheduler.
pub fn study_text(title: &str, rs: &[RunRecord]) -> String {
    study_text_with(title, None, rs)
}

/// The study's one-line finding from its runs: with several task groups, the first group's
/// CPU share while they overlap under each scheduler (the ULE-vs-CFS paper's fibo); with one,
/// how its run time spreads over its threads. `None` without runs.
pub fn study_conclusion(rs: &[RunRecord]) -> Option<String> {
    let r0 = rs.first()?;
    let gs = groups(r0);
    if gs.len() >= 2 {
        let g = &gs[0].0;
        let shares: Vec<String> = rs.iter().map(|r| format!("{} {}", r.scheduler.name, overlap_share(r, g))).collect();
        return Some(format!("{g}'s CPU share while the task groups overlap: {}", shares.join(", ")));
    }
    let (g, _) = gs.into_iter().next()?;
    let spread: Vec<String> = rs
        .iter()
        .map(|r| {
            let ts = group_tasks(r, &g);
            let never = ts.iter().filter(|t| t.runtime_ns == 0).count();
            let mut v: Vec<u64> = ts.iter().map(|t| t.runtime_ns).collect();
            v.sort_unstable();
            let (lo, hi) = (v.first().copied().unwrap_or(0), v.last().copied().unwrap_or(0));
            format!("{} {}–{} ms, {never} never ran", r.scheduler.name, ms(lo), ms(hi))
        })
        .collect();
    Some(format!("run time per {g} thread: {}", spread.join("; ")))
}

/// Group `g`'s share of the CPUs within the overlap window (`-` without a series).
fn overlap_share(r: &RunRecord, g: &str) -> String {
    let (a, b) = overlap(r);
    let ts = group_tasks(r, g);
    let run: Option<u64> = ts.iter().map(|t| runtime_between(r, t.tid, a, b)).sum();
    match run {
        Some(x) if b > a => format!("{:.2}%", 100.0 * x as f64 / ((b - a) as f64 * cpus(r))),
        _ => "-".into(),
    }
}

/// [`study_text`] with the paper the study reproduces: the header, then the finding (paper,
/// conclusion), then the comparison.
pub fn study_text_with(title: &str, paper: Option<&str>, rs: &[RunRecord]) -> String {
    let mut s = String::new();
    let Some(r0) = rs.first() else { return s };
    let _ = writeln!(
        s,
        "study {title} · machine {} ({} CPUs) · seed {} · {} ms simulated",
        r0.machine.name,
        r0.machine.cpus,
        r0.seed,
        ms(r0.sim_ns)
    );
    for r in rs {
        let sw = crate::header::switches(r);
        if !sw.is_empty() {
            let _ = writeln!(s, "{}: {sw}", r.scheduler.name);
        }
    }
    if let Some(p) = paper {
        let _ = writeln!(s, "paper: {p}");
    }
    if let Some(c) = study_conclusion(rs) {
        let _ = writeln!(s, "finding: {c}");
    }
    let names: Vec<String> = rs.iter().map(|r| r.scheduler.name.clone()).collect();
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    let row = |rows: &mut Vec<(String, Vec<String>)>, label: String, f: &dyn Fn(&RunRecord) -> String| {
        rows.push((label, rs.iter().map(f).collect()));
    };
    row(&mut rows, "overlap window ms".into(), &|r| {
        let (a, b) = overlap(r);
        format!("{}–{}", ms(a), ms(b))
    });
    for (g, _) in groups(r0) {
        row(&mut rows, format!("{g}: done at ms"), &|r| {
            groups(r).into_iter().find(|(n, _)| *n == g).and_then(|(_, ts)| completion(&ts)).map_or("-".into(), ms)
        });
    }
    for (g, _) in groups(r0) {
        row(&mut rows, format!("{g}: CPU share in overlap"), &|r| overlap_share(r, &g));
    }
    for (g, ts) in groups(r0) {
        if ts.len() < 2 {
            continue;
        }
        row(&mut rows, format!("{g}: threads / never ran"), &|r| {
            let ts = group_tasks(r, &g);
            format!("{} / {}", ts.len(), ts.iter().filter(|t| t.runtime_ns == 0).count())
        });
        row(&mut rows, format!("{g}: run ms min/median/max"), &|r| {
            let mut v: Vec<u64> = group_tasks(r, &g).iter().map(|t| t.runtime_ns).collect();
            v.sort_unstable();
            if v.is_empty() {
                return "-".into();
            }
            format!("{}/{}/{}", ms(v[0]), ms(v[v.len() / 2]), ms(v[v.len() - 1]))
        });
        row(&mut rows, format!("{g}: run ms first 3 forked"), &|r| {
            let v = group_tasks(r, &g);
            v.iter().take(3).map(|t| ms(t.runtime_ns)).collect::<Vec<_>>().join(" ")
        });
        row(&mut rows, format!("{g}: run ms last 3 forked"), &|r| {
            let v = group_tasks(r, &g);
            v.iter().skip(v.len().saturating_sub(3)).map(|t| ms(t.runtime_ns)).collect::<Vec<_>>().join(" ")
        });
    }
    let mut cells = vec![std::iter::once(String::new()).chain(names).collect::<Vec<_>>()];
    cells.extend(rows.into_iter().map(|(l, v)| std::iter::once(l).chain(v).collect()));
    s.push('\n');
    s.push_str(&crate::table(&cells));
    s
}

fn cpus(r: &RunRecord) -> f64 {
    r.machine.cpus.max(1) as f64
}

fn group_tasks<'a>(r: &'a RunRecord, g: &str) -> Vec<&'a TaskRecord> {
    r.tasks.iter().filter(|t| group_of(&t.name) == g).collect()
}
