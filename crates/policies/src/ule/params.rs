//! ULE's constants and tunables for the two modelled versions: FreeBSD 11.1 and "current"
//! (15.0 / 2025 main). Priority ranges come from `sys/sys/priority.h`; the derived macros
//! (`PRI_MIN_BATCH`, `SCHED_PRI_MIN`, …) and the clock-derived values from the top of
//! `sched_ule.c` and `sched_initticks`.

use crate::registry::{parse_u64, unknown};
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
}

impl UleTunables {
    pub fn new(sets: &[(String, String)]) -> Result<UleTunables, String> {
        let mut version = Version::V11_1;
        for (k, v) in sets {
            if k == "version" {
                version = match v.as_str() {
                    "11.1" | "11" => Version::V11_1,
                    "current" | "15" => Version::Current,
                    _ => return Err(format!("tunable `version`: `{v}` is not one of 11.1, current")),
                };
            }
        }
        let lay = Layout::of(version);
        let (hz, stathz) = (1000, 127);
        let slice = stathz / SCHED_SLICE_DEFAULT_DIVISOR;
        let mut t = UleTunables {
            version,
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
        };
        let mut slice_set = false;
        let mut slice_min_set = false;
        for (k, v) in sets {
            let n = || parse_u64(k, v).and_then(|x| u32::try_from(x).map_err(|_| format!("tunable `{k}`: too large")));
            match k.as_str() {
                "version" => {}
                "stathz" => t.stathz = positive(k, n()?)?,
                "hz" => t.hz = positive(k, n()?)?,
                "slice" => {
                    t.slice = positive(k, n()?)?;
                    slice_set = true;
                }
                "slice_min" => {
                    t.slice_min = positive(k, n()?)?;
                    slice_min_set = true;
                }
                "interact" => t.interact = n()?.clamp(1, SCHED_INTERACT_MAX),
                "preempt_thresh" => t.preempt_thresh = n()?.min(255),
                "static_boost" => t.static_boost = n()?.min(255),
                "affinity" => t.affinity = n()?,
                "steal_idle" => t.steal_idle = n()? != 0,
                "steal_thresh" => t.steal_thresh = n()?,
                "balance" => t.balance = n()? != 0,
                "balance_interval" => t.balance_interval = positive(k, n()?)?,
                _ => return Err(unknown("ule", k, &t.list())),
            }
        }
        // `sched_initticks`: values derived from the clock unless set explicitly.
        if !slice_set {
            t.slice = (t.stathz / SCHED_SLICE_DEFAULT_DIVISOR).max(1);
        }
        if !slice_min_set {
            t.slice_min = (t.slice / SCHED_SLICE_MIN_DIVISOR).max(1);
        }
        if !sets.iter().any(|(k, _)| k == "balance_interval") {
            t.balance_interval = t.stathz;
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

    pub fn list(&self) -> Vec<Tunable> {
        let v = |s: &dyn ToString| s.to_string();
        vec![
            Tunable {
                name: "version",
                value: match self.version {
                    Version::V11_1 => "11.1".into(),
                    Version::Current => "current".into(),
                },
                doc: "sched_ule.c modelled: 11.1 (default) or current (15.0/2025 main)",
            },
            Tunable { name: "hz", value: v(&self.hz), doc: "rate of the `ticks` counter (sleep time, affinity)" },
            Tunable { name: "stathz", value: v(&self.stathz), doc: "statistics clock driving sched_clock" },
            Tunable { name: "slice", value: v(&self.slice), doc: "sched_slice, stat ticks (stathz/10)" },
            Tunable { name: "slice_min", value: v(&self.slice_min), doc: "sched_slice_min, stat ticks (slice/6)" },
            Tunable { name: "interact", value: v(&self.interact), doc: "interactivity threshold of the score" },
            Tunable {
                name: "preempt_thresh",
                value: v(&self.preempt_thresh),
                doc: "priorities at or below preempt at once (PRI_MIN_KERN)",
            },
            Tunable { name: "static_boost", value: v(&self.static_boost), doc: "priority of a sleeping batch thread" },
            Tunable { name: "affinity", value: v(&self.affinity), doc: "cache affinity per level, hz ticks" },
            Tunable { name: "steal_idle", value: v(&u32::from(self.steal_idle)), doc: "idle CPUs steal threads" },
            Tunable { name: "steal_thresh", value: v(&self.steal_thresh), doc: "minimum victim load for stealing" },
            Tunable { name: "balance", value: v(&u32::from(self.balance)), doc: "periodic balancer on CPU 0" },
            Tunable {
                name: "balance_interval",
                value: v(&self.balance_interval),
                doc: "balancer period, stat ticks (0.5x–1.5x at random)",
            },
        ]
    }
}

fn positive(k: &str, v: u32) -> Result<u32, String> {
    if v == 0 {
        Err(format!("tunable `{k}` must be positive"))
    } else {
        Ok(v)
    }
}
