//! Wakeup and fork placement (fair.c v5.15: `select_task_rq_fair`, `record_wakee`,
//! `wake_wide`, `wake_affine`, `wake_affine_idle`, `wake_affine_weight`,
//! `select_idle_sibling`, `select_idle_cpu`, `select_idle_core`, `select_idle_smt`,
//! `find_idlest_cpu`, `find_idlest_group`, `find_idlest_group_cpu`).

use super::domains::{Domain, SD_BALANCE_EXEC, SD_BALANCE_FORK, SD_BALANCE_WAKE, SD_NUMA, SD_WAKE_AFFINE};
use super::pelt::SCHED_CAPACITY_SCALE;
use super::select_why::Placed;
use super::Fair;
use schedlab_machine::CpuSet;
use schedlab_sched_api::{wf, Ctx, SelectKind};
use schedlab_sim::{CpuId, TaskId};

/// `enum group_type` (v5.15, the types this model produces: no asym packing or
/// imbalanced groups; `group_misfit_task` only with asymmetric capacities).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum GroupType {
    HasSpare = 0,
    FullyBusy = 1,
    MisfitTask = 2,
    Overloaded = 5,
}

/// `struct sg_lb_stats` (the fields used).
#[derive(Clone, Debug)]
pub struct GroupStats {
    pub avg_load: u64,
    pub group_load: u64,
    pub group_util: u64,
    pub group_runnable: u64,
    pub sum_nr_running: u64,
    pub sum_h_nr_running: u64,
    pub idle_cpus: u64,
    pub group_weight: u64,
    pub group_capacity: u64,
    pub group_type: GroupType,
    /// A CPU of the group runs more than one task (`SG_OVERLOAD` in `sg_status`).
    pub overload: bool,
    /// A CPU of the group is overutilized (`SG_OVERUTILIZED`; v6.18 `sg_overutilized`),
    /// gathered only while EAS is on.
    pub overutilized: bool,
    /// `group_misfit_task_load`: the largest `misfit_task_load` of the group's CPUs
    /// (balancer statistics on an asymmetric-capacity domain only).
    pub group_misfit_task_load: u64,
    /// `sg->sgc->max_capacity`, filled where misfit balancing reads it.
    pub max_capacity: u64,
}

impl GroupStats {
    /// Empty statistics of a group of `weight` CPUs of capacity 1024.
    pub fn new(weight: usize) -> GroupStats {
        GroupStats {
            avg_load: 0,
            group_load: 0,
            group_util: 0,
            group_runnable: 0,
            sum_nr_running: 0,
            sum_h_nr_running: 0,
            idle_cpus: 0,
            group_weight: weight as u64,
            group_capacity: SCHED_CAPACITY_SCALE * weight as u64,
            group_type: GroupType::HasSpare,
            overload: false,
            overutilized: false,
            group_misfit_task_load: 0,
            max_capacity: 0,
        }
    }
}

/// `group_has_capacity` (v5.15).
pub fn group_has_capacity(pct: u64, s: &GroupStats) -> bool {
    if s.sum_nr_running < s.group_weight {
        return true;
    }
    if s.group_capacity * pct < s.group_runnable * 100 {
        return false;
    }
    s.group_capacity * 100 > s.group_util * pct
}

/// `group_is_overloaded` (v5.15).
pub fn group_is_overloaded(pct: u64, s: &GroupStats) -> bool {
    if s.sum_nr_running <= s.group_weight {
        return false;
    }
    if s.group_capacity * 100 < s.group_util * pct {
        return true;
    }
    s.group_capacity * pct < s.group_runnable * 100
}

/// `group_classify` (v5.15, v6.18; no asym packing or imbalanced groups on this model):
/// a misfit task ranks after overloaded, before fully busy.
pub fn group_classify(pct: u64, s: &GroupStats) -> GroupType {
    if group_is_overloaded(pct, s) {
        GroupType::Overloaded
    } else if s.group_misfit_task_load > 0 {
        GroupType::MisfitTask
    } else if !group_has_capacity(pct, s) {
        GroupType::FullyBusy
    } else {
        GroupType::HasSpare
    }
}

impl Fair {
    /// `available_idle_cpu`, seen through the balancer's pending moves.
    pub(super) fn idle(&self, cx: &Ctx, cpu: CpuId) -> bool {
        // Reads another CPU's runqueue: one CPU scanned for the cost model.
        self.count(|w| w.read_cpu(cx.machine, cx.this_cpu, cpu));
        cx.idle_cpu(cpu) && self.adj.nr[cpu] == 0
    }

