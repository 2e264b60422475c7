//! NUMA memory under `--costs full` (`docs/machine.md`, *What the kernel charges*): where a
//! task's memory lives (first touch, `MPOL_BIND`, `MPOL_INTERLEAVE`), how much a remote node
//! slows its work, and the per-task state every cost model of the kernel keeps
//! ([`CostState`]: caches, memory, address spaces, line transfers).
//!
//! The work rate of a CPU is a product of independent factors, each in permille and owned by
//! one module (COSTS-PLAN.md): the SMT share (`cpu.rs`), this module's memory factor of the
//! running task, and the frequency factor. A factor changes only at a switch or a memory
//! phase, i.e. when no user work is in progress on the CPU, so nothing needs re-timing here.

use crate::cache::{CacheState, Footprint};
use crate::cpu::Busy;
use crate::Kernel;
use schedlab_machine::{CostModel, Machine};
use schedlab_sim::{CpuId, Ns, TaskId};
use schedlab_workload::{MemPhase, MemPolicy, Workload};

/// No home node yet: first touch places it where the task first runs.
const UNPLACED: u32 = u32::MAX;

/// What the cost models keep per task.
#[derive(Clone, Debug)]
pub(crate) struct MemTask {
    /// Working set in bytes and memory intensity (permille of run time stalled on DRAM at
    /// local latency), as the current memory phase says.
    pub ws: u64,
    pub intensity: u32,
    /// Misses in flight during a refill (`None`: the machine's `memory.mlp`).
    pub mlp: Option<u32>,
    pub policy: MemPolicy,
    /// The node its pages are on (`MPOL_DEFAULT`: set at its first run).
    pub home: u32,
    pub fp: Footprint,
    /// Refill (and TLB refill) owed, charged at its next `run`.
    pub owed: Ns,
    pub refill_ns: u64,
    /// The address space (`mm.rs`); `None`: a kernel thread.
    pub mm: Option<u32>,
}

/// The kernel's state for the cost models beyond the constant costs.
#[derive(Debug, Default)]
pub(crate) struct CostState {
    /// Which models charge (all off under `flat` and `none`).
    pub caches_on: bool,
    pub numa_on: bool,
    pub lines_on: bool,
    pub mm_on: bool,
    pub caches: CacheState,
    pub tasks: Vec<MemTask>,
    /// Per CPU, the memory factor of its running task's user work, in permille.
    pub rate: Vec<u32>,
    pub mm: crate::mm::MmState,
    pub lines: crate::lines::LineState,
    /// Who paid what was charged (`charges.rs`).
    pub charges: crate::charges::Charges,
}

impl CostState {
    /// The models `m` charges; a `mem_node` beyond the machine's nodes is an error located
    /// at the workload's field.
    pub fn new(m: &Machine, wl: &Workload) -> Result<CostState, crate::RunError> {
        for (i, t) in wl.templates.iter().enumerate() {
            if let MemPolicy::Bind(n) = t.memory.policy {
                if n as usize >= m.topology.nodes {
                    let msg =
                        format!("task `{}`: mem_node {n}, but the machine has {} nodes", t.name, m.topology.nodes);
                    return Err(crate::RunError::Workload(wl.error_at(
                        t.memory.node_at,
                        &format!("task[{i}].mem_node"),
                        msg,
                    )));
                }
            }
        }
        let models = m.models();
        Ok(CostState {
            caches_on: models.caches,
            numa_on: models.numa_memory,
            lines_on: models.lines,
            mm_on: models.mm,
            caches: CacheState::new(m, models.caches),
            tasks: Vec::new(),
            rate: vec![1000; m.nr_cpus()],
            mm: crate::mm::MmState::new(m.nr_cpus()),
            lines: crate::lines::LineState::default(),
            charges: crate::charges::Charges::new(m.nr_cpus()),
        })
    }

    /// Load latency of a line of `t`'s memory from `cpu`, in ps: its home node's
    /// (`Machine::memory_latency_ps`), the mean over the nodes when interleaved, local
    /// before its first touch or without the NUMA model.
    pub fn mem_latency_ps(&self, m: &Machine, cpu: CpuId, t: TaskId) -> u64 {
        let task = &self.tasks[t];
        if !self.numa_on {
            return m.caches.memory.latency_ps;
        }
        match (task.policy, task.home) {
            (MemPolicy::Interleave, _) => {
                let n = m.topology.nodes as u64;
                (0..m.topology.nodes).map(|node| m.memory_latency_ps(cpu, node)).sum::<u64>() / n
            }
            (_, UNPLACED) => m.caches.memory.latency_ps,
            (_, home) => m.memory_latency_ps(cpu, home as usize),
        }
    }

