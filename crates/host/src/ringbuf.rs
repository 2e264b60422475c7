//! Parsing the binary pages `trace_pipe_raw` returns (the ftrace ring buffer's sub-buffers)
//! into sched events, with field offsets read from each event's tracefs `format` file, so
//! the parser follows the running kernel's layout instead of assuming one.
//!
//! Page layout (tracefs `events/header_page`): `u64 timestamp`, `local_t commit` (the data
//! length; bits 30–31 flag missed events), then the data. Each record starts with a 32-bit
//! header (`events/header_event`): `type_len:5, time_delta:27`. `type_len` 1..=28 is a data
//! record of `4·type_len` bytes; 0 a data record whose length is the next word; 29 padding
//! (with `time_delta` 0: the rest of the page is unused); 30 a time extension (delta bits
//! above 27 in the next word); 31 an absolute time stamp (`kernel/trace/ring_buffer.c`).

use std::collections::BTreeMap;

/// One decoded scheduler event, in the trace clock's nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawEvent {
    pub ts: u64,
    /// The CPU whose buffer recorded it (the CPU that executed the tracepoint).
    pub cpu: usize,
    /// The task current on that CPU when it was recorded (`common_pid`, 0 for the idle
    /// task; in interrupt context, the task interrupted): who was running there, which a
    /// missing `sched_switch` does not hide.
    pub curr: i32,
    pub kind: RawKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RawKind {
    Switch { prev: i32, prev_state: i64, next: i32 },
    Waking { pid: i32 },
    Wakeup { pid: i32, target_cpu: i32, new: bool },
    Migrate { pid: i32, from: i32, to: i32 },
    Fork { parent: i32, child: i32 },
    Exit { pid: i32 },
}

/// The events a run enables, by tracefs name.
pub const EVENTS: [&str; 7] = [
    "sched_switch",
    "sched_waking",
    "sched_wakeup",
    "sched_wakeup_new",
    "sched_migrate_task",
    "sched_process_fork",
    "sched_process_exit",
];

/// Field offsets and sizes of one event, from its `format` file.
#[derive(Clone, Debug, Default)]
pub struct Format {
    pub id: u16,
    fields: BTreeMap<String, (usize, usize)>,
}

impl Format {
    /// Parses a tracefs `format` file.
    pub fn parse(text: &str) -> Result<Format, String> {
        let mut f = Format::default();
        for line in text.lines() {
            let line = line.trim();
            if let Some(id) = line.strip_prefix("ID:") {
                f.id = id.trim().parse().map_err(|_| format!("bad ID line `{line}`"))?;
            }
            let Some(rest) = line.strip_prefix("field:") else { continue };
            let mut parts = rest.split(';').map(str::trim);
            let decl = parts.next().unwrap_or("");
            let mut num = |key: &str| {
                parts
                    .next()
                    .and_then(|p| p.strip_prefix(key))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .ok_or_else(|| format!("bad field line `{line}`"))
            };
            let offset = num("offset:")?;
            let size = num("size:")?;
            let name = decl.split_whitespace().last().unwrap_or("");
            let name = name.split('[').next().unwrap_or(name).to_string();
            f.fields.insert(name, (offset, size));
        }
        if f.id == 0 {
            return Err("no ID in format file".into());
        }
        Ok(f)
    }

    fn int(&self, data: &[u8], name: &str) -> Option<i64> {
        let &(off, size) = self.fields.get(name)?;
        let b = data.get(off..off + size)?;
        Some(match size {
            1 => i64::from(b[0] as i8),
            2 => i64::from(i16::from_ne_bytes([b[0], b[1]])),
            4 => i64::from(i32::from_ne_bytes(b.try_into().ok()?)),
            8 => i64::from_ne_bytes(b.try_into().ok()?),
            _ => return None,
        })
    }

    /// Whether every field the decoder reads is present.
    pub fn has(&self, names: &[&str]) -> bool {
        names.iter().all(|n| self.fields.contains_key(*n))
    }
}

/// Formats of the enabled events, indexed by name; decodes records.
#[derive(Clone, Debug, Default)]
pub struct Decoder {
    pub formats: BTreeMap<String, Format>,
    by_id: BTreeMap<u16, String>,
}

/// Fields each event must have for the decoder (beside `common_pid`, which every event has).
pub fn required_fields(event: &str) -> &'static [&'static str] {
    match event {
        "sched_switch" => &["prev_pid", "prev_state", "next_pid"],
        "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => &["pid", "target_cpu"],
        "sched_migrate_task" => &["pid", "orig_cpu", "dest_cpu"],
        "sched_process_fork" => &["parent_pid", "child_pid"],
        _ => &["pid"],
    }
}

