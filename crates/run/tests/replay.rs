//! Trace replay end to end: a simulated run exported as Perfetto, imported and simulated
//! again keeps every task's CPU time and every wake dependency; an imported trace keeps its
//! CPU demand under any scheduler; a truncated export is refused, never a panic.

use schedlab_run::replay::{as_happened, import_bytes, Imported};
use schedlab_run::{RunRecord, RunSpec};
use schedlab_sim::Ns;
use schedlab_trace_import::model::{Model, Op, Options};
use std::collections::BTreeSet;

/// Two request/response pairs over pipes, each task on a CPU of its own so that each side
/// blocks on the other every time (a dependency the trace can show: a receiver that finds
/// its data already there never blocks, and nothing in a trace then tells that it read
/// it), and a CPU hog that forks a child and waits for it, the child sleeping once: up to
/// six runnable tasks on four CPUs, so the schedule has preemptions, migrations and both
/// kinds of wakeup.
const WORKLOAD: &str = r#"
name = "roundtrip"
[[pipe]]
name = "req"
count = 2
[[pipe]]
name = "resp"
count = 2
[[task]]
name = "client0"
affinity = [0]
program = [ { loop = 30, do = [ { run = "1ms" }, { send = "req.0", bytes = 64 }, { recv = "resp.0", bytes = 64 } ] } ]
[[task]]
name = "client1"
affinity = [1]
program = [ { loop = 30, do = [ { run = "1ms" }, { send = "req.1", bytes = 64 }, { recv = "resp.1", bytes = 64 } ] } ]
[[task]]
name = "server0"
affinity = [2]
program = [ { loop = 30, do = [ { recv = "req.0", bytes = 64 }, { run = "1500us" }, { send = "resp.0", bytes = 64 } ] } ]
[[task]]
name = "server1"
affinity = [3]
program = [ { loop = 30, do = [ { recv = "req.1", bytes = 64 }, { run = "1500us" }, { send = "resp.1", bytes = 64 } ] } ]
[[task]]
name = "hog"
program = [ { run = "30ms" }, { fork = "kid" }, { run = "20ms" }, "wait" ]
[[task]]
name = "kid"
template = true
program = [ { run = "10ms" }, { sleep = "5ms" }, { run = "5ms" } ]
"#;

fn run(file: &str, text: &str, sched: &str) -> RunRecord {
    let mut s = RunSpec::load(file, text, Some("smp4"), &[], Some(Ns::from_secs(10))).unwrap();
    s.sched = sched.into();
    s.trace = true;
    s.check = true;
    s.set("machine.noise", "none").unwrap();
    s.run(&mut |_| true).unwrap()
}

fn reimport(r: &RunRecord, file: &str) -> Imported {
    let bytes = schedlab_report::perfetto::encode(r).expect("the run kept its events");
    import_bytes(file, &bytes, &Options::default()).unwrap()
}

/// A simulated task's record by the imported thread's name (a forked one is `name.0`).
fn sim_task<'a>(r: &'a RunRecord, name: &str) -> &'a schedlab_metrics::TaskRecord {
    r.tasks.iter().find(|t| t.name == name || t.name == format!("{name}.0")).unwrap_or_else(|| panic!("{name}"))
}

/// The (waker, wakee) dependencies by the traced tasks' names.
fn edges(m: &Model) -> BTreeSet<(String, String)> {
    m.edges.iter().map(|e| (m.threads[e.waker].comm.clone(), m.threads[e.wakee].comm.clone())).collect()
}

#[test]
fn round_trip_keeps_run_time_and_dependencies() {
    let r1 = run("roundtrip.toml", WORKLOAD, "eevdf");
    let imp = reimport(&r1, "roundtrip.pftrace");
    assert_eq!(imp.model.threads.len(), r1.tasks.len());
    let r2 = run("roundtrip.replay.toml", &imp.text, "eevdf");
    assert_eq!(r2.end_reason.as_str(), "all_exited", "the replay runs to its end: no dependency deadlocks");
    for t in &imp.model.threads {
        // The Perfetto export names task t as pid t + 1.
        let orig = &r1.tasks[t.tid as usize - 1];
        let again = sim_task(&r2, &t.name);
        let err = (again.runtime_ns as f64 - orig.runtime_ns as f64).abs() / orig.runtime_ns as f64;
        assert!(
            err < 0.01,
            "{}: run time {} then {} ({:.3} %)",
            orig.name,
            orig.runtime_ns,
            again.runtime_ns,
            err * 100.0
        );
    }
    // Every receiver still waits for its sender: each pipe's writer → reader wakeups became
    // dependencies, and survive a second round trip (the replay's own export).
    let first = edges(&imp.model);
    for n in 0..2 {
        for pair in [(format!("client{n}"), format!("server{n}")), (format!("server{n}"), format!("client{n}"))] {
            assert!(first.contains(&pair), "{pair:?} missing from {first:?}");
        }
    }
    let again = reimport(&r2, "roundtrip.replay.pftrace");
    let by_name = |s: &str| {
        let s = s.strip_suffix(".0").unwrap_or(s);
        imp.model.threads.iter().find(|t| t.name == s).map(|t| t.comm.clone()).unwrap_or_default()
    };
    let second: BTreeSet<(String, String)> =
        edges(&again.model).iter().map(|(a, b)| (by_name(a), by_name(b))).collect();
    for n in 0..2 {
        assert!(second.contains(&(format!("client{n}"), format!("server{n}"))), "{second:?}");
        assert!(second.contains(&(format!("server{n}"), format!("client{n}"))), "{second:?}");
    }
}

