//! The machine-file parser: spanned TOML → [`Machine`], every error located by file, line,
//! column and field. Each section's fields come from its [`Table`]; what a section does not
//! give keeps the generic default ([`Machine::new`]), an array section (`[[cache]]`,
//! `[[idle.driver]]`, `[[freq.domain]]`) given at all replaces the default list.

use crate::spec::{Field, Kind, Table, Val};
use crate::{
    CacheLevel, CacheScope, CostModel, Costs, FreqDomain, IdleDriver, IdleState, Inclusion, Machine, Replacement,
    Topology, CACHE_LEVEL, COSTS, FREQ, FREQ_DOMAIN, IDLE, IDLE_DRIVER, IDLE_STATE, LINES, MAX_CPUS, MEMORY, MM, NOISE,
};
use schedlab_sim::{Ns, SourceError};
use std::ops::Range;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// An error in a machine file, located by line and column.
pub type MachineError = SourceError;

type Value<'a> = Spanned<DeValue<'a>>;

/// The top-level keys, in the order the docs list them.
const ROOT_KEYS: &str = "name, hz, cost_model, topology, costs, memory, cache, lines, idle, freq, mm, noise";

/// Where each field was written, for errors found after parsing.
struct Cx<'t> {
    file: &'t str,
    text: &'t str,
    spans: Vec<(String, Range<usize>)>,
}

impl Cx<'_> {
    fn err(&self, span: Range<usize>, field: &str, msg: impl Into<String>) -> MachineError {
        SourceError::at(self.file, self.text, span.start, field, msg)
    }
    fn note(&mut self, path: &str, span: Range<usize>) {
        self.spans.push((path.to_string(), span));
    }
    /// The error for `field`, at the span of the field or of its nearest written ancestor
    /// (`freq.domain[0].capacity` not written: the domain).
    fn err_at(&self, field: &str, msg: String) -> MachineError {
        let mut p = field;
        loop {
            if let Some((_, s)) = self.spans.iter().rev().find(|(k, _)| k == p) {
                return self.err(s.clone(), field, msg);
            }
            match p.rfind(['.', '[']) {
                Some(i) => p = &p[..i],
                None => return self.err(0..0, field, msg),
            }
        }
    }
}

/// Parses a machine description (TOML).
///
/// ```toml
/// name = "mybox"
/// hz = 1000
/// [topology]
/// nodes = 1
/// llcs_per_node = 1
/// cores_per_llc = 4
/// threads_per_core = 2
/// [costs]
/// context_switch = "2us"
/// ```
pub fn parse_machine(file: &str, text: &str) -> Result<Machine, MachineError> {
    let mut cx = Cx { file, text, spans: Vec::new() };
    let doc =
        DeTable::parse(text).map_err(|e| cx.err(e.span().unwrap_or(0..0), "(syntax)", e.message().to_string()))?;
    let root = doc.get_ref();
    let mut name = file.to_string();
    let mut hz = 250u32;
    let mut topo = None;
    for (k, v) in root.iter() {
        match k.get_ref().as_ref() {
            "name" => {
                name = v.get_ref().as_str().ok_or_else(|| cx.err(v.span(), "name", "expected a string"))?.to_string()
            }
            "hz" => {
                let h = int(&cx, v, "hz")?;
                if !(1..=10_000).contains(&h) {
                    return Err(cx.err(v.span(), "hz", format!("HZ {h} out of range 1..=10000")));
                }
                hz = h as u32;
            }
            "topology" => topo = Some(topology(&cx, v)?),
            "cost_model" | "costs" | "memory" | "cache" | "lines" | "idle" | "freq" | "mm" | "noise" => {}
            other => return Err(cx.err(k.span(), other, format!("unknown field; expected one of {ROOT_KEYS}"))),
        }
    }
    let topo = topo.unwrap_or_else(|| Topology::new(1, 1, 1, 1, None));
    let mut m = Machine::new(name, hz, topo, Costs::default());
    let mut model = None;
    for (k, v) in root.iter() {
        let key = k.get_ref().as_ref();
        cx.note(key, v.span());
        match key {
            "costs" => apply(&COSTS, &mut m.costs, v, "costs", &mut cx, &[]).map(drop)?,
            "memory" => apply(&MEMORY, &mut m.caches.memory, v, "memory", &mut cx, &[]).map(drop)?,
            "mm" => apply(&MM, &mut m.mm, v, "mm", &mut cx, &[]).map(drop)?,
            "noise" => apply(&NOISE, &mut m.noise, v, "noise", &mut cx, &[]).map(drop)?,
            "lines" => lines(&mut m, v, &mut cx)?,
            "cache" => m.caches.levels = array(&CACHE_LEVEL, v, "cache", &mut cx, blank_level, &[], no_nested)?,
            "idle" => idle(&mut m, v, &mut cx)?,
            "freq" => freq(&mut m, v, &mut cx)?,
            "cost_model" => {
                let s = v.get_ref().as_str().ok_or_else(|| cx.err(v.span(), "cost_model", "expected a string"))?;
                model = Some(CostModel::parse(s).map_err(|e| cx.err(v.span(), "cost_model", e))?);
            }
            _ => {}
        }
    }
    if let Some(model) = model {
        m.set_cost_model(model);
    }
    m.size_cpusets();
    m.check().map_err(|(field, msg)| cx.err_at(&field, msg))?;
    Ok(m)
}

