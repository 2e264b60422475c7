//! Dotted names of machine values (`cache.L2.size`, `idle.driver[0].state.C6.exit_latency`):
//! setting one, and listing them all.

use crate::spec::{parse_uint, Field, Table};
use crate::{
    CostModel, Machine, CACHE_LEVEL, COSTS, FREQ, FREQ_DOMAIN, IDLE, IDLE_DRIVER, IDLE_STATE, LINES, MEMORY, MM, NOISE,
};
use schedlab_sim::Ns;

/// One part of a dotted name: `driver[0]` is key `driver`, index 0.
struct Seg<'a> {
    key: &'a str,
    idx: Option<usize>,
}

fn segs(name: &str) -> Result<Vec<Seg<'_>>, String> {
    name.split('.')
        .map(|part| match part.split_once('[') {
            None if !part.is_empty() => Ok(Seg { key: part, idx: None }),
            Some((key, rest)) if !key.is_empty() => {
                let i = rest.strip_suffix(']').ok_or_else(|| format!("unclosed `[` in `{part}`"))?;
                Ok(Seg { key, idx: Some(parse_uint(i).map_err(|e| format!("index in `{part}`: {e}"))? as usize) })
            }
            _ => Err(format!("empty part in `{name}`")),
        })
        .collect()
}

