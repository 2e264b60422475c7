//! CPU frequency: per-policy frequency domains (a cpufreq policy is also an energy-model
//! performance domain), the governor, frequency invariance and per-CPU capacity.

use crate::spec::{Field, Kind, Table, Val};
use crate::CpuSet;
use schedlab_sim::Ns;

/// `SCHED_CAPACITY_SCALE`: the biggest CPU's capacity.
pub const SCHED_CAPACITY_SCALE: u64 = 1024;
/// `EM_MAX_POWER` (`include/linux/energy_model.h`, µW since v5.19): 64 W.
pub const EM_MAX_POWER: u64 = 64_000_000;
/// The most frequencies one domain's table may list (a machine file's limit).
pub const MAX_OPPS: usize = 256;
/// `LATENCY_MULTIPLIER` (`include/linux/cpufreq.h`).
pub const LATENCY_MULTIPLIER: u64 = 1000;

/// One cpufreq policy: CPUs that change frequency together.
#[derive(Clone, Debug, PartialEq)]
pub struct FreqDomain {
    pub cpus: CpuSet,
    /// The frequency table in kHz, strictly ascending (`cpufreq_frequency_table`).
    pub khz: Vec<u64>,
    /// Active power of one CPU at each frequency, µW (`em_perf_state.power`, v5.19+);
    /// empty: no energy model.
    pub power_uw: Vec<u64>,
    /// `cpuinfo.transition_latency`.
    pub transition_latency: Ns,
    /// The driver's `transition_delay_us`, which takes precedence over the latency in the
    /// rate limit (`intel_cpufreq`: 500 µs without HWP); `None`: the driver sets none.
    pub transition_delay_us: Option<u64>,
    /// `arch_scale_cpu_capacity` given directly (1024 = the biggest CPU).
    pub capacity: Option<u64>,
    /// `capacity-dmips-mhz` from the device tree: the capacity is derived from it and the
    /// top frequency as `topology_normalize_cpu_scale` derives it ([`normalize_capacities`]).
    pub dmips_mhz: Option<u64>,
    /// The frequency at which `arch_scale_freq_capacity` reaches 1024 (x86: the 4-core
    /// turbo ratio, `arch/x86/kernel/cpu/aperfmperf.c`); `None`: the top frequency.
    pub scale_ref_khz: Option<u64>,
}

/// The cpufreq governor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FreqGovernor {
    /// No cpufreq driver (a VM, a fixed-clock machine): every CPU runs at one speed.
    None,
    /// `cpufreq_performance.c`: the policy maximum.
    Performance,
    /// `cpufreq_powersave.c`: the policy minimum.
    Powersave,
    /// `kernel/sched/cpufreq_schedutil.c` as of v5.15.
    Schedutil515,
    /// `kernel/sched/cpufreq_schedutil.c` as of v6.18 (the v6.8 rework).
    Schedutil618,
}

/// `[freq]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Freq {
    pub governor: FreqGovernor,
    /// PELT is frequency-invariant (`arch_scale_freq_invariant()`): x86 Intel from v5.7
    /// (APERF/MPERF), Arm with cpufreq- or AMU-based scaling; AMD family 10h never.
    pub invariant: bool,
    /// schedutil's `rate_limit_us` set explicitly; `None`: as the kernel derives it
    /// ([`Freq::rate_limit_us`]).
    pub rate_limit_us: Option<u64>,
    pub domains: Vec<FreqDomain>,
}

impl FreqDomain {
    pub fn min_khz(&self) -> u64 {
        self.khz.first().copied().unwrap_or(0)
    }
    pub fn max_khz(&self) -> u64 {
        self.khz.last().copied().unwrap_or(0)
    }

    /// The lowest table frequency at or above `target` kHz, the top one if none is
    /// (`cpufreq_driver_resolve_freq` → `cpufreq_frequency_table_target` with
    /// `CPUFREQ_RELATION_L`, on an ascending table).
    pub fn resolve_khz(&self, target: u64) -> u64 {
        self.khz.iter().copied().find(|&f| f >= target).unwrap_or(self.max_khz())
    }

