//! What a policy and the kernel tell each other about CPU speed — data, never the cost
//! model: the per-CPU scale factors the kernel keeps (`arch_scale_cpu_capacity`,
//! `arch_scale_freq_capacity`), which PELT's invariance reads, and the utilisation a
//! scheduling class hands to the cpufreq governor at the kernel's `cpufreq_update_util`
//! points (`include/linux/sched/cpufreq.h`, `kernel/sched/sched.h`).

/// `SCHED_CAPACITY_SCALE`: the biggest CPU at its reference frequency.
pub const SCALE: u32 = 1024;

/// `SCHED_CPUFREQ_IOWAIT` (`include/linux/sched/cpufreq.h`, v5.15 and v6.18): the update
/// comes from the enqueue of a task that slept in I/O wait (`p->in_iowait`), which
/// schedutil answers with its iowait boost.
pub const IOWAIT: u32 = 1 << 0;

/// One CPU's scale factors, each in [`SCALE`] units, kept by the kernel where they change
/// (a frequency change; capacities are fixed for a run) and read by policies through
/// [`crate::Ctx::scale`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuScale {
    /// `arch_scale_cpu_capacity(cpu)`: 1024 for the biggest CPU.
    pub capacity: u32,
    /// `arch_scale_freq_capacity(cpu)`: the current frequency over the reference one,
    /// at most 1024; always 1024 on a platform that is not frequency-invariant
    /// (`arch_scale_freq_invariant()` false).
    pub freq: u32,
}

impl Default for CpuScale {
    fn default() -> Self {
        CpuScale { capacity: SCALE, freq: SCALE }
    }
}

impl CpuScale {
    /// Both factors at 1024: time needs no scaling.
    pub fn is_unit(self) -> bool {
        self.capacity == SCALE && self.freq == SCALE
    }

    /// `cap_scale(cap_scale(delta, capacity), freq)` (`kernel/sched/pelt.h:
    /// update_rq_clock_pelt`, v5.1+): `delta` of wall time as the amount of computation
    /// the biggest CPU at its reference frequency would have done; each product shifted
    /// down by `SCHED_CAPACITY_SHIFT` in turn, as the kernel rounds.
    pub fn scale_delta(self, delta: u64) -> u64 {
        let d = ((u128::from(delta) * u128::from(self.capacity)) >> 10) as u64;
        ((u128::from(d) * u128::from(self.freq)) >> 10) as u64
    }
}

/// The utilisation of one CPU as schedutil's `sugov_get_util` reads it from the classes,
/// at a `cpufreq_update_util` call (`Request::Cpufreq`), in capacity units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuUtil {
    /// The fair class's figure for its version: v5.15 `cpu_util_cfs` (the root runqueue's
    /// `util_avg`), v6.5+ `cpu_util_cfs_boost` (`max(util_avg, runnable_avg)`), at most
    /// the CPU's capacity.
    pub cfs: u32,
    /// `cpu_util_rt` (`rq->avg_rt.util_avg`).
    pub rt: u32,
    /// `cpu_util_dl` (`rq->avg_dl.util_avg`).
    pub dl: u32,
    /// `cpu_bw_dl`: the running bandwidth of the CPU's deadline tasks, in capacity units.
    pub dl_bw: u32,
    /// `rt_rq_is_runnable(&rq->rt)`: an rt task is queued and not throttled, which makes
    /// schedutil ask for the top frequency (when uclamp is not used).
    pub rt_runnable: bool,
    /// `uclamp_is_used()` (the `sched_uclamp_used` static key, kernel/sched/sched.h v5.15
    /// and v6.18): some task asked for a clamp. Off, the runqueue does not aggregate and
    /// the two values below mean nothing.
    pub uclamp_used: bool,
    /// `rq->uclamp[UCLAMP_MIN].value` (`uclamp_rq_get`): the max-aggregated minimum clamp
    /// of the CPU's runnable fair and rt tasks.
    pub uclamp_min: u32,
    /// `rq->uclamp[UCLAMP_MAX].value`: the max-aggregated maximum clamp (kept at the last
    /// task's value while the CPU idles, `uclamp_idle_value`).
    pub uclamp_max: u32,
}

