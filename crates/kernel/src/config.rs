//! The kernel model's switches — which kernel's runqueue locking it follows, the remote
//! wake list, the runqueue-lock paper's two mechanisms and the futex switches — and the
//! parameters of one simulation (end, seed, checks, task limit).
//!
//! Each switch is defined once, in [`SWITCHES`]: its name (`kernel.*`, `futex.*`), what it
//! takes, its documentation and how to read and write it. `--set`, the sweep file, the
//! Python package, `schedlab list`, the record and the docs all read that table, so a switch
//! added there is reachable from every front end.

use schedlab_machine::Machine;
use schedlab_sched_api::SchedClass;
use schedlab_sim::Ns;

/// The kernel's switches for one run, as requested; [`KernelConfig::effective`] is what
/// the kernel runs (`Kernel::config`): each switch that cannot take effect under
/// the version, the policy or the machine is off, so that what a run reports is what ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelConfig {
    /// `TTWU_QUEUE`: remote wakeups to another LLC or to an idle CPU go through the target's
    /// wake list and an IPI instead of locking the target runqueue (v5.15 `ttwu_queue_cond`).
    /// Effective only where a wakeup can take that path: not in 2.6.32 (no wake list), not
    /// under a policy without one (`SchedClass::wake_list`: ULE, O(1)), not under 3.4 on a
    /// machine whose CPUs share one LLC (3.4 queues only across caches), not on one CPU.
    pub ttwu_queue: bool,
    /// Whose runqueue-locking paths the model follows (`version.rs`). Never adjusted.
    pub version: KernelVersion,
    /// The delayed new-task wakeup (`delayed.rs`): `wake_up_new_task` trylocks the target
    /// runqueue and, when it is busy, leaves the child in a delay queue the target drains at
    /// its next `schedule()`. Never adjusted: every version and policy runs
    /// `wake_up_new_task` for a forked task (a workload that never forks never reaches it).
    pub delayed_wakeup: bool,
    /// The narrower `load_balance` critical section: only detaching and attaching tasks
    /// under both runqueue locks (Linux 2.6.32 and 3.4). Effective only where the wide one
    /// exists: not under 5.15 (whose `detach_tasks`/`attach_tasks` never hold both locks),
    /// not under a policy whose balancer moves no batches (`SchedClass::moves_batches`:
    /// ULE moves one thread at a time, fifo none).
    pub lb_narrow_lock: bool,
    /// Futex switches (VIP, lock-chain depth). Never adjusted: `futex.vip` and
    /// `futex.max_lock_depth` apply to every policy (PI boosts and VIP inheritance follow
    /// owner chains whatever the class), and `futex.vip_starvation_ns`, which matters only
    /// with VIP queueing on, keeps its value (a value, not a switch).
    pub futex: FutexConfig,
}

/// What decides whether a switch can take effect in a run: the policy's paths and the
/// machine's shape ([`KernelConfig::effective`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunsOn {
    /// The policy keeps a remote wake list (`SchedClass::wake_list`).
    pub wake_list: bool,
    /// The policy's balancer moves tasks in batches (`SchedClass::moves_batches`).
    pub moves_batches: bool,
    /// More than one CPU.
    pub cpus: bool,
    /// Some two CPUs share no last-level cache.
    pub llcs: bool,
}

impl RunsOn {
    /// `policy` on `machine`.
    pub fn new(policy: &dyn SchedClass, machine: &Machine) -> RunsOn {
        let (topo, n) = (&machine.topology, machine.nr_cpus());
        RunsOn {
            wake_list: policy.wake_list(),
            moves_batches: policy.moves_batches(),
            cpus: n > 1,
            llcs: (1..n).any(|c| !topo.shares_llc(0, c)),
        }
    }
}

/// A policy with (`true`) or without a remote wake list, balancing in batches, on a machine
/// of several CPUs and caches: where every switch but the wake list can act.
impl From<bool> for RunsOn {
    fn from(wake_list: bool) -> RunsOn {
        RunsOn { wake_list, moves_batches: true, cpus: true, llcs: true }
    }
}

