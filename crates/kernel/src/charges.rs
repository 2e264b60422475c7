//! Who paid the cost models' charges (`docs/report-format.md`, *Costs*): every refill,
//! address-space switch, remote-memory slowdown and lock line transfer the models of
//! `cache.rs`, `mm.rs`, `memory.rs` and `lines.rs` charge is also added to the task it
//! was charged to and the CPU it was spent on, so the record can say, per task, how much of
//! its run was refill and why. Observation only: nothing here changes a charge, so trace
//! hashes are the same with or without it.
//!
//! Each machine-wide counter (`kernel_counters`) is the sum of the per-task figures (plus,
//! for line transfers, those done on a CPU with no task) and of the per-CPU figures; the
//! kernel tests check both.

use crate::Kernel;
use schedlab_machine::KernelPath;
use schedlab_probe::{CostReport, CostTimes, FreqUse, IdleStateUse, Mode};
use schedlab_sim::{CpuId, Ns, TaskId};

/// Per task and per CPU, what the models charged; per CPU, the open remote-memory
/// segment of its user work.
#[derive(Debug, Default)]
pub(crate) struct Charges {
    pub tasks: Vec<CostTimes>,
    pub cpus: Vec<CostTimes>,
    pub path_lines: Vec<[u64; KernelPath::ALL.len()]>,
    /// Start of the user work in progress and its memory factor (permille; 1000: no
    /// slowdown, or not user work).
    seg_since: Vec<Ns>,
    seg_rate: Vec<u32>,
}

impl Charges {
    pub fn new(cpus: usize) -> Charges {
        Charges {
            tasks: Vec::new(),
            cpus: vec![CostTimes::default(); cpus],
            path_lines: vec![[0; KernelPath::ALL.len()]; cpus],
            seg_since: vec![Ns(0); cpus],
            seg_rate: vec![1000; cpus],
        }
    }
}

/// Where `t`'s lines were relative to `cpu` when it resumes there: `from` is the CPU it
/// last ran on (`None`: never ran, so cold).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RefillFrom {
    Cold,
    SameCore,
    SameLlc,
    OtherLlc,
    OtherNode,
}

