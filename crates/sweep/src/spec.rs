//! The sweep file (TOML): which workload, and the runs, as a grid (every combination of
//! machines × schedulers × workload parameters × tunables × seeds) and/or a list.
//!
//! ```toml
//! workload = "../workloads/hackbench.toml"   # relative to this file, or a built-in study
//! duration = "200ms"                          # optional: the workload's, else 10 s
//! kernel = "5.15"                             # optional: --kernel of every run
//! [grid]
//! machines = ["smp2", "smp4"]                 # default: the workload's machine
//! schedulers = ["eevdf", "cfs"]               # default: the workload's `schedulers`
//! seeds = { from = 1, count = 3 }             # or a list; default [1]
//! params = { groups = [1, 2] }                # workload parameters
//! set = { "cfs:sched_min_granularity_ns" = ["750000", "3000000"] }  # tunables
//! [[run]]                                     # runs beyond the grid
//! scheduler = "ule"
//! seed = 7
//! ```
//!
//! A tunable `SCHED:KEY` varies only in the runs of that scheduler (exactly, or by base
//! name: `eevdf:` aims at `eevdf@6.6`); the other schedulers' runs leave it at its default
//! once instead of repeating for each value.

use crate::point::Point;
use schedlab_sim::{parse_duration, SourceError};
use toml::de::{DeArray, DeTable, DeValue};
use toml::Spanned;

/// Most runs one sweep may expand to, checked before anything runs.
pub const MAX_RUNS: usize = 100_000;

type V<'a> = Spanned<DeValue<'a>>;
type R<T> = Result<T, SourceError>;

/// A parsed sweep: its runs, in order (the grid first, then the list).
#[derive(Clone, Debug)]
pub struct Sweep {
    pub points: Vec<Point>,
}

/// Where the sweep's workload comes from: `(name for errors, text)`.
pub type WorkloadSource = (String, String);

/// Parses sweep file `text` (named `file` in errors). `load` resolves the `workload` value
/// (a path relative to the sweep file, or a built-in study) to its name and text.
pub fn parse(file: &str, text: &str, load: &dyn Fn(&str) -> Result<WorkloadSource, String>) -> R<Sweep> {
    let p = Parser { file, text };
    let doc = DeTable::parse(text).map_err(|e| p.err(e.span().map_or(0, |s| s.start), "(syntax)", e.message()))?;
    let root = doc.get_ref();
    p.only(root, &["workload", "duration", "kernel", "grid", "run"], "")?;
    let wv = get(root, "workload").ok_or_else(|| p.err(0, "workload", "missing: name the workload file"))?;
    let (wl_file, wl_text) = load(&p.string(wv, "workload")?).map_err(|m| p.err(wv.span().start, "workload", m))?;
    let duration = match get(root, "duration") {
        Some(v) => Some(parse_duration(&p.string(v, "duration")?).map_err(|m| p.err(v.span().start, "duration", m))?),
        None => None,
    };
    let kernel = match get(root, "kernel") {
        Some(v) => {
            let k = p.string(v, "kernel")?;
            schedlab_run::KernelVersion::parse(&k).map_err(|m| p.err(v.span().start, "kernel", m))?;
            Some(k)
        }
        None => None,
    };
    let base = Point {
        run: 0,
        workload_file: wl_file,
        workload_text: wl_text,
        machine: None,
        scheduler: String::new(),
        seed: 1,
        params: Vec::new(),
        sets: Vec::new(),
        duration_ns: duration.map(|d| d.0),
        kernel,
    };
    let mut points = Vec::new();
    if let Some(g) = get(root, "grid") {
        p.grid(p.table(g, "grid")?, &base, &mut points)?;
    }
    if let Some(list) = get(root, "run") {
        for (i, item) in p.array(list, "run")?.iter().enumerate() {
            points.push(p.listed(p.table(item, &format!("run[{i}]"))?, &base, i)?);
            p.limit(&points, item)?;
        }
    }
    if points.is_empty() {
        return Err(p.err(0, "grid", "the sweep has no runs: add a [grid] or [[run]] entries"));
    }
    for (i, pt) in points.iter_mut().enumerate() {
        pt.run = i;
    }
    Ok(Sweep { points })
}

struct Parser<'t> {
    file: &'t str,
    text: &'t str,
}

/// One dimension of the grid: a column name and its values, with the scheduler a
/// tunable aims at (`SCHED:KEY`).
struct Dim {
    key: String,
    target: Option<String>,
    values: Vec<String>,
}

