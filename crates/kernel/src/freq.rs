//! CPU frequency and capacity: the cpufreq governor of each frequency domain (a cpufreq
//! policy) and what the frequency does to work.
//!
//! - Governors: `performance` and `powersave` (`drivers/cpufreq/cpufreq_performance.c`,
//!   `cpufreq_powersave.c`: the policy's maximum or minimum, fixed for the run) and
//!   `schedutil` (`kernel/sched/cpufreq_schedutil.c`, v5.15 and v6.18: `sugov_update_single_freq`,
//!   `sugov_update_shared`, `sugov_get_util`, `get_next_freq`, `sugov_should_update_freq`,
//!   `sugov_update_next_freq`, `sugov_iowait_boost`, `sugov_iowait_apply`,
//!   `sugov_hold_freq`), run at the kernel's `cpufreq_update_util` points, which the
//!   scheduling classes reach through `Request::Cpufreq`. Frequency changes take effect at
//!   once (a fast-switching driver, `cpufreq_driver_fast_switch`).
//! - Work: full-speed work runs on a CPU at `f / f_max × capacity / 1024` of full speed,
//!   one factor of the per-CPU work rate (with SMT and memory's): a change re-times the work
//!   in progress exactly as an SMT change does.
//! - Invariance: the kernel keeps each CPU's `arch_scale_cpu_capacity` and
//!   `arch_scale_freq_capacity` (`CpuScale`, read by the policies' PELT through
//!   `Ctx::scale`); the frequency scale follows the frequency when it changes, as the
//!   cpufreq-based `topology_set_freq_scale` does (`drivers/base/arch_topology.c`; x86's
//!   APERF/MPERF ratio averages over the tick instead), and stays 1024 on a machine that is
//!   not frequency-invariant.
//!
//! schedutil starts each domain at its lowest frequency (a cold CPU); the governors' limits
//! never change during a run (no `limits_changed`).

use crate::Kernel;
use schedlab_machine::{FreqGovernor, Machine, SugovVersion};
use schedlab_sched_api::cpufreq::{CpuScale, CpuUtil, IOWAIT, SCALE};
use schedlab_sim::{CpuId, Ns};

/// `IOWAIT_BOOST_MIN` (cpufreq_schedutil.c, v5.15 and v6.18): `SCHED_CAPACITY_SCALE / 8`.
const IOWAIT_BOOST_MIN: u64 = SCALE as u64 / 8;

/// schedutil's per-policy state (`struct sugov_policy`).
#[derive(Clone, Debug, Default)]
struct Domain {
    khz: u64,
    min_khz: u64,
    max_khz: u64,
    /// `freq_update_delay_ns`: `rate_limit_us × 1000`.
    delay_ns: u64,
    /// `None` before the first change: `sugov_start` zeroes it, and the kernel's clock is
    /// then far past one rate limit, so the first update is never rate-limited (the
    /// model's clock starts at 0).
    last_freq_update_time: Option<u64>,
    next_freq: u64,
    cached_raw_freq: u64,
    need_freq_update: bool,
    cpus: Vec<CpuId>,
    /// `cpufreq_stats`' `time_in_state` per table frequency (closed up to `since`) and
    /// `total_trans` (`drivers/cpufreq/cpufreq_stats.c`).
    time_in_state: Vec<u64>,
    since: u64,
    trans: u64,
}

/// schedutil's per-CPU state (`struct sugov_cpu`).
#[derive(Clone, Copy, Debug, Default)]
struct SgCpu {
    last_update: u64,
    /// The classes' utilisation at this CPU's last update (what a shared policy reads).
    input: CpuUtil,
    util: u64,
    iowait_boost: u64,
    iowait_boost_pending: bool,
    saved_idle_calls: u64,
}

