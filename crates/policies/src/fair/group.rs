//! Task groups (`kernel/sched/fair.c` with `CONFIG_FAIR_GROUP_SCHED`, `core.c`,
//! `autogroup.c`): a group has, on every CPU, an entity queued in its parent's runqueue and
//! a runqueue of its own members. Its entity's weight on a CPU is its share of the group's
//! `shares`, in proportion to the group's load there (`calc_group_shares`), re-weighted at
//! every enqueue, dequeue and tick of a member (`update_cfs_group`).
//!
//! Groups come from the workload: cgroups (`[[group]]`, cgroup v2 `cpu.weight`) and
//! sessions, each of which is an autogroup when `autogroup` is on (a task in the root
//! cgroup with a session runs in its session's autogroup, `task_wants_autogroup`).
//!
//! An idle cgroup (`cpu.idle` = 1, `sched_group_set_idle`, fair.c v5.15, v6.18) has the
//! shares of a `SCHED_IDLE` task (`WEIGHT_IDLEPRIO`), its entities are idle entities for
//! wakeup preemption (`se_is_idle`), and every task below it counts as idle in the
//! ancestors' `idle_h_nr_running` (`h_nr_idle` in v6.18), so a CPU running only such
//! tasks is a `sched_idle_cpu` for wakeup placement.

use super::entity::{CfsRq, Entity, RqId, Se};
use super::weights::{LoadWeight, NICE_0_LOAD, SCHED_PRIO_TO_WEIGHT, WEIGHT_IDLEPRIO};
use super::{Fair, MIN_VRUNTIME_INIT};
use schedlab_sched_api::{Ctx, TaskGroups, TaskInfo};
use schedlab_sim::{CpuId, TaskId};

/// `MIN_SHARES` (sched.h): the smallest weight a group entity gets.
const MIN_SHARES: u64 = 2;

/// `struct task_group` (the parts the fair class uses).
#[derive(Clone, Debug)]
pub struct TaskGroup {
    pub name: String,
    pub parent: usize,
    /// 0 for the root; a group's entities have depth `depth - 1`.
    pub depth: u32,
    /// `tg->shares` on the 1024 scale.
    pub shares: u64,
    /// `tg->load_avg`: Σ over CPUs of each group runqueue's last contribution.
    pub load_avg: u64,
    /// `tg->idle` (and each of its runqueues' `cfs_rq->idle`): `cpu.idle` = 1.
    pub idle: bool,
}

impl TaskGroup {
    pub fn root() -> TaskGroup {
        TaskGroup { name: "/".into(), parent: 0, depth: 0, shares: NICE_0_LOAD, load_avg: 0, idle: false }
    }
}

/// A cgroup's `tg->shares`: `WEIGHT_IDLEPRIO` for an idle group (`sched_group_set_idle`
/// sets it so: "idle groups have minimum weight"), the nice level's table weight for one
/// given by `cpu.weight.nice` (`cpu_weight_nice_write_s64`), else `cpu.weight` scaled;
/// clamped to `MIN_SHARES..=MAX_SHARES` as `__sched_group_set_shares` does.
fn cgroup_shares(c: &schedlab_sched_api::CgroupDef) -> u64 {
    let shares = if c.idle {
        WEIGHT_IDLEPRIO
    } else {
        c.nice.map_or_else(|| shares_from_cpu_weight(c.weight), schedlab_sched_api::shares_of_nice)
    };
    shares.clamp(MIN_SHARES, 1 << 18)
}

/// `sched_weight_from_cgroup` (core.c): cgroup v2 `cpu.weight` (default 100) to shares,
/// rounded to nearest: 100 → 1024.
pub fn shares_from_cpu_weight(w: u32) -> u64 {
    (u64::from(w) * NICE_0_LOAD + 50) / 100
}

impl Fair {
    /// Root runqueues only (before the workload's groups are known).
    pub(super) fn build_groups(&mut self) {
        self.rebuild(vec![TaskGroup::root()]);
    }

