//! Built-in machines. Each preset's data names its source in its doc comment and in
//! `docs/machine.md`; `generic_*` are the defaults of machines without their own data
//! (`up`, `smpN`, `numa-1024`, machine files that leave a section out).

use crate::{
    em_power_uw, CacheLevel, CacheScope, Caches, Costs, CpuSet, Freq, FreqDomain, FreqGovernor, Idle, IdleDriver,
    IdleGovernor, IdleState, Inclusion, Lines, Machine, Memory, Mm, Replacement, Spinlock, Topology,
};
use schedlab_sim::Ns;

/// Built-in machines: `(name, description)`.
pub const PRESETS: &[(&str, &str)] = &[
    ("up", "1 CPU (uniprocessor)"),
    ("smp2", "2 CPUs, one LLC, no SMT"),
    ("smp4", "4 CPUs, one LLC, no SMT"),
    ("smp8", "8 CPUs, one LLC, no SMT"),
    (
        "i7-3770",
        "Intel Core i7-3770: 4 cores x 2 SMT threads, one 8 MB LLC (the lock-contention and ULE-vs-CFS desktop)",
    ),
    ("i7-3770-4c", "the i7-3770 with its SMT siblings offline (maxcpus=4, or HT off): 4 cores x 1 thread, one LLC"),
    (
        "opteron-32",
        "32 cores, 2 NUMA nodes of 16 cores, 8 cores per LLC, SLIT distance 20 (the ULE-vs-CFS server, simplified; Opteron 6172 data)",
    ),
    ("numa-1024", "1024 CPUs: 16 NUMA nodes x 4 LLCs x 8 cores x 2 SMT threads, SLIT distance 20 (scale benchmarks)"),
    ("vm", "a 2-vCPU KVM guest like this host: haltpoll idle (POLL, HLT as a VM exit), no cpufreq, PV spinlocks"),
    (
        "big-little",
        "Google Tensor (gs101, Pixel 6): 4 Cortex-A55 + 2 A76 + 2 X1, capacities, OPPs and power from its device tree",
    ),
];

/// Builds a preset by name.
pub fn preset(name: &str) -> Option<Machine> {
    let mut m = build(name)?;
    m.size_cpusets();
    Some(m)
}

fn build(name: &str) -> Option<Machine> {
    let (nodes, llcs, cores, threads) = match name {
        "up" => (1, 1, 1, 1),
        "smp2" => (1, 1, 2, 1),
        "smp4" => (1, 1, 4, 1),
        "smp8" => (1, 1, 8, 1),
        "i7-3770" => return Some(ivy_bridge(name, 2)),
        "i7-3770-4c" => return Some(ivy_bridge(name, 1)),
        "opteron-32" => return Some(opteron_32()),
        "numa-1024" => (16, 4, 8, 2),
        "vm" => return Some(vm()),
        "big-little" => return Some(big_little()),
        _ => return None,
    };
    Some(Machine::new(name, 250, Topology::new(nodes, llcs, cores, threads, None), Costs::default()))
}

/// A latency of `cycles` core cycles at `mhz`, in ps (truncated).
fn cycles_ps(cycles: u64, mhz: u64) -> u64 {
    cycles * 1_000_000 / mhz
}

fn level(
    name: &str,
    size: u64,
    latency_ps: u64,
    scope: CacheScope,
    inclusion: Inclusion,
    r: Replacement,
) -> CacheLevel {
    CacheLevel { name: name.into(), size, line: 64, scope, latency_ps, inclusion, replacement: r, bandwidth: None }
}

fn state(name: &str, exit: Ns, residency: Ns) -> IdleState {
    IdleState {
        name: name.into(),
        exit_latency: exit,
        target_residency: residency,
        exit_cost: None,
        power_mw: None,
        polling: false,
        tlb_flushed: false,
    }
}

/// The cpuidle poll state (`drivers/cpuidle/poll_state.c: cpuidle_poll_state_init`):
/// exit latency and target residency 0, `CPUIDLE_FLAG_POLLING`.
fn poll_state() -> IdleState {
    IdleState { polling: true, ..state("POLL", Ns(0), Ns(0)) }
}