/// Frequencies, capacities and the governor: what the kernel keeps of them.
pub(crate) struct Speed {
    /// The frequency model is on (`Models::freq`): the rate factor and scales apply.
    pub on: bool,
    /// Per CPU, `arch_scale_cpu_capacity` and `arch_scale_freq_capacity` (`Ctx::scale`).
    pub scale: Vec<CpuScale>,
    /// Some CPU's scale is not 1024 (`Ctx::scaled`).
    pub scaled: bool,
    /// schedutil listens to `cpufreq_update_util` (`Ctx::cpufreq`).
    pub listens: bool,
    /// Per CPU, its frequency factor of the work rate, permille of full speed.
    pub rate: Vec<u32>,
    doms: Vec<Domain>,
    cpu_dom: Vec<usize>,
    sg: Vec<SgCpu>,
    version: Option<SugovVersion>,
    invariant: bool,
    capacity: Vec<u64>,
    tick: u64,
}

impl Speed {
    /// The frequency state of `machine` at boot, for a kernel with tick period `tick`.
    pub(crate) fn new(machine: &Machine, tick: Ns) -> Speed {
        let n = machine.nr_cpus();
        let f = &machine.freq;
        let on = machine.models().freq;
        let mut s = Speed {
            on,
            scale: vec![CpuScale::default(); n],
            scaled: false,
            listens: on && f.sugov_version().is_some(),
            rate: vec![1000; n],
            doms: Vec::new(),
            cpu_dom: vec![usize::MAX; n],
            sg: vec![SgCpu::default(); n],
            version: f.sugov_version(),
            invariant: f.invariant,
            capacity: machine.capacities(),
            tick: tick.0,
        };
        if !on {
            return s;
        }
        for (i, d) in f.domains.iter().enumerate() {
            let cpus: Vec<CpuId> = d.cpus.iter().filter(|&c| c < n).collect();
            cpus.iter().for_each(|&c| s.cpu_dom[c] = i);
            let khz = match f.governor {
                FreqGovernor::Performance => d.max_khz(),
                _ => d.min_khz(),
            };
            let delay_ns = f.rate_limit_us(i).unwrap_or(0) * 1000;
            s.doms.push(Domain {
                khz,
                min_khz: d.min_khz(),
                max_khz: d.max_khz(),
                delay_ns,
                cpus,
                time_in_state: vec![0; d.khz.len()],
                ..Domain::default()
            });
        }
        for i in 0..s.doms.len() {
            s.set_scales(machine, i);
        }
        s
    }

    /// Recomputes the scales and rate factors of domain `d`'s CPUs from its frequency.
    fn set_scales(&mut self, machine: &Machine, d: usize) {
        let dom = &self.doms[d];
        let fd = &machine.freq.domains[d];
        let freq = if self.invariant { fd.freq_scale(dom.khz) as u32 } else { SCALE };
        for &c in &dom.cpus {
            let cap = self.capacity[c];
            self.scale[c] = CpuScale { capacity: cap as u32, freq };
            let r = u128::from(dom.khz) * 1000 * u128::from(cap) / (u128::from(dom.max_khz.max(1)) * 1024);
            self.rate[c] = (r as u32).clamp(1, 1000);
        }
        self.scaled = self.scale.iter().any(|s| !s.is_unit());
    }

    /// Closes domain `d`'s time at its current frequency up to `now`.
    fn account(&mut self, machine: &Machine, d: usize, now: u64) {
        let dom = &mut self.doms[d];
        if let Some(i) = machine.freq.domains[d].khz.iter().position(|&f| f == dom.khz) {
            dom.time_in_state[i] += now.saturating_sub(dom.since);
        }
        dom.since = now;
    }

    /// The frequency of `cpu`'s domain, kHz (0 without cpufreq).
    pub(crate) fn khz(&self, cpu: CpuId) -> u64 {
        self.doms.get(self.cpu_dom[cpu]).map_or(0, |d| d.khz)
    }

    /// `sugov_iowait_reset`: a boost older than a tick is dropped (or restarts at the
    /// minimum for an update flagged iowait). Returns whether it reset.
    fn iowait_reset(&mut self, cpu: CpuId, time: u64, set: bool) -> bool {
        let tick = self.tick;
        let sg = &mut self.sg[cpu];
        if time.saturating_sub(sg.last_update) <= tick {
            return false;
        }
        sg.iowait_boost = if set { IOWAIT_BOOST_MIN } else { 0 };
        sg.iowait_boost_pending = set;
        true
    }

