//! `[[group]]` (cgroup v2 cpu controller) and `[[session]]` (autogroup) tables, and the
//! task fields that refer to them.

use super::{join, DeValue, P, R, V};
use schedlab_sched_api::{
    sched_weight_to_cgroup, shares_of_nice, CgroupDef, CpuMax, Partition, SessionDef, TaskGroups,
};
use std::collections::BTreeMap;
use toml::de::DeTable;

/// cgroup v2 `cpu.weight` range (`kernel/sched/core.c: cpu_weight_write_u64`:
/// `CGROUP_WEIGHT_MIN`..=`CGROUP_WEIGHT_MAX`).
pub const CPU_WEIGHT_MIN: i64 = 1;
pub const CPU_WEIGHT_MAX: i64 = 10_000;
/// `CGROUP_WEIGHT_DFL`.
pub const CPU_WEIGHT_DEFAULT: u32 = 100;

/// `min_cfs_quota_period` / `min_bw_quota_period_us` (core.c 5.15 / 6.18): the smallest
/// quota and period `tg_set_cfs_bandwidth` accepts, 1 ms.
pub const MIN_CFS_QUOTA_PERIOD: u64 = 1_000_000;
/// `max_cfs_quota_period` / `max_bw_quota_period_us`: the largest period, 1 s.
pub const MAX_CFS_QUOTA_PERIOD: u64 = 1_000_000_000;
/// `max_cfs_runtime` = `MAX_BW` µs (`BW_SHIFT` = 20: 2^44 − 1 µs), the largest quota and
/// quota + burst.
pub const MAX_CFS_RUNTIME: u64 = ((1 << 44) - 1) * 1000;

/// The cgroups and sessions, with each one's index by name (tasks name them).
pub(super) struct Groups {
    pub defs: TaskGroups,
    cgroups: BTreeMap<String, usize>,
    sessions: BTreeMap<String, usize>,
}

/// A `[[group]]` as written: its name, parent's name, weight (and nice level, when given as
/// `weight_nice`), idleness, the offset of the table and of `parent` (or of the table
/// without one).
struct RawGroup {
    name: String,
    parent: Option<String>,
    weight: u32,
    nice: Option<i32>,
    idle: bool,
    max: CpuMax,
    cpus: Option<schedlab_machine::CpuSet>,
    partition: Partition,
    /// Where `partition` is written (the table's start without one).
    partition_at: usize,
    uclamp: schedlab_sched_api::UclampReq,
    parent_at: usize,
}

