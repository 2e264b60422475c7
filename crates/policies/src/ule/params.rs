//! ULE's constants and tunables for the two modelled versions: FreeBSD 11.1 and "current"
//! (15.0 / 2025 main). Priority ranges come from `sys/sys/priority.h`; the derived macros
//! (`PRI_MIN_BATCH`, `SCHED_PRI_MIN`, …) and the clock-derived values from the top of
//! `sched_ule.c` and `sched_initticks`.

use crate::registry::unknown;
use schedlab_sched_api::Tunable;

/// Which `sched_ule.c` is modelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// FreeBSD 11.1 (the ULE-vs-CFS paper's port): three runqs, 64-slot calendar.
    V11_1,
    /// FreeBSD 15 / 2025 main: new priority ranges and formulas, 109-slot calendar
    /// advancing 7 slots per 4 ticks, first-eligible stealing, `tdq_trysteal`.
    Current,
}

/// `PRI_MAX_IDLE`: the idle thread's priority and `tdq_lowpri` of an idle CPU.
pub const PRI_MAX_IDLE: u8 = 255;
/// `PRI_MIN_IDLE`: start of the idle class (`SCHED_IDLE` tasks run here).
pub const PRI_MIN_IDLE: u8 = 224;
/// `PRI_MAX_TIMESHARE` (every version).
pub const PRI_MAX_TIMESHARE: u8 = 223;
/// `SCHED_TICK_SHIFT`: fixed-point shift of the run/sleep history and pctcpu ticks.
pub const SCHED_TICK_SHIFT: u32 = 10;
/// `SCHED_INTERACT_MAX`, `SCHED_INTERACT_HALF`.
pub const SCHED_INTERACT_MAX: u32 = 100;
pub const SCHED_INTERACT_HALF: u32 = SCHED_INTERACT_MAX / 2;
/// `SCHED_SLICE_DEFAULT_DIVISOR`, `SCHED_SLICE_MIN_DIVISOR`.
const SCHED_SLICE_DEFAULT_DIVISOR: u32 = 10;
pub const SCHED_SLICE_MIN_DIVISOR: u32 = 6;

/// Who may preempt a running user thread (`preempt`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preempt {
    /// FreeBSD's own rules: a better-priority wakeup sets `TDF_NEEDRESCHED` locally
    /// (`sched_setpreempt`), an interactive one IPIs a remote CPU running a batch thread
    /// (`sched_shouldpreempt`, `tdq_notify`).
    FreeBsd,
    /// ULE as the ULE-vs-CFS study ran it, ported into Linux 4.9 with full preemption off:
    /// only kernel threads preempt; a user thread's wakeup never switches out a running user
    /// thread before its slice ends or it blocks.
    Kthread,
}

/// Priority-space layout of a version (`priority.h` + `sched_ule.c` macros).
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub min_kern: u8,
    pub min_interact: u8,
    pub max_interact: u8,
    pub min_batch: u8,
    pub max_batch: u8,
    /// `PRI_BATCH_RANGE`.
    pub batch_range: u32,
    /// `PRI_INTERACT_RANGE`.
    pub interact_range: u32,
    /// 11.1: `SCHED_PRI_MIN` (= `PRI_MIN_BATCH + SCHED_PRI_NHALF`); current: unused.
    pub sched_pri_min: u8,
    /// 11.1: `SCHED_PRI_RANGE`; current: `SCHED_PRI_CPU_RANGE`.
    pub sched_pri_range: u32,
    /// Slots of the timeshare calendar: 11.1 `RQ_NQS` = 64; current `RQ_TS_POL_MODULO` = 109.
    pub calendar_slots: usize,
    /// Priorities per run-queue list (`RQ_PPQ`): 4 in 11.1, 1 in current.
    pub ppq: u8,
}

impl Layout {
    pub fn of(v: Version) -> Layout {
        match v {
            // 11.1: timeshare 120–223 (range 104), NRESV 40 → interact 32 (120–151),
            // batch 152–223 (72); SCHED_PRI_NHALF 20 → SCHED_PRI_MIN 172, MAX 203, RANGE 32.
            Version::V11_1 => Layout {
                min_kern: 80,
                min_interact: 120,
                max_interact: 151,
                min_batch: 152,
                max_batch: 223,
                batch_range: 72,
                interact_range: 32,
                sched_pri_min: 172,
                sched_pri_range: 32,
                calendar_slots: 64,
                ppq: 4,
            },
            // 15: timeshare 56–223 (168), NRESV 50 → interact 59 (56–114), batch 115–223
            // (109), SCHED_PRI_CPU_RANGE = 109 − 50 = 59.
            Version::Current => Layout {
                min_kern: 40,
                min_interact: 56,
                max_interact: 114,
                min_batch: 115,
                max_batch: 223,
                batch_range: 109,
                interact_range: 59,
                sched_pri_min: 115,
                sched_pri_range: 59,
                calendar_slots: 109,
                ppq: 1,
            },
        }
    }
}