    /// `sugov_iowait_boost`: an update flagged iowait starts or doubles the boost, once per
    /// update.
    fn iowait_boost(&mut self, cpu: CpuId, time: u64, flags: u32) {
        let set = flags & IOWAIT != 0;
        if self.sg[cpu].iowait_boost != 0 && self.iowait_reset(cpu, time, set) {
            return;
        }
        let sg = &mut self.sg[cpu];
        if !set || sg.iowait_boost_pending {
            return;
        }
        sg.iowait_boost_pending = true;
        sg.iowait_boost =
            if sg.iowait_boost != 0 { (sg.iowait_boost << 1).min(SCALE as u64) } else { IOWAIT_BOOST_MIN };
    }

    /// `sugov_iowait_apply` (v6.18's shape; v5.15 applies the same value as a floor): the
    /// boost in capacity units, halved on updates without a new iowait.
    fn iowait_apply(&mut self, cpu: CpuId, time: u64) -> u64 {
        if self.sg[cpu].iowait_boost == 0 || self.iowait_reset(cpu, time, false) {
            return 0;
        }
        let sg = &mut self.sg[cpu];
        if !sg.iowait_boost_pending {
            sg.iowait_boost >>= 1;
            if sg.iowait_boost < IOWAIT_BOOST_MIN {
                sg.iowait_boost = 0;
                return 0;
            }
        }
        sg.iowait_boost_pending = false;
        (sg.iowait_boost * self.capacity[cpu]) >> 10
    }

    /// `sugov_get_util` with the boost: `effective_cpu_util` and, on v6.18,
    /// `sugov_effective_cpu_perf` (the 1.25 headroom between the minimum — the deadline
    /// bandwidth or the runqueue's uclamp minimum — and the maximum, the capacity or the
    /// runqueue's uclamp maximum); v5.15 clamps the cfs + rt sum and the boost with
    /// `uclamp_rq_util_with` and adds the headroom later, in `get_next_freq`. With uclamp
    /// not used, a runnable rt task asks for the whole capacity; with it, the rt tasks'
    /// default minimum of 1024 does. No IRQ time.
    fn get_util(&mut self, cpu: CpuId, boost: u64) -> u64 {
        let u = self.sg[cpu].input;
        let cap = self.capacity[cpu];
        let util = match self.version {
            Some(SugovVersion::V6_18) => {
                let (mut min, max) = (u64::from(u.dl_bw), cap);
                let max = if u.uclamp_used {
                    min = min.max(u64::from(u.uclamp_min));
                    max.min(u64::from(u.uclamp_max))
                } else {
                    if u.rt_runnable {
                        min = min.max(cap);
                    }
                    max
                };
                let sum = u64::from(u.cfs) + u64::from(u.rt) + u64::from(u.dl);
                let util = sum.min(cap).max(boost);
                // map_util_perf, then max(min, min(actual, max)).
                let actual = util + (util >> 2);
                min.max(actual.min(max))
            }
            _ => {
                let util = if u.rt_runnable && !u.uclamp_used {
                    cap
                } else {
                    let util = uclamp_rq_util_with(&u, u64::from(u.cfs) + u64::from(u.rt));
                    if util + u64::from(u.dl) >= cap {
                        cap
                    } else {
                        (util + u64::from(u.dl_bw)).min(cap)
                    }
                };
                util.max(uclamp_rq_util_with(&u, boost))
            }
        };
        self.sg[cpu].util = util;
        util
    }

    /// `get_next_freq`: `util / max` of the reference frequency — `cpuinfo.max_freq` when
    /// invariant, else the current frequency (v6.18: with its own 1.25 margin) — v5.15 with
    /// the 1.25 headroom here; then the lowest table frequency at or above it
    /// (`cpufreq_driver_resolve_freq`), unless the raw value did not change.
    fn get_next_freq(&mut self, machine: &Machine, d: usize, util: u64, max: u64) -> u64 {
        let dom = &self.doms[d];
        let (reference, util) = match self.version {
            Some(SugovVersion::V6_18) => (if self.invariant { dom.max_khz } else { dom.khz + (dom.khz >> 2) }, util),
            _ => (if self.invariant { dom.max_khz } else { dom.khz }, util + (util >> 2)),
        };
        let raw = reference * util / max.max(1);
        let dom = &mut self.doms[d];
        if raw == dom.cached_raw_freq && !dom.need_freq_update {
            return dom.next_freq;
        }
        dom.cached_raw_freq = raw;
        machine.freq.domains[d].resolve_khz(raw).clamp(dom.min_khz, dom.max_khz)
    }

