//! rt-app JSON: every event type of rt-app's tutorial runs (the corpus under
//! `examples/rt-app/`), a file and its converted TOML run byte-identically, and the timer
//! semantics follow `rt-app.c:run_event` (relative restart, absolute catch-up, shared timers).

use schedlab_run::{deterministic_json, RunRecord, RunSpec};
use schedlab_sim::Ns;
use schedlab_workload::rtapp::{self, json, EVENTS};
use std::path::Path;

fn corpus() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rt-app");
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files
        .iter()
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(p).unwrap()))
        .collect()
}

fn run(name: &str, text: &str, sched: &str, ms: u64) -> RunRecord {
    let mut j =
        RunSpec::load(name, text, Some("smp2"), &[], Some(Ns::from_ms(ms))).unwrap_or_else(|e| panic!("{name}: {e}"));
    j.sched = sched.into();
    j.check = true;
    j.run(&mut |_| true).unwrap_or_else(|e| panic!("{name} under {sched}: {e}"))
}

fn keys(v: &json::Spanned, out: &mut Vec<String>) {
    match &v.v {
        json::Json::Object(m) => {
            for (k, _, x) in m {
                out.push(k.clone());
                keys(x, out);
            }
        }
        json::Json::Array(a) => a.iter().for_each(|x| keys(x, out)),
        _ => {}
    }
}

#[test]
fn the_corpus_covers_every_event_type_of_the_tutorial() {
    let mut all = Vec::new();
    for (_, text) in corpus() {
        keys(&json::parse(&text).unwrap(), &mut all);
    }
    for e in EVENTS {
        // rt-app matches event keys by prefix, in EVENTS order (`runtime` before `run`).
        let used = all.iter().any(|k| EVENTS.iter().find(|x| k.starts_with(*x)) == Some(e));
        assert!(used, "no corpus file uses the `{e}` event");
    }
    assert_eq!(EVENTS.len(), 17);
    // Both timer modes and both timer kinds.
    let text: String = corpus().into_iter().map(|c| c.1).collect();
    for s in ["\"absolute\"", "\"unique\"", "\"tick\""] {
        assert!(text.contains(s), "{s}");
    }
}

#[test]
fn every_corpus_file_runs_with_checks_deterministically() {
    for (name, text) in corpus() {
        for sched in ["eevdf", "cfs"] {
            let a = run(&name, &text, sched, 60);
            assert!(a.tasks.iter().all(|t| t.runtime_ns > 0), "{name} {sched}: a task never ran");
            let b = run(&name, &text, sched, 60);
            assert_eq!(deterministic_json(&a), deterministic_json(&b), "{name} {sched}");
        }
    }
}

#[test]
fn a_file_and_its_converted_toml_give_byte_identical_results() {
    for (name, text) in corpus() {
        let toml = rtapp::convert(&name, &text).unwrap().toml;
        assert!(!rtapp::looks_like_json(&toml));
        let a = run(&name, &text, "eevdf", 40);
        let b = run(&name, &toml, "eevdf", 40);
        assert_eq!(deterministic_json(&a), deterministic_json(&b), "{name}");
    }
}

fn task<'a>(r: &'a RunRecord, n: &str) -> &'a schedlab_metrics::TaskRecord {
    r.tasks.iter().find(|t| t.name == n).unwrap()
}

/// `timer-modes.json`: 3 × (10 ms busy, 20 ms timer) then 45 ms busy on a 20 ms timer. A
/// relative timer restarts after the overrun: a 105 ms cycle holding 30 ms of sleep. An
/// absolute one keeps its 20 ms grid: after the first cycle's 30 ms of sleep it catches
/// up and sleeps 5 ms per 80 ms cycle. At 400 ms: 120 ms and 50 ms asleep.
#[test]
fn relative_timers_restart_after_an_overrun_and_absolute_ones_catch_up() {
    let (_, text) = corpus().into_iter().find(|c| c.0 == "timer-modes.json").unwrap();
    let r = run("timer-modes.json", &text, "eevdf", 400);
    let near = |got: u64, want_ms: u64| got.abs_diff(want_ms * 1_000_000) < 500_000;
    assert!(near(task(&r, "relative").sleep_ns, 120), "{}", task(&r, "relative").sleep_ns);
    assert!(near(task(&r, "absolute").sleep_ns, 50), "{}", task(&r, "absolute").sleep_ns);
}

/// A timer counts from the task's start (`t_first`), not from its first use: `run 4 ms;
/// timer 10 ms` wakes at 10, 20, 30 ms — 6 ms asleep per period, not 10.
#[test]
fn a_named_timer_counts_from_the_task_start() {
    let text = r#"{ "tasks": { "t": { "run": 4000, "timer": { "ref": "unique", "period": 10000 } } } }"#;
    let r = run("t.json", text, "eevdf", 100);
    let t = task(&r, "t");
    assert!(t.sleep_ns.abs_diff(60_000_000) < 500_000, "{}", t.sleep_ns);
    assert_eq!(t.switches_voluntary, 10);
}

/// Instances naming one shared timer advance it in turn: three instances of a 10 ms timer
/// sleep until 10, 20 and 30 ms, and each expiry (10 … 90 ms within 100 ms) lets one sleep
/// again 30 ms later: 3 + 9 sleeps. With `unique` timers each instance sleeps 10 times.
#[test]
fn a_shared_timer_is_advanced_by_every_task_naming_it() {
    let text = |r: &str| {
        format!(
            r#"{{ "tasks": {{ "t": {{ "instance": 3, "run": 100, "timer": {{ "ref": "{r}", "period": 10000 }} }} }} }}"#
        )
    };
    let wakeups = |r: &RunRecord| r.tasks.iter().map(|t| t.switches_voluntary).sum::<u64>();
    let shared = run("s.json", &text("tick"), "eevdf", 100);
    let unique = run("u.json", &text("unique"), "eevdf", 100);
    assert_eq!(wakeups(&shared), 12);
    assert_eq!(wakeups(&unique), 30);
}

/// `mutex-pi.json`: with `pi_enabled` the low-priority holder inherits the waiter's
/// priority and the middle-priority hog cannot delay it: the high-priority thread waits
/// less for the lock than with a plain mutex.
#[test]
fn pi_enabled_bounds_the_priority_inversion() {
    let (_, text) = corpus().into_iter().find(|c| c.0 == "mutex-pi.json").unwrap();
    let plain = text.replace("\"pi_enabled\" : true", "\"pi_enabled\" : false");
    assert_ne!(plain, text);
    let pi = run("pi.json", &text, "eevdf", 300);
    let no = run("plain.json", &plain, "eevdf", 300);
    let high = |r: &RunRecord| task(r, "high").wakeup_latency_ns.max + task(r, "high").sleep_ns;
    assert!(task(&no, "high").runtime_ns <= task(&pi, "high").runtime_ns, "pi lets high run at least as much");
    assert!(high(&pi) < high(&no), "pi {} plain {}", high(&pi), high(&no));
}
