//! ftrace text: the tracefs `trace` file, `trace-cmd report` (raw `-R` key=value fields or
//! its sched plugin's `comm:pid [prio]` form) and `perf script`. One event per line:
//! `TASK-PID [CPU] FLAGS TIMESTAMP: EVENT: FIELDS`, the flags column optional.

use crate::event::{prev_state_from_letters, Ev, Kind, Trace, TraceFormat};
use crate::ImportError;

/// Whether some of the first lines look like ftrace text.
pub fn looks_like(text: &str) -> bool {
    text.lines().take(64).any(|l| l.starts_with("# tracer:") || l.starts_with("cpus=") || split_line(l).is_some())
}

/// The parts of one event line.
struct Line<'a> {
    comm: &'a str,
    pid: i32,
    cpu: u32,
    irq: bool,
    time: u64,
    event: &'a str,
    body: &'a str,
    /// Byte offset of `body` in the line (for error columns).
    body_at: usize,
    /// Byte offset of the CPU number.
    cpu_at: usize,
}

/// Where `[CPU]` is: the first bracketed decimal number.
fn cpu_field(l: &str) -> Option<(usize, usize, u32)> {
    let mut from = 0;
    while let Some(i) = l[from..].find('[') {
        let open = from + i;
        let close = open + l[open..].find(']')?;
        let inner = &l[open + 1..close];
        if !inner.is_empty() && inner.len() <= 5 && inner.bytes().all(|b| b.is_ascii_digit()) {
            return Some((open, close, inner.parse().ok()?));
        }
        from = open + 1;
    }
    None
}

/// `12345.678901` (seconds, up to 9 decimals) in ns.
fn parse_time(s: &str) -> Option<u64> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if int.is_empty() || frac.len() > 9 || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let int: u64 = int.parse().ok()?;
    let scale = 10u64.pow(9 - frac.len() as u32);
    let frac: u64 = if frac.is_empty() { 0 } else { frac.parse().ok()? };
    int.checked_mul(1_000_000_000)?.checked_add(frac * scale)
}

fn split_line(l: &str) -> Option<Line<'_>> {
    if l.starts_with('#') {
        return None;
    }
    let (open, close, cpu) = cpu_field(l)?;
    let head = l[..open].trim();
    // `comm-pid` (tracefs, trace-cmd) or `comm pid` (perf script).
    let (comm, pid) = match head.rsplit_once(char::is_whitespace) {
        Some((c, p)) if p.bytes().all(|b| b.is_ascii_digit()) && !p.is_empty() => (c.trim(), p),
        _ => head.rsplit_once('-')?,
    };
    let pid: i32 = pid.trim().parse().ok()?;
    let mut rest = l[close + 1..].trim_start();
    let mut irq = false;
    let first = rest.split_whitespace().next()?;
    if !first.ends_with(':') {
        // The irq-info flags: `d.h2.`; the third is the hard/soft interrupt context.
        irq = matches!(first.as_bytes().get(2), Some(b'h' | b's' | b'H'));
        rest = rest[first.len()..].trim_start();
    }
    let (ts, after) = rest.split_once(':')?;
    let time = parse_time(ts.trim())?;
    let after = after.trim_start();
    // `sched_switch:` or perf script's `sched:sched_switch:`: the colon before a blank.
    let colon = after
        .char_indices()
        .find(|&(i, c)| c == ':' && after[i + 1..].chars().next().is_none_or(char::is_whitespace))?
        .0;
    let (event, body) = (&after[..colon], &after[colon + 1..]);
    let event = event.trim();
    let event = event.strip_prefix("sched:").unwrap_or(event);
    if event.is_empty() || event.contains(char::is_whitespace) {
        return None;
    }
    let body_at = l.len() - body.len();
    Some(Line { comm, pid, cpu, irq, time, event, body: body.trim(), body_at, cpu_at: open + 1 })
}

/// A line that is no event but belongs in a trace: blank, a `#` comment (tracefs's header,
/// `##### CPU 2 buffer started ####`), `trace-cmd report`'s `cpus=4`, `version = 6` and
/// `CPU 0 is empty`, tracefs's `CPU:3 [LOST 120 EVENTS]`, or a `perf script -g` call-chain
/// line (indented, a hexadecimal address first).
fn expected_non_event(l: &str) -> bool {
    let t = l.trim();
    let hex_first = || t.split_whitespace().next().is_some_and(|w| w.bytes().all(|b| b.is_ascii_hexdigit()));
    t.is_empty()
        || t.starts_with('#')
        || t.starts_with("cpus=")
        || t.starts_with("version =")
        || (t.starts_with("CPU") && (t.ends_with(" is empty") || t.contains("[LOST ")))
        || (l.starts_with(char::is_whitespace) && hex_first())
}