    /// `sched_idle_cpu` (`sched_idle_rq`): only idle tasks are queued — `SCHED_IDLE` ones
    /// and, since v5.15, those of idle groups (`idle_h_nr_running` counts both).
    pub(super) fn sched_idle_cpu(&self, cpu: CpuId) -> bool {
        let rq = self.rq(self.root(cpu));
        rq.h_nr_running > 0 && rq.h_nr_running == rq.idle_h_nr
    }

    fn idle_or_sched_idle(&self, cx: &Ctx, cpu: CpuId) -> bool {
        self.idle(cx, cpu) || self.sched_idle_cpu(cpu)
    }

    fn share_cache(&self, a: CpuId, b: CpuId) -> bool {
        self.domains.llc_id[a] == self.domains.llc_id[b]
    }

    fn jiffies(&self, cx: &Ctx) -> u64 {
        cx.now.0 / self.jiffy
    }

    /// `record_wakee`, in the waker's context.
    fn record_wakee(&mut self, cx: &Ctx, waker: TaskId, p: TaskId) {
        let j = self.jiffies(cx);
        let w = &mut self.tf[waker];
        if j > w.wakee_flip_decay_ts + self.hz {
            w.wakee_flips >>= 1;
            w.wakee_flip_decay_ts = j;
        }
        if w.last_wakee != Some(p as u32) {
            w.last_wakee = Some(p as u32);
            w.wakee_flips = w.wakee_flips.saturating_add(1);
        }
    }

    /// `wake_wide`: a waker switching among many wakees should not pull them to itself.
    fn wake_wide(&self, waker: TaskId, p: TaskId, this: CpuId) -> bool {
        let (mut master, mut slave) = (u64::from(self.tf[waker].wakee_flips), u64::from(self.tf[p].wakee_flips));
        let factor = self.domains.llc_size[this] as u64;
        if master < slave {
            std::mem::swap(&mut master, &mut slave);
        }
        !(slave < factor || master < slave * factor)
    }

    /// `wake_affine_idle`; with the rule that chose, for decision records. A sync wakeup
    /// pulls the wakee when the waker is its CPU's only task; v6.18 does not count
    /// delayed-dequeue tasks there (`fair.c:wake_affine_idle`, `cfs_h_nr_delayed`:
    /// "sched/fair: Fixup wake_up_sync() vs DELAYED_DEQUEUE", after v6.12), earlier
    /// versions count every task on the runqueue.
    pub(super) fn wake_affine_idle(
        &self,
        cx: &Ctx,
        this: CpuId,
        prev: CpuId,
        sync: bool,
    ) -> Option<(CpuId, &'static str)> {
        if self.idle(cx, this) && self.share_cache(this, prev) {
            return Some(if self.idle(cx, prev) {
                (prev, "wake_affine_idle: the waking CPU is idle and shares the cache, and so is the previous CPU")
            } else {
                (this, "wake_affine_idle: the waking CPU is idle and shares the cache with the previous one")
            });
        }
        if sync && cx.cpus[this].nr_running.saturating_sub(self.nr_delayed(this)) == 1 {
            return Some((this, "wake_affine_idle: a sync wakeup from the waking CPU's only task"));
        }
        if self.idle(cx, prev) {
            return Some((prev, "wake_affine_idle: the previous CPU is idle"));
        }
        None
    }

    /// `cfs_h_nr_delayed` (v6.18): tasks on `cpu` kept queued by delayed dequeue; 0 before
    /// v6.18, whose `wake_affine_idle` does not subtract them.
    fn nr_delayed(&self, cpu: CpuId) -> usize {
        if self.t.version < super::Version::V6_18 {
            return 0;
        }
        let rq = self.rq(self.root(cpu));
        (rq.h_nr_running - rq.h_nr_runnable) as usize
    }

