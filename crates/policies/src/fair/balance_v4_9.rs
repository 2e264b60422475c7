//! The v4.9 balancer's own half (fair.c v4.9): the tick-smoothed CPU load
//! (`cpu_load_update_active`, `cpu_load[]`, `source_load`, `target_load`,
//! `cpu_avg_load_per_task`) and the group statistics and decisions that read it
//! (`update_sg_lb_stats`, `update_sd_lb_stats`, `update_sd_pick_busiest`,
//! `group_has_capacity`, `group_is_overloaded`, `find_busiest_group`,
//! `calculate_imbalance`, `fix_small_imbalance`). Everything after the busiest group is
//! found — `find_busiest_queue`, `detach_tasks` with its v4.9 branches — is `balance.rs`.
//!
//! The load is `weighted_cpuload`: the root queue's `runnable_load_avg`, so a CPU's
//! sleeping tasks weigh nothing here (in v5.15 their blocked load still counts).

use super::balance::{CpuIdleType, Env, Migration};
use super::domains::SD_PREFER_SIBLING;
use super::pelt::SCHED_CAPACITY_SCALE;
use super::Fair;
use schedlab_machine::CpuSet;
use schedlab_sched_api::Ctx;
use schedlab_sim::CpuId;

/// v4.9 `struct sg_lb_stats` (the fields used; every CPU has capacity 1024).
#[derive(Clone, Debug, Default)]
struct Sg {
    avg_load: u64,
    group_load: u64,
    group_util: u64,
    sum_nr_running: u64,
    sum_weighted_load: u64,
    load_per_task: u64,
    idle_cpus: u64,
    group_weight: u64,
    group_capacity: u64,
    /// `group_no_capacity`, hence `group_overloaded` (v4.9 has `group_other`,
    /// `group_imbalanced` — not modelled — and `group_overloaded`).
    overloaded: bool,
}

/// The `cpu_load[]` history of an idle CPU decays towards 0 for the ticks it missed
/// (`cpu_load_update_nohz`/`decay_load_missed`); the loop stops where the kernel's
/// `degrade_zero_ticks` would have zeroed it.
fn decay_missed(load: u64, idx: usize, missed: u64) -> u64 {
    let mut l = load;
    let scale = 1u64 << idx;
    for _ in 0..missed.min(128) {
        l = (l * (scale - 1)) >> idx;
        if l == 0 {
            break;
        }
    }
    l
}

impl Fair {
    /// `cpu_load_update_active` at the tick: `cpu_load[i] = (old·(2^i − 1) + new) / 2^i`,
    /// rounded up while the load rises; missed (tickless) ticks decay the old value first.
    pub(super) fn cpu_load_update_active(&mut self, cpu: CpuId, j: u64) {
        let new = self.cpu_load(cpu);
        let rq = &mut self.cpu[cpu];
        let missed = j.saturating_sub(rq.cpu_load_jiffy).saturating_sub(1);
        rq.cpu_load_jiffy = j;
        rq.cpu_load[0] = new;
        for i in 1..5 {
            let old = decay_missed(rq.cpu_load[i], i, missed);
            let scale = 1u64 << i;
            let n = if new > old { new + scale - 1 } else { new };
            rq.cpu_load[i] = (old * (scale - 1) + n) >> i;
        }
    }

    /// `rq->cpu_load[idx]` as of jiffy `j`: an idle CPU's history decayed over the ticks
    /// it did not take (a busy CPU may not have taken this jiffy's tick yet: not missed).
    fn cpu_load_hist(&self, cpu: CpuId, idx: usize, j: u64) -> u64 {
        let rq = &self.cpu[cpu];
        let missed = j.saturating_sub(rq.cpu_load_jiffy + 1);
        if idx == 0 || missed == 0 {
            return rq.cpu_load[idx];
        }
        decay_missed(rq.cpu_load[idx], idx, missed)
    }

    /// `source_load(cpu, idx)`: with LB_BIAS the smaller of now and the history.
    fn source_load(&self, cpu: CpuId, idx: usize, j: u64) -> u64 {
        let total = self.cpu_load(cpu);
        if idx == 0 {
            return total;
        }
        self.cpu_load_hist(cpu, idx - 1, j).min(total)
    }

    /// `target_load(cpu, idx)`: the larger of now and the history.
    fn target_load(&self, cpu: CpuId, idx: usize, j: u64) -> u64 {
        let total = self.cpu_load(cpu);
        if idx == 0 {
            return total;
        }
        self.cpu_load_hist(cpu, idx - 1, j).max(total)
    }

    /// `cpu_avg_load_per_task`.
    fn cpu_avg_load_per_task(&self, cpu: CpuId) -> u64 {
        self.cpu_load(cpu).checked_div(self.h_nr(cpu)).unwrap_or(0)
    }

