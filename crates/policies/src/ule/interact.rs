//! The interactivity score and the user priority: pure integer arithmetic on a thread's
//! history, as `sched_ule.c` computes it (all versions unless noted).

use super::params::{Layout, UleTunables, Version, SCHED_INTERACT_HALF, SCHED_TICK_SHIFT};

/// A thread's scheduling history (`struct td_sched` fields).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct History {
    /// `ts_runtime`: stat ticks of running, in hz ticks << 10.
    pub runtime: u32,
    /// `ts_slptime`: voluntary sleep, in hz ticks << 10.
    pub slptime: u32,
    /// `ts_ticks`: CPU use in the pctcpu window, hz ticks << 10.
    pub ticks: i64,
    /// `ts_ltick`, `ts_ftick`: last and first hz tick of the pctcpu window.
    pub ltick: i64,
    pub ftick: i64,
}

/// `sched_interact_score`: 0 (always sleeping) … 100 (always running).
pub fn interact_score(h: &History, sched_interact: u32) -> u32 {
    let (r, s) = (h.runtime, h.slptime);
    // The shortcut: nothing that runs at least as much as it sleeps can be interactive.
    if sched_interact <= SCHED_INTERACT_HALF && r >= s {
        return SCHED_INTERACT_HALF;
    }
    if r > s {
        let div = (r / SCHED_INTERACT_HALF).max(1);
        return SCHED_INTERACT_HALF + (SCHED_INTERACT_HALF - s / div);
    }
    if s > r {
        let div = (s / SCHED_INTERACT_HALF).max(1);
        return r / div;
    }
    if r != 0 {
        SCHED_INTERACT_HALF
    } else {
        0
    }
}

/// `sched_interact_update`: keep `runtime + slptime` within `SCHED_SLP_RUN_MAX`, preserving
/// the ratio up to integer truncation.
pub fn interact_update(h: &mut History, slp_run_max: u32) {
    let sum = h.runtime + h.slptime;
    if sum < slp_run_max {
        return;
    }
    // A huge jump (a long sleep, or a child's run time returned at exit) saturates.
    if sum > slp_run_max * 2 {
        if h.runtime > h.slptime {
            h.runtime = slp_run_max;
            h.slptime = 1;
        } else {
            h.slptime = slp_run_max;
            h.runtime = 1;
        }
        return;
    }
    if sum > (slp_run_max / 5) * 6 {
        h.runtime /= 2;
        h.slptime /= 2;
        return;
    }
    h.runtime = (h.runtime / 5) * 4;
    h.slptime = (h.slptime / 5) * 4;
}

/// `sched_interact_fork`: the child keeps the parent's ratio but only ~0.5 s of history.
pub fn interact_fork(h: &mut History, slp_run_fork: u32) {
    let sum = h.runtime + h.slptime;
    if sum > slp_run_fork {
        let ratio = sum / slp_run_fork;
        h.runtime /= ratio;
        h.slptime /= ratio;
    }
}

/// `sched_pctcpu_update(ts, run)` at hz tick `t`: slide the CPU-use window.
pub fn pctcpu_update(h: &mut History, t: i64, run: bool, tun: &UleTunables) {
    let hz = i64::from(tun.hz);
    match tun.version {
        Version::V11_1 => {
            // SCHED_TICK_SECS = 10: target window 10 s, maximum 11 s.
            let (targ, max) = (10 * hz, 11 * hz);
            if t - h.ltick >= targ {
                h.ticks = 0;
                h.ftick = t - targ;
            } else if t - h.ftick >= max {
                let len = (h.ltick - h.ftick).max(1);
                h.ticks = (h.ticks / len) * (h.ltick - (t - targ));
                h.ftick = t - targ;
            }
            if run {
                h.ticks += (t - h.ltick) << SCHED_TICK_SHIFT;
            }
            h.ltick = t;
        }
        Version::Current => {
            // SCHED_TICK_SECS = 11; the target is 10/11 of the maximum.
            let t_max = 11 * hz;
            let t_tgt = t_max * 10 / 11;
            let lu = t - h.ltick;
            if lu >= t_tgt {
                h.ticks = if run { t_tgt << SCHED_TICK_SHIFT } else { 0 };
                h.ftick = t - t_tgt;
                h.ltick = t;
                return;
            }
            if t - h.ftick >= t_max {
                let len = (h.ltick - h.ftick).max(1);
                h.ticks = h.ticks / len * (t_tgt - lu);
                h.ftick = t - t_tgt;
            }
            if run {
                h.ticks += lu << SCHED_TICK_SHIFT;
            }
            h.ltick = t;
        }
    }
}

