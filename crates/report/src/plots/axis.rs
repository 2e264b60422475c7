//! Axes of the figures: what a value means (its unit), linear or logarithmic scale, tick
//! positions and tick labels. Durations are carried in nanoseconds and always labelled in
//! µs, ms or s — never as raw nanoseconds — so a reader sees "250 µs", not "250000".

/// What an axis' values are.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Unit {
    /// A duration in nanoseconds, labelled in ns/µs/ms/s.
    Ns,
    /// A percentage (0–100), labelled with `%`.
    Percent,
    /// A count or other plain number, labelled with k/M suffixes when large.
    Plain,
}

impl Unit {
    pub fn name(self) -> &'static str {
        match self {
            Unit::Ns => "duration",
            Unit::Percent => "percent",
            Unit::Plain => "plain",
        }
    }
}

/// One axis of a figure: its description, unit and scale. With `log`, values are drawn at
/// `log10(value)`; non-positive values are left out.
#[derive(Clone, Debug)]
pub struct Axis {
    pub desc: String,
    pub unit: Unit,
    pub log: bool,
    /// A fixed range (utilisation is 0–100 %); otherwise the data's range.
    pub fixed: Option<(f64, f64)>,
}

impl Axis {
    pub fn new(desc: &str, unit: Unit) -> Axis {
        Axis { desc: desc.to_string(), unit, log: false, fixed: None }
    }
    pub fn log(mut self) -> Axis {
        self.log = true;
        self
    }
    pub fn fixed(mut self, lo: f64, hi: f64) -> Axis {
        self.fixed = Some((lo, hi));
        self
    }
    pub fn scale(&self) -> &'static str {
        if self.log {
            "log"
        } else {
            "linear"
        }
    }
    /// Where a value is drawn (`None`: not drawable on a log axis).
    pub fn pos(&self, v: f64) -> Option<f64> {
        if !self.log {
            Some(v)
        } else if v > 0.0 {
            Some(v.log10())
        } else {
            None
        }
    }
    /// The value at a drawing position.
    pub fn value(&self, p: f64) -> f64 {
        if self.log {
            10f64.powf(p)
        } else {
            p
        }
    }

    /// The drawn range `(lo, hi)` for data positions in `[lo, hi]`: padded, never empty, and
    /// widened to whole decades on a log axis.
    pub fn range(&self, lo: f64, hi: f64) -> (f64, f64) {
        if let Some((a, b)) = self.fixed {
            return (self.pos(a).unwrap_or(0.0), self.pos(b).unwrap_or(1.0));
        }
        let (mut lo, mut hi) = if lo > hi { (0.0, 1.0) } else { (lo, hi) };
        if self.log {
            return (lo.floor(), hi.ceil().max(lo.floor() + 1.0));
        }
        // Counts and durations start at zero unless the data is negative.
        if lo > 0.0 && self.unit != Unit::Percent {
            lo = 0.0;
        }
        if hi - lo < 1e-9 {
            hi = lo + 1.0;
        }
        let pad = (hi - lo) * 0.05;
        (if lo < 0.0 { lo - pad } else { lo }, hi + pad)
    }

    /// Tick positions within the drawn range `[lo, hi]`.
    pub fn ticks(&self, lo: f64, hi: f64) -> Vec<f64> {
        if self.log {
            let (a, b) = (lo.ceil() as i64, hi.floor() as i64);
            let decades: Vec<f64> = (a..=b).map(|d| d as f64).collect();
            // Few decades: 2× and 5× between them too.
            if decades.len() <= 3 {
                let mut v: Vec<f64> = Vec::new();
                for d in (a - 1)..=b {
                    for m in [1.0f64, 2.0, 5.0] {
                        let p = d as f64 + m.log10();
                        if p >= lo - 1e-9 && p <= hi + 1e-9 {
                            v.push(p);
                        }
                    }
                }
                return v;
            }
            let step = decades.len().div_ceil(8).max(1);
            return decades.into_iter().step_by(step).collect();
        }
        let step = nice_step((hi - lo) / 6.0, self.unit);
        let mut v = Vec::new();
        let mut t = (lo / step).ceil() * step;
        while t <= hi + step * 1e-9 {
            // -0.0 and 1e-17 print as 0.
            v.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
            t += step;
        }
        v
    }

    /// The label of the tick at drawing position `p`.
    pub fn label(&self, p: f64) -> String {
        let v = self.value(p);
        match self.unit {
            Unit::Ns => duration(v),
            Unit::Percent => format!("{}%", num(v)),
            Unit::Plain => plain(v),
        }
    }
}

