//! The cache model the kernel charges under `--costs full` (`docs/machine.md`, *What the
//! kernel charges*): each task's footprint per cache level, each cache instance's count of
//! bytes brought in, and the refill a task owes when it resumes on a CPU whose caches lost
//! part of its working set (Thiébaut and Stone, "Footprints in the cache", ACM TOCS 5(4),
//! 1987: the footprint decays with what others brought in since the task last ran there).
//!
//! Per switch the work is O(cache levels): an instance's counter only grows, and a task
//! remembers the counter it last saw, so what others inserted is one subtraction. The
//! refill is extra work of the task, charged before its own work resumes (`exec.rs`:
//! `op_run`), at the latency of the level each line comes from — the nearer levels of this
//! core, the LLC, the LLC the task left (a cache-to-cache transfer by distance) or its
//! memory's node. Linux charges nothing for this: it is the hardware's cost of a
//! decision (`kernel/sched/fair.c: task_hot` only estimates it from `sysctl_sched_migration_cost`).

use crate::Kernel;
use schedlab_machine::{CacheScope, Machine, Refill, Replacement, Source, MAX_LEVELS};
use schedlab_sim::{CpuId, Ns, TaskId};

/// No instance: the task holds nothing at this level.
const NONE: u32 = u32::MAX;

/// A task's lines in the cache hierarchy.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Footprint {
    /// Bytes of its working set held at each level or nearer the core (nested).
    pub bytes: [u64; MAX_LEVELS],
    /// The instance of each level those bytes are in (`NONE`: none).
    pub inst: [u32; MAX_LEVELS],
    /// That instance's insertion count when the task last filled it.
    pub seen: [u64; MAX_LEVELS],
    /// The CPU it last ran on (where a remote LLC's lines come from).
    pub cpu: u32,
}

impl Default for Footprint {
    fn default() -> Self {
        Footprint { bytes: [0; MAX_LEVELS], inst: [NONE; MAX_LEVELS], seen: [0; MAX_LEVELS], cpu: NONE }
    }
}

/// Per cache level: the instance each CPU uses and each instance's bytes brought in.
#[derive(Clone, Debug, Default)]
pub(crate) struct CacheState {
    /// `inst[l][cpu]`: the instance of level `l` CPU `cpu` uses (its core or its LLC).
    inst: Vec<Vec<u32>>,
    /// `inserted[l][i]`: bytes that aged the lines of instance `i` of level `l` since the
    /// run began (brought in, or under LRU touched), and the task that last ran there.
    inserted: Vec<Vec<u64>>,
    last: Vec<Vec<u32>>,
    /// Refills charged (non-zero), their total, and per CPU.
    pub refills: u64,
    pub refill_ns: u64,
    pub refill_cpu: Vec<u64>,
}

impl CacheState {
    /// The instances of `m`'s levels (empty when the cache model is off).
    pub fn new(m: &Machine, on: bool) -> CacheState {
        let n = m.nr_cpus();
        if !on {
            return CacheState { refill_cpu: vec![0; n], ..CacheState::default() };
        }
        let levels = m.caches.levels.len().min(MAX_LEVELS);
        let cores = m.topology.cpus.iter().map(|c| c.core + 1).max().unwrap_or(0);
        let llcs = m.topology.cpus.iter().map(|c| c.llc + 1).max().unwrap_or(0);
        let mut inst = Vec::with_capacity(levels);
        let mut inserted = Vec::with_capacity(levels);
        for lv in &m.caches.levels[..levels] {
            let (of, count): (fn(&schedlab_machine::CpuInfo) -> usize, usize) = match lv.scope {
                CacheScope::Core => (|c| c.core, cores),
                CacheScope::Llc => (|c| c.llc, llcs),
            };
            inst.push(m.topology.cpus.iter().map(|c| of(c) as u32).collect());
            inserted.push(vec![0; count]);
        }
        let last = inserted.iter().map(|v| vec![NONE; v.len()]).collect();
        CacheState { inst, inserted, last, refills: 0, refill_ns: 0, refill_cpu: vec![0; n] }
    }
}

