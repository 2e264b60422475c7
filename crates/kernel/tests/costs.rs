//! The cost models the kernel charges under `--costs full` (`docs/machine.md`, *What the
//! kernel charges*): cache refill by footprint, NUMA memory slowdown, address-space
//! switches, lock line transfers; `flat` and `none` ignore every memory field. Every run
//! checks every invariant after every event.

use schedlab_kernel::{Kernel, KernelConfig, SimParams};
use schedlab_machine::{preset, CostModel, Machine, PAGE_SIZE};
use schedlab_probe::{NoProbe, RunSummary};
use schedlab_sim::Ns;
use std::sync::Arc;

fn run_on(m: &Machine, sched: &str, workload: &str) -> RunSummary {
    let m = Arc::new(m.clone());
    let wl = schedlab_workload::parse_workload("test.toml", workload, &[], m.nr_cpus()).expect("workload parses");
    let policy = schedlab_policies::make_policy(sched, &m, &[]).expect("registered policy");
    let sim = SimParams { check_invariants: true, end: Ns::from_secs(5), ..SimParams::default() };
    let mut probe = NoProbe;
    let mut k = Kernel::new(m, Arc::new(wl), policy, KernelConfig::default(), sim, &mut probe).expect("kernel builds");
    k.run(&mut |_| true).expect("the run completes")
}

fn counter(s: &RunSummary, name: &str) -> u64 {
    s.kernel_counters.iter().find(|(k, _)| k == name).map_or(0, |(_, v)| *v)
}

fn machine(name: &str, model: CostModel) -> Machine {
    let mut m = preset(name).expect("preset");
    m.set_cost_model(model);
    m
}

/// Two tasks on CPU 0 that yield to each other `rounds` times, each with `ws`.
fn alternating(ws: &str, rounds: u32) -> String {
    let task = |n: &str| {
        format!(
            "[[task]]\nname = \"{n}\"\naffinity = [0]\nworking_set = \"{ws}\"\n\
             program = [ {{ loop = {rounds}, do = [ {{ run = \"100us\" }}, \"yield\" ] }} ]\n"
        )
    };
    format!("name = \"alt\"\n{}{}", task("a"), task("b"))
}

/// The refill of a cold start: every line of the working set from local memory.
fn cold_refill(m: &Machine, ws: u64) -> u64 {
    let c = &m.caches;
    let r = c.refill(ws, &[0; schedlab_machine::MAX_LEVELS]);
    c.refill_time(&r, c.memory.mlp, c.memory.latency_ps).0
}

/// Working sets that fit the core's caches together (8 KiB each in a 32 KiB L1d) pay only
/// their two cold refills however often they alternate.
#[test]
fn working_sets_that_fit_together_pay_no_refill_when_they_alternate() {
    let m = machine("i7-3770-4c", CostModel::Full);
    let s = run_on(&m, "fifo", &alternating("8KiB", 100));
    assert!(counter(&s, "refills") == 2, "{:?}", s.kernel_counters);
    assert_eq!(counter(&s, "refill_ns"), 2 * cold_refill(&m, 8 << 10));
}

/// Two 192 KiB working sets alternating on one core of the i7-3770 (L1d 32 KiB and L2
/// 256 KiB, LRU; L3 8 MiB): each resume finds its L1d lines gone and `256 − 192` KiB of its
/// L2 lines left, so it refills 32 KiB into L1d from L2 and 128 KiB from L3, latency-bound
/// at the machine's MLP. The measured mean per switch is within 5 % of that.
#[test]
fn working_sets_exceeding_the_core_cache_pay_the_predicted_refill_per_switch() {
    let m = machine("i7-3770-4c", CostModel::Full);
    let s = run_on(&m, "fifo", &alternating("192KiB", 100));
    let (l1, l2, l3) = (&m.caches.levels[0], &m.caches.levels[1], &m.caches.levels[2]);
    let ws = 192u64 << 10;
    let mlp = u64::from(m.caches.memory.mlp);
    let from_l2 = l1.size / l2.line;
    let from_l3 = (ws - (l2.size - ws)) / l3.line;
    let predicted = (from_l2 * l2.latency_ps + from_l3 * l3.latency_ps) / mlp / 1000;
    let refills = counter(&s, "refills");
    assert!(refills >= 190, "one refill per resume: {refills}");
    let warm = (counter(&s, "refill_ns") - 2 * cold_refill(&m, ws)) / (refills - 2);
    let err = warm.abs_diff(predicted) as f64 / predicted as f64;
    assert!(err < 0.05, "refill per switch {warm} ns, predicted {predicted} ns");
}