impl Kernel<'_> {
    /// Where the lines a task refills on `cpu` were: by the topology between `from` (the
    /// CPU it last ran on; `None`: its first run, cold) and `cpu`.
    pub(crate) fn refill_from(&self, from: Option<CpuId>, cpu: CpuId) -> RefillFrom {
        let topo = &self.machine.topology;
        let Some(from) = from else { return RefillFrom::Cold };
        let (a, b) = (&topo.cpus[from], &topo.cpus[cpu]);
        if a.core == b.core {
            RefillFrom::SameCore
        } else if a.llc == b.llc {
            RefillFrom::SameLlc
        } else if a.node == b.node {
            RefillFrom::OtherLlc
        } else {
            RefillFrom::OtherNode
        }
    }

    /// A refill of `ns` owed by `t` on `cpu` (`cache_refill`).
    pub(crate) fn charge_refill(&mut self, cpu: CpuId, t: TaskId, ns: u64, from: RefillFrom) {
        for c in [&mut self.cost.charges.tasks[t], &mut self.cost.charges.cpus[cpu]] {
            c.refills += 1;
            c.refill_ns += ns;
            let r = &mut c.refill;
            match from {
                RefillFrom::Cold => r.cold_ns += ns,
                RefillFrom::SameCore => r.same_core_ns += ns,
                RefillFrom::SameLlc => r.same_llc_ns += ns,
                RefillFrom::OtherLlc => r.other_llc_ns += ns,
                RefillFrom::OtherNode => r.other_node_ns += ns,
            }
        }
    }

    /// A switch of `cpu` to `t`'s address space: the CR3 write and the TLB refill owed.
    pub(crate) fn charge_mm(&mut self, cpu: CpuId, t: TaskId, cr3: u64, tlb: u64) {
        for c in [&mut self.cost.charges.tasks[t], &mut self.cost.charges.cpus[cpu]] {
            c.mm_switches += 1;
            c.mm_switch_ns += cr3;
            c.tlb_refill_ns += tlb;
        }
    }

    /// `n` lock line transfers costing `ns` on `cpu` in kernel path `path`, for its
    /// `curr` if it has one.
    pub(crate) fn charge_lines(&mut self, cpu: CpuId, path: KernelPath, n: u64, ns: u64) {
        self.cost.charges.path_lines[cpu][path.index()] += ns;
        let c = &mut self.cost.charges.cpus[cpu];
        c.line_transfers += n;
        c.line_ns += ns;
        if let Some(t) = self.cpus[cpu].curr {
            let c = &mut self.cost.charges.tasks[t];
            c.line_transfers += n;
            c.line_ns += ns;
        }
    }

    /// User work starts on `cpu` (`start_user`): closes the segment before and opens one
    /// at the running task's memory factor (none for a wall-clock `spin`, which memory
    /// does not slow).
    #[inline]
    pub(crate) fn remote_open(&mut self, cpu: CpuId, fixed: bool) {
        if !self.cost.numa_on {
            return;
        }
        self.remote_close(cpu);
        self.cost.charges.seg_rate[cpu] = if fixed { 1000 } else { self.cost.rate[cpu] };
    }

    /// Closes `cpu`'s user-work segment at now (its user work stops, or the run ends): of
    /// its `T` ns, `T × (1 − factor)` are what remote memory added, whatever the SMT and
    /// frequency factors (the work rate is their product).
    #[inline]
    pub(crate) fn remote_close(&mut self, cpu: CpuId) {
        let now = self.now;
        let since = std::mem::replace(&mut self.cost.charges.seg_since[cpu], now);
        let rate = std::mem::replace(&mut self.cost.charges.seg_rate[cpu], 1000);
        if rate >= 1000 {
            return;
        }
        let ns = (now - since).0 * u64::from(1000 - rate) / 1000;
        self.cost.charges.cpus[cpu].remote_memory_ns += ns;
        if let Some(t) = self.cpus[cpu].curr {
            self.cost.charges.tasks[t].remote_memory_ns += ns;
        }
    }

    /// Everything charged, per task and CPU, with each CPU's idle and frequency use (the
    /// remote-memory segments still open closed at now).
    pub(crate) fn cost_report(&mut self) -> CostReport {
        for cpu in 0..self.cpus.len() {
            if self.cpus[cpu].mode == Mode::User {
                self.remote_close(cpu);
            }
        }
        let idle = if self.cpuidle.on && !self.machine.idle.poll {
            (0..self.cpus.len())
                .map(|c| {
                    // Every state of the driver, those never entered (or a CPU never woken) at 0.
                    let used = self.cpuidle_usage(c);
                    let states = self.machine.idle.states(c).iter().enumerate();
                    states
                        .map(|(i, st)| {
                            let (usage, t) = used.get(i).map_or((0, 0), |u| (u.1, u.2 .0));
                            IdleStateUse { name: st.name.clone(), usage, time_ns: t }
                        })
                        .collect()
                })
                .collect()
        } else {
            Vec::new()
        };
        let freq = (0..self.cpus.len())
            .map_while(|c| self.cpufreq_stats(c))
            .map(|s| FreqUse {
                time_in_state: s.time_in_state.iter().map(|&(f, t)| (f, t.0)).collect(),
                transitions: s.total_trans,
            })
            .collect::<Vec<_>>();
        let freq = if freq.len() == self.cpus.len() { freq } else { Vec::new() };
        let (energy, task_energy) = self.energy_report();
        let ch = &self.cost.charges;
        CostReport {
            tasks: ch.tasks.clone(),
            cpus: ch.cpus.clone(),
            path_lines: ch.path_lines.clone(),
            idle,
            freq,
            energy,
            task_energy,
        }
    }
}
