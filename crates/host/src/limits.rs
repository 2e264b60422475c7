//! What a host run refuses before anything starts: runs past the hard cap, more threads than
//! the cap, CPUs this process may not use, priorities it may not set.

use schedlab_machine::CpuSet;
use schedlab_sim::Ns;
use schedlab_workload::{FutexOp, Op, Policy, Workload};

/// Why a fifo/rr task in a `group` is refused where the kernel has `CONFIG_RT_GROUP_SCHED`.
const RT_IN_GROUP: &str = "a fifo or rr task in a `group`: this kernel has CONFIG_RT_GROUP_SCHED \
                           (cpu.rt_runtime_us), where a new cgroup has no real-time runtime, and \
                           host runs do not give it any";
/// `kernel.sched_rt_runtime_us`: -1 turns real-time throttling off.
const RT_RUNTIME: &str = "/proc/sys/kernel/sched_rt_runtime_us";

/// Hard cap on a host run's length, whatever `--duration` says.
pub const MAX_DURATION: Ns = Ns::from_secs(600);
/// Hard cap on tasks a host run may ever create (threads on a shared machine).
pub const MAX_TASKS: u64 = 1024;

/// CPUs this process may run on (`sched_getaffinity`; a cpuset may hide some).
pub fn allowed_cpus() -> Vec<usize> {
    match nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)) {
        Ok(set) => (0..nix::sched::CpuSet::count()).filter(|&c| set.is_set(c).unwrap_or(false)).collect(),
        Err(_) => Vec::new(),
    }
}

/// Online CPUs (`sysconf(_SC_NPROCESSORS_ONLN)`).
pub fn online_cpus() -> usize {
    nix::unistd::sysconf(nix::unistd::SysconfVar::_NPROCESSORS_ONLN).ok().flatten().map_or(1, |n| n.max(1) as usize)
}

/// The lowest nice this process may set: any with `CAP_SYS_NICE` (root here); else a thread
/// may keep or raise its nice (threads start with the process's), and go below that only
/// down to `20 − RLIMIT_NICE` (`kernel/sys.c: set_one_prio`, `kernel/sched/syscalls.c:
/// can_nice`, v6.18). A program that raises its nice and later lowers it again fails at that
/// op (`EACCES`) without privilege.
fn min_nice() -> i32 {
    if nix::unistd::geteuid().is_root() {
        return -20;
    }
    let lim = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NICE).map_or(0, |(cur, _)| cur);
    // SAFETY: plain syscall on integers; -1 is a valid nice, so errno is not checked.
    let current = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
    current.min(20 - lim.min(40) as i32).max(-20)
}

/// Every affinity and nice value the workload can set: task fields, `[[change]]`s and the
/// ops of each started instance's program (and instance 0 of fork-only templates).
/// `(where it is asked, what)` pairs.
type Asked<T> = Vec<(String, T)>;

/// Why this process may not set policy `p` on its threads, if it may not: real-time
/// priorities need `CAP_SYS_NICE` (root here) or `RLIMIT_RTPRIO` at least the priority,
/// `SCHED_DEADLINE` always needs `CAP_SYS_NICE` (`kernel/sched/syscalls.c:
/// user_check_sched_setscheduler`, v6.18). Either needs real-time throttling on, so a
/// runaway real-time thread cannot starve the machine for the run's length.
fn policy_refusal(p: Policy) -> Option<String> {
    if !p.is_rt() && !p.is_dl() {
        return None;
    }
    let root = nix::unistd::geteuid().is_root();
    if let Policy::Fifo { prio } | Policy::Rr { prio } = p {
        let lim = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_RTPRIO).map_or(0, |(cur, _)| cur);
        if !root && lim < u64::from(prio) {
            return Some(format!(
                "{p:?} needs privilege (CAP_SYS_NICE, or RLIMIT_RTPRIO ≥ {prio}; it is {lim} for this process)"
            ));
        }
    } else if !root {
        return Some("SCHED_DEADLINE needs privilege (CAP_SYS_NICE)".into());
    }
    let runtime = std::fs::read_to_string(RT_RUNTIME).unwrap_or_default();
    if runtime.trim() == "-1" {
        return Some(format!(
            "real-time throttling is off ({RT_RUNTIME} = -1): a runaway real-time thread could \
             starve this machine; host runs set fifo, rr or deadline only with it on"
        ));
    }
    None
}

/// `CONFIG_RT_GROUP_SCHED`: the `cpu` controller has `cpu.rt_runtime_us`.
fn rt_group_sched() -> bool {
    crate::cgroup::cpu_hierarchy().is_ok_and(|h| h.base().join("cpu.rt_runtime_us").exists())
}

