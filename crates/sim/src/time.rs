//! Time: `Ns`, integer nanoseconds for both instants and durations, and duration parsing
//! with explicit units (`3ms`, `250us`).

use std::fmt;

pub const NSEC_PER_USEC: u64 = 1_000;
pub const NSEC_PER_MSEC: u64 = 1_000_000;
pub const NSEC_PER_SEC: u64 = 1_000_000_000;

/// Simulated time or duration in integer nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ns(pub u64);

impl Ns {
    pub const ZERO: Ns = Ns(0);
    pub const MAX: Ns = Ns(u64::MAX);
    pub const fn from_us(us: u64) -> Ns {
        Ns(us * NSEC_PER_USEC)
    }
    pub const fn from_ms(ms: u64) -> Ns {
        Ns(ms * NSEC_PER_MSEC)
    }
    pub const fn from_secs(s: u64) -> Ns {
        Ns(s * NSEC_PER_SEC)
    }
    pub fn saturating_sub(self, o: Ns) -> Ns {
        Ns(self.0.saturating_sub(o.0))
    }
}

/// Time arithmetic saturates at [`Ns::MAX`] ("never") instead of wrapping: a deadline past
/// the end of time must stay in the future, not wrap around to just after now. Inputs are
/// capped well below (a workload's durations, a run's length), so saturation only guards.
impl std::ops::Add for Ns {
    type Output = Ns;
    fn add(self, o: Ns) -> Ns {
        Ns(self.0.saturating_add(o.0))
    }
}
impl std::ops::AddAssign for Ns {
    fn add_assign(&mut self, o: Ns) {
        self.0 = self.0.saturating_add(o.0);
    }
}
impl std::ops::Sub for Ns {
    type Output = Ns;
    fn sub(self, o: Ns) -> Ns {
        Ns(self.0 - o.0)
    }
}

impl fmt::Display for Ns {
    /// Human form with the largest unit that keeps the value exact to 3 decimals.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        let (unit, div) = if v >= NSEC_PER_SEC {
            ("s", NSEC_PER_SEC)
        } else if v >= NSEC_PER_MSEC {
            ("ms", NSEC_PER_MSEC)
        } else if v >= NSEC_PER_USEC {
            ("us", NSEC_PER_USEC)
        } else {
            return write!(f, "{v}ns");
        };
        let whole = v / div;
        let frac = (v % div) * 1000 / div;
        if frac == 0 {
            write!(f, "{whole}{unit}")
        } else {
            write!(f, "{whole}.{frac:03}{unit}")
        }
    }
}

/// Parses a duration with a mandatory unit: `250us`, `3ms`, `1.5s`, `40ns`, `0`.
///
/// Decimals are handled in integer arithmetic (no floating point), so `0.1ms` is exactly
/// 100000 ns. A bare `0` is accepted as zero; any other number without a unit is an error.
pub fn parse_duration(s: &str) -> Result<Ns, String> {
    let t = s.trim();
    if t == "0" {
        return Ok(Ns(0));
    }
    if t.starts_with('-') {
        return Err(format!("negative duration `{t}`: durations must be >= 0"));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .ok_or_else(|| format!("missing unit in `{t}`: write e.g. `{t}ms` (units: ns, us, ms, s)"))?;
    let (num, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "ns" => 1,
        "us" | "µs" => NSEC_PER_USEC,
        "ms" => NSEC_PER_MSEC,
        "s" => NSEC_PER_SEC,
        u => return Err(format!("unknown unit `{u}` in `{t}` (units: ns, us, ms, s)")),
    };
    let num = num.replace('_', "");
    if num.is_empty() {
        return Err(format!("missing number in `{t}`"));
    }
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num.as_str(), ""),
    };
    let bad = || format!("malformed number in `{t}`");
    let int: u64 = if int.is_empty() { 0 } else { int.parse().map_err(|_| bad())? };
    let mut total = int.checked_mul(scale).ok_or_else(|| format!("duration `{t}` too large"))?;
    let mut place = scale;
    for c in frac.chars() {
        let d = c.to_digit(10).ok_or_else(bad)? as u64;
        place /= 10;
        if place == 0 {
            if d != 0 {
                return Err(format!("`{t}` is finer than one nanosecond"));
            }
            continue;
        }
        total += d * place;
    }
    Ok(Ns(total))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parses_units_exactly() {
        assert_eq!(parse_duration("3ms"), Ok(Ns(3_000_000)));
        assert_eq!(parse_duration("250us"), Ok(Ns(250_000)));
        assert_eq!(parse_duration("1.5s"), Ok(Ns(1_500_000_000)));
        assert_eq!(parse_duration("0.1ms"), Ok(Ns(100_000)));
        assert_eq!(parse_duration("0"), Ok(Ns(0)));
        assert!(parse_duration("5").unwrap_err().contains("missing unit"));
        assert!(parse_duration("-5ms").unwrap_err().contains("negative"));
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("1.0001ns").is_err());
    }
    #[test]
    fn addition_saturates_instead_of_wrapping() {
        let far = Ns(u64::MAX - 5);
        assert_eq!(far + Ns(10), Ns::MAX);
        let mut t = Ns::from_secs(1);
        t += Ns(u64::MAX);
        assert_eq!(t, Ns::MAX);
    }
    #[test]
    fn displays_compactly() {
        assert_eq!(Ns(16_000_000).to_string(), "16ms");
        assert_eq!(Ns(1_500).to_string(), "1.500us");
    }
}
