//! An ASCII per-CPU timeline: one row per CPU, one column per time bucket, each cell the
//! task that ran longest in the bucket (`.` idle). Small enough for a terminal and exact
//! enough for snapshot tests.

use schedlab_metrics::Trace;
use schedlab_probe::ProbeEvent;
use std::fmt::Write;

const SYMBOLS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// Run intervals `(start, end, task)` per CPU from the switch events.
pub fn intervals(trace: &Trace) -> Vec<Vec<(u64, u64, usize)>> {
    let mut out = vec![Vec::new(); trace.nr_cpus];
    let mut since: Vec<Option<(u64, usize)>> = vec![None; trace.nr_cpus];
    for e in &trace.events {
        if let ProbeEvent::Switch { time, cpu, next, .. } = *e {
            if let Some((s, t)) = since[cpu].take() {
                if time.0 > s {
                    out[cpu].push((s, time.0, t));
                }
            }
            since[cpu] = next.map(|n| (time.0, n));
        }
    }
    for (cpu, s) in since.into_iter().enumerate() {
        if let Some((s, t)) = s {
            if trace.end_ns > s {
                out[cpu].push((s, trace.end_ns, t));
            }
        }
    }
    out
}

/// Renders `[from, to)` in `width` columns.
pub fn timeline(trace: &Trace, from: u64, to: u64, width: usize) -> String {
    let width = width.max(1);
    let to = to.max(from + width as u64);
    let span = to - from;
    let ivs = intervals(trace);
    let mut symbol_of: Vec<Option<u8>> = vec![None; trace.names.len()];
    let mut legend: Vec<(u8, usize)> = Vec::new();
    let mut rows = Vec::new();
    for cpu_ivs in &ivs {
        let mut row = String::with_capacity(width);
        let mut k = 0;
        for col in 0..width {
            let b0 = from + span * col as u64 / width as u64;
            let b1 = from + span * (col as u64 + 1) / width as u64;
            // Time per task in this bucket; intervals are sorted and disjoint per CPU.
            while k < cpu_ivs.len() && cpu_ivs[k].1 <= b0 {
                k += 1;
            }
            let mut best: Option<(u64, usize)> = None;
            let mut busy = 0;
            let mut j = k;
            while j < cpu_ivs.len() && cpu_ivs[j].0 < b1 {
                let (s, e, t) = cpu_ivs[j];
                let d = e.min(b1) - s.max(b0);
                busy += d;
                // Longest runner; ties go to the earlier one.
                if best.is_none_or(|(bd, _)| d > bd) {
                    best = Some((d, t));
                }
                j += 1;
            }
            let c = match best {
                Some((_, t)) if busy * 2 >= b1 - b0 => {
                    let sym = symbol_of[t].unwrap_or_else(|| {
                        let s = SYMBOLS.get(legend.len()).copied().unwrap_or(b'#');
                        legend.push((s, t));
                        symbol_of[t] = Some(s);
                        s
                    });
                    sym as char
                }
                _ => '.',
            };
            row.push(c);
        }
        rows.push(row);
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "timeline {:.3}–{:.3} ms, one column = {:.3} ms",
        from as f64 / 1e6,
        to as f64 / 1e6,
        span as f64 / width as f64 / 1e6
    );
    for (cpu, row) in rows.iter().enumerate() {
        let _ = writeln!(s, "cpu{cpu:<3}|{row}|");
    }
    let mut line = String::new();
    for (sym, t) in legend.iter().filter(|(s, _)| *s != b'#') {
        let item = format!("{}={}  ", *sym as char, crate::escape(&trace.names[*t]));
        if line.len() + item.len() > 100 {
            let _ = writeln!(s, "{}", line.trim_end());
            line.clear();
        }
        line.push_str(&item);
    }
    if legend.iter().any(|(s, _)| *s == b'#') {
        line.push_str("#=other tasks");
    }
    if !line.is_empty() {
        let _ = writeln!(s, "{}", line.trim_end());
    }
    let _ = writeln!(s, ".=idle (a cell shows the task that ran longest in it, if busy half of it)");
    s
}