pub fn read(file: &str, bytes: &[u8], poll: &mut crate::Poll) -> Result<Trace, ImportError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        ImportError::at(file, format!("byte {}", e.valid_up_to()), "", "not UTF-8 text (a truncated or binary file?)")
    })?;
    let mut t = Trace::new(TraceFormat::Ftrace);
    // Lines of none of the shapes read (garbage, or a format not supported): how many, and
    // the first one's number, for one warning.
    let (mut unread, mut first_unread) = (0u64, 0usize);
    for (i, l) in text.lines().enumerate() {
        if poll.stop() {
            return Err(ImportError::interrupted(file, format!("{}", i + 1)));
        }
        let Some(line) = split_line(l) else {
            if !expected_non_event(l) {
                unread += 1;
                first_unread = if unread == 1 { i + 1 } else { first_unread };
            }
            continue;
        };
        let at = |col: usize| format!("{}:{}", i + 1, col + 1);
        let kind = match event(&line) {
            Ok(Some(k)) => k,
            Ok(None) => {
                t.skip(line.event);
                continue;
            }
            Err((field, off, msg)) => return Err(ImportError::at(file, at(line.body_at + off), field, msg)),
        };
        names(&mut t, &line);
        t.name(line.pid, line.comm);
        let ev = Ev { time: line.time, cpu: line.cpu, current: line.pid, irq: line.irq, kind };
        // A CPU beyond the limit: the line (at its `[CPU]`), the field named by the error.
        t.push(file, &at(line.cpu_at), ev)?;
    }
    if unread > 0 {
        let lines = if unread == 1 { "1 line".to_string() } else { format!("{unread} lines") };
        t.warnings.push(format!(
            "{file}: {lines} matching no event line shape (tracefs, trace-cmd report, perf script) skipped, \
             the first at line {first_unread}"
        ));
    }
    Ok(t)
}

/// Names seen in the fields (the `comm` of the woken, the switched-to…).
fn names(t: &mut Trace, line: &Line) {
    let kv = |k: &str| field(line.body, k).map(|(v, _)| v);
    for (c, p) in [("prev_comm", "prev_pid"), ("next_comm", "next_pid"), ("comm", "pid"), ("child_comm", "child_pid")] {
        if let (Some(c), Some(Ok(p))) = (kv(c), kv(p).map(str::parse::<i32>)) {
            t.name(p, c);
        }
    }
}

type FieldErr = (&'static str, usize, String);

/// The value of `key=` in `body` and its offset: up to the next ` word=` or ` ==>`, so
/// comms with spaces survive.
fn field<'a>(body: &'a str, key: &str) -> Option<(&'a str, usize)> {
    let pat = format!("{key}=");
    let mut from = 0;
    let start = loop {
        let i = from + body[from..].find(&pat)?;
        if i == 0 || body.as_bytes()[i - 1] == b' ' {
            break i + pat.len();
        }
        from = i + 1;
    };
    let rest = &body[start..];
    let mut end = rest.len();
    for (j, _) in rest.match_indices(' ') {
        let next = &rest[j + 1..];
        let word_eq = next.split_whitespace().next().is_some_and(|w| {
            w.split_once('=')
                .is_some_and(|(k, _)| !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        });
        if next.starts_with("==>") || word_eq {
            end = j;
            break;
        }
    }
    Some((rest[..end].trim(), start))
}

fn num<T: std::str::FromStr>(body: &str, key: &'static str) -> Result<T, FieldErr> {
    let (v, at) = field(body, key).ok_or((key, 0, format!("missing `{key}=`")))?;
    v.parse().map_err(|_| (key, at, format!("`{v}` is not a number")))
}

/// The event's kind, `None` for events the importer does not use.
fn event(l: &Line) -> Result<Option<Kind>, FieldErr> {
    let b = l.body;
    if !b.replace("==>", "").contains('=') {
        return plugin_form(l);
    }
    Ok(Some(match l.event {
        "sched_switch" => {
            let (st, at) = field(b, "prev_state").ok_or(("prev_state", 0, "missing `prev_state=`".into()))?;
            let prev_state =
                prev_state_from_letters(st).ok_or(("prev_state", at, format!("`{st}` is not a task state")))?;
            Kind::Switch {
                prev: num(b, "prev_pid")?,
                prev_prio: num(b, "prev_prio")?,
                prev_state,
                next: num(b, "next_pid")?,
                next_prio: num(b, "next_prio")?,
            }
        }
        "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => Kind::Wake {
            pid: num(b, "pid")?,
            prio: num(b, "prio")?,
            target_cpu: num(b, "target_cpu")?,
            waking: l.event == "sched_waking",
            new: l.event == "sched_wakeup_new",
        },
        "sched_migrate_task" => {
            Kind::Migrate { pid: num(b, "pid")?, from: num(b, "orig_cpu")?, to: num(b, "dest_cpu")? }
        }
        "sched_process_fork" => Kind::Fork { parent: num(b, "pid")?, child: num(b, "child_pid")? },
        "sched_process_exit" => Kind::Exit { pid: num(b, "pid")? },
        _ => return Ok(None),
    }))
}

