//! CFS tunables and their CPU-count scaling (fair.c: `sysctl_sched_*`,
//! `get_update_sysctl_factor`, `update_sysctl`, `sched_proc_update_handler`).

use crate::registry::{parse_u64, unknown};
use schedlab_sched_api::Tunable;

/// `enum sched_tunable_scaling`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scaling {
    None = 0,
    Log = 1,
    Linear = 2,
}

#[derive(Clone, Debug)]
pub struct CfsTunables {
    pub scaling: Scaling,
    pub latency: u64,
    pub min_granularity: u64,
    pub wakeup_granularity: u64,
    pub nr_latency: u64,
    pub child_runs_first: bool,
    /// Features (`features.h`) that matter to the model.
    pub start_debit: bool,
    pub gentle_fair_sleepers: bool,
    pub wakeup_preemption: bool,
    pub next_buddy: bool,
    pub last_buddy: bool,
    pub base_slice: bool,
    /// `sysctl_sched_migration_cost` (cache hotness, newidle gate), ns.
    pub migration_cost: u64,
    /// `sysctl_sched_nr_migrate`: tasks a balance pass may examine.
    pub nr_migrate: u64,
    /// Load balancing and wakeup/fork placement by scheduling domains (off: idle-or-previous
    /// placement and no balancer, the pre-issue-4 model).
    pub balance: bool,
    /// `SIS_UTIL`: limit the idle-CPU scan by the LLC's utilisation.
    pub sis_util: bool,
    /// `WA_IDLE`, `WA_WEIGHT` wake-affine heuristics.
    pub wa_idle: bool,
    pub wa_weight: bool,
}

/// `normalized_sysctl_sched_latency` etc. (base values for one CPU).
const BASE_LATENCY: u64 = 6_000_000;
const BASE_MIN_GRANULARITY: u64 = 750_000;
const BASE_WAKEUP_GRANULARITY: u64 = 1_000_000;

/// `get_update_sysctl_factor`: `cpus = min(online, 8)`; NONE 1, LOG 1 + ilog2(cpus), LINEAR cpus.
pub fn factor(scaling: Scaling, nr_cpus: usize) -> u64 {
    let cpus = nr_cpus.clamp(1, 8) as u64;
    match scaling {
        Scaling::None => 1,
        Scaling::Linear => cpus,
        Scaling::Log => 1 + u64::from(cpus.ilog2()),
    }
}

impl CfsTunables {
    /// Defaults for a machine of `nr_cpus`, then `--set` overrides. Setting a granularity
    /// sets the effective value, as writing the sysctl does; `sched_nr_latency` is then
    /// recomputed as `DIV_ROUND_UP(latency, min_granularity)`.
    pub fn new(nr_cpus: usize, sets: &[(String, String)]) -> Result<CfsTunables, String> {
        let mut scaling = Scaling::Log;
        for (k, v) in sets {
            if k == "sched_tunable_scaling" {
                scaling = match v.trim() {
                    "0" | "none" => Scaling::None,
                    "1" | "log" => Scaling::Log,
                    "2" | "linear" => Scaling::Linear,
                    _ => return Err(format!("tunable `{k}`: expected 0/none, 1/log or 2/linear, found `{v}`")),
                };
            }
        }
        let f = factor(scaling, nr_cpus);
        let mut t = CfsTunables {
            scaling,
            latency: BASE_LATENCY * f,
            min_granularity: BASE_MIN_GRANULARITY * f,
            wakeup_granularity: BASE_WAKEUP_GRANULARITY * f,
            nr_latency: 8,
            child_runs_first: false,
            start_debit: true,
            gentle_fair_sleepers: true,
            wakeup_preemption: true,
            next_buddy: false,
            last_buddy: true,
            base_slice: true,
            migration_cost: 500_000,
            nr_migrate: 32,
            balance: true,
            sis_util: true,
            wa_idle: true,
            wa_weight: true,
        };
        let mut recompute = false;
        for (k, v) in sets {
            let b = |v: &str| -> Result<bool, String> {
                match v.trim() {
                    "1" | "true" | "on" => Ok(true),
                    "0" | "false" | "off" => Ok(false),
                    _ => Err(format!("tunable `{k}`: expected 0/1 or true/false, found `{v}`")),
                }
            };
            match k.as_str() {
                "sched_tunable_scaling" => {}
                "sched_latency_ns" => {
                    t.latency = parse_u64(k, v)?;
                    recompute = true;
                }
                "sched_min_granularity_ns" => {
                    t.min_granularity = parse_u64(k, v)?;
                    recompute = true;
                }
                "sched_wakeup_granularity_ns" => t.wakeup_granularity = parse_u64(k, v)?,
                "sched_child_runs_first" => t.child_runs_first = b(v)?,
                "START_DEBIT" => t.start_debit = b(v)?,
                "GENTLE_FAIR_SLEEPERS" => t.gentle_fair_sleepers = b(v)?,
                "WAKEUP_PREEMPTION" => t.wakeup_preemption = b(v)?,
                "NEXT_BUDDY" => t.next_buddy = b(v)?,
                "LAST_BUDDY" => t.last_buddy = b(v)?,
                "BASE_SLICE" => t.base_slice = b(v)?,
                "sched_migration_cost_ns" => t.migration_cost = parse_u64(k, v)?,
                "sched_nr_migrate" => t.nr_migrate = parse_u64(k, v)?.max(1),
                "balance" => t.balance = b(v)?,
                "SIS_UTIL" => t.sis_util = b(v)?,
                "WA_IDLE" => t.wa_idle = b(v)?,
                "WA_WEIGHT" => t.wa_weight = b(v)?,
                _ => return Err(unknown("cfs", k, &t.list())),
            }
        }
        if t.min_granularity == 0 {
            return Err("tunable `sched_min_granularity_ns` must be > 0".into());
        }
        if recompute {
            t.nr_latency = t.latency.div_ceil(t.min_granularity);
        }
        Ok(t)
    }

