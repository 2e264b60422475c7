//! Reading runqueue-lock statistics and hackbench's completion off a run record, shared by
//! the lock-contention studies.

use schedlab_metrics::LockRecord;
use schedlab_run::RunRecord;

/// A runqueue-lock statistic summed over every runqueue at call site `site` (exact name as
/// the record gives it, e.g. `try_to_wake_up`).
pub(crate) fn rq_site(r: &RunRecord, site: &str, f: fn(&LockRecord) -> u64) -> u64 {
    r.locks.iter().filter(|l| l.lock.starts_with("rq[") && l.site == site).map(f).sum()
}

pub(crate) fn acquisitions(r: &RunRecord, site: &str) -> u64 {
    rq_site(r, site, |l| l.acquisitions)
}

pub(crate) fn contended(r: &RunRecord, site: &str) -> u64 {
    rq_site(r, site, |l| l.contended)
}

/// Spin time at `site` in microseconds, one decimal.
pub(crate) fn spin_us(r: &RunRecord, site: &str) -> String {
    format!("{:.1}", rq_site(r, site, |l| l.spin_ns) as f64 / 1e3)
}

/// hackbench's "Time": the main task's turnaround (it waits for every child), in ms; `-` if
/// it did not exit within the run's time limit.
pub(crate) fn completion_ns(r: &RunRecord) -> Option<u64> {
    r.tasks.iter().find(|t| t.name == "main").and_then(|t| t.exit_ns)
}

pub(crate) fn completion_ms(r: &RunRecord) -> String {
    completion_ns(r).map_or("-".into(), |e| format!("{:.2}", e as f64 / 1e6))
}

/// A kernel-model counter (`delayed_wakeups`, `fork_to_first_run_ns_mean`, …); 0 if absent.
pub(crate) fn counter(r: &RunRecord, name: &str) -> u64 {
    r.kernel.counters.iter().find(|(n, _)| n == name).map_or(0, |(_, v)| *v)
}
