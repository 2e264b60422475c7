//! The Linux fair class — one `kernel/sched/fair.c`, as it evolved: **CFS** as in v5.15
//! (`--sched cfs`) and **EEVDF** as in v6.6, v6.12 and v6.18 (`--sched eevdf
//! --set version=…`), with task groups (cgroup v2 `cpu.weight`, autogroup).
//!
//! What is shared, as upstream shares it: scheduling entities (tasks and, per CPU, task
//! groups) queued on per-CPU fair runqueues in a tree, charged by `update_curr` in virtual
//! time (`calc_delta_fair`); the hierarchy walks of `enqueue_task_fair`/`dequeue_task_fair`
//! and the hierarchical pick with its cgroup fast path; PELT load tracking (`pelt.rs`,
//! `load.rs`); group shares (`group.rs`: `calc_group_shares`, `update_cfs_group`);
//! scheduling domains (`domains.rs`), wakeup and fork placement (`select.rs`,
//! `select_task_rq_fair`) and the load balancer (`balance.rs`).
//!
//! What differs is the layer that chose the next entity, and it is switched by version:
//! `cfs.rs` — vruntime order, `sched_slice` of a latency period, START_DEBIT and sleeper
//! credit in `place_entity`, `check_preempt_tick`, wakeup granularity, next/last/skip
//! buddies; `eevdf.rs` — `avg_vruntime` (V), lag and eligibility, virtual deadlines from
//! `base_slice`, `pick_eevdf`, lag-preserving placement, RUN_TO_PARITY slice protection,
//! PREEMPT_SHORT, delayed dequeue, `reweight_eevdf`. Deviations:
//! `docs/policies/cfs.md` and `docs/policies/eevdf.md`.

mod balance;
mod balance_v4_9;
mod balance_why;
mod bandwidth;
mod cfs;
mod check;
mod clock;
mod core_sched;
pub(crate) mod domains;
pub mod eas;
mod eevdf;
mod enqueue;
mod entity;
mod group;
mod lifecycle;
mod load;
pub mod pelt;
mod pick;
mod rebuild;
mod select;
mod select_v4_9;
mod select_why;
mod tasklist;
#[cfg(test)]
mod tests;
mod tree;
mod tunables;
mod util_est;
mod weights;
mod why;

pub use bandwidth::SCHED_CFS_BANDWIDTH_SLICE;
pub use tunables::{factor, FairTunables, Flavor, Scaling, Version};
pub use weights::{calc_delta, calc_delta_fair, LoadWeight, NICE_0_LOAD, SCHED_PRIO_TO_WEIGHT, SCHED_PRIO_TO_WMULT};

use crate::placement::idle_or_prev;
use balance::{Adjust, LbStats};
use domains::Domains;
use entity::{CfsRq, CpuRq, Entity, RqId, Se, TaskFair};
use group::TaskGroup;
use schedlab_machine::Machine;
use schedlab_sched_api::{
    BalanceKind, Ctx, Moment, SchedClass, SelectKind, Stat, TaskGroups, TaskPolicy, Tunable, Why,
};
use schedlab_sim::{CpuId, TaskId};

/// Initial `min_vruntime`. The kernel starts at `(u64)-(1 << 20)` so that wrap-around is
/// exercised early; we start far from zero instead, so raw `u64` keys order correctly in
/// the tree. Only absolute vruntime values differ; every comparison is relative.
const MIN_VRUNTIME_INIT: u64 = 1 << 52;

