//! Synthetic workloads of any size whose names refer to one another the way large files
//! do — `fork` of templates defined further down, `[[change]]`s naming tasks, cgroups
//! whose parents come later in the file, sessions, rt-app timers and mutexes, one per
//! task. `schedlab bench` times loading them; the workload crate's scaling tests check
//! that every name resolves at 100 000 tasks.

use std::fmt::Write;

/// A native workload of `tasks` `[[task]]` tables (`tasks` ≥ 10): task `t{i}` in cgroup
/// `g{i/10}` and session `s{i/10}`, running on its own rt-app timer `r{i}`;
/// every tenth task (`t9`, `t19`, …) a template forked by the task before it; a `[[change]]`
/// renicing every tenth task; the cgroups a chain `g0` → `g1` → … written children first
/// (each `g{k}`'s parent is `g{k+1}`, the last one's the root).
pub fn native(tasks: u64) -> String {
    let tasks = tasks.max(10);
    let groups = tasks.div_ceil(10);
    let mut s = String::with_capacity(tasks as usize * 120);
    let _ = writeln!(s, "name = \"synthetic-{tasks}\"");
    for g in 0..groups {
        let _ = write!(s, "[[group]]\nname = \"g{g}\"\n");
        if g + 1 < groups {
            let _ = writeln!(s, "parent = \"g{}\"", g + 1);
        }
    }
    for i in 0..tasks {
        let template = i % 10 == 9;
        let fork = if i % 10 == 8 { format!(", {{ fork = \"t{}\" }}", i + 1) } else { String::new() };
        let _ = writeln!(
            s,
            "[[task]]\nname = \"t{i}\"\n{}group = \"g{}\"\nsession = \"s{}\"\n\
             program = [ {{ run = \"1ms\" }}, {{ timer = \"10ms\", ref = \"r{i}\" }}{fork} ]",
            if template { "template = true\n" } else { "" },
            i / 10,
            i / 10,
        );
    }
    for i in (0..tasks).step_by(10) {
        let _ = writeln!(s, "[[change]]\nat = \"5ms\"\ntasks = \"t{i}\"\nset_nice = 1");
    }
    s
}

/// An rt-app file of `tasks` threads (`tasks` ≥ 10): thread `t{i}` in taskgroup
/// `/g{i/100}/h{i}`, running on its own shared timer `tm{i}`;
/// every tenth thread (`t9`, `t19`, …) has instance 0 and is forked by the thread before it.
pub fn rtapp(tasks: u64) -> String {
    let tasks = tasks.max(10);
    let mut s = String::with_capacity(tasks as usize * 120);
    s.push_str("{\n \"global\": { \"duration\": 1 },\n \"tasks\": {\n");
    for i in 0..tasks {
        let instance = if i % 10 == 9 { 0 } else { 1 };
        let fork = if i % 10 == 8 { format!(", \"fork\": \"t{}\"", i + 1) } else { String::new() };
        let _ = writeln!(
            s,
            "  \"t{i}\": {{ \"instance\": {instance}, \"taskgroup\": \"/g{}/h{i}\", \"run\": 1000, \
             \"timer\": {{ \"ref\": \"tm{i}\", \"period\": 10000 }}{fork} }}{}",
            i / 100,
            if i + 1 < tasks { "," } else { "" },
        );
    }
    s.push_str(" }\n}\n");
    s
}
