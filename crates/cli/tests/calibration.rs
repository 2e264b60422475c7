//! `schedlab calibrate` solves each cost from a host benchmark with the simulator's formula
//! for that benchmark (`schedlab_calibrate::model`). These tests simulate each benchmark
//! with distinct costs under CFS and EEVDF and check the formula against the simulation, so
//! a calibrated machine reproduces the host's times by construction.

mod common;
use common::*;
use schedlab_calibrate::model;
use schedlab_machine::{Costs, Machine};
use schedlab_probe::{Probe, ProbeEvent};
use schedlab_run::RunSpec as Job;
use schedlab_sim::Ns;
use std::sync::Arc;

/// Distinct values, so that a formula naming the wrong cost cannot pass by coincidence.
fn odd_costs() -> Costs {
    Costs {
        syscall: Ns(101),
        context_switch: Ns(1307),
        schedule: Ns(311),
        ttwu_local: Ns(263),
        ttwu_remote: Ns(617),
        ttwu_activate: Ns(241),
        wake_up_new_task: Ns(509),
        fork: Ns(15_013),
        exit: Ns(5_003),
        ipi_latency: Ns(1_021),
        idle_exit: Ns(1_733),
        tick: Ns(307),
        timer_irq: Ns(211),
        hrtimer_start: Ns(251),
        timer_slack: Ns(50_000),
        futex: Ns(151),
        futex_bucket_hold: Ns(83),
        pipe_op: Ns(401),
        pipe_byte_ps: 97,
        migrate: Ns(1_009),
        rewarm_same_llc: Ns(2_003),
        rewarm_cross_llc: Ns(20_011),
        numa_scaled: true,
        // Line transfers and policy work are inside the measured path costs (see `derive`).
        ..Costs::zero()
    }
}

/// The fair policies the formulas are checked under: v5.15 CFS and EEVDF (the host's).
const SCHEDS: [&str; 2] = ["cfs", "eevdf"];

/// On the constant-cost machine (`flat`): `calibrate`'s path formulas (`model.rs`) are
/// sums of the per-path constants it fits; the full model's idle states, line transfers
/// and frequencies come from their own benchmarks and tables.
fn job_odd(sched: &str, text: &str) -> Job {
    let mut j = job(text, "smp2", sched, 5, &[]);
    j.machine =
        Arc::new(Machine { costs: odd_costs(), cost_model: schedlab_machine::CostModel::Flat, ..(*j.machine).clone() });
    j
}

/// Switch-ins (time, CPU, task) and exits (time, task).
#[derive(Default)]
struct Events {
    ins: Vec<(Ns, usize, usize)>,
    exits: Vec<(Ns, usize)>,
}
impl Probe for Events {
    fn event(&mut self, ev: &ProbeEvent) {
        match *ev {
            ProbeEvent::Switch { time, cpu, next: Some(n), .. } => self.ins.push((time, cpu, n)),
            ProbeEvent::Exit { time, task } => self.exits.push((time, task)),
            _ => {}
        }
    }
}
impl Events {
    fn of(j: &Job) -> Events {
        let mut e = Events::default();
        run_with_probe(j, &mut e);
        e
    }
    fn ins_of(&self, task: usize) -> Vec<Ns> {
        self.ins.iter().filter(|e| e.2 == task).map(|e| e.0).collect()
    }
}

fn exit_of(j: &Job, name: &str) -> Ns {
    Ns(task(&run(j), name).exit_ns.expect("the task exits"))
}

/// `sched_yield` alone on a CPU: each costs the syscall and two `schedule` holds.
#[test]
fn yield_alone_matches_the_model() {
    let w = |n: u64| {
        format!("[[task]]\nname = \"y\"\naffinity = [0]\nprogram = [ {{ loop = {n}, do = [ \"yield\" ] }} ]\n")
    };
    for sched in SCHEDS {
        let per = exit_of(&job_odd(sched, &w(60)), "y") - exit_of(&job_odd(sched, &w(30)), "y");
        assert_eq!(per, Ns(30 * model::yield_alone(&odd_costs()).0), "{sched}");
    }
}

