//! `cfs`: the Completely Fair Scheduler as in Linux v5.15 `kernel/sched/fair.c`, for tasks
//! in the root cgroup (no group scheduling, no bandwidth control).
//!
//! Each CPU has a `cfs_rq`: a timeline ordered by `vruntime` (ties go right, FIFO) with the
//! running entity (`curr`) kept *outside* the tree, a monotonic `min_vruntime`, the sum of
//! queued weights, and the `next`/`last`/`skip` buddies. Time is charged by `update_curr`
//! in virtual time (`calc_delta_fair`); slices come from `sched_slice`; new and waking
//! tasks are placed by `place_entity`; preemption happens at ticks (`check_preempt_tick`)
//! and at wakeups (`check_preempt_wakeup`). Across CPUs: PELT load tracking (`pelt.rs`,
//! `load.rs`), scheduling domains from the machine (`domains.rs`), wakeup and fork placement
//! (`select.rs`, `select_task_rq_fair`) and the load balancer (`balance.rs`: periodic,
//! newly idle, NOHZ idle, active). Deviations: `docs/policies/cfs.md`.

mod balance;
mod domains;
mod load;
pub mod pelt;
mod select;
mod tunables;
mod weights;

pub use tunables::{factor, CfsTunables, Scaling};
pub use weights::{calc_delta, calc_delta_fair, LoadWeight, NICE_0_LOAD, SCHED_PRIO_TO_WEIGHT, SCHED_PRIO_TO_WMULT};

use crate::placement::idle_or_prev;
use balance::{Adjust, LbStats};
use domains::Domains;
use load::DO_ATTACH;
use pelt::SchedAvg;
use schedlab_machine::Machine;
use schedlab_sched_api::{dequeue, enqueue, wf, BalanceKind, Ctx, SchedClass, SelectKind, Stat, TaskPolicy, Tunable};
use schedlab_sim::{CpuId, Ns, TaskId};
use std::collections::{BTreeSet, VecDeque};

/// Initial `min_vruntime`. The kernel starts at `(u64)-(1 << 20)` so that wrap-around is
/// exercised early; we start far from zero instead, so raw `u64` keys order correctly in
/// the tree. Only absolute vruntime values differ; every comparison is relative.
const MIN_VRUNTIME_INIT: u64 = 1 << 52;

/// `struct sched_entity` (the parts a root-only CFS needs).
#[derive(Clone, Debug, Default)]
struct Entity {
    load: Option<LoadWeight>,
    vruntime: u64,
    exec_start: u64,
    sum_exec_runtime: u64,
    prev_sum_exec_runtime: u64,
    on_rq: bool,
    /// vruntime is stored relative to the old `min_vruntime` (≤6.5 normalisation).
    relative: bool,
    /// Tree key tiebreak: insertion order.
    seq: u64,
    /// Last slice computed at pick time (for time series).
    slice: u64,
    /// The runqueue it was last enqueued on (for the lag statistic).
    cpu: CpuId,
    /// PELT (`se->avg`).
    avg: SchedAvg,
    /// Dequeued to move to another runqueue (`TASK_ON_RQ_MIGRATING`).
    migrating: bool,
    /// `record_wakee` state.
    wakee_flips: u64,
    wakee_flip_decay_ts: u64,
    last_wakee: Option<TaskId>,
    /// `p->recent_used_cpu`.
    recent_used_cpu: Option<CpuId>,
    /// `SCHED_IDLE` (`task_has_idle_policy`).
    idle_policy: bool,
}

impl Entity {
    fn lw(&self) -> LoadWeight {
        self.load.expect("task_new ran")
    }
}

