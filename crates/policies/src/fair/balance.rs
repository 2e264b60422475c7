//! The load balancer (fair.c v5.15): `trigger_load_balance` → `rebalance_domains` →
//! `load_balance` (`should_we_balance`, `find_busiest_group`, `calculate_imbalance`,
//! `find_busiest_queue`, `detach_tasks`, `can_migrate_task`, `task_hot`,
//! `need_active_balance`), `newidle_balance`, and NOHZ idle balancing
//! (`nohz_balancer_kick`, `kick_ilb`, `_nohz_idle_balance`).
//!
//! Moves are requested from the kernel, which takes both runqueue locks and moves the task
//! after the hook returns. Within one hook the balancer sees its own pending moves
//! ([`Adjust`]), as the synchronous kernel code would.

use super::balance_why::{group_type_name, Kick, LbWhy};
use super::domains::{
    Domain, SD_BALANCE_NEWIDLE, SD_NUMA, SD_PREFER_SIBLING, SD_SHARE_CPUCAPACITY, SD_SHARE_PKG_RESOURCES,
};
use super::eas::capacity_greater;
use super::pelt::SCHED_CAPACITY_SCALE;
use super::select::{group_classify, GroupStats, GroupType};
use super::Fair;
use schedlab_machine::CpuSet;
use schedlab_sched_api::{Ctx, TaskPolicy};
use schedlab_sim::{CpuId, TaskId};

/// Effects of the moves requested in the current hook, not yet applied by the kernel.
#[derive(Clone, Debug, Default)]
pub struct Adjust {
    pub load: Vec<i64>,
    pub util: Vec<i64>,
    pub runnable: Vec<i64>,
    /// The moved tasks' estimates (`util_est.rs`).
    pub util_est: Vec<i64>,
    pub nr: Vec<i64>,
    pub moved: Vec<TaskId>,
    /// CPUs with a non-zero entry (reset touches only these).
    touched: Vec<CpuId>,
}

impl Adjust {
    pub fn reset(&mut self, n: usize) {
        if self.nr.len() != n {
            for v in [&mut self.load, &mut self.util, &mut self.runnable, &mut self.util_est, &mut self.nr] {
                v.clear();
                v.resize(n, 0);
            }
            self.touched.clear();
        }
        for c in self.touched.drain(..) {
            self.load[c] = 0;
            self.util[c] = 0;
            self.runnable[c] = 0;
            self.util_est[c] = 0;
            self.nr[c] = 0;
        }
        self.moved.clear();
    }
}

/// `enum cpu_idle_type`: `CPU_IDLE`, `CPU_NOT_IDLE`, `CPU_NEWLY_IDLE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuIdleType {
    Idle,
    /// `CPU_NOT_IDLE`.
    Busy,
    NewlyIdle,
}

/// `enum migration_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Migration {
    Load,
    Util,
    Task,
    /// `migrate_misfit`: move the task too big for its CPU (asymmetric capacities).
    Misfit,
}

/// Per-level counters (like `/proc/schedstat`'s per-domain `lb_count`, `lb_balanced`,
/// `lb_failed`, `lb_gained`), indexed by level name.
#[derive(Clone, Debug, Default)]
pub struct LbStats {
    pub rows: Vec<(String, [u64; 5])>,
}

impl LbStats {
    /// Columns: attempts, balanced, moved tasks, failed, active balances.
    fn bump(&mut self, level: &str, col: usize, by: u64) {
        match self.rows.iter_mut().find(|(n, _)| n == level) {
            Some((_, r)) => r[col] += by,
            None => {
                let mut r = [0; 5];
                r[col] = by;
                self.rows.push((level.to_string(), r));
            }
        }
    }
}

pub(super) struct Env {
    pub dst: CpuId,
    /// `env->src_cpu`, once `find_busiest_queue` chose it.
    pub src: CpuId,
    pub idle: CpuIdleType,
    pub level: usize,
    pub cpus: CpuSet,
    pub imbalance: i64,
    /// The imbalance `calculate_imbalance` found, before `detach_tasks` works it off.
    pub imbalance_found: i64,
    pub migration: Migration,
    pub all_pinned: bool,
    /// The pass's decision record, while decisions are recorded.
    pub why: Option<LbWhy>,
}

/// `struct sd_lb_stats`.
struct SdStats {
    busiest: Option<(usize, GroupStats)>,
    local: GroupStats,
    total_load: u64,
    total_capacity: u64,
    avg_load: u64,
    prefer_sibling: bool,
}

/// Modelled cost of one newidle attempt at a level (the kernel measures it): fixed part plus
/// per CPU of the span, ns.
fn newidle_cost(sd: &Domain) -> u64 {
    1_000 + 200 * sd.span_weight as u64
}

/// `update_newidle_cost` (fair.c v6.6): a newidle attempt that cost more than the
/// domain's maximum raises it and restarts the decay clock; otherwise, more than a second
/// (`HZ` jiffies) after the last decay, the maximum decays by 3/256 (about 1 % a second) and
/// the caller learns it did. v5.15 has no such function: `newidle_balance` only raises the
/// maximum, leaving the decay clock alone (`newidle_raise`), and `rebalance_domains` decays it
/// on the same schedule (`next_decay_max_lb_cost`; see [`Fair::decay_newidle_cost`]).
fn update_newidle_cost(sd: &mut Domain, cost: u64, j: u64, hz: u64) -> bool {
    if cost > sd.max_newidle_lb_cost {
        sd.max_newidle_lb_cost = cost;
        sd.last_decay_max_lb_cost = j;
        false
    } else if j > sd.last_decay_max_lb_cost + hz {
        sd.max_newidle_lb_cost = sd.max_newidle_lb_cost * 253 / 256;
        sd.last_decay_max_lb_cost = j;
        true
    } else {
        false
    }
}

