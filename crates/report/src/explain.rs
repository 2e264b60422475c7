//! Renderers of explained waits (`schedlab explain`): a causal chain per wait in words with
//! numbers, the per-task table of wait time by cause, JSON, and a stacked-bar SVG.

use schedlab_metrics::explain::{Explained, TaskWaits, Wait, WaitCause};
use std::fmt::Write;

/// Segments printed per wait before the rest are summed up in one line.
const MAX_SEGMENTS: usize = 12;

/// A duration in its unit (`850 ns`, `12.5 µs`, `3.20 ms`, `1.250 s`).
pub fn dur(ns: u64) -> String {
    let (whole, frac, digits, unit) = match ns {
        0..=999 => return format!("{ns} ns"),
        1_000..=999_999 => (ns / 1_000, ns % 1_000 / 100, 1, "µs"),
        1_000_000..=999_999_999 => (ns / 1_000_000, ns % 1_000_000 / 10_000, 2, "ms"),
        _ => (ns / 1_000_000_000, ns % 1_000_000_000 / 1_000_000, 3, "s"),
    };
    format!("{whole}.{frac:0digits$} {unit}")
}

/// A point in time as seconds with µs.
fn at(ns: u64) -> String {
    format!("{}.{:06} s", ns / 1_000_000_000, ns % 1_000_000_000 / 1_000)
}

pub(crate) fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "0.0 %".into();
    }
    let permille = part * 1000 / whole;
    format!("{}.{} %", permille / 10, permille % 10)
}

fn name(ex: &Explained, t: usize) -> std::borrow::Cow<'_, str> {
    crate::escape(ex.names.get(t).map_or("?", String::as_str))
}

/// One wait as a causal chain.
pub fn wait_text(ex: &Explained, w: &Wait) -> String {
    let mut s = String::new();
    let how = if w.preempted { "preempted, still runnable" } else { "woken" };
    let cpu0 = w.segments.first().map_or(String::new(), |g| format!(" on CPU {}", g.cpu));
    let _ = writeln!(
        s,
        "{} waited {} from {} to {}{cpu0} ({how})",
        name(ex, w.task),
        dur(w.len_ns()),
        at(w.start_ns),
        at(w.end_ns)
    );
    if let Some(k) = &w.wake {
        let slept =
            k.blocked_ns.map_or(String::new(), |b| format!(" after sleeping {}", dur(k.waking_ns.saturating_sub(b))));
        let on = k.on.as_deref().map_or(String::new(), |o| format!(" on {o}"));
        let by = k.waker.map_or("an interrupt (timer)".to_string(), |t| name(ex, t).to_string());
        let _ = writeln!(s, "  it slept{on}{slept}; {by} woke it on CPU {} at {}", k.waker_cpu, at(k.waking_ns));
        let _ = writeln!(
            s,
            "  wakeup latency before it was queued: wakeup path {}, lock spin {}, IPI and remote activation {}",
            dur(k.wakeup_path_ns),
            dur(k.lock_spin_ns),
            dur(k.ipi_ns)
        );
        if let Some(p) = &k.placed {
            let _ = writeln!(s, "  placed by {p}");
        }
    }
    for g in w.segments.iter().take(MAX_SEGMENTS) {
        let who = g.ran.map_or(String::new(), |t| format!("{} ran on CPU {}; ", name(ex, t), g.cpu));
        let _ = writeln!(
            s,
            "  {} +{:>9}  {:<16} {who}{}",
            at(g.start_ns),
            dur(g.end_ns - g.start_ns),
            g.cause.name(),
            g.why
        );
    }
    if w.segments.len() > MAX_SEGMENTS {
        let rest = &w.segments[MAX_SEGMENTS..];
        let _ =
            writeln!(s, "  … {} more segments, {}", rest.len(), dur(rest.iter().map(|g| g.end_ns - g.start_ns).sum()));
    }
    let mut by = [0u64; WaitCause::ALL.len()];
    for g in &w.segments {
        by[g.cause.index()] += g.end_ns - g.start_ns;
    }
    let parts: Vec<String> = WaitCause::ALL
        .iter()
        .filter(|c| by[c.index()] > 0)
        .map(|c| format!("{} {}", c.name(), pct(by[c.index()], w.len_ns())))
        .collect();
    let _ = writeln!(s, "  by cause: {}", parts.join(", "));
    if !w.moved_by.is_empty() {
        let _ = writeln!(s, "  moved by:");
        for b in &w.moved_by {
            let _ = writeln!(s, "    - {b}");
        }
    }
    if !w.balance.is_empty() {
        let _ = writeln!(s, "  why no other CPU took it:");
        for b in &w.balance {
            let _ = writeln!(s, "    - {b}");
        }
    }
    s
}

