//! Pure renderers of [`RunRecord`]s: JSON, CSV and text (one run, or several side by side).
//!
//! Architecture Invariant: renderers take records and return strings; they do no I/O.

#![forbid(unsafe_code)]

pub mod explain;
pub mod header;
// Figures need plotters, which on wasm32 needs wasm-bindgen (the playground draws its own).
#[cfg(not(target_arch = "wasm32"))]
pub mod html;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod perf_sched;
pub mod perfetto;
#[cfg(not(target_arch = "wasm32"))]
pub mod plots;
pub mod replay;
mod study;
pub mod text_table;
pub mod timeline;

pub use study::{completion, group_of, overlap, runtime_between, study_conclusion, study_text, study_text_with};

use schedlab_metrics::RunRecord;
use std::fmt::Write;
pub use text_table::{escape, table};

/// JSON (schema documented in `docs/report-format.md`).
pub fn json(r: &RunRecord) -> String {
    serde_json::to_string_pretty(r).expect("records serialise") + "\n"
}

/// Several runs as one JSON array (for `compare --format json`).
pub fn json_many(rs: &[RunRecord]) -> String {
    serde_json::to_string_pretty(rs).expect("records serialise") + "\n"
}

/// Columns of the per-task CSV ([`csv`]), documented in `docs/report-format.md`.
pub const CSV_HEADER: [&str; 17] = [
    "scheduler",
    "name",
    "tid",
    "nice",
    "start_ns",
    "runtime_ns",
    "wait_ns",
    "sleep_ns",
    "switches_voluntary",
    "switches_involuntary",
    "migrations",
    "wakeups",
    "lat_p50_ns",
    "lat_p90_ns",
    "lat_p99_ns",
    "lat_max_ns",
    "exit_ns",
];

/// Per-task CSV (RFC 4180 through the `csv` crate: a name holding commas, quotes or line
/// breaks is quoted, so every row keeps its columns).
pub fn csv(r: &RunRecord) -> String {
    csv_many(std::slice::from_ref(r))
}

/// The per-task rows of several runs under one header (`compare --format csv`).
pub fn csv_many(rs: &[RunRecord]) -> String {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(CSV_HEADER).expect("writing to memory");
    for row in task_rows(rs) {
        w.write_record(row).expect("writing to memory");
    }
    String::from_utf8(w.into_inner().expect("writing to memory")).expect("UTF-8 fields")
}

/// The cells of the per-task table ([`CSV_HEADER`]'s columns), every run's tasks in turn.
pub fn task_rows(rs: &[RunRecord]) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for r in rs {
        for t in &r.tasks {
            let l = &t.wakeup_latency_ns;
            let n = |x: u64| x.to_string();
            rows.push(vec![
                r.scheduler.name.clone(),
                t.name.clone(),
                t.tid.to_string(),
                t.nice.to_string(),
                n(t.start_ns),
                n(t.runtime_ns),
                n(t.wait_ns),
                n(t.sleep_ns),
                n(t.switches_voluntary),
                n(t.switches_involuntary),
                n(t.migrations),
                n(t.wakeups),
                n(l.p50),
                n(l.p90),
                n(l.p99),
                n(l.max),
                t.exit_ns.map(|e| e.to_string()).unwrap_or_default(),
            ]);
        }
    }
    rows
}

/// The machine's `HZ`, `?` when a host run could not read it.
fn hz(r: &RunRecord) -> String {
    r.machine.hz.map_or_else(|| "?".into(), |h| h.to_string())
}

fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.2}%", part as f64 * 100.0 / whole as f64)
    }
}

/// Task rows, grouped by name prefix (`sender.17` → `sender`) when a run has many tasks.
struct Group {
    name: String,
    count: usize,
    runtime: u64,
    wait: u64,
    sleep: u64,
    vol: u64,
    invol: u64,
    migr: u64,
    p99_max: u64,
    max: u64,
    last_exit: Option<u64>,
    all_exited: bool,
}