impl Fair {
    /// The periodic decay of `max_newidle_lb_cost` at the top of `rebalance_domains`'
    /// domain loop: `update_newidle_cost(sd, 0)` in v6.6 (whose result *replaces*
    /// `need_decay`: only the last domain visited counts), the inline `next_decay_max_lb_cost`
    /// test in v5.15 (whose `need_decay` stays set once any domain decayed).
    fn decay_newidle_cost(&mut self, cpu: CpuId, level: usize, j: u64, need_decay: &mut bool) {
        let hz = self.hz;
        let eevdf = self.eevdf_on();
        let sd = &mut self.domains.per_cpu[cpu][level];
        if eevdf {
            *need_decay = update_newidle_cost(sd, 0, j, hz);
        } else if j > sd.last_decay_max_lb_cost + hz {
            sd.max_newidle_lb_cost = sd.max_newidle_lb_cost * 253 / 256;
            sd.last_decay_max_lb_cost = j;
            *need_decay = true;
        }
    }

    /// A newidle attempt at `level` cost `cost`: v6.6 `update_newidle_cost`; v5.15 raises
    /// the maximum only.
    pub(super) fn newidle_raise(&mut self, cpu: CpuId, level: usize, cost: u64, j: u64) {
        let hz = self.hz;
        let eevdf = self.eevdf_on();
        let sd = &mut self.domains.per_cpu[cpu][level];
        if eevdf {
            update_newidle_cost(sd, cost, j, hz);
        } else {
            sd.max_newidle_lb_cost = sd.max_newidle_lb_cost.max(cost);
        }
    }

    pub(super) fn h_nr(&self, cpu: CpuId) -> u64 {
        (self.h_nr_running(cpu) as i64 + self.adj.nr[cpu]).max(0) as u64
    }
    fn nr(&self, cx: &Ctx, cpu: CpuId) -> u64 {
        (cx.cpus[cpu].nr_running as i64 + self.adj.nr[cpu]).max(0) as u64
    }

    /// `update_sg_lb_stats`.
    fn sg_stats(&self, cx: &Ctx, sd: &Domain, group: &CpuSet, cpus: &CpuSet, local: bool) -> GroupStats {
        let mut s = GroupStats::new(group.count());
        self.count(|w| w.groups += 1);
        let eas = self.sched_energy_enabled(cx);
        for c in group.iter().filter(|&c| cpus.contains(c)) {
            s.overutilized |= eas && self.cpu_overutilized(cx, c);
            self.count(|w| w.read_cpu(cx.machine, cx.this_cpu, c));
            s.group_load += self.cpu_load(c);
            s.group_util += self.cpu_util(c);
            s.group_runnable += self.cpu_runnable(c);
            s.sum_h_nr_running += self.h_nr(c);
            let nr = self.nr(cx, c);
            s.sum_nr_running += nr;
            s.overload |= nr > 1;
            if nr == 0 && cx.idle_cpu(c) && self.adj.nr[c] == 0 {
                s.idle_cpus += 1;
            }
        }
        if !local && self.asym_cpucap == Some(true) {
            self.sg_misfit_stats(cx, sd, group, cpus, &mut s);
        }
        s.group_type = group_classify(sd.imbalance_pct, &s);
        if s.group_type == GroupType::Overloaded {
            s.avg_load = s.group_load * SCHED_CAPACITY_SCALE / s.group_capacity;
        }
        s
    }

    /// The misfit part of `update_sg_lb_stats` (v5.15, v6.18) for a remote group of an
    /// `SD_ASYM_CPUCAPACITY` domain: the largest `misfit_task_load` of its CPUs, which
    /// also marks the root domain overloaded (`SG_OVERLOAD`, so a newly idle CPU looks);
    /// and the group's `max_capacity` that `update_sd_pick_busiest` compares.
    fn sg_misfit_stats(&self, cx: &Ctx, sd: &Domain, group: &CpuSet, cpus: &CpuSet, s: &mut GroupStats) {
        if !super::eas::sd_asym_cpucapacity(cx, &sd.span) {
            return;
        }
        s.max_capacity = group.iter().map(|c| u64::from(cx.capacity(c))).max().unwrap_or(0);
        for c in group.iter().filter(|&c| cpus.contains(c)) {
            // A misfit task the balancer already moves this hook is no longer there.
            let load = if self.adj.nr[c] < 0 { 0 } else { self.cpu[c].misfit_task_load };
            if load > s.group_misfit_task_load {
                s.group_misfit_task_load = load;
                s.overload = true;
            }
        }
    }