/// A tick step of 1, 2 or 5 times a power of ten (for durations, of the unit the step is
/// in), at least `raw`.
fn nice_step(raw: f64, unit: Unit) -> f64 {
    let raw = if raw > 0.0 && raw.is_finite() { raw } else { 1.0 };
    let mag = 10f64.powf(raw.log10().floor());
    let m = [1.0, 2.0, 5.0, 10.0].into_iter().find(|m| m * mag >= raw * (1.0 - 1e-9)).unwrap_or(10.0);
    let step = m * mag;
    if unit == Unit::Plain && step < 1.0 && raw >= 0.5 {
        1.0
    } else {
        step
    }
}

/// A number with at most 3 significant decimals and no trailing zeros (`1.5`, `250`, `0.02`).
pub fn num(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let digits = (3 - v.abs().log10().floor() as i32 - 1).clamp(0, 6) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A duration given in ns, in the largest of ns/µs/ms/s that keeps it ≥ 1.
pub fn duration(ns: f64) -> String {
    let a = ns.abs();
    let (div, unit) = if a >= 1e9 {
        (1e9, "s")
    } else if a >= 1e6 {
        (1e6, "ms")
    } else if a >= 1e3 {
        (1e3, "µs")
    } else {
        (1.0, "ns")
    };
    if ns == 0.0 {
        return "0".into();
    }
    format!("{} {unit}", num(ns / div))
}

/// A plain number; thousands and millions with k and M.
pub fn plain(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", num(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", num(v / 1e3))
    } else {
        num(v)
    }
}

/// About how many pixels a label takes at the tick font size (for sizing label areas so no
/// label is clipped).
pub fn label_px(s: &str) -> u32 {
    (s.chars().count() as u32) * 8 + 14
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_never_raw_nanoseconds_above_a_microsecond() {
        assert_eq!(duration(250_000.0), "250 µs");
        assert_eq!(duration(1_500_000.0), "1.5 ms");
        assert_eq!(duration(2e9), "2 s");
        assert_eq!(duration(999.0), "999 ns");
        assert_eq!(plain(12_000.0), "12k");
        assert_eq!(plain(3.25), "3.25");
    }

    #[test]
    fn log_ticks_are_decades() {
        let a = Axis::new("latency", Unit::Ns).log();
        let (lo, hi) = a.range(3.2, 8.7);
        assert_eq!((lo, hi), (3.0, 9.0));
        let t = a.ticks(lo, hi);
        assert_eq!(t, vec![3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
        let labels: Vec<String> = t.iter().map(|&p| a.label(p)).collect();
        assert_eq!(labels, ["1 µs", "10 µs", "100 µs", "1 ms", "10 ms", "100 ms", "1 s"]);
    }

    #[test]
    fn linear_ticks_are_round() {
        let a = Axis::new("time", Unit::Ns);
        let (lo, hi) = a.range(0.0, 2.5e9);
        let t = a.ticks(lo, hi);
        assert_eq!(t[0], 0.0);
        assert!(t.windows(2).all(|w| (w[1] - w[0] - 5e8).abs() < 1.0), "{t:?}");
        assert_eq!(a.label(t[1]), "500 ms");
    }
}
