//! `cfs@4.9` against `cfs` (v5.15): the v4.9 balancer's differences (linux-fair §5.12 as
//! the kernel sources give them), each shown by a run whose outcome differs, plus
//! invariants and determinism under 4.9.

mod common;
use common::*;
use schedlab_run::deterministic_json;

const THREE_HOGS: &str = r#"
[[task]]
name = "hog"
count = 3
affinity = [0]
program = [ { loop = "forever", do = [ { run = "10ms" } ] } ]

[[change]]
at = "10ms"
tasks = "hog"
set_affinity = "0-1"
"#;

fn lb(r: &schedlab_metrics::RunRecord, what: &str) -> u64 {
    r.policy_counters.get(&format!("lb.MC.{what}")).copied().unwrap_or(0)
}

/// Three hogs on two CPUs (linux-fair §5.12, the kernels' arithmetic). v5.15
/// (`migrate_load`): the imbalance is half a task's load, so a busy balance first fails
/// (1024 > 512) and moves the waiting hog on the next attempt (`1024 >> nr_balance_failed`
/// ≤ 512): the third hog hops between the CPUs and every hog approaches ⅔ of a CPU.
/// v4.9: `calculate_imbalance` finds 512 < `load_per_task` and hands over to
/// `fix_small_imbalance`, which moves a task only if `busiest.avg + lpt ≥ local.avg +
/// 2·lpt`, i.e. the busy CPU a whole task above the other; with LB_BIAS (the source's load
/// read low, `min(cpu_load[1], now)`, the destination's high) and PELT's rounding the two
/// loads stay a few units short of that, and the capacity test (`capa_move > capa_now`)
/// fails by as little: the third hog stays — shares ½, ¼, ¼ — and no attempt ever fails.
/// And a busy CPU balances less often: `busy_factor` 32 instead of 16, no jiffy off.
#[test]
fn three_hogs_on_two_cpus_v4_9_leaves_the_small_imbalance() {
    let secs = 6;
    let r5 = run(&job(THREE_HOGS, "smp2", "cfs", secs, &[]));
    let r4 = run(&job(THREE_HOGS, "smp2", "cfs@4.9", secs, &[]));
    let total = secs * 1_000_000_000;
    let share = |r: &schedlab_metrics::RunRecord| {
        let mut v: Vec<u64> = r.tasks.iter().map(|t| t.runtime_ns * 100 / total).collect();
        v.sort();
        v
    };
    let (s5, s4) = (share(&r5), share(&r4));
    let (m5, f5, a5) = (lb(&r5, "moved"), lb(&r5, "failed"), lb(&r5, "attempts"));
    let (m4, f4, a4) = (lb(&r4, "moved"), lb(&r4, "failed"), lb(&r4, "attempts"));
    let msg = format!("5.15: shares {s5:?} moved {m5} failed {f5} attempts {a5}; 4.9: {s4:?} {m4} {f4} {a4}");
    assert!(s5[0] >= 55 && s5[2] <= 78, "v5.15 rotates the third hog: {msg}");
    assert!(m5 > 20 && 2 * f5 >= m5, "v5.15: a failed attempt before each move: {msg}");
    assert!(s4[2] >= 95 && s4[1] <= 55, "v4.9 leaves one hog alone: {msg}");
    assert_eq!(f4, 0, "v4.9 never even tries: {msg}");
    assert!(2 * a4 < a5, "v4.9 balances busy CPUs half as often: {msg}");
}

/// Invariants after every event and determinism under 4.9 on SMT and NUMA machines.
#[test]
fn cfs_4_9_keeps_invariants_and_is_deterministic() {
    for (name, params, secs) in
        [("cpu-io-mix.toml", vec![("loops", "100")], 2), ("hackbench.toml", vec![("groups", "2"), ("loops", "10")], 3)]
    {
        let path = format!("{}/../../examples/workloads/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        let params: Vec<(String, String)> = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        for machine in ["i7-3770", "opteron-32"] {
            let mut j = schedlab_run::RunSpec::load(
                name,
                &text,
                Some(machine),
                &params,
                Some(schedlab_sim::Ns::from_secs(secs)),
            )
            .unwrap();
            j.sched = "cfs@4.9".into();
            j.check = true;
            let a = deterministic_json(&run(&j));
            assert_eq!(a, deterministic_json(&run(&j)), "{name} on {machine}");
        }
    }
}