    /// The power of one CPU at table frequency `khz`, µW, if the domain has an energy model.
    pub fn power_at(&self, khz: u64) -> Option<u64> {
        self.khz.iter().position(|&f| f == khz).and_then(|i| self.power_uw.get(i).copied())
    }

    /// `cpufreq_policy_transition_delay_us` of `version`: the driver's
    /// `transition_delay_us` if set; else from `transition_latency` in whole µs — v6.18:
    /// 1.5 × it, v5.15: × `LATENCY_MULTIPLIER` capped at 10 ms; a zero latency gives
    /// 1000 µs (`drivers/cpufreq/cpufreq.c`).
    pub fn transition_delay(&self, version: SugovVersion) -> u64 {
        if let Some(d) = self.transition_delay_us {
            return d;
        }
        let latency = self.transition_latency.0 / 1000;
        match (latency, version) {
            (0, _) => LATENCY_MULTIPLIER,
            (l, SugovVersion::V6_18) => l + (l >> 1),
            (l, SugovVersion::V5_15) => (l * LATENCY_MULTIPLIER).min(10_000),
        }
    }

    /// `arch_scale_freq_capacity` at `khz`: `khz × 1024 / reference`, at most 1024
    /// (`arch/x86/kernel/cpu/aperfmperf.c: scale_freq_tick`; `drivers/base/arch_topology.c:
    /// topology_set_freq_scale`), in integer arithmetic.
    pub fn freq_scale(&self, khz: u64) -> u64 {
        let reference = self.scale_ref_khz.unwrap_or(self.max_khz()).max(1);
        (khz * SCHED_CAPACITY_SCALE / reference).min(SCHED_CAPACITY_SCALE)
    }
}

/// The schedutil version a rate limit is derived for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SugovVersion {
    V5_15,
    V6_18,
}

impl Freq {
    /// The schedutil version of the governor (`None` for the others).
    pub fn sugov_version(&self) -> Option<SugovVersion> {
        match self.governor {
            FreqGovernor::Schedutil515 => Some(SugovVersion::V5_15),
            FreqGovernor::Schedutil618 => Some(SugovVersion::V6_18),
            _ => None,
        }
    }

    /// schedutil's `rate_limit_us` for domain `d`: as set, else the kernel's default
    /// (`sugov_tunables_alloc` takes `cpufreq_policy_transition_delay_us`).
    pub fn rate_limit_us(&self, d: usize) -> Option<u64> {
        let v = self.sugov_version()?;
        Some(self.rate_limit_us.unwrap_or_else(|| self.domains[d].transition_delay(v)))
    }

    /// Each CPU's `arch_scale_cpu_capacity` (1024 where no domain says otherwise).
    pub fn capacities(&self, nr_cpus: usize) -> Vec<u64> {
        let mut out = vec![SCHED_CAPACITY_SCALE; nr_cpus];
        if self.domains.iter().any(|d| d.dmips_mhz.is_some()) {
            let raw: Vec<(u64, u64)> = self.domains.iter().map(|d| (d.dmips_mhz.unwrap_or(0), d.max_khz())).collect();
            for (d, cap) in self.domains.iter().zip(normalize_capacities(&raw)) {
                d.cpus.iter().filter(|&c| c < nr_cpus).for_each(|c| out[c] = cap);
            }
        } else {
            for d in &self.domains {
                let cap = d.capacity.unwrap_or(SCHED_CAPACITY_SCALE);
                d.cpus.iter().filter(|&c| c < nr_cpus).for_each(|c| out[c] = cap);
            }
        }
        out
    }

    /// The capacity of `cpu`'s domain (1024 outside every domain), without allocating.
    pub fn capacity_of(&self, cpu: usize) -> u64 {
        let Some(d) = self.domains.iter().find(|d| d.cpus.contains(cpu)) else {
            return SCHED_CAPACITY_SCALE;
        };
        if d.dmips_mhz.is_some() {
            // As normalize_capacities, for one domain.
            let raw = |d: &FreqDomain| u128::from(d.dmips_mhz.unwrap_or(0)) * u128::from(d.max_khz().max(1));
            let scale = self.domains.iter().map(raw).max().unwrap_or(1).max(1);
            ((raw(d) << 10) / scale) as u64
        } else {
            d.capacity.unwrap_or(SCHED_CAPACITY_SCALE)
        }
    }