fn one_driver(nr_cpus: usize, states: Vec<IdleState>) -> Vec<IdleDriver> {
    vec![IdleDriver { cpus: CpuSet::full(nr_cpus), states }]
}

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

/// Generic caches: the i7-3770's per-core hierarchy (`ivy_bridge_caches`) with a shared
/// inclusive L3 of 2 MiB per core of the LLC — Intel's client ratio — not any one machine's.
pub(crate) fn generic_caches(t: &Topology) -> Caches {
    let mut c = ivy_bridge_caches();
    c.levels[2].size = 2 * MIB * t.cores_per_llc.max(1) as u64;
    c
}

/// Generic line transfers: the constant model's `line_*` defaults (40/80/120 ns) for the
/// classes it has, and 7 ns between SMT siblings (a sibling `compare_exchange` hand-off
/// measures 6.2–7.6 ns on Skylake to Cascade Lake in `nviennot/core-to-core-latency`).
pub(crate) fn generic_lines() -> Lines {
    let c = Costs::default();
    Lines {
        smt: Ns(7),
        same_llc: c.line_same_llc,
        other_llc: c.line_cross_llc,
        other_node: c.line_cross_node,
        by_distance: Vec::new(),
        spinlock: Spinlock::Auto,
        ticket_alpha: 500,
    }
}

/// Generic idle: no cpuidle driver (`default_idle`: HLT), whose exit is the constant
/// model's `idle_exit` (1 µs, the C1 class).
pub(crate) fn generic_idle(nr_cpus: usize) -> Idle {
    let hlt = state("HLT", Costs::default().idle_exit, Costs::default().idle_exit);
    Idle::with(IdleGovernor::None, one_driver(nr_cpus, vec![hlt]))
}

/// Generic frequency: no cpufreq; every CPU at one speed and capacity 1024.
pub(crate) fn generic_freq() -> Freq {
    Freq { governor: FreqGovernor::None, invariant: false, rate_limit_us: None, domains: Vec::new() }
}

/// Generic address spaces: the i7-3770's (`ivy_bridge_mm`).
pub(crate) fn generic_mm() -> Mm {
    ivy_bridge_mm()
}

/// Intel Core i7-3770 caches (3.4 GHz): L1d 32 KiB and L2 256 KiB per core, L3 8 MiB
/// shared and inclusive (TechPowerUp CPU DB "Core i7-3770"; Intel 64 and IA-32
/// Architectures Optimization Reference Manual, Sandy Bridge chapter, for the hierarchy
/// Ivy Bridge keeps); load-to-use 4, 12 and ≈ 30 cycles (7-cpu.com "Intel Ivy Bridge",
/// i7-3770 at 3.4 GHz: L3 26–34 cycles by slice, 29–30 on average), L3 replacement
/// "looks like random" there; L1/L2 pseudo-LRU. Local DRAM ≈ 65 ns: Intel's "Performance
/// Analysis Guide for Intel Core i7 and Xeon 5500" gives ≈ 60 ns for local DRAM, plus the
/// L3 lookup — a prior for `calibrate`. 10 line-fill buffers (7-cpu.com "Intel Westmere";
/// unchanged through Ivy Bridge per Intel's manual) bound one core's demand bandwidth at
/// 10 × 64 B / 65 ns ≈ 9.8 GB/s (Little's law).
fn ivy_bridge_caches() -> Caches {
    let mhz = 3400;
    Caches {
        levels: vec![
            level("L1d", 32 * KIB, cycles_ps(4, mhz), CacheScope::Core, Inclusion::Inclusive, Replacement::Lru),
            level("L2", 256 * KIB, cycles_ps(12, mhz), CacheScope::Core, Inclusion::Inclusive, Replacement::Lru),
            level("L3", 8 * MIB, cycles_ps(30, mhz), CacheScope::Llc, Inclusion::Inclusive, Replacement::Random),
        ],
        memory: Memory { latency_ps: 65_000, bandwidth: 9_800_000_000, mlp: 10 },
    }
}

