//! The study contract: every study states, for each experiment, (a) the source's claim and
//! where in the source it is, (b) our result as a mean with a 95 % interval over seeds,
//! (c) a verdict — agree, differ, no effect, not comparable — by a stated tolerance, and
//! (d) the mechanism: the run's own counters, per-path kernel time and decision records
//! that account for the result and for any difference from the claim.
//!
//! A study supplies the claims (static data: what the source says) and a function that
//! reads its runs into [`Evidence`]: one sample of the measured quantity per seed and the
//! mechanism text, both computed from the records. [`judge`] turns evidence into an
//! [`Outcome`]; nothing here, nor in a study, writes a finding as a constant.
//!
//! Statistics: a run is deterministic for its seed, so spread comes from seeds — the
//! machine's seeded noise (timer and interrupt jitter, per-operation jitter, start offsets,
//! background wakeups) makes seeds differ. The interval is Student's t at 95 % over the
//! per-seed samples; with one seed, or identical samples, it is zero wide and says so.

use std::fmt::Write as _;

/// What the source says for one experiment.
#[derive(Debug)]
pub struct Claim {
    /// Stable key within the study (`sysbench-finishes-sooner-under-ule`).
    pub id: &'static str,
    /// Where in the source: figure, table, section.
    pub location: &'static str,
    /// The source's claim in its own terms: the number, or the qualitative statement.
    pub statement: &'static str,
    /// What we measure for it, with its unit (`fibo's share of the core while sysbench
    /// runs, CFS (%)`).
    pub measure: &'static str,
    /// How our measurement is judged against the claim.
    pub expect: Expect,
    /// The study's figure that shows it in the source's form (a file name of the study's
    /// figures, `gain.svg`).
    pub figure: &'static str,
}

/// How a claim is tested: a threshold the effect must clear, a range, or a number.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Expect {
    /// The source reports an effect in this direction: agree when the whole interval lies
    /// above the threshold, no effect when it contains it, differ when below.
    Above(f64),
    /// The mirror of [`Expect::Above`].
    Below(f64),
    /// Our mean within `lo..=hi` (an interval straddling a bound: differ).
    Within(f64, f64),
    /// The source's number, with a relative tolerance (0.15: ±15 %).
    Near { value: f64, rel: f64 },
    /// The source reports this quantity without a number or direction we can test against
    /// (we still measure and explain it): not comparable.
    Unstated,
}

impl Expect {
    /// The tolerance in words, for every output.
    pub fn describe(&self) -> String {
        match *self {
            Expect::Above(t) => format!("effect above {} with 95 % confidence", num(t)),
            Expect::Below(t) => format!("effect below {} with 95 % confidence", num(t)),
            Expect::Within(lo, hi) => format!("within {}..{}", num(lo), num(hi)),
            Expect::Near { value, rel } => format!("{} ± {:.0} % of it", num(value), rel * 100.0),
            Expect::Unstated => "the source states no value to compare with".into(),
        }
    }
}

/// Agreement with the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Agree,
    Differ,
    /// The source reports an effect; ours is inside the noise band.
    NoEffect,
    /// The quantity could not be measured in this run (what was missing is said).
    NotComparable,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Agree => "agree",
            Verdict::Differ => "differ",
            Verdict::NoEffect => "no effect",
            Verdict::NotComparable => "not comparable",
        }
    }
}

/// A mean over seeds with its 95 % interval.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    pub mean: f64,
    /// Half the width of the 95 % interval (Student's t over the seeds).
    pub half: f64,
    pub samples: Vec<f64>,
}

impl Estimate {
    /// The estimate of `samples` (one per seed); `None` when there is none.
    pub fn of(samples: &[f64]) -> Option<Estimate> {
        let finite: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
        let n = finite.len();
        if n == 0 {
            return None;
        }
        let mean = finite.iter().sum::<f64>() / n as f64;
        let half = if n < 2 {
            0.0
        } else {
            let var = finite.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            t95(n - 1) * (var / n as f64).sqrt()
        };
        Some(Estimate { mean, half, samples: finite })
    }
    pub fn lo(&self) -> f64 {
        self.mean - self.half
    }
    pub fn hi(&self) -> f64 {
        self.mean + self.half
    }
    /// `12.3 ± 0.4 (n = 5)`.
    pub fn text(&self) -> String {
        format!("{} ± {} (n = {})", num(self.mean), num(self.half), self.samples.len())
    }
}

