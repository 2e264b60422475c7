//! ULE (`sched_ule.c`, FreeBSD 11.1) against what the source and the ULE-vs-CFS paper
//! predict, plus the core's invariants and determinism under `ule`.

mod common;
use common::*;
use schedlab_metrics::RunRecord;
use schedlab_report::{completion, overlap, runtime_between};
use schedlab_run::{deterministic_json, RunSpec};
use schedlab_sim::Ns;

fn study(name: &str, sched: &str, check: bool) -> RunRecord {
    let path = format!("{}/../../examples/studies/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let mut j = RunSpec::load(name, &text, None, &[], None).unwrap();
    j.sched = sched.into();
    j.sample = Some(Ns::from_ms(10));
    j.check = check;
    run(&j)
}

fn group_done(r: &RunRecord, g: &str) -> u64 {
    let ts: Vec<_> = r.tasks.iter().filter(|t| schedlab_report::group_of(&t.name) == g).collect();
    completion(&ts).unwrap_or_else(|| panic!("{g} did not complete"))
}

/// Share of the core fibo gets while sysbench runs.
fn fibo_share(r: &RunRecord) -> f64 {
    let (a, b) = overlap(r);
    let fibo = task(r, "fibo").tid;
    runtime_between(r, fibo, a, b).unwrap() as f64 / (b - a) as f64
}

/// Fig. 1–2 of the paper: CFS shares the core between fibo and sysbench; ULE scores the
/// sysbench workers interactive and starves fibo until sysbench is done, so sysbench
/// completes sooner.
#[test]
fn fibo_sysbench_cfs_shares_ule_starves() {
    let cfs = study("ule-cfs-fibo-sysbench", "cfs@4.9", false);
    let ule = study("ule-cfs-fibo-sysbench", "ule@11.1-linux", false);
    let (c, u) = (fibo_share(&cfs), fibo_share(&ule));
    assert!((0.40..=0.55).contains(&c), "cfs: fibo share {c:.3}");
    assert!(u < 0.05, "ule: fibo share {u:.3}");
    assert!(group_done(&ule, "sysbench") < group_done(&cfs, "sysbench"));
    // fibo is batch under ULE, the workers interactive (priority below PRI_MIN_BATCH = 152).
    let s = ule.series.as_ref().unwrap();
    let at = s.index_at(10_000_000_000).unwrap();
    let prio = |name: &str| {
        let t = task(&ule, name).tid;
        s.stat(t, "priority").into_iter().take_while(|&(time, _)| time <= s.times_ns[at]).last().unwrap().1
    };
    assert!(prio("fibo") >= 152, "fibo priority {}", prio("fibo"));
    assert!(prio("worker.0") < 152, "worker priority {}", prio("worker.0"));
}

/// Fig. 3–4: the main thread's score rises as it runs and forks; early children are born
/// interactive and keep the core busy, the last ones are batch and starve: after their
/// first burst (1.5–2.5 ms) they never run again. Under CFS every worker gets its share.
#[test]
fn sysbench128_late_forks_starve_under_ule_only() {
    let ule = study("ule-cfs-sysbench128", "ule@11.1-linux", false);
    let workers: Vec<_> = ule.tasks.iter().filter(|t| t.name.starts_with("worker.")).collect();
    assert!(workers.len() > 64);
    for w in &workers[..10] {
        assert!(w.runtime_ns > 100_000_000, "{} ran only {} ns", w.name, w.runtime_ns);
    }
    let tail = &workers[workers.len() - 10..];
    let starved = tail.iter().filter(|w| w.runtime_ns < 10_000_000).count();
    assert!(starved >= 5, "only {starved} of the last 10 workers ran < 10 ms in 30 s under ule");
    let cfs = study("ule-cfs-sysbench128", "cfs@4.9", false);
    let cw: Vec<_> = cfs.tasks.iter().filter(|t| t.name.starts_with("worker.")).collect();
    assert_eq!(cw.len(), 128);
    assert!(cw.iter().all(|w| w.runtime_ns > 100_000_000));
}

const FORK_HOGS: &str = r#"
[[task]]
name = "main"
program = [ { fork = "hog", count = 4 }, "wait" ]

[[task]]
name = "hog"
template = true
program = [ { loop = "forever", do = [ { run = "50ms" } ] } ]
"#;

/// 4 hogs forked on 4 CPUs end one per CPU; the long-term balancer runs, and only on CPU 0.
#[test]
fn four_forked_hogs_spread_one_per_cpu() {
    let mut j = job(FORK_HOGS, "smp4", "ule", 5, &[]);
    j.sample = Some(Ns::from_ms(50));
    let r = run(&j);
    let s = r.series.as_ref().unwrap();
    let last = s.times_ns.len() - 1;
    for c in 0..4 {
        assert_eq!(
            s.cpu_runnable[c][last],
            1,
            "CPU {c} at the end: {:?}",
            s.cpu_runnable.iter().map(|v| v[last]).collect::<Vec<_>>()
        );
    }
    assert!(r.policy_counters["balance_runs"] >= 2, "{:?}", r.policy_counters);
    assert_eq!(r.policy_counters["balance_runs"], r.policy_counters["balance_runs.cpu0"]);
    for t in r.tasks.iter().filter(|t| t.name.starts_with("hog")) {
        assert!(t.runtime_ns > 4_500_000_000, "{} ran {} ns", t.name, t.runtime_ns);
    }
}

/// The paper's Fig. 6–7 in small: 8 hogs pinned to CPU 0 of an 8-CPU machine and unpinned
/// at once at 1 s, under ULE as the study ran it (`11.1-linux`: Linux's idle loop never
/// calls back into ULE's idle search). The idle CPUs went idle before the unpinning, so
/// only the long-term balancer on CPU 0 moves the threads: one per round (every 0.5–1.5 s),
/// until there is one per CPU.
#[test]
fn unpinned_hogs_spread_one_thread_per_balancer_round() {
    let text = unpinned_hogs(8, "0-7");
    let mut j = job(&text, "smp8", "ule", 12, &[("version", "11.1-linux")]);
    // Shorter than the shortest balancer interval (63 stat ticks = 496 ms).
    j.sample = Some(Ns::from_ms(400));
    let r = run(&j);
    let s = r.series.as_ref().unwrap();
    let cpu0 = &s.cpu_runnable[0];
    for w in cpu0.windows(2).skip(1) {
        assert!(w[0] <= w[1] + 1, "CPU 0 lost more than one thread in one round: {cpu0:?}");
    }
    let last = s.times_ns.len() - 1;
    assert!(
        (0..8).all(|c| s.cpu_runnable[c][last] == 1),
        "{:?}",
        (0..8).map(|c| s.cpu_runnable[c][last]).collect::<Vec<_>>()
    );
    assert_eq!(r.policy_counters["balance_moves"], 7);
    assert_eq!(r.policy_counters["idle_steals"], 0);
}

/// FreeBSD's own idle loop (`sched_idletd`): an idle CPU is woken by a hardclock at least
/// every `hz / 2` ticks (`getnextcpuevent`), its switch count changes and it runs
/// `tdq_idled` again — so threads made stealable after it went idle (here by an affinity
/// change at 1 s) are stolen within one such period, not one balancer round at a time.
#[test]
fn idle_cpus_steal_work_made_stealable_after_they_went_idle() {
    let text = unpinned_hogs(8, "0-7");
    let mut j = job(&text, "smp8", "ule", 3, &[]);
    j.sample = Some(Ns::from_ms(100));
    let r = run(&j);
    let s = r.series.as_ref().unwrap();
    let at = |ms: u64| s.index_at(ms * 1_000_000).unwrap();
    let per_cpu = |i: usize| (0..8).map(|c| s.cpu_runnable[c][i]).collect::<Vec<_>>();
    assert_eq!(per_cpu(at(900))[0], 8, "pinned until 1 s: {:?}", per_cpu(at(900)));
    let spread = per_cpu(at(1600));
    assert!(spread.iter().all(|&n| n == 1), "one per CPU 0.6 s after the unpinning: {spread:?}");
    assert!(r.policy_counters["idle_steals"] >= 6, "{:?}", r.policy_counters);
    // Without the idle wakeups (the study's port) nothing but the balancer moves them.
    let mut j = job(&text, "smp8", "ule", 3, &[("idle_wakeup", "0")]);
    j.sample = Some(Ns::from_ms(100));
    let r = run(&j);
    assert_eq!(r.policy_counters["idle_steals"], 0, "{:?}", r.policy_counters);
}

const HOG_AND_SLEEPERS: &str = r#"
[[task]]
name = "hog"
start = "1s"
program = [ { loop = "forever", do = [ { run = "100ms" } ] } ]

[[task]]
name = "user"
program = [ { loop = "forever", do = [ { sleep = "37ms" }, { run = "200us" } ] } ]

[[task]]
name = "kworker"
kthread = true
program = [ { loop = "forever", do = [ { sleep = "41ms" }, { run = "100us" } ] } ]
"#;

/// End to end on one CPU: a hog (batch once its first second of history has gone) and
/// two periodic sleepers. FreeBSD: every wakeup of either sleeper switches the hog out
/// at once (`TDF_NEEDRESCHED`, then the return to user): sub-µs latencies. The study's
/// port: the user thread waits for the hog's slice to end (the slice shrinks as threads
/// queue up, `tdq_slice`) or for the kernel thread's next wakeup, which still switches the
/// hog out at once — the kernel thread then waits at most for the user thread's 200 µs
/// turn, which is ahead of it in the same priority list.
#[test]
fn study_variant_user_wakeups_wait_for_the_slice_kernel_threads_do_not() {
    let lat = |sets: &[(&str, &str)], name: &str| {
        let r = run(&job(HOG_AND_SLEEPERS, "up", "ule", 6, sets));
        task(&r, name).wakeup_latency_ns.clone()
    };
    let ms = 1_000_000;
    let (user, kw) = (lat(&[], "user"), lat(&[], "kworker"));
    assert!(user.p90 < ms / 100 && kw.p90 < ms / 100, "FreeBSD: both preempt the hog: {user:?} {kw:?}");
    let port = [("version", "11.1-linux")];
    let (user, kw) = (lat(&port, "user"), lat(&port, "kworker"));
    assert!(user.p50 > ms, "11.1-linux: the user thread waits for the hog: {user:?}");
    assert!(kw.p50 <= ms / 4, "11.1-linux: the kernel thread preempts (waiting at most for the user's turn): {kw:?}");
}

/// Invariants after every event and determinism, for every example and both studies.
#[test]
fn ule_keeps_invariants_and_is_deterministic() {
    for (name, params, secs) in [
        ("nice-pair.toml", vec![], 2),
        ("cpu-io-mix.toml", vec![("loops", "100")], 2),
        ("hackbench.toml", vec![("groups", "2"), ("loops", "10")], 5),
        ("fibo-sysbench.toml", vec![("threads", "16"), ("requests", "20")], 9),
    ] {
        let path = format!("{}/../../examples/workloads/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        let params: Vec<(String, String)> = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        for machine in ["up", "i7-3770", "opteron-32"] {
            let mut j = RunSpec::load(name, &text, Some(machine), &params, Some(Ns::from_secs(secs))).unwrap();
            j.sched = "ule".into();
            j.check = true;
            let a = deterministic_json(&run(&j));
            assert_eq!(a, deterministic_json(&run(&j)), "{name} on {machine}");
        }
    }
    for v in ["current", "11.1-linux"] {
        let mut j = job(FORK_HOGS, "i7-3770", "ule", 3, &[("version", v)]);
        j.check = true;
        let a = deterministic_json(&run(&j));
        assert_eq!(a, deterministic_json(&run(&j)), "{v}");
    }
}