    /// `sched_create_group` for every cgroup, `autogroup_create` for every session.
    pub(super) fn define_groups(&mut self, groups: &TaskGroups) -> Result<(), String> {
        let mut tgs = vec![TaskGroup::root()];
        let mut maxes = vec![schedlab_sched_api::CpuMax::default()];
        self.nr_cgroups = groups.cgroups.len();
        for c in &groups.cgroups {
            let parent = c.parent.map_or(0, |p| p + 1);
            let depth = tgs[parent].depth + 1;
            tgs.push(TaskGroup {
                name: c.name.clone(),
                parent,
                depth,
                shares: cgroup_shares(c),
                load_avg: 0,
                idle: c.idle,
            });
            maxes.push(c.max);
        }
        for s in &groups.sessions {
            // `proc_sched_autogroup_set_nice`: shares = the nice level's weight.
            let shares = SCHED_PRIO_TO_WEIGHT[(s.nice.clamp(-20, 19) + 20) as usize];
            let name = format!("autogroup-{}", s.name);
            tgs.push(TaskGroup { name, parent: 0, depth: 1, shares, load_avg: 0, idle: false });
            maxes.push(schedlab_sched_api::CpuMax::default());
        }
        if self.t.version == super::Version::V4_9 && maxes.iter().any(|m| m.quota.is_some()) {
            return Err("cpu.max: bandwidth control is modelled for v5.15 and later, not v4.9".into());
        }
        if let Some(c) = groups.cgroups.iter().find(|c| c.idle).filter(|_| self.t.version == super::Version::V4_9) {
            // `cpu.idle` came with v5.15 ("sched: Cgroup SCHED_IDLE support").
            return Err(format!("group `{}`: cpu.idle needs v5.15 or later; v4.9 has no idle groups", c.name));
        }
        self.rebuild(tgs);
        self.init_bandwidth(&maxes);
        Ok(())
    }

    /// Allocates every group's runqueues and entities (`init_tg_cfs_entry`).
    fn rebuild(&mut self, tgs: Vec<TaskGroup>) {
        let n = self.nr_cpus;
        self.rqs = (0..tgs.len()).flat_map(|g| (0..n).map(move |c| CfsRq::new(c, g, MIN_VRUNTIME_INIT))).collect();
        self.task_base = ((tgs.len() - 1) * n) as u32;
        self.ents = Vec::with_capacity(self.task_base as usize);
        for (g, tg) in tgs.iter().enumerate().skip(1) {
            for c in 0..n {
                let parent_rq = self.group_rq(tg.parent, c);
                self.ents.push(Entity {
                    load: LoadWeight::sum(NICE_0_LOAD),
                    cfs_rq: parent_rq,
                    my_q: Some(self.group_rq(g, c)),
                    depth: tg.depth - 1,
                    idle_policy: tg.idle,
                    slice: self.t.base_slice,
                    ..Entity::default()
                });
            }
        }
        self.tg_children = vec![Vec::new(); tgs.len()];
        for (g, tg) in tgs.iter().enumerate().skip(1) {
            self.tg_children[tg.parent].push(g);
        }
        self.tgs = tgs;
        self.nodes = super::tree::Nodes::default();
        let maxes = vec![schedlab_sched_api::CpuMax::default(); self.tgs.len()];
        self.init_bandwidth(&maxes);
    }

    /// `cfs_rq_is_idle`: the runqueue of an idle group.
    pub(super) fn cfs_rq_is_idle(&self, rq: RqId) -> bool {
        self.tgs[self.rq(rq).tg].idle
    }

    /// The idle-task count a walk up carries past group entity `se` (`enqueue_task_fair`,
    /// `dequeue_entities`, `throttle_cfs_rq`, `unthrottle_cfs_rq`): above an idle group's
    /// runqueue every task counts as idle.
    pub(super) fn idle_above(&self, se: Se, tasks: u64, idle: u64) -> u64 {
        match self.e(se).my_q {
            Some(q) if self.cfs_rq_is_idle(q) => tasks,
            _ => idle,
        }
    }

    /// The task group a new task runs in: its cgroup, else (with autogroup on) its
    /// session's autogroup, else the root (`task_wants_autogroup`, `sched_get_task_group`).
    pub(super) fn task_group_of(&self, info: &TaskInfo) -> usize {
        match (info.cgroup.get(), info.session.get()) {
            (Some(c), _) => 1 + c,
            (None, Some(s)) if self.t.autogroup => 1 + self.nr_cgroups + s,
            _ => 0,
        }
    }

    /// `calc_group_shares` (v5.x+): the group's shares in proportion to this runqueue's
    /// part of the group's load, computed on the kernel's 2^20 scale and scaled down as
    /// `scale_load_down` does.
    fn calc_group_shares(&self, grq: RqId) -> u64 {
        let rq = self.rq(grq);
        let tg = &self.tgs[rq.tg];
        let tg_shares = tg.shares << 10;
        let load = rq.load.max(rq.avg.load_avg);
        let tg_weight = (tg.load_avg + load).saturating_sub(rq.tg_load_avg_contrib);
        let shares = tg_shares * load;
        let shares = shares.checked_div(tg_weight).unwrap_or(shares);
        (shares.clamp(MIN_SHARES, tg_shares) >> 10).max(MIN_SHARES)
    }