fn groups(r: &RunRecord, group: bool) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for t in &r.tasks {
        let key = if group { t.name.split('.').next().unwrap_or(&t.name).to_string() } else { t.name.clone() };
        let idx = match out.iter().position(|g| g.name == key) {
            Some(i) => i,
            None => {
                out.push(Group {
                    name: key,
                    count: 0,
                    runtime: 0,
                    wait: 0,
                    sleep: 0,
                    vol: 0,
                    invol: 0,
                    migr: 0,
                    p99_max: 0,
                    max: 0,
                    last_exit: None,
                    all_exited: true,
                });
                out.len() - 1
            }
        };
        let g = &mut out[idx];
        g.count += 1;
        g.runtime += t.runtime_ns;
        g.wait += t.wait_ns;
        g.sleep += t.sleep_ns;
        g.vol += t.switches_voluntary;
        g.invol += t.switches_involuntary;
        g.migr += t.migrations;
        g.p99_max = g.p99_max.max(t.wakeup_latency_ns.p99);
        g.max = g.max.max(t.wakeup_latency_ns.max);
        match t.exit_ns {
            Some(e) => g.last_exit = Some(g.last_exit.map_or(e, |x| x.max(e))),
            None => g.all_exited = false,
        }
    }
    out
}

/// How many waiting tasks the deadlock text lists; a server whose 100 threads wait on their
/// connections after the client left would otherwise bury the report in 100 alike lines.
const DEADLOCK_LINES: usize = 10;

/// The wait-for graph of a deadlocked run: one line per blocked task.
pub fn deadlock_text(r: &RunRecord) -> String {
    let mut s = format!("deadlock at {} ms: no task can run again; who waits on what:\n", ms(r.sim_ns));
    for w in r.deadlock.iter().take(DEADLOCK_LINES) {
        let (name, object, detail) = (escape(&w.name), escape(&w.object), escape(&w.detail));
        let _ = writeln!(s, "  {name} (task {}) waits on {object}: {detail}", w.task);
    }
    if r.deadlock.len() > DEADLOCK_LINES {
        let more = r.deadlock.len() - DEADLOCK_LINES;
        let _ =
            writeln!(s, "  … and {more} more waiting tasks (all {} in the JSON record's `deadlock`)", r.deadlock.len());
    }
    s.push('\n');
    s
}