/// Affinities, nice values and policies asked (`requested`).
type AllAsked = (Asked<CpuSet>, Asked<i32>, Asked<Policy>);

fn requested(wl: &Workload) -> Result<AllAsked, String> {
    let mut sets = Vec::new();
    let mut nices = Vec::new();
    let mut policies = Vec::new();
    for (t, tpl) in wl.templates.iter().enumerate() {
        policies.push((format!("task `{}` policy", tpl.name), tpl.policy));
        if let Some(a) = &tpl.affinity {
            sets.push((format!("task `{}` affinity", tpl.name), a.clone()));
        }
        nices.push((format!("task `{}` nice", tpl.name), tpl.nice));
        let instances = if tpl.instance_dependent { tpl.count.clamp(1, 64) } else { 1 };
        for n in 0..instances {
            let prog = wl.program(t, n).map_err(|e| e.to_string())?;
            for (op, (line, path)) in prog.ops.iter().zip(&prog.origin) {
                if let Some(why) = futex_refusal(op) {
                    return Err(format!("line {line}, `{path}`: {why}"));
                }
                match op {
                    Op::SetAffinity(s) => sets.push((format!("line {line}, `{path}`"), s.clone())),
                    Op::SetNice(v) => nices.push((format!("line {line}, `{path}`"), *v)),
                    Op::SetPolicy { policy, .. } => {
                        if policy.is_rt() && tpl.group.is_some() && rt_group_sched() {
                            return Err(format!("line {line}, `{path}`: {RT_IN_GROUP}"));
                        }
                        policies.push((format!("line {line}, `{path}`"), *policy))
                    }
                    _ => {}
                }
            }
        }
    }
    for s in &wl.groups.sessions {
        nices.push((format!("session `{}` autogroup nice", s.name), s.nice));
    }
    for c in &wl.changes {
        let Some(template) = c.template else { continue };
        let name = &wl.templates[template].name;
        if let Some(a) = &c.affinity {
            sets.push((format!("[[change]] of `{name}` at {}", c.at), a.clone()));
        }
        if let Some(v) = c.nice {
            nices.push((format!("[[change]] of `{name}` at {}", c.at), v));
        }
    }
    Ok((sets, nices, policies))
}

