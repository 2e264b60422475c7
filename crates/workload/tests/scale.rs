//! Loading at scale: 100 000 tasks whose names refer to one another (forks of templates
//! further down, changes, cgroup parents written children first, sessions, timers;
//! `schedlab_workload::synthetic`) load with every name resolved. Each lookup was
//! once a search of a list, and loading these took 17 s (native) and 107 s (rt-app);
//! indexed, each loads in a fraction of a second in release. The time itself is
//! `schedlab bench`'s to measure, not a test's.

use schedlab_workload::{parse_workload, synthetic, Op};

const TASKS: usize = 100_000;

#[test]
fn a_native_workload_of_100_000_tasks_resolves_every_name() {
    let text = synthetic::native(TASKS as u64);
    let wl = parse_workload("big.toml", &text, &[], 8).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(wl.templates.len(), TASKS);
    assert_eq!(wl.initial_tasks(), TASKS as u64 * 9 / 10);
    assert_eq!(wl.timers.len(), TASKS, "one timer per task");
    // Cgroups come out parents first: the chain's root `g9999` first, `g0` last.
    let groups = &wl.groups.cgroups;
    assert_eq!(groups.len(), TASKS / 10);
    for (k, g) in groups.iter().enumerate() {
        assert_eq!(g.name, format!("g{}", TASKS / 10 - 1 - k));
        assert_eq!(g.parent, k.checked_sub(1));
    }
    assert_eq!(wl.groups.sessions.len(), TASKS / 10);
    for i in [0, 8, 9, 12_345, 54_328, TASKS - 2, TASKS - 1] {
        let t = &wl.templates[i];
        assert_eq!((t.name.as_str(), t.template), (format!("t{i}").as_str(), i % 10 == 9));
        let g = &groups[t.group.expect("a group")];
        assert_eq!(g.name, format!("g{}", i / 10));
        assert_eq!(wl.groups.sessions[t.session.expect("a session")].name, format!("s{}", i / 10));
        let p = wl.program(i, 0).unwrap();
        assert!(matches!(p.ops[1], Op::Timer { named: Some(n), .. } if n.id == i), "{:?}", p.ops[1]);
        let fork = p.ops.iter().find_map(|o| match o {
            Op::Fork { template, .. } => Some(*template),
            _ => None,
        });
        assert_eq!(fork, (i % 10 == 8).then_some(i + 1), "t{i} forks the template after it");
    }
    assert_eq!(wl.changes.len(), TASKS / 10);
    for (k, c) in wl.changes.iter().enumerate() {
        assert_eq!((c.template, c.nice), (Some(10 * k), Some(1)));
    }
}

#[test]
fn an_rtapp_file_of_100_000_threads_resolves_every_name() {
    let text = synthetic::rtapp(TASKS as u64);
    let wl = parse_workload("big.json", &text, &[], 8).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(wl.templates.len(), TASKS);
    assert_eq!(wl.initial_tasks(), TASKS as u64 * 9 / 10);
    assert_eq!(wl.timers.len(), TASKS);
    // `/g{k}` and each thread's `/g{k}/h{i}`, parents first.
    assert_eq!(wl.groups.cgroups.len(), TASKS + TASKS / 100);
    for i in [0, 8, 9, 777, 54_328, TASKS - 1] {
        let t = &wl.templates[wl.template_index(&format!("t{i}")).expect("the thread")];
        assert_eq!(t.count, u64::from(i % 10 != 9));
        let g = &wl.groups.cgroups[t.group.expect("a taskgroup")];
        assert_eq!(g.name, format!("/g{}/h{i}", i / 100));
        assert_eq!(wl.groups.cgroups[g.parent.expect("a parent")].name, format!("/g{}", i / 100));
        let p = wl.program(wl.template_index(&t.name).unwrap(), 0).unwrap();
        let timer = p.ops.iter().find_map(|o| if let Op::Timer { named, .. } = o { *named } else { None });
        assert_eq!(wl.timers[timer.expect("a named timer").id].name, format!("tm{i}"));
        let fork = p.ops.iter().find_map(|o| if let Op::Fork { template, .. } = o { Some(*template) } else { None });
        assert_eq!(fork.map(|f| wl.templates[f].name.clone()), (i % 10 == 8).then(|| format!("t{}", i + 1)));
    }
}
