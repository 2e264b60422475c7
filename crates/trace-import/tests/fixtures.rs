//! The committed traces (recorded on this project's machine with
//! `scripts/record-trace-fixtures.sh`) import, and damaged or foreign files are refused with
//! an error naming the file, never a panic.

use schedlab_trace_import::model::{build, Op, Options};
use schedlab_trace_import::{emit, read, TraceFormat};

fn fixture(name: &str) -> Vec<u8> {
    let p = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// `perf bench sched messaging -g 1` forks 20 receivers and 20 senders (hackbench's
/// `group()`), each of which exits; the senders' writes wake the receivers.
fn check_messaging(file: &str, format: TraceFormat) {
    let t = read(file, &fixture(file)).unwrap();
    assert_eq!(t.format, format);
    assert_eq!(t.nr_cpus, 2, "recorded on the 2-CPU machine");
    let m = build(&t, &Options::default());
    let kids: Vec<_> = m
        .threads
        .iter()
        .filter(|x| x.comm == "sched-messaging" && x.parent.is_some_and(|p| m.threads[p].comm == "sched-messaging"))
        .collect();
    assert_eq!(kids.len(), 40, "20 senders + 20 receivers forked by the benchmark's main thread");
    assert!(kids.iter().all(|k| k.exited), "every worker exits within the recording");
    // Wakeups between the workers became dependencies, not sleeps.
    let between = m
        .edges
        .iter()
        .filter(|e| m.threads[e.waker].comm == "sched-messaging" && m.threads[e.wakee].comm == "sched-messaging")
        .count();
    assert!(between >= 20, "sender → receiver dependencies: {between}");
    // CPU demand is conserved: each thread's runs sum to its time on a CPU.
    for th in &m.threads {
        let runs: u64 = th.ops.iter().map(|o| if let Op::Run(d) = o { *d } else { 0 }).sum();
        assert_eq!(runs, th.run_ns, "{}", th.name);
    }
    let text = emit::workload(&m, &t, file, "messaging").unwrap();
    assert!(text.starts_with("# Imported by `schedlab import`"));
    assert!(text.contains("[[futex]]") && text.contains("futex_wait") && text.contains("fork = "));
}

#[test]
fn perf_data_fixture_imports() {
    check_messaging("messaging.perf.data", TraceFormat::Perf);
}

#[test]
fn ftrace_text_fixture_imports() {
    check_messaging("messaging.ftrace.txt", TraceFormat::Ftrace);
}

/// `forks.pftrace` (the parser fuzzer's Perfetto base) is schedlab's own export of
/// `schedlab run W --duration 20ms --trace forks.pftrace` with W:
///
/// ```toml
/// machine = "smp4"
/// [[task]]
/// name = "p"
/// program = [ { fork = "c", count = 3 }, { loop = 20, do = [ { run = "200us" }, { sleep = "300us" } ] } ]
/// [[task]]
/// name = "c"
/// template = true
/// program = [ { loop = 10, do = [ { run = "150us" }, "yield", { sleep = "100us" } ] } ]
/// ```
///
/// Its sleeps end by their hrtimers, exported in hard interrupt context, so they import as
/// outside wakeups (timers), not as wakes by the task that happened to be current.
#[test]
fn perfetto_fixture_imports() {
    let t = read("forks.pftrace", &fixture("forks.pftrace")).unwrap();
    assert_eq!(t.format, TraceFormat::Perfetto);
    let m = build(&t, &Options::default());
    assert_eq!(m.threads.len(), 4, "the parent and its three children");
    assert_eq!(m.threads.iter().filter(|x| x.parent == Some(0)).count(), 3);
    assert!(m.edges.is_empty() && m.wakes_by_thread == 0, "timer wakeups are no dependencies");
    assert_eq!(m.wakes_external, 50, "20 sleeps of the parent, 10 of each child");
}

/// A deterministic byte stream for damage (no RNG crate needed for a test).
fn lcg(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *seed >> 33
}

/// Panics anywhere in this process, including ones the perf reader's backstop caught.
static PANICS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[test]
fn truncated_and_damaged_traces_are_errors_not_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        default(info);
    }));
    for file in ["messaging.perf.data", "messaging.ftrace.txt"] {
        let b = fixture(file);
        let mut seed = 7;
        let mut cuts: Vec<usize> = (0..48).map(|i| b.len() * i / 48).collect();
        cuts.extend([1, 7, 8, 16, 64, 103, 104, 105, 4096]);
        for cut in cuts {
            if let Err(e) = read(file, &b[..cut.min(b.len())]) {
                assert!(e.to_string().starts_with(file), "{e}");
            }
        }
        for _ in 0..200 {
            let mut d = b.clone();
            for _ in 0..8 {
                let i = lcg(&mut seed) as usize % d.len();
                d[i] = lcg(&mut seed) as u8;
            }
            let _ = read(file, &d).map(|t| build(&t, &Options::default()));
        }
    }
    assert_eq!(PANICS.load(std::sync::atomic::Ordering::SeqCst), 0, "a reader panicked (see stderr)");
}

#[test]
fn foreign_formats_are_refused_by_name() {
    let foreign: [(&str, &[u8]); 5] = [
        ("empty", b""),
        ("png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
        ("toml", b"name = \"w\"\n[[task]]\nname = \"a\"\nprogram = [ { run = \"1ms\" } ]\n"),
        ("elf", b"\x7fELF\x02\x01\x01\0\0\0\0\0"),
        (
            "ftrace-without-switches",
            b"# tracer: nop\n  a-1 [000] 1.000000: sched_waking: comm=b pid=2 prio=120 target_cpu=000\n",
        ),
    ];
    for (name, bytes) in foreign {
        let e = read(name, bytes).unwrap_err().to_string();
        assert!(e.starts_with(name), "{e}");
        assert!(e.contains("not a trace") || e.contains("no sched_switch"), "{name}: {e}");
    }
}
