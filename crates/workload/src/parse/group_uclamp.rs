//! A `[[group]]`'s `uclamp_min` / `uclamp_max` (cgroup v2 `cpu.uclamp.min` / `.max`).

use super::{join, DeValue, P, R, V};
use schedlab_sched_api::UclampReq;
use toml::de::DeTable;

/// `UCLAMP_PERCENT_SHIFT` (core.c v5.15, v6.18): the files take two decimals.
const UCLAMP_PERCENT_SHIFT: u32 = 2;
/// `UCLAMP_PERCENT_SCALE`: 100 % in hundredths.
const UCLAMP_PERCENT_SCALE: u64 = 100 * 10u64.pow(UCLAMP_PERCENT_SHIFT);

impl P<'_> {
    /// Both keys of table `t` (field prefix `f`); a minimum above the maximum is allowed,
    /// as `cpu_uclamp_write` allows it (`cpu_util_update_eff` then caps the effective
    /// minimum by the maximum).
    pub(super) fn group_uclamp(&self, t: &DeTable, f: &str) -> R<UclampReq> {
        let one = |key: &str| self.get(t, key).map(|v| self.capacity_from_percent(v, &join(f, key))).transpose();
        Ok(UclampReq { min: one("uclamp_min")?, max: one("uclamp_max")? })
    }

    /// `capacity_from_percent` (core.c v5.15, v6.18): `"max"` is 1024; else a percentage
    /// read as `cgroup_parse_float` reads it (two decimals, further digits rounded to the
    /// closest), refused above 100 % or below 0 (ERANGE: the kernel compares it as
    /// unsigned), then `DIV_ROUND_CLOSEST(percent × 1024, 10000)`.
    fn capacity_from_percent(&self, v: &V, field: &str) -> R<u32> {
        let at = v.span().start;
        let text = match v.get_ref() {
            // A workload parameter (`"$boost"`) stands for its text: "max" or a number.
            DeValue::String(s) if self.param_ref(s).is_some() => self.subst_text(s),
            _ => String::new(),
        };
        if text.trim() == "max" {
            return Ok(1024);
        }
        let text = match v.get_ref() {
            _ if !text.is_empty() => text,
            DeValue::String(s) if s.trim() == "max" => return Ok(1024),
            DeValue::Integer(i) if i.radix() == 10 => i.as_str().to_string(),
            DeValue::Float(x) => x.as_str().to_string(),
            _ => return Err(self.err(at, field, "expected a percentage (0 to 100, two decimals) or \"max\"")),
        };
        let text = text.replace('_', "");
        let bad = || self.err(at, field, format!("`{text}` is not a percentage like 20 or 12.5 (cgroup_parse_float)"));
        let (whole, frac) = text.split_once('.').unwrap_or((&text, ""));
        if whole.starts_with('-') {
            return Err(self.err(at, field, format!("{text} % is below 0 (cpu.uclamp.* refuses it, ERANGE)")));
        }
        let whole: u64 = whole.trim_start_matches('+').parse().map_err(|_| bad())?;
        if !frac.chars().all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        let frac_v: u64 = if frac.is_empty() { 0 } else { frac.parse().map_err(|_| bad())? };
        let flen = frac.len() as u32;
        let frac_v = if flen < UCLAMP_PERCENT_SHIFT {
            frac_v * 10u64.pow(UCLAMP_PERCENT_SHIFT - flen)
        } else {
            let d = 10u64.checked_pow(flen - UCLAMP_PERCENT_SHIFT).ok_or_else(bad)?;
            (frac_v + d / 2) / d
        };
        let percent = whole.checked_mul(10u64.pow(UCLAMP_PERCENT_SHIFT)).and_then(|w| w.checked_add(frac_v));
        match percent {
            Some(p) if p <= UCLAMP_PERCENT_SCALE => {
                Ok((((p << 10) + UCLAMP_PERCENT_SCALE / 2) / UCLAMP_PERCENT_SCALE) as u32)
            }
            _ => Err(self.err(at, field, format!("{text} % is above 100 (cpu.uclamp.* refuses it, ERANGE)"))),
        }
    }
}
