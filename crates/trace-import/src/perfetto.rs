//! Perfetto traces: the ftrace events of `FtraceEventBundle`s (`sched_switch`,
//! `sched_waking`, `sched_wakeup(_new)`, `sched_migrate_task`, `task_newtask`,
//! `sched_process_exit`), their `compact_sched` form (`crate::compact`) and thread names
//! from `ProcessTree`. schedlab's own `--trace`
//! output is such a file, so a simulated or host run can be imported and re-simulated.
//!
//! Only the fields read are declared (field numbers of Perfetto's
//! `protos/perfetto/trace/ftrace/*.proto`); prost skips the rest.

use crate::event::{prev_state_from_bits, Ev, Kind, Trace, TraceFormat};
use crate::ImportError;
use prost::Message;

#[derive(Clone, PartialEq, Message)]
struct Packet {
    #[prost(message, optional, tag = "1")]
    ftrace_events: Option<Bundle>,
    #[prost(message, optional, tag = "2")]
    process_tree: Option<ProcessTree>,
}

#[derive(Clone, PartialEq, Message)]
struct Bundle {
    #[prost(uint32, optional, tag = "1")]
    cpu: Option<u32>,
    #[prost(message, repeated, tag = "2")]
    event: Vec<FtraceEvent>,
    /// `compact_sched`: switches and wakings packed per bundle (`crate::compact`).
    #[prost(message, optional, tag = "4")]
    compact_sched: Option<crate::compact::CompactSched>,
}

#[derive(Clone, PartialEq, Message)]
struct FtraceEvent {
    #[prost(uint64, optional, tag = "1")]
    timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "2")]
    pid: Option<u32>,
    #[prost(uint32, optional, tag = "5")]
    common_flags: Option<u32>,
    #[prost(oneof = "E", tags = "4, 17, 20, 114, 235, 238, 491")]
    event: Option<E>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum E {
    #[prost(message, tag = "4")]
    Switch(Switch),
    #[prost(message, tag = "17")]
    Wakeup(Wake),
    #[prost(message, tag = "20")]
    Waking(Wake),
    #[prost(message, tag = "114")]
    WakeupNew(Wake),
    #[prost(message, tag = "235")]
    Newtask(Newtask),
    #[prost(message, tag = "238")]
    Exit(Exit),
    #[prost(message, tag = "491")]
    Migrate(Migrate),
}

