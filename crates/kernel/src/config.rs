//! The kernel model's switches — which kernel's runqueue locking it follows, the remote
//! wake list, the runqueue-lock paper's two mechanisms and the futex switches — and the
//! parameters of one simulation (end, seed, checks, task limit).
//!
//! Each switch is defined once, in [`SWITCHES`]: its name (`kernel.*`, `futex.*`), what it
//! takes, its documentation and how to read and write it. `--set`, the sweep file, the
//! Python package, `schedlab list`, the record and the docs all read that table, so a switch
//! added there is reachable from every front end.

use crate::futex::FutexConfig;
use crate::version::KernelVersion;
use schedlab_sim::Ns;

/// The kernel's switches for one run, as requested; [`KernelConfig::effective`] is what
/// the kernel runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelConfig {
    /// `TTWU_QUEUE`: remote wakeups to another LLC or to an idle CPU go through the target's
    /// wake list and an IPI instead of locking the target runqueue (v5.15 `ttwu_queue_cond`).
    pub ttwu_queue: bool,
    /// Whose runqueue-locking paths the model follows (`version.rs`).
    pub version: KernelVersion,
    /// The delayed new-task wakeup (`delayed.rs`): `wake_up_new_task` trylocks the target
    /// runqueue and, when it is busy, leaves the child in a delay queue the target drains at
    /// its next `schedule()`.
    pub delayed_wakeup: bool,
    /// The narrower `load_balance` critical section: only detaching and attaching tasks
    /// under both runqueue locks (Linux 2.6.32 and 3.4; 5.15 already never holds both).
    pub lb_narrow_lock: bool,
    /// Futex switches (VIP, lock-chain depth).
    pub futex: FutexConfig,
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

/// What a switch takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchValue {
    /// `0`/`1` (also `false`/`true`, `off`/`on`).
    Bool,
    /// An integer in this inclusive range.
    Int(u64, u64),
    /// A duration (`100ms`, or nanoseconds) of at most this many nanoseconds.
    Duration(u64),
    /// One of these names.
    Choice(&'static [&'static str]),
}

impl SwitchValue {
    /// What the switch accepts, for errors and `schedlab list`.
    pub fn describe(self) -> String {
        match self {
            SwitchValue::Bool => "0 or 1".into(),
            SwitchValue::Int(lo, hi) => format!("an integer in {lo}..={hi}"),
            SwitchValue::Duration(max) => format!("a duration up to {}", Ns(max)),
            SwitchValue::Choice(names) => format!("one of {}", names.join(", ")),
        }
    }
}

/// One kernel switch: defined once, read by every front end.
pub struct Switch {
    /// `kernel.NAME` or `futex.NAME`.
    pub name: &'static str,
    pub value: SwitchValue,
    pub doc: &'static str,
    /// Where the switch acts, when not everywhere (for the warning when it changed nothing).
    pub acts: Option<&'static str>,
    /// The current value as `--set` would take it.
    pub get: fn(&KernelConfig) -> String,
    /// Sets the switch from a value already checked against [`Switch::value`].
    set: fn(&mut KernelConfig, Parsed),
}

/// A checked switch value.
#[derive(Clone, Copy)]
enum Parsed {
    Bool(bool),
    Int(u64),
    Choice(usize),
}

const VERSIONS: &[&str] = &["2.6.32", "3.4", "5.15"];

fn bool_text(b: bool) -> String {
    u8::from(b).to_string()
}

/// Every kernel switch, in the order `schedlab list` and the record show them.
pub const SWITCHES: &[Switch] = &[
    Switch {
        name: "kernel.version",
        value: SwitchValue::Choice(VERSIONS),
        doc: "whose runqueue locking the kernel model follows (try_to_wake_up, fork, newly-idle and periodic load_balance)",
        acts: None,
        get: |c| c.version.name().to_string(),
        set: |c, v| {
            if let Parsed::Choice(i) = v {
                c.version = KernelVersion::ALL[i];
            }
        },
    },
    Switch {
        name: "kernel.ttwu_queue",
        value: SwitchValue::Bool,
        doc: "TTWU_QUEUE: remote wakeups across caches or to idle CPUs go through the target's wake list and an IPI",
        acts: Some("only where the kernel version has a remote wake list (not 2.6.32) and the policy keeps one (not ULE or O(1))"),
        get: |c| bool_text(c.ttwu_queue),
        set: |c, v| c.ttwu_queue = matches!(v, Parsed::Bool(true)),
    },
    Switch {
        name: "kernel.delayed_wakeup",
        value: SwitchValue::Bool,
        doc: "the delayed new-task wakeup (Zhang, Gu, Su 2017): wake_up_new_task trylocks, else a per-CPU delay queue",
        acts: None,
        get: |c| bool_text(c.delayed_wakeup),
        set: |c, v| c.delayed_wakeup = matches!(v, Parsed::Bool(true)),
    },
    Switch {
        name: "kernel.lb_narrow_lock",
        value: SwitchValue::Bool,
        doc: "load_balance holds both runqueue locks only to detach and attach tasks (2.6.32 and 3.4 held them for move_tasks)",
        acts: Some("only under kernel.version 2.6.32 and 3.4, whose load_balance held both locks for move_tasks"),
        get: |c| bool_text(c.lb_narrow_lock),
        set: |c, v| c.lb_narrow_lock = matches!(v, Parsed::Bool(true)),
    },
    Switch {
        name: "futex.vip",
        value: SwitchValue::Bool,
        doc: "VIP futex queueing and inheritance (0: VIP tasks wait like normal ones)",
        acts: None,
        get: |c| bool_text(c.futex.vip),
        set: |c, v| c.futex.vip = matches!(v, Parsed::Bool(true)),
    },
    Switch {
        name: "futex.vip_starvation_ns",
        value: SwitchValue::Duration(3_600_000_000_000),
        doc: "a VIP does not jump a normal waiter that has waited longer than this",
        acts: None,
        get: |c| c.futex.vip_starvation.0.to_string(),
        set: |c, v| {
            if let Parsed::Int(n) = v {
                c.futex.vip_starvation = Ns(n);
            }
        },
    },
    Switch {
        name: "futex.max_lock_depth",
        value: SwitchValue::Int(1, 1024),
        doc: "longest owner chain PI boosts and VIP inheritance follow (the kernel's max_lock_depth sysctl, 1024)",
        acts: None,
        get: |c| c.futex.max_lock_depth.to_string(),
        set: |c, v| {
            if let Parsed::Int(n) = v {
                c.futex.max_lock_depth = n as usize;
            }
        },
    },
];

