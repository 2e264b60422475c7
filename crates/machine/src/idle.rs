//! CPU idle states and the governor choosing among them: data only (the governor itself is
//! the kernel model's), with the constants that are machine data (haltpoll's module
//! parameters).

use crate::spec::{Field, Kind, Table, Val};
use crate::CpuSet;
use schedlab_sim::Ns;

/// `CPUIDLE_STATE_MAX` (`include/linux/cpuidle.h`).
pub const CPUIDLE_STATE_MAX: usize = 10;

/// One idle state (`struct cpuidle_state`).
#[derive(Clone, Debug, PartialEq)]
pub struct IdleState {
    /// `POLL`, `C1`, `C1E`, `C6`, `haltpoll idle`.
    pub name: String,
    /// `exit_latency_ns`: from the wakeup event to the CPU running again.
    pub exit_latency: Ns,
    /// `target_residency_ns`: the shortest idle for which entering pays off.
    pub target_residency: Ns,
    /// What leaving the state costs when that differs from the exit latency the driver
    /// declares to the governor: a guest's HLT is a VM exit, and the vCPU runs again only
    /// after the host wakes and schedules its thread. `None`: the exit latency.
    pub exit_cost: Option<Ns>,
    /// `power_usage` in mW; `None` where the driver gives none (intel_idle, haltpoll,
    /// PSCI: the kernel shows `UINT_MAX`).
    pub power_mw: Option<u64>,
    /// `CPUIDLE_FLAG_POLLING`: the CPU spins with `TIF_POLLING_NRFLAG` set, so a wakeup
    /// needs no IPI (`drivers/cpuidle/poll_state.c: poll_idle`).
    pub polling: bool,
    /// `CPUIDLE_FLAG_TLB_FLUSHED`: `cpuidle_enter_state` calls `leave_mm()` first, so the
    /// next user task reloads CR3 with a cold TLB (`drivers/idle/intel_idle.c`: C3 and
    /// deeper on Intel client parts).
    pub tlb_flushed: bool,
}

/// The states of one cpuidle driver and the CPUs it drives (one driver for every CPU on
/// x86; one per cluster on big.LITTLE Arm, `drivers/cpuidle/cpuidle-psci.c`).
#[derive(Clone, Debug, PartialEq)]
pub struct IdleDriver {
    pub cpus: CpuSet,
    /// Shallowest first.
    pub states: Vec<IdleState>,
}

/// Which cpuidle governor selects states (`drivers/cpuidle/governors/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdleGovernor {
    /// `menu.c` as of v5.15 (12 buckets with the iowait half, the performance multiplier).
    Menu515,
    /// `menu.c` as of v6.18 (6 buckets, no next-timer query below 15 µs typical intervals).
    Menu618,
    /// `teo.c` as of v6.18.
    Teo,
    /// `haltpoll.c` (guests: poll, then HLT, the poll limit adapted per CPU).
    Haltpoll,
    /// No cpuidle driver: `default_idle_call` (x86 HLT) with the tick stopped; the driver's
    /// single state says what its exit costs.
    None,
}

/// `[idle]`: the governor, `idle=poll`, haltpoll's parameters and the drivers.
#[derive(Clone, Debug, PartialEq)]
pub struct Idle {
    pub governor: IdleGovernor,
    /// `idle=poll` on the kernel command line: the idle loop polls (`cpu_idle_poll`), no
    /// state is entered.
    pub poll: bool,
    /// `haltpoll.guest_halt_poll_ns`: the most a guest CPU polls before halting (module
    /// default 200 000 ns, `drivers/cpuidle/governors/haltpoll.c`).
    pub guest_halt_poll_ns: Ns,
    /// `guest_halt_poll_grow` (default 2): the poll limit's growth factor.
    pub guest_halt_poll_grow: u32,
    /// `guest_halt_poll_grow_start` (default 50 000 ns): the first non-zero limit.
    pub guest_halt_poll_grow_start: Ns,
    /// `guest_halt_poll_shrink` (default 2): its shrink divisor.
    pub guest_halt_poll_shrink: u32,
    /// `guest_halt_poll_allow_shrink` (default true).
    pub guest_halt_poll_allow_shrink: bool,
    pub drivers: Vec<IdleDriver>,
    /// A guest's halt gives the physical CPU back to the hypervisor, whose own cpuidle
    /// governor (`menu`, `drivers/cpuidle/governors/menu.c`) then picks one of the
    /// physical CPU's states for it: the guest's wakeup pays that state's exit on top of
    /// its halt's. The guest cannot read those states; `calibrate` measures them (the
    /// exit after repeated idles of each length, for which menu predicts that length).
    /// Empty: bare metal, or a hypervisor whose exit does not depend on the idle.
    pub hypervisor_states: Vec<IdleState>,
    /// The hypervisor's governor over `hypervisor_states` (`menu-6.18` or `menu-5.15`).
    pub hypervisor_governor: IdleGovernor,
}