    /// Whether some CPU's capacity is below 1024 (`SD_ASYM_CPUCAPACITY` somewhere).
    pub fn asymmetric(&self) -> bool {
        self.domains.iter().any(|d| d.cpus.first().is_some_and(|c| self.capacity_of(c) < SCHED_CAPACITY_SCALE))
    }

    /// `(field, reason)` for domains the kernel would refuse or that cannot be meant.
    pub fn check(&self, nr_cpus: usize) -> Result<(), (String, String)> {
        if (self.governor == FreqGovernor::None) != self.domains.is_empty() {
            let msg = "governor none means no cpufreq driver and no [[freq.domain]]; any other governor needs domains";
            return Err(("freq.governor".into(), msg.into()));
        }
        check_cover(self.domains.iter().map(|d| &d.cpus), nr_cpus, "freq.domain")?;
        let dmips = self.domains.iter().filter(|d| d.dmips_mhz.is_some()).count();
        for (i, d) in self.domains.iter().enumerate() {
            check_domain(i, d, dmips)?;
        }
        if dmips == 0 && !self.domains.is_empty() {
            let top = self.domains.iter().map(|d| d.capacity.unwrap_or(SCHED_CAPACITY_SCALE)).max().unwrap_or(0);
            if top != SCHED_CAPACITY_SCALE {
                let msg = format!(
                    "the biggest CPU's capacity is {SCHED_CAPACITY_SCALE} (topology_normalize_cpu_scale), not {top}"
                );
                return Err(("freq.domain[0].capacity".into(), msg));
            }
        }
        Ok(())
    }
}

fn check_domain(i: usize, d: &FreqDomain, dmips_domains: usize) -> Result<(), (String, String)> {
    let at = |f: &str| format!("freq.domain[{i}].{f}");
    if d.khz.is_empty() || d.khz.len() > MAX_OPPS {
        return Err((at("khz"), format!("a frequency table has 1..={MAX_OPPS} entries")));
    }
    // em_create_perf_table: "EM: non-increasing freq"; cpufreq tables are kept ascending here.
    if let Some(j) = (1..d.khz.len()).find(|&j| d.khz[j] <= d.khz[j - 1]) {
        return Err((format!("freq.domain[{i}].khz[{j}]"), "frequencies must be strictly ascending".into()));
    }
    if !d.power_uw.is_empty() {
        if d.power_uw.len() != d.khz.len() {
            return Err((at("power_uw"), format!("{} powers for {} frequencies", d.power_uw.len(), d.khz.len())));
        }
        // em_create_perf_table refuses 0 and more than EM_MAX_POWER; power falling as the
        // frequency rises cannot be a CPU's (the kernel only marks such states inefficient).
        if let Some(j) =
            (0..d.power_uw.len()).find(|&j| d.power_uw[j] == 0 || (j > 0 && d.power_uw[j] <= d.power_uw[j - 1]))
        {
            return Err((
                format!("freq.domain[{i}].power_uw[{j}]"),
                "power must be positive and increase with frequency".into(),
            ));
        }
    }
    if d.capacity.is_some() && d.dmips_mhz.is_some() {
        return Err((at("capacity"), "give capacity or capacity_dmips_mhz, not both".into()));
    }
    if dmips_domains > 0 && d.dmips_mhz.is_none() {
        return Err((
            at("capacity_dmips_mhz"),
            "missing: every domain gives it once one does (the kernel falls back to 1024 for all)".into(),
        ));
    }
    if let Some(r) = d.scale_ref_khz {
        if r < d.min_khz() || r > d.max_khz() {
            return Err((
                at("scale_ref_khz"),
                format!("{r} kHz is outside the table {}..={} kHz", d.min_khz(), d.max_khz()),
            ));
        }
    }
    Ok(())
}