/// A readable summary of one run.
pub fn text(r: &RunRecord) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "schedlab {} · workload {} · scheduler {} · machine {} ({} CPUs, HZ={}{}{}) · seed {}",
        r.schedlab_version,
        escape(&r.workload.name),
        r.scheduler.name,
        r.machine.name,
        r.cpus.len(),
        hz(r),
        r.machine.cost_model.as_deref().map_or_else(String::new, |m| format!(", costs {m}")),
        r.machine.noise.as_deref().map_or_else(String::new, |n| format!(", noise {n}")),
        r.seed
    );
    s += &header::line(r);
    let _ = writeln!(
        s,
        "simulated {} ms ({}), {} events, trace hash {}\n",
        ms(r.sim_ns),
        r.end_reason,
        r.events,
        r.trace_hash
    );
    if !r.deadlock.is_empty() {
        s += &deadlock_text(r);
    }
    if let Some(why) = &r.scheduler.exit {
        let _ = writeln!(s, "scheduler {} was ejected, its tasks ran in fair from then on: {why}\n", r.scheduler.name);
    }
    s += &kernel_text(r);
    let group = r.tasks.len() > 24;
    let mut rows = vec![vec![
        if group { "task group".to_string() } else { "task".to_string() },
        "n".into(),
        "run ms".into(),
        "run %".into(),
        "wait ms".into(),
        "sleep ms".into(),
        "vol sw".into(),
        "invol sw".into(),
        "migr".into(),
        "lat p99 us".into(),
        "lat max us".into(),
        "exit ms".into(),
    ]];
    let total: u64 = r.tasks.iter().map(|t| t.runtime_ns).sum();
    for g in groups(r, group) {
        rows.push(vec![
            g.name,
            g.count.to_string(),
            ms(g.runtime),
            pct(g.runtime, total),
            ms(g.wait),
            ms(g.sleep),
            g.vol.to_string(),
            g.invol.to_string(),
            g.migr.to_string(),
            format!("{:.1}", g.p99_max as f64 / 1e3),
            format!("{:.1}", g.max as f64 / 1e3),
            if g.all_exited { g.last_exit.map(ms).unwrap_or_else(|| "-".into()) } else { "-".into() },
        ]);
    }
    s.push_str(&table(&rows));
    s.push_str("run %: the task's (group's) share of all tasks' run time; wait: runnable but not running\n\n");
    for t in [span_table(r), cpu_stat_table(r)].into_iter().flatten() {
        s.push_str(&t);
        s.push('\n');
    }
    // Host runs also have time of threads outside the run.
    let other = r.cpus.iter().any(|c| c.other_ns > 0);
    let mut rows = vec![vec!["cpu".to_string(), "user".into(), "kernel".into(), "spin".into(), "idle".into()]];
    if other {
        rows[0].push("other".into());
    }
    for c in &r.cpus {
        let t = c.user_ns + c.kernel_ns + c.spin_ns + c.idle_ns + c.other_ns;
        let mut row =
            vec![c.cpu.to_string(), pct(c.user_ns, t), pct(c.kernel_ns, t), pct(c.spin_ns, t), pct(c.idle_ns, t)];
        if other {
            row.push(pct(c.other_ns, t));
        }
        rows.push(row);
    }
    s.push_str(&table(&rows));
    s.push('\n');
    // Kernel time by path, what the cost models charged, frequencies and idle states.
    for t in [path_table(r), cost_table(r), power_table(r)].into_iter().flatten() {
        s.push_str(&t);
        s.push('\n');
    }
    s.push_str(&lock_table(r));
    s
}

/// The simulated kernel's version and switches, and its counters, when a run is not the
/// plain default or forked tasks (empty otherwise, and for host runs).
fn kernel_text(r: &RunRecord) -> String {
    let k = &r.kernel;
    let Some(version) = &k.version else { return String::new() };
    let on = |b: Option<bool>| if b == Some(true) { "on" } else { "off" };
    let forks = k.counters.iter().any(|(n, v)| n == "forks_run" && *v > 0);
    let default = version == "5.15" && k.delayed_wakeup != Some(true) && k.lb_narrow_lock != Some(true);
    if default && !forks {
        return String::new();
    }
    let counters: Vec<String> = k.counters.iter().map(|(n, v)| format!("{n}={v}")).collect();
    format!(
        "kernel {version} (ttwu_queue {}, delayed_wakeup {}, lb_narrow_lock {}): {}\n\n",
        on(k.ttwu_queue),
        on(k.delayed_wakeup),
        on(k.lb_narrow_lock),
        counters.join(", ")
    )
}

/// The bandwidth-limited groups' `cpu.max` and `cpu.stat` (the burst fields only where the
/// kernel has them); `None` when no group is limited.
fn cpu_stat_table(r: &RunRecord) -> Option<String> {
    if r.groups.is_empty() {
        return None;
    }
    let us = |ns: u64| (ns / 1000).to_string();
    let mut rows = vec![vec![
        "group".to_string(),
        "cpu.max".into(),
        "burst us".into(),
        "nr_periods".into(),
        "nr_throttled".into(),
        "throttled_usec".into(),
        "nr_bursts".into(),
        "burst_usec".into(),
    ]];
    for g in &r.groups {
        let quota = g.max_quota_ns.map_or("max".to_string(), us);
        rows.push(vec![
            g.name.clone(),
            format!("{quota} {}", us(g.max_period_ns)),
            us(g.max_burst_ns),
            g.nr_periods.to_string(),
            g.nr_throttled.to_string(),
            us(g.throttled_ns),
            g.nr_bursts.map_or("-".into(), |n| n.to_string()),
            g.burst_ns.map_or("-".into(), us),
        ]);
    }
    let mut s = table(&rows);
    s.push_str("cpu.max: quota and period in us, as the cgroup file; cpu.stat at the end of the run\n");
    Some(s)
}