/// Whether `name` is a kernel switch's name (`kernel.*`, `futex.*`) rather than a policy's
/// tunable.
pub fn is_switch(name: &str) -> bool {
    name.starts_with("kernel.") || name.starts_with("futex.")
}

fn parse_value(s: &Switch, value: &str) -> Result<Parsed, String> {
    let v = value.trim();
    let bad = || format!("kernel switch `{}`: `{value}` is not {}", s.name, s.value.describe());
    match s.value {
        SwitchValue::Bool => match v {
            "1" | "true" | "on" => Ok(Parsed::Bool(true)),
            "0" | "false" | "off" => Ok(Parsed::Bool(false)),
            _ => Err(bad()),
        },
        SwitchValue::Int(lo, hi) => {
            let n: u64 = v.replace('_', "").parse().map_err(|_| bad())?;
            if (lo..=hi).contains(&n) {
                Ok(Parsed::Int(n))
            } else {
                Err(bad())
            }
        }
        SwitchValue::Duration(max) => {
            let n = match v.replace('_', "").parse::<u64>() {
                Ok(n) => n,
                Err(_) => schedlab_sim::parse_duration(v).map_err(|_| bad())?.0,
            };
            if n <= max {
                Ok(Parsed::Int(n))
            } else {
                Err(bad())
            }
        }
        SwitchValue::Choice(names) => names.iter().position(|n| *n == v).map(Parsed::Choice).ok_or_else(bad),
    }
}

impl KernelConfig {
    /// Sets switch `name` to `value`; an unknown name or a value the switch does not take
    /// is an error naming the switch (and, for an unknown one, every switch).
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let Some(s) = SWITCHES.iter().find(|s| s.name == name) else {
            let known: Vec<&str> = SWITCHES.iter().map(|s| s.name).collect();
            return Err(format!("unknown kernel switch `{name}` (known: {})", known.join(", ")));
        };
        (s.set)(self, parse_value(s, value)?);
        Ok(())
    }

    /// Every switch's value, `(name, value)` in [`SWITCHES`] order.
    pub fn values(&self) -> Vec<(&'static str, String)> {
        SWITCHES.iter().map(|s| (s.name, (s.get)(self))).collect()
    }

    /// The configuration the kernel runs under a policy with (`wake_list`) or without a
    /// remote wake list: a switch that cannot act is off, so the record says what ran.
    ///
    /// * `ttwu_queue`: only where the kernel version has the wake list (not 2.6.32,
    ///   `kernel/sched.c:try_to_wake_up (v2.6.32)`) and the policy keeps one (ULE and O(1)
    ///   have none: `SchedClass::wake_list`).
    /// * `lb_narrow_lock`: only where `load_balance` held both locks for the whole
    ///   `move_tasks` chain (2.6.32 and 3.4); 5.15's `detach_tasks` never does.
    pub fn effective(&self, wake_list: bool) -> KernelConfig {
        let mut c = self.clone();
        c.ttwu_queue &= wake_list && c.version.has_wake_list();
        c.lb_narrow_lock &= c.version.lb_holds_both_locks();
        c
    }

    /// The switches whose effective value differs from the effective default's under the
    /// same policy, as `name=value`: what every output's header names.
    pub fn changed(&self, wake_list: bool) -> Vec<String> {
        let base = KernelConfig::default().effective(wake_list).values();
        let now = self.effective(wake_list).values();
        now.into_iter().zip(base).filter(|(a, b)| a.1 != b.1).map(|(a, _)| format!("{}={}", a.0, a.1)).collect()
    }

    /// Switches the caller changed from their defaults whose effect the kernel turned off
    /// under this policy and version, each with where it acts: for a warning, since setting
    /// them changed nothing.
    pub fn ineffective(&self, wake_list: bool) -> Vec<String> {
        let (def, eff, eff_def) =
            (KernelConfig::default(), self.effective(wake_list), KernelConfig::default().effective(wake_list));
        SWITCHES
            .iter()
            .filter(|s| (s.get)(self) != (s.get)(&def) && (s.get)(&eff) == (s.get)(&eff_def))
            .map(|s| match s.acts {
                Some(acts) => format!("{}={} changes nothing here: it acts {acts}", s.name, (s.get)(self)),
                None => format!("{}={} changes nothing here", s.name, (s.get)(self)),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_switch_round_trips_its_default_and_refuses_what_it_does_not_take() {
        for s in SWITCHES {
            let mut c = KernelConfig::default();
            c.set(s.name, &(s.get)(&KernelConfig::default())).unwrap();
            assert_eq!(c, KernelConfig::default(), "{}", s.name);
            let e = c.set(s.name, "nonsense").unwrap_err();
            assert!(e.contains(s.name) && e.contains(&s.value.describe()), "{e}");
            assert!(is_switch(s.name), "{}", s.name);
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
