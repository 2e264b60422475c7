//! Tunables of the fair class, per kernel version: the sysctls (`kernel/sched/fair.c:
//! sysctl_sched_*`, `get_update_sysctl_factor`, `update_sysctl`), the scheduler features
//! (`kernel/sched/features.h` of each version) and autogroup (`kernel.sched_autogroup_enabled`).
//!
//! Each tunable is defined once, in [`SPECS`]: its name, the versions it exists in, its
//! range and its documentation. A value outside its range, a feature the chosen version
//! does not have, or an unknown name is an error naming the tunable.

use crate::registry::parse_u64;
use schedlab_sched_api::Tunable;

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
    fn parse(flavor: Flavor, v: &str) -> Result<Version, String> {
        let found = match (flavor, v.trim()) {
            (Flavor::Cfs, "4.9") => Some(Version::V4_9),
            (Flavor::Cfs, "5.15") => Some(Version::V5_15),
            (Flavor::Eevdf, "6.6") => Some(Version::V6_6),
            (Flavor::Eevdf, "6.12") => Some(Version::V6_12),
            (Flavor::Eevdf, "6.18") => Some(Version::V6_18),
            _ => None,
        };
        found.ok_or_else(|| match flavor {
            Flavor::Cfs => format!("tunable `version`: cfs models Linux 4.9 or 5.15, not `{v}`"),
            Flavor::Eevdf => format!("tunable `version`: eevdf models 6.6, 6.12 or 6.18, not `{v}`"),
        })
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

/// Which versions a tunable exists in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum In {
    All,
    Cfs,
    /// Added after v4.9 (`BASE_SLICE`, `SIS_UTIL`, `WA_IDLE`, `WA_WEIGHT`).
    From515,
    /// CFS after v4.9 (`BASE_SLICE`).
    Cfs515,
    Eevdf,
    From612,
    Only618,
}

impl In {
    fn has(self, v: Version) -> bool {
        match self {
            In::All => true,
            In::Cfs => !v.is_eevdf(),
            In::From515 => v >= Version::V5_15,
            In::Cfs515 => v == Version::V5_15,
            In::Eevdf => v.is_eevdf(),
            In::From612 => v >= Version::V6_12,
            In::Only618 => v == Version::V6_18,
        }
    }
}

/// What kind of value a tunable takes.
#[derive(Clone, Copy)]
enum Kind {
    /// ns (or a duration such as `3ms`) within `[min, max]`.
    Ns(u64, u64),
    /// An integer within `[min, max]`.
    Int(u64, u64),
    Bool,
    /// Handled before the rest (`version`, `sched_tunable_scaling`).
    Special,
}

struct Spec {
    name: &'static str,
    exists: In,
    kind: Kind,
    doc: &'static str,
}

const SEC: u64 = 1_000_000_000;

