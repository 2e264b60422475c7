//! Sweeps: expansion of grids and lists, located errors, and tables that do not depend on
//! how many threads ran them.

use schedlab_sweep::{parse, run_local, Table};

const WORKLOAD: &str = r#"
machine = "smp2"
[params]
workers = 2
[[task]]
name = "w"
count = "$workers"
program = [ { loop = 200, do = [ { run = "300us" }, { sleep = "200us" } ] } ]
"#;

fn sweep(spec: &str) -> Result<schedlab_sweep::Sweep, schedlab_sim::SourceError> {
    parse("s.toml", spec, &|p| {
        if p == "w.toml" {
            Ok((p.into(), WORKLOAD.into()))
        } else {
            Err(format!("no file {p}"))
        }
    })
}

#[test]
fn a_grid_is_every_combination_in_order() {
    let s = sweep(
        "workload = \"w.toml\"\n[grid]\nschedulers = [\"cfs\", \"ule\"]\nseeds = { from = 5, count = 2 }\nparams = { workers = [1, 3] }\n",
    )
    .unwrap();
    let got: Vec<(String, u64, String)> =
        s.points.iter().map(|p| (p.scheduler.clone(), p.seed, p.params[0].1.clone())).collect();
    let want: Vec<(String, u64, String)> = ["cfs", "ule"]
        .iter()
        .flat_map(|s| ["1", "3"].iter().flat_map(move |w| [5, 6].map(|seed| (s.to_string(), seed, w.to_string()))))
        .collect();
    assert_eq!(got, want);
    assert!(s.points.iter().enumerate().all(|(i, p)| p.run == i));
}

/// A tunable aimed at one scheduler multiplies only that scheduler's runs.
#[test]
fn a_targeted_tunable_varies_only_its_scheduler() {
    let s = sweep(
        "workload = \"w.toml\"\n[grid]\nschedulers = [\"cfs\", \"eevdf@6.6\", \"ule\"]\n\
         set = { \"cfs:sched_min_granularity_ns\" = [\"750000\", \"3000000\"], \"eevdf:base_slice_ns\" = 3000000 }\n\
         [[run]]\nscheduler = \"o1\"\nseed = 9\n",
    )
    .unwrap();
    let per = |name: &str| s.points.iter().filter(|p| p.scheduler == name).count();
    assert_eq!((per("cfs"), per("eevdf@6.6"), per("ule"), per("o1")), (2, 1, 1, 1));
    assert_eq!(s.points.last().unwrap().seed, 9);
    assert!(s.points.iter().filter(|p| p.scheduler == "ule").all(|p| p.sets.is_empty()));
}

#[test]
fn errors_name_file_line_column_and_field() {
    let e = sweep("workload = \"w.toml\"\n[grid]\nschedulers = [\"cfs\"]\nseed = [1]\n").unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (4, "grid.seed"), "{e}");
    let e = sweep("workload = \"w.toml\"\n[grid]\nseeds = [1, -2]\n").unwrap_err();
    assert_eq!((e.line, e.column, e.field.as_str()), (3, 13, "grid.seeds[1]"), "{e}");
    let e = sweep("workload = \"nope.toml\"\n[grid]\n").unwrap_err();
    assert!(e.to_string().starts_with("s.toml:1:12: field `workload`: no file nope.toml"), "{e}");
    let e = sweep("workload = \"w.toml\"\n").unwrap_err();
    assert!(e.message.contains("no runs"), "{e}");
    let e = sweep("workload = \"w.toml\"\n[grid]\nseeds = { from = 1, count = 100001 }\n").unwrap_err();
    assert_eq!(e.field, "grid.seeds.count", "{e}");
}

