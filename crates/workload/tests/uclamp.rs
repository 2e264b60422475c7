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

fn parse_group(keys: &str) -> Result<Workload, String> {
    let text = format!("name = \"u\"\n[[group]]\nname = \"g\"\n{keys}[[task]]\nname = \"t\"\ngroup = \"g\"\nprogram = [ {{ run = \"1ms\" }} ]\n");
    parse_workload("g.toml", &text, &[], 1).map_err(|e| e.to_string())
}

/// `cpu.uclamp.min/max` (`capacity_from_percent`, core.c v5.15 and v6.18): a percentage
/// with two decimals (more are rounded to the closest, as `cgroup_parse_float` does) or
/// `"max"`, becoming `DIV_ROUND_CLOSEST(percent × 1024, 10000)`; a minimum above the
/// maximum is accepted, as the kernel accepts it.
#[test]
fn group_clamps_from_percent() {
    let g = |keys: &str| parse_group(keys).expect(keys).groups.cgroups[0].uclamp;
    assert_eq!(g("uclamp_min = 20.0\nuclamp_max = 80\n"), UclampReq { min: Some(205), max: Some(819) });
    assert_eq!(g("uclamp_max = \"max\"\n"), UclampReq { min: None, max: Some(1024) });
    // 12.345 → 1235 hundredths (rounded) → 1235 × 1024 / 10000 = 126.46 → 126.
    assert_eq!(g("uclamp_min = 12.345\n"), UclampReq { min: Some(126), max: None });
    assert_eq!(g("uclamp_min = 0\nuclamp_max = 100.00\n"), UclampReq { min: Some(0), max: Some(1024) });
    assert_eq!(g("uclamp_min = 90\nuclamp_max = 10\n"), UclampReq { min: Some(922), max: Some(102) });
    assert!(g("").is_none());
}

#[test]
fn bad_group_clamps_are_located_errors() {
    for (keys, line, what) in [
        ("uclamp_min = 100.01\n", 4, "`group[0].uclamp_min`: 100.01 % is above 100"),
        ("uclamp_max = -1\n", 4, "`group[0].uclamp_max`: -1 % is below 0"),
        ("\nuclamp_max = \"big\"\n", 5, "group[0].uclamp_max"),
        ("uclamp_min = 1e1\n", 4, "not a percentage"),
        ("uclamp_max = true\n", 4, "expected a percentage"),
    ] {
        let err = parse_group(keys).expect_err(keys);
        assert!(err.contains(&format!("g.toml:{line}:")) && err.contains(what), "{keys}: {err}");
    }
}

/// A group clamp may be a workload parameter (`"$boost"`), overridden like any other
/// (`--param boost=50`): its text is read as the file's would be.
#[test]
fn group_clamps_from_a_parameter() {
    let text = "name = \"u\"\n[params]\nboost = 0\n[[group]]\nname = \"g\"\nuclamp_min = \"$boost\"\n\
[[task]]\nname = \"t\"\ngroup = \"g\"\nprogram = [ { run = \"1ms\" } ]\n";
    let min = |over: &[(String, String)]| parse_workload("p.toml", text, over, 1).unwrap().groups.cgroups[0].uclamp.min;
    assert_eq!(min(&[]), Some(0));
    assert_eq!(min(&[("boost".into(), "50".into())]), Some(512));
    let e = parse_workload("p.toml", text, &[("boost".into(), "101".into())], 1).unwrap_err().to_string();
    assert!(e.contains("p.toml:6:") && e.contains("above 100"), "{e}");
}
