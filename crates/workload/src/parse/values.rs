//! The typed values of a workload: durations, distributions, slices, CPU lists, string
//! lists and scheduling policies with their `sched_attr` parameters.

use super::{join, DeValue, P, R, V};
use crate::{Policy, MAX_DURATION, MAX_MEMORY_BYTES};
use schedlab_machine::CpuSet;
use schedlab_sim::{parse_duration, Distribution, Ns};
use toml::de::DeTable;

/// The keys that go with a policy (`sched_attr`): `rt_priority` for fifo/rr, `runtime`,
/// `deadline` and `period` for deadline.
pub(super) const POLICY_PARAMS: &[&str] = &["rt_priority", "runtime", "deadline", "period"];

/// Custom slice bounds (`kernel/sched/syscalls.c: __setscheduler_params`, v6.12: the
/// kernel clamps `sched_runtime` to 0.1–100 ms; a workload file outside them is an error).
pub const SLICE_MIN: Ns = Ns(100_000);
pub const SLICE_MAX: Ns = Ns(100_000_000);

impl<'a> P<'a> {
    /// A policy name `v` and the parameters beside it in table `t` (`sched_attr`):
    /// `rt_priority` 1..=99 for fifo/rr; `runtime` with `deadline` and/or `period` (each
    /// defaulting to the other: an implicit deadline) for deadline, valid per
    /// `deadline.c:__checkparam_dl`. A parameter the policy does not take is an error.
    pub(super) fn policy(&self, t: &DeTable<'a>, v: &V, table: &str, field: &str) -> R<Policy> {
        let name = self.string(v, field)?;
        let take: &[&str] = match name.as_str() {
            "fifo" | "rr" => &["rt_priority"],
            "deadline" => &["runtime", "deadline", "period"],
            "normal" | "batch" | "idle" | "ext" => &[],
            o => {
                return Err(self.err(
                    v.span().start,
                    field,
                    format!("unknown policy `{o}`; expected normal, batch, idle, ext, fifo, rr or deadline"),
                ))
            }
        };
        for k in POLICY_PARAMS.iter().filter(|k| !take.contains(k)) {
            if let Some(x) = self.get(t, k) {
                return Err(self.err(x.span().start, &join(table, k), format!("policy `{name}` takes no `{k}`")));
            }
        }
        let at = v.span().start;
        Ok(match name.as_str() {
            "normal" => Policy::Normal,
            "batch" => Policy::Batch,
            "idle" => Policy::Idle,
            "ext" => Policy::Ext,
            "fifo" | "rr" => {
                let f = join(table, "rt_priority");
                let x = self.require(t, "rt_priority", at, table)?;
                let n = self.int(x, &f)?;
                let (lo, hi) = (schedlab_sched_api::RT_PRIO_MIN, schedlab_sched_api::RT_PRIO_MAX);
                if n < i64::from(lo) || n > i64::from(hi) {
                    return Err(self.err(x.span().start, &f, format!("rt_priority {n} outside {lo}..={hi}")));
                }
                let prio = n as u8;
                if name == "fifo" {
                    Policy::Fifo { prio }
                } else {
                    Policy::Rr { prio }
                }
            }
            _ => Policy::Deadline(self.dl_params(t, at, table)?),
        })
    }
    fn dl_params(&self, t: &DeTable<'a>, at: usize, table: &str) -> R<crate::DlParams> {
        let runtime = self.duration(self.require(t, "runtime", at, table)?, &join(table, "runtime"))?.0;
        let dur = |k: &str| self.get(t, k).map(|x| self.duration(x, &join(table, k))).transpose();
        let (deadline, period) = match (dur("deadline")?, dur("period")?) {
            (Some(d), Some(p)) => (d.0, p.0),
            (Some(d), None) => (d.0, d.0),
            (None, Some(p)) => (p.0, p.0),
            (None, None) => {
                return Err(self.err(at, &join(table, "period"), "deadline needs `period` and/or `deadline`"))
            }
        };
        let dl = crate::DlParams { runtime, deadline, period };
        dl.check().map_err(|m| self.err(at, table, format!("invalid deadline parameters: {m}")))?;
        Ok(dl)
    }
    /// Without `policy`, no policy parameter may be given.
    pub(super) fn no_policy_params(&self, t: &DeTable<'a>, table: &str) -> R<()> {
        for k in POLICY_PARAMS {
            if let Some(x) = self.get(t, k) {
                return Err(self.err(x.span().start, &join(table, k), format!("`{k}` needs a `policy` that takes it")));
            }
        }
        Ok(())
    }
    /// A duration of at most [`MAX_DURATION`].
    pub(super) fn duration(&self, v: &V, field: &str) -> R<Ns> {
        let at = v.span().start;
        match v.get_ref() {
            DeValue::String(s) => {
                let s = self.subst_text(s);
                let d = parse_duration(&s).map_err(|m| self.err(at, field, m))?;
                if d > MAX_DURATION {
                    return Err(self.err(
                        at,
                        field,
                        format!("{d} exceeds the limit of {MAX_DURATION} for a single duration"),
                    ));
                }
                Ok(d)
            }
            DeValue::Integer(i) if i.as_str() == "0" => Ok(Ns(0)),
            DeValue::Integer(i) => Err(self.err(
                at,
                field,
                format!("missing unit: write a string such as \"{}ms\" (units: ns, us, ms, s)", i.as_str()),
            )),
            DeValue::Float(f) => {
                Err(self.err(at, field, format!("missing unit: write \"{}ms\" (units: ns, us, ms, s)", f.as_str())))
            }
            _ => Err(self.err(at, field, "expected a duration such as \"5ms\"")),
        }
    }
    pub(super) fn dist(&self, v: &V, field: &str) -> R<Distribution> {
        let DeValue::Table(t) = v.get_ref() else {
            return Ok(Distribution::Constant(self.duration(v, field)?));
        };
        let at = v.span().start;
        let kind_v = self.require(t, "dist", at, field)?;
        let kind = self.string(kind_v, &join(field, "dist"))?;
        let d = |k: &str| -> R<Ns> { self.duration(self.require(t, k, at, field)?, &join(field, k)) };
        Ok(match kind.as_str() {
            "constant" => {
                self.check_keys(t, &["dist", "value"], field)?;
                Distribution::Constant(d("value")?)
            }
            "uniform" => {
                self.check_keys(t, &["dist", "min", "max"], field)?;
                let (min, max) = (d("min")?, d("max")?);
                if max < min {
                    return Err(self.err(at, &join(field, "max"), "max must be >= min"));
                }
                Distribution::Uniform { min, max }
            }
            "exponential" => {
                self.check_keys(t, &["dist", "mean"], field)?;
                Distribution::Exponential { mean: d("mean")? }
            }
            "normal" => {
                self.check_keys(t, &["dist", "mean", "stddev", "min", "max"], field)?;
                let mean = d("mean")?;
                let stddev = d("stddev")?;
                let min = if self.get(t, "min").is_some() { d("min")? } else { Ns(0) };
                let max = if self.get(t, "max").is_some() {
                    d("max")?
                } else {
                    Ns(mean.0.saturating_mul(2).max(mean.0 + 4 * stddev.0))
                };
                if max < min {
                    return Err(self.err(at, &join(field, "max"), "max must be >= min"));
                }
                Distribution::Normal { mean, stddev, min, max }
            }
            other => {
                return Err(self.err(
                    kind_v.span().start,
                    &join(field, "dist"),
                    format!("unknown distribution `{other}`; expected constant, uniform, exponential or normal"),
                ))
            }
        })
    }
    /// A custom slice: a duration in `SLICE_MIN..=SLICE_MAX`, or `"default"` / 0 for the
    /// scheduler's base slice (a parameter may stand for either).
    pub(super) fn slice(&self, v: &V, field: &str) -> R<Option<Ns>> {
        if let DeValue::String(s) = v.get_ref() {
            if self.subst_text(s) == "default" {
                return Ok(None);
            }
        }
        let d = self.duration(v, field)?;
        if d.0 == 0 {
            return Ok(None);
        }
        if d < SLICE_MIN || d > SLICE_MAX {
            return Err(self.err(v.span().start, field, format!("slice {d} outside {SLICE_MIN}..={SLICE_MAX}")));
        }
        Ok(Some(d))
    }