/// `sched_priority`: the user priority of a timeshare thread from its score, CPU use and
/// nice. Returns `(priority, interactive)`.
pub fn user_priority(h: &History, nice: i32, tun: &UleTunables) -> (u8, bool) {
    let lay = Layout::of(tun.version);
    let score = (interact_score(h, tun.interact) as i32 + nice).max(0) as u32;
    if score < tun.interact {
        let pri = match tun.version {
            // The integer division comes first: (32 / 30) = 1, so 120 + score.
            Version::V11_1 => {
                u32::from(lay.min_interact)
                    + ((u32::from(lay.max_interact) - u32::from(lay.min_interact) + 1) / tun.interact) * score
            }
            Version::Current => u32::from(lay.min_interact) + lay.interact_range * score / tun.interact,
        };
        return (pri.min(u32::from(lay.max_interact)) as u8, true);
    }
    let hz = i64::from(tun.hz);
    let pri = match tun.version {
        Version::V11_1 => {
            // SCHED_PRI_TICKS: ticks >> 10 over the window rounded up to SCHED_PRI_RANGE.
            let range = i64::from(lay.sched_pri_range);
            let mut p = i64::from(lay.sched_pri_min);
            if h.ticks != 0 {
                let len = (h.ltick - h.ftick).max(hz);
                let rounded = (len + range - 1) / range * range;
                let pri_ticks = (h.ticks >> SCHED_TICK_SHIFT) / (rounded / range);
                p += pri_ticks.min(range - 1);
            }
            p + i64::from(nice)
        }
        Version::Current => {
            let len = (h.ltick - h.ftick).max(1);
            let cpu_range = i64::from(lay.sched_pri_range);
            let cpu_off = ((((cpu_range - 1) * h.ticks + len / 2) / len) + 512) >> SCHED_TICK_SHIFT;
            // SCHED_PRI_NICE(nice) = (nice - PRIO_MIN) * 5 / 4.
            i64::from(lay.min_batch) + cpu_off + i64::from((nice + 20) * 5 / 4)
        }
    };
    (pri.clamp(i64::from(lay.min_batch), i64::from(lay.max_batch)) as u8, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tun() -> UleTunables {
        UleTunables::new(&[]).unwrap()
    }
    fn h(runtime: u32, slptime: u32) -> History {
        History { runtime, slptime, ..History::default() }
    }

    /// Hand-computed from `sched_interact_score`: S > R → R / (S/50); R > S → 100 − S/(R/50).
    #[test]
    fn score_table() {
        let cases = [
            // (run, sleep, score)
            (0, 0, 50),               // shortcut R >= S
            (0, 1_000_000, 0),        // pure sleeper
            (100_000, 500_000, 10),   // 500000/50 = 10000 → 100000/10000
            (300_000, 500_000, 30),   // sleep 62.5 %: exactly the threshold
            (299_000, 500_000, 29),   // just under the boundary: interactive
            (301_000, 500_000, 30),   // just over: batch
            (500_000, 500_000, 50),   // R == S → shortcut
            (1_000_000, 500_000, 50), // R > S → shortcut at the default threshold
            (49, 50, 49),             // div clamps to 1
        ];
        for (r, s, want) in cases {
            assert_eq!(interact_score(&h(r, s), 30), want, "run {r} sleep {s}");
        }
        // Above 50 the shortcut is off and the upper half is computed: 100 − S/(R/50).
        assert_eq!(interact_score(&h(1_000_000, 500_000), 60), 75);
        assert_eq!(interact_score(&h(1_000_000, 0), 60), 100);
        assert_eq!(interact_score(&h(0, 0), 60), 0);
    }

    /// Nice shifts the score before the threshold test (`score + p_nice`).
    #[test]
    fn nice_shifts_classification() {
        let t = tun();
        // Sleep 60 % of the time: score 33 (batch at nice 0, interactive at nice −10).
        let x = h(400_000, 600_000);
        assert_eq!(interact_score(&x, 30), 33);
        assert!(!user_priority(&x, 0, &t).1);
        assert_eq!(user_priority(&x, -10, &t), (120 + 23, true));
        // Sleep 70 %: score 21; nice +10 pushes it to 31, batch.
        let y = h(300_000, 700_000);
        assert_eq!(interact_score(&y, 30), 21);
        assert_eq!(user_priority(&y, 0, &t), (141, true));
        assert!(!user_priority(&y, 10, &t).1);
        // The R >= S shortcut holds whatever the nice.
        assert!(!user_priority(&h(500_000, 500_000), -20, &t).1);
    }

    /// 70 % asleep is interactive and 50 % is not, with a saturated 5 s history built tick
    /// by tick as `sched_clock` and `sched_wakeup` would.
    #[test]
    fn seventy_percent_sleeper_is_interactive_fifty_is_not() {
        let t = tun();
        for (sleep_pct, interactive) in [(70u32, true), (50, false), (62, false), (64, true)] {
            let mut x = History::default();
            // Cycles of 3 stat ticks of running (charged by `sched_clock`) followed by a
            // sleep credited by `sched_wakeup` in the chosen proportion.
            for _ in 0..400 {
                for _ in 0..3 {
                    x.runtime += t.tickincr();
                    interact_update(&mut x, t.slp_run_max());
                }
                x.slptime += 3 * t.tickincr() / (100 - sleep_pct) * sleep_pct;
                interact_update(&mut x, t.slp_run_max());
            }
            assert!(x.runtime + x.slptime <= 2 * t.slp_run_max());
            assert_eq!(user_priority(&x, 0, &t).1, interactive, "{sleep_pct}% asleep: {x:?}");
        }
    }

    #[test]
    fn clipping_keeps_the_sum_within_the_limit() {
        let t = tun();
        let max = t.slp_run_max();
        // Every branch: just over, over 6/5, over 2x.
        for (r, s) in [(3_000_000, 2_200_000), (4_000_000, 2_500_000), (9_000_000, 2_000_000), (10, 11_000_000)] {
            let mut x = h(r, s);
            interact_update(&mut x, max);
            // Saturation leaves (max, 1): one unit over, which the next update scales back.
            assert!(x.runtime + x.slptime <= max + 1, "{r}+{s} → {x:?}");
            // The ratio's side is preserved.
            assert_eq!(x.runtime > x.slptime, r > s);
        }
        let mut big = h(9_000_000, 2_000_000);
        interact_update(&mut big, max);
        assert_eq!((big.runtime, big.slptime), (max, 1));
        let mut fifth = h(3_000_000, 2_200_000);
        interact_update(&mut fifth, max);
        assert_eq!((fifth.runtime, fifth.slptime), (2_400_000, 1_760_000));
    }

    #[test]
    fn fork_keeps_the_ratio_with_half_a_second() {
        let t = tun();
        let mut x = h(3_000_000, 1_000_000);
        interact_fork(&mut x, t.slp_run_fork());
        // ratio = 4_000_000 / 512_000 = 7
        assert_eq!((x.runtime, x.slptime), (3_000_000 / 7, 1_000_000 / 7));
        assert_eq!(interact_score(&x, 30), interact_score(&h(3_000_000, 1_000_000), 30));
    }

    /// §A.7.2: a CPU hog over a full 10 s window sits at 203 + nice; a thread with no
    /// recent CPU at 172 + nice.
    #[test]
    fn batch_priority_from_cpu_use() {
        let t = tun();
        let mut x = h(5_120_000, 1);
        x.ltick = 0;
        x.ftick = 0;
        let mut now = 0;
        for _ in 0..11_000 {
            now += 1;
            pctcpu_update(&mut x, now, true, &t);
        }
        assert_eq!(user_priority(&x, 0, &t), (203, false));
        assert_eq!(user_priority(&x, 5, &t), (208, false));
        let idle = h(5_120_000, 1);
        assert_eq!(user_priority(&idle, 0, &t), (172, false));
        assert_eq!(user_priority(&idle, -20, &t), (152, false));
        assert_eq!(t.tickincr(), 8062);
        assert_eq!((t.slice, t.slice_min), (12, 2));
    }
}