#[test]
fn the_trace_as_it_happened_measures_like_the_run() {
    let r1 = run("roundtrip.toml", WORKLOAD, "eevdf");
    let imp = reimport(&r1, "roundtrip.pftrace");
    let spec = RunSpec::load("roundtrip.replay.toml", &imp.text, Some("smp4"), &[], None).unwrap();
    let seen = as_happened(&spec, &imp);
    for t in &imp.model.threads {
        let orig = &r1.tasks[t.tid as usize - 1];
        let got = sim_task(&seen, &t.name);
        assert_eq!(got.runtime_ns, orig.runtime_ns, "{}", orig.name);
        assert_eq!(got.switches_voluntary, orig.switches_voluntary, "{}", orig.name);
        assert_eq!(got.switches_involuntary, orig.switches_involuntary, "{}", orig.name);
    }
}

#[test]
fn another_scheduler_changes_the_schedule_not_the_demand() {
    let r1 = run("roundtrip.toml", WORKLOAD, "eevdf");
    let imp = reimport(&r1, "roundtrip.pftrace");
    let runs: Vec<RunRecord> = ["eevdf", "cfs", "ule"].iter().map(|s| run("replay.toml", &imp.text, s)).collect();
    for t in &imp.model.threads {
        let demand: u64 = t.ops.iter().map(|o| if let Op::Run(d) = o { *d } else { 0 }).sum();
        for r in &runs {
            let got = sim_task(r, &t.name).runtime_ns;
            // The replay adds only its own kernel work (futex calls, switches) to the demand.
            assert!(
                got >= demand && got - demand <= demand / 100 + 100_000,
                "{} under {}: {got} for {demand}",
                t.name,
                r.scheduler.name
            );
        }
    }
    let switches = |r: &RunRecord| r.tasks.iter().map(|t| (t.switches_involuntary, t.migrations)).collect::<Vec<_>>();
    assert!(
        switches(&runs[0]) != switches(&runs[1]) || switches(&runs[0]) != switches(&runs[2]),
        "the schedulers scheduled the replay identically"
    );
}

#[test]
fn a_truncated_perfetto_trace_is_an_error() {
    let r1 = run("roundtrip.toml", WORKLOAD, "eevdf");
    let bytes = schedlab_report::perfetto::encode(&r1).unwrap();
    for i in 1..40 {
        let cut = bytes.len() * i / 40;
        if let Err(e) = import_bytes("cut.pftrace", &bytes[..cut], &Options::default()) {
            assert!(e.to_string().starts_with("cut.pftrace"), "{e}");
        }
    }
    let e = import_bytes("cut.pftrace", &bytes[..bytes.len() / 2 + 1], &Options::default());
    assert!(e.is_err() || bytes.len() < 4, "a cut inside a packet is refused");
}

/// ftrace text of a nice-19 thread `p` woken by a timer interrupt (irq context, on the
/// other CPU) 3 ms after each 1 ms burst, then waiting 2 ms behind a hog for its CPU,
/// twelve times, beside two hogs; returns the text and the times of the wakeups (ns from
/// the first event).
fn timer_woken_trace() -> (String, Vec<u64>) {
    let ms = 1_000_000u64;
    let base = 100_000_000_000u64;
    let ts = |t: u64| format!("{}.{:06}", (base + t) / 1_000_000_000, (base + t) % 1_000_000_000 / 1000);
    let sw = |cpu: u32, t: u64, (pc, pp, pr): (&str, u32, u32), st: &str, (nc, np, nr): (&str, u32, u32)| {
        format!(
            " {pc}-{pp} [{cpu:03}] d..2. {}: sched_switch: prev_comm={pc} prev_pid={pp} prev_prio={pr} \
             prev_state={st} ==> next_comm={nc} next_pid={np} next_prio={nr}\n",
            ts(t)
        )
    };
    let (hog0, hog1, p, idle1) = (("hog0", 21, 120), ("hog1", 20, 120), ("p", 10, 139), ("swapper/1", 0, 120));
    let mut text = String::from("# tracer: nop\n");
    text += &sw(1, 0, idle1, "R", hog1);
    let mut wakes = Vec::new();
    let mut start = 0;
    for k in 0..12 {
        text += &sw(0, start, hog0, "R+", p);
        if k == 11 {
            text += &sw(0, start + ms, p, "X", hog0);
            break;
        }
        text += &sw(0, start + ms, p, "S", hog0);
        let wake = start + 4 * ms;
        text += &format!(" hog1-20 [001] d.h2. {}: sched_waking: comm=p pid=10 prio=139 target_cpu=000\n", ts(wake));
        wakes.push(wake);
        start = wake + 2 * ms;
    }
    let end = start + 5 * ms;
    text += &sw(0, end, hog0, "S", ("swapper/0", 0, 120));
    text += &sw(1, end, hog1, "S", idle1);
    (text, wakes)
}

