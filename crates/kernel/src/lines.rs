//! Cache-line transfers of locks under `--costs full` (`docs/machine.md`, *What the kernel
//! charges*): a lock last held by another CPU brings its line (and the runqueue data
//! beside it) by distance (`Lines::between`: SMT sibling, same LLC, other LLC, other node),
//! inside the critical section, so `rq->lock` hold times grow with it; a contended lock
//! hands over in its kind's order and at its kind's cost (`Spinlock::handover_ns`): ticket
//! locks (x86 `__ticket_spin_lock`, 2.6.25–4.1: the 2.6.32 and 3.4 kernels) and queued
//! spinlocks (`kernel/locking/qspinlock.c: queued_spin_lock_slowpath`, 4.2+) in FIFO order,
//! test-and-set to the waiter whose retry reaches the line first (the nearest).

use crate::config::KernelVersion;
use crate::cpu::Lock;
use crate::vocab::{site_index, LockId, SITES};
use crate::Kernel;
use schedlab_machine::{LockSite, Spinlock};
use schedlab_sim::{CpuId, Ns};

/// Line transfers counted per lock site, and the lock kind in force.
#[derive(Debug, Default)]
pub(crate) struct LineState {
    pub kind: Option<Spinlock>,
    /// Per site (`vocab::SITES`): line transfers (hand-overs' included), hand-overs to a
    /// waiter, and the transfers those hand-overs made.
    pub transfers: [u64; SITES.len()],
    pub handovers: [u64; SITES.len()],
    pub handover_lines: [u64; SITES.len()],
    /// Per site, the time those transfers added inside critical sections.
    pub ns: [u64; SITES.len()],
}

/// `(major, minor)` of a kernel version, for `Spinlock::resolve`.
fn version_number(v: KernelVersion) -> (u32, u32) {
    match v {
        KernelVersion::V2_6_32 => (2, 6),
        KernelVersion::V3_4 => (3, 4),
        KernelVersion::V5_15 => (5, 15),
    }
}

impl Kernel<'_> {
    /// The spinlock kind this run's kernel version has (`lines.spinlock`, `auto` resolved).
    pub(crate) fn spinlock_kind(&self) -> Spinlock {
        self.machine.lines.spinlock.resolve(version_number(self.cfg.version))
    }

    /// The line transfers of taking `locks` on `cpu` at `site` under the full model: from
    /// the CPU that last held each, by distance; a lock handed over to this CPU while others
    /// waited costs its kind's hand-over instead. Returns the time, spent inside the
    /// critical section.
    pub(crate) fn lock_lines(&mut self, cpu: CpuId, locks: &[LockId], site: LockSite) -> Ns {
        let kind = self.cost.lines.kind.unwrap_or(Spinlock::Queued);
        let alpha = self.machine.lines.ticket_alpha;
        let s = site_index(site);
        let mut t = Ns(0);
        for &id in locks {
            let l = &mut self.locks[id as usize];
            let waiters = std::mem::take(&mut l.handover);
            if let Some(from) = l.last.filter(|&f| f != cpu) {
                let m = &self.machine;
                let xfer = m.lines.between(&m.topology, from, cpu);
                let (n, ns) = if waiters > 0 {
                    let n = u64::from(kind.handover_transfers(waiters));
                    self.cost.lines.handover_lines[s] += n;
                    self.cost.lines.handovers[s] += 1;
                    (n, kind.handover_ns(xfer, waiters, alpha))
                } else {
                    (1, xfer)
                };
                t += ns;
                self.cost.lines.transfers[s] += n;
                self.cost.lines.ns[s] += ns.0;
                self.charge_lock_lines(cpu, id, site, n, ns);
            }
            self.locks[id as usize].last = Some(cpu);
        }
        t
    }

    /// `n` line transfers costing `ns` taking `lock` at `site` on `cpu`: in the lock's
    /// statistics and the charges of `cpu` and its task (`charges.rs`). Also the flat
    /// model's transfers (`take_lines`), which cost the machine's constant per distance.
    pub(crate) fn charge_lock_lines(&mut self, cpu: CpuId, lock: LockId, site: LockSite, n: u64, ns: Ns) {
        let st = self.stat(lock, site);
        st.line_transfers += n;
        st.line_ns += ns.0;
        self.charge_lines(cpu, schedlab_machine::KernelPath::of_site(site), n, ns.0);
    }

    /// Which waiter of `lock` the releasing CPU `from` hands it to: the first in line, or
    /// for test-and-set the nearest (its retry reaches the line first; ties in line order).
    /// Notes how many waited, for the hand-over's cost.
    pub(crate) fn handover_to(&mut self, lock: LockId, from: Option<CpuId>) -> usize {
        let l: &mut Lock = &mut self.locks[lock as usize];
        l.handover = l.waiters.len() as u32;
        if self.cost.lines.kind != Some(Spinlock::TestAndSet) {
            return 0;
        }
        let Some(from) = from else { return 0 };
        let m = &self.machine;
        let mut best = 0;
        for (i, &(w, _)) in l.waiters.iter().enumerate() {
            if m.lines.between(&m.topology, from, w) < m.lines.between(&m.topology, from, l.waiters[best].0) {
                best = i;
            }
        }
        best
    }

    /// The cost models' counters (`kernel_counters`): refills, address-space costs and
    /// line transfers per lock site; empty when no model charges.
    pub(crate) fn cost_counters(&self) -> Vec<(String, u64)> {
        let st = &self.cost;
        let mut v = Vec::new();
        if st.caches_on {
            v.push(("refills".to_string(), st.caches.refills));
            v.push(("refill_ns".to_string(), st.caches.refill_ns));
            for (c, ns) in st.caches.refill_cpu.iter().enumerate().filter(|(_, ns)| **ns > 0) {
                v.push((format!("refill_ns.cpu{c}"), *ns));
            }
        }
        if st.numa_on {
            let ns = st.charges.cpus.iter().map(|c| c.remote_memory_ns).sum();
            v.push(("remote_memory_ns".to_string(), ns));
        }
        if st.mm_on {
            let mm = &st.mm;
            v.push(("mm_switches".to_string(), mm.switches));
            v.push(("mm_switch_ns".to_string(), mm.switch_ns));
            v.push(("tlb_refill_ns".to_string(), mm.tlb_refill_ns));
            v.push(("mm_fork_ns".to_string(), mm.fork_ns));
            v.push(("mm_exit_ns".to_string(), mm.exit_ns));
        }
        if st.lines_on {
            for (i, site) in SITES.iter().enumerate() {
                if st.lines.transfers[i] > 0 {
                    v.push((format!("line_transfers.{}", site.name()), st.lines.transfers[i]));
                    v.push((format!("lock_handovers.{}", site.name()), st.lines.handovers[i]));
                    v.push((format!("lock_handover_lines.{}", site.name()), st.lines.handover_lines[i]));
                    v.push((format!("line_ns.{}", site.name()), st.lines.ns[i]));
                }
            }
        }
        v
    }
}
