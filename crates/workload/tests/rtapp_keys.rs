//! rt-app's keys as `src/rt-app_parse_config.c` reads them: a key it does not look up is
//! ignored (here: noted once), every key of `doc/tutorial.txt` is run or refused by name,
//! and the reader's quirks (prefix-matched events, a thread's legacy `runtime`, `null` as
//! no value, integers as C ints, the custom slice of `dl-runtime`) hold.

use schedlab_workload::rtapp::{convert, EVENTS, REFUSED_EVENTS};
use schedlab_workload::{parse_workload, Op, Policy, Workload};

fn wl(text: &str) -> Workload {
    parse_workload("t.json", text, &[], 4).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn err(text: &str) -> schedlab_sim::SourceError {
    match parse_workload("t.json", text, &[], 4) {
        Ok(_) => panic!("{text}: accepted"),
        Err(e) => e,
    }
}

fn notes(text: &str) -> Vec<String> {
    convert("t.json", text).unwrap_or_else(|e| panic!("{e}")).notes
}

fn ops(w: &Workload, task: &str) -> Vec<Op> {
    let p = w.program(w.template_index(task).unwrap(), 0).unwrap();
    p.ops.clone()
}

/// rt-app looks up the keys it knows (`get_in_object`) and never lists an object's
/// others: unknown keys in the root, `global`, a thread, a phase and an event's object
/// are ignored. Here each is noted once, with the first place it appears.
#[test]
fn unknown_keys_are_ignored_at_every_level_with_one_note_each() {
    let text = r#"{
        "comment": "root",
        "global": { "frag": 1, "duration": 1 },
        "tasks": {
            "a": { "description": "x", "run": 10, "lock": "m",
                   "wait": { "ref": "c", "mutex": "m", "why": 1 }, "unlock": "m" },
            "b": { "description": "y", "phases": { "p": { "label": 1, "run": 10,
                   "timer": { "ref": "t", "period": 100, "jitter": 3 } } } }
        }
    }"#;
    let n = notes(text);
    for (key, at) in [
        ("comment", "comment"),
        ("frag", "global.frag"),
        ("description", "tasks.a.description"),
        ("label", "tasks.b.phases.p.label"),
        ("why", "tasks.a.wait.why"),
        ("jitter", "tasks.b.phases.p.timer.jitter"),
    ] {
        let hits: Vec<_> = n.iter().filter(|x| x.contains(&format!("unknown key `{key}`"))).collect();
        assert_eq!(hits.len(), 1, "{key}: {n:?}");
        assert!(hits[0].contains(&format!("first at {at})")), "{}", hits[0]);
    }
    // The file runs: what rt-app reads is all there.
    let w = wl(text);
    assert_eq!(w.templates.len(), 2);
    assert_eq!(w.duration, Some(schedlab_sim::Ns::from_secs(1)));
}

/// With `phases`, rt-app reads only the phases' events (`parse_task_data`): an event at
/// thread level is ignored. A thread's own keys (`delay`, `instance`) inside a phase are
/// not read either (`parse_task_phase_data`).
#[test]
fn keys_rt_app_does_not_read_in_that_place_are_ignored() {
    let text = r#"{ "tasks": { "t": { "sleep": 5, "phases": { "p": { "run": 10, "delay": 100 } } } } }"#;
    let n = notes(text);
    assert!(n.iter().any(|x| x.contains("`tasks.t.sleep`: an event beside `phases` is ignored")), "{n:?}");
    assert!(n.iter().any(|x| x.contains("unknown key `delay` in a phase")), "{n:?}");
    let w = wl(text);
    assert_eq!(w.templates[0].start, schedlab_sim::Ns(0));
    assert!(!ops(&w, "t").iter().any(|o| matches!(o, Op::Sleep(_))), "{:?}", ops(&w, "t"));
}