/// i7-3770 address spaces: PCID (Ivy Bridge has it; Linux uses it from v4.14,
/// Lutomirski's PCID series); a CR3 write ≈ 100 ns class (Lutomirski's 2016 RFC measured
/// PCID saving "about 100 ns" per switch between mms, which bounds the flush's cost; the
/// write is a prior for `calibrate`); a page walk ≈ 25 cycles with the page tables in cache
/// (7 ns at 3.4 GHz); 64 L1 DTLB + 512 STLB entries (Intel's optimization manual); fork
/// 34 ns per resident page (Redis latency docs: 9 ms per GB on a 2.27 GHz Xeon = 262 144
/// pages); exit per page: no published figure, the fork cost as a prior (calibrate).
fn ivy_bridge_mm() -> Mm {
    Mm {
        cr3_write: Ns(100),
        tlb_walk: Ns(7),
        tlb_entries: 576,
        pcid: true,
        fork_per_page: Ns(34),
        exit_per_page: Ns(34),
    }
}

/// `i7-3770` (`threads` = 2) and `i7-3770-4c` (1: SMT off). Costs: today's defaults.
/// Caches and mm: [`ivy_bridge_caches`], [`ivy_bridge_mm`]. Lines: an SMT sibling 9 ns and
/// another core of the ring 22 ns (`nviennot/core-to-core-latency`: sibling CAS hand-off
/// 8–10 ns on Sandy Bridge-EP, other cores 20–21 ns on the 4-core client rings of Haswell and
/// Skylake; Intel's Nehalem guide: an L3 hit modified in another core ≈ 75 cycles = 22 ns
/// at 3.4 GHz); one LLC, so the farther classes are unused. Idle: `intel_idle`'s
/// `ivb_cstates` (identical in v5.15 and v6.18) after the poll state, with the menu
/// governor (the highest-rated). Frequency: [`ivy_bridge_freq`].
fn ivy_bridge(name: &str, threads: usize) -> Machine {
    let topology = Topology::new(1, 1, 4, threads, None);
    let n = topology.nr_cpus();
    let mut m = Machine::new(name, 250, topology, Costs::default());
    m.caches = ivy_bridge_caches();
    m.mm = ivy_bridge_mm();
    m.lines = Lines { smt: Ns(9), same_llc: Ns(22), other_llc: Ns(22), other_node: Ns(22), ..generic_lines() };
    m.idle = Idle::with(IdleGovernor::Menu515, one_driver(n, ivb_cstates()));
    m.freq = ivy_bridge_freq(n);
    m
}

/// `drivers/idle/intel_idle.c: ivb_cstates` (v5.15, v6.18): exit latency / target
/// residency in µs C1 1/1, C1E 10/20, C3 59/156, C6 80/300, C7 87/300; C3 and deeper
/// `CPUIDLE_FLAG_TLB_FLUSHED`. intel_idle gives no power.
fn ivb_cstates() -> Vec<IdleState> {
    let us = Ns::from_us;
    let flushed = |s: IdleState| IdleState { tlb_flushed: true, ..s };
    vec![
        poll_state(),
        state("C1", us(1), us(1)),
        state("C1E", us(10), us(20)),
        flushed(state("C3", us(59), us(156))),
        flushed(state("C6", us(80), us(300))),
        flushed(state("C7", us(87), us(300))),
    ]
}

/// i7-3770 frequency under `intel_pstate=passive` (`intel_cpufreq`), so schedutil drives
/// it: P-states every 100 MHz from 1.6 GHz (the lowest ratio of Ivy Bridge desktop parts:
/// 16 × 100 MHz, as CPU-Z reports an idle i5-3470) to the 3.4 GHz base and 3.9 GHz turbo
/// (TechPowerUp CPU DB); one policy per CPU; `transition_delay_us` 500 and
/// `cpuinfo.transition_latency` 20 µs (`drivers/cpufreq/intel_pstate.c:
/// INTEL_CPUFREQ_TRANSITION_DELAY`, `INTEL_CPUFREQ_TRANSITION_LATENCY`; no HWP on Ivy
/// Bridge). Frequency-invariant (x86 Intel, v5.7+): `arch_max_freq_ratio` uses the 4-core
/// turbo ratio, 3.7 GHz on the i7-3770 (Intel's turbo bins 3/4/5/5 × 100 MHz above base;
/// not re-read here — `MSR_TURBO_RATIO_LIMIT` on the part says). The single-core turbo
/// limit for few active cores is not modelled: 3.9 GHz is available to every CPU.
fn ivy_bridge_freq(nr_cpus: usize) -> Freq {
    let khz: Vec<u64> = (16..=39).map(|ratio| ratio * 100_000).collect();
    let domains = (0..nr_cpus)
        .map(|c| FreqDomain {
            cpus: CpuSet::single(nr_cpus, c),
            khz: khz.clone(),
            power_uw: Vec::new(),
            transition_latency: Ns::from_us(20),
            transition_delay_us: Some(500),
            capacity: None,
            dmips_mhz: None,
            scale_ref_khz: Some(3_700_000),
        })
        .collect();
    Freq { governor: FreqGovernor::Schedutil515, invariant: true, rate_limit_us: None, domains }
}