/// The common field naming the task current when the event was recorded.
const COMMON_PID: &str = "common_pid";

impl Decoder {
    pub fn add(&mut self, name: &str, f: Format) -> Result<(), String> {
        if !f.has(required_fields(name)) || !f.has(&[COMMON_PID]) {
            return Err(format!("{name}: its format lacks one of {:?} or {COMMON_PID}", required_fields(name)));
        }
        self.by_id.insert(f.id, name.to_string());
        self.formats.insert(name.to_string(), f);
        Ok(())
    }

    /// Decodes one record's payload into the current task (`common_pid`) and the event;
    /// `None` for events we did not ask for.
    pub fn decode(&self, data: &[u8]) -> Option<(i32, RawKind)> {
        let id = u16::from_ne_bytes([*data.first()?, *data.get(1)?]);
        let name = self.by_id.get(&id)?;
        let f = &self.formats[name];
        let i = |n: &str| f.int(data, n);
        let pid = |n: &str| i(n).map(|v| v as i32);
        let kind = match name.as_str() {
            "sched_switch" => {
                RawKind::Switch { prev: pid("prev_pid")?, prev_state: i("prev_state")?, next: pid("next_pid")? }
            }
            "sched_waking" => RawKind::Waking { pid: pid("pid")? },
            "sched_wakeup" | "sched_wakeup_new" => {
                RawKind::Wakeup { pid: pid("pid")?, target_cpu: pid("target_cpu")?, new: name == "sched_wakeup_new" }
            }
            "sched_migrate_task" => RawKind::Migrate { pid: pid("pid")?, from: pid("orig_cpu")?, to: pid("dest_cpu")? },
            "sched_process_fork" => RawKind::Fork { parent: pid("parent_pid")?, child: pid("child_pid")? },
            "sched_process_exit" => RawKind::Exit { pid: pid("pid")? },
            _ => return None,
        };
        Some((pid(COMMON_PID)?, kind))
    }
}

/// `RB_MISSED_EVENTS | RB_MISSED_STORED` in the commit word.
const MISSED_FLAGS: u64 = (1 << 31) | (1 << 30);
const TS_SHIFT: u32 = 27;

/// What one page held.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct PageStats {
    pub records: u64,
    /// The kernel dropped events before this page (the buffer was full).
    pub missed: bool,
}

fn word(page: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(page.get(at..at + 4)?.try_into().ok()?))
}