fn int(cx: &Cx<'_>, v: &Value<'_>, field: &str) -> Result<u64, MachineError> {
    match v.get_ref() {
        DeValue::Integer(i) => i
            .as_str()
            .parse::<u64>()
            .ok()
            .filter(|_| i.radix() == 10)
            .ok_or_else(|| cx.err(v.span(), field, "expected a non-negative integer")),
        _ => Err(cx.err(v.span(), field, "expected an integer")),
    }
}

fn topology(cx: &Cx<'_>, v: &Value<'_>) -> Result<Topology, MachineError> {
    let DeValue::Table(t) = v.get_ref() else {
        return Err(cx.err(v.span(), "topology", "expected a table"));
    };
    let mut shape = [1u64, 1, 1, 1];
    let mut distance = None;
    for (tk, tv) in t.iter() {
        let key = tk.get_ref().as_ref();
        let field = format!("topology.{key}");
        let idx = match key {
            "nodes" => 0,
            "llcs_per_node" => 1,
            "cores_per_llc" => 2,
            "threads_per_core" => 3,
            "numa_distance" => {
                distance = Some((numa_distance(cx, tv, &field)?, tv.span()));
                continue;
            }
            _ => {
                let msg = "unknown field; expected one of nodes, llcs_per_node, cores_per_llc, threads_per_core, numa_distance";
                return Err(cx.err(tk.span(), &field, msg));
            }
        };
        let n = int(cx, tv, &field)?;
        if n == 0 {
            return Err(cx.err(tv.span(), &field, "must be at least 1 (a machine needs CPUs)"));
        }
        shape[idx] = n;
    }
    let total = shape.iter().try_fold(1u64, |a, &b| a.checked_mul(b)).unwrap_or(u64::MAX);
    if total > MAX_CPUS as u64 {
        return Err(cx.err(v.span(), "topology", format!("{total} CPUs exceeds the limit of {MAX_CPUS}")));
    }
    let nodes = shape[0] as usize;
    let numa = match distance {
        Some((m, span)) => {
            if m.len() != nodes || m.iter().any(|r| r.len() != nodes) {
                return Err(cx.err(span, "topology.numa_distance", format!("must be a {nodes}x{nodes} matrix")));
            }
            Some(m)
        }
        None => None,
    };
    Ok(Topology::new(nodes, shape[1] as usize, shape[2] as usize, shape[3] as usize, numa))
}