    /// `sugov_should_update_freq`: the rate limit since the last frequency change.
    fn should_update(&self, d: usize, time: u64) -> bool {
        let dom = &self.doms[d];
        dom.need_freq_update || dom.last_freq_update_time.is_none_or(|t| time.saturating_sub(t) >= dom.delay_ns)
    }

    /// `sugov_update_next_freq`: whether `next` is a change to make.
    fn update_next_freq(&mut self, d: usize, time: u64, next: u64) -> bool {
        let dom = &mut self.doms[d];
        if dom.need_freq_update {
            dom.need_freq_update = false;
        } else if dom.next_freq == next {
            return false;
        }
        dom.next_freq = next;
        dom.last_freq_update_time = Some(time);
        true
    }

    /// `sugov_update_single_freq` / `sugov_update_shared` for an update of `cpu` at
    /// `time` with `flags` and the classes' utilisation; `idle_calls`: the CPU's idle
    /// entries so far. Returns the domain whose frequency changed.
    fn update(
        &mut self,
        machine: &Machine,
        cpu: CpuId,
        time: u64,
        flags: u32,
        util: CpuUtil,
        idle_calls: u64,
    ) -> Option<usize> {
        let d = *self.cpu_dom.get(cpu)?;
        if d == usize::MAX {
            return None;
        }
        self.sg[cpu].input = util;
        self.iowait_boost(cpu, time, flags);
        self.sg[cpu].last_update = time;
        if !self.should_update(d, time) {
            return None;
        }
        let max_cap = self.capacity[cpu];
        let next = if self.doms[d].cpus.len() == 1 {
            let cached = self.doms[d].cached_raw_freq;
            let boost = self.iowait_apply(cpu, time);
            let u = self.get_util(cpu, boost);
            let mut next = self.get_next_freq(machine, d, u, max_cap);
            // sugov_hold_freq (v5.15: sugov_cpu_is_busy): no idle since the last update →
            // no lowering yet.
            let busy = idle_calls == self.sg[cpu].saved_idle_calls;
            self.sg[cpu].saved_idle_calls = idle_calls;
            let dom = &mut self.doms[d];
            if busy && next < dom.next_freq && !dom.need_freq_update {
                next = dom.next_freq;
                dom.cached_raw_freq = if self.version == Some(SugovVersion::V6_18) { cached } else { 0 };
            }
            next
        } else {
            // sugov_next_freq_shared: the most any CPU of the policy needs.
            let mut u = 0;
            for j in self.doms[d].cpus.clone() {
                let boost = self.iowait_apply(j, time);
                u = u.max(self.get_util(j, boost));
            }
            self.get_next_freq(machine, d, u, max_cap)
        };
        if !self.update_next_freq(d, time, next) {
            return None;
        }
        if self.doms[d].khz == next {
            return None;
        }
        self.account(machine, d, time);
        self.doms[d].khz = next;
        self.doms[d].trans += 1;
        self.set_scales(machine, d);
        Some(d)
    }
}

/// `uclamp_rq_util_with(rq, util, NULL)` (kernel/sched/sched.h, v5.15): `util` clamped to
/// the runqueue's aggregated values, the minimum winning an inversion; `util` itself when
/// uclamp is not used.
fn uclamp_rq_util_with(u: &CpuUtil, util: u64) -> u64 {
    if !u.uclamp_used {
        return util;
    }
    let (min, max) = (u64::from(u.uclamp_min), u64::from(u.uclamp_max));
    if min >= max {
        return min;
    }
    util.clamp(min, max)
}

/// A frequency domain's statistics (`cpufreq_stats`): time at each table frequency and
/// the number of changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpufreqStats {
    /// `(kHz, time)` per table frequency, ascending.
    pub time_in_state: Vec<(u64, Ns)>,
    pub total_trans: u64,
}

