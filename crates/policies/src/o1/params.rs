//! The O(1) scheduler's constants (`kernel/sched.c` top and `include/linux/sched.h`, Linux
//! 2.6.20) and its tunables. Everything is computed in jiffies at the modelled `HZ`, with C
//! integer division, as the kernel does: `task_timeslice` at HZ = 1000 gives 800/100/5 ms at
//! nice −20/0/19.

use schedlab_sched_api::{Kind, Pass, Tunable, TunableSpec, TunableTable, Unit};

/// `MAX_RT_PRIO`: priorities 0..99 are real-time; normal tasks live in 100..139.
pub const MAX_RT_PRIO: u32 = 100;
/// `MAX_PRIO`: the number of priority lists of a `prio_array`.
pub const MAX_PRIO: u32 = 140;
/// `MAX_USER_PRIO`: the nice range.
pub const MAX_USER_PRIO: u32 = 40;
/// `MAX_BONUS` = `MAX_USER_PRIO * PRIO_BONUS_RATIO / 100` = 10: the dynamic bonus spans −5..+5.
pub const MAX_BONUS: u64 = (MAX_USER_PRIO as u64) * 25 / 100;
/// `SCHED_LOAD_SCALE`: one task's load in the 2.6 balancer's fixed point.
pub const SCHED_LOAD_SCALE: u64 = 128;

/// `NICE_TO_PRIO(nice)`.
pub fn nice_to_prio(nice: i32) -> u32 {
    (MAX_RT_PRIO as i32 + nice + 20) as u32
}

/// The parsed tunables.
#[derive(Clone, Debug)]
pub struct O1Tunables {
    pub hz: u64,
    pub def_timeslice_ms: u64,
    pub min_timeslice_ms: u64,
    pub starvation_limit_ms: u64,
    pub on_runqueue_weight: u64,
    pub child_penalty: u64,
    pub parent_penalty: u64,
    pub exit_weight: u64,
    pub interactive_delta: i64,
    pub cache_hot_time_us: u64,
    pub balance: bool,
}

/// The tunables, each defined here once with its range and meaning; parsing, `schedlab
/// list`, the record and the docs read this table. Defaults are the kernel's
/// ([`O1Tunables::default`]; HZ = 1000, the 2.6.0–2.6.12 default).
pub static TUNABLES: TunableTable<O1Tunables> = TunableTable {
    owner: "sched.c (2.6)",
    version: None,
    specs: &[
        TunableSpec::new(
            "hz",
            Kind::int(100, 1000, Unit::Hz),
            "CONFIG_HZ: jiffies per second; the tick period and every jiffy rounding",
            |t| t.hz as i64,
            |t, v| t.hz = v as u64,
        ),
        TunableSpec::new(
            "def_timeslice_ms",
            Kind::int(1, 1000, Unit::Ms),
            "DEF_TIMESLICE: the nice-0 slice; nice<0 scales 4x this (800 ms at -20)",
            |t| t.def_timeslice_ms as i64,
            |t, v| t.def_timeslice_ms = v as u64,
        ),
        TunableSpec::new(
            "min_timeslice_ms",
            Kind::int(1, 100, Unit::Ms),
            "MIN_TIMESLICE: the floor of every slice (nice 19), at least one jiffy",
            |t| t.min_timeslice_ms as i64,
            |t, v| t.min_timeslice_ms = v as u64,
        ),
        TunableSpec::new(
            "starvation_limit_ms",
            Kind::int(0, 100_000, Unit::Ms),
            "STARVATION_LIMIT (= MAX_SLEEP_AVG): an expired task waiting longer than this x nr_running stops interactive requeueing; 0 = never",
            |t| t.starvation_limit_ms as i64,
            |t, v| t.starvation_limit_ms = v as u64,
        ),
        TunableSpec::new(
            "on_runqueue_weight",
            Kind::int(0, 100, Unit::Percent),
            "ON_RUNQUEUE_WEIGHT: runqueue wait credited as sleep after a task-to-task wakeup",
            |t| t.on_runqueue_weight as i64,
            |t, v| t.on_runqueue_weight = v as u64,
        ),
        TunableSpec::new(
            "child_penalty",
            Kind::int(0, 100, Unit::Percent),
            "CHILD_PENALTY: the part of its inherited bonus a forked child keeps",
            |t| t.child_penalty as i64,
            |t, v| t.child_penalty = v as u64,
        ),
        TunableSpec::new(
            "parent_penalty",
            Kind::int(0, 100, Unit::Percent),
            "PARENT_PENALTY: the part of its bonus a forking parent keeps",
            |t| t.parent_penalty as i64,
            |t, v| t.parent_penalty = v as u64,
        ),
        TunableSpec::new(
            "exit_weight",
            Kind::int(0, 100, Unit::None),
            "EXIT_WEIGHT: parent sleep_avg = (w*parent + child)/(w+1) when a hungrier child exits",
            |t| t.exit_weight as i64,
            |t, v| t.exit_weight = v as u64,
        ),
        TunableSpec::new(
            "interactive_delta",
            Kind::int(0, 10, Unit::None),
            "INTERACTIVE_DELTA: how far above its static priority a task must be to count as interactive",
            |t| t.interactive_delta,
            |t, v| t.interactive_delta = v,
        ),
        TunableSpec::new(
            "cache_hot_time_us",
            Kind::int(0, 1_000_000, Unit::Us),
            "cache_hot_time of the CPU-level domains (SD_CPU_INIT; SMT 0, NUMA 10 ms): a task that ran more recently is not pulled",
            |t| t.cache_hot_time_us as i64,
            |t, v| t.cache_hot_time_us = v as u64,
        ),
        TunableSpec::new(
            "balance",
            Kind::Bool,
            "load balancing (rebalance_tick, idle_balance, active balance); 0 = none",
            |t| t.balance.into(),
            |t, v| t.balance = v != 0,
        ),
    ],
};