impl P<'_> {
    /// Parses `[[group]]` and `[[session]]`: names unique, parents known and acyclic,
    /// weights and nice values in range. Cgroups come out parents first.
    pub(super) fn task_groups(&self, root: &DeTable) -> R<Groups> {
        let cgroups = self.cgroups(root)?;
        let mut sessions = Vec::new();
        let mut session_index = BTreeMap::new();
        for (i, item, t) in self.array_of_tables(root, "session")? {
            self.step()?;
            let f = format!("session[{i}]");
            self.check_keys(t, &["name", "nice"], &f)?;
            let name = self.string(self.require(t, "name", item.span().start, &f)?, &join(&f, "name"))?;
            if session_index.insert(name.clone(), sessions.len()).is_some() {
                return Err(self.err(
                    item.span().start,
                    &join(&f, "name"),
                    format!("session `{name}` is declared twice"),
                ));
            }
            let nice = match self.get(t, "nice") {
                Some(v) => {
                    let n = self.int(v, &join(&f, "nice"))?;
                    super::check_nice(n).map_err(|m| self.err(v.span().start, &join(&f, "nice"), m))?;
                    n as i32
                }
                None => 0,
            };
            sessions.push(SessionDef { name, nice });
        }
        let cgroup_index = cgroups.iter().enumerate().map(|(i, g)| (g.name.clone(), i)).collect();
        Ok(Groups { defs: TaskGroups { cgroups, sessions }, cgroups: cgroup_index, sessions: session_index })
    }

    pub(super) fn array_of_tables<'t>(
        &self,
        root: &'t DeTable<'_>,
        kind: &str,
    ) -> R<Vec<(usize, &'t V<'t>, &'t DeTable<'t>)>>
    where
        Self: 't,
    {
        let Some(v) = root.iter().find(|(k, _)| k.get_ref() == kind).map(|(_, v)| v) else { return Ok(Vec::new()) };
        let DeValue::Array(items) = v.get_ref() else {
            return Err(self.err(v.span().start, kind, format!("expected `[[{kind}]]` tables")));
        };
        items.iter().enumerate().map(|(i, item)| Ok((i, item, self.table(item, &format!("{kind}[{i}]"))?))).collect()
    }

    fn cgroups(&self, root: &DeTable) -> R<Vec<CgroupDef>> {
        let mut raw: Vec<RawGroup> = Vec::new();
        let mut index = BTreeMap::new();
        for (i, item, t) in self.array_of_tables(root, "group")? {
            self.step()?;
            let f = format!("group[{i}]");
            self.check_keys(
                t,
                &[
                    "name",
                    "weight",
                    "weight_nice",
                    "idle",
                    "parent",
                    "max",
                    "burst",
                    "cpus",
                    "partition",
                    "uclamp_min",
                    "uclamp_max",
                ],
                &f,
            )?;
            let name = self.string(self.require(t, "name", item.span().start, &f)?, &join(&f, "name"))?;
            if index.insert(name.clone(), i).is_some() {
                return Err(self.err(
                    item.span().start,
                    &join(&f, "name"),
                    format!("group `{name}` is declared twice"),
                ));
            }
            let (weight, nice) = self.cgroup_weight(t, &f)?;
            let (parent, parent_at) = match self.get(t, "parent") {
                Some(v) => (Some(self.string(v, &join(&f, "parent"))?), v.span().start),
                None => (None, item.span().start),
            };
            let max = self.cpu_max(t, &f)?;
            // `cpuset.cpus`: a CPU list within the machine (`update_cpumask` → EINVAL
            // outside `cpu_possible_mask`), not empty.
            let cpus = self.get(t, "cpus").map(|v| self.cpuset(v, &join(&f, "cpus"))).transpose()?;
            let idle = self.flag(t, "idle", &f)?;
            let (partition, partition_at) = match self.get(t, "partition") {
                Some(v) => (self.partition(v, &join(&f, "partition"))?, v.span().start),
                None => (Partition::Member, item.span().start),
            };
            let uclamp = self.group_uclamp(t, &f)?;
            raw.push(RawGroup {
                name,
                parent,
                weight,
                nice,
                idle,
                max,
                cpus,
                partition,
                partition_at,
                uclamp,
                parent_at,
            });
        }
        let defs = self.order_cgroups(&raw, &index)?;
        self.check_partitions(&raw, &defs, &index)?;
        Ok(defs)
    }

    /// A group's `partition` (`cpuset.cpus.partition`): `member`, `root` or `isolated`.
    fn partition(&self, v: &V, field: &str) -> R<Partition> {
        match self.string(v, field)?.as_str() {
            "member" => Ok(Partition::Member),
            "root" => Ok(Partition::Root),
            "isolated" => Ok(Partition::Isolated),
            other => Err(self.err(
                v.span().start,
                field,
                format!("unknown partition type `{other}` (member, root or isolated)"),
            )),
        }
    }

    /// Refuses a partition root the kernel would leave invalid (cgroup v2
    /// `cpuset.cpus.partition`, `kernel/cgroup/cpuset.c: update_prstate`,
    /// `update_parent_effective_cpumask`, `validate_change`, v6.12), each with the
    /// `partition_error` text the kernel shows in `cpuset.cpus.partition`:
    /// `cpus` must be set (PERR_CPUSEMPTY); the parent must be the root cgroup or a
    /// partition root (PERR_PARENT: a local partition — remote ones need
    /// `cpuset.cpus.exclusive`, not modelled); its CPUs must not overlap any sibling's
    /// `cpus` (PERR_NOTEXCL: a partition root is `CS_CPU_EXCLUSIVE`, and `validate_change`
    /// refuses an exclusive cpuset overlapping a sibling); some of them must be the
    /// parent's (PERR_INVCPUS: its exclusive CPUs are `cpus` ∩ the parent's); and the
    /// parent must keep a CPU (PERR_NOCPUS: the root cgroup always has tasks — kernel
    /// threads —, and a nested parent is refused too, which the kernel allows only while
    /// the parent has no task of its own).
    fn check_partitions(&self, raw: &[RawGroup], defs: &[CgroupDef], index: &BTreeMap<String, usize>) -> R<()> {
        let n = self.nr_cpus;
        // Per group (file order), its exclusive CPUs once it is a partition root.
        let mut xcpus: Vec<Option<schedlab_machine::CpuSet>> = vec![None; raw.len()];
        for d in defs {
            let i = index[&d.name];
            let r = &raw[i];
            if !r.partition.is_root() {
                continue;
            }
            let field = format!("group[{i}].partition");
            let fail = |m: String| Err(self.err(r.partition_at, &field, m));
            let Some(cpus) = &r.cpus else {
                return fail(format!("partition root `{}` has no `cpus` (cpuset.cpus empty: PERR_CPUSEMPTY)", r.name));
            };
            let parent = r.parent.as_ref().map(|p| index[p]);
            let mut own = match parent {
                None => schedlab_machine::CpuSet::full(n),
                Some(p) => match &xcpus[p] {
                    Some(x) => x.clone(),
                    None => {
                        return fail(format!(
                            "partition root `{}` under `{}`, which is not a partition root (PERR_PARENT)",
                            r.name, raw[p].name
                        ))
                    }
                },
            };
            let parent_cpus = own.clone();
            own.intersect_with(cpus);
            if own.is_empty() {
                return fail(format!("partition root `{}`: none of its cpus is its parent's (PERR_INVCPUS)", r.name));
            }
            let sibling = (0..raw.len()).find(|&j| {
                j != i && raw[j].parent == r.parent && raw[j].cpus.as_ref().is_some_and(|c| c.intersects(cpus))
            });
            if let Some(j) = sibling {
                return fail(format!(
                    "partition root `{}`: its cpus overlap those of sibling `{}` (cpus not exclusive: PERR_NOTEXCL)",
                    r.name, raw[j].name
                ));
            }
            xcpus[i] = Some(own);
            // What the parent keeps once every sibling partition took its CPUs.
            let mut left = parent_cpus;
            for (j, x) in xcpus.iter().enumerate() {
                if let Some(x) = x.as_ref().filter(|_| raw[j].parent == r.parent) {
                    for c in x.iter() {
                        left.remove(c);
                    }
                }
            }
            if left.is_empty() {
                let parent = r.parent.as_deref().unwrap_or("the root cgroup");
                return fail(format!("partition root `{}` would leave {parent} no CPU (PERR_NOCPUS)", r.name));
            }
        }
        Ok(())
    }

    /// A group's `weight` (`cpu.weight`) or `weight_nice` (`cpu.weight.nice`: the group's
    /// shares become that nice level's weight, `cpu_weight_nice_write_s64`, core.c v5.15,
    /// v6.18), at most one of them, and neither on an idle group: `sched_group_set_shares`
    /// refuses (EINVAL) while `tg_is_idle`, and writing `cpu.idle` resets the shares, so a
    /// weight beside `idle = true` would be lost either way. The weight with `weight_nice`
    /// is what `cpu.weight` then reads (`sched_weight_to_cgroup`).
    fn cgroup_weight(&self, t: &DeTable, f: &str) -> R<(u32, Option<i32>)> {
        let (w, n) = (self.get(t, "weight"), self.get(t, "weight_nice"));
        if let (Some(_), Some(v)) = (w, n) {
            return Err(self.err(
                v.span().start,
                &join(f, "weight_nice"),
                "`weight` and `weight_nice` both set (cpu.weight and cpu.weight.nice are two views of one \
                 value: give one)",
            ));
        }
        if let Some(v) = w.or(n) {
            if self.flag(t, "idle", f)? {
                let key = if w.is_some() { "weight" } else { "weight_nice" };
                return Err(self.err(
                    v.span().start,
                    &join(f, key),
                    "an idle group (`idle = true`) has no settable weight (sched_group_set_shares \
                     refuses it while cpu.idle is 1)",
                ));
            }
        }
        if let Some(v) = n {
            let field = join(f, "weight_nice");
            let nice = self.int(v, &field)?;
            if !(-20..=19).contains(&nice) {
                return Err(self.err(
                    v.span().start,
                    &field,
                    format!("cpu.weight.nice {nice} outside -20..=19 (cpu_weight_nice_write_s64: ERANGE)"),
                ));
            }
            let nice = nice as i32;
            return Ok((sched_weight_to_cgroup(shares_of_nice(nice)), Some(nice)));
        }
        Ok((
            match w {
                Some(v) => {
                    let w = self.int(v, &join(f, "weight"))?;
                    if !(CPU_WEIGHT_MIN..=CPU_WEIGHT_MAX).contains(&w) {
                        return Err(self.err(
                            v.span().start,
                            &join(f, "weight"),
                            format!("cpu.weight {w} outside {CPU_WEIGHT_MIN}..={CPU_WEIGHT_MAX}"),
                        ));
                    }
                    w as u32
                }
                None => CPU_WEIGHT_DEFAULT,
            },
            None,
        ))
    }

    /// A group's `max = "QUOTA/PERIOD"` (cgroup v2 `cpu.max`; `QUOTA` may be `max`, and a
    /// lone `QUOTA` keeps the default 100 ms period, as writing one number to `cpu.max`
    /// does) and `burst` (`cpu.max.burst`), refused where `tg_set_cfs_bandwidth` (core.c
    /// v5.15, v6.18) returns EINVAL: quota or period below 1 ms, period above 1 s, quota or
    /// quota + burst above `max_cfs_runtime`, burst above the quota. A quota above
    /// period × CPUs is allowed, as the kernel allows it (it never binds). The files are in
    /// microseconds, so a value must be a whole number of them.
    fn cpu_max(&self, t: &DeTable, f: &str) -> R<CpuMax> {
        let mut max = CpuMax::default();
        if let Some(v) = self.get(t, "max") {
            let field = join(f, "max");
            let at = v.span().start;
            let text = self.string(v, &field)?;
            let (q, p) = match text.split_once('/') {
                Some((q, p)) => (q.trim(), Some(p.trim())),
                None => (text.trim(), None),
            };
            let us = |s: &str, what: &str| -> R<u64> {
                let d = schedlab_sim::parse_duration(s).map_err(|m| self.err(at, &field, format!("{what}: {m}")))?.0;
                if d % 1000 != 0 {
                    return Err(self.err(
                        at,
                        &field,
                        format!("{what} `{s}` is not a whole number of µs (cpu.max is in µs)"),
                    ));
                }
                Ok(d)
            };
            if let Some(p) = p {
                max.period = us(p, "period")?;
            }
            if !(MIN_CFS_QUOTA_PERIOD..=MAX_CFS_QUOTA_PERIOD).contains(&max.period) {
                return Err(self.err(
                    at,
                    &field,
                    format!("period {} outside 1ms..=1s (tg_set_cfs_bandwidth)", schedlab_sim::Ns(max.period)),
                ));
            }
            if q != "max" {
                let quota = us(q, "quota")?;
                if quota < MIN_CFS_QUOTA_PERIOD {
                    return Err(self.err(
                        at,
                        &field,
                        format!("quota {} below 1ms (tg_set_cfs_bandwidth refuses it)", schedlab_sim::Ns(quota)),
                    ));
                }
                if quota > MAX_CFS_RUNTIME {
                    return Err(self.err(
                        at,
                        &field,
                        format!("quota {} above max_cfs_runtime (2^44 - 1 µs)", schedlab_sim::Ns(quota)),
                    ));
                }
                max.quota = Some(quota);
            }
        }
        if let Some(v) = self.get(t, "burst") {
            let field = join(f, "burst");
            let burst = self.duration(v, &field)?.0;
            if burst % 1000 != 0 {
                return Err(self.err(
                    v.span().start,
                    &field,
                    "burst is not a whole number of µs (cpu.max.burst is in µs)",
                ));
            }
            if let Some(q) = max.quota {
                if burst > q || burst + q > MAX_CFS_RUNTIME {
                    let msg = format!(
                        "burst {} above the quota {} (tg_set_cfs_bandwidth refuses it)",
                        schedlab_sim::Ns(burst),
                        schedlab_sim::Ns(q)
                    );
                    return Err(self.err(v.span().start, &field, msg));
                }
            }
            max.burst = burst;
        }
        Ok(max)
    }

    /// Resolves parent names (`index`: each group's by name) and orders groups parents
    /// first, as Kahn's algorithm emits them scanning in file order until nothing changes
    /// ([`scan_passes`]); a cycle is an error at the `parent` field of a group on it.
    fn order_cgroups(&self, raw: &[RawGroup], index: &BTreeMap<String, usize>) -> R<Vec<CgroupDef>> {
        let mut parent_of = Vec::with_capacity(raw.len());
        for (i, r) in raw.iter().enumerate() {
            let p = match &r.parent {
                None => None,
                Some(pn) => match index.get(pn) {
                    Some(&j) => Some(j),
                    None => {
                        return Err(self.err(
                            r.parent_at,
                            &format!("group[{i}].parent"),
                            format!("no group named `{pn}`"),
                        ))
                    }
                },
            };
            parent_of.push(p);
        }
        let pass = scan_passes(&parent_of);
        if let Some(i) = pass.iter().position(Option::is_none) {
            return Err(self.err(
                raw[i].parent_at,
                &format!("group[{i}].parent"),
                format!("group `{}` is its own ancestor (a cycle of parents)", raw[i].name),
            ));
        }
        let mut order: Vec<usize> = (0..raw.len()).collect();
        order.sort_by_key(|&i| (pass[i], i));
        let mut new_index = vec![0; raw.len()];
        for (k, &i) in order.iter().enumerate() {
            new_index[i] = k;
        }
        let def = |i: usize| CgroupDef {
            name: raw[i].name.clone(),
            parent: parent_of[i].map(|p| new_index[p]),
            weight: raw[i].weight,
            nice: raw[i].nice,
            idle: raw[i].idle,
            max: raw[i].max,
            cpus: raw[i].cpus.clone(),
            partition: raw[i].partition,
            uclamp: raw[i].uclamp,
        };
        Ok(order.into_iter().map(def).collect())
    }

    /// A task's `group` field: the index of a declared group.
    pub(super) fn group_ref(&self, v: &V, field: &str, groups: &Groups) -> R<usize> {
        let name = self.string(v, field)?;
        groups.cgroups.get(&name).copied().ok_or_else(|| {
            let known: Vec<&str> = groups.defs.cgroups.iter().map(|g| g.name.as_str()).collect();
            let list = if known.is_empty() { "none is declared".to_string() } else { known.join(", ") };
            self.err(v.span().start, field, format!("no `[[group]]` named `{name}` ({list})"))
        })
    }

    /// A task's `session` field: a declared `[[session]]`, or a new one with nice 0.
    pub(super) fn session_ref(&self, v: &V, field: &str, groups: &mut Groups) -> R<usize> {
        let name = self.string(v, field)?;
        if let Some(&i) = groups.sessions.get(&name) {
            return Ok(i);
        }
        let i = groups.defs.sessions.len();
        groups.sessions.insert(name.clone(), i);
        groups.defs.sessions.push(SessionDef { name, nice: 0 });
        Ok(i)
    }
}