impl Kernel<'_> {
    /// The current frequency of `cpu`, kHz; 0 when the frequency model is off.
    pub fn cpufreq_khz(&self, cpu: CpuId) -> u64 {
        if self.speed.on && cpu < self.speed.cpu_dom.len() {
            self.speed.khz(cpu)
        } else {
            0
        }
    }

    /// The statistics of `cpu`'s frequency domain up to now; `None` when the frequency
    /// model is off.
    pub fn cpufreq_stats(&self, cpu: CpuId) -> Option<CpufreqStats> {
        let d = *self.speed.cpu_dom.get(cpu).filter(|&&d| self.speed.on && d != usize::MAX)?;
        let dom = &self.speed.doms[d];
        let table = &self.machine.freq.domains[d].khz;
        let mut time_in_state: Vec<(u64, Ns)> =
            table.iter().zip(&dom.time_in_state).map(|(&f, &t)| (f, Ns(t))).collect();
        if let Some(e) = time_in_state.iter_mut().find(|e| e.0 == dom.khz) {
            e.1 += Ns(self.now.0.saturating_sub(dom.since));
        }
        Some(CpufreqStats { time_in_state, total_trans: dom.trans })
    }

    /// `rate` (permille: SMT share × memory factor, `Kernel::work_rate`) times `cpu`'s
    /// frequency factor: the work rate is a product of independent factors.
    #[inline]
    pub(crate) fn freq_rate(&self, cpu: CpuId, rate: u32) -> u32 {
        if self.speed.on {
            ((u64::from(rate) * u64::from(self.speed.rate[cpu]) / 1000) as u32).max(1)
        } else {
            rate
        }
    }

    /// `cpufreq_update_util(cpu_rq(cpu), flags)` reaching the governor
    /// (`Request::Cpufreq`): a frequency change re-times the domain's work in progress.
    pub(crate) fn cpufreq_update_util(&mut self, cpu: CpuId, flags: u32, util: CpuUtil) {
        if !self.speed.listens || cpu >= self.cpus.len() {
            return;
        }
        let calls = self.cpuidle.cpus.get(cpu).map_or(0, |c| c.calls);
        let machine = self.machine.clone();
        let Some(d) = self.speed.update(&machine, cpu, self.now.0, flags, util, calls) else { return };
        let cpus = self.speed.doms[d].cpus.clone();
        self.energy_freq_changed(&cpus);
        for c in cpus {
            let core = machine.topology.cpus[c].core;
            if !self.smt_dirty[core] {
                self.smt_dirty[core] = true;
                self.smt_dirty_list.push(core);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_machine::{CostModel, CpuSet, Freq, FreqDomain};

    /// Two CPUs, 1–3 GHz in 100 MHz steps, one domain of both (`shared`) or one each,
    /// under `governor`, invariant.
    fn machine(governor: FreqGovernor, shared: bool) -> Machine {
        let mut m = schedlab_machine::preset("smp2").expect("preset");
        m.set_cost_model(CostModel::Full);
        let d = |cpus: CpuSet| FreqDomain {
            cpus,
            khz: (10..=30).map(|i| i * 100_000).collect(),
            power_uw: Vec::new(),
            transition_latency: Ns(0),
            transition_delay_us: Some(1000),
            capacity: None,
            dmips_mhz: None,
            scale_ref_khz: None,
        };
        let domains = if shared { vec![d(CpuSet::full(2))] } else { (0..2).map(|c| d(CpuSet::single(2, c))).collect() };
        m.freq = Freq { governor, invariant: true, rate_limit_us: None, domains };
        m
    }

    fn util(cfs: u32) -> CpuUtil {
        CpuUtil { cfs, ..CpuUtil::default() }
    }

    #[test]
    fn performance_and_powersave_are_fixed() {
        let m = machine(FreqGovernor::Performance, false);
        let s = Speed::new(&m, Ns(4_000_000));
        assert_eq!((s.khz(0), s.rate[0], s.listens), (3_000_000, 1000, false));
        let m = machine(FreqGovernor::Powersave, false);
        let s = Speed::new(&m, Ns(4_000_000));
        assert_eq!((s.khz(0), s.rate[0], s.scale[0].freq), (1_000_000, 333, 1024 / 3));
    }

    /// `f = 1.25 × f_max × util / capacity`, resolved up to the table: util 256 → 937.5
    /// MHz → the lowest, 1 GHz; util 512 → 1875 MHz → 1.9 GHz; util 700 → 2563 MHz → 2.6 GHz;
    /// util 820 → 3 GHz (the tipping point at 80 %). Both versions agree when invariant.
    #[test]
    fn schedutil_frequency_formula() {
        for g in [FreqGovernor::Schedutil515, FreqGovernor::Schedutil618] {
            let m = machine(g, false);
            for (u, f) in [(256, 1_000_000), (512, 1_900_000), (820, 3_000_000), (700, 2_600_000)] {
                let mut s = Speed::new(&m, Ns(4_000_000));
                s.update(&m, 0, 10_000_000, 0, util(u), 1);
                assert_eq!(s.khz(0), f, "util {u} under {g:?}");
            }
        }
    }

    /// The rate limit: a second change within `rate_limit_us` waits; after it, it is made.
    #[test]
    fn schedutil_rate_limit() {
        let m = machine(FreqGovernor::Schedutil618, false);
        let mut s = Speed::new(&m, Ns(4_000_000));
        assert_eq!(s.update(&m, 0, 10_000_000, 0, util(512), 1), Some(0));
        assert_eq!(s.update(&m, 0, 10_500_000, 0, util(820), 2), None, "within 1 ms");
        assert_eq!(s.khz(0), 1_900_000);
        assert_eq!(s.update(&m, 0, 11_000_000, 0, util(820), 3), Some(0));
        assert_eq!(s.khz(0), 3_000_000);
        // Lowering while the CPU has not idled since the last update is held back.
        assert_eq!(s.update(&m, 0, 13_000_000, 0, util(100), 3), None);
        assert_eq!(s.update(&m, 0, 15_000_000, 0, util(100), 4), Some(0));
        assert_eq!(s.khz(0), 1_000_000);
    }

    /// The first update, at boot, is not rate-limited (`sugov_start` zeroes
    /// `last_freq_update_time`, long before).
    #[test]
    fn first_update_is_not_rate_limited() {
        let m = machine(FreqGovernor::Schedutil618, false);
        let mut s = Speed::new(&m, Ns(4_000_000));
        assert_eq!(s.update(&m, 0, 0, 0, util(512), 0), Some(0));
        assert_eq!(s.khz(0), 1_900_000);
    }

    /// The iowait boost: 128, doubled per iowait update, halved per other update.
    #[test]
    fn iowait_boost_doubles_and_halves() {
        let m = machine(FreqGovernor::Schedutil618, false);
        let mut s = Speed::new(&m, Ns(4_000_000));
        let t = 10_000_000;
        s.iowait_boost(0, t, IOWAIT);
        assert_eq!(s.sg[0].iowait_boost, 128);
        s.sg[0].last_update = t;
        assert_eq!(s.iowait_apply(0, t), 128);
        s.iowait_boost(0, t + 1000, IOWAIT);
        s.sg[0].last_update = t + 1000;
        assert_eq!(s.iowait_apply(0, t + 1000), 256);
        s.iowait_boost(0, t + 2000, 0);
        s.sg[0].last_update = t + 2000;
        assert_eq!(s.iowait_apply(0, t + 2000), 128, "halved");
        s.iowait_boost(0, t + 3000, 0);
        assert_eq!(s.iowait_apply(0, t + 3000), 0, "below the minimum: off");
        s.iowait_boost(0, t, IOWAIT);
        assert_eq!(s.iowait_apply(0, t + 10_000_000), 0, "older than a tick: reset");
    }

    /// The frequency factor of the work rate and a big.LITTLE capacity multiply.
    #[test]
    fn rate_is_frequency_times_capacity() {
        let m = {
            let mut m = schedlab_machine::preset("big-little").expect("preset");
            m.set_cost_model(CostModel::Full);
            m.freq.governor = FreqGovernor::Performance;
            m
        };
        let s = Speed::new(&m, Ns(4_000_000));
        let caps = m.capacities();
        for (c, cap) in caps.iter().enumerate() {
            assert_eq!(u64::from(s.rate[c]), cap * 1000 / 1024, "CPU {c} at f_max runs at its capacity");
        }
    }
}
