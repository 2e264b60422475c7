//! The rt and deadline classes in the class chain (`kernel/sched/core.c`, `rt.c`,
//! `deadline.c`, v6.12 and v5.15): class order, FIFO/RR, push/pull, rt throttling and the
//! fair server, CBS throttling, admission control and EDF. Every run checks invariants.

mod common;
use common::*;
use schedlab_sim::Ns;

const MS: u64 = 1_000_000;

fn rt_task(name: &str, policy: &str, prio: u32, cpus: &str, start: &str, body: &str) -> String {
    format!(
        "[[task]]\nname = \"{name}\"\npolicy = \"{policy}\"\nrt_priority = {prio}\naffinity = \"{cpus}\"\nstart = \"{start}\"\nprogram = [ {body} ]\n"
    )
}

fn fair_hog(name: &str, cpus: &str) -> String {
    format!("[[task]]\nname = \"{name}\"\naffinity = \"{cpus}\"\nprogram = [ {{ run = \"100s\" }} ]\n")
}

/// A periodic task: `run` then sleep until the next multiple of `period` (rt-app style).
fn periodic(run: &str, period: &str) -> String {
    format!("{{ loop = \"forever\", do = [ {{ run = \"{run}\" }}, {{ timer = \"{period}\" }} ] }}")
}

fn counter(r: &schedlab_metrics::RunRecord, name: &str) -> u64 {
    *r.policy_counters.get(name).unwrap_or_else(|| panic!("no counter {name}"))
}

/// A waking FIFO task preempts a fair hog at once (`wakeup_preempt`: a higher class
/// reschedules unconditionally); its wakeup latency is the kernel path, not a slice.
#[test]
fn waking_fifo_preempts_fair_at_once() {
    for sched in ["cfs", "eevdf"] {
        let w = fair_hog("fair", "0") + &rt_task("rt", "fifo", 10, "0", "0", &periodic("1ms", "10ms"));
        let r = run(&job(&w, "smp2", sched, 1, &[]));
        let lat = task(&r, "rt").wakeup_latency_ns.clone();
        assert!(task(&r, "rt").wakeups > 90, "{sched}: the rt task woke every 10 ms");
        assert!(lat.max < 100_000, "{sched}: a FIFO wakeup waited {} ns behind a fair task", lat.max);
    }
}

/// The first run of `t` on `cpu` at or after `from`.
fn first_run(sw: &Switches, cpu: usize, t: usize, from: u64) -> Option<u64> {
    sw.0.iter().find(|&&(time, c, _, next)| c == cpu && next == Some(t) && time.0 >= from).map(|s| s.0 .0)
}

/// A task the workload starts (no fork, no wakeup) preempts a lower class at once:
/// `wake_up_new_task` → `wakeup_preempt` → `resched_curr`, an IPI to the busy CPU
/// (`kernel/sched/core.c`, v6.12). Started between ticks (HZ = 250: 4 ms apart), an rt
/// task beside a fair hog and a deadline task beside a FIFO hog run within the wakeup
/// path, not at the next tick.
#[test]
fn a_started_task_preempts_a_lower_class_in_the_wakeup_path() {
    let rt = rt_task("new", "fifo", 10, "0", "1ms", "{ run = \"1ms\" }");
    let dl = "[[task]]\nname = \"new\"\npolicy = \"deadline\"\nruntime = \"2ms\"\nperiod = \"10ms\"\naffinity = \"0\"\nstart = \"1ms\"\nprogram = [ { run = \"1ms\" } ]\n";
    let cases = [
        ("cfs", fair_hog("hog", "0") + &rt),
        ("eevdf", fair_hog("hog", "0") + &rt),
        ("eevdf", rt_task("hog", "fifo", 99, "0", "0", "{ run = \"100s\" }") + dl),
    ];
    for (sched, w) in &cases {
        for start in ["1ms", "2300us", "3100us"] {
            let w = w.replace("start = \"1ms\"", &format!("start = \"{start}\""));
            let at = schedlab_sim::parse_duration(start).unwrap().0;
            let mut sw = Switches::default();
            run_with_probe(&job(&w, "smp2", sched, 1, &[("rt_bandwidth", "none")]), &mut sw);
            let first = first_run(&sw, 0, 1, 0).expect("the started task ran");
            assert!(first >= at && first - at < 50_000, "{sched}: started at {at} ns, first ran at {first} ns");
        }
    }
}