/// `opteron-32`: the ULE-vs-CFS paper's server. The paper's machine is recorded as a
/// "32-core AMD Opteron 6172"; a 6172 package has 12 cores (two 6-core Magny-Cours dies),
/// so 32 cores is not a whole number of them (real 6172 boxes have 24 or 48). The preset
/// keeps its historical shape — 2 nodes × 2 LLCs × 8 cores, SLIT 20, which matches no 6172
/// box (Linux makes each 6-core die a node) but does match 2 × Opteron 6272 (Interlagos:
/// 8-core dies, 2 per package) — and takes its per-core and per-die data from the part the
/// paper names, the 6172 (family 10h, 2.1 GHz), which is also the part SOSP'13 measured
/// its line transfers on. If the machine was 2 × 6272, its caches differ (16 KiB L1d, 2 MiB
/// L2 per 2-core module, 8 MiB L3 per die). Sources: [`opteron_caches`]; lines: David,
/// Guerraoui and Trigonakis, "Everything you always wanted to know about synchronization
/// but were afraid to ask" (SOSP 2013): a Modified line ≈ 81 cycles on the same die
/// (39 ns), ≈ 161 from the package's other die (77 ns), ≈ 172 one HyperTransport hop away
/// (82 ns), ≈ 252 two hops (120 ns); no SMT. Idle: `acpi_idle` — the poll state, then C1
/// (HLT) with `target_residency = exit latency × latency_factor` (2,
/// `drivers/acpi/processor_idle.c: acpi_processor_setup_cstates`), C1 exit ≈ 1 µs (the
/// ACPI default C1; C1E's exit is undocumented in what was read — calibrate). Frequency:
/// `acpi-cpufreq`, per-core policies, only the 2.1 GHz top P-state known (the box's
/// `_PSS` table was not found), performance governor; not frequency-invariant (family 10h
/// has no CPPC). mm: no PCID on family 10h; K10 TLBs 48 L1 + 512 L2 DTLB entries; walk and
/// fork as the i7-3770's priors. Costs: today's defaults with the flat line costs
/// 40 / 77 / 120 ns.
fn opteron_32() -> Machine {
    let topology = Topology::new(2, 2, 8, 1, None);
    let n = topology.nr_cpus();
    let costs = Costs { line_same_llc: Ns(40), line_cross_llc: Ns(77), line_cross_node: Ns(120), ..Costs::default() };
    let mut m = Machine::new("opteron-32", 250, topology, costs);
    m.caches = opteron_caches();
    m.lines = Lines {
        smt: Ns(39),
        same_llc: Ns(39),
        other_llc: Ns(77),
        other_node: Ns(82),
        by_distance: vec![(22, Ns(120))],
        ..generic_lines()
    };
    let c1 = state("C1", Ns::from_us(1), Ns::from_us(2));
    m.idle = Idle::with(IdleGovernor::Menu515, one_driver(n, vec![poll_state(), c1]));
    let domains = (0..n)
        .map(|c| FreqDomain {
            cpus: CpuSet::single(n, c),
            khz: vec![2_100_000],
            power_uw: Vec::new(),
            transition_latency: Ns(0),
            transition_delay_us: None,
            capacity: None,
            dmips_mhz: None,
            scale_ref_khz: None,
        })
        .collect();
    m.freq = Freq { governor: FreqGovernor::Performance, invariant: false, rate_limit_us: None, domains };
    m.mm = Mm { pcid: false, tlb_walk: Ns(12), tlb_entries: 560, ..ivy_bridge_mm() };
    m
}