/// For each group (its parent's index in `parent_of`), the pass of Kahn's scan that emits
/// it — the scan visiting the groups in file order, emitting each whose parent is already
/// out, repeated until a pass emits nothing: a root in the first pass; a child in its
/// parent's pass when it comes after the parent (the scan reaches it once the parent is
/// out), else in the next. `None`: on or below a cycle, never emitted. Each group's chain
/// of parents is walked once (O(n), where repeating the scan is O(n²) for a chain written
/// children first).
fn scan_passes(parent_of: &[Option<usize>]) -> Vec<Option<usize>> {
    const NEW: u8 = 0;
    const ON_CHAIN: u8 = 1;
    const DONE: u8 = 2;
    let mut state = vec![NEW; parent_of.len()];
    let mut pass: Vec<Option<usize>> = vec![None; parent_of.len()];
    let mut chain = Vec::new();
    for start in 0..parent_of.len() {
        // Up from `start` to a group already done, a root, or a group met on this walk (a cycle).
        let mut i = start;
        let top = loop {
            match state[i] {
                DONE => break pass[i],
                ON_CHAIN => break None,
                _ => {}
            }
            state[i] = ON_CHAIN;
            chain.push(i);
            match parent_of[i] {
                Some(p) => i = p,
                None => {
                    chain.pop();
                    pass[i] = Some(1);
                    state[i] = DONE;
                    break Some(1);
                }
            }
        };
        // Down again: each group's pass from its parent's (the group above it on the chain).
        let mut above = top;
        while let Some(c) = chain.pop() {
            let p = parent_of[c].expect("a chained group has a parent");
            pass[c] = above.map(|a| a + usize::from(p > c));
            state[c] = DONE;
            above = pass[c];
        }
    }
    pass
}

