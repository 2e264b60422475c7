//! Futex words and the futex optimisations (`docs/futex.md`): value-check semantics, wake
//! order, requeue, `futex_swap`, wake on the current CPU, the direct switch, VIP queueing
//! and inheritance, PI chains. Every run checks the kernel's invariants after every event.

use schedlab_metrics::RunRecord;
use schedlab_probe::{EndReason, Probe, ProbeEvent};
use schedlab_run::RunSpec;
use schedlab_sim::{Ns, TaskId};

fn spec(text: &str, machine: &str, sched: &str, sets: &[(&str, &str)]) -> RunSpec {
    let mut s = RunSpec::load("futex.toml", text, Some(machine), &[], Some(Ns::from_secs(5))).unwrap();
    s.sched = sched.into();
    // Switch counts and placements are exact predictions: the noiseless machine.
    s.set("machine.noise", "none").unwrap();
    for (k, v) in sets {
        s.set(k, v).unwrap();
    }
    s.check = true;
    s
}

fn run(text: &str, machine: &str, sched: &str, sets: &[(&str, &str)]) -> RunRecord {
    let r = spec(text, machine, sched, sets).run(&mut |_| true).unwrap();
    assert_eq!(r.end_reason, EndReason::AllExited, "{text}");
    r
}

#[derive(Default)]
struct Events(Vec<ProbeEvent>);
impl Probe for Events {
    fn event(&mut self, ev: &ProbeEvent) {
        if !matches!(ev, ProbeEvent::CpuMode { .. }) {
            self.0.push(ev.clone());
        }
    }
}

fn events(text: &str, machine: &str, sched: &str, sets: &[(&str, &str)]) -> (Vec<ProbeEvent>, Vec<(String, u64)>) {
    let mut p = Events::default();
    let opts = schedlab_run::RunOptions { probe: Some(&mut p), keep_summary: true, ..Default::default() };
    let s = spec(text, machine, sched, sets).run_with(opts, &mut |_| true).unwrap().summary.expect("kept");
    assert_eq!(s.reason, EndReason::AllExited, "{text}");
    (p.0, s.kernel_counters)
}

fn counter(c: &[(String, u64)], name: &str) -> u64 {
    c.iter().find(|(k, _)| k == name).map_or(0, |(_, v)| *v)
}

fn exit_ns(r: &RunRecord, name: &str) -> u64 {
    r.tasks.iter().find(|t| t.name == name).and_then(|t| t.exit_ns).unwrap_or_else(|| panic!("{name} exited"))
}

fn task(r: &RunRecord, name: &str) -> schedlab_metrics::TaskRecord {
    r.tasks.iter().find(|t| t.name == name).unwrap().clone()
}