/// AMD Opteron 6172 caches: L1d 64 KiB per core, 3 cycles (Tom's Hardware "AMD K10
/// architecture" p. 9), L2 512 KiB per core, exclusive of L1, 16 cycles, L3 6 MiB per die,
/// a non-inclusive victim cache of which HT Assist takes 1 MiB (5 MiB usable; lscpu shows
/// "L3 5118K"), 57 cycles at 2.2 GHz = 25.9 ns (it runs on the northbridge clock), memory
/// 98 ns (AnandTech "AMD's 12-core Magny-Cours Opteron 6174 vs. Intel's 6-core Xeon", 2010,
/// pp. 2 and 5, Sisoft Sandra on the 2.2 GHz sibling); L1/L2 LRU, the L3's random form a
/// choice. 8 outstanding misses per core (K10's miss address buffers, recalled) give
/// 8 × 64 B / 98 ns ≈ 5.2 GB/s of demand bandwidth.
fn opteron_caches() -> Caches {
    let mhz = 2100;
    Caches {
        levels: vec![
            level("L1d", 64 * KIB, cycles_ps(3, mhz), CacheScope::Core, Inclusion::Inclusive, Replacement::Lru),
            level("L2", 512 * KIB, cycles_ps(16, mhz), CacheScope::Core, Inclusion::Exclusive, Replacement::Lru),
            level("L3", 5 * MIB, 25_909, CacheScope::Llc, Inclusion::Victim, Replacement::Random),
        ],
        memory: Memory { latency_ps: 98_000, bandwidth: 5_200_000_000, mlp: 8 },
    }
}

/// `vm`: a Firecracker KVM guest shaped like the host this project runs on (read from its
/// `/sys` and kernel command line): 2 vCPUs, one LLC, no SMT; L1d 48 KiB and L2 1 MiB per
/// vCPU, L3 32 MiB shared (an AMD EPYC, family 0x1A); cache and memory latencies are
/// PLACEHOLDERS (the generic values) for `calibrate`. Idle: `cpuidle-haltpoll`
/// (`cpuidle_haltpoll.force=1`) with the haltpoll governor: POLL, then "haltpoll idle"
/// (HLT) declared 1 µs / 1 µs (`drivers/cpuidle/cpuidle-haltpoll.c`) whose real exit is a VM
/// exit, the host's wakeup of the vCPU thread and a VM entry — its `exit_cost` of 20 µs is a
/// PLACEHOLDER of the order of the 22–24 µs one-way cross-CPU wakeup calibrate's check
/// measures here; `haltpoll.guest_halt_poll_ns=0` as this host boots (the other haltpoll
/// parameters at their defaults, as `/sys/module/haltpoll/parameters` shows). No cpufreq
/// (no `/sys/devices/system/cpu/cpufreq`). Paravirtual queued spinlocks ("kvm-guest: PV
/// spinlocks enabled"). PCID (the CPU flags show `pcid invpcid`); fork 89 ns per resident
/// page (Redis latency docs: 23.3 ms per GB on KVM); the other mm and line costs are the
/// generic placeholders. Costs: today's defaults.
fn vm() -> Machine {
    let topology = Topology::new(1, 1, 2, 1, None);
    let mut m = Machine::new("vm", 250, topology, Costs::default());
    let g = generic_caches(&m.topology);
    m.caches.levels = vec![
        CacheLevel { size: 48 * KIB, ..g.levels[0].clone() },
        CacheLevel { size: MIB, ..g.levels[1].clone() },
        CacheLevel { size: 32 * MIB, ..g.levels[2].clone() },
    ];
    let hlt = IdleState { exit_cost: Some(Ns::from_us(20)), ..state("haltpoll idle", Ns::from_us(1), Ns::from_us(1)) };
    m.idle = Idle {
        guest_halt_poll_ns: Ns(0),
        ..Idle::with(IdleGovernor::Haltpoll, one_driver(2, vec![poll_state(), hlt]))
    };
    m.lines.spinlock = Spinlock::PvQueued;
    m.mm.fork_per_page = Ns(89);
    m.mm.exit_per_page = Ns(89);
    m
}

