//! The 2.6 load balancer over sched domains: the domain parameters of `include/linux/topology.h`
//! (`SD_SIBLING_INIT`, `SD_CPU_INIT`, `SD_NODE_INIT`, 2.6.13–2.6.20) on the levels the fair
//! class builds from the machine; the classic task-count balancer of 2.6.11/2.6.12
//! (`rebalance_tick`, `load_balance`, `load_balance_newidle`, `idle_balance`,
//! `find_busiest_group`, `find_busiest_queue`, `move_tasks`, `can_migrate_task`,
//! `active_load_balance`), and the placement of `try_to_wake_up` (`wake_affine`,
//! `SD_WAKE_BALANCE`, `wake_idle`) and `sched_fork` (`sched_balance_self`,
//! `find_idlest_group`, `find_idlest_cpu`).

use super::params::SCHED_LOAD_SCALE;
use super::O1;
use crate::fair::domains::Domains;
use schedlab_machine::{CpuSet, Machine, Topology};
use schedlab_sched_api::Ctx;
use schedlab_sim::{CpuId, TaskId};

pub const SD_LOAD_BALANCE: u32 = 0x01;
pub const SD_BALANCE_NEWIDLE: u32 = 0x02;
pub const SD_BALANCE_EXEC: u32 = 0x04;
pub const SD_BALANCE_FORK: u32 = 0x08;
pub const SD_WAKE_IDLE: u32 = 0x10;
pub const SD_WAKE_AFFINE: u32 = 0x20;
pub const SD_WAKE_BALANCE: u32 = 0x40;
pub const SD_SHARE_CPUPOWER: u32 = 0x80;

/// `enum idle_type` (2.6.11).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(clippy::enum_variant_names)] // The kernel's names: SCHED_IDLE, NOT_IDLE, NEWLY_IDLE.
pub enum IdleType {
    /// `SCHED_IDLE`: the tick of an idle CPU.
    SchedIdle,
    NotIdle,
    NewlyIdle,
}

/// One CPU's `struct sched_domain` at one level, with its balancing state.
#[derive(Clone, Debug)]
pub struct Dom {
    pub name: &'static str,
    pub span: CpuSet,
    /// `groups[0]` holds this CPU.
    pub groups: Vec<CpuSet>,
    /// `cpu_power` of each group.
    pub power: Vec<u64>,
    pub flags: u32,
    /// ms.
    pub min_interval: u64,
    pub max_interval: u64,
    pub busy_factor: u64,
    pub imbalance_pct: u64,
    /// ns.
    pub cache_hot_time: u64,
    pub cache_nice_tries: u32,
    /// `busy_idx`, `idle_idx`, `newidle_idx`, `wake_idx`, `forkexec_idx`.
    pub idx: [u8; 5],
    /// ms, between `min_interval` and `max_interval`.
    pub balance_interval: u64,
    /// jiffies.
    pub last_balance: u64,
    pub nr_balance_failed: u32,
}

impl Dom {
    pub fn has(&self, f: u32) -> bool {
        self.flags & f != 0
    }
}

/// Builds every CPU's domains: the fair class's levels (SMT, MC, DIE, NUMA; degenerate ones
/// removed) with the 2.6 parameters of the matching `SD_*_INIT`.
pub fn build(m: &Machine, cache_hot_ns: u64) -> Vec<Vec<Dom>> {
    let base = Domains::build(m);
    let topo = &m.topology;
    let mut out = Vec::with_capacity(m.nr_cpus());
    let mut powers = Powers::default();
    for levels in &base.per_cpu {
        let mut doms = Vec::new();
        for d in levels {
            let (min, max, bf, pct, hot, tries, idx, flags) = match d.name {
                "SMT" => (
                    1,
                    2,
                    8,
                    110,
                    0,
                    0,
                    [0, 0, 1, 0, 0],
                    SD_LOAD_BALANCE
                        | SD_BALANCE_NEWIDLE
                        | SD_BALANCE_EXEC
                        | SD_WAKE_AFFINE
                        | SD_WAKE_IDLE
                        | SD_SHARE_CPUPOWER,
                ),
                "NUMA" => (
                    8,
                    32,
                    32,
                    125,
                    10_000_000,
                    1,
                    [2, 1, 2, 1, 1],
                    SD_LOAD_BALANCE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_BALANCE,
                ),
                _ => (
                    1,
                    4,
                    64,
                    125,
                    cache_hot_ns,
                    1,
                    [2, 1, 2, 1, 1],
                    SD_LOAD_BALANCE | SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_WAKE_AFFINE,
                ),
            };
            let power = d.groups.iter().map(|g| powers.of(topo, d.name == "SMT", g)).collect();
            doms.push(Dom {
                name: d.name,
                span: d.span.clone(),
                groups: d.groups.to_vec(),
                power,
                flags,
                min_interval: min,
                max_interval: max,
                busy_factor: bf,
                imbalance_pct: pct,
                cache_hot_time: hot,
                cache_nice_tries: tries,
                idx,
                balance_interval: min,
                last_balance: 0,
                nr_balance_failed: 0,
            });
        }
        out.push(doms);
    }
    out
}

