//! Tunables of the fair class, per kernel version: the sysctls (`kernel/sched/fair.c:
//! sysctl_sched_*`, `get_update_sysctl_factor`, `update_sysctl`), the scheduler features
//! (`kernel/sched/features.h` of each version) and autogroup (`kernel.sched_autogroup_enabled`).
//!
//! Each tunable is defined once, in [`TUNABLES`]: its name, the versions it exists in, its
//! range and unit, its documentation and the field it sets. A value outside its range or a
//! feature the chosen version does not have is an error naming the tunable; a name no
//! table of the policy has is refused by the policy's builder (`registry::make_policy`).

use schedlab_sched_api::{Choice, Kind, Pass, Tunable, TunableSpec, TunableTable, Unit};

/// `enum sched_tunable_scaling`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scaling {
    None = 0,
    Log = 1,
    Linear = 2,
}

/// The fair.c a run models. `V4_9` and `V5_15` are CFS; the others are EEVDF as it evolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Version {
    /// The ULE-vs-CFS study's kernel: PELT with `runnable_load_avg`, the `cpu_load[]`
    /// balancer with `fix_small_imbalance`, one-piece `wake_affine`.
    V4_9,
    V5_15,
    V6_6,
    V6_12,
    V6_18,
}

impl Version {
    pub fn name(self) -> &'static str {
        match self {
            Version::V4_9 => "4.9",
            Version::V5_15 => "5.15",
            Version::V6_6 => "6.6",
            Version::V6_12 => "6.12",
            Version::V6_18 => "6.18",
        }
    }
    pub fn is_eevdf(self) -> bool {
        self >= Version::V6_6
    }
}

/// Which picking rule the fair class runs: CFS (≤6.5) or EEVDF (≥6.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    Cfs,
    Eevdf,
}

#[derive(Clone, Debug)]
pub struct FairTunables {
    pub version: Version,
    pub scaling: Scaling,
    /// CFS (≤6.5): `sysctl_sched_latency`, `_min_granularity`, `_wakeup_granularity`,
    /// `sched_nr_latency`, `sysctl_sched_child_runs_first`.
    pub latency: u64,
    pub min_granularity: u64,
    pub wakeup_granularity: u64,
    pub nr_latency: u64,
    pub child_runs_first: bool,
    /// EEVDF (≥6.6): `sysctl_sched_base_slice` after CPU-count scaling.
    pub base_slice: u64,
    /// The unscaled base slice (`normalized_sysctl_sched_base_slice`, 6.18 slice protection).
    pub normalized_base_slice: u64,
    /// `sysctl_sched_migration_cost` (cache hotness, newidle gate), ns.
    pub migration_cost: u64,
    /// `sysctl_sched_nr_migrate`: tasks a balance pass may examine.
    pub nr_migrate: u64,
    /// Load balancing and wakeup/fork placement by scheduling domains (off: idle-or-previous
    /// placement and no balancer).
    pub balance: bool,
    /// `kernel.sched_autogroup_enabled`: each session is a task group.
    pub autogroup: bool,
    /// `kernel.sched_energy_aware` (`sysctl_sched_energy_aware`): EAS may be enabled.
    pub energy_aware: bool,
    pub feat: Features,
}

/// `features.h` flags that change behaviour in the versions modelled.
#[derive(Clone, Debug, Default)]
pub struct Features {
    // CFS (≤6.5)
    pub start_debit: bool,
    pub gentle_fair_sleepers: bool,
    pub last_buddy: bool,
    pub base_slice: bool,
    // Both
    pub next_buddy: bool,
    pub wakeup_preemption: bool,
    pub sis_util: bool,
    pub wa_idle: bool,
    pub wa_weight: bool,
    pub wa_bias: bool,
    pub cache_hot_buddy: bool,
    /// `UTIL_EST` (v4.17+): tasks' estimated utilisation (`util_est.rs`).
    pub util_est: bool,
    // EEVDF (≥6.6)
    pub place_lag: bool,
    pub place_deadline_initial: bool,
    pub place_rel_deadline: bool,
    pub run_to_parity: bool,
    pub preempt_short: bool,
    pub pick_buddy: bool,
    pub delay_dequeue: bool,
    pub delay_zero: bool,
}

