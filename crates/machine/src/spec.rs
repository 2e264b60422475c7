//! Each machine-file field defined once: a [`Table`] per section lists its [`Field`]s — name,
//! [`Kind`] (the values it takes and their text form), whether it may be absent, the
//! documentation, and how to read and write it. The machine-file parser, `Machine::set`
//! (`--set` of a machine value), `Machine::fields` (the record, `schedlab list`), the
//! machine-file writer and the docs all read these tables, the same pattern as
//! `schedlab_sched_api::TunableTable` for the policies' tunables (which this crate cannot
//! use: `sched-api` depends on it).

use crate::CpuSet;
use schedlab_sim::{parse_duration, Ns};

/// A field's value as a table reads and writes it.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// A number in the kind's base unit (ns, ps, bytes, bytes/s), 0/1, or a choice's index.
    Num(u64),
    /// An optional field that is not given.
    Absent,
    /// A list of numbers (a frequency or power table).
    List(Vec<u64>),
    /// A name.
    Text(String),
    Cpus(CpuSet),
}

impl Val {
    /// The number of a [`Val::Num`]; tables only pass what their kind parsed.
    pub fn num(&self) -> u64 {
        match self {
            Val::Num(n) => *n,
            _ => 0,
        }
    }
    /// `None` for [`Val::Absent`].
    pub fn opt(&self) -> Option<u64> {
        match self {
            Val::Num(n) => Some(*n),
            _ => None,
        }
    }
    pub fn of_opt(o: Option<u64>) -> Val {
        o.map_or(Val::Absent, Val::Num)
    }
    pub fn list(self) -> Vec<u64> {
        match self {
            Val::List(v) => v,
            _ => Vec::new(),
        }
    }
    pub fn text(self) -> String {
        match self {
            Val::Text(s) => s,
            _ => String::new(),
        }
    }
    pub fn cpus(self) -> CpuSet {
        match self {
            Val::Cpus(c) => c,
            _ => CpuSet::empty(1),
        }
    }
}

/// The values a field takes and how they are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A duration in whole nanoseconds with a unit (`2us`, `1.5ms`, `0`), at most `max`.
    Duration { max: Ns },
    /// A short latency in picoseconds, written in ns/us with up to three decimals of ns
    /// (`1.2ns`, `8.824ns`), at most `max_ps`.
    Fine { max_ps: u64 },
    /// A size in bytes: a plain integer or with `KiB`, `MiB`, `GiB` (decimals allowed when
    /// they give whole bytes).
    Bytes { min: u64, max: u64 },
    /// A bandwidth in bytes per second, with a unit: `MB/s`, `GB/s` (10^6, 10^9) or
    /// `MiB/s`, `GiB/s`; decimals allowed (`9.8GB/s`).
    Rate { min: u64, max: u64 },
    /// An integer in `min..=max`, in `unit` (a label only).
    Int { min: u64, max: u64, unit: &'static str },
    /// `true`/`false` (also `1`/`0`, `on`/`off`).
    Bool,
    /// One of the names.
    Choice(&'static [&'static str]),
    /// A list of integers, each in `min..=max` (`[1600000, 1700000]`; in `--set`, commas).
    List { min: u64, max: u64, unit: &'static str },
    /// A Linux cpulist (`0-3,8`).
    Cpus,
    /// A name: letters, digits, `-`, `_`, `+`, spaces; no dots or brackets (a name is part
    /// of a field's dotted path).
    Name,
}

/// One field of section `T`.
pub struct Field<T> {
    pub name: &'static str,
    pub kind: Kind,
    /// May be left out (shown as `none`).
    pub optional: bool,
    pub doc: &'static str,
    pub get: fn(&T) -> Val,
    pub set: fn(&mut T, Val),
}

/// The fields of one section.
pub struct Table<T: 'static> {
    /// The section as files and dotted names spell it (`costs`, `memory`, `cache`).
    pub section: &'static str,
    /// What one field is called in errors (`cost`, `cache field`).
    pub what: &'static str,
    pub fields: &'static [Field<T>],
}