/// A task moved to a CPU of another node (opteron-32: CPU 16) refills more than one moved
/// within its LLC (CPU 1), which refills its private caches from the shared L3.
#[test]
fn a_migration_to_another_node_pays_more_than_one_within_the_llc() {
    let m = machine("opteron-32", CostModel::Full);
    let refill = |to: usize| {
        let wl = format!(
            "name = \"mig\"\n[[task]]\nname = \"t\"\naffinity = [0]\nworking_set = \"1MiB\"\n\
             program = [ {{ run = \"1ms\" }}, {{ set_affinity = \"{to}\" }}, {{ run = \"1ms\" }} ]\n"
        );
        let s = run_on(&m, "cfs", &wl);
        counter(&s, "refill_ns") - cold_refill(&m, 1 << 20)
    };
    let (llc, node) = (refill(1), refill(16));
    assert!(m.topology.shares_llc(0, 1) && m.topology.distance(0, 16) > 10);
    assert!(llc > 0 && node > llc, "within the LLC {llc} ns, to another node {node} ns");
}

/// A memory-bound task (intensity 0.5) on CPU 0 whose pages are bound to node `node`.
fn bound(node: usize) -> String {
    format!(
        "name = \"numa\"\n[[task]]\nname = \"t\"\naffinity = [0]\nmem_intensity = 0.5\n\
         mem_policy = \"bind\"\nmem_node = {node}\nprogram = [ {{ run = \"20ms\" }} ]\n"
    )
}

/// Bound to a remote node, the task's 20 ms of work take 20 ms × (1 + 0.5 × (d/10 − 1))
/// (d the SLIT distance); bound to its own node, 20 ms. The ticks that interrupt it cost
/// the same share of either, so its exit times stand in that ratio.
#[test]
fn a_memory_bound_task_on_a_remote_node_runs_slower_by_distance_times_intensity() {
    let m = machine("opteron-32", CostModel::Full);
    let d = m.topology.numa_distance[0][1];
    assert!(d > 10);
    let exit = |node| run_on(&m, "cfs", &bound(node)).exit_times[0].expect("exits").0;
    let (local, remote) = (exit(0), exit(1));
    let expected = 1.0 + 0.5 * (f64::from(d) / 10.0 - 1.0);
    let ratio = remote as f64 / local as f64;
    assert!((ratio / expected - 1.0).abs() < 0.001, "remote/local {ratio}, expected {expected}");
}

/// Two tasks ping-ponging over pipes on CPU 0, processes or threads of one process.
fn ping_pong(process: bool, rounds: u32) -> String {
    let p = if process { "process = true\nresident = \"1MiB\"\n" } else { "" };
    format!(
        "name = \"pp\"\n[[pipe]]\nname = \"a\"\n[[pipe]]\nname = \"b\"\n[[task]]\nname = \"ping\"\naffinity = [0]\nworking_set = \"64KiB\"\n{p}\
         program = [ {{ loop = {rounds}, do = [ {{ send = \"a\", bytes = 1 }}, {{ recv = \"b\", bytes = 1 }}, {{ run = \"5us\" }} ] }} ]\n\
         [[task]]\nname = \"pong\"\naffinity = [0]\nworking_set = \"64KiB\"\n{p}\
         program = [ {{ loop = {rounds}, do = [ {{ recv = \"a\", bytes = 1 }}, {{ run = \"5us\" }}, {{ send = \"b\", bytes = 1 }} ] }} ]\n"
    )
}