    /// `update_sg_lb_stats` (v4.9).
    fn sg_stats_v4_9(&self, cx: &Ctx, env: &Env, group: &CpuSet, local: bool, idx: usize) -> Sg {
        let pct = self.domains.per_cpu[env.dst][env.level].imbalance_pct;
        let j = cx.now.0 / self.jiffy;
        let mut s = Sg { group_weight: group.count() as u64, ..Sg::default() };
        s.group_capacity = SCHED_CAPACITY_SCALE * s.group_weight;
        self.count(|w| w.groups += 1);
        for c in group.iter().filter(|&c| env.cpus.contains(c)) {
            self.count(|w| w.cpus += 1);
            s.group_load += if local { self.target_load(c, idx, j) } else { self.source_load(c, idx, j) };
            s.group_util += self.cpu_util(c);
            s.sum_nr_running += self.h_nr(c);
            s.sum_weighted_load += self.cpu_load(c);
            let nr = (cx.cpus[c].nr_running as i64 + self.adj.nr[c]).max(0);
            if nr == 0 && self.idle(cx, c) {
                s.idle_cpus += 1;
            }
        }
        s.avg_load = s.group_load * SCHED_CAPACITY_SCALE / s.group_capacity;
        s.load_per_task = s.sum_weighted_load.checked_div(s.sum_nr_running).unwrap_or(0);
        s.overloaded = s.sum_nr_running > s.group_weight && s.group_capacity * 100 < s.group_util * pct;
        s
    }

    /// `group_has_capacity` (v4.9: the count and util tests).
    fn has_capacity_v4_9(&self, env: &Env, s: &Sg) -> bool {
        let pct = self.domains.per_cpu[env.dst][env.level].imbalance_pct;
        s.sum_nr_running < s.group_weight || s.group_capacity * 100 > s.group_util * pct
    }

    /// `update_sd_lb_stats` + `update_sd_pick_busiest` (v4.9): returns the local group,
    /// the busiest (index and stats) and the domain's average load.
    fn sd_stats_v4_9(&mut self, cx: &Ctx, env: &Env) -> (Sg, Option<(usize, Sg)>, u64) {
        let sd = &self.domains.per_cpu[env.dst][env.level];
        let idx = sd.load_idx[match env.idle {
            CpuIdleType::Busy => 0,
            CpuIdleType::Idle => 1,
            CpuIdleType::NewlyIdle => 2,
        }];
        let prefer_sibling = env.level > 0 && self.domains.per_cpu[env.dst][env.level - 1].has(SD_PREFER_SIBLING);
        let groups = sd.groups.clone();
        let local = self.sg_stats_v4_9(cx, env, &groups[0], true, idx);
        let local_has_capacity = self.has_capacity_v4_9(env, &local);
        let (mut total_load, mut total_capacity) = (local.group_load, local.group_capacity);
        let mut overload = groups[0].iter().any(|c| cx.cpus[c].nr_running > 1);
        // `busiest_stat` starts as "other" with zero load: a group must beat that.
        let mut busiest: Option<(usize, Sg)> = None;
        for (gi, g) in groups.iter().enumerate().skip(1) {
            let mut s = self.sg_stats_v4_9(cx, env, g, false, idx);
            overload |= g.iter().any(|c| cx.cpus[c].nr_running > 1);
            if prefer_sibling && local_has_capacity && s.sum_nr_running > local.sum_nr_running + 1 {
                s.overloaded = true;
            }
            let (bo, ba) = busiest.as_ref().map_or((false, 0), |(_, b)| (b.overloaded, b.avg_load));
            if (s.overloaded && !bo) || (s.overloaded == bo && s.avg_load > ba) {
                busiest = Some((gi, s.clone()));
            }
            total_load += s.group_load;
            total_capacity += s.group_capacity;
        }
        if env.level + 1 == self.domains.per_cpu[env.dst].len() {
            self.rd_overload[self.rd_of[env.dst]] = overload;
        }
        let avg = (total_load * SCHED_CAPACITY_SCALE).checked_div(total_capacity).unwrap_or(0);
        (local, busiest, avg)
    }

