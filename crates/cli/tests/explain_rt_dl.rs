//! Decision records of the rt and deadline classes' push and pull (`rt.c:push_rt_task`,
//! `pull_rt_task`, `deadline.c:push_dl_task`, `pull_dl_task`, v6.12), of deadline
//! throttling, of the NOHZ idle-balance kick (`fair.c:nohz_balancer_kick`, v5.15) and of
//! `cfs@4.9`'s `find_busiest_group` verdicts, as `explain` prints them (issue 15).

mod common;

use common::job;
use schedlab::explain::{render, Ask, Select};
use schedlab_metrics::explain::{Explained, WaitCause};
use schedlab_run::RunSpec;
use schedlab_sim::Ns;

fn ask(task: Option<&str>, select: Select) -> Ask {
    Ask { task: task.map(Into::into), select, summary: false, json: false, svg: None }
}

fn explain(j: &RunSpec, task: Option<&str>) -> (schedlab_run::RunRecord, Explained) {
    schedlab::explain::run(j, &ask(task, Select::Worst(3)), &mut |_| true).unwrap()
}

fn with_ms(mut j: RunSpec, ms: u64) -> RunSpec {
    j.end = Ns::from_ms(ms);
    j
}

/// Three FIFO tasks on two CPUs, each running 3 ms and sleeping 2 ms: whenever the two
/// more important ones run, the least important waits and is pushed or pulled.
fn rt_three() -> String {
    let mut w = String::new();
    for (name, prio, start) in [("hi", 50, "0"), ("mid", 40, "0"), ("low", 30, "1ms")] {
        w += &format!(
            "[[task]]\nname = \"{name}\"\npolicy = \"fifo\"\nrt_priority = {prio}\nstart = \"{start}\"\nprogram = [ {{ loop = \"forever\", do = [ {{ run = \"3ms\" }}, {{ sleep = \"2ms\" }} ] }} ]\n"
        );
    }
    w
}

/// A deadline task pinned to CPU 0 (due every 50 ms) that runs 5 ms and sleeps 20 ms, and
/// two CPU-bound deadline tasks (due every 100 ms) that end up queued together on CPU 1.
fn dl_pull() -> String {
    "[[task]]\nname = \"sleeper\"\npolicy = \"deadline\"\nruntime = \"20ms\"\nperiod = \"50ms\"\naffinity = \"0\"\nprogram = [ { loop = \"forever\", do = [ { run = \"5ms\" }, { sleep = \"20ms\" } ] } ]\n[[task]]\nname = \"hog\"\ncount = 2\npolicy = \"deadline\"\nruntime = \"20ms\"\nperiod = \"100ms\"\nstart = \"1ms\"\nprogram = [ { run = \"100s\" } ]\n".into()
}

/// Three CPU-bound deadline tasks of 30 ms per 60 ms on two CPUs (1.5 CPUs in all).
fn dl_three() -> String {
    "[[task]]\nname = \"d\"\ncount = 3\npolicy = \"deadline\"\nruntime = \"30ms\"\nperiod = \"60ms\"\nprogram = [ { run = \"100s\" } ]\n"
        .into()
}

fn moved_by(ex: &Explained) -> Vec<&String> {
    ex.waits.iter().flat_map(|w| &w.moved_by).collect()
}

fn notes(ex: &Explained) -> Vec<&String> {
    ex.waits.iter().flat_map(|w| &w.balance).collect()
}

/// `push_rt_task`: the least important FIFO task, waiting on an overloaded CPU while the
/// other CPU runs no rt task, is pushed there; the record names `find_lowest_rq`'s
/// `cpupri` levels and the CPU taken. When both CPUs run more important rt tasks, the
/// push finds no lower CPU and says so.
#[test]
fn rt_push_names_cpupri_and_the_cpu_taken() {
    let (_, ex) = explain(&with_ms(job(&rt_three(), "smp2", "eevdf", 1, &[]), 40), Some("low"));
    let moved = moved_by(&ex);
    assert!(
        moved
            .iter()
            .any(|m| m.starts_with("push_rt_task on CPU") && m.contains("CPUPRI_NORMAL") && m.contains("pushed there")),
        "no push moved low: {moved:?}"
    );
    let notes = notes(&ex);
    assert!(
        notes.iter().any(|n| n.contains("push_rt_task") && n.contains("no allowed CPU runs less important work")),
        "no push says why low stayed: {notes:?}"
    );
}