#[derive(Clone, PartialEq, Message)]
struct Switch {
    #[prost(string, optional, tag = "1")]
    prev_comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    prev_pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    prev_prio: Option<i32>,
    #[prost(int64, optional, tag = "4")]
    prev_state: Option<i64>,
    #[prost(string, optional, tag = "5")]
    next_comm: Option<String>,
    #[prost(int32, optional, tag = "6")]
    next_pid: Option<i32>,
    #[prost(int32, optional, tag = "7")]
    next_prio: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
struct Wake {
    #[prost(string, optional, tag = "1")]
    comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    prio: Option<i32>,
    #[prost(int32, optional, tag = "5")]
    target_cpu: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
struct Newtask {
    #[prost(int32, optional, tag = "1")]
    pid: Option<i32>,
    #[prost(string, optional, tag = "2")]
    comm: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
struct Exit {
    #[prost(string, optional, tag = "1")]
    comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pid: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
struct Migrate {
    #[prost(string, optional, tag = "1")]
    comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pid: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    orig_cpu: Option<i32>,
    #[prost(int32, optional, tag = "5")]
    dest_cpu: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
struct ProcessTree {
    #[prost(message, repeated, tag = "2")]
    threads: Vec<Thread>,
}

#[derive(Clone, PartialEq, Message)]
struct Thread {
    #[prost(int32, optional, tag = "1")]
    tid: Option<i32>,
    #[prost(string, optional, tag = "2")]
    name: Option<String>,
}

/// `TRACE_FLAG_HARDIRQ | TRACE_FLAG_SOFTIRQ` of `common_flags` (`kernel/trace/trace.h`).
pub(crate) const IRQ_FLAGS: u32 = 0x08 | 0x10;

/// The next `Trace.packet` (`protos/perfetto/trace/trace.proto`: field 1, length-delimited)
/// of the rest of a trace, other fields skipped; `None` at its end. Packets are decoded one
/// at a time, so a reader can stop between them and never holds the whole trace decoded.
fn next_packet<'b>(buf: &mut &'b [u8]) -> Result<Option<&'b [u8]>, String> {
    use prost::encoding::decode_varint;
    while !buf.is_empty() {
        let key = decode_varint(buf).map_err(|e| e.to_string())?;
        let (field, wire) = (key >> 3, key & 7);
        let len = match wire {
            0 => {
                decode_varint(buf).map_err(|e| e.to_string())?;
                continue;
            }
            1 => 8,
            2 => usize::try_from(decode_varint(buf).map_err(|e| e.to_string())?).unwrap_or(usize::MAX),
            5 => 4,
            w => return Err(format!("wire type {w} of field {field}, which no trace uses")),
        };
        if field == 0 {
            return Err("field number 0".into());
        }
        if len > buf.len() {
            return Err(format!("field {field} of {len} bytes runs past the end of the file"));
        }
        let (body, rest) = buf.split_at(len);
        *buf = rest;
        if field == 1 && wire == 2 {
            return Ok(Some(body));
        }
    }
    Ok(None)
}

pub fn read(file: &str, bytes: &[u8], poll: &mut crate::Poll) -> Result<Trace, ImportError> {
    let invalid = |at: usize, e: String| {
        ImportError::at(file, format!("byte {at}"), "", format!("not a valid Perfetto trace (truncated?): {e}"))
    };
    let mut t = Trace::new(TraceFormat::Perfetto);
    let mut on_cpu = crate::compact::OnCpu::new();
    let mut rest = bytes;
    for pi in 0.. {
        let offset = bytes.len() - rest.len();
        let Some(body) = next_packet(&mut rest).map_err(|e| invalid(offset, e))? else { break };
        let p = Packet::decode(body).map_err(|e| invalid(offset, e.to_string()))?;
        if poll.stop() {
            return Err(ImportError::interrupted(file, format!("packet {pi}")));
        }
        for th in p.process_tree.iter().flat_map(|tree| &tree.threads) {
            if let (Some(tid), Some(n)) = (th.tid, &th.name) {
                t.name(tid, n);
            }
        }
        let Some(b) = &p.ftrace_events else { continue };
        let at = format!("packet {pi}");
        let cpu = b.cpu.ok_or_else(|| ImportError::at(file, &at, "cpu", "an event bundle without its CPU"))?;
        if let Some(c) = &b.compact_sched {
            crate::compact::read(file, &at, cpu, c, &mut on_cpu, &mut t, poll)?;
        }
        for e in &b.event {
            if poll.stop() {
                return Err(ImportError::interrupted(file, format!("packet {pi}")));
            }
            let Some(kind) = e.event.as_ref().map(|x| kind(&mut t, x)) else {
                t.skip("other ftrace event");
                continue;
            };
            let time = e.timestamp.ok_or_else(|| ImportError::at(file, &at, "timestamp", "an event without time"))?;
            let current = e.pid.unwrap_or(0) as i32;
            let irq = e.common_flags.is_some_and(|f| f & IRQ_FLAGS != 0);
            // `task_newtask` is recorded in the forking task's context.
            let kind = match kind {
                Kind::Fork { child, .. } => Kind::Fork { parent: current, child },
                k => k,
            };
            t.push(file, &at, Ev { time, cpu, current, irq, kind })?;
        }
    }
    Ok(t)
}

fn kind(t: &mut Trace, e: &E) -> Kind {
    let cpu = |c: Option<i32>| c.unwrap_or(0).max(0) as u32;
    let mut name = |pid: Option<i32>, comm: &Option<String>| {
        if let (Some(p), Some(c)) = (pid, comm) {
            t.name(p, c);
        }
        pid.unwrap_or(0)
    };
    match e {
        E::Switch(s) => Kind::Switch {
            prev: name(s.prev_pid, &s.prev_comm),
            prev_prio: s.prev_prio.unwrap_or(120),
            prev_state: prev_state_from_bits(s.prev_state.unwrap_or(0)),
            next: name(s.next_pid, &s.next_comm),
            next_prio: s.next_prio.unwrap_or(120),
        },
        E::Waking(w) | E::Wakeup(w) | E::WakeupNew(w) => Kind::Wake {
            pid: name(w.pid, &w.comm),
            prio: w.prio.unwrap_or(120),
            target_cpu: cpu(w.target_cpu),
            waking: matches!(e, E::Waking(_)),
            new: matches!(e, E::WakeupNew(_)),
        },
        E::Newtask(n) => Kind::Fork { parent: -1, child: name(n.pid, &n.comm) },
        E::Exit(x) => Kind::Exit { pid: name(x.pid, &x.comm) },
        E::Migrate(m) => Kind::Migrate { pid: name(m.pid, &m.comm), from: cpu(m.orig_cpu), to: cpu(m.dest_cpu) },
    }
}
