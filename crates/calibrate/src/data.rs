//! The cost model's machine data from the host's measurements — line transfers, the idle
//! exit by idle length, the address-space costs — and the end-to-end paths the
//! consistency check compares with the model's charges.
//!
//! One cost, one benchmark, one charge: each value here comes from the benchmark that
//! isolates it (a line bounced between two CPUs; the process ping-pong minus the thread
//! ping-pong; the slope of `fork` + `exit` over resident size), and none is charged on a
//! path that already contains it.

use crate::bench::Measured;
use crate::consistency::PathCheck;
use crate::derive::fmt_ns;
use crate::measure::Measurements;
use crate::model::{self, Charges};
use schedlab_machine::{Costs, Mm, PAGE_SIZE};
use schedlab_sim::Ns;

/// One line-transfer measurement and the `[lines]` class it fits.
#[derive(Clone, Debug, PartialEq)]
pub struct LineRow {
    pub a: usize,
    pub b: usize,
    /// `smt`, `same_llc`, `other_llc` or `other_node`.
    pub class: &'static str,
    pub transfer: Measured,
}

/// The idle exit solved from a wakeup of a CPU idle for `idle_ns`.
#[derive(Clone, Debug, PartialEq)]
pub struct IdleExit {
    pub idle_ns: u64,
    pub latency: Measured,
    /// The latency minus every other charge of the idle wakeup (may be negative: noise, or
    /// a path the host does faster than the model's decomposition).
    pub exit_ns: i64,
}

/// The machine data calibrate measured; `None` where this host cannot measure it.
#[derive(Clone, Debug, PartialEq)]
pub struct MachineData {
    pub lines: Vec<LineRow>,
    pub idle_exits: Vec<IdleExit>,
    /// The generic address-space data with the measured fields set.
    pub mm: Mm,
    /// Process minus thread ping-pong handoff, raw (the solved `cr3_write` before the floor).
    pub mm_switch_raw: i64,
    /// `fork_per_page` and `exit_per_page` as measured, raw (ps per page, before the floor).
    pub per_page_ps: (i64, i64),
}

fn line_rows(m: &Measurements) -> Vec<LineRow> {
    let cpus = m.cpus;
    m.lines
        .iter()
        .map(|&(a, b, transfer)| {
            let class = if Some(b) == cpus.far {
                if cpus.far_node {
                    "other_node"
                } else {
                    "other_llc"
                }
            } else if cpus.b_sibling {
                "smt"
            } else {
                "same_llc"
            };
            LineRow { a, b, class, transfer }
        })
        .collect()
}

/// Every other charge of the idle wakeup: its latency minus this is the idle exit.
fn idle_wake_rest(c: &Costs) -> Ns {
    model::idle_wake_latency(&Costs { idle_exit: Ns(0), ..c.clone() })
}

/// Solves the machine data from the measurements, with the constant costs `c` already
/// derived.
pub fn derive_data(m: &Measurements, c: &Costs) -> MachineData {
    let rest = idle_wake_rest(c).0 as i64;
    let idle_exits = m
        .idle_by_length
        .iter()
        .map(|&(idle_ns, w)| IdleExit { idle_ns, latency: w.latency, exit_ns: w.latency.median as i64 - rest })
        .collect();
    let mut mm =
        schedlab_machine::Machine::new("g", 250, schedlab_machine::Topology::new(1, 1, 1, 1, None), c.clone()).mm;
    // Two mms alternating on one CPU both keep an ASID (PCID), so each switch is the CR3
    // write alone (`Mm::switch_ns` with a live ASID).
    let mm_switch_raw = m.process_pingpong.median as i64 - m.pingpong_local.one_way.median as i64;
    mm.cr3_write = Ns(mm_switch_raw.max(0) as u64);
    let (small, big) = (m.fork_small, m.fork_big);
    let pages = big.pages.saturating_sub(small.pages).max(1) as i64;
    let slope = |b: Measured, s: Measured| (b.median as i64 - s.median as i64) * 1000 / pages;
    let per_page_ps = (slope(big.fork_call, small.fork_call), slope(big.exit_wait, small.exit_wait));
    // `Mm` keeps whole ns per page: round to the nearest.
    let ns = |ps: i64| Ns(((ps.max(0) + 500) / 1000) as u64);
    mm.fork_per_page = ns(per_page_ps.0);
    mm.exit_per_page = ns(per_page_ps.1);
    MachineData { lines: line_rows(m), idle_exits, mm, mm_switch_raw, per_page_ps }
}

fn path(what: String, host: Option<Measured>, charges: Charges) -> PathCheck {
    PathCheck { path: what, host_ns: host.map(|h| h.median), charges }
}

/// The end-to-end paths: the host's median against the model's charges along each.
pub fn paths(m: &Measurements, c: &Costs, d: &MachineData) -> Vec<PathCheck> {
    let mut out = vec![path(
        "one-way cross-CPU wakeup (futex, target idle moments)".into(),
        m.wake_remote.map(|w| w.latency),
        model::idle_wake_charges(c),
    )];
    for e in &d.idle_exits {
        let what = format!("cross-CPU wakeup, target idle {}", fmt_ns(e.idle_ns));
        out.push(path(what, Some(e.latency), model::idle_wake_charges(c)));
    }
    let sl = &m.sleep;
    out.extend([
        path(
            "sleep overshoot, idle CPU, slack 1ns".into(),
            Some(sl.overshoot_no_slack),
            model::sleep_overshoot_charges(c, Ns(0), true),
        ),
        path(
            format!("sleep overshoot, idle CPU, default slack {}", fmt_ns(sl.default_slack_ns)),
            Some(sl.overshoot),
            model::sleep_overshoot_charges(c, c.timer_slack, true),
        ),
        path(
            "sleep overshoot = timer expiry on a busy CPU, slack 1ns".into(),
            Some(m.sleep_busy.overshoot_no_slack),
            model::sleep_overshoot_charges(c, Ns(0), false),
        ),
        path("CPU time per sleep, idle CPU".into(), Some(sl.cpu_per_sleep), model::sleep_cpu_charges(c)),
        path(
            "pipe ping-pong, one CPU, one way".into(),
            Some(m.pingpong_local.one_way),
            model::pinned_handoff_charges(c),
        ),
        path(
            "pipe ping-pong, two CPUs, one way".into(),
            m.pingpong_remote.map(|p| p.one_way),
            model::remote_handoff_charges(c),
        ),
        path("futex ping-pong, one CPU, one way".into(), Some(m.futex_local), model::futex_local_handoff_charges(c)),
        path("futex ping-pong, two CPUs, one way".into(), m.futex_remote, model::futex_remote_handoff_charges(c)),
    ]);
    let f = m.fork_small;
    let total = Measured { median: f.fork_call.median + f.exit_wait.median, reps: f.fork_call.reps };
    let what = format!("process fork + _exit + waitpid ({} MiB resident)", (f.pages * PAGE_SIZE) >> 20);
    out.push(path(what, Some(total), model::process_fork_exit_charges(c, &d.mm, f.pages * PAGE_SIZE)));
    out
}
