//! PELT, per-entity load tracking (`kernel/sched/pelt.c`, `pelt.h`, `sched-pelt.h`, v5.15):
//! geometric averages of load, runnable and running time over 1024-µs periods, decaying by
//! `y` per period with `y^32 = 1/2`, in the kernel's integer arithmetic. v4.9's
//! `__update_load_avg` (fair.c) is [`SchedAvg::update_v4_9`]: pre-weighted sums, the
//! segments from `__compute_runnable_contrib`'s tables, a fixed divider and the cfs_rq's
//! `runnable_load_avg`.

use schedlab_sched_api::CpuScale;

/// `LOAD_AVG_PERIOD`: periods per half-life.
pub const LOAD_AVG_PERIOD: u64 = 32;
/// `LOAD_AVG_MAX`: the largest `*_sum` a contribution of 1 per unit reaches.
pub const LOAD_AVG_MAX: u64 = 47742;
/// `PELT_MIN_DIVIDER`.
pub const PELT_MIN_DIVIDER: u64 = LOAD_AVG_MAX - 1024;
/// `SCHED_CAPACITY_SCALE`.
pub const SCHED_CAPACITY_SCALE: u64 = 1024;

/// `runnable_avg_yN_inv[n]` = floor(2^32 · y^n).
const RUNNABLE_AVG_Y_N_INV: [u32; 32] = [
    0xffffffff, 0xfa83b2da, 0xf5257d14, 0xefe4b99a, 0xeac0c6e6, 0xe5b906e6, 0xe0ccdeeb, 0xdbfbb796, 0xd744fcc9,
    0xd2a81d91, 0xce248c14, 0xc9b9bd85, 0xc5672a10, 0xc12c4cc9, 0xbd08a39e, 0xb8fbaf46, 0xb504f333, 0xb123f581,
    0xad583ee9, 0xa9a15ab4, 0xa5fed6a9, 0xa2704302, 0x9ef5325f, 0x9b8d39b9, 0x9837f050, 0x94f4efa8, 0x91c3d373,
    0x8ea4398a, 0x8b95c1e3, 0x88980e80, 0x85aac367, 0x82cd8698,
];

/// v4.9 `runnable_avg_yN_sum[n]` = floor(Σ_{k=1..n} 1024·y^k).
const RUNNABLE_AVG_Y_N_SUM: [u64; 33] = [
    0, 1002, 1982, 2941, 3880, 4798, 5697, 6576, 7437, 8279, 9103, 9909, 10698, 11470, 12226, 12966, 13690, 14398,
    15091, 15769, 16433, 17082, 17718, 18340, 18949, 19545, 20128, 20698, 21256, 21802, 22336, 22859, 23371,
];
/// v4.9 `__accumulated_sum_N32[k]`: the sum over 32·k periods.
const ACCUMULATED_SUM_N32: [u64; 12] = [0, 23371, 35056, 40899, 43820, 45281, 46011, 46376, 46559, 46650, 46696, 46719];
/// v4.9 `LOAD_AVG_MAX_N`: periods after which the series is at `LOAD_AVG_MAX`.
const LOAD_AVG_MAX_N: u64 = 345;

/// `__compute_runnable_contrib(n)` (fair.c v4.9): Σ_{k=1..n} 1024·y^k from the tables.
fn compute_runnable_contrib(n: u64) -> u64 {
    if n <= LOAD_AVG_PERIOD {
        return RUNNABLE_AVG_Y_N_SUM[n as usize];
    }
    if n >= LOAD_AVG_MAX_N {
        return LOAD_AVG_MAX;
    }
    let c = decay_load(ACCUMULATED_SUM_N32[(n / LOAD_AVG_PERIOD) as usize], n % LOAD_AVG_PERIOD);
    c + RUNNABLE_AVG_Y_N_SUM[(n % LOAD_AVG_PERIOD) as usize]
}

/// `decay_load(val, n)`: `val · y^n` in constant time.
pub fn decay_load(val: u64, n: u64) -> u64 {
    if n > LOAD_AVG_PERIOD * 63 {
        return 0;
    }
    let mut val = val;
    let mut local_n = n;
    if local_n >= LOAD_AVG_PERIOD {
        val >>= local_n / LOAD_AVG_PERIOD;
        local_n %= LOAD_AVG_PERIOD;
    }
    // mul_u64_u32_shr(val, inv, 32)
    ((u128::from(val) * u128::from(RUNNABLE_AVG_Y_N_INV[local_n as usize])) >> 32) as u64
}

/// `__accumulate_pelt_segments(periods, d1, d3)`.
fn accumulate_pelt_segments(periods: u64, d1: u64, d3: u64) -> u64 {
    let c1 = decay_load(d1, periods);
    // c2 = 1024 · Σ_{n=1..p-1} y^n
    let c2 = LOAD_AVG_MAX - decay_load(LOAD_AVG_MAX, periods) - 1024;
    c1 + c2 + d3
}