impl IdleState {
    /// What the kernel charges for leaving the state: [`IdleState::exit_cost`] if given,
    /// else the declared exit latency.
    pub fn wake_cost(&self) -> Ns {
        self.exit_cost.unwrap_or(self.exit_latency)
    }
}

impl Idle {
    /// The `haltpoll.c` module defaults with the given drivers.
    pub fn with(governor: IdleGovernor, drivers: Vec<IdleDriver>) -> Idle {
        Idle {
            governor,
            poll: false,
            guest_halt_poll_ns: Ns(200_000),
            guest_halt_poll_grow: 2,
            guest_halt_poll_grow_start: Ns(50_000),
            guest_halt_poll_shrink: 2,
            guest_halt_poll_allow_shrink: true,
            drivers,
            hypervisor_states: Vec::new(),
            hypervisor_governor: IdleGovernor::Menu618,
        }
    }

    /// The states of `cpu`'s driver (empty when no driver covers it).
    pub fn states(&self, cpu: usize) -> &[IdleState] {
        self.drivers.iter().find(|d| d.cpus.contains(cpu)).map_or(&[], |d| &d.states)
    }

    /// `(field, reason)` for drivers the kernel or the governor would refuse.
    pub fn check(&self, nr_cpus: usize) -> Result<(), (String, String)> {
        crate::freq::check_cover(self.drivers.iter().map(|d| &d.cpus), nr_cpus, "idle.driver")?;
        for (i, d) in self.drivers.iter().enumerate() {
            let at = |j: usize, f: &str| format!("idle.driver[{i}].state[{j}].{f}");
            if d.states.is_empty() || d.states.len() > CPUIDLE_STATE_MAX {
                return Err((
                    format!("idle.driver[{i}].cpus"),
                    format!("a driver has 1..={CPUIDLE_STATE_MAX} states (CPUIDLE_STATE_MAX)"),
                ));
            }
            check_states(&d.states, &at)?;
            self.check_governor(i, d)?;
        }
        self.check_hypervisor()
    }

    /// The hypervisor's states: sane as a driver's (`check_states`), none polling, and a
    /// governor the model has for them.
    fn check_hypervisor(&self) -> Result<(), (String, String)> {
        let s = &self.hypervisor_states;
        if s.is_empty() {
            return Ok(());
        }
        if s.len() > CPUIDLE_STATE_MAX {
            return Err(("idle.hypervisor_state".into(), format!("at most {CPUIDLE_STATE_MAX} states")));
        }
        if !matches!(self.hypervisor_governor, IdleGovernor::Menu515 | IdleGovernor::Menu618) {
            return Err((
                "idle.hypervisor_governor".into(),
                "the hypervisor's states are chosen by menu-6.18 or menu-5.15".into(),
            ));
        }
        check_states(s, &|j, f| format!("idle.hypervisor_state[{j}].{f}"))?;
        match s.iter().position(|st| st.polling) {
            Some(j) => Err((format!("idle.hypervisor_state[{j}].polling"), "a hypervisor state does not poll".into())),
            None => Ok(()),
        }
    }

    fn check_governor(&self, i: usize, d: &IdleDriver) -> Result<(), (String, String)> {
        let field = format!("idle.driver[{i}].cpus");
        match self.governor {
            IdleGovernor::None if d.states.len() != 1 || d.states[0].polling => Err((
                field,
                "governor none (no cpuidle driver) has exactly one, non-polling state: what default_idle costs".into(),
            )),
            // drivers/cpuidle/cpuidle-haltpoll.c registers the poll state and one HLT state.
            IdleGovernor::Haltpoll if d.states.len() != 2 || !d.states[0].polling => {
                Err((field, "governor haltpoll drives two states: POLL, then the halt".into()))
            }
            _ => Ok(()),
        }
    }
}

