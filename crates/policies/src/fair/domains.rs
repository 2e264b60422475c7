//! Scheduling domains built from the machine topology (`kernel/sched/topology.c`:
//! `sd_init`, `default_topology`, `sd_degenerate`, `build_sched_groups`; v5.15 values).
//!
//! Levels bottom-up: SMT (threads of a core), MC (cores sharing the LLC), DIE (the package,
//! here a NUMA node), NUMA (the whole machine). A level whose span equals its child's, or
//! that spans one CPU, is removed. A domain's groups are its child's spans (one CPU each at
//! the lowest level), the local group first.

use schedlab_machine::{CpuInfo, CpuSet, Machine};
use schedlab_sim::CpuId;

pub const SD_BALANCE_NEWIDLE: u32 = 0x0001;
pub const SD_BALANCE_EXEC: u32 = 0x0002;
pub const SD_BALANCE_FORK: u32 = 0x0004;
pub const SD_BALANCE_WAKE: u32 = 0x0008;
pub const SD_WAKE_AFFINE: u32 = 0x0010;
pub const SD_SHARE_CPUCAPACITY: u32 = 0x0080;
pub const SD_SHARE_PKG_RESOURCES: u32 = 0x0200;
pub const SD_SERIALIZE: u32 = 0x0400;
pub const SD_PREFER_SIBLING: u32 = 0x1000;
pub const SD_NUMA: u32 = 0x4000;

/// `RECLAIM_DISTANCE`: NUMA levels farther than this do no fork/exec/wake-affine placement.
const RECLAIM_DISTANCE: u32 = 30;

/// One CPU's domain at one level (`struct sched_domain`), with its balancing state.
#[derive(Clone, Debug)]
pub struct Domain {
    pub name: &'static str,
    pub span: CpuSet,
    pub span_weight: usize,
    /// Child spans; `groups[0]` holds this CPU. Shared, so that a balancing pass can hold
    /// its domain (a clone) while it changes the balancer's state without copying them.
    pub groups: std::sync::Arc<[CpuSet]>,
    pub flags: u32,
    pub imbalance_pct: u64,
    pub cache_nice_tries: u32,
    pub busy_factor: u64,
    /// ms.
    pub min_interval: u64,
    pub max_interval: u64,
    /// ms; adapts between `min_interval` and `max_interval` (512 when all pinned).
    pub balance_interval: u64,
    /// jiffies.
    pub last_balance: u64,
    pub nr_balance_failed: u32,
    /// ns (`max_newidle_lb_cost`), a modelled cost per attempt.
    pub max_newidle_lb_cost: u64,
    /// jiffies: when `max_newidle_lb_cost` last decayed (v5.15 keeps the next decay
    /// time, `next_decay_max_lb_cost`, one HZ later: the same instant).
    pub last_decay_max_lb_cost: u64,
    /// v4.9 `busy_idx`, `idle_idx`, `newidle_idx`: which `rq->cpu_load[]` history
    /// `source_load`/`target_load` read for a busy, idle or newly idle balance (0: now).
    pub load_idx: [usize; 3],
}

impl Domain {
    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }
}

/// Every CPU's domains, bottom-up, and the LLC facts wakeup placement uses.
#[derive(Clone, Debug)]
pub struct Domains {
    pub per_cpu: Vec<Vec<Domain>>,
    /// `sd_llc_size` and `sd_llc_id` (lowest CPU of the LLC).
    pub llc_size: Vec<usize>,
    pub llc_id: Vec<CpuId>,
    /// The CPUs of each LLC in order, indexed by `llc_id` (empty for other CPUs).
    pub llc_cpus: Vec<Vec<CpuId>>,
}

impl Domains {
    /// The boot domains: one span over the whole machine.
    pub fn build(m: &Machine) -> Domains {
        Domains::build_spans(m, &[CpuSet::full(m.nr_cpus())])
    }