    /// `wake_affine_weight`: move to the waker's CPU if its load, with the wakee, would
    /// stay below the previous CPU's (biased by half the domain's imbalance_pct: WA_BIAS).
    fn wake_affine_weight(
        &self,
        cx: &Ctx,
        sd: &Domain,
        p: TaskId,
        this: CpuId,
        prev: CpuId,
        sync: bool,
    ) -> Option<CpuId> {
        let mut this_eff = self.cpu_load(this) as i64;
        if sync {
            if let Some(cur) = cx.cpus[this].curr {
                let cl = self.task_h_load(cur) as i64;
                if cl > this_eff {
                    return Some(this);
                }
                this_eff -= cl;
            }
        }
        let tl = self.task_h_load(p) as i64;
        let cap = SCHED_CAPACITY_SCALE as i64;
        // WA_BIAS: the previous CPU is favoured by half the domain's imbalance_pct.
        let (this_bias, prev_bias) =
            if self.t.feat.wa_bias { (100, 100 + (sd.imbalance_pct as i64 - 100) / 2) } else { (1, 1) };
        let this_eff = (this_eff + tl) * this_bias * cap;
        let mut prev_eff = (self.cpu_load(prev) as i64 - tl) * prev_bias * cap;
        if sync {
            prev_eff += 1;
        }
        (this_eff < prev_eff).then_some(this)
    }

    /// `wake_affine`: the waker's CPU or the previous one, and the rule that chose.
    fn wake_affine(
        &self,
        cx: &Ctx,
        sd: &Domain,
        p: TaskId,
        this: CpuId,
        prev: CpuId,
        sync: bool,
    ) -> (CpuId, &'static str) {
        if self.t.version == super::Version::V4_9 {
            let affine = self.wake_affine_v4_9(cx, sd, p, this, prev, sync);
            return if affine {
                (this, "wake_affine (v4.9): pulled")
            } else {
                (prev, "wake_affine (v4.9): not pulled")
            };
        }
        let mut target = None;
        if self.t.feat.wa_idle {
            target = self.wake_affine_idle(cx, this, prev, sync);
        }
        if target.is_none() && self.t.feat.wa_weight {
            target = self.wake_affine_weight(cx, sd, p, this, prev, sync).map(|c| (c, "wake_affine_weight: pulled"));
        }
        target.unwrap_or((prev, "wake_affine_weight: not pulled"))
    }

    /// `select_task_rq_fair`.
    pub(super) fn select_task_rq_fair(
        &mut self,
        cx: &mut Ctx,
        p: TaskId,
        prev: CpuId,
        kind: SelectKind,
        wake_flags: u32,
    ) -> CpuId {
        let cpu = cx.this_cpu;
        let waker = cx.cpus[cpu].curr.filter(|&c| c != p && self.tf.get(c).is_some_and(|t| t.alive));
        let sync = wake_flags & wf::SYNC != 0;
        let sd_flag = match kind {
            SelectKind::Wake => SD_BALANCE_WAKE,
            SelectKind::Fork => SD_BALANCE_FORK,
            SelectKind::Exec => SD_BALANCE_EXEC,
        };
        let mut new_cpu = prev;
        let mut want_affine = false;
        let mut how = Placed { wide: false, affine: None, sis: None, idlest: None };
        if kind == SelectKind::Wake {
            if let Some(w) = waker {
                self.record_wakee(cx, w, p);
            }
            if let Some(c) = crate::placement::wake_on_current_cpu(cx, p, kind, wake_flags) {
                crate::placement::record_current_cpu(cx, p, prev, c);
                return c;
            }
            // EAS: on a wakeup, after record_wakee and WF_CURRENT_CPU, before wake_wide
            // (v6.18 `!is_rd_overutilized`, v5.15 `sched_energy_enabled()`).
            if let Some(c) = self.try_feec(cx, p, prev) {
                return c;
            }
            if let Some(w) = waker {
                let wide = self.wake_wide(w, p, cpu);
                self.counters.wake_wide += u64::from(wide);
                how.wide = wide;
                want_affine = !wide && cx.allowed(p, cpu);
            } else {
                want_affine = cx.allowed(p, cpu);
            }
        }
        let mut sd: Option<usize> = None;
        let doms = &self.domains.per_cpu[cpu];
        for (lvl, tmp) in doms.iter().enumerate() {
            if want_affine && tmp.has(SD_WAKE_AFFINE) && tmp.span.contains(prev) {
                if cpu != prev {
                    let (c, rule) = self.wake_affine(cx, tmp, p, cpu, prev, sync);
                    new_cpu = c;
                    how.affine = Some((lvl, rule));
                    self.counters.wake_affine += u64::from(new_cpu == cpu);
                }
                sd = None;
                break;
            }
            if tmp.flags & sd_flag != 0 {
                sd = Some(lvl);
            } else if !want_affine {
                break;
            }
        }
        let chosen = if let Some(level) = sd {
            how.idlest = Some(level);
            self.find_idlest_cpu(cx, p, cpu, prev, level, sd_flag)
        } else if kind == SelectKind::Wake {
            let (c, rule) = self.select_idle_sibling(cx, p, prev, new_cpu);
            how.sis = Some((new_cpu, rule));
            c
        } else {
            new_cpu
        };
        if cx.recording() {
            self.record_place(cx, p, prev, chosen, kind, &how);
        }
        chosen
    }

