//! Tunables: each defined once, in a [`TunableTable`] over the configuration struct it sets
//! (a policy's sysctls and features, a sched_ext scheduler's options, the kernel model's
//! switches). A [`TunableSpec`] holds the name, the values it takes ([`Kind`]: an integer
//! range in a [`Unit`], a boolean, a choice), the versions it exists in, the documentation
//! and how to read and write the field. `--set` parsing, the range, version and
//! unknown-name errors, `schedlab list`, the record ([`Tunable`]: name and effective value)
//! and the generated documentation all read the table.
//!
//! A configuration may be set in two passes: the [`TunableSpec::early`] tunables (a
//! version, a scaling mode, a clock rate) first, because the others' defaults depend on
//! them, then the rest over the recomputed defaults.

use std::fmt::Write as _;

/// What a plain number of a tunable or a statistic counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A count, a ratio, a score, a priority, a weight, a CPU number.
    None,
    Ns,
    Us,
    Ms,
    /// Per second (a clock rate).
    Hz,
    Percent,
    /// Ticks of a named clock (`"stat ticks"`, `"jiffies"`, `"hz ticks"`).
    Ticks(&'static str),
}

impl Unit {
    /// Nanoseconds per unit, for the time units.
    pub fn ns(self) -> Option<u64> {
        match self {
            Unit::Ns => Some(1),
            Unit::Us => Some(1_000),
            Unit::Ms => Some(1_000_000),
            _ => None,
        }
    }
    /// How the unit is written after a number (`""` for [`Unit::None`]).
    pub fn label(self) -> &'static str {
        match self {
            Unit::None => "",
            Unit::Ns => "ns",
            Unit::Us => "us",
            Unit::Ms => "ms",
            Unit::Hz => "Hz",
            Unit::Percent => "%",
            Unit::Ticks(name) => name,
        }
    }
}

/// One value of a [`Kind::Choice`]: its name (what the record shows) and other spellings
/// `--set` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
}

/// The values a tunable takes. The value a table reads and writes is an `i64`: the number
/// itself, 0/1, or the index of the choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An integer in `unit` within `min..=max`. A time unit also takes a duration (`3ms`),
    /// which must be a whole number of units.
    Int { min: i64, max: i64, unit: Unit },
    /// `0`/`1` (also `false`/`true`, `off`/`on`); shown as 0 or 1.
    Bool,
    /// One of the choices; shown by name.
    Choice(&'static [Choice]),
}

impl Kind {
    /// An integer range in `unit`.
    pub const fn int(min: i64, max: i64, unit: Unit) -> Kind {
        Kind::Int { min, max, unit }
    }

    /// The values it takes, as `schedlab list` and the docs show them:
    /// `100000..=1000000000 ns`, `0/1`, `11.1 (11), 11.1-linux or current (15)`.
    pub fn values(&self) -> String {
        match *self {
            Kind::Int { min, max, unit: Unit::None } => format!("{min}..={max}"),
            Kind::Int { min, max, unit } => format!("{min}..={max} {}", unit.label()),
            Kind::Bool => "0/1".into(),
            Kind::Choice(cs) => {
                let each: Vec<String> = cs
                    .iter()
                    .map(|c| match c.aliases {
                        [] => c.name.to_string(),
                        a => format!("{} ({})", c.name, a.join("/")),
                    })
                    .collect();
                or_list(&each)
            }
        }
    }

    /// Reads `--set` value `v` of tunable `name`, with the range checked.
    pub fn parse(&self, name: &str, v: &str) -> Result<i64, String> {
        let t = v.trim();
        match *self {
            Kind::Bool => match t {
                "1" | "true" | "on" => Ok(1),
                "0" | "false" | "off" => Ok(0),
                _ => Err(format!("tunable `{name}`: expected 0/1 or true/false, found `{v}`")),
            },
            Kind::Choice(cs) => cs
                .iter()
                .position(|c| c.name == t || c.aliases.contains(&t))
                .map(|i| i as i64)
                .ok_or_else(|| format!("tunable `{name}`: `{v}` is not one of {}", self.values())),
            Kind::Int { min, max, unit } => {
                let n = parse_int(name, t, min, unit)?;
                if n < i128::from(min) || n > i128::from(max) {
                    return Err(format!("tunable `{name}` = {n} is outside its range {}", self.values()));
                }
                Ok(n as i64)
            }
        }
    }

