//! The autogroup of schedlab's own session (`CONFIG_SCHED_AUTOGROUP`,
//! `kernel/sched/autogroup.c`: `proc_sched_autogroup_set_nice`). With autogroup on, every
//! session is a task group and the CPU is shared between busy sessions first: on a host
//! busy with other sessions' work, a run's threads get only their session's share. Raising
//! the session's autogroup nice makes the run's group outweigh the others (nice −20: weight
//! 88761 against 1024) without changing anything between the run's own tasks.

/// The nice a run raises its session's autogroup to: the highest weight
/// (`sched_prio_to_weight[0]` = 88761, `kernel/sched/core.c`, v6.18).
pub const BOOST_NICE: i32 = -20;

/// The autogroup nice of the calling process's session (`/proc/self/autogroup`:
/// `/autogroup-N nice V`), or `None` without autogroup.
pub fn nice() -> Option<i32> {
    let s = std::fs::read_to_string("/proc/self/autogroup").ok()?;
    s.split_whitespace().skip_while(|w| *w != "nice").nth(1)?.parse().ok()
}

/// The session's autogroup nice raised for as long as this lives; the previous value is
/// written back when it is dropped.
#[derive(Debug)]
pub struct Boost {
    pub previous: i32,
    pub nice: i32,
}

impl Drop for Boost {
    fn drop(&mut self) {
        let _ = std::fs::write("/proc/self/autogroup", self.previous.to_string());
    }
}

/// Sets the session's autogroup nice to `nice` (a negative value needs `CAP_SYS_NICE`).
/// `Ok(None)` when the kernel has no autogroup or it is disabled
/// (`kernel.sched_autogroup_enabled = 0`), where there is nothing to raise.
pub fn boost(nice: i32) -> Result<Option<Boost>, String> {
    let enabled = std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled").is_ok_and(|v| v.trim() == "1");
    let Some(previous) = self::nice().filter(|_| enabled) else { return Ok(None) };
    std::fs::write("/proc/self/autogroup", nice.to_string())
        .map_err(|e| format!("/proc/self/autogroup: setting the session's autogroup nice to {nice}: {e}"))?;
    Ok(Some(Boost { previous, nice }))
}