/// `pull_rt_task`: without `RT_PUSH_IPI` the CPU that lowered its priority pulls the
/// waiting task itself; with it, it asks the overloaded CPU to push (`tell_cpu_to_push`).
#[test]
fn rt_pull_pulls_or_asks_for_a_push() {
    let j = with_ms(job(&rt_three(), "smp2", "eevdf", 1, &[("rt_push_ipi", "0")]), 40);
    let (_, ex) = explain(&j, Some("low"));
    let moved = moved_by(&ex);
    assert!(
        moved.iter().any(|m| m.starts_with("pull_rt_task on CPU") && m.contains("pulled the task of rt priority 30")),
        "no pull moved low: {moved:?}"
    );
    let (_, ex) = explain(&with_ms(job(&rt_three(), "smp2", "eevdf", 1, &[]), 40), Some("low"));
    let notes = notes(&ex);
    assert!(
        notes.iter().any(|n| n.starts_with("pull_rt_task") && n.contains("RT_PUSH_IPI asks CPU")),
        "no pull asked for a push: {notes:?}"
    );
}

/// `pull_dl_task`: when the pinned deadline task sleeps, CPU 0 has no deadline task left
/// and pulls the one waiting on CPU 1.
#[test]
fn dl_pull_takes_the_waiting_deadline_task() {
    let (_, ex) = explain(&with_ms(job(&dl_pull(), "smp2", "eevdf", 1, &[]), 12), Some("hog"));
    let moved = moved_by(&ex);
    assert!(
        moved.iter().any(|m| m.starts_with("pull_dl_task on CPU 0 (no deadline task)") && m.contains("from CPU 1")),
        "no pull moved a hog: {moved:?}"
    );
}

/// CBS throttling (`update_curr_dl_se`): a deadline task out of runtime waits for its
/// replenishment, even with a CPU idle — that time is `throttled`, not a balancer's
/// refusal, and the words name the `dl_timer`'s time.
#[test]
fn a_throttled_deadline_task_waits_for_its_replenishment() {
    let (_, ex) = explain(&with_ms(job(&dl_three(), "smp2", "eevdf", 1, &[]), 200), Some("d"));
    let t = ex.tasks.iter().find(|t| t.name == "d.0").unwrap();
    let throttled = t.by_cause[WaitCause::Throttled.index()];
    assert!(throttled * 2 > t.wait_ns, "throttled {throttled} of {} ns", t.wait_ns);
    let seg = ex.waits.iter().flat_map(|w| &w.segments).find(|g| g.cause == WaitCause::Throttled).unwrap();
    assert!(seg.why.contains("the dl_timer replenishes it at"), "{}", seg.why);
}

