//! Address spaces under `--costs full` (`docs/machine.md`, *What the kernel charges*):
//! a `process = true` task has an mm of its own, every other user task shares the
//! workload's one process's mm, a kernel thread has none. A switch to another mm costs the
//! CR3 write (`kernel/sched/core.c: context_switch` → `arch/x86/mm/tlb.c:
//! switch_mm_irqs_off` (6.18)) and, unless PCID kept the mm's TLB entries in one of the
//! CPU's `TLB_NR_DYN_ASIDS` slots (`choose_new_asid`, reused round-robin), a TLB refill of
//! the pages the task touches, owed as its work; a switch to a kernel thread keeps the mm
//! loaded (`enter_lazy_tlb`). `fork` of a process copies its page tables
//! (`kernel/fork.c: dup_mmap` → `mm/memory.c: copy_page_range`), and the last task of an
//! mm to exit tears it down (`kernel/exit.c: exit_mm` → `mmput` → `mm/mmap.c: exit_mmap`).

use crate::Kernel;
use schedlab_machine::{PAGE_SIZE, TLB_NR_DYN_ASIDS};
use schedlab_sim::{CpuId, Ns, TaskId};

/// The mm every thread of the workload's own process shares.
const MAIN_MM: u32 = 0;

/// Per-CPU loaded mms and ASID slots, per-mm users and resident sizes, and the counters.
#[derive(Debug, Default)]
pub(crate) struct MmState {
    /// `cpu_tlbstate.loaded_mm` per CPU.
    loaded: Vec<Option<u32>>,
    /// `cpu_tlbstate.ctxs[]`: the mms owning each CPU's ASID slots, and the next to reuse.
    asids: Vec<[Option<u32>; TLB_NR_DYN_ASIDS]>,
    next_asid: Vec<u8>,
    /// Per mm: tasks using it (`mm_users`) and resident private bytes.
    users: Vec<u32>,
    resident: Vec<u64>,
    pub switches: u64,
    pub switch_ns: u64,
    pub tlb_refill_ns: u64,
    pub fork_ns: u64,
    pub exit_ns: u64,
}

impl MmState {
    pub fn new(cpus: usize) -> MmState {
        MmState {
            loaded: vec![None; cpus],
            asids: vec![[None; TLB_NR_DYN_ASIDS]; cpus],
            next_asid: vec![0; cpus],
            users: vec![0],
            resident: vec![0],
            ..MmState::default()
        }
    }

    /// Whether `mm` still owns one of `cpu`'s ASID slots; if not, it takes the next one.
    fn asid_live(&mut self, cpu: CpuId, mm: u32) -> bool {
        if self.asids[cpu].contains(&Some(mm)) {
            return true;
        }
        let slot = self.next_asid[cpu] as usize;
        self.asids[cpu][slot] = Some(mm);
        self.next_asid[cpu] = ((slot + 1) % TLB_NR_DYN_ASIDS) as u8;
        false
    }
}

impl Kernel<'_> {
    /// The mm of a new task of `template` forked by `parent` (`None`: started by the
    /// workload): none for a kernel thread, a new one for a process, else its parent's
    /// (threads share it) or the workload's process's.
    pub(crate) fn mm_of_new(&mut self, template: usize, parent: Option<TaskId>) -> Option<u32> {
        let tpl = &self.wl.templates[template];
        if tpl.kthread {
            return None;
        }
        let st = &mut self.cost.mm;
        let mm = if tpl.process {
            st.users.push(0);
            st.resident.push(tpl.memory.resident);
            (st.users.len() - 1) as u32
        } else {
            parent.and_then(|p| self.cost.tasks[p].mm).unwrap_or(MAIN_MM)
        };
        self.cost.mm.users[mm as usize] += 1;
        Some(mm)
    }

    /// The address-space part of switching to `next` on `cpu`: the CR3 write when its mm is
    /// not the loaded one (returned, spent in the switch), and the TLB refill of the pages
    /// its working set spans, at most the TLB's reach, owed as its work unless PCID kept
    /// them.
    pub(crate) fn mm_switch(&mut self, cpu: CpuId, next: TaskId) -> Ns {
        let Some(mm) = self.cost.tasks[next].mm else { return Ns(0) }; // lazy TLB
        let st = &mut self.cost.mm;
        if st.loaded[cpu] == Some(mm) {
            return Ns(0);
        }
        st.loaded[cpu] = Some(mm);
        let costs = &self.machine.mm;
        let live = st.asid_live(cpu, mm) && costs.pcid;
        let refill = if live { Ns(0) } else { costs.refill_ns(self.cost.tasks[next].ws.div_ceil(PAGE_SIZE)) };
        st.switches += 1;
        st.switch_ns += costs.cr3_write.0;
        st.tlb_refill_ns += refill.0;
        self.cost.tasks[next].owed += refill;
        let cr3 = costs.cr3_write;
        self.charge_mm(cpu, next, cr3.0, refill.0);
        cr3
    }

    /// `copy_mm` of a new process of `template` (nothing for a thread): its page tables
    /// by resident size (`Mm::fork_ns`), charged on the forking CPU.
    pub(crate) fn mm_fork_ns(&mut self, template: usize) -> Ns {
        let tpl = &self.wl.templates[template];
        if !self.cost.mm_on || !tpl.process {
            return Ns(0);
        }
        let ns = self.machine.mm.fork_ns(tpl.memory.resident);
        self.cost.mm.fork_ns += ns.0;
        ns
    }

    /// `t` exits: it drops its mm; the last user tears it down (`Mm::exit_ns` of its
    /// resident size; the workload's own process is not torn down while the run lasts).
    pub(crate) fn mm_exit_ns(&mut self, t: TaskId) -> Ns {
        if !self.cost.mm_on {
            return Ns(0);
        }
        let Some(mm) = self.cost.tasks[t].mm.take() else { return Ns(0) };
        let st = &mut self.cost.mm;
        st.users[mm as usize] -= 1;
        if st.users[mm as usize] > 0 || mm == MAIN_MM {
            return Ns(0);
        }
        let ns = self.machine.mm.exit_ns(st.resident[mm as usize]);
        st.exit_ns += ns.0;
        ns
    }
}