/// The waits, one causal chain each.
pub fn explain_text(ex: &Explained, waits: &[&Wait]) -> String {
    if waits.is_empty() {
        return "no wait in the selection\n".into();
    }
    waits.iter().map(|w| wait_text(ex, w)).collect::<Vec<_>>().join("\n")
}

/// Wait time per task by cause, in ms and percent of the task's wait.
pub fn summary_text(tasks: &[&TaskWaits]) -> String {
    let mut s = String::from("where the waiting went (percent of each task's wait_ns)\n");
    let _ = write!(s, "{:<16} {:>12} {:>6}", "task", "wait", "waits");
    for c in WaitCause::ALL {
        let _ = write!(s, " {:>9}", short(c));
    }
    s.push('\n');
    for t in tasks {
        let _ = write!(s, "{:<16} {:>12} {:>6}", crate::escape(&t.name), dur(t.wait_ns), t.waits);
        for c in WaitCause::ALL {
            let v = t.by_cause[c.index()];
            let cell = if v == 0 { "-".into() } else { pct(v, t.wait_ns) };
            let _ = write!(s, " {cell:>9}");
        }
        s.push('\n');
    }
    s.push_str("causes:");
    for c in WaitCause::ALL {
        let _ = write!(s, " {} = {};", short(c), c.describe());
    }
    s.push('\n');
    s.push_str(&costs_text(tasks));
    s
}

/// What the machine's cost models charged each task, against its run time, when the full
/// model charged anything beyond line transfers (empty otherwise): its cache refill and
/// why (where the lines came from), remote-memory slowdown, address-space switches and
/// TLB refills, and lock line transfers on its behalf.
pub fn costs_text(tasks: &[&TaskWaits]) -> String {
    let charged = |c: &schedlab_probe::CostTimes| c.refill_ns + c.remote_memory_ns + c.mm_switch_ns + c.tlb_refill_ns;
    if !tasks.iter().any(|t| t.costs.as_ref().is_some_and(|c| charged(c) > 0)) {
        return String::new();
    }
    let mut s = String::from("\nwhat the machine charged (percent of each task's run time)\n");
    let _ = writeln!(
        s,
        "{:<16} {:>12} {:>9} {:>9} {:>9} {:>9} {:>9}  refill from",
        "task", "run", "refill", "remote", "mm", "tlb", "lines"
    );
    for t in tasks {
        let Some(c) = &t.costs else { continue };
        let cell = |v: u64| if v == 0 { "-".to_string() } else { pct(v, t.run_ns) };
        let _ = writeln!(
            s,
            "{:<16} {:>12} {:>9} {:>9} {:>9} {:>9} {:>9}  {}",
            crate::escape(&t.name),
            dur(t.run_ns),
            cell(c.refill_ns),
            cell(c.remote_memory_ns),
            cell(c.mm_switch_ns),
            cell(c.tlb_refill_ns),
            cell(c.line_ns),
            refill_why(c)
        );
    }
    s.push_str(
        "refill = cache refill after a switch or migration; remote = remote NUMA memory slowdown; \
         mm = CR3 writes; tlb = TLB refills; lines = lock cache-line transfers\n",
    );
    s
}

/// A task's refill by where its lines came from, in words: `2 refills: 1.2 ms cold,
/// 3.4 ms from another node`.
fn refill_why(c: &schedlab_probe::CostTimes) -> String {
    if c.refills == 0 {
        return "-".into();
    }
    let r = &c.refill;
    let parts: Vec<String> = [
        (r.cold_ns, "cold (first run)"),
        (r.same_core_ns, "same core, evicted by others"),
        (r.same_llc_ns, "migrated within the LLC"),
        (r.other_llc_ns, "migrated from another LLC"),
        (r.other_node_ns, "migrated from another node"),
    ]
    .iter()
    .filter(|(ns, _)| *ns > 0)
    .map(|(ns, what)| format!("{} {what}", dur(*ns)))
    .collect();
    format!("{} refills: {}", c.refills, parts.join(", "))
}

/// A column header of at most 9 characters.
pub(crate) fn short(c: WaitCause) -> &'static str {
    match c {
        WaitCause::Priority => "priority",
        WaitCause::FairShare => "fair",
        WaitCause::NotEligible => "inelig",
        WaitCause::NoPreempt => "no-preem",
        WaitCause::PreemptionPoint => "preempt-p",
        WaitCause::BalancerRefused => "balancer",
        WaitCause::LockSpin => "lockspin",
        WaitCause::Throttled => "throttled",
        WaitCause::WakeupPath => "wakeup",
        WaitCause::Other => "other",
    }
}

