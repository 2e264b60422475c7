//! `perf.data` (`perf sched record`, `perf record -e sched:*`) through `linux-perf-data`:
//! samples carry cpu, time and the current tid, and each tracepoint's raw payload, which
//! the crate does not decode. The payload layouts come from the tracefs `format` texts
//! embedded in the `TRACING_DATA` feature section; `sched_switch` falls back to its fixed
//! layout of the v4.x–v6.x kernels when that section is missing.

use crate::event::{prev_state_from_bits, Ev, Kind, Trace, TraceFormat};
use crate::ImportError;
use linux_perf_data::linux_perf_event_reader::{EventRecord, RecordType};
use linux_perf_data::{Feature, PerfFileReader, PerfFileRecord};
use std::collections::BTreeMap;

/// One field of a tracepoint's `format`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Field {
    offset: usize,
    size: usize,
    signed: bool,
    /// `__data_loc`: a u32 whose low half is the offset and high half the length.
    data_loc: bool,
}

type Format = BTreeMap<String, Field>;

/// The formats of every event in the `TRACING_DATA` section: its format texts are plain
/// `name: …\nID: …\nformat:\n\tfield:…;\toffset:…;\tsize:…;\tsigned:…;` blocks.
fn formats(section: &[u8]) -> BTreeMap<String, Format> {
    let text = String::from_utf8_lossy(section);
    let mut out = BTreeMap::new();
    for block in text.split("name: ").skip(1) {
        let name: String = block.chars().take_while(|c| !c.is_whitespace()).collect();
        let mut fmt = Format::new();
        for line in block.lines().skip(1) {
            let line = line.trim();
            if line.starts_with("print fmt") {
                break;
            }
            if let Some((n, f)) = field_line(line) {
                fmt.insert(n, f);
            }
        }
        if !fmt.is_empty() {
            out.entry(name).or_insert(fmt);
        }
    }
    out
}

/// `field:pid_t prev_pid; offset:24; size:4; signed:1;`
fn field_line(line: &str) -> Option<(String, Field)> {
    let decl = line.strip_prefix("field:")?.split(';').next()?;
    let mut name = decl.rsplit(' ').next()?.to_string();
    if let Some(i) = name.find('[') {
        name.truncate(i);
    }
    let num = |key: &str| -> Option<usize> {
        let i = line.find(key)? + key.len();
        line[i..].split(';').next()?.trim().parse().ok()
    };
    let f = Field {
        offset: num("offset:")?,
        size: num("size:")?,
        signed: num("signed:")? == 1,
        data_loc: decl.contains("__data_loc"),
    };
    Some((name, f))
}

