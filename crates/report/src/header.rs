//! What every output's header says about how the run was made beyond workload, scheduler
//! and machine: the `--set` overrides, the kernel model's version and switches, and whether
//! invariants were checked — so two outputs that differ say why.

use schedlab_metrics::RunRecord;

/// `kernel 3.4 · delayed_wakeup · set sched_wakeup_granularity_ns=8ms · invariants checked`;
/// empty for a plain default run (kernel 5.15, TTWU_QUEUE on, no switch, no override).
pub fn switches(r: &RunRecord) -> String {
    let k = &r.kernel;
    let mut parts: Vec<String> = Vec::new();
    if let Some(v) = k.version.as_deref().filter(|v| *v != "5.15") {
        parts.push(format!("kernel {v}"));
    }
    // The wake list exists from 3.x; a run without it by choice says so.
    if k.ttwu_queue == Some(false) && k.version.as_deref() == Some("5.15") {
        parts.push("no TTWU_QUEUE".into());
    }
    if k.delayed_wakeup == Some(true) {
        parts.push("delayed_wakeup".into());
    }
    if k.lb_narrow_lock == Some(true) {
        parts.push("lb_narrow_lock".into());
    }
    if !r.scheduler.sets.is_empty() {
        let sets: Vec<String> = r.scheduler.sets.iter().map(|(a, b)| format!("{a}={b}")).collect();
        parts.push(format!("set {}", sets.join(" ")));
    }
    if k.invariants_checked {
        parts.push("invariants checked after every event: all held".into());
    }
    parts.join(" · ")
}

/// [`switches`] as a header line (with its newline), or nothing.
pub fn line(r: &RunRecord) -> String {
    let s = switches(r);
    if s.is_empty() {
        s
    } else {
        format!("{s}\n")
    }
}