/// The tunables (`kern.sched.*` sysctls and the clock rates they derive from).
#[derive(Clone, Debug)]
pub struct UleTunables {
    pub version: Version,
    /// `version=11.1-linux`: 11.1's `sched_ule.c` as the ULE-vs-CFS study ran it, ported
    /// into Linux 4.9 — `preempt=kthread`, and Linux's idle loop, which never calls back
    /// into the idle search of a CPU that stays idle (`idle_wakeup=0`).
    pub linux_port: bool,
    /// `hz`: the `ticks` counter rate (1000 on amd64).
    pub hz: u32,
    /// `stathz`: the statistics clock driving `sched_clock` (127 with one-shot timers).
    pub stathz: u32,
    /// `sched_slice` in stat ticks (`realstathz / 10`).
    pub slice: u32,
    /// `sched_slice_min` (`sched_slice / 6`).
    pub slice_min: u32,
    /// `sched_interact` (`kern.sched.interact`).
    pub interact: u32,
    /// `preempt_thresh` (`kern.sched.preempt_thresh`; `PRI_MIN_KERN` with `options PREEMPTION`).
    pub preempt_thresh: u32,
    /// `static_boost` (`kern.sched.static_boost`, default `PRI_MIN_BATCH`).
    pub static_boost: u32,
    /// `affinity` in hz ticks (`SCHED_AFFINITY_DEFAULT`).
    pub affinity: u32,
    /// `steal_idle`, `steal_thresh`.
    pub steal_idle: bool,
    pub steal_thresh: u32,
    /// `rebalance` (`kern.sched.balance`) and `balance_interval` in stat ticks.
    pub balance: bool,
    pub balance_interval: u32,
    /// `preempt`: FreeBSD's wakeup preemption or the study's kernel-threads-only variant.
    pub preempt: Preempt,
    /// hz ticks an idle CPU sleeps at most before a hardclock interrupt wakes it and its
    /// idle thread calls `tdq_idled` again (`hz / 2`, `getnextcpuevent`); 0: never.
    pub idle_wakeup: u32,
}

/// One tunable: its name, range and documentation, and how to read and write it. Every
/// tunable is defined here once; `--set`, `schedlab list` and the errors read this table.
struct Spec {
    name: &'static str,
    /// Accepted values (inclusive); `--set` outside them is an error naming the range.
    range: (u32, u32),
    doc: &'static str,
    get: fn(&UleTunables) -> u32,
    set: fn(&mut UleTunables, u32),
}

/// Upper bound of the clock rates: the machine file's HZ limit. `sched_ule.c` has no
/// range for `hz` (a loader tunable) or `stathz` (set by the timer driver), but the model
/// ticks every CPU at `stathz`: 10^9 once meant a tick per nanosecond and 5 GB of events.
const MAX_HZ: u32 = 10_000;

