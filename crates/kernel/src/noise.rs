//! The machine's noise (`schedlab_machine::Noise`) as the kernel draws it: each source from
//! its own stream of the run's seed (`noise.timer`, `noise.op`, `noise.start`), so turning
//! one source off leaves every other source's draws, and the workload's and the policy's
//! streams, as they were. A source that is off draws nothing and changes nothing: the
//! noiseless machine runs exactly as before noise existed.

use schedlab_machine::Noise;
use schedlab_sim::{Distribution, Ns, RngStreams, SimRng};

/// The noise sources of one run and their streams.
pub(crate) struct NoiseSource {
    cfg: Noise,
    timer: SimRng,
    op: SimRng,
    start: SimRng,
}

/// The stream names, each defined once.
pub(crate) const TIMER_STREAM: &str = "noise.timer";
pub(crate) const OP_STREAM: &str = "noise.op";
pub(crate) const START_STREAM: &str = "noise.start";

impl NoiseSource {
    pub(crate) fn new(cfg: &Noise, streams: &RngStreams) -> NoiseSource {
        NoiseSource {
            cfg: cfg.clone(),
            timer: streams.stream(TIMER_STREAM, 0),
            op: streams.stream(OP_STREAM, 0),
            start: streams.stream(START_STREAM, 0),
        }
    }

    /// How late a clock event's interrupt comes after its programmed expiry
    /// (`kernel/time/hrtimer.c: hrtimer_interrupt` runs when the device's interrupt is
    /// delivered and handled): exponential with mean `timer_mean`, cut at `timer_max`.
    pub(crate) fn timer_lateness(&mut self) -> Ns {
        if !self.cfg.timer_on() {
            return Ns(0);
        }
        Distribution::Exponential { mean: self.cfg.timer_mean }.sample(&mut self.timer).min(self.cfg.timer_max)
    }

    /// A `run` op's drawn length `len` as this machine runs it: scaled by a factor uniform
    /// in `[1000 − op_jitter, 1000 + op_jitter]` permille (integer arithmetic, truncated).
    pub(crate) fn op_length(&mut self, len: Ns) -> Ns {
        let j = self.cfg.op_jitter;
        if j == 0 || len.0 == 0 {
            return len;
        }
        let permille = Distribution::Uniform { min: Ns(1000 - j), max: Ns(1000 + j) }.sample(&mut self.op).0;
        Ns(u64::try_from(u128::from(len.0) * u128::from(permille) / 1000).unwrap_or(u64::MAX))
    }

    /// How long after its `start` a workload-started task appears: uniform in
    /// `[0, start_offset]`.
    pub(crate) fn start_offset(&mut self) -> Ns {
        if self.cfg.start_offset.0 == 0 {
            return Ns(0);
        }
        Distribution::Uniform { min: Ns(0), max: self.cfg.start_offset }.sample(&mut self.start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DRAWS: u64 = 100_000;

    fn source(cfg: Noise) -> NoiseSource {
        NoiseSource::new(&cfg, &RngStreams::new(7))
    }

    /// The lateness has the documented mean (the cut at 13 means takes e^-13 of it off,
    /// far below the tolerance) and never exceeds its bound.
    #[test]
    fn timer_lateness_has_its_mean_and_bound() {
        let cfg = Noise { timer_mean: Ns::from_us(1), timer_max: Ns::from_us(13), ..Noise::NONE };
        let mut s = source(cfg);
        let draws: Vec<u64> = (0..DRAWS).map(|_| s.timer_lateness().0).collect();
        let mean = draws.iter().sum::<u64>() / DRAWS;
        assert!((980..=1020).contains(&mean), "mean {mean} ns, expected 1000 ± 2 %");
        assert!(draws.iter().all(|&d| d <= 13_000));
        // A tight cut binds: the bound is reached, never passed.
        let mut s = source(Noise { timer_mean: Ns::from_us(10), timer_max: Ns::from_us(10), ..Noise::NONE });
        let max = (0..1000).map(|_| s.timer_lateness().0).max().unwrap();
        assert_eq!(max, 10_000);
    }

    /// The scaled length stays within ± op_jitter permille and keeps the mean.
    #[test]
    fn op_jitter_keeps_the_mean_within_its_bounds() {
        let mut s = source(Noise { op_jitter: 50, ..Noise::NONE });
        let len = Ns::from_ms(1);
        let draws: Vec<u64> = (0..DRAWS).map(|_| s.op_length(len).0).collect();
        assert!(draws.iter().all(|&d| (950_000..=1_050_000).contains(&d)));
        let mean = draws.iter().sum::<u64>() / DRAWS;
        assert!((999_000..=1_001_000).contains(&mean), "mean {mean}");
        assert!(draws.iter().any(|&d| d < 960_000) && draws.iter().any(|&d| d > 1_040_000), "the bounds are reached");
        assert_eq!(s.op_length(Ns(0)), Ns(0), "no work stays no work");
    }

    #[test]
    fn start_offsets_are_uniform_up_to_the_bound() {
        let mut s = source(Noise { start_offset: Ns::from_us(16), ..Noise::NONE });
        let draws: Vec<u64> = (0..DRAWS).map(|_| s.start_offset().0).collect();
        assert!(draws.iter().all(|&d| d <= 16_000));
        let mean = draws.iter().sum::<u64>() / DRAWS;
        assert!((7_900..=8_100).contains(&mean), "mean {mean}");
    }

    /// A source that is off returns its input and draws nothing.
    #[test]
    fn sources_that_are_off_change_nothing() {
        let mut s = source(Noise::NONE);
        assert_eq!(s.timer_lateness(), Ns(0));
        assert_eq!(s.op_length(Ns(12_345)), Ns(12_345));
        assert_eq!(s.start_offset(), Ns(0));
        let fresh = RngStreams::new(7);
        let next = |r: &mut SimRng| Distribution::Uniform { min: Ns(0), max: Ns(u64::MAX - 1) }.sample(r);
        assert_eq!(next(&mut s.timer), next(&mut fresh.stream(TIMER_STREAM, 0)));
        assert_eq!(next(&mut s.op), next(&mut fresh.stream(OP_STREAM, 0)));
        assert_eq!(next(&mut s.start), next(&mut fresh.stream(START_STREAM, 0)));
    }

    /// Each source has its own stream: turning one off does not shift another's draws.
    #[test]
    fn one_source_off_leaves_the_others_draws() {
        let on = Noise { timer_mean: Ns::from_us(2), timer_max: Ns::from_us(50), op_jitter: 20, start_offset: Ns(0) };
        let mut a = source(on.clone());
        let mut b = source(Noise { timer_mean: Ns(0), timer_max: Ns(0), ..on });
        for _ in 0..100 {
            assert_eq!(b.timer_lateness(), Ns(0));
            let _ = a.timer_lateness();
            assert_eq!(a.op_length(Ns::from_us(100)), b.op_length(Ns::from_us(100)));
        }
    }
}
