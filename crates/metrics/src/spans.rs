//! Named spans (`mark_begin` … `mark_end` in a workload): per name, how many closed, their
//! rate and their latency percentiles — a web server's requests per second and request
//! latency.

use crate::hist::LatencyHist;
use crate::record::Latency;
use schedlab_sim::Ns;
use serde::Serialize;

/// One span name's measurements so far.
#[derive(Default)]
pub(crate) struct SpanAcc {
    count: u64,
    sum_ns: u128,
    min_ns: u64,
    lat: LatencyHist,
}

impl SpanAcc {
    pub fn record(&mut self, ns: u64) {
        self.min_ns = if self.count == 0 { ns } else { self.min_ns.min(ns) };
        self.count += 1;
        self.sum_ns += u128::from(ns);
        // The histogram keeps values ≥ 1 (a span may be 0 ns when nothing ran between marks).
        self.lat.record(ns.max(1));
    }
}

/// A span name's record (`spans[]` in the JSON).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema, PartialEq)]
pub struct SpanRecord {
    pub name: String,
    /// Spans closed during the run.
    pub count: u64,
    /// `count` per second of run time.
    pub per_sec: f64,
    pub mean_ns: u64,
    pub min_ns: u64,
    /// Percentiles from the log-bucket histogram (within 1/32; `max` exact).
    pub latency_ns: Latency,
}

/// The records of `names` (every span the workload names, closed or not) over a run of
/// length `end`.
pub(crate) fn records(accs: &[SpanAcc], names: &[String], end: Ns) -> Vec<SpanRecord> {
    let empty = SpanAcc::default();
    names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let a = accs.get(i).unwrap_or(&empty);
            let q = |n| if a.count == 0 { 0 } else { a.lat.quantile(n, 100) };
            SpanRecord {
                name: name.clone(),
                count: a.count,
                per_sec: if end.0 == 0 { 0.0 } else { a.count as f64 * 1e9 / end.0 as f64 },
                mean_ns: if a.count == 0 { 0 } else { (a.sum_ns / u128::from(a.count)) as u64 },
                min_ns: a.min_ns,
                latency_ns: Latency { p50: q(50), p90: q(90), p99: q(99), max: a.lat.max() },
            }
        })
        .collect()
}
