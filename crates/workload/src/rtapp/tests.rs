//! Tests of the rt-app front end: each rt-app construct converted and run as the model reads it.

use super::*;
use crate::{parse_workload, Op, Policy};

fn wl(text: &str) -> crate::Workload {
    parse_workload("t.json", text, &[], 4).unwrap_or_else(|e| panic!("{e}"))
}

fn err(text: &str) -> SourceError {
    parse_workload("t.json", text, &[], 4).unwrap_err()
}

#[test]
fn malformed_input_gets_the_json_path_and_line() {
    // (text, line, field, part of the message)
    let cases = [
        ("{\n \"tasks\": {\n  \"t\": { \"run\": \"ten\" } } }", 3, "tasks.t.run", "expected an integer"),
        ("{ \"global\": {\n \"duration\": \"1s\" }, \"tasks\": {} }", 2, "global.duration", "expected an integer"),
        ("{ \"tasks\": { \"t\": {\n \"policy\": \"SCHED_FAST\", \"run\": 1 } } }", 2, "tasks.t.policy", "unknown policy"),
        ("{ \"tasks\": { \"t\": { \"run\": 1,\n \"timer\": { \"ref\": \"x\", \"period\": 5, \"mode\": \"sometimes\" } } } }", 2, "mode", "unknown mode"),
        ("{ \"tasks\": { \"t\": { \"run\": 1, \"fork\":\n \"nobody\" } } }", 1, "tasks.t", "no task of that name"),
        ("{ \"tasks\": { \"t\": {\n \"loop\": 3 } } }", 1, "tasks.t", "no events"),
        ("{ \"tasks\": { \"t\": { \"run\": 1 },\n , } }", 2, "(syntax)", "expected a key"),
        ("{ \"tasks\": { \"t\": { \"run\": 1, \"loop\": 2,\n \"loop\": 3 } } }", 2, "tasks.t.loop", "given twice"),
        ("{ \"tasks\": { \"t\": { \"policy\": \"SCHED_FIFO\",\n \"priority\": 100, \"run\": 1 } } }", 2, "tasks.t.priority", "outside 1..=99"),
        ("{ \"tasks\": { \"t\": { \"policy\": \"SCHED_DEADLINE\", \"run\": 1,\n \"dl-runtime\": 1, \"dl-period\": 10 } } }", 1, "tasks.t", "invalid deadline parameters"),
        ("{ \"tasks\": { \"t\": { \"run\": 1,\n \"cpus\": [7] } } }", 2, "tasks.t.cpus", "outside the machine"),
        ("{ \"tasks\": { \"t\": { \"policy\": \"SCHED_FIFO\", \"run\": 1,\n \"taskgroup\": \"/g\" } } }", 2, "taskgroup", "no taskgroup support"),
    ];
    for (text, line, field, msg) in cases {
        let e = err(text);
        assert_eq!(e.file, "t.json", "{text}");
        assert_eq!(e.line, line, "{text}: {e}");
        assert!(e.field.contains(field), "{text}: field {} lacks {field}", e.field);
        assert!(e.message.contains(msg), "{text}: {e}");
    }
}

#[test]
fn threads_phases_and_policies_map_onto_the_task_model() {
    let w = wl(r#"{
        "global": { "default_policy": "SCHED_FIFO", "duration": 3 },
        "tasks": {
            "a": { "instance": 3, "priority": 42, "delay": 1500, "cpus": [1, 2], "run": 10 },
            "b": { "policy": "SCHED_OTHER", "priority": -7, "run": 10 },
            "c": { "policy": "SCHED_DEADLINE", "dl-runtime": 2000, "dl-period": 10000, "run": 10 },
            "d": { "instance": 0, "loop": 2, "run": 10 }
        }
    }"#);
    assert_eq!(w.duration, Some(schedlab_sim::Ns::from_secs(3)));
    let t = |n: &str| &w.templates[w.template_index(n).unwrap()];
    assert_eq!((t("a").count, t("a").policy), (3, Policy::Fifo { prio: 42 }));
    assert_eq!(t("a").start, schedlab_sim::Ns::from_us(1500));
    assert_eq!(t("a").affinity.as_ref().map(|c| c.iter().collect::<Vec<_>>()), Some(vec![1, 2]));
    assert_eq!((t("b").policy, t("b").nice), (Policy::Normal, -7));
    let Policy::Deadline(dl) = t("c").policy else { panic!("deadline") };
    // dl-deadline defaults to dl-period.
    assert_eq!((dl.runtime, dl.deadline, dl.period), (2_000_000, 10_000_000, 10_000_000));
    assert!(t("d").template && t("d").count == 0);
    // Without `loop` a thread repeats forever; `loop: 2` runs its events twice, once.
    let a = w.program(w.template_index("a").unwrap(), 0).unwrap();
    assert!(matches!(a.ops[0], Op::Loop { count: None, .. }), "{:?}", a.ops);
    let d = w.program(w.template_index("d").unwrap(), 0).unwrap();
    assert!(matches!(d.ops[0], Op::Loop { count: Some(2), .. }), "{:?}", d.ops);
}