fn numa_distance(cx: &Cx<'_>, tv: &Value<'_>, field: &str) -> Result<Vec<Vec<u32>>, MachineError> {
    let DeValue::Array(rows) = tv.get_ref() else {
        return Err(cx.err(tv.span(), field, "expected an array of arrays"));
    };
    let mut m = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let DeValue::Array(cols) = r.get_ref() else {
            return Err(cx.err(r.span(), field, "expected an array"));
        };
        if cols.len() > MAX_CPUS {
            return Err(cx.err(r.span(), field, "more columns than nodes"));
        }
        let mut row = Vec::new();
        for (j, c) in cols.iter().enumerate() {
            let d = int(cx, c, field)?;
            check_distance(i, j, d).map_err(|m| cx.err(c.span(), &format!("{field}[{i}][{j}]"), m))?;
            row.push(d as u32);
        }
        m.push(row);
    }
    Ok(m)
}

/// `LOCAL_DISTANCE` (`include/linux/topology.h`).
const LOCAL_DISTANCE: u64 = 10;

/// A SLIT entry as the kernel validates it (`drivers/acpi/numa/srat.c: slit_valid`, and
/// `numa_set_distance`, which refuses what does not fit in a `u8`): a node's distance to
/// itself is `LOCAL_DISTANCE`, to another node more than that and at most 255.
fn check_distance(i: usize, j: usize, d: u64) -> Result<(), String> {
    if i == j && d != LOCAL_DISTANCE {
        return Err(format!("a node's distance to itself is {LOCAL_DISTANCE} (LOCAL_DISTANCE), not {d}"));
    }
    if i != j && !(LOCAL_DISTANCE + 1..=255).contains(&d) {
        return Err(format!("distance {d} between two nodes is outside 11..=255 (a SLIT entry)"));
    }
    Ok(())
}