/// `check_preempt_equal_prio` (`rt.c`, v6.12): a FIFO task woken at the running task's
/// priority, pinned to this CPU, while the running one could run on a CPU with only fair
/// work, takes this CPU and the running one is pushed there; both run. With the running
/// task pinned as well, the wakee waits (FIFO never round-robins).
#[test]
fn equal_priority_wakee_pinned_here_pushes_the_running_task_away() {
    let body = "{ sleep = \"5ms\" }, { run = \"100s\" }";
    let w = |running_cpus: &str| {
        rt_task("running", "fifo", 10, running_cpus, "1ms", "{ run = \"100s\" }")
            + &rt_task("wakee", "fifo", 10, "0", "0", body)
            + &fair_hog("fair", "1")
    };
    let r = run(&job(&w("0-1"), "smp2", "eevdf", 1, &[("rt_bandwidth", "none")]));
    for t in ["running", "wakee"] {
        assert!(task(&r, t).runtime_ns > 950 * MS, "{t} ran {} ns", task(&r, t).runtime_ns);
    }
    assert!(task(&r, "wakee").wakeup_latency_ns.max < 100_000);
    assert!(counter(&r, "rt_pushes") >= 1);
    let r = run(&job(&w("0"), "smp2", "eevdf", 1, &[("rt_bandwidth", "none")]));
    let w = task(&r, "wakee").runtime_ns;
    assert!(w < MS, "a pinned running task keeps its CPU; the wakee ran {w} ns");
}

/// A waking deadline task preempts a FIFO hog (deadline is above rt), and the FIFO hog
/// runs whenever the deadline task does not.
#[test]
fn deadline_preempts_fifo() {
    let w = rt_task("fifo", "fifo", 99, "0", "0", "{ run = \"100s\" }")
        + "[[task]]\nname = \"dl\"\npolicy = \"deadline\"\nruntime = \"2ms\"\nperiod = \"10ms\"\naffinity = \"0\"\n"
        + &format!("program = [ {} ]\n", periodic("1ms", "10ms"));
    let r = run(&job(&w, "smp2", "eevdf", 1, &[]));
    let dl = task(&r, "dl");
    assert!(dl.wakeups > 90 && dl.wakeup_latency_ns.max < 100_000, "dl waited {} ns", dl.wakeup_latency_ns.max);
    let fifo = task(&r, "fifo").runtime_ns;
    assert!(fifo > 850 * MS, "the FIFO task had the rest: {fifo} ns");
}

/// With neither throttling nor the fair server, a fair task never runs while an rt task
/// is runnable on its CPU; with one, it gets about 5 % (`sched_rt_runtime_us` 950 000 of
/// 1 000 000 before v6.12; the fair server's 50 ms per second from v6.12).
#[test]
fn fair_runs_only_when_no_rt_is_runnable_up_to_the_bandwidth_limit() {
    // The hog sleeps first, so the fair task has run before it: a 10 ms head start.
    let hog = "{ sleep = \"10ms\" }, { run = \"100s\" }";
    let w = fair_hog("fair", "0") + &rt_task("hog", "fifo", 50, "0", "0", hog);
    let none = run(&job(&w, "smp2", "eevdf", 3, &[("rt_bandwidth", "none")]));
    let f = task(&none, "fair").runtime_ns;
    assert!(f <= 10 * MS + 100_000, "fair ran {f} ns beside an unthrottled hog");
    for (sched, what) in
        [("cfs", "throttling"), ("eevdf@6.6", "throttling"), ("eevdf@6.12", "fair server"), ("eevdf", "fair server")]
    {
        let r = run(&job(&w, "smp2", sched, 4, &[]));
        let fair = task(&r, "fair").runtime_ns as f64 / (4000 * MS) as f64;
        assert!((0.04..=0.065).contains(&fair), "{sched} ({what}): fair got {:.2} % of the CPU", fair * 100.0);
        let c = if what == "throttling" { "rt_throttled" } else { "fair_server_activations" };
        assert!(counter(&r, c) >= 3, "{sched}: {c} = {}", counter(&r, c));
    }
}