impl<T: 'static> Table<T> {
    pub fn field(&self, name: &str) -> Option<&'static Field<T>> {
        self.fields.iter().find(|f| f.name == name)
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.fields.iter().map(|f| f.name).collect()
    }

    /// The error for a name the table does not have.
    pub fn unknown(&self, name: &str) -> String {
        format!("unknown {} `{name}`; expected one of {}", self.what, self.names().join(", "))
    }

    /// Sets field `name` of `t` from its text form.
    pub fn set(&self, t: &mut T, name: &str, text: &str) -> Result<(), String> {
        let f = self.field(name).ok_or_else(|| self.unknown(name))?;
        let v = f.parse_text(text)?;
        (f.set)(t, v);
        Ok(())
    }

    /// Every field with its value in text form, in table order (absent optional fields
    /// included, as `none`).
    pub fn show(&self, t: &T) -> Vec<(&'static str, String)> {
        self.fields.iter().map(|f| (f.name, f.kind.show(&(f.get)(t)))).collect()
    }
}

impl<T> Field<T> {
    /// Whether a new array element (`[[cache]]`, …) must give it: not optional, not a
    /// switch (default false), not a list (default empty).
    pub fn required(&self) -> bool {
        !self.optional && !matches!(self.kind, Kind::Bool | Kind::List { .. })
    }

    /// Parses `text` (a `--set` value or a machine file's scalar) as this field's value.
    pub fn parse_text(&self, text: &str) -> Result<Val, String> {
        let t = text.trim();
        if self.optional && t == "none" {
            return Ok(Val::Absent);
        }
        self.kind.parse(t)
    }
}

impl Kind {
    /// Reads the text form, with the range checked.
    pub fn parse(&self, t: &str) -> Result<Val, String> {
        match *self {
            Kind::Duration { max } => {
                let d = parse_duration(t)?;
                if d > max {
                    return Err(format!("{d} exceeds the limit of {max}"));
                }
                Ok(Val::Num(d.0))
            }
            Kind::Fine { max_ps } => {
                let ps = parse_scaled(t, FINE_UNITS, true, "a latency such as 1.2ns (units: ps, ns, us, ms)")?;
                check_range(ps, 0, max_ps, show_fine)?;
                Ok(Val::Num(ps))
            }
            Kind::Bytes { min, max } => {
                let b = parse_scaled(t, BYTE_UNITS, false, "a size such as 32KiB (units: B, KiB, MiB, GiB)")?;
                check_range(b, min, max, show_bytes)?;
                Ok(Val::Num(b))
            }
            Kind::Rate { min, max } => {
                let r =
                    parse_scaled(t, RATE_UNITS, true, "a bandwidth such as 9.8GB/s (units: MB/s, GB/s, MiB/s, GiB/s)")?;
                check_range(r, min, max, show_rate)?;
                Ok(Val::Num(r))
            }
            Kind::Int { min, max, .. } => {
                let n = parse_uint(t)?;
                check_range(n, min, max, |v| v.to_string())?;
                Ok(Val::Num(n))
            }
            Kind::Bool => match t {
                "true" | "1" | "on" => Ok(Val::Num(1)),
                "false" | "0" | "off" => Ok(Val::Num(0)),
                _ => Err(format!("expected true or false, found `{t}`")),
            },
            Kind::Choice(names) => names
                .iter()
                .position(|n| *n == t)
                .map(|i| Val::Num(i as u64))
                .ok_or_else(|| format!("`{t}` is not one of {}", names.join(", "))),
            Kind::List { min, max, .. } => {
                let body = t.strip_prefix('[').and_then(|s| s.strip_suffix(']')).unwrap_or(t);
                let mut out = Vec::new();
                for (i, item) in body.split(',').map(str::trim).filter(|s| !s.is_empty()).enumerate() {
                    let n = parse_uint(item).map_err(|e| format!("entry {i}: {e}"))?;
                    check_range(n, min, max, |v| v.to_string()).map_err(|e| format!("entry {i}: {e}"))?;
                    out.push(n);
                }
                Ok(Val::List(out))
            }
            Kind::Cpus => CpuSet::parse_list(t).map(Val::Cpus),
            Kind::Name => check_name(t).map(|()| Val::Text(t.to_string())),
        }
    }

