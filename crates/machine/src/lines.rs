//! Cache-line transfers between CPUs by distance class, and how spinlocks hand over: the
//! data and pure functions the kernel's line and lock models charge.

use crate::spec::{Field, Kind, Table, Val};
use crate::Topology;
use schedlab_sim::Ns;

/// The longest one line transfer may take in a machine file.
pub const MAX_TRANSFER: Ns = Ns::from_us(10);

/// One-way time for a line last written by one CPU (Modified in its cache) to reach
/// another, by how far apart they are.
#[derive(Clone, Debug, PartialEq)]
pub struct Lines {
    /// SMT siblings: the line never leaves the core's L1.
    pub smt: Ns,
    /// Another core sharing the LLC.
    pub same_llc: Ns,
    /// Another LLC of the same NUMA node (the other die of a multi-chip package).
    pub other_llc: Ns,
    /// Another node, for any SLIT distance [`Lines::by_distance`] does not list.
    pub other_node: Ns,
    /// Another node at a given SLIT distance (one or two interconnect hops), ascending by
    /// distance.
    pub by_distance: Vec<(u32, Ns)>,
    /// How spinlocks hand over.
    pub spinlock: Spinlock,
    /// Ticket locks: the extra share of a transfer each further waiter adds to a hand-over,
    /// in permille ([`Spinlock::handover_ns`]).
    pub ticket_alpha: u32,
}

impl Lines {
    /// The transfer from `from` to `to`: 0 on the same CPU, else by class.
    pub fn between(&self, t: &Topology, from: usize, to: usize) -> Ns {
        if from == to {
            Ns(0)
        } else if t.same_core(from, to) {
            self.smt
        } else if t.shares_llc(from, to) {
            self.same_llc
        } else if t.cpus[from].node == t.cpus[to].node {
            self.other_llc
        } else {
            self.remote(t.distance(from, to))
        }
    }

    /// Another node at SLIT distance `d`.
    pub fn remote(&self, d: u32) -> Ns {
        self.by_distance.iter().find(|(k, _)| *k == d).map_or(self.other_node, |(_, ns)| *ns)
    }

    /// `(field, reason)` for a table that cannot be right: classes must not get cheaper
    /// with distance, and a listed distance is a SLIT entry (11..=255).
    pub fn check(&self) -> Result<(), (String, String)> {
        let order = [
            ("smt", self.smt),
            ("same_llc", self.same_llc),
            ("other_llc", self.other_llc),
            ("other_node", self.other_node),
        ];
        for w in order.windows(2) {
            if w[1].1 < w[0].1 {
                return Err((
                    format!("lines.{}", w[1].0),
                    format!("cheaper than lines.{} ({} < {})", w[0].0, w[1].1, w[0].1),
                ));
            }
        }
        for (i, (d, ns)) in self.by_distance.iter().enumerate() {
            let field = format!("lines.distance.{d}");
            if !(11..=255).contains(d) {
                return Err((field, format!("distance {d} is outside 11..=255 (a SLIT entry between two nodes)")));
            }
            if *ns < self.other_llc {
                return Err((field, format!("cheaper than lines.other_llc ({ns} < {})", self.other_llc)));
            }
            if i > 0 && self.by_distance[i - 1].0 >= *d {
                return Err((field, "distances must be listed once, ascending".into()));
            }
        }
        Ok(())
    }
}

/// How a spinlock passes from its owner to the next CPU waiting for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spinlock {
    /// By the kernel version: ticket locks before 4.2, queued spinlocks from 4.2.
    Auto,
    /// x86 ticket spinlock (`arch/x86/include/asm/spinlock.h: __ticket_spin_lock,
    /// __ticket_spin_unlock` (2.6.25–4.1), the 2.6.32 and 3.4 runqueue locks): FIFO by
    /// `LOCK XADD` order; every waiter spins on the lock word, so a release invalidates all
    /// their copies and the next owner waits on average for half of their re-reads.
    Ticket,
    /// Queued spinlock (`kernel/locking/qspinlock.c: queued_spin_lock_slowpath` (4.2+;
    /// 5.15, 6.18)): a pending waiter, then an MCS queue in which each waiter spins on its
    /// own node: a hand-over moves the lock word to the queue head, the head's claim, and
    /// one write to the next waiter's node — flat in the number of waiters.
    Queued,
    /// The paravirtual queued spinlock of a KVM guest with `KVM_FEATURE_PV_UNHALT`
    /// (`arch/x86/kernel/kvm.c: kvm_spinlock_init` (6.18)): the queued lock's hand-over
    /// while the waiters' vCPUs run; a waiter that spun too long halts and is kicked by
    /// hypercall (that exit is not in this table).
    PvQueued,
    /// Test-and-set with back-off and no order among waiters: FreeBSD's spin mutexes
    /// (`sys/kern/kern_mutex.c: _mtx_lock_spin_cookie`), and a KVM guest without
    /// `PV_UNHALT` (`arch/x86/include/asm/qspinlock.h: virt_spin_lock` (6.18)). The first
    /// retry to reach the line wins; every waiter's retry moves it once more.
    TestAndSet,
}

