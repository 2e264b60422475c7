//! Energy-aware scheduling (fair.c v6.18, v5.15 where it differs): `sched_energy_enabled`
//! (`kernel/sched/topology.c: build_perf_domains`, v6.18 `sched_is_eas_possible`), the
//! root domain's overutilized flag (`cpu_overutilized`, `util_fits_cpu`,
//! `check_update_overutilized_status`, `set_rd_overutilized`), and wakeup placement by
//! energy (`find_energy_efficient_cpu`, `compute_energy`, `eenv_task_busy_time`,
//! `eenv_pd_busy_time`, `eenv_pd_max_util`; `include/linux/energy_model.h:
//! em_cpu_energy`, `em_pd_get_efficient_state`), over the energy model the kernel
//! registered (`Ctx::perf_domains`), in the kernel's integer arithmetic.
//!
//! uclamp (v6.18; v5.15 where it differs) enters through the state the class chain lends
//! the fair class for each hook (`Fair::lend_uclamp`): the runqueues' max-aggregated
//! clamps (`uclamp_rq_get`, `uclamp_rq_is_idle`) and each task's effective ones
//! (`uclamp_eff_value`), read by `util_fits_cpu`, `task_fits_cpu`, `cpu_overutilized`,
//! `select_idle_capacity`, `find_energy_efficient_cpu` and `eenv_pd_max_util`. Unused
//! (`sched_uclamp_used` off) every one of them reduces to its uclamp-free form.
//!
//! The fair class sees neither the rt, deadline and irq utilisation (the class chain
//! keeps them), so `effective_cpu_util` here is the fair utilisation capped at the
//! capacity, and `capacity_of` and `get_actual_cpu_capacity` are the CPU's whole capacity
//! (no rt/irq pressure, no thermal or cpufreq pressure). Tasks' and CPUs' utilisation
//! include the estimates of `util_est.rs`; a waking task's `util_avg` is not first synced
//! to its runqueue (no `sync_entity_load_avg`). v6.6 and v6.12 are modelled as v6.18 here.

use super::{Fair, Version};
use schedlab_sched_api::cpufreq::SCALE;
use schedlab_sched_api::{Ctx, Decision, PerfDomain, PerfState};
use schedlab_sim::{CpuId, TaskId};

/// `EM_MAX_COMPLEXITY` (topology.c v5.15): `build_perf_domains` gives up on an energy
/// model with more than this many `nr_pd × (nr_ps + nr_cpus)`.
const EM_MAX_COMPLEXITY: usize = 2048;

/// `fits_capacity(cap, max)`: `cap` fits in 80 % of `max` (`cap × 1280 < max × 1024`).
pub fn fits_capacity(cap: u64, max: u64) -> bool {
    cap * 1280 < max * 1024
}

/// `capacity_greater(cap1, cap2)` (v5.15, v6.18): `cap1` is more than ~5 % above `cap2`.
pub fn capacity_greater(cap1: u64, cap2: u64) -> bool {
    cap1 * 1024 > cap2 * 1078
}

/// `sd->flags & SD_ASYM_CPUCAPACITY` (`topology.c: asym_cpu_capacity_classify`, v5.15):
/// the domain's span holds CPUs of different capacities.
pub fn sd_asym_cpucapacity(cx: &Ctx, span: &schedlab_machine::CpuSet) -> bool {
    let mut caps = span.iter().map(|c| cx.capacity(c));
    let first = caps.next();
    caps.any(|c| Some(c) != first)
}

/// `map_util_perf` (v6.18): the 25 % headroom schedutil adds.
fn map_util_perf(util: u64) -> u64 {
    util + (util >> 2)
}

/// `em_pd_get_efficient_state` (v6.18): the lowest state whose performance reaches
/// `max_util`, the top one if none does. The project's schedutil does not skip
/// inefficient frequencies, so neither does this (`EM_PERF_DOMAIN_SKIP_INEFFICIENCIES`
/// unset).
pub fn em_pd_get_efficient_state(pd: &PerfDomain, max_util: u64) -> &PerfState {
    let top = pd.states.len() - 1;
    &pd.states[pd.states.iter().position(|s| s.performance >= max_util).unwrap_or(top)]
}

/// `em_cpu_energy` (v6.18): the state the most utilised CPU asks for (clamped to the
/// allowed capacity), then `cost × sum_util`.
pub fn em_cpu_energy(pd: &PerfDomain, max_util: u64, sum_util: u64, allowed_cpu_cap: u64) -> u64 {
    if sum_util == 0 {
        return 0;
    }
    em_pd_get_efficient_state(pd, max_util.min(allowed_cpu_cap)).cost * sum_util
}

/// `em_cpu_energy` (v5.15): the frequency `map_util_freq` asks for the most utilised CPU
/// (`1.25 × fmax × max_util / capacity`), the lowest state at or above it, then
/// `cost × sum_util / capacity`.
pub fn em_cpu_energy_v5_15(pd: &PerfDomain, max_util: u64, sum_util: u64) -> u64 {
    if sum_util == 0 {
        return 0;
    }
    let scale = u64::from(pd.capacity).max(1);
    let fmax = pd.states.last().map_or(0, |s| s.khz);
    let freq = (fmax + (fmax >> 2)) * max_util / scale;
    let top = pd.states.len() - 1;
    let ps = &pd.states[pd.states.iter().position(|s| s.khz >= freq).unwrap_or(top)];
    ps.cost_fmax * sum_util / scale
}