/// One gs101 cluster's operating points: `(opp-hz, opp-microvolt)`.
type Opps = &'static [(u64, u64)];

/// `arch/arm64/boot/dts/exynos/google/gs101.dtsi` (torvalds/linux, read at commit
/// 01272f05aae5): `cpucl0_opp_table` (Cortex-A55, CPUs 0–3), `cpucl1_opp_table` (A76,
/// 4–5), `cpucl2_opp_table` (X1, 6–7), every OPP with `clock-latency-ns = <500000>`.
const GS101_CL0: Opps = &[
    (300_000_000, 537_500),
    (574_000_000, 600_000),
    (738_000_000, 618_750),
    (930_000_000, 668_750),
    (1_098_000_000, 712_500),
    (1_197_000_000, 731_250),
    (1_328_000_000, 762_500),
    (1_401_000_000, 781_250),
    (1_598_000_000, 831_250),
    (1_704_000_000, 862_500),
    (1_803_000_000, 906_250),
];
const GS101_CL1: Opps = &[
    (400_000_000, 506_250),
    (553_000_000, 537_500),
    (696_000_000, 562_500),
    (799_000_000, 581_250),
    (910_000_000, 606_250),
    (1_024_000_000, 625_000),
    (1_197_000_000, 662_500),
    (1_328_000_000, 687_500),
    (1_491_000_000, 731_250),
    (1_663_000_000, 775_000),
    (1_836_000_000, 818_750),
    (1_999_000_000, 868_750),
    (2_130_000_000, 918_750),
    (2_253_000_000, 968_750),
];
const GS101_CL2: Opps = &[
    (500_000_000, 500_000),
    (851_000_000, 556_250),
    (984_000_000, 575_000),
    (1_106_000_000, 606_250),
    (1_277_000_000, 631_250),
    (1_426_000_000, 662_500),
    (1_582_000_000, 693_750),
    (1_745_000_000, 731_250),
    (1_826_000_000, 750_000),
    (2_048_000_000, 793_750),
    (2_188_000_000, 831_250),
    (2_252_000_000, 850_000),
    (2_401_000_000, 887_500),
    (2_507_000_000, 925_000),
    (2_630_000_000, 968_750),
    (2_704_000_000, 1_000_000),
    (2_802_000_000, 1_056_250),
];

/// One gs101 cluster as a performance domain: its OPPs' kHz, power from the
/// `dynamic-power-coefficient` as the kernel computes it ([`em_power_uw`]), and its
/// `capacity-dmips-mhz` (capacities normalised as `topology_normalize_cpu_scale` does).
fn gs101_domain(cpus: &str, opps: Opps, coefficient: u64, dmips: u64) -> FreqDomain {
    FreqDomain {
        cpus: CpuSet::parse_list(cpus).unwrap_or_else(|_| CpuSet::empty(8)),
        khz: opps.iter().map(|(hz, _)| hz / 1000).collect(),
        power_uw: opps.iter().map(|&(hz, uv)| em_power_uw(coefficient, uv, hz)).collect(),
        transition_latency: Ns::from_us(500),
        transition_delay_us: None,
        capacity: None,
        dmips_mhz: Some(dmips),
        scale_ref_khz: None,
    }
}

/// A gs101 cluster's cpuidle-psci driver: WFI (exit 1 µs, residency 1 µs,
/// `drivers/cpuidle/cpuidle-psci.c: psci_idle_driver.states[0]`), then the cluster's DT
/// state with exit latency = `entry-latency-us` + `exit-latency-us` and target residency =
/// `min-residency-us` (`drivers/cpuidle/dt_idle_states.c: init_state_node`).
fn gs101_idle(cpus: &str, name: &str, entry_us: u64, exit_us: u64, residency_us: u64) -> IdleDriver {
    IdleDriver {
        cpus: CpuSet::parse_list(cpus).unwrap_or_else(|_| CpuSet::empty(8)),
        states: vec![
            state("WFI", Ns::from_us(1), Ns::from_us(1)),
            state(name, Ns::from_us(entry_us + exit_us), Ns::from_us(residency_us)),
        ],
    }
}