    /// `build_sched_domains` over each of `doms` (`kernel/sched/topology.c`, v5.15/v6.12):
    /// every level's span is the topology mask cut to the CPU's domain span
    /// (`build_sched_domain`: `tl->mask(cpu)` ∩ `cpu_map`), then degenerate levels go. A
    /// CPU in none of `doms` is attached to the null domain (no levels), and its LLC is
    /// itself (`update_top_cache_domain`: `sd_llc_size` 1, `sd_llc_id` the CPU).
    pub fn build_spans(m: &Machine, doms: &[CpuSet]) -> Domains {
        let topo = &m.topology;
        let n = m.nr_cpus();
        let mut pool = SetPool::default();
        let mut memo = GroupMemo::default();
        // Each core's, LLC's and node's mask built once (`Topology::smt_mask` and its kin
        // scan every CPU: calling them per CPU per group was quadratic, 1.5 s at 4096 CPUs).
        let masks = |key: fn(&CpuInfo) -> usize| {
            let mut m: Vec<CpuSet> = Vec::new();
            for (c, info) in topo.cpus.iter().enumerate() {
                let k = key(info);
                if m.len() <= k {
                    m.resize(k + 1, CpuSet::empty(n));
                }
                m[k].insert(c);
            }
            m
        };
        let (cores, llcs, nodes) = (masks(|i| i.core), masks(|i| i.llc), masks(|i| i.node));
        let all = CpuSet::full(n);
        let dom_of = dom_index(doms, n);
        let cut = |mut s: CpuSet, c: CpuId| {
            if let Some(d) = dom_of[c] {
                s.intersect_with(&doms[d]);
            }
            s
        };
        let mut levels: Vec<Level> = vec![
            (
                "SMT",
                Box::new(|c| cut(cores[topo.cpus[c].core].clone(), c)),
                SD_SHARE_CPUCAPACITY | SD_SHARE_PKG_RESOURCES | SD_PREFER_SIBLING,
                110,
                0,
            ),
            (
                "MC",
                Box::new(|c| cut(llcs[topo.cpus[c].llc].clone(), c)),
                SD_SHARE_PKG_RESOURCES | SD_PREFER_SIBLING,
                117,
                1,
            ),
            ("DIE", Box::new(|c| cut(nodes[topo.cpus[c].node].clone(), c)), SD_PREFER_SIBLING, 117, 1),
        ];
        if topo.nodes > 1 {
            levels.push(("NUMA", Box::new(|c| cut(all.clone(), c)), SD_NUMA | SD_SERIALIZE, 117, 2));
        }
        let max_dist = topo.numa_distance.iter().flatten().copied().max().unwrap_or(10);
        let per_cpu = (0..n)
            .map(|cpu| match dom_of[cpu] {
                Some(_) => cpu_domains(cpu, n, &levels, max_dist, &mut pool, &mut memo),
                None => Vec::new(),
            })
            .collect();
        let llc_of = |c: CpuId| match dom_of[c] {
            Some(_) => cut(llcs[topo.cpus[c].llc].clone(), c),
            None => CpuSet::single(n, c),
        };
        let llc_size = (0..n).map(|c| llc_of(c).count()).collect();
        let llc_id: Vec<CpuId> = (0..n).map(|c| llc_of(c).first().unwrap_or(c)).collect();
        let mut llc_cpus = vec![Vec::new(); n];
        for c in 0..n {
            llc_cpus[llc_id[c]].push(c);
        }
        Domains { per_cpu, llc_size, llc_id, llc_cpus }
    }

    /// v4.9 `sd_init` values where they differ from v5.15: `busy_factor` 32;
    /// `imbalance_pct` 125 above the LLC; load indexes (busy, idle, newly idle) 2/0/0 for
    /// MC, 2/1/0 for DIE, 3/2/0 for NUMA, 0 for SMT.
    pub fn use_v4_9(&mut self) {
        for d in self.per_cpu.iter_mut().flatten() {
            d.busy_factor = 32;
            d.load_idx = match d.name {
                "SMT" => [0, 0, 0],
                "MC" => [2, 0, 0],
                "NUMA" => [3, 2, 0],
                _ => [2, 1, 0],
            };
            if !d.has(SD_SHARE_PKG_RESOURCES) {
                d.imbalance_pct = 125;
            }
        }
    }

    /// The LLC domain level index of `cpu` (`sd_llc`), if it has domains.
    pub fn llc_level(&self, cpu: CpuId) -> Option<usize> {
        self.per_cpu[cpu].iter().rposition(|d| d.has(SD_SHARE_PKG_RESOURCES))
    }
}

/// A topology level: (name, span of a CPU, flags, `imbalance_pct`, `cache_nice_tries`).
type Level<'a> = (&'static str, Box<dyn Fn(CpuId) -> CpuSet + 'a>, u32, u64, u32);

