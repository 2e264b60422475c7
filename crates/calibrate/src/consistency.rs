//! The consistency check: every end-to-end path the host measures against the sum of the
//! charges the kernel model makes along it with the calibrated machine. Each cost is
//! fitted once, from its own benchmark (`derive`); these paths are not fitted by
//! construction, so a disagreement beyond [`TOLERANCE_PERMILLE`] means the model's
//! decomposition of that path is wrong, or a cost depends on something the model does not
//! see (the idle length, whether the CPU was busy), and is printed as such.

use crate::derive::fmt_ns;
use crate::model::Charges;
use std::fmt::Write as _;

/// Paths within 10 % agree.
pub const TOLERANCE_PERMILLE: u64 = 100;

/// One end-to-end path.
#[derive(Clone, Debug, PartialEq)]
pub struct PathCheck {
    pub path: String,
    /// The host's median, ns; `None` where the host cannot run it (one CPU).
    pub host_ns: Option<u64>,
    /// What the model charges along it, cost by cost.
    pub charges: Charges,
}

impl PathCheck {
    pub fn model_ns(&self) -> u64 {
        self.charges.total().0
    }
    /// Signed relative difference, model vs host, in permille of the host value.
    pub fn off_permille(&self) -> Option<i64> {
        let host = self.host_ns? as i64;
        Some((self.model_ns() as i64 - host) * 1000 / host.max(1))
    }
    pub fn disagrees(&self) -> bool {
        self.off_permille().is_some_and(|p| p.unsigned_abs() > TOLERANCE_PERMILLE)
    }
}

/// The charges summed by cost, in first-charge order ("ttwu_activate 2 × 250ns").
fn charge_text(ch: &Charges) -> String {
    let mut by: Vec<(&str, u64, u64)> = Vec::new();
    for &(what, ns) in &ch.0 {
        match by.iter_mut().find(|b| b.0 == what) {
            Some(b) => (b.1, b.2) = (b.1 + 1, b.2 + ns.0),
            None => by.push((what, 1, ns.0)),
        }
    }
    let part = |&(what, n, ns): &(&str, u64, u64)| {
        if n > 1 {
            format!("{what} {n}×{}", fmt_ns(ns / n))
        } else {
            format!("{what} {}", fmt_ns(ns))
        }
    };
    by.iter().map(part).collect::<Vec<_>>().join(" + ")
}

fn pct(p: i64) -> String {
    format!("{:+.1}%", p as f64 / 10.0)
}

/// The per-path table: host, model, the difference, and the model's charges.
pub fn table(paths: &[PathCheck]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{:<58} {:>9} {:>9} {:>8}  model charges", "path (end to end)", "host", "model", "off");
    for p in paths {
        let host = p.host_ns.map_or("-".into(), fmt_ns);
        let off = p.off_permille().map_or("-".into(), pct);
        let mark = if p.disagrees() { " !" } else { "" };
        let _ = writeln!(
            out,
            "{:<58} {host:>9} {:>9} {off:>8}{mark}  {}",
            p.path,
            fmt_ns(p.model_ns()),
            charge_text(&p.charges)
        );
    }
    out
}

/// The disagreements beyond the tolerance, one line each; empty when every path agrees.
pub fn disagreements(paths: &[PathCheck]) -> Vec<String> {
    paths
        .iter()
        .filter(|p| p.disagrees())
        .map(|p| {
            let host = p.host_ns.expect("a disagreement has a host value");
            format!(
                "{}: host {}, model {} ({} beyond ±{}%): {}",
                p.path,
                fmt_ns(host),
                fmt_ns(p.model_ns()),
                pct(p.off_permille().expect("host value")),
                TOLERANCE_PERMILLE / 10,
                charge_text(&p.charges)
            )
        })
        .collect()
}

/// The report: the table, then the disagreements (or that there are none).
pub fn report(paths: &[PathCheck]) -> String {
    let mut out = table(paths);
    let d = disagreements(paths);
    if d.is_empty() {
        let _ = writeln!(out, "\nconsistency: every measured path within ±{}%", TOLERANCE_PERMILLE / 10);
    } else {
        let _ = writeln!(out, "\nconsistency: {} path(s) disagree beyond ±{}%:", d.len(), TOLERANCE_PERMILLE / 10);
        for line in d {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Measured;
    use crate::derive::tests::{model_measurements, odd_costs};
    use schedlab_sim::Ns;

    fn check(host: Option<u64>, charges: &[(&'static str, u64)]) -> PathCheck {
        PathCheck {
            path: "p".into(),
            host_ns: host,
            charges: Charges(charges.iter().map(|&(w, n)| (w, Ns(n))).collect()),
        }
    }

    /// The tolerance is ±10 % of the host value, exclusive; a path the host could not run
    /// never disagrees; charges of one cost are summed in the text.
    #[test]
    fn tolerance_and_charge_text() {
        let at = |model: u64| check(Some(1000), &[("syscall", 400), ("schedule", model - 400)]);
        assert_eq!(at(1100).off_permille(), Some(100));
        assert!(!at(1100).disagrees() && !at(900).disagrees());
        assert!(at(1101).disagrees() && at(899).disagrees());
        assert!(!check(None, &[("syscall", 5)]).disagrees());
        let two = check(Some(10), &[("ttwu_activate", 250), ("schedule", 300), ("ttwu_activate", 250)]);
        assert_eq!(charge_text(&two.charges), "ttwu_activate 2×250ns + schedule 300ns");
    }

    /// A synthetic host: the measurements a host with fixed costs gives, then three paths
    /// changed as this VM's were — a short idle exits faster than a long one, the busy
    /// sleep overshoots 5 % more (within tolerance), the cross-CPU pipe ping-pong takes 30 %
    /// longer. Exactly the first and the last are reported, with host, model and charges.
    #[test]
    fn a_synthetic_host_reports_exactly_its_disagreements() {
        let c = odd_costs();
        let mut m = model_measurements(&c);
        let short = &mut m.idle_by_length[0].1.latency;
        let long_exit_latency = short.median;
        short.median -= c.idle_exit.0; // exits at once after 10 µs
        let busy = &mut m.sleep_busy.overshoot_no_slack;
        busy.median += busy.median / 20;
        let pp = m.pingpong_remote.as_mut().unwrap();
        pp.one_way = Measured { median: pp.one_way.median * 13 / 10, ..pp.one_way };
        let d = crate::derive::derive(&m);
        let lines = disagreements(&d.paths);
        assert_eq!(lines.len(), 2, "{lines:#?}");
        let fast = long_exit_latency - c.idle_exit.0;
        assert!(lines[0].starts_with("cross-CPU wakeup, target idle 10.0us"), "{}", lines[0]);
        assert!(
            lines[0].contains(&format!("host {}, model {}", fmt_ns(fast), fmt_ns(long_exit_latency))),
            "{}",
            lines[0]
        );
        assert!(lines[0].contains("idle_exit 1733ns"), "{}", lines[0]);
        assert!(lines[1].starts_with("pipe ping-pong, two CPUs, one way"), "{}", lines[1]);
        assert!(lines[1].contains("-23.0%"), "model 1/1.3 of the host: {}", lines[1]);
        let text = report(&d.paths);
        assert!(text.contains("consistency: 2 path(s) disagree beyond ±10%"), "{text}");
        // The idle exit solved at each length shows why.
        let exits: Vec<i64> = d.data.idle_exits.iter().map(|e| e.exit_ns).collect();
        assert_eq!(exits, [0, c.idle_exit.0 as i64]);
    }
}