/// `sched_switch` of kernels v4.x–v6.x, for a file without `TRACING_DATA`.
fn fixed_switch() -> Format {
    let f = |offset, size, signed| Field { offset, size, signed, data_loc: false };
    [
        ("common_flags", f(2, 1, false)),
        ("prev_comm", f(8, 16, false)),
        ("prev_pid", f(24, 4, true)),
        ("prev_prio", f(28, 4, true)),
        ("prev_state", f(32, 8, true)),
        ("next_comm", f(40, 16, false)),
        ("next_pid", f(56, 4, true)),
        ("next_prio", f(60, 4, true)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// Reads fields of one payload; errors name the field.
struct Payload<'a> {
    raw: &'a [u8],
    fmt: &'a Format,
    little: bool,
}

impl Payload<'_> {
    fn bytes(&self, name: &'static str) -> Result<(&[u8], Field), String> {
        let f = *self.fmt.get(name).ok_or_else(|| format!("the event's format has no field `{name}`"))?;
        // The format text is part of the file: an empty or out-of-range field is refused.
        let b = f
            .offset
            .checked_add(f.size)
            .filter(|_| f.size > 0)
            .and_then(|end| self.raw.get(f.offset..end))
            .ok_or_else(|| format!("payload too short for `{name}` ({} bytes at {})", f.size, f.offset))?;
        Ok((b, f))
    }

    fn int(&self, name: &'static str) -> Result<i64, String> {
        let (b, f) = self.bytes(name)?;
        let mut v: u64 = 0;
        for i in 0..b.len().min(8) {
            let byte = if self.little { b[b.len() - 1 - i] } else { b[i] };
            v = (v << 8) | u64::from(byte);
        }
        let bits = 8 * b.len().min(8) as u32;
        Ok(if f.signed && bits < 64 && ((v >> (bits - 1)) & 1) == 1 { (v | (!0u64 << bits)) as i64 } else { v as i64 })
    }

    fn i32(&self, name: &'static str) -> Result<i32, String> {
        let v = self.int(name)?;
        i32::try_from(v).map_err(|_| format!("`{name}` = {v} is out of range"))
    }

    fn str(&self, name: &'static str) -> Result<String, String> {
        let (b, f) = self.bytes(name)?;
        let s = if f.data_loc {
            let loc = self.int(name)? as u64;
            let (off, len) = ((loc & 0xffff) as usize, ((loc >> 16) & 0xffff) as usize);
            self.raw.get(off..off + len).ok_or_else(|| format!("`{name}` points outside the payload"))?
        } else {
            b
        };
        let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
        Ok(String::from_utf8_lossy(&s[..end]).into_owned())
    }
}

/// The parts of the perf header the reader relies on, checked before the crate parses the
/// file, so that a truncated or corrupt header is an error here rather than in it: every
/// section the crate reads (the attributes, the data, the event types and each feature
/// section named in the index after the data) must lie within the file. The crate allocates
/// a feature section's size before reading it, so an unchecked size from a damaged index
/// would abort the process rather than fail. The header (`tools/perf/util/header.h`:
/// `struct perf_file_header`): magic, size, attr_size, then the `attrs`, `data` and
/// `event_types` sections (offset, size) at bytes 24, 40 and 56, and the feature bitmap
/// at 72..104.
fn check_header(file: &str, b: &[u8]) -> Result<(), ImportError> {
    let u64_at = |o: u64| -> Result<u64, ImportError> {
        let s = usize::try_from(o)
            .ok()
            .and_then(|o| b.get(o..o.checked_add(8)?))
            .ok_or_else(|| ImportError::at(file, format!("byte {o}"), "header", "truncated"))?;
        Ok(u64::from_le_bytes(s.try_into().expect("8 bytes")))
    };
    if !b.starts_with(b"PERFILE2") {
        return Err(ImportError::new(file, "a big-endian perf.data: only little-endian files are read"));
    }
    let len = b.len() as u64;
    let within = |o: u64, s: u64| o.checked_add(s).is_some_and(|e| e <= len);
    let attr_size = u64_at(16)?;
    let (attrs_off, attrs_size) = (u64_at(24)?, u64_at(32)?);
    if attr_size == 0 || attrs_size < attr_size || !within(attrs_off, attrs_size) {
        return Err(ImportError::at(file, "byte 24", "header.attrs", "the event attributes lie outside the file"));
    }
    let (data_off, data_size) = (u64_at(40)?, u64_at(48)?);
    if !within(data_off, data_size) {
        return Err(ImportError::at(
            file,
            "byte 40",
            "header.data",
            format!("the data section ({data_size} bytes at {data_off}) runs past the end of the file ({len} bytes): truncated"),
        ));
    }
    let (types_off, types_size) = (u64_at(56)?, u64_at(64)?);
    if types_size != 0 && !within(types_off, types_size) {
        return Err(ImportError::at(file, "byte 56", "header.event_types", "the event types lie outside the file"));
    }
    let bitmap = b.get(72..104).ok_or_else(|| ImportError::at(file, "byte 72", "header.features", "truncated"))?;
    let features = bitmap.iter().map(|x| x.count_ones()).sum::<u32>();
    // The feature sections' index follows the data section: (offset, size) per feature.
    let index = data_off + data_size;
    if !within(index, 16 * u64::from(features)) {
        return Err(ImportError::at(
            file,
            format!("byte {index}"),
            "features",
            "the feature section index is truncated",
        ));
    }
    // Sections follow in the order of the bits set; EVENT_DESC's holds counts the perf
    // reader allocates by before reading (checked by `check_event_desc`).
    let event_desc = (bitmap[HEADER_EVENT_DESC / 8] >> (HEADER_EVENT_DESC % 8) & 1 == 1).then(|| {
        bitmap[..HEADER_EVENT_DESC / 8].iter().map(|x| x.count_ones()).sum::<u32>()
            + (bitmap[HEADER_EVENT_DESC / 8] & ((1u8 << (HEADER_EVENT_DESC % 8)) - 1)).count_ones()
    });
    for i in 0..u64::from(features) {
        let at = index + 16 * i;
        let (off, size) = (u64_at(at)?, u64_at(at + 8)?);
        if !within(off, size) {
            let m = format!("feature section {i} ({size} bytes at {off}) lies outside the file ({len} bytes)");
            return Err(ImportError::at(file, format!("byte {at}"), "features", m));
        }
        if event_desc == Some(i as u32) {
            // Within the file, so within `usize`.
            check_event_desc(file, &b[off as usize..(off + size) as usize], off)?;
        }
    }
    Ok(())
}

/// `HEADER_EVENT_DESC`, the feature bit of the event descriptions
/// (`tools/perf/util/header.h`).
const HEADER_EVENT_DESC: usize = 12;

/// The EVENT_DESC section (`tools/perf/util/header.c: write_event_desc`): `nr` events of
/// `attr_size` bytes of attributes, a count of ids, a string and the ids. The perf reader
/// reserves `nr` events, `nr_ids` ids and the string's length before reading them, so a
/// damaged count (2^32 − 1) would allocate hundreds of GiB: each is checked against the
/// bytes left in the section first. `at` is the section's offset, for errors.
fn check_event_desc(file: &str, s: &[u8], at: u64) -> Result<(), ImportError> {
    let u32_at = |o: usize| s.get(o..o + 4).map(|b| u64::from(u32::from_le_bytes(b.try_into().expect("4 bytes"))));
    let bad = |o: usize, m: String| ImportError::at(file, format!("byte {}", at + o as u64), "features.event_desc", m);
    let (Some(nr), Some(attr_size)) = (u32_at(0), u32_at(4)) else {
        return Err(bad(0, "truncated".into()));
    };
    let len = s.len() as u64;
    if nr.saturating_mul(attr_size + 8) > len.saturating_sub(8) {
        return Err(bad(0, format!("{nr} events of {attr_size} bytes do not fit in the section's {len} bytes")));
    }
    let mut pos = 8u64;
    for e in 0..nr {
        pos += attr_size;
        let ids = u32_at(pos as usize).ok_or_else(|| bad(pos as usize, format!("event {e} truncated")))?;
        let name = u32_at(pos as usize + 4).ok_or_else(|| bad(pos as usize, format!("event {e} truncated")))?;
        pos += 8 + name + 8 * ids;
        if pos > len {
            return Err(bad(0, format!("event {e}'s name ({name} bytes) and {ids} ids run past the section")));
        }
    }
    Ok(())
}

pub fn read(file: &str, bytes: &[u8], poll: &mut crate::Poll) -> Result<Trace, ImportError> {
    check_header(file, bytes)?;
    // A backstop: the perf crate asserts some invariants of well-formed files. The poll is
    // only a counter and the caller's question: nothing of it is left half-changed.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read_checked(file, bytes, poll)))
        .unwrap_or_else(|_| Err(ImportError::new(file, "a malformed perf.data (the perf reader gave up)")))
}

fn read_checked(file: &str, bytes: &[u8], poll: &mut crate::Poll) -> Result<Trace, ImportError> {
    let perr = |e: linux_perf_data::Error| ImportError::new(file, format!("a malformed perf.data: {e}"));
    let PerfFileReader { mut perf_file, mut record_iter } =
        PerfFileReader::parse_file(std::io::Cursor::new(bytes)).map_err(perr)?;
    let mut fmts = perf_file.feature_section_data(Feature::TRACING_DATA).map(formats).unwrap_or_default();
    fmts.entry("sched_switch".into()).or_insert_with(fixed_switch);
    let names: Vec<String> = perf_file
        .event_attributes()
        .iter()
        .map(|a| a.name().unwrap_or("").trim_start_matches("sched:").to_string())
        .collect();
    let little = matches!(perf_file.endian(), linux_perf_data::Endianness::LittleEndian);
    let mut t = Trace::new(TraceFormat::Perf);
    let mut n = 0u64;
    while let Some(rec) = record_iter.next_record(&mut perf_file).map_err(perr)? {
        n += 1;
        if poll.stop() {
            return Err(ImportError::interrupted(file, format!("record {n}")));
        }
        let PerfFileRecord::EventRecord { attr_index, record } = rec else { continue };
        // Only samples carry tracepoints; other records (mmaps…) are not parsed at all.
        if record.record_type != RecordType::SAMPLE {
            continue;
        }
        let Ok(EventRecord::Sample(s)) = record.parse() else { continue };
        let name = names.get(attr_index).map_or("", String::as_str);
        let (Some(raw), Some(fmt)) = (s.raw, fmts.get(name)) else {
            t.skip(if name.is_empty() { "unnamed event" } else { name });
            continue;
        };
        let raw = raw.as_slice();
        let p = Payload { raw: &raw, fmt, little };
        let at = |field: &str, m: String| ImportError::at(file, format!("record {n}"), &format!("{name}.{field}"), m);
        let kind = match decode(&mut t, name, &p) {
            Ok(Some(k)) => k,
            Ok(None) => {
                t.skip(name);
                continue;
            }
            Err(m) => return Err(at("payload", m)),
        };
        let time = s.timestamp.ok_or_else(|| at("time", "a sample without PERF_SAMPLE_TIME".into()))?;
        let cpu = s.cpu.ok_or_else(|| at("cpu", "a sample without PERF_SAMPLE_CPU".into()))?;
        let irq = p.int("common_flags").is_ok_and(|f| f & 0x18 != 0);
        t.push(file, &format!("record {n}"), Ev { time, cpu, current: s.tid.unwrap_or(0), irq, kind })?;
    }
    Ok(t)
}

/// One tracepoint's payload as a [`Kind`]; `None`: an event the importer does not use.
fn decode(t: &mut Trace, name: &str, p: &Payload) -> Result<Option<Kind>, String> {
    let mut named = |comm: &'static str, pid: &'static str| -> Result<i32, String> {
        let id = p.i32(pid)?;
        t.name(id, &p.str(comm)?);
        Ok(id)
    };
    Ok(Some(match name {
        "sched_switch" => Kind::Switch {
            prev: named("prev_comm", "prev_pid")?,
            prev_prio: p.i32("prev_prio")?,
            prev_state: prev_state_from_bits(p.int("prev_state")?),
            next: named("next_comm", "next_pid")?,
            next_prio: p.i32("next_prio")?,
        },
        "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => Kind::Wake {
            pid: named("comm", "pid")?,
            prio: p.i32("prio")?,
            target_cpu: p.i32("target_cpu")?.max(0) as u32,
            waking: name == "sched_waking",
            new: name == "sched_wakeup_new",
        },
        "sched_migrate_task" => Kind::Migrate {
            pid: named("comm", "pid")?,
            from: p.i32("orig_cpu")?.max(0) as u32,
            to: p.i32("dest_cpu")?.max(0) as u32,
        },
        "sched_process_fork" => {
            Kind::Fork { parent: named("parent_comm", "parent_pid")?, child: named("child_comm", "child_pid")? }
        }
        "sched_process_exit" => Kind::Exit { pid: named("comm", "pid")? },
        _ => return Ok(None),
    }))
}