/// Per CPU, the index of the one of `doms` holding it (they are disjoint).
fn dom_index(doms: &[CpuSet], n: usize) -> Vec<Option<usize>> {
    let mut dom_of = vec![None; n];
    for (d, span) in doms.iter().enumerate() {
        for c in span.iter().filter(|&c| c < n) {
            dom_of[c].get_or_insert(d);
        }
    }
    dom_of
}

/// `cpu`'s domains bottom-up (`sd_init` values of v5.15; `sd_degenerate`,
/// `sd_parent_degenerate`: a level spanning one CPU, or its child's span, is removed).
fn cpu_domains(
    cpu: CpuId,
    n: usize,
    levels: &[Level],
    max_dist: u32,
    pool: &mut SetPool,
    memo: &mut GroupMemo,
) -> Vec<Domain> {
    let mut doms: Vec<Domain> = Vec::new();
    let mut child_span: Option<CpuSet> = None;
    let mut child: Option<(usize, &dyn Fn(CpuId) -> CpuSet)> = None;
    for (lvl, (name, span_of, extra, pct, tries)) in levels.iter().enumerate() {
        let span = span_of(cpu);
        if span.count() <= 1 || child_span.as_ref() == Some(&span) {
            // Degenerate: no new CPUs at this level.
            continue;
        }
        let mut flags = SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | extra;
        if *name == "NUMA" && max_dist > RECLAIM_DISTANCE {
            flags &= !(SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE);
        }
        let key = (lvl, child.map(|(l, _)| l));
        let groups = groups_of(&span, n, cpu, child.map(|(_, f)| f), key, pool, memo);
        let span = pool.intern(span);
        let w = span.count() as u64;
        doms.push(Domain {
            name,
            span_weight: span.count(),
            span: span.clone(),
            groups: groups.into(),
            flags,
            imbalance_pct: *pct,
            cache_nice_tries: *tries,
            busy_factor: 16,
            min_interval: w,
            max_interval: 2 * w,
            balance_interval: w,
            last_balance: 0,
            nr_balance_failed: 0,
            max_newidle_lb_cost: 0,
            last_decay_max_lb_cost: 0,
            load_idx: [0; 3],
        });
        child_span = Some(span);
        child = Some((lvl, &**span_of));
    }
    // SD_PREFER_SIBLING is dropped on NUMA levels (and only children matter for it).
    doms
}

/// Groups of a domain: the distinct child spans of its CPUs (single CPUs at the lowest
/// level), starting with the one holding `cpu`, then in CPU order. Every CPU of a span has
/// the same groups, so they are built once per span (`memo`, keyed by the level and its
/// child level) and only reordered per CPU: building them per CPU scanned the whole span
/// for each CPU.
fn groups_of(
    span: &CpuSet,
    n: usize,
    cpu: CpuId,
    child: Option<&dyn Fn(CpuId) -> CpuSet>,
    key: (usize, Option<usize>),
    pool: &mut SetPool,
    memo: &mut GroupMemo,
) -> Vec<CpuSet> {
    let same = memo.0.entry((key.0, key.1, span.first(), span.count())).or_default();
    let i = match same.iter().position(|(s, _)| s == span) {
        Some(i) => i,
        None => {
            same.push((span.clone(), build_groups(span, n, child, pool)));
            same.len() - 1
        }
    };
    let all = &same[i].1;
    let local = all.iter().position(|g| g.contains(cpu)).expect("a CPU's span holds it");
    std::iter::once(local).chain((0..all.len()).filter(|&g| g != local)).map(|g| all[g].clone()).collect()
}

/// The groups of `span`, in order of their lowest CPU.
fn build_groups(span: &CpuSet, n: usize, child: Option<&dyn Fn(CpuId) -> CpuSet>, pool: &mut SetPool) -> Vec<CpuSet> {
    let mut groups: Vec<CpuSet> = Vec::new();
    let mut seen = CpuSet::empty(n);
    for c in span.iter() {
        if seen.contains(c) {
            continue;
        }
        let g = match child {
            Some(f) => {
                let mut g = f(c);
                g.intersect_with(span);
                g
            }
            None => CpuSet::single(n, c),
        };
        for x in g.iter() {
            seen.insert(x);
        }
        groups.push(pool.intern(g));
    }
    groups
}

/// Each distinct span's groups, by (level, child level, lowest CPU, weight).
type GroupKey = (usize, Option<usize>, Option<CpuId>, usize);
#[derive(Default)]
struct GroupMemo(std::collections::BTreeMap<GroupKey, Vec<(CpuSet, Vec<CpuSet>)>>);

