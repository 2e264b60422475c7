//! NO_HZ idle (`kernel/time/tick-sched.c`: `tick_nohz_idle_stop_tick`,
//! `tick_nohz_idle_exit`, Linux 2.6.21 and later) and the nohz idle balancer
//! (`kernel/sched/fair.c`: `nohz_balancer_kick`, `kick_ilb`, `nohz_idle_balance`, v5.15 and
//! v6.18), against the periodic tick of the 2.6 O(1) kernel (`kernel/sched.c:
//! scheduler_tick` → `rebalance_tick` on every CPU, idle or not, v2.6.8).
//!
//! The tick's count is read from the record: every tick takes its CPU's runqueue lock at
//! the `scheduler_tick` site, so that site's acquisitions on `rq[c]` are CPU `c`'s ticks.

mod common;
use common::*;
use schedlab_metrics::RunRecord;

/// Ticks CPU `cpu` took (its runqueue lock's `scheduler_tick` acquisitions).
fn ticks(r: &RunRecord, cpu: usize) -> u64 {
    let rq = format!("rq[{cpu}]");
    r.locks.iter().filter(|l| l.lock == rq && l.site == "scheduler_tick").map(|l| l.acquisitions).sum()
}

/// One hog pinned to CPU 0 of two for 1 s. With NO_HZ idle (CFS, EEVDF) CPU 1 stops its
/// tick at its first idle entry and never takes one; CPU 0 ticks every jiffy (HZ = 250 on
/// these kernels' default: 250 ticks). The O(1) kernel predates NO_HZ: both CPUs tick at
/// its HZ = 1000, the idle one included.
#[test]
fn an_idle_cpu_under_nohz_takes_no_tick_and_a_periodic_kernel_ticks_it() {
    let text = hog("h", 0, 0);
    for (sched, sets) in [("cfs", &[][..]), ("eevdf", &[("version", "6.18")][..])] {
        let r = run(&job(&text, "smp2", sched, 1, sets));
        let hz = u64::from(r.machine.hz.unwrap());
        assert_eq!(ticks(&r, 1), 0, "{sched}: the idle CPU ticked");
        assert!(ticks(&r, 0).abs_diff(hz) <= 1, "{sched}: busy CPU took {} ticks, want {hz}", ticks(&r, 0));
    }
    let r = run(&job(&text, "smp2", "o1", 1, &[]));
    // The O(1) scheduler's own HZ (its tunable; 1000, the 2.6.0–2.6.12 default), not the
    // machine's.
    let hz = 1000;
    for cpu in 0..2 {
        assert!(ticks(&r, cpu).abs_diff(hz) <= 1, "o1: CPU {cpu} took {} ticks, want {hz}", ticks(&r, cpu));
    }
}

/// Two hogs pinned to CPU 0 are unpinned at 1 s while CPU 1 sleeps with its tick stopped.
/// Nothing on CPU 1 can notice: the pull comes from CPU 0's tick, which kicks CPU 1
/// (`nohz_balancer_kick`: CPU 0 runs two tasks and `nohz.next_balance` is due) to run
/// `nohz_idle_balance`. CPU 1's balance interval grew while every task was pinned
/// (`load_balance`'s `LBF_ALL_PINNED` doubling), but `get_sd_balance_interval` clamps it to
/// `max_load_balance_interval` = HZ × CPUs / 10 jiffies, so the pull comes within that
/// and two ticks (the tick that kicks, the softirq that pulls) — with CPU 1 still tickless.
#[test]
fn a_nohz_kick_balances_a_newly_overloaded_cpu_within_the_kernels_interval() {
    let text = unpinned_hogs(2, "0-1");
    for (sched, sets) in [("cfs", &[][..]), ("eevdf", &[("version", "6.18")][..])] {
        let j = job(&text, "smp2", sched, 2, sets);
        let mut sw = Switches::default();
        run_with_probe(&j, &mut sw);
        let unpin = 1_000_000_000u64;
        let first = sw.0.iter().find(|&&(t, cpu, _, next)| cpu == 1 && next.is_some() && t.0 >= unpin);
        let (t, ..) = *first.unwrap_or_else(|| panic!("{sched}: CPU 1 never ran a hog"));
        let r = run(&j);
        let tick = 1_000_000_000 / u64::from(r.machine.hz.unwrap());
        let max_interval = (1_000_000_000 / tick) * 2 / 10 * tick;
        assert!(t.0 - unpin <= max_interval + 2 * tick, "{sched}: pulled {} ns after the unpinning", t.0 - unpin);
        assert!(r.policy_counters.get("nohz_kicks").copied().unwrap_or(0) > 0, "{sched}: no nohz kick");
        // Once the pull lands CPU 1 is busy and ticks; before it, it took none.
        let busy_ticks = (2_000_000_000 - t.0) / tick;
        assert!(
            ticks(&r, 1) <= busy_ticks + 1,
            "{sched}: CPU 1 ticked {} times, {busy_ticks} while busy",
            ticks(&r, 1)
        );
    }
}