/// Every ULE tunable except `version` (handled first: the defaults depend on it). FreeBSD's
/// sysctls are plain `SYSCTL_INT`s without limits, except `kern.sched.slice` and
/// `kern.sched.quantum`, which refuse values <= 0 (`sysctl_kern_slice`,
/// `sysctl_kern_quantum`); the upper bounds are documented ones that keep the tick-based
/// arithmetic (`hogticks`, `SCHED_AFFINITY`, `tickincr`) far from `int` overflow.
const SPECS: &[Spec] = &[
    Spec {
        name: "hz",
        range: (1, MAX_HZ),
        doc: "rate of the `ticks` counter (sleep time, affinity); 1000 on amd64",
        get: |t| t.hz,
        set: |t, v| t.hz = v,
    },
    Spec {
        name: "stathz",
        range: (1, MAX_HZ),
        doc: "statistics clock driving sched_clock; 127 with one-shot timers",
        get: |t| t.stathz,
        set: |t, v| t.stathz = v,
    },
    Spec {
        name: "slice",
        range: (1, 10_000),
        doc: "sched_slice, stat ticks (stathz/10); sysctl_kern_slice refuses <= 0",
        get: |t| t.slice,
        set: |t, v| t.slice = v,
    },
    Spec {
        name: "slice_min",
        range: (1, 10_000),
        doc: "sched_slice_min, stat ticks (slice/6)",
        get: |t| t.slice_min,
        set: |t, v| t.slice_min = v,
    },
    Spec {
        name: "interact",
        range: (0, SCHED_INTERACT_MAX),
        doc: "interactivity threshold of the score (30); scores run 0..=100",
        get: |t| t.interact,
        set: |t, v| t.interact = v,
    },
    Spec {
        name: "preempt_thresh",
        range: (0, PRI_MAX_IDLE as u32),
        doc: "priorities at or below preempt at once (PRI_MIN_KERN); priorities run 0..=255",
        get: |t| t.preempt_thresh,
        set: |t, v| t.preempt_thresh = v,
    },
    Spec {
        name: "static_boost",
        range: (0, PRI_MAX_IDLE as u32),
        doc: "priority of a sleeping batch thread (PRI_MIN_BATCH)",
        get: |t| t.static_boost,
        set: |t, v| t.static_boost = v,
    },
    Spec {
        name: "affinity",
        range: (0, 100_000),
        doc: "cache affinity per level, hz ticks (1 at hz=1000)",
        get: |t| t.affinity,
        set: |t, v| t.affinity = v,
    },
    Spec {
        name: "steal_idle",
        range: (0, 1),
        doc: "idle CPUs steal threads (1)",
        get: |t| u32::from(t.steal_idle),
        set: |t, v| t.steal_idle = v != 0,
    },
    Spec {
        name: "steal_thresh",
        range: (0, 1_000_000),
        doc: "minimum victim load for stealing (2)",
        get: |t| t.steal_thresh,
        set: |t, v| t.steal_thresh = v,
    },
    Spec {
        name: "balance",
        range: (0, 1),
        doc: "periodic balancer on CPU 0 (1)",
        get: |t| u32::from(t.balance),
        set: |t, v| t.balance = v != 0,
    },
    Spec {
        name: "balance_interval",
        range: (1, 1_000_000),
        doc: "balancer period, stat ticks (stathz; 0.5x–1.5x at random)",
        get: |t| t.balance_interval,
        set: |t, v| t.balance_interval = v,
    },
    Spec {
        name: "idle_wakeup",
        range: (0, 100_000),
        doc: "hz ticks an idle CPU sleeps at most before a hardclock wakes it to steal again (hz/2); 0: never",
        get: |t| t.idle_wakeup,
        set: |t, v| t.idle_wakeup = v,
    },
];

impl UleTunables {
    pub fn new(sets: &[(String, String)]) -> Result<UleTunables, String> {
        let mut version = Version::V11_1;
        let mut linux_port = false;
        for (_, v) in sets.iter().filter(|(k, _)| k == "version") {
            (version, linux_port) = match v.trim() {
                "11.1" | "11" => (Version::V11_1, false),
                "11.1-linux" => (Version::V11_1, true),
                "current" | "15" => (Version::Current, false),
                _ => return Err(format!("tunable `version`: `{v}` is not one of 11.1, 11.1-linux, current")),
            };
        }
        let mut preempt = if linux_port { Preempt::Kthread } else { Preempt::FreeBsd };
        for (k, v) in sets {
            if k == "preempt" {
                preempt = match v.trim() {
                    "freebsd" => Preempt::FreeBsd,
                    "kthread" => Preempt::Kthread,
                    _ => return Err(format!("tunable `preempt`: `{v}` is not one of freebsd, kthread")),
                };
            }
        }
        let lay = Layout::of(version);
        let (hz, stathz) = (1000, 127);
        let slice = stathz / SCHED_SLICE_DEFAULT_DIVISOR;
        let mut t = UleTunables {
            version,
            linux_port,
            hz,
            stathz,
            slice,
            slice_min: slice / SCHED_SLICE_MIN_DIVISOR,
            interact: 30,
            preempt_thresh: u32::from(lay.min_kern),
            static_boost: u32::from(lay.min_batch),
            affinity: (hz / 1000).max(1),
            steal_idle: true,
            steal_thresh: 2,
            balance: true,
            balance_interval: stathz,
            preempt,
            idle_wakeup: hz / 2,
        };
        for (k, v) in sets.iter().filter(|(k, _)| k != "version" && k != "preempt") {
            let spec = SPECS.iter().find(|s| s.name == k).ok_or_else(|| unknown("ule", k, &t.list()))?;
            let (lo, hi) = spec.range;
            let n = parse_count(k, v)?;
            if n < u64::from(lo) || n > u64::from(hi) {
                return Err(format!("tunable `{k}` = {n} is outside its range {lo}..={hi}"));
            }
            (spec.set)(&mut t, n as u32);
        }
        // `sched_initticks`: values derived from the clock unless set explicitly.
        let set = |name: &str| sets.iter().any(|(k, _)| k == name);
        if !set("slice") {
            t.slice = (t.stathz / SCHED_SLICE_DEFAULT_DIVISOR).max(1);
        }
        if !set("slice_min") {
            t.slice_min = (t.slice / SCHED_SLICE_MIN_DIVISOR).max(1);
        }
        if !set("balance_interval") {
            t.balance_interval = t.stathz;
        }
        if !set("idle_wakeup") {
            t.idle_wakeup = if linux_port { 0 } else { t.hz / 2 };
        }
        Ok(t)
    }