/// `struct energy_env` (v6.18).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Eenv {
    pub task_busy_time: u64,
    pub pd_busy_time: u64,
    pub cpu_cap: u64,
    pub pd_cap: u64,
}

/// How `find_energy_efficient_cpu` went, for the decision record.
struct Feec {
    target: CpuId,
    notes: Vec<String>,
}

impl Fair {
    /// `sched_energy_enabled()`: the `sched_energy_present` key `build_perf_domains` sets
    /// when `sysctl_sched_energy_aware` is on, the capacities are asymmetric
    /// (`sd_asym_cpucapacity`), there is no SMT, PELT is frequency-invariant, every
    /// domain has an energy model and schedutil governs it; v5.15 also gives up past
    /// [`EM_MAX_COMPLEXITY`]. Mainline v4.9 has no EAS.
    pub(super) fn sched_energy_enabled(&self, cx: &Ctx) -> bool {
        let em = cx.em;
        let pds = &em.domains;
        if !self.t.energy_aware || self.t.version == Version::V4_9 || pds.is_empty() || self.smt {
            return false;
        }
        let asym = pds.iter().any(|d| d.capacity != pds[0].capacity);
        let nr_ps: usize = pds.iter().map(|d| d.states.len()).sum();
        let too_complex = self.t.version == Version::V5_15 && pds.len() * (nr_ps + self.nr_cpus) > EM_MAX_COMPLEXITY;
        asym && em.schedutil && em.freq_invariant && !too_complex
    }

    /// `cpu_util(cpu, p, dst_cpu, boost)` (v6.18; v5.15 `cpu_util_next`, no boost): the
    /// root runqueue's utilisation (with `boost`, at least its runnable average) as if `p`
    /// ran on `dst` (`None`: nowhere), capped at the CPU's capacity.
    pub(super) fn eas_cpu_util(&self, cx: &Ctx, cpu: CpuId, p: Option<TaskId>, dst: Option<CpuId>, boost: bool) -> u64 {
        let a = &self.rq(self.root(cpu)).avg;
        let mut util = if boost { a.util_avg.max(a.runnable_avg) } else { a.util_avg };
        let here = p.map(|p| cx.task(p).cpu);
        if let Some(p) = p {
            if here == Some(cpu) && dst != Some(cpu) {
                util = util.saturating_sub(self.task_util(p));
            } else if here != Some(cpu) && dst == Some(cpu) {
                util += self.task_util(p);
            }
        }
        if self.util_est_on() {
            let mut est = self.cpu_util_est(cpu);
            if let Some(p) = p {
                // The waking task's estimate is in no sum: add it where it would go; a
                // queued or running one leaves its CPU's sum when asked "without p".
                let pe = self.e(self.task_se(p));
                if dst == Some(cpu) {
                    est += self.task_util_est_raw(p);
                } else if here == Some(cpu) && (pe.on_rq || cx.cpus[cpu].curr == Some(p)) {
                    est = est.saturating_sub(self.task_util_est_raw(p));
                }
            }
            util = util.max(est);
        }
        util.min(u64::from(cx.capacity(cpu)))
    }

    /// `task_util(p)`: the task's `util_avg` (its estimate: `task_util_est`).
    pub(super) fn task_util(&self, p: TaskId) -> u64 {
        self.e(self.task_se(p)).avg.util_avg
    }

    /// `uclamp_is_used()`: the static key, as the class chain lent it.
    fn uclamp_used(&self) -> bool {
        self.uclamp.used
    }

    /// `uclamp_eff_value(p, UCLAMP_MIN)` and `(p, UCLAMP_MAX)` of fair task `p`.
    pub(super) fn uclamp_eff_value(&self, cx: &Ctx, p: TaskId) -> (u64, u64) {
        let [min, max] = self.uclamp.eff_value(p, cx.task(p), false);
        (u64::from(min), u64::from(max))
    }

    /// `uclamp_rq_get(rq, UCLAMP_MIN)` and `(rq, UCLAMP_MAX)` of `cpu`.
    fn uclamp_rq_get(&self, cpu: CpuId) -> (u64, u64) {
        let (min, max) = self.uclamp.rq_values(cpu);
        (u64::from(min), u64::from(max))
    }

    /// `uclamp_rq_util_with(rq, util, p)` (sched.h, v5.15): `util` clamped into the
    /// runqueue's aggregated `[min, max]` raised by `p`'s effective clamps (only `p`'s
    /// when the runqueue is idle: its held maximum is about to be reset); an inverted
    /// range gives the minimum.
    fn uclamp_rq_util_with(&self, cx: &Ctx, cpu: CpuId, util: u64, p: Option<TaskId>) -> u64 {
        if !self.uclamp_used() {
            return util;
        }
        let (mut min, mut max) = p.map_or((0, 0), |p| self.uclamp_eff_value(cx, p));
        if p.is_none() || !self.uclamp.rq_is_idle(cpu) {
            let (rq_min, rq_max) = self.uclamp_rq_get(cpu);
            (min, max) = (min.max(rq_min), max.max(rq_max));
        }
        if min >= max {
            return min;
        }
        util.clamp(min, max)
    }

