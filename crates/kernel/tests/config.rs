//! The effective kernel configuration (`KernelConfig::effective`, `Kernel::config`): the
//! kernel runs, and reports, each switch as it takes effect under the version, the policy
//! and the machine; running the effective configuration gives the request's results.

mod common;

use schedlab_kernel::{KernelConfig, KernelVersion, RunsOn};
use schedlab_sim::Ns;
use std::sync::Arc;

const HACKBENCH: &str = include_str!("../../../examples/workloads/hackbench.toml");
/// Two hackbench groups of ten messages: forks, pipe wakeups across CPUs, balancing.
const SMALL: [(&str, &str); 2] = [("groups", "2"), ("loops", "10")];

/// Every switch requested on.
fn all_on(version: KernelVersion) -> KernelConfig {
    KernelConfig { ttwu_queue: true, delayed_wakeup: true, lb_narrow_lock: true, version, ..KernelConfig::default() }
}

/// The configuration the kernel runs for `cfg` under `sched` on `machine`, and its trace
/// hash, with the invariants checked. The kernel's configuration is the one
/// `KernelConfig::effective` gives for the policy on the machine.
fn effective_and_hash(sched: &str, machine: &str, cfg: KernelConfig) -> (KernelConfig, u64) {
    let m = Arc::new(schedlab_machine::preset(machine).expect("preset"));
    let at = RunsOn::new(schedlab_policies::make_policy(sched, &m, &[]).expect("policy").as_ref(), &m);
    let want = cfg.effective(at);
    common::with_kernel(HACKBENCH, &SMALL, machine, sched, (cfg, common::checked(Ns::from_secs(2))), |k| {
        assert_eq!(k.config(), &want, "{sched} on {machine}: the kernel runs the effective configuration");
        (want.clone(), k.run(&mut |_| true).expect("runs").trace_hash)
    })
}

/// ULE and O(1) have no wake list (FreeBSD's `sched_add` and 2.6's `try_to_wake_up` lock
/// the target): `ttwu_queue` is off whatever was asked; the fair classes keep it.
#[test]
fn ule_and_o1_run_without_the_wake_list() {
    for (sched, on) in [("ule", false), ("o1", false), ("cfs", true), ("eevdf", true), ("fifo", true)] {
        let (eff, _) = effective_and_hash(sched, "opteron-32", all_on(KernelVersion::V5_15));
        assert_eq!(eff.ttwu_queue, on, "{sched}: ttwu_queue");
    }
}

/// `ttwu_queue` needs a wake list (none in 2.6.32) and a wakeup that can take it: 3.4
/// queues only across LLCs, so on a machine of one LLC it never does; 5.15 also queues to
/// an idle CPU of the same LLC.
#[test]
fn the_wake_list_is_on_only_where_a_wakeup_can_take_it() {
    let cases = [
        ("i7-3770", KernelVersion::V2_6_32, false),
        ("opteron-32", KernelVersion::V2_6_32, false),
        ("i7-3770", KernelVersion::V3_4, false),
        ("opteron-32", KernelVersion::V3_4, true),
        ("i7-3770", KernelVersion::V5_15, true),
        ("opteron-32", KernelVersion::V5_15, true),
    ];
    for (machine, v, on) in cases {
        let (eff, _) = effective_and_hash("cfs", machine, all_on(v));
        assert_eq!(eff.ttwu_queue, on, "{machine} under {v}: ttwu_queue");
    }
}

/// `lb_narrow_lock` narrows the old kernels' double-locked `move_tasks` chain: under 5.15,
/// which never holds both locks, and under a policy that moves no batches (ULE moves one
/// thread at a time, fifo none), it is off; 2.6.32 and 3.4 under the fair class or O(1)
/// keep it.
#[test]
fn the_narrow_balance_lock_is_on_only_for_batch_balancers_before_5_15() {
    for v in KernelVersion::ALL {
        for (sched, batches) in [("cfs", true), ("o1", true), ("ule", false), ("fifo", false)] {
            let (eff, _) = effective_and_hash(sched, "opteron-32", all_on(v));
            let on = batches && v != KernelVersion::V5_15;
            assert_eq!(eff.lb_narrow_lock, on, "{sched} under {v}: lb_narrow_lock");
        }
    }
}

/// What is never adjusted stays as asked: the version, the delayed new-task wakeup, the
/// futex switches; a switch asked off stays off.
#[test]
fn the_rest_of_the_request_is_kept() {
    let mut req = all_on(KernelVersion::V3_4);
    req.futex.vip = false;
    req.futex.max_lock_depth = 7;
    let (eff, _) = effective_and_hash("ule", "smp4", req.clone());
    assert_eq!(eff.version, req.version);
    assert!(eff.delayed_wakeup);
    assert_eq!(eff.futex, req.futex);
    let off = KernelConfig { ttwu_queue: false, lb_narrow_lock: false, delayed_wakeup: false, ..req };
    let (eff, _) = effective_and_hash("cfs", "opteron-32", off);
    assert!(!eff.ttwu_queue && !eff.lb_narrow_lock && !eff.delayed_wakeup);
}

/// The effective configuration is a fixed point: asked for, it is what the kernel runs.
/// (That the switches it turns off would change nothing is checked inside the crate, by
/// forcing them on: `lib.rs`, `tests`.)
#[test]
fn the_effective_configuration_is_its_own() {
    for sched in ["cfs", "o1", "ule", "ext:simple"] {
        for v in KernelVersion::ALL {
            for machine in ["i7-3770", "opteron-32"] {
                let (eff, hash) = effective_and_hash(sched, machine, all_on(v));
                let (again, hash_again) = effective_and_hash(sched, machine, eff.clone());
                assert_eq!(again, eff, "{sched} {v} {machine}");
                assert_eq!(hash_again, hash, "{sched} {v} {machine}: the same run");
            }
        }
    }
}