/// A process ping-pong switches mm at every switch between the two (PCID keeps both mms'
/// TLB entries, so after the first of each only the CR3 write) and tears down each process
/// at exit; it ends later than the thread ping-pong by exactly those costs.
#[test]
fn a_process_ping_pong_costs_more_than_a_thread_ping_pong_by_the_mm_switches() {
    let mut m = machine("i7-3770-4c", CostModel::Full);
    // At the top frequency work runs at full speed: the mm costs are compared unscaled.
    m.freq.governor = schedlab_machine::FreqGovernor::Performance;
    assert!(m.mm.pcid);
    let (thr, pro) = (run_on(&m, "fifo", &ping_pong(false, 200)), run_on(&m, "fifo", &ping_pong(true, 200)));
    let end = |s: &RunSummary| s.exit_times.iter().map(|t| t.expect("exits").0).max().unwrap();
    let mm = |s: &RunSummary| counter(s, "mm_switch_ns") + counter(s, "tlb_refill_ns") + counter(s, "mm_exit_ns");
    assert_eq!(counter(&thr, "mm_switches"), 1, "threads share one mm: loaded once");
    assert!(counter(&pro, "mm_switches") >= 400, "{:?}", pro.kernel_counters);
    let pages = (64u64 << 10) / PAGE_SIZE;
    assert_eq!(counter(&pro, "tlb_refill_ns"), 2 * m.mm.refill_ns(pages).0, "one TLB refill per mm: PCID");
    assert_eq!(counter(&pro, "mm_exit_ns"), 2 * m.mm.exit_ns(1 << 20).0);
    assert_eq!(end(&pro) - end(&thr), mm(&pro) - mm(&thr));
}

/// Without PCID every switch between the two mms refills the TLB.
#[test]
fn without_pcid_every_mm_switch_refills_the_tlb() {
    let mut m = machine("i7-3770-4c", CostModel::Full);
    m.set("mm.pcid", "false").expect("settable");
    let s = run_on(&m, "fifo", &ping_pong(true, 50));
    let pages = (64u64 << 10) / PAGE_SIZE;
    assert_eq!(counter(&s, "tlb_refill_ns"), counter(&s, "mm_switches") * m.mm.refill_ns(pages).0);
}

/// A mixed workload: working sets, intensities, binding, processes, pipes, migrations.
const MIXED: &str = r#"
name = "mixed"
[[pipe]]
name = "p"
[[task]]
name = "w"
count = 6
working_set = "3MiB"
mem_intensity = 0.4
program = [ { loop = 40, do = [ { send = "p", bytes = 64 }, { run = "200us", working_set = "6MiB" }, { sleep = "300us" } ] } ]
[[task]]
name = "r"
count = 2
process = true
mem_policy = "interleave"
mem_intensity = 0.7
working_set = "512KiB"
program = [ { loop = 120, do = [ { recv = "p", bytes = 64 }, { run = "50us" } ] } ]
[[task]]
name = "b"
mem_node = 1
mem_intensity = 1
working_set = "8MiB"
program = [ { run = "5ms" }, "yield", { run = "5ms" } ]
"#;

