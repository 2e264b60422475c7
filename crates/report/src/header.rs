//! What every output's header says about how the run was made beyond workload, scheduler
//! and machine: the `--set` overrides, the kernel model's version and switches, and whether
//! invariants were checked — so two outputs that differ say why.

use schedlab_metrics::RunRecord;

/// `kernel 3.4 · delayed_wakeup · set sched_wakeup_granularity_ns=8ms · invariants checked`;
/// empty for a plain default run (kernel 5.15, TTWU_QUEUE on, no switch, no override).
pub fn switches(r: &RunRecord) -> String {
    let k = &r.kernel;
    // The switches that took effect and differ from the defaults under this policy (the
    // record's `kernel.changed`): `kernel 3.4`, `no TTWU_QUEUE`, `delayed_wakeup`, ….
    let mut parts: Vec<String> = k.changed.iter().map(|c| switch_text(c)).collect();
    if !r.scheduler.sets.is_empty() {
        let sets: Vec<String> = r.scheduler.sets.iter().map(|(a, b)| format!("{a}={b}")).collect();
        parts.push(format!("set {}", sets.join(" ")));
    }
    if k.invariants_checked {
        parts.push("invariants checked after every event: all held".into());
    }
    parts.join(" · ")
}

/// One changed switch (`kernel.delayed_wakeup=1`) as the header says it.
fn switch_text(change: &str) -> String {
    let (name, value) = change.split_once('=').unwrap_or((change, ""));
    let short = name.strip_prefix("kernel.").unwrap_or(name);
    match (short, value) {
        ("version", v) => format!("kernel {v}"),
        ("ttwu_queue", "0") => "no TTWU_QUEUE".into(),
        (n, "1") => n.to_string(),
        (n, "0") => format!("no {n}"),
        (n, v) => format!("{n}={v}"),
    }
}

/// [`switches`] as a header line (with its newline), or nothing, then one `warning:` line
/// per warning of the run (a switch that changed nothing, a policy the scheduler lacks).
pub fn line(r: &RunRecord) -> String {
    let s = switches(r);
    let mut out = if s.is_empty() { s } else { format!("{s}\n") };
    for w in &r.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}