/// The checks every state list passes (`at(j, field)` names a state's field): unique
/// names, an exit latency within the target residency, residencies not decreasing with
/// depth, only state 0 polling.
fn check_states(states: &[IdleState], at: &dyn Fn(usize, &str) -> String) -> Result<(), (String, String)> {
    for (j, s) in states.iter().enumerate() {
        if states[..j].iter().any(|o| o.name == s.name) {
            return Err((at(j, "name"), format!("two states are named `{}`", s.name)));
        }
        // drivers/cpuidle/driver.c: __cpuidle_driver_init refuses it (commit
        // 76934e495cdc, "cpuidle: Add sanity check for exit latency and target
        // residency"): cpuidle assumes it in several places.
        if s.exit_latency > s.target_residency {
            return Err((at(j, "exit_latency"), format!("exceeds the target residency {}", s.target_residency)));
        }
        if s.polling && j != 0 {
            return Err((at(j, "polling"), "only state 0 polls (the cpuidle poll state)".into()));
        }
        if j > 0 && s.target_residency < states[j - 1].target_residency {
            return Err((
                at(j, "target_residency"),
                "residencies must not decrease with depth (menu and teo walk states shallow to deep)".into(),
            ));
        }
    }
    Ok(())
}

const GOVERNORS: &[&str] = &["menu-5.15", "menu-6.18", "teo", "haltpoll", "none"];

fn governor_of(i: u64) -> IdleGovernor {
    [IdleGovernor::Menu515, IdleGovernor::Menu618, IdleGovernor::Teo, IdleGovernor::Haltpoll, IdleGovernor::None]
        [i as usize % 5]
}

const IDLE_TIME: Kind = Kind::Duration { max: Ns::from_secs(1) };

/// `[idle]`'s own fields.
pub static IDLE: Table<Idle> = Table {
    section: "idle",
    what: "idle field",
    fields: &[
        Field {
            name: "governor",
            kind: Kind::Choice(GOVERNORS),
            optional: false,
            doc: "The cpuidle governor: `menu-5.15`, `menu-6.18`, `teo` (v6.18), `haltpoll`, or `none` (no cpuidle driver: HLT).",
            get: |i| Val::Num(i.governor as u64),
            set: |i, v| i.governor = governor_of(v.num()),
        },
        Field {
            name: "poll",
            kind: Kind::Bool,
            optional: false,
            doc: "`idle=poll`: idle CPUs poll and enter no state.",
            get: |i| Val::Num(u64::from(i.poll)),
            set: |i, v| i.poll = v.num() != 0,
        },
        Field {
            name: "guest_halt_poll_ns",
            kind: IDLE_TIME,
            optional: false,
            doc: "haltpoll: the longest poll before halting (module default 200us).",
            get: |i| Val::Num(i.guest_halt_poll_ns.0),
            set: |i, v| i.guest_halt_poll_ns = Ns(v.num()),
        },
        Field {
            name: "guest_halt_poll_grow",
            kind: Kind::Int { min: 1, max: 1000, unit: "" },
            optional: false,
            doc: "haltpoll: growth factor of the poll limit (default 2).",
            get: |i| Val::Num(u64::from(i.guest_halt_poll_grow)),
            set: |i, v| i.guest_halt_poll_grow = v.num() as u32,
        },
        Field {
            name: "guest_halt_poll_grow_start",
            kind: IDLE_TIME,
            optional: false,
            doc: "haltpoll: the first non-zero poll limit (default 50us).",
            get: |i| Val::Num(i.guest_halt_poll_grow_start.0),
            set: |i, v| i.guest_halt_poll_grow_start = Ns(v.num()),
        },
        Field {
            name: "guest_halt_poll_shrink",
            kind: Kind::Int { min: 0, max: 1000, unit: "" },
            optional: false,
            doc: "haltpoll: shrink divisor of the poll limit (default 2; 0 resets it to 0).",
            get: |i| Val::Num(u64::from(i.guest_halt_poll_shrink)),
            set: |i, v| i.guest_halt_poll_shrink = v.num() as u32,
        },
        Field {
            name: "guest_halt_poll_allow_shrink",
            kind: Kind::Bool,
            optional: false,
            doc: "haltpoll: whether a long halt shrinks the poll limit (default true).",
            get: |i| Val::Num(u64::from(i.guest_halt_poll_allow_shrink)),
            set: |i, v| i.guest_halt_poll_allow_shrink = v.num() != 0,
        },
        Field {
            name: "hypervisor_governor",
            kind: Kind::Choice(GOVERNORS),
            optional: false,
            doc: "A guest: the hypervisor's governor over `[[idle.hypervisor_state]]` (`menu-6.18` or `menu-5.15`).",
            get: |i| Val::Num(i.hypervisor_governor as u64),
            set: |i, v| i.hypervisor_governor = governor_of(v.num()),
        },
    ],
};