    /// How value `x` is shown (the record, `schedlab list`).
    pub fn show(&self, x: i64) -> String {
        match *self {
            Kind::Choice(cs) => cs.get(x as usize).map_or_else(|| x.to_string(), |c| c.name.to_string()),
            _ => x.to_string(),
        }
    }
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// An integer in `unit`, or a duration (`3ms`) for a time unit; `_` separators allowed.
/// Parsed wide, so that a huge number is reported as out of range, not as malformed.
fn parse_int(name: &str, t: &str, min: i64, unit: Unit) -> Result<i128, String> {
    if let Some(per) = unit.ns() {
        if t.ends_with('s') && !t.starts_with('-') {
            let d = schedlab_sim::parse_duration(t).map_err(|e| format!("tunable `{name}`: {e}"))?.0;
            if d % per != 0 {
                return Err(format!("tunable `{name}`: `{t}` is not a whole number of {}", unit.label()));
            }
            return Ok(i128::from(d / per));
        }
    }
    let what = if min < 0 { "an integer" } else { "a non-negative integer" };
    let or = if unit.ns().is_some() { " (or a duration such as 3ms)" } else { "" };
    let digits = t.replace('_', "");
    let ok = !digits.is_empty()
        && digits.strip_prefix('-').filter(|_| min < 0).unwrap_or(&digits).chars().all(|c| c.is_ascii_digit());
    let n = ok.then(|| digits.parse::<i128>().ok()).flatten();
    n.ok_or_else(|| format!("tunable `{name}`: `{t}` is not {what}{or}"))
}

/// One tunable of configuration `T`, defined once.
pub struct TunableSpec<T> {
    pub name: &'static str,
    pub kind: Kind,
    pub doc: &'static str,
    /// The versions of the table's owner it exists in; empty: every version.
    pub versions: &'static [&'static str],
    /// Set before the other tunables, whose defaults depend on it.
    pub early: bool,
    pub get: fn(&T) -> i64,
    /// `None`: read only (derived from other tunables).
    pub set: Option<fn(&mut T, i64)>,
}

impl<T> TunableSpec<T> {
    /// A settable tunable that exists in every version, set in the ordinary pass; the
    /// others are written `TunableSpec { versions: …, early: true, ..TunableSpec::new(…) }`.
    pub const fn new(
        name: &'static str,
        kind: Kind,
        doc: &'static str,
        get: fn(&T) -> i64,
        set: fn(&mut T, i64),
    ) -> TunableSpec<T> {
        TunableSpec { name, kind, doc, versions: &[], early: false, get, set: Some(set) }
    }
    /// A read-only tunable, derived from others.
    pub const fn derived(name: &'static str, kind: Kind, doc: &'static str, get: fn(&T) -> i64) -> TunableSpec<T> {
        TunableSpec { name, kind, doc, versions: &[], early: false, get, set: None }
    }
}

/// Which tunables of a `--set` list a pass applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// Only the [`TunableSpec::early`] ones.
    Early,
    /// All but the early ones.
    Rest,
    /// Every one, in order.
    All,
}

/// The tunables of one configuration struct `T`.
pub struct TunableTable<T: 'static> {
    /// What they configure, in errors and the record: `fair.c`, `sched_ule.c`, `the kernel`.
    pub owner: &'static str,
    pub specs: &'static [TunableSpec<T>],
    /// The version a configuration models, which [`TunableSpec::versions`] names; `None`
    /// for an unversioned owner.
    pub version: Option<fn(&T) -> &'static str>,
}