/// The element of `items` a dotted name selects: `cache[1]` (`idx`) or `cache.L2` (a name,
/// the next part), and the parts after it.
fn pick<'s, 'a, T>(
    items: &'s mut [T],
    what: &str,
    idx: Option<usize>,
    rest: &'a [Seg<'a>],
    name_of: impl Fn(&T) -> &str,
) -> Result<(&'s mut T, &'a [Seg<'a>]), String> {
    let n = items.len();
    match idx {
        Some(i) => items.get_mut(i).map(|t| (t, rest)).ok_or_else(|| format!("there is no {what}[{i}] ({n} defined)")),
        None => {
            let Some(first) = rest.first() else { return Err(format!("which {what}? write {what}[N] or {what}.NAME")) };
            let i = items
                .iter()
                .position(|t| name_of(t) == first.key)
                .ok_or_else(|| format!("there is no {what} named `{}`", first.key))?;
            Ok((&mut items[i], &rest[1..]))
        }
    }
}

/// Sets `field` (the last part) of `t` through `table`.
fn leaf<T>(table: &Table<T>, t: &mut T, rest: &[Seg<'_>], value: &str) -> Result<(), String> {
    match rest {
        [Seg { key, idx: None }] => table.set(t, key, value),
        _ => Err(format!("expected one of {}.{{{}}}", table.section, table.names().join(", "))),
    }
}

pub fn set(m: &mut Machine, name: &str, value: &str) -> Result<(), String> {
    let s = segs(name)?;
    let rest = &s[1..];
    match (s[0].key, s[0].idx) {
        ("cost_model", None) if rest.is_empty() => m.set_cost_model(CostModel::parse(value)?),
        ("hz", None) if rest.is_empty() => {
            let hz = parse_uint(value.trim())?;
            if !(1..=10_000).contains(&hz) {
                return Err(format!("HZ {hz} out of range 1..=10000"));
            }
            m.hz = hz as u32;
        }
        ("costs" | "cost", None) => leaf(&COSTS, &mut m.costs, rest, value)?,
        ("memory", None) => leaf(&MEMORY, &mut m.caches.memory, rest, value)?,
        ("mm", None) => leaf(&MM, &mut m.mm, rest, value)?,
        ("noise", None) if rest.is_empty() => set_noise(m, value)?,
        ("noise", None) => leaf(&NOISE, &mut m.noise, rest, value)?,
        ("lines", None) => match rest {
            [Seg { key: "distance", idx: None }, Seg { key: d, idx: None }] => set_distance(m, d, value)?,
            _ => leaf(&LINES, &mut m.lines, rest, value)?,
        },
        ("cache", idx) => {
            let (lv, rest) = pick(&mut m.caches.levels, "cache", idx, rest, |l| &l.name)?;
            leaf(&CACHE_LEVEL, lv, rest, value)?
        }
        ("idle", None) => match rest {
            [Seg { key: "driver", idx }, more @ ..] => set_idle_driver(m, *idx, more, value)?,
            [Seg { key: "hypervisor_state", idx }, more @ ..] => {
                let (st, more) = pick(&mut m.idle.hypervisor_states, "hypervisor_state", *idx, more, |s| &s.name)?;
                leaf(&IDLE_STATE, st, more, value)?
            }
            _ => leaf(&IDLE, &mut m.idle, rest, value)?,
        },
        ("freq", None) => match rest {
            [Seg { key: "domain", idx }, more @ ..] => {
                let (d, more) = pick(&mut m.freq.domains, "freq.domain", *idx, more, |_| "")?;
                leaf(&FREQ_DOMAIN, d, more, value)?
            }
            _ => leaf(&FREQ, &mut m.freq, rest, value)?,
        },
        _ => {
            return Err(
                "unknown name; expected cost_model, hz, costs.*, memory.*, cache.*, lines.*, idle.*, freq.*, mm.*, noise or noise.*"
                    .into(),
            )
        }
    }
    Ok(())
}

/// `noise=none` (`--noise none`): every source off; `noise=on`: the machine's own noise
/// (nothing changes).
fn set_noise(m: &mut Machine, value: &str) -> Result<(), String> {
    match value.trim() {
        "none" => m.noise = crate::Noise::NONE,
        "on" => {}
        v => return Err(format!("`{v}` is not one of none, on (or set noise.FIELD)")),
    }
    Ok(())
}

fn set_distance(m: &mut Machine, d: &str, value: &str) -> Result<(), String> {
    let dist = parse_uint(d).map_err(|e| format!("SLIT distance: {e}"))?;
    let dist = u32::try_from(dist).map_err(|_| format!("SLIT distance {dist} is outside 11..=255"))?;
    let ns = Ns(crate::lines::DISTANCE_ENTRY.parse(value.trim())?.num());
    let by = &mut m.lines.by_distance;
    match by.iter_mut().find(|(k, _)| *k == dist) {
        Some(e) => e.1 = ns,
        None => {
            by.push((dist, ns));
            by.sort_by_key(|e| e.0);
        }
    }
    Ok(())
}

fn set_idle_driver(m: &mut Machine, idx: Option<usize>, rest: &[Seg<'_>], value: &str) -> Result<(), String> {
    let Some(i) = idx else { return Err("which driver? write idle.driver[N]".into()) };
    let n = m.idle.drivers.len();
    let d = m.idle.drivers.get_mut(i).ok_or_else(|| format!("there is no idle.driver[{i}] ({n} defined)"))?;
    match rest {
        [Seg { key: "state", idx }, more @ ..] => {
            let (st, more) = pick(&mut d.states, "state", *idx, more, |s| &s.name)?;
            leaf(&IDLE_STATE, st, more, value)
        }
        _ => leaf(&IDLE_DRIVER, d, rest, value),
    }
}

fn push<T>(out: &mut Vec<(String, String)>, prefix: &str, table: &Table<T>, t: &T) {
    for f in table.fields {
        out.push((format!("{prefix}.{}", f.name), show(f, t)));
    }
}

fn show<T>(f: &Field<T>, t: &T) -> String {
    f.kind.show(&(f.get)(t))
}

pub fn fields(m: &Machine) -> Vec<(String, String)> {
    let mut out =
        vec![("cost_model".to_string(), m.cost_model.name().to_string()), ("hz".to_string(), m.hz.to_string())];
    push(&mut out, "costs", &COSTS, &m.costs);
    push(&mut out, "memory", &MEMORY, &m.caches.memory);
    for (i, lv) in m.caches.levels.iter().enumerate() {
        push(&mut out, &format!("cache[{i}]"), &CACHE_LEVEL, lv);
    }
    push(&mut out, "lines", &LINES, &m.lines);
    for (d, ns) in &m.lines.by_distance {
        out.push((format!("lines.distance.{d}"), crate::spec::show_ns(ns.0)));
    }
    push(&mut out, "idle", &IDLE, &m.idle);
    for (i, d) in m.idle.drivers.iter().enumerate() {
        push(&mut out, &format!("idle.driver[{i}]"), &IDLE_DRIVER, d);
        for (j, s) in d.states.iter().enumerate() {
            push(&mut out, &format!("idle.driver[{i}].state[{j}]"), &IDLE_STATE, s);
        }
    }
    for (j, s) in m.idle.hypervisor_states.iter().enumerate() {
        push(&mut out, &format!("idle.hypervisor_state[{j}]"), &IDLE_STATE, s);
    }
    push(&mut out, "freq", &FREQ, &m.freq);
    for (i, d) in m.freq.domains.iter().enumerate() {
        push(&mut out, &format!("freq.domain[{i}]"), &FREQ_DOMAIN, d);
    }
    push(&mut out, "mm", &MM, &m.mm);
    push(&mut out, "noise", &NOISE, &m.noise);
    out
}