    /// `find_busiest_group` (v4.9): balanced unless the busiest group is overloaded for a
    /// newly idle CPU with room, or is above both the local group and the domain average
    /// (an idle balancer also needs it overloaded or with two idle CPUs fewer; a busy one
    /// needs it `imbalance_pct` above the local group). Sets `env.imbalance`.
    pub(super) fn find_busiest_group_v4_9(&mut self, cx: &Ctx, env: &mut Env) -> Option<usize> {
        let (local, busiest, avg) = self.sd_stats_v4_9(cx, env);
        let Some((bi, b)) = busiest else {
            env.balanced(|| "no other group carries load (update_sd_pick_busiest picks none)".into());
            return None;
        };
        if let Some(w) = env.why.as_mut() {
            w.busiest_group = Some(bi);
        }
        if b.sum_nr_running == 0 {
            env.balanced(|| "the busiest group runs no fair task".into());
            return None;
        }
        env.migration = Migration::Load;
        let pct = self.domains.per_cpu[env.dst][env.level].imbalance_pct;
        let force = env.idle == CpuIdleType::NewlyIdle && self.has_capacity_v4_9(env, &local) && b.overloaded;
        let (la, ba) = (local.avg_load, b.avg_load);
        if force {
            env.found_because(|| {
                "force_balance: this CPU is newly idle with spare capacity (group_has_capacity) and the busiest group is overloaded (group_no_capacity)".into()
            });
        } else {
            if la >= ba {
                env.balanced(|| format!("the local avg_load {la} ≥ the busiest's {ba}"));
                return None;
            }
            if la >= avg {
                env.balanced(|| format!("the local avg_load {la} ≥ the domain's {avg}"));
                return None;
            }
            if env.idle == CpuIdleType::Idle {
                let (li, bi_) = (local.idle_cpus, b.idle_cpus);
                if !b.overloaded && li <= bi_ + 1 {
                    env.balanced(|| {
                        format!("an idle CPU's pass: the busiest group is not overloaded, and the local group's idle CPUs {li} ≤ the busiest group's {bi_} + 1")
                    });
                    return None;
                }
                let why = if b.overloaded {
                    "the busiest group is overloaded".to_string()
                } else {
                    format!("the local group's idle CPUs {li} > the busiest group's {bi_} + 1")
                };
                env.found_because(|| format!("busiest avg_load {ba} > the local {la} and the domain's {avg}; {why}"));
            } else {
                if 100 * ba <= pct * la {
                    env.balanced(|| format!("busiest avg_load {ba} within imbalance_pct {pct} % of the local {la}"));
                    return None;
                }
                env.found_because(|| {
                    format!("busiest avg_load {ba} > the local {la} by more than imbalance_pct {pct} %, and above the domain's {avg}")
                });
            }
        }
        env.imbalance = self.calculate_imbalance_v4_9(env, local, &b, avg) as i64;
        if env.imbalance <= 0 {
            let lpt = b.load_per_task;
            env.balanced(|| {
                format!("calculate_imbalance: below one average task of the busiest group ({lpt}), and fix_small_imbalance finds moving one would not help")
            });
        }
        (env.imbalance > 0).then_some(bi)
    }

    /// `calculate_imbalance` (v4.9): pull towards the domain average without pushing the
    /// busiest group below it (or, both overloaded, below its capacity); too small to move
    /// one average task → `fix_small_imbalance`.
    fn calculate_imbalance_v4_9(&self, env: &Env, local: Sg, b: &Sg, avg: u64) -> u64 {
        if b.avg_load <= avg || local.avg_load >= avg {
            return self.fix_small_imbalance(env, local, b);
        }
        let mut above_capacity = u64::MAX;
        if b.overloaded && local.overloaded {
            let l = b.sum_nr_running * SCHED_CAPACITY_SCALE;
            if l > b.group_capacity {
                above_capacity = (l - b.group_capacity) * SCHED_CAPACITY_SCALE / b.group_capacity;
            }
        }
        let max_pull = (b.avg_load - avg).min(above_capacity);
        let imb = max_pull.saturating_mul(b.group_capacity).min((avg - local.avg_load) * local.group_capacity)
            / SCHED_CAPACITY_SCALE;
        if imb < b.load_per_task {
            return self.fix_small_imbalance(env, local, b);
        }
        imb
    }

    /// `fix_small_imbalance` (v4.9): move one average task of the busiest group if that
    /// does not just move the imbalance the other way (`imbn` = 2, or 1 when the busiest
    /// group's tasks are heavier), or if it puts more capacity to use; else nothing.
    fn fix_small_imbalance(&self, env: &Env, mut local: Sg, b: &Sg) -> u64 {
        let cap = SCHED_CAPACITY_SCALE;
        let mut imbn = 2;
        if local.sum_nr_running == 0 {
            local.load_per_task = self.cpu_avg_load_per_task(env.dst);
        } else if b.load_per_task > local.load_per_task {
            imbn = 1;
        }
        let scaled = b.load_per_task * cap / b.group_capacity;
        if b.avg_load + scaled >= local.avg_load + scaled * imbn {
            return b.load_per_task;
        }
        let mut capa_now = b.group_capacity * b.load_per_task.min(b.avg_load);
        capa_now += local.group_capacity * local.load_per_task.min(local.avg_load);
        capa_now /= cap;
        let mut capa_move = 0;
        if b.avg_load > scaled {
            capa_move += b.group_capacity * b.load_per_task.min(b.avg_load - scaled);
        }
        let tmp = if b.avg_load * b.group_capacity < b.load_per_task * cap {
            b.avg_load * b.group_capacity / local.group_capacity
        } else {
            b.load_per_task * cap / local.group_capacity
        };
        capa_move += local.group_capacity * local.load_per_task.min(local.avg_load + tmp);
        capa_move /= cap;
        if capa_move > capa_now {
            b.load_per_task
        } else {
            0
        }
    }
}