    /// The text form of `v`, which [`Kind::parse`] reads back to the same value.
    pub fn show(&self, v: &Val) -> String {
        match (self, v) {
            (_, Val::Absent) => "none".into(),
            (Kind::Duration { .. }, Val::Num(n)) => show_ns(*n),
            (Kind::Fine { .. }, Val::Num(n)) => show_fine(*n),
            (Kind::Bytes { .. }, Val::Num(n)) => show_bytes(*n),
            (Kind::Rate { .. }, Val::Num(n)) => show_rate(*n),
            (Kind::Bool, Val::Num(n)) => (*n != 0).to_string(),
            (Kind::Choice(names), Val::Num(n)) => names.get(*n as usize).copied().unwrap_or("?").to_string(),
            (_, Val::Num(n)) => n.to_string(),
            (_, Val::List(l)) => format!("[{}]", l.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")),
            (_, Val::Text(s)) => s.clone(),
            (_, Val::Cpus(c)) => c.to_string(),
        }
    }

    /// The values it takes, for the docs and `schedlab list`.
    pub fn values(&self) -> String {
        match *self {
            Kind::Duration { max } => format!("duration ≤ {max}"),
            Kind::Fine { max_ps } => format!("latency ≤ {}", Ns(max_ps / 1000)),
            Kind::Bytes { min, max } => format!("size {}..={}", show_bytes(min), show_bytes(max)),
            Kind::Rate { min, max } => format!("bandwidth {}..={}", show_rate(min), show_rate(max)),
            Kind::Int { min, max, unit: "" } => format!("{min}..={max}"),
            Kind::Int { min, max, unit } => format!("{min}..={max} {unit}"),
            Kind::Bool => "true/false".into(),
            Kind::Choice(names) => names.join(", "),
            Kind::List { min, max, unit } => format!("list of {min}..={max} {unit}"),
            Kind::Cpus => "cpu list".into(),
            Kind::Name => "name".into(),
        }
    }
}

/// A Markdown table of `tab`'s fields (field, values, default, meaning), as
/// `docs/machine.md` shows each section: the defaults are `defaults`' values, or for an
/// array element (`None`) whether the field is required.
pub fn markdown<T>(tab: &Table<T>, defaults: Option<&T>) -> String {
    let mut out = String::from("| field | values | default | meaning |\n|---|---|---|---|\n");
    for f in tab.fields {
        let default = match defaults {
            Some(t) => format!("`{}`", f.kind.show(&(f.get)(t))),
            None if f.required() => "required".into(),
            None if f.optional => "`none`".into(),
            None if f.kind == Kind::Bool => "`false`".into(),
            None => "`[]`".into(),
        };
        let doc = f.doc.trim().replace('|', "\\|");
        out.push_str(&format!("| `{}` | {} | {default} | {doc} |\n", f.name, f.kind.values().replace('|', "\\|")));
    }
    out
}

const FINE_UNITS: &[(&str, u64)] =
    &[("ps", 1), ("ns", 1_000), ("us", 1_000_000), ("µs", 1_000_000), ("ms", 1_000_000_000)];
const BYTE_UNITS: &[(&str, u64)] = &[("B", 1), ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30)];
const RATE_UNITS: &[(&str, u64)] = &[
    ("B/s", 1),
    ("KB/s", 1_000),
    ("MB/s", 1_000_000),
    ("GB/s", 1_000_000_000),
    ("KiB/s", 1 << 10),
    ("MiB/s", 1 << 20),
    ("GiB/s", 1 << 30),
];

fn check_range(v: u64, min: u64, max: u64, show: impl Fn(u64) -> String) -> Result<(), String> {
    if v < min || v > max {
        return Err(format!("{} is outside the range {}..={}", show(v), show(min), show(max)));
    }
    Ok(())
}

