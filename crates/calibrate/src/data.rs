//! The cost model's machine data from the host's measurements — line transfers, the idle
//! exit by idle length, the address-space costs — and the end-to-end paths the
//! consistency check compares with the model's charges.
//!
//! One cost, one benchmark, one charge: each value here comes from the benchmark that
//! isolates it (a line bounced between two CPUs; the process ping-pong minus the thread
//! ping-pong; the slope of `fork` + `exit` over resident size), and none is charged on a
//! path that already contains it.

use crate::bench::cache::Resume;
use crate::bench::Measured;
use crate::consistency::PathCheck;
use crate::derive::fmt_ns;
use crate::measure::Measurements;
use crate::model::{self, Charges};
use schedlab_machine::{CacheScope, Caches, Costs, Mm, PAGE_SIZE};
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

/// The hypervisor's states of a guest (`[[idle.hypervisor_state]]`), one per idle length
/// measured: its target residency that length, its exit the one measured after it — with
/// repeated idles of one length menu's typical interval is that length, so the state it
/// picks for them is this one (`menu_select`, menu.c v6.18). A negative exit (noise, or a
/// path faster than the model's decomposition) is none; an exit beyond the length is
/// declared at the length (cpuidle refuses an exit latency above the residency) and
/// charged in full (`exit_cost`).
pub fn hypervisor_states(exits: &[IdleExit]) -> Vec<schedlab_machine::IdleState> {
    let mut by_len: Vec<&IdleExit> = exits.iter().collect();
    by_len.sort_by_key(|e| e.idle_ns);
    by_len.dedup_by_key(|e| e.idle_ns);
    by_len
        .into_iter()
        .take(schedlab_machine::CPUIDLE_STATE_MAX)
        .map(|e| {
            let exit = e.exit_ns.max(0) as u64;
            let declared = exit.min(e.idle_ns);
            schedlab_machine::IdleState {
                name: format!("after-{}us", e.idle_ns / 1000),
                exit_latency: Ns(declared),
                target_residency: Ns(e.idle_ns),
                exit_cost: (declared != exit).then_some(Ns(exit)),
                power_mw: None,
                polling: false,
                tlb_flushed: false,
            }
        })
        .collect()
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
    /// The generic hierarchy with each level's size, line and latency as measured, when
    /// sysfs lists as many levels as it has (inclusion and replacement are not measured:
    /// the generic's); memory's latency where measured.
    pub caches: Option<Caches>,
}

/// The generic machine data for `c` (what calibrate does not measure keeps).
fn generic(c: &Costs) -> schedlab_machine::Machine {
    schedlab_machine::Machine::new("g", 250, schedlab_machine::Topology::new(1, 1, 1, 1, None), c.clone())
}

fn measured_caches(m: &Measurements, c: &Costs) -> Option<Caches> {
    let mut caches = generic(c).caches;
    let host = &m.caches.levels;
    if host.len() != caches.levels.len() {
        return None;
    }
    let llc = &host.last()?.0.shared;
    for (lv, (h, lat)) in caches.levels.iter_mut().zip(host) {
        lv.size = h.bytes;
        lv.line = h.line;
        lv.latency_ps = lat.median;
        lv.scope = if &h.shared == llc && h.shared.count() > 1 { CacheScope::Llc } else { CacheScope::Core };
    }
    if let Some(mem) = m.caches.memory {
        caches.memory.latency_ps = mem.median;
    }
    Some(caches)
}

