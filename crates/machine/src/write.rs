//! A machine as a machine file (`Machine::to_toml`): every value, in the syntax
//! `parse_machine` reads.

use crate::spec::{show_ns, Kind, Table, Val};
use crate::{Machine, CACHE_LEVEL, COSTS, FREQ, FREQ_DOMAIN, IDLE, IDLE_DRIVER, IDLE_STATE, LINES, MEMORY, MM, NOISE};
use std::fmt::Write as _;

/// A TOML basic string.
pub fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A value as TOML: numbers, booleans and lists bare, the rest as strings.
fn toml_value(kind: Kind, v: &Val) -> String {
    let shown = kind.show(v);
    match kind {
        Kind::Int { .. } | Kind::Bool | Kind::List { .. } => shown,
        _ => quoted(&shown),
    }
}

/// `key = value` lines of `t`'s fields; absent optional fields are left out.
fn table<T>(out: &mut String, tab: &Table<T>, t: &T) {
    for f in tab.fields {
        let v = (f.get)(t);
        if v != Val::Absent {
            let _ = writeln!(out, "{} = {}", f.name, toml_value(f.kind, &v));
        }
    }
}

pub fn machine_file(m: &Machine) -> String {
    let mut out = String::new();
    let t = &m.topology;
    let _ = writeln!(out, "name = {}\nhz = {}\ncost_model = {}", quoted(&m.name), m.hz, quoted(m.cost_model.name()));
    let rows: Vec<String> = t
        .numa_distance
        .iter()
        .map(|r| format!("[{}]", r.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")))
        .collect();
    let _ = writeln!(
        out,
        "\n[topology]\nnodes = {}\nllcs_per_node = {}\ncores_per_llc = {}\nthreads_per_core = {}\nnuma_distance = [{}]",
        t.nodes,
        t.llcs_per_node,
        t.cores_per_llc,
        t.threads_per_core,
        rows.join(", ")
    );
    out.push_str("\n[costs]\n");
    table(&mut out, &COSTS, &m.costs);
    out.push_str("\n[memory]\n");
    table(&mut out, &MEMORY, &m.caches.memory);
    for lv in &m.caches.levels {
        out.push_str("\n[[cache]]\n");
        table(&mut out, &CACHE_LEVEL, lv);
    }
    out.push_str("\n[lines]\n");
    table(&mut out, &LINES, &m.lines);
    if !m.lines.by_distance.is_empty() {
        out.push_str("\n[lines.distance]\n");
        for (d, ns) in &m.lines.by_distance {
            let _ = writeln!(out, "{d} = {}", quoted(&show_ns(ns.0)));
        }
    }
    out.push_str("\n[idle]\n");
    table(&mut out, &IDLE, &m.idle);
    for d in &m.idle.drivers {
        out.push_str("\n[[idle.driver]]\n");
        table(&mut out, &IDLE_DRIVER, d);
        for s in &d.states {
            out.push_str("\n[[idle.driver.state]]\n");
            table(&mut out, &IDLE_STATE, s);
        }
    }
    for s in &m.idle.hypervisor_states {
        out.push_str("\n[[idle.hypervisor_state]]\n");
        table(&mut out, &IDLE_STATE, s);
    }
    out.push_str("\n[freq]\n");
    table(&mut out, &FREQ, &m.freq);
    for d in &m.freq.domains {
        out.push_str("\n[[freq.domain]]\n");
        table(&mut out, &FREQ_DOMAIN, d);
    }
    out.push_str("\n[mm]\n");
    table(&mut out, &MM, &m.mm);
    out.push_str("\n[noise]\n");
    table(&mut out, &NOISE, &m.noise);
    out
}
