//! Rendering a calibration: the commented machine file (TOML) and the measured table.

use crate::derive::{fmt_ns, CostRow, Source};
use crate::Calibration;
use std::fmt::Write;

/// A row's value as the machine file writes it.
fn value_text(row: &CostRow) -> String {
    if row.key == "pipe_byte_ps" {
        row.value.to_string()
    } else {
        format!("\"{}ns\"", row.value)
    }
}

/// A row's value for people.
fn value_human(row: &CostRow) -> String {
    if row.key == "pipe_byte_ps" {
        format!("{}ps/B", row.value)
    } else {
        fmt_ns(row.value)
    }
}

fn source_note(row: &CostRow) -> String {
    match row.source {
        Source::Measured => String::new(),
        Source::Floored { raw } => format!(" [raised to the sane minimum from {raw}ns]"),
        Source::Ceiled { raw } => {
            format!(" [lowered to the sane maximum from {raw}ns: the host was busy; calibrate again on a quiet one]")
        }
        Source::Default => " [default kept]".into(),
        Source::Scaled { from } => format!(" [default scaled as {from}]"),
    }
}

/// How HZ was found, and the jiffies cross-check.
pub fn hz_note(c: &Calibration) -> String {
    let t = c.tick;
    let base = format!("HZ = 1s / clock_getres(CLOCK_MONOTONIC_COARSE) = 1s / {}ns (TICK_NSEC)", t.getres_ns);
    match t.jiffies {
        Some((j, ns)) if ns > 0 => {
            let rate = j as f64 * 1e9 / ns as f64;
            let verdict = if (rate - c.hz as f64).abs() <= c.hz as f64 * 0.1 { "agrees" } else { "DISAGREES" };
            format!("{base}; jiffies advanced {j} in {} (/proc/timer_list): {rate:.1}/s, which {verdict}", fmt_ns(ns))
        }
        _ => format!("{base}; /proc/timer_list unreadable, jiffies not counted"),
    }
}

/// A one-line description of the host topology.
fn topology_line(c: &Calibration) -> String {
    let t = &c.topology;
    let all: Vec<String> = t.cpus.iter().map(|x| x.cpu.to_string()).collect();
    let first = &t.cpus[0];
    let level = if first.llc_level > 0 { format!("L{}", first.llc_level) } else { "package (no cache info)".into() };
    format!(
        "{} online CPUs ({}), {} NUMA node(s); CPU {} shares its {level} with {} and its core with {}",
        t.cpus.len(),
        all.join(","),
        t.nodes.len(),
        first.cpu,
        first.llc,
        first.smt
    )
}

fn header(c: &Calibration, out: &mut String) {
    let mode = if c.quick { "--quick" } else { "normal" };
    let _ = writeln!(out, "# Machine file for host `{}`, written by `schedlab calibrate` ({mode} mode).", c.name);
    let _ = writeln!(out, "# Kernel {}; CPU {}.", c.host.kernel, c.host.cpu_model);
    let b = c.measurements.cpus;
    let others: String = [b.b, b.far].iter().flatten().map(|x| format!(", {x}")).collect();
    let nice = if c.boosted { "nice -20" } else { "nice 0 (no CAP_SYS_NICE)" };
    let _ = writeln!(out, "# Benchmarks ran on CPUs {}{others} at {nice}. Every value is the median of the", b.a);
    let _ = writeln!(out, "# repetitions noted; docs/machine.md describes each cost and how calibrate measures it.");
    let _ = writeln!(out, "name = \"{}\"", c.name);
    let _ = writeln!(out, "# {}", hz_note(c));
    let _ = writeln!(out, "hz = {}", c.hz);
}

fn topology(c: &Calibration, out: &mut String) {
    let s = &c.shape;
    let _ = writeln!(out, "\n[topology]");
    let _ = writeln!(out, "# From sysfs: {}.", topology_line(c));
    if !s.numbering_matches {
        let _ =
            writeln!(out, "# The host numbers its CPUs differently: workload affinity lists use schedlab's numbering.");
    }
    let _ = writeln!(out, "nodes = {}", s.nodes);
    let _ = writeln!(out, "llcs_per_node = {}", s.llcs_per_node);
    let _ = writeln!(out, "cores_per_llc = {}", s.cores_per_llc);
    let _ = writeln!(out, "threads_per_core = {}", s.threads_per_core);
    let rows: Vec<String> = s
        .numa_distance
        .iter()
        .map(|r| format!("[{}]", r.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")))
        .collect();
    let _ = writeln!(out, "numa_distance = [{}]", rows.join(", "));
}

/// The machine file: TOML with a comment above every value saying how it was measured.
pub fn machine_file(c: &Calibration) -> String {
    let mut out = String::new();
    header(c, &mut out);
    topology(c, &mut out);
    let _ = writeln!(out, "\n[costs]");
    for row in &c.derived.rows {
        let _ = writeln!(out, "# {}{}", row.how, source_note(row));
        let _ = writeln!(out, "{} = {}", row.key, value_text(row));
    }
    let _ = writeln!(out, "# Not measured (a switch of the model): cross-node re-warm scales with the SLIT distance.");
    let _ = writeln!(out, "numa_scaled = {}", c.derived.costs.numa_scaled);
    let fields = c.derived.costs.fields();
    for key in crate::derive::UNMEASURED {
        let why = if *key == "smt_factor" {
            "Not measured (the benchmarks run on separate cores): the default"
        } else {
            "Not measured: inside the path costs measured above, so zero here"
        };
        let value = &fields.iter().find(|f| f.0 == *key).expect("every unmeasured key is a cost").1;
        let plain = matches!(*key, "smt_factor" | "ttwu_lines");
        let _ = writeln!(out, "# {why}.");
        let _ = if plain { writeln!(out, "{key} = {value}") } else { writeln!(out, "{key} = \"{value}\"") };
    }
    let _ =
        writeln!(out, "\n# Checks, host vs this model (composite benchmarks the model does not fit by construction):");
    for ch in &c.derived.checks {
        let model = ch.model_ns.map_or("not modelled".into(), fmt_ns);
        let _ = writeln!(out, "#   {}: host {}, model {model}", ch.what, fmt_ns(ch.host_ns));
    }
    out
}

/// The measured table for the terminal.
pub fn table(c: &Calibration) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "host `{}`: {}", c.name, topology_line(c));
    let s = &c.shape;
    let _ = writeln!(
        out,
        "machine: {} node(s) × {} LLC(s) × {} core(s) × {} thread(s), HZ {}",
        s.nodes, s.llcs_per_node, s.cores_per_llc, s.threads_per_core, c.hz
    );
    let _ = writeln!(out, "\n{:<18} {:>10}  how", "cost", "value");
    for row in &c.derived.rows {
        let _ = writeln!(out, "{:<18} {:>10}  {}{}", row.key, value_human(row), row.how, source_note(row));
    }
    let _ = writeln!(out, "\n{:<72} {:>10} {:>10}", "check", "host", "model");
    for ch in &c.derived.checks {
        let model = ch.model_ns.map_or("-".into(), fmt_ns);
        let _ = writeln!(out, "{:<72} {:>10} {:>10}", ch.what, fmt_ns(ch.host_ns), model);
    }
    out
}
