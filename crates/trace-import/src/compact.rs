//! Perfetto's `compact_sched` encoding (`FtraceEventBundle.CompactSched`, the default of
//! `traced`'s ftrace data source for `sched_switch` and `sched_waking`): per bundle (one
//! CPU), parallel arrays of switches and of wakings, each with timestamps as deltas from
//! the previous one of the same array (the first from 0), comms as indexes into the
//! bundle's intern table. What the expanded encoding has and this one leaves out is
//! restored as Perfetto's trace processor does: a switch's `prev` is the previous switch's
//! `next` on that CPU (unknown before the CPU's first switch: `prev` −1, no thread), and a
//! waking's waker is the thread a switch last put on the CPU at its time.

use crate::event::{prev_state_from_bits, Ev, Kind, Trace};
use crate::ImportError;
use std::collections::BTreeMap;

/// The fields of `FtraceEventBundle.CompactSched` (Perfetto's
/// `protos/perfetto/trace/ftrace/ftrace_event_bundle.proto`).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct CompactSched {
    #[prost(uint64, repeated, tag = "1")]
    switch_timestamp: Vec<u64>,
    #[prost(int64, repeated, tag = "2")]
    switch_prev_state: Vec<i64>,
    #[prost(int32, repeated, tag = "3")]
    switch_next_pid: Vec<i32>,
    #[prost(int32, repeated, tag = "4")]
    switch_next_prio: Vec<i32>,
    #[prost(string, repeated, tag = "5")]
    intern_table: Vec<String>,
    #[prost(uint32, repeated, tag = "6")]
    switch_next_comm_index: Vec<u32>,
    #[prost(uint64, repeated, tag = "7")]
    waking_timestamp: Vec<u64>,
    #[prost(int32, repeated, tag = "8")]
    waking_pid: Vec<i32>,
    #[prost(int32, repeated, tag = "9")]
    waking_target_cpu: Vec<i32>,
    #[prost(int32, repeated, tag = "10")]
    waking_prio: Vec<i32>,
    #[prost(uint32, repeated, tag = "11")]
    waking_comm_index: Vec<u32>,
    #[prost(uint32, repeated, tag = "12")]
    waking_common_flags: Vec<u32>,
}

/// Per CPU, across bundles: the thread the last switch put there, and its prio.
pub(crate) type OnCpu = BTreeMap<u32, (i32, i32)>;

/// Absolute times from deltas; `None` on overflow.
fn times(deltas: &[u64]) -> Option<Vec<u64>> {
    let mut t = 0u64;
    deltas
        .iter()
        .map(|d| {
            t = t.checked_add(*d)?;
            Some(t)
        })
        .collect()
}

/// Adds the bundle's switches and wakings to `t`, in time order (a switch before a waking
/// at the same time); `at` names the packet in errors.
pub(crate) fn read(
    file: &str,
    at: &str,
    cpu: u32,
    c: &CompactSched,
    on_cpu: &mut OnCpu,
    t: &mut Trace,
    poll: &mut crate::Poll,
) -> Result<(), ImportError> {
    let bad = |field: &str, m: &str| ImportError::at(file, at, &format!("compact_sched.{field}"), m);
    let n = c.switch_timestamp.len();
    if [c.switch_prev_state.len(), c.switch_next_pid.len(), c.switch_next_prio.len(), c.switch_next_comm_index.len()]
        .iter()
        .any(|&l| l != n)
    {
        return Err(bad("switch_timestamp", "the switch arrays differ in length"));
    }
    let w = c.waking_timestamp.len();
    if [c.waking_pid.len(), c.waking_target_cpu.len(), c.waking_prio.len(), c.waking_comm_index.len()]
        .iter()
        .any(|&l| l != w)
        || !(c.waking_common_flags.is_empty() || c.waking_common_flags.len() == w)
    {
        return Err(bad("waking_timestamp", "the waking arrays differ in length"));
    }
    let comm = |i: u32, field: &str| {
        c.intern_table.get(i as usize).ok_or_else(|| bad(field, &format!("comm index {i} is past the intern table")))
    };
    let st = times(&c.switch_timestamp).ok_or_else(|| bad("switch_timestamp", "time overflows"))?;
    let wt = times(&c.waking_timestamp).ok_or_else(|| bad("waking_timestamp", "time overflows"))?;
    let (mut i, mut j) = (0, 0);
    while i < n || j < w {
        if poll.stop() {
            return Err(ImportError::interrupted(file, at));
        }
        if i < n && (j == w || st[i] <= wt[j]) {
            let next = c.switch_next_pid[i];
            t.name(next, comm(c.switch_next_comm_index[i], "switch_next_comm_index")?);
            let (prev, prev_prio) = on_cpu.get(&cpu).copied().unwrap_or((-1, 120));
            let kind = Kind::Switch {
                prev,
                prev_prio,
                prev_state: prev_state_from_bits(c.switch_prev_state[i]),
                next,
                next_prio: c.switch_next_prio[i],
            };
            on_cpu.insert(cpu, (next, c.switch_next_prio[i]));
            t.push(file, at, Ev { time: st[i], cpu, current: prev.max(0), irq: false, kind })?;
            i += 1;
        } else {
            let pid = c.waking_pid[j];
            t.name(pid, comm(c.waking_comm_index[j], "waking_comm_index")?);
            let flags = c.waking_common_flags.get(j).copied().unwrap_or(0);
            let kind = Kind::Wake {
                pid,
                prio: c.waking_prio[j],
                target_cpu: c.waking_target_cpu[j].max(0) as u32,
                waking: true,
                new: false,
            };
            let current = on_cpu.get(&cpu).map_or(0, |x| x.0);
            let irq = flags & crate::perfetto::IRQ_FLAGS != 0;
            t.push(file, at, Ev { time: wt[j], cpu, current, irq, kind })?;
            j += 1;
        }
    }
    Ok(())
}
