//! `[[group]]` (cgroup v2 cpu controller) and `[[session]]` (autogroup) tables, and the
//! task fields that refer to them.

use super::{join, DeValue, P, R, V};
use schedlab_sched_api::{CgroupDef, SessionDef, TaskGroups};
use toml::de::DeTable;

/// cgroup v2 `cpu.weight` range (`kernel/sched/core.c: cpu_weight_write_u64`:
/// `CGROUP_WEIGHT_MIN`..=`CGROUP_WEIGHT_MAX`).
pub const CPU_WEIGHT_MIN: i64 = 1;
pub const CPU_WEIGHT_MAX: i64 = 10_000;
/// `CGROUP_WEIGHT_DFL`.
pub const CPU_WEIGHT_DEFAULT: u32 = 100;

impl P<'_> {
    /// Parses `[[group]]` and `[[session]]`: names unique, parents known and acyclic,
    /// weights and nice values in range. Cgroups come out parents first.
    pub(super) fn task_groups(&self, root: &DeTable) -> R<TaskGroups> {
        let cgroups = self.cgroups(root)?;
        let mut sessions = Vec::new();
        for (i, item, t) in self.array_of_tables(root, "session")? {
            let f = format!("session[{i}]");
            self.check_keys(t, &["name", "nice"], &f)?;
            let name = self.string(self.require(t, "name", item.span().start, &f)?, &join(&f, "name"))?;
            if sessions.iter().any(|s: &SessionDef| s.name == name) {
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
        Ok(TaskGroups { cgroups, sessions })
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
        // (name, parent name, weight, offset of the table, offset of `parent`)
        let mut raw: Vec<(String, Option<String>, u32, usize, usize)> = Vec::new();
        for (i, item, t) in self.array_of_tables(root, "group")? {
            let f = format!("group[{i}]");
            self.check_keys(t, &["name", "weight", "parent"], &f)?;
            let name = self.string(self.require(t, "name", item.span().start, &f)?, &join(&f, "name"))?;
            if raw.iter().any(|r| r.0 == name) {
                return Err(self.err(
                    item.span().start,
                    &join(&f, "name"),
                    format!("group `{name}` is declared twice"),
                ));
            }
            let weight = match self.get(t, "weight") {
                Some(v) => {
                    let w = self.int(v, &join(&f, "weight"))?;
                    if !(CPU_WEIGHT_MIN..=CPU_WEIGHT_MAX).contains(&w) {
                        return Err(self.err(
                            v.span().start,
                            &join(&f, "weight"),
                            format!("cpu.weight {w} outside {CPU_WEIGHT_MIN}..={CPU_WEIGHT_MAX}"),
                        ));
                    }
                    w as u32
                }
                None => CPU_WEIGHT_DEFAULT,
            };
            let (parent, at) = match self.get(t, "parent") {
                Some(v) => (Some(self.string(v, &join(&f, "parent"))?), v.span().start),
                None => (None, item.span().start),
            };
            raw.push((name, parent, weight, item.span().start, at));
        }
        self.order_cgroups(&raw)
    }

    /// Resolves parent names and orders groups parents first; a cycle is an error at the
    /// `parent` field of a group on it.
    fn order_cgroups(&self, raw: &[(String, Option<String>, u32, usize, usize)]) -> R<Vec<CgroupDef>> {
        let mut parent_of = Vec::with_capacity(raw.len());
        for (i, r) in raw.iter().enumerate() {
            let p = match &r.1 {
                None => None,
                Some(pn) => match raw.iter().position(|x| &x.0 == pn) {
                    Some(j) => Some(j),
                    None => return Err(self.err(r.4, &format!("group[{i}].parent"), format!("no group named `{pn}`"))),
                },
            };
            parent_of.push(p);
        }
        // Kahn's order: repeatedly emit groups whose parent is already emitted.
        let mut new_index: Vec<Option<usize>> = vec![None; raw.len()];
        let mut out: Vec<CgroupDef> = Vec::with_capacity(raw.len());
        while out.len() < raw.len() {
            let before = out.len();
            for i in 0..raw.len() {
                if new_index[i].is_some() {
                    continue;
                }
                let parent = match parent_of[i] {
                    None => None,
                    Some(p) => match new_index[p] {
                        Some(np) => Some(np),
                        None => continue,
                    },
                };
                new_index[i] = Some(out.len());
                out.push(CgroupDef { name: raw[i].0.clone(), parent, weight: raw[i].2 });
            }
            if out.len() == before {
                let i = (0..raw.len()).find(|&i| new_index[i].is_none()).expect("some group is left");
                return Err(self.err(
                    raw[i].4,
                    &format!("group[{i}].parent"),
                    format!("group `{}` is its own ancestor (a cycle of parents)", raw[i].0),
                ));
            }
        }
        Ok(out)
    }

    /// A task's `group` field: the index of a declared group.
    pub(super) fn group_ref(&self, v: &V, field: &str, groups: &TaskGroups) -> R<usize> {
        let name = self.string(v, field)?;
        groups.cgroups.iter().position(|g| g.name == name).ok_or_else(|| {
            let known: Vec<&str> = groups.cgroups.iter().map(|g| g.name.as_str()).collect();
            let list = if known.is_empty() { "none is declared".to_string() } else { known.join(", ") };
            self.err(v.span().start, field, format!("no `[[group]]` named `{name}` ({list})"))
        })
    }

    /// A task's `session` field: a declared `[[session]]`, or a new one with nice 0.
    pub(super) fn session_ref(&self, v: &V, field: &str, groups: &mut TaskGroups) -> R<usize> {
        let name = self.string(v, field)?;
        if let Some(i) = groups.sessions.iter().position(|s| s.name == name) {
            return Ok(i);
        }
        groups.sessions.push(SessionDef { name, nice: 0 });
        Ok(groups.sessions.len() - 1)
    }
}