/// The two-sided 95 % quantile of Student's t with `df` degrees of freedom (the usual
/// table; 1.96 beyond 30).
pub fn t95(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        d if d <= 30 => T[d - 1],
        _ => 1.96,
    }
}

/// Seeds a study runs by default. Five: Student's t with 4 degrees of freedom (2.776) gives a
/// 95 % interval of ±1.24 standard deviations of one run, where three seeds (4.303 / √3)
/// give ±2.48 — twice as wide for 60 % of the work — and ten (2.262 / √10) ±0.72 for twice
/// the work again. `--seeds N` changes it.
pub const DEFAULT_SEEDS: usize = 5;

/// The seeds of a study that starts from `first`: `first, first + 1, …` (`n` of them, at
/// least one).
pub fn seeds(first: u64, n: usize) -> Vec<u64> {
    (0..n.max(1) as u64).map(|k| first.wrapping_add(k)).collect()
}

/// One seed's runs of a study: its experiments' results in order (a single-workload study:
/// one experiment, `main`, with a run per scheduler).
pub type SeedRuns = Vec<crate::suite::ExperimentResult>;

/// How a study reads its runs (one [`SeedRuns`] per seed, in seed order) into the evidence
/// for its claims.
pub type EvidenceFn = fn(&[SeedRuns]) -> Vec<Evidence>;

/// What a study read off its runs for one claim.
#[derive(Clone, Debug)]
pub struct Evidence {
    /// [`Claim::id`].
    pub claim: &'static str,
    /// The measured quantity, one sample per seed (empty: not measurable; say why in
    /// `mechanism`).
    pub samples: Vec<f64>,
    /// Why the result is what it is, in the run's own terms.
    pub mechanism: String,
}

/// A claim judged.
#[derive(Debug)]
pub struct Outcome {
    pub claim: &'static Claim,
    pub ours: Option<Estimate>,
    pub verdict: Verdict,
    pub mechanism: String,
}

/// Judges `evidence` against its claim.
pub fn judge(claim: &'static Claim, evidence: &Evidence) -> Outcome {
    let ours = Estimate::of(&evidence.samples);
    let verdict = match &ours {
        None => Verdict::NotComparable,
        Some(e) => verdict_of(claim.expect, e),
    };
    Outcome { claim, ours, verdict, mechanism: evidence.mechanism.clone() }
}

fn verdict_of(expect: Expect, e: &Estimate) -> Verdict {
    match expect {
        Expect::Above(t) if e.lo() > t => Verdict::Agree,
        Expect::Above(t) if e.hi() < t => Verdict::Differ,
        Expect::Below(t) if e.hi() < t => Verdict::Agree,
        Expect::Below(t) if e.lo() > t => Verdict::Differ,
        Expect::Above(_) | Expect::Below(_) => Verdict::NoEffect,
        Expect::Within(lo, hi) if (lo..=hi).contains(&e.mean) => Verdict::Agree,
        Expect::Within(..) => Verdict::Differ,
        Expect::Near { value, rel } if (e.mean - value).abs() <= rel * value.abs() => Verdict::Agree,
        Expect::Near { .. } => Verdict::Differ,
        Expect::Unstated => Verdict::NotComparable,
    }
}

/// Judges every claim of a study; a claim without evidence is not comparable, and says so.
pub fn judge_all(claims: &'static [Claim], evidence: &[Evidence]) -> Vec<Outcome> {
    claims
        .iter()
        .map(|c| match evidence.iter().find(|e| e.claim == c.id) {
            Some(e) => judge(c, e),
            None => Outcome {
                claim: c,
                ours: None,
                verdict: Verdict::NotComparable,
                mechanism: "this run has no experiment that measures it".into(),
            },
        })
        .collect()
}