/// `SCHED_RR` tasks of equal priority alternate every `sched_rr_timeslice_ms` (100 ms,
/// counted in ticks); `SCHED_FIFO` ones never do (`rt.c:task_tick_rt`).
#[test]
fn rr_alternates_every_timeslice_fifo_never() {
    let body = "{ run = \"100s\" }";
    let w = rt_task("a", "rr", 5, "0", "0", body) + &rt_task("b", "rr", 5, "0", "0", body);
    let j = job(&w, "smp2", "eevdf", 1, &[("rt_bandwidth", "none")]);
    let mut sw = Switches::default();
    run_with_probe(&j, &mut sw);
    let tick = 4 * MS; // HZ = 250
    for t in [0, 1] {
        let b = bursts(&sw, 0, t);
        assert!(b.len() >= 4, "task {t} ran {} times", b.len());
        for x in &b[..b.len() - 1] {
            assert!(x.0.abs_diff(100 * MS) <= tick, "an RR burst of {x} instead of 100 ms");
        }
    }
    let w = rt_task("a", "fifo", 5, "0", "0", body) + &rt_task("b", "fifo", 5, "0", "0", body);
    let r = run(&job(&w, "smp2", "eevdf", 1, &[("rt_bandwidth", "none")]));
    assert_eq!(task(&r, "b").runtime_ns, 0, "a FIFO task waited behind an equal one");
    assert!(task(&r, "a").switches_involuntary == 0);
}

/// Push/pull keeps the N highest-priority runnable rt tasks on the N CPUs, whatever CPU
/// they start on (`push_rt_task`, `pull_rt_task`, `select_task_rq_rt`), with and without
/// `RT_PUSH_IPI`.
#[test]
fn push_pull_runs_the_n_highest_rt_tasks() {
    let mut w = String::new();
    for (i, prio) in [10, 20, 30, 40, 50, 60].iter().enumerate() {
        let start = format!("{}ms", i * 3);
        w += &rt_task(&format!("p{prio}"), "fifo", *prio, "0-3", &start, "{ run = \"100s\" }");
    }
    for ipi in ["1", "0"] {
        let r = run(&job(&w, "smp4", "eevdf", 1, &[("rt_bandwidth", "none"), ("rt_push_ipi", ipi)]));
        for top in ["p30", "p40", "p50", "p60"] {
            assert!(
                task(&r, top).runtime_ns > 950 * MS,
                "rt_push_ipi={ipi}: {top} ran {} ns",
                task(&r, top).runtime_ns
            );
        }
        for low in ["p10", "p20"] {
            assert!(task(&r, low).runtime_ns < 30 * MS, "rt_push_ipi={ipi}: {low} ran {} ns", task(&r, low).runtime_ns);
        }
    }
}

