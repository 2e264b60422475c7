//! Time series sampled while a run goes: per-CPU runnable counts, per-task cumulative run
//! time, and per-task policy internals (CFS vruntime/lag/slice, ULE score/priority) read
//! through `SchedClass::task_stats`.

use serde::Serialize;

/// Samples at `times_ns`; a task's vectors start at its `first` sample and stop when it
/// dies, so `runtime_ns[t][i]` is the value at `times_ns[first[t] + i]`.
#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema, PartialEq)]
pub struct Series {
    pub interval_ns: u64,
    pub times_ns: Vec<u64>,
    /// `[cpu][sample]`: tasks on the runqueue including the running one (`nr_running`).
    pub cpu_runnable: Vec<Vec<u32>>,
    /// `[cpu][sample]`: 1 if a task was running at the sample.
    pub cpu_busy: Vec<Vec<u8>>,
    /// `[sample]`: runqueue-lock acquisitions so far, and how many were contended.
    pub rq_lock_acquisitions: Vec<u64>,
    pub rq_lock_contended: Vec<u64>,
    /// `[task]`: index of the task's first sample.
    pub first: Vec<usize>,
    /// `[task][sample]`: cumulative run time.
    pub runtime_ns: Vec<Vec<u64>>,
    /// Names of the policy statistics, in the order of `stats[task][k]`.
    pub stat_names: Vec<String>,
    /// `[k]`: the unit of statistic `k` (`sched_api::Unit::label`: `ns`, `stat ticks`, `""`
    /// for a plain number) and its caption, as the policy declares them.
    pub stat_units: Vec<String>,
    pub stat_captions: Vec<String>,
    /// `[task][stat][sample]`.
    pub stats: Vec<Vec<Vec<i64>>>,
}

impl Series {
    /// The sample index at or before `t_ns`.
    pub fn index_at(&self, t_ns: u64) -> Option<usize> {
        match self.times_ns.binary_search(&t_ns) {
            Ok(i) => Some(i),
            Err(0) => None,
            Err(i) => Some(i - 1),
        }
    }

    /// Task `t`'s cumulative run time at sample `i` (0 before it existed, its last value
    /// after it died).
    pub fn runtime_at(&self, t: usize, i: usize) -> u64 {
        // A task that lived and died between two samples was never sampled.
        let Some(&first) = self.first.get(t) else { return 0 };
        if i < first {
            return 0;
        }
        let v = &self.runtime_ns[t];
        v.get(i - first).or(v.last()).copied().unwrap_or(0)
    }

    /// Task `t`'s value of statistic `name` per sample, as `(time, value)`.
    pub fn stat(&self, t: usize, name: &str) -> Vec<(u64, i64)> {
        let Some(k) = self.stat_names.iter().position(|n| n == name) else { return Vec::new() };
        let (Some(&first), Some(stats)) = (self.first.get(t), self.stats.get(t)) else { return Vec::new() };
        stats.get(k).map_or(Vec::new(), |v| v.iter().enumerate().map(|(i, &x)| (self.times_ns[first + i], x)).collect())
    }
}
