//! The runqueue-lock study's kernel model: the lock shapes of Linux 2.6.32, 3.4 and 5.15
//! (`--kernel`), the delayed new-task wakeup and the narrower `load_balance` critical section
//! (Zhang, Gu, Su, "Research on Decreasing Lock Contention for Linux Scheduler", 2017).
//! Every run checks the kernel's invariants after every event, the delay queues' included.

mod common;
use common::*;
use schedlab_machine::{Costs, Machine};
use schedlab_metrics::RunRecord;
use schedlab_probe::{EndReason, Probe, ProbeEvent};
use schedlab_run::{KernelVersion, RunSpec};
use schedlab_sim::Ns;
use std::sync::Arc;

fn hackbench(groups: u32, loops: u32) -> RunSpec {
    let path = format!("{}/../../examples/workloads/hackbench.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let params = [("groups".to_string(), groups.to_string()), ("loops".to_string(), loops.to_string())];
    let mut j = RunSpec::load("hackbench.toml", &text, None, &params, Some(Ns::from_secs(5))).unwrap();
    j.check = true;
    j
}

/// Acquisitions, contended acquisitions and spin time at one call site, over every rq lock.
fn site(r: &RunRecord, name: &str) -> (u64, u64, u64) {
    r.locks
        .iter()
        .filter(|l| l.lock.starts_with("rq") && l.site == name)
        .fold((0, 0, 0), |(a, c, s), l| (a + l.acquisitions, c + l.contended, s + l.spin_ns))
}

fn counter(r: &RunRecord, name: &str) -> u64 {
    r.kernel.counters.iter().find(|(n, _)| n == name).map(|(_, v)| *v).unwrap_or_else(|| panic!("no counter {name}"))
}

/// With `delayed_wakeup`, `wake_up_new_task` never spins on a runqueue lock (it trylocks),
/// yet some children were delayed (without the switch the same forks do contend), every
/// delayed child reached its runqueue and ran, and every hackbench task exits with every
/// message delivered (receivers exit only after reading all of theirs).
#[test]
fn delayed_wakeup_never_spins_and_loses_no_task() {
    let mut contended_without = 0;
    let mut delayed = 0;
    for v in KernelVersion::ALL {
        let mut j = hackbench(4, 20);
        j.kernel.version = v;
        contended_without += site(&run(&j), "wake_up_new_task").1;
        j.kernel.delayed_wakeup = true;
        let r = run(&j);
        assert_eq!(r.end_reason, EndReason::AllExited, "{v}");
        assert!(r.tasks.iter().all(|t| t.exit_ns.is_some()), "{v}: a task did not exit");
        let (acq, cont, spin) = site(&r, "wake_up_new_task");
        assert_eq!((cont, spin), (0, 0), "{v}: wake_up_new_task spun");
        let d = counter(&r, "delayed_wakeups");
        assert_eq!(acq + d, 160, "{v}: each of the 160 children is enqueued once, locked or delayed");
        assert_eq!(counter(&r, "forks_run"), 160, "{v}: every child ran");
        delayed += d;
    }
    assert!(contended_without > 0, "the forks never contended without the switch");
    assert!(delayed > 0, "no child was ever delayed");
}

/// One CPU holds its runqueue lock for 3 ms of every 4 ms tick (a long tick hold) while another forks
/// children pinned to it: the trylocks fail, the ring of the (forker, target) queue fills
/// and overflows into the list, and every child still runs and exits.
#[test]
fn delay_queue_overflows_into_the_list() {
    let text = r#"
[[task]]
name = "hog"
affinity = [1]
program = [ { run = "40ms" } ]
[[task]]
name = "parent"
affinity = [0]
program = [ { sleep = "4100us" }, { fork = "child", count = 100 }, "wait" ]
[[task]]
name = "child"
template = true
affinity = [1]
program = [ { run = "50us" }, "exit" ]
"#;
    let mut j = job(text, "smp2", "cfs", 2, &[]);
    let costs = Costs { tick: Ns::from_ms(3), fork: Ns::from_us(5), ..Costs::default() };
    j.machine = Arc::new(Machine { costs, ..(*j.machine).clone() });
    j.kernel.delayed_wakeup = true;
    let r = run(&j);
    assert_eq!(r.end_reason, EndReason::AllExited);
    assert!(counter(&r, "delayed_overflows") > 0, "the ring never overflowed: {:?}", r.kernel.counters);
    assert_eq!(counter(&r, "forks_run"), 100);
    assert_eq!(site(&r, "wake_up_new_task").1, 0);
}

/// Counts claimed wakeups (`sched_waking`).
#[derive(Default)]
struct Wakings(u64);
impl Probe for Wakings {
    fn event(&mut self, ev: &ProbeEvent) {
        if let ProbeEvent::Waking { .. } = ev {
            self.0 += 1;
        }
    }
}

/// A pipe ping-pong between CPUs `a` and `b`: each side mostly waits, so its CPU is idle
/// when it is woken.
fn ping_pong(machine: &str, a: usize, b: usize, v: KernelVersion) -> (RunRecord, u64) {
    let text = format!(
        r#"
[[pipe]]
name = "ab"
[[pipe]]
name = "ba"
[[task]]
name = "ping"
affinity = [{a}]
program = [ {{ loop = 200, do = [ {{ send = "ab", bytes = 8 }}, {{ recv = "ba", bytes = 8 }} ] }} ]
[[task]]
name = "pong"
affinity = [{b}]
program = [ {{ loop = 200, do = [ {{ recv = "ab", bytes = 8 }}, {{ send = "ba", bytes = 8 }} ] }} ]
"#
    );
    let mut j = job(&text, machine, "cfs", 2, &[]);
    j.kernel.version = v;
    let mut w = Wakings::default();
    run_with_probe(&j, &mut w);
    (run(&j), w.0)
}

/// Remote wakeups on one LLC: 5.15 queues those to an idle CPU on its wake list
/// (`ttwu_queue_cond`), 3.4 locks the target runqueue (it queues only across caches), and
/// 2.6.32, which has no wake list, locks the wakee's old runqueue and then the target's.
#[test]
fn remote_wakeups_follow_the_version() {
    let (r, _) = ping_pong("smp4", 0, 1, KernelVersion::V5_15);
    assert!(site(&r, "sched_ttwu_pending").0 > 0, "5.15 never queued to an idle CPU");
    let (r, wakings) = ping_pong("smp4", 0, 1, KernelVersion::V3_4);
    assert_eq!(site(&r, "sched_ttwu_pending").0, 0, "3.4 queued a wakeup within one LLC");
    assert_eq!(site(&r, "try_to_wake_up").0, wakings, "3.4: one target lock per wakeup");
    let (r, wakings) = ping_pong("smp4", 0, 1, KernelVersion::V2_6_32);
    assert_eq!(site(&r, "sched_ttwu_pending").0, 0);
    assert!(wakings > 0);
    assert_eq!(site(&r, "try_to_wake_up").0, 2 * wakings, "2.6.32: old runqueue, then target, per wakeup");
}

/// Across LLCs (the Opteron's CPUs 0 and 6 are on different dies), 3.4 does queue; 2.6.32
/// still never does.
#[test]
fn only_2_6_32_never_queues_across_caches() {
    let m = schedlab_machine::preset("opteron-32").unwrap();
    let far = (1..m.nr_cpus()).find(|&c| !m.topology.shares_llc(0, c)).unwrap();
    let (r, _) = ping_pong("opteron-32", 0, far, KernelVersion::V3_4);
    assert!(site(&r, "sched_ttwu_pending").0 > 0, "3.4 did not queue across caches");
    let (r, _) = ping_pong("opteron-32", 0, far, KernelVersion::V2_6_32);
    assert_eq!(site(&r, "sched_ttwu_pending").0, 0, "2.6.32 queued a wakeup");
}

/// Kernel time on the `migrate` path, over all CPUs.
fn path_ns(r: &RunRecord, path: &str) -> u64 {
    r.cpus.iter().flat_map(|c| &c.kernel_paths).filter(|(p, _)| p == path).map(|(_, ns)| ns).sum()
}

/// With every cost zero except the balancer's per-task examination, the time under both
/// runqueue locks in `load_balance` (path `migrate`) is exactly that examination: present in
/// 2.6.32 and 3.4 (the whole `move_tasks` chain is under the double lock), gone with
/// `lb_narrow_lock` (it runs outside, on the `balance` path) and in 5.15.
#[test]
fn lb_narrow_lock_moves_the_chain_out_of_the_double_lock() {
    for v in KernelVersion::ALL {
        for narrow in [false, true] {
            let mut j = hackbench(2, 10);
            let costs = Costs { work_task: Ns(20), ..Costs::zero() };
            // The constant-cost machine: nothing but the examination is charged.
            j.machine =
                Arc::new(Machine { costs, cost_model: schedlab_machine::CostModel::Flat, ..(*j.machine).clone() });
            j.kernel.version = v;
            j.kernel.lb_narrow_lock = narrow;
            let r = run(&j);
            assert_eq!(r.end_reason, EndReason::AllExited);
            assert!(site(&r, "load_balance").0 > 0, "{v}: the balancer never moved a task");
            let inside = path_ns(&r, "migrate");
            if v != KernelVersion::V5_15 && !narrow {
                assert!(inside > 0, "{v}: no examination under the double lock");
            } else {
                assert_eq!(inside, 0, "{v} narrow={narrow}: examination under the double lock");
                assert!(path_ns(&r, "balance") > 0);
            }
        }
    }
}

/// A balance pass that finds the busiest runqueue with more than one task but can move none
/// (three hogs pinned to CPU 0, CPU 1 idle) still takes both runqueue locks under 2.6.32 and
/// 3.4 — they lock before `move_tasks` examines the candidates — and holds them for that
/// examination (path `migrate`), though no task ever moves. With `lb_narrow_lock` the
/// examination runs unlocked and an empty pass takes no lock. Under CFS and O(1) (2.6.20's
/// `load_balance` locks the same way).
#[test]
fn a_balance_pass_that_moves_nothing_still_takes_the_locks() {
    let text: String = (0..3).map(|i| hog(&format!("h{i}"), 0, 0)).collect();
    for sched in ["cfs", "o1"] {
        for v in [KernelVersion::V2_6_32, KernelVersion::V3_4] {
            for narrow in [false, true] {
                let mut j = job(&text, "smp2", sched, 1, &[]);
                let costs = Costs { work_task: Ns(20), ..Costs::default() };
                j.machine = Arc::new(Machine { costs, ..(*j.machine).clone() });
                j.kernel.version = v;
                j.kernel.lb_narrow_lock = narrow;
                let r = run(&j);
                assert!(r.tasks.iter().all(|t| t.migrations == 0), "{sched} {v}: a pinned hog moved");
                let (acq, _, _) = site(&r, "load_balance");
                if narrow {
                    assert_eq!(acq, 0, "{sched} {v}: the narrow section locked for nothing");
                } else {
                    assert!(acq > 0, "{sched} {v}: no balance pass took the locks");
                    // CFS reports the tasks its `detach_tasks` examined (O(1) reports no work).
                    if sched == "cfs" {
                        assert!(path_ns(&r, "migrate") > 0, "{v}: nothing examined under the locks");
                    }
                }
            }
        }
    }
}

/// The versions and switches change the run, and each still replays bit-identically.
#[test]
fn versions_are_deterministic() {
    let mut hashes = Vec::new();
    for v in KernelVersion::ALL {
        let mut j = hackbench(2, 10);
        j.kernel.version = v;
        j.kernel.delayed_wakeup = v == KernelVersion::V3_4;
        let a = run(&j);
        let b = run(&j);
        assert_eq!(schedlab_run::deterministic_json(&a), schedlab_run::deterministic_json(&b), "{v}");
        assert_eq!(a.kernel.version.as_deref(), Some(v.name()));
        hashes.push(a.trace_hash);
    }
    hashes.dedup();
    assert_eq!(hashes.len(), 3, "two versions ran identically");
}