/// `pull_rt_task` takes from an overloaded CPU the best waiting task that may run on the
/// pulling CPU (`pick_highest_pushable_task`, `rt.c`, v6.12), passing over a better one
/// whose affinity excludes it. On 4 CPUs: CPU 2 runs a pinned FIFO 90 with `a` (FIFO 80,
/// CPUs 1-2) and `b` (FIFO 70, CPUs 0,2) waiting; CPUs 0, 1 and 3 run pinned FIFO 95
/// tasks. When CPU 0's task exits at 20 ms, CPU 0 pulls `b` (CPU 1 stays busy, so `a`
/// waits). With `RT_PUSH_IPI` CPU 0 pulls nothing and asks CPU 2 to push; `push_rt_tasks`
/// stops at its best pushable task `a`, which has nowhere to go, so `b` stays stranded —
/// the kernel's behaviour too.
#[test]
fn rt_pull_takes_the_best_task_allowed_on_the_pulling_cpu() {
    let w = rt_task("r0", "fifo", 95, "0", "0", "{ run = \"20ms\" }")
        + &rt_task("r1", "fifo", 95, "1", "0", "{ run = \"100s\" }")
        + &rt_task("h2", "fifo", 90, "2", "1ms", "{ run = \"100s\" }")
        + &rt_task("a", "fifo", 80, "2", "0", "{ set_affinity = \"1-2\" }, { sleep = \"2ms\" }, { run = \"100s\" }")
        + &rt_task("b", "fifo", 70, "2", "0", "{ set_affinity = \"0,2\" }, { sleep = \"2ms\" }, { run = \"100s\" }")
        + &rt_task("r3", "fifo", 95, "3", "0", "{ run = \"100s\" }");
    for sched in ["cfs", "eevdf"] {
        let r = run(&job(&w, "smp4", sched, 1, &[("rt_bandwidth", "none"), ("rt_push_ipi", "0")]));
        let (a, b) = (task(&r, "a").runtime_ns, task(&r, "b").runtime_ns);
        assert!(b > 970 * MS, "{sched}: b was not pulled to CPU 0 (ran {b} ns)");
        assert!(a < MS, "{sched}: a ran {a} ns though no CPU it may use was free");
        assert!(counter(&r, "rt_pulls") >= 1, "{sched}: no pull counted");
        let r = run(&job(&w, "smp4", sched, 1, &[("rt_bandwidth", "none"), ("rt_push_ipi", "1")]));
        let b = task(&r, "b").runtime_ns;
        assert!(b < MS, "{sched}: with RT_PUSH_IPI the push stops at a; b ran {b} ns");
    }
}

/// `pull_dl_task` likewise takes the earliest waiting deadline task that may run on the
/// pulling CPU (`pick_earliest_pushable_dl_task`, `deadline.c`, v6.12). On 4 CPUs: CPU 2
/// runs a pinned deadline task (9 ms per 10 ms, from 1 ms) with `a` (due every 50 ms, CPUs
/// 1-2) and `b` (due every 100 ms, CPUs 0,2) waiting from 2 ms; CPUs 1 and 3 run pinned
/// ones (18 ms per 20 ms). When CPU 0's pinned task exits at about 5 ms, CPU 0 pulls `b`
/// then and there — not at CPU 2's next pick (its task's throttling at about 10 ms), when
/// a push would move it.
#[test]
fn dl_pull_takes_the_earliest_task_allowed_on_the_pulling_cpu() {
    let dl = |name: &str, rt: &str, period: &str, cpus: &str, body: &str| {
        format!(
            "[[task]]\nname = \"{name}\"\npolicy = \"deadline\"\nruntime = \"{rt}\"\nperiod = \"{period}\"\naffinity = \"{cpus}\"\nprogram = [ {body} ]\n"
        )
    };
    let w = dl("d0", "9ms", "10ms", "0", "{ run = \"5ms\" }")
        + &dl("d1", "18ms", "20ms", "1", "{ run = \"100s\" }")
        + &dl("d2", "9ms", "10ms", "2", "{ sleep = \"1ms\" }, { run = \"100s\" }")
        + &dl("a", "5ms", "50ms", "2", "{ set_affinity = \"1-2\" }, { sleep = \"2ms\" }, { run = \"100s\" }")
        + &dl("b", "10ms", "100ms", "2", "{ set_affinity = \"0,2\" }, { sleep = \"2ms\" }, { run = \"100s\" }")
        + &dl("d3", "18ms", "20ms", "3", "{ run = \"100s\" }");
    let mut sw = Switches::default();
    let mut j = job(&w, "smp4", "eevdf", 1, &[("sched_rt_runtime_us", "-1")]);
    j.end = Ns::from_ms(100);
    run_with_probe(&j, &mut sw);
    let b_on_0 = first_run(&sw, 0, 4, 0).expect("b ran on CPU 0");
    assert!((5 * MS..8 * MS).contains(&b_on_0), "b first ran on CPU 0 at {b_on_0} ns");
    assert!(first_run(&sw, 0, 3, 0).is_none(), "a never may run on CPU 0");
}