/// Every tunable of the fair class. Ranges: the sysctl limits of v4.9's `kernel/sysctl.c`
/// (`min_sched_granularity_ns` 100 µs, `max_sched_granularity_ns` 1 s, wakeup granularity
/// 0–1 s) where the kernel had them; v5.13+ moved these knobs to debugfs without limits, so
/// the same ranges are kept as documented ones (a 10 ns latency is not a scheduler).
const SPECS: &[Spec] = &[
    Spec {
        name: "version",
        exists: In::All,
        kind: Kind::Special,
        doc: "fair.c modelled: cfs 4.9, 5.15; eevdf 6.6, 6.12, 6.18",
    },
    Spec {
        name: "sched_tunable_scaling",
        exists: In::All,
        kind: Kind::Special,
        doc: "CPU-count factor for the defaults: 0 none, 1 log (1 + ilog2(min(cpus, 8))), 2 linear",
    },
    Spec {
        name: "sched_latency_ns",
        exists: In::Cfs,
        kind: Kind::Ns(100_000, SEC),
        doc: "targeted preemption latency (6 ms × factor), 0.1 ms–1 s",
    },
    Spec {
        name: "sched_min_granularity_ns",
        exists: In::Cfs,
        kind: Kind::Ns(100_000, SEC),
        doc: "minimum slice (0.75 ms × factor), 0.1 ms–1 s",
    },
    Spec {
        name: "sched_wakeup_granularity_ns",
        exists: In::Cfs,
        kind: Kind::Ns(0, SEC),
        doc: "wakeup preemption granularity (1 ms × factor), 0–1 s",
    },
    Spec {
        name: "sched_child_runs_first",
        exists: In::Cfs,
        kind: Kind::Bool,
        doc: "a forked child runs before its parent",
    },
    Spec {
        name: "base_slice_ns",
        exists: In::Eevdf,
        kind: Kind::Ns(100_000, SEC),
        doc: "EEVDF request size (0.75 ms × factor; 0.70 ms × factor in 6.18), 0.1 ms–1 s",
    },
    Spec {
        name: "sched_migration_cost_ns",
        exists: In::All,
        kind: Kind::Ns(0, SEC),
        doc: "a task that ran this recently is cache-hot; newidle needs this much avg_idle (0–1 s)",
    },
    Spec {
        name: "sched_nr_migrate",
        exists: In::All,
        kind: Kind::Int(1, 1024),
        doc: "tasks one balance pass may examine (1–1024)",
    },
    Spec {
        name: "balance",
        exists: In::All,
        kind: Kind::Bool,
        doc: "scheduling domains: select_task_rq_fair + load balancing (0: idle-or-prev, no balancer)",
    },
    Spec {
        name: "autogroup",
        exists: In::All,
        kind: Kind::Bool,
        doc: "kernel.sched_autogroup_enabled: each session is a task group of its own",
    },
    Spec {
        name: "START_DEBIT",
        exists: In::Cfs,
        kind: Kind::Bool,
        doc: "feature: new tasks start one vslice after min_vruntime",
    },
    Spec {
        name: "GENTLE_FAIR_SLEEPERS",
        exists: In::Cfs,
        kind: Kind::Bool,
        doc: "feature: sleeper credit is half of sched_latency",
    },
    Spec {
        name: "LAST_BUDDY",
        exists: In::Cfs,
        kind: Kind::Bool,
        doc: "feature: give the CPU back to a wakeup-preempted task",
    },
    Spec {
        name: "BASE_SLICE",
        exists: In::Cfs515,
        kind: Kind::Bool,
        doc: "feature (v5.13+): slices are at least min_granularity",
    },
    Spec { name: "NEXT_BUDDY", exists: In::All, kind: Kind::Bool, doc: "feature: prefer the last wakee" },
    Spec { name: "WAKEUP_PREEMPTION", exists: In::All, kind: Kind::Bool, doc: "feature: wakeups may preempt" },
    Spec {
        name: "SIS_UTIL",
        exists: In::From515,
        kind: Kind::Bool,
        doc: "feature: idle scan depth from LLC utilisation",
    },
    Spec { name: "WA_IDLE", exists: In::From515, kind: Kind::Bool, doc: "feature: wake_affine_idle" },
    Spec { name: "WA_WEIGHT", exists: In::From515, kind: Kind::Bool, doc: "feature: wake_affine_weight" },
    Spec {
        name: "WA_BIAS",
        exists: In::From515,
        kind: Kind::Bool,
        doc: "feature: wake_affine_weight weighs the previous CPU by half the domain's imbalance_pct",
    },
    Spec {
        name: "CACHE_HOT_BUDDY",
        exists: In::All,
        kind: Kind::Bool,
        doc: "feature: the balancer treats a runqueue's next/last buddy as cache-hot",
    },
    Spec { name: "PLACE_LAG", exists: In::Eevdf, kind: Kind::Bool, doc: "feature: a waking task keeps its lag" },
    Spec {
        name: "PLACE_DEADLINE_INITIAL",
        exists: In::Eevdf,
        kind: Kind::Bool,
        doc: "feature: a new task's first deadline is half a slice away",
    },
    Spec {
        name: "PLACE_REL_DEADLINE",
        exists: In::From612,
        kind: Kind::Bool,
        doc: "feature: a migrated task keeps its relative deadline",
    },
    Spec {
        name: "RUN_TO_PARITY",
        exists: In::Eevdf,
        kind: Kind::Bool,
        doc: "feature: curr keeps the CPU until its slice (6.18: the queue's shortest slice) is used",
    },
    Spec {
        name: "PREEMPT_SHORT",
        exists: In::From612,
        kind: Kind::Bool,
        doc: "feature: a shorter-slice wakee may cancel curr's protection",
    },
    Spec { name: "PICK_BUDDY", exists: In::Only618, kind: Kind::Bool, doc: "feature: pick the next buddy if eligible" },
    Spec {
        name: "DELAY_DEQUEUE",
        exists: In::From612,
        kind: Kind::Bool,
        doc: "feature: an ineligible sleeper stays queued until its lag is paid",
    },
    Spec {
        name: "DELAY_ZERO",
        exists: In::From612,
        kind: Kind::Bool,
        doc: "feature: a delayed task's positive lag is dropped",
    },
];

