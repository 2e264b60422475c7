//! The workload-language features of the lock and ULE-vs-CFS studies, run end to end with
//! invariant checks: the spinning barrier, `poll`, `[[daemon]]`s, hackbench's process
//! mode, and named spans timing a web server's requests.

use schedlab_metrics::TaskRecord;
use schedlab_probe::EndReason;
use schedlab_run::{RunRecord, RunSpec};
use schedlab_sim::Ns;

const SCHEDULERS: &[&str] = &["eevdf", "cfs", "ule", "fifo", "o1"];

fn spec(text: &str, machine: &str, params: &[(&str, &str)], secs: u64, sched: &str) -> RunSpec {
    let params: Vec<(String, String)> = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let mut spec = RunSpec::load("w.toml", text, Some(machine), &params, Some(Ns::from_secs(secs))).unwrap();
    spec.sched = sched.into();
    spec.check = true;
    spec
}

fn run(text: &str, machine: &str, params: &[(&str, &str)], secs: u64, sched: &str) -> RunRecord {
    spec(text, machine, params, secs, sched).run(&mut |_| true).unwrap()
}

fn task<'r>(r: &'r RunRecord, name: &str) -> &'r TaskRecord {
    r.tasks.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no task {name}"))
}

/// `spinner` arrives first at each of 5 barriers and spins up to 1 ms; `late` arrives
/// `delay` after it.
fn spin_barrier(delay: &str) -> String {
    format!(
        "[[barrier]]\nname = \"b\"\nparties = 2\n\
         [[task]]\nname = \"spinner\"\naffinity = [0]\nprogram = [ {{ loop = 5, do = [ {{ barrier = \"b\", spin_max = \"1ms\" }} ] }} ]\n\
         [[task]]\nname = \"late\"\naffinity = [1]\nprogram = [ {{ loop = 5, do = [ {{ sleep = \"{delay}\" }}, {{ barrier = \"b\" }} ] }} ]\n"
    )
}

#[test]
fn a_spinning_barrier_spins_at_most_its_bound_then_sleeps() {
    for s in SCHEDULERS {
        let r = run(&spin_barrier("10ms"), "smp2", &[], 10, s);
        assert_eq!(r.end_reason, EndReason::AllExited, "{s}");
        let sp = task(&r, "spinner");
        // Five full spins of 1 ms of CPU, plus the futex calls: never more than the bound.
        assert!(sp.runtime_ns >= 5_000_000, "{s}: spun {} ns", sp.runtime_ns);
        assert!(sp.runtime_ns <= 5_000_000 + 5 * 50_000, "{s}: spun {} ns, beyond 5 × 1 ms", sp.runtime_ns);
        // Then it slept on the futex each time (and exited).
        assert!(sp.switches_voluntary >= 5, "{s}: {} voluntary switches", sp.switches_voluntary);
    }
}

#[test]
fn a_spinner_sees_the_release_without_sleeping() {
    for s in SCHEDULERS {
        let r = run(&spin_barrier("200us"), "smp2", &[], 10, s);
        assert_eq!(r.end_reason, EndReason::AllExited, "{s}");
        let sp = task(&r, "spinner");
        // The partner comes within the bound: the spinner never blocks, only exits.
        assert_eq!(sp.switches_voluntary, 1, "{s}");
        assert!(sp.runtime_ns < 5 * 1_000_000, "{s}: spun {} ns", sp.runtime_ns);
        assert!(sp.runtime_ns >= 5 * 150_000, "{s}: spun {} ns", sp.runtime_ns);
    }
}

/// A poller on four pipes; writer k writes pipe k at its own time, then waits for the
/// poller's acknowledgement on `ack.k`, which the poller sends from the arm of the pipe it
/// found readable. Writer n sleeps 1 + (n + 2) % 4 ms: they write in the order 2, 3, 0, 1.
const POLL: &str = r#"
[[pipe]]
name = "p"
count = 4
[[pipe]]
name = "ack"
count = 4
[[task]]
name = "poller"
program = [ { loop = 4, do = [
    { poll = "p.{i}", each = "i", count = 4, do = [ { recv = "p.{i}", bytes = 10 }, { send = "ack.{i}", bytes = 1 } ] },
] } ]
[[task]]
name = "w"
count = 4
program = [ { for = "r", count = "{1 + (n + 2) % 4}", do = [ { sleep = "1ms" } ] }, { send = "p.{n}", bytes = 10 }, { recv = "ack.{n}", bytes = 1 } ]
"#;