/// A `futex_wait` whose word no longer holds the expected value returns at once (`-EAGAIN`),
/// and a wake that comes before the wait is not lost: the waker changed the word first.
#[test]
fn futex_wait_checks_the_value_and_a_wake_before_the_wait_is_not_lost() {
    let w = r#"
[[futex]]
name = "f"
value = 5
[[futex]]
name = "g"
[[task]]
name = "stale"
program = [ { futex_wait = "f", expected = 0 }, { run = "1ms" } ]
[[task]]
name = "waker"
program = [ { futex_set = "g", value = 1 }, { futex_wake = "g" }, { run = "1ms" } ]
[[task]]
name = "late"
start = "3ms"
program = [ { futex_wait = "g", expected = 0 }, { run = "1ms" } ]
"#;
    let r = run(w, "smp4", "eevdf", &[]);
    for name in ["stale", "late"] {
        assert_eq!(task(&r, name).switches_voluntary, 1, "{name} only blocks at exit");
        assert_eq!(task(&r, name).sleep_ns, 0, "{name} never slept");
    }
    // The same waiter without the store blocks for good: the wait is real.
    let lost = w.replace(r#"{ futex_set = "g", value = 1 }, "#, "");
    let r = spec(&lost, "smp4", "eevdf", &[]).run(&mut |_| true).unwrap();
    assert_eq!(r.end_reason, EndReason::Deadlock);
}

/// `futex_wake(1)` wakes SCHED_OTHER waiters in FIFO order of their waits, whatever their
/// nice values (`__futex_queue`: all at plist priority 100); `CMP_REQUEUE(1, all)` on N
/// waiters wakes one and moves the rest, which a later wake of the target wakes in their
/// original order (`requeue_futex`).
#[test]
fn wakes_are_fifo_and_cmp_requeue_moves_the_rest_in_order() {
    let w = r#"
[[futex]]
name = "cv"
[[futex]]
name = "m"
[[task]]
name = "w0"
nice = 3
start = "0us"
program = [ { futex_wait = "cv", expected = 0 }, { futex_wait = "m", expected = 0 }, { run = "100us" } ]
[[task]]
name = "w1"
nice = 1
start = "100us"
program = [ { futex_wait = "cv", expected = 0 }, { futex_wait = "m", expected = 0 }, { run = "100us" } ]
[[task]]
name = "w2"
nice = -1
start = "200us"
program = [ { futex_wait = "cv", expected = 0 }, { futex_wait = "m", expected = 0 }, { run = "100us" } ]
[[task]]
name = "w3"
nice = -3
start = "300us"
program = [ { futex_wait = "cv", expected = 0 }, { futex_wait = "m", expected = 0 }, { run = "100us" } ]
[[task]]
name = "main"
start = "1ms"
program = [
  { futex_set = "cv", value = 1 },
  { futex_requeue = "cv", to = "m", wake = 1, requeue = "all", expected = 1 },
  { sleep = "1ms" },
  { futex_set = "m", value = 1 },
  { loop = 4, do = [ { futex_wake = "m", count = 1 }, { sleep = "1ms" } ] },
]
"#;
    let (ev, c) = events(w, "smp4", "cfs", &[]);
    assert_eq!(counter(&c, "futex_requeued"), 3);
    // The waiters are tasks 0..3 (main, task 4, also wakes from its sleeps).
    let wakeups: Vec<TaskId> = ev
        .iter()
        .filter_map(|e| if let ProbeEvent::Waking { task, .. } = e { Some(*task).filter(|&t| t < 4) } else { None })
        .collect();
    // Tasks 0..3 are w0..w3, queued in that order: the requeue wakes w0 and moves w1..w3
    // to `m`, where they keep their place ahead of w0, which queues on `m` after waking.
    assert_eq!(wakeups, [0, 1, 2, 3, 0]);
}

/// The request/response pair over one of four mechanisms.
fn pingpong(rounds: u64, swap: bool, current_cpu: bool, direct: bool) -> String {
    let flags = format!("current_cpu = {current_cpu}, direct = {direct}");
    let (client, server) = if swap {
        (
            format!(r#"{{ futex_swap = "resp", expected = 0, wake = "req", {flags} }}"#),
            format!(r#"{{ futex_swap = "req", expected = 0, wake = "resp", {flags} }}"#),
        )
    } else {
        (
            format!(
                r#"{{ futex_wake = "req", current_cpu = {current_cpu} }}, {{ futex_wait = "resp", expected = 0 }}"#
            ),
            format!(
                r#"{{ futex_wake = "resp", current_cpu = {current_cpu} }}, {{ futex_wait = "req", expected = 0 }}"#
            ),
        )
    };
    format!(
        r#"
[[futex]]
name = "req"
[[futex]]
name = "resp"
[[task]]
name = "client"
program = [ {{ loop = {rounds}, do = [ {{ run = "5us" }}, {{ futex_set = "req", value = 1 }}, {client}, {{ futex_set = "resp", value = 0 }} ] }},
  {{ futex_set = "req", value = 1 }}, {{ futex_wake = "req" }} ]
[[task]]
name = "server"
program = [ {{ futex_wait = "req", expected = 0 }}, {{ loop = {rounds}, do = [ {{ futex_set = "req", value = 0 }}, {{ run = "10us" }}, {{ futex_set = "resp", value = 1 }}, {server} ] }} ]
"#
    )
}

/// Every mechanism completes every round: no wakeup is lost (a lost one would leave the
/// pair blocked for good, a deadlock), under every policy, with invariants checked.
#[test]
fn a_request_response_pair_loses_no_wakeup_under_any_mechanism() {
    for sched in ["eevdf", "cfs", "ule", "o1", "fifo"] {
        for (swap, cur, direct) in
            [(false, false, false), (false, true, false), (true, false, false), (true, true, false), (true, true, true)]
        {
            let r = run(&pingpong(3000, swap, cur, direct), "smp2", sched, &[]);
            // With a swap the client sleeps once per round (and once at exit). A plain wake on
            // the current CPU may instead be preempted by its wakee before it waits, and then
            // find the answer already there: no sleep that round.
            let c = task(&r, "client");
            if swap {
                assert_eq!(c.switches_voluntary, 3001, "{sched} swap={swap} cur={cur} direct={direct}");
            }
            assert!(c.wakeups + 1 >= c.switches_voluntary, "{sched}");
        }
    }
}

/// `futex_swap` saves exactly one futex system call per hand-off (its entry, the futex
/// path and one bucket hold: the machine's `syscall` + `futex` + `futex_bucket_hold`; the
/// swap holds both buckets in one `double_lock_hb` hold), but with the wakee on the other CPU the
/// saved call is the waker's own wait, which runs while the wakee's CPU leaves idle: the
/// round trip does not get shorter. The FUTEX_SWAP patch wakes the waiter only after
/// queueing the caller, so the wake starts no earlier than with a plain wake (docs/futex.md).
#[test]
fn futex_swap_saves_one_call_per_hand_off_off_the_critical_path() {
    let rounds = 2000;
    let split = run(&pingpong(rounds, false, false, false), "smp2", "eevdf", &[]);
    let swap = run(&pingpong(rounds, true, false, false), "smp2", "eevdf", &[]);
    let kernel = |r: &RunRecord| r.cpus.iter().map(|c| c.kernel_ns).sum::<u64>();
    let call = schedlab_machine::preset("smp2")
        .map(|m| m.costs.syscall.0 + m.costs.futex.0 + m.costs.futex_bucket_hold.0)
        .unwrap();
    // Each round has two hand-offs (request, response); the split version's wake and wait
    // are two calls where the swap is one.
    assert_eq!(kernel(&split) - kernel(&swap), 2 * rounds * call);
    for r in [&split, &swap] {
        assert_eq!(r.tasks.iter().map(|t| t.migrations).sum::<u64>(), 0, "the pair stays on its two CPUs");
    }
    assert!(exit_ns(&swap, "client") >= exit_ns(&split, "client"), "the saved call is off the round trip");
}

/// A `futex_swap` pair runs a million rounds with no lost wakeup, the kernel's invariants
/// checked after every one of its 8 million events: a lost wakeup would leave both tasks
/// asleep (a deadlock, not `AllExited`). On the current CPU with the direct switch, the
/// cheapest mechanism to simulate (no IPI, no idle exit: ≈ 6 s of CPU in release); the
/// other mechanisms run 3000 rounds under every policy above and in the random worlds.
#[test]
fn a_futex_swap_pair_runs_a_million_rounds_without_losing_a_wakeup() {
    let rounds = 1_000_000;
    let mut s = spec(&pingpong(rounds, true, true, true), "smp2", "cfs", &[]);
    s.end = Ns::from_secs(60); // a round is ≈ 19 µs of simulated time
    let r = s.run(&mut |_| true).unwrap();
    assert_eq!(r.end_reason, EndReason::AllExited, "a wakeup was lost");
    // The client sleeps in every swap and once at exit, and is woken by every answer.
    let c = task(&r, "client");
    assert_eq!(c.switches_voluntary, rounds + 1);
    assert_eq!(c.wakeups, rounds);
    // The server is woken by every request and by the client's last wake.
    assert_eq!(task(&r, "server").wakeups, rounds + 1);
    let swaps = r.kernel.counters.iter().find(|(n, _)| n == "futex_swaps").map(|(_, v)| *v);
    assert_eq!(swaps, Some(2 * rounds), "each side swaps once a round");
}

/// With `futex_swap` on the current CPU, client and server share one CPU after the first
/// round: no migration, and each round is exactly two switches (client → server → client),
/// none to or from the idle task (`WF_CURRENT_CPU`, v6.6 `select_task_rq_fair`).
#[test]
fn wake_on_the_current_cpu_keeps_the_pair_on_one_cpu_with_two_switches_a_round() {
    let rounds = 2000;
    // The Linux classes, whose flag this is. (ULE honours it too, but its long-term balancer
    // samples `tdq_load` at random instants and may catch the wakee queued beside the waker
    // for the moment before the switch, and move it.)
    for sched in ["eevdf", "cfs"] {
        // From 1 ms CPUs 1-3 each run a pinned hog, so that no idle CPU pulls the server in
        // the instant between its wakeup and the waker's switch away (an idle CPU's balancer
        // may, as on Linux, where the wakeup and `schedule()` take the lock separately). They
        // start late so that the server does not share a CPU with one before the pair meets:
        // a task whose dequeue EEVDF delayed is woken in place (`ttwu_runnable`), where no
        // wake flag can move it.
        // The client is pinned to CPU 0; where the server runs is up to its wakeups.
        let mut w =
            pingpong(rounds, true, true, false).replace("name = \"client\"\n", "name = \"client\"\naffinity = \"0\"\n");
        for c in 1..4 {
            w += &format!("[[task]]\nname = \"hog{c}\"\naffinity = \"{c}\"\nstart = \"1ms\"\nprogram = [ {{ run = \"100ms\" }} ]\n");
        }
        let (ev, _) = events(&w, "smp4", sched, &[]);
        // The first round trip that both tasks make from their own CPUs ends when the client
        // (task 0) runs the third time (the server may start late, on another CPU).
        let t1 = ev
            .iter()
            .filter_map(|e| match e {
                ProbeEvent::Switch { time, next: Some(0), .. } => Some(*time),
                _ => None,
            })
            .nth(2)
            .unwrap();
        let last =
            ev.iter().rev().find_map(|e| if let ProbeEvent::Exit { time, task: 0 } = e { Some(*time) } else { None });
        let window = |t: Ns| t > t1 && t < last.unwrap();
        let migrations = ev.iter().filter(|e| matches!(e, ProbeEvent::Migrate { time, .. } if window(*time))).count();
        assert_eq!(migrations, 0, "{sched}");
        let pair = |t: &Option<TaskId>| matches!(t, Some(0 | 1));
        let switches: Vec<_> = ev
            .iter()
            .filter(|e| matches!(e, ProbeEvent::Switch { time, prev, next, .. } if window(*time) && (pair(prev) || pair(next))))
            .collect();
        assert!(
            switches.iter().all(|e| matches!(e, ProbeEvent::Switch { prev: Some(_), next: Some(_), .. })),
            "{sched}"
        );
        assert_eq!(switches.len() as u64, 2 * (rounds - 2), "{sched}");
        let cpus: std::collections::BTreeSet<_> =
            switches.iter().map(|e| if let ProbeEvent::Switch { cpu, .. } = e { *cpu } else { 0 }).collect();
        assert_eq!(cpus.len(), 1, "{sched}");
    }
}

/// A pipe write with `current_cpu` wakes the reader onto the writer's CPU (`WF_CURRENT_CPU`
/// from `send`): every wakeup of the unpinned reader lands on CPU 0, where the writer is
/// pinned; without the flag the idle machine wakes it where it last ran, elsewhere.
#[test]
fn a_pipe_write_on_the_current_cpu_places_the_reader_beside_the_writer() {
    let w = |cur: bool| {
        format!(
            r#"
[[pipe]]
name = "p"
[[task]]
name = "writer"
affinity = "0"
program = [ {{ loop = 100, do = [ {{ run = "50us" }}, {{ send = "p", bytes = 8, current_cpu = {cur} }}, {{ sleep = "200us" }} ] }} ]
[[task]]
name = "reader"
program = [ {{ loop = 100, do = [ {{ recv = "p", bytes = 8 }}, {{ run = "20us" }} ] }} ]
"#
        )
    };
    for sched in ["eevdf", "cfs", "ule"] {
        let wakeups = |cur: bool| -> Vec<usize> {
            let (ev, _) = events(&w(cur), "smp4", sched, &[]);
            ev.iter()
                .filter_map(|e| match e {
                    ProbeEvent::Wakeup { task: 1, cpu, new: false, .. } => Some(*cpu),
                    _ => None,
                })
                .collect()
        };
        let on = wakeups(true);
        assert_eq!(on.len(), 100, "{sched}: the reader sleeps once a round");
        assert!(on.iter().all(|&c| c == 0), "{sched}: {on:?}");
        assert!(wakeups(false).iter().any(|&c| c != 0), "{sched}: the flag made no difference");
    }
}

/// The direct switch: each wakee is activated and run on the waker's CPU with no pick in
/// between — its wakeup is immediately followed by the switch to it, on that CPU — and every
/// swap is counted as a direct switch that skipped a pick; per-CPU time (checked after
/// every event) and per-task time (run + wait + sleep = lifetime) stay conserved.
#[test]
fn the_direct_switch_runs_the_wakee_next_without_a_pick_and_conserves_time() {
    let rounds = 2000;
    for sched in ["eevdf", "cfs", "ule", "fifo"] {
        let text = pingpong(rounds, true, true, true);
        let (ev, c) = events(&text, "smp2", sched, &[]);
        assert_eq!(counter(&c, "direct_switches"), 2 * rounds, "{sched}");
        assert_eq!(counter(&c, "picks_skipped"), 2 * rounds, "{sched}");
        assert_eq!(counter(&c, "direct_fallbacks"), 0, "{sched}");
        let mut direct = 0;
        for (i, e) in ev.iter().enumerate() {
            let ProbeEvent::Wakeup { task, cpu, time, new: false } = *e else { continue };
            // The next event on the path is the switch to the wakee on the same CPU, at once.
            if let Some(ProbeEvent::Switch { cpu: c2, next: Some(n), time: t2, .. }) = ev.get(i + 1) {
                if *c2 == cpu && *n == task && *t2 == time {
                    direct += 1;
                }
            }
        }
        // All but the pair's first wakeup (the server's first wait) and the last one.
        assert!(direct >= 2 * rounds - 2, "{sched}: {direct}");
        let r = run(&text, "smp2", sched, &[]);
        for t in &r.tasks {
            let life = t.exit_ns.unwrap() - t.start_ns;
            assert_eq!(t.runtime_ns + t.wait_ns + t.sleep_ns, life, "{sched} {}", t.name);
        }
    }
}

/// A lock held by `holder`, normal waiters arriving at 100 and 200 µs, a VIP at `vip_at`;
/// each waiter holds the lock 1 ms, so the order they exit is the order they got it.
fn vip_world(vip_at: &str, hold: &str) -> String {
    format!(
        r#"
[[mutex]]
name = "m"
[[task]]
name = "holder"
program = [ {{ lock = "m" }}, {{ run = "{hold}" }}, {{ unlock = "m" }} ]
[[task]]
name = "n.0"
start = "100us"
program = [ {{ lock = "m" }}, {{ run = "1ms" }}, {{ unlock = "m" }} ]
[[task]]
name = "n.1"
start = "200us"
program = [ {{ lock = "m" }}, {{ run = "1ms" }}, {{ unlock = "m" }} ]
[[task]]
name = "vip"
vip = true
start = "{vip_at}"
program = [ {{ lock = "m" }}, {{ run = "1ms" }}, {{ unlock = "m" }} ]
"#
    )
}

/// A VIP waiter is granted before earlier normal waiters; with `futex.vip=0` it waits its
/// turn; the starvation guard lets a normal waiter that waited longer than the threshold go
/// first.
#[test]
fn vip_waiters_jump_normal_ones_unless_the_guard_or_the_switch_says_no() {
    let w = vip_world("300us", "2ms");
    let r = run(&w, "smp4", "eevdf", &[]);
    assert!(exit_ns(&r, "vip") < exit_ns(&r, "n.0"), "the VIP goes first");
    assert!(exit_ns(&r, "n.0") < exit_ns(&r, "n.1"));
    let r = run(&w, "smp4", "eevdf", &[("futex.vip", "0")]);
    assert!(exit_ns(&r, "n.1") < exit_ns(&r, "vip"), "VIP off: FIFO");
    // The holder keeps the lock 150 ms; the VIP arrives at 120 ms, when n.0 has waited
    // 119.9 ms (> 100 ms): it queues behind both normal waiters.
    let w = vip_world("120ms", "150ms");
    let r = run(&w, "smp4", "eevdf", &[]);
    assert!(exit_ns(&r, "n.1") < exit_ns(&r, "vip"), "the guard holds the VIP back");
    let r = run(&w, "smp4", "eevdf", &[("futex.vip_starvation_ns", "130000000")]);
    assert!(exit_ns(&r, "vip") < exit_ns(&r, "n.0"), "a longer threshold lets it jump");
}

/// A → B → C: the VIP A waits on m1 held by B, which waits on m2 held by C. B and C get VIP
/// treatment; C loses it when it releases m2, B when it releases m1. With VIP off, nobody.
#[test]
fn vip_inheritance_follows_the_chain_and_is_restored_on_release() {
    let w = r#"
[[mutex]]
name = "m1"
[[mutex]]
name = "m2"
[[task]]
name = "C"
program = [ { lock = "m2" }, { run = "3ms" }, { unlock = "m2" }, { run = "1ms" } ]
[[task]]
name = "B"
start = "100us"
program = [ { lock = "m1" }, { lock = "m2" }, { run = "1ms" }, { unlock = "m2" }, { run = "1ms" }, { unlock = "m1" }, { run = "1ms" } ]
[[task]]
name = "A"
vip = true
start = "500us"
program = [ { lock = "m1" }, { run = "1ms" }, { unlock = "m1" } ]
"#;
    let (ev, c) = events(w, "smp4", "eevdf", &[]);
    let vip: Vec<(TaskId, bool)> = ev
        .iter()
        .filter_map(|e| if let ProbeEvent::VipInherit { task, on, .. } = e { Some((*task, *on)) } else { None })
        .collect();
    // Tasks: C = 0, B = 1. A's wait raises B then C; C's unlock of m2 restores C; B's
    // unlock of m1 restores B.
    assert_eq!(vip, [(1, true), (0, true), (0, false), (1, false)]);
    assert_eq!(counter(&c, "vip_inherits"), 2);
    let (ev, _) = events(w, "smp4", "eevdf", &[("futex.vip", "0")]);
    assert!(!ev.iter().any(|e| matches!(e, ProbeEvent::VipInherit { .. })));
    // A chain bounded at one owner raises B only.
    let (ev, _) = events(w, "smp4", "eevdf", &[("futex.max_lock_depth", "1")]);
    let raised: Vec<TaskId> = ev
        .iter()
        .filter_map(|e| if let ProbeEvent::VipInherit { task, on: true, .. } = e { Some(*task) } else { None })
        .collect();
    assert_eq!(raised, [1]);
}

/// PI futexes: A (nice −10, prio 110) waits on X held by B (nice 0, 120), which waits on Y
/// held by C (nice 5, 125): the boost propagates along the chain (`rt_mutex_adjust_prio_chain`),
/// each owner is de-boosted when it hands its lock over, and ownership is handed to the top
/// waiter (no barging: the word names the new owner before it runs).
#[test]
fn pi_boosts_propagate_along_the_owner_chain_and_end_at_unlock() {
    let w = r#"
[[futex]]
name = "X"
[[futex]]
name = "Y"
[[task]]
name = "C"
nice = 5
program = [ { lock_pi = "Y" }, { run = "3ms" }, { unlock_pi = "Y" }, { run = "1ms" } ]
[[task]]
name = "B"
start = "100us"
program = [ { lock_pi = "X" }, { lock_pi = "Y" }, { run = "1ms" }, { unlock_pi = "Y" }, { run = "1ms" }, { unlock_pi = "X" }, { run = "1ms" } ]
[[task]]
name = "A"
nice = -10
start = "500us"
program = [ { lock_pi = "X" }, { run = "1ms" }, { unlock_pi = "X" } ]
"#;
    let (ev, c) = events(w, "smp4", "eevdf", &[]);
    let prio: Vec<(TaskId, Option<i32>)> = ev
        .iter()
        .filter_map(|e| if let ProbeEvent::PiSetprio { task, prio, .. } = e { Some((*task, *prio)) } else { None })
        .collect();
    // B waits on Y: C inherits B's 120. A waits on X: B gets 110, and C with it. C's unlock
    // hands Y to B (C back to 125); B's unlock of X hands it to A (B back to 120).
    assert_eq!(prio, [(0, Some(120)), (1, Some(110)), (0, Some(110)), (0, None), (1, None)]);
    assert_eq!(counter(&c, "pi_boosts"), 3);
}

/// `FUTEX_WAKE_OP`: the op applies to the second word, waiters of the first are woken, and
/// those of the second only if the comparison of its old value holds.
#[test]
fn wake_op_updates_the_second_word_and_wakes_by_the_comparison() {
    let w = |cmp: &str| {
        format!(
            r#"
[[futex]]
name = "a"
[[futex]]
name = "b"
[[task]]
name = "wa"
program = [ {{ futex_wait = "a", expected = 0 }} ]
[[task]]
name = "wb"
program = [ {{ futex_wait = "b", expected = 0 }}, {{ futex_wait = "b", expected = 5 }} ]
[[task]]
name = "op"
start = "1ms"
program = [ {{ futex_set = "a", value = 1 }}, {{ futex_wake_op = "a", word2 = "b", op = "add", oparg = 5, cmp = "{cmp}", cmparg = 0 }}, {{ sleep = "1ms" }}, {{ futex_set = "b", value = 7 }}, {{ futex_wake = "b" }} ]
"#
        )
    };
    // cmp holds (old b = 0 == 0): wb is woken by the op, finds b = 5, waits again, and the
    // final wake releases it: two wakeups. cmp fails: only the final wake, which finds b = 7.
    let r = run(&w("eq"), "smp4", "cfs", &[]);
    assert_eq!(task(&r, "wb").wakeups, 2);
    let r = run(&w("ne"), "smp4", "cfs", &[]);
    assert_eq!(task(&r, "wb").wakeups, 1);
    assert_eq!(task(&r, "wa").wakeups, 1);
}

/// Kernel switches are checked: an unknown one or a value out of range is an input error.
#[test]
fn futex_switches_are_validated() {
    let w = pingpong(10, true, false, false);
    for (k, v) in [("futex.nope", "1"), ("futex.vip", "2"), ("futex.max_lock_depth", "0")] {
        let mut s = spec(&w, "smp2", "cfs", &[]);
        let err = s.set(k, v).unwrap_err();
        assert!(matches!(err, schedlab_run::RunError::Input(ref m) if m.contains(k)), "{k}={v}: {err}");
    }
}

/// `__futex_queue` ranks waiters by `min(normal_prio, MAX_RT_PRIO)`: a deadline waiter
/// (prio −1) first, then real-time ones by priority (FIFO 50 = 49 before FIFO 10 = 89),
/// then normal ones in arrival order — whatever order they queued in.
#[test]
fn futex_wakes_deadline_then_rt_by_priority_then_normal_waiters() {
    let wait = r#"program = [ { futex_wait = "f", expected = 0 } ]"#;
    let w = format!(
        r#"
[[futex]]
name = "f"
[[task]]
name = "n0"
start = "0us"
{wait}
[[task]]
name = "r10"
policy = "fifo"
rt_priority = 10
start = "100us"
{wait}
[[task]]
name = "r50"
policy = "rr"
rt_priority = 50
start = "200us"
{wait}
[[task]]
name = "d"
policy = "deadline"
runtime = "1ms"
period = "10ms"
start = "300us"
{wait}
[[task]]
name = "n1"
nice = -20
start = "400us"
{wait}
[[task]]
name = "main"
start = "1ms"
program = [ {{ futex_set = "f", value = 1 }}, {{ loop = 5, do = [ {{ futex_wake = "f", count = 1 }}, {{ sleep = "1ms" }} ] }} ]
"#
    );
    let (ev, _) = events(&w, "smp4", "eevdf", &[]);
    let woken: Vec<TaskId> = ev
        .iter()
        .filter_map(|e| if let ProbeEvent::Waking { task, .. } = e { Some(*task).filter(|&t| t < 5) } else { None })
        .collect();
    // n0 = 0, r10 = 1, r50 = 2, d = 3, n1 = 4; nice does not rank normal waiters.
    assert_eq!(woken, [3, 2, 1, 0, 4]);
}

/// The PI scenario of the two tests below: L (policy `l_policy`) holds X on CPU 0 for 3 ms;
/// H (FIFO 50, CPU 1) locks `h_word` at 0.5 ms; M (FIFO 30, CPU 0) wakes at 1 ms for 5 ms;
/// a normal task holds Y on CPU 2 for 20 ms; `extra` adds tasks.
fn pi_world(l_policy: &str, extra: &str, h_word: &str) -> String {
    format!(
        r#"
[[futex]]
name = "X"
[[futex]]
name = "Y"
[[task]]
name = "L"
{l_policy}affinity = "0"
program = [ {{ lock_pi = "X" }}, {{ run = "3ms" }}, {{ unlock_pi = "X" }}, {{ run = "1ms" }} ]
{extra}[[task]]
name = "H"
policy = "fifo"
rt_priority = 50
affinity = "1"
start = "500us"
program = [ {{ lock_pi = "{h_word}" }}, {{ run = "100us" }}, {{ unlock_pi = "{h_word}" }} ]
[[task]]
name = "M"
policy = "fifo"
rt_priority = 30
affinity = "0"
program = [ {{ sleep = "1ms" }}, {{ run = "5ms" }} ]
[[task]]
name = "Y-holder"
affinity = "2"
program = [ {{ lock_pi = "Y" }}, {{ run = "20ms" }}, {{ unlock_pi = "Y" }} ]
"#
    )
}

/// PI boosts a low-priority real-time owner (`rt_mutex_adjust_prio_chain`): L (FIFO 10)
/// holds X on CPU 0; H (FIFO 50, CPU 1) blocks on X, so L runs at H's priority and the FIFO
/// 30 hog M that wakes on CPU 0 at 1 ms cannot preempt it until L unlocks; then L drops back
/// to 10 and M runs. When H waits on another word, nothing boosts L and M preempts it at 1 ms.
#[test]
fn pi_boosts_a_low_priority_rt_owner_over_a_middle_priority_hog() {
    let world = |h_word: &str| pi_world("policy = \"fifo\"\nrt_priority = 10\n", "", h_word);
    let (ev, _) = events(&world("X"), "smp4", "eevdf", &[]);
    let boosts: Vec<(TaskId, Option<i32>)> = ev
        .iter()
        .filter_map(|e| if let ProbeEvent::PiSetprio { task, prio, .. } = e { Some((*task, *prio)) } else { None })
        .collect();
    // L (task 0) runs at FIFO 50's kernel prio 99 − 50 = 49 until it unlocks.
    let l = 0;
    assert_eq!(boosts, [(l, Some(49)), (l, None)]);
    let r = run(&world("X"), "smp4", "eevdf", &[]);
    let (l, h, m) = (exit_ns(&r, "L"), exit_ns(&r, "H"), exit_ns(&r, "M"));
    // M starts at 1 ms and needs 5 ms: H got X (at L's unlock, ~3 ms) before M could end,
    // and L's last 1 ms ran after M.
    assert!(h < 6_000_000 && h < m && m < l, "L {l} H {h} M {m}");
    // Unboosted (H waits on Y, held by a normal task elsewhere): M preempts L at 1 ms.
    let r = run(&world("Y"), "smp4", "eevdf", &[]);
    let l_unboosted = exit_ns(&r, "L");
    let (l_ran, m) = (task(&r, "L").runtime_ns, exit_ns(&r, "M"));
    assert!(m < 6_200_000 && l_unboosted > m && l_ran >= 4_000_000, "L {l_unboosted} M {m}");
}

/// PI across classes (`rt_mutex_setprio`, `core.c`, v6.12): a normal owner L of X, sharing
/// CPU 0 with a fair task F from 0.1 ms, inherits the FIFO 50 priority of H (CPU 1) that blocks on X at
/// 0.5 ms, and so leaves the fair class: it runs ahead of F and a FIFO 30 task M waking on
/// CPU 0 at 1 ms cannot preempt it until it unlocks; H then gets X within about 3.5 ms.
/// Unboosted (H waits on another word), M preempts the fair L at 1 ms and H waits for L.
#[test]
fn pi_lifts_a_normal_owner_into_the_rt_class() {
    let world = |h_word: &str| {
        pi_world(
            "",
            "[[task]]\nname = \"F\"\naffinity = \"0\"\nstart = \"100us\"\nprogram = [ { run = \"20ms\" } ]\n",
            h_word,
        )
    };
    for sched in ["cfs", "eevdf"] {
        let (ev, _) = events(&world("X"), "smp4", sched, &[]);
        let boosts: Vec<(TaskId, Option<i32>)> = ev
            .iter()
            .filter_map(|e| if let ProbeEvent::PiSetprio { task, prio, .. } = e { Some((*task, *prio)) } else { None })
            .collect();
        assert_eq!(boosts, [(0, Some(49)), (0, None)], "{sched}");
        let r = run(&world("X"), "smp4", sched, &[]);
        let (h, m) = (exit_ns(&r, "H"), exit_ns(&r, "M"));
        // L ran at least 0.1 ms before the boost, then the rest of its 3 ms alone.
        assert!(h < 3_700_000 && h < m, "{sched}: H {h} M {m}");
        let r = run(&world("Y"), "smp4", sched, &[]);
        let (l, m) = (exit_ns(&r, "L"), exit_ns(&r, "M"));
        assert!(l > m, "{sched}: unboosted, the fair L ({l}) finished before the FIFO M ({m})");
    }
}

/// A deadline waiter lends its reservation, not just a priority (`rt_mutex_setprio`,
/// `core.c` v6.12: `p->dl.pi_se = pi_task->dl.pi_se`): the fair owner `L` of a PI lock
/// that the deadline task `D` waits for runs in the deadline class with `D`'s 5 ms
/// deadline, so it goes ahead of `E`, a deadline task of 100 ms deadline on its CPU, and
/// its 3 ms critical section outlasts `D`'s 1 ms runtime without a throttle (a boosted
/// entity is replenished at once, `update_curr_dl_se`). As FIFO 99 it would wait for `E`'s
/// 8 ms, and `D` would get the lock after about 11 ms instead of 3.
#[test]
fn a_deadline_waiter_lends_its_reservation_to_the_lock_owner() {
    let text = r#"
[[futex]]
name = "X"
[[task]]
name = "L"
affinity = "0"
program = [ { lock_pi = "X" }, { run = "3ms" }, { unlock_pi = "X" }, { run = "1ms" } ]
[[task]]
name = "E"
policy = "deadline"
runtime = "8ms"
deadline = "100ms"
period = "100ms"
affinity = "0"
start = "1ms"
program = [ { run = "8ms" } ]
[[task]]
name = "D"
policy = "deadline"
runtime = "1ms"
deadline = "5ms"
period = "10ms"
affinity = "1"
start = "500us"
program = [ { lock_pi = "X" }, { run = "100us" }, { unlock_pi = "X" } ]
"#;
    for sched in ["cfs", "eevdf"] {
        let (ev, _) = events(text, "smp2", sched, &[]);
        let boosts: Vec<(TaskId, Option<i32>)> = ev
            .iter()
            .filter_map(|e| if let ProbeEvent::PiSetprio { task, prio, .. } = e { Some((*task, *prio)) } else { None })
            .collect();
        assert_eq!(boosts, [(0, Some(-1)), (0, None)], "{sched}");
        let r = run(text, "smp2", sched, &[]);
        let (d, e) = (exit_ns(&r, "D"), exit_ns(&r, "E"));
        assert!(d < 4_000_000, "{sched}: D got the lock late ({d} ns): L did not run on D's reservation");
        assert!(e > d, "{sched}: E ({e}) before D ({d})");
        assert_eq!(task(&r, "L").runtime_ns / 1_000_000, 4, "{sched}: L's demand is unchanged");
    }
}