#[test]
fn resources_follow_rt_app_naming() {
    let w = wl(r#"{ "tasks": {
        "a": { "instance": 2, "lock": "x", "wait": { "ref": "x", "mutex": "x" }, "unlock": "x", "barrier": "b" },
        "b": { "suspend": "", "resume": "a", "signal": "x", "barrier": "b", "timer": { "period": 10 } }
    } }"#);
    // A mutex and a condition variable may share a name: separate kinds.
    assert_eq!(w.mutexes, ["a", "b", "x"]);
    assert_eq!(w.conds, ["a", "b", "x"]);
    // Parties: the instances of the threads naming the barrier (2 + 1).
    assert_eq!(w.barriers[0].parties, 3);
    // A timer without `ref` is rt-app's "unknown", shared by every thread.
    assert_eq!(w.timers, [crate::TimerDef { name: "unknown".into(), shared: true, absolute: false }]);
}

#[test]
fn pi_enabled_makes_plain_mutexes_pi_futexes() {
    let w = wl(r#"{ "global": { "pi_enabled": true }, "tasks": {
        "a": { "lock": "m", "run": 10, "unlock": "m", "lock1": "c", "wait": { "ref": "k", "mutex": "c" }, "unlock1": "c" }
    } }"#);
    assert_eq!(w.futexes.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["m"]);
    assert_eq!(w.mutexes, ["c"]);
    assert!(w.notes.iter().any(|n| n.contains("FUTEX_WAIT_REQUEUE_PI")));
}

#[test]
fn calibration_rounds_run_to_whole_loops() {
    let c = convert(
        "t.json",
        r#"{ "global": { "calibration": 300 }, "tasks": { "a": { "run": 1000, "runtime": 1000 } } }"#,
    )
    .unwrap();
    // floor(1000 µs · 1000 / 300) loops of 300 ns; `runtime` is wall-clock busy time.
    assert!(c.toml.contains("{ run = \"999900ns\" }"), "{}", c.toml);
    assert!(c.toml.contains("{ spin = \"1000us\" }"), "{}", c.toml);
}

#[test]
fn unmodelled_settings_are_noted_once() {
    let c = convert(
        "t.json",
        r#"{ "global": { "logdir": "/tmp", "ftrace": "main,task", "lock_pages": true },
            "tasks": { "a": { "phases": { "p": { "util_min": 10, "run": 1 }, "q": { "util_max": 10, "util_min": 3, "run": 1 } } } } }"#,
    )
    .unwrap();
    let n = |s: &str| c.notes.iter().filter(|x| x.contains(s)).count();
    assert_eq!((n("logdir"), n("ftrace"), n("lock_pages"), n("`util_min`"), n("`util_max`")), (1, 1, 1, 1, 1));
}

#[test]
fn thread_level_legacy_keys_and_numa_binding() {
    let w = wl(r#"{ "tasks": { "t": {
        "policy": "SCHED_DEADLINE", "runtime": 1000, "period": 10000, "nodes_membind": [0],
        "phases": { "p": { "run": 500, "timer": { "ref": "unique", "period": 10000 } } }
    } } }"#);
    let Policy::Deadline(dl) = w.templates[0].policy else { panic!("deadline") };
    assert_eq!((dl.runtime, dl.period, dl.deadline), (1_000_000, 10_000_000, 10_000_000));
    assert!(w.notes.iter().any(|n| n.contains("nodes_membind")), "{:?}", w.notes);
}