/// A scalar's text: strings as written, decimal integers, booleans.
fn scalar_text(v: &Value<'_>) -> Result<String, &'static str> {
    match v.get_ref() {
        DeValue::String(s) => Ok(s.to_string()),
        DeValue::Integer(i) if i.radix() == 10 => Ok(i.as_str().to_string()),
        DeValue::Integer(_) => Err("expected a decimal integer"),
        DeValue::Boolean(b) => Ok(b.to_string()),
        DeValue::Float(_) => Err("expected a string with its unit (e.g. \"1.2ns\") or an integer, not a float"),
        _ => Err("expected a value"),
    }
}

/// One field's value from the file.
fn value<T>(f: &Field<T>, v: &Value<'_>, path: &str, cx: &mut Cx<'_>) -> Result<Val, MachineError> {
    if let (Kind::List { .. }, DeValue::Array(items)) = (f.kind, v.get_ref()) {
        let mut out = Vec::with_capacity(items.len());
        for (j, item) in items.iter().enumerate() {
            let at = format!("{path}[{j}]");
            cx.note(&at, item.span());
            let DeValue::Integer(_) = item.get_ref() else {
                return Err(cx.err(item.span(), &at, "expected an integer"));
            };
            let text = scalar_text(item).map_err(|m| cx.err(item.span(), &at, m))?;
            out.extend(f.kind.parse(&text).map_err(|m| cx.err(item.span(), &at, m))?.list());
        }
        return Ok(Val::List(out));
    }
    let text = scalar_text(v).map_err(|m| cx.err(v.span(), path, m))?;
    f.parse_text(&text).map_err(|m| cx.err(v.span(), path, m))
}

/// The extra keys a section handles itself (`[lines.distance]`, `[[idle.driver]]`).
type Extra<'v, 'a> = Vec<(&'v str, Range<usize>, &'v Value<'a>)>;

/// Applies the keys of table `v` to `t` through `tab`; returns the fields given and the
/// keys listed in `special`, for the caller.
fn apply<'v, 'a, T>(
    tab: &Table<T>,
    t: &mut T,
    v: &'v Value<'a>,
    path: &str,
    cx: &mut Cx<'_>,
    special: &[&str],
) -> Result<(Vec<&'static str>, Extra<'v, 'a>), MachineError> {
    let DeValue::Table(table) = v.get_ref() else {
        return Err(cx.err(v.span(), path, "expected a table"));
    };
    let mut given = Vec::new();
    let mut extra = Vec::new();
    for (k, fv) in table.iter() {
        let key: &'v str = k.get_ref().as_ref();
        let at = format!("{path}.{key}");
        if special.contains(&key) {
            extra.push((key, k.span(), fv));
            continue;
        }
        let f = tab.field(key).ok_or_else(|| cx.err(k.span(), &at, tab.unknown(key)))?;
        cx.note(&at, fv.span());
        let val = value(f, fv, &at, cx)?;
        (f.set)(t, val);
        given.push(f.name);
    }
    Ok((given, extra))
}

/// An array of tables: each element from `blank()`, its fields through `tab`, required ones
/// checked; `nested` gets the keys listed in `special` (an idle driver's `state`).
fn array<T>(
    tab: &Table<T>,
    v: &Value<'_>,
    path: &str,
    cx: &mut Cx<'_>,
    blank: fn() -> T,
    special: &[&str],
    mut nested: impl FnMut(&mut T, &str, &Value<'_>, &mut Cx<'_>) -> Result<(), MachineError>,
) -> Result<Vec<T>, MachineError> {
    let DeValue::Array(items) = v.get_ref() else {
        return Err(cx.err(v.span(), path, format!("expected an array of tables ([[{path}]])")));
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = format!("{path}[{i}]");
        cx.note(&at, item.span());
        let mut t = blank();
        let (given, extra) = apply(tab, &mut t, item, &at, cx, special)?;
        for (key, _, ev) in extra {
            nested(&mut t, &format!("{at}.{key}"), ev, cx)?;
        }
        if let Some(f) = tab.fields.iter().find(|f| f.required() && !given.contains(&f.name)) {
            return Err(cx.err(item.span(), &format!("{at}.{}", f.name), format!("missing `{}`", f.name)));
        }
        out.push(t);
    }
    Ok(out)
}

fn no_nested<T>(_: &mut T, _: &str, _: &Value<'_>, _: &mut Cx<'_>) -> Result<(), MachineError> {
    Ok(())
}

fn blank_level() -> CacheLevel {
    CacheLevel {
        name: String::new(),
        size: 0,
        line: 64,
        scope: CacheScope::Core,
        latency_ps: 0,
        inclusion: Inclusion::Inclusive,
        replacement: Replacement::Lru,
        bandwidth: None,
    }
}

fn blank_state() -> IdleState {
    IdleState {
        name: String::new(),
        exit_latency: Ns(0),
        target_residency: Ns(0),
        exit_cost: None,
        power_mw: None,
        polling: false,
        tlb_flushed: false,
    }
}

fn blank_driver() -> IdleDriver {
    IdleDriver { cpus: crate::CpuSet::empty(1), states: Vec::new() }
}

fn blank_domain() -> FreqDomain {
    FreqDomain {
        cpus: crate::CpuSet::empty(1),
        khz: Vec::new(),
        power_uw: Vec::new(),
        transition_latency: Ns(0),
        transition_delay_us: None,
        capacity: None,
        dmips_mhz: None,
        scale_ref_khz: None,
    }
}

fn lines(m: &mut Machine, v: &Value<'_>, cx: &mut Cx<'_>) -> Result<(), MachineError> {
    let (_, extra) = apply(&LINES, &mut m.lines, v, "lines", cx, &["distance"])?;
    for (_, span, dv) in extra {
        let DeValue::Table(t) = dv.get_ref() else {
            return Err(cx.err(span, "lines.distance", "expected a table: [lines.distance] with 16 = \"82ns\""));
        };
        let mut by = Vec::new();
        for (k, ev) in t.iter() {
            let at = format!("lines.distance.{}", k.get_ref());
            cx.note(&at, ev.span());
            let d =
                k.get_ref().parse::<u32>().map_err(|_| cx.err(k.span(), &at, "expected a SLIT distance (11..=255)"))?;
            let text = scalar_text(ev).map_err(|msg| cx.err(ev.span(), &at, msg))?;
            let ns = crate::lines::DISTANCE_ENTRY.parse(&text).map_err(|msg| cx.err(ev.span(), &at, msg))?;
            by.push((d, Ns(ns.num())));
        }
        by.sort_by_key(|e| e.0);
        m.lines.by_distance = by;
    }
    Ok(())
}

fn idle(m: &mut Machine, v: &Value<'_>, cx: &mut Cx<'_>) -> Result<(), MachineError> {
    let (_, extra) = apply(&IDLE, &mut m.idle, v, "idle", cx, &["driver", "hypervisor_state"])?;
    for (key, _, dv) in extra {
        if key == "hypervisor_state" {
            m.idle.hypervisor_states =
                array(&IDLE_STATE, dv, "idle.hypervisor_state", cx, blank_state, &[], no_nested)?;
            continue;
        }
        m.idle.drivers = array(&IDLE_DRIVER, dv, "idle.driver", cx, blank_driver, &["state"], |d, at, sv, cx| {
            d.states = array(&IDLE_STATE, sv, at, cx, blank_state, &[], no_nested)?;
            Ok(())
        })?;
    }
    Ok(())
}

fn freq(m: &mut Machine, v: &Value<'_>, cx: &mut Cx<'_>) -> Result<(), MachineError> {
    let (_, extra) = apply(&FREQ, &mut m.freq, v, "freq", cx, &["domain"])?;
    for (_, _, dv) in extra {
        m.freq.domains = array(&FREQ_DOMAIN, dv, "freq.domain", cx, blank_domain, &[], no_nested)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parses_a_machine() {
        let m = parse_machine(
            "m.toml",
            "name = \"box\"\nhz = 1000\n[topology]\ncores_per_llc = 4\nthreads_per_core = 2\n[costs]\ncontext_switch = \"2us\"\n",
        )
        .unwrap();
        assert_eq!(m.nr_cpus(), 8);
        assert_eq!(m.tick_ns().0, 1_000_000);
        assert_eq!(m.costs.context_switch.0, 2_000);
    }
    #[test]
    fn zero_cpus_is_an_error_with_location() {
        let e = parse_machine("m.toml", "[topology]\ncores_per_llc = 0\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 17));
        assert_eq!(e.field, "topology.cores_per_llc");
    }
    #[test]
    fn numa_distances_are_slit_entries() {
        let topo = |d: &str| format!("[topology]\nnodes = 2\nnuma_distance = [[10, {d}], [21, 10]]\n");
        assert!(parse_machine("m.toml", &topo("21")).is_ok());
        for bad in ["4294967317", "256", "10", "0"] {
            let e = parse_machine("m.toml", &topo(bad)).unwrap_err();
            assert_eq!(e.field, "topology.numa_distance[0][1]", "{bad}");
            assert_eq!((e.line, e.column), (3, 23), "{bad}");
            assert!(e.message.contains(bad) && e.message.contains("11..=255"), "{e}");
        }
        let e = parse_machine("m.toml", "[topology]\nnodes = 2\nnuma_distance = [[12, 21], [21, 10]]\n").unwrap_err();
        assert!(e.message.contains("LOCAL_DISTANCE"), "{e}");
    }
    #[test]
    fn unknown_cost_and_missing_unit() {
        let e = parse_machine("m.toml", "[costs]\nwarp = \"1us\"\n").unwrap_err();
        assert!(e.message.contains("unknown cost"));
        assert_eq!((e.line, e.column, e.field.as_str()), (2, 1, "costs.warp"));
        let e = parse_machine("m.toml", "[costs]\nfork = \"15\"\n").unwrap_err();
        assert!(e.message.contains("missing unit"), "{e}");
        assert_eq!((e.line, e.column), (2, 8));
    }
}
