//! The side-by-side table of `edf-simso`: one column per utilisation.

use super::{Responses, SimsoOutcome, Study, UtilResult};
use std::fmt::Write;

/// Deadline misses and response times of one side at one utilisation.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Side {
    pub jobs: u64,
    pub misses: u64,
    /// Mean and maximum response time over the period, in percent (finished jobs).
    pub mean_rt_pct: f64,
    pub max_rt_pct: f64,
}

/// One utilisation's comparison.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    pub util: u64,
    pub linux: Side,
    pub simso: Option<Side>,
    /// Jobs finished on both sides, and how many of them Linux finished more than 100 µs
    /// later than SimSo; the mean difference (Linux − SimSo) in µs.
    pub paired: u64,
    pub later: u64,
    pub mean_diff_us: f64,
    pub throttled: u64,
    pub pushes: u64,
    pub pulls: u64,
    pub migrations: u64,
}

impl Side {
    pub fn miss_pct(&self) -> f64 {
        100.0 * self.misses as f64 / self.jobs.max(1) as f64
    }
}

fn side(r: &UtilResult, resp: &[Responses]) -> Side {
    let mut s = Side::default();
    let (mut sum, mut n) = (0.0, 0u64);
    for (set, rs) in r.sets.iter().zip(resp) {
        for (t, jobs) in set.iter().zip(rs) {
            for j in jobs {
                s.jobs += 1;
                match j {
                    Some(ns) => {
                        let pct = 100.0 * *ns as f64 / t.period as f64;
                        s.misses += u64::from(*ns > t.period);
                        sum += pct;
                        n += 1;
                        s.max_rt_pct = s.max_rt_pct.max(pct);
                    }
                    None => s.misses += 1,
                }
            }
        }
    }
    s.mean_rt_pct = sum / n.max(1) as f64;
    s
}

/// The per-utilisation summaries.
pub fn summary(study: &Study) -> Vec<Summary> {
    study
        .results
        .iter()
        .map(|r| {
            let linux: Vec<Responses> = r.linux.iter().map(|l| l.responses.clone()).collect();
            let mut s = Summary {
                util: r.util,
                linux: side(r, &linux),
                simso: r.simso.as_ref().map(|v| side(r, v)),
                ..Default::default()
            };
            for l in &r.linux {
                s.throttled += l.throttled;
                s.pushes += l.pushes;
                s.pulls += l.pulls;
                s.migrations += l.migrations;
            }
            if let Some(simso) = &r.simso {
                let mut diff = 0i128;
                for (l, m) in linux.iter().zip(simso) {
                    for (lt, mt) in l.iter().zip(m) {
                        for (a, b) in lt.iter().zip(mt) {
                            if let (Some(a), Some(b)) = (a, b) {
                                s.paired += 1;
                                s.later += u64::from(*a > b + 100_000);
                                diff += i128::from(*a) - i128::from(*b);
                            }
                        }
                    }
                }
                s.mean_diff_us = diff as f64 / 1000.0 / s.paired.max(1) as f64;
            }
            s
        })
        .collect()
}

/// Why the two differ, as measured by this study's design (see `docs/studies/edf-simso.md`).
const WHY: &str = "\
Where Linux's SCHED_DEADLINE differs from SimSo's ideal global EDF, and why:
- Runtime reservations (CBS): a task gets its runtime per period, no more. Each reservation
  here is the WCET plus the margin, so a job that starts on time is never throttled (no
  dl_throttled at low load). But a late job runs into its task's next period and the next
  job starts without sleeping, inside the same CBS instance: the task runs out of runtime
  and is throttled until its next period (dl_throttled appears with the misses). SimSo has
  no budgets: a late task keeps its CPU, so its lateness is paid back sooner there.
- Push/pull instead of one global queue: each CPU runs the earliest deadline of its own
  runqueue; a job released on a busy CPU reaches another CPU by select_task_rq_dl /
  find_later_rq at wakeup, a push after a pick, or a pull when a CPU lowers its priority.
  Between those points the m running jobs need not be the m earliest (SimSo reschedules
  globally at every release and completion), and every move costs a migration.