/// Counters besides the per-level balance statistics.
#[derive(Clone, Debug, Default)]
struct Counters {
    nohz_kicks: u64,
    /// Misfit balancing (asymmetric capacities only): `migrate_misfit` passes that moved
    /// or pushed a task, and NOHZ kicks `check_misfit_status` sent.
    misfit_moved: u64,
    misfit_kicks: u64,
    /// Entities chosen by `pick_next_entity` (one per hierarchy level), and the tree work
    /// of those choices: 1 each for CFS (the cached leftmost, `rb_first_cached`), the
    /// entities compared for EEVDF (`pick_eevdf`'s descent).
    picks: u64,
    pick_steps: u64,
    /// Wakeups where `wake_wide` said not to pull the wakee; wakeups placed on the waker's
    /// CPU by `wake_affine`.
    wake_wide: u64,
    wake_affine: u64,
    /// EEVDF: dequeues delayed, and wakeups that found the task still delayed.
    delayed_dequeues: u64,
    delayed_requeues: u64,
    /// EEVDF picks of an ineligible entity (must stay 0; `--check` verifies).
    ineligible_picks: u64,
    /// EAS (`eas.rs`): it was on at some wakeup; wakeups `find_energy_efficient_cpu`
    /// placed, of them those not on the previous CPU; the root domain's overutilized
    /// flag set and cleared.
    eas_enabled: bool,
    feec: u64,
    feec_moved: u64,
    overutilized_set: u64,
    overutilized_cleared: u64,
}

/// `a / b` truncating toward zero, as `i128` division but without the slow 128-bit
/// library call (`__divti3`) when both operands fit in 64 bits (the common case: the kernel
/// itself divides these sums as s64 in `avg_vruntime` and `place_entity`). Same result.
#[inline]
fn div_i128(a: i128, b: i128) -> i128 {
    match (i64::try_from(a), i64::try_from(b)) {
        (Ok(x), Ok(y)) if y != 0 && !(x == i64::MIN && y == -1) => (x / y) as i128,
        _ => a / b,
    }
}

/// Signed vruntime comparison, as the kernel's `(s64)(a - b)`.
fn vdiff(a: u64, b: u64) -> i64 {
    a.wrapping_sub(b) as i64
}

/// The fair class (CFS or EEVDF), with its task groups.
pub struct Fair {
    t: FairTunables,
    /// uclamp as the class chain lends it for each hook (`Fair::lend_uclamp`); outside
    /// one, or without the chain, empty and unused.
    uclamp: crate::uclamp::Uclamp,
    nr_cpus: usize,
    /// Entities: group entities first, then tasks from `task_base`.
    ents: Vec<Entity>,
    task_base: u32,
    tf: Vec<TaskFair>,
    nodes: tree::Nodes,
    /// The links of every CPU's `cfs_tasks` list.
    links: tasklist::Links,
    /// Fair runqueues: per CPU the root, then per group per CPU.
    rqs: Vec<CfsRq>,
    cpu: Vec<CpuRq>,
    /// Task groups; 0 is the root, then the cgroups, then one autogroup per session.
    tgs: Vec<TaskGroup>,
    /// Each group's children (`tg->children`).
    tg_children: Vec<Vec<usize>>,
    nr_cgroups: usize,
    /// CFS bandwidth: per group its `cfs_bandwidth`, per runqueue its bandwidth fields,
    /// and whether any group is limited (`cfs_bandwidth_used`).
    bw: Vec<bandwidth::CfsBandwidth>,
    bw_rq: Vec<bandwidth::RqBandwidth>,
    bw_used: bool,
    seq: u64,
    domains: Domains,
    /// ns per jiffy, and HZ.
    jiffy: u64,
    hz: u64,
    /// The machine has SMT (`sched_smt_present`).
    smt: bool,
    /// Per LLC (indexed by its first CPU): `has_idle_cores`, `nr_idle_scan`.
    has_idle_cores: Vec<bool>,
    /// `rd->overload` of the single root domain: set by `add_nr_running` when a
    /// runqueue goes from fewer than two tasks to two or more, set or cleared by a
    /// root-level `update_sd_lb_stats`; `newidle_balance` returns early while it is clear.
    rd_overload: Vec<bool>,
    /// The spans of the root domains (`partition_sched_domains`; at boot the whole
    /// machine), and per CPU the index of its own (`doms.len()`: the null domain).
    doms: Vec<schedlab_machine::CpuSet>,
    rd_of: Vec<usize>,
    /// `rd->overutilized` (EAS, `eas.rs`): some CPU's utilisation does not fit its
    /// capacity; while clear, wakeups are placed by energy and the balancer stays out.
    rd_overutilized: bool,
    /// `sched_asym_cpucap_active()`, decided at the first wakeup (`eas.rs`).
    asym_cpucap: Option<bool>,
    nr_idle_scan: Vec<usize>,
    /// `nohz.next_balance` (jiffies).
    nohz_next_balance: u64,
    /// CPUs with an active balance under way (`rq->active_balance`).
    active_pending: Vec<CpuId>,
    adj: Adjust,
    lb: LbStats,
    counters: Counters,
    /// Work done in the current hook (entities compared, CPUs/groups scanned, tasks
    /// examined), handed to the kernel through `Ctx::work` when the hook returns. A `Cell`
    /// because the searches that count it take `&self`.
    work: std::cell::Cell<schedlab_sched_api::Work>,
}