    /// `util_fits_cpu(util, uclamp_min, uclamp_max, cpu)` (fair.c v6.2+, v6.18): 1 if
    /// `util` fits the capacity (or `uclamp_max` caps the task at or below a CPU smaller
    /// than the biggest: a capped task fits), −1 if it fits but `uclamp_min` asks for more
    /// than the CPU has, 0 if it does not fit. Unused uclamp: `fits_capacity` alone.
    pub(super) fn util_fits_cpu(&self, cx: &Ctx, util: u64, uclamp_min: u64, uclamp_max: u64, cpu: CpuId) -> i32 {
        let capacity = u64::from(cx.capacity(cpu));
        let fits = fits_capacity(util, capacity);
        if !self.uclamp_used() {
            return i32::from(fits);
        }
        // `arch_scale_cpu_capacity`: the same whole capacity here (no rt/irq pressure).
        let capacity_orig = capacity;
        let biggest_uncapped = capacity_orig == u64::from(SCALE) && uclamp_max == u64::from(SCALE);
        let fits = fits || (!biggest_uncapped && uclamp_max <= capacity_orig);
        // `get_actual_cpu_capacity`: no thermal or cpufreq pressure is modelled.
        if fits && util < uclamp_min.min(uclamp_max) && uclamp_min.min(uclamp_max) > capacity_orig {
            return -1;
        }
        i32::from(fits)
    }

    /// `cpu_overutilized` (v6.18: `!util_fits_cpu(cpu_util_cfs, uclamp_rq_get(MIN),
    /// uclamp_rq_get(MAX))`, so a −1 is not overutilized; v5.15
    /// `!fits_capacity(cpu_util(cpu), capacity_of(cpu))`, no uclamp).
    pub(super) fn cpu_overutilized(&self, cx: &Ctx, cpu: CpuId) -> bool {
        let util = self.eas_cpu_util(cx, cpu, None, None, false);
        if self.t.version > Version::V5_15 {
            let (min, max) = self.uclamp_rq_get(cpu);
            return self.util_fits_cpu(cx, util, min, max, cpu) == 0;
        }
        !fits_capacity(util, u64::from(cx.capacity(cpu)))
    }

    /// `set_rd_overutilized` (v6.18; v5.15 writes `rd->overutilized` in place): only
    /// with EAS on; transitions are counted.
    pub(super) fn set_rd_overutilized(&mut self, cx: &Ctx, flag: bool) {
        if !self.sched_energy_enabled(cx) {
            return;
        }
        if flag != self.rd_overutilized {
            let c = &mut self.counters;
            if flag {
                c.overutilized_set += 1;
            } else {
                c.overutilized_cleared += 1;
            }
        }
        self.rd_overutilized = flag;
    }

    /// `check_update_overutilized_status` (v6.18; v5.15 `update_overutilized_status`),
    /// from `enqueue_task_fair` (not a new task's first enqueue) and `task_tick_fair`.
    pub(super) fn check_update_overutilized_status(&mut self, cx: &Ctx, cpu: CpuId) {
        if self.sched_energy_enabled(cx) && !self.rd_overutilized && self.cpu_overutilized(cx, cpu) {
            self.set_rd_overutilized(cx, true);
        }
    }

    /// The wakeup's energy-aware placement where `select_task_rq_fair` tries it: v6.18
    /// `if (!is_rd_overutilized(rd))`, v5.15 `if (sched_energy_enabled())` with the
    /// overutilized check inside `find_energy_efficient_cpu` — the same test. `None`:
    /// the normal wakeup path follows.
    pub(super) fn try_feec(&mut self, cx: &mut Ctx, p: TaskId, prev: CpuId) -> Option<CpuId> {
        if !self.sched_energy_enabled(cx) {
            return None;
        }
        self.counters.eas_enabled = true;
        if self.rd_overutilized {
            return None;
        }
        let f = if self.t.version == Version::V5_15 {
            self.find_energy_efficient_cpu_v5_15(cx, p, prev)
        } else {
            self.find_energy_efficient_cpu(cx, p, prev)
        };
        self.counters.feec += 1;
        self.counters.feec_moved += u64::from(f.target != prev);
        if cx.recording() {
            let why = f.notes.join("; ");
            cx.record(|| Decision::Place { task: p, prev, cpu: f.target, path: "find_energy_efficient_cpu", why });
        }
        Some(f.target)
    }

    /// `eenv_pd_busy_time` (v6.18): the domain's utilisation without `p`, capped at its
    /// capacity.
    fn eenv_pd_busy_time(&self, cx: &Ctx, eenv: &mut Eenv, pd: &PerfDomain, p: TaskId) {
        let busy: u64 = pd.cpus.iter().map(|&c| self.eas_cpu_util(cx, c, Some(p), None, false)).sum();
        eenv.pd_busy_time = busy.min(eenv.pd_cap);
    }