impl Parser<'_> {
    fn err(&self, offset: usize, field: &str, msg: impl Into<String>) -> SourceError {
        SourceError::at(self.file, self.text, offset, field, msg)
    }

    fn only(&self, t: &DeTable<'_>, keys: &[&str], within: &str) -> R<()> {
        for (k, _) in t.iter() {
            if !keys.contains(&k.get_ref().as_ref()) {
                let field =
                    if within.is_empty() { k.get_ref().to_string() } else { format!("{within}.{}", k.get_ref()) };
                return Err(self.err(
                    k.span().start,
                    &field,
                    format!("unknown key; expected one of {}", keys.join(", ")),
                ));
            }
        }
        Ok(())
    }

    fn table<'v, 'a>(&self, v: &'v V<'a>, field: &str) -> R<&'v DeTable<'a>> {
        match v.get_ref() {
            DeValue::Table(t) => Ok(t),
            _ => Err(self.err(v.span().start, field, "expected a table")),
        }
    }

    fn array<'v, 'a>(&self, v: &'v V<'a>, field: &str) -> R<&'v DeArray<'a>> {
        match v.get_ref() {
            DeValue::Array(a) => Ok(a),
            _ => Err(self.err(v.span().start, field, "expected an array")),
        }
    }

    fn string(&self, v: &V<'_>, field: &str) -> R<String> {
        v.get_ref().as_str().map(str::to_string).ok_or_else(|| self.err(v.span().start, field, "expected a string"))
    }

    /// A parameter or tunable value: a string, an integer or a boolean, as text.
    fn scalar(&self, v: &V<'_>, field: &str) -> R<String> {
        match v.get_ref() {
            DeValue::String(s) => Ok(s.to_string()),
            DeValue::Integer(i) if i.radix() == 10 => Ok(i.as_str().replace('_', "")),
            DeValue::Boolean(b) => Ok(b.to_string()),
            _ => Err(self.err(v.span().start, field, "expected a string, a decimal integer or a boolean")),
        }
    }

    fn seed(&self, v: &V<'_>, field: &str) -> R<u64> {
        match v.get_ref() {
            DeValue::Integer(i) if i.radix() == 10 => i
                .as_str()
                .replace('_', "")
                .parse::<u64>()
                .map_err(|_| self.err(v.span().start, field, "expected a non-negative integer")),
            _ => Err(self.err(v.span().start, field, "expected a non-negative integer")),
        }
    }

    /// A value or an array of values, each turned into text by `one`.
    fn values<T>(&self, v: &V<'_>, field: &str, one: &dyn Fn(&V<'_>, &str) -> R<T>) -> R<Vec<T>> {
        let out = match v.get_ref() {
            DeValue::Array(a) => {
                a.iter().enumerate().map(|(i, e)| one(e, &format!("{field}[{i}]"))).collect::<R<_>>()?
            }
            _ => vec![one(v, field)?],
        };
        if out.is_empty() {
            return Err(self.err(v.span().start, field, "an empty list leaves nothing to run"));
        }
        Ok(out)
    }

    fn seeds(&self, v: &V<'_>) -> R<Vec<u64>> {
        let DeValue::Table(t) = v.get_ref() else {
            return self.values(v, "grid.seeds", &|e, f| self.seed(e, f));
        };
        self.only(t, &["from", "count"], "grid.seeds")?;
        let from = get(t, "from").map(|f| self.seed(f, "grid.seeds.from")).transpose()?.unwrap_or(1);
        let cv = get(t, "count").ok_or_else(|| self.err(v.span().start, "grid.seeds.count", "missing"))?;
        let count = self.seed(cv, "grid.seeds.count")?;
        if count == 0 || count > MAX_RUNS as u64 || from.checked_add(count).is_none() {
            return Err(self.err(cv.span().start, "grid.seeds.count", format!("expected 1..={MAX_RUNS} seeds")));
        }
        Ok((from..from + count).collect())
    }

    fn dims(&self, t: &DeTable<'_>, field: &str, targeted: bool) -> R<Vec<Dim>> {
        let mut out = Vec::new();
        for (k, v) in t.iter() {
            let name = k.get_ref().to_string();
            let f = format!("{field}.{name}");
            // The target ends at the last colon: `ext:simple:fifo` aims `fifo` at `ext:simple`.
            let (target, key) = match name.rsplit_once(':') {
                Some((s, key)) if targeted && !s.is_empty() && !key.is_empty() => {
                    (Some(s.to_string()), key.to_string())
                }
                _ => (None, name.clone()),
            };
            out.push(Dim { key, target, values: self.values(v, &f, &|e, f| self.scalar(e, f))? });
        }
        Ok(out)
    }

    fn limit(&self, points: &[Point], at: &V<'_>) -> R<()> {
        if points.len() > MAX_RUNS {
            return Err(self.err(at.span().start, "grid", format!("the sweep expands to more than {MAX_RUNS} runs")));
        }
        Ok(())
    }

    fn grid(&self, g: &DeTable<'_>, base: &Point, out: &mut Vec<Point>) -> R<()> {
        self.only(g, &["machines", "schedulers", "seeds", "params", "set"], "grid")?;
        let machines: Vec<Option<String>> = match get(g, "machines") {
            Some(v) => self.values(v, "grid.machines", &|e, f| self.string(e, f))?.into_iter().map(Some).collect(),
            None => vec![None],
        };
        let schedulers: Vec<String> = match get(g, "schedulers") {
            Some(v) => self.values(v, "grid.schedulers", &|e, f| self.string(e, f))?,
            None => schedlab_run::default_schedulers(&base.workload_text).split(',').map(str::to_string).collect(),
        };
        let seeds = get(g, "seeds").map(|v| self.seeds(v)).transpose()?.unwrap_or_else(|| vec![1]);
        let params = match get(g, "params") {
            Some(v) => self.dims(self.table(v, "grid.params")?, "grid.params", false)?,
            None => Vec::new(),
        };
        let sets = match get(g, "set") {
            Some(v) => self.dims(self.table(v, "grid.set")?, "grid.set", true)?,
            None => Vec::new(),
        };
        self.check_grid_names(g, &machines, &schedulers, base)?;
        let whole = get(g, "machines").or(get(g, "schedulers")).or(get(g, "seeds"));
        for machine in &machines {
            for sched in &schedulers {
                // Tunables aimed at another scheduler do not multiply this one's runs.
                let aimed: Vec<&Dim> =
                    sets.iter().filter(|d| d.target.as_deref().is_none_or(|t| aims_at(t, sched))).collect();
                let all: Vec<&Dim> = params.iter().chain(aimed.iter().copied()).collect();
                for combo in product(&all) {
                    let (p, s) = combo.split_at(params.len());
                    for &seed in &seeds {
                        out.push(Point {
                            machine: machine.clone(),
                            scheduler: sched.clone(),
                            seed,
                            params: params.iter().zip(p).map(|(d, v)| (d.key.clone(), v.clone())).collect(),
                            sets: aimed.iter().zip(s).map(|(d, v)| (d.key.clone(), v.clone())).collect(),
                            ..base.clone()
                        });
                        if out.len() > MAX_RUNS {
                            let at = whole.map_or(0, |v| v.span().start);
                            return Err(self.err(
                                at,
                                "grid",
                                format!("the sweep expands to more than {MAX_RUNS} runs"),
                            ));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The grid's schedulers and tunables, checked on each of its machines before anything
    /// runs: an unknown scheduler, version or tunable (or a feature the version lacks, a
    /// value out of range) is reported where the file names it. A tunable is checked alone
    /// against each scheduler it aims at; combinations are checked when the runs start.
    fn check_grid_names(&self, g: &DeTable<'_>, machines: &[Option<String>], scheds: &[String], base: &Point) -> R<()> {
        let loaded = check_machines(machines, base);
        if let Some(v) = get(g, "schedulers") {
            for (i, (e, field)) in elements(v, "grid.schedulers").into_iter().enumerate() {
                for m in &loaded {
                    schedlab_run::check_scheduler(&scheds[i], m, &[])
                        .map_err(|msg| self.err(e.span().start, &field, msg))?;
                }
            }
        }
        let Some(DeValue::Table(t)) = get(g, "set").map(|v| v.get_ref()) else { return Ok(()) };
        for (k, v) in t.iter() {
            let name = k.get_ref().to_string();
            let (target, key) = match name.rsplit_once(':') {
                Some((s, key)) if !s.is_empty() && !key.is_empty() => (Some(s), key),
                _ => (None, name.as_str()),
            };
            // A target none of the grid's schedulers answers to would vary nothing: as
            // `run --set SCHED:KEY=…` does, refuse it rather than drop it.
            if let Some(t) = target.filter(|t| !scheds.iter().any(|s| aims_at(t, s))) {
                return Err(self.err(
                    k.span().start,
                    &format!("grid.set.{name}"),
                    format!("`{t}` is not among the grid's schedulers ({})", scheds.join(", ")),
                ));
            }
            for (e, field) in elements(v, &format!("grid.set.{name}")) {
                let value = self.scalar(e, &field)?;
                for sched in scheds.iter().filter(|s| target.is_none_or(|t| aims_at(t, s))) {
                    let sets = [(key.to_string(), value.clone())];
                    for m in &loaded {
                        schedlab_run::check_scheduler(sched, m, &sets)
                            .map_err(|msg| self.err(e.span().start, &field, format!("{sched}: {msg}")))?;
                    }
                }
            }
        }
        Ok(())
    }

    /// A listed run's scheduler with its tunables, on its machine.
    fn check_listed(&self, t: &DeTable<'_>, pt: &Point, f: &str) -> R<()> {
        let loaded = check_machines(std::slice::from_ref(&pt.machine), pt);
        for m in &loaded {
            if let Some(v) = get(t, "scheduler") {
                let field = format!("{f}.scheduler");
                schedlab_run::check_scheduler(&pt.scheduler, m, &[])
                    .map_err(|msg| self.err(v.span().start, &field, msg))?;
            }
            let Some(DeValue::Table(sets)) = get(t, "set").map(|v| v.get_ref()) else { continue };
            for ((k, v), kv) in sets.iter().zip(&pt.sets) {
                let field = format!("{f}.set.{}", k.get_ref());
                schedlab_run::check_scheduler(&pt.scheduler, m, std::slice::from_ref(kv))
                    .map_err(|msg| self.err(v.span().start, &field, msg))?;
            }
        }
        Ok(())
    }

    fn listed(&self, t: &DeTable<'_>, base: &Point, i: usize) -> R<Point> {
        let f = format!("run[{i}]");
        self.only(t, &["machine", "scheduler", "seed", "params", "set"], &f)?;
        let sched = get(t, "scheduler").ok_or_else(|| self.err(0, &format!("{f}.scheduler"), "missing"))?;
        let pairs = |key: &str| -> R<Vec<(String, String)>> {
            let Some(v) = get(t, key) else { return Ok(Vec::new()) };
            let field = format!("{f}.{key}");
            let table = self.table(v, &field)?;
            table
                .iter()
                .map(|(k, v)| Ok((k.get_ref().to_string(), self.scalar(v, &format!("{field}.{}", k.get_ref()))?)))
                .collect()
        };
        let pt = Point {
            machine: get(t, "machine").map(|v| self.string(v, &format!("{f}.machine"))).transpose()?,
            scheduler: self.string(sched, &format!("{f}.scheduler"))?,
            seed: get(t, "seed").map(|v| self.seed(v, &format!("{f}.seed"))).transpose()?.unwrap_or(1),
            params: pairs("params")?,
            sets: pairs("set")?,
            ..base.clone()
        };
        self.check_listed(t, &pt, &f)?;
        Ok(pt)
    }
}

/// The machines names are checked on: each given one that loads (one that does not is
/// reported when its runs start), else the workload's or the default machine.
fn check_machines(machines: &[Option<String>], base: &Point) -> Vec<schedlab_machine::Machine> {
    machines
        .iter()
        .filter_map(|m| {
            let name = m.clone().or_else(|| schedlab_run::workload_machine_hint(&base.workload_text));
            schedlab_run::load_machine(name.as_deref().unwrap_or(schedlab_run::DEFAULT_MACHINE)).ok()
        })
        .collect()
}

/// A value or each element of an array of values, with its field name.
fn elements<'v, 'a>(v: &'v V<'a>, field: &str) -> Vec<(&'v V<'a>, String)> {
    match v.get_ref() {
        DeValue::Array(a) => a.iter().enumerate().map(|(i, e)| (e, format!("{field}[{i}]"))).collect(),
        _ => vec![(v, field.to_string())],
    }
}

/// The value of `key` in table `t`.
fn get<'v, 'a>(t: &'v DeTable<'a>, key: &str) -> Option<&'v V<'a>> {
    t.iter().find(|(k, _)| k.get_ref() == key).map(|(_, v)| v)
}

/// Every combination of the dimensions' values, the last dimension varying fastest.
fn product(dims: &[&Dim]) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = vec![Vec::new()];
    for d in dims {
        out = out
            .iter()
            .flat_map(|prefix| d.values.iter().map(move |v| [prefix.clone(), vec![v.clone()]].concat()))
            .collect();
    }
    out
}

/// Whether tunable target `t` names scheduler `s`: exactly, or by its base name.
pub fn aims_at(t: &str, s: &str) -> bool {
    t == s || s.split_once('@').is_some_and(|(base, _)| base == t)
}