    /// `select_idle_sibling`: an idle CPU sharing the cache with `target`, or `target`.
    fn select_idle_sibling(&mut self, cx: &Ctx, p: TaskId, prev: CpuId, target: CpuId) -> (CpuId, &'static str) {
        if self.t.version == super::Version::V4_9 {
            return (self.select_idle_sibling_v4_9(cx, p, prev, target), "select_idle_sibling (v4.9)");
        }
        // On asymmetric capacities a candidate must also fit the task (`asym_fits_cpu`).
        let asym = self.asym_cpucap(cx);
        let fits = |f: &Fair, c: CpuId| !asym || f.task_fits_cpu(cx, p, c);
        if self.idle_or_sched_idle(cx, target) && fits(self, target) {
            return (target, "the target is idle");
        }
        if prev != target && self.share_cache(prev, target) && self.idle_or_sched_idle(cx, prev) && fits(self, prev) {
            return (prev, "the previous CPU is idle and shares the target's cache");
        }
        let recent = self.tf[p].recent_used_cpu.replace(prev as u32).map(|c| c as usize);
        if let Some(r) = recent {
            if r != prev
                && r != target
                && self.share_cache(r, target)
                && self.idle_or_sched_idle(cx, r)
                && cx.allowed(p, r)
                && fits(self, r)
            {
                return (r, "recent_used_cpu is idle and shares the target's cache");
            }
        }
        if asym {
            return match self.select_idle_capacity(cx, p, target) {
                Some(c) => (c, "select_idle_capacity: an idle CPU the task fits, else the biggest idle one"),
                None => (target, "select_idle_capacity: no idle CPU: the target"),
            };
        }
        let Some(llc) = self.domains.llc_level(target) else { return (target, "no cache domain: the target") };
        let mut has_idle_core = false;
        if self.smt {
            has_idle_core = self.has_idle_cores[self.domains.llc_id[target]];
            if !has_idle_core && self.share_cache(prev, target) {
                // `select_idle_smt(p, prev)`.
                let found = cx
                    .machine
                    .topology
                    .smt_siblings(prev)
                    .find(|&c| c != prev && cx.allowed(p, c) && self.idle_or_sched_idle(cx, c));
                if let Some(c) = found {
                    return (c, "select_idle_smt: an idle SMT sibling of the previous CPU");
                }
            }
        }
        let _ = llc;
        if let Some(c) = self.select_idle_cpu(cx, p, has_idle_core, target) {
            let rule = if has_idle_core {
                "select_idle_cpu: an idle core of the target's cache domain"
            } else {
                "select_idle_cpu: an idle CPU of the target's cache domain (scan limited by SIS_UTIL)"
            };
            return (c, rule);
        }
        (target, "no idle CPU found in the target's cache domain: the target")
    }