fn dl_tasks(n: usize, runtime: &str, period: &str) -> String {
    format!(
        "[[task]]\nname = \"d\"\ncount = {n}\npolicy = \"deadline\"\nruntime = \"{runtime}\"\nperiod = \"{period}\"\nprogram = [ {} ]\n",
        periodic("1ms", period)
    )
}

/// Admission (`sched_dl_overflow`): Σ runtime/period ≤ 0.95 × CPUs (v5.15), minus the fair
/// servers' 0.05 each from v6.12. On 4 CPUs, tasks of 25/100: 6.12 admits 14 and refuses the
/// 15th; 5.15 admits 15 and refuses the 16th. The refusal names the file and field.
#[test]
fn admission_refuses_an_over_utilised_set() {
    let ok = |sched: &str, n: usize| {
        let j = job(&dl_tasks(n, "25ms", "100ms"), "smp4", sched, 1, &[]);
        j.run(&mut |_| true).map(|_| ()).map_err(|e| e.to_string())
    };
    assert!(ok("eevdf", 14).is_ok());
    let e = ok("eevdf", 15).unwrap_err();
    assert!(e.contains("test.toml:") && e.contains("policy") && e.contains("admission"), "{e}");
    assert!(ok("cfs", 15).is_ok());
    assert!(ok("cfs", 16).is_err());
    // `sched_rt_runtime_us = -1` lifts the cap.
    let j = job(&dl_tasks(20, "25ms", "100ms"), "smp4", "cfs", 1, &[("sched_rt_runtime_us", "-1")]);
    assert!(j.run(&mut |_| true).is_ok());
}

/// A deadline task that runs past its runtime is throttled until its next period, so it
/// gets its reservation (10 ms per 100 ms, plus at most a tick of overrun that it pays
/// back) and the fair task the rest (`update_curr_dl_se`, `dl_task_timer`).
#[test]
fn an_overrunning_deadline_task_is_throttled_until_replenished() {
    let w = fair_hog("fair", "0")
        + "[[task]]\nname = \"dl\"\npolicy = \"deadline\"\nruntime = \"10ms\"\nperiod = \"100ms\"\naffinity = \"0\"\nprogram = [ { run = \"100s\" } ]\n";
    let r = run(&job(&w, "smp2", "cfs", 2, &[]));
    let dl = task(&r, "dl").runtime_ns;
    assert!((195 * MS..=215 * MS).contains(&dl), "the dl task ran {dl} ns in 2 s");
    assert!(counter(&r, "dl_throttled") >= 19);
}