    /// `update_sd_lb_stats` + `update_sd_pick_busiest` (v5.15).
    fn sd_stats(&mut self, cx: &Ctx, env: &Env) -> SdStats {
        let sd = &self.domains.per_cpu[env.dst][env.level];
        let prefer_sibling = env.level > 0 && self.domains.per_cpu[env.dst][env.level - 1].has(SD_PREFER_SIBLING);
        let mut local = None;
        let mut busiest: Option<(usize, GroupStats)> = None;
        let (mut total_load, mut total_capacity, mut sum_util) = (0, 0, 0);
        let (mut overload, mut overutilized) = (false, false);
        for (gi, g) in sd.groups.iter().enumerate() {
            let s = self.sg_stats(cx, sd, g, &env.cpus, gi == 0);
            overload |= s.overload;
            overutilized |= s.overutilized;
            total_load += s.group_load;
            total_capacity += s.group_capacity;
            sum_util += s.group_util;
            if gi == 0 {
                local = Some(s);
                continue;
            }
            // "Don't try to pull misfit tasks we can't help": only into a bigger CPU
            // whose group has spare capacity.
            let l = local.as_ref().expect("the local group comes first");
            let dst_cap = u64::from(cx.capacity(env.dst));
            let can_help = capacity_greater(dst_cap, s.max_capacity) && l.group_type == GroupType::HasSpare;
            if pick_busiest(busiest.as_ref().map(|b| &b.1), &s, can_help) {
                busiest = Some((gi, s));
            }
        }
        // `update_idle_cpu_scan` (SIS_UTIL) when balancing the LLC domain.
        if sd.has(SD_SHARE_PKG_RESOURCES) && self.domains.llc_level(env.dst) == Some(env.level) {
            let w = sd.span_weight as u64;
            let x = sum_util / w.max(1);
            let pct = sd.imbalance_pct;
            let tmp = (x * x * pct * pct / (10_000 * 1024)).min(1024);
            let llc = self.domains.llc_id[env.dst];
            self.nr_idle_scan[llc] = (w * (1024 - tmp) / 1024) as usize;
        }
        // At the root domain (`!env->sd->parent`) the balance rewrites `rd->overload`
        // from what it saw: set or cleared.
        if env.level + 1 == self.domains.per_cpu[env.dst].len() {
            self.rd_overload[self.rd_of[env.dst]] = overload;
            // "Update over-utilization (tipping point, U >= 0) indicator".
            self.set_rd_overutilized(cx, overutilized);
        } else if overutilized {
            self.set_rd_overutilized(cx, true);
        }
        let avg_load = (total_load * SCHED_CAPACITY_SCALE).checked_div(total_capacity).unwrap_or(0);
        SdStats {
            busiest,
            local: local.expect("a domain has a local group"),
            total_load,
            total_capacity,
            avg_load,
            prefer_sibling,
        }
    }

    /// `find_busiest_group` (v5.15) and `calculate_imbalance`; returns the busiest group.
    fn find_busiest_group(&mut self, cx: &Ctx, env: &mut Env) -> Option<usize> {
        if self.t.version == super::Version::V4_9 {
            return self.find_busiest_group_v4_9(cx, env);
        }
        let mut sds = self.sd_stats(cx, env);
        // v5.15 and v6.18: with an energy model and no CPU overutilized, EAS placement
        // is left alone ("goto out_balanced").
        if self.sched_energy_enabled(cx) && !self.rd_overutilized {
            env.balanced(|| "EAS: the root domain is not overutilized".into());
            return None;
        }
        let sd = self.domains.per_cpu[env.dst][env.level].clone();
        let Some((bi, busiest)) = sds.busiest.clone().filter(|b| b.1.sum_h_nr_running > 0) else {
            env.balanced(|| "no other group has fair tasks".into());
            return None;
        };
        if let Some(w) = env.why.as_mut() {
            w.busiest_group = Some(bi);
        }
        // "Misfit tasks should be dealt with regardless of the avg load" (`force_balance`).
        if busiest.group_type == GroupType::MisfitTask {
            self.calculate_imbalance(env, &sd, &mut sds, &busiest);
            return Some(bi);
        }
        let local = &mut sds.local;
        let (lt, bt) = (group_type_name(local.group_type), group_type_name(busiest.group_type));
        if local.group_type > busiest.group_type {
            env.balanced(|| format!("the local group ({lt}) is busier than the busiest ({bt})"));
            return None;
        }
        if local.group_type == GroupType::Overloaded {
            let (la, ba) = (local.avg_load, busiest.avg_load);
            if local.avg_load >= busiest.avg_load {
                env.balanced(|| format!("both overloaded and the local avg_load {la} ≥ the busiest's {ba}"));
                return None;
            }
            sds.avg_load = sds.total_load * SCHED_CAPACITY_SCALE / sds.total_capacity.max(1);
            if local.avg_load >= sds.avg_load {
                let da = sds.avg_load;
                env.balanced(|| format!("the local avg_load {la} ≥ the domain's {da}"));
                return None;
            }
            if 100 * busiest.avg_load <= sd.imbalance_pct * local.avg_load {
                let pct = sd.imbalance_pct;
                env.balanced(|| format!("busiest avg_load {ba} within imbalance_pct {pct} % of the local {la}"));
                return None;
            }
        }
        let force = sds.prefer_sibling
            && local.group_type == GroupType::HasSpare
            && busiest.sum_nr_running > local.sum_nr_running + 1;
        if !force && busiest.group_type != GroupType::Overloaded {
            if env.idle == CpuIdleType::Busy {
                env.balanced(|| format!("the busiest group is not overloaded ({bt}) and this CPU is busy"));
                return None;
            }
            let (li, bi_) = (local.idle_cpus, busiest.idle_cpus);
            if busiest.group_weight > 1 && local.idle_cpus <= busiest.idle_cpus + 1 {
                env.balanced(|| format!("idle CPUs: local group {li} ≤ busiest group {bi_} + 1 ({bt})"));
                return None;
            }
            if busiest.sum_h_nr_running == 1 {
                env.balanced(|| format!("the busiest group runs one fair task ({bt})"));
                return None;
            }
        }
        self.calculate_imbalance(env, &sd, &mut sds, &busiest);
        if env.imbalance <= 0 {
            env.balanced(|| "calculate_imbalance found no imbalance".into());
        }
        (env.imbalance > 0).then_some(bi)
    }