/// `normalized_sysctl_sched_latency` etc. (base values for one CPU).
const BASE_LATENCY: u64 = 6_000_000;
const BASE_MIN_GRANULARITY: u64 = 750_000;
const BASE_WAKEUP_GRANULARITY: u64 = 1_000_000;
/// `normalized_sysctl_sched_base_slice`: 0.75 ms in 6.6 and 6.12, 0.70 ms in 6.18.
const BASE_SLICE_6_6: u64 = 750_000;
const BASE_SLICE_6_18: u64 = 700_000;

/// `get_update_sysctl_factor`: `cpus = min(online, 8)`; NONE 1, LOG 1 + ilog2(cpus), LINEAR cpus.
pub fn factor(scaling: Scaling, nr_cpus: usize) -> u64 {
    let cpus = nr_cpus.clamp(1, 8) as u64;
    match scaling {
        Scaling::None => 1,
        Scaling::Linear => cpus,
        Scaling::Log => 1 + u64::from(cpus.ilog2()),
    }
}

/// The versions a tunable exists in (`TunableSpec::versions`).
const CFS: &[&str] = &["4.9", "5.15"];
const EEVDF: &[&str] = &["6.6", "6.12", "6.18"];
/// Added after v4.9 (`SIS_UTIL`, `WA_IDLE`, `WA_WEIGHT`, `WA_BIAS`).
const FROM_5_15: &[&str] = &["5.15", "6.6", "6.12", "6.18"];
/// CFS after v4.9 (`BASE_SLICE`).
const CFS_5_15: &[&str] = &["5.15"];
const FROM_6_12: &[&str] = &["6.12", "6.18"];
const ONLY_6_18: &[&str] = &["6.18"];

const CFS_VERSIONS: &[Choice] = &[Choice { name: "4.9", aliases: &[] }, Choice { name: "5.15", aliases: &[] }];
const EEVDF_VERSIONS: &[Choice] = &[
    Choice { name: "6.6", aliases: &[] },
    Choice { name: "6.12", aliases: &[] },
    Choice { name: "6.18", aliases: &[] },
];
const SCALINGS: &[Choice] = &[
    Choice { name: "0", aliases: &["none"] },
    Choice { name: "1", aliases: &["log"] },
    Choice { name: "2", aliases: &["linear"] },
];

const SEC: i64 = 1_000_000_000;