/// rt-app's events are prefixes (`obj_is_event`): a key starting with one is that event,
/// whatever follows; `lock_order` is a `lock` whose value must be a string, and
/// `membind_nodes` (renamed `nodes_membind` in rt-app for this reason) a `mem`.
#[test]
fn event_keys_match_by_prefix_as_in_rt_app() {
    let w = wl(r#"{ "tasks": { "t": { "running": 10, "runtime_b": 20, "sleepy": 30, "loop": 1 } } }"#);
    let o = ops(&w, "t");
    assert!(matches!(o[0], Op::Run(_)) && matches!(o[1], Op::Spin(_)) && matches!(o[2], Op::Sleep(_)), "{o:?}");
    let e = err(r#"{ "tasks": { "t": { "run": 1, "lock_order": ["a", "b"] } } }"#);
    assert!(e.field == "tasks.t.lock_order" && e.message.contains("expected a resource name"), "{e}");
    let e = err(r#"{ "tasks": { "t": { "run": 1, "membind_nodes": [0] } } }"#);
    assert!(e.message.contains("nodes_membind"), "{e}");
}

/// The tutorial's events schedlab does not run are refused by name, at their key.
#[test]
fn memrun_and_the_semaphore_events_are_refused_by_name() {
    for (key, value) in [
        ("memrun", r#"{ "type": "read", "size": 4096, "count": 100 }"#),
        ("memrun_a", r#"{ "type": "chase", "size": 4096, "count": 100 }"#),
        ("sem_post", "\"s\""),
        ("sem_wait1", "\"s\""),
    ] {
        let e = err(&format!("{{ \"tasks\": {{ \"t\": {{ \"run\": 1,\n \"{key}\": {value} }} }} }}"));
        let kind = REFUSED_EVENTS.iter().find(|(k, _)| key.starts_with(k)).unwrap().0;
        assert_eq!((e.line, e.field.as_str()), (2, format!("tasks.t.{key}").as_str()), "{e}");
        assert!(e.message.contains(&format!("`{kind}` event is not supported")), "{e}");
    }
}

/// Every key `doc/tutorial.txt` documents (rt-app master of 2026-05) and what schedlab
/// does with it: run (`Ok`), accepted with a note naming it, or refused naming it.
/// docs/rt-app.md has the same table.
#[test]
fn every_key_of_the_tutorial_is_run_noted_or_refused_by_name() {
    enum Is {
        Runs,
        Noted(&'static str),
        Refused(&'static str),
    }
    use Is::*;
    let global = |kv: &str| format!(r#"{{ "global": {{ {kv} }}, "tasks": {{ "t": {{ "run": 10 }} }} }}"#);
    let thread = |kv: &str| format!(r#"{{ "tasks": {{ "t": {{ {kv}, "run": 10 }} }} }}"#);
    let phase = |kv: &str| format!(r#"{{ "tasks": {{ "t": {{ "phases": {{ "p": {{ {kv}, "run": 10 }} }} }} }} }}"#);
    let cases: Vec<(String, Is)> = vec![
        (global(r#""duration": 2"#), Runs),
        (global(r#""calibration": "CPU0""#), Noted("calibration `CPU0`")),
        (global(r#""calibration": 300"#), Runs),
        (global(r#""default_policy": "SCHED_RR""#), Runs),
        (global(r#""pi_enabled": true"#), Runs),
        (global(r#""lock_pages": true"#), Noted("`lock_pages`")),
        (global(r#""logdir": "./""#), Noted("`logdir`")),
        (global(r#""log_basename": "x""#), Noted("`log_basename`")),
        (global(r#""log_size": "file""#), Noted("`log_size`")),
        (global(r#""ftrace": "main,task""#), Noted("`ftrace`")),
        (global(r#""gnuplot": true"#), Noted("`gnuplot`")),
        (global(r#""io_device": "/dev/null""#), Runs),
        (global(r#""mem_buffer_size": 4096"#), Runs),
        (global(r#""cumulative_slack": true"#), Noted("`cumulative_slack`")),
        (
            r#"{ "resources": { "m": { "type": "mutex" } }, "tasks": { "t": { "run": 10 } } }"#.into(),
            Noted("`resources`"),
        ),
        (thread(r#""instance": 2"#), Runs),
        (thread(r#""delay": 100"#), Runs),
        (thread(r#""loop": 3"#), Runs),
        (thread(r#""policy": "SCHED_BATCH", "priority": 5"#), Runs),
        (thread(r#""policy": "SCHED_DEADLINE", "dl-runtime": 100, "dl-period": 1000, "dl-deadline": 500"#), Runs),
        (
            thread(r#""policy": "SCHED_DEADLINE", "runtime": 100, "period": 1000, "deadline": 500"#),
            Noted("legacy `dl-runtime`"),
        ),
        (thread(r#""dl-runtime": 1000"#), Runs),
        (thread(r#""cpus": [0, 1]"#), Runs),
        (thread(r#""util_min": 100, "util_max": 900"#), Runs),
        (thread(r#""nodes_membind": [0]"#), Noted("`nodes_membind`")),
        (thread(r#""taskgroup": "/a/b""#), Runs),
        (phase(r#""loop": 2, "cpus": [1], "priority": 3, "taskgroup": "/g""#), Runs),
        (phase(r#""util_min": 10"#), Noted("`util_min`")),
        (thread(r#""runtime": 10, "sleep": 10, "mem": 100, "iorun": 100, "yield": """#), Noted("`iorun`")),
        (thread(r#""timer": { "ref": "unique", "period": 100, "mode": "absolute" }"#), Runs),
        (thread(r#""lock": "m", "wait": { "ref": "c", "mutex": "m" }, "unlock": "m""#), Runs),
        (
            thread(r#""lock": "m", "sync": { "ref": "c", "mutex": "m" }, "unlock": "m", "signal": "c", "broad": "c""#),
            Runs,
        ),
        (thread(r#""barrier": "b", "suspend": "", "resume": "t""#), Runs),
        (r#"{ "tasks": { "t": { "run": 10, "fork": "u" }, "u": { "instance": 0, "run": 5 } } }"#.into(), Runs),
        (thread(r#""memrun": { "type": "write", "size": 64, "count": 64 }"#), Refused("`memrun`")),
        (thread(r#""sem_post": "s", "sem_wait": "s""#), Refused("`sem_post`")),
    ];
    for (text, is) in &cases {
        match (convert("t.json", text).map(|c| c.notes), is) {
            (Ok(_), Runs) => {}
            (Ok(n), Noted(s)) => assert!(n.iter().any(|x| x.contains(s)), "{text}: no note with {s}: {n:?}"),
            (Err(e), Refused(s)) => assert!(e.message.contains(s), "{text}: {e}"),
            (Ok(n), Refused(_)) => panic!("{text}: accepted ({n:?})"),
            (Err(e), _) => panic!("{text}: {e}"),
        }
        if !matches!(is, Refused(_)) {
            wl(text);
        }
    }
    // Every event rt-app knows is run or refused.
    assert_eq!(EVENTS.len() + REFUSED_EVENTS.len(), 20);
}

/// Since Linux 6.12 `dl-runtime` of a SCHED_OTHER/SCHED_BATCH thread is its custom slice
/// (`rt-app.c:__set_thread_sched_other_attrs` passes it as `sched_runtime`; the kernel
/// clamps it to 0.1–100 ms). A phase applies it only with a `policy` or `priority`
/// (`_set_thread_cfs` returns when the priority is unchanged); SCHED_IDLE ignores it.
#[test]
fn dl_runtime_of_a_fair_thread_is_its_custom_slice() {
    let w = wl(r#"{ "tasks": {
        "a": { "run": 10, "policy": "SCHED_OTHER", "priority": -19, "dl-runtime": 3000 },
        "b": { "run": 10, "policy": "SCHED_BATCH", "dl-runtime": 200000 },
        "c": { "run": 10, "policy": "SCHED_IDLE", "dl-runtime": 3000 },
        "d": { "phases": { "p0": { "run": 10, "priority": 2, "dl-runtime": 500 }, "p1": { "run": 10, "dl-runtime": 900 } } }
    } }"#);
    let t = |n: &str| &w.templates[w.template_index(n).unwrap()];
    assert_eq!((t("a").slice, t("a").nice), (Some(schedlab_sim::Ns::from_us(3000)), -19));
    assert_eq!(t("b").slice, Some(schedlab_sim::Ns::from_ms(100)));
    assert_eq!(t("c").slice, None);
    let slices: Vec<_> = ops(&w, "d").into_iter().filter(|o| matches!(o, Op::SetSlice(_))).collect();
    assert_eq!(slices, [Op::SetSlice(Some(schedlab_sim::Ns::from_us(500)))]);
    let n = &w.notes;
    assert!(n.iter().any(|x| x.contains("clamped to 100000 µs")), "{n:?}");
    assert!(n.iter().any(|x| x.contains("SCHED_IDLE thread is ignored")), "{n:?}");
    assert!(n.iter().any(|x| x.contains("changes nothing")), "{n:?}");
}

/// `parse_sched_data` reads a thread's `runtime` as the legacy `dl-runtime` also when
/// the thread has no `phases`, where the same key is a runtime event.
#[test]
fn a_thread_level_runtime_is_also_the_legacy_dl_runtime() {
    let w = wl(r#"{ "tasks": {
        "dl": { "policy": "SCHED_DEADLINE", "runtime": 2000, "period": 10000, "timer": { "ref": "unique", "period": 10000 } },
        "cfs": { "runtime": 1000, "sleep": 1000 }
    } }"#);
    let t = |n: &str| &w.templates[w.template_index(n).unwrap()];
    let Policy::Deadline(dl) = t("dl").policy else { panic!("{:?}", t("dl").policy) };
    assert_eq!((dl.runtime, dl.period), (2_000_000, 10_000_000));
    assert_eq!(t("cfs").slice, Some(schedlab_sim::Ns::from_ms(1)));
    assert!(matches!(ops(&w, "cfs")[1], Op::Spin(_)), "{:?}", ops(&w, "cfs"));
}

/// A phase with only `dl-*` leaves an rt thread's priority alone (`_set_thread_rt`).
#[test]
fn a_phase_without_policy_or_priority_keeps_the_thread_s_rt_priority() {
    let w = wl(r#"{ "tasks": { "t": { "policy": "SCHED_FIFO", "priority": 50,
        "phases": { "p": { "run": 10, "dl-runtime": 100 } } } } }"#);
    assert_eq!(w.templates[0].policy, Policy::Fifo { prio: 50 });
    assert!(!ops(&w, "t").iter().any(|o| matches!(o, Op::SetPolicy { .. })), "{:?}", ops(&w, "t"));
}

/// `suspend` waits on the thread's own name whatever its value says, of any type
/// (`parse_task_event_data`: `ref = tdata->name`).
#[test]
fn suspend_waits_on_its_own_thread_whatever_the_value() {
    let w = wl(r#"{ "tasks": {
        "a": { "suspend": "b", "run": 10 },
        "b": { "suspend": 7, "run": 10, "resume": "a" }
    } }"#);
    assert_eq!(w.conds, ["a", "b"]);
    let cond = |t: &str| {
        ops(&w, t).into_iter().find_map(|o| if let Op::CondWait { cond, .. } = o { Some(cond) } else { None })
    };
    let index = |n: &str| w.conds.iter().position(|c| c == n);
    assert_eq!((cond("a"), cond("b")), (index("a"), index("b")));
}

/// `get_in_object` returns no object for a `null` value: the key's default.
#[test]
fn a_null_property_takes_its_default() {
    let w = wl(
        r#"{ "global": { "duration": null }, "tasks": { "t": { "loop": null, "priority": null, "cpus": null, "run": 10 } } }"#,
    );
    assert_eq!((w.templates[0].nice, w.duration), (0, None));
    assert!(matches!(ops(&w, "t")[0], Op::Loop { count: None, .. }));
    // An event's value is no property: rt-app refuses a `null` run.
    assert!(err(r#"{ "tasks": { "t": { "run": null } } }"#).message.contains("expected an integer"));
}

/// rt-app reads integers with `json_object_get_int`, which clamps to a C int.
#[test]
fn integers_are_read_as_c_ints() {
    let c = convert("t.json", r#"{ "tasks": { "t": { "run": 3000000000, "sleep": 99999999999999999999 } } }"#).unwrap();
    assert!(
        c.toml.contains("{ run = \"2147483647us\" }") && c.toml.contains("{ sleep = \"2147483647us\" }"),
        "{}",
        c.toml
    );
    assert!(c.notes.iter().any(|n| n.contains("`tasks.t.run` = 3000000000 is beyond a C int")), "{:?}", c.notes);
    let e = err(r#"{ "tasks": { "t": { "run": -3000000000 } } }"#);
    assert!(e.message.contains("must be >= 0, found -2147483648"), "{e}");
}

/// What rt-app checks and exits on is refused: `ftrace` categories (`ftrace_setup`), a
/// legacy resource's `type` (`string_to_resource`), a repeated property.
#[test]
fn what_rt_app_refuses_in_known_keys_is_refused() {
    let e = err(r#"{ "global": { "ftrace": "main,sched" }, "tasks": { "t": { "run": 1 } } }"#);
    assert!(e.field == "global.ftrace" && e.message.contains("`sched`"), "{e}");
    wl(r#"{ "global": { "ftrace": "MAIN,,task" }, "tasks": { "t": { "run": 1 } } }"#);
    wl(r#"{ "global": { "ftrace": false }, "tasks": { "t": { "run": 1 } } }"#);
    let e = err(r#"{ "resources": { "m": { "type": "semaphore" } }, "tasks": { "t": { "run": 1 } } }"#);
    assert!(e.field == "resources.m.type", "{e}");
    let e = err(r#"{ "global": { "log_size": true }, "tasks": { "t": { "run": 1 } } }"#);
    assert_eq!(e.field, "global.log_size");
    let e = err("{ \"tasks\": { \"t\": { \"run\": 1, \"loop\": 2,\n \"loop\": 3 } } }");
    assert!(e.line == 2 && e.message.contains("given twice"), "{e}");
}