/// One copy of each distinct span and group mask, shared by every CPU whose domains hold
/// it, as the kernel shares a span's `sched_group`s among its CPUs
/// (`kernel/sched/topology.c:get_group` (v5.15)). A `CpuSet` clone shares its words, so a
/// 1024-CPU machine keeps a few thousand masks instead of one per CPU per group (4.5 MB).
#[derive(Default)]
struct SetPool(std::collections::BTreeMap<(Option<CpuId>, usize), Vec<CpuSet>>);

impl SetPool {
    fn intern(&mut self, s: CpuSet) -> CpuSet {
        let same = self.0.entry((s.first(), s.count())).or_default();
        if let Some(x) = same.iter().find(|x| **x == s) {
            return x.clone();
        }
        same.push(s.clone());
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_machine::preset;

    #[test]
    fn levels_follow_the_topology_and_degenerate_ones_go() {
        let smp8 = Domains::build(&preset("smp8").unwrap());
        let d = &smp8.per_cpu[3];
        assert_eq!(d.len(), 1, "one MC level of 8 single-CPU groups");
        assert_eq!((d[0].name, d[0].groups.len(), d[0].imbalance_pct), ("MC", 8, 117));
        assert!(d[0].groups[0].contains(3));
        let i7 = Domains::build(&preset("i7-3770").unwrap());
        let d = &i7.per_cpu[0];
        assert_eq!(d.iter().map(|x| x.name).collect::<Vec<_>>(), ["SMT", "MC"]);
        assert_eq!(d[1].groups.len(), 4, "MC groups are the SMT cores");
        assert_eq!((d[0].imbalance_pct, d[0].cache_nice_tries), (110, 0));
        let o = Domains::build(&preset("opteron-32").unwrap());
        let d = &o.per_cpu[17];
        assert_eq!(d.iter().map(|x| x.name).collect::<Vec<_>>(), ["MC", "DIE", "NUMA"]);
        assert_eq!(d[2].groups.len(), 2);
        assert_eq!(d[2].groups[0].count(), 16);
        assert!(d[2].groups[0].contains(17));
        assert_eq!((d[2].min_interval, d[2].max_interval, d[2].busy_factor), (32, 64, 16));
        assert!(d[2].has(SD_NUMA) && d[2].has(SD_BALANCE_FORK));
        assert_eq!(o.llc_size[17], 8);
        let up = Domains::build(&preset("up").unwrap());
        assert!(up.per_cpu[0].is_empty());
    }

    /// Domains over spans: each level cut to the CPU's span, degenerate levels gone, a CPU
    /// in no span on the null domain with an LLC of its own; the whole machine as one span
    /// gives the boot domains.
    #[test]
    fn spans_cut_every_level_and_leave_the_rest_on_the_null_domain() {
        let m = preset("i7-3770").unwrap();
        let set = |cpus: &[usize]| {
            let mut s = CpuSet::empty(8);
            cpus.iter().for_each(|&c| s.insert(c));
            s
        };
        let full = Domains::build_spans(&m, &[CpuSet::full(8)]);
        let boot = Domains::build(&m);
        assert_eq!(format!("{:?}", full.per_cpu), format!("{:?}", boot.per_cpu));
        assert_eq!((full.llc_size.clone(), full.llc_id.clone()), (boot.llc_size, boot.llc_id));
        // Linux numbering: CPU c's SMT sibling is c + 4.
        let d = Domains::build_spans(&m, &[set(&[0, 1, 4, 5]), set(&[2, 6])]);
        let names = |c: usize| d.per_cpu[c].iter().map(|x| x.name).collect::<Vec<_>>();
        assert_eq!(names(0), ["SMT", "MC"]);
        assert_eq!(d.per_cpu[0][1].span, set(&[0, 1, 4, 5]));
        assert_eq!(d.per_cpu[0][1].groups.len(), 2, "the two SMT cores of the span");
        assert_eq!(names(2), ["SMT"], "MC spans the SMT core only: degenerate");
        assert!(d.per_cpu[3].is_empty() && d.per_cpu[7].is_empty());
        assert_eq!((d.llc_size[0], d.llc_size[2], d.llc_size[3], d.llc_id[3]), (4, 2, 1, 3));
        assert_eq!(d.llc_cpus[2], [2, 6]);
    }
}
