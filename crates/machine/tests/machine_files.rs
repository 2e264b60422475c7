//! Machine files and dotted names: every preset written as a file reads back equal, every
//! value set through its dotted name reads back, errors name file, line, column and field,
//! and unknown keys are refused.

use schedlab_machine::{parse_machine, preset, CostModel, Costs, Machine, Models, PRESETS};
use schedlab_sim::Ns;

#[test]
fn every_preset_round_trips_through_a_machine_file() {
    for (name, _) in PRESETS {
        let m = preset(name).unwrap();
        let text = m.to_toml();
        let back = parse_machine("m.toml", &text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
        assert_eq!(back, m, "{name}:\n{text}");
    }
}

/// Every value `fields()` lists reads back through `Machine::set` on another machine of the
/// same shape, and the listing names every table field once.
#[test]
fn every_field_round_trips_through_its_dotted_name() {
    for name in ["i7-3770", "opteron-32", "vm", "big-little"] {
        let m = preset(name).unwrap();
        let fields = m.fields();
        let mut other = m.clone();
        other.costs = Costs { context_switch: Ns(7), ..other.costs };
        for (k, v) in &fields {
            other.set(k, v).unwrap_or_else(|e| panic!("{name}: {k} = {v}: {e}"));
        }
        assert_eq!(other, m, "{name}");
        let mut names: Vec<&str> = fields.iter().map(|(k, _)| k.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), fields.len(), "{name}: a name listed twice");
    }
}

/// Changing each field to another valid value and back through a file: each field's text
/// form is what the parser reads (not only its default).
#[test]
fn changed_values_survive_a_file() {
    let mut m = preset("big-little").unwrap();
    for (k, v) in [
        ("costs.context_switch", "1.234567ms"),
        ("memory.latency", "71.5ns"),
        ("memory.bandwidth", "12.8GB/s"),
        ("cache.L2.size", "1.5MiB"),
        ("cache[2].bandwidth", "40GiB/s"),
        ("cache.L3.replacement", "lru"),
        ("lines.distance.16", "90ns"),
        ("lines.spinlock", "ticket"),
        ("idle.governor", "teo"),
        ("idle.driver[1].state.WFI.power_mw", "12"),
        ("idle.driver[2].state[1].tlb_flushed", "true"),
        ("idle.driver[0].state[1].exit_cost", "300us"),
        ("freq.rate_limit_us", "2000"),
        ("freq.domain[0].scale_ref_khz", "1704000"),
        ("mm.pcid", "false"),
        ("hz", "1000"),
    ] {
        m.set(k, v).unwrap_or_else(|e| panic!("{k} = {v}: {e}"));
    }
    assert_eq!(m.caches.levels[1].size, 3 << 19);
    assert_eq!(m.lines.remote(16), Ns(90));
    assert_eq!(m.idle.states(0)[1].wake_cost(), Ns::from_us(300));
    let back = parse_machine("m.toml", &m.to_toml()).unwrap();
    assert_eq!(back, m);
}

#[test]
fn set_refuses_what_a_file_would_and_changes_nothing() {
    let m = preset("i7-3770").unwrap();
    for (k, v, words) in [
        ("costs.tick", "2s", "limit of 1s"),
        ("cost.warp", "1us", "unknown cost `warp`"),
        ("cache.L4.size", "1MiB", "no cache named `L4`"),
        ("cache[3].size", "1MiB", "no cache[3]"),
        ("cache.L3.size", "512KiB", "private caches"),
        ("idle.driver[0].state.C1E.exit_latency", "30us", "exceeds the target residency"),
        ("freq.domain[0].khz", "[3400000, 1600000]", "strictly ascending"),
        ("freq.governor", "none", "governor none"),
        ("lines.distance.9", "100ns", "11..=255"),
        ("mm.tlb_entries", "0", "outside the range"),
        ("topology.nodes", "2", "unknown name"),
        ("memory", "1", "expected one of memory."),
    ] {
        let mut t = m.clone();
        let e = t.set(k, v).unwrap_err();
        assert!(e.contains(words) && e.contains(k), "{k} = {v}: {e}");
        assert_eq!(t, m, "{k}: a refused value changed the machine");
    }
}