#[test]
fn poll_wakes_on_whichever_pipe_is_written() {
    for s in SCHEDULERS {
        let r = run(POLL, "smp4", &[], 10, s);
        // A wrong arm would read an empty pipe or acknowledge the wrong writer: deadlock.
        assert_eq!(r.end_reason, EndReason::AllExited, "{s}: {:?}", r.deadlock);
        let exit = |n: usize| task(&r, &format!("w.{n}")).exit_ns.unwrap();
        // Writer 2 writes at 1 ms, 3 at 2 ms, 0 at 3 ms, 1 at 4 ms; each is acknowledged
        // at once, before the next writes.
        assert!(exit(2) < exit(3) && exit(3) < exit(0) && exit(0) < exit(1), "{s}");
        assert!(exit(0) < task(&r, "w.1").start_ns + 3_500_000, "{s}: writer 0 acknowledged before 3.5 ms");
        assert!(exit(1) < 4_500_000, "{s}: the last ack came {} ns in", exit(1));
        // The poller slept in poll for each write (and then exited).
        assert!(task(&r, "poller").switches_voluntary >= 5, "{s}");
    }
}

#[test]
fn poll_returns_at_once_when_a_pipe_already_holds_data() {
    let text = "[[pipe]]\nname = \"p\"\ncount = 3\n[[task]]\nname = \"t\"\nprogram = [ { send = \"p.1\", bytes = 5 }, \
                { poll = \"p.{i}\", each = \"i\", count = 3, do = [ { recv = \"p.{i}\", bytes = 5 } ] } ]\n";
    let r = run(text, "smp2", &[], 1, "eevdf");
    assert_eq!(r.end_reason, EndReason::AllExited);
    assert_eq!(task(&r, "t").switches_voluntary, 1, "only its exit");
}

const DAEMONS: &str = "[[daemon]]\npreset = \"kworker\"\n[[daemon]]\npreset = \"rcu\"\n\
                       [[task]]\nname = \"idle\"\nprogram = [ { sleep = \"10s\" } ]\n";

#[test]
fn daemons_run_as_documented() {
    let preset = |n: &str| schedlab_workload::DAEMON_PRESETS.iter().find(|d| d.name == n).unwrap();
    for s in SCHEDULERS {
        let secs = 4;
        let r = run(DAEMONS, "smp4", &[], secs, s);
        let kw: Vec<&TaskRecord> = r.tasks.iter().filter(|t| t.name.starts_with("kworker.")).collect();
        assert_eq!(kw.len(), 4, "{s}: one kworker per CPU");
        let k = preset("kworker");
        for t in &kw {
            assert_eq!(t.migrations, 0, "{s}: {} is bound to its CPU", t.name);
            // Exponential gaps of mean `every`: 200 expected in 4 s, far outside ±30 % by chance.
            let expect = secs * 1_000_000_000 / k.every.0;
            assert!(t.wakeups * 10 > expect * 7 && t.wakeups * 10 < expect * 13, "{s}: {} woke {}", t.name, t.wakeups);
            let per = t.runtime_ns / t.wakeups.max(1);
            assert!(per >= k.run_min.0 && per <= k.run_max.0 + 10_000, "{s}: {} ran {per} ns per wakeup", t.name);
        }
        let rcu = task(&r, "rcu");
        let p = preset("rcu");
        let expect = secs * 1_000_000_000 / p.every.0;
        assert!(rcu.wakeups * 10 > expect * 7 && rcu.wakeups * 10 < expect * 13, "{s}: rcu woke {}", rcu.wakeups);
    }
}

#[test]
fn daemons_are_kernel_threads_to_the_policy() {
    let spec = spec(DAEMONS, "smp4", &[], 1, "eevdf");
    let opts = schedlab_run::RunOptions { keep_summary: true, ..Default::default() };
    let summary = spec.run_with(opts, &mut |_| true).unwrap().summary.expect("kept");
    for t in &summary.tasks {
        let daemon = t.name.starts_with("kworker") || t.name == "rcu";
        assert_eq!(t.kthread, daemon, "{}", t.name);
        if t.name.starts_with("kworker.") {
            let cpu: usize = t.name["kworker.".len()..].parse().unwrap();
            assert_eq!(t.affinity.iter().collect::<Vec<_>>(), [cpu], "kworker n is bound to CPU n");
        }
    }
}

