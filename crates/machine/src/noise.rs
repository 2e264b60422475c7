//! Run-to-run variation as machine data: how late a timer interrupt comes, how much one
//! stretch of user work varies, how staggered tasks start. The kernel model draws each from
//! its own seeded stream (`schedlab_kernel::noise`); all zero is the noiseless machine
//! (`--noise none`), which runs exactly as a machine without this section.
//!
//! Each default is a measurement (`docs/machine.md`, *Noise*): a real machine is never
//! noiseless, so a run without this section still varies with the seed.

use crate::spec::{Field, Kind, Table, Val};
use schedlab_sim::Ns;

/// The longest a timer interrupt may come late: far beyond any cyclictest maximum on a
/// working machine, so a typo cannot stall every sleeper for seconds.
pub const MAX_TIMER_LATENESS: Ns = Ns::from_ms(10);
/// The widest per-op jitter, in permille either side of the drawn length.
pub const MAX_OP_JITTER: u64 = 500;
/// The widest start offset.
pub const MAX_START_OFFSET: Ns = Ns::from_secs(1);

/// `[noise]`: the sources of variation a real machine has, each off at zero.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Noise {
    /// Mean of how late an hrtimer interrupt fires after the clock event's programmed
    /// expiry (`kernel/time/hrtimer.c: hrtimer_interrupt` runs at the device's interrupt,
    /// not at the expiry): interrupt delivery, SMIs, a hypervisor's timer injection.
    /// Exponentially distributed, cut at [`Noise::timer_max`]. What the kernel model already
    /// charges (the interrupt's own cost, the wakeup, the switch) is not part of it.
    pub timer_mean: Ns,
    /// The latest a timer interrupt comes: the tail of the lateness.
    pub timer_max: Ns,
    /// Each `run` op's drawn length is scaled by a factor drawn uniformly from
    /// `[1000 − op_jitter, 1000 + op_jitter] / 1000`: mean unchanged, bounds ± this many
    /// permille.
    pub op_jitter: u64,
    /// Each task the workload starts (not a forked one) starts at its `start` plus an
    /// offset drawn uniformly from `[0, start_offset]`: a launcher creates threads one
    /// after another.
    pub start_offset: Ns,
}

impl Noise {
    /// The noiseless machine: every source off.
    pub const NONE: Noise = Noise { timer_mean: Ns(0), timer_max: Ns(0), op_jitter: 0, start_offset: Ns(0) };

    /// Whether every source is off.
    pub fn is_none(&self) -> bool {
        *self == Noise::NONE
    }
    /// Whether timer interrupts come late.
    pub fn timer_on(&self) -> bool {
        self.timer_mean.0 > 0
    }

    /// What the record and the text header say ran: `none`, or each source that is on.
    pub fn summary(&self) -> String {
        if self.is_none() {
            return "none".into();
        }
        let mut parts = Vec::new();
        if self.timer_on() {
            parts.push(format!("timer {}/{}", self.timer_mean, self.timer_max));
        }
        if self.op_jitter > 0 {
            parts.push(format!("op ±{}‰", self.op_jitter));
        }
        if self.start_offset.0 > 0 {
            parts.push(format!("start +{}", self.start_offset));
        }
        parts.join(", ")
    }

    /// `(field, reason)` for values that do not describe a distribution.
    pub fn check(&self) -> Result<(), (String, String)> {
        if self.timer_mean > self.timer_max {
            return Err((
                "noise.timer_mean".into(),
                format!("the mean lateness {} exceeds noise.timer_max {}", self.timer_mean, self.timer_max),
            ));
        }
        Ok(())
    }
}

/// `[noise]`.
pub static NOISE: Table<Noise> = Table {
    section: "noise",
    what: "noise field",
    fields: &[
        Field {
            name: "timer_mean",
            kind: Kind::Duration { max: MAX_TIMER_LATENESS },
            optional: false,
            doc: "Mean lateness of an hrtimer interrupt past its programmed expiry (exponential, cut at timer_max); 0: on time.",
            get: |n| Val::Num(n.timer_mean.0),
            set: |n, v| n.timer_mean = Ns(v.num()),
        },
        Field {
            name: "timer_max",
            kind: Kind::Duration { max: MAX_TIMER_LATENESS },
            optional: false,
            doc: "The latest an hrtimer interrupt comes (at least timer_mean).",
            get: |n| Val::Num(n.timer_max.0),
            set: |n, v| n.timer_max = Ns(v.num()),
        },
        Field {
            name: "op_jitter",
            kind: Kind::Int { min: 0, max: MAX_OP_JITTER, unit: "permille" },
            optional: false,
            doc: "Each run op's length scaled by a factor uniform in 1 ± op_jitter/1000; 0: exact.",
            get: |n| Val::Num(n.op_jitter),
            set: |n, v| n.op_jitter = v.num(),
        },
        Field {
            name: "start_offset",
            kind: Kind::Duration { max: MAX_START_OFFSET },
            optional: false,
            doc: "Each workload-started task starts up to this much after its start (uniform); 0: on time.",
            get: |n| Val::Num(n.start_offset.0),
            set: |n, v| n.start_offset = Ns(v.num()),
        },
    ],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn none_is_none_and_the_summary_names_each_source() {
        assert!(Noise::NONE.is_none());
        assert_eq!(Noise::NONE.summary(), "none");
        let n = Noise { timer_mean: Ns::from_us(1), timer_max: Ns::from_us(13), op_jitter: 12, start_offset: Ns(0) };
        assert_eq!(n.summary(), "timer 1us/13us, op ±12‰");
        assert!(n.check().is_ok());
    }

    #[test]
    fn a_mean_beyond_the_bound_is_refused() {
        let n = Noise { timer_mean: Ns::from_us(20), timer_max: Ns::from_us(13), ..Noise::NONE };
        let (field, why) = n.check().unwrap_err();
        assert_eq!(field, "noise.timer_mean");
        assert!(why.contains("timer_max"), "{why}");
        let mut n = Noise::NONE;
        assert!(NOISE.set(&mut n, "op_jitter", "501").is_err(), "beyond MAX_OP_JITTER");
        assert!(NOISE.set(&mut n, "timer_max", "11ms").is_err(), "beyond MAX_TIMER_LATENESS");
        assert!(NOISE.set(&mut n, "start_offset", "2s").is_err());
    }

    /// A machine file's `[noise]`: read as written, and its errors located at the field.
    #[test]
    fn machine_files_set_the_noise_and_locate_its_errors() {
        let m = crate::parse_machine("m.toml", "[noise]\nop_jitter = 20\nstart_offset = \"0\"\n").unwrap();
        assert_eq!(m.noise, Noise { op_jitter: 20, start_offset: Ns(0), ..crate::presets::generic_noise() });
        let text = "hz = 250\n[noise]\ntimer_mean = \"20us\"\ntimer_max = \"13us\"\n";
        let e = crate::parse_machine("m.toml", text).unwrap_err().to_string();
        assert!(e.contains("m.toml:3") && e.contains("noise.timer_mean"), "{e}");
        let e = crate::parse_machine("m.toml", "[noise]\nop_jitter = 900\n").unwrap_err().to_string();
        assert!(e.contains("m.toml:2") && e.contains("op_jitter"), "{e}");
    }
}