/// `cpu_power` of each distinct group, computed once: every CPU of a domain's span holds
/// the same groups (shared masks, as `Domains::build` interns them), so per-CPU
/// recomputation was quadratic in the CPU count (27 s of set-up at 4096 CPUs).
#[derive(Default)]
struct Powers(std::collections::BTreeMap<PowerKey, Vec<(CpuSet, u64)>>);

/// A group's lowest CPU and weight, and whether it is a group of the SMT level.
type PowerKey = (Option<CpuId>, usize, bool);

impl Powers {
    fn of(&mut self, topo: &Topology, smt: bool, g: &CpuSet) -> u64 {
        let same = self.0.entry((g.first(), g.count(), smt)).or_default();
        if let Some((_, p)) = same.iter().find(|(x, _)| x == g) {
            return *p;
        }
        let p = group_power(topo, smt, g);
        same.push((g.clone(), p));
        p
    }
}

/// `cpu_power` of group `g` (2.6.11 `init_sched_build_groups` callers): SCHED_LOAD_SCALE
/// per core, each further SMT sibling in the group adding `per_cpu_gain` (25 %); one
/// SCHED_LOAD_SCALE for a group of the SMT level itself.
fn group_power(topo: &Topology, smt: bool, g: &CpuSet) -> u64 {
    if smt {
        return SCHED_LOAD_SCALE;
    }
    // A core counts once, at its lowest CPU in the group (siblings come in CPU order).
    g.iter()
        .filter(|&c| topo.smt_siblings(c).find(|&x| g.contains(x)) == Some(c))
        .map(|c| {
            let k = topo.smt_siblings(c).filter(|&x| g.contains(x)).count() as u64;
            SCHED_LOAD_SCALE + SCHED_LOAD_SCALE * (k - 1) * 25 / 100
        })
        .sum()
}

/// What one balancing decision found (for counters and tests).
#[derive(Clone, Copy, Debug, Default)]
pub struct Found {
    pub group: usize,
    pub imbalance: u64,
}

impl O1 {
    /// `nr_running * SCHED_LOAD_SCALE`, with the moves this hook already requested.
    fn load_now(&self, cpu: CpuId) -> u64 {
        let n = i64::from(self.rq[cpu].nr_running) + self.adj[cpu];
        n.max(0) as u64 * SCHED_LOAD_SCALE
    }
    /// `source_load`: a low guess (2.6.11: `min(cpu_load, nr_running * SCHED_LOAD_SCALE)`).
    pub(super) fn source_load(&self, cpu: CpuId, idx: u8) -> u64 {
        if idx == 0 {
            self.load_now(cpu)
        } else {
            self.rq[cpu].cpu_load.min(self.load_now(cpu))
        }
    }
    /// `target_load`: a high guess.
    pub(super) fn target_load(&self, cpu: CpuId, idx: u8) -> u64 {
        if idx == 0 {
            self.load_now(cpu)
        } else {
            self.rq[cpu].cpu_load.max(self.load_now(cpu))
        }
    }