/// The memory fields stripped from [`MIXED`].
fn stripped() -> String {
    MIXED
        .lines()
        .filter(|l| !["working_set", "mem_", "process", "resident"].iter().any(|k| l.starts_with(k)))
        .map(|l| l.replace(", working_set = \"6MiB\"", ""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Under `none` (nothing charged) and `flat` (the constant costs), working sets,
/// intensities and memory placement change nothing: the same trace as without them.
/// Under `full` they do.
#[test]
fn flat_and_none_make_memory_fields_irrelevant() {
    for model in [CostModel::None, CostModel::Flat] {
        let m = machine("opteron-32", model);
        let (with, without) = (run_on(&m, "cfs", MIXED), run_on(&m, "cfs", &stripped()));
        assert_eq!(with.trace_hash, without.trace_hash, "{model:?}");
        assert_eq!(with.end, without.end);
    }
    let m = machine("opteron-32", CostModel::Full);
    assert_ne!(run_on(&m, "cfs", MIXED).trace_hash, run_on(&m, "cfs", &stripped()).trace_hash);
}

/// With every model on, the same inputs give the same trace, on every policy family.
#[test]
fn costs_on_are_deterministic() {
    let m = machine("opteron-32", CostModel::Full);
    for sched in ["cfs", "eevdf", "ule", "o1"] {
        let (a, b) = (run_on(&m, sched, MIXED), run_on(&m, sched, MIXED));
        assert_eq!(a.trace_hash, b.trace_hash, "{sched}");
        assert!(counter(&a, "refill_ns") > 0 && counter(&a, "mm_switches") > 0, "{sched}");
    }
}

/// A `mem_node` beyond the machine's nodes is refused, naming the field.
#[test]
fn a_mem_node_beyond_the_machine_is_a_located_error() {
    let m = Arc::new(machine("i7-3770", CostModel::Full));
    let wl = schedlab_workload::parse_workload("test.toml", &bound(1), &[], m.nr_cpus()).expect("parses");
    let policy = schedlab_policies::make_policy("cfs", &m, &[]).expect("policy");
    let mut probe = NoProbe;
    let err = match Kernel::new(m, Arc::new(wl), policy, KernelConfig::default(), SimParams::default(), &mut probe) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a node beyond the machine's is refused"),
    };
    assert!(err.contains("mem_node") && err.contains("test.toml:"), "{err}");
}

/// Sixteen wakers on CPUs 1–16 each waking its own sleeper pinned to CPU 0: CPU 0's
/// runqueue lock is taken from many CPUs and is contended.
fn contended() -> String {
    let mut text = "name = \"contended\"\n[[pipe]]\nname = \"p\"\ncount = 16\n".to_string();
    for w in 0..16 {
        text += &format!(
            "[[task]]\nname = \"waker{w}\"\naffinity = [{}]\n\
             program = [ {{ loop = 200, do = [ {{ send = \"p.{w}\", bytes = 1 }}, {{ run = \"3us\" }} ] }} ]\n\
             [[task]]\nname = \"sleeper{w}\"\naffinity = [0]\n\
             program = [ {{ loop = 200, do = [ {{ recv = \"p.{w}\", bytes = 1 }} ] }} ]\n",
            w + 1
        );
    }
    text
}

fn run_version(m: &Machine, version: schedlab_kernel::KernelVersion) -> RunSummary {
    let m = Arc::new(m.clone());
    let wl = schedlab_workload::parse_workload("test.toml", &contended(), &[], m.nr_cpus()).expect("workload parses");
    let policy = schedlab_policies::make_policy("cfs", &m, &[]).expect("registered policy");
    // Without the wake list every wakeup locks CPU 0's runqueue from the waker's CPU.
    let cfg = KernelConfig { version, ttwu_queue: false, ..KernelConfig::default() };
    let sim = SimParams { check_invariants: true, end: Ns::from_secs(5), ..SimParams::default() };
    let mut probe = NoProbe;
    let mut k = Kernel::new(m, Arc::new(wl), policy, cfg, sim, &mut probe).expect("kernel builds");
    k.run(&mut |_| true).expect("the run completes")
}

/// Under the full model lock line transfers are counted per site and contended locks hand
/// over: a queued lock's hand-over moves its line 2 or 3 times (a pending waiter, or the MCS
/// queue), a ticket lock's `k + 1` times for `k` waiters, at least 2. `lines.spinlock =
/// "auto"` is the ticket lock under 2.6.32 (the same run as naming it) and the queued lock
/// under 5.15. Under `flat` nothing is counted.
#[test]
fn lock_transfers_are_counted_per_site_and_hand_over_by_lock_kind() {
    use schedlab_kernel::KernelVersion;
    let sum = |s: &RunSummary, prefix: &str| -> u64 {
        s.kernel_counters.iter().filter(|(k, _)| k.starts_with(prefix)).map(|(_, v)| *v).sum()
    };
    let with = |kind: &str| {
        let mut m = machine("opteron-32", CostModel::Full);
        m.set("lines.spinlock", kind).expect("settable");
        m
    };
    let queued = run_version(&with("queued"), KernelVersion::V5_15);
    let ticket = run_version(&with("ticket"), KernelVersion::V5_15);
    for (s, lo, hi) in [(&queued, 2, 3), (&ticket, 2, u64::MAX)] {
        let (h, lines) = (sum(s, "lock_handovers."), sum(s, "lock_handover_lines."));
        assert!(sum(s, "line_transfers.") > lines && h > 0, "{:?}", s.kernel_counters);
        assert!(lines >= lo * h && lines <= hi.saturating_mul(h), "{h} hand-overs moved {lines} lines");
    }
    assert_eq!(
        run_version(&with("auto"), KernelVersion::V2_6_32).trace_hash,
        run_version(&with("ticket"), KernelVersion::V2_6_32).trace_hash
    );
    assert_eq!(run_version(&with("auto"), KernelVersion::V5_15).trace_hash, queued.trace_hash);
    let flat = run_version(&machine("opteron-32", CostModel::Flat), KernelVersion::V5_15);
    assert_eq!(sum(&flat, "line_transfers."), 0);
}

/// A kernel counter's value per CPU suffix (`refill_ns.cpuN`).
fn per_cpu(s: &RunSummary, name: &str, cpu: usize) -> u64 {
    counter(s, &format!("{name}.cpu{cpu}"))
}

/// Every charge is attributed: per task and per CPU the refills, address-space switches,
/// TLB refills and remote-memory time sum to the machine-wide counters, each task's refill
/// splits by where its lines came from without remainder, each lock site's line transfers
/// and their time in the lock statistics sum to the site's counters, and per CPU the line
/// time splits over the kernel paths it was spent in. Time is conserved: a CPU's
/// remote-memory time is part of its user time, its line time of each path's kernel time,
/// its CR3 writes of `schedule`'s.
#[test]
fn per_task_and_per_cpu_charges_sum_to_the_machine_counters() {
    let m = machine("opteron-32", CostModel::Full);
    for sched in ["cfs", "ule"] {
        let s = run_on(&m, sched, MIXED);
        check_attribution(&s, sched, false);
        let c = &s.costs;
        assert!(c.tasks.iter().map(|t| t.refill.cold_ns).sum::<u64>() > 0);
        let moved: u64 =
            c.tasks.iter().map(|t| t.refill.same_llc_ns + t.refill.other_llc_ns + t.refill.other_node_ns).sum();
        // CFS spreads MIXED's tasks over the nodes; ULE keeps each where it started.
        assert_eq!(moved > 0, sched == "cfs", "{sched}: refills after migrations");
    }
    // Lock line transfers: the remote wakeups of `contended` lock CPU 0's runqueue.
    check_attribution(&run_version(&m, schedlab_kernel::KernelVersion::V5_15), "cfs", true);
}

type Field = fn(&schedlab_probe::CostTimes) -> u64;

/// The checks of [`per_task_and_per_cpu_charges_sum_to_the_machine_counters`] on one run;
/// `lines`: the run moves lock lines (else its memory charges are all exercised).
fn check_attribution(s: &RunSummary, sched: &str, lines: bool) {
    let c = &s.costs;
    assert_eq!(c.tasks.len(), s.tasks.len());
    assert_eq!(c.cpus.len(), s.cpu_times.len());
    let sum = |v: &[schedlab_probe::CostTimes], f: Field| v.iter().map(f).sum::<u64>();
    let fields: [(&str, Field); 6] = [
        ("refills", |t| t.refills),
        ("refill_ns", |t| t.refill_ns),
        ("mm_switches", |t| t.mm_switches),
        ("mm_switch_ns", |t| t.mm_switch_ns),
        ("tlb_refill_ns", |t| t.tlb_refill_ns),
        ("remote_memory_ns", |t| t.remote_memory_ns),
    ];
    for (name, f) in fields {
        assert!(lines || counter(s, name) > 0, "{sched}: {name} is exercised");
        assert_eq!(sum(&c.tasks, f), counter(s, name), "{sched}: tasks' {name}");
        assert_eq!(sum(&c.cpus, f), counter(s, name), "{sched}: CPUs' {name}");
    }
    for t in &c.tasks {
        assert_eq!(t.refill.sum(), t.refill_ns, "{sched}: refill by source");
    }
    for (cpu, cc) in c.cpus.iter().enumerate() {
        assert_eq!(cc.refill_ns, per_cpu(s, "refill_ns", cpu));
        assert!(cc.remote_memory_ns <= s.cpu_times[cpu][0].0, "{sched}: cpu {cpu} remote memory within user time");
        let by_path: u64 = c.path_lines[cpu].iter().sum();
        assert_eq!(by_path, cc.line_ns, "{sched}: cpu {cpu} line time by path");
        for (p, &ns) in c.path_lines[cpu].iter().enumerate() {
            assert!(ns <= s.cpu_paths[cpu][p].0, "{sched}: cpu {cpu} path {p}");
        }
        assert!(cc.mm_switch_ns <= s.cpu_paths[cpu][0].0, "{sched}: CR3 writes within schedule");
    }
    // Per lock site, the lock statistics hold the site's transfers and their time.
    let mut sites: Vec<_> = s.locks.iter().map(|l| l.1.name()).collect();
    sites.sort_unstable();
    sites.dedup();
    for site in &sites {
        let of = |f: fn(&schedlab_probe::LockStat) -> u64| {
            s.locks.iter().filter(|l| l.1.name() == *site).map(|l| f(&l.2)).sum::<u64>()
        };
        assert_eq!(of(|l| l.line_transfers), counter(s, &format!("line_transfers.{site}")), "{site}");
        assert_eq!(of(|l| l.line_ns), counter(s, &format!("line_ns.{site}")), "{site}");
    }
    let counted: u64 = s.kernel_counters.iter().filter(|(k, _)| k.starts_with("line_ns.")).map(|(_, v)| *v).sum();
    let locks: u64 = s.locks.iter().map(|l| l.2.line_ns).sum();
    assert_eq!(counted, locks, "every site's line time is in the lock statistics");
    assert!(!lines || locks > 0, "{sched}: lock lines moved");
    assert_eq!(sum(&c.cpus, |t| t.line_ns), locks);
    assert_eq!(sum(&c.cpus, |t| t.line_transfers), s.locks.iter().map(|l| l.2.line_transfers).sum::<u64>());
    assert!(sum(&c.tasks, |t| t.line_ns) <= locks, "a task is charged only what ran for it");
}

/// The refill a migrated task pays is filed under where its lines were: its first run
/// cold, then within the LLC (opteron-32: CPU 0 → 1) or on another node (CPU 0 → 16).
#[test]
fn a_tasks_refill_says_where_its_lines_came_from() {
    let m = machine("opteron-32", CostModel::Full);
    let moved = |to: usize| {
        let wl = format!(
            "name = \"mig\"\n[[task]]\nname = \"t\"\naffinity = [0]\nworking_set = \"1MiB\"\n\
             program = [ {{ run = \"1ms\" }}, {{ set_affinity = \"{to}\" }}, {{ run = \"1ms\" }} ]\n"
        );
        run_on(&m, "cfs", &wl)
    };
    let cold = cold_refill(&m, 1 << 20);
    for (to, llc) in [(1, true), (16, false)] {
        let s = moved(to);
        let r = s.costs.tasks[0].refill;
        assert_eq!(r.cold_ns, cold, "the first run: all from memory");
        let migrated = counter(&s, "refill_ns") - cold;
        assert!(migrated > 0);
        let (want, other) = if llc { (r.same_llc_ns, r.other_node_ns) } else { (r.other_node_ns, r.same_llc_ns) };
        assert_eq!((want, other, r.same_core_ns, r.other_llc_ns), (migrated, 0, 0, 0), "to CPU {to}: {r:?}");
    }
}

/// The remote-memory time of a task bound to another node is what its memory factor
/// adds: 20 ms of work at `r` permille take `20 ms × 1000 / r`, of which
/// `20 ms × (1000 − r) / r` are the slowdown (within the rounding of the ticks' cuts);
/// bound to its own node, none.
#[test]
fn remote_memory_time_is_what_the_memory_factor_adds() {
    let mut m = machine("opteron-32", CostModel::Full);
    m.freq.governor = schedlab_machine::FreqGovernor::Performance;
    m.noise = schedlab_machine::Noise::NONE;
    let d = m.topology.numa_distance[0][1];
    let r = u64::from(schedlab_machine::numa_rate_permille(500, d));
    assert!(r < 1000);
    let s = run_on(&m, "cfs", &bound(1));
    let remote = s.costs.tasks[0].remote_memory_ns;
    let want = 20_000_000 * (1000 - r) / r;
    assert!(remote.abs_diff(want) * 10_000 < want, "remote-memory time {remote} ns, predicted {want} ns");
    assert_eq!(run_on(&m, "cfs", &bound(0)).costs.tasks[0].remote_memory_ns, 0);
}

/// A waker on CPU `x` waking a sleeper pinned to CPU 0 `rounds` times, the wakee running
/// a little each time so that the two CPUs contend for CPU 0's runqueue lock.
fn wake_pair(x: usize, rounds: u32) -> String {
    format!(
        "name = \"pair\"\n[[pipe]]\nname = \"p\"\n\
         [[task]]\nname = \"waker\"\naffinity = [{x}]\n\
         program = [ {{ loop = {rounds}, do = [ {{ send = \"p\", bytes = 1 }}, {{ run = \"2us\" }} ] }} ]\n\
         [[task]]\nname = \"sleeper\"\naffinity = [0]\n\
         program = [ {{ loop = {rounds}, do = [ {{ recv = \"p\", bytes = 1 }}, {{ run = \"1us\" }} ] }} ]\n"
    )
}

/// The lock statistics' line transfers, per lock site, cost what the lines model says:
/// with only CPUs 0 and `x` taking locks, every transfer is between the two and a queued
/// lock's hand-over to its one waiter moves the line twice at one transfer each
/// (`Spinlock::handover_ns`), so each site's time is its transfers × `Lines::between(0,
/// x)`. CPU 0's runqueue lock contended from another node (opteron-32: CPU 16) costs more
/// per transfer and in all than from its own LLC (CPU 1), and from the same core (the
/// i7-3770's SMT sibling) least.
#[test]
fn lock_line_transfers_per_site_cost_the_lines_model() {
    let opteron = machine("opteron-32", CostModel::Full);
    let i7 = machine("i7-3770", CostModel::Full);
    let sibling = i7.topology.smt_siblings(0).find(|&c| c != 0).expect("SMT");
    let mut per_transfer = Vec::new();
    for (m, x) in [(&i7, sibling), (&opteron, 1), (&opteron, 16)] {
        let m = Arc::new(m.clone());
        let wl = schedlab_workload::parse_workload("t.toml", &wake_pair(x, 300), &[], m.nr_cpus()).expect("parses");
        let policy = schedlab_policies::make_policy("cfs", &m, &[]).expect("policy");
        let cfg = KernelConfig { ttwu_queue: false, ..KernelConfig::default() };
        let sim = SimParams { check_invariants: true, end: Ns::from_secs(5), ..SimParams::default() };
        let mut probe = NoProbe;
        let s = Kernel::new(m.clone(), Arc::new(wl), policy, cfg, sim, &mut probe).expect("builds").run(&mut |_| true);
        let s = s.expect("runs");
        let xfer = m.lines.between(&m.topology, 0, x).0;
        let (mut n, mut ns) = (0, 0);
        for (lock, site, st) in &s.locks {
            assert_eq!(st.line_ns, st.line_transfers * xfer, "{lock} at {}: CPU {x}", site.name());
            (n, ns) = (n + st.line_transfers, ns + st.line_ns);
        }
        let handovers: u64 =
            s.kernel_counters.iter().filter(|(k, _)| k.starts_with("lock_handovers.")).map(|(_, v)| *v).sum();
        assert!(n > 0 && handovers > 0, "CPU {x}: {n} transfers, {handovers} hand-overs");
        per_transfer.push((xfer, ns));
    }
    assert!(per_transfer[0].0 < per_transfer[1].0 && per_transfer[1].0 < per_transfer[2].0, "{per_transfer:?}");
    assert!(per_transfer[1].1 < per_transfer[2].1, "{per_transfer:?}");
}
