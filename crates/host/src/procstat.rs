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

/// Reads thread `tid` of process `pid`. `Err` names what could not be read.
pub fn read(pid: i32, tid: i32) -> Result<ProcStats, String> {
    let task: Task = procfs::process::Process::new(pid)
        .and_then(|p| p.task_from_tid(tid))
        .map_err(|e| format!("/proc/{pid}/task/{tid}: {e}"))?;
    let ss = task.schedstat().map_err(|e| format!("/proc/{pid}/task/{tid}/schedstat: {e}"))?;
    let st = task.status().map_err(|e| format!("/proc/{pid}/task/{tid}/status: {e}"))?;
    let sched = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/sched")).ok();
    Ok(ProcStats {
        runtime_ns: ss.sum_exec_runtime,
        run_delay_ns: ss.run_delay,
        voluntary: st.voluntary_ctxt_switches.unwrap_or(0),
        involuntary: st.nonvoluntary_ctxt_switches.unwrap_or(0),
        migrations: sched.as_deref().and_then(nr_migrations),
    })
}

/// The calling thread's own statistics (a task reads them just before it exits).
pub fn read_self() -> Result<ProcStats, String> {
    read(std::process::id() as i32, crate::sys::gettid())
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
        let before = read_self().unwrap();
        let start = crate::sys::thread_cpu_ns();
        while crate::sys::thread_cpu_ns() - start < 20_000_000 {}
        let after = read_self().unwrap();
        assert!(after.runtime_ns - before.runtime_ns >= 20_000_000, "{before:?} → {after:?}");
    }
}