/// `big-little`: Google Tensor (gs101, the Pixel 6), a DynamIQ SoC with 4 Cortex-A55, 2
/// Cortex-A76 and 2 Cortex-X1 sharing one DSU L3, all from `gs101.dtsi`: capacities from
/// `capacity-dmips-mhz` 250 / 620 / 1024 (→ 160 / 498 / 1024 with the top OPPs),
/// `dynamic-power-coefficient` 70 / 284 / 650 with each OPP's voltage, OPP tables
/// ([`GS101_CL0`]…), idle states `cpu-ananke-sleep` (70 + 160 µs, 2 ms),
/// `cpu-enyo-sleep` (150 + 190 µs, 2.5 ms), `cpu-hera-sleep` (235 + 220 µs, 3.5 ms). Mainline
/// defaults: schedutil (v6.18), menu, queued spinlocks (arm64 since v5.8);
/// frequency-invariant (arm64's cpufreq-based scale). Caches, lines, mm and costs are the
/// generic ones (not gs101's); arm64 tags TLB entries with ASIDs (`arch/arm64/mm/context.c`),
/// modelled as PCID.
fn big_little() -> Machine {
    let mut m = Machine::new("big-little", 250, Topology::new(1, 1, 8, 1, None), Costs::default());
    m.freq = Freq {
        governor: FreqGovernor::Schedutil618,
        invariant: true,
        rate_limit_us: None,
        domains: vec![
            gs101_domain("0-3", GS101_CL0, 70, 250),
            gs101_domain("4-5", GS101_CL1, 284, 620),
            gs101_domain("6-7", GS101_CL2, 650, 1024),
        ],
    };
    m.idle = Idle::with(
        IdleGovernor::Menu618,
        vec![
            gs101_idle("0-3", "cpu-ananke-sleep", 70, 160, 2000),
            gs101_idle("4-5", "cpu-enyo-sleep", 150, 190, 2500),
            gs101_idle("6-7", "cpu-hera-sleep", 235, 220, 3500),
        ],
    );
    m.lines.spinlock = Spinlock::Queued;
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_builds_and_passes_its_checks() {
        for (name, _) in PRESETS {
            let m = preset(name).unwrap();
            assert!(m.nr_cpus() >= 1);
            assert_eq!(m.check(), Ok(()), "{name}");
        }
        assert_eq!(preset("i7-3770").unwrap().nr_cpus(), 8);
        assert_eq!(preset("i7-3770-4c").unwrap().nr_cpus(), 4);
        assert_eq!(preset("opteron-32").unwrap().nr_cpus(), 32);
        assert_eq!(preset("numa-1024").unwrap().nr_cpus(), 1024);
        assert_eq!(preset("vm").unwrap().nr_cpus(), 2);
        assert_eq!(preset("big-little").unwrap().nr_cpus(), 8);
        assert!(preset("cray-1").is_none());
    }

    /// Under `flat` every preset is the constant-cost machine it always was: the costs and
    /// topology the hash check ran on, and no other model.
    #[test]
    fn flat_presets_are_todays_machines() {
        let today = |nodes, llcs, cores, threads| Topology::new(nodes, llcs, cores, threads, None);
        for (name, topo) in [
            ("up", today(1, 1, 1, 1)),
            ("smp8", today(1, 1, 8, 1)),
            ("i7-3770", today(1, 1, 4, 2)),
            ("i7-3770-4c", today(1, 1, 4, 1)),
            ("opteron-32", today(2, 2, 8, 1)),
            ("numa-1024", today(16, 4, 8, 2)),
        ] {
            let mut m = preset(name).unwrap();
            assert_eq!(m.topology, topo, "{name}");
            assert_eq!(m.hz, 250);
            m.set_cost_model(crate::CostModel::Flat);
            assert_eq!(m.models(), crate::Models::OFF, "{name}");
            let mut want = Costs::default();
            if name == "opteron-32" {
                want.line_same_llc = Ns(40);
                want.line_cross_llc = Ns(77);
                want.line_cross_node = Ns(120);
            }
            assert_eq!(m.costs, want, "{name}");
            assert_eq!(m.line_transfer_ns(0, m.nr_cpus() - 1), m.line_ns(0, m.nr_cpus() - 1));
            assert_eq!(m.capacities(), vec![1024; m.nr_cpus()]);
        }
    }

    /// An inclusive L3 holds at least every private cache of its cores; victim and
    /// exclusive levels add their capacity; latencies grow outward; the i7-3770's figures
    /// in ns (4 / 12 / 30 cycles at 3.4 GHz).
    #[test]
    fn preset_caches_are_sane() {
        let i7 = preset("i7-3770").unwrap();
        let c = &i7.caches;
        assert!(c.levels[2].size >= c.private_bytes() * 4);
        assert_eq!([c.levels[0].latency_ps, c.levels[1].latency_ps, c.levels[2].latency_ps], [1_176, 3_529, 8_823]);
        let opt = preset("opteron-32").unwrap();
        assert_eq!(opt.caches.capacity(1), 576 * KIB);
        assert_eq!(opt.caches.capacity(2), 5 * MIB + 576 * KIB);
        for (name, _) in PRESETS {
            let m = preset(name).unwrap();
            let lv = &m.caches.levels;
            assert!(lv.windows(2).all(|w| w[0].latency_ps < w[1].latency_ps), "{name}");
            assert!(lv.last().unwrap().latency_ps < m.caches.memory.latency_ps, "{name}");
        }
        // Remote memory on opteron-32: SLIT 20, twice the local latency.
        assert_eq!(opt.memory_latency_ps(0, 1), 196_000);
        assert_eq!(opt.memory_latency_ps(0, 0), 98_000);
    }

    /// The gs101 capacities and power as the kernel derives them from its device tree.
    #[test]
    fn big_little_capacities_and_energy_model() {
        let m = preset("big-little").unwrap();
        assert_eq!(m.capacities(), vec![160, 160, 160, 160, 498, 498, 1024, 1024]);
        assert!(m.models().capacity);
        let little = &m.freq.domains[0];
        assert_eq!(little.khz[0], 300_000);
        assert_eq!(little.power_uw[0], 70 * 537 * 537 * 300 / 1_000_000);
        let big = &m.freq.domains[2];
        assert_eq!(big.max_khz(), 2_802_000);
        assert_eq!(big.power_at(2_802_000), Some(650 * 1056 * 1056 * 2802 / 1_000_000));
        // 6.18: 1.5 × the 500 µs clock latency.
        assert_eq!(m.freq.rate_limit_us(2), Some(750));
        assert_eq!(m.idle.states(5)[1].exit_latency, Ns::from_us(340));
        assert_eq!(m.cpu_capacity(4), 498);
    }

    #[test]
    fn vm_is_a_haltpoll_guest_without_cpufreq() {
        let m = preset("vm").unwrap();
        assert_eq!(m.idle.governor, IdleGovernor::Haltpoll);
        let s = m.idle.states(0);
        assert!(s[0].polling && !s[1].polling);
        assert_eq!(s[1].exit_latency, Ns::from_us(1), "what the driver declares");
        assert_eq!(s[1].wake_cost(), Ns::from_us(20), "the VM exit, a placeholder");
        assert_eq!(m.idle.guest_halt_poll_ns, Ns(0));
        assert!(!m.models().freq);
        assert_eq!(m.lines.spinlock, Spinlock::PvQueued);
    }

    #[test]
    fn i7_frequency_and_idle() {
        let m = preset("i7-3770").unwrap();
        let d = &m.freq.domains[0];
        assert_eq!((d.min_khz(), d.max_khz(), d.khz.len()), (1_600_000, 3_900_000, 24));
        assert_eq!(m.freq.rate_limit_us(0), Some(500), "intel_cpufreq's transition delay");
        assert_eq!(d.freq_scale(3_400_000), 3_400_000 * 1024 / 3_700_000);
        let names: Vec<&str> = m.idle.states(7).iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["POLL", "C1", "C1E", "C3", "C6", "C7"]);
        assert!(m.idle.states(0)[3].tlb_flushed && !m.idle.states(0)[2].tlb_flushed);
        assert!(m.mm.pcid && !preset("opteron-32").unwrap().mm.pcid);
    }
}