/// The named spans (`mark_begin`/`mark_end`): count, rate and latency per name; `None`
/// when the workload marks none.
fn span_table(r: &RunRecord) -> Option<String> {
    if r.spans.is_empty() {
        return None;
    }
    let us = |ns: u64| format!("{:.1}", ns as f64 / 1e3);
    let mut rows = vec![vec![
        "span".to_string(),
        "count".into(),
        "per s".into(),
        "mean us".into(),
        "p50 us".into(),
        "p90 us".into(),
        "p99 us".into(),
        "max us".into(),
    ]];
    for sp in &r.spans {
        let l = &sp.latency_ns;
        rows.push(vec![
            sp.name.clone(),
            sp.count.to_string(),
            format!("{:.1}", sp.per_sec),
            us(sp.mean_ns),
            us(l.p50),
            us(l.p90),
            us(l.p99),
            us(l.max),
        ]);
    }
    Some(table(&rows))
}

/// Kernel time by path over all CPUs (the paths that took any), with each one's share of
/// the kernel time; `None` when the backend could not tell (host runs).
fn path_table(r: &RunRecord) -> Option<String> {
    let first = r.cpus.first().filter(|c| !c.kernel_paths.is_empty())?;
    let kernel: u64 = r.cpus.iter().map(|c| c.kernel_ns).sum();
    let line_ns = |path: &str| -> u64 {
        r.cpus.iter().flat_map(|c| c.kernel_path_lines.iter()).filter(|(p, _)| p == path).map(|(_, ns)| ns).sum()
    };
    let lines = r.cpus.iter().any(|c| !c.kernel_path_lines.is_empty());
    let mut rows = vec![vec!["kernel path".to_string(), "ms".into(), "share".into()]];
    if lines {
        rows[0].push("of which lines ms".into());
    }
    for (i, (name, _)) in first.kernel_paths.iter().enumerate() {
        let ns: u64 = r.cpus.iter().filter_map(|c| c.kernel_paths.get(i)).map(|p| p.1).sum();
        if ns > 0 {
            let mut row = vec![name.clone(), format!("{:.3}", ns as f64 / 1e6), pct(ns, kernel)];
            if lines {
                row.push(format!("{:.3}", line_ns(name) as f64 / 1e6));
            }
            rows.push(row);
        }
    }
    Some(table(&rows))
}

/// Lock contention aggregated by (kind of lock, call site), with the cache-line transfers
/// each site caused and the time they added inside its critical sections (columns shown
/// when any lock moved a line).
fn lock_table(r: &RunRecord) -> String {
    struct Agg {
        kind: String,
        site: String,
        acq: u64,
        cont: u64,
        spin: u64,
        lines: u64,
        line_ns: u64,
    }
    let mut agg: Vec<Agg> = Vec::new();
    for l in &r.locks {
        let kind = l.lock.split('[').next().unwrap_or("").to_string();
        let i = match agg.iter().position(|a| a.kind == kind && a.site == l.site) {
            Some(i) => i,
            None => {
                let site = l.site.clone();
                agg.push(Agg { kind, site, acq: 0, cont: 0, spin: 0, lines: 0, line_ns: 0 });
                agg.len() - 1
            }
        };
        let a = &mut agg[i];
        a.acq += l.acquisitions;
        a.cont += l.contended;
        a.spin += l.spin_ns;
        a.lines += l.line_transfers;
        a.line_ns += l.line_ns;
    }
    let lines = agg.iter().any(|a| a.lines > 0);
    let mut head = vec!["lock".to_string(), "site".into(), "acquired".into(), "contended".into(), "spin us".into()];
    if lines {
        head.extend(["line xfers".to_string(), "line us".into()]);
    }
    let mut rows = vec![head];
    for a in agg {
        let mut row = vec![
            a.kind,
            a.site,
            a.acq.to_string(),
            format!("{} ({})", a.cont, pct(a.cont, a.acq)),
            format!("{:.1}", a.spin as f64 / 1e3),
        ];
        if lines {
            row.extend([a.lines.to_string(), format!("{:.1}", a.line_ns as f64 / 1e3)]);
        }
        rows.push(row);
    }
    table(&rows)
}