    /// `calculate_imbalance` (v5.15).
    fn calculate_imbalance(&self, env: &mut Env, sd: &Domain, sds: &mut SdStats, busiest: &GroupStats) {
        if busiest.group_type == GroupType::MisfitTask {
            // Only an asymmetric domain's groups are marked, so v6.18's
            // `SD_ASYM_CPUCAPACITY` test here always holds.
            env.migration = Migration::Misfit;
            env.imbalance = 1;
            return;
        }
        let local = &mut sds.local;
        if local.group_type == GroupType::HasSpare {
            if busiest.group_type > GroupType::FullyBusy && !sd.has(SD_SHARE_PKG_RESOURCES) {
                env.migration = Migration::Util;
                env.imbalance = (local.group_capacity.max(local.group_util) - local.group_util) as i64;
                if env.idle != CpuIdleType::Busy && env.imbalance == 0 {
                    env.migration = Migration::Task;
                    env.imbalance = 1;
                }
                return;
            }
            env.migration = Migration::Task;
            if busiest.group_weight == 1 || sds.prefer_sibling {
                env.imbalance = (busiest.sum_nr_running.saturating_sub(local.sum_nr_running) >> 1) as i64;
            } else {
                env.imbalance = (local.idle_cpus as i64 - busiest.idle_cpus as i64).max(0) >> 1;
            }
            // `adjust_numa_imbalance` (v5.15): a small imbalance is allowed while the
            // source node runs fewer tasks than a quarter of its CPUs.
            if sd.has(SD_NUMA) && busiest.sum_nr_running < (busiest.group_weight >> 2) && env.imbalance <= 2 {
                let (n, w) = (busiest.sum_nr_running, busiest.group_weight);
                env.balanced(|| {
                    format!(
                        "adjust_numa_imbalance: the busiest node runs {n} tasks, fewer than a quarter of its {w} CPUs"
                    )
                });
                env.imbalance = 0;
            }
            return;
        }
        if local.group_type < GroupType::Overloaded {
            local.avg_load = local.group_load * SCHED_CAPACITY_SCALE / local.group_capacity;
            if local.avg_load >= busiest.avg_load {
                env.imbalance = 0;
                return;
            }
            sds.avg_load = sds.total_load * SCHED_CAPACITY_SCALE / sds.total_capacity.max(1);
            if local.avg_load >= sds.avg_load {
                env.imbalance = 0;
                return;
            }
        }
        env.migration = Migration::Load;
        let a = busiest.avg_load.saturating_sub(sds.avg_load) * busiest.group_capacity;
        let b = sds.avg_load.saturating_sub(local.avg_load) * local.group_capacity;
        env.imbalance = (a.min(b) / SCHED_CAPACITY_SCALE) as i64;
    }

    /// `find_busiest_queue` (v5.15, v6.18).
    fn find_busiest_queue(&self, cx: &Ctx, env: &Env, group: &CpuSet) -> Option<CpuId> {
        let mut best: Option<(CpuId, u64)> = None;
        // v4.9 has no such test (it came with misfit balancing, v4.20).
        let asym = self.asym_cpucap == Some(true)
            && self.t.version != super::Version::V4_9
            && super::eas::sd_asym_cpucapacity(cx, &self.domains.per_cpu[env.dst][env.level].span);
        let dst_cap = u64::from(cx.capacity(env.dst));
        for c in group.iter().filter(|&c| env.cpus.contains(c)) {
            self.count(|w| w.cpus += 1);
            let nr = self.h_nr(c);
            if nr == 0 {
                continue;
            }
            // An asymmetric domain does not pull a lone task from a CPU no smaller than
            // this one ("could eventually lead to active_balancing high->low capacity").
            if asym && nr == 1 && !capacity_greater(dst_cap, u64::from(cx.capacity(c))) {
                continue;
            }
            let v = match env.migration {
                Migration::Load => {
                    let load = self.cpu_load(c);
                    if nr == 1 && load as i64 > env.imbalance {
                        continue;
                    }
                    load
                }
                Migration::Util => {
                    if nr <= 1 {
                        continue;
                    }
                    self.cpu_util(c)
                }
                Migration::Task => nr,
                // "simply seek the 'biggest' misfit task".
                Migration::Misfit => match self.cpu[c].misfit_task_load {
                    0 => continue,
                    l => l,
                },
            };
            if best.is_none_or(|(_, b)| v > b) {
                best = Some((c, v));
            }
        }
        best.map(|b| b.0)
    }

    /// `task_hot`: ran within `sched_migration_cost` on its CPU, or is the next/last buddy.
    /// From v6.1 moving between SMT siblings never loses a cache, so hotness is ignored
    /// at the SMT level.
    fn task_hot(&self, cx: &Ctx, p: TaskId, sd: &Domain, dst: CpuId) -> bool {
        if cx.task(p).policy == TaskPolicy::Idle {
            return false;
        }
        if self.eevdf_on() && sd.has(SD_SHARE_CPUCAPACITY) {
            return false;
        }
        let se = self.task_se(p);
        let rq = self.rq(self.cfs_rq_of(se));
        if self.t.feat.cache_hot_buddy && self.nr(cx, dst) > 0 && (rq.next == Some(se) || rq.last == Some(se)) {
            return true;
        }
        let exec = self.e(se).exec_start;
        exec != 0 && cx.now.0.saturating_sub(exec) < self.t.migration_cost
    }

    /// `can_migrate_task` (v5.15, without the destination-group retry).
    fn can_migrate_task(&self, cx: &Ctx, env: &mut Env, sd: &Domain, p: TaskId, src: CpuId) -> bool {
        let ok = self.can_migrate_task_inner(cx, env, sd, p, src);
        if !ok && env.why.is_some() {
            let words = self.cannot_migrate_words(cx, env, sd, p, src);
            env.refuse(p, || words);
        }
        ok
    }