    /// `eenv_pd_max_util` (v6.18): the performance the domain's busiest CPU asks of
    /// schedutil with `p` on `dst`: `effective_cpu_util`'s minimum (the runqueue's uclamp
    /// minimum) and maximum (the capacity, at most the runqueue's uclamp maximum), on `dst`
    /// raised by `p`'s effective clamps (`p`'s maximum alone if the runqueue is idle), then
    /// `sugov_effective_cpu_perf` (1.25 × utilisation within them); capped at the domain's
    /// allowed capacity.
    fn eenv_pd_max_util(&self, cx: &Ctx, eenv: &Eenv, pd: &PerfDomain, p: TaskId, dst: Option<CpuId>) -> u64 {
        let max_util = pd
            .cpus
            .iter()
            .map(|&c| {
                let cap = u64::from(cx.capacity(c));
                let eff_util = self.eas_cpu_util(cx, c, Some(p), dst, true).min(cap);
                let (rq_min, rq_max) = self.uclamp_rq_get(c);
                let (mut min, mut max) = (rq_min, cap.min(rq_max));
                if dst == Some(c) && self.uclamp_used() {
                    let (p_min, p_max) = self.uclamp_eff_value(cx, p);
                    min = min.max(p_min);
                    max = if self.uclamp.rq_is_idle(c) { p_max } else { max.max(p_max) };
                }
                // sugov_effective_cpu_perf: max(min, min(map_util_perf(actual), max)).
                min.max(map_util_perf(eff_util).min(max))
            })
            .max()
            .unwrap_or(0);
        max_util.min(eenv.cpu_cap)
    }

    /// `compute_energy` (v6.18): the domain's energy with `p` on `dst` (`None`: the base,
    /// without `p`).
    pub(super) fn compute_energy(&self, cx: &Ctx, eenv: &Eenv, pd: &PerfDomain, p: TaskId, dst: Option<CpuId>) -> u64 {
        let max_util = self.eenv_pd_max_util(cx, eenv, pd, p, dst);
        let mut busy_time = eenv.pd_busy_time;
        if dst.is_some() {
            busy_time = eenv.pd_cap.min(busy_time + eenv.task_busy_time);
        }
        em_cpu_energy(pd, max_util, busy_time, eenv.cpu_cap)
    }

    /// `compute_energy` (v5.15): per CPU of the domain, the utilisation it would run
    /// (`ENERGY_UTIL`, summed) and the one it would ask a frequency for
    /// (`FREQUENCY_UTIL`, the largest: clamped by `uclamp_rq_util_with`, with `p`'s
    /// clamps on `dst`), with `p` on `dst`.
    pub(super) fn compute_energy_v5_15(&self, cx: &Ctx, pd: &PerfDomain, p: TaskId, dst: Option<CpuId>) -> u64 {
        let (mut max_util, mut sum_util) = (0, 0);
        let cap = u64::from(pd.capacity);
        for &c in &pd.cpus {
            let util_freq = self.eas_cpu_util(cx, c, Some(p), dst, false);
            let tsk = (dst == Some(c)).then_some(p);
            let running = if dst == Some(c) {
                self.eas_cpu_util(cx, c, Some(p), None, false) + self.task_util_est(p)
            } else {
                util_freq
            };
            sum_util += running.min(cap);
            max_util = max_util.max(self.uclamp_rq_util_with(cx, c, util_freq, tsk).min(cap));
        }
        em_cpu_energy_v5_15(pd, max_util, sum_util)
    }
}

/// One performance domain's candidates (`find_energy_efficient_cpu`'s inner loop): the
/// previous CPU's spare capacity if it fits, and the other fitting CPU with the most,
/// each with its `util_fits_cpu` answer (1, or −1: only `uclamp_min` unmet).
struct Candidates {
    prev_spare: Option<u64>,
    prev_fits: i32,
    max_spare: Option<(CpuId, u64)>,
    max_fits: i32,
}

impl Fair {
    /// The inner loop of `find_energy_efficient_cpu` over `pd`: each allowed CPU where
    /// `p` fits, its spare capacity with `p`. v6.18 asks `util_fits_cpu` with the
    /// max-aggregated clamps of the runqueue and `p` (`p`'s alone on an idle runqueue —
    /// and, as in the kernel, a value raised on one CPU carries over to the domain's next
    /// idle ones, the two being set once per domain); a better fit beats more spare.
    /// v5.15: `fits_capacity(uclamp_rq_util_with(rq, util, p), capacity)`.
    fn eas_candidates(&self, cx: &Ctx, pd: &PerfDomain, p: TaskId, prev: CpuId) -> Candidates {
        let mut c = Candidates { prev_spare: None, prev_fits: -1, max_spare: None, max_fits: -1 };
        let (p_min, p_max) = if self.uclamp_used() { self.uclamp_eff_value(cx, p) } else { (0, u64::from(SCALE)) };
        let (mut util_min, mut util_max) = (p_min, p_max);
        for &cpu in &pd.cpus {
            self.count(|w| w.read_cpu(cx.machine, cx.this_cpu, cpu));
            if !cx.allowed(p, cpu) {
                continue;
            }
            let util = self.eas_cpu_util(cx, cpu, Some(p), Some(cpu), false);
            let cap = u64::from(cx.capacity(cpu));
            let fits = if self.t.version > Version::V5_15 {
                if self.uclamp_used() && !self.uclamp.rq_is_idle(cpu) {
                    let (rq_min, rq_max) = self.uclamp_rq_get(cpu);
                    (util_min, util_max) = (rq_min.max(p_min), rq_max.max(p_max));
                }
                self.util_fits_cpu(cx, util, util_min, util_max, cpu)
            } else {
                i32::from(fits_capacity(self.uclamp_rq_util_with(cx, cpu, util, Some(p)), cap))
            };
            if fits == 0 {
                continue;
            }
            let spare = cap.saturating_sub(util);
            if cpu == prev {
                (c.prev_spare, c.prev_fits) = (Some(spare), fits);
            } else if fits > c.max_fits || (fits == c.max_fits && c.max_spare.is_none_or(|(_, m)| spare > m)) {
                // v6.18 keeps the first of equal spares (`>`), v5.15 too (`spare_cap >
                // max_spare_cap`, from 0: a CPU with no spare is never chosen there).
                if self.t.version > Version::V5_15 || spare > 0 {
                    (c.max_spare, c.max_fits) = (Some((cpu, spare)), fits);
                }
            }
        }
        c
    }