/// `struct cfs_rq`.
#[derive(Debug)]
struct CfsRq {
    timeline: BTreeSet<(u64, u64, TaskId)>,
    min_vruntime: u64,
    load: u64,
    nr_running: u64,
    curr: Option<TaskId>,
    next: Option<TaskId>,
    last: Option<TaskId>,
    skip: Option<TaskId>,
    /// PELT of the runqueue and the averages of tasks that left it (`removed`).
    avg: SchedAvg,
    removed: [u64; 3],
    /// `rq->cfs_tasks`: queued tasks, most recently run first.
    cfs_tasks: VecDeque<TaskId>,
    /// `SCHED_IDLE` tasks queued (`idle_h_nr_running`).
    idle_nr: u64,
    /// `rq->next_balance` (jiffies), `avg_idle`, `idle_stamp`, `max_idle_balance_cost`.
    next_balance: u64,
    avg_idle: u64,
    idle_stamp: u64,
    max_idle_balance_cost: u64,
}

/// Counters besides the per-level balance statistics.
#[derive(Clone, Debug, Default)]
struct Counters {
    nohz_kicks: u64,
    /// Wakeups where `wake_wide` said not to pull the wakee; wakeups placed on the waker's
    /// CPU by `wake_affine`.
    wake_wide: u64,
    wake_affine: u64,
}

/// Signed vruntime comparison, as the kernel's `(s64)(a - b)`.
fn vdiff(a: u64, b: u64) -> i64 {
    a.wrapping_sub(b) as i64
}

pub struct Cfs {
    t: CfsTunables,
    rqs: Vec<CfsRq>,
    se: Vec<Entity>,
    seq: u64,
    domains: Domains,
    /// ns per jiffy, and HZ.
    jiffy: u64,
    hz: u64,
    /// The machine has SMT (`sched_smt_present`).
    smt: bool,
    /// Per LLC (indexed by its first CPU): `has_idle_cores`, `nr_idle_scan`.
    has_idle_cores: Vec<bool>,
    nr_idle_scan: Vec<usize>,
    /// `nohz.next_balance` (jiffies).
    nohz_next_balance: u64,
    /// CPUs with an active balance under way (`rq->active_balance`).
    active_pending: Vec<CpuId>,
    adj: Adjust,
    lb: LbStats,
    counters: Counters,
}

impl Cfs {
    pub fn new(m: &Machine, sets: &[(String, String)]) -> Result<Cfs, String> {
        let t = CfsTunables::new(m.nr_cpus(), sets)?;
        let rqs = (0..m.nr_cpus())
            .map(|_| CfsRq {
                timeline: BTreeSet::new(),
                min_vruntime: MIN_VRUNTIME_INIT,
                load: 0,
                nr_running: 0,
                curr: None,
                next: None,
                last: None,
                skip: None,
                avg: SchedAvg::default(),
                removed: [0; 3],
                cfs_tasks: VecDeque::new(),
                idle_nr: 0,
                next_balance: 0,
                avg_idle: 2 * t.migration_cost,
                idle_stamp: 1,
                max_idle_balance_cost: t.migration_cost,
            })
            .collect();
        let n = m.nr_cpus();
        let domains = Domains::build(m);
        let nr_idle_scan = (0..n).map(|c| domains.llc_size[c]).collect();
        let mut adj = Adjust::default();
        adj.reset(n);
        Ok(Cfs {
            t,
            rqs,
            se: Vec::new(),
            seq: 0,
            domains,
            jiffy: m.tick_ns().0.max(1),
            hz: u64::from(m.hz),
            smt: m.topology.threads_per_core > 1,
            has_idle_cores: vec![false; n],
            nr_idle_scan,
            nohz_next_balance: 0,
            active_pending: Vec::new(),
            adj,
            lb: LbStats::default(),
            counters: Counters::default(),
        })
    }

    pub fn tunables_ref(&self) -> &CfsTunables {
        &self.t
    }

    fn enqueue_timeline(&mut self, cpu: CpuId, p: TaskId) {
        self.seq += 1;
        self.se[p].seq = self.seq;
        self.rqs[cpu].timeline.insert((self.se[p].vruntime, self.seq, p));
    }
    fn dequeue_timeline(&mut self, cpu: CpuId, p: TaskId) {
        let removed = self.rqs[cpu].timeline.remove(&(self.se[p].vruntime, self.se[p].seq, p));
        debug_assert!(removed, "entity was in the tree");
    }
    fn leftmost(&self, cpu: CpuId) -> Option<TaskId> {
        self.rqs[cpu].timeline.first().map(|e| e.2)
    }

