//! The energy of a run from the machine's energy model (`crates/kernel/src/energy.rs`): a
//! CPU's active energy is its busy time times its domain's power (`em_perf_state.power`) at
//! the frequency it ran at; a task's is that of the CPUs while it was `curr`; idle power is
//! reported only where the machine declares one.

mod common;
use common::{job, run};
use schedlab_machine::preset;

/// The big-little preset's power at a domain's top and bottom frequency, µW.
fn power(domain: usize, top: bool) -> u64 {
    let m = preset("big-little").unwrap();
    let d = &m.freq.domains[domain];
    let f = if top { d.max_khz() } else { d.min_khz() };
    d.power_at(f).unwrap()
}

fn busy_ns(c: &schedlab_metrics::CpuRecord) -> u64 {
    c.user_ns + c.kernel_ns + c.spin_ns
}

/// `performance` holds every domain at its top frequency, so each CPU's active energy is
/// exactly its busy time × the top state's power (floored to nJ), and a pinned hog owns
/// nearly all of its CPU's. The same work on the little cluster takes
/// 1024 / capacity times as long at the little's power: the energy model's ratio.
#[test]
fn active_energy_is_busy_time_times_the_states_power() {
    let wl = |cpu: usize| format!("[[task]]\nname = \"w\"\naffinity = [{cpu}]\nprogram = [ {{ run = \"20ms\" }} ]\n");
    let mut per_work = Vec::new();
    for (cpu, domain) in [(0, 0), (4, 1), (6, 2)] {
        let mut j = job(&wl(cpu), "big-little", "eevdf", 1, &[]);
        j.set("machine.freq.governor", "performance").unwrap();
        let r = run(&j);
        for c in &r.cpus {
            let e = c.energy.expect("every big-little CPU has a power table");
            let dom = [0, 0, 0, 0, 1, 1, 2, 2][c.cpu];
            assert_eq!(e.active_nj, Some(busy_ns(c) * power(dom, true) / 1_000_000), "cpu {}", c.cpu);
            assert_eq!(e.idle_nj, None, "gs101's idle states declare no power");
        }
        let w = r.tasks.iter().find(|t| t.name == "w").unwrap();
        let cpu_e = r.cpus[cpu].energy.unwrap().active_nj.unwrap();
        let task_e = w.energy_nj.unwrap();
        assert!(task_e <= cpu_e && task_e * 100 >= cpu_e * 95, "task {task_e} nJ of its CPU's {cpu_e} nJ");
        // 20 ms of the biggest CPU's work at its top frequency.
        let cap = preset("big-little").unwrap().cpu_capacity(cpu);
        let want = 20_000_000 * 1024 / cap * power(domain, true) / 1_000_000;
        assert!(task_e.abs_diff(want) * 100 <= want, "cpu {cpu}: {task_e} nJ, the model says {want}");
        per_work.push(task_e);
    }
    // The little cluster does the same work for less energy than the big one.
    assert!(per_work[0] < per_work[2], "{per_work:?}");
}

/// Under schedutil a CPU's energy lies between its busy time at the bottom and at the top
/// state's power, and the tasks' energies add up to at most the CPUs' (the CPU's busy
/// time with no task `curr` is the CPU's alone).
#[test]
fn schedutil_energy_lies_between_the_bottom_and_top_states() {
    let wl = "[[task]]\nname = \"p\"\ncount = 4\nprogram = [ { loop = \"forever\", do = [ { run = \"2ms\" }, { sleep = \"6ms\" } ] } ]\n[[task]]\nname = \"hog\"\nprogram = [ { run = \"300ms\" } ]\n";
    let r = run(&job(wl, "big-little", "cfs", 1, &[]));
    let mut total = 0;
    for c in &r.cpus {
        let dom = [0, 0, 0, 0, 1, 1, 2, 2][c.cpu];
        let e = c.energy.unwrap().active_nj.unwrap();
        assert!(e >= busy_ns(c) * power(dom, false) / 1_000_000, "cpu {}", c.cpu);
        assert!(e <= busy_ns(c) * power(dom, true) / 1_000_000, "cpu {}", c.cpu);
        total += e;
    }
    let tasks: u64 = r.tasks.iter().map(|t| t.energy_nj.unwrap()).sum();
    assert!(tasks <= total && tasks > 0, "tasks {tasks} nJ, CPUs {total} nJ");
    assert!(r.cpus.iter().any(|c| c.freq.as_ref().is_some_and(|f| f.transitions > 0)), "schedutil moved");
}