impl Default for O1Tunables {
    fn default() -> Self {
        O1Tunables {
            hz: 1000,
            def_timeslice_ms: 100,
            min_timeslice_ms: 5,
            starvation_limit_ms: 1000,
            on_runqueue_weight: 30,
            child_penalty: 95,
            parent_penalty: 100,
            exit_weight: 3,
            interactive_delta: 2,
            cache_hot_time_us: 2500,
            balance: true,
        }
    }
}

impl O1Tunables {
    pub fn new(sets: &[(String, String)]) -> Result<O1Tunables, String> {
        let mut t = O1Tunables::default();
        TUNABLES.apply(&mut t, sets, Pass::All, "scheduler `o1`")?;
        Ok(t)
    }

    pub fn list(&self) -> Vec<Tunable> {
        TUNABLES.list(self)
    }

    /// Nanoseconds per jiffy (`1000000000 / HZ`, truncated as in `NS_TO_JIFFIES`).
    pub fn ns_per_jiffy(&self) -> u64 {
        1_000_000_000 / self.hz
    }
    /// `DEF_TIMESLICE` in jiffies (`100 * HZ / 1000`).
    pub fn def_timeslice(&self) -> u64 {
        (self.def_timeslice_ms * self.hz / 1000).max(1)
    }
    /// `MIN_TIMESLICE` = `max(5 * HZ / 1000, 1)` jiffies.
    pub fn min_timeslice(&self) -> u64 {
        (self.min_timeslice_ms * self.hz / 1000).max(1)
    }
    /// `MAX_SLEEP_AVG` = `DEF_TIMESLICE * MAX_BONUS` jiffies.
    pub fn max_sleep_avg(&self) -> u64 {
        self.def_timeslice() * MAX_BONUS
    }
    /// `NS_MAX_SLEEP_AVG`.
    pub fn ns_max_sleep_avg(&self) -> u64 {
        self.max_sleep_avg() * self.ns_per_jiffy()
    }
    /// `STARVATION_LIMIT` in jiffies.
    pub fn starvation_limit(&self) -> u64 {
        self.starvation_limit_ms * self.hz / 1000
    }
    /// `GRANULARITY` = `10 * HZ / 1000 ?: 1` jiffies.
    pub fn granularity(&self) -> u64 {
        (10 * self.hz / 1000).max(1)
    }
    /// `CURRENT_BONUS(p)` = `NS_TO_JIFFIES(sleep_avg) * MAX_BONUS / MAX_SLEEP_AVG` (0..=10).
    pub fn current_bonus(&self, sleep_avg: u64) -> u64 {
        (sleep_avg / self.ns_per_jiffy()) * MAX_BONUS / self.max_sleep_avg()
    }
    /// `SCALE_PRIO(x, prio)` = `max(x * (MAX_PRIO - prio) / (MAX_USER_PRIO / 2), MIN_TIMESLICE)`.
    fn scale_prio(&self, x: u64, prio: u32) -> u64 {
        (x * u64::from(MAX_PRIO - prio) / u64::from(MAX_USER_PRIO / 2)).max(self.min_timeslice())
    }
    /// `static_prio_timeslice` / `task_timeslice` (jiffies): by static priority only.
    pub fn task_timeslice(&self, static_prio: u32) -> u64 {
        if static_prio < nice_to_prio(0) {
            self.scale_prio(self.def_timeslice() * 4, static_prio)
        } else {
            self.scale_prio(self.def_timeslice(), static_prio)
        }
    }
    /// `DELTA(p)` (2.6.20): `SCALE(nice + 20, 40, MAX_BONUS) - 20 * MAX_BONUS / 40 + INTERACTIVE_DELTA`.
    pub fn delta(&self, static_prio: u32) -> i64 {
        let nice = i64::from(static_prio) - i64::from(nice_to_prio(0));
        (nice + 20) * MAX_BONUS as i64 / 40 - 20 * MAX_BONUS as i64 / 40 + self.interactive_delta
    }
    /// `TASK_INTERACTIVE(p)`: `prio <= static_prio - DELTA(p)`.
    pub fn task_interactive(&self, prio: u32, static_prio: u32) -> bool {
        i64::from(prio) <= i64::from(static_prio) - self.delta(static_prio)
    }
    /// `INTERACTIVE_SLEEP(p)` in ns: `JIFFIES_TO_NS(MAX_SLEEP_AVG * (MAX_BONUS/2 + DELTA + 1) / MAX_BONUS - 1)`.
    pub fn interactive_sleep(&self, static_prio: u32) -> u64 {
        let j =
            self.max_sleep_avg() as i64 * (MAX_BONUS as i64 / 2 + self.delta(static_prio) + 1) / MAX_BONUS as i64 - 1;
        j.max(0) as u64 * self.ns_per_jiffy()
    }
    /// `TIMESLICE_GRANULARITY(p)` (SMP form): `GRANULARITY * 2^(max(MAX_BONUS - bonus, 1) - 1) * ncpus`.
    pub fn timeslice_granularity(&self, sleep_avg: u64, ncpus: u64) -> u64 {
        let lost = (MAX_BONUS - self.current_bonus(sleep_avg).min(MAX_BONUS)).max(1);
        self.granularity() * (1 << (lost - 1)) * ncpus
    }
    /// `__normal_prio`: `static_prio - (CURRENT_BONUS - MAX_BONUS / 2)`, clamped to 100..139.
    pub fn normal_prio(&self, static_prio: u32, sleep_avg: u64) -> u32 {
        let bonus = self.current_bonus(sleep_avg) as i64 - MAX_BONUS as i64 / 2;
        (i64::from(static_prio) - bonus).clamp(i64::from(MAX_RT_PRIO), i64::from(MAX_PRIO) - 1) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t() -> O1Tunables {
        O1Tunables::new(&[]).unwrap()
    }

    /// `task_timeslice` at HZ = 1000 (reference table §B.4), and at HZ = 250.
    #[test]
    fn timeslices_by_nice() {
        let t = t();
        let ms = |nice| t.task_timeslice(nice_to_prio(nice));
        assert_eq!(
            [ms(-20), ms(-10), ms(-1), ms(0), ms(1), ms(5), ms(10), ms(15), ms(19)],
            [800, 600, 420, 100, 95, 75, 50, 25, 5]
        );
        let t250 = O1Tunables::new(&[("hz".into(), "250".into())]).unwrap();
        let j = |nice| t250.task_timeslice(nice_to_prio(nice));
        assert_eq!([j(-20), j(0), j(1), j(19)], [200, 25, 23, 1]);
    }

    /// `DELTA` and `TASK_INTERACTIVE` (the table in the kernel's comment) and `INTERACTIVE_SLEEP`.
    #[test]
    fn interactivity_thresholds() {
        let t = t();
        assert_eq!([t.delta(100), t.delta(120), t.delta(139)], [-3, 2, 6]);
        // TASK_INTERACTIVE over the bonus range −5..+5 (prio = static − bonus).
        let row = |nice: i32| -> Vec<bool> {
            let s = nice_to_prio(nice);
            (-5..=5).rev().map(|b: i32| t.task_interactive((s as i32 - b).clamp(100, 139) as u32, s)).collect()
        };
        let bits = |v: Vec<bool>| v.iter().map(|&b| u8::from(b)).collect::<Vec<_>>();
        assert_eq!(bits(row(-20)), [1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0]);
        assert_eq!(bits(row(0)), [1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(bits(row(10)), [1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(bits(row(19)), [0; 11]);
        assert_eq!(t.interactive_sleep(120), 799_000_000);
    }

    /// `CURRENT_BONUS` and the dynamic priority: static + 5 for a hog, static − 5 for a sleeper.
    #[test]
    fn bonus_and_dynamic_priority() {
        let t = t();
        assert_eq!(t.current_bonus(0), 0);
        assert_eq!(t.current_bonus(699_999_999), 6);
        assert_eq!(t.current_bonus(1_000_000_000), 10);
        assert_eq!(t.normal_prio(120, 0), 125);
        assert_eq!(t.normal_prio(120, 1_000_000_000), 115);
        assert_eq!(t.normal_prio(100, 1_000_000_000), 100, "clamped to MAX_RT_PRIO");
        assert!(t.task_interactive(t.normal_prio(120, 700_000_000), 120));
        assert!(!t.task_interactive(t.normal_prio(120, 699_000_000), 120));
        assert_eq!(t.timeslice_granularity(1_000_000_000, 1), 10);
        assert_eq!(t.timeslice_granularity(800_000_000, 2), 40);
    }

    #[test]
    fn bad_tunables_are_refused_by_name() {
        assert!(O1Tunables::new(&[("hz".into(), "5".into())]).unwrap_err().contains("hz"));
        assert!(O1Tunables::new(&[("nope".into(), "1".into())]).unwrap_err().contains("nope"));
        let t = O1Tunables::new(&[("def_timeslice_ms".into(), "50ms".into())]).unwrap();
        assert_eq!(t.def_timeslice(), 50);
        let t = O1Tunables::new(&[("cache_hot_time_us".into(), "3ms".into())]).unwrap();
        assert_eq!(t.cache_hot_time_us, 3000);
        let e = O1Tunables::new(&[("def_timeslice_ms".into(), "1500us".into())]).unwrap_err();
        assert!(e.contains("not a whole number of ms"), "{e}");
    }
}