/// Parses one page from `cpu`'s buffer, appending decoded events to `out`. `data_offset`
/// is where the data starts (16 on 64-bit kernels); a malformed page stops at the damage.
pub fn parse_page(page: &[u8], cpu: usize, data_offset: usize, dec: &Decoder, out: &mut Vec<RawEvent>) -> PageStats {
    let mut stats = PageStats::default();
    let (Some(ts_bytes), Some(commit_bytes)) = (page.get(0..8), page.get(8..data_offset)) else { return stats };
    let mut ts = u64::from_ne_bytes(ts_bytes.try_into().unwrap_or([0; 8]));
    let page_ts = ts;
    let commit = match commit_bytes.len() {
        8 => u64::from_ne_bytes(commit_bytes.try_into().unwrap_or([0; 8])),
        4 => u64::from(u32::from_ne_bytes(commit_bytes.try_into().unwrap_or([0; 4]))),
        _ => return stats,
    };
    stats.missed = commit & MISSED_FLAGS != 0;
    let end = (data_offset + (commit & !MISSED_FLAGS & 0xffff_ffff) as usize).min(page.len());
    let mut at = data_offset;
    while at + 4 <= end {
        let Some(hdr) = word(page, at) else { break };
        let type_len = hdr & 0x1f;
        let delta = u64::from(hdr >> 5);
        at += 4;
        match type_len {
            29 => {
                if delta == 0 {
                    break;
                }
                let Some(len) = word(page, at) else { break };
                ts += delta;
                at += len as usize;
            }
            30 => {
                let Some(ext) = word(page, at) else { break };
                ts += (u64::from(ext) << TS_SHIFT) + delta;
                at += 4;
            }
            31 => {
                let Some(hi) = word(page, at) else { break };
                // An absolute stamp holds the low 59 bits; the page's stamp has the rest.
                let abs = (u64::from(hi) << TS_SHIFT) | delta;
                ts = abs | (page_ts & !((1u64 << 59) - 1));
                at += 4;
            }
            _ => {
                let len = if type_len == 0 {
                    let Some(l) = word(page, at) else { break };
                    at += 4;
                    (l as usize).saturating_sub(4).next_multiple_of(4)
                } else {
                    type_len as usize * 4
                };
                ts += delta;
                let Some(data) = page.get(at..at + len) else { break };
                stats.records += 1;
                if let Some((curr, kind)) = dec.decode(data) {
                    out.push(RawEvent { ts, cpu, curr, kind });
                }
                at += len;
            }
        }
    }
    stats
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCH_FORMAT: &str = "name: sched_switch\nID: 372\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\
\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n\
\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\
\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n\
\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n\
\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n";

    fn switch_payload(prev: i32, state: i64, next: i32) -> Vec<u8> {
        let mut d = vec![0u8; 64];
        d[0..2].copy_from_slice(&372u16.to_ne_bytes());
        d[4..8].copy_from_slice(&prev.to_ne_bytes()); // recorded in prev's context
        d[24..28].copy_from_slice(&prev.to_ne_bytes());
        d[32..40].copy_from_slice(&state.to_ne_bytes());
        d[56..60].copy_from_slice(&next.to_ne_bytes());
        d
    }

    fn decoder() -> Decoder {
        let mut d = Decoder::default();
        d.add("sched_switch", Format::parse(SWITCH_FORMAT).unwrap()).unwrap();
        d
    }

    /// A page with a small record, a time extension, a padding record and a record after
    /// it decodes to both switches with the summed deltas.
    #[test]
    fn page_records_time_extensions_and_padding() {
        let mut page = vec![0u8; 4096];
        page[0..8].copy_from_slice(&1_000_000u64.to_ne_bytes());
        let mut data = Vec::new();
        let rec = switch_payload(10, 1, 0);
        data.extend_from_slice(&((5u32 << 5) | (rec.len() as u32 / 4)).to_ne_bytes()); // delta 5
        data.extend_from_slice(&rec);
        data.extend_from_slice(&((3u32 << 5) | 30).to_ne_bytes()); // extend: 2<<27 + 3
        data.extend_from_slice(&2u32.to_ne_bytes());
        data.extend_from_slice(&((1u32 << 5) | 29).to_ne_bytes()); // padding: 8 bytes after the header
        data.extend_from_slice(&8u32.to_ne_bytes()); // (the length word counts itself)
        data.extend_from_slice(&[0u8; 4]);
        let rec2 = switch_payload(0, 0, 11);
        data.extend_from_slice(&((7u32 << 5) | (rec2.len() as u32 / 4)).to_ne_bytes());
        data.extend_from_slice(&rec2);
        page[8..16].copy_from_slice(&(data.len() as u64).to_ne_bytes());
        page[16..16 + data.len()].copy_from_slice(&data);
        let mut out = Vec::new();
        let st = parse_page(&page, 1, 16, &decoder(), &mut out);
        assert_eq!(st, PageStats { records: 2, missed: false });
        assert_eq!(
            out[0],
            RawEvent { ts: 1_000_005, cpu: 1, curr: 10, kind: RawKind::Switch { prev: 10, prev_state: 1, next: 0 } }
        );
        let t2 = 1_000_005 + (2u64 << 27) + 3 + 1 + 7;
        assert_eq!(
            out[1],
            RawEvent { ts: t2, cpu: 1, curr: 0, kind: RawKind::Switch { prev: 0, prev_state: 0, next: 11 } }
        );
    }

    /// The missed-events flag is reported and not mistaken for length.
    #[test]
    fn missed_flag_is_not_length() {
        let mut page = vec![0u8; 4096];
        page[8..16].copy_from_slice(&(1u64 << 31).to_ne_bytes());
        let st = parse_page(&page, 0, 16, &decoder(), &mut Vec::new());
        assert_eq!(st, PageStats { records: 0, missed: true });
    }

    #[test]
    fn format_needs_the_fields_the_decoder_reads() {
        let mut f = Format::parse(SWITCH_FORMAT).unwrap();
        assert_eq!(f.id, 372);
        assert!(Decoder::default().add("sched_switch", f.clone()).is_ok());
        let mut no_common = f.clone();
        no_common.fields.remove("common_pid");
        assert!(Decoder::default().add("sched_switch", no_common).is_err());
        f.fields.remove("next_pid");
        assert!(Decoder::default().add("sched_switch", f).is_err());
    }
}