    /// A size in bytes: an integer, or a string with a unit (`"512KiB"`; B, KiB, MiB, GiB;
    /// decimals that give whole bytes), at most [`MAX_MEMORY_BYTES`].
    pub(super) fn bytes(&self, v: &V, field: &str) -> R<u64> {
        let at = v.span().start;
        let text = match v.get_ref() {
            DeValue::String(s) => self.subst_text(s),
            DeValue::Integer(_) => self.nonneg(v, field)?.to_string(),
            _ => return Err(self.err(at, field, "expected a size such as \"512KiB\"")),
        };
        let kind = schedlab_machine::spec::Kind::Bytes { min: 0, max: MAX_MEMORY_BYTES };
        kind.parse(text.trim()).map(|b| b.num()).map_err(|m| self.err(at, field, m))
    }

    /// A fraction in `0..=1` (`0.35`, or `0`/`1`), as permille; finer than 0.001 is an error.
    pub(super) fn permille(&self, v: &V, field: &str) -> R<u32> {
        let at = v.span().start;
        let text = match v.get_ref() {
            DeValue::Float(f) => f.as_str().to_string(),
            DeValue::Integer(_) => self.nonneg(v, field)?.to_string(),
            DeValue::String(s) if self.param_ref(s).is_some() => self.subst_text(s),
            _ => return Err(self.err(at, field, "expected a fraction from 0 to 1, such as 0.35")),
        };
        let what = "a fraction from 0 to 1, such as 0.35";
        let p = schedlab_machine::spec::parse_scaled(&format!("{}x", text.trim()), &[("x", 1000)], true, what)
            .map_err(|m| self.err(at, field, m.replace(&format!("{}x", text.trim()), text.trim())))?;
        if p > 1000 {
            return Err(self.err(at, field, format!("{} is above 1 (the whole run time)", text.trim())));
        }
        Ok(p as u32)
    }