/// What a name is to a table.
enum Found<'a, T> {
    Spec(&'a TunableSpec<T>),
    /// In the table, but not in the configuration's version.
    OtherVersion(&'a TunableSpec<T>),
    Unknown,
}

impl<T: 'static> TunableTable<T> {
    fn exists(&self, s: &TunableSpec<T>, t: &T) -> bool {
        s.versions.is_empty() || self.version.is_some_and(|v| s.versions.contains(&v(t)))
    }

    fn find(&self, t: &T, name: &str) -> Found<'_, T> {
        let mut other = None;
        for s in self.specs.iter().filter(|s| s.name == name) {
            if self.exists(s, t) {
                return Found::Spec(s);
            }
            other = other.or(Some(s));
        }
        other.map_or(Found::Unknown, Found::OtherVersion)
    }

    /// Whether `name` is one of this table's tunables, in any version.
    pub fn has(&self, name: &str) -> bool {
        self.specs.iter().any(|s| s.name == name)
    }

    /// Sets tunable `name` of `t` to `value`. `Ok(false)`: the table has no such name (it
    /// may be another table's). A name of another version, a read-only tunable, a
    /// malformed value or one outside the range is an error naming the tunable.
    pub fn set(&self, t: &mut T, name: &str, value: &str) -> Result<bool, String> {
        let s = match self.find(t, name) {
            Found::Spec(s) => s,
            Found::Unknown => return Ok(false),
            Found::OtherVersion(s) => {
                let v = self.version.map_or("", |v| v(t));
                return Err(format!(
                    "unknown tunable `{name}`: it does not exist in {} v{v} (only in {}; see `schedlab list`)",
                    self.owner,
                    s.versions.join(", ")
                ));
            }
        };
        let Some(set) = s.set else {
            return Err(format!("tunable `{name}` is read only: {}", s.doc));
        };
        set(t, s.kind.parse(name, value)?);
        Ok(true)
    }

    /// Applies the `sets` of this table that `pass` selects, in order, ignoring names the
    /// table does not have (another table's, or unknown: the caller checks those, e.g.
    /// with [`check_known`]).
    pub fn apply_known(&self, t: &mut T, sets: &[(String, String)], pass: Pass) -> Result<(), String> {
        for (k, v) in sets {
            let early = self.specs.iter().any(|s| s.name == k && s.early);
            let wanted = match pass {
                Pass::All => true,
                Pass::Early => early,
                Pass::Rest => !early,
            };
            if wanted {
                self.set(t, k, v)?;
            }
        }
        Ok(())
    }

    /// [`TunableTable::apply_known`], with every name required to be this table's: an
    /// unknown one is an error listing the tunables of `who` (`scheduler `fifo``).
    pub fn apply(&self, t: &mut T, sets: &[(String, String)], pass: Pass, who: &str) -> Result<(), String> {
        if let Some((k, _)) = sets.iter().find(|(k, _)| !self.has(k)) {
            return Err(unknown(who, k, &self.list(t)));
        }
        self.apply_known(t, sets, pass)
    }

    /// The tunables that exist in `t`'s version, in table order, with their values.
    pub fn list(&self, t: &T) -> Vec<Tunable> {
        self.specs
            .iter()
            .filter(|s| self.exists(s, t))
            .map(|s| Tunable {
                name: s.name,
                value: s.kind.show((s.get)(t)),
                doc: s.doc,
                kind: s.kind,
                owner: self.owner,
                read_only: s.set.is_none(),
            })
            .collect()
    }
}

/// A tunable with its current value, as a policy reports it ([`crate::SchedClass::tunables`]):
/// the record keeps name and value; `schedlab list` and the docs show the rest.
#[derive(Clone, Debug)]
pub struct Tunable {
    pub name: &'static str,
    pub value: String,
    pub doc: &'static str,
    pub kind: Kind,
    /// The table it comes from ([`TunableTable::owner`]).
    pub owner: &'static str,
    pub read_only: bool,
}

/// The error for a `--set` name `key` that `who` (`scheduler `cfs``) does not have,
/// listing the names it has.
pub fn unknown(who: &str, key: &str, has: &[Tunable]) -> String {
    let names: Vec<&str> = has.iter().map(|t| t.name).collect();
    format!("unknown tunable `{key}` for {who}; it has: {}", names.join(", "))
}

/// Every name of `sets` is one of `has` (the tunables of a policy built from several
/// tables, each of which applied its own names and ignored the rest), else the
/// [`unknown`] error.
pub fn check_known(who: &str, sets: &[(String, String)], has: &[Tunable]) -> Result<(), String> {
    match sets.iter().find(|(k, _)| !has.iter().any(|t| t.name == k)) {
        Some((k, _)) => Err(unknown(who, k, has)),
        None => Ok(()),
    }
}

