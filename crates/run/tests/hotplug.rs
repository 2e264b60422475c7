//! CPU hotplug through `[[change]]` `cpu_offline`/`cpu_online` (`kernel/sched/core.c`:
//! `sched_cpu_deactivate`, `balance_push`, `select_fallback_rq`; `kernel/cgroup/cpuset.c`:
//! `hotplug_update_tasks`, v6.12). Every job runs checked.

mod common;
use common::*;
use schedlab_run::RunSpec;
use schedlab_sim::Ns;

/// Four unpinned hogs on four CPUs; CPU 3 goes offline at 300 ms and back at 600 ms.
fn offline_online(offline_only: bool) -> String {
    let mut s = String::from(
        "[[task]]\nname = \"hog\"\ncount = 4\nprogram = [ { loop = \"forever\", do = [ { run = \"50ms\" } ] } ]\n[[change]]\nat = \"300ms\"\ncpu_offline = 3\n",
    );
    if !offline_only {
        s.push_str("[[change]]\nat = \"600ms\"\ncpu_online = 3\n");
    }
    s
}

/// Switches onto `cpu` in `[from, to)`.
fn runs_on(sw: &Switches, cpu: usize, from: u64, to: u64) -> usize {
    sw.0.iter().filter(|&&(t, c, _, next)| c == cpu && next.is_some() && t.0 >= from && t.0 < to).count()
}

/// After the offline no task is switched in on the CPU (the stopper pushed its task off);
/// after the online, the balancer uses it again. No task is lost: all four keep running.
#[test]
fn nothing_runs_on_an_offline_cpu_and_balancing_uses_it_again_once_online() {
    for (sched, sets) in [("cfs", &[][..]), ("eevdf", &[("version", "6.18")][..])] {
        let j = job(&offline_online(false), "smp4", sched, 1, sets);
        let mut sw = Switches::default();
        run_with_probe(&j, &mut sw);
        assert!(runs_on(&sw, 3, 0, 300_000_000) > 0, "{sched}: CPU 3 idle before the offline");
        // Allow the switch that pushes the running hog off (the stopper) at the offline.
        assert_eq!(runs_on(&sw, 3, 301_000_000, 600_000_000), 0, "{sched}: a task ran on offline CPU 3");
        assert!(runs_on(&sw, 3, 600_000_000, 1_000_000_000) > 0, "{sched}: CPU 3 unused after it came back");
        let r = run(&j);
        assert_eq!(r.tasks.len(), 4);
        for t in &r.tasks {
            assert!(t.runtime_ns > 400_000_000, "{sched}: {} ran only {} ns", t.name, t.runtime_ns);
        }
    }
}

/// A hog pinned to the CPU that goes offline has no allowed active CPU left:
/// `select_fallback_rq` widens it to the active CPUs (with the kernel's "no longer affine"
/// note in the record's warnings) and it keeps running.
#[test]
fn a_task_pinned_to_an_offlined_cpu_falls_back_and_keeps_running() {
    let text = format!("{}[[change]]\nat = \"100ms\"\ncpu_offline = 1\n", hog("p", 0, 1));
    let r = run(&job(&text, "smp2", "eevdf", 1, &[("version", "6.18")]));
    let p = task(&r, "p");
    assert!(p.runtime_ns > 850_000_000, "pinned hog ran {} ns", p.runtime_ns);
    assert!(r.warnings.iter().any(|w| w.contains("no longer affine")), "warnings: {:?}", r.warnings);
}

/// The same workload twice: the same trace hash.
#[test]
fn hotplug_runs_are_deterministic() {
    let j = job(&offline_online(false), "smp4", "eevdf", 1, &[("version", "6.18")]);
    assert_eq!(run(&j).trace_hash, run(&j).trace_hash);
}

fn load_err(text: &str, machine: &str) -> String {
    match RunSpec::load("w.toml", text, Some(machine), &[], Some(Ns::from_secs(1))) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    }
}

/// Bad input: the last active CPU, a CPU outside the machine, both keys, a hotplug step
/// with task fields, a change with neither — each a located error naming its field.
#[test]
fn bad_hotplug_changes_are_refused_with_their_field() {
    let hogs = hog("h", 0, 0);
    let cases = [
        (
            "[[change]]\nat = \"1ms\"\ncpu_offline = 0\n[[change]]\nat = \"2ms\"\ncpu_offline = 1\n",
            "change[1].cpu_offline",
            "last active CPU",
        ),
        ("[[change]]\nat = \"1ms\"\ncpu_offline = 2\n", "change[0].cpu_offline", "outside the machine"),
        ("[[change]]\nat = \"1ms\"\ncpu_offline = 1\ncpu_online = 1\n", "change[0]", "not both"),
        ("[[change]]\nat = \"1ms\"\ncpu_offline = 1\ntasks = \"h\"\n", "change[0].tasks", "takes no"),
        ("[[change]]\nat = \"1ms\"\n", "change[0]", "needs `tasks`"),
    ];
    for (change, field, what) in cases {
        let e = load_err(&format!("{hogs}{change}"), "smp2");
        assert!(e.contains(field) && e.contains(what) && e.contains("w.toml:"), "{change}: {e}");
    }
}