/// `nohz_balancer_kick`: CPU 0 runs two pinned tasks while CPU 1 idles, so its tick kicks
/// CPU 1 to balance for the idle CPUs; until the next balance is due it does not.
#[test]
fn nohz_kick_says_whom_it_kicked_and_why() {
    let p = format!("{}/../../examples/workloads/nice-pair.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(p).unwrap();
    let mut j = RunSpec::load("nice-pair", &text, None, &[], Some(Ns::from_ms(40))).unwrap();
    j.sched = "cfs".into();
    j.check = true;
    let (_, ex) = explain(&j, Some("niced"));
    let notes = notes(&ex);
    assert!(
        notes.iter().any(|n| n.contains("nohz_balancer_kick on CPU 0")
            && n.contains("kicked CPU 1")
            && n.contains("nr_running ≥ 2")),
        "no kick: {notes:?}"
    );
    assert!(notes.iter().any(|n| n.contains("not moved: no kick: nohz.next_balance")), "no refused kick: {notes:?}");
}

/// `cfs@4.9`'s own `find_busiest_group` says why a domain counts as balanced: two
/// unpinned hogs per CPU leave nothing to move, and the verdict names the avg_load
/// comparison or the idle-CPU rule.
#[test]
fn cfs_4_9_says_why_a_domain_is_balanced() {
    let w = "[[task]]\nname = \"hog\"\ncount = 4\nprogram = [ { run = \"10s\" } ]\n";
    let (_, ex) = explain(&with_ms(job(w, "smp2", "cfs@4.9", 1, &[]), 300), Some("hog"));
    let notes = notes(&ex);
    assert!(
        notes.iter().any(|n| n.contains("load_balance") && n.contains(": balanced — ") && n.contains("avg_load")),
        "no 4.9 balanced verdict: {notes:?}"
    );
}

/// For the rt and deadline scenarios under both fair classes, with and without
/// `RT_PUSH_IPI`: each task's explained waiting sums to its `wait_ns`, and recording
/// decisions changes no result (the same record, trace hash included).
#[test]
fn rt_dl_waits_sum_to_wait_ns_and_recording_changes_nothing() {
    let cases = [(rt_three(), 40, "1"), (rt_three(), 40, "0"), (dl_pull(), 60, "1"), (dl_three(), 150, "1")];
    for (w, ms, ipi) in &cases {
        for sched in ["cfs", "eevdf"] {
            let j = with_ms(job(w, "smp2", sched, 1, &[("rt_push_ipi", ipi)]), *ms);
            let (rec, ex) = explain(&j, None);
            let plain = j.run(&mut |_| true).unwrap();
            assert_eq!(
                schedlab_run::deterministic_json(&plain),
                schedlab_run::deterministic_json(&rec),
                "{sched}: recording changed the result"
            );
            for t in &rec.tasks {
                assert_eq!(ex.tasks[t.tid].wait_ns, t.wait_ns, "{sched}: task {}", t.name);
            }
        }
    }
}

/// An rt task pushed away from an overloaded CPU, as printed.
#[test]
fn snapshot_rt_push() {
    let mut j = with_ms(job(&rt_three(), "smp2", "eevdf", 1, &[]), 12);
    // The snapshot was written for the constant-cost machine.
    j.set("machine.cost_model", "flat").unwrap();
    let a = ask(Some("low"), Select::Worst(1));
    let (_, ex) = schedlab::explain::run(&j, &a, &mut |_| true).unwrap();
    insta::assert_snapshot!(render(&ex, &a).unwrap());
}

/// A deadline task pulled by the CPU its neighbour left, as printed.
#[test]
fn snapshot_dl_pull() {
    let j = with_ms(job(&dl_pull(), "smp2", "eevdf", 1, &[]), 12);
    let a = ask(Some("hog"), Select::At(Ns::from_ms(5)));
    let (_, ex) = schedlab::explain::run(&j, &a, &mut |_| true).unwrap();
    insta::assert_snapshot!(render(&ex, &a).unwrap());
}

/// The NOHZ kick and `cfs@4.9`'s balanced verdict for the pinned pair, as printed.
#[test]
fn snapshot_nohz_kick_under_cfs_4_9() {
    let p = format!("{}/../../examples/workloads/nice-pair.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(p).unwrap();
    let mut j = RunSpec::load("nice-pair", &text, None, &[], Some(Ns::from_ms(40))).unwrap();
    j.set("machine.noise", "none").unwrap();
    j.sched = "cfs@4.9".into();
    let a = ask(Some("niced"), Select::Worst(1));
    let (_, ex) = schedlab::explain::run(&j, &a, &mut |_| true).unwrap();
    insta::assert_snapshot!(render(&ex, &a).unwrap());
}

/// `push_rt_task` with only pinned tasks waiting: none is on the pushable list
/// (`nr_cpus_allowed` 1), so the push moves nothing and the record says each is pinned.
#[test]
fn rt_push_with_only_pinned_waiters_says_they_are_pinned() {
    let pinned = rt_three().replace("policy = \"fifo\"", "policy = \"fifo\"\naffinity = \"0\"");
    let (_, ex) = explain(&with_ms(job(&pinned, "smp2", "eevdf", 1, &[]), 40), Some("low"));
    let notes = notes(&ex);
    assert!(
        notes.iter().any(|n| n.starts_with("push_rt_task") && n.contains("no pushable task") && n.contains("pinned")),
        "no record of a push that found nothing pushable: {notes:?}"
    );
    assert!(moved_by(&ex).is_empty(), "a pinned task was moved");
}