    /// `find_busiest_group` (2.6.11): the busiest remote group and how many tasks to move.
    fn find_busiest_group(&self, cpu: CpuId, lvl: usize, idle: IdleType) -> Option<Found> {
        let d = &self.doms[cpu][lvl];
        let idx = match idle {
            IdleType::NotIdle => d.idx[0],
            IdleType::SchedIdle => d.idx[1],
            IdleType::NewlyIdle => d.idx[2],
        };
        let (mut max_load, mut this_load, mut total_load, mut total_pwr) = (0u64, 0u64, 0u64, 0u64);
        let mut busiest = None;
        for (gi, g) in d.groups.iter().enumerate() {
            let local = gi == 0;
            let sum: u64 =
                g.iter().map(|c| if local { self.target_load(c, idx) } else { self.source_load(c, idx) }).sum();
            total_load += sum;
            total_pwr += d.power[gi];
            let avg = sum * SCHED_LOAD_SCALE / d.power[gi];
            if local {
                this_load = avg;
            } else if avg > max_load {
                max_load = avg;
                busiest = Some(gi);
            }
        }
        let balanced = |busiest: Option<usize>, max_load: u64| -> Option<Found> {
            // Even when balanced, a newly idle CPU, or an idle one facing more than one task's
            // worth of load, takes one task.
            let b = busiest?;
            (idle == IdleType::NewlyIdle || (idle == IdleType::SchedIdle && max_load > SCHED_LOAD_SCALE))
                .then_some(Found { group: b, imbalance: 1 })
        };
        let b = busiest?;
        if this_load >= max_load {
            return balanced(busiest, max_load);
        }
        let avg = SCHED_LOAD_SCALE * total_load / total_pwr.max(1);
        if this_load >= avg || 100 * max_load <= d.imbalance_pct * this_load {
            return balanced(busiest, max_load);
        }
        let (bp, tp) = (d.power[b], d.power[0]);
        let imb = (max_load - avg).min(avg - this_load) * bp.min(tp) / SCHED_LOAD_SCALE;
        if imb < SCHED_LOAD_SCALE - 1 {
            if max_load - this_load >= SCHED_LOAD_SCALE * 2 {
                return Some(Found { group: b, imbalance: 1 });
            }
            // Move one task only if that raises the CPU power used by an eighth of a CPU.
            let s = SCHED_LOAD_SCALE;
            let pwr_now = (bp * s.min(max_load) + tp * s.min(this_load)) / s;
            let mut pwr_move = 0;
            let tmp = s * s / bp;
            if max_load > tmp {
                pwr_move += bp * s.min(max_load - tmp);
            }
            let tmp = (s * s / tp).min(max_load);
            pwr_move += tp * s.min(this_load + tmp);
            pwr_move /= s;
            if pwr_move < pwr_now + s / 8 {
                return balanced(busiest, max_load);
            }
            return Some(Found { group: b, imbalance: 1 });
        }
        Some(Found { group: b, imbalance: (imb + 1) / SCHED_LOAD_SCALE })
    }

    /// `find_busiest_queue`: the CPU of the group with the highest `source_load`.
    fn find_busiest_queue(&self, cpu: CpuId, lvl: usize, group: usize, idle: IdleType) -> Option<CpuId> {
        let d = &self.doms[cpu][lvl];
        let idx = if idle == IdleType::NotIdle { d.idx[0] } else { d.idx[1] };
        let mut best: Option<(u64, CpuId)> = None;
        for c in d.groups[group].iter() {
            let l = self.source_load(c, idx);
            if best.is_none_or(|(m, _)| l > m) {
                best = Some((l, c));
            }
        }
        best.map(|(_, c)| c)
    }

    /// `cpu_and_siblings_are_idle`.
    fn cpu_and_siblings_idle(&self, cx: &Ctx, cpu: CpuId) -> bool {
        cx.machine.topology.smt_siblings(cpu).all(|c| cx.idle_cpu(c) && self.adj[c] <= 0)
    }

    /// `can_migrate_task` (2.6.12 form): not running, allowed on `this`, and cache-cold
    /// unless `this` (with its SMT siblings) is idle or balancing failed too often.
    fn can_migrate(&self, cx: &Ctx, p: TaskId, busiest: CpuId, this: CpuId, lvl: usize, running_ok: bool) -> bool {
        if !cx.allowed(p, this) || self.taken.contains(&p) || (!running_ok && self.rq[busiest].curr == Some(p)) {
            return false;
        }
        let d = &self.doms[this][lvl];
        if self.cpu_and_siblings_idle(cx, this) || d.nr_balance_failed > d.cache_nice_tries {
            return true;
        }
        let hot = self.td[p].last_ran.is_some_and(|r| cx.now.0.saturating_sub(r) < d.cache_hot_time);
        !hot
    }

