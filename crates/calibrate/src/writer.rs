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
    data_sections(c, &mut out);
    let _ = writeln!(out, "\n# Consistency: each end-to-end path, host vs the sum of this model's charges along it:");
    for line in crate::consistency::report(&c.derived.paths).lines() {
        let _ = writeln!(out, "#   {line}");
    }
    out
}

/// The sysfs governor's name as the machine file's (`menu` by the kernel's major
/// version), or `None` for one the kernel model does not have (`ladder`).
fn idle_governor(sysfs: &str, kernel: &str) -> Option<&'static str> {
    let major: u32 = kernel.split_whitespace().nth(1).and_then(|r| r.split('.').next()?.parse().ok()).unwrap_or(6);
    match sysfs {
        "menu" if major >= 6 => Some("menu-6.18"),
        "menu" => Some("menu-5.15"),
        "teo" => Some("teo"),
        "haltpoll" => Some("haltpoll"),
        _ => None,
    }
}

/// `[idle]` from sysfs, with the measured exit as the deepest state's `exit_cost` — or,
/// on a guest (the `haltpoll` driver, `drivers/cpuidle/cpuidle-haltpoll.c`, loads only in
/// a KVM guest), the exits measured by idle length as the hypervisor's states, the halt's
/// own exit then being nothing beyond them.
fn idle_section(c: &Calibration) -> Result<String, String> {
    let idle = c.idle.as_ref().ok_or("no cpuidle driver in sysfs")?;
    let gov = idle_governor(&idle.governor, &c.host.kernel)
        .ok_or_else(|| format!("governor `{}` is not one the kernel model has", idle.governor))?;
    let deepest = idle.states.iter().rposition(|s| s.name != "POLL").ok_or("no non-polling idle state")?;
    let hv =
        if idle.driver == "haltpoll" { crate::data::hypervisor_states(&c.derived.data.idle_exits) } else { vec![] };
    let mut out = String::new();
    let _ = writeln!(out, "\n[idle]");
    let _ = writeln!(out, "# sysfs: driver `{}`, governor `{}`.", idle.driver, idle.governor);
    let _ = writeln!(out, "governor = \"{gov}\"");
    if gov == "haltpoll" {
        for (k, v) in &c.haltpoll {
            let _ = writeln!(out, "{k} = {v}");
        }
    }
    if !hv.is_empty() {
        let _ = writeln!(out, "# The hypervisor's governor is not visible from the guest: menu (v6.18) assumed.");
        let _ = writeln!(out, "hypervisor_governor = \"menu-6.18\"");
    }
    let _ = writeln!(out, "\n[[idle.driver]]\ncpus = \"0-{}\"", c.topology.cpus.len() - 1);
    for (i, st) in idle.states.iter().enumerate() {
        let _ = writeln!(out, "\n[[idle.driver.state]]\nname = \"{}\"", st.name);
        let _ = writeln!(
            out,
            "exit_latency = \"{}us\"\ntarget_residency = \"{}us\"",
            st.exit_latency_us, st.target_residency_us
        );
        if st.name == "POLL" {
            let _ = writeln!(out, "polling = true");
        }
        if i == deepest && hv.is_empty() {
            let _ = writeln!(out, "# The exit measured: {}.", exit_note(c));
            let _ = writeln!(out, "exit_cost = \"{}ns\"", c.derived.costs.idle_exit.0);
        } else if i == deepest {
            let _ =
                writeln!(out, "# A halt exits to the hypervisor: what leaving it costs is the hypervisor's state's.");
            let _ = writeln!(out, "exit_cost = \"0ns\"");
        }
    }
    for st in &hv {
        let _ = writeln!(out, "\n[[idle.hypervisor_state]]");
        let _ = writeln!(out, "# Repeated idles of {}: menu predicts that length.", fmt_ns(st.target_residency.0));
        let _ = writeln!(out, "name = \"{}\"", st.name);
        let _ = writeln!(out, "exit_latency = \"{}ns\"", st.exit_latency.0);
        let _ = writeln!(out, "target_residency = \"{}ns\"", st.target_residency.0);
        if let Some(e) = st.exit_cost {
            let _ = writeln!(out, "exit_cost = \"{}ns\"", e.0);
        }
    }
    Ok(out)
}