    /// A non-empty array of strings.
    pub(super) fn string_list(&self, v: &V, field: &str) -> R<Vec<String>> {
        let DeValue::Array(a) = v.get_ref() else {
            return Err(self.err(v.span().start, field, "expected an array of strings"));
        };
        let out = a.iter().enumerate().map(|(i, e)| self.string(e, &format!("{field}[{i}]"))).collect::<R<Vec<_>>>()?;
        if out.is_empty() {
            return Err(self.err(v.span().start, field, "name at least one"));
        }
        Ok(out)
    }

    pub(super) fn cpuset(&self, v: &V, field: &str) -> R<CpuSet> {
        let at = v.span().start;
        let set = match v.get_ref() {
            DeValue::String(s) if self.subst_text(s) == "all" => CpuSet::full(self.nr_cpus),
            DeValue::String(s) => CpuSet::parse_list(&self.subst_text(s)).map_err(|m| self.err(at, field, m))?,
            DeValue::Integer(_) => CpuSet::single(1, self.nonneg(v, field)? as usize),
            DeValue::Array(a) => {
                let mut set = CpuSet::empty(self.nr_cpus);
                for e in a.iter() {
                    let c = self.nonneg(e, field)?;
                    if c as usize >= schedlab_machine::MAX_CPUS {
                        return Err(self.err(e.span().start, field, format!("CPU {c} is beyond any machine")));
                    }
                    set.insert(c as usize);
                }
                if set.is_empty() {
                    return Err(self.err(at, field, "empty CPU list"));
                }
                set
            }
            _ => return Err(self.err(at, field, "expected a CPU list such as \"0-3,6\" or [0, 1]")),
        };
        if let Some(bad) = set.iter().find(|&c| c >= self.nr_cpus) {
            return Err(self.err(
                at,
                field,
                format!("CPU {bad} is outside the machine, which has CPUs 0-{}", self.nr_cpus - 1),
            ));
        }
        Ok(set)
    }
}