    /// `move_tasks`: up to `max` tasks of `busiest`, expired array first (cache-cold), best
    /// priority first, each list from its tail (the most recently queued).
    fn move_tasks(&self, cx: &Ctx, this: CpuId, busiest: CpuId, max: u64, lvl: usize, running_ok: bool) -> Vec<TaskId> {
        let rq = &self.rq[busiest];
        let (act, exp) = (&rq.arrays[rq.active], &rq.arrays[1 - rq.active]);
        let order: Vec<_> = if exp.nr_active > 0 { vec![exp, act] } else { vec![act] };
        let mut out = Vec::new();
        for arr in order {
            let mut idx = arr.next_bit(0);
            while idx < super::params::MAX_PRIO {
                for &t in arr.list(idx).iter().rev() {
                    if out.len() as u64 >= max {
                        return out;
                    }
                    if self.can_migrate(cx, t, busiest, this, lvl, running_ok) {
                        out.push(t);
                    }
                }
                idx = arr.next_bit(idx + 1);
            }
        }
        out.truncate(max as usize);
        out
    }

    /// `load_balance` (tick) and `load_balance_newidle`: returns the number of tasks whose
    /// move was requested.
    pub(super) fn load_balance(&mut self, cx: &mut Ctx, this: CpuId, lvl: usize, idle: IdleType) -> usize {
        self.stats.lb_calls += 1;
        let found = self.find_busiest_group(this, lvl, idle);
        let busiest = found.and_then(|f| self.find_busiest_queue(this, lvl, f.group, idle).map(|b| (b, f)));
        let Some((busiest, f)) = busiest.filter(|(b, _)| *b != this) else {
            self.record_lb(cx, (this, lvl, idle), None, Vec::new(), "");
            if idle != IdleType::NewlyIdle {
                let d = &mut self.doms[this][lvl];
                d.nr_balance_failed = 0;
                d.balance_interval = (d.balance_interval * 2).min(d.max_interval);
            }
            return 0;
        };
        let mut moved = Vec::new();
        let locked = self.rq[busiest].nr_running as i64 + self.adj[busiest] > 1;
        if locked {
            moved = self.move_tasks(cx, this, busiest, f.imbalance, lvl, false);
        }
        let n = moved.len();
        let noted = if cx.recording() { moved.clone() } else { Vec::new() };
        if n > 0 {
            self.adjust(busiest, this, n as i64);
            self.stats.lb_moved += n as u64;
            for &t in &moved {
                self.taken_by_balance(t);
            }
            cx.migrate_batch(busiest, this, moved, n);
        } else if locked {
            // `double_rq_lock` (`double_lock_balance` when newly idle) took both runqueue locks
            // for a pass that moved nothing (`kernel/sched.c:load_balance (v2.6.20)`).
            cx.migrate_batch(busiest, this, Vec::new(), 0);
        }
        if idle == IdleType::NewlyIdle {
            self.record_lb(cx, (this, lvl, idle), Some((busiest, f.imbalance)), noted, "");
            return n;
        }
        let d = &mut self.doms[this][lvl];
        if n == 0 {
            d.nr_balance_failed += 1;
            let active = d.nr_balance_failed > d.cache_nice_tries + 2;
            let tail = if active {
                format!("; nothing movable: CPU {busiest}'s migration thread tries an active balance")
            } else {
                "; nothing moved".to_string()
            };
            self.record_lb(cx, (this, lvl, idle), Some((busiest, f.imbalance)), noted, &tail);
            let d = &mut self.doms[this][lvl];
            if active {
                d.nr_balance_failed = d.cache_nice_tries;
                self.active_load_balance(cx, busiest, this, lvl);
            }
        } else {
            self.record_lb(cx, (this, lvl, idle), Some((busiest, f.imbalance)), noted, "");
            let d = &mut self.doms[this][lvl];
            d.nr_balance_failed = 0;
        }
        self.doms[this][lvl].balance_interval = self.doms[this][lvl].min_interval;
        n
    }

