//! Load weights and the fixed-point arithmetic of `kernel/sched/core.c` / `fair.c`.

/// `NICE_0_LOAD` on the 1024 scale (`SCHED_FIXEDPOINT_SHIFT` = 10). On 64-bit kernels the
/// kernel stores `w << 10` and scales back down in `__calc_delta`; the results are identical.
pub const NICE_0_LOAD: u64 = 1024;

/// `WMULT_CONST` (`~0U`).
const WMULT_CONST: u64 = 0xffff_ffff;

/// `sched_prio_to_weight[]` (core.c), indexed by nice + 20; defined beside the cgroup
/// weight views that also read it.
pub use schedlab_sched_api::SCHED_PRIO_TO_WEIGHT;

/// `sched_prio_to_wmult[]` (core.c): 2^32 / weight, precomputed.
pub const SCHED_PRIO_TO_WMULT: [u32; 40] = [
    48388, 59856, 76040, 92818, 118348, 147320, 184698, 229616, 287308, 360437, 449829, 563644, 704093, 875809,
    1099582, 1376151, 1717300, 2157191, 2708050, 3363326, 4194304, 5237765, 6557202, 8165337, 10153587, 12820798,
    15790321, 19976592, 24970740, 31350126, 39045157, 49367440, 61356676, 76695844, 95443717, 119304647, 148102320,
    186737708, 238609294, 286331153,
];

/// `WEIGHT_IDLEPRIO` / `WMULT_IDLEPRIO` (sched.h) for `SCHED_IDLE` tasks.
pub const WEIGHT_IDLEPRIO: u64 = 3;
pub const WMULT_IDLEPRIO: u32 = 1_431_655_765;

/// A `struct load_weight`: weight and cached inverse.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadWeight {
    pub weight: u64,
    pub inv_weight: u32,
}

impl LoadWeight {
    /// `set_load_weight` (core.c): the table entry for `nice`, or the idle weight.
    pub fn for_task(nice: i32, idle: bool) -> LoadWeight {
        if idle {
            return LoadWeight { weight: WEIGHT_IDLEPRIO, inv_weight: WMULT_IDLEPRIO };
        }
        let i = (nice.clamp(-20, 19) + 20) as usize;
        LoadWeight { weight: SCHED_PRIO_TO_WEIGHT[i], inv_weight: SCHED_PRIO_TO_WMULT[i] }
    }
    /// A sum of weights (a runqueue's load) with its inverse from `__update_inv_weight`.
    pub fn sum(weight: u64) -> LoadWeight {
        let inv = if weight >= WMULT_CONST { 1 } else { WMULT_CONST.checked_div(weight).unwrap_or(WMULT_CONST) as u32 };
        LoadWeight { weight, inv_weight: inv }
    }
}

/// `__calc_delta` (fair.c): `delta * weight / lw.weight` via the 32-bit inverse, with the
/// kernel's shifts and truncation (128-bit intermediate as `mul_u64_u32_shr`).
pub fn calc_delta(delta: u64, weight: u64, lw: LoadWeight) -> u64 {
    // The kernel drops the bits above 32 with `fls(fact >> 32)` in one shift, not a loop
    // (a loop of up to ten mispredicted branches per call here).
    let fls_hi = |f: u64| 64 - (f >> 32).leading_zeros();
    let mut shift: u32 = 32;
    let fs = fls_hi(weight);
    shift -= fs;
    let fact = ((weight >> fs) as u32 as u64) * u64::from(lw.inv_weight);
    let fs = fls_hi(fact);
    shift -= fs;
    let fact = fact >> fs;
    ((u128::from(delta) * u128::from(fact)) >> shift) as u64
}

/// `calc_delta_fair`: wall time → virtual time for an entity of weight `lw`.
pub fn calc_delta_fair(delta: u64, lw: LoadWeight) -> u64 {
    if lw.weight == NICE_0_LOAD {
        delta
    } else {
        calc_delta(delta, NICE_0_LOAD, lw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn wmult_is_the_inverse_of_weight() {
        for i in 0..40 {
            let w = SCHED_PRIO_TO_WEIGHT[i];
            let m = u64::from(SCHED_PRIO_TO_WMULT[i]);
            // 2^32 / w, rounded as the kernel's table rounds.
            assert!((w * m).abs_diff(1 << 32) <= w, "nice {}", i as i32 - 20);
        }
    }
    /// The one-shift normalisation gives what shifting one bit at a time gives.
    #[test]
    fn calc_delta_matches_the_bit_by_bit_shift() {
        let slow = |delta: u64, weight: u64, lw: LoadWeight| {
            let (mut fact, mut shift) = (weight, 32u32);
            while fact >> 32 != 0 {
                fact >>= 1;
                shift -= 1;
            }
            let mut fact = (fact as u32 as u64) * u64::from(lw.inv_weight);
            while fact >> 32 != 0 {
                fact >>= 1;
                shift -= 1;
            }
            ((u128::from(delta) * u128::from(fact)) >> shift) as u64
        };
        let weights = [1, 2, 3, 15, 1024, 88761, 1 << 20, (1 << 32) - 1, 1 << 32, 3 << 40, u64::MAX >> 1];
        let invs = [1u32, 2, 48388, 4194304, 0xffff_ffff];
        for &w in &weights {
            for &inv in &invs {
                for d in [0, 1, 999, 4_000_000, 1 << 40] {
                    let lw = LoadWeight { weight: 1, inv_weight: inv };
                    assert_eq!(calc_delta(d, w, lw), slow(d, w, lw), "{d} {w} {inv}");
                }
            }
        }
    }
    #[test]
    fn calc_delta_fair_matches_the_ratio_within_one_ns() {
        for nice in -20..=19 {
            let lw = LoadWeight::for_task(nice, false);
            let d = 4_000_000u64;
            let exact = d * NICE_0_LOAD / lw.weight;
            let got = calc_delta_fair(d, lw);
            assert!(got.abs_diff(exact) <= 1 + exact / 1_000_000, "nice {nice}: {got} vs {exact}");
        }
        // nice 19: 4 ms of wall time is 4 ms × 1024/15 ≈ 273 ms of vruntime (`wakeup_gran`, fair.c v5.15).
        assert_eq!(calc_delta_fair(4_000_000, LoadWeight::for_task(19, false)) / 1_000_000, 273);
    }
}