/// Every tunable of the fair class, defined here once (`version` and
/// `sched_tunable_scaling` first: the defaults depend on them). Ranges: the sysctl limits
/// of v4.9's `kernel/sysctl.c` (`min_sched_granularity_ns` 100 µs,
/// `max_sched_granularity_ns` 1 s, wakeup granularity 0–1 s) where the kernel had them;
/// v5.13+ moved these knobs to debugfs without limits, so the same ranges are kept as
/// documented ones (a 10 ns latency is not a scheduler).
pub static TUNABLES: TunableTable<FairTunables> = TunableTable {
    owner: "fair.c",
    version: Some(|t| t.version.name()),
    specs: &[
        TunableSpec {
            versions: CFS,
            early: true,
            ..TunableSpec::new(
                "version",
                Kind::Choice(CFS_VERSIONS),
                "the fair.c modelled (cfs)",
                |t| i64::from(t.version != Version::V4_9),
                |t, v| t.version = if v == 0 { Version::V4_9 } else { Version::V5_15 },
            )
        },
        TunableSpec {
            versions: EEVDF,
            early: true,
            ..TunableSpec::new(
                "version",
                Kind::Choice(EEVDF_VERSIONS),
                "the fair.c modelled (eevdf)",
                |t| match t.version {
                    Version::V6_6 => 0,
                    Version::V6_12 => 1,
                    _ => 2,
                },
                |t, v| t.version = [Version::V6_6, Version::V6_12, Version::V6_18][v as usize],
            )
        },
        TunableSpec {
            early: true,
            ..TunableSpec::new(
                "sched_tunable_scaling",
                Kind::Choice(SCALINGS),
                "CPU-count factor of the defaults (get_update_sysctl_factor): none 1, log 1 + ilog2(min(cpus, 8)), linear min(cpus, 8)",
                |t| t.scaling as i64,
                |t, v| t.scaling = [Scaling::None, Scaling::Log, Scaling::Linear][v as usize],
            )
        },
        TunableSpec {
            versions: CFS,
            ..TunableSpec::new(
                "sched_latency_ns",
                Kind::int(100_000, SEC, Unit::Ns),
                "targeted preemption latency (6 ms × factor)",
                |t| t.latency as i64,
                |t, v| t.latency = v as u64,
            )
        },
        TunableSpec {
            versions: CFS,
            ..TunableSpec::new(
                "sched_min_granularity_ns",
                Kind::int(100_000, SEC, Unit::Ns),
                "minimum slice (0.75 ms × factor)",
                |t| t.min_granularity as i64,
                |t, v| t.min_granularity = v as u64,
            )
        },
        TunableSpec {
            versions: CFS,
            ..TunableSpec::new(
                "sched_wakeup_granularity_ns",
                Kind::int(0, SEC, Unit::Ns),
                "wakeup preemption granularity (1 ms × factor)",
                |t| t.wakeup_granularity as i64,
                |t, v| t.wakeup_granularity = v as u64,
            )
        },
        TunableSpec {
            versions: CFS,
            ..TunableSpec::derived(
                "sched_nr_latency",
                Kind::int(1, i64::MAX, Unit::None),
                "tasks beyond which the period grows; derived: sched_latency_ns / sched_min_granularity_ns, rounded up (set those)",
                |t| t.nr_latency as i64,
            )
        },
        TunableSpec {
            versions: CFS,
            ..TunableSpec::new(
                "sched_child_runs_first",
                Kind::Bool,
                "a forked child runs before its parent",
                |t| t.child_runs_first.into(),
                |t, v| t.child_runs_first = v != 0,
            )
        },
        TunableSpec {
            versions: EEVDF,
            ..TunableSpec::new(
                "base_slice_ns",
                Kind::int(100_000, SEC, Unit::Ns),
                "EEVDF request size (0.75 ms × factor; 0.70 ms × factor in 6.18)",
                |t| t.base_slice as i64,
                |t, v| t.base_slice = v as u64,
            )
        },
        TunableSpec::new(
            "sched_migration_cost_ns",
            Kind::int(0, SEC, Unit::Ns),
            "a task that ran this recently is cache-hot; newidle needs this much avg_idle",
            |t| t.migration_cost as i64,
            |t, v| t.migration_cost = v as u64,
        ),
        TunableSpec::new(
            "sched_nr_migrate",
            Kind::int(1, 1024, Unit::None),
            "tasks one balance pass may examine",
            |t| t.nr_migrate as i64,
            |t, v| t.nr_migrate = v as u64,
        ),
        TunableSpec::new(
            "balance",
            Kind::Bool,
            "scheduling domains: select_task_rq_fair + load balancing (0: idle-or-prev, no balancer)",
            |t| t.balance.into(),
            |t, v| t.balance = v != 0,
        ),
        TunableSpec::new(
            "autogroup",
            Kind::Bool,
            "kernel.sched_autogroup_enabled: each session is a task group of its own",
            |t| t.autogroup.into(),
            |t, v| t.autogroup = v != 0,
        ),
        TunableSpec {
            versions: FROM_5_15,
            ..TunableSpec::new(
                "sched_energy_aware",
                Kind::Bool,
                "kernel.sched_energy_aware: energy-aware wakeups where the machine has an energy model, asymmetric capacities and schedutil",
                |t| t.energy_aware.into(),
                |t, v| t.energy_aware = v != 0,
            )
        },
        TunableSpec {
            versions: CFS,
            ..TunableSpec::new(
                "START_DEBIT",
                Kind::Bool,
                "feature: new tasks start one vslice after min_vruntime",
                |t| t.feat.start_debit.into(),
                |t, v| t.feat.start_debit = v != 0,
            )
        },
        TunableSpec {
            versions: CFS,
            ..TunableSpec::new(
                "GENTLE_FAIR_SLEEPERS",
                Kind::Bool,
                "feature: sleeper credit is half of sched_latency",
                |t| t.feat.gentle_fair_sleepers.into(),
                |t, v| t.feat.gentle_fair_sleepers = v != 0,
            )
        },
        TunableSpec {
            versions: CFS,
            ..TunableSpec::new(
                "LAST_BUDDY",
                Kind::Bool,
                "feature: give the CPU back to a wakeup-preempted task",
                |t| t.feat.last_buddy.into(),
                |t, v| t.feat.last_buddy = v != 0,
            )
        },
        TunableSpec {
            versions: CFS_5_15,
            ..TunableSpec::new(
                "BASE_SLICE",
                Kind::Bool,
                "feature (v5.13+): slices are at least min_granularity",
                |t| t.feat.base_slice.into(),
                |t, v| t.feat.base_slice = v != 0,
            )
        },
        TunableSpec::new(
            "NEXT_BUDDY",
            Kind::Bool,
            "feature: prefer the last wakee",
            |t| t.feat.next_buddy.into(),
            |t, v| t.feat.next_buddy = v != 0,
        ),
        TunableSpec::new(
            "WAKEUP_PREEMPTION",
            Kind::Bool,
            "feature: wakeups may preempt",
            |t| t.feat.wakeup_preemption.into(),
            |t, v| t.feat.wakeup_preemption = v != 0,
        ),
        TunableSpec {
            versions: FROM_5_15,
            ..TunableSpec::new(
                "UTIL_EST",
                Kind::Bool,
                "feature: a task's utilisation estimated from its past activations (util_est)",
                |t| t.feat.util_est.into(),
                |t, v| t.feat.util_est = v != 0,
            )
        },
        TunableSpec {
            versions: FROM_5_15,
            ..TunableSpec::new(
                "SIS_UTIL",
                Kind::Bool,
                "feature: idle scan depth from LLC utilisation",
                |t| t.feat.sis_util.into(),
                |t, v| t.feat.sis_util = v != 0,
            )
        },
        TunableSpec {
            versions: FROM_5_15,
            ..TunableSpec::new(
                "WA_IDLE",
                Kind::Bool,
                "feature: wake_affine_idle",
                |t| t.feat.wa_idle.into(),
                |t, v| t.feat.wa_idle = v != 0,
            )
        },
        TunableSpec {
            versions: FROM_5_15,
            ..TunableSpec::new(
                "WA_WEIGHT",
                Kind::Bool,
                "feature: wake_affine_weight",
                |t| t.feat.wa_weight.into(),
                |t, v| t.feat.wa_weight = v != 0,
            )
        },
        TunableSpec {
            versions: FROM_5_15,
            ..TunableSpec::new(
                "WA_BIAS",
                Kind::Bool,
                "feature: wake_affine_weight weighs the previous CPU by half the domain's imbalance_pct",
                |t| t.feat.wa_bias.into(),
                |t, v| t.feat.wa_bias = v != 0,
            )
        },
        TunableSpec::new(
            "CACHE_HOT_BUDDY",
            Kind::Bool,
            "feature: the balancer treats a runqueue's next/last buddy as cache-hot",
            |t| t.feat.cache_hot_buddy.into(),
            |t, v| t.feat.cache_hot_buddy = v != 0,
        ),
        TunableSpec {
            versions: EEVDF,
            ..TunableSpec::new(
                "PLACE_LAG",
                Kind::Bool,
                "feature: a waking task keeps its lag",
                |t| t.feat.place_lag.into(),
                |t, v| t.feat.place_lag = v != 0,
            )
        },
        TunableSpec {
            versions: EEVDF,
            ..TunableSpec::new(
                "PLACE_DEADLINE_INITIAL",
                Kind::Bool,
                "feature: a new task's first deadline is half a slice away",
                |t| t.feat.place_deadline_initial.into(),
                |t, v| t.feat.place_deadline_initial = v != 0,
            )
        },
        TunableSpec {
            versions: FROM_6_12,
            ..TunableSpec::new(
                "PLACE_REL_DEADLINE",
                Kind::Bool,
                "feature: a migrated task keeps its relative deadline",
                |t| t.feat.place_rel_deadline.into(),
                |t, v| t.feat.place_rel_deadline = v != 0,
            )
        },
        TunableSpec {
            versions: EEVDF,
            ..TunableSpec::new(
                "RUN_TO_PARITY",
                Kind::Bool,
                "feature: curr keeps the CPU until its slice (6.18: the queue's shortest slice) is used",
                |t| t.feat.run_to_parity.into(),
                |t, v| t.feat.run_to_parity = v != 0,
            )
        },
        TunableSpec {
            versions: FROM_6_12,
            ..TunableSpec::new(
                "PREEMPT_SHORT",
                Kind::Bool,
                "feature: a shorter-slice wakee may cancel curr's protection",
                |t| t.feat.preempt_short.into(),
                |t, v| t.feat.preempt_short = v != 0,
            )
        },
        TunableSpec {
            versions: ONLY_6_18,
            ..TunableSpec::new(
                "PICK_BUDDY",
                Kind::Bool,
                "feature: pick the next buddy if eligible",
                |t| t.feat.pick_buddy.into(),
                |t, v| t.feat.pick_buddy = v != 0,
            )
        },
        TunableSpec {
            versions: FROM_6_12,
            ..TunableSpec::new(
                "DELAY_DEQUEUE",
                Kind::Bool,
                "feature: an ineligible sleeper stays queued until its lag is paid",
                |t| t.feat.delay_dequeue.into(),
                |t, v| t.feat.delay_dequeue = v != 0,
            )
        },
        TunableSpec {
            versions: FROM_6_12,
            ..TunableSpec::new(
                "DELAY_ZERO",
                Kind::Bool,
                "feature: a delayed task's positive lag is dropped",
                |t| t.feat.delay_zero.into(),
                |t, v| t.feat.delay_zero = v != 0,
            )
        },
    ],
};