/// The selected waits and the per-task totals as JSON.
pub fn explain_json(waits: &[&Wait], tasks: &[&TaskWaits]) -> String {
    let totals: Vec<serde_json::Value> = tasks
        .iter()
        .map(|t| {
            let by: serde_json::Map<String, serde_json::Value> =
                WaitCause::ALL.iter().map(|c| (c.name().to_string(), t.by_cause[c.index()].into())).collect();
            serde_json::json!({ "task": t.name, "tid": t.task, "wait_ns": t.wait_ns, "waits": t.waits, "by_cause": by })
        })
        .collect();
    let v = serde_json::json!({ "tasks": totals, "waits": waits });
    serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
}

/// Colours of the causes in the figure, in [`WaitCause::ALL`] order.
const COLORS: [&str; 10] =
    ["#d62728", "#1f77b4", "#9467bd", "#ff7f0e", "#bcbd22", "#8c564b", "#e377c2", "#2ca02c", "#17becf", "#7f7f7f"];

/// A stacked horizontal bar per task: its wait time split by cause, on one ms scale, with
/// the legend below the bars.
pub fn waits_svg(tasks: &[&TaskWaits]) -> String {
    let (left, width, row) = (140u64, 560u64, 22u64);
    let max = tasks.iter().map(|t| t.wait_ns).max().unwrap_or(0).max(1);
    let legend_y = 40 + row * tasks.len() as u64 + 20;
    let height = legend_y + 20 * WaitCause::ALL.len().div_ceil(3) as u64 + 10;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n",
        left + width + 20
    );
    let _ = writeln!(s, "<text x=\"{left}\" y=\"16\">wait time by cause (longest: {})</text>", dur(max));
    for (i, t) in tasks.iter().enumerate() {
        let y = 30 + row * i as u64;
        let _ = writeln!(s, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", left - 6, y + 14, xml(&t.name));
        let mut x = left;
        for c in WaitCause::ALL {
            let w = t.by_cause[c.index()] * width / max;
            if w > 0 {
                let _ = writeln!(
                    s,
                    "<rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{}\" fill=\"{}\"><title>{}: {}</title></rect>",
                    row - 4,
                    COLORS[c.index()],
                    c.name(),
                    dur(t.by_cause[c.index()])
                );
                x += w;
            }
        }
        let _ = writeln!(s, "<text x=\"{}\" y=\"{}\">{}</text>", x + 4, y + 14, dur(t.wait_ns));
    }
    for (i, c) in WaitCause::ALL.iter().enumerate() {
        let (x, y) = (left + 190 * (i as u64 % 3), legend_y + 20 * (i as u64 / 3));
        let _ = writeln!(s, "<rect x=\"{x}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>", y - 10, COLORS[i]);
        let _ = writeln!(s, "<text x=\"{}\" y=\"{y}\">{}</text>", x + 16, c.name());
    }
    s.push_str("</svg>\n");
    s
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_probe::{CostTimes, RefillWhy};

    fn waits(run_ns: u64, costs: Option<CostTimes>) -> TaskWaits {
        TaskWaits {
            task: 0,
            name: "t".into(),
            by_cause: vec![0; WaitCause::ALL.len()],
            run_ns,
            costs,
            ..Default::default()
        }
    }

    /// The explain summary says how much of a task's run was refill and where the lines
    /// came from; without full-model charges (flat: line transfers only) it says nothing.
    #[test]
    fn costs_text_says_how_much_of_a_run_was_refill_and_why() {
        let refill = RefillWhy { cold_ns: 1_000_000, other_node_ns: 3_000_000, ..RefillWhy::default() };
        let c = CostTimes { refills: 2, refill_ns: 4_000_000, refill, line_ns: 500, ..CostTimes::default() };
        let t = waits(40_000_000, Some(c));
        let s = costs_text(&[&t]);
        assert!(s.contains("10.0 %"), "{s}");
        assert!(s.contains("2 refills: 1.00 ms cold (first run), 3.00 ms migrated from another node"), "{s}");
        let flat = waits(40_000_000, Some(CostTimes { line_transfers: 3, line_ns: 500, ..CostTimes::default() }));
        assert_eq!(costs_text(&[&flat]), "");
        assert_eq!(costs_text(&[&waits(1, None)]), "");
    }
}