/// `struct sched_avg`. The averages come first (`repr(C)`): placement and balancing scans
/// read only them, and [`super::entity::CfsRq`] puts them in its first cache line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct SchedAvg {
    pub load_avg: u64,
    pub runnable_avg: u64,
    pub util_avg: u64,
    /// ns; 0 means "not attached" (new or migrating task).
    pub last_update_time: u64,
    pub load_sum: u64,
    pub runnable_sum: u64,
    pub util_sum: u64,
    pub period_contrib: u64,
}

impl SchedAvg {
    /// `get_pelt_divider`.
    pub fn divider(&self) -> u64 {
        PELT_MIN_DIVIDER + self.period_contrib
    }

    /// `___update_load_sum`: the inputs were constant since `last_update_time`. Returns
    /// true when a period boundary was crossed (the averages must be recomputed).
    pub fn update_sum(&mut self, now: u64, load: u64, runnable: u64, running: u64) -> bool {
        if now < self.last_update_time {
            self.last_update_time = now;
            return false;
        }
        let mut delta = now - self.last_update_time;
        delta >>= 10;
        if delta == 0 {
            return false;
        }
        self.last_update_time += delta << 10;
        let (runnable, running) = if load == 0 { (0, 0) } else { (runnable, running) };
        // accumulate_sum
        let mut contrib = delta;
        let t = delta + self.period_contrib;
        let periods = t / 1024;
        if periods > 0 {
            self.load_sum = decay_load(self.load_sum, periods);
            self.runnable_sum = decay_load(self.runnable_sum, periods);
            self.util_sum = decay_load(self.util_sum, periods);
            let d1 = 1024 - self.period_contrib;
            let d3 = t % 1024;
            if load != 0 {
                contrib = accumulate_pelt_segments(periods, d1, d3);
            }
            self.period_contrib = d3;
        } else {
            self.period_contrib = t;
        }
        if load != 0 {
            self.load_sum += load * contrib;
        }
        if runnable != 0 {
            self.runnable_sum += (runnable * contrib) << 10;
        }
        if running != 0 {
            self.util_sum += contrib << 10;
        }
        periods > 0
    }

    /// `___update_load_avg`.
    pub fn update_avg(&mut self, weight: u64) {
        let div = self.divider();
        self.load_avg = weight * self.load_sum / div;
        self.runnable_avg = self.runnable_sum / div;
        self.util_avg = self.util_sum / div;
    }

    /// `__update_load_avg` (fair.c v4.9): `weight` is the load input already weighted
    /// (`on_rq · w` for an entity, the queue's `load.weight` for a cfs_rq), `running` adds
    /// to `util_sum` scaled by 1024, and a cfs_rq's `runnable_load` ([sum, avg]) accrues the
    /// same load. Averages divide by `LOAD_AVG_MAX` (no `period_contrib` correction) and
    /// change only when a period boundary is crossed. Returns that.
    pub fn update_v4_9(&mut self, now: u64, weight: u64, running: bool, mut rl: Option<&mut [u64; 2]>) -> bool {
        if now < self.last_update_time {
            self.last_update_time = now;
            return false;
        }
        let mut delta = (now - self.last_update_time) >> 10;
        if delta == 0 {
            return false;
        }
        self.last_update_time += delta << 10;
        let add = |sa: &mut SchedAvg, rl: &mut Option<&mut [u64; 2]>, d: u64| {
            sa.load_sum += weight * d;
            if let Some(r) = rl.as_deref_mut() {
                r[0] += weight * d;
            }
            if running {
                sa.util_sum += d << 10;
            }
        };
        let decayed = delta + self.period_contrib >= 1024;
        if decayed {
            // Complete the current period, decay over the whole ones, add their series.
            let dw = 1024 - self.period_contrib;
            self.period_contrib = 0;
            add(self, &mut rl, dw);
            delta -= dw;
            let periods = delta / 1024;
            delta %= 1024;
            self.load_sum = decay_load(self.load_sum, periods + 1);
            self.util_sum = decay_load(self.util_sum, periods + 1);
            if let Some(r) = rl.as_deref_mut() {
                r[0] = decay_load(r[0], periods + 1);
            }
            add(self, &mut rl, compute_runnable_contrib(periods));
        }
        add(self, &mut rl, delta);
        self.period_contrib += delta;
        if decayed {
            self.load_avg = self.load_sum / LOAD_AVG_MAX;
            self.util_avg = self.util_sum / LOAD_AVG_MAX;
            if let Some(r) = rl {
                r[1] = r[0] / LOAD_AVG_MAX;
            }
        }
        decayed
    }

