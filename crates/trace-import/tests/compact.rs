//! Perfetto's `compact_sched` bundles (what `traced` writes by default) read as the same
//! events as the expanded `sched_switch` / `sched_waking` encoding of the same schedule:
//! the switch's `prev` and the waking's waker restored from the CPU's previous switch,
//! across bundles; damaged arrays are located errors.

use schedlab_trace_import::model::{build, Options};
use schedlab_trace_import::{read, Ev, Kind, PrevState};

mod pb;
use pb::{int_field as int, msg_field as bytes, varint};

/// A packed repeated varint field, as `traced` writes them.
fn packed(tag: u64, vals: &[u64], out: &mut Vec<u8>) {
    let mut body = Vec::new();
    for &v in vals {
        varint(v, &mut body);
    }
    bytes(tag, &body, out);
}
/// A signed int32/int64 as protobuf's varint (two's complement, 64 bits).
fn s(v: i64) -> u64 {
    v as u64
}

/// One scheduling event of a CPU: a switch to `next` (`prev_state` of the thread leaving),
/// or a waking of `pid` with `common_flags`.
#[derive(Clone, Copy)]
enum E {
    Switch { t: u64, state: i64, next: i32, comm: &'static str },
    Waking { t: u64, pid: i32, comm: &'static str, flags: u32 },
}

fn packet(cpu: u64, bundle_body: Vec<u8>) -> Vec<u8> {
    let mut bundle = Vec::new();
    int(1, cpu, &mut bundle);
    bundle.extend(bundle_body);
    let mut p = Vec::new();
    bytes(1, &bundle, &mut p);
    let mut out = Vec::new();
    bytes(1, &p, &mut out);
    out
}

/// The bundle as expanded `FtraceEvent`s; `running` is the CPU's thread before it.
fn expanded(cpu: u64, evs: &[E], running: &mut (i32, &'static str)) -> Vec<u8> {
    let mut body = Vec::new();
    for e in evs {
        let mut ev = Vec::new();
        match *e {
            E::Switch { t, state, next, comm } => {
                let mut sw = Vec::new();
                bytes(1, running.1.as_bytes(), &mut sw);
                int(2, s(running.0.into()), &mut sw);
                int(3, 120, &mut sw);
                int(4, s(state), &mut sw);
                bytes(5, comm.as_bytes(), &mut sw);
                int(6, s(next.into()), &mut sw);
                int(7, 120, &mut sw);
                int(1, t, &mut ev);
                int(2, s(running.0.into()), &mut ev);
                bytes(4, &sw, &mut ev);
                *running = (next, comm);
            }
            E::Waking { t, pid, comm, flags } => {
                let mut w = Vec::new();
                bytes(1, comm.as_bytes(), &mut w);
                int(2, s(pid.into()), &mut w);
                int(3, 120, &mut w);
                int(5, cpu, &mut w);
                int(1, t, &mut ev);
                int(2, s(running.0.into()), &mut ev);
                int(5, u64::from(flags), &mut ev);
                bytes(20, &w, &mut ev);
            }
        }
        bytes(2, &ev, &mut body);
    }
    packet(cpu, body)
}

/// The same bundle as `compact_sched`.
fn compact(cpu: u64, evs: &[E]) -> Vec<u8> {
    let mut table: Vec<&str> = Vec::new();
    let mut idx = |c: &'static str| {
        if !table.contains(&c) {
            table.push(c);
        }
        table.iter().position(|x| *x == c).unwrap() as u64
    };
    let (mut st, mut ss, mut sn, mut sp, mut sc) = (vec![], vec![], vec![], vec![], vec![]);
    let (mut wt, mut wp, mut wc, mut wpr, mut wi, mut wf) = (vec![], vec![], vec![], vec![], vec![], vec![]);
    let (mut last_s, mut last_w) = (0, 0);
    for e in evs {
        match *e {
            E::Switch { t, state, next, comm } => {
                st.push(t - last_s);
                last_s = t;
                ss.push(s(state));
                sn.push(s(next.into()));
                sp.push(120);
                sc.push(idx(comm));
            }
            E::Waking { t, pid, comm, flags } => {
                wt.push(t - last_w);
                last_w = t;
                wp.push(s(pid.into()));
                wc.push(cpu);
                wpr.push(120);
                wi.push(idx(comm));
                wf.push(u64::from(flags));
            }
        }
    }
    let mut c = Vec::new();
    for (tag, v) in [(1, &st), (2, &ss), (3, &sn), (4, &sp), (6, &sc), (7, &wt), (8, &wp), (9, &wc), (10, &wpr)] {
        packed(tag, v, &mut c);
    }
    packed(11, &wi, &mut c);
    packed(12, &wf, &mut c);
    for name in &table {
        bytes(5, name.as_bytes(), &mut c);
    }
    let mut body = Vec::new();
    bytes(4, &c, &mut body);
    packet(cpu, body)
}

/// Two CPUs; CPU 0's events in two bundles (its second bundle's first switch must find
/// the thread the first bundle left running).
fn schedule() -> Vec<(u64, Vec<E>)> {
    use E::*;
    vec![
        (0, vec![Switch { t: 1000, state: 0, next: 10, comm: "a" }, Waking { t: 2000, pid: 11, comm: "b", flags: 0 }]),
        (
            1,
            vec![
                Switch { t: 1500, state: 0, next: 12, comm: "c" },
                Waking { t: 2500, pid: 10, comm: "a", flags: 0x10 },
            ],
        ),
        (
            0,
            vec![
                Switch { t: 3000, state: 1, next: 11, comm: "b" },
                Switch { t: 4000, state: 0x100, next: 10, comm: "a" },
                Waking { t: 4500, pid: 12, comm: "c", flags: 0 },
                Switch { t: 5000, state: 0x10, next: 0, comm: "swapper/0" },
            ],
        ),
        (1, vec![Switch { t: 6000, state: 1, next: 0, comm: "swapper/1" }]),
    ]
}

/// The events, with an unknown `prev` (−1: before the CPU's first compact switch) read
/// as the idle task the expanded trace names there.
fn events(bytes: &[u8]) -> Vec<Ev> {
    let t = read("t.pftrace", bytes).unwrap();
    t.events
        .into_iter()
        .map(|mut e| {
            if let Kind::Switch { prev, .. } = &mut e.kind {
                *prev = (*prev).max(0);
            }
            e
        })
        .collect()
}

#[test]
fn compact_sched_reads_as_the_expanded_events() {
    let mut running = [(0, "swapper/0"), (0, "swapper/1")];
    let (mut exp, mut cmp) = (Vec::new(), Vec::new());
    for (cpu, evs) in schedule() {
        exp.extend(expanded(cpu, &evs, &mut running[cpu as usize]));
        cmp.extend(compact(cpu, &evs));
    }
    let (a, b) = (events(&exp), events(&cmp));
    assert_eq!(a.len(), 9);
    assert_eq!(a, b);
    // The waking of b at 2000 µs on CPU 0 is a's (a ran there); a's own waking on CPU 1
    // was in interrupt context (flags 0x10): a dependency a → b, and an outside wakeup.
    let m = build(&read("c.pftrace", &cmp).unwrap(), &Options::default());
    let name = |i: usize| m.threads[i].comm.as_str();
    let deps: Vec<(&str, &str)> = m.edges.iter().map(|e| (name(e.waker), name(e.wakee))).collect();
    assert_eq!(deps, [("a", "b")]);
    assert!(matches!(b[5].kind, Kind::Switch { prev: 11, prev_state: PrevState::Runnable, next: 10, .. }));
}

#[test]
fn damaged_compact_arrays_are_located_errors() {
    use E::*;
    let good = compact(0, &[Switch { t: 1, state: 0, next: 10, comm: "a" }]);
    assert!(read("ok.pftrace", &good).is_ok());
    // A comm index past the intern table: the only entry's index 0 becomes 1 (its byte in
    // field 6's packed body).
    let pos = good.windows(3).position(|w| w == [0x32, 0x01, 0x00]).expect("field 6");
    let mut bad = good.clone();
    bad[pos + 2] = 1;
    let e = read("bad.pftrace", &bad).unwrap_err();
    assert_eq!(e.field, "compact_sched.switch_next_comm_index", "{e}");
    assert!(e.to_string().starts_with("bad.pftrace:packet 0"), "{e}");
    // Arrays of different lengths: one more prev_state than switches.
    let mut c = Vec::new();
    packed(1, &[5], &mut c);
    packed(2, &[0, 1], &mut c);
    packed(3, &[10], &mut c);
    packed(4, &[120], &mut c);
    packed(6, &[0], &mut c);
    bytes(5, b"a", &mut c);
    let mut body = Vec::new();
    bytes(4, &c, &mut body);
    let e = read("len.pftrace", &packet(0, body)).unwrap_err();
    assert!(e.to_string().contains("differ in length"), "{e}");
}