impl FairTunables {
    /// Defaults of `flavor` for a machine of `nr_cpus`, then `--set` overrides (names of
    /// other tables are left to the caller). Setting a granularity sets the effective
    /// value, as writing the sysctl does; `sched_nr_latency` is then
    /// `DIV_ROUND_UP(latency, min_granularity)`, as `sched_proc_update_handler` recomputes it.
    pub fn new(flavor: Flavor, nr_cpus: usize, sets: &[(String, String)]) -> Result<FairTunables, String> {
        let version = match flavor {
            Flavor::Cfs => Version::V5_15,
            Flavor::Eevdf => Version::V6_18,
        };
        let mut t = FairTunables::defaults(version, Scaling::Log, nr_cpus);
        TUNABLES.apply_known(&mut t, sets, Pass::Early)?;
        let mut t = FairTunables::defaults(t.version, t.scaling, nr_cpus);
        TUNABLES.apply_known(&mut t, sets, Pass::Rest)?;
        t.nr_latency = t.latency.div_ceil(t.min_granularity);
        Ok(t)
    }

    fn defaults(version: Version, scaling: Scaling, nr_cpus: usize) -> FairTunables {
        let f = factor(scaling, nr_cpus);
        let eevdf = version.is_eevdf();
        let normalized_base_slice = if version >= Version::V6_18 { BASE_SLICE_6_18 } else { BASE_SLICE_6_6 };
        let from612 = version >= Version::V6_12;
        // v4.9 has neither BASE_SLICE nor SIS_UTIL nor the split wake_affine.
        let from515 = version >= Version::V5_15;
        FairTunables {
            version,
            scaling,
            latency: BASE_LATENCY * f,
            min_granularity: BASE_MIN_GRANULARITY * f,
            wakeup_granularity: BASE_WAKEUP_GRANULARITY * f,
            nr_latency: 8,
            child_runs_first: false,
            base_slice: normalized_base_slice * f,
            normalized_base_slice,
            migration_cost: 500_000,
            nr_migrate: 32,
            balance: true,
            autogroup: true,
            energy_aware: true,
            feat: Features {
                start_debit: !eevdf,
                gentle_fair_sleepers: !eevdf,
                last_buddy: !eevdf,
                base_slice: !eevdf && from515,
                next_buddy: false,
                wakeup_preemption: true,
                sis_util: from515,
                wa_idle: from515,
                wa_weight: from515,
                wa_bias: from515,
                cache_hot_buddy: true,
                util_est: from515,
                place_lag: eevdf,
                place_deadline_initial: eevdf,
                place_rel_deadline: from612,
                run_to_parity: eevdf,
                preempt_short: from612,
                pick_buddy: version >= Version::V6_18,
                delay_dequeue: from612,
                delay_zero: from612,
            },
        }
    }