/// What the machine's cost models charged, over all tasks, when the full model charged
/// anything beyond line transfers: cache refill by where the lines came from, remote
/// memory, address-space switches and TLB refills; `None` otherwise.
fn cost_table(r: &RunRecord) -> Option<String> {
    let mut c = schedlab_probe::CostTimes::default();
    for t in r.cpus.iter().filter_map(|c| c.costs.as_ref()) {
        c.add(t);
    }
    if c.refill_ns + c.remote_memory_ns + c.mm_switch_ns + c.tlb_refill_ns == 0 {
        return None;
    }
    let user: u64 = r.cpus.iter().map(|c| c.user_ns).sum();
    let kernel: u64 = r.cpus.iter().map(|c| c.kernel_ns).sum();
    let rf = &c.refill;
    let mut rows = vec![vec!["charged".to_string(), "ms".into(), "share".into()]];
    for (name, ns, of) in [
        ("cache refill", c.refill_ns, user),
        ("  cold (first run)", rf.cold_ns, user),
        ("  same core, evicted", rf.same_core_ns, user),
        ("  migrated within the LLC", rf.same_llc_ns, user),
        ("  migrated from another LLC", rf.other_llc_ns, user),
        ("  migrated from another node", rf.other_node_ns, user),
        ("remote memory", c.remote_memory_ns, user),
        ("TLB refill", c.tlb_refill_ns, user),
        ("mm switch (CR3)", c.mm_switch_ns, kernel),
        ("lock line transfers", c.line_ns, kernel),
    ] {
        if ns > 0 {
            rows.push(vec![name.to_string(), format!("{:.3}", ns as f64 / 1e6), pct(ns, of)]);
        }
    }
    let mut s = table(&rows);
    s.push_str("share: of all user time (refill, remote memory, TLB) or kernel time (mm switch, lines)\n");
    Some(s)
}

/// Each CPU's mean frequency, its time in each idle state and its energy, when those
/// models ran; the run's energy below.
fn power_table(r: &RunRecord) -> Option<String> {
    let states: Vec<&str> = r.cpus.first()?.idle_states.iter().map(|s| s.name.as_str()).collect();
    let freq = r.cpus.iter().any(|c| c.freq.is_some());
    let energy = r.cpus.iter().any(|c| c.energy.is_some());
    if states.is_empty() && !freq && !energy {
        return None;
    }
    let mut head = vec!["cpu".to_string()];
    if freq {
        head.extend(["mean MHz".to_string(), "freq changes".into()]);
    }
    if energy {
        head.extend(["active mJ".to_string(), "idle mJ".into()]);
    }
    head.extend(states.iter().map(|n| format!("{n} ms (n)")));
    let mut rows = vec![head];
    for c in &r.cpus {
        let mut row = vec![c.cpu.to_string()];
        if freq {
            let f = c.freq.as_ref();
            row.push(f.map_or("-".into(), |f| format!("{:.0}", f.mean_khz as f64 / 1e3)));
            row.push(f.map_or("-".into(), |f| f.transitions.to_string()));
        }
        if energy {
            let e = c.energy.unwrap_or_default();
            row.push(e.active_nj.map_or("-".into(), mj));
            row.push(e.idle_nj.map_or("-".into(), mj));
        }
        for (i, _) in states.iter().enumerate() {
            let s = c.idle_states.get(i);
            row.push(s.map_or("-".into(), |s| format!("{:.3} ({})", s.time_ns as f64 / 1e6, s.usage)));
        }
        rows.push(row);
    }
    let mut s = table(&rows);
    if energy {
        s.push_str(&energy_line(r));
    }
    Some(s)
}