/// How the idle exit was measured, and how it varies with the idle length.
fn exit_note(c: &Calibration) -> String {
    let by: Vec<String> = c
        .derived
        .data
        .idle_exits
        .iter()
        .map(|e| format!("{} after {}", fmt_signed(e.exit_ns), fmt_ns(e.idle_ns)))
        .collect();
    let base = "idle_exit above (a wakeup of a CPU idle 2ms)";
    if by.is_empty() {
        base.into()
    } else {
        format!("{base}; by idle length: {}", by.join(", "))
    }
}

fn fmt_signed(ns: i64) -> String {
    if ns < 0 {
        format!("-{}", fmt_ns(ns.unsigned_abs()))
    } else {
        fmt_ns(ns as u64)
    }
}

/// Appends `section` if the file still loads with it; else a comment saying why it was
/// left generic (measurements that break the machine's checks, e.g. latencies not rising
/// outward on a disturbed host).
fn add_checked(out: &mut String, what: &str, section: Result<String, String>) {
    let why = section.and_then(|text| {
        let candidate = format!("{out}{text}");
        match schedlab_machine::parse_machine("calibrated", &candidate) {
            Ok(_) => {
                *out = candidate;
                Ok(())
            }
            Err(e) => Err(e.to_string()),
        }
    });
    if let Err(why) = why {
        let _ = writeln!(out, "\n# {what} left generic: {}.", why.replace('\n', " "));
    }
}

/// `[memory]` and `[[cache]]`: sysfs sizes and lines, the chase's latencies; inclusion
/// and replacement are not measured (the generic's).
fn cache_sections(c: &Calibration) -> Result<String, String> {
    let caches = c.derived.data.caches.as_ref().ok_or("sysfs does not list the generic hierarchy's three levels")?;
    let mut out = String::new();
    let _ = writeln!(out, "\n[memory]");
    match c.measurements.caches.memory {
        Some(m) => {
            let _ = writeln!(
                out,
                "# Pointer chase over {} × the LLC: {} ps per load (median of {}).",
                crate::measure::MEMORY_CHASE_LLCS,
                m.median,
                m.reps
            );
            let _ = writeln!(out, "latency = \"{}\"", ps_text(caches.memory.latency_ps));
        }
        None => {
            let _ = writeln!(out, "# Memory latency not measured (--quick): the generic value stays.");
        }
    }
    for (lv, (h, lat)) in caches.levels.iter().zip(&c.measurements.caches.levels) {
        let _ = writeln!(out, "\n[[cache]]");
        let _ = writeln!(out, "# sysfs: L{} of {} KiB, {}-byte lines, shared by CPUs {}; pointer chase over half of it (quick: a quarter): {} ps per load (median of {}). Inclusion and replacement: not measured, the generic's.", h.level, h.bytes >> 10, h.line, h.shared, lat.median, lat.reps);
        let _ = writeln!(out, "name = \"{}\"\nsize = \"{}KiB\"\nline = {}", lv.name, lv.size >> 10, lv.line);
        let scope = if lv.scope == schedlab_machine::CacheScope::Llc { "llc" } else { "core" };
        let _ = writeln!(out, "scope = \"{scope}\"\nlatency = \"{}\"", ps_text(lv.latency_ps));
        let inclusion = match lv.inclusion {
            schedlab_machine::Inclusion::Inclusive => "inclusive",
            schedlab_machine::Inclusion::Exclusive => "exclusive",
            schedlab_machine::Inclusion::Victim => "victim",
        };
        let replacement = match lv.replacement {
            schedlab_machine::Replacement::Lru => "lru",
            schedlab_machine::Replacement::Random => "random",
        };
        let _ = writeln!(out, "inclusion = \"{inclusion}\"\nreplacement = \"{replacement}\"");
    }
    Ok(out)
}

/// Picoseconds as a machine-file latency (`1.176ns`).
fn ps_text(ps: u64) -> String {
    format!("{}.{:03}ns", ps / 1000, ps % 1000)
}