    pub fn list(&self) -> Vec<Tunable> {
        let b = |x: bool| if x { "1" } else { "0" }.to_string();
        vec![
            Tunable {
                name: "sched_latency_ns",
                value: self.latency.to_string(),
                doc: "targeted preemption latency (6 ms × factor)",
            },
            Tunable {
                name: "sched_min_granularity_ns",
                value: self.min_granularity.to_string(),
                doc: "minimum slice (0.75 ms × factor)",
            },
            Tunable {
                name: "sched_wakeup_granularity_ns",
                value: self.wakeup_granularity.to_string(),
                doc: "wakeup preemption granularity (1 ms × factor)",
            },
            Tunable {
                name: "sched_nr_latency",
                value: self.nr_latency.to_string(),
                doc: "tasks beyond which the period grows (derived: latency / min_granularity)",
            },
            Tunable {
                name: "sched_child_runs_first",
                value: b(self.child_runs_first),
                doc: "a forked child runs before its parent",
            },
            Tunable {
                name: "sched_tunable_scaling",
                value: (self.scaling as u8).to_string(),
                doc: "CPU-count factor for the defaults: 0 none, 1 log (1 + ilog2(min(cpus, 8))), 2 linear",
            },
            Tunable {
                name: "START_DEBIT",
                value: b(self.start_debit),
                doc: "feature: new tasks start one vslice after min_vruntime",
            },
            Tunable {
                name: "GENTLE_FAIR_SLEEPERS",
                value: b(self.gentle_fair_sleepers),
                doc: "feature: sleeper credit is half of sched_latency",
            },
            Tunable {
                name: "WAKEUP_PREEMPTION",
                value: b(self.wakeup_preemption),
                doc: "feature: wakeups may preempt",
            },
            Tunable { name: "NEXT_BUDDY", value: b(self.next_buddy), doc: "feature: prefer the last wakee" },
            Tunable {
                name: "LAST_BUDDY",
                value: b(self.last_buddy),
                doc: "feature: give the CPU back to a wakeup-preempted task",
            },
            Tunable {
                name: "BASE_SLICE",
                value: b(self.base_slice),
                doc: "feature (v5.13+): slices are at least min_granularity",
            },
            Tunable {
                name: "sched_migration_cost_ns",
                value: self.migration_cost.to_string(),
                doc: "a task that ran this recently is cache-hot; newidle needs this much avg_idle",
            },
            Tunable {
                name: "sched_nr_migrate",
                value: self.nr_migrate.to_string(),
                doc: "tasks one balance pass may examine",
            },
            Tunable {
                name: "balance",
                value: b(self.balance),
                doc: "scheduling domains: select_task_rq_fair + load balancing (0: idle-or-prev, no balancer)",
            },
            Tunable { name: "SIS_UTIL", value: b(self.sis_util), doc: "feature: idle scan depth from LLC utilisation" },
            Tunable { name: "WA_IDLE", value: b(self.wa_idle), doc: "feature: wake_affine_idle" },
            Tunable { name: "WA_WEIGHT", value: b(self.wa_weight), doc: "feature: wake_affine_weight" },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn scaling_table_of_linux_fair_md() {
        // linux-fair.md §1.3: 1 CPU → 6 ms; 2–3 → 12 ms; 4–7 → 18 ms; ≥8 → 24 ms.
        for (cpus, lat) in [(1, 6), (2, 12), (3, 12), (4, 18), (7, 18), (8, 24), (32, 24)] {
            let t = CfsTunables::new(cpus, &[]).unwrap();
            assert_eq!(t.latency, lat * 1_000_000, "{cpus} CPUs");
        }
        let t = CfsTunables::new(8, &[("sched_tunable_scaling".into(), "0".into())]).unwrap();
        assert_eq!(t.min_granularity, 750_000);
        let t = CfsTunables::new(1, &[("sched_latency_ns".into(), "30ms".into())]).unwrap();
        assert_eq!((t.latency, t.nr_latency), (30_000_000, 40));
        assert!(CfsTunables::new(1, &[("sched_bogus".into(), "1".into())]).unwrap_err().contains("unknown tunable"));
    }
}