#[cfg(test)]
mod tests {
    use super::scan_passes;

    /// The scan itself: repeated passes over the groups in file order, emitting each whose
    /// parent is out; the order of emission, or `None` once a pass emits nothing.
    fn repeated_scan(parent_of: &[Option<usize>]) -> Result<Vec<usize>, usize> {
        let mut out_at: Vec<Option<usize>> = vec![None; parent_of.len()];
        let mut order = Vec::new();
        while order.len() < parent_of.len() {
            let before = order.len();
            for i in 0..parent_of.len() {
                if out_at[i].is_none() && parent_of[i].is_none_or(|p| out_at[p].is_some()) {
                    out_at[i] = Some(order.len());
                    order.push(i);
                }
            }
            if order.len() == before {
                return Err((0..parent_of.len()).find(|&i| out_at[i].is_none()).expect("one is left"));
            }
        }
        Ok(order)
    }

    fn via_passes(parent_of: &[Option<usize>]) -> Result<Vec<usize>, usize> {
        let pass = scan_passes(parent_of);
        if let Some(i) = pass.iter().position(Option::is_none) {
            return Err(i);
        }
        let mut order: Vec<usize> = (0..parent_of.len()).collect();
        order.sort_by_key(|&i| (pass[i], i));
        Ok(order)
    }

    /// The pass numbers give the repeated scan's order and its first group left on a cycle,
    /// for random forests with and without cycles, and for a chain written children first
    /// (one pass per group).
    #[test]
    fn pass_numbers_give_the_repeated_scans_order() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let mut cycles = 0;
        for round in 0..3000 {
            let n = 1 + next(12);
            let parent_of: Vec<Option<usize>> = (0..n).map(|_| (next(3) > 0).then(|| next(n))).collect();
            let want = repeated_scan(&parent_of);
            cycles += usize::from(want.is_err());
            assert_eq!(via_passes(&parent_of), want, "round {round}: {parent_of:?}");
        }
        assert!(cycles > 100 && cycles < 2900, "both kinds tried: {cycles} with cycles");
        let chain: Vec<Option<usize>> = (0..50).map(|i| (i < 49).then_some(i + 1)).collect();
        assert_eq!(via_passes(&chain), repeated_scan(&chain));
        assert_eq!(scan_passes(&chain)[0], Some(50));
    }
}
