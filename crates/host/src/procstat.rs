//! Per-thread scheduler statistics from procfs: `/proc/<pid>/task/<tid>/schedstat`
//! (`sum_exec_runtime`, `run_delay`; needs `CONFIG_SCHED_INFO`), `status` (voluntary and
//! involuntary context switches) and `sched` (`se.nr_migrations`).

use procfs::process::Task;
use serde::Serialize;

/// What procfs says about one thread at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ProcStats {
    /// On-CPU time (`se.sum_exec_runtime`).
    pub runtime_ns: u64,
    /// Time runnable but waiting for a CPU (`sched_info.run_delay`).
    pub run_delay_ns: u64,
    pub voluntary: u64,
    pub involuntary: u64,
    /// `se.nr_migrations`, when `/proc/.../sched` is readable.
    pub migrations: Option<u64>,
}

/// `se.nr_migrations` from a `sched` file.
fn nr_migrations(text: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == "se.nr_migrations").then(|| v.trim().parse().ok()).flatten()
    })
}

/// A reading of procfs and when it was made: `CLOCK_MONOTONIC` just before and just after
/// the `schedstat` read (`sum_exec_runtime` is the run time up to some instant in between:
/// `task_sched_runtime` brings a running task's up to date, `kernel/sched/core.c`, v6.18).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timed {
    pub stats: ProcStats,
    pub before_ns: u64,
    pub after_ns: u64,
}

impl Timed {
    /// The middle of the read, and how far the instant read can be from it.
    pub fn at(&self) -> (u64, u64) {
        let half = self.after_ns.saturating_sub(self.before_ns) / 2;
        (self.before_ns + half, half)
    }
}

/// Reads thread `tid` of process `pid`. `Err` names what could not be read.
pub fn read(pid: i32, tid: i32) -> Result<ProcStats, String> {
    read_timed(pid, tid).map(|t| t.stats)
}

/// [`read`], with when the run time was read.
pub fn read_timed(pid: i32, tid: i32) -> Result<Timed, String> {
    let task: Task = procfs::process::Process::new(pid)
        .and_then(|p| p.task_from_tid(tid))
        .map_err(|e| format!("/proc/{pid}/task/{tid}: {e}"))?;
    let before_ns = crate::sys::monotonic_ns();
    let ss = task.schedstat().map_err(|e| format!("/proc/{pid}/task/{tid}/schedstat: {e}"))?;
    let after_ns = crate::sys::monotonic_ns();
    let st = task.status().map_err(|e| format!("/proc/{pid}/task/{tid}/status: {e}"))?;
    let sched = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/sched")).ok();
    let stats = ProcStats {
        runtime_ns: ss.sum_exec_runtime,
        run_delay_ns: ss.run_delay,
        voluntary: st.voluntary_ctxt_switches.unwrap_or(0),
        involuntary: st.nonvoluntary_ctxt_switches.unwrap_or(0),
        migrations: sched.as_deref().and_then(nr_migrations),
    };
    Ok(Timed { stats, before_ns, after_ns })
}

/// The calling thread's own statistics (a task reads them just before it exits).
pub fn read_self() -> Result<Timed, String> {
    read_timed(std::process::id() as i32, crate::sys::gettid())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_line_is_found() {
        let text = "x (1, #threads: 1)\n---\nse.exec_start   :  1.0\nse.nr_migrations      :    17\nnr_switches : 3\n";
        assert_eq!(nr_migrations(text), Some(17));
        assert_eq!(nr_migrations("nr_switches : 3\n"), None);
    }

    /// A thread that burnt CPU sees at least that much run time in its own schedstat.
    #[test]
    fn own_runtime_counts_cpu_work() {
        let before = read_self().unwrap().stats;
        let start = crate::sys::thread_cpu_ns();
        while crate::sys::thread_cpu_ns() - start < 20_000_000 {}
        let t = read_self().unwrap();
        let after = t.stats;
        assert!(t.before_ns <= t.after_ns && t.at().0 >= t.before_ns && t.at().0 <= t.after_ns);
        assert!(after.runtime_ns - before.runtime_ns >= 20_000_000, "{before:?} → {after:?}");
    }
}