    fn can_migrate_task_inner(&self, cx: &Ctx, env: &mut Env, sd: &Domain, p: TaskId, src: CpuId) -> bool {
        if self.throttled_lb_pair(p, src, env.dst) {
            return false;
        }
        if !cx.allowed(p, env.dst) || self.adj.moved.contains(&p) {
            return false;
        }
        env.all_pinned = false;
        if cx.cpus[src].curr == Some(p) {
            return false;
        }
        !self.task_hot(cx, p, sd, env.dst) || sd.nr_balance_failed > sd.cache_nice_tries
    }

    /// `detach_tasks` + `attach_tasks`: from the least recently run end of `cfs_tasks`.
    /// The kernel performs the move under both locks; the tasks this pass did not choose
    /// but could move follow as stand-ins for ones that start running meanwhile (the kernel
    /// code would skip those and go on down the list).
    fn detach_tasks(&mut self, cx: &mut Ctx, env: &mut Env, src: CpuId) -> u64 {
        if self.h_nr(src) <= 1 {
            env.all_pinned = false;
            return 0;
        }
        if env.imbalance <= 0 {
            return 0;
        }
        let sd = self.domains.per_cpu[env.dst][env.level].clone();
        let loop_max = self.t.nr_migrate.min(self.h_nr(src)) as usize;
        // v4.9 takes from the head of `cfs_tasks` (most recently enqueued), v5.15 from the
        // tail (least recently run).
        let v4_9 = self.t.version == super::Version::V4_9;
        // The whole list only when recording why the tasks beyond `loop_max` stayed.
        let max = if env.why.is_some() { usize::MAX } else { loop_max };
        let mut list: Vec<TaskId> = Vec::new();
        self.links.collect(&self.cpu[src].cfs_tasks, !v4_9, max, &mut list);
        if env.why.is_some() {
            let nr = self.t.nr_migrate;
            for &p in list.iter().skip(loop_max) {
                env.refuse(p, || format!("beyond loop_max: a pass examines at most sched_nr_migrate {nr} tasks"));
            }
        }
        list.truncate(loop_max);
        let mut chosen = Vec::new();
        let mut spare = Vec::new();
        let mut left = self.h_nr(src);
        let full = env.imbalance;
        for (i, &p) in list.iter().enumerate() {
            if env.idle != CpuIdleType::Busy && left <= 1 {
                for &q in &list[i..] {
                    env.refuse(q, || "an idle CPU's pass leaves the busiest CPU its last task".into());
                }
                break;
            }
            self.count(|w| w.tasks += 1);
            if !self.can_migrate_task(cx, env, &sd, p, src) {
                continue;
            }
            // What moving `p` would take off the imbalance (`None`: too big for it).
            let cost = |imb: i64| -> Option<i64> {
                match env.migration {
                    Migration::Load => {
                        let l = self.task_h_load(p).max(1);
                        // v4.9 skips a task whose load is more than twice the imbalance;
                        // v5.15 relaxes the test with each failed attempt.
                        let fits = if v4_9 { l / 2 } else { l >> sd.nr_balance_failed.min(63) };
                        (fits as i64 <= imb).then_some(l as i64)
                    }
                    Migration::Util => {
                        let u = self.task_util_est(p) as i64;
                        (u <= imb).then_some(u)
                    }
                    Migration::Task => Some(1),
                    // Only a task that does not fit the source CPU; it takes it all.
                    Migration::Misfit => (!self.task_fits_cpu(cx, p, src)).then_some(imb),
                }
            };
            match cost(env.imbalance).filter(|_| env.imbalance > 0) {
                Some(c) => {
                    env.imbalance -= c;
                    chosen.push(p);
                    left -= 1;
                }
                // Could have been chosen had a chosen one been running: a stand-in.
                None if cost(full).is_some() => {
                    spare.push(p);
                    let left = env.imbalance;
                    env.refuse(p, || format!("the imbalance left after the earlier moves ({left}) does not cover it"));
                }
                None => {
                    if env.why.is_some() {
                        let words = self.too_big_words(env, &sd, p);
                        env.refuse(p, || words);
                    }
                }
            }
        }
        if chosen.is_empty() {
            return 0;
        }
        for &p in &chosen {
            self.note_move(p, src, env.dst);
        }
        let count = chosen.len();
        chosen.extend(spare);
        cx.migrate_batch(src, env.dst, chosen, count);
        count as u64
    }

    /// Records a requested move's effect for the rest of this hook.
    fn note_move(&mut self, p: TaskId, src: CpuId, dst: CpuId) {
        let a = self.e(self.task_se(p)).avg;
        let est = self.task_util_est_raw(p);
        for (v, x) in [
            (&mut self.adj.load, a.load_avg),
            (&mut self.adj.util, a.util_avg),
            (&mut self.adj.runnable, a.runnable_avg),
            (&mut self.adj.util_est, est),
        ] {
            v[src] -= x as i64;
            v[dst] += x as i64;
        }
        self.adj.nr[src] -= 1;
        self.adj.nr[dst] += 1;
        self.adj.moved.push(p);
        self.adj.touched.extend([src, dst]);
    }

    /// `should_we_balance`: one CPU of the local group balances at each level.
    fn should_we_balance(&self, cx: &Ctx, env: &Env) -> bool {
        if env.idle == CpuIdleType::NewlyIdle {
            return true;
        }
        let g = &self.domains.per_cpu[env.dst][env.level].groups[0];
        let idle = |c: &CpuId| env.cpus.contains(*c) && self.idle(cx, *c);
        // v6.6+: an idle CPU whose whole core is idle first, then any idle CPU.
        let whole_core = |c: &CpuId| cx.machine.topology.smt_siblings(*c).all(|s| self.idle(cx, s));
        let idle_core = if self.eevdf_on() { g.iter().filter(idle).find(whole_core) } else { None };
        let first_idle = idle_core.or_else(|| g.iter().find(idle));
        let balance_cpu = first_idle.or_else(|| g.first()).unwrap_or(env.dst);
        balance_cpu == env.dst
    }