    /// `update_curr`: charge the running entity for the time since `exec_start`.
    fn update_curr(&mut self, cpu: CpuId, now: Ns) {
        let Some(c) = self.rqs[cpu].curr else { return };
        let se = &mut self.se[c];
        let delta = now.0 as i64 - se.exec_start as i64;
        if delta <= 0 {
            return;
        }
        se.exec_start = now.0;
        se.sum_exec_runtime += delta as u64;
        se.vruntime = se.vruntime.wrapping_add(calc_delta_fair(delta as u64, se.lw()));
        self.update_min_vruntime(cpu);
    }

    /// `update_min_vruntime`: a monotonic floor under `curr` and the leftmost entity.
    fn update_min_vruntime(&mut self, cpu: CpuId) {
        let rq = &self.rqs[cpu];
        let mut v = rq.min_vruntime;
        let mut have_curr = false;
        if let Some(c) = rq.curr {
            if self.se[c].on_rq {
                v = self.se[c].vruntime;
                have_curr = true;
            }
        }
        if let Some(&(lv, _, _)) = rq.timeline.first() {
            v = if !have_curr || vdiff(lv, v) < 0 { lv } else { v };
        }
        let rq = &mut self.rqs[cpu];
        if vdiff(v, rq.min_vruntime) > 0 {
            rq.min_vruntime = v;
        }
    }

    /// `__sched_period`.
    fn sched_period(&self, nr_running: u64) -> u64 {
        if nr_running > self.t.nr_latency {
            nr_running * self.t.min_granularity
        } else {
            self.t.latency
        }
    }

    /// `sched_slice` (v5.15, ALT_PERIOD and BASE_SLICE on): the entity's weighted share of
    /// the period, in wall-clock ns.
    fn sched_slice(&self, cpu: CpuId, p: TaskId) -> u64 {
        let rq = &self.rqs[cpu];
        let se = &self.se[p];
        let nr = rq.nr_running + u64::from(!se.on_rq);
        let mut slice = self.sched_period(nr);
        let load = rq.load + if se.on_rq { 0 } else { se.lw().weight };
        slice = calc_delta(slice, se.lw().weight, LoadWeight::sum(load));
        if self.t.base_slice {
            slice = slice.max(self.t.min_granularity);
        }
        slice
    }

    /// `sched_vslice`.
    fn sched_vslice(&self, cpu: CpuId, p: TaskId) -> u64 {
        calc_delta_fair(self.sched_slice(cpu, p), self.se[p].lw())
    }

    /// `place_entity` (≤6.5): START_DEBIT for new tasks, sleeper credit for wakeups; never
    /// moves an entity backwards.
    fn place_entity(&mut self, cpu: CpuId, p: TaskId, initial: bool) {
        let mut v = self.rqs[cpu].min_vruntime;
        if initial && self.t.start_debit {
            v = v.wrapping_add(self.sched_vslice(cpu, p));
        }
        if !initial {
            let mut thresh = self.t.latency;
            if self.t.gentle_fair_sleepers {
                thresh /= 2;
            }
            v = v.wrapping_sub(thresh);
        }
        let se = &mut self.se[p];
        if vdiff(v, se.vruntime) > 0 {
            se.vruntime = v;
        }
    }

    /// `wakeup_gran`: the wakeup granularity in the *wakee's* virtual time.
    fn wakeup_gran(&self, p: TaskId) -> i64 {
        calc_delta_fair(self.t.wakeup_granularity, self.se[p].lw()) as i64
    }

    /// `wakeup_preempt_entity(curr, se)`: −1 if `se` is not left of `curr`, 1 if it leads by
    /// more than `wakeup_gran(se)`, else 0.
    fn wakeup_preempt_entity(&self, curr: TaskId, se: TaskId) -> i32 {
        let d = vdiff(self.se[curr].vruntime, self.se[se].vruntime);
        if d <= 0 {
            -1
        } else if d > self.wakeup_gran(se) {
            1
        } else {
            0
        }
    }