- Overheads: the simulated kernel charges wakeups (timer interrupt, try_to_wake_up),
  switches, IPIs and runqueue locks; SimSo here runs with none, so its response times are
  the pure EDF schedule and Linux's are later by the kernel paths on each job's way.
- Accounting at ticks (no HRTICK_DL): a task that exhausts its runtime is stopped at the
  next tick, not at once, and pays the overrun back in its next period.
";

/// The study as text: parameters, the table, and why the columns differ.
pub fn text(study: &Study) -> String {
    let p = &study.params;
    let sums = summary(study);
    let simso = match &study.simso {
        SimsoOutcome::Ran { version } => format!("SimSo {version} global EDF (simso.schedulers.EDF, no overheads)"),
        SimsoOutcome::Unavailable { why } => format!("SimSo skipped: {why}"),
    };
    let periods: Vec<String> = p.periods_ms.iter().map(u64::to_string).collect();
    let mut s = format!(
        "study edf-simso · SCHED_DEADLINE ({}) vs {simso}\n{} CPUs · {} tasks per set (UUniFast-discard, seed {}) · periods {} ms · {} sets per utilisation · {} measured · reservation = WCET + {}\n\n",
        p.sched,
        p.cpus,
        p.tasks,
        study.seed,
        periods.join(","),
        p.sets,
        p.duration,
        p.margin
    );
    let f1 = |v: f64| format!("{v:.1}");
    let f2 = |v: f64| format!("{v:.2}");
    let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    let mut rows: Vec<(&str, Vec<String>)> = vec![
        ("jobs", sums.iter().map(|x| x.linux.jobs.to_string()).collect()),
        ("deadline miss % linux", sums.iter().map(|x| f2(x.linux.miss_pct())).collect()),
        ("deadline miss % simso", sums.iter().map(|x| opt(x.simso.map(|m| f2(m.miss_pct())))).collect()),
        ("mean response/period % linux", sums.iter().map(|x| f1(x.linux.mean_rt_pct)).collect()),
        ("mean response/period % simso", sums.iter().map(|x| opt(x.simso.map(|m| f1(m.mean_rt_pct)))).collect()),
        ("max response/period % linux", sums.iter().map(|x| f1(x.linux.max_rt_pct)).collect()),
        ("max response/period % simso", sums.iter().map(|x| opt(x.simso.map(|m| f1(m.max_rt_pct)))).collect()),
    ];
    if sums.iter().any(|x| x.simso.is_some()) {
        rows.push(("jobs later than simso by >100us %", sums.iter().map(|x| f2(pct(x.later, x.paired))).collect()));
        rows.push(("mean (linux - simso) response us", sums.iter().map(|x| f1(x.mean_diff_us)).collect()));
    }
    rows.push(("dl_throttled", sums.iter().map(|x| x.throttled.to_string()).collect()));
    rows.push(("dl_pushes", sums.iter().map(|x| x.pushes.to_string()).collect()));
    rows.push(("dl_pulls", sums.iter().map(|x| x.pulls.to_string()).collect()));
    rows.push(("migrations", sums.iter().map(|x| x.migrations.to_string()).collect()));
    let labels: Vec<String> = sums.iter().map(|x| format!("U={:.2}", x.util as f64 / 1000.0)).collect();
    table(&mut s, &labels, &rows);
    s.push('\n');
    s.push_str(WHY);
    s
}

fn pct(a: u64, b: u64) -> f64 {
    100.0 * a as f64 / b.max(1) as f64
}

fn table(s: &mut String, labels: &[String], rows: &[(&str, Vec<String>)]) {
    let w0 = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..labels.len())
        .map(|i| rows.iter().map(|(_, v)| v[i].len()).max().unwrap_or(0).max(labels[i].len()))
        .collect();
    let _ = write!(s, "{:<w0$}", "");
    for (l, w) in labels.iter().zip(&widths) {
        let _ = write!(s, "  {l:>w$}");
    }
    s.push('\n');
    for (name, vals) in rows {
        let _ = write!(s, "{name:<w0$}");
        for (v, w) in vals.iter().zip(&widths) {
            let _ = write!(s, "  {v:>w$}");
        }
        s.push('\n');
    }
}