    /// `load_balance`; returns the number of tasks moved (or pushed).
    pub(super) fn load_balance(
        &mut self,
        cx: &mut Ctx,
        dst: CpuId,
        level: usize,
        idle: CpuIdleType,
        cont: &mut bool,
    ) -> u64 {
        let name = self.domains.per_cpu[dst][level].name;
        let mut env = Env {
            dst,
            src: dst,
            idle,
            level,
            cpus: self.domains.per_cpu[dst][level].span.clone(),
            imbalance: 0,
            imbalance_found: 0,
            migration: Migration::Load,
            all_pinned: false,
            why: cx.recording().then(LbWhy::default),
        };
        self.lb.bump(name, 0, 1);
        let mut moved = 0;
        let mut busiest_cpu;
        let mut moved_ids = Vec::new();
        loop {
            if !self.should_we_balance(cx, &env) {
                *cont = false;
                return self.out_balanced(dst, level, idle, false);
            }
            let Some(gi) = self.find_busiest_group(cx, &mut env) else {
                self.record_balanced(cx, &env);
                self.lb.bump(name, 1, 1);
                return self.out_balanced(dst, level, idle, false);
            };
            env.imbalance_found = env.imbalance;
            let group = self.domains.per_cpu[dst][level].groups[gi].clone();
            let Some(busiest) = self.find_busiest_queue(cx, &env, &group) else {
                env.balanced(|| "find_busiest_queue: no CPU of the busiest group qualifies".into());
                self.record_balanced(cx, &env);
                self.lb.bump(name, 1, 1);
                return self.out_balanced(dst, level, idle, false);
            };
            busiest_cpu = Some(busiest);
            env.src = busiest;
            env.all_pinned = true;
            if self.h_nr(busiest) > 1 {
                let before = self.adj.moved.len();
                let n = self.detach_tasks(cx, &mut env, busiest);
                if n == 0 {
                    // The kernel locked the runqueues for this pass all the same
                    // (`busiest->nr_running > 1`); whether its version holds them for a
                    // pass that moves nothing is the kernel's to model.
                    cx.migrate_batch(busiest, env.dst, Vec::new(), 0);
                }
                moved += n;
                if env.all_pinned {
                    env.cpus.remove(busiest);
                    let local = &self.domains.per_cpu[dst][level].groups[0];
                    let retry = env.cpus.iter().any(|c| !local.contains(c));
                    let tail = if retry { "; all pinned: retrying without it" } else { "; all pinned" };
                    self.record_attempt(cx, &mut env, busiest, Vec::new(), tail);
                    if retry {
                        continue;
                    }
                    return self.out_balanced(dst, level, idle, true);
                }
                if env.why.is_some() {
                    moved_ids = self.adj.moved[before..].to_vec();
                }
            }
            break;
        }
        let sd = &mut self.domains.per_cpu[dst][level];
        let mut active = false;
        if moved == 0 {
            if idle != CpuIdleType::NewlyIdle {
                sd.nr_balance_failed += 1;
            }
            self.lb.bump(name, 3, 1);
            // `need_active_balance`: for a misfit task at once, else after repeated
            // failures, push the running task.
            let sd = &mut self.domains.per_cpu[dst][level];
            let need_active = env.migration == Migration::Misfit || sd.nr_balance_failed > sd.cache_nice_tries + 2;
            if need_active {
                if let Some(b) = busiest_cpu {
                    let cur = cx.cpus[b].curr;
                    if cur.is_some_and(|t| !cx.allowed(t, dst)) {
                        let tail = format!("; its running task may not run on CPU {dst}: no active balance");
                        self.record_attempt(cx, &mut env, b, Vec::new(), &tail);
                        return self.out_balanced(dst, level, idle, true);
                    }
                    if cur.is_some() && !self.active_pending.contains(&b) {
                        self.active_pending.push(b);
                        cx.active_balance(b, dst);
                        self.lb.bump(name, 4, 1);
                        active = true;
                        let sd = &mut self.domains.per_cpu[dst][level];
                        sd.nr_balance_failed = sd.cache_nice_tries + 1;
                    }
                }
            }
        } else {
            sd.nr_balance_failed = 0;
            self.lb.bump(name, 2, moved);
        }
        let misfit = env.migration == Migration::Misfit;
        self.counters.misfit_moved += u64::from(misfit && (moved > 0 || active));
        if let (Some(b), true) = (busiest_cpu, env.why.is_some()) {
            let tail = match (moved, active) {
                (0, true) => format!("; nothing detached: active balance pushes CPU {b}'s running task"),
                (0, false) => "; nothing moved".to_string(),
                _ => String::new(),
            };
            self.record_attempt(cx, &mut env, b, moved_ids, &tail);
        }
        // "if (likely(!active_balance) || need_active_balance(&env))".
        let sd = &mut self.domains.per_cpu[dst][level];
        if !active || misfit || sd.nr_balance_failed > sd.cache_nice_tries + 2 {
            sd.balance_interval = sd.min_interval;
        } else if sd.balance_interval < sd.max_interval {
            sd.balance_interval *= 2;
        }
        moved + u64::from(active)
    }

    /// The `out_balanced` / `out_all_pinned` / `out_one_pinned` tails of `load_balance`.
    fn out_balanced(&mut self, dst: CpuId, level: usize, idle: CpuIdleType, all_pinned: bool) -> u64 {
        let sd = &mut self.domains.per_cpu[dst][level];
        sd.nr_balance_failed = 0;
        if idle == CpuIdleType::NewlyIdle {
            return 0;
        }
        if (all_pinned && sd.balance_interval < 512) || sd.balance_interval < sd.max_interval {
            sd.balance_interval *= 2;
        }
        0
    }