    /// `clear_buddies`.
    fn clear_buddies(&mut self, cpu: CpuId, p: TaskId) {
        let rq = &mut self.rqs[cpu];
        for b in [&mut rq.next, &mut rq.last, &mut rq.skip] {
            if *b == Some(p) {
                *b = None;
            }
        }
    }

    /// `pick_next_entity` (v5.15 buddy order: skip, then next, then last).
    fn pick_next_entity(&self, cpu: CpuId) -> Option<TaskId> {
        let rq = &self.rqs[cpu];
        let left = self.leftmost(cpu)?;
        let mut se = left;
        if rq.skip == Some(se) {
            if let Some(&(_, _, second)) = rq.timeline.iter().nth(1) {
                if self.wakeup_preempt_entity(second, left) < 1 {
                    se = second;
                }
            }
        }
        if let Some(n) = rq.next.filter(|&n| self.se[n].on_rq && n != se && rq.curr != Some(n)) {
            if self.wakeup_preempt_entity(n, left) < 1 {
                return Some(n);
            }
        }
        if let Some(l) = rq.last.filter(|&l| self.se[l].on_rq && rq.curr != Some(l)) {
            if self.wakeup_preempt_entity(l, left) < 1 {
                return Some(l);
            }
        }
        Some(se)
    }

    /// `check_preempt_tick` (≤6.5).
    fn check_preempt_tick(&mut self, cx: &mut Ctx, cpu: CpuId, curr: TaskId) {
        let ideal = self.sched_slice(cpu, curr);
        let se = &self.se[curr];
        let ran = se.sum_exec_runtime - se.prev_sum_exec_runtime;
        if ran > ideal {
            cx.resched_curr(cpu);
            self.clear_buddies(cpu, curr);
            return;
        }
        if ran < self.t.min_granularity {
            return;
        }
        if let Some(left) = self.leftmost(cpu) {
            // Compares a vruntime difference with a wall-clock slice, as the kernel does.
            let d = vdiff(self.se[curr].vruntime, self.se[left].vruntime);
            if d > ideal as i64 {
                cx.resched_curr(cpu);
            }
        }
    }

    fn grow(&mut self, p: TaskId) {
        if self.se.len() <= p {
            self.se.resize(p + 1, Entity::default());
        }
    }
}

