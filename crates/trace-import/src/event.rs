//! The normalized trace every reader produces: the `sched:*` events schedlab uses, with
//! the task that was current on the event's CPU (the waker of a wakeup).

use crate::ImportError;
pub use schedlab_probe::PrevState;
use std::collections::BTreeMap;

/// The file format a trace was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    /// `perf.data` (`perf sched record`, `perf record -e sched:*`).
    Perf,
    /// ftrace text: `/sys/kernel/tracing/trace`, `trace-cmd report`, `perf script`.
    Ftrace,
    /// Perfetto protobuf (ftrace events; schedlab's `--trace` writes these).
    Perfetto,
}

impl TraceFormat {
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Perf => "perf.data",
            TraceFormat::Ftrace => "ftrace text",
            TraceFormat::Perfetto => "Perfetto",
        }
    }
}

/// One event; `cpu` is where it was recorded, `current` the thread running there (0: idle).
#[derive(Clone, Debug, PartialEq)]
pub struct Ev {
    pub time: u64,
    pub cpu: u32,
    pub current: i32,
    /// Recorded in hard- or soft-interrupt context (`common_flags`; `false` where the
    /// format does not say): `current` then did not cause the event.
    pub irq: bool,
    pub kind: Kind,
}

/// The scheduling tracepoints, with the fields the importer uses. `prio` is the kernel's
/// (0..99 real-time, 100..139 = 120 + nice).
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    Switch {
        prev: i32,
        prev_prio: i32,
        prev_state: PrevState,
        next: i32,
        next_prio: i32,
    },
    /// `sched_waking` (`new: false`), or `sched_wakeup` / `sched_wakeup_new`.
    Wake {
        pid: i32,
        prio: i32,
        target_cpu: u32,
        waking: bool,
        new: bool,
    },
    Migrate {
        pid: i32,
        from: u32,
        to: u32,
    },
    Fork {
        parent: i32,
        child: i32,
    },
    Exit {
        pid: i32,
    },
}

/// `prev_state` as the kernel reports it (`__trace_sched_switch_state`,
/// `include/trace/events/sched.h`, v6.x): 0 runnable, bit 0x100 (`TASK_REPORT_MAX`) a
/// preempted task ("R+"), `EXIT_DEAD` 0x10 / `EXIT_ZOMBIE` 0x20 an exit, any other bit a
/// sleep (S, D, T, t, P, I).
pub fn prev_state_from_bits(state: i64) -> PrevState {
    let s = state & 0xff;
    if s == 0 {
        PrevState::Runnable
    } else if s & 0x30 != 0 {
        PrevState::Dead
    } else {
        PrevState::Blocked
    }
}

/// `prev_state` as ftrace prints it: `R`, `R+`, `S`, `D`, `X`, `Z`, `I`, `S|D`…
pub fn prev_state_from_letters(s: &str) -> Option<PrevState> {
    let s = s.trim_end_matches('+');
    if s.is_empty() {
        return None;
    }
    if s == "R" {
        return Some(PrevState::Runnable);
    }
    let mut dead = false;
    for part in s.split('|') {
        match part {
            "X" | "Z" => dead = true,
            "S" | "D" | "T" | "t" | "P" | "I" | "K" | "W" | "N" => {}
            _ => return None,
        }
    }
    Some(if dead { PrevState::Dead } else { PrevState::Blocked })
}

/// A normalized trace: events in time order, thread names, CPUs.
#[derive(Clone, Debug)]
pub struct Trace {
    pub format: TraceFormat,
    pub events: Vec<Ev>,
    /// The last name each thread id was seen with (`comm`).
    pub names: BTreeMap<i32, String>,
    pub nr_cpus: u32,
    /// What the reader could not use (unknown event types and how many).
    pub skipped: BTreeMap<String, u64>,
    /// What the reader warns about (each a sentence naming the file), for the user.
    pub warnings: Vec<String>,
}

impl Trace {
    pub fn new(format: TraceFormat) -> Trace {
        Trace {
            format,
            events: Vec::new(),
            names: BTreeMap::new(),
            nr_cpus: 0,
            skipped: BTreeMap::new(),
            warnings: Vec::new(),
        }
    }

    pub fn name(&mut self, pid: i32, comm: &str) {
        if pid != 0 && !comm.is_empty() {
            self.names.insert(pid, comm.to_string());
        }
    }

    pub fn skip(&mut self, what: &str) {
        *self.skipped.entry(what.to_string()).or_default() += 1;
    }

    /// Adds an event; `at` is where it was read (`12:5`, `record 7`, `packet 3`). Its CPU
    /// numbers are checked against [`crate::MAX_CPUS`] here, once for every format, so that
    /// every per-CPU table built from the trace is bounded.
    pub fn push(&mut self, file: &str, at: &str, ev: Ev) -> Result<(), ImportError> {
        if self.events.len() >= crate::MAX_EVENTS {
            return Err(ImportError::new(file, format!("more than {} events (limit)", crate::MAX_EVENTS)));
        }
        let mut cpus = vec![("cpu", ev.cpu)];
        match ev.kind {
            Kind::Migrate { from, to, .. } => cpus.extend([("orig_cpu", from), ("dest_cpu", to)]),
            Kind::Wake { target_cpu, .. } => cpus.push(("target_cpu", target_cpu)),
            _ => {}
        }
        for (field, cpu) in cpus {
            if cpu as usize >= crate::MAX_CPUS {
                let m = format!("CPU {cpu} is beyond the limit of {} CPUs", crate::MAX_CPUS);
                return Err(ImportError::at(file, at, field, m));
            }
            // A wakeup's target is where the kernel chose to queue it; a CPU only seen as
            // a target still belongs to the machine.
            self.nr_cpus = self.nr_cpus.max(cpu + 1);
        }
        self.events.push(ev);
        Ok(())
    }

    /// Time order (stable: per-CPU order is kept for equal timestamps), and a trace
    /// without a single context switch refused: nothing could be inferred from it.
    pub(crate) fn finish(&mut self, file: &str) -> Result<(), ImportError> {
        self.events.sort_by_key(|e| e.time);
        if !self.events.iter().any(|e| matches!(e.kind, Kind::Switch { .. })) {
            return Err(ImportError::new(
                file,
                "the trace has no sched_switch events (record sched:sched_switch, e.g. with `perf sched record`)",
            ));
        }
        Ok(())
    }

    /// The first and last event times.
    pub fn span(&self) -> (u64, u64) {
        (self.events.first().map_or(0, |e| e.time), self.events.last().map_or(0, |e| e.time))
    }

    pub fn comm(&self, pid: i32) -> &str {
        self.names.get(&pid).map_or("?", String::as_str)
    }
}