/// Every CPU below `nr_cpus` in exactly one of `sets`, and none beyond.
pub(crate) fn check_cover<'a>(
    sets: impl Iterator<Item = &'a CpuSet>,
    nr_cpus: usize,
    section: &str,
) -> Result<(), (String, String)> {
    let mut seen = vec![usize::MAX; nr_cpus];
    let mut any = false;
    for (i, s) in sets.enumerate() {
        any = true;
        for c in s.iter() {
            let field = format!("{section}[{i}].cpus");
            if c >= nr_cpus {
                return Err((field, format!("CPU {c} is beyond the machine's {nr_cpus} CPUs")));
            }
            if seen[c] != usize::MAX {
                return Err((field, format!("CPU {c} is already in {section}[{}]", seen[c])));
            }
            seen[c] = i;
        }
    }
    match seen.iter().position(|&d| d == usize::MAX) {
        Some(c) if any => Err((format!("{section}[0].cpus"), format!("CPU {c} is in no {section}"))),
        _ => Ok(()),
    }
}

/// `drivers/base/arch_topology.c: topology_normalize_cpu_scale` (v6.8+, with
/// `capacity_freq_ref` = the policy's `cpuinfo.max_freq` in kHz): for each domain's
/// `(capacity-dmips-mhz, top kHz)`, `raw = dmips × kHz`, capacity = `(raw << 10) /
/// max(raw)`, truncated.
pub fn normalize_capacities(raw: &[(u64, u64)]) -> Vec<u64> {
    let scaled: Vec<u128> = raw.iter().map(|&(d, f)| u128::from(d) * u128::from(f.max(1))).collect();
    let scale = scaled.iter().copied().max().unwrap_or(1).max(1);
    scaled.iter().map(|&c| ((c << 10) / scale) as u64).collect()
}

/// `drivers/opp/of.c: dev_pm_opp_calc_power` (v5.19+): an OPP's power in µW from the
/// device tree's `dynamic-power-coefficient` C and the OPP's voltage and frequency,
/// `P = C × mV² × MHz / 10⁶`, each of mV and MHz truncated first as the kernel does.
pub fn em_power_uw(coefficient: u64, microvolt: u64, hz: u64) -> u64 {
    let mv = microvolt / 1000;
    coefficient * mv * mv * (hz / 1_000_000) / 1_000_000
}

const GOVERNORS: &[&str] = &["none", "performance", "powersave", "schedutil-5.15", "schedutil-6.18"];

fn governor_of(i: u64) -> FreqGovernor {
    [
        FreqGovernor::None,
        FreqGovernor::Performance,
        FreqGovernor::Powersave,
        FreqGovernor::Schedutil515,
        FreqGovernor::Schedutil618,
    ][i as usize % 5]
}

/// `[freq]`'s own fields.
pub static FREQ: Table<Freq> = Table {
    section: "freq",
    what: "freq field",
    fields: &[
        Field {
            name: "governor",
            kind: Kind::Choice(GOVERNORS),
            optional: false,
            doc: "`none` (no cpufreq: one speed), `performance`, `powersave`, `schedutil-5.15`, `schedutil-6.18`.",
            get: |f| Val::Num(f.governor as u64),
            set: |f, v| f.governor = governor_of(v.num()),
        },
        Field {
            name: "invariant",
            kind: Kind::Bool,
            optional: false,
            doc: "PELT is frequency-invariant (x86 Intel from 5.7; not AMD family 10h).",
            get: |f| Val::Num(u64::from(f.invariant)),
            set: |f, v| f.invariant = v.num() != 0,
        },
        Field {
            name: "rate_limit_us",
            kind: Kind::Int { min: 0, max: 10_000_000, unit: "us" },
            optional: true,
            doc: "schedutil's rate_limit_us; `none`: cpufreq_policy_transition_delay_us of the governor's version.",
            get: |f| Val::of_opt(f.rate_limit_us),
            set: |f, v| f.rate_limit_us = v.opt(),
        },
    ],
};