const HACKBENCH: &str = include_str!("../../../examples/workloads/hackbench.toml");

#[test]
fn hackbench_forks_forty_per_group_and_delivers_every_message() {
    for (s, process, transport) in
        [("eevdf", "1", "socket"), ("cfs", "0", "pipe"), ("ule", "1", "pipe"), ("o1", "0", "socket")]
    {
        let params = [("groups", "3"), ("loops", "10"), ("process", process), ("transport", transport)];
        let r = run(HACKBENCH, "i7-3770", &params, 10, s);
        assert_eq!(r.end_reason, EndReason::AllExited, "{s}");
        assert_eq!(r.tasks.len(), 1 + 3 * 40, "{s}");
        // Group by group: 20 receivers, then 20 senders.
        for (i, t) in r.tasks.iter().skip(1).enumerate() {
            let kind = if (i / 20) % 2 == 0 { "receiver" } else { "sender" };
            assert!(t.name.starts_with(kind), "{s}: task {} is {}", i + 1, t.name);
        }
        // A receiver exits only after reading 20 senders × 10 loops × 100 bytes.
        assert!(r.tasks.iter().all(|t| t.exit_ns.is_some()), "{s}");
    }
    let wl = schedlab_workload::parse_workload("h.toml", HACKBENCH, &[], 8).unwrap();
    assert!(wl.pipes.iter().all(|p| p.socket), "sockets by default, as hackbench");
    assert!(wl.templates.iter().filter(|t| t.template).all(|t| t.process), "processes by default");
}

const WEBSERVER: &str = include_str!("../../../examples/workloads/webserver.toml");

#[test]
fn one_server_bounds_request_latency_and_throughput_by_its_service_time() {
    for s in SCHEDULERS {
        let params = [("servers", "1"), ("clients", "4"), ("service", "1ms")];
        let r = run(WEBSERVER, "smp2", &params, 2, s);
        let req = r.spans.iter().find(|x| x.name == "request").unwrap();
        // Each request needs the whole service time of the one server ...
        assert!(req.min_ns >= 1_000_000, "{s}: a request took {} ns", req.min_ns);
        // ... so at most 1000 complete per second (2 s: at most 2000) ...
        assert!(req.count <= 2000 && req.count > 1800, "{s}: {} requests", req.count);
        // ... and with 4 outstanding, each waits for the 3 ahead of it (Little's law:
        // latency = outstanding / throughput ≈ 4 ms).
        assert!(req.latency_ns.p50 >= 3_800_000 && req.latency_ns.p50 <= 4_300_000, "{s}: p50 {}", req.latency_ns.p50);
    }
}

#[test]
fn more_servers_serve_more_requests() {
    let rate = |servers: &str| {
        let params = [("servers", servers), ("clients", "8"), ("service", "1ms")];
        let r = run(WEBSERVER, "smp4", &params, 1, "eevdf");
        r.spans[0].count
    };
    let (one, four) = (rate("1"), rate("4"));
    assert!(four > 3 * one, "4 servers on 4 CPUs: {four} requests vs {one} with 1");
}

#[test]
fn an_unmatched_mark_end_is_an_error_naming_the_line() {
    let text = "[[task]]\nname = \"t\"\nprogram = [ { mark_begin = \"a\" }, { mark_end = \"a\", id = 1 } ]\n";
    let e = spec(text, "smp2", &[], 1, "eevdf").run(&mut |_| true).unwrap_err().to_string();
    assert!(e.contains("mark_end without a matching mark_begin") && e.contains("line 3"), "{e}");
}

#[test]
fn spans_are_deterministic_and_in_the_json() {
    let params = [("clients", "4"), ("servers", "2")];
    let a = run(WEBSERVER, "smp2", &params, 1, "cfs");
    let b = run(WEBSERVER, "smp2", &params, 1, "cfs");
    assert_eq!(schedlab_run::record::deterministic_json(&a), schedlab_run::record::deterministic_json(&b));
    let json = schedlab_report::json(&a);
    assert!(json.contains("\"spans\"") && json.contains("\"per_sec\""), "spans in the JSON");
    assert!(schedlab_report::text(&a).contains("request"), "and in the text report");
}