/// A Markdown table of `rows` (name, values, default, meaning), as the docs show a
/// policy's tunables; `versions(name)` fills a versions column when given.
pub fn markdown(rows: &[Tunable], versions: Option<&dyn Fn(&str) -> String>) -> String {
    let mut out = String::new();
    match versions {
        Some(_) => out.push_str("| name | versions | values | default | meaning |\n|---|---|---|---|---|\n"),
        None => out.push_str("| name | values | default | meaning |\n|---|---|---|---|\n"),
    }
    for t in rows {
        let values = if t.read_only { "read only".to_string() } else { t.kind.values() };
        let doc = t.doc.replace('|', "\\|");
        let _ = match versions {
            Some(f) => writeln!(out, "| `{}` | {} | {values} | {} | {doc} |", t.name, f(t.name), t.value),
            None => writeln!(out, "| `{}` | {values} | {} | {doc} |", t.name, t.value),
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Conf {
        v: usize,
        slice_us: i64,
        on: bool,
        runtime: i64,
    }

    const VERSIONS: &[Choice] = &[Choice { name: "1", aliases: &["one"] }, Choice { name: "2", aliases: &[] }];

    static TABLE: TunableTable<Conf> = TunableTable {
        owner: "conf.c",
        specs: &[
            TunableSpec {
                early: true,
                ..TunableSpec::new("version", Kind::Choice(VERSIONS), "which", |c| c.v as i64, |c, x| c.v = x as usize)
            },
            TunableSpec::new("slice_us", Kind::int(1, 1000, Unit::Us), "slice", |c| c.slice_us, |c, x| c.slice_us = x),
            TunableSpec {
                versions: &["2"],
                ..TunableSpec::new("on", Kind::Bool, "switch", |c| c.on.into(), |c, x| c.on = x != 0)
            },
            TunableSpec::new("runtime", Kind::int(-1, 10, Unit::None), "-1: none", |c| c.runtime, |c, x| c.runtime = x),
            TunableSpec::derived("derived", Kind::Bool, "from the others", |c| c.slice_us),
        ],
        version: Some(|c| VERSIONS[c.v].name),
    };

    fn set(c: &mut Conf, k: &str, v: &str) -> Result<bool, String> {
        TABLE.set(c, k, v)
    }

    #[test]
    fn values_parse_in_their_unit_and_range() {
        let mut c = Conf::default();
        assert_eq!(set(&mut c, "slice_us", "250"), Ok(true));
        assert_eq!(c.slice_us, 250);
        set(&mut c, "slice_us", "1ms").unwrap();
        assert_eq!(c.slice_us, 1000);
        set(&mut c, "slice_us", "1_0").unwrap();
        assert_eq!(c.slice_us, 10);
        let e = set(&mut c, "slice_us", "1500ns").unwrap_err();
        assert!(e.contains("not a whole number of us"), "{e}");
        let e = set(&mut c, "slice_us", "2ms").unwrap_err();
        assert_eq!(e, "tunable `slice_us` = 2000 is outside its range 1..=1000 us");
        let e = set(&mut c, "slice_us", "99999999999999999999999").unwrap_err();
        assert!(e.contains("outside its range"), "{e}");
        assert!(set(&mut c, "slice_us", "-3").unwrap_err().contains("not a non-negative integer (or a duration"));
        assert!(set(&mut c, "slice_us", "1e3").unwrap_err().contains("not a non-negative integer"));
        set(&mut c, "runtime", "-1").unwrap();
        assert_eq!(c.runtime, -1);
        assert!(set(&mut c, "runtime", "-2").unwrap_err().contains("outside its range -1..=10"));
        assert!(set(&mut c, "runtime", "3ms").unwrap_err().contains("is not an integer"), "no duration for a count");
    }

    #[test]
    fn choices_booleans_versions_and_read_only() {
        let mut c = Conf::default();
        assert!(set(&mut c, "on", "1").unwrap_err().contains("does not exist in conf.c v1 (only in 2"));
        set(&mut c, "version", "two").unwrap_err();
        let e = set(&mut c, "version", "3").unwrap_err();
        assert_eq!(e, "tunable `version`: `3` is not one of 1 (one) or 2");
        set(&mut c, "version", "2").unwrap();
        for (v, on) in [("true", true), ("0", false), ("on", true), ("off", false)] {
            set(&mut c, "on", v).unwrap();
            assert_eq!(c.on, on);
        }
        assert!(set(&mut c, "on", "2").unwrap_err().contains("expected 0/1"));
        assert!(set(&mut c, "derived", "1").unwrap_err().contains("read only: from the others"));
        assert_eq!(set(&mut c, "nonesuch", "1"), Ok(false));
        let names: Vec<(&str, String)> = TABLE.list(&c).into_iter().map(|t| (t.name, t.value)).collect();
        let want = [("version", "2"), ("slice_us", "0"), ("on", "0"), ("runtime", "0"), ("derived", "0")];
        assert_eq!(names, want.map(|(n, v)| (n, v.to_string())));
        assert_eq!(TABLE.list(&Conf::default()).len(), 4, "`on` only in version 2");
    }

    #[test]
    fn passes_and_unknown_names() {
        let sets: Vec<(String, String)> =
            [("slice_us", "5"), ("version", "2"), ("x", "1")].map(|(k, v)| (k.into(), v.into())).to_vec();
        let mut c = Conf::default();
        TABLE.apply_known(&mut c, &sets, Pass::Early).unwrap();
        assert_eq!((c.v, c.slice_us), (1, 0));
        TABLE.apply_known(&mut c, &sets, Pass::Rest).unwrap();
        assert_eq!((c.v, c.slice_us), (1, 5));
        let e = TABLE.apply(&mut Conf::default(), &sets, Pass::All, "scheduler `conf`").unwrap_err();
        assert_eq!(e, "unknown tunable `x` for scheduler `conf`; it has: version, slice_us, runtime, derived");
        let has = TABLE.list(&c);
        assert!(check_known("scheduler `conf`", &sets[..2], &has).is_ok());
        assert!(check_known("scheduler `conf`", &sets, &has).unwrap_err().starts_with("unknown tunable `x`"));
        let md = markdown(&has, None);
        assert!(md.contains("| `slice_us` | 1..=1000 us | 5 | slice |"), "{md}");
        assert!(md.contains("| `derived` | read only |"), "{md}");
    }
}