/// Two tasks yielding in turn on one CPU: each yield switches to the other. Under EEVDF
/// (`yield_task_fair` pushes the yielder's deadline a slice ahead), as on the host; CFS's
/// skip buddy does not switch while the other task's vruntime is far ahead.
#[test]
fn yield_pair_matches_the_model() {
    let w = |n: u64| {
        format!(
            "[[task]]\nname = \"y\"\ncount = 2\naffinity = [0]\nprogram = [ {{ loop = {n}, do = [ \"yield\" ] }} ]\n"
        )
    };
    // 30 more yields of each: 60 yields.
    let per = exit_of(&job_odd("eevdf", &w(60)), "y.1") - exit_of(&job_odd("eevdf", &w(30)), "y.1");
    assert_eq!(per, Ns(60 * model::yield_switch(&odd_costs()).0));
}

/// A 1-byte pipe ping-pong of `n` round trips between `a` on CPU 0 and `b` on `b_cpu`,
/// both `SCHED_BATCH` as on the host: a wakeup then never preempts the writer
/// (`check_preempt_wakeup` returns early for a non-normal wakee), so every handoff takes
/// the same path.
fn ping_pong(n: u32, b_cpu: usize) -> String {
    format!(
        r#"
[[pipe]]
name = "p"
count = 2
[[task]]
name = "a"
affinity = [0]
policy = "batch"
program = [ {{ loop = {n}, do = [ {{ send = "p.0", bytes = 1 }}, {{ recv = "p.1", bytes = 1 }} ] }} ]
[[task]]
name = "b"
affinity = [{b_cpu}]
policy = "batch"
program = [ {{ loop = {n}, do = [ {{ recv = "p.0", bytes = 1 }}, {{ send = "p.1", bytes = 1 }} ] }} ]
"#
    )
}

/// Pinned to one CPU: 30 more round trips take 60 handoffs.
#[test]
fn pinned_ping_pong_matches_the_model() {
    for sched in SCHEDS {
        let run_n = |n| exit_of(&job_odd(sched, &ping_pong(n, 0)), "a");
        assert_eq!(run_n(60) - run_n(30), Ns(60 * model::pinned_handoff(&odd_costs()).0), "{sched}");
    }
}

/// Across two CPUs: the reader's CPU is idle when each byte arrives.
#[test]
fn remote_ping_pong_matches_the_model() {
    for sched in SCHEDS {
        let run_n = |n| exit_of(&job_odd(sched, &ping_pong(n, 1)), "a");
        assert_eq!(run_n(60) - run_n(30), Ns(60 * model::remote_handoff(&odd_costs()).0), "{sched}");
    }
}

/// `loops` times, `a` (CPU 0) sleeps 5 ms, then signals a condition variable `b` (CPU 1)
/// waits on.
fn cond_text(loops: u32) -> String {
    format!(
        r#"
[[mutex]]
name = "m"
[[cond]]
name = "c"
[[task]]
name = "a"
affinity = [0]
program = [ {{ loop = {loops}, do = [ {{ sleep = "5ms" }}, {{ lock = "m" }}, {{ signal = "c" }}, {{ unlock = "m" }} ] }} ]
[[task]]
name = "b"
affinity = [1]
program = [ {{ lock = "m" }}, {{ loop = {loops}, do = [ {{ cond_wait = "c", mutex = "m" }} ] }}, {{ unlock = "m" }} ]
"#
    )
}

/// `cond_text(5)`; `hog` keeps CPU 1 busy or not.
fn cond_wakeups(sched: &str, hog: bool) -> Vec<Ns> {
    let mut text = cond_text(5);
    if hog {
        text.push_str("[[task]]\nname = \"hog\"\naffinity = [1]\nprogram = [ { run = \"1s\" } ]\n");
    }
    let e = Events::of(&job_odd(sched, &text));
    let (a, b) = (e.ins_of(0), e.ins_of(1));
    // The k-th wakeup of each (index 0 is the start): `a` runs its signal right after the
    // switch, `b` its code right after its own; the difference is the wakeup latency.
    let first_b_wake = b.iter().position(|&t| t > a[1]).expect("b wakes");
    (1..a.len()).map(|k| b[first_b_wake + k - 1] - a[k]).collect()
}

/// A futex wakeup of an idle CPU: wake list, IPI, idle exit, `sched_ttwu_pending`.
#[test]
fn idle_cpu_wakeup_matches_the_model() {
    let lat = model::idle_wake_latency(&odd_costs());
    for sched in SCHEDS {
        assert_eq!(cond_wakeups(sched, false), vec![lat; 5], "{sched}");
    }
}