/// Idle power where the machine declares it: each state's residency times its power.
/// A CPU that never runs idles since boot without the governor choosing a state, so its
/// idle energy is unknown; a CPU that ran and idled has one.
#[test]
fn idle_energy_from_declared_state_power() {
    let wl = "[[task]]\nname = \"p\"\naffinity = [0]\nprogram = [ { loop = \"forever\", do = [ { run = \"1ms\" }, { sleep = \"9ms\" } ] } ]\n";
    let deep = ["cpu-ananke-sleep", "cpu-enyo-sleep", "cpu-hera-sleep"];
    let sets: Vec<(String, String)> = (0..3)
        .flat_map(|d| {
            [
                (format!("machine.idle.driver[{d}].state.WFI.power_mw"), "10".to_string()),
                (format!("machine.idle.driver[{d}].state.{}.power_mw", deep[d]), "1".to_string()),
            ]
        })
        .collect();
    let mut j = job(wl, "big-little", "eevdf", 1, &[]);
    for (k, v) in &sets {
        j.set(k, v).unwrap();
    }
    let r = run(&j);
    let c0 = &r.cpus[0];
    let want: u64 = c0.idle_states.iter().enumerate().map(|(i, s)| s.time_ns * [10, 1][i]).sum::<u64>() / 1000;
    let got = c0.energy.unwrap().idle_nj.expect("cpu 0 idled through the governor");
    // The record's residencies count closed idles; the energy also the idle open at the end.
    assert!(got >= want && got <= want + 10 * 9_000, "{got} nJ vs {want} nJ from closed idles");
    assert!(r.cpus[7].energy.unwrap().idle_nj.is_none(), "cpu 7 never left its boot idle");
}

/// A machine without a power table reports no energy at all.
#[test]
fn no_energy_model_no_energy() {
    let wl = "[[task]]\nname = \"w\"\nprogram = [ { run = \"5ms\" } ]\n";
    let r = run(&job(wl, "i7-3770", "cfs", 1, &[]));
    assert!(r.cpus.iter().all(|c| c.energy.is_none()));
    assert!(r.tasks.iter().all(|t| t.energy_nj.is_none()));
}

/// The same work under `powersave` and `performance` on the little cluster: the energy
/// model's per-work cost is lower at the bottom state (A55: 70 × 537.5² mV² × 300 MHz
/// against 70 × 906.25² × 1803 MHz per second of busy time, for 6× the work), and the
/// reports print it — the run's energy line and the comparison's `active energy mJ` row.
#[test]
fn reports_print_energy_and_the_bottom_state_costs_less_per_work() {
    let wl = "[[task]]\nname = \"w\"\naffinity = [0]\nprogram = [ { run = \"10ms\" } ]\n";
    let at = |g: &str| {
        let mut j = job(wl, "big-little", "eevdf", 1, &[]);
        j.set("machine.freq.governor", g).unwrap();
        run(&j)
    };
    let (slow, fast) = (at("powersave"), at("performance"));
    let e = |r: &schedlab_metrics::RunRecord| r.tasks[0].energy_nj.unwrap();
    assert!(e(&slow) < e(&fast), "powersave {} nJ, performance {} nJ", e(&slow), e(&fast));
    assert!(schedlab_report::text(&fast).contains("energy: active "));
    let cmp = schedlab_report::compare_text(&[slow, fast]);
    assert!(cmp.lines().any(|l| l.starts_with("active energy mJ")), "{cmp}");
}