    /// `find_energy_efficient_cpu` (v6.18): per domain the energy delta of the previous
    /// CPU and of the CPU with the most spare capacity; a better `util_fits_cpu` answer
    /// wins (1 over −1, which misses only `uclamp_min`), then the lowest delta, the
    /// previous CPU on a tie; among −1s, the larger capacity.
    fn find_energy_efficient_cpu(&mut self, cx: &Ctx, p: TaskId, prev: CpuId) -> Feec {
        let mut f = Feec { target: prev, notes: Vec::new() };
        let task = self.task_util_est(p);
        let p_util_min = if self.uclamp_used() { self.uclamp_eff_value(cx, p).0 } else { 0 };
        if task == 0 && p_util_min == 0 {
            f.notes.push("find_energy_efficient_cpu: the task has no utilisation, so it stays".into());
            return f;
        }
        let (mut prev_delta, mut best_delta) = (u64::MAX, u64::MAX);
        let (mut prev_fits, mut best_fits, mut best_cpu) = (-1i32, -1i32, prev);
        let (mut prev_actual_cap, mut best_actual_cap) = (0u64, 0u64);
        // `eenv_task_busy_time`: no irq time is modelled, so `scale_irq_capacity` keeps it whole.
        let eenv0 = Eenv { task_busy_time: task, ..Eenv::default() };
        for pd in cx.perf_domains() {
            self.count(|w| w.groups += 1);
            let cap = u64::from(pd.capacity);
            let mut eenv = Eenv { cpu_cap: cap, pd_cap: cap * pd.cpus.len() as u64, ..eenv0 };
            let c = self.eas_candidates(cx, pd, p, prev);
            if c.max_spare.is_none() && c.prev_spare.is_none() {
                continue;
            }
            self.eenv_pd_busy_time(cx, &mut eenv, pd, p);
            let base = self.compute_energy(cx, &eenv, pd, p, None);
            if c.prev_spare.is_some() {
                let e = self.compute_energy(cx, &eenv, pd, p, Some(prev));
                if e < base {
                    f.notes.push("the domain's utilisation changed under the estimate: stay".into());
                    return f;
                }
                prev_delta = e - base;
                prev_fits = c.prev_fits;
                prev_actual_cap = cap;
                best_delta = best_delta.min(prev_delta);
                f.notes.push(format!("previous CPU {prev}: +{prev_delta} (base {base})"));
            }
            if let Some((cpu, spare)) = c.max_spare.filter(|&(_, s)| c.prev_spare.is_none_or(|ps| s > ps)) {
                // A worse fit than the best so far, or (both missing uclamp_min) no more
                // capacity: not a better choice whatever its energy.
                if c.max_fits < best_fits || (c.max_fits < 0 && cap <= best_actual_cap) {
                    continue;
                }
                let e = self.compute_energy(cx, &eenv, pd, p, Some(cpu));
                if e < base {
                    f.notes.push("the domain's utilisation changed under the estimate: stay".into());
                    return f;
                }
                let cur = e - base;
                f.notes.push(format!("CPU {cpu} (most spare, {spare}): +{cur} (base {base})"));
                if c.max_fits > 0 && best_fits > 0 && cur >= best_delta {
                    continue;
                }
                (best_delta, best_cpu, best_fits, best_actual_cap) = (cur, cpu, c.max_fits, cap);
            }
        }
        if best_fits > prev_fits
            || (best_fits > 0 && best_delta < prev_delta)
            || (best_fits < 0 && best_actual_cap > prev_actual_cap)
        {
            f.target = best_cpu;
        }
        f.notes.insert(0, format!("find_energy_efficient_cpu (task util {task}): the least energy added"));
        if self.uclamp_used() {
            let (min, max) = self.uclamp_eff_value(cx, p);
            f.notes.insert(1, format!("uclamp: the task's effective min {min}, max {max} (util_fits_cpu)"));
        }
        f
    }