/// The cache model's refill of `ws` bytes resuming as `how` (`Caches::refill` and
/// `refill_time` of crates/machine), source by source.
pub fn rewarm_charges(caches: &Caches, cpus: crate::measure::BenchCpus, ws: u64, how: Resume) -> Charges {
    const FROM: [&str; 5] = [
        "refill from level 1",
        "refill from level 2",
        "refill from level 3",
        "refill from level 4",
        "refill from memory",
    ];
    let n = caches.levels.len();
    let full: Vec<u64> = (0..n).map(|l| ws.min(caches.capacity(l))).collect();
    let mut fp: Vec<u64> = match how {
        Resume::SameCore { evict } => (0..n).map(|l| caches.decay(l, full[l], evict as u64)).collect(),
        // Another core of the LLC keeps the shared levels; another LLC keeps nothing.
        Resume::Moved { to } if Some(to) != cpus.far => {
            (0..n).map(|l| if caches.levels[l].scope == CacheScope::Llc { full[l] } else { 0 }).collect()
        }
        Resume::Moved { .. } => vec![0; n],
    };
    caches.nest(&mut fp);
    let r = caches.refill(ws, &fp);
    let mut ch = Charges::default();
    for j in 1..=n {
        let one = schedlab_machine::Refill { lines: std::array::from_fn(|k| if k == j { r.lines[k] } else { 0 }), ..r };
        let t = caches.refill_time(&one, caches.memory.mlp, caches.memory.latency_ps);
        if r.lines[j] > 0 {
            ch.0.push((FROM[if j == n { 4 } else { j }], t));
        }
    }
    ch
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
    MachineData { lines: line_rows(m), idle_exits, mm, mm_switch_raw, per_page_ps, caches: measured_caches(m, c) }
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
    if let Some(caches) = &d.caches {
        for &(ws, how, t) in &m.caches.rewarm {
            let whence = match how {
                Resume::SameCore { evict } => format!("same core, after {} KiB of another task", evict >> 10),
                Resume::Moved { to } if Some(to) == m.cpus.far => "moved to another LLC".into(),
                Resume::Moved { .. } => "moved within the LLC".into(),
            };
            let what = format!("re-warm of {} KiB, {whence}", ws >> 10);
            out.push(path(what, Some(t), rewarm_charges(caches, m.cpus, ws as u64, how)));
        }
    }
    let f = m.fork_small;
    let total = Measured { median: f.fork_call.median + f.exit_wait.median, reps: f.fork_call.reps };
    let what = format!("process fork + _exit + waitpid ({} MiB resident)", (f.pages * PAGE_SIZE) >> 20);
    out.push(path(what, Some(total), model::process_fork_exit_charges(c, &d.mm, f.pages * PAGE_SIZE)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exit(idle_ns: u64, exit_ns: i64) -> IdleExit {
        IdleExit { idle_ns, latency: Measured { median: 0, reps: 1 }, exit_ns }
    }

    /// One state per length, shallow to deep whatever the order measured; a negative exit
    /// is none, one beyond its length declared at the length and charged in full; the
    /// states load as a machine's (`Idle::check`).
    #[test]
    fn hypervisor_states_by_idle_length() {
        let s = hypervisor_states(&[exit(1_000_000, 24_700), exit(10_000, -300), exit(30_000, 45_000)]);
        let got: Vec<(&str, u64, u64, Option<Ns>)> =
            s.iter().map(|s| (s.name.as_str(), s.target_residency.0, s.exit_latency.0, s.exit_cost)).collect();
        assert_eq!(
            got,
            [
                ("after-10us", 10_000, 0, None),
                ("after-30us", 30_000, 30_000, Some(Ns(45_000))),
                ("after-1000us", 1_000_000, 24_700, None)
            ]
        );
        let mut m = schedlab_machine::preset("vm").unwrap();
        m.idle.hypervisor_states = s;
        assert_eq!(m.idle.check(2), Ok(()));
    }
    use crate::measure::BenchCpus;

    /// The cache model's refill on the generic hierarchy (one core: 2 MiB of L3 with random
    /// replacement): after a move within the LLC a working set of half L2 comes back from
    /// L3 alone; after another task streamed twice L2 through the core, mostly from L3 and
    /// the part L3's random replacement lost (F·e^(−B/C)) from memory; after a move to
    /// another LLC, from memory, and slower.
    #[test]
    fn rewarm_charges_follow_the_cache_model() {
        let caches = generic(&Costs::default()).caches;
        let cpus = BenchCpus { a: 0, b: Some(1), far: Some(2), b_sibling: false, far_node: false };
        let l2 = caches.levels[1].size;
        let from = |ch: &Charges| ch.0.iter().map(|c| c.0).collect::<Vec<_>>();
        let evicted = rewarm_charges(&caches, cpus, l2 / 2, Resume::SameCore { evict: 2 * l2 as usize });
        let moved = rewarm_charges(&caches, cpus, l2 / 2, Resume::Moved { to: 1 });
        let far = rewarm_charges(&caches, cpus, l2 / 2, Resume::Moved { to: 2 });
        assert_eq!(from(&moved), ["refill from level 3"]);
        assert_eq!(from(&far), ["refill from memory"]);
        assert_eq!(from(&evicted), ["refill from level 3", "refill from memory"], "{evicted:?}");
        // Every line of the half-L2 working set, at L3's latency over the MLP.
        let lines = l2 / 2 / caches.levels[2].line;
        let expect = lines * caches.levels[2].latency_ps / u64::from(caches.memory.mlp);
        assert_eq!(moved.total(), Ns((expect + 500) / 1000));
        assert!(far.total() > moved.total());
    }
}
