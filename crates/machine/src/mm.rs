//! Address spaces: what switching, forking and tearing down an mm costs.

use crate::spec::{Field, Kind, Table, Val};
use schedlab_sim::Ns;

/// `TLB_NR_DYN_ASIDS` (`arch/x86/include/asm/tlbflush.h`, used by `arch/x86/mm/tlb.c:
/// choose_new_asid`): with PCID each CPU keeps the TLB entries of its last 6 mms, reusing
/// the slots round-robin.
pub const TLB_NR_DYN_ASIDS: usize = 6;

/// A base page.
pub const PAGE_SIZE: u64 = 4096;

/// The address-space costs.
#[derive(Clone, Debug, PartialEq)]
pub struct Mm {
    /// `switch_mm_irqs_off` to a different mm: the CR3 write (serialising) and its
    /// bookkeeping, without the TLB refill.
    pub cr3_write: Ns,
    /// One page walk after the TLB lost the page's entry (page-table lines in cache).
    pub tlb_walk: Ns,
    /// Pages the TLBs map at once (L1 DTLB + STLB entries for 4 KiB pages): a refill walks
    /// at most this many.
    pub tlb_entries: u64,
    /// The CPU has PCID and the kernel uses it (x86 from v4.14): a switch to an mm that
    /// still owns one of the CPU's [`TLB_NR_DYN_ASIDS`] slots keeps its TLB entries.
    pub pcid: bool,
    /// `fork` of a process: `copy_page_range` per resident private page (PTE copied and
    /// write-protected, the page's map count raised).
    pub fork_per_page: Ns,
    /// `exit_mmap` per resident page (unmapped, freed when the last reference goes).
    pub exit_per_page: Ns,
}

impl Mm {
    /// A switch from one mm to another on a CPU (`kernel/sched/core.c: context_switch` →
    /// `arch/x86/mm/tlb.c: switch_mm_irqs_off` (6.18)): the CR3 write, plus a walk per
    /// page the task touches (at most the TLB's reach) unless PCID kept its entries
    /// (`asid_live`: the mm still owns a slot with a current `tlb_gen`). A switch between
    /// threads of one mm, or to a kernel thread (`enter_lazy_tlb`), costs nothing here.
    pub fn switch_ns(&self, pages_touched: u64, asid_live: bool) -> Ns {
        if self.pcid && asid_live {
            return self.cr3_write;
        }
        self.cr3_write + self.refill_ns(pages_touched)
    }

    /// Walks to refill a flushed TLB for `pages_touched` pages (the first user task after
    /// a `CPUIDLE_FLAG_TLB_FLUSHED` idle state pays this without the CR3 write's mm change).
    pub fn refill_ns(&self, pages_touched: u64) -> Ns {
        Ns(pages_touched.min(self.tlb_entries).saturating_mul(self.tlb_walk.0))
    }

    /// `copy_mm` → `dup_mmap` → `copy_page_range` for `resident_bytes` of private memory
    /// (`kernel/fork.c`, `mm/memory.c` (6.18)), by whole pages rounded up.
    pub fn fork_ns(&self, resident_bytes: u64) -> Ns {
        Ns(resident_bytes.div_ceil(PAGE_SIZE).saturating_mul(self.fork_per_page.0))
    }

    /// `exit_mmap` of `resident_bytes` (`mm/mmap.c` (6.18)).
    pub fn exit_ns(&self, resident_bytes: u64) -> Ns {
        Ns(resident_bytes.div_ceil(PAGE_SIZE).saturating_mul(self.exit_per_page.0))
    }
}

const MM_TIME: Kind = Kind::Duration { max: Ns::from_us(100) };

/// `[mm]`.
pub static MM: Table<Mm> = Table {
    section: "mm",
    what: "mm field",
    fields: &[
        Field {
            name: "cr3_write",
            kind: MM_TIME,
            optional: false,
            doc: "switch_mm_irqs_off to another mm: the CR3 write and bookkeeping, without the TLB refill.",
            get: |m| Val::Num(m.cr3_write.0),
            set: |m, v| m.cr3_write = Ns(v.num()),
        },
        Field {
            name: "tlb_walk",
            kind: MM_TIME,
            optional: false,
            doc: "One page walk refilling a TLB entry.",
            get: |m| Val::Num(m.tlb_walk.0),
            set: |m, v| m.tlb_walk = Ns(v.num()),
        },
        Field {
            name: "tlb_entries",
            kind: Kind::Int { min: 1, max: 1 << 20, unit: "pages" },
            optional: false,
            doc: "Pages the TLBs map at once (L1 DTLB + STLB): a refill walks at most this many.",
            get: |m| Val::Num(m.tlb_entries),
            set: |m, v| m.tlb_entries = v.num(),
        },
        Field {
            name: "pcid",
            kind: Kind::Bool,
            optional: false,
            doc: "PCID in use: a switch back to one of the CPU's last 6 mms (TLB_NR_DYN_ASIDS) keeps its TLB entries.",
            get: |m| Val::Num(u64::from(m.pcid)),
            set: |m, v| m.pcid = v.num() != 0,
        },
        Field {
            name: "fork_per_page",
            kind: MM_TIME,
            optional: false,
            doc: "Process fork: copy_page_range per resident private page.",
            get: |m| Val::Num(m.fork_per_page.0),
            set: |m, v| m.fork_per_page = Ns(v.num()),
        },
        Field {
            name: "exit_per_page",
            kind: MM_TIME,
            optional: false,
            doc: "exit_mmap per resident page.",
            get: |m| Val::Num(m.exit_per_page.0),
            set: |m, v| m.exit_per_page = Ns(v.num()),
        },
    ],
};

#[cfg(test)]
mod tests {
    use super::*;

    fn mm(pcid: bool) -> Mm {
        Mm { cr3_write: Ns(100), tlb_walk: Ns(9), tlb_entries: 576, pcid, fork_per_page: Ns(40), exit_per_page: Ns(40) }
    }

    #[test]
    fn switch_fork_and_exit_costs() {
        assert_eq!(mm(false).switch_ns(10, true), Ns(100 + 90), "no PCID: every switch flushes");
        assert_eq!(mm(true).switch_ns(10, true), Ns(100), "a live ASID keeps the entries");
        assert_eq!(mm(true).switch_ns(10, false), Ns(190));
        assert_eq!(mm(true).switch_ns(100_000, false), Ns(100 + 576 * 9), "at most the TLB's reach");
        // Redis's "fork time per GB" order: 1 GiB resident = 262 144 pages × 40 ns.
        assert_eq!(mm(true).fork_ns(1 << 30), Ns(262_144 * 40));
        assert_eq!(mm(true).exit_ns(1), Ns(40), "a partial page is a page");
        assert_eq!(TLB_NR_DYN_ASIDS, 6);
    }
}