    /// `find_energy_efficient_cpu` (v5.15): as v6.18 but the energy sums over the
    /// domains, and another CPU must save more than 1/16 (6 %) of the previous CPU's
    /// energy (`(prev_delta − best_delta) > (prev_delta + base_energy) >> 4`).
    fn find_energy_efficient_cpu_v5_15(&mut self, cx: &Ctx, p: TaskId, prev: CpuId) -> Feec {
        let mut f = Feec { target: prev, notes: Vec::new() };
        let task = self.task_util_est(p);
        if task == 0 {
            f.notes.push("find_energy_efficient_cpu (v5.15): the task has no utilisation, so it stays".into());
            return f;
        }
        let (mut prev_delta, mut best_delta, mut base_energy) = (u64::MAX, u64::MAX, 0u64);
        let mut best_cpu = prev;
        for pd in cx.perf_domains() {
            self.count(|w| w.groups += 1);
            let c = self.eas_candidates(cx, pd, p, prev);
            if c.max_spare.is_none() && c.prev_spare.is_none() {
                continue;
            }
            let base = self.compute_energy_v5_15(cx, pd, p, None);
            base_energy += base;
            if c.prev_spare.is_some() {
                let e = self.compute_energy_v5_15(cx, pd, p, Some(prev));
                if e < base {
                    return f;
                }
                prev_delta = e - base;
                best_delta = best_delta.min(prev_delta);
                f.notes.push(format!("previous CPU {prev}: +{prev_delta}"));
            }
            if let Some((cpu, _)) = c.max_spare {
                let e = self.compute_energy_v5_15(cx, pd, p, Some(cpu));
                if e < base {
                    return f;
                }
                let cur = e - base;
                f.notes.push(format!("CPU {cpu} (most spare): +{cur}"));
                if cur < best_delta {
                    best_delta = cur;
                    best_cpu = cpu;
                }
            }
        }
        if prev_delta == u64::MAX || prev_delta - best_delta > (prev_delta + base_energy) >> 4 {
            f.target = best_cpu;
        }
        f.notes.insert(0, format!("find_energy_efficient_cpu (v5.15, task util {task}): saves > 6 % or stays"));
        f
    }
}

impl Fair {
    /// `sched_asym_cpucap_active()`: CPUs of different capacities share the root domain
    /// (an `SD_ASYM_CPUCAPACITY` domain exists), whether or not EAS is on. Capacities are
    /// fixed for a run, so it is decided once.
    pub(super) fn asym_cpucap(&mut self, cx: &Ctx) -> bool {
        if !cx.scaled {
            return false;
        }
        *self.asym_cpucap.get_or_insert_with(|| (1..cx.nr_cpus()).any(|c| cx.capacity(c) != cx.capacity(0)))
    }

    /// `task_fits_cpu` / `asym_fits_cpu` (v6.18): `util_fits_cpu(task_util_est(p),
    /// uclamp_eff_value(p, MIN), uclamp_eff_value(p, MAX), cpu) > 0` — the CPU meets the
    /// task's utilisation and its performance hints. v5.15 `task_fits_capacity` /
    /// `asym_fits_capacity`: `fits_capacity(uclamp_task_util(p), capacity)`, the task's
    /// utilisation clamped into its effective clamps.
    pub(super) fn task_fits_cpu(&self, cx: &Ctx, p: TaskId, cpu: CpuId) -> bool {
        self.task_fits(cx, p, cpu) > 0
    }

    /// `util_fits_cpu`'s three-way answer for task `p` on `cpu` (v5.15: 1 or 0).
    fn task_fits(&self, cx: &Ctx, p: TaskId, cpu: CpuId) -> i32 {
        let util = self.task_util_est(p);
        let (min, max) = self.uclamp_eff_value(cx, p);
        if self.t.version > Version::V5_15 {
            return self.util_fits_cpu(cx, util, min, max, cpu);
        }
        // uclamp_task_util: clamp(util, min, max), the kernel's min-then-max order.
        let util = if self.uclamp_used() { util.max(min).min(max) } else { util };
        i32::from(fits_capacity(util, u64::from(cx.capacity(cpu))))
    }

    /// `update_misfit_status(p, rq)` (fair.c v5.15; v6.18 adds the `max_allowed_capacity`
    /// test, from v6.10): with asymmetric capacities, `rq->misfit_task_load` is the task's
    /// `task_h_load` (at least 1) when it does not fit this CPU (`task_fits_cpu`), else 0;
    /// 0 too for no task, a task pinned to one CPU, or (v6.10+) one already on the
    /// largest capacity its affinity allows. Mainline v4.9 has no misfit (v4.20).
    pub(super) fn update_misfit_status(&mut self, cx: &Ctx, cpu: CpuId, p: Option<TaskId>) {
        if self.t.version == Version::V4_9 || !self.asym_cpucap(cx) {
            return;
        }
        let load = match p {
            Some(p) if self.is_misfit(cx, p, cpu) => self.task_h_load(p).max(1),
            _ => 0,
        };
        self.cpu[cpu].misfit_task_load = load;
    }

    /// The tests of `update_misfit_status` before the load is taken.
    fn is_misfit(&self, cx: &Ctx, p: TaskId, cpu: CpuId) -> bool {
        let aff = &cx.task(p).affinity;
        if aff.count() <= 1 {
            return false;
        }
        if self.t.version > Version::V5_15 {
            let max_allowed = aff.iter().map(|c| cx.capacity(c)).max().unwrap_or(0);
            if cx.capacity(cpu) == max_allowed {
                return false;
            }
        }
        !self.task_fits_cpu(cx, p, cpu)
    }