/// Why a host run cannot perform `op`: the mechanisms upstream Linux lacks are
/// simulation-only; some upstream futex operations are not wired to real syscalls yet.
fn futex_refusal(op: &Op) -> Option<String> {
    match op {
        Op::Send { current_cpu: true, .. } => Some(
            "`current_cpu` on a pipe write is simulation-only (pipes do not wake with WF_CURRENT_CPU upstream)".into(),
        ),
        Op::Futex(f) => {
            if let Some(what) = f.simulation_only() {
                return Some(format!("{what} is simulation-only: upstream Linux has no such operation"));
            }
            match f {
                FutexOp::WakeOp { .. } | FutexOp::CmpRequeue { .. } | FutexOp::LockPi(_) | FutexOp::UnlockPi(_) => {
                    Some(
                        "FUTEX_WAKE_OP, FUTEX_CMP_REQUEUE and PI futexes are not in host runs yet (simulator only)"
                            .into(),
                    )
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// On the host a session is what `setsid` makes: one process (and what it forks), so a
/// session may belong to one started task with `process = true`.
fn check_session(wl: &Workload, tpl: &schedlab_workload::TaskTemplate, s: usize) -> Result<(), String> {
    let name = &wl.groups.sessions[s].name;
    if !tpl.process {
        return Err(format!(
            "task `{}`: session `{name}` needs a process of its own (setsid): add `process = true`",
            tpl.name
        ));
    }
    let users = wl.templates.iter().filter(|t| t.session == Some(s)).count();
    if users > 1 || tpl.count != 1 || tpl.template {
        return Err(format!(
            "session `{name}`: on the host a session is one process made by setsid and what it forks; \
             give it to one started task with count = 1 (its forked children inherit it)"
        ));
    }
    Ok(())
}

/// A task template's simulation-only fields, and its session's checks.
fn refuse_template(wl: &Workload, tpl: &schedlab_workload::TaskTemplate) -> Result<(), String> {
    if tpl.policy.is_rt() && tpl.group.is_some() && rt_group_sched() {
        return Err(format!("task `{}`: {RT_IN_GROUP}", tpl.name));
    }
    if tpl.kthread {
        return Err(format!(
            "task `{}`: kernel threads (`[[daemon]]`, `kthread = true`) are simulation-only; \
             a host run cannot create them",
            tpl.name
        ));
    }
    if !tpl.uclamp.is_none() {
        return Err(format!(
            "task `{}`: `util_min`/`util_max` are simulation-only: host runs do not set uclamp yet",
            tpl.name
        ));
    }
    if tpl.vip {
        return Err(format!(
            "task `{}`: `vip` is simulation-only: upstream Linux has no VIP futex queueing or inheritance",
            tpl.name
        ));
    }
    if tpl.core_cookie.is_some_and(|c| c != 0) {
        return Err(format!(
            "task `{}`: `core_cookie` is simulation-only: host runs do not call prctl(PR_SCHED_CORE) yet",
            tpl.name
        ));
    }
    if let Some(s) = tpl.session {
        check_session(wl, tpl, s)?;
    }
    Ok(())
}

/// Refuses, with the reason, anything this host cannot or may not do.
pub fn preflight(wl: &Workload, duration: Ns, max_tasks: u64) -> Result<(), String> {
    if duration > MAX_DURATION {
        return Err(format!(
            "limit exceeded: a host run lasts at most {MAX_DURATION} (asked {duration}); pass a shorter --duration"
        ));
    }
    if wl.initial_tasks() > max_tasks {
        return Err(format!(
            "limit exceeded: the workload starts {} tasks; a host run may create at most {max_tasks} threads",
            wl.initial_tasks()
        ));
    }
    if let Some((i, c)) = wl.changes.iter().enumerate().find(|(_, c)| c.hotplug.is_some()) {
        let h = c.hotplug.expect("found by it");
        let key = if h.online { "cpu_online" } else { "cpu_offline" };
        return Err(format!(
            "change[{i}].{key}: CPU hotplug is simulation-only; a host run would take CPU {} of this machine \
             offline or online, which it may not do",
            h.cpu
        ));
    }
    if let Some(g) = wl.groups.cgroups.iter().find(|g| g.cpus.is_some()) {
        return Err(format!(
            "group `{}`: `cpus` (cpuset.cpus) is simulation-only; a host run makes cpu-controller groups \
             only (no cpuset hierarchy), and pinning its threads with sched_setaffinity instead would \
             not be a cpuset",
            g.name
        ));
    }
    if let Some(g) = wl.groups.cgroups.iter().find(|g| !g.uclamp.is_none()) {
        return Err(format!(
            "group `{}`: `uclamp_min`/`uclamp_max` are simulation-only: host runs do not set uclamp yet",
            g.name
        ));
    }
    if let Some(s) = wl.spans.first() {
        return Err(format!("span `{s}`: mark_begin/mark_end are simulation-only; host runs do not record spans yet"));
    }
    for tpl in &wl.templates {
        refuse_template(wl, tpl)?;
    }
    if let Some(g) = wl.groups.cgroups.first() {
        crate::cgroup::cpu_hierarchy().map_err(|m| format!("group `{}`: {m}", g.name))?;
    }
    let allowed = allowed_cpus();
    let (sets, nices, policies) = requested(wl)?;
    for (what, p) in &policies {
        if let Some(why) = policy_refusal(*p) {
            return Err(format!("{what}: {why}"));
        }
    }
    for (what, set) in &sets {
        if let Some(c) = set.iter().find(|c| !allowed.contains(c)) {
            return Err(format!(
                "{what}: CPU {c} is not available to this process on this host (allowed: {allowed:?})"
            ));
        }
        if set.iter().next().is_none() {
            return Err(format!("{what}: an empty CPU set"));
        }
    }
    let floor = min_nice();
    for (what, v) in &nices {
        if *v < floor {
            return Err(format!(
                "{what}: nice {v} needs privilege (CAP_SYS_NICE or RLIMIT_NICE); this process may go down to {floor}"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(text: &str) -> String {
        let wl = schedlab_workload::parse_workload("w.toml", text, &[], 1).unwrap();
        preflight(&wl, Ns::from_secs(1), MAX_TASKS).unwrap_err()
    }

    #[test]
    fn simulation_only_features_are_refused_up_front() {
        let e = refusal("[[daemon]]\npreset = \"rcu\"\n[[task]]\nname = \"t\"\nprogram = [ \"yield\" ]\n");
        assert!(e.contains("task `rcu`") && e.contains("simulation-only"), "{e}");
        let e = refusal("[[task]]\nname = \"t\"\nprogram = [ { mark_begin = \"r\" }, { mark_end = \"r\" } ]\n");
        assert!(e.contains("span `r`") && e.contains("simulation-only"), "{e}");
    }
}
