//! ULE's constants and tunables for the two modelled versions: FreeBSD 11.1 and "current"
//! (15.0 / 2025 main). Priority ranges come from `sys/sys/priority.h`; the derived macros
//! (`PRI_MIN_BATCH`, `SCHED_PRI_MIN`, …) and the clock-derived values from the top of
//! `sched_ule.c` and `sched_initticks`.

use schedlab_sched_api::{Choice, Kind, Pass, Tunable, TunableSpec, TunableTable, Unit};

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

/// `RTP_PRIO_MAX` (`sys/sys/rtprio.h`): rtprio levels run 0 (best) ..= 31.
pub const RTP_PRIO_MAX: u8 = 31;
/// `LINUX_MAX_RT_PRIO` (`sys/compat/linux/linux_misc.h`): Linux `sched_priority` 1..=99.
const LINUX_MAX_RT_PRIO: u32 = 100;

/// A Linux `SCHED_FIFO`/`SCHED_RR` `sched_priority` (1..=99) as FreeBSD's Linux ABI maps it
/// with `compat.linux.map_sched_prio` on (its default; `linux_misc.c:linux_sched_setscheduler`):
/// `(p - 1) * 32 / 99` rounded down, a POSIX priority 0..=31; `ksched.c:ksched_setscheduler`
/// then turns POSIX `P` into rtprio `RTP_PRIO_MAX - P` (`p4prio_to_rtpprio`), so Linux 99 is
/// rtprio 0, the best realtime level.
pub fn linux_rt_to_rtprio(linux_prio: u8) -> u8 {
    let posix = (u32::from(linux_prio).clamp(1, LINUX_MAX_RT_PRIO - 1) - 1) * (u32::from(RTP_PRIO_MAX) + 1)
        / (LINUX_MAX_RT_PRIO - 1);
    RTP_PRIO_MAX - posix as u8
}

/// Priority-space layout of a version (`priority.h` + `sched_ule.c` macros).
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    /// `PRI_MIN_REALTIME`: `rtprio` 0 (`kern_resource.c:rtp_to_pri` adds the level).
    pub min_realtime: u8,
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
                min_realtime: 48,
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
                min_realtime: 8,
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

/// Upper bound of the clock rates: the machine file's HZ limit. `sched_ule.c` has no
/// range for `hz` (a loader tunable) or `stathz` (set by the timer driver), but the model
/// ticks every CPU at `stathz`: 10^9 once meant a tick per nanosecond and 5 GB of events.
const MAX_HZ: i64 = 10_000;

/// `version`: the `sched_ule.c` modelled; `11.1-linux` is 11.1 as the ULE-vs-CFS study
/// ported it into Linux.
const VERSIONS: &[Choice] = &[
    Choice { name: "11.1", aliases: &["11"] },
    Choice { name: "11.1-linux", aliases: &[] },
    Choice { name: "current", aliases: &["15"] },
];
const PREEMPTS: &[Choice] = &[Choice { name: "freebsd", aliases: &[] }, Choice { name: "kthread", aliases: &[] }];
const STAT_TICKS: Unit = Unit::Ticks("stat ticks");
const HZ_TICKS: Unit = Unit::Ticks("hz ticks");

