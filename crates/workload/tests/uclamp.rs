//! A task's utilisation clamps (`util_min`, `util_max`: `sched_setattr`'s
//! `SCHED_FLAG_UTIL_CLAMP_MIN` / `_MAX`): values as written, the kernel's limits
//! (`uclamp_validate`: 0..=1024, the minimum not above the maximum) as located errors, and
//! rt-app's thread-level keys passed through.

use schedlab_sched_api::UclampReq;
use schedlab_workload::{parse_workload, Workload};

fn parse(fields: &str) -> Result<Workload, String> {
    let text = format!("name = \"u\"\n[[task]]\nname = \"t\"\n{fields}program = [ {{ run = \"1ms\" }} ]\n");
    parse_workload("u.toml", &text, &[], 1).map_err(|e| e.to_string())
}

#[test]
fn clamps_read_as_written() {
    let w = parse("util_min = 512\nutil_max = 1024\n").expect("parses");
    assert_eq!(w.templates[0].uclamp, UclampReq { min: Some(512), max: Some(1024) });
    let w = parse("util_max = 0\n").expect("parses");
    assert_eq!(w.templates[0].uclamp, UclampReq { min: None, max: Some(0) });
    assert!(parse("").expect("parses").templates[0].uclamp.is_none());
}

#[test]
fn bad_clamps_are_located_errors() {
    for (fields, line, what) in [
        ("util_min = 1025\n", 4, "util_min 1025 outside 0..=1024"),
        ("util_max = -1\n", 4, "util_max"),
        ("util_max = 100\nutil_min = 200\n", 5, "util_min 200 above util_max 100"),
        ("util_min = \"big\"\n", 4, "util_min"),
    ] {
        let err = parse(fields).expect_err(fields);
        assert!(err.contains(&format!("u.toml:{line}:")) && err.contains(what), "{fields}: {err}");
    }
}

/// rt-app: a thread's `util_min`/`util_max` become its task's clamps (−1, rt-app's "unset",
/// none); an inverted pair is the kernel's error, located in the JSON.
#[test]
fn rtapp_thread_clamps_pass_through() {
    let json = |extra: &str| format!(r#"{{ "tasks": {{ "t": {{ {extra} "run": 1000, "sleep": 1000 }} }} }}"#);
    let w = parse_workload("t.json", &json(r#""util_min": 300, "util_max": -1,"#), &[], 1).expect("parses");
    assert_eq!(w.templates[0].uclamp, UclampReq { min: Some(300), max: None });
    let w = parse_workload("t.json", &json(""), &[], 1).expect("parses");
    assert!(w.templates[0].uclamp.is_none());
    let e = parse_workload("t.json", &json("\n\"util_min\": 900, \"util_max\": 100,"), &[], 1).expect_err("inverted");
    assert!(e.to_string().starts_with("t.json:2:") && e.to_string().contains("above util_max"), "{e}");
}