#[test]
fn cost_models_switch_the_models_and_none_zeroes_the_costs() {
    let mut m = preset("big-little").unwrap();
    assert_eq!(m.cost_model, CostModel::Full);
    let full = m.models();
    assert!(full.caches && full.lines && full.locks && full.idle && full.freq && full.capacity && full.mm);
    assert!(!full.numa_memory, "one node");
    assert!(!m.charges_rewarm() && !m.charges_idle_exit());
    m.set("cost_model", "flat").unwrap();
    assert_eq!(m.models(), Models::OFF);
    assert!(m.charges_rewarm() && m.charges_idle_exit());
    assert_eq!(m.costs, Costs::default());
    assert_eq!(m.cpu_capacity(0), 1024, "flat: every CPU at 1024");
    m.set("cost_model", "none").unwrap();
    assert_eq!(m.costs, Costs::zero());
    assert_eq!(m.models(), Models::OFF);
    assert!(preset("opteron-32").unwrap().models().numa_memory);
    let generic = preset("smp4").unwrap().models();
    assert!(generic.caches && !generic.freq && !generic.capacity, "smpN: generic caches, no cpufreq");
}

#[test]
fn cost_model_in_a_file() {
    let m = parse_machine("m.toml", "cost_model = \"flat\"\n[topology]\ncores_per_llc = 2\n").unwrap();
    assert_eq!(m.cost_model, CostModel::Flat);
    let m = parse_machine("m.toml", "cost_model = \"none\"\n[costs]\nfork = \"2us\"\n").unwrap();
    assert_eq!(m.costs, Costs::zero(), "none charges nothing, whatever [costs] says");
    let e = parse_machine("m.toml", "cost_model = \"cheap\"\n").unwrap_err();
    assert_eq!((e.line, e.column, e.field.as_str()), (1, 14, "cost_model"));
}

/// A file with only a topology gets the generic data of every model.
#[test]
fn sections_left_out_keep_the_generic_data() {
    let m = parse_machine("m.toml", "[topology]\ncores_per_llc = 4\nthreads_per_core = 2\n").unwrap();
    let g = Machine::new("m.toml", 250, m.topology.clone(), Costs::default());
    assert_eq!(m, g);
    assert_eq!(m.caches.levels[2].size, 8 << 20, "2 MiB per core of the LLC");
    assert_eq!(m.idle.states(7).len(), 1);
}