/// `[[idle.driver]]`'s own field (its states are `[[idle.driver.state]]`).
pub static IDLE_DRIVER: Table<IdleDriver> = Table {
    section: "idle.driver",
    what: "idle driver field",
    fields: &[Field {
        name: "cpus",
        kind: Kind::Cpus,
        optional: false,
        doc: "The CPUs this driver's states apply to; the drivers cover every CPU once.",
        get: |d| Val::Cpus(d.cpus.clone()),
        set: |d, v| d.cpus = v.cpus(),
    }],
};

/// `[[idle.driver.state]]`.
pub static IDLE_STATE: Table<IdleState> = Table {
    section: "idle.driver.state",
    what: "idle state field",
    fields: &[
        Field {
            name: "name",
            kind: Kind::Name,
            optional: false,
            doc: "The state's name (`C1E`): `idle.driver[0].state.C1E.exit_latency`.",
            get: |s| Val::Text(s.name.clone()),
            set: |s, v| s.name = v.text(),
        },
        Field {
            name: "exit_latency",
            kind: IDLE_TIME,
            optional: false,
            doc: "From the wakeup to the CPU running again; at most the target residency.",
            get: |s| Val::Num(s.exit_latency.0),
            set: |s, v| s.exit_latency = Ns(v.num()),
        },
        Field {
            name: "target_residency",
            kind: IDLE_TIME,
            optional: false,
            doc: "The shortest idle for which entering the state pays off.",
            get: |s| Val::Num(s.target_residency.0),
            set: |s, v| s.target_residency = Ns(v.num()),
        },
        Field {
            name: "exit_cost",
            kind: IDLE_TIME,
            optional: true,
            doc: "What leaving the state costs when it differs from the declared exit latency (a guest's HLT: a VM exit and the host's wakeup); `none`: the exit latency.",
            get: |s| Val::of_opt(s.exit_cost.map(|n| n.0)),
            set: |s, v| s.exit_cost = v.opt().map(Ns),
        },
        Field {
            name: "power_mw",
            kind: Kind::Int { min: 0, max: 1_000_000, unit: "mW" },
            optional: true,
            doc: "Power while in the state, mW; `none` where the driver gives none.",
            get: |s| Val::of_opt(s.power_mw),
            set: |s, v| s.power_mw = v.opt(),
        },
        Field {
            name: "polling",
            kind: Kind::Bool,
            optional: false,
            doc: "CPUIDLE_FLAG_POLLING (state 0 only): wakeups need no IPI.",
            get: |s| Val::Num(u64::from(s.polling)),
            set: |s, v| s.polling = v.num() != 0,
        },
        Field {
            name: "tlb_flushed",
            kind: Kind::Bool,
            optional: false,
            doc: "CPUIDLE_FLAG_TLB_FLUSHED: entering it leaves the mm, the next user task refills its TLB.",
            get: |s| Val::Num(u64::from(s.tlb_flushed)),
            set: |s, v| s.tlb_flushed = v.num() != 0,
        },
    ],
};

#[cfg(test)]
mod tests {
    use super::*;

    fn state(name: &str, exit_us: u64, residency_us: u64) -> IdleState {
        IdleState {
            name: name.into(),
            exit_latency: Ns::from_us(exit_us),
            target_residency: Ns::from_us(residency_us),
            exit_cost: None,
            power_mw: None,
            polling: false,
            tlb_flushed: false,
        }
    }

    fn poll() -> IdleState {
        IdleState { polling: true, ..state("POLL", 0, 0) }
    }