    /// `get_sd_balance_interval`, jiffies.
    fn sd_balance_interval(&self, sd: &Domain, busy: bool) -> u64 {
        let ms = sd.balance_interval * if busy { sd.busy_factor } else { 1 };
        let mut j = (ms * 1_000_000).div_ceil(self.jiffy);
        // v5.x takes one jiffy off a busy interval to de-synchronise levels; v4.9 does not.
        if busy && self.t.version != super::Version::V4_9 {
            j = j.saturating_sub(1);
        }
        j.clamp(1, self.max_balance_interval())
    }

    /// `max_load_balance_interval`: HZ × CPUs / 10 jiffies.
    fn max_balance_interval(&self) -> u64 {
        (self.hz * self.nr_cpus as u64 / 10).max(1)
    }

    /// `rebalance_domains` for `cpu`.
    pub(super) fn rebalance_domains(&mut self, cx: &mut Ctx, cpu: CpuId, idle: CpuIdleType) {
        let j = cx.now.0 / self.jiffy;
        let mut busy = idle == CpuIdleType::Busy;
        let mut next = j + 60 * self.hz;
        let mut cont = true;
        let (mut need_decay, mut max_cost) = (false, 0);
        for level in 0..self.domains.per_cpu[cpu].len() {
            self.decay_newidle_cost(cpu, level, j, &mut need_decay);
            max_cost += self.domains.per_cpu[cpu][level].max_newidle_lb_cost;
            if !cont {
                // Balancing stops here, but the decay goes on to every level.
                if need_decay {
                    continue;
                }
                break;
            }
            let sd = &self.domains.per_cpu[cpu][level];
            let mut interval = self.sd_balance_interval(sd, busy);
            if j >= sd.last_balance + interval {
                let it = if busy { CpuIdleType::Busy } else { idle };
                if self.load_balance(cx, cpu, level, it, &mut cont) > 0 {
                    busy = false;
                }
                let sd = &mut self.domains.per_cpu[cpu][level];
                sd.last_balance = j;
                interval = self.sd_balance_interval(&self.domains.per_cpu[cpu][level], busy);
            }
            next = next.min(self.domains.per_cpu[cpu][level].last_balance + interval);
        }
        if need_decay {
            // The runqueue-wide maximum decays too, floored at the migration cost.
            self.cpu[cpu].max_idle_balance_cost = max_cost.max(self.t.migration_cost);
        }
        self.cpu[cpu].next_balance = next;
    }

    /// The periodic part of the tick (`trigger_load_balance`) on a busy CPU.
    pub(super) fn trigger_load_balance(&mut self, cx: &mut Ctx, cpu: CpuId) {
        self.adj.reset(self.nr_cpus);
        self.active_pending.retain(|&c| cx.cpus[c].curr.is_some() && cx.cpus[c].need_resched);
        let j = cx.now.0 / self.jiffy;
        if self.t.version == super::Version::V4_9 {
            self.cpu_load_update_active(cpu, j);
        }
        // "Don't need to rebalance while attached to NULL domain or runqueue CPU is not
        // active" (`trigger_load_balance`).
        if self.on_null_domain(cpu) {
            return;
        }
        if j >= self.cpu[cpu].next_balance {
            self.update_blocked_averages(cpu, cx);
            self.rebalance_domains(cx, cpu, CpuIdleType::Busy);
        }
        self.nohz_balancer_kick(cx, cpu, j);
    }

    /// `nohz_balancer_kick` (v5.15): a busy CPU asks an idle one to balance for all idle
    /// CPUs when it has more than one task or its LLC has more than one busy CPU; with
    /// asymmetric capacities, instead of the LLC test, when it runs a misfit task.
    ///
    /// Cheap checks first, as the kernel's (`time_before(now, nohz.next_balance)` returns
    /// before any mask is read); the LLC is counted over its own CPUs only, stopping at two
    /// busy ones, and `find_new_ilb` stops at the first idle CPU: per tick, no work
    /// proportional to the machine's CPU count unless a kick is due.
    fn nohz_balancer_kick(&mut self, cx: &mut Ctx, cpu: CpuId, j: u64) {
        if j < self.nohz_next_balance {
            self.record_kick(cx, cpu, Kick::NotDue);
            return;
        }
        let n = self.nr_cpus;
        // `nohz.idle_cpus_mask` holds no CPU on the null domain (`nohz_balance_enter_idle`
        // returns for one; `sched_cpu_deactivate` → `nohz_balance_exit_idle`).
        let Some(ilb) = (0..n).find(|&c| c != cpu && cx.idle_cpu(c) && !self.on_null_domain(c)) else {
            self.record_kick(cx, cpu, Kick::NoIdle);
            return;
        };
        let mut kick = cx.cpus[cpu].nr_running >= 2;
        let mut why = Kick::Sent(ilb, false);
        if !kick && self.asym_cpucap == Some(true) && self.t.version != super::Version::V4_9 {
            // `sd_asym_cpucapacity`: a misfit task kicks; otherwise "skip the LLC logic
            // because it's not relevant in that case".
            kick = self.check_misfit_status(cx, cpu);
            why = Kick::Misfit(ilb);
            self.counters.misfit_kicks += u64::from(kick);
        } else if !kick {
            let llc = self.domains.llc_id[cpu];
            let busy = self.domains.llc_cpus[llc].iter().filter(|&&c| !cx.idle_cpu(c)).take(2).count();
            kick = busy > 1;
            why = Kick::Sent(ilb, true);
        }
        if kick {
            self.nohz_next_balance = j + 1;
            // `find_new_ilb`: the first idle CPU.
            cx.kick(ilb);
            self.counters.nohz_kicks += 1;
            self.record_kick(cx, cpu, why);
        }
    }