/// nJ as mJ with µJ resolution.
fn mj(nj: u64) -> String {
    format!("{:.3}", nj as f64 / 1e6)
}

/// The run's active energy (and idle energy where every CPU has one), and its three
/// biggest consumers among the tasks.
fn energy_line(r: &RunRecord) -> String {
    let active: u64 = r.cpus.iter().filter_map(|c| c.energy.and_then(|e| e.active_nj)).sum();
    let idle: Option<u64> = r.cpus.iter().map(|c| c.energy.and_then(|e| e.idle_nj)).sum();
    let secs = r.sim_ns as f64 / 1e9;
    let watts = if secs > 0.0 { active as f64 / 1e9 / secs } else { 0.0 };
    let mut s = format!("energy: active {} mJ ({watts:.3} W mean)", mj(active));
    match idle {
        Some(i) => s.push_str(&format!(", idle {} mJ", mj(i))),
        None => s.push_str(", idle not modelled (no idle-state power)"),
    }
    let mut top: Vec<(&str, u64)> =
        r.tasks.iter().filter_map(|t| t.energy_nj.map(|e| (t.name.as_str(), e))).filter(|t| t.1 > 0).collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    if !top.is_empty() {
        let names: Vec<String> = top.iter().take(3).map(|(n, e)| format!("{} {} mJ", escape(n), mj(*e))).collect();
        s.push_str(&format!("; most by task: {}", names.join(", ")));
    }
    s.push('\n');
    s
}

/// Several runs side by side: one column per scheduler.
pub fn compare_text(rs: &[RunRecord]) -> String {
    let mut s = String::new();
    let Some(first) = rs.first() else { return s };
    let _ = writeln!(
        s,
        "workload {} · machine {} ({} CPUs) · seed {} · {} ms simulated\n",
        escape(&first.workload.name),
        first.machine.name,
        first.cpus.len(),
        first.seed,
        ms(first.sim_ns)
    );
    for r in rs {
        let sw = header::switches(r);
        if !sw.is_empty() {
            let _ = writeln!(s, "{}: {sw}", r.scheduler.name);
        }
    }
    if rs.iter().any(|r| !header::switches(r).is_empty()) {
        s.push('\n');
    }
    let mut rows = compare_rows(rs);
    if rs.len() == 2 {
        add_difference(&mut rows);
    }
    s.push_str(&table(&rows));
    s
}

/// A number in a compare cell (`12.5`, `33.10%`), and whether it is a percentage.
fn cell_number(s: &str) -> Option<(f64, bool)> {
    match s.strip_suffix('%') {
        Some(p) => p.parse().ok().map(|v| (v, true)),
        None => s.parse().ok().map(|v| (v, false)),
    }
}

/// Two runs: a last column with the second minus the first, per measure (percentage points
/// for shares; relative change in parentheses for other figures).
fn add_difference(rows: &mut [Vec<String>]) {
    for (i, row) in rows.iter_mut().enumerate() {
        if i == 0 {
            let (a, b) = (row.get(1).cloned().unwrap_or_default(), row.get(2).cloned().unwrap_or_default());
            row.push(format!("{b} − {a}"));
            continue;
        }
        let d = match (row.get(1).and_then(|c| cell_number(c)), row.get(2).and_then(|c| cell_number(c))) {
            (Some((a, true)), Some((b, true))) => format!("{:+.2} pp", b - a),
            (Some((a, false)), Some((b, false))) if a != 0.0 => format!("{:+.3} ({:+.1}%)", b - a, (b - a) * 100.0 / a),
            (Some((a, false)), Some((b, false))) => format!("{:+.3}", b - a),
            _ => "-".into(),
        };
        row.push(d);
    }
}