    #[test]
    fn drivers_cover_cpus_once_and_states_are_sane() {
        let all = |states| IdleDriver { cpus: CpuSet::full(4), states };
        let ok = Idle::with(IdleGovernor::Menu618, vec![all(vec![poll(), state("C1", 1, 1), state("C6", 80, 300)])]);
        assert_eq!(ok.check(4), Ok(()));
        assert_eq!(ok.states(3).len(), 3);
        let bad = Idle::with(IdleGovernor::Menu618, vec![all(vec![poll(), state("C1", 2, 1)])]);
        assert_eq!(bad.check(4).unwrap_err().0, "idle.driver[0].state[1].exit_latency");
        let bad = Idle::with(IdleGovernor::Menu618, vec![all(vec![state("C1", 1, 1), poll()])]);
        assert_eq!(bad.check(4).unwrap_err().0, "idle.driver[0].state[1].polling");
        let bad = Idle::with(IdleGovernor::Menu618, vec![all(vec![state("C6", 80, 300), state("C1", 1, 1)])]);
        assert_eq!(bad.check(4).unwrap_err().0, "idle.driver[0].state[1].target_residency");
        let half = IdleDriver { cpus: CpuSet::parse_list("0-1").unwrap(), states: vec![state("C1", 1, 1)] };
        let bad = Idle::with(IdleGovernor::Menu618, vec![half]);
        assert!(bad.check(4).unwrap_err().1.contains("CPU 2"));
    }

    #[test]
    fn governors_constrain_the_states() {
        let all = |states| vec![IdleDriver { cpus: CpuSet::full(2), states }];
        assert!(Idle::with(IdleGovernor::None, all(vec![state("HLT", 1, 1)])).check(2).is_ok());
        assert!(Idle::with(IdleGovernor::None, all(vec![poll(), state("HLT", 1, 1)])).check(2).is_err());
        assert!(Idle::with(IdleGovernor::Haltpoll, all(vec![poll(), state("haltpoll idle", 1, 1)])).check(2).is_ok());
        assert!(Idle::with(IdleGovernor::Haltpoll, all(vec![state("HLT", 1, 1)])).check(2).is_err());
    }
}

#[cfg(test)]
mod hypervisor_tests {
    use super::*;

    const GUEST: &str = "name = \"g\"\n[topology]\ncores_per_llc = 2\n[idle]\ngovernor = \"haltpoll\"\n\
        hypervisor_governor = \"menu-6.18\"\n[[idle.driver]]\ncpus = \"0-1\"\n\
        [[idle.driver.state]]\nname = \"POLL\"\nexit_latency = \"0ns\"\ntarget_residency = \"0ns\"\npolling = true\n\
        [[idle.driver.state]]\nname = \"halt\"\nexit_latency = \"1us\"\ntarget_residency = \"1us\"\nexit_cost = \"0ns\"\n\
        [[idle.hypervisor_state]]\nname = \"after-10us\"\nexit_latency = \"200ns\"\ntarget_residency = \"10us\"\n\
        [[idle.hypervisor_state]]\nname = \"after-3000us\"\nexit_latency = \"50us\"\ntarget_residency = \"3ms\"\n";

    /// `[[idle.hypervisor_state]]` reads, writes back to the same machine, is set by name
    /// and refused with the field named when cpuidle would refuse it.
    #[test]
    fn hypervisor_states_read_write_set_and_check() {
        let m = crate::parse_machine("g.toml", GUEST).unwrap();
        let hv: Vec<(&str, u64)> =
            m.idle.hypervisor_states.iter().map(|s| (s.name.as_str(), s.wake_cost().0)).collect();
        assert_eq!(hv, [("after-10us", 200), ("after-3000us", 50_000)]);
        assert_eq!(crate::parse_machine("g.toml", &m.to_toml()).unwrap(), m, "written back alike");
        let mut s = m.clone();
        s.set("idle.hypervisor_state.after-3000us.exit_cost", "60us").unwrap();
        assert_eq!(s.idle.hypervisor_states[1].wake_cost(), Ns::from_us(60));
        let polling = GUEST.replace("target_residency = \"3ms\"\n", "target_residency = \"3ms\"\npolling = true\n");
        let e = crate::parse_machine("g.toml", &polling).unwrap_err();
        assert_eq!(e.field, "idle.hypervisor_state[1].polling", "{e}");
        let teo = GUEST.replace("hypervisor_governor = \"menu-6.18\"", "hypervisor_governor = \"teo\"");
        assert_eq!(crate::parse_machine("g.toml", &teo).unwrap_err().field, "idle.hypervisor_governor");
        let deep_first = GUEST.replace(
            "exit_latency = \"50us\"\ntarget_residency = \"3ms\"",
            "exit_latency = \"2us\"\ntarget_residency = \"5us\"",
        );
        assert_eq!(
            crate::parse_machine("g.toml", &deep_first).unwrap_err().field,
            "idle.hypervisor_state[1].target_residency"
        );
    }
}