/// Every ULE tunable, defined here once: `--set`, `schedlab list`, the record and the errors
/// read this table. `version`, `hz` and `stathz` are set first: `sched_initticks` derives
/// the other defaults from them. FreeBSD's sysctls are plain `SYSCTL_INT`s without limits,
/// except `kern.sched.slice` and `kern.sched.quantum`, which refuse values <= 0
/// (`sysctl_kern_slice`, `sysctl_kern_quantum`); the upper bounds are documented ones that
/// keep the tick-based arithmetic (`hogticks`, `SCHED_AFFINITY`, `tickincr`) far from `int`
/// overflow.
pub static TUNABLES: TunableTable<UleTunables> = TunableTable {
    owner: "sched_ule.c",
    version: None,
    specs: &[
        TunableSpec {
            early: true,
            ..TunableSpec::new(
                "version",
                Kind::Choice(VERSIONS),
                "sched_ule.c modelled: 11.1 (default), 11.1-linux (the ULE-vs-CFS port: preempt=kthread, idle_wakeup=0) or current (15.0/2025 main)",
                |t| match (t.version, t.linux_port) {
                    (Version::V11_1, false) => 0,
                    (Version::V11_1, true) => 1,
                    (Version::Current, _) => 2,
                },
                |t, v| {
                    (t.version, t.linux_port) = match v {
                        0 => (Version::V11_1, false),
                        1 => (Version::V11_1, true),
                        _ => (Version::Current, false),
                    }
                },
            )
        },
        TunableSpec::new(
            "preempt",
            Kind::Choice(PREEMPTS),
            "freebsd: sched_setpreempt/tdq_notify; kthread: only kernel threads preempt (the ULE-vs-CFS port)",
            |t| i64::from(t.preempt == Preempt::Kthread),
            |t, v| t.preempt = if v == 1 { Preempt::Kthread } else { Preempt::FreeBsd },
        ),
        TunableSpec {
            early: true,
            ..TunableSpec::new(
                "hz",
                Kind::int(1, MAX_HZ, Unit::Hz),
                "rate of the `ticks` counter (sleep time, affinity); 1000 on amd64",
                |t| t.hz.into(),
                |t, v| t.hz = v as u32,
            )
        },
        TunableSpec {
            early: true,
            ..TunableSpec::new(
                "stathz",
                Kind::int(1, MAX_HZ, Unit::Hz),
                "statistics clock driving sched_clock; 127 with one-shot timers",
                |t| t.stathz.into(),
                |t, v| t.stathz = v as u32,
            )
        },
        TunableSpec::new(
            "slice",
            Kind::int(1, 10_000, STAT_TICKS),
            "sched_slice (stathz/10); sysctl_kern_slice refuses <= 0 and sets slice_min = slice/6",
            |t| t.slice.into(),
            |t, v| {
                t.slice = v as u32;
                t.slice_min = (t.slice / SCHED_SLICE_MIN_DIVISOR).max(1);
            },
        ),
        TunableSpec::new(
            "slice_min",
            Kind::int(1, 10_000, STAT_TICKS),
            "sched_slice_min (slice/6)",
            |t| t.slice_min.into(),
            |t, v| t.slice_min = v as u32,
        ),
        TunableSpec::new(
            "interact",
            Kind::int(0, SCHED_INTERACT_MAX as i64, Unit::None),
            "interactivity threshold of the score (30); scores run 0..=100",
            |t| t.interact.into(),
            |t, v| t.interact = v as u32,
        ),
        TunableSpec::new(
            "preempt_thresh",
            Kind::int(0, PRI_MAX_IDLE as i64, Unit::None),
            "priorities at or below preempt at once (PRI_MIN_KERN); priorities run 0..=255",
            |t| t.preempt_thresh.into(),
            |t, v| t.preempt_thresh = v as u32,
        ),
        TunableSpec::new(
            "static_boost",
            Kind::int(0, PRI_MAX_IDLE as i64, Unit::None),
            "priority of a sleeping batch thread (PRI_MIN_BATCH)",
            |t| t.static_boost.into(),
            |t, v| t.static_boost = v as u32,
        ),
        TunableSpec::new(
            "affinity",
            Kind::int(0, 100_000, HZ_TICKS),
            "cache affinity per level (1 at hz=1000)",
            |t| t.affinity.into(),
            |t, v| t.affinity = v as u32,
        ),
        TunableSpec::new(
            "steal_idle",
            Kind::Bool,
            "idle CPUs steal threads (1)",
            |t| t.steal_idle.into(),
            |t, v| t.steal_idle = v != 0,
        ),
        TunableSpec::new(
            "steal_thresh",
            Kind::int(0, 1_000_000, Unit::None),
            "minimum victim load for stealing (2)",
            |t| t.steal_thresh.into(),
            |t, v| t.steal_thresh = v as u32,
        ),
        TunableSpec::new(
            "balance",
            Kind::Bool,
            "periodic balancer on CPU 0 (1)",
            |t| t.balance.into(),
            |t, v| t.balance = v != 0,
        ),
        TunableSpec::new(
            "balance_interval",
            Kind::int(1, 1_000_000, STAT_TICKS),
            "balancer period (stathz; 0.5x–1.5x at random)",
            |t| t.balance_interval.into(),
            |t, v| t.balance_interval = v as u32,
        ),
        TunableSpec::new(
            "idle_wakeup",
            Kind::int(0, 100_000, HZ_TICKS),
            "how long an idle CPU sleeps at most before a hardclock wakes it to steal again (hz/2); 0: never",
            |t| t.idle_wakeup.into(),
            |t, v| t.idle_wakeup = v as u32,
        ),
    ],
};