impl FairTunables {
    /// Defaults of `flavor` for a machine of `nr_cpus`, then `--set` overrides. Setting a
    /// granularity sets the effective value, as writing the sysctl does; `sched_nr_latency`
    /// is then recomputed as `DIV_ROUND_UP(latency, min_granularity)`.
    pub fn new(flavor: Flavor, nr_cpus: usize, sets: &[(String, String)]) -> Result<FairTunables, String> {
        let mut version = match flavor {
            Flavor::Cfs => Version::V5_15,
            Flavor::Eevdf => Version::V6_18,
        };
        let mut scaling = Scaling::Log;
        for (k, v) in sets {
            match k.as_str() {
                "version" => version = Version::parse(flavor, v)?,
                "sched_tunable_scaling" => scaling = parse_scaling(v)?,
                _ => {}
            }
        }
        let mut t = FairTunables::defaults(version, scaling, nr_cpus);
        let mut recompute = false;
        for (k, v) in sets {
            let spec = SPECS.iter().find(|s| s.name == k).ok_or_else(|| t.unknown(k))?;
            if !spec.exists.has(version) {
                return Err(format!(
                    "tunable `{k}` does not exist in fair.c v{} (see `schedlab list`)",
                    version.name()
                ));
            }
            recompute |= matches!(k.as_str(), "sched_latency_ns" | "sched_min_granularity_ns");
            t.set(spec, v)?;
        }
        if recompute {
            t.nr_latency = t.latency.div_ceil(t.min_granularity);
        }
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

    fn unknown(&self, key: &str) -> String {
        if key == "sched_nr_latency" && !self.version.is_eevdf() {
            return "tunable `sched_nr_latency` is derived (sched_latency_ns / sched_min_granularity_ns, rounded up); \
                    set those instead"
                .into();
        }
        let names: Vec<&str> = SPECS.iter().filter(|s| s.exists.has(self.version)).map(|s| s.name).collect();
        format!("unknown tunable `{key}` for fair.c v{}; it has: {}", self.version.name(), names.join(", "))
    }

    fn set(&mut self, spec: &Spec, v: &str) -> Result<(), String> {
        let k = spec.name;
        let num = match spec.kind {
            Kind::Special => return Ok(()),
            Kind::Bool => u64::from(parse_bool(k, v)?),
            Kind::Ns(lo, hi) | Kind::Int(lo, hi) => {
                let n = parse_u64(k, v)?;
                if n < lo || n > hi {
                    return Err(format!("tunable `{k}` = {n} is outside its range {lo}..={hi}"));
                }
                n
            }
        };
        let on = num != 0;
        let f = &mut self.feat;
        match k {
            "sched_latency_ns" => self.latency = num,
            "sched_min_granularity_ns" => self.min_granularity = num,
            "sched_wakeup_granularity_ns" => self.wakeup_granularity = num,
            "sched_child_runs_first" => self.child_runs_first = on,
            "base_slice_ns" => self.base_slice = num,
            "sched_migration_cost_ns" => self.migration_cost = num,
            "sched_nr_migrate" => self.nr_migrate = num,
            "balance" => self.balance = on,
            "autogroup" => self.autogroup = on,
            "START_DEBIT" => f.start_debit = on,
            "GENTLE_FAIR_SLEEPERS" => f.gentle_fair_sleepers = on,
            "LAST_BUDDY" => f.last_buddy = on,
            "BASE_SLICE" => f.base_slice = on,
            "NEXT_BUDDY" => f.next_buddy = on,
            "WAKEUP_PREEMPTION" => f.wakeup_preemption = on,
            "SIS_UTIL" => f.sis_util = on,
            "WA_IDLE" => f.wa_idle = on,
            "WA_WEIGHT" => f.wa_weight = on,
            "WA_BIAS" => f.wa_bias = on,
            "CACHE_HOT_BUDDY" => f.cache_hot_buddy = on,
            "PLACE_LAG" => f.place_lag = on,
            "PLACE_DEADLINE_INITIAL" => f.place_deadline_initial = on,
            "PLACE_REL_DEADLINE" => f.place_rel_deadline = on,
            "RUN_TO_PARITY" => f.run_to_parity = on,
            "PREEMPT_SHORT" => f.preempt_short = on,
            "PICK_BUDDY" => f.pick_buddy = on,
            "DELAY_DEQUEUE" => f.delay_dequeue = on,
            "DELAY_ZERO" => f.delay_zero = on,
            _ => unreachable!("every spec has a setter: {k}"),
        }
        Ok(())
    }

    /// The current value of a tunable, as `schedlab list` and reports show it.
    fn value(&self, name: &str) -> String {
        let b = |x: bool| if x { "1" } else { "0" }.to_string();
        let f = &self.feat;
        match name {
            "version" => self.version.name().to_string(),
            "sched_tunable_scaling" => (self.scaling as u8).to_string(),
            "sched_latency_ns" => self.latency.to_string(),
            "sched_min_granularity_ns" => self.min_granularity.to_string(),
            "sched_wakeup_granularity_ns" => self.wakeup_granularity.to_string(),
            "sched_child_runs_first" => b(self.child_runs_first),
            "base_slice_ns" => self.base_slice.to_string(),
            "sched_migration_cost_ns" => self.migration_cost.to_string(),
            "sched_nr_migrate" => self.nr_migrate.to_string(),
            "balance" => b(self.balance),
            "autogroup" => b(self.autogroup),
            "START_DEBIT" => b(f.start_debit),
            "GENTLE_FAIR_SLEEPERS" => b(f.gentle_fair_sleepers),
            "LAST_BUDDY" => b(f.last_buddy),
            "BASE_SLICE" => b(f.base_slice),
            "NEXT_BUDDY" => b(f.next_buddy),
            "WAKEUP_PREEMPTION" => b(f.wakeup_preemption),
            "SIS_UTIL" => b(f.sis_util),
            "WA_IDLE" => b(f.wa_idle),
            "WA_WEIGHT" => b(f.wa_weight),
            "WA_BIAS" => b(f.wa_bias),
            "CACHE_HOT_BUDDY" => b(f.cache_hot_buddy),
            "PLACE_LAG" => b(f.place_lag),
            "PLACE_DEADLINE_INITIAL" => b(f.place_deadline_initial),
            "PLACE_REL_DEADLINE" => b(f.place_rel_deadline),
            "RUN_TO_PARITY" => b(f.run_to_parity),
            "PREEMPT_SHORT" => b(f.preempt_short),
            "PICK_BUDDY" => b(f.pick_buddy),
            "DELAY_DEQUEUE" => b(f.delay_dequeue),
            "DELAY_ZERO" => b(f.delay_zero),
            _ => String::new(),
        }
    }

    /// The tunables of this version, in [`SPECS`] order; `sched_nr_latency` is shown (read
    /// only) under CFS.
    pub fn list(&self) -> Vec<Tunable> {
        let mut out: Vec<Tunable> = SPECS
            .iter()
            .filter(|s| s.exists.has(self.version))
            .map(|s| Tunable { name: s.name, value: self.value(s.name), doc: s.doc })
            .collect();
        if !self.version.is_eevdf() {
            out.insert(
                5,
                Tunable {
                    name: "sched_nr_latency",
                    value: self.nr_latency.to_string(),
                    doc: "(read only) tasks beyond which the period grows: latency / min_granularity",
                },
            );
        }
        out
    }
}

fn parse_scaling(v: &str) -> Result<Scaling, String> {
    match v.trim() {
        "0" | "none" => Ok(Scaling::None),
        "1" | "log" => Ok(Scaling::Log),
        "2" | "linear" => Ok(Scaling::Linear),
        _ => Err(format!("tunable `sched_tunable_scaling`: expected 0/none, 1/log or 2/linear, found `{v}`")),
    }
}

fn parse_bool(k: &str, v: &str) -> Result<bool, String> {
    match v.trim() {
        "1" | "true" | "on" => Ok(true),
        "0" | "false" | "off" => Ok(false),
        _ => Err(format!("tunable `{k}`: expected 0/1 or true/false, found `{v}`")),
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
        assert!(err(Flavor::Cfs, "sched_bogus", "1").contains("unknown tunable"));
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