/// A non-negative integer, `_` separators allowed.
pub fn parse_uint(t: &str) -> Result<u64, String> {
    let digits = t.replace('_', "");
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!("`{t}` is not a non-negative integer"));
    }
    digits.parse().map_err(|_| format!("`{t}` is too large"))
}

/// A number with one of `units` (`1.5MiB`, `8.8ns`), exact in the base unit: decimals are
/// taken in integer arithmetic and must give a whole base unit. A bare integer is in the
/// base unit unless `unit_required`.
pub fn parse_scaled(t: &str, units: &[(&str, u64)], unit_required: bool, what: &str) -> Result<u64, String> {
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let num = num.replace('_', "");
    let scale = match unit.trim() {
        "" if unit_required && num != "0" => return Err(format!("missing unit in `{t}`: expected {what}")),
        "" => 1,
        u => units
            .iter()
            .find(|(n, _)| *n == u)
            .map(|(_, s)| *s)
            .ok_or_else(|| format!("unknown unit `{u}` in `{t}`: expected {what}"))?,
    };
    let (int, frac) = num.split_once('.').unwrap_or((&num, ""));
    if int.is_empty() && frac.is_empty() {
        return Err(format!("missing number in `{t}`: expected {what}"));
    }
    let bad = || format!("malformed number in `{t}`: expected {what}");
    if !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit()) {
        return Err(bad());
    }
    let int: u64 = if int.is_empty() { 0 } else { int.parse().map_err(|_| format!("`{t}` is too large"))? };
    let mut total = int.checked_mul(scale).ok_or_else(|| format!("`{t}` is too large"))?;
    // The fraction as a rational frac_num / 10^digits of the unit, which must be whole.
    let mut frac_num: u128 = 0;
    let mut den: u128 = 1;
    for c in frac.chars() {
        frac_num = frac_num * 10 + u128::from(c.to_digit(10).unwrap_or(0));
        den *= 10;
        if den > 1_000_000_000_000_000_000 {
            return Err(bad());
        }
    }
    let scaled = frac_num * u128::from(scale);
    if !scaled.is_multiple_of(den) {
        return Err(format!("`{t}` is finer than the field's resolution (one {})", units[0].0));
    }
    total = total.checked_add((scaled / den) as u64).ok_or_else(|| format!("`{t}` is too large"))?;
    Ok(total)
}