/// x86 enabled queued spinlocks in v4.2 (commit d73a33973f16, "locking/qspinlock, x86:
/// Enable x86-64 to use queued spinlocks").
pub const QSPINLOCK_SINCE: (u32, u32) = (4, 2);

impl Spinlock {
    /// [`Spinlock::Auto`] resolved for kernel version `(major, minor)`.
    pub fn resolve(self, kernel: (u32, u32)) -> Spinlock {
        match self {
            Spinlock::Auto if kernel < QSPINLOCK_SINCE => Spinlock::Ticket,
            Spinlock::Auto => Spinlock::Queued,
            other => other,
        }
    }

    /// Line transfers one hand-over to the next of `waiters` waiting CPUs costs (0 with no
    /// waiter: the next acquisition is an ordinary transfer of the lock's line).
    /// Ticket: the release's invalidation is re-read by every waiter, `k` transfers, plus
    /// the new owner's own: `k + 1` (Boyd-Wickizer, Kaashoek, Morris and Zeldovich,
    /// "Non-scalable locks are dangerous", Linux Symposium 2012). Queued: 2 with a pending
    /// waiter only (the lock word to it, its `clear_pending_set_locked`), 3 with a queue
    /// (the word to the head, the head's claim, the MCS write to its successor's node).
    /// Test-and-set: every waiter's retry moves the line, `k + 1`.
    pub fn handover_transfers(self, waiters: u32) -> u32 {
        match (self, waiters) {
            (_, 0) => 0,
            (Spinlock::Queued | Spinlock::PvQueued | Spinlock::Auto, 1) => 2,
            (Spinlock::Queued | Spinlock::PvQueued | Spinlock::Auto, _) => 3,
            (Spinlock::Ticket | Spinlock::TestAndSet, k) => k.saturating_add(1),
        }
    }

    /// The time a hand-over adds to the critical path between the release and the next
    /// owner's first instruction, for `waiters` waiting CPUs and one owner-to-next
    /// transfer `xfer`. Ticket: `xfer × (1 + α(k − 1))`, α = `ticket_alpha`‰ (½: the
    /// next owner's read is served in random order among the `k` re-reads, `(k+1)/2`
    /// transfers on average; 1: adversarial order), truncated to whole ns. Queued:
    /// [`Spinlock::handover_transfers`] × `xfer`. Test-and-set: one transfer (the first
    /// retry to arrive takes it).
    pub fn handover_ns(self, xfer: Ns, waiters: u32, ticket_alpha: u32) -> Ns {
        match (self, waiters) {
            (_, 0) => Ns(0),
            (Spinlock::Ticket, k) => {
                let permille = 1000 + u64::from(ticket_alpha) * u64::from(k - 1);
                Ns(xfer.0.saturating_mul(permille) / 1000)
            }
            (Spinlock::TestAndSet, _) => xfer,
            (q, k) => Ns(xfer.0.saturating_mul(u64::from(q.handover_transfers(k)))),
        }
    }
}

const SPINLOCKS: &[&str] = &["auto", "ticket", "queued", "pv-queued", "test-and-set"];

fn spinlock_of(i: u64) -> Spinlock {
    [Spinlock::Auto, Spinlock::Ticket, Spinlock::Queued, Spinlock::PvQueued, Spinlock::TestAndSet][i as usize % 5]
}

const TRANSFER: Kind = Kind::Duration { max: MAX_TRANSFER };

/// `[lines]`; the per-distance entries are `[lines.distance]` keys (`16 = "82ns"`).
pub static LINES: Table<Lines> = Table {
    section: "lines",
    what: "lines field",
    fields: &[
        Field {
            name: "smt",
            kind: TRANSFER,
            optional: false,
            doc: "A line last written by the SMT sibling (it stays in the core's L1).",
            get: |l| Val::Num(l.smt.0),
            set: |l, v| l.smt = Ns(v.num()),
        },
        Field {
            name: "same_llc",
            kind: TRANSFER,
            optional: false,
            doc: "A line last written by another core of the LLC.",
            get: |l| Val::Num(l.same_llc.0),
            set: |l, v| l.same_llc = Ns(v.num()),
        },
        Field {
            name: "other_llc",
            kind: TRANSFER,
            optional: false,
            doc: "A line last written in another LLC of the same node.",
            get: |l| Val::Num(l.other_llc.0),
            set: |l, v| l.other_llc = Ns(v.num()),
        },
        Field {
            name: "other_node",
            kind: TRANSFER,
            optional: false,
            doc: "A line last written on another node, for a SLIT distance `[lines.distance]` does not list.",
            get: |l| Val::Num(l.other_node.0),
            set: |l, v| l.other_node = Ns(v.num()),
        },
        Field {
            name: "spinlock",
            kind: Kind::Choice(SPINLOCKS),
            optional: false,
            doc: "How spinlocks hand over: `auto` (ticket before Linux 4.2, queued from 4.2), `ticket`, `queued`, `pv-queued` (KVM guest), `test-and-set`.",
            get: |l| Val::Num(l.spinlock as u64),
            set: |l, v| l.spinlock = spinlock_of(v.num()),
        },
        Field {
            name: "ticket_alpha",
            kind: Kind::Int { min: 0, max: 1000, unit: "permille" },
            optional: false,
            doc: "Ticket locks: share of a transfer each waiter beyond the first adds to a hand-over (500: random service order; 1000: adversarial).",
            get: |l| Val::Num(u64::from(l.ticket_alpha)),
            set: |l, v| l.ticket_alpha = v.num() as u32,
        },
    ],
};