/// `[lines]`, `[idle]`, `[mm]` and the frequency note.
fn data_sections(c: &Calibration, out: &mut String) {
    let d = &c.derived.data;
    let _ = writeln!(out, "\n[lines]");
    if d.lines.is_empty() {
        let _ = writeln!(out, "# Not measured: one CPU. The generic transfers stay.");
    }
    for l in &d.lines {
        let _ = writeln!(
            out,
            "# A counter bounced between CPUs {} and {}: {} per transfer.",
            l.a,
            l.b,
            crate::derive::show(l.transfer)
        );
        let _ = writeln!(out, "{} = \"{}ns\"", l.class, l.transfer.median);
    }
    // Farther classes the host has no pair for never apply to it; they are kept at the
    // generic value, raised where needed so that no class is cheaper than a nearer one
    // (the parser's check).
    let generic = schedlab_machine::Machine::new(
        "g",
        250,
        schedlab_machine::Topology::new(1, 1, 1, 1, None),
        c.derived.costs.clone(),
    )
    .lines;
    let classes = [
        ("smt", generic.smt),
        ("same_llc", generic.same_llc),
        ("other_llc", generic.other_llc),
        ("other_node", generic.other_node),
    ];
    let farthest = classes.iter().rposition(|k| d.lines.iter().any(|l| l.class == k.0));
    if let Some(f) = farthest {
        let mut floor = d.lines.iter().map(|l| l.transfer.median).max().unwrap_or(0);
        for (name, ns) in &classes[f + 1..] {
            floor = floor.max(ns.0);
            let _ = writeln!(
                out,
                "# No CPU pair of this class here: the generic {}, at least the nearer class.",
                fmt_ns(ns.0)
            );
            let _ = writeln!(out, "{name} = \"{floor}ns\"");
        }
    }
    add_checked(out, "[idle]", idle_section(c));
    add_checked(out, "[memory] and [[cache]]", cache_sections(c));
    let m = &c.measurements;
    let mm = &d.mm;
    let _ = writeln!(out, "\n[mm]");
    let _ = writeln!(out, "# `pcid` among /proc/cpuinfo's flags: {}.", c.host.pcid);
    let _ = writeln!(out, "pcid = {}", mm.pcid);
    let _ = writeln!(
        out,
        "# Pipe ping-pong on one CPU between processes, {}, − between threads, {}: the mm switch ({}ns raw).",
        crate::derive::show(m.process_pingpong),
        crate::derive::show(m.pingpong_local.one_way),
        d.mm_switch_raw
    );
    let _ = writeln!(out, "cr3_write = \"{}ns\"", mm.cr3_write.0);
    let (f, b) = (m.fork_small, m.fork_big);
    let _ = writeln!(
        out,
        "# fork + _exit + waitpid at {} and {} resident pages: slope of the parent's fork() ({} ps/page) and of the rest ({} ps/page).",
        f.pages, b.pages, d.per_page_ps.0, d.per_page_ps.1
    );
    let _ = writeln!(out, "fork_per_page = \"{}ns\"", mm.fork_per_page.0);
    let _ = writeln!(out, "exit_per_page = \"{}ns\"", mm.exit_per_page.0);
    let _ = writeln!(out, "\n# Frequency: {}.", crate::power::freq_note(&c.freq));
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
    let _ = writeln!(out, "\n{:<12} {:>10}  how", "data", "value");
    for l in &c.derived.data.lines {
        let _ = writeln!(
            out,
            "{:<12} {:>10}  line transfer CPU {} <-> CPU {}",
            format!("lines.{}", l.class),
            fmt_ns(l.transfer.median),
            l.a,
            l.b
        );
    }
    for e in &c.derived.data.idle_exits {
        let _ = writeln!(
            out,
            "{:<12} {:>10}  idle exit after {} idle (wakeup latency {})",
            "idle exit",
            fmt_signed(e.exit_ns),
            fmt_ns(e.idle_ns),
            fmt_ns(e.latency.median)
        );
    }
    let mm = &c.derived.data.mm;
    let _ = writeln!(
        out,
        "{:<12} {:>10}  process − thread ping-pong handoff, one CPU",
        "mm.cr3_write",
        fmt_ns(mm.cr3_write.0)
    );
    let _ = writeln!(out, "{:<12} {:>10}  fork() slope per resident page", "mm.fork_pp", fmt_ns(mm.fork_per_page.0));
    let _ =
        writeln!(out, "{:<12} {:>10}  exit + wait slope per resident page", "mm.exit_pp", fmt_ns(mm.exit_per_page.0));
    let _ = writeln!(out, "frequency: {}", crate::power::freq_note(&c.freq));
    let _ = writeln!(out, "\n{}", crate::consistency::report(&c.derived.paths));
    out
}