impl Default for KernelConfig {
    fn default() -> Self {
        KernelConfig {
            ttwu_queue: true,
            version: KernelVersion::V5_15,
            delayed_wakeup: false,
            lb_narrow_lock: false,
            futex: FutexConfig::default(),
        }
    }
}

/// A Linux release whose core scheduler locking the model reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KernelVersion {
    /// `kernel/sched.c` (v2.6.32, read as the 2.6.32.2 release).
    V2_6_32,
    /// `kernel/sched/core.c`, `kernel/sched/fair.c` (v3.4).
    V3_4,
    /// `kernel/sched/core.c`, `kernel/sched/fair.c` (v5.15): the default.
    V5_15,
}

impl KernelVersion {
    /// Every version, oldest first.
    pub const ALL: [KernelVersion; 3] = [KernelVersion::V2_6_32, KernelVersion::V3_4, KernelVersion::V5_15];

    pub fn name(self) -> &'static str {
        match self {
            KernelVersion::V2_6_32 => "2.6.32",
            KernelVersion::V3_4 => "3.4",
            KernelVersion::V5_15 => "5.15",
        }
    }

    /// Parses `2.6.32`, `3.4` or `5.15`.
    pub fn parse(s: &str) -> Result<KernelVersion, String> {
        KernelVersion::ALL.into_iter().find(|v| v.name() == s).ok_or_else(|| {
            let names: Vec<&str> = KernelVersion::ALL.iter().map(|v| v.name()).collect();
            format!("unknown kernel version `{s}`; expected one of {}", names.join(", "))
        })
    }
}