/// trace-cmd's sched plugin: `prev:PID [PRIO] STATE ==> next:PID [PRIO]` and
/// `comm:PID [PRIO] CPU:NNN` (`success=1` omitted).
fn plugin_form(l: &Line) -> Result<Option<Kind>, FieldErr> {
    let task = |s: &str| -> Option<(i32, i32)> {
        let s = s.trim();
        let (head, prio) = s.rsplit_once('[')?;
        let prio = prio.split(']').next()?.trim().parse().ok()?;
        let pid = head.trim().rsplit_once(':')?.1.trim().parse().ok()?;
        Some((pid, prio))
    };
    let bad = |what: &str| ("fields", 0, format!("cannot read `{}` as {what}", l.body));
    Ok(Some(match l.event {
        "sched_switch" => {
            let (prev, next) = l.body.split_once("==>").ok_or_else(|| bad("`prev ==> next`"))?;
            let prev = prev.trim();
            let (prev_task, state) = prev.rsplit_once(']').ok_or_else(|| bad("`comm:pid [prio] state`"))?;
            let (p, pp) = task(&format!("{prev_task}]")).ok_or_else(|| bad("`comm:pid [prio]`"))?;
            let (n, np) = task(next).ok_or_else(|| bad("`comm:pid [prio]`"))?;
            let prev_state = prev_state_from_letters(state.trim()).ok_or_else(|| bad("a task state"))?;
            Kind::Switch { prev: p, prev_prio: pp, prev_state, next: n, next_prio: np }
        }
        "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => {
            let (who, cpu) = l.body.rsplit_once("CPU:").ok_or_else(|| bad("`comm:pid [prio] CPU:n`"))?;
            let (pid, prio) = task(who).ok_or_else(|| bad("`comm:pid [prio]`"))?;
            let target_cpu = cpu.trim().parse().map_err(|_| bad("a CPU number"))?;
            Kind::Wake { pid, prio, target_cpu, waking: l.event == "sched_waking", new: l.event == "sched_wakeup_new" }
        }
        _ => return Ok(None),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_three_line_shapes() {
        let tracefs = "          <idle>-0       [001] dNh2. 12345.000001: sched_waking: comm=Web Content pid=42 prio=120 target_cpu=001";
        let l = split_line(tracefs).unwrap();
        assert_eq!((l.comm, l.pid, l.cpu, l.irq, l.time), ("<idle>", 0, 1, true, 12_345_000_001_000));
        assert_eq!(field(l.body, "comm").unwrap().0, "Web Content");
        let perf = "     migration/0    18 [000] 20339.149616:       sched:sched_waking: comm=perf pid=31690 prio=120 target_cpu=000";
        let l = split_line(perf).unwrap();
        assert_eq!((l.comm, l.pid, l.event, l.irq), ("migration/0", 18, "sched_waking", false));
        let tc = "  bash-1234  [000]  100.5: sched_switch: bash:1234 [120] S ==> swapper/0:0 [120]";
        let l = split_line(tc).unwrap();
        let k = event(&l).unwrap().unwrap();
        assert_eq!(
            k,
            Kind::Switch {
                prev: 1234,
                prev_prio: 120,
                prev_state: crate::event::PrevState::Blocked,
                next: 0,
                next_prio: 120
            }
        );
    }

    #[test]
    fn a_bad_field_is_located() {
        let text = "# tracer: nop\n  a-1 [000] 1.000000: sched_switch: prev_comm=a prev_pid=x prev_prio=120 prev_state=S ==> next_comm=b next_pid=2 next_prio=120\n";
        let e = read("t.txt", text.as_bytes(), &mut crate::Poll::new(&|| true)).unwrap_err();
        assert_eq!(e.field, "prev_pid");
        assert!(e.at.starts_with("2:"), "{e}");
        assert!(e.to_string().contains("`x` is not a number"), "{e}");
    }
}