impl Fair {
    /// `--sched cfs`: CFS as in v5.15.
    pub fn cfs(m: &Machine, sets: &[(String, String)]) -> Result<Fair, String> {
        Fair::new(Flavor::Cfs, m, sets)
    }
    /// `--sched eevdf`: EEVDF as in v6.18 (or `version=6.6|6.12`).
    pub fn eevdf(m: &Machine, sets: &[(String, String)]) -> Result<Fair, String> {
        Fair::new(Flavor::Eevdf, m, sets)
    }

    fn new(flavor: Flavor, m: &Machine, sets: &[(String, String)]) -> Result<Fair, String> {
        let n = m.nr_cpus();
        let t = FairTunables::new(flavor, n, sets)?;
        let mut domains = Domains::build(m);
        if t.version == Version::V4_9 {
            domains.use_v4_9();
        }
        let nr_idle_scan = (0..n).map(|c| domains.llc_size[c]).collect();
        let mut adj = Adjust::default();
        adj.reset(n);
        let cpu = (0..n)
            .map(|_| CpuRq {
                cfs_tasks: tasklist::TaskList::default(),
                prev: None,
                next_balance: 0,
                avg_idle: 2 * t.migration_cost,
                idle_stamp: 1,
                max_idle_balance_cost: t.migration_cost,
                cpu_load: [0; 5],
                cpu_load_jiffy: 0,
                clock_pelt: Default::default(),
                misfit_task_load: 0,
                util_est: 0,
            })
            .collect();
        let mut f = Fair {
            nr_cpus: n,
            ents: Vec::new(),
            task_base: 0,
            tf: Vec::new(),
            nodes: tree::Nodes::default(),
            links: tasklist::Links::default(),
            rqs: Vec::new(),
            cpu,
            tgs: vec![TaskGroup::root()],
            tg_children: vec![Vec::new()],
            nr_cgroups: 0,
            bw: Vec::new(),
            bw_rq: Vec::new(),
            bw_used: false,
            seq: 0,
            domains,
            jiffy: m.tick_ns().0.max(1),
            hz: u64::from(m.hz),
            smt: m.topology.threads_per_core > 1,
            has_idle_cores: vec![false; n],
            rd_overload: vec![false; 2],
            doms: vec![schedlab_machine::CpuSet::full(n)],
            rd_of: vec![0; n],
            rd_overutilized: false,
            asym_cpucap: None,
            nr_idle_scan,
            nohz_next_balance: 0,
            active_pending: Vec::new(),
            adj,
            lb: LbStats::default(),
            counters: Counters::default(),
            work: Default::default(),
            uclamp: Default::default(),
            t,
        };
        f.build_groups();
        Ok(f)
    }