    /// `___update_load_sum` + `___update_load_avg`.
    pub fn update(&mut self, now: u64, load: u64, runnable: u64, running: u64, weight: u64) -> bool {
        let decayed = self.update_sum(now, load, runnable, running);
        if decayed {
            self.update_avg(weight);
        }
        decayed
    }
}

/// `rq->clock_pelt` and `rq->lost_idle_time` (`kernel/sched/pelt.h: update_rq_clock_pelt,
/// update_idle_rq_clock_pelt, rq_clock_pelt`, v5.1 to v6.18): the clock PELT runs on. While
/// the CPU runs a task it advances by the wall time scaled by the CPU's capacity and
/// frequency scale, so a signal accrues the computation done, not the time spent
/// (frequency and capacity invariance); while idle it is synced to the task clock. A CPU
/// that was fully busy when it went idle records the gap as lost idle time, so its
/// utilisation can still reach the maximum. With every scale at 1024 it is the task clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClockPelt {
    pub clock_pelt: u64,
    pub lost_idle_time: u64,
    /// `rq_clock_task` at the last update.
    pub clock_task: u64,
    /// The last update saw the CPU idle (the idle sync has been done).
    pub idle: bool,
}

/// `update_idle_rq_clock_pelt`'s divider: a `util_sum` at or above it is a CPU that never
/// idled (`((LOAD_AVG_MAX - 1024) << SCHED_CAPACITY_SHIFT) - LOAD_AVG_MAX`).
const FULL_UTIL_SUM: u64 = ((LOAD_AVG_MAX - 1024) << 10) - LOAD_AVG_MAX;

impl ClockPelt {
    /// Advances the clock to `now` (`update_rq_clock_pelt`): `busy` — the CPU runs a
    /// task rather than the idle task — with `scale`; on the first update of an idle
    /// period, the root runqueue's `util_sum` decides whether the lost idle time grows
    /// (`update_idle_rq_clock_pelt`). Returns `rq_clock_pelt`.
    pub fn update(&mut self, now: u64, busy: bool, scale: CpuScale, util_sum: u64) -> u64 {
        let delta = now.saturating_sub(self.clock_task);
        if busy {
            self.clock_pelt += if scale.is_unit() { delta } else { scale.scale_delta(delta) };
            self.idle = false;
        } else {
            if !self.idle && util_sum >= FULL_UTIL_SUM {
                self.lost_idle_time += self.clock_task.saturating_sub(self.clock_pelt);
            }
            self.clock_pelt = now;
            self.idle = true;
        }
        self.clock_task = self.clock_task.max(now);
        self.clock_pelt.saturating_sub(self.lost_idle_time)
    }
}