    /// `check_misfit_status(rq, sd)` (v5.15): a misfit task on a CPU smaller than the
    /// root domain's largest (`rd->max_cpu_capacity`); `check_cpu_capacity` (capacity
    /// lost to rt/irq) never holds here, `capacity_of` being the whole capacity.
    pub(super) fn check_misfit_status(&self, cx: &Ctx, cpu: CpuId) -> bool {
        self.cpu[cpu].misfit_task_load > 0 && (0..cx.nr_cpus()).any(|c| cx.capacity(c) > cx.capacity(cpu))
    }

    /// `select_idle_capacity` (v6.18): from `target`, wrapping over the asymmetric domain
    /// (the whole machine here), the first idle CPU that fits the task with its hints
    /// (`util_fits_cpu` > 0); else the best fit — a CPU missing only `uclamp_min` (−1)
    /// before one the task does not fit (0) — and, among equals, the largest capacity (the
    /// first of equals). v5.15: the first idle CPU `uclamp_task_util` fits, else the
    /// largest idle one.
    pub(super) fn select_idle_capacity(&self, cx: &Ctx, p: TaskId, target: CpuId) -> Option<CpuId> {
        let n = cx.nr_cpus();
        let (mut best, mut best_fits, mut best_cap) = (None, 0, 0);
        for cpu in (0..n).map(|k| (target + k) % n).filter(|&c| cx.allowed(p, c)) {
            if !(self.idle(cx, cpu) || self.sched_idle_cpu(cpu)) {
                continue;
            }
            let fits = self.task_fits(cx, p, cpu);
            if fits > 0 {
                return Some(cpu);
            }
            // A −1 compares by `get_actual_cpu_capacity`, the same whole capacity here.
            let cap = cx.capacity(cpu);
            if fits < best_fits || (fits == best_fits && cap > best_cap) {
                (best, best_fits, best_cap) = (Some(cpu), fits, cap);
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::World;
    use schedlab_sched_api::{CpuScale, EnergyModel, SchedClass, TaskPolicy};

    /// gs101's energy model computed here by hand from the preset's tables, as
    /// `em_init_performance` and `em_compute_costs` (v6.18) do.
    fn hand_em(m: &schedlab_machine::Machine) -> EnergyModel {
        let caps = [160u64, 498, 1024];
        let domains = m
            .freq
            .domains
            .iter()
            .zip(caps)
            .map(|(d, cap)| PerfDomain {
                cpus: d.cpus.iter().collect(),
                capacity: cap as u32,
                states: d
                    .khz
                    .iter()
                    .zip(&d.power_uw)
                    .map(|(&khz, &power_uw)| {
                        let performance = cap * khz / d.max_khz();
                        let cost = power_uw * 10 / performance;
                        let cost_fmax = d.max_khz() * power_uw / khz;
                        PerfState { khz, power_uw, performance, cost, cost_fmax, inefficient: false }
                    })
                    .collect(),
            })
            .collect();
        EnergyModel { domains, schedutil: true, freq_invariant: true }
    }

    /// `compute_energy` (v6.18) of the little cluster, without the task and with it on
    /// CPU 1, against the formula: busy time `Σ util` (the task's util added for a
    /// placement), the busiest CPU's `1.25 × util` picking the first state whose
    /// performance reaches it, energy `cost × busy`.
    #[test]
    fn compute_energy_matches_the_formula() {
        let m = schedlab_machine::preset("big-little").unwrap();
        let mut w = World::new(m.clone());
        w.em = hand_em(&m);
        for (c, s) in w.scale.iter_mut().enumerate() {
            *s = CpuScale { capacity: [160, 160, 160, 160, 498, 498, 1024, 1024][c], freq: 1024 };
        }
        let mut f = Fair::eevdf(&m, &[]).unwrap();
        let p = w.add_task(0, TaskPolicy::Normal, 0);
        w.ctx(|cx| f.task_new(cx, p, None));
        let se = f.task_se(p);
        f.ents[se.0 as usize].avg.util_avg = 30;
        for (cpu, util) in [(0, 40u64), (1, 20), (2, 0), (3, 0)] {
            let a = &mut f.rqs[cpu].avg;
            (a.util_avg, a.runnable_avg) = (util, util);
        }
        let em = w.em.clone();
        let pd = &em.domains[0];
        let (base, on1) = w.ctx(|cx| {
            assert!(f.sched_energy_enabled(cx));
            let mut eenv = Eenv { task_busy_time: 30, cpu_cap: 160, pd_cap: 640, ..Eenv::default() };
            f.eenv_pd_busy_time(cx, &mut eenv, pd, p);
            (f.compute_energy(cx, &eenv, pd, p, None), f.compute_energy(cx, &eenv, pd, p, Some(1)))
        });
        let cost_at = |util: u64| pd.states.iter().find(|s| s.performance >= util).unwrap().cost;
        // Without the task: CPU 0 keeps 40 − 30 = 10, CPU 1 20; busiest 20 → 25.
        assert_eq!(base, cost_at(20 + 20 / 4) * (10 + 20));
        // On CPU 1: busiest 20 + 30 = 50 → 62; busy 30 + 30.
        assert_eq!(on1, cost_at(50 + 50 / 4) * (30 + 30));
        assert!(on1 > base);
        // v5.15: cost × Σ util / capacity at the first frequency ≥ 1.25 × fmax × max / cap.
        let fmax = pd.states.last().unwrap().khz;
        let v5 = w.ctx(|cx| f.compute_energy_v5_15(cx, pd, p, Some(1)));
        let freq = (fmax + fmax / 4) * 50 / 160;
        let ps = pd.states.iter().find(|s| s.khz >= freq).unwrap();
        assert_eq!(v5, ps.cost_fmax * 60 / 160);
        // uclamp (v6.18 `eenv_pd_max_util`): on the destination, with its runqueue idle,
        // the task's clamps bound `sugov_effective_cpu_perf`: min 100 lifts 62 to 100;
        // max 40 caps it at 40; the busy time is unchanged.
        f.uclamp.used = true;
        for (min, max, perf) in [(Some(100), None, 100), (None, Some(40), 40)] {
            w.tasks[p].uclamp = schedlab_sched_api::UclampReq { min, max };
            let e = w.ctx(|cx| {
                let mut eenv = Eenv { task_busy_time: 30, cpu_cap: 160, pd_cap: 640, ..Eenv::default() };
                f.eenv_pd_busy_time(cx, &mut eenv, pd, p);
                f.compute_energy(cx, &eenv, pd, p, Some(1))
            });
            assert_eq!(e, cost_at(perf) * (30 + 30), "min {min:?} max {max:?}");
        }
    }

    /// `capacity_greater` is a ~5 % margin (1078/1024); a misfit group ranks between
    /// overloaded and fully busy (`group_classify`).
    #[test]
    fn capacity_greater_and_misfit_rank() {
        use super::super::select::{group_classify, GroupStats, GroupType};
        assert!(capacity_greater(1024, 160) && capacity_greater(498, 160));
        assert!(!capacity_greater(1024, 1000) && !capacity_greater(1024, 1024));
        let mut s = GroupStats::new(1);
        s.sum_nr_running = 1;
        s.group_util = 1024;
        s.group_runnable = 1024;
        assert_eq!(group_classify(117, &s), GroupType::FullyBusy);
        s.group_misfit_task_load = 1;
        assert_eq!(group_classify(117, &s), GroupType::MisfitTask);
        s.sum_nr_running = 2;
        assert_eq!(group_classify(117, &s), GroupType::Overloaded);
    }

    /// `util_fits_cpu` (v6.18) on big-little's capacities: unused uclamp is
    /// `fits_capacity`; a `uclamp_max` at or below a CPU's capacity fits whatever the
    /// utilisation, except the uncapped 1024 on a 1024 CPU; a `uclamp_min` above the
    /// capacity with the utilisation below it is −1; v5.15 clamps the task's utilisation
    /// first (`uclamp_task_util`).
    #[test]
    fn util_fits_cpu_follows_the_clamps() {
        let m = schedlab_machine::preset("big-little").unwrap();
        let mut w = World::new(m.clone());
        for (c, s) in w.scale.iter_mut().enumerate() {
            *s = CpuScale { capacity: [160, 160, 160, 160, 498, 498, 1024, 1024][c], freq: 1024 };
        }
        let mut f = Fair::eevdf(&m, &[]).unwrap();
        w.ctx(|cx| {
            assert_eq!(f.util_fits_cpu(cx, 150, 0, 100, 0), 0, "unused: only fits_capacity");
            f.uclamp.used = true;
            assert_eq!(f.util_fits_cpu(cx, 150, 0, 100, 0), 1, "capped at 100 ≤ 160: fits");
            assert_eq!(f.util_fits_cpu(cx, 150, 0, 1024, 0), 0);
            assert_eq!(f.util_fits_cpu(cx, 1000, 0, 1024, 6), 0, "the biggest CPU, uncapped: fits_capacity");
            assert_eq!(f.util_fits_cpu(cx, 1000, 0, 1000, 6), 1);
            assert_eq!(f.util_fits_cpu(cx, 64, 400, 1024, 0), -1, "uclamp_min above 160");
            assert_eq!(f.util_fits_cpu(cx, 64, 400, 1024, 4), 1);
            assert_eq!(f.util_fits_cpu(cx, 64, 400, 100, 0), 1, "min capped by max");
        });
        let mut g = Fair::cfs(&m, &[]).unwrap();
        let p = w.add_task(0, TaskPolicy::Normal, 0);
        w.tasks[p].uclamp.min = Some(400);
        w.ctx(|cx| g.task_new(cx, p, None));
        let se = g.task_se(p);
        g.ents[se.0 as usize].avg.util_avg = 64;
        g.uclamp.used = true;
        w.ctx(|cx| {
            assert!(!g.task_fits_cpu(cx, p, 4), "v5.15: 400 × 1280 > 498 × 1024");
            assert!(g.task_fits_cpu(cx, p, 6));
        });
    }

    #[test]
    fn fits_capacity_is_the_80_percent_margin() {
        assert!(fits_capacity(127, 160) && !fits_capacity(128, 160));
        assert!(fits_capacity(819, 1024) && !fits_capacity(820, 1024));
    }
}