/// `[[freq.domain]]`.
pub static FREQ_DOMAIN: Table<FreqDomain> = Table {
    section: "freq.domain",
    what: "freq domain field",
    fields: &[
        Field {
            name: "cpus",
            kind: Kind::Cpus,
            optional: false,
            doc: "The policy's CPUs; the domains cover every CPU once.",
            get: |d| Val::Cpus(d.cpus.clone()),
            set: |d, v| d.cpus = v.cpus(),
        },
        Field {
            name: "khz",
            kind: Kind::List { min: 1, max: 100_000_000, unit: "kHz" },
            optional: false,
            doc: "The frequency table, strictly ascending.",
            get: |d| Val::List(d.khz.clone()),
            set: |d, v| d.khz = v.list(),
        },
        Field {
            name: "power_uw",
            kind: Kind::List { min: 1, max: EM_MAX_POWER, unit: "µW" },
            optional: false,
            doc: "Active power of one CPU per frequency (em_perf_state.power, µW), increasing; `[]`: no energy model.",
            get: |d| Val::List(d.power_uw.clone()),
            set: |d, v| d.power_uw = v.list(),
        },
        Field {
            name: "transition_latency",
            kind: Kind::Duration { max: Ns::from_ms(100) },
            optional: false,
            doc: "cpuinfo.transition_latency of a frequency change.",
            get: |d| Val::Num(d.transition_latency.0),
            set: |d, v| d.transition_latency = Ns(v.num()),
        },
        Field {
            name: "transition_delay_us",
            kind: Kind::Int { min: 1, max: 10_000_000, unit: "us" },
            optional: true,
            doc: "The driver's transition_delay_us (intel_cpufreq: 500); `none`: derived from the latency.",
            get: |d| Val::of_opt(d.transition_delay_us),
            set: |d, v| d.transition_delay_us = v.opt(),
        },
        Field {
            name: "capacity",
            kind: Kind::Int { min: 1, max: SCHED_CAPACITY_SCALE, unit: "" },
            optional: true,
            doc: "arch_scale_cpu_capacity of the domain's CPUs (the biggest is 1024); `none`: 1024, or derived from capacity_dmips_mhz.",
            get: |d| Val::of_opt(d.capacity),
            set: |d, v| d.capacity = v.opt(),
        },
        Field {
            name: "capacity_dmips_mhz",
            kind: Kind::Int { min: 1, max: 100_000, unit: "" },
            optional: true,
            doc: "The device tree's capacity-dmips-mhz: capacity = dmips × top kHz normalised to 1024 (topology_normalize_cpu_scale).",
            get: |d| Val::of_opt(d.dmips_mhz),
            set: |d, v| d.dmips_mhz = v.opt(),
        },
        Field {
            name: "scale_ref_khz",
            kind: Kind::Int { min: 1, max: 100_000_000, unit: "kHz" },
            optional: true,
            doc: "Frequency at which arch_scale_freq_capacity reaches 1024 (x86: 4-core turbo); `none`: the top frequency.",
            get: |d| Val::of_opt(d.scale_ref_khz),
            set: |d, v| d.scale_ref_khz = v.opt(),
        },
    ],
};

#[cfg(test)]
mod tests {
    use super::*;

    fn domain(cpus: &str, khz: &[u64]) -> FreqDomain {
        FreqDomain {
            cpus: CpuSet::parse_list(cpus).unwrap(),
            khz: khz.to_vec(),
            power_uw: vec![],
            transition_latency: Ns::from_us(10),
            transition_delay_us: None,
            capacity: None,
            dmips_mhz: None,
            scale_ref_khz: None,
        }
    }

    /// machine-costs §5.2: acpi-cpufreq with a 10 µs latency gives 15 µs on 6.18 and
    /// 10 ms on 5.15; intel_cpufreq's 500 µs wins over the latency; no latency: 1 ms.
    #[test]
    fn rate_limits_as_each_kernel_derives_them() {
        let d = domain("0", &[1_000_000, 2_000_000]);
        assert_eq!(d.transition_delay(SugovVersion::V6_18), 15);
        assert_eq!(d.transition_delay(SugovVersion::V5_15), 10_000);
        let gs101 = FreqDomain { transition_latency: Ns::from_us(500), ..d.clone() };
        assert_eq!(gs101.transition_delay(SugovVersion::V6_18), 750);
        let intel = FreqDomain { transition_delay_us: Some(500), ..d.clone() };
        assert_eq!(intel.transition_delay(SugovVersion::V5_15), 500);
        let none = FreqDomain { transition_latency: Ns(999), ..d.clone() };
        assert_eq!(none.transition_delay(SugovVersion::V6_18), 1000, "latency below 1 µs truncates to 0");
        let f = Freq { governor: FreqGovernor::Schedutil618, invariant: true, rate_limit_us: None, domains: vec![d] };
        assert_eq!(f.rate_limit_us(0), Some(15));
        assert_eq!(Freq { rate_limit_us: Some(2000), ..f.clone() }.rate_limit_us(0), Some(2000));
        assert_eq!(Freq { governor: FreqGovernor::Performance, ..f }.rate_limit_us(0), None);
    }