    /// `_nohz_idle_balance` (`fair.c`, v5.15) on the kicked CPU `ilb`: rebalance every
    /// idle CPU whose balance is due, as that CPU, then itself.
    pub(super) fn nohz_idle_balance(&mut self, cx: &mut Ctx, ilb: CpuId) {
        self.adj.reset(self.nr_cpus);
        let n = self.nr_cpus;
        let j = cx.now.0 / self.jiffy;
        let mut next = j + 60 * self.hz;
        for i in 1..n {
            let c = (ilb + i) % n;
            if self.on_null_domain(c) || !self.idle(cx, c) {
                continue;
            }
            self.update_blocked_averages(c, cx);
            if j >= self.cpu[c].next_balance {
                self.rebalance_domains(cx, c, CpuIdleType::Idle);
            }
            next = next.min(self.cpu[c].next_balance);
        }
        if !self.on_null_domain(ilb) && self.idle(cx, ilb) {
            self.update_blocked_averages(ilb, cx);
            self.rebalance_domains(cx, ilb, CpuIdleType::Idle);
            next = next.min(self.cpu[ilb].next_balance);
        }
        // `update_next_balance`: only an idle CPU seen moves `nohz.next_balance`; with
        // none (the kicked CPU took work meanwhile) it stays at the kick's `jiffies + 1`,
        // so the next busy tick kicks again rather than a minute later.
        if next < j + 60 * self.hz {
            self.nohz_next_balance = next;
        }
    }

    /// `newidle_balance` (v5.15): pull from the busiest queue of each level while the
    /// expected idle time pays for it.
    pub(super) fn newidle_balance(&mut self, cx: &mut Ctx, cpu: CpuId) {
        self.adj.reset(self.nr_cpus);
        if cx.cpus[cpu].ttwu_pending {
            return;
        }
        self.cpu[cpu].idle_stamp = cx.now.0.max(1);
        // `__update_idle_core`: every SMT sibling idle → the LLC has an idle core.
        if self.smt && cx.machine.topology.smt_siblings(cpu).all(|c| c == cpu || cx.idle_cpu(c)) {
            let llc = self.domains.llc_id[cpu];
            self.has_idle_cores[llc] = true;
        }
        // `rd->overload`: set when a runqueue reaches two tasks, rewritten only by a
        // root-domain balance, so it may still be set when nothing is overloaded.
        let overload = self.rd_overload[self.rd_of[cpu]];
        // v5.15 gates on `sysctl_sched_migration_cost`; v6.1+ on the lowest domain's
        // measured newidle cost.
        let gate = if self.eevdf_on() {
            self.domains.per_cpu[cpu].first().map_or(0, |sd| sd.max_newidle_lb_cost)
        } else {
            self.t.migration_cost
        };
        if self.cpu[cpu].avg_idle < gate || !overload {
            return;
        }
        self.update_blocked_averages(cpu, cx);
        let mut curr_cost = 0;
        let mut cont = true;
        for level in 0..self.domains.per_cpu[cpu].len() {
            let sd = &self.domains.per_cpu[cpu][level];
            if self.cpu[cpu].avg_idle < curr_cost + sd.max_newidle_lb_cost {
                break;
            }
            let mut pulled = 0;
            if sd.has(SD_BALANCE_NEWIDLE) {
                let cost = newidle_cost(sd);
                pulled = self.load_balance(cx, cpu, level, CpuIdleType::NewlyIdle, &mut cont);
                self.newidle_raise(cpu, level, cost, cx.now.0 / self.jiffy);
                curr_cost += cost;
            }
            if pulled > 0 {
                self.cpu[cpu].idle_stamp = 0;
                break;
            }
        }
        self.cpu[cpu].max_idle_balance_cost = self.cpu[cpu].max_idle_balance_cost.max(curr_cost);
    }

    /// `ttwu_do_activate`'s `avg_idle` update when a task wakes onto an idle-stamped CPU.
    pub(super) fn update_avg_idle(&mut self, cpu: CpuId, now: u64) {
        let rq = &mut self.cpu[cpu];
        if rq.idle_stamp == 0 {
            return;
        }
        let delta = now.saturating_sub(rq.idle_stamp) as i64;
        let max = 2 * rq.max_idle_balance_cost;
        let avg = rq.avg_idle as i64;
        rq.avg_idle = ((avg + (delta - avg) / 8).max(0) as u64).min(max);
        rq.idle_stamp = 0;
    }
}

/// `update_sd_pick_busiest` (v5.15): is `s` busier than the current pick? A misfit
/// group only when this CPU `can_help` it (bigger than the group's largest CPU, the
/// local group with spare capacity). Not modelled: the closing asymmetric test that
/// keeps a not-overloaded group of bigger CPUs from being drained into a smaller one.
fn pick_busiest(busiest: Option<&GroupStats>, s: &GroupStats, can_help: bool) -> bool {
    if s.sum_h_nr_running == 0 {
        return false;
    }
    if s.group_type == GroupType::MisfitTask && !can_help {
        return false;
    }
    let Some(b) = busiest else { return true };
    if s.group_type > b.group_type {
        return true;
    }
    if s.group_type < b.group_type {
        return false;
    }
    match s.group_type {
        GroupType::Overloaded | GroupType::FullyBusy => s.avg_load > b.avg_load,
        GroupType::HasSpare => {
            if s.idle_cpus > b.idle_cpus {
                return false;
            }
            !(s.idle_cpus == b.idle_cpus && s.sum_nr_running <= b.sum_nr_running)
        }
        // "If we have more than one misfit sg go with the biggest misfit."
        GroupType::MisfitTask => s.group_misfit_task_load >= b.group_misfit_task_load,
    }
}