    /// `active_load_balance` run by `busiest`'s migration thread for `push_cpu`: the thread
    /// preempts the running task, so every task there is movable; one is pushed, chosen as
    /// `move_tasks(…, 1, SCHED_IDLE)` would. The running one goes through the kernel's
    /// stopper path (`Request::ActiveBalance`), a queued one as an ordinary move.
    fn active_load_balance(&mut self, cx: &mut Ctx, busiest: CpuId, push_cpu: CpuId, lvl: usize) {
        let pick = self.move_tasks(cx, push_cpu, busiest, 1, lvl, true);
        let Some(&t) = pick.first() else { return };
        self.stats.active_balances += 1;
        self.adjust(busiest, push_cpu, 1);
        if self.rq[busiest].curr == Some(t) {
            cx.active_balance(busiest, push_cpu);
        } else {
            self.taken_by_balance(t);
            cx.migrate(t, push_cpu);
        }
    }

    /// `rebalance_tick` (2.6.11): update `cpu_load`, then balance each domain whose interval
    /// (× `busy_factor` unless idle) has passed, staggered per CPU by `HZ * cpu / NR_CPUS`.
    pub(super) fn rebalance_tick(&mut self, cx: &mut Ctx, cpu: CpuId, mut idle: IdleType) {
        let this_load = u64::from(self.rq[cpu].nr_running) * SCHED_LOAD_SCALE;
        let rq = &mut self.rq[cpu];
        rq.cpu_load = (rq.cpu_load + this_load) / 2;
        if !self.t.balance {
            return;
        }
        let hz = self.t.hz;
        let j = self.jiffies(cx.now) + hz * cpu as u64 / self.rq.len() as u64;
        for lvl in 0..self.doms[cpu].len() {
            let d = &self.doms[cpu][lvl];
            if !d.has(SD_LOAD_BALANCE) {
                continue;
            }
            let mut ms = d.balance_interval;
            if idle != IdleType::SchedIdle {
                ms *= d.busy_factor;
            }
            // `msecs_to_jiffies` rounds up.
            let interval = (ms * hz).div_ceil(1000).max(1);
            if j.saturating_sub(d.last_balance) >= interval {
                if self.load_balance(cx, cpu, lvl, idle) > 0 {
                    idle = IdleType::NotIdle;
                }
                self.doms[cpu][lvl].last_balance += interval;
            }
        }
    }

    /// `idle_balance`: a CPU about to idle pulls from the lowest domain that has work.
    pub(super) fn idle_balance(&mut self, cx: &mut Ctx, cpu: CpuId) {
        if !self.t.balance {
            return;
        }
        for lvl in 0..self.doms[cpu].len() {
            if self.doms[cpu][lvl].has(SD_BALANCE_NEWIDLE) && self.load_balance(cx, cpu, lvl, IdleType::NewlyIdle) > 0 {
                self.stats.idle_pulls += 1;
                break;
            }
        }
    }

    /// `try_to_wake_up`'s placement (2.6.20 form on task-count loads): wake on the waker's
    /// CPU if the affine test or passive balancing allows, then `wake_idle`.
    pub(super) fn wake_cpu(&mut self, cx: &Ctx, p: TaskId, cpu: CpuId, sync: bool) -> (CpuId, &'static str) {
        let this = cx.this_cpu;
        let mut new_cpu = cpu;
        let mut rule = if cpu == this {
            "woken on its previous CPU, the waking one"
        } else {
            "the waking CPU is not allowed or shares no domain: the previous CPU"
        };
        if cpu != this && cx.allowed(p, this) {
            if let Some(lvl) = self.doms[this].iter().position(|d| d.span.contains(cpu)) {
                let d = &self.doms[this][lvl];
                let idx = d.idx[3];
                let imbalance = 100 + (d.imbalance_pct - 100) / 2;
                let load = self.source_load(cpu, idx);
                let this_load = self.target_load(this, idx);
                let mut chosen = false;
                if d.has(SD_WAKE_AFFINE) {
                    // Every task weighs SCHED_LOAD_SCALE, so the average per task is one task.
                    let mut tl = this_load;
                    if sync {
                        tl = tl.saturating_sub(SCHED_LOAD_SCALE);
                    }
                    if (tl <= load && tl + self.target_load(cpu, idx) <= SCHED_LOAD_SCALE)
                        || 100 * (tl + SCHED_LOAD_SCALE) <= imbalance * load
                    {
                        self.stats.wake_affine += 1;
                        chosen = true;
                        rule = "wake_affine: the waking CPU's load (sync: less the waker) is light enough to pull it";
                    }
                }
                if !chosen && d.has(SD_WAKE_BALANCE) && imbalance * this_load <= 100 * load {
                    self.stats.wake_balance += 1;
                    chosen = true;
                    rule = "SD_WAKE_BALANCE: the waking CPU is within imbalance_pct of the previous CPU's load";
                }
                if chosen {
                    new_cpu = this;
                } else {
                    rule = "wake_affine and SD_WAKE_BALANCE declined: the previous CPU";
                }
            }
        }
        let c = self.wake_idle(cx, p, new_cpu);
        if c != new_cpu {
            rule = "wake_idle: the target was busy, an idle SMT sibling took it";
        }
        (c, rule)
    }

