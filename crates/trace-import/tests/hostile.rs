//! Hostile inputs through the whole import — read, infer, write the workload, measure the
//! trace as it happened: empty and garbage files, wrong magic, cuts at many offsets, and
//! fields holding huge values (CPU numbers, counts, sizes, times). Each is refused with an
//! error naming the file, or imported into a bounded model; none panics (the perf reader's
//! backstop included: a caught panic counts).

use schedlab_trace_import::model::{build, build_with, Options};
use schedlab_trace_import::{emit, probe, read, read_with, ImportError, Interrupted, MAX_CPUS, POLL_EVERY};
use std::sync::atomic::{AtomicUsize, Ordering};

static PANICS: AtomicUsize = AtomicUsize::new(0);

fn count_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, Ordering::SeqCst);
        default(info);
    }));
}

fn fixture(name: &str) -> Vec<u8> {
    let p = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// The whole import of `bytes`: an error, or a model whose every CPU is within the trace's.
fn import(file: &str, bytes: &[u8]) -> Result<(), ImportError> {
    let t = read(file, bytes)?;
    assert!(t.nr_cpus as usize <= MAX_CPUS, "{file}: {} CPUs", t.nr_cpus);
    let m = build(&t, &Options::default());
    let _ = emit::workload(&m, &t, file, "w");
    let obs = probe::observe(&t, &m);
    assert_eq!(obs.cpu_time.len(), t.nr_cpus as usize);
    Ok(())
}

fn refused(file: &str, bytes: &[u8], words: &str) {
    let e = import(file, bytes).expect_err(file).to_string();
    assert!(e.starts_with(file) && e.contains(words), "{file}: {e}");
}

mod pb;
use pb::{int_field, msg_field};

/// `sched_switch` prev → next (prev blocked) at `time` on `cpu`, as one Perfetto packet.
fn perfetto_switch(cpu: u64, time: u64, prev: u64, next: u64) -> Vec<u8> {
    let mut sw = Vec::new();
    int_field(2, prev, &mut sw);
    int_field(3, 120, &mut sw);
    int_field(4, 1, &mut sw);
    int_field(6, next, &mut sw);
    int_field(7, 120, &mut sw);
    let mut ev = Vec::new();
    int_field(1, time, &mut ev);
    int_field(2, prev, &mut ev);
    msg_field(4, &sw, &mut ev);
    let mut bundle = Vec::new();
    int_field(1, cpu, &mut bundle);
    msg_field(2, &ev, &mut bundle);
    let mut packet = Vec::new();
    msg_field(1, &bundle, &mut packet);
    let mut trace = Vec::new();
    msg_field(1, &packet, &mut trace);
    trace
}

const SWITCH: &str = "prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=b next_pid=2 next_prio=120";

#[test]
fn empty_garbage_and_wrong_magic_are_refused() {
    count_panics();
    refused("empty", b"", "not a trace");
    refused("zeros", &[0u8; 4096], "not a trace");
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8 | 0x80).collect();
    refused("garbage", &garbage, "not a trace");
    // perf.data's magic with one letter changed, and a perf.data body behind a text magic.
    let mut perf = fixture("messaging.perf.data");
    perf[3] = b'X';
    refused("wrong-magic.perf.data", &perf, "not a trace");
    perf[..8].copy_from_slice(b"PERFILE1");
    refused("perfile1.perf.data", &perf, "not a trace");
    // Perfetto's packet tag, then bytes no protobuf holds.
    refused("bad.pftrace", b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", "Perfetto");
    assert_eq!(PANICS.load(Ordering::SeqCst), 0);
}

#[test]
fn huge_cpu_numbers_are_refused_with_their_place() {
    count_panics();
    // A Perfetto bundle on CPU 2^32 − 1, and one just past the limit.
    for cpu in [u64::from(u32::MAX), MAX_CPUS as u64] {
        refused("cpu.pftrace", &perfetto_switch(cpu, 1000, 1, 2), "CPU");
    }
    let mut ok = perfetto_switch(0, 1000, 1, 2);
    ok.extend(perfetto_switch(MAX_CPUS as u64 - 1, 2000, 2, 1));
    import("last-cpu.pftrace", &ok).unwrap();
    // ftrace text: CPU 99999 on the event line, a migration or wakeup to a huge CPU.
    let line = |cpu: &str, ev: &str, body: &str| format!("# tracer: nop\n a-1 [{cpu}] 1.000000: {ev}: {body}\n");
    refused("cpu.txt", line("99999", "sched_switch", SWITCH).as_bytes(), "CPU");
    let mut text = line("000", "sched_switch", SWITCH);
    text.push_str(" b-2 [000] 1.000001: sched_migrate_task: comm=a pid=1 prio=120 orig_cpu=0 dest_cpu=4294967295\n");
    refused("migrate.txt", text.as_bytes(), "dest_cpu");
    let mut text = line("000", "sched_switch", SWITCH);
    text.push_str(" b-2 [000] 1.000001: sched_waking: comm=a pid=1 prio=120 target_cpu=70000\n");
    refused("waking.txt", text.as_bytes(), "target_cpu");
    assert_eq!(PANICS.load(Ordering::SeqCst), 0);
}

#[test]
fn huge_times_pids_and_self_forks_import_bounded() {
    count_panics();
    // Times from 0 to the largest a u64 of ns holds, a pid at the i32 limit, a thread that
    // "forks itself" (a reused pid): imported, never an overflow.
    let text = "# tracer: nop\n\
        a-1 [000] 0.000000: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=b next_pid=2147483647 next_prio=120\n\
        b-2147483647 [000] 0.000001: sched_process_fork: comm=b pid=2147483647 child_comm=b child_pid=2147483647\n\
        b-2147483647 [000] 0.000002: sched_waking: comm=a pid=1 prio=-1 target_cpu=000\n\
        b-2147483647 [000] 18446744073.709551615: sched_switch: prev_comm=b prev_pid=2147483647 prev_prio=99999 prev_state=R+ ==> next_comm=a next_pid=1 next_prio=120\n";
    import("huge.txt", text.as_bytes()).unwrap();
    let t = read("huge.txt", text.as_bytes()).unwrap();
    let m = build(&t, &Options::default());
    assert!(m.threads.iter().all(|t| t.parent.is_none()), "a thread is not its own parent");
    // A time past u64 ns is not a timestamp: the line is not an event.
    let over = text.replace("18446744073.709551615", "18446744074.000000000");
    import("over.txt", over.as_bytes()).unwrap();
    assert_eq!(PANICS.load(Ordering::SeqCst), 0);
}

#[test]
fn perf_data_with_huge_sizes_and_counts_is_refused() {
    count_panics();
    let b = fixture("messaging.perf.data");
    let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
    let data = u64_at(40) as usize;
    // Header fields (attr size, attrs offset/size, data offset/size) set to huge values.
    for (off, v) in [(16, u64::MAX), (24, u64::MAX - 8), (32, 1 << 40), (40, u64::MAX), (48, u64::MAX - 100)] {
        let mut d = b.clone();
        d[off..off + 8].copy_from_slice(&v.to_le_bytes());
        let e = import("huge.perf.data", &d).expect_err("huge header field").to_string();
        assert!(e.starts_with("huge.perf.data:byte"), "{e}");
    }
    // The first record's size (u16 at byte 6 of its header) zero, tiny and huge.
    for size in [0u16, 1, 7, u16::MAX] {
        let mut d = b.clone();
        d[data + 6..data + 8].copy_from_slice(&size.to_le_bytes());
        let _ = import("record.perf.data", &d);
    }
    // Event types far outside the file; every feature bit set, so the index runs on into
    // the feature sections' bytes (sizes the perf reader would try to allocate); one
    // feature section's size huge.
    let mut d = b.clone();
    d[56..72].fill(0x7f);
    refused("types.perf.data", &d, "header.event_types");
    let mut d = b.clone();
    d[72..104].fill(0xff);
    refused("features.perf.data", &d, "features");
    let mut d = b.clone();
    let index = data + u64_at(48) as usize;
    d[index + 8..index + 16].copy_from_slice(&(1u64 << 59).to_le_bytes());
    refused("feature.perf.data", &d, "lies outside the file");
    // The tracepoint formats in the file's TRACING_DATA section (the field layouts the
    // payloads are decoded with) made empty or pointing past the payloads.
    for (from, to) in [(&b"size:4;"[..], &b"size:0;"[..]), (b"offset:24;", b"offset:99;"), (b"size:16;", b"size:99;")] {
        let mut d = b.clone();
        let mut i = 0;
        while let Some(j) = d[i..].windows(from.len()).position(|w| w == from) {
            d[i + j..i + j + to.len()].copy_from_slice(to);
            i += j + 1;
        }
        assert_ne!(d, b, "{}", String::from_utf8_lossy(from));
        if let Err(e) = import("formats.perf.data", &d) {
            assert!(e.to_string().starts_with("formats.perf.data"), "{e}");
        }
    }
    // Cut at every 1/97th and around the header, the attributes and the data start.
    let mut cuts: Vec<usize> = (0..97).map(|i| b.len() * i / 97).collect();
    cuts.extend([data - 1, data, data + 1, data + 8, data + 9, b.len() - 1]);
    for cut in cuts {
        if let Err(e) = import("cut.perf.data", &b[..cut]) {
            assert!(e.to_string().starts_with("cut.perf.data"), "{e}");
        }
    }
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a reader panicked (see stderr)");
}

#[test]
fn truncated_perfetto_and_text_are_errors_or_shorter_traces() {
    count_panics();
    let mut p = Vec::new();
    for i in 0..50u64 {
        p.extend(perfetto_switch(i % 4, 1000 * i, 1 + i % 2, 2 - i % 2));
    }
    for cut in 1..p.len() {
        if let Err(e) = import("cut.pftrace", &p[..cut]) {
            assert!(e.to_string().starts_with("cut.pftrace"), "{e}");
        }
    }
    let t = fixture("messaging.ftrace.txt");
    for i in 1..64 {
        let cut = t.len() * i / 64;
        if let Err(e) = import("cut.txt", &t[..cut]) {
            assert!(e.to_string().starts_with("cut.txt"), "{e}");
        }
    }
    assert_eq!(PANICS.load(Ordering::SeqCst), 0);
}

/// An ftrace text of `n` switches between threads 1 and 2 on CPU 0, 1 µs apart.
fn ftrace_switches(n: u64) -> String {
    let mut s = String::from("# tracer: nop\n");
    for i in 0..n {
        let (p, q) = (1 + i % 2, 2 - i % 2);
        s += &format!(
            " t-{p} [000] {}.{:06}: sched_switch: prev_comm=t prev_pid={p} prev_prio=120 prev_state=S ==> next_comm=t next_pid={q} next_prio=120\n",
            i / 1_000_000,
            i % 1_000_000
        );
    }
    s
}

/// Reading (every format), modelling, writing the workload and observing the trace each
/// stop when asked (issue 31: `replay` of a 31 MB trace ran 15.5 s past SIGINT): asked at
/// their first item and then every `POLL_EVERY`th, a stop is an error naming where it
/// stopped, or (observing) what was seen up to then.
#[test]
fn every_phase_stops_when_asked() {
    let no = &|| false;
    let mut perfetto = Vec::new();
    for i in 0..10u64 {
        perfetto.extend(perfetto_switch(0, 1000 * (i + 1), 1 + i % 2, 2 - i % 2));
    }
    let text = ftrace_switches(10);
    for (file, bytes) in
        [("p.perf.data", fixture("messaging.perf.data")), ("p.pftrace", perfetto), ("p.txt", text.into())]
    {
        let e = read_with(file, &bytes, no).expect_err(file);
        assert!(e.interrupted && e.to_string().starts_with(file) && e.message == "interrupted", "{e}");
        let t = read_with(file, &bytes, &|| true).unwrap();
        assert_eq!(build_with(&t, &Options::default(), no).unwrap_err(), Interrupted, "{file}");
        let m = build(&t, &Options::default());
        let e = emit::workload_with(&m, &t, file, "w", no).expect_err(file);
        assert!(e.interrupted && e.at == "thread 0", "{e}");
        let obs = probe::observe_with(&t, &m, no);
        assert!(obs.interrupted && obs.end.0 == 0, "{file}: stopped at the first event");
        assert!(!probe::observe(&t, &m).interrupted);
    }
    // Asked again only after POLL_EVERY more items: the second question is at line
    // 1 + POLL_EVERY (the header is line 1, the first item).
    let asked = std::cell::Cell::new(0);
    let second = || {
        asked.set(asked.get() + 1);
        asked.get() < 2
    };
    let text = ftrace_switches(u64::from(POLL_EVERY) + 10);
    let e = read_with("long.txt", text.as_bytes(), &second).unwrap_err();
    assert_eq!(e.at, (1 + POLL_EVERY).to_string(), "{e}");
}

/// Lines of no known shape in the middle of an ftrace text were skipped without a word:
/// counted now, one warning with the count and the first line's number (also in the
/// workload's header); the usual non-event lines (headers, comments, lost-event notes,
/// call chains) are not counted.
#[test]
fn garbage_lines_in_ftrace_text_are_counted_in_one_warning() {
    let mut lines: Vec<String> = ftrace_switches(6).lines().map(str::to_string).collect();
    lines.insert(3, "this is not an event".into());
    lines.insert(5, "\u{0}\u{1}binary junk".into());
    lines.insert(6, "".into());
    lines.insert(1, "cpus=4".into());
    lines.insert(2, "CPU:3 [LOST 120 EVENTS]".into());
    lines.insert(3, "\t    ffffffff8108a0e1 __schedule+0x2e1 ([kernel.kallsyms])".into());
    lines.push("truncated li".into());
    let text = lines.join("\n");
    let t = read("g.txt", text.as_bytes()).unwrap();
    assert_eq!(t.events.len(), 6);
    assert_eq!(t.warnings.len(), 1, "{:?}", t.warnings);
    let w = &t.warnings[0];
    assert!(w.starts_with("g.txt: 3 lines matching no event line shape") && w.ends_with("the first at line 7"), "{w}");
    let m = build(&t, &Options::default());
    assert!(emit::workload(&m, &t, "g.txt", "w").unwrap().contains(&format!("# Warning: {w}.")));
    assert!(read("clean.txt", ftrace_switches(6).as_bytes()).unwrap().warnings.is_empty());
}

/// The EVENT_DESC feature section's counts (events, ids per event, name length) were read
/// by the perf reader before anything checked them: a count of 2^32 − 1 made it reserve
/// 168 GB (found by `schedlab fuzz --parser`, seed 13146109899721942550). Each is checked
/// against the section's bytes first.
#[test]
fn perf_event_desc_counts_beyond_the_section_are_refused() {
    count_panics();
    let b = fixture("messaging.perf.data");
    let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap()) as usize;
    let bitmap = &b[72..104];
    assert!(bitmap[1] & (1 << 4) != 0, "the fixture has EVENT_DESC (feature bit 12)");
    let before = bitmap[0].count_ones() + (bitmap[1] & 0x0f).count_ones();
    let entry = u64_at(40) + u64_at(48) + 16 * before as usize;
    let desc = u64_at(entry);
    let attr_size = u32::from_le_bytes(b[desc + 4..desc + 8].try_into().unwrap()) as usize;
    // The number of events; the first event's number of ids; its name's length.
    for (off, what) in [(0, "do not fit"), (8 + attr_size, "run past"), (12 + attr_size, "run past")] {
        let mut d = b.clone();
        d[desc + off..desc + off + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        let e = import("desc.perf.data", &d).expect_err("a huge count").to_string();
        assert!(e.contains("features.event_desc") && e.contains(what), "{e}");
    }
    assert_eq!(PANICS.load(Ordering::SeqCst), 0);
}