    /// The memory factor of `t`'s work on `cpu`, in permille: its run time grows by
    /// intensity × (distance/10 − 1) (`schedlab_machine::numa_rate_permille`); interleaved
    /// pages are spread evenly over the nodes, so the mean distance counts.
    fn mem_rate(&self, m: &Machine, cpu: CpuId, t: TaskId) -> u32 {
        let task = &self.tasks[t];
        if !self.numa_on || task.intensity == 0 {
            return 1000;
        }
        let topo = &m.topology;
        let here = topo.cpus[cpu].node;
        match (task.policy, task.home) {
            (MemPolicy::Interleave, _) => {
                let n = topo.nodes as u64;
                let sum: u64 = topo.numa_distance[here].iter().map(|&d| u64::from(d)).sum();
                let slow = 1000 + u64::from(task.intensity) * sum.saturating_sub(10 * n) / (10 * n);
                (1_000_000 / slow) as u32
            }
            (_, UNPLACED) => 1000,
            (_, home) => schedlab_machine::numa_rate_permille(task.intensity, topo.numa_distance[here][home as usize]),
        }
    }
}

impl Kernel<'_> {
    /// A new task's memory as its template describes it; `parent`: the forking task, whose
    /// address space a thread shares (`mm.rs`).
    pub(crate) fn cost_task_new(&mut self, t: TaskId, template: usize, parent: Option<TaskId>) {
        let mm = self.mm_of_new(template, parent);
        let m = self.wl.templates[template].memory;
        let policy = if self.cost.numa_on { m.policy } else { MemPolicy::FirstTouch };
        let home = match policy {
            MemPolicy::Bind(n) => n,
            _ => UNPLACED,
        };
        debug_assert_eq!(self.cost.tasks.len(), t);
        self.cost.charges.tasks.push(schedlab_probe::CostTimes::default());
        self.cost.tasks.push(MemTask {
            ws: m.working_set,
            intensity: m.intensity,
            mlp: m.mlp,
            policy,
            home,
            fp: Footprint::default(),
            owed: Ns(0),
            refill_ns: 0,
            mm,
        });
    }

    /// `next` is switched in on `cpu` (`context_switch`): first touch places its memory,
    /// its refill is owed, and its memory factor becomes the CPU's.
    pub(crate) fn cost_switch_in(&mut self, cpu: CpuId, next: TaskId) {
        if self.cost.tasks[next].home == UNPLACED && self.cost.numa_on {
            // `MPOL_DEFAULT` allocates on the node of the CPU that touches the page first
            // (`mm/mempolicy.c: alloc_pages_mpol` (6.18) falls back to the local node).
            self.cost.tasks[next].home = self.machine.topology.cpus[cpu].node as u32;
        }
        if self.cost.caches_on {
            self.cache_refill(cpu, next);
        }
        self.cost.rate[cpu] = self.cost.mem_rate(&self.machine, cpu, next);
    }

    /// An `Op::Memory`: `t`'s working set and intensity from here on; a larger working set
    /// brings its new lines in (owed like a refill).
    pub(crate) fn mem_phase(&mut self, cpu: CpuId, t: TaskId, phase: MemPhase) {
        if self.machine.cost_model != CostModel::Full {
            return;
        }
        let task = &mut self.cost.tasks[t];
        let grew = phase.working_set > task.ws;
        task.ws = phase.working_set;
        task.intensity = phase.intensity;
        if grew && self.cost.caches_on {
            self.cache_refill(cpu, t);
        }
        self.cost.rate[cpu] = self.cost.mem_rate(&self.machine, cpu, t);
    }

    /// The rate of `busy` work on `cpu`, in permille: the SMT share times, for user work,
    /// the running task's memory factor.
    #[inline]
    pub(crate) fn work_rate(&self, cpu: CpuId, busy: Busy) -> u32 {
        let smt = self.smt_rate_of(cpu);
        let mem = self.cost.rate[cpu];
        if mem == 1000 || busy != Busy::User {
            return smt;
        }
        ((u64::from(smt) * u64::from(mem) / 1000) as u32).max(1)
    }
}