    /// `tickincr`: one stat tick in hz ticks, shifted by `SCHED_TICK_SHIFT` (8062 at 1000/127).
    pub fn tickincr(&self) -> u32 {
        ((self.hz << SCHED_TICK_SHIFT) / self.stathz).max(1)
    }
    /// `SCHED_SLP_RUN_MAX`: 5 s of history, `(hz * 5) << SCHED_TICK_SHIFT`.
    pub fn slp_run_max(&self) -> u32 {
        (self.hz * 5) << SCHED_TICK_SHIFT
    }
    /// `SCHED_SLP_RUN_FORK`: 0.5 s, `(hz / 2) << SCHED_TICK_SHIFT`.
    pub fn slp_run_fork(&self) -> u32 {
        (self.hz / 2) << SCHED_TICK_SHIFT
    }

    /// `version`, then every tunable of [`SPECS`] with its current value.
    pub fn list(&self) -> Vec<Tunable> {
        let version = Tunable {
            name: "version",
            value: match (self.version, self.linux_port) {
                (Version::V11_1, false) => "11.1".into(),
                (Version::V11_1, true) => "11.1-linux".into(),
                (Version::Current, _) => "current".into(),
            },
            doc: "sched_ule.c modelled: 11.1 (default), 11.1-linux (the ULE-vs-CFS port: preempt=kthread, idle_wakeup=0) or current (15.0/2025 main)",
        };
        let preempt = Tunable {
            name: "preempt",
            value: match self.preempt {
                Preempt::FreeBsd => "freebsd".into(),
                Preempt::Kthread => "kthread".into(),
            },
            doc: "freebsd: sched_setpreempt/tdq_notify; kthread: only kernel threads preempt (the ULE-vs-CFS port)",
        };
        [version, preempt]
            .into_iter()
            .chain(SPECS.iter().map(|s| Tunable { name: s.name, value: (s.get)(self).to_string(), doc: s.doc }))
            .collect()
    }
}

/// A count (not a duration): a plain non-negative integer, `_` separators allowed.
fn parse_count(k: &str, v: &str) -> Result<u64, String> {
    v.trim().replace('_', "").parse().map_err(|_| format!("tunable `{k}`: `{v}` is not a non-negative integer"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(k: &str, v: &str) -> Vec<(String, String)> {
        vec![(k.into(), v.into())]
    }

    /// `--set stathz=1e9` once allocated 5 GB: each tunable has a range, and the error
    /// names the tunable, the value and the range.
    #[test]
    fn every_tunable_is_range_checked() {
        let e = UleTunables::new(&set("stathz", "1000000000")).unwrap_err();
        assert_eq!(e, "tunable `stathz` = 1000000000 is outside its range 1..=10000");
        for s in SPECS {
            let (lo, hi) = s.range;
            assert!(UleTunables::new(&set(s.name, &hi.to_string())).is_ok(), "{}", s.name);
            let e = UleTunables::new(&set(s.name, &(u64::from(hi) + 1).to_string())).unwrap_err();
            assert!(e.contains(s.name) && e.contains(&format!("{lo}..={hi}")), "{e}");
            if lo > 0 {
                assert!(UleTunables::new(&set(s.name, "0")).is_err(), "{}", s.name);
            }
        }
        assert!(UleTunables::new(&set("interact", "101")).unwrap_err().contains("0..=100"));
        assert!(UleTunables::new(&set("stathz", "1e9")).unwrap_err().contains("not a non-negative integer"));
        assert!(UleTunables::new(&set("stathz", "5ms")).is_err());
    }

    /// The table and the list agree, and the clock-derived defaults follow `sched_initticks`.
    #[test]
    fn list_shows_every_spec_and_derived_defaults() {
        let t = UleTunables::new(&set("stathz", "1000")).unwrap();
        let names: Vec<&str> = t.list().iter().map(|x| x.name).collect();
        assert_eq!(names.len(), SPECS.len() + 2);
        assert_eq!((t.slice, t.slice_min, t.balance_interval), (100, 16, 1000));
    }
}