/// An unknown scheduler, version or tunable (or one a scheduler of the grid lacks) is
/// refused where the sweep file names it, before anything runs.
#[test]
fn unknown_schedulers_versions_and_tunables_are_located() {
    let e = sweep("workload = \"w.toml\"\n[grid]\nschedulers = [\"cfs\", \"eevdf@6.7\"]\n").unwrap_err();
    assert_eq!((e.line, e.column, e.field.as_str()), (3, 22, "grid.schedulers[1]"), "{e}");
    assert!(e.message.contains("6.6, 6.12 or 6.18"), "{e}");
    let e = sweep("workload = \"w.toml\"\n[grid]\nschedulers = [\"cfs\", \"ule\"]\nset = { sched_min_granularity_ns = 1000000 }\n")
        .unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (4, "grid.set.sched_min_granularity_ns"), "{e}");
    assert!(e.message.starts_with("ule: ") && e.message.contains("unknown tunable"), "{e}");
    let e = sweep("workload = \"w.toml\"\n[grid]\nschedulers = [\"eevdf@6.12\"]\nset = { PICK_BUDDY = [0, 1] }\n")
        .unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (4, "grid.set.PICK_BUDDY[0]"), "{e}");
    assert!(e.message.contains("does not exist in fair.c v6.12"), "{e}");
    let e =
        sweep("workload = \"w.toml\"\n[[run]]\nscheduler = \"eevdf\"\nset = { DELAY_DEQUEUE = \"2\" }\n").unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (4, "run[0].set.DELAY_DEQUEUE"), "{e}");
}

/// `set = { "xyz:slice" = [1] }` was dropped silently when no scheduler of the grid is
/// `xyz` (issue 31), while `run`/`compare --set xyz:slice=1` refuse it: refused here too,
/// where the key is written.
#[test]
fn a_tunable_aimed_at_no_scheduler_of_the_grid_is_refused() {
    let e = sweep("workload = \"w.toml\"\n[grid]\nschedulers = [\"cfs\", \"ule\"]\nset = { \"xyz:slice\" = [1] }\n")
        .unwrap_err();
    assert_eq!((e.line, e.column, e.field.as_str()), (4, 9, "grid.set.xyz:slice"), "{e}");
    assert!(e.message.contains("`xyz` is not among the grid's schedulers (cfs, ule)"), "{e}");
    // Without `schedulers`, the grid's are the workload's (here the defaults).
    let e = sweep("workload = \"w.toml\"\n[grid]\nset = { \"o1:hz\" = 100 }\n").unwrap_err();
    assert!(e.message.contains("`o1` is not among the grid's schedulers"), "{e}");
    // By base name a target reaches a versioned scheduler, as before.
    sweep("workload = \"w.toml\"\n[grid]\nschedulers = [\"eevdf@6.6\"]\nset = { \"eevdf:base_slice_ns\" = 3000000 }\n")
        .unwrap();
}

/// A point whose tunables are each valid but not together (a feature the version it also
/// sets lacks) fails before any run starts, naming the run.
#[test]
fn a_bad_run_fails_up_front_and_names_the_run() {
    let s = sweep("workload = \"w.toml\"\n[grid]\nschedulers = [\"cfs\", \"eevdf\"]\nset = { \"eevdf:version\" = \"6.6\", \"eevdf:PICK_BUDDY\" = 1 }\n")
        .unwrap();
    let e = run_local(&s.points, 2, &|_, _| true, &|_| panic!("no run may start")).unwrap_err();
    assert!(e.to_string().starts_with("sweep run 1 (scheduler eevdf"), "{e}");
}