/// Wakeups from outside the traced set (here a timer interrupt) fire at the times the
/// trace saw them, whatever the replay's schedule: replayed on four CPUs, `p` no longer
/// waits behind the hogs, yet each wakeup still comes when it came in the trace (an
/// absolute timer; a sleep of the length seen would drift earlier by every 2 ms wait).
#[test]
fn outside_wakeups_fire_at_the_times_seen() {
    let (text, wakes) = timer_woken_trace();
    let imp = import_bytes("timer.txt", text.as_bytes(), &Options::default()).unwrap();
    let p = imp.model.threads.iter().find(|t| t.comm == "p").unwrap();
    let seen: Vec<u64> = p.ops.iter().filter_map(|o| if let Op::WakeAt(t) = o { Some(*t) } else { None }).collect();
    assert_eq!(seen, wakes, "every irq-context wakeup is an outside wakeup at its time");
    let last = *wakes.last().unwrap();
    for sched in ["eevdf", "cfs", "ule"] {
        let r = run("timer.replay.toml", &imp.text, sched);
        let exit = sim_task(&r, &p.name).exit_ns.expect("p exits");
        // Its last burst (1 ms) follows its last wakeup, which is not early, nor late by
        // more than a wakeup's and an exit's costs on a machine with a CPU to spare.
        assert!(exit >= last + 1_000_000, "{sched}: exit {exit} before the wakeup at {last} + 1 ms");
        assert!(exit <= last + 1_300_000, "{sched}: exit {exit}, wakeup at {last}");
    }
}

/// The committed `perf sched record` of `perf bench sched messaging -g 1` (its workers),
/// replayed under eevdf, cfs and ule: the schedules differ, each thread's CPU demand does
/// not — its run time is its demand plus only the replay's own kernel work for its
/// operations (futex calls, timers, forks, switches: under 5 µs each on average on `smp2`,
/// allowed 10).
#[test]
fn a_recorded_trace_keeps_its_demand_under_every_scheduler() {
    let p = format!("{}/../trace-import/tests/fixtures/messaging.perf.data", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&p).unwrap();
    let opts = Options { only: vec!["sched-messaging".into()] };
    let imp = import_bytes("messaging.perf.data", &bytes, &opts).unwrap();
    let runs: Vec<RunRecord> = ["eevdf", "cfs", "ule"]
        .iter()
        .map(|s| {
            let mut spec = RunSpec::load("m.toml", &imp.text, Some("smp2"), &[], Some(Ns::from_secs(10))).unwrap();
            spec.sched = (*s).into();
            spec.check = true;
            // The demand is the trace's to the nanosecond: no per-op noise.
            spec.set("machine.noise", "none").unwrap();
            spec.run(&mut |_| true).unwrap()
        })
        .collect();
    for r in &runs {
        assert_eq!(r.end_reason.as_str(), "all_exited", "{}: no dependency deadlock", r.scheduler.name);
    }
    for t in &imp.model.threads {
        let demand: u64 = t.ops.iter().map(|o| if let Op::Run(d) = o { *d } else { 0 }).sum();
        let ops = t.ops.len() as u64 + 2;
        for r in &runs {
            let got = sim_task(r, &t.name).runtime_ns;
            assert!(
                got >= demand && got - demand <= ops * 10_000,
                "{} under {}: {got} ns for a demand of {demand} ns over {ops} operations",
                t.name,
                r.scheduler.name
            );
        }
    }
    let order = |r: &RunRecord| r.tasks.iter().map(|t| (t.exit_ns, t.switches_voluntary)).collect::<Vec<_>>();
    assert!(order(&runs[0]) != order(&runs[1]) && order(&runs[1]) != order(&runs[2]), "identical schedules");
}