/// A name's characters: no dots or brackets, which separate a dotted path's parts.
pub fn check_name(t: &str) -> Result<(), String> {
    let ok = !t.is_empty()
        && t.len() <= 32
        && t.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | ' '))
        && !t.starts_with(|c: char| c.is_ascii_digit());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{t}` is not a valid name (1–32 letters, digits, `-`, `_`, `+` or spaces, not starting with a digit)"
        ))
    }
}

/// A duration's exact text: [`Ns`]'s display when it reads back exactly, else nanoseconds.
pub fn show_ns(n: u64) -> String {
    let s = Ns(n).to_string();
    if parse_duration(&s) == Ok(Ns(n)) {
        s
    } else {
        format!("{n}ns")
    }
}

/// Picoseconds as ns with up to three decimals (`1.2ns`, `65ns`, `0.5ns`).
pub fn show_fine(ps: u64) -> String {
    let (ns, frac) = (ps / 1000, ps % 1000);
    if frac == 0 {
        return format!("{ns}ns");
    }
    let f = format!("{frac:03}");
    format!("{ns}.{}ns", f.trim_end_matches('0'))
}

/// Bytes in the largest binary unit that keeps them whole.
pub fn show_bytes(b: u64) -> String {
    for (unit, scale) in BYTE_UNITS.iter().rev() {
        if b >= *scale && b.is_multiple_of(*scale) && *scale > 1 {
            return format!("{}{unit}", b / scale);
        }
    }
    format!("{b}B")
}

/// Bytes per second in the largest decimal unit, with up to three decimals when exact.
pub fn show_rate(r: u64) -> String {
    for (unit, scale) in [("GB/s", 1_000_000_000u64), ("MB/s", 1_000_000), ("KB/s", 1_000)] {
        if r >= scale && (r % scale).is_multiple_of(scale / 1000) {
            let frac = (r % scale) / (scale / 1000);
            if frac == 0 {
                return format!("{}{unit}", r / scale);
            }
            let f = format!("{frac:03}");
            return format!("{}.{}{unit}", r / scale, f.trim_end_matches('0'));
        }
    }
    format!("{r}B/s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_what_it_shows() {
        let cases: &[(Kind, &str, Val)] = &[
            (Kind::Duration { max: Ns::from_secs(1) }, "1.234567ms", Val::Num(1_234_567)),
            (Kind::Fine { max_ps: 1_000_000 }, "8.8ns", Val::Num(8_800)),
            (Kind::Fine { max_ps: 1_000_000 }, "0.5us", Val::Num(500_000)),
            (Kind::Bytes { min: 1, max: 1 << 40 }, "1.5MiB", Val::Num(3 << 19)),
            (Kind::Bytes { min: 1, max: 1 << 40 }, "576KiB", Val::Num(576 << 10)),
            (Kind::Rate { min: 1, max: u64::MAX }, "9.8GB/s", Val::Num(9_800_000_000)),
            (Kind::Rate { min: 1, max: u64::MAX }, "1GiB/s", Val::Num(1 << 30)),
            (Kind::Int { min: 1, max: 10, unit: "" }, "7", Val::Num(7)),
            (Kind::Bool, "true", Val::Num(1)),
            (Kind::Choice(&["a", "b"]), "b", Val::Num(1)),
            (Kind::List { min: 1, max: 9, unit: "" }, "[1, 2, 3]", Val::List(vec![1, 2, 3])),
            (Kind::Cpus, "0-3,8", Val::Cpus(CpuSet::parse_list("0-3,8").unwrap())),
            (Kind::Name, "C1E", Val::Text("C1E".into())),
        ];
        for (kind, text, val) in cases {
            assert_eq!(&kind.parse(text).unwrap(), val, "{text}");
            let shown = kind.show(val);
            assert_eq!(&kind.parse(&shown).unwrap(), val, "{text} shown as {shown}");
        }
        // 1.234567ms is not exact in Ns's display (three decimals): shown in ns instead.
        assert_eq!(show_ns(1_234_567), "1234567ns");
        assert_eq!(show_ns(1_200), "1.200us");
        assert_eq!(show_rate(14_400_000_000), "14.4GB/s");
        assert_eq!(show_bytes(5 << 20), "5MiB");
    }

    #[test]
    fn bad_values_are_refused_with_the_reason() {
        let fine = Kind::Fine { max_ps: 1_000_000 };
        assert!(fine.parse("1.2").unwrap_err().contains("missing unit"));
        assert!(fine.parse("0.0001ns").unwrap_err().contains("finer"));
        assert!(fine.parse("2us").unwrap_err().contains("outside the range"));
        let bytes = Kind::Bytes { min: 64, max: 1 << 30 };
        assert!(bytes.parse("32KB").unwrap_err().contains("unknown unit `KB`"));
        assert!(bytes.parse("1.3B").unwrap_err().contains("finer"));
        assert!(bytes.parse("2GiB").unwrap_err().contains("outside"));
        assert_eq!(bytes.parse("4096").unwrap(), Val::Num(4096));
        let rate = Kind::Rate { min: 1_000_000, max: u64::MAX };
        assert!(rate.parse("9.8").unwrap_err().contains("missing unit"));
        assert!(Kind::Int { min: 1, max: 1000, unit: "" }.parse("1001").unwrap_err().contains("1..=1000"));
        assert!(Kind::Bool.parse("maybe").is_err());
        assert!(Kind::Choice(&["menu"]).parse("ladder").unwrap_err().contains("menu"));
        assert!(Kind::List { min: 1, max: 10, unit: "" }.parse("1, 20").unwrap_err().contains("entry 1"));
        assert!(Kind::Name.parse("L1.d").is_err());
        assert!(Kind::Name.parse("3x").is_err());
        assert!(parse_scaled("99999999999999999999GiB", BYTE_UNITS, false, "").is_err());
    }
}