/// `N of M claims agree, K differ, J no effect, I not comparable`.
pub fn summary(outcomes: &[Outcome]) -> String {
    let count = |v: Verdict| outcomes.iter().filter(|o| o.verdict == v).count();
    format!(
        "{} of {} claims agree, {} differ, {} no effect, {} not comparable",
        count(Verdict::Agree),
        outcomes.len(),
        count(Verdict::Differ),
        count(Verdict::NoEffect),
        count(Verdict::NotComparable)
    )
}

/// The outcomes as the text every study prints first.
pub fn text(outcomes: &[Outcome]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}", summary(outcomes));
    for o in outcomes {
        let c = o.claim;
        let _ = writeln!(s, "\nclaim {} ({}): {}", c.id, c.location, c.statement);
        let ours = o.ours.as_ref().map_or_else(|| "not measured".to_string(), Estimate::text);
        let _ = writeln!(s, "  ours: {}: {ours}", c.measure);
        let _ = writeln!(s, "  verdict: {} ({})", o.verdict.name(), c.expect.describe());
        let _ = writeln!(s, "  why: {}", o.mechanism);
    }
    s
}

/// A number as outputs print it: integers plainly, others with 3 significant digits.
pub fn num(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    if x == x.trunc() && x.abs() < 1e15 {
        return format!("{}", x as i64);
    }
    let digits = (2 - x.abs().log10().floor() as i32).clamp(0, 6) as usize;
    format!("{x:.digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    static GAIN: Claim = Claim {
        id: "gain",
        location: "Fig. 1",
        statement: "a gain",
        measure: "gain (%)",
        expect: Expect::Above(0.0),
        figure: "gain.svg",
    };

    #[test]
    fn the_interval_is_students_t_over_the_seeds() {
        let e = Estimate::of(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert_eq!(e.mean, 3.0);
        // s = sqrt(2.5), t(4) = 2.776: 2.776 × sqrt(2.5 / 5).
        assert!((e.half - 2.776 * (0.5f64).sqrt()).abs() < 1e-12, "{}", e.half);
        assert_eq!(Estimate::of(&[7.0]).unwrap().half, 0.0);
        assert!(Estimate::of(&[]).is_none());
    }

    #[test]
    fn a_difference_inside_the_interval_is_no_effect() {
        let ev = |s: &[f64]| Evidence { claim: "gain", samples: s.to_vec(), mechanism: "m".into() };
        assert_eq!(judge(&GAIN, &ev(&[1.0, 1.2, 0.9, 1.1])).verdict, Verdict::Agree);
        assert_eq!(judge(&GAIN, &ev(&[0.5, -0.4, 0.2, -0.1])).verdict, Verdict::NoEffect);
        assert_eq!(judge(&GAIN, &ev(&[-1.0, -1.2, -0.9])).verdict, Verdict::Differ);
        assert_eq!(judge(&GAIN, &ev(&[])).verdict, Verdict::NotComparable);
    }

    #[test]
    fn near_and_within_use_the_mean() {
        let e = Estimate::of(&[10.0, 11.0, 12.0]).unwrap();
        assert_eq!(verdict_of(Expect::Near { value: 10.0, rel: 0.15 }, &e), Verdict::Agree);
        assert_eq!(verdict_of(Expect::Near { value: 14.0, rel: 0.1 }, &e), Verdict::Differ);
        assert_eq!(verdict_of(Expect::Within(5.0, 11.5), &e), Verdict::Agree);
        assert_eq!(verdict_of(Expect::Within(0.0, 5.0), &e), Verdict::Differ);
    }

    #[test]
    fn numbers_print_with_three_significant_digits() {
        assert_eq!(num(3.0), "3");
        assert_eq!(num(4.5678), "4.57");
        assert_eq!(num(0.012345), "0.0123");
        assert_eq!(num(1234.5), "1234");
    }
}