    /// Swaps the class chain's uclamp state in (before a hook) and back out (after it):
    /// the fair class reads it (`eas.rs`) and never writes it.
    pub(crate) fn lend_uclamp(&mut self, u: &mut crate::uclamp::Uclamp) {
        std::mem::swap(&mut self.uclamp, u);
    }

    pub fn tunables_ref(&self) -> &FairTunables {
        &self.t
    }

    fn eevdf_on(&self) -> bool {
        self.t.version.is_eevdf()
    }

    // ---- ids ----

    fn task_se(&self, p: TaskId) -> Se {
        Se(self.task_base + p as u32)
    }
    fn se_task(&self, se: Se) -> Option<TaskId> {
        (se.0 >= self.task_base).then(|| (se.0 - self.task_base) as usize)
    }
    fn e(&self, se: Se) -> &Entity {
        &self.ents[se.0 as usize]
    }
    fn em(&mut self, se: Se) -> &mut Entity {
        &mut self.ents[se.0 as usize]
    }
    fn rq(&self, id: RqId) -> &CfsRq {
        &self.rqs[id.0 as usize]
    }
    fn rqm(&mut self, id: RqId) -> &mut CfsRq {
        &mut self.rqs[id.0 as usize]
    }
    /// CPU `cpu`'s root `cfs_rq`.
    fn root(&self, cpu: CpuId) -> RqId {
        RqId(cpu as u32)
    }
    /// Group `tg`'s `cfs_rq` on `cpu` (the root's for `tg` 0).
    fn group_rq(&self, tg: usize, cpu: CpuId) -> RqId {
        RqId((tg * self.nr_cpus + cpu) as u32)
    }
    /// Group `tg`'s entity on `cpu` (`tg->se[cpu]`; `tg` ≥ 1).
    fn group_se(&self, tg: usize, cpu: CpuId) -> Se {
        Se(((tg - 1) * self.nr_cpus + cpu) as u32)
    }
    /// `parent_entity(se)`: the group entity owning the queue `se` is on.
    fn parent_entity(&self, se: Se) -> Option<Se> {
        let rq = self.rq(self.e(se).cfs_rq);
        (rq.tg != 0).then(|| self.group_se(rq.tg, rq.cpu))
    }
    fn cfs_rq_of(&self, se: Se) -> RqId {
        self.e(se).cfs_rq
    }

    /// The entities from `se` up to the root's child (`for_each_sched_entity`).
    fn hierarchy(&self, se: Se) -> Hierarchy<'_> {
        Hierarchy { f: self, at: Some(se) }
    }

    /// `hierarchy(se)` collected into a [`Path`]: the same entities in the same order, but
    /// no allocation per call on the hot pick/put/tick paths (a `Vec` here cost a malloc
    /// and a free per context switch).
    fn path(&self, se: Se) -> Path {
        let mut buf = [se; PATH_INLINE];
        let mut n = 0;
        let mut more = Vec::new();
        for s in self.hierarchy(se) {
            if n < PATH_INLINE {
                buf[n] = s;
                n += 1;
            } else {
                more.push(s);
            }
        }
        buf.into_iter().take(n).chain(more)
    }

    fn ensure_task(&mut self, p: TaskId) {
        let need = self.task_base as usize + p + 1;
        if self.ents.len() < need {
            self.ents.resize(need, Entity::default());
        }
        if self.tf.len() <= p {
            self.tf.resize(p + 1, TaskFair::default());
        }
    }

    /// Number of tasks queued on `cpu` as the fair class counts them (`cfs.h_nr_running`).
    fn h_nr_running(&self, cpu: CpuId) -> u64 {
        self.rq(self.root(cpu)).h_nr_running
    }
}

/// Levels of a [`Fair::path`] kept without a heap allocation (deeper ones spill to a Vec).
const PATH_INLINE: usize = 16;

/// An entity and its ancestors, collected up front (for loops whose body mutates the class).
type Path = std::iter::Chain<std::iter::Take<std::array::IntoIter<Se, PATH_INLINE>>, std::vec::IntoIter<Se>>;