/// `hz` as amd64 sets it, and `stathz` with one-shot event timers.
const DEFAULT_HZ: u32 = 1000;
const DEFAULT_STATHZ: u32 = 127;

impl UleTunables {
    pub fn new(sets: &[(String, String)]) -> Result<UleTunables, String> {
        let mut t = UleTunables::initticks(Version::V11_1, false, DEFAULT_HZ, DEFAULT_STATHZ);
        TUNABLES.apply(&mut t, sets, Pass::Early, "scheduler `ule`")?;
        let mut t = UleTunables::initticks(t.version, t.linux_port, t.hz, t.stathz);
        TUNABLES.apply(&mut t, sets, Pass::Rest, "scheduler `ule`")?;
        Ok(t)
    }

    /// The defaults of a version at the given clock rates (`sched_initticks`: the slice,
    /// the balancer period and the idle wakeup follow the clocks).
    fn initticks(version: Version, linux_port: bool, hz: u32, stathz: u32) -> UleTunables {
        let lay = Layout::of(version);
        let slice = (stathz / SCHED_SLICE_DEFAULT_DIVISOR).max(1);
        UleTunables {
            version,
            linux_port,
            hz,
            stathz,
            slice,
            slice_min: (slice / SCHED_SLICE_MIN_DIVISOR).max(1),
            interact: 30,
            preempt_thresh: u32::from(lay.min_kern),
            static_boost: u32::from(lay.min_batch),
            // `SCHED_AFFINITY_DEFAULT` = max(1, hz / 1000), at the default hz.
            affinity: (DEFAULT_HZ / 1000).max(1),
            steal_idle: true,
            steal_thresh: 2,
            balance: true,
            balance_interval: stathz,
            preempt: if linux_port { Preempt::Kthread } else { Preempt::FreeBsd },
            idle_wakeup: if linux_port { 0 } else { hz / 2 },
        }
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

    /// Every tunable of [`TUNABLES`] with its current value.
    pub fn list(&self) -> Vec<Tunable> {
        TUNABLES.list(self)
    }
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
        assert_eq!(e, "tunable `stathz` = 1000000000 is outside its range 1..=10000 Hz");
        for s in TUNABLES.specs {
            let Kind::Int { min, max, .. } = s.kind else { continue };
            assert!(UleTunables::new(&set(s.name, &max.to_string())).is_ok(), "{}", s.name);
            let e = UleTunables::new(&set(s.name, &(max + 1).to_string())).unwrap_err();
            assert!(e.contains(s.name) && e.contains(&format!("{min}..={max}")), "{e}");
            if min > 0 {
                assert!(UleTunables::new(&set(s.name, "0")).is_err(), "{}", s.name);
            }
        }
        assert!(UleTunables::new(&set("interact", "101")).unwrap_err().contains("0..=100"));
        assert!(UleTunables::new(&set("stathz", "1e9")).unwrap_err().contains("not a non-negative integer"));
        assert!(UleTunables::new(&set("stathz", "5ms")).is_err());
        assert!(UleTunables::new(&set("steal_idle", "2")).unwrap_err().contains("expected 0/1"));
    }

    /// The clock-derived defaults follow `sched_initticks`, whatever the order of the
    /// `--set`s; setting `slice` sets `slice_min` as `sysctl_kern_slice` does.
    #[test]
    fn derived_defaults_follow_the_clocks() {
        let t = UleTunables::new(&set("stathz", "1000")).unwrap();
        assert_eq!(t.list().len(), TUNABLES.specs.len());
        assert_eq!((t.slice, t.slice_min, t.balance_interval), (100, 16, 1000));
        let sets: Vec<(String, String)> =
            [("slice", "60"), ("hz", "500"), ("version", "11.1-linux")].map(|(k, v)| (k.into(), v.into())).to_vec();
        let t = UleTunables::new(&sets).unwrap();
        assert_eq!((t.slice, t.slice_min, t.idle_wakeup, t.preempt), (60, 10, 0, Preempt::Kthread));
        let t = UleTunables::new(&set("hz", "500")).unwrap();
        assert_eq!((t.slice, t.slice_min, t.idle_wakeup, t.preempt), (12, 2, 250, Preempt::FreeBsd));
    }
}