    /// `select_idle_cpu`: scan the LLC from `target + 1` for an idle core (when one is
    /// known to exist) or an idle CPU, at most `nr_idle_scan + 1` CPUs deep (`SIS_UTIL`).
    fn select_idle_cpu(&mut self, cx: &Ctx, p: TaskId, has_idle_core: bool, target: CpuId) -> Option<CpuId> {
        let llc = self.domains.llc_id[target];
        let mut nr = usize::MAX;
        if self.t.feat.sis_util && !has_idle_core {
            nr = self.nr_idle_scan[llc] + 1;
            if nr == 1 {
                return None;
            }
        }
        // `for_each_cpu_wrap(cpu, llc span, target + 1)`.
        let cpus = &self.domains.llc_cpus[llc];
        let start = cpus.partition_point(|&c| c <= target);
        // Scan order from `target + 1`, wrapping: CPUs above `target` first.
        let key = |c: CpuId| (c <= target, c);
        let mut fallback = None;
        for k in 0..cpus.len() {
            let c = cpus[(start + k) % cpus.len()];
            if !cx.allowed(p, c) {
                continue;
            }
            // `cpumask_andnot(cpus, cpus, cpu_smt_mask(core))`: a core is examined once,
            // at its first allowed CPU in scan order; its later siblings are skipped.
            // Decided from the siblings, without a scratch mask.
            if has_idle_core && cx.machine.topology.smt_siblings(c).any(|s| key(s) < key(c) && cx.allowed(p, s)) {
                continue;
            }
            if has_idle_core {
                // `select_idle_core`.
                let mut idle = true;
                for s in cx.machine.topology.smt_siblings(c) {
                    if !self.idle(cx, s) {
                        idle = false;
                        if fallback.is_none() && self.sched_idle_cpu(s) && cx.allowed(p, s) {
                            fallback = Some(s);
                        }
                        break;
                    }
                    if fallback.is_none() && cx.allowed(p, s) {
                        fallback = Some(s);
                    }
                }
                if idle {
                    return Some(c);
                }
            } else {
                nr -= 1;
                if nr == 0 {
                    return None;
                }
                if self.idle_or_sched_idle(cx, c) {
                    return Some(c);
                }
            }
        }
        if has_idle_core {
            self.has_idle_cores[llc] = false;
        }
        fallback
    }

    /// Statistics of a group for placing `p` (`update_sg_wakeup_stats`: `p` itself is not
    /// counted where it is).
    fn wakeup_stats(&self, cx: &Ctx, group: &CpuSet, p: TaskId, pct: u64) -> GroupStats {
        let mut s = GroupStats::new(group.count());
        let here = cx.task(p).cpu;
        let pe = self.e(self.task_se(p));
        let counted = pe.on_rq || pe.avg.last_update_time != 0;
        self.count(|w| w.groups += 1);
        for c in group.iter() {
            self.count(|w| w.read_cpu(cx.machine, cx.this_cpu, c));
            let mine = c == here && counted;
            let mut load = self.cpu_load(c);
            let util = if mine { self.cpu_util_without(cx, c, p) } else { self.cpu_util(c) };
            let mut runnable = self.cpu_runnable(c);
            let mut nr = (cx.cpus[c].nr_running as i64 + self.adj.nr[c]).max(0) as u64;
            let mut h = (self.h_nr_running(c) as i64 + self.adj.nr[c]).max(0) as u64;
            if mine {
                let a = &pe.avg;
                load = load.saturating_sub(a.load_avg);
                runnable = runnable.saturating_sub(a.runnable_avg);
                if pe.on_rq {
                    nr = nr.saturating_sub(1);
                    h = h.saturating_sub(1);
                }
            }
            s.group_load += load;
            s.group_util += util;
            s.group_runnable += runnable;
            s.sum_nr_running += nr;
            s.sum_h_nr_running += h;
            if nr == 0 && (self.idle(cx, c) || mine) {
                s.idle_cpus += 1;
            }
        }
        s.group_type = group_classify(pct, &s);
        if matches!(s.group_type, GroupType::FullyBusy | GroupType::Overloaded) {
            s.avg_load = s.group_load * SCHED_CAPACITY_SCALE / s.group_capacity;
        }
        s
    }