/// The side-by-side table: a header row of scheduler names, then one row per measure.
pub fn compare_rows(rs: &[RunRecord]) -> Vec<Vec<String>> {
    let Some(first) = rs.first() else { return Vec::new() };
    let group = first.tasks.len() > 24;
    let mut header = vec!["".to_string()];
    header.extend(rs.iter().map(|r| r.scheduler.name.clone()));
    let mut rows = vec![header];
    let all_groups: Vec<Vec<Group>> = rs.iter().map(|r| groups(r, group)).collect();
    for (gi, g) in all_groups[0].iter().enumerate() {
        let total = |r: &RunRecord| r.tasks.iter().map(|t| t.runtime_ns).sum::<u64>();
        let mut row = vec![format!("{} ×{} run share", g.name, g.count)];
        row.extend(
            rs.iter().zip(&all_groups).map(|(r, gs)| gs.get(gi).map_or("-".into(), |x| pct(x.runtime, total(r)))),
        );
        rows.push(row);
        let mut row = vec![format!("{} wait ms", g.name)];
        row.extend(all_groups.iter().map(|gs| gs.get(gi).map_or("-".into(), |x| ms(x.wait))));
        rows.push(row);
        let mut row = vec![format!("{} wakeup p99 us", g.name)];
        row.extend(
            all_groups.iter().map(|gs| gs.get(gi).map_or("-".into(), |x| format!("{:.1}", x.p99_max as f64 / 1e3))),
        );
        rows.push(row);
        let mut row = vec![format!("{} done at ms", g.name)];
        row.extend(all_groups.iter().map(|gs| {
            gs.get(gi).map_or("-".into(), |x| {
                if x.all_exited {
                    x.last_exit.map(ms).unwrap_or("-".into())
                } else {
                    "-".into()
                }
            })
        }));
        rows.push(row);
    }
    let sum = |r: &RunRecord, f: fn(&schedlab_metrics::TaskRecord) -> u64| r.tasks.iter().map(f).sum::<u64>();
    let mut row = vec!["context switches".to_string()];
    row.extend(rs.iter().map(|r| (sum(r, |t| t.switches_voluntary) + sum(r, |t| t.switches_involuntary)).to_string()));
    rows.push(row);
    let mut row = vec!["migrations".to_string()];
    row.extend(rs.iter().map(|r| sum(r, |t| t.migrations).to_string()));
    rows.push(row);
    let mut row = vec!["rq lock contended".to_string()];
    row.extend(
        rs.iter()
            .map(|r| r.locks.iter().filter(|l| l.lock.starts_with("rq")).map(|l| l.contended).sum::<u64>().to_string()),
    );
    rows.push(row);
    let mut row = vec!["spin ms (all CPUs)".to_string()];
    row.extend(rs.iter().map(|r| ms(r.cpus.iter().map(|c| c.spin_ns).sum())));
    rows.push(row);
    if rs.iter().any(|r| r.cpus.iter().any(|c| c.energy.is_some())) {
        // The CPUs' active energy from the machine's energy model (`-` without one).
        let mut row = vec!["active energy mJ".to_string()];
        row.extend(rs.iter().map(|r| {
            let e: Option<u64> = r.cpus.iter().map(|c| c.energy.and_then(|e| e.active_nj)).sum();
            e.map_or("-".into(), mj)
        }));
        rows.push(row);
    }
    for (i, sp) in first.spans.iter().enumerate() {
        let get = |r: &RunRecord| r.spans.get(i).filter(|x| x.name == sp.name).cloned();
        let mut row = vec![format!("{} per s", sp.name)];
        row.extend(rs.iter().map(|r| get(r).map_or("-".into(), |x| format!("{:.1}", x.per_sec))));
        rows.push(row);
        let mut row = vec![format!("{} p99 us", sp.name)];
        row.extend(rs.iter().map(|r| get(r).map_or("-".into(), |x| format!("{:.1}", x.latency_ns.p99 as f64 / 1e3))));
        rows.push(row);
    }
    let mut row = vec!["events".to_string()];
    row.extend(rs.iter().map(|r| r.events.to_string()));
    rows.push(row);
    rows
}