    #[test]
    fn resolve_and_scale() {
        let d = FreqDomain { scale_ref_khz: Some(3_700_000), ..domain("0", &[1_600_000, 3_400_000, 3_900_000]) };
        assert_eq!(d.resolve_khz(1), 1_600_000);
        assert_eq!(d.resolve_khz(3_400_000), 3_400_000);
        assert_eq!(d.resolve_khz(3_400_001), 3_900_000);
        assert_eq!(d.resolve_khz(9_000_000), 3_900_000);
        assert_eq!(d.freq_scale(3_400_000), 3_400_000 * 1024 / 3_700_000);
        assert_eq!(d.freq_scale(3_900_000), 1024, "clipped above the reference");
    }

    /// The Juno r0 example of Documentation/devicetree/bindings/cpu/cpu-capacity.txt:
    /// A57 1024 DMIPS/MHz at 1100 MHz, A53 578 at 850 MHz → 1024 and 446.
    #[test]
    fn capacities_normalise_like_the_kernel() {
        assert_eq!(normalize_capacities(&[(1024, 1_100_000), (578, 850_000)]), vec![1024, 446]);
        let mut big = domain("0-1", &[1_100_000]);
        big.dmips_mhz = Some(1024);
        let mut little = domain("2-5", &[850_000]);
        little.dmips_mhz = Some(578);
        let f = Freq {
            governor: FreqGovernor::Schedutil618,
            invariant: true,
            rate_limit_us: None,
            domains: vec![big, little],
        };
        assert_eq!(f.check(6), Ok(()));
        assert_eq!(f.capacities(6), vec![1024, 1024, 446, 446, 446, 446]);
    }

    /// RK3399 A53 at 408 MHz, 825 mV, coefficient 100: 100 × 825² × 408 / 10⁶ = 27 769 µW.
    #[test]
    fn opp_power_like_dev_pm_opp_calc_power() {
        assert_eq!(em_power_uw(100, 825_000, 408_000_000), 27_769);
        assert_eq!(em_power_uw(436, 1_200_000, 1_800_000_000), 1_130_112);
        assert_eq!(em_power_uw(70, 537_500, 300_000_000), 70 * 537 * 537 * 300 / 1_000_000, "mV truncated first");
    }

    #[test]
    fn checks() {
        let f = |domains| Freq { governor: FreqGovernor::Performance, invariant: false, rate_limit_us: None, domains };
        assert_eq!(f(vec![domain("0-3", &[1, 2])]).check(4), Ok(()));
        assert_eq!(f(vec![domain("0-3", &[2, 2])]).check(4).unwrap_err().0, "freq.domain[0].khz[1]");
        let mut d = domain("0-3", &[1, 2]);
        d.power_uw = vec![5, 5];
        assert_eq!(f(vec![d]).check(4).unwrap_err().0, "freq.domain[0].power_uw[1]");
        assert!(f(vec![domain("0-1", &[1]), domain("1-3", &[1])]).check(4).unwrap_err().1.contains("already"));
        assert!(f(vec![]).check(4).unwrap_err().0 == "freq.governor");
        let mut d = domain("0-3", &[1]);
        d.capacity = Some(512);
        assert!(f(vec![d]).check(4).unwrap_err().1.contains("1024"));
        let none = Freq { governor: FreqGovernor::None, ..f(vec![]) };
        assert_eq!(none.check(4), Ok(()));
        assert_eq!(none.capacities(2), vec![1024, 1024]);
    }
}
