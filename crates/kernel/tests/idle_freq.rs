//! The idle governor and the cpufreq governor in whole runs (issue 32, items 4 and 5): the
//! states menu picks for long and short idles, `idle=poll`, `--costs flat|none` turning
//! both models off, schedutil's settled frequency for a periodic task and its ramp for a
//! new hog as `cpufreq_schedutil.c`'s formula predicts, and determinism.

use schedlab_kernel::{CpufreqStats, Kernel, KernelConfig, SimParams};
use schedlab_machine::{CostModel, CpuSet, Freq, FreqDomain, FreqGovernor, Machine};
use schedlab_probe::{NoProbe, RunSummary};
use schedlab_sim::Ns;
use std::sync::Arc;

const MS: u64 = 1_000_000;

/// Runs `workload` on `m` under `sched` until `end`, every invariant checked; `f` reads
/// the kernel afterwards.
fn run<R>(m: Machine, workload: &str, sched: &str, end: Ns, f: impl FnOnce(&Kernel<'_>, RunSummary) -> R) -> R {
    let m = Arc::new(m);
    let wl = schedlab_workload::parse_workload("test.toml", workload, &[], m.nr_cpus()).expect("workload parses");
    let policy = schedlab_policies::make_policy(sched, &m, &[]).expect("registered policy");
    let mut probe = NoProbe;
    let sim = SimParams { check_invariants: true, end, ..SimParams::default() };
    let mut k = Kernel::new(m, Arc::new(wl), policy, KernelConfig::default(), sim, &mut probe).expect("kernel builds");
    let s = k.run(&mut |_| true).expect("run");
    f(&k, s)
}

/// One task on CPU 0 sleeping `sleep` between runs of 20 µs.
fn sleeper(sleep: &str) -> String {
    format!(
        "[[task]]\nname = \"s\"\naffinity = \"0\"\nprogram = [ {{ loop = \"forever\", do = [ {{ run = \"20us\" }}, {{ sleep = \"{sleep}\" }} ] }} ]\n"
    )
}

/// The state CPU 0 idled in most often.
fn most_used(k: &Kernel<'_>) -> String {
    let u = k.cpuidle_usage(0);
    u.iter().max_by_key(|s| s.1).map(|s| s.0.clone()).unwrap_or_default()
}

/// i7-3770 (`intel_idle`'s `ivb_cstates`, menu v5.15): idles of 10 ms end up in the
/// deepest state, C7 (menu predicts 10 ms ≥ every target residency); idles of ~100 µs in
/// one whose target residency fits them (C1E, 20 µs; C3's 156 µs does not).
#[test]
fn menu_goes_deep_after_long_idles_and_shallow_after_short_ones() {
    let m = schedlab_machine::preset("i7-3770").expect("preset");
    let long = run(m.clone(), &sleeper("10ms"), "cfs", Ns(500 * MS), |k, _| most_used(k));
    assert_eq!(long, "C7");
    let short = run(m, &sleeper("100us"), "cfs", Ns(100 * MS), |k, _| most_used(k));
    assert!(["C1", "C1E"].contains(&short.as_str()), "short idles in {short}");
}

/// `idle=poll` enters no state and `--costs flat`/`none` have no idle model: no state is
/// ever used; under `full` the CPU's idles are counted.
#[test]
fn idle_states_only_under_the_full_model() {
    let m = schedlab_machine::preset("i7-3770").expect("preset");
    let used = |m: Machine| {
        run(m, &sleeper("1ms"), "cfs", Ns(50 * MS), |k, _| k.cpuidle_usage(0).iter().map(|s| s.1).sum::<u64>())
    };
    assert!(used(m.clone()) > 10);
    let mut poll = m.clone();
    poll.idle.poll = true;
    assert_eq!(used(poll), 0);
    for model in [CostModel::Flat, CostModel::None] {
        let mut m = m.clone();
        m.set_cost_model(model);
        assert_eq!(used(m), 0, "{model:?}");
    }
}

/// One CPU, frequencies 0.3–3.0 GHz in 300 MHz steps, schedutil v6.18 with a 1 ms rate
/// limit, frequency-invariant.
fn one_cpu(governor: FreqGovernor) -> Machine {
    let mut m = schedlab_machine::preset("up").expect("preset");
    m.set_cost_model(CostModel::Full);
    let d = FreqDomain {
        cpus: CpuSet::full(1),
        khz: (1..=10).map(|i| i * 300_000).collect(),
        power_uw: Vec::new(),
        transition_latency: Ns(0),
        transition_delay_us: Some(1000),
        capacity: None,
        dmips_mhz: None,
        scale_ref_khz: None,
    };
    m.freq = Freq { governor, invariant: true, rate_limit_us: None, domains: vec![d] };
    m
}

fn stats(k: &Kernel<'_>) -> CpufreqStats {
    k.cpufreq_stats(0).expect("cpufreq on")
}

/// A task running 1 ms of full-speed work every 10 ms (10 %): invariant PELT sees it
/// running 1 ms in 10 wherever the frequency is, so its utilisation oscillates between
/// `1024 (1 − y) y⁹ / (1 − y¹⁰)` ≈ 93 and that ÷ y⁹ ≈ 113 (y³² = ½), and schedutil asks for
/// `1.25 × 3 GHz × util / 1024` = 340–413 MHz, which resolves to 600 MHz: the run settles
/// there (the start, at the new task's utilisation of 512, is briefly higher).
#[test]
fn schedutil_settles_a_periodic_task_where_the_formula_says() {
    let wl = "[[task]]\nname = \"p\"\nprogram = [ { loop = \"forever\", do = [ { run = \"1ms\" }, { timer = \"10ms\" } ] } ]\n";
    let y = 0.5f64.powf(1.0 / 32.0);
    let u_min = 1024.0 * (1.0 - y) * y.powi(9) / (1.0 - y.powi(10));
    let u_max = u_min / y.powi(9);
    let want = |u: f64| {
        let raw = (1.25 * 3_000_000.0 * u / 1024.0) as u64;
        (1..=10).map(|i| i * 300_000).find(|&f| f >= raw).unwrap_or(3_000_000)
    };
    assert_eq!((want(u_min), want(u_max)), (600_000, 600_000), "the formula's band is one table step");
    let s = run(one_cpu(FreqGovernor::Schedutil618), wl, "cfs", Ns(2000 * MS), |k, _| stats(k));
    let at = |f: u64| s.time_in_state.iter().find(|e| e.0 == f).map_or(0, |e| e.1 .0);
    assert!(at(600_000) >= 1800 * MS, "{:?}", s.time_in_state);
    assert_eq!(at(3_000_000), 0, "never at the top");
}

/// A new hog on a cold CPU (lowest frequency): PELT starts it at 512
/// (`post_init_entity_util_avg`) and grows it as `1024 − 512 yᵗ` in PELT time, which runs
/// at `f / f_max` of wall time while the CPU is slow; schedutil follows at each tick (the
/// hog's only updates). The frequency reaches 3 GHz when util ≥ 820 (1.25 × util ≥ 1024):
/// the wall time of that, stepped per tick as the formula goes, is tens of ms — not one
/// rate-limit period — and the run reaches it within a tick of it.
#[test]
fn a_new_hog_ramps_to_the_top_frequency_as_its_utilisation_grows() {
    let wl = "[[task]]\nname = \"hog\"\nprogram = [ { run = \"1s\" } ]\n";
    let m = one_cpu(FreqGovernor::Schedutil618);
    let tick = m.tick_ns().0;
    // The formula, stepped per tick: PELT time advances by tick × f / f_max.
    let period = 1024.0 * 1024.0; // ns per PELT period (1024 × 1024 ns)
    let y = 0.5f64.powf(1.0 / 32.0);
    let freq = |u: f64| {
        let raw = (1.25 * 3_000_000.0 * u / 1024.0) as u64;
        (1..=10).map(|i| i * 300_000).find(|&x| x >= raw).unwrap_or(3_000_000)
    };
    let (mut pelt, mut wall, mut f) = (0.0f64, 0u64, freq(512.0));
    assert_eq!(f, 2_100_000, "the new task's 512 asks for 1.875 GHz");
    while f < 3_000_000 {
        pelt += tick as f64 * f as f64 / 3_000_000.0;
        wall += tick;
        f = freq(1024.0 - 512.0 * y.powf(pelt / period));
    }
    assert!(wall > 20 * MS, "tens of ms: {wall}");
    let s = run(m, wl, "cfs", Ns(300 * MS), |k, _| stats(k));
    let below: u64 = s.time_in_state.iter().filter(|e| e.0 < 3_000_000).map(|e| e.1 .0).sum();
    assert!(
        below + tick >= wall && below <= wall + 2 * tick,
        "reached 3 GHz after {below} ns; the formula says {wall}"
    );
    assert!(s.time_in_state.iter().find(|e| e.0 == 3_000_000).is_some_and(|e| e.1 .0 > 0));
}

/// performance runs at the top, powersave at the bottom, and work takes as long as the
/// frequency says: 10 ms of full-speed work at 300 MHz of 3 GHz takes 100 ms.
#[test]
fn work_scales_with_frequency() {
    let wl = "[[task]]\nname = \"w\"\nprogram = [ { run = \"10ms\" } ]\n";
    let end = |g| run(one_cpu(g), wl, "cfs", Ns(1000 * MS), |k, s| (k.cpufreq_khz(0), s.end.0));
    let (fast, t_fast) = end(FreqGovernor::Performance);
    let (slow, t_slow) = end(FreqGovernor::Powersave);
    assert_eq!((fast, slow), (3_000_000, 300_000));
    assert!(t_slow > 9 * t_fast && t_slow < 11 * t_fast, "{t_fast} vs {t_slow}");
}

/// Same seed, same machine and workload: the same trace, with both governors running.
#[test]
fn deterministic_with_idle_and_frequency_models() {
    let wl = "[[task]]\nname = \"p\"\ncount = 3\nprogram = [ { loop = \"forever\", do = [ { run = \"300us\" }, { sleep = \"700us\" } ] } ]\n";
    let mut m = schedlab_machine::preset("big-little").expect("preset");
    m.set_cost_model(CostModel::Full);
    let once = || run(m.clone(), wl, "eevdf", Ns(200 * MS), |k, s| (s.trace_hash, k.cpufreq_stats(0)));
    let (a, b) = (once(), once());
    assert_eq!(a, b);
    assert!(a.1.is_some_and(|s| s.total_trans > 0), "schedutil changed the little cluster's frequency");
}

/// An rt hog (`SCHED_FIFO`) on a cold CPU: its enqueue kicks cpufreq
/// (`enqueue_top_rt_rq`, rt.c), and with an rt task runnable `effective_cpu_util` asks for
/// the CPU's whole capacity (v6.18: `min = scale`; v5.15: returns `max`), so schedutil goes
/// straight to 3 GHz — not in the tens of ms a fair hog's PELT ramp takes — under both
/// versions, and stays there while it runs.
#[test]
fn an_rt_hog_drives_the_cpu_to_the_top_frequency() {
    let rt = "[[task]]\nname = \"hog\"\npolicy = \"fifo\"\nrt_priority = 50\nprogram = [ { run = \"100ms\" } ]\n";
    let fair = "[[task]]\nname = \"hog\"\nprogram = [ { run = \"100ms\" } ]\n";
    for g in [FreqGovernor::Schedutil618, FreqGovernor::Schedutil515] {
        let below = |wl: &str| {
            let s = run(one_cpu(g), wl, "cfs", Ns(50 * MS), |k, _| stats(k));
            s.time_in_state.iter().filter(|e| e.0 < 3_000_000).map(|e| e.1 .0).sum::<u64>()
        };
        let (rt, fair) = (below(rt), below(fair));
        assert!(rt < MS / 10, "{g:?}: the rt hog ran {rt} ns below the top");
        assert!(fair > 20 * MS, "{g:?}: the fair hog ramps for tens of ms, {fair} ns");
    }
}

/// After an rt hog exits, schedutil still hears the rt class: `rq->avg_rt` (PELT over
/// the time rt ran, `update_rt_rq_load_avg`) decays with a 32 ms half-life and
/// `effective_cpu_util` adds it to the fair figure, so the CPU stays fast for tens of ms —
/// where a fair hog's utilisation leaves with the task (`remove_entity_load_avg`). A
/// 1 ms-in-10 fair task keeps the governor called. After 200 ms of running,
/// `avg_rt ≈ 1024 (1 − 2^(−200/32.8)) ≈ 1008`; v6.18 asks for `1.25 (rt + cfs)`, at least
/// 1.5 GHz of 3 GHz (512) while `rt + cfs ≥ 410`: with `cfs` ≈ 100, until
/// `rt = 1008 · 2^(−t/32.8 ms)` falls to 310, t ≈ 56 ms. So in [20, 50] ms after the exit
/// the CPU runs at 1.5 GHz or more throughout (30 ms, less the governor's 1 ms rate limit);
/// after a fair hog, hardly at all.
#[test]
fn the_rt_class_utilisation_decays_after_an_rt_hog_exits() {
    let world = |policy: &str| {
        format!(
            "[[task]]\nname = \"hog\"\n{policy}program = [ {{ run = \"200ms\" }} ]\n[[task]]\nname = \"p\"\nprogram = [ {{ loop = \"forever\", do = [ {{ run = \"1ms\" }}, {{ timer = \"10ms\" }} ] }} ]\n"
        )
    };
    let fast = |wl: &str, end_ms: u64| {
        let s = run(one_cpu(FreqGovernor::Schedutil618), wl, "cfs", Ns(end_ms * MS), |k, _| stats(k));
        s.time_in_state.iter().filter(|e| e.0 >= 1_500_000).map(|e| e.1 .0).sum::<u64>()
    };
    let window = |wl: &str, exit_ms: u64| fast(wl, exit_ms + 50) - fast(wl, exit_ms + 20);
    let rt = world("policy = \"fifo\"\nrt_priority = 50\n");
    // The rt hog runs at the top frequency from its start: it exits at about 200 ms.
    let rt_fast = window(&rt, 201);
    assert!(rt_fast >= 28 * MS, "after the rt hog: {rt_fast} ns of 30 ms at 1.5 GHz or more");
    // The fair hog ramps first and ends later; well after it, the fair task alone.
    let fair_fast = window(&world(""), 400);
    assert!(fair_fast <= 2 * MS, "after the fair hog: {fair_fast} ns at 1.5 GHz or more");
}

/// The lowest table frequency of [`one_cpu`] at or above `raw` kHz
/// (`cpufreq_driver_resolve_freq`).
fn resolve(raw: u64) -> u64 {
    (1..=10).map(|i| i * 300_000).find(|&f| f >= raw).unwrap_or(3_000_000)
}

/// The 10 % task of `schedutil_settles_a_periodic_task_where_the_formula_says` with
/// `util_min = 512`: its utilisation (93–113) is below the clamp while it is runnable, so
/// v6.18 asks for `max(min, min(1.25 util, max))` = 512 (`sugov_effective_cpu_perf`: the
/// minimum gets no headroom) → 3 GHz × 512 / 1024 = 1.5 GHz; v5.15 clamps first
/// (`uclamp_rq_util_with`) and adds the headroom after → 1.25 × 512 → 1.875 GHz → 2.1 GHz.
/// Asleep, the CPU holds the frequency (no update while idle, and the dequeue's update
/// comes before the CPU idled: `sugov_hold_freq`).
#[test]
fn uclamp_min_raises_a_periodic_task_to_the_frequency_the_formula_says() {
    let wl = "[[task]]\nname = \"p\"\nutil_min = 512\nprogram = [ { loop = \"forever\", do = [ { run = \"1ms\" }, { timer = \"10ms\" } ] } ]\n";
    let cases = [
        (FreqGovernor::Schedutil618, resolve(3_000_000 * 512 / 1024)),
        (FreqGovernor::Schedutil515, resolve(3_000_000 * (512 + 128) / 1024)),
    ];
    assert_eq!((cases[0].1, cases[1].1), (1_500_000, 2_100_000));
    for (g, want) in cases {
        let s = run(one_cpu(g), wl, "cfs", Ns(2000 * MS), |k, _| stats(k));
        let at = |f: u64| s.time_in_state.iter().find(|e| e.0 == f).map_or(0, |e| e.1 .0);
        assert!(at(want) >= 1800 * MS, "{g:?}: {:?}", s.time_in_state);
        assert_eq!(at(600_000), 0, "{g:?}: never where the unclamped task settles");
    }
}

/// A hog with `util_max = 512`: its utilisation reaches 1024, but v6.18 caps the request
/// at the clamp (`min(1.25 util, max)` = 512 → 1.5 GHz) and v5.15 clamps the utilisation
/// to 512 before the headroom (→ 1.875 GHz → 2.1 GHz); neither reaches the 3 GHz an
/// unclamped hog runs at.
#[test]
fn uclamp_max_caps_a_hogs_frequency() {
    let wl = "[[task]]\nname = \"hog\"\nutil_max = 512\nprogram = [ { run = \"1s\" } ]\n";
    for (g, want) in [(FreqGovernor::Schedutil618, 1_500_000), (FreqGovernor::Schedutil515, 2_100_000)] {
        let s = run(one_cpu(g), wl, "cfs", Ns(500 * MS), |k, _| stats(k));
        let at = |f: u64| s.time_in_state.iter().find(|e| e.0 == f).map_or(0, |e| e.1 .0);
        assert_eq!(at(3_000_000), 0, "{g:?}: {:?}", s.time_in_state);
        assert!(at(want) >= 450 * MS, "{g:?}: {:?}", s.time_in_state);
    }
    let free = run(
        one_cpu(FreqGovernor::Schedutil618),
        "[[task]]\nname = \"hog\"\nprogram = [ { run = \"1s\" } ]\n",
        "cfs",
        Ns(500 * MS),
        |k, _| stats(k),
    );
    assert!(free.time_in_state.iter().any(|e| e.0 == 3_000_000 && e.1 .0 > 0), "unclamped, the hog reaches the top");
}

/// With uclamp in use, a runnable rt task no longer asks for the top frequency by itself
/// (`effective_cpu_util`'s `!uclamp_is_used()` test); its default minimum
/// (`sysctl_sched_uclamp_util_min_rt_default`, 1024) does, unless it asks for less: a 10 %
/// rt task with `util_min = 0` runs where its rt utilisation puts it, never at 3 GHz.
#[test]
fn an_rt_task_with_a_low_uclamp_min_is_not_sent_to_the_top() {
    let task = |extra: &str| {
        format!("[[task]]\nname = \"r\"\npolicy = \"fifo\"\nrt_priority = 10\n{extra}program = [ {{ loop = \"forever\", do = [ {{ run = \"1ms\" }}, {{ timer = \"10ms\" }} ] }} ]\n")
    };
    let top = |extra: &str, g| {
        let s = run(one_cpu(g), &task(extra), "cfs", Ns(1000 * MS), |k, _| stats(k));
        s.time_in_state.iter().find(|e| e.0 == 3_000_000).map_or(0, |e| e.1 .0)
    };
    for g in [FreqGovernor::Schedutil618, FreqGovernor::Schedutil515] {
        assert!(top("", g) > 500 * MS, "{g:?}: the rt default goes to the top");
        assert_eq!(top("util_min = 0\n", g), 0, "{g:?}: util_min 0");
    }
}