    /// `update_cfs_group`: re-weight a group entity to its current share.
    /// From v6.12 an empty group keeps its weight (it matters for a delayed group entity).
    pub(super) fn update_cfs_group(&mut self, cx: &mut Ctx, se: Se) {
        let Some(grq) = self.e(se).my_q else { return };
        if self.t.version >= super::Version::V6_12 && self.rq(grq).load == 0 {
            return;
        }
        let shares = self.calc_group_shares(grq);
        if self.e(se).load.weight != shares {
            let rq = self.cfs_rq_of(se);
            self.reweight_entity(cx, rq, se, LoadWeight::sum(shares));
        }
    }

    /// `update_tg_load_avg`: publish this runqueue's load to its group when it moved by
    /// more than 1/64 of what was published (v6.6+ also at most once per ms).
    pub(super) fn update_tg_load_avg(&mut self, rq: RqId, now: u64) {
        let r = self.rq(rq);
        if r.tg == 0 {
            return;
        }
        let _ = now;
        let (load, contrib) = (r.avg.load_avg, r.tg_load_avg_contrib);
        if load.abs_diff(contrib) > contrib / 64 {
            let tg = r.tg;
            let g = &mut self.tgs[tg];
            g.load_avg = (g.load_avg + load).saturating_sub(contrib);
            self.rqm(rq).tg_load_avg_contrib = load;
        }
    }

    /// `task_h_load`: the task's load as seen at the root (`update_cfs_rq_h_load` walks the
    /// group entities down, scaling by each level's share of its queue's load).
    pub(super) fn task_h_load(&self, p: TaskId) -> u64 {
        let se = self.task_se(p);
        let rq = self.cfs_rq_of(se);
        let h = self.h_load(rq);
        self.e(se).avg.load_avg * h / (self.rq(rq).avg.load_avg + 1)
    }

    fn h_load(&self, rq: RqId) -> u64 {
        let r = self.rq(rq);
        if r.tg == 0 {
            return r.avg.load_avg;
        }
        let gse = self.group_se(r.tg, r.cpu);
        let parent = self.cfs_rq_of(gse);
        let ph = self.h_load(parent);
        ph * self.e(gse).avg.load_avg / (self.rq(parent).avg.load_avg + 1)
    }

    /// Group-structure checks: every group's `load_avg` is the sum its runqueues
    /// contributed, and the per-CPU checks of [`Fair::check_group_cpus`] on every CPU.
    pub(super) fn check_groups(&self) -> Result<(), String> {
        for g in 1..self.tgs.len() {
            let tg = &self.tgs[g];
            let contribs: u64 = (0..self.nr_cpus).map(|c| self.rq(self.group_rq(g, c)).tg_load_avg_contrib).sum();
            if contribs != tg.load_avg {
                return Err(format!(
                    "group `{}`: load_avg {} but its runqueues contributed {contribs}",
                    tg.name, tg.load_avg
                ));
            }
        }
        let all: Vec<CpuId> = (0..self.nr_cpus).collect();
        self.check_group_cpus(&all)
    }

    /// Per-CPU group checks, cheap enough for every event (on the CPUs it touched): a group
    /// entity is queued iff its queue has entities, or (delayed) it has none but still owes
    /// service; a queued one weighs its share of the group (an idle one keeps whatever it
    /// had: `update_cfs_group` leaves an empty group alone).
    pub(super) fn check_group_cpus(&self, cpus: &[CpuId]) -> Result<(), String> {
        for g in 1..self.tgs.len() {
            let tg = &self.tgs[g];
            for &c in cpus {
                let se = self.group_se(g, c);
                let q = self.rq(self.group_rq(g, c));
                let e = self.e(se);
                if e.on_rq && !(MIN_SHARES..=tg.shares.max(MIN_SHARES)).contains(&e.load.weight) {
                    return Err(format!(
                        "group `{}` on CPU {c}: weight {} outside {MIN_SHARES}..={}",
                        tg.name, e.load.weight, tg.shares
                    ));
                }
                // v5.15 throttling takes a throttled group's entity off, its queue kept.
                let off = self.cfs_rq_throttled(self.group_rq(g, c)) && !self.task_throttle();
                let queued = (q.nr_running > 0 && !off) || e.sched_delayed;
                if e.on_rq != queued || (e.sched_delayed && q.nr_running > 0) {
                    return Err(format!(
                        "group `{}` on CPU {c}: entity on_rq={} but its queue holds {} entities",
                        tg.name, e.on_rq, q.nr_running
                    ));
                }
            }
        }
        Ok(())
    }
}