/// `(file text, line, column, field, words in the message)`.
type Case = (&'static str, usize, usize, &'static str, &'static str);

const CACHE: &str =
    "[[cache]]\nname = \"L1d\"\nsize = \"32KiB\"\nline = 64\nscope = \"core\"\nlatency = \"1.2ns\"\ninclusion = \"inclusive\"\nreplacement = \"lru\"\n";

#[test]
fn errors_name_file_line_column_and_field() {
    let cases: &[Case] = &[
        ("[memory]\nlatency = 65\n", 2, 11, "memory.latency", "missing unit"),
        ("[memory]\nlatency = 6.5\n", 2, 11, "memory.latency", "not a float"),
        ("[memory]\nspeed = \"1GB/s\"\n", 2, 1, "memory.speed", "unknown memory field `speed`"),
        ("[memory]\nmlp = 0\n", 2, 7, "memory.mlp", "outside the range 1..=64"),
        ("[lines]\nsame_llc = \"1ns\"\n", 2, 12, "lines.same_llc", "cheaper than lines.smt"),
        ("[lines.distance]\n16 = \"20ns\"\n", 2, 6, "lines.distance.16", "cheaper than lines.other_llc"),
        ("[lines.distance]\nfar = \"200ns\"\n", 2, 1, "lines.distance.far", "SLIT distance"),
        ("[mm]\npcid = \"maybe\"\n", 2, 8, "mm.pcid", "true or false"),
        ("[idle]\ngovernor = \"ladder\"\n", 2, 12, "idle.governor", "menu-5.15"),
        ("[freq]\ngovernor = \"schedutil-6.18\"\n", 2, 12, "freq.governor", "needs domains"),
        ("[gpu]\ncores = 1\n", 1, 2, "gpu", "unknown field; expected one of name"),
        ("[[cache]]\nname = \"L1d\"\n", 1, 1, "cache[0].size", "missing `size`"),
        ("[[cache]]\nname = \"L.1\"\n", 2, 8, "cache[0].name", "not a valid name"),
        ("[[cache]]\nways = 8\n", 2, 1, "cache[0].ways", "unknown cache field `ways`"),
    ];
    check(cases);
}

#[test]
fn errors_in_arrays_point_at_the_element() {
    let on = |cores: usize| {
        format!(
            "[topology]\ncores_per_llc = {cores}\n[freq]\ngovernor = \"performance\"\n[[freq.domain]]\ncpus = \"0-3\"\ntransition_latency = \"10us\"\n"
        )
    };
    let domain = on(4);
    let second = "[[freq.domain]]\ncpus = \"3\"\nkhz = [1]\ntransition_latency = \"1us\"\n";
    let cases: Vec<(String, usize, usize, &str, &str)> = vec![
        (
            format!("{CACHE}{}", CACHE.replace("L1d", "L2").replace("32KiB", "16KiB")),
            14,
            11,
            "cache[1].latency",
            "must exceed L1d",
        ),
        (format!("{CACHE}{}", CACHE.replace("1.2ns", "3ns")), 10, 8, "cache[1].name", "two levels are named"),
        (format!("{CACHE}[[cache]]\nname = \"L2\"\nline = 48\n"), 9, 1, "cache[1].size", "missing `size`"),
        (format!("{domain}khz = [1000000, 900000]\n"), 8, 17, "freq.domain[0].khz[1]", "strictly ascending"),
        (format!("{domain}khz = [1000000, \"2GHz\"]\n"), 8, 17, "freq.domain[0].khz[1]", "expected an integer"),
        (
            format!("{domain}khz = [1000000]\npower_uw = [0]\n"),
            9,
            13,
            "freq.domain[0].power_uw[0]",
            "outside the range",
        ),
        (
            format!("{domain}khz = [1000, 2000]\npower_uw = [5, 4]\n"),
            9,
            16,
            "freq.domain[0].power_uw[1]",
            "increase with frequency",
        ),
        (
            format!("{domain}khz = [1000]\ncapacity = 512\n"),
            9,
            12,
            "freq.domain[0].capacity",
            "biggest CPU's capacity is 1024",
        ),
        (
            format!("{domain}khz = [1000]\ncapacity = 2048\n"),
            9,
            12,
            "freq.domain[0].capacity",
            "outside the range 1..=1024",
        ),
        (format!("{}khz = [1000]\n", on(8)), 6, 8, "freq.domain[0].cpus", "CPU 4 is in no freq.domain"),
        (format!("{domain}khz = [1000]\n{second}"), 10, 8, "freq.domain[1].cpus", "CPU 3 is already"),
    ];
    for (text, line, col, field, words) in &cases {
        one(text, *line, *col, field, words);
    }
}

#[test]
fn idle_state_errors_point_at_the_state() {
    let idle = "[topology]\ncores_per_llc = 2\n[idle]\ngovernor = \"menu-6.18\"\n[[idle.driver]]\ncpus = \"0-1\"\n";
    let state = |name: &str, exit: &str, residency: &str| {
        format!(
            "[[idle.driver.state]]\nname = \"{name}\"\nexit_latency = \"{exit}\"\ntarget_residency = \"{residency}\"\n"
        )
    };
    let cases: Vec<(String, usize, usize, &str, &str)> = vec![
        (
            format!("{idle}{}", state("C1", "2us", "1us")),
            9,
            16,
            "idle.driver[0].state[0].exit_latency",
            "exceeds the target residency",
        ),
        (
            format!("{idle}{}{}", state("C1", "1us", "1us"), state("C1", "2us", "2us")),
            12,
            8,
            "idle.driver[0].state[1].name",
            "two states",
        ),
        (
            format!("{idle}{}polling = true\n", state("C1", "1us", "1us") + &state("C2", "1us", "2us")),
            15,
            11,
            "idle.driver[0].state[1].polling",
            "only state 0 polls",
        ),
        (
            format!("{idle}[[idle.driver.state]]\nname = \"C1\"\n"),
            7,
            1,
            "idle.driver[0].state[0].exit_latency",
            "missing `exit_latency`",
        ),
        (
            format!("{idle}{}depth = 3\n", state("C1", "1us", "1us")),
            11,
            1,
            "idle.driver[0].state[0].depth",
            "unknown idle state field",
        ),
        (idle.replace("0-1", "0"), 6, 8, "idle.driver[0].cpus", "CPU 1 is in no idle.driver"),
    ];
    for (text, line, col, field, words) in &cases {
        one(text, *line, *col, field, words);
    }
}

fn check(cases: &[Case]) {
    for (text, line, col, field, words) in cases {
        one(text, *line, *col, field, words);
    }
}

fn one(text: &str, line: usize, col: usize, field: &str, words: &str) {
    let e = parse_machine("box.toml", text).unwrap_err();
    assert!(e.to_string().starts_with("box.toml:"), "{e}");
    assert_eq!((e.field.as_str(), e.line, e.column), (field, line, col), "{e}\n---\n{text}");
    assert!(e.message.contains(words), "{e}");
}

/// CPU sets compare by their CPUs: per-CPU domains built as `CpuSet::single(128, c)` (two
/// words each) read back equal from a file, where `"0"` parses to one word.
#[test]
fn cpu_sets_read_back_equal_on_wide_machines() {
    use schedlab_machine::{CpuSet, FreqDomain, FreqGovernor, Topology};
    let mut m = Machine::new("wide", 250, Topology::new(1, 1, 128, 1, None), Costs::default());
    m.freq.governor = FreqGovernor::Performance;
    m.freq.domains = (0..128)
        .map(|c| FreqDomain {
            cpus: CpuSet::single(128, c),
            khz: vec![1000],
            power_uw: vec![],
            transition_latency: Ns::from_us(1),
            transition_delay_us: None,
            capacity: None,
            dmips_mhz: None,
            scale_ref_khz: None,
        })
        .collect();
    assert_eq!(m.check(), Ok(()));
    assert_eq!(parse_machine("m.toml", &m.to_toml()).unwrap(), m);
    let mut other = m.clone();
    other.set("freq.domain[0].cpus", "0").unwrap();
    assert_eq!(other, m);
}

/// A 4096-CPU file with per-CPU frequency domains parses quickly enough to be a test input,
/// and the coverage check is linear.
#[test]
fn large_files_parse() {
    let mut m = preset("numa-1024").unwrap();
    m.set("cost_model", "flat").unwrap();
    let text = m.to_toml();
    assert_eq!(parse_machine("m.toml", &text).unwrap(), m);
    let mut i7 = preset("i7-3770").unwrap();
    i7.set("freq.domain[7].transition_delay_us", "none").unwrap();
    assert_eq!(i7.freq.rate_limit_us(7), Some(10_000), "v5.15: the 20 µs latency × 1000, capped at 10 ms");
    assert_eq!(i7.freq.rate_limit_us(0), Some(500));
}