/// The kind of a `[lines.distance]` entry.
pub const DISTANCE_ENTRY: Kind = TRANSFER;

#[cfg(test)]
mod tests {
    use super::*;

    /// Opteron-like: 2 nodes × 2 LLCs × 2 cores × 2 threads, SLIT 16 and 22.
    fn lines() -> Lines {
        Lines {
            smt: Ns(7),
            same_llc: Ns(39),
            other_llc: Ns(77),
            other_node: Ns(82),
            by_distance: vec![(16, Ns(82)), (22, Ns(120))],
            spinlock: Spinlock::Auto,
            ticket_alpha: 500,
        }
    }

    #[test]
    fn transfers_by_distance_class() {
        let slit = vec![vec![10, 16, 22], vec![16, 10, 16], vec![22, 16, 10]];
        let t = Topology::new(3, 2, 2, 2, Some(slit));
        let l = lines();
        let sibling = t.smt_siblings(0).nth(1).unwrap();
        assert_eq!(l.between(&t, 0, 0), Ns(0));
        assert_eq!(l.between(&t, 0, sibling), Ns(7));
        assert_eq!(l.between(&t, 0, 1), Ns(39));
        assert_eq!(l.between(&t, 0, 2), Ns(77), "other LLC, same node");
        assert_eq!(l.between(&t, 0, 4), Ns(82), "one hop (16)");
        assert_eq!(l.between(&t, 0, 8), Ns(120), "two hops (22)");
        assert_eq!(l.remote(30), Ns(82), "unlisted distance: other_node");
        assert_eq!(l.check(), Ok(()));
    }

    #[test]
    fn checks_refuse_transfers_getting_cheaper_with_distance() {
        let mut l = lines();
        l.other_llc = Ns(20);
        assert_eq!(l.check().unwrap_err().0, "lines.other_llc");
        let mut l = lines();
        l.by_distance.push((10, Ns(200)));
        assert!(l.check().unwrap_err().1.contains("11..=255"));
    }

    #[test]
    fn spinlock_versions() {
        assert_eq!(Spinlock::Auto.resolve((2, 6)), Spinlock::Ticket);
        assert_eq!(Spinlock::Auto.resolve((3, 4)), Spinlock::Ticket);
        assert_eq!(Spinlock::Auto.resolve((4, 1)), Spinlock::Ticket);
        assert_eq!(Spinlock::Auto.resolve((4, 2)), Spinlock::Queued);
        assert_eq!(Spinlock::Auto.resolve((6, 18)), Spinlock::Queued);
        assert_eq!(Spinlock::PvQueued.resolve((2, 6)), Spinlock::PvQueued);
    }

    /// Ticket hand-over grows linearly with the waiters ((k + 1)/2 transfers at α = ½);
    /// queued stays at 2–3 transfers however many wait.
    #[test]
    fn handover_costs() {
        let x = Ns(40);
        let t = |k| Spinlock::Ticket.handover_ns(x, k, 500);
        assert_eq!([t(0), t(1), t(2), t(3), t(7)], [Ns(0), Ns(40), Ns(60), Ns(80), Ns(160)]);
        assert_eq!(Spinlock::Ticket.handover_ns(x, 3, 1000), Ns(120));
        assert_eq!(Spinlock::Ticket.handover_transfers(7), 8);
        let q = |k| Spinlock::Queued.handover_ns(x, k, 500);
        assert_eq!([q(0), q(1), q(2), q(31)], [Ns(0), Ns(80), Ns(120), Ns(120)]);
        assert_eq!(Spinlock::PvQueued.handover_transfers(31), 3);
        assert_eq!(Spinlock::TestAndSet.handover_ns(x, 9, 500), x);
        assert_eq!(Spinlock::TestAndSet.handover_transfers(9), 10);
    }
}