impl Kernel<'_> {
    /// `t` resumes on `cpu` (`context_switch`, or its working set grew): what it must refill,
    /// owed as extra work before its own work resumes; its footprint is whole again and the
    /// lines it brought in or touched age every other task's footprint in those caches.
    pub(crate) fn cache_refill(&mut self, cpu: CpuId, t: TaskId) {
        let ws = self.cost.tasks[t].ws;
        if ws == 0 || self.cost.caches.inst.is_empty() {
            return;
        }
        let (ns, refill) = self.refill_time(cpu, t);
        let last = self.cost.tasks[t].fp.cpu;
        let from = self.refill_from((last != NONE).then_some(last as usize), cpu);
        let m = &self.machine.caches;
        let st = &mut self.cost;
        let levels = st.caches.inst.len();
        let fp = &mut st.tasks[t].fp;
        for l in 0..levels {
            let i = st.caches.inst[l][cpu];
            let full = ws.min(m.capacity(l));
            // What ages the others' lines: under random replacement only the lines brought
            // in evict; under LRU every line the task touches becomes newer than theirs
            // (once per run of another task: a task resuming after itself adds nothing).
            let ages = match m.levels[l].replacement {
                Replacement::Random => refill.bytes[l],
                Replacement::Lru if st.caches.last[l][i as usize] == t as u32 => 0,
                Replacement::Lru => full,
            };
            st.caches.last[l][i as usize] = t as u32;
            let ins = &mut st.caches.inserted[l][i as usize];
            *ins = ins.saturating_add(ages);
            fp.bytes[l] = full;
            fp.inst[l] = i;
            fp.seen[l] = *ins;
        }
        fp.cpu = cpu as u32;
        if ns.0 > 0 {
            st.caches.refills += 1;
            st.caches.refill_ns += ns.0;
            st.caches.refill_cpu[cpu] += ns.0;
            st.tasks[t].owed += ns;
            st.tasks[t].refill_ns += ns.0;
            self.charge_refill(cpu, t, ns.0, from);
        }
    }

    /// The refill time of `t` on `cpu` and what it refills, from its footprints as they
    /// are now: each level's footprint decayed by
    /// what others brought into that instance since (`Caches::decay`), none where it last
    /// ran elsewhere; the lines no level here holds come from the LLC it left while that
    /// still holds them (a transfer by distance, `Lines::between`), else from memory at its
    /// node's latency.
    fn refill_time(&self, cpu: CpuId, t: TaskId) -> (Ns, Refill) {
        let m = &*self.machine;
        let caches = &m.caches;
        let st = &self.cost;
        let levels = st.caches.inst.len();
        let task = &st.tasks[t];
        let mut held = [0u64; MAX_LEVELS];
        let mut remote = 0u64;
        for (l, h) in held.iter_mut().enumerate().take(levels) {
            let (was, i) = (task.fp.inst[l], st.caches.inst[l][cpu]);
            if was == NONE {
                continue;
            }
            let others = st.caches.inserted[l][was as usize] - task.fp.seen[l];
            // Less than a line lost is no line to fetch: whole lines survive or go.
            let line = caches.levels[l].line;
            let left = match others {
                0 => task.fp.bytes[l],
                _ => caches.decay(l, task.fp.bytes[l], others).next_multiple_of(line).min(task.fp.bytes[l]),
            };
            if was == i {
                *h = left;
            } else if l == levels - 1 {
                remote = left;
            }
        }
        caches.nest(&mut held[..levels]);
        let ws = task.ws;
        let r = caches.refill(ws, &held);
        let line = caches.levels[levels - 1].line;
        let mem_lines = r.lines[levels];
        let from_remote = mem_lines.min(remote.min(ws) / line);
        let mut src = [Source { lines: 0, line_bytes: line, latency_ps: 0, bandwidth: None }; MAX_LEVELS + 2];
        for (j, lv) in caches.levels.iter().enumerate().take(levels).skip(1) {
            src[j] =
                Source { lines: r.lines[j], line_bytes: lv.line, latency_ps: lv.latency_ps, bandwidth: lv.bandwidth };
        }
        let mem_ps = self.cost.mem_latency_ps(m, cpu, t);
        src[levels] = Source {
            lines: mem_lines - from_remote,
            line_bytes: line,
            latency_ps: mem_ps,
            bandwidth: Some(caches.memory.bandwidth),
        };
        if from_remote > 0 {
            let from = self.cost.tasks[t].fp.cpu as usize;
            let xfer_ps = m.lines.between(&m.topology, from, cpu).0 * 1000;
            src[levels + 1] = Source { lines: from_remote, line_bytes: line, latency_ps: xfer_ps, bandwidth: None };
        }
        let mlp = self.cost.tasks[t].mlp.unwrap_or(caches.memory.mlp);
        (schedlab_machine::refill_time_ns(&src[..levels + 2], mlp), r)
    }

    /// The refill `t` owes (`cache_refill`, and the TLB refill of `mm.rs`), taken to be
    /// charged as extra work of the `run` it starts or resumes.
    #[inline]
    pub(crate) fn take_owed(&mut self, t: TaskId) -> Ns {
        match self.cost.tasks.get_mut(t) {
            Some(m) => std::mem::take(&mut m.owed),
            None => Ns(0),
        }
    }
}