/// A futex wakeup of a CPU running a task the wakee preempts: remote activation, then a
/// reschedule IPI.
#[test]
fn busy_cpu_wakeup_matches_the_model() {
    let lat = model::busy_wake_latency(&odd_costs());
    // The first wakeup comes before the hog's vruntime is far enough ahead of the sleeper's
    // for wakeup preemption; the tick preempts the hog then.
    for sched in SCHEDS {
        assert_eq!(cond_wakeups(sched, true)[1..], vec![lat; 4], "{sched}");
    }
}

const FORK_JOIN: &str = r#"
[[task]]
name = "main"
affinity = [0]
program = [ { loop = "$n", do = [ { fork = "w" }, "wait" ] } ]
[[task]]
name = "w"
template = true
program = [ "exit" ]
"#;

/// Creating and joining a thread on one CPU: `clone` (`thread_create`), the creator's
/// `wait` switching to the child, the child's exit waking the creator
/// (`thread_exit_to_join`).
#[test]
fn thread_create_and_exit_match_the_model() {
    let c = odd_costs();
    let text = |n: &str| FORK_JOIN.replace("\"$n\"", n);
    for sched in SCHEDS {
        let per = exit_of(&job_odd(sched, &text("20")), "main") - exit_of(&job_odd(sched, &text("10")), "main");
        let wait_and_switch = c.syscall + c.schedule + c.context_switch;
        let round = model::thread_create(&c) + wait_and_switch + model::thread_exit_to_join(&c);
        assert_eq!(per, Ns(10 * round.0), "{sched}");
        // From a child's exit to its creator switching in: the local wakeup.
        let e = Events::of(&job_odd(sched, &text("3")));
        let creator = e.ins_of(0);
        for (i, (t, _)) in e.exits.iter().filter(|(_, task)| *task != 0).enumerate() {
            assert_eq!(creator[i + 1] - *t, c.ttwu_local + c.ttwu_activate, "{sched}");
        }
    }
}

/// A guest with the hypervisor's states calibrate writes (one per idle length, its exit
/// the one measured after it), or without them.
fn guest_job(text: &str, hypervisor: bool) -> Job {
    let mut j = job(text, "vm", "eevdf", 5, &[]);
    let mut m = (*j.machine).clone();
    m.noise = schedlab_machine::Noise::NONE;
    if hypervisor {
        let exits = [(10_000, 1_000), (100_000, 5_000), (3_000_000, 40_000)].map(|(idle_ns, exit_ns)| {
            schedlab_calibrate::data::IdleExit {
                idle_ns,
                latency: schedlab_calibrate::bench::Measured { median: 0, reps: 1 },
                exit_ns,
            }
        });
        m.idle.hypervisor_states = schedlab_calibrate::data::hypervisor_states(&exits);
    }
    j.machine = Arc::new(m);
    j
}

/// The idle-length-dependent exit of a guest's halt, through the kernel model: `b`'s CPU
/// idles 5 ms before each of 12 wakeups, so the hypervisor's menu takes the shallowest
/// state while its history is empty (a fresh CPU predicts 0) and the 3 ms one once its
/// typical interval is 5 ms; each wakeup costs that state's exit more than on the same
/// guest without hypervisor states (everything else alike).
#[test]
fn a_guest_halt_pays_the_hypervisor_state_of_its_predicted_length() {
    let text = &cond_text(12);
    let lat = |hv: bool| {
        let e = Events::of(&guest_job(text, hv));
        let (a, b) = (e.ins_of(0), e.ins_of(1));
        let first = b.iter().position(|&t| t > a[1]).expect("b wakes");
        (1..a.len()).map(|k| b[first + k - 1] - a[k]).collect::<Vec<Ns>>()
    };
    let (with, without) = (lat(true), lat(false));
    let extra: Vec<u64> = with.iter().zip(&without).map(|(w, o)| (w.0 - o.0) / 1000).collect();
    assert_eq!(extra.len(), 12);
    assert_eq!(extra[0], 1, "the first halt: nothing learned, the shallowest state; {extra:?}");
    assert!(extra[11] == 40, "5 ms halts as the typical interval: the 3 ms state; {extra:?}");
}