/// Walks an entity and its ancestors.
struct Hierarchy<'a> {
    f: &'a Fair,
    at: Option<Se>,
}

impl Iterator for Hierarchy<'_> {
    type Item = Se;
    fn next(&mut self) -> Option<Se> {
        let se = self.at?;
        self.at = self.f.parent_entity(se);
        Some(se)
    }
}

impl Fair {
    /// Adds to the current hook's work.
    pub(super) fn count(&self, f: impl FnOnce(&mut schedlab_sched_api::Work)) {
        let mut w = self.work.get();
        f(&mut w);
        self.work.set(w);
    }
    /// Hands the hook's work to the kernel.
    fn flush_work(&self, cx: &mut Ctx) {
        cx.add_work(&self.work.take());
    }
}

impl SchedClass for Fair {
    fn name(&self) -> &'static str {
        if self.eevdf_on() {
            "eevdf"
        } else {
            "cfs"
        }
    }

    fn tunables(&self) -> Vec<Tunable> {
        self.t.list()
    }

    fn set_task_groups(&mut self, groups: &TaskGroups) -> Result<(), String> {
        self.define_groups(groups)
    }

    fn task_new(&mut self, cx: &mut Ctx, p: TaskId, parent: Option<TaskId>) {
        self.task_fork(cx, p, parent);
    }

    fn reserve_tasks(&mut self, n: usize) {
        let ents = self.task_base as usize + n;
        self.ents.reserve_exact(ents.saturating_sub(self.ents.len()));
        self.tf.reserve_exact(n.saturating_sub(self.tf.len()));
        self.nodes.reserve_exact(ents);
        self.links.reserve_exact(n);
    }

    /// `task_dead_fair` → `remove_entity_load_avg`.
    fn task_dead(&mut self, _cx: &mut Ctx, p: TaskId) {
        let se = self.task_se(p);
        self.remove_entity_load_avg(se);
        self.tf[p].alive = false;
    }

    /// `select_task_rq_fair`, or idle-or-previous with `balance=0`.
    fn select_task_rq(&mut self, cx: &mut Ctx, p: TaskId, prev: CpuId, kind: SelectKind, wake_flags: u32) -> CpuId {
        let c = if self.t.balance {
            self.adj.reset(self.nr_cpus);
            self.select_task_rq_fair(cx, p, prev, kind, wake_flags)
        } else {
            idle_or_prev(cx, p, prev)
        };
        self.flush_work(cx);
        c
    }

    fn migrate_task_rq(&mut self, cx: &mut Ctx, p: TaskId, new_cpu: CpuId) {
        self.migrate_task_rq_fair(cx, p, new_cpu);
    }

    fn enqueue_task(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, flags: u32) {
        // `add_nr_running` (v5.15; `set_rd_overloaded`, v6.10), called at the end of
        // `enqueue_task_fair`: the kernel model has already counted `p`, so two now
        // means the runqueue just went from one task to two.
        if cx.cpus[cpu].nr_running == 2 {
            self.rd_overload[self.rd_of[cpu]] = true;
        }
        self.enqueue_task_fair(cx, cpu, p, flags);
        // enqueue_task_fair: "do not account for the first enqueue operation of new
        // tasks during the overutilized flag detection" (v5.15 and v6.18).
        if flags & schedlab_sched_api::enqueue::INITIAL == 0 {
            self.check_update_overutilized_status(cx, cpu);
        }
        self.flush_work(cx);
    }

    fn dequeue_task(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, flags: u32) -> bool {
        let done = self.dequeue_task_fair(cx, cpu, p, flags);
        self.flush_work(cx);
        done
    }

    fn wakeup_preempt(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, wake_flags: u32) {
        self.check_preempt_wakeup_fair(cx, cpu, p, wake_flags);
        self.flush_work(cx);
    }

    /// The kernel's `put_prev_task` comes before the pick; the fair class decides what to
    /// put back at pick time, so that a task picked again keeps its slice state (the
    /// cgroup fast path of `pick_next_task_fair`).
    fn put_prev_task(&mut self, _cx: &mut Ctx, cpu: CpuId, prev: TaskId) {
        self.cpu[cpu].prev = Some(prev);
    }

    fn pick_next_task(&mut self, cx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        let p = self.pick_next_task_fair(cx, cpu);
        // v5.15 `pick_next_task_fair` (`done:`) and, picking nothing, `newidle_balance`'s
        // `update_misfit_status(NULL, this_rq)`.
        self.update_misfit_status(cx, cpu, p);
        self.flush_work(cx);
        p
    }

    fn set_next_task(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId) -> bool {
        let ok = self.direct_switch_fair(cx, cpu, p);
        // v6.12 `__set_next_task_fair` calls `update_misfit_status` for any task set.
        if ok {
            self.update_misfit_status(cx, cpu, Some(p));
        }
        self.flush_work(cx);
        ok
    }

    fn core_sched(&self) -> bool {
        true
    }
    fn core_candidates(&mut self, cx: &mut Ctx, cpu: CpuId, out: &mut Vec<(TaskId, schedlab_sched_api::CorePrio)>) {
        self.core_candidates_fair(cx, cpu, out);
    }
    /// Forced idle: a pick that found nothing (`pick_next_task_fair` → `put_prev` path).
    fn core_force_idle(&mut self, cx: &mut Ctx, cpu: CpuId) {
        self.put_prev_fair(cx, cpu);
        self.update_misfit_status(cx, cpu, None);
        self.flush_work(cx);
    }
    fn core_fi_update(&mut self, _cx: &mut Ctx, _cpu: CpuId, p: TaskId, in_fi: bool, fi_seq: u64) {
        let se = self.task_se(p);
        self.se_fi_update(se, fi_seq, in_fi);
    }
    fn task_tick_core(&mut self, cx: &mut Ctx, cpu: CpuId, curr: TaskId) {
        self.task_tick_core_fair(cx, cpu, curr);
        self.flush_work(cx);
    }

    fn task_tick(&mut self, cx: &mut Ctx, cpu: CpuId, curr: TaskId) {
        self.task_tick_fair(cx, cpu, curr);
        // The end of task_tick_fair (v5.15 and v6.18).
        self.update_misfit_status(cx, cpu, Some(curr));
        self.check_update_overutilized_status(cx, cpu);
        self.flush_work(cx);
    }

    fn yield_task(&mut self, cx: &mut Ctx, cpu: CpuId, curr: TaskId) {
        self.yield_task_fair(cx, cpu, curr);
    }

    /// `set_user_nice` → `reweight_task` → `reweight_entity`, under save/restore.
    fn reweight_task(&mut self, cx: &mut Ctx, p: TaskId) {
        let info = cx.task(p);
        let new = LoadWeight::for_task(info.nice, info.policy == TaskPolicy::Idle);
        self.save_restore(cx, p, |f, cx, se| {
            let rq = f.cfs_rq_of(se);
            f.reweight_entity(cx, rq, se, new);
        });
    }

    /// `sched_setattr` → `__setscheduler_params` (v6.12+): a custom slice, or back to the
    /// base slice, under save/restore.
    fn slice_changed(&mut self, cx: &mut Ctx, p: TaskId) {
        if self.t.version < Version::V6_12 {
            return;
        }
        let slice = cx.task(p).slice;
        let base = self.t.base_slice;
        self.save_restore(cx, p, |f, _cx, se| {
            let e = f.em(se);
            e.custom_slice = slice.is_some();
            e.slice = slice.unwrap_or(base);
        });
    }

    /// Rebuilds the domains over the new spans (`rebuild.rs`).
    fn partition_sched_domains(&mut self, cx: &mut Ctx, doms: &[schedlab_machine::CpuSet]) {
        self.rebuild_sched_domains(cx, doms);
    }

    /// `newidle_balance`, `trigger_load_balance` from the tick, `nohz_idle_balance`.
    fn balance(&mut self, cx: &mut Ctx, cpu: CpuId, kind: BalanceKind) {
        if !self.t.balance {
            return;
        }
        match kind {
            BalanceKind::NewIdle => self.newidle_balance(cx, cpu),
            BalanceKind::Tick => self.trigger_load_balance(cx, cpu),
            BalanceKind::NohzIdle => self.nohz_idle_balance(cx, cpu),
            // Linux NOHZ declares no idle wakeup.
            BalanceKind::IdleWake => {}
        }
        self.flush_work(cx);
    }

    /// Balancing per domain level: `lb.<level>.{attempts,balanced,moved,failed,active}`.
    fn counters(&self) -> Vec<(String, u64)> {
        let mut v = Vec::new();
        for (name, r) in &self.lb.rows {
            for (i, col) in ["attempts", "balanced", "moved", "failed", "active"].iter().enumerate() {
                v.push((format!("lb.{name}.{col}"), r[i]));
            }
        }
        v.push(("nohz_kicks".into(), self.counters.nohz_kicks));
        let ops = self.nodes.ops;
        v.push(("tree_picks".into(), self.counters.picks));
        v.push(("tree_pick_steps".into(), self.counters.pick_steps));
        v.push(("tree_inserts".into(), ops.inserts));
        v.push(("tree_insert_compares".into(), ops.insert_compares));
        v.push(("tree_erases".into(), ops.erases));
        v.push(("tree_erase_relinks".into(), ops.erase_relinks));
        v.push(("wake_wide".into(), self.counters.wake_wide));
        v.push(("wake_affine".into(), self.counters.wake_affine));
        if self.asym_cpucap == Some(true) && self.t.version != Version::V4_9 {
            v.push(("lb.misfit".into(), self.counters.misfit_moved));
            v.push(("nohz_misfit_kicks".into(), self.counters.misfit_kicks));
        }
        if self.counters.eas_enabled {
            let c = &self.counters;
            v.push(("eas.feec".into(), c.feec));
            v.push(("eas.feec_moved".into(), c.feec_moved));
            v.push(("eas.overutilized_set".into(), c.overutilized_set));
            v.push(("eas.overutilized_cleared".into(), c.overutilized_cleared));
        }
        if self.t.feat.delay_dequeue {
            v.push(("delayed_dequeues".into(), self.counters.delayed_dequeues));
            v.push(("delayed_requeues".into(), self.counters.delayed_requeues));
        }
        v
    }

    fn group_stats(&self) -> Vec<schedlab_sched_api::GroupStat> {
        self.bandwidth_stats()
    }

    fn queued(&self, cpu: CpuId, out: &mut Vec<TaskId>) {
        self.queued_tasks(self.root(cpu), out);
        self.for_each_throttled_task(cpu, &mut |p| out.push(p));
    }

    /// The period and slack timers of bandwidth-limited groups.
    fn timer(&mut self, cx: &mut Ctx, cpu: CpuId) {
        self.bandwidth_timers(cx, cpu);
        self.flush_work(cx);
    }

    fn why(&self, cx: &Ctx, cpu: CpuId, first: TaskId, second: TaskId, at: Moment) -> Why {
        self.why_fair(cx, cpu, first, second, at)
    }

    fn task_stats(&self, p: TaskId) -> Vec<Stat> {
        self.stats_of(p)
    }

    fn check_invariants(&self, _cx: &Ctx) -> Result<(), String> {
        self.check_fair(None)?;
        self.check_bandwidth()
    }

    fn check_cpus(&self, _cx: &Ctx, cpus: &[CpuId]) -> Result<(), String> {
        self.check_fair(Some(cpus))
    }
}