    /// The tunables of this version, in [`TUNABLES`] order.
    pub fn list(&self) -> Vec<Tunable> {
        TUNABLES.list(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: u64 = 1_000_000;

    fn set(k: &str, v: &str) -> Vec<(String, String)> {
        vec![(k.into(), v.into())]
    }

    #[test]
    fn cfs_scaling_follows_get_update_sysctl_factor() {
        // 1 CPU → 6 ms; 2–3 → 12 ms; 4–7 → 18 ms; ≥8 → 24 ms.
        for (cpus, lat) in [(1, 6), (2, 12), (3, 12), (4, 18), (7, 18), (8, 24), (32, 24)] {
            let t = FairTunables::new(Flavor::Cfs, cpus, &[]).unwrap();
            assert_eq!(t.latency, lat * MS, "{cpus} CPUs");
        }
        let t = FairTunables::new(Flavor::Cfs, 8, &set("sched_tunable_scaling", "0")).unwrap();
        assert_eq!(t.min_granularity, 750_000);
        let t = FairTunables::new(Flavor::Cfs, 1, &set("sched_latency_ns", "30ms")).unwrap();
        assert_eq!((t.latency, t.nr_latency), (30 * MS, 40));
    }

    #[test]
    fn eevdf_base_slice_per_version() {
        // 2 CPUs: factor 2. 6.6/6.12: 1.5 ms; 6.18: 1.4 ms.
        for (v, slice) in [("6.6", 1_500_000), ("6.12", 1_500_000), ("6.18", 1_400_000)] {
            let t = FairTunables::new(Flavor::Eevdf, 2, &set("version", v)).unwrap();
            assert_eq!(t.base_slice, slice, "v{v}");
        }
        let t = FairTunables::new(Flavor::Eevdf, 8, &[]).unwrap();
        assert_eq!((t.version, t.base_slice), (Version::V6_18, 2_800_000));
        assert!(t.feat.delay_dequeue && t.feat.pick_buddy && !t.feat.next_buddy);
        let t = FairTunables::new(Flavor::Eevdf, 8, &set("version", "6.6")).unwrap();
        assert!(!t.feat.delay_dequeue && !t.feat.preempt_short && t.feat.run_to_parity);
    }

    #[test]
    fn bad_values_are_refused_with_the_reason() {
        let err = |f, k: &str, v: &str| FairTunables::new(f, 2, &set(k, v)).unwrap_err();
        assert!(err(Flavor::Cfs, "sched_latency_ns", "10").contains("outside its range"));
        let other = FairTunables::new(Flavor::Cfs, 2, &set("sched_rt_period_us", "5"));
        assert!(other.is_ok(), "a name of another table is left to the policy's builder");
        assert!(err(Flavor::Cfs, "version", "6.6").contains("`6.6` is not one of 4.9 or 5.15"));
        assert!(err(Flavor::Cfs, "sched_nr_latency", "4").contains("derived"));
        assert!(err(Flavor::Cfs, "base_slice_ns", "3ms").contains("does not exist in fair.c v5.15"));
        assert!(err(Flavor::Eevdf, "sched_latency_ns", "3ms").contains("does not exist"));
        let e = err(Flavor::Eevdf, "sched_nr_latency", "4");
        assert!(e.contains("unknown tunable") && !e.contains("sched_nr_latency,"), "{e}");
        let e = FairTunables::new(
            Flavor::Eevdf,
            2,
            &[("version".into(), "6.6".into()), ("DELAY_DEQUEUE".into(), "1".into())],
        )
        .unwrap_err();
        assert!(e.contains("does not exist in fair.c v6.6"), "{e}");
        assert!(err(Flavor::Eevdf, "version", "6.7").contains("6.6, 6.12 or 6.18"));
        assert!(err(Flavor::Eevdf, "RUN_TO_PARITY", "yes").contains("expected 0/1"));
        assert!(err(Flavor::Eevdf, "sched_nr_migrate", "0").contains("outside"));
    }
}