    /// `find_idlest_group` (v5.15): the least busy group of `sd` other than the local one,
    /// or `None` when the local group is good enough.
    fn find_idlest_group(&self, cx: &Ctx, sd: &Domain, p: TaskId, this: CpuId) -> Option<usize> {
        let aff = &cx.task(p).affinity;
        let mut idlest: Option<(usize, GroupStats)> = None;
        let mut local: Option<GroupStats> = None;
        for (gi, g) in sd.groups.iter().enumerate() {
            if !g.intersects(aff) {
                continue;
            }
            let s = self.wakeup_stats(cx, g, p, sd.imbalance_pct);
            if g.contains(this) {
                local = Some(s);
                continue;
            }
            let better = match &idlest {
                None => true,
                Some((_, i)) => update_pick_idlest(i, &s),
            };
            if better {
                idlest = Some((gi, s));
            }
        }
        let (gi, idl) = idlest?;
        let Some(loc) = local else { return Some(gi) };
        if loc.group_type < idl.group_type {
            return None;
        }
        if loc.group_type > idl.group_type {
            return Some(gi);
        }
        match loc.group_type {
            GroupType::Overloaded | GroupType::FullyBusy => {
                let imbalance = SCHED_CAPACITY_SCALE * (sd.imbalance_pct - 100) / 100;
                if sd.has(SD_NUMA) {
                    if idl.avg_load + imbalance >= loc.avg_load {
                        return None;
                    }
                } else if idl.avg_load >= loc.avg_load + imbalance {
                    return None;
                }
                if 100 * loc.avg_load <= sd.imbalance_pct * idl.avg_load {
                    return None;
                }
            }
            GroupType::HasSpare => {
                // v5.15 `allow_numa_imbalance(local running, sd weight)`: stay on the node
                // while it runs fewer than a quarter of the domain's CPUs.
                if sd.has(SD_NUMA) && loc.sum_nr_running < (sd.span_weight as u64 >> 2) {
                    return None;
                }
                if loc.idle_cpus >= idl.idle_cpus {
                    return None;
                }
            }
            // `find_idlest_group`: the group of the larger capacity (the wakeup statistics
            // here never mark a misfit task, `update_sg_wakeup_stats`' asym test unmodelled).
            GroupType::MisfitTask => {
                if loc.max_capacity >= idl.max_capacity {
                    return None;
                }
            }
        }
        Some(gi)
    }

    /// `find_idlest_group_cpu`: the most recently idled idle CPU, else the least loaded.
    fn find_idlest_group_cpu(&self, cx: &Ctx, group: &CpuSet, p: TaskId, this: CpuId) -> CpuId {
        if group.count() == 1 {
            return group.first().unwrap_or(this);
        }
        let mut min_load = u64::MAX;
        let mut least = this;
        let mut latest = 0;
        let mut shallowest = None;
        for c in group.iter().filter(|&c| cx.allowed(p, c)) {
            self.count(|w| w.read_cpu(cx.machine, cx.this_cpu, c));
            if self.sched_idle_cpu(c) {
                return c;
            }
            if self.idle(cx, c) {
                if self.cpu[c].idle_stamp > latest {
                    latest = self.cpu[c].idle_stamp;
                    shallowest = Some(c);
                }
            } else if shallowest.is_none() {
                let l = self.cpu_load(c);
                if l < min_load {
                    min_load = l;
                    least = c;
                }
            }
        }
        shallowest.unwrap_or(least)
    }

    /// `find_idlest_cpu`: descend from domain level `level` towards the idlest CPU.
    fn find_idlest_cpu(&self, cx: &Ctx, p: TaskId, this: CpuId, prev: CpuId, level: usize, sd_flag: u32) -> CpuId {
        let aff = &cx.task(p).affinity;
        let top = &self.domains.per_cpu[this][level];
        if !top.span.intersects(aff) {
            return prev;
        }
        let mut cpu = this;
        let mut new_cpu = this;
        let mut lvl = Some(level);
        while let Some(l) = lvl {
            let sd = &self.domains.per_cpu[cpu][l];
            if sd.flags & sd_flag == 0 {
                lvl = l.checked_sub(1);
                continue;
            }
            let Some(gi) = self.find_idlest_group(cx, sd, p, cpu) else {
                lvl = l.checked_sub(1);
                continue;
            };
            new_cpu = self.find_idlest_group_cpu(cx, &sd.groups[gi], p, cpu);
            if new_cpu == cpu {
                lvl = l.checked_sub(1);
                continue;
            }
            // Restart below this level around the new CPU.
            let weight = sd.span_weight;
            cpu = new_cpu;
            lvl = self.domains.per_cpu[cpu].iter().rposition(|d| d.span_weight < weight && d.flags & sd_flag != 0);
        }
        new_cpu
    }
}

/// `update_pick_idlest` (v5.15): is `s` a better idlest group than `idlest`?
fn update_pick_idlest(idlest: &GroupStats, s: &GroupStats) -> bool {
    if s.group_type < idlest.group_type {
        return true;
    }
    if s.group_type > idlest.group_type {
        return false;
    }
    match s.group_type {
        GroupType::Overloaded | GroupType::FullyBusy => s.avg_load < idlest.avg_load,
        GroupType::HasSpare => {
            if idlest.idle_cpus > s.idle_cpus {
                return false;
            }
            !(idlest.idle_cpus == s.idle_cpus && idlest.group_util <= s.group_util)
        }
        GroupType::MisfitTask => idlest.max_capacity < s.max_capacity,
    }
}