    /// `wake_idle`: a busy target gives way to an idle allowed CPU of its `SD_WAKE_IDLE`
    /// domains (the SMT siblings).
    fn wake_idle(&self, cx: &Ctx, p: TaskId, cpu: CpuId) -> CpuId {
        if cx.idle_cpu(cpu) {
            return cpu;
        }
        for d in &self.doms[cpu] {
            if !d.has(SD_WAKE_IDLE) {
                break;
            }
            if let Some(c) = d.span.iter().find(|&c| cx.allowed(p, c) && cx.idle_cpu(c)) {
                return c;
            }
        }
        cpu
    }

    /// `sched_balance_self(cpu, SD_BALANCE_FORK)`: walk down from the highest domain with
    /// the flag to the idlest group and CPU.
    pub(super) fn balance_self(&self, cx: &Ctx, p: TaskId, mut cpu: CpuId, flag: u32) -> CpuId {
        let mut sd = self.doms[cpu].iter().rposition(|d| d.has(flag));
        while let Some(lvl) = sd {
            let d = &self.doms[cpu][lvl];
            let child = lvl.checked_sub(1);
            if !d.has(flag) {
                sd = child;
                continue;
            }
            let Some(g) = self.find_idlest_group(cx, p, cpu, lvl) else {
                sd = child;
                continue;
            };
            let new_cpu = self.find_idlest_cpu(cx, p, &d.groups[g], cpu);
            if new_cpu.is_none_or(|c| c == cpu) {
                sd = child;
                continue;
            }
            let weight = d.span.count();
            cpu = new_cpu.unwrap_or(cpu);
            sd = None;
            for (l, t) in self.doms[cpu].iter().enumerate() {
                if weight <= t.span.count() {
                    break;
                }
                if t.has(flag) {
                    sd = Some(l);
                }
            }
        }
        cpu
    }

    /// `find_idlest_group`: the least loaded allowed remote group, if it is lighter than the
    /// local one by half the domain's imbalance percentage.
    fn find_idlest_group(&self, cx: &Ctx, p: TaskId, cpu: CpuId, lvl: usize) -> Option<usize> {
        let d = &self.doms[cpu][lvl];
        let idx = d.idx[4];
        let imbalance = 100 + (d.imbalance_pct - 100) / 2;
        let (mut min_load, mut this_load, mut idlest) = (u64::MAX, 0, None);
        for (gi, g) in d.groups.iter().enumerate() {
            if !g.iter().any(|c| cx.allowed(p, c)) {
                continue;
            }
            let local = gi == 0;
            let sum: u64 =
                g.iter().map(|c| if local { self.source_load(c, idx) } else { self.target_load(c, idx) }).sum();
            let avg = sum * SCHED_LOAD_SCALE / d.power[gi];
            if local {
                this_load = avg;
            } else if avg < min_load {
                min_load = avg;
                idlest = Some(gi);
            }
        }
        idlest.filter(|_| 100 * this_load >= imbalance * min_load)
    }

    /// `find_idlest_cpu`: the allowed CPU with the least load, preferring `this` on ties.
    fn find_idlest_cpu(&self, cx: &Ctx, p: TaskId, g: &CpuSet, this: CpuId) -> Option<CpuId> {
        let mut best: Option<(u64, CpuId)> = None;
        for c in g.iter().filter(|&c| cx.allowed(p, c)) {
            let l = self.load_now(c);
            if best.is_none_or(|(m, _)| l < m || (l == m && c == this)) {
                best = Some((l, c));
            }
        }
        best.map(|(_, c)| c)
    }
}