/// The table is the same on one thread and on several, and has one row per run in order.
#[test]
fn tables_do_not_depend_on_the_number_of_threads() {
    let s = sweep(
        "workload = \"w.toml\"\nduration = \"30ms\"\n[grid]\nschedulers = [\"eevdf\", \"cfs\", \"ule\"]\nseeds = [1, 2]\nparams = { workers = [1, 3] }\n",
    )
    .unwrap();
    let one = run_local(&s.points, 1, &|_, _| true, &|_| {}).unwrap();
    let two = run_local(&s.points, 2, &|_, _| true, &|_| {}).unwrap();
    assert_eq!(one.to_csv(), two.to_csv());
    assert_eq!(one.rows.len(), 12);
    let col = |t: &Table, c: &str| t.columns.iter().position(|x| x == c).unwrap();
    assert_eq!(
        one.rows.iter().map(|r| r[col(&one, "run")].clone()).collect::<Vec<_>>(),
        (0..12).map(|i| i.to_string()).collect::<Vec<_>>()
    );
    // Three workers use more CPU time than one under every scheduler.
    let runtime = |i: usize| one.rows[i][col(&one, "runtime_ns")].parse::<u64>().unwrap();
    assert!((0..12).step_by(4).all(|i| runtime(i + 2) > runtime(i)), "{}", one.to_csv());
}

/// Names with commas, quotes and newlines survive the CSV (read back with the csv crate).
#[test]
fn csv_round_trips_awkward_text() {
    let rows = vec![
        vec![("run".to_string(), "1".to_string()), ("name".into(), "b \"quoted\"\nline".into())],
        vec![("run".to_string(), "0".to_string()), ("name".into(), "a, with comma".into()), ("x".into(), "1".into())],
    ];
    let t = Table::from_rows(rows);
    assert_eq!(t.columns, ["run", "name", "x"]);
    let csv = t.to_csv();
    let mut r = csv::Reader::from_reader(csv.as_bytes());
    let back: Vec<Vec<String>> = r.records().map(|x| x.unwrap().iter().map(str::to_string).collect()).collect();
    assert_eq!(back, t.rows);
    assert_eq!(back[0][1], "a, with comma");
}

/// Every kernel switch can vary in a sweep like a tunable (`kernel.*`, `futex.*`), and each
/// run's record reports the switch as the kernel ran it.
#[test]
fn a_sweep_sets_every_kernel_switch() {
    let defaults = schedlab_run::KernelConfig::default().values();
    let values: Vec<String> = defaults
        .iter()
        .map(|(name, def)| {
            let v = match *name {
                "kernel.version" => "\"3.4\"".to_string(),
                "futex.vip_starvation_ns" => "\"5ms\"".to_string(),
                "futex.max_lock_depth" => "\"7\"".to_string(),
                // A boolean: the opposite of its default.
                _ => format!("\"{}\"", if def == "1" { 0 } else { 1 }),
            };
            format!("\"{name}\" = [{v}]")
        })
        .collect();
    let text = format!(
        "workload = \"w.toml\"\nduration = \"5ms\"\n[grid]\nschedulers = [\"cfs\"]\nset = {{ {} }}\n",
        values.join(", ")
    );
    let s = sweep(&text).unwrap();
    assert_eq!(s.points.len(), 1);
    let record = s.points[0].spec().unwrap().run(&mut |_| true).unwrap();
    let got = &record.kernel.switches;
    for (name, def) in &defaults {
        let (_, v) = got.iter().find(|(k, _)| k == name).unwrap_or_else(|| panic!("{name} not in the record"));
        let want = match *name {
            "kernel.version" => "3.4".to_string(),
            "futex.vip_starvation_ns" => "5000000".to_string(),
            "futex.max_lock_depth" => "7".to_string(),
            // The wake list under 3.4 needs two LLCs; this machine has one (effective: off).
            "kernel.ttwu_queue" => "0".to_string(),
            // Every other boolean took the value set.
            _ => if def == "1" { "0" } else { "1" }.to_string(),
        };
        assert_eq!(v, &want, "{name}");
    }
    let e = sweep("workload = \"w.toml\"\n[grid]\nschedulers = [\"cfs\"]\nset = { \"kernel.nope\" = [\"1\"] }\n")
        .unwrap_err();
    assert!(e.to_string().contains("kernel.nope") && e.line == 4, "{e}");
}