/// `sub_positive`.
pub fn sub_positive(a: &mut u64, b: u64) {
    *a = a.saturating_sub(b);
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// A task running from util 0, updated every 1 ms (the geometric series of `pelt.c`:
    /// y^32 = 1/2, 1024 µs periods).
    #[test]
    fn util_rises_as_the_kernel_computes() {
        let mut sa = SchedAvg { last_update_time: 1, ..SchedAvg::default() };
        let mut at = Vec::new();
        for ms in 1..=345u64 {
            sa.update(1 + ms * MS, 1, 1, 1, 1024);
            if [8, 16, 32, 64, 100, 200, 345].contains(&ms) {
                at.push((ms, sa.util_avg));
            }
        }
        let want = [(8, 156), (16, 288), (32, 495), (64, 751), (100, 894), (200, 1008), (345, 1023)];
        for ((ms, got), (_, w)) in at.iter().zip(want) {
            assert!(got.abs_diff(w) <= 2, "after {ms} ms util {got}, want ≈ {w}");
        }
    }

    /// From saturation, blocked (§9 item 18).
    #[test]
    fn util_decays_as_the_kernel_computes() {
        let mut sa = SchedAvg { last_update_time: 1, ..SchedAvg::default() };
        let mut t = 1;
        for _ in 0..1000 {
            t += MS;
            sa.update(t, 1, 1, 1, 1024);
        }
        assert!(sa.util_avg >= 1020);
        let start = t;
        let mut at = Vec::new();
        for ms in 1..=200u64 {
            sa.update(start + ms * MS, 0, 0, 0, 1024);
            if [8, 32, 64, 128, 200].contains(&ms) {
                at.push((ms, sa.util_avg, sa.load_avg));
            }
        }
        // 1023 · 2^(−t/33.55 ms): the half-life is 32 periods of 1024 µs (`pelt.c`
        // `decay_load`); at 32 ms the series gives 528.
        let want = [868, 528, 273, 72, 16];
        for ((ms, util, load), w) in at.iter().zip(want) {
            assert!(util.abs_diff(w) <= 2, "after {ms} ms blocked util {util}, want ≈ {w}");
            assert!(load.abs_diff(w) <= 2, "load follows util for a nice-0 task: {load}");
        }
    }

    /// v4.9's arithmetic rises and decays like v5.15's (the same series; §9 items 17–18)
    /// within rounding, and `runnable_load` follows the load of queued entities only.
    #[test]
    fn v4_9_follows_the_same_series() {
        let mut sa = SchedAvg { last_update_time: 1, ..SchedAvg::default() };
        let mut rl = [0u64; 2];
        let mut at = Vec::new();
        for ms in 1..=345u64 {
            sa.update_v4_9(1 + ms * MS, 1024, true, Some(&mut rl));
            if [8, 32, 100, 345].contains(&ms) {
                at.push((ms, sa.util_avg, sa.load_avg, rl[1]));
            }
        }
        // The fixed divider (`LOAD_AVG_MAX`, no `period_contrib` correction) reads up to
        // one period's contribution low right after a boundary: saturation is 1002..=1023.
        for ((ms, util, load, runnable), w) in at.iter().zip([156, 495, 894, 1002]) {
            assert!(util.abs_diff(w) <= 22 && *util <= 1023, "v4.9 after {ms} ms util {util}, want ≈ {w}");
            assert_eq!(load, runnable, "all the load is runnable");
            assert!(load.abs_diff(*util) <= 2);
        }
        assert_eq!(compute_runnable_contrib(400), LOAD_AVG_MAX);
        assert_eq!(compute_runnable_contrib(32), 23371);
        // 64 periods: the N32 table's 2nd entry, decayed by 0, plus nothing.
        assert_eq!(compute_runnable_contrib(64), decay_load(35056, 0));
    }

    /// Frequency invariance: a task always running on a CPU at half speed accrues the
    /// utilisation of a task running half the time at full speed (the kernel's clock_pelt
    /// scaling, pelt.h v5.1+), and a CPU at full speed reads the task clock.
    #[test]
    fn clock_pelt_scales_busy_time() {
        let half = CpuScale { capacity: 1024, freq: 512 };
        let mut c = ClockPelt::default();
        assert_eq!(c.update(1_000_000, true, half, 0), 500_000);
        assert_eq!(c.update(3_000_000, true, half, 0), 1_500_000);
        // Idle: synced to the task clock; not fully busy, so no lost idle time.
        assert_eq!(c.update(4_000_000, false, half, 0), 4_000_000);
        let unit = CpuScale::default();
        assert_eq!(c.update(5_000_000, true, unit, 0), 5_000_000);
        // Fully busy when it went idle: the gap is lost idle time, kept off the clock.
        let mut c = ClockPelt::default();
        c.update(2_000_000, true, half, 0);
        assert_eq!(c.update(3_000_000, false, half, FULL_UTIL_SUM), 3_000_000 - 1_000_000);
    }

    /// The same computation at full speed and at half speed (twice the time) gives the
    /// same utilisation: 4 ms of full-speed work every 16 ms, run in 4 ms at full speed or
    /// in 8 ms at half speed, both as PELT sees them through the clock (25 %); unscaled,
    /// the slow one would look twice as busy.
    #[test]
    fn utilisation_is_frequency_invariant() {
        let run = |scale: CpuScale, busy_ns: u64, period_ns: u64| {
            let (mut clock, mut a) = (ClockPelt::default(), SchedAvg::default());
            a.last_update_time = 1;
            let mut t = 0;
            for _ in 0..40 {
                let now = clock.update(t, false, scale, 0);
                a.update(now, 0, 0, 0, 1);
                let now = clock.update(t, true, scale, 0);
                a.update(now, 1, 1, 1, 1);
                let now = clock.update(t + busy_ns, true, scale, 0);
                a.update(now, 1, 1, 1, 1);
                t += period_ns;
            }
            a.util_avg
        };
        let full = run(CpuScale::default(), 4_000_000, 16_000_000);
        let half = run(CpuScale { capacity: 1024, freq: 512 }, 8_000_000, 16_000_000);
        let raw = run(CpuScale::default(), 8_000_000, 16_000_000);
        assert!(full.abs_diff(half) * 100 <= full * 8, "full speed {full}, half speed {half}");
        assert!(raw > half + half / 2, "without the scaling the slow task looks busier: {raw} vs {half}");
    }

    #[test]
    fn decay_halves_every_32_periods() {
        // Shift by whole half-lives, then multiply by floor(2^32 · y^0) = 2^32 − 1.
        assert_eq!(decay_load(1 << 20, 32), (1 << 19) - 1);
        assert_eq!(decay_load(12345, 0), 12344);
        assert_eq!(decay_load(1 << 20, 64), (1 << 18) - 1);
        assert_eq!(decay_load(u64::from(u32::MAX), 2017), 0);
    }
}
