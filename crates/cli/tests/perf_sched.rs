//! `schedlab timehist` / `schedlab latency`: `perf sched`-style views of a run's events
//! (`tools/perf/builtin-sched.c` column meanings). Snapshots of small scenarios, and the
//! views' totals checked against the run's own per-task accounting.

mod common;
use common::*;
use schedlab_report::perf_sched;
use schedlab_run::RunSpec;
use schedlab_sim::Ns;

fn traced(text: &str, machine: &str, sched: &str, ms: u64) -> schedlab_run::RunRecord {
    let mut j = RunSpec::load("t.toml", text, Some(machine), &[], Some(Ns::from_ms(ms))).unwrap();
    j.sched = sched.into();
    j.trace = true;
    j.check = true;
    // Snapshots: the noiseless constant-cost machine they were written for.
    j.set("machine.noise", "none").unwrap();
    j.set("machine.cost_model", "flat").unwrap();
    run(&j)
}

/// A hog and a task that runs 1 ms every 3 ms on one CPU: the sleeper's wakeups preempt
/// the hog (EEVDF and CFS differ in when), and each line's wait, delay and run show it.
/// Review changes with `cargo insta review`.
#[test]
fn timehist_and_latency_snapshots() {
    let w = format!("{}{}", hog("hog", 0, 0), sleeper("sleeper", 0, 0, "1ms", "2ms"));
    for sched in ["eevdf", "cfs"] {
        let r = traced(&w, "up", sched, 20);
        let t = r.trace.as_ref().unwrap();
        insta::assert_snapshot!(format!("timehist_{sched}"), perf_sched::timehist(t, 0, u64::MAX));
        insta::assert_snapshot!(format!("latency_{sched}"), perf_sched::latency(t));
    }
}

/// Per task, the views add up to the run's accounting: run time (timehist's run column and
/// latency's total) equals `runtime_ns`; the scheduling delays, summed over the runs that
/// began, plus a wait still going at the end, are the run's `wait_ns`; timehist's wait
/// (off-CPU time before a run) is at least its delay.
#[test]
fn views_add_up_to_the_runs_accounting() {
    let cases = [
        ("examples/workloads/cpu-io-mix.toml", "smp2", "eevdf"),
        ("examples/workloads/four-hogs.toml", "smp2", "cfs"),
        ("examples/workloads/sleep-loop.toml", "smp4", "ule"),
    ];
    let root = format!("{}/../..", env!("CARGO_MANIFEST_DIR"));
    for (file, machine, sched) in cases {
        let text = std::fs::read_to_string(format!("{root}/{file}")).unwrap();
        let r = traced(&text, machine, sched, 300);
        let t = r.trace.as_ref().unwrap();
        let (lines, lat) = perf_sched::analyse(t);
        for rec in &r.tasks {
            let l = &lat[rec.tid];
            assert_eq!(l.runtime, rec.runtime_ns, "{file} {sched} {}: run time", rec.name);
            // The only wait not ended by a sched-in is the one going on at the end.
            let tail = l.ready_at_end.map_or(0, |since| t.end_ns - since);
            assert_eq!(l.delay_sum + tail, rec.wait_ns, "{file} {sched} {}: delays vs wait_ns", rec.name);
            let ran: u64 = lines.iter().filter(|x| x.task == Some(rec.tid)).map(|x| x.run).sum();
            assert!(ran <= rec.runtime_ns, "{file} {sched} {}", rec.name);
        }
        assert!(lines.iter().all(|x| x.wait >= x.delay), "{file} {sched}: a wait shorter than its delay");
    }
}
