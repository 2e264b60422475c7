//! A Perfetto trace (protobuf) of a run: the CPU timeline as synthetic ftrace events
//! (`sched_switch`, `sched_waking`, `sched_wakeup(_new)`, `sched_migrate_task`,
//! `task_newtask`, `sched_process_exit`) so the Perfetto UI draws its native per-CPU tracks,
//! thread states and wakeup arrows, exactly as for a kernel trace; a `ProcessTree` for
//! names; and counter tracks for per-CPU runnable counts and per-task policy internals.
//!
//! The messages are declared by hand with the field numbers of Perfetto's protos
//! (`protos/perfetto/trace/…`, perfetto_protos 0.51.1); unknown fields are omitted.

use schedlab_metrics::{RunRecord, Trace as EventLog};
use schedlab_probe::{PrevState, ProbeEvent};

/// `perfetto.protos.Trace`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Trace {
    #[prost(message, repeated, tag = "1")]
    pub packet: Vec<TracePacket>,
}

/// `perfetto.protos.TracePacket` (the fields used here).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacket {
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    #[prost(message, optional, tag = "1")]
    pub ftrace_events: Option<FtraceEventBundle>,
    #[prost(message, optional, tag = "2")]
    pub process_tree: Option<ProcessTree>,
    #[prost(message, optional, tag = "11")]
    pub track_event: Option<TrackEvent>,
    #[prost(message, optional, tag = "60")]
    pub track_descriptor: Option<TrackDescriptor>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct FtraceEventBundle {
    #[prost(uint32, optional, tag = "1")]
    pub cpu: Option<u32>,
    #[prost(message, repeated, tag = "2")]
    pub event: Vec<FtraceEvent>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct FtraceEvent {
    #[prost(uint64, optional, tag = "1")]
    pub timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "2")]
    pub pid: Option<u32>,
    /// ftrace's `common_flags` (`kernel/trace/trace.h`: `TRACE_FLAG_HARDIRQ` 0x08 for an
    /// event in hard interrupt context); absent when none is set.
    #[prost(uint32, optional, tag = "5")]
    pub common_flags: Option<u32>,
    #[prost(oneof = "Event", tags = "4, 17, 20, 114, 235, 238, 491")]
    pub event: Option<Event>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Event {
    #[prost(message, tag = "4")]
    SchedSwitch(SchedSwitch),
    #[prost(message, tag = "17")]
    SchedWakeup(SchedWakeup),
    #[prost(message, tag = "20")]
    SchedWaking(SchedWakeup),
    #[prost(message, tag = "114")]
    SchedWakeupNew(SchedWakeup),
    #[prost(message, tag = "235")]
    TaskNewtask(TaskNewtask),
    #[prost(message, tag = "238")]
    SchedProcessExit(SchedProcessExit),
    #[prost(message, tag = "491")]
    SchedMigrateTask(SchedMigrateTask),
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedSwitch {
    #[prost(string, optional, tag = "1")]
    pub prev_comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub prev_pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prev_prio: Option<i32>,
    #[prost(int64, optional, tag = "4")]
    pub prev_state: Option<i64>,
    #[prost(string, optional, tag = "5")]
    pub next_comm: Option<String>,
    #[prost(int32, optional, tag = "6")]
    pub next_pid: Option<i32>,
    #[prost(int32, optional, tag = "7")]
    pub next_prio: Option<i32>,
}

/// `SchedWakingFtraceEvent`, `SchedWakeupFtraceEvent`, `SchedWakeupNewFtraceEvent` share
/// their layout.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedWakeup {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub success: Option<i32>,
    #[prost(int32, optional, tag = "5")]
    pub target_cpu: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct TaskNewtask {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(string, optional, tag = "2")]
    pub comm: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedProcessExit {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedMigrateTask {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub orig_cpu: Option<i32>,
    #[prost(int32, optional, tag = "5")]
    pub dest_cpu: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ProcessTree {
    #[prost(message, repeated, tag = "1")]
    pub processes: Vec<Process>,
    #[prost(message, repeated, tag = "2")]
    pub threads: Vec<Thread>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Process {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    pub ppid: Option<i32>,
    #[prost(string, repeated, tag = "3")]
    pub cmdline: Vec<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Thread {
    #[prost(int32, optional, tag = "1")]
    pub tid: Option<i32>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(int32, optional, tag = "3")]
    pub tgid: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackDescriptor {
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(message, optional, tag = "4")]
    pub thread: Option<ThreadDescriptor>,
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
}

/// `perfetto.protos.ThreadDescriptor`: puts a track on a thread (the wait slices).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ThreadDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    pub tid: Option<i32>,
}

/// `perfetto.protos.DebugAnnotation`: a slice's argument (`args.NAME` in the UI).
#[derive(Clone, PartialEq, prost::Message)]
pub struct DebugAnnotation {
    #[prost(string, optional, tag = "10")]
    pub name: Option<String>,
    #[prost(uint64, optional, tag = "3")]
    pub uint_value: Option<u64>,
    #[prost(string, optional, tag = "6")]
    pub string_value: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct CounterDescriptor {
    /// `UNIT_TIME_NS = 1`, `UNIT_COUNT = 2`.
    #[prost(int32, optional, tag = "3")]
    pub unit: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEvent {
    /// `TYPE_SLICE_BEGIN = 1`, `TYPE_SLICE_END = 2`, `TYPE_COUNTER = 4`.
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    #[prost(string, optional, tag = "23")]
    pub name: Option<String>,
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    #[prost(int64, optional, tag = "30")]
    pub counter_value: Option<i64>,
    /// Flows this event starts (an arrow to the event that terminates the same id).
    #[prost(fixed64, repeated, packed = "false", tag = "47")]
    pub flow_ids: Vec<u64>,
    /// Flows this event ends.
    #[prost(fixed64, repeated, packed = "false", tag = "48")]
    pub terminating_flow_ids: Vec<u64>,
}

/// Linux `prev_state` bits as Perfetto decodes them.
const TASK_RUNNING: i64 = 0;
const TASK_INTERRUPTIBLE: i64 = 1;
const EXIT_DEAD: i64 = 0x10;
/// `TRACE_FLAG_HARDIRQ` of ftrace's `common_flags` (`kernel/trace/trace.h`).
const TRACE_FLAG_HARDIRQ: u32 = 0x08;
/// Packets of the counter tracks use this sequence.
const SEQ: u32 = 1;
/// Packets of the wait slices use this one.
const WAIT_SEQ: u32 = 2;

/// A task's pid in the trace: 0 is the idle task (`swapper`), so task `t` is `t + 1`.
pub fn pid_of(t: usize) -> i32 {
    t as i32 + 1
}

/// Encodes the run as a Perfetto trace. Needs the event log (`Job::trace`); adds counter
/// tracks when the run recorded a series.
pub fn encode(r: &RunRecord) -> Option<Vec<u8>> {
    use prost::Message;
    Some(build(r, r.trace.as_ref()?).encode_to_vec())
}

fn build(r: &RunRecord, log: &EventLog) -> Trace {
    let name = |t: usize| log.names.get(t).cloned().unwrap_or_default();
    let prio = |t: usize| 120 + r.tasks.get(t).map_or(0, |x| x.nice);
    let mut packets = Vec::new();
    let tree = ProcessTree {
        processes: (0..log.names.len())
            .map(|t| Process { pid: Some(pid_of(t)), ppid: Some(0), cmdline: vec![name(t)] })
            .collect(),
        threads: (0..log.names.len())
            .map(|t| Thread { tid: Some(pid_of(t)), name: Some(name(t)), tgid: Some(pid_of(t)) })
            .collect(),
    };
    packets.push(TracePacket { timestamp: Some(0), process_tree: Some(tree), ..Default::default() });
    // One bundle per CPU, events in time order (the kernel's per-CPU ring buffers).
    let mut per_cpu: Vec<Vec<FtraceEvent>> = vec![Vec::new(); log.nr_cpus];
    let ev = |time: u64, pid: i32, e: Event| FtraceEvent {
        timestamp: Some(time),
        pid: Some(pid as u32),
        common_flags: None,
        event: Some(e),
    };
    let wake = |t: usize, cpu: usize| SchedWakeup {
        comm: Some(name(t)),
        pid: Some(pid_of(t)),
        prio: Some(prio(t)),
        success: Some(1),
        target_cpu: Some(cpu as i32),
    };
    let mut current = vec![0i32; log.nr_cpus];
    for e in &log.events {
        match *e {
            ProbeEvent::TaskNew { time, task, parent, cpu } => {
                let by = parent.map_or(0, pid_of);
                let nt = TaskNewtask { pid: Some(pid_of(task)), comm: Some(name(task)) };
                per_cpu[cpu].push(ev(time.0, by, Event::TaskNewtask(nt)));
            }
            ProbeEvent::Switch { time, cpu, prev, prev_state, next } => {
                let state = match prev_state {
                    PrevState::Runnable => TASK_RUNNING,
                    PrevState::Blocked => TASK_INTERRUPTIBLE,
                    PrevState::Dead => EXIT_DEAD,
                };
                let sw = SchedSwitch {
                    prev_comm: Some(prev.map_or("swapper".into(), name)),
                    prev_pid: Some(prev.map_or(0, pid_of)),
                    prev_prio: Some(prev.map_or(120, prio)),
                    prev_state: Some(if prev.is_some() { state } else { TASK_RUNNING }),
                    next_comm: Some(next.map_or("swapper".into(), name)),
                    next_pid: Some(next.map_or(0, pid_of)),
                    next_prio: Some(next.map_or(120, prio)),
                };
                per_cpu[cpu].push(ev(time.0, prev.map_or(0, pid_of), Event::SchedSwitch(sw)));
                current[cpu] = next.map_or(0, pid_of);
            }
            ProbeEvent::Waking { time, task, waker_cpu, irq } => {
                let w = wake(task, waker_cpu);
                // A wakeup by an expiring hrtimer is the interrupt's, not the current
                // task's: without the flag an importer takes the current task for the waker.
                let flags = irq.then_some(TRACE_FLAG_HARDIRQ);
                let e = FtraceEvent { common_flags: flags, ..ev(time.0, current[waker_cpu], Event::SchedWaking(w)) };
                per_cpu[waker_cpu].push(e);
            }
            ProbeEvent::Wakeup { time, task, cpu, new } => {
                let w = wake(task, cpu);
                let e = if new { Event::SchedWakeupNew(w) } else { Event::SchedWakeup(w) };
                per_cpu[cpu].push(ev(time.0, current[cpu], e));
            }
            ProbeEvent::Migrate { time, task, from, to } => {
                let m = SchedMigrateTask {
                    comm: Some(name(task)),
                    pid: Some(pid_of(task)),
                    prio: Some(prio(task)),
                    orig_cpu: Some(from as i32),
                    dest_cpu: Some(to as i32),
                };
                per_cpu[to].push(ev(time.0, current[to], Event::SchedMigrateTask(m)));
            }
            ProbeEvent::Exit { time, task } => {
                let x = SchedProcessExit { comm: Some(name(task)), pid: Some(pid_of(task)) };
                let cpu = current.iter().position(|&p| p == pid_of(task)).unwrap_or(0);
                per_cpu[cpu].push(ev(time.0, pid_of(task), Event::SchedProcessExit(x)));
            }
            ProbeEvent::CpuMode { .. }
            | ProbeEvent::Span { .. }
            | ProbeEvent::PiSetprio { .. }
            | ProbeEvent::VipInherit { .. } => {}
        }
    }
    for (cpu, events) in per_cpu.into_iter().enumerate() {
        // Bundles of bounded size, as the kernel's per-page ring buffer reads give.
        for chunk in events.chunks(4096) {
            packets.push(TracePacket {
                ftrace_events: Some(FtraceEventBundle { cpu: Some(cpu as u32), event: chunk.to_vec() }),
                ..Default::default()
            });
        }
    }
    if let Some(s) = &r.series {
        counters(r, s, &mut packets);
    }
    if let Some(ex) = &r.explained {
        waits(ex, &mut packets);
    }
    Trace { packet: packets }
}

/// Counter tracks: runnable tasks per CPU and every policy statistic per task.
fn counters(r: &RunRecord, s: &schedlab_metrics::Series, packets: &mut Vec<TracePacket>) {
    let mut first = true;
    let mut track = |packets: &mut Vec<TracePacket>, uuid: u64, name: String, unit: i32| {
        packets.push(TracePacket {
            timestamp: Some(0),
            trusted_packet_sequence_id: Some(SEQ),
            sequence_flags: first.then_some(1),
            track_descriptor: Some(TrackDescriptor {
                uuid: Some(uuid),
                name: Some(name),
                counter: Some(CounterDescriptor { unit: Some(unit) }),
                ..Default::default()
            }),
            ..Default::default()
        });
        first = false;
    };
    let value = |packets: &mut Vec<TracePacket>, uuid: u64, time: u64, v: i64| {
        packets.push(TracePacket {
            timestamp: Some(time),
            trusted_packet_sequence_id: Some(SEQ),
            track_event: Some(TrackEvent {
                r#type: Some(4),
                track_uuid: Some(uuid),
                counter_value: Some(v),
                ..Default::default()
            }),
            ..Default::default()
        });
    };
    for (cpu, v) in s.cpu_runnable.iter().enumerate() {
        let uuid = 1_000_000 + cpu as u64;
        track(packets, uuid, format!("cpu{cpu} runnable"), 2);
        let mut last = None;
        for (i, &x) in v.iter().enumerate() {
            if last != Some(x) {
                value(packets, uuid, s.times_ns[i], i64::from(x));
                last = Some(x);
            }
        }
    }
    for (t, stats) in s.stats.iter().enumerate() {
        for (k, v) in stats.iter().enumerate() {
            let uuid = 2_000_000 + (t as u64) * 64 + k as u64;
            let name = format!("{} {}", r.tasks.get(t).map_or("?", |x| x.name.as_str()), s.stat_names[k]);
            track(packets, uuid, name, 2);
            let mut last = None;
            for (i, &x) in v.iter().enumerate() {
                if last != Some(x) {
                    value(packets, uuid, s.times_ns[s.first[t] + i], x);
                    last = Some(x);
                }
            }
        }
    }
}

/// A slice per explained wait segment on its task's thread track, named by its cause, with
/// the cause, the CPU it waited on, who ran there instead and why as arguments. Segments
/// tile each wait, so a task's slices sum to its `wait_ns`. A wait that began with a
/// wakeup carries how it was woken on its first slice (`woken_by`, `blocked_on`,
/// `placed`, the wakeup path's time) and ends a flow that starts at an instant on the
/// waker's track at `sched_waking`, so the UI draws an arrow from waker to wakee; the
/// balancer's verdicts that concerned the wait ride on its last slice.
fn waits(ex: &schedlab_metrics::explain::Explained, packets: &mut Vec<TracePacket>) {
    let uuid = |t: usize| 3_000_000 + t as u64;
    let mut tracks: Vec<usize> = ex.waits.iter().map(|w| w.task).collect();
    tracks.extend(ex.waits.iter().filter_map(|w| w.wake.as_ref()?.waker));
    tracks.sort_unstable();
    tracks.dedup();
    for (i, &t) in tracks.iter().enumerate() {
        packets.push(TracePacket {
            timestamp: Some(0),
            trusted_packet_sequence_id: Some(WAIT_SEQ),
            sequence_flags: (i == 0).then_some(1),
            track_descriptor: Some(TrackDescriptor {
                uuid: Some(uuid(t)),
                thread: Some(ThreadDescriptor { pid: Some(pid_of(t)), tid: Some(pid_of(t)) }),
                ..Default::default()
            }),
            ..Default::default()
        });
    }
    let name = |t: usize| ex.names.get(t).cloned().unwrap_or_default();
    let mut slices = Vec::new();
    for (flow, w) in (1u64..).zip(&ex.waits) {
        let last = w.segments.len().saturating_sub(1);
        for (i, g) in w.segments.iter().enumerate() {
            let mut args = vec![str_arg("cause", g.cause.name().into()), uint_arg("cpu", g.cpu as u64)];
            if let Some(ran) = g.ran {
                args.push(str_arg("ran", name(ran)));
            }
            args.push(str_arg("why", g.why.clone()));
            let mut begin = TrackEvent {
                r#type: Some(1),
                track_uuid: Some(uuid(w.task)),
                name: Some(format!("wait: {}", g.cause.name())),
                ..Default::default()
            };
            if let (0, Some(wake)) = (i, &w.wake) {
                wake_args(wake, &name, &mut args);
                if let Some(waker) = wake.waker {
                    begin.terminating_flow_ids.push(flow);
                    slices.push((wake.waking_ns, waking_instant(uuid(waker), &name(w.task), flow)));
                }
            }
            if i == last {
                args.extend(w.balance.iter().map(|b| str_arg("balance", b.clone())));
                args.extend(w.moved_by.iter().map(|m| str_arg("moved_by", m.clone())));
            }
            begin.debug_annotations = args;
            let end = TrackEvent { r#type: Some(2), track_uuid: Some(uuid(w.task)), ..Default::default() };
            slices.push((g.start_ns, begin));
            slices.push((g.end_ns, end));
        }
    }
    // In time order; stable, so a segment's end stays before the next one's begin.
    slices.sort_by_key(|s| s.0);
    packets.extend(slices.into_iter().map(|(time, e)| TracePacket {
        timestamp: Some(time),
        trusted_packet_sequence_id: Some(WAIT_SEQ),
        track_event: Some(e),
        ..Default::default()
    }));
}

fn str_arg(name: &str, v: String) -> DebugAnnotation {
    DebugAnnotation { name: Some(name.into()), string_value: Some(v), ..Default::default() }
}

fn uint_arg(name: &str, v: u64) -> DebugAnnotation {
    DebugAnnotation { name: Some(name.into()), uint_value: Some(v), ..Default::default() }
}

/// How a wait's task was woken, as its first slice's arguments.
fn wake_args(
    wake: &schedlab_metrics::explain::WakeInfo,
    name: &dyn Fn(usize) -> String,
    args: &mut Vec<DebugAnnotation>,
) {
    let by = wake.waker.map_or_else(|| format!("an interrupt on CPU {}", wake.waker_cpu), name);
    args.push(str_arg("woken_by", by));
    if let Some(on) = &wake.on {
        args.push(str_arg("blocked_on", on.clone()));
    }
    if let Some(placed) = &wake.placed {
        args.push(str_arg("placed", placed.clone()));
    }
    args.push(uint_arg("wakeup_path_ns", wake.wakeup_path_ns));
    args.push(uint_arg("lock_spin_ns", wake.lock_spin_ns));
    args.push(uint_arg("ipi_ns", wake.ipi_ns));
}

/// `TYPE_INSTANT` on the waker's track at `sched_waking`, starting flow `flow`.
fn waking_instant(track: u64, wakee: &str, flow: u64) -> TrackEvent {
    TrackEvent {
        r#type: Some(3),
        track_uuid: Some(track),
        name: Some(format!("wake {wakee}")),
        flow_ids: vec![flow],
        ..Default::default()
    }
}
