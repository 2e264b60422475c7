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

/// Three hogs on two CPUs. v5.15 (`migrate_load`): the imbalance is half a task's load,
/// so a busy balance first fails (1024 > 512) and moves the task only on the next attempt
/// (`1024 >> nr_balance_failed` ≤ 512). v4.9: `calculate_imbalance` finds 512 < one task's
/// load (`load_per_task`) and `fix_small_imbalance` raises it to a whole task, so the
/// first attempt moves it (`detach_tasks` skips only tasks above twice the imbalance).
/// And a busy CPU balances half as often: `busy_factor` 32 instead of 16, no jiffy off.
#[test]
fn three_hogs_fix_small_imbalance_moves_at_the_first_attempt() {
    let r5 = run(&job(THREE_HOGS, "smp2", "cfs", 4, &[]));
    let r4 = run(&job(THREE_HOGS, "smp2", "cfs@4.9", 4, &[]));
    let (m5, f5, a5) = (lb(&r5, "moved"), lb(&r5, "failed"), lb(&r5, "attempts"));
    let (m4, f4, a4) = (lb(&r4, "moved"), lb(&r4, "failed"), lb(&r4, "attempts"));
    eprintln!("5.15: moved {m5} failed {f5} attempts {a5}; 4.9: moved {m4} failed {f4} attempts {a4}");
    assert!(m5 > 10 && m4 > 10, "both keep moving the third hog");
    assert!(f5 >= m5, "v5.15: every move needs a failed attempt first");
    assert!(f4 * 4 < m4, "v4.9: moves without failing first");
    // Busy attempts per second: v5.15 every 7 jiffies (28 ms) per CPU, v4.9 every 16 (64 ms).
    assert!(a4 * 10 < a5 * 7, "v4.9 balances busy CPUs less often: {a4} vs {a5}");
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
            let mut j = schedlab_run::RunSpec::load(name, &text, Some(machine), &params, Some(schedlab_sim::Ns::from_secs(secs)))
                .unwrap();
            j.sched = "cfs@4.9".into();
            j.check = true;
            let a = deterministic_json(&run(&j));
            assert_eq!(a, deterministic_json(&run(&j)), "{name} on {machine}");
        }
    }
}