impl SchedClass for Cfs {
    fn name(&self) -> &'static str {
        "cfs"
    }

    fn tunables(&self) -> Vec<Tunable> {
        self.t.list()
    }

    /// `sched_fork` + `task_fork_fair` (≤6.5): the child starts at the parent's vruntime,
    /// is placed with START_DEBIT, may swap with the parent (`sched_child_runs_first`), and
    /// is stored relative to `min_vruntime` until `wake_up_new_task` enqueues it.
    fn task_new(&mut self, cx: &mut Ctx, p: TaskId, parent: Option<TaskId>) {
        self.grow(p);
        let info = cx.task(p);
        let cpu = info.cpu;
        self.se[p] = Entity {
            load: Some(LoadWeight::for_task(info.nice, info.policy == TaskPolicy::Idle)),
            idle_policy: info.policy == TaskPolicy::Idle,
            ..Entity::default()
        };
        self.init_entity_runnable_average(p);
        self.update_curr(cpu, cx.now);
        let curr = self.rqs[cpu].curr.filter(|&c| Some(c) == parent);
        if let Some(c) = curr {
            self.se[p].vruntime = self.se[c].vruntime;
        }
        self.place_entity(cpu, p, true);
        if let Some(c) = curr {
            if self.t.child_runs_first && vdiff(self.se[c].vruntime, self.se[p].vruntime) < 0 {
                let (a, b) = (self.se[c].vruntime, self.se[p].vruntime);
                self.se[c].vruntime = b;
                self.se[p].vruntime = a;
                cx.resched_curr(cpu);
            }
        }
        let min = self.rqs[cpu].min_vruntime;
        self.se[p].vruntime = self.se[p].vruntime.wrapping_sub(min);
        self.se[p].relative = true;
    }

    /// `task_dead_fair` → `remove_entity_load_avg`.
    fn task_dead(&mut self, cx: &mut Ctx, p: TaskId) {
        let cpu = cx.task(p).cpu;
        self.remove_entity_load_avg(cpu, p);
    }

    /// `select_task_rq_fair`, or idle-or-previous with `balance=0`.
    fn select_task_rq(&mut self, cx: &mut Ctx, p: TaskId, prev: CpuId, kind: SelectKind, wake_flags: u32) -> CpuId {
        if self.t.balance {
            self.adj.reset(self.rqs.len());
            self.select_task_rq_fair(cx, p, prev, kind, wake_flags)
        } else {
            idle_or_prev(cx, p, prev)
        }
    }

    /// `migrate_task_rq_fair` (≤6.5): a waking task leaving its CPU takes its vruntime
    /// relative to the old `min_vruntime`; its load leaves the old runqueue (detached if it
    /// is being moved while queued, queued for removal if it was asleep), and it is no
    /// longer cache-hot.
    fn migrate_task_rq(&mut self, cx: &mut Ctx, p: TaskId, _new_cpu: CpuId) {
        let old = cx.task(p).cpu;
        let se = &self.se[p];
        if !se.on_rq && !se.relative && !se.migrating {
            let min = self.rqs[old].min_vruntime;
            let se = &mut self.se[p];
            se.vruntime = se.vruntime.wrapping_sub(min);
            se.relative = true;
        }
        if self.se[p].avg.last_update_time != 0 {
            if std::mem::take(&mut self.se[p].migrating) {
                self.update_load_avg(old, p, cx.now.0, load::DO_DETACH);
            } else {
                self.remove_entity_load_avg(old, p);
            }
        }
        self.se[p].migrating = false;
        self.se[p].avg.last_update_time = 0;
        self.se[p].exec_start = 0;
    }

    /// `enqueue_entity` (≤6.5).
    fn enqueue_task(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, flags: u32) {
        let renorm = flags & enqueue::WAKEUP == 0 || flags & enqueue::MIGRATED != 0;
        let is_curr = self.rqs[cpu].curr == Some(p);
        self.se[p].cpu = cpu;
        if renorm && self.se[p].relative {
            let min = self.rqs[cpu].min_vruntime;
            if is_curr {
                self.se[p].vruntime = self.se[p].vruntime.wrapping_add(min);
            }
            self.update_curr(cpu, cx.now);
            if !is_curr {
                let min = self.rqs[cpu].min_vruntime;
                self.se[p].vruntime = self.se[p].vruntime.wrapping_add(min);
            }
            self.se[p].relative = false;
        } else {
            self.update_curr(cpu, cx.now);
        }
        if flags & enqueue::INITIAL != 0 {
            self.post_init_entity_util_avg(cpu, p);
        }
        if flags & enqueue::WAKEUP != 0 {
            self.update_avg_idle(cpu, cx.now.0);
        }
        self.se[p].migrating = false;
        self.update_load_avg(cpu, p, cx.now.0, DO_ATTACH);
        let w = self.se[p].lw().weight;
        let rq = &mut self.rqs[cpu];
        rq.load += w;
        rq.nr_running += 1;
        rq.idle_nr += u64::from(self.se[p].idle_policy);
        rq.cfs_tasks.push_front(p);
        if flags & enqueue::WAKEUP != 0 {
            self.place_entity(cpu, p, false);
        }
        if !is_curr {
            self.enqueue_timeline(cpu, p);
        }
        self.se[p].on_rq = true;
    }

    /// `dequeue_entity` (≤6.5).
    fn dequeue_task(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, flags: u32) {
        self.update_curr(cpu, cx.now);
        self.update_load_avg(cpu, p, cx.now.0, 0);
        self.se[p].migrating = flags & dequeue::MIGRATE != 0;
        self.clear_buddies(cpu, p);
        if self.rqs[cpu].curr != Some(p) {
            self.dequeue_timeline(cpu, p);
        }
        self.se[p].on_rq = false;
        let w = self.se[p].lw().weight;
        let rq = &mut self.rqs[cpu];
        rq.load -= w;
        rq.nr_running -= 1;
        rq.idle_nr -= u64::from(self.se[p].idle_policy);
        if let Some(i) = rq.cfs_tasks.iter().position(|&t| t == p) {
            rq.cfs_tasks.remove(i);
        }
        if flags & dequeue::SLEEP == 0 {
            let min = rq.min_vruntime;
            self.se[p].vruntime = self.se[p].vruntime.wrapping_sub(min);
            self.se[p].relative = true;
        }
        self.update_min_vruntime(cpu);
    }

    /// `check_preempt_wakeup` (≤6.5).
    fn wakeup_preempt(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, wake_flags: u32) {
        let Some(curr) = self.rqs[cpu].curr else {
            cx.resched_curr(cpu);
            return;
        };
        if curr == p {
            return;
        }
        let scale = self.rqs[cpu].nr_running >= self.t.nr_latency;
        let mut next_buddy_marked = false;
        if self.t.next_buddy && scale && wake_flags & wf::FORK == 0 {
            self.rqs[cpu].next = Some(p);
            next_buddy_marked = true;
        }
        if cx.cpus[cpu].need_resched {
            return;
        }
        let curr_policy = cx.task(curr).policy;
        let p_policy = cx.task(p).policy;
        let preempt = if curr_policy == TaskPolicy::Idle && p_policy != TaskPolicy::Idle {
            true
        } else if p_policy != TaskPolicy::Normal || !self.t.wakeup_preemption {
            return;
        } else {
            self.update_curr(cpu, cx.now);
            if self.wakeup_preempt_entity(curr, p) == 1 {
                if !next_buddy_marked {
                    self.rqs[cpu].next = Some(p);
                }
                true
            } else {
                false
            }
        };
        if preempt {
            cx.resched_curr(cpu);
            if self.se[curr].on_rq && self.t.last_buddy && scale {
                self.rqs[cpu].last = Some(curr);
            }
        }
    }

    /// `put_prev_entity`.
    fn put_prev_task(&mut self, cx: &mut Ctx, cpu: CpuId, prev: TaskId) {
        if self.se[prev].on_rq {
            self.update_curr(cpu, cx.now);
            self.update_load_avg(cpu, prev, cx.now.0, 0);
            self.enqueue_timeline(cpu, prev);
        }
        self.rqs[cpu].curr = None;
    }

    /// `pick_next_task_fair` (simple path) → `pick_next_entity` + `set_next_entity`.
    fn pick_next_task(&mut self, cx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        let se = self.pick_next_entity(cpu)?;
        self.clear_buddies(cpu, se);
        self.dequeue_timeline(cpu, se);
        self.update_load_avg(cpu, se, cx.now.0, 0);
        self.rqs[cpu].curr = Some(se);
        // `cfs_tasks` is kept most-recently-run first.
        let rq = &mut self.rqs[cpu];
        if let Some(i) = rq.cfs_tasks.iter().position(|&t| t == se) {
            rq.cfs_tasks.remove(i);
            rq.cfs_tasks.push_front(se);
        }
        let slice = self.sched_slice(cpu, se);
        let e = &mut self.se[se];
        e.exec_start = cx.now.0;
        e.prev_sum_exec_runtime = e.sum_exec_runtime;
        e.slice = slice;
        Some(se)
    }

    /// `task_tick_fair` → `entity_tick`.
    fn task_tick(&mut self, cx: &mut Ctx, cpu: CpuId, curr: TaskId) {
        self.update_curr(cpu, cx.now);
        self.update_load_avg(cpu, curr, cx.now.0, 0);
        if self.rqs[cpu].nr_running > 1 {
            self.check_preempt_tick(cx, cpu, curr);
        }
    }

    /// `yield_task_fair` (≤6.5): mark `curr` as the skip buddy.
    fn yield_task(&mut self, cx: &mut Ctx, cpu: CpuId, curr: TaskId) {
        if self.rqs[cpu].nr_running == 1 {
            return;
        }
        self.clear_buddies(cpu, curr);
        if cx.task(curr).policy != TaskPolicy::Batch {
            self.update_curr(cpu, cx.now);
        }
        self.rqs[cpu].skip = Some(curr);
    }

    /// `reweight_task` → `reweight_entity` (v5.15: vruntime is kept).
    fn reweight_task(&mut self, cx: &mut Ctx, p: TaskId) {
        let info = cx.task(p);
        let new = LoadWeight::for_task(info.nice, info.policy == TaskPolicy::Idle);
        let cpu = info.cpu;
        if self.se[p].on_rq {
            if self.rqs[cpu].curr == Some(p) {
                self.update_curr(cpu, cx.now);
            }
            self.rqs[cpu].load = self.rqs[cpu].load - self.se[p].lw().weight + new.weight;
        }
        self.se[p].load = Some(new);
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
        }
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
        v.push(("wake_wide".into(), self.counters.wake_wide));
        v.push(("wake_affine".into(), self.counters.wake_affine));
        v
    }

    fn queued(&self, cpu: CpuId, out: &mut Vec<TaskId>) {
        out.extend(self.rqs[cpu].timeline.iter().map(|e| e.2));
        if let Some(c) = self.rqs[cpu].curr {
            if self.se[c].on_rq {
                out.push(c);
            }
        }
    }

    fn task_stats(&self, p: TaskId) -> Vec<Stat> {
        let Some(se) = self.se.get(p).filter(|s| s.load.is_some()) else { return Vec::new() };
        let v = if se.relative { se.vruntime as i64 } else { vdiff(se.vruntime, MIN_VRUNTIME_INIT) };
        // Lag against the runqueue's floor: positive = behind `min_vruntime` (owed CPU).
        let lag = if se.relative { -(se.vruntime as i64) } else { vdiff(self.rqs[se.cpu].min_vruntime, se.vruntime) };
        vec![
            Stat { name: "vruntime", value: v },
            Stat { name: "lag", value: lag },
            Stat { name: "sum_exec_runtime", value: se.sum_exec_runtime as i64 },
            Stat { name: "slice", value: se.slice as i64 },
            Stat { name: "weight", value: se.lw().weight as i64 },
            Stat { name: "load_avg", value: se.avg.load_avg as i64 },
            Stat { name: "runnable_avg", value: se.avg.runnable_avg as i64 },
            Stat { name: "util_avg", value: se.avg.util_avg as i64 },
        ]
    }

    fn check_invariants(&self, _cx: &Ctx) -> Result<(), String> {
        for (c, rq) in self.rqs.iter().enumerate() {
            let mut load = 0;
            let mut nr = 0;
            for &(v, s, p) in &rq.timeline {
                let se = &self.se[p];
                if !se.on_rq || se.vruntime != v || se.seq != s || se.relative {
                    return Err(format!("CPU {c}: tree entry of task {p} is stale"));
                }
                if vdiff(v, rq.min_vruntime) < -(self.t.latency as i64) {
                    return Err(format!("CPU {c}: task {p} is more than sched_latency left of min_vruntime"));
                }
                load += se.lw().weight;
                nr += 1;
            }
            if let Some(cur) = rq.curr {
                if rq.timeline.iter().any(|e| e.2 == cur) {
                    return Err(format!("CPU {c}: curr {cur} is in the tree"));
                }
                if self.se[cur].on_rq {
                    load += self.se[cur].lw().weight;
                    nr += 1;
                }
            }
            if load != rq.load || nr != rq.nr_running {
                return Err(format!(
                    "CPU {c}: load {}/{} nr {}/{} disagree with the entities",
                    rq.load, load, rq.nr_running, nr
                ));
            }
        }
        Ok(())
    }
}