impl std::fmt::Display for KernelVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Kernel-side futex switches (`--set futex.NAME=VALUE`; described in [`SWITCHES`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FutexConfig {
    /// VIP queueing and inheritance on (`futex.vip`).
    pub vip: bool,
    /// A VIP does not queue ahead of a normal waiter of the same word that has already
    /// waited longer than this (`futex.vip_starvation_ns`).
    pub vip_starvation: Ns,
    /// Longest chain of lock owners VIP treatment and PI boosts propagate along
    /// (`futex.max_lock_depth`; the kernel's `max_lock_depth` sysctl is 1024).
    pub max_lock_depth: usize,
}

impl Default for FutexConfig {
    fn default() -> Self {
        FutexConfig { vip: true, vip_starvation: Ns::from_ms(100), max_lock_depth: 1024 }
    }
}

/// What one simulation runs for and checks, beside the kernel's switches.
#[derive(Clone, Copy, Debug)]
pub struct SimParams {
    /// Stop at this simulated time.
    pub end: Ns,
    /// Root seed; the workload and the policy draw from separate named streams.
    pub seed: u64,
    /// Check the kernel/policy invariants after every event (tests, `--check`).
    pub check_invariants: bool,
    /// At most this many tasks may ever exist.
    pub max_tasks: u64,
}

impl Default for SimParams {
    fn default() -> Self {
        SimParams { end: Ns::from_secs(10), seed: 1, check_invariants: false, max_tasks: 1_000_000 }
    }
}

use schedlab_sched_api::tunable::{Choice, Kind, TunableSpec, TunableTable, Unit};

const VERSIONS: &[Choice] = &[
    Choice { name: "2.6.32", aliases: &[] },
    Choice { name: "3.4", aliases: &[] },
    Choice { name: "5.15", aliases: &[] },
];

/// Every kernel switch, in the order `schedlab list` and the record show them: the same
/// table type as a policy's tunables (`schedlab_sched_api::tunable`).
pub static SWITCHES: TunableTable<KernelConfig> = TunableTable {
    owner: "the kernel model",
    version: None,
    specs: &[
        TunableSpec::new(
            "kernel.version",
            Kind::Choice(VERSIONS),
            "whose runqueue locking the kernel model follows (try_to_wake_up, fork, newly-idle and periodic load_balance)",
            |c| KernelVersion::ALL.iter().position(|v| *v == c.version).unwrap_or(0) as i64,
            |c, i| c.version = KernelVersion::ALL[i as usize],
        ),
        TunableSpec::new(
            "kernel.ttwu_queue",
            Kind::Bool,
            "TTWU_QUEUE: remote wakeups across caches or to idle CPUs go through the target's wake list and an IPI",
            |c| i64::from(c.ttwu_queue),
            |c, v| c.ttwu_queue = v != 0,
        ),
        TunableSpec::new(
            "kernel.delayed_wakeup",
            Kind::Bool,
            "the delayed new-task wakeup (Zhang, Gu, Su 2017): wake_up_new_task trylocks, else a per-CPU delay queue",
            |c| i64::from(c.delayed_wakeup),
            |c, v| c.delayed_wakeup = v != 0,
        ),
        TunableSpec::new(
            "kernel.lb_narrow_lock",
            Kind::Bool,
            "load_balance holds both runqueue locks only to detach and attach tasks (2.6.32 and 3.4 held them for move_tasks)",
            |c| i64::from(c.lb_narrow_lock),
            |c, v| c.lb_narrow_lock = v != 0,
        ),
        TunableSpec::new(
            "futex.vip",
            Kind::Bool,
            "VIP futex queueing and inheritance (0: VIP tasks wait like normal ones)",
            |c| i64::from(c.futex.vip),
            |c, v| c.futex.vip = v != 0,
        ),
        TunableSpec::new(
            "futex.vip_starvation_ns",
            Kind::int(0, 3_600_000_000_000, Unit::Ns),
            "a VIP does not jump a normal waiter that has waited longer than this",
            |c| c.futex.vip_starvation.0 as i64,
            |c, v| c.futex.vip_starvation = Ns(v as u64),
        ),
        TunableSpec::new(
            "futex.max_lock_depth",
            Kind::int(1, 1024, Unit::None),
            "longest owner chain PI boosts and VIP inheritance follow (the kernel's max_lock_depth sysctl, 1024)",
            |c| c.futex.max_lock_depth as i64,
            |c, v| c.futex.max_lock_depth = v as usize,
        ),
    ],
};

/// Where a switch acts, when not everywhere: for the warning when setting it changed nothing.
fn acts(name: &str) -> Option<&'static str> {
    match name {
        "kernel.ttwu_queue" => Some(
            "only where the kernel version has a remote wake list (not 2.6.32), the policy keeps one (not ULE or O(1)) \
             and a wakeup can take it (3.4: across LLCs only)",
        ),
        "kernel.lb_narrow_lock" => Some(
            "only under kernel.version 2.6.32 and 3.4, whose load_balance held both locks for move_tasks, and a policy \
             whose balancer moves batches (not ULE or fifo)",
        ),
        _ => None,
    }
}

/// Whether `name` is a kernel switch's name (`kernel.*`, `futex.*`) rather than a policy's
/// tunable.
pub fn is_switch(name: &str) -> bool {
    name.starts_with("kernel.") || name.starts_with("futex.")
}

impl KernelConfig {
    /// Sets switch `name` to `value`; an unknown name or a value the switch does not take
    /// is an error naming the switch (and, for an unknown one, every switch).
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        if SWITCHES.set(self, name, value)? {
            return Ok(());
        }
        let known: Vec<&str> = SWITCHES.specs.iter().map(|s| s.name).collect();
        Err(format!("unknown kernel switch `{name}` (known: {})", known.join(", ")))
    }

    /// Every switch's value, `(name, value)` in [`SWITCHES`] order.
    pub fn values(&self) -> Vec<(&'static str, String)> {
        SWITCHES.list(self).into_iter().map(|t| (t.name, t.value)).collect()
    }

    /// The configuration a kernel runs for this request on `at` (a policy on a machine,
    /// [`RunsOn::new`]; or only whether the policy keeps a wake list): each switch that
    /// cannot take effect there is off (see each field for when). The wake list of a policy
    /// or version without one cannot run; every other switch turned off would have changed
    /// nothing, so the effective configuration gives the request's results.
    pub fn effective(&self, at: impl Into<RunsOn>) -> KernelConfig {
        let at = at.into();
        let queues = match self.version {
            // No wake list (`kernel/sched.c:try_to_wake_up (v2.6.32)` locks the target).
            KernelVersion::V2_6_32 => false,
            // `ttwu_queue (v3.4)`: only to a CPU that shares no cache with the waker.
            KernelVersion::V3_4 => at.llcs,
            // `ttwu_queue_cond (v5.15)`: also to an idle CPU of the same LLC, never to itself.
            KernelVersion::V5_15 => at.cpus,
        };
        KernelConfig {
            ttwu_queue: self.ttwu_queue && at.wake_list && queues,
            lb_narrow_lock: self.lb_narrow_lock && self.version.lb_holds_both_locks() && at.moves_batches,
            ..self.clone()
        }
    }

    /// The switches whose effective value differs from the effective default's under the
    /// same policy, as `name=value`: what every output's header names.
    pub fn changed(&self, at: impl Into<RunsOn>) -> Vec<String> {
        let at = at.into();
        let base = KernelConfig::default().effective(at).values();
        let now = self.effective(at).values();
        now.into_iter().zip(base).filter(|(a, b)| a.1 != b.1).map(|(a, _)| format!("{}={}", a.0, a.1)).collect()
    }

    /// Switches the caller changed from their defaults whose effect the kernel turned off
    /// under this policy and version, each with where it acts: for a warning, since setting
    /// them changed nothing.
    pub fn ineffective(&self, at: impl Into<RunsOn>) -> Vec<String> {
        let at = at.into();
        let (def, eff, eff_def) = (KernelConfig::default(), self.effective(at), KernelConfig::default().effective(at));
        let rows = self.values().into_iter().zip(def.values()).zip(eff.values().into_iter().zip(eff_def.values()));
        rows.filter(|((now, def), (eff, eff_def))| now.1 != def.1 && eff.1 == eff_def.1)
            .map(|((now, _), _)| match acts(now.0) {
                Some(acts) => format!("{}={} changes nothing here: it acts {acts}", now.0, now.1),
                None => format!("{}={} changes nothing here", now.0, now.1),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_switch_round_trips_its_default_and_refuses_what_it_does_not_take() {
        for (name, value) in KernelConfig::default().values() {
            let mut c = KernelConfig::default();
            c.set(name, &value).unwrap();
            assert_eq!(c, KernelConfig::default(), "{name}");
            let e = c.set(name, "nonsense").unwrap_err();
            assert!(e.contains(name), "{e}");
            assert!(is_switch(name), "{name}");
        }
        let e = KernelConfig::default().set("kernel.nope", "1").unwrap_err();
        assert!(e.contains("kernel.delayed_wakeup") && e.contains("futex.vip"), "{e}");
    }

    #[test]
    fn effective_turns_off_what_cannot_act() {
        let mut c = KernelConfig::default();
        assert!(c.effective(true).ttwu_queue && !c.effective(false).ttwu_queue);
        c.set("kernel.version", "2.6.32").unwrap();
        assert!(!c.effective(true).ttwu_queue, "2.6.32 has no wake list");
        c.set("kernel.lb_narrow_lock", "1").unwrap();
        assert!(c.effective(true).lb_narrow_lock);
        c.set("kernel.version", "5.15").unwrap();
        assert!(!c.effective(true).lb_narrow_lock, "5.15 never holds both locks for move_tasks");
        assert_eq!(c.ineffective(true).len(), 1, "{:?}", c.ineffective(true));
    }

    #[test]
    fn changed_names_only_what_took_effect() {
        let mut c = KernelConfig::default();
        c.set("kernel.ttwu_queue", "0").unwrap();
        assert_eq!(c.changed(true), vec!["kernel.ttwu_queue=0"]);
        assert!(c.changed(false).is_empty(), "no wake list: turning it off changes nothing");
        c.set("kernel.version", "3.4").unwrap();
        c.set("kernel.delayed_wakeup", "on").unwrap();
        assert_eq!(c.changed(true), vec!["kernel.version=3.4", "kernel.ttwu_queue=0", "kernel.delayed_wakeup=1"]);
    }
}