/// A task's requested utilisation clamps (`p->uclamp_req[]`, set by `sched_setattr` with
/// `SCHED_FLAG_UTIL_CLAMP_MIN` / `_MAX`), in capacity units 0..=1024; `None`: not set by
/// the user (`user_defined` false), so the kernel's default applies (`uclamp_none`: 0 for
/// the minimum, 1024 for the maximum; an rt task's minimum is
/// `sysctl_sched_uclamp_util_min_rt_default`, 1024).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UclampReq {
    pub min: Option<u32>,
    pub max: Option<u32>,
}

impl UclampReq {
    /// Neither clamp was asked for.
    pub fn is_none(self) -> bool {
        self.min.is_none() && self.max.is_none()
    }
}

/// One performance state of a performance domain (`struct em_perf_state`,
/// `include/linux/energy_model.h`), as the energy-model framework computes it when the
/// cpufreq driver registers the domain (`kernel/power/energy_model.c`), in integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PerfState {
    /// `frequency`, kHz.
    pub khz: u64,
    /// `power`: active power of one CPU at this frequency, µW (the unit since v5.19).
    pub power_uw: u64,
    /// `performance` (v6.9+ `em_init_performance`): the domain's capacity at this
    /// frequency, `capacity × khz / fmax`, truncated.
    pub performance: u64,
    /// `cost` as v6.9+ `em_compute_costs` computes it: `power × 10 / performance`; the
    /// domain's energy is then `cost × Σ util` (`em_cpu_energy`, v6.18).
    pub cost: u64,
    /// `cost` as v5.15 `em_create_perf_table` computes it: `fmax × power / frequency`; the
    /// energy is then `cost × Σ util / capacity` (`em_cpu_energy`, v5.15).
    pub cost_fmax: u64,
    /// `EM_PERF_STATE_INEFFICIENT`: some faster state costs no more (by [`PerfState::cost`]).
    pub inefficient: bool,
}

/// A performance domain (`struct perf_domain` around its `em_perf_domain`): CPUs that
/// share a frequency, with their capacity and their states in ascending frequency.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PerfDomain {
    /// `perf_domain_span`, ascending.
    pub cpus: Vec<schedlab_sim::CpuId>,
    /// `arch_scale_cpu_capacity` of the domain's CPUs.
    pub capacity: u32,
    pub states: Vec<PerfState>,
}

/// The root domain's energy model as the scheduler sees it (`rd->pd`, built by
/// `kernel/sched/topology.c: build_perf_domains`), and the facts `sched_energy_enabled`
/// is decided from that the kernel owns. `domains` is empty when there is no energy model:
/// the frequency model is off, or some domain has no power table (`pd_init` finds no
/// `em_cpu_get`, so the kernel builds no `rd->pd` at all).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EnergyModel {
    pub domains: Vec<PerfDomain>,
    /// Every domain's cpufreq policy is governed by schedutil (`build_perf_domains`:
    /// "schedutil is mandatory"; v6.18 `sched_is_eas_possible`).
    pub schedutil: bool,
    /// `arch_scale_freq_invariant()`: "frequency-invariant load tracking" is required.
    pub freq_invariant: bool,
}

/// No energy model (a context built outside a run, a machine without one).
pub static NO_ENERGY_MODEL: EnergyModel = EnergyModel { domains: Vec::new(), schedutil: false, freq_invariant: false };

impl PerfDomain {
    /// `perf_domain_span(pd)` contains `cpu`.
    pub fn spans(&self, cpu: schedlab_sim::CpuId) -> bool {
        self.cpus.binary_search(&cpu).is_ok()
    }
}