/// EDF on a CPU: pinned implicit-deadline periodic sets with U ≤ 1 per CPU miss no
/// deadline (Liu and Layland 1973; each CBS keeps its bandwidth, Abeni and Buttazzo 1998),
/// up to reservations summing to exactly 1; the same CPU overloaded past U = 1 (admission
/// lifted) does.
#[test]
fn pinned_implicit_deadline_sets_within_capacity_miss_nothing() {
    // Jobs of `c` µs every `p` ms on `cpu`.
    let set_us = |cpu: usize, tasks: &[(u64, u64)]| -> String {
        let mut w = String::new();
        for (i, (c, p)) in tasks.iter().enumerate() {
            // The reservation covers the job plus the kernel paths charged to it.
            w += &format!(
                "[[task]]\nname = \"c{cpu}t{i}\"\npolicy = \"deadline\"\nruntime = \"{}us\"\nperiod = \"{p}ms\"\naffinity = \"{cpu}\"\nprogram = [ {} ]\n",
                c + 200,
                periodic(&format!("{c}us"), &format!("{p}ms"))
            );
        }
        w
    };
    let set = |cpu: usize, tasks: &[(u64, u64)]| -> String {
        set_us(cpu, &tasks.iter().map(|&(c, p)| (c * 1000, p)).collect::<Vec<_>>())
    };
    let w = set(0, &[(2, 10), (6, 20), (8, 40), (3, 25)]) + &set(1, &[(5, 10), (4, 16)]) + &fair_hog("f", "0-1");
    for sched in ["cfs", "eevdf"] {
        let r = run(&job(&w, "smp2", sched, 2, &[]));
        assert_eq!(counter(&r, "dl_deadline_misses"), 0, "{sched}");
        assert!(task(&r, "c0t2").wakeups >= 45);
    }
    // At the bound: reservations of 2.5/10 + 5/20 + 10/40 + 6.25/25 = 1 on CPU 0 (the work
    // 200 µs less each), no fair task, the cap lifted.
    let full = set_us(0, &[(2300, 10), (4800, 20), (9800, 40), (6050, 25)]);
    for sched in ["cfs", "eevdf"] {
        let r = run(&job(&full, "smp2", sched, 2, &[("sched_rt_runtime_us", "-1")]));
        assert_eq!(counter(&r, "dl_deadline_misses"), 0, "{sched}: U = 1");
        assert!(task(&r, "c0t0").wakeups >= 190);
    }
    let over = set(0, &[(6, 10), (6, 10)]);
    let r = run(&job(&over, "smp2", "eevdf", 1, &[("sched_rt_runtime_us", "-1")]));
    assert!(counter(&r, "dl_deadline_misses") > 0, "an overloaded CPU must miss deadlines");
}

/// Global EDF by push/pull: on 2 CPUs, three unpinned CPU-bound deadline tasks share the
/// CPUs by deadline, each getting its reservation.
#[test]
fn global_edf_spreads_deadline_tasks() {
    let w = "[[task]]\nname = \"d\"\ncount = 3\npolicy = \"deadline\"\nruntime = \"30ms\"\nperiod = \"60ms\"\nprogram = [ { run = \"100s\" } ]\n";
    let r = run(&job(w, "smp2", "eevdf", 2, &[]));
    for i in 0..3 {
        let t = task(&r, &format!("d.{i}")).runtime_ns;
        assert!((950 * MS..=1050 * MS).contains(&t), "d.{i} ran {t} ns of its 1 s reservation");
    }
}

/// `set_policy` changes the class at run time: a fair task that becomes FIFO starves a
/// fair hog on its CPU, and back to normal it shares again.
#[test]
fn set_policy_changes_class_at_run_time() {
    let w = fair_hog("hog", "0")
        + "[[task]]\nname = \"t\"\naffinity = \"0\"\nprogram = [ { run = \"50ms\" }, { set_policy = \"fifo\", rt_priority = 1 }, { run = \"500ms\" }, { set_policy = \"normal\" }, { run = \"100s\" } ]\n";
    let r = run(&job(&w, "smp2", "eevdf", 3, &[("rt_bandwidth", "none")]));
    let hog = task(&r, "hog").runtime_ns;
    // About 100 ms before, none during 500 ms of FIFO, then half of the remaining ~2.3 s.
    assert!((1000 * MS..=1400 * MS).contains(&hog), "the hog ran {hog} ns");
}

/// Runs with the new classes are deterministic.
#[test]
fn rt_and_deadline_runs_are_deterministic() {
    let w = dl_tasks(3, "2ms", "10ms")
        + &rt_task("r", "rr", 3, "0-3", "0", "{ loop = \"forever\", do = [ { run = \"3ms\" }, { sleep = \"1ms\" } ] }")
        + &fair_hog("f", "0-3");
    let j = job(&w, "smp4", "eevdf", 1, &[]);
    let a = run(&j);
    let b = run(&j);
    assert_eq!(a.trace_hash, b.trace_hash);
    assert!(a.events > 1000);
    let _ = Ns(0);
}
