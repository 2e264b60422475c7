//! `[[task]]` (task templates and their programs), `[[change]]` (changes from outside the
//! tasks at a time), and the final check that every started program lowers.

use super::groups::Groups;
use super::{check_nice, expr, join, AstOp, DeValue, IntSrc, Node, P, R, V};
use crate::{Change, Hotplug, MemPolicy, Policy, TaskMemory, TaskTemplate, Workload, DEFAULT_WORKING_SET, MAX_TASKS};
use schedlab_sim::{Ns, SourceError};
use std::collections::BTreeMap;
use toml::de::DeTable;

/// The fields of a `[[task]]`.
const TASK_KEYS: &[&str] = &[
    "name",
    "count",
    "template",
    "nice",
    "policy",
    "rt_priority",
    "runtime",
    "deadline",
    "period",
    "affinity",
    "start",
    "group",
    "session",
    "slice",
    "util_min",
    "util_max",
    "process",
    "kthread",
    "per_cpu",
    "program",
    "vip",
    "core_cookie",
    "working_set",
    "mem_intensity",
    "mlp",
    "mem_policy",
    "mem_node",
    "resident",
];

/// The most independent misses a task may say it keeps in flight (`mlp`), as the machine's
/// `memory.mlp` allows.
pub const MAX_MLP: u64 = 64;

/// The largest `core_cookie` number a task may name (the numbers only tell cookies apart).
pub const MAX_CORE_COOKIE: u64 = u32::MAX as u64;

/// Most operations the programs of all started tasks may hold together.
pub const MAX_TOTAL_OPS: u64 = 10_000_000;

impl<'a> P<'a> {
    /// The `[[task]]` tables (at least one).
    pub(super) fn task_tables<'r>(&self, root: &'r DeTable<'a>) -> R<Vec<&'r V<'a>>> {
        match self.get(root, "task") {
            Some(v) => match v.get_ref() {
                DeValue::Array(a) => Ok(a.iter().collect()),
                _ => Err(self.err(v.span().start, "task", "expected `[[task]]` tables")),
            },
            None => Err(self.err(0, "task", "a workload needs at least one `[[task]]`")),
        }
    }

    /// The tasks' names and each one's index, read before their programs so that `fork`
    /// can name a template defined further down; two tasks of one name are an error.
    pub(super) fn task_names(&self, tasks: &[&V<'a>]) -> R<(Vec<String>, BTreeMap<String, usize>)> {
        let mut names: Vec<String> = Vec::with_capacity(tasks.len());
        let mut index = BTreeMap::new();
        for (i, tv) in tasks.iter().enumerate() {
            self.step()?;
            let f = format!("task[{i}]");
            let t = self.table(tv, &f)?;
            let n = self.string(self.require(t, "name", tv.span().start, &f)?, &join(&f, "name"))?;
            if index.insert(n.clone(), i).is_some() {
                return Err(self.err(tv.span().start, &join(&f, "name"), format!("two tasks are named `{n}`")));
            }
            names.push(n);
        }
        Ok((names, index))
    }

    /// The templates of the `[[task]]` tables, then of the `[[daemon]]`s; at most
    /// [`MAX_TASKS`] started in all, and at least one.
    pub(super) fn tasks(&self, root: &DeTable<'a>, tasks: &[&V<'a>], groups: &mut Groups) -> R<Vec<TaskTemplate>> {
        let mut templates = Vec::with_capacity(tasks.len());
        let mut total = 0u64;
        for (i, tv) in tasks.iter().enumerate() {
            self.step()?;
            templates.push(self.task(i, tv, groups, &mut total)?);
        }
        let daemons = self.daemons(root, &self.task_index)?;
        total = total.saturating_add(daemons.iter().map(|d| d.count).sum());
        if total > MAX_TASKS {
            return Err(self.err(0, "daemon", format!("more than {MAX_TASKS} tasks in all")));
        }
        templates.extend(daemons);
        if total == 0 {
            return Err(self.err(0, "task", "no task is started: every `[[task]]` is a template"));
        }
        Ok(templates)
    }

    /// `[[task]]` table `i`; `total` counts the tasks started so far.
    fn task(&self, i: usize, tv: &V<'a>, groups: &mut Groups, total: &mut u64) -> R<TaskTemplate> {
        let f = format!("task[{i}]");
        let t = self.table(tv, &f)?;
        self.check_keys(t, TASK_KEYS, &f)?;
        let template = match self.get(t, "template") {
            Some(v) => v
                .get_ref()
                .as_bool()
                .ok_or_else(|| self.err(v.span().start, &join(&f, "template"), "expected true or false"))?,
            None => false,
        };
        let process = self.flag(t, "process", &f)?;
        let kthread = self.flag(t, "kthread", &f)?;
        let per_cpu = self.flag(t, "per_cpu", &f)?;
        let vip = self.flag(t, "vip", &f)?;
        let core_cookie = self.core_cookie(t, &f)?;
        let count = self.task_count(t, tv, &f, template, per_cpu)?;
        *total = total.saturating_add(count);
        if *total > MAX_TASKS {
            return Err(self.err(tv.span().start, &join(&f, "count"), format!("more than {MAX_TASKS} tasks in all")));
        }
        let nice = match self.get(t, "nice") {
            Some(v) => {
                let n = self.int(v, &join(&f, "nice"))?;
                check_nice(n).map_err(|m| self.err(v.span().start, &join(&f, "nice"), m))?;
                n as i32
            }
            None => 0,
        };
        let (policy, policy_at) = match self.get(t, "policy") {
            Some(v) => (self.policy(t, v, &f, &join(&f, "policy"))?, v.span().start),
            None => {
                self.no_policy_params(t, &f)?;
                (Policy::Normal, tv.span().start)
            }
        };
        let affinity = self.get(t, "affinity").map(|v| self.cpuset(v, &join(&f, "affinity"))).transpose()?;
        let start = self.get(t, "start").map(|v| self.duration(v, &join(&f, "start"))).transpose()?.unwrap_or(Ns(0));
        let group = self.get(t, "group").map(|v| self.group_ref(v, &join(&f, "group"), groups)).transpose()?;
        let session = self.get(t, "session").map(|v| self.session_ref(v, &join(&f, "session"), groups)).transpose()?;
        let slice = self.get(t, "slice").map(|v| self.slice(v, &join(&f, "slice"))).transpose()?.flatten();
        let uclamp = self.uclamp(t, &f)?;
        let memory = self.task_memory(t, tv.span().start, &f, process)?;
        let body = self.program(self.require(t, "program", tv.span().start, &f)?, &join(&f, "program"))?;
        let instance_dependent = mentions_n(&body);
        let name = self.task_names[i].clone();
        Ok(TaskTemplate {
            name,
            count,
            template,
            nice,
            policy,
            policy_at,
            affinity,
            start,
            group,
            session,
            slice,
            uclamp,
            process,
            kthread,
            per_cpu,
            vip,
            core_cookie,
            memory,
            body,
            instance_dependent,
        })
    }

    /// `core_cookie`: an integer in `0..=MAX_CORE_COOKIE`, 0 meaning no cookie (a task
    /// leaving its cookie, `PR_SCHED_CORE_SHARE_TO` from a cookieless task).
    fn core_cookie(&self, t: &DeTable<'a>, f: &str) -> R<Option<u64>> {
        let Some(v) = self.get(t, "core_cookie") else { return Ok(None) };
        let n = self.nonneg(v, &join(f, "core_cookie"))?;
        if n > MAX_CORE_COOKIE {
            return Err(self.err(
                v.span().start,
                &join(f, "core_cookie"),
                format!("core_cookie {n} outside 0..={MAX_CORE_COOKIE}"),
            ));
        }
        Ok(Some(n))
    }

    /// `util_min` and `util_max`: integers in `0..=SCHED_CAPACITY_SCALE`, the minimum not
    /// above the maximum (`kernel/sched/syscalls.c: uclamp_validate`, v6.18; core.c v5.15:
    /// `-EINVAL` otherwise).
    fn uclamp(&self, t: &DeTable<'a>, f: &str) -> R<schedlab_sched_api::UclampReq> {
        let scale = u64::from(schedlab_sched_api::cpufreq::SCALE);
        let get = |k: &str| -> R<Option<(u32, usize)>> {
            let Some(v) = self.get(t, k) else { return Ok(None) };
            let n = self.nonneg(v, &join(f, k))?;
            if n > scale {
                return Err(self.err(v.span().start, &join(f, k), format!("{k} {n} outside 0..={scale}")));
            }
            Ok(Some((n as u32, v.span().start)))
        };
        let (min, max) = (get("util_min")?, get("util_max")?);
        if let (Some((lo, at)), Some((hi, _))) = (min, max) {
            if lo > hi {
                return Err(self.err(at, &join(f, "util_min"), format!("util_min {lo} above util_max {hi}")));
            }
        }
        Ok(schedlab_sched_api::UclampReq { min: min.map(|m| m.0), max: max.map(|m| m.0) })
    }

    /// The memory fields of a `[[task]]`: `working_set`, `mem_intensity`, `mlp`,
    /// `mem_policy` (`first_touch`, `bind` with `mem_node`, `interleave`) and `resident`
    /// (a process's only; default its working set).
    fn task_memory(&self, t: &DeTable<'a>, at: usize, f: &str, process: bool) -> R<TaskMemory> {
        let working_set = match self.get(t, "working_set") {
            Some(v) => self.bytes(v, &join(f, "working_set"))?,
            None => DEFAULT_WORKING_SET,
        };
        let intensity =
            self.get(t, "mem_intensity").map(|v| self.permille(v, &join(f, "mem_intensity"))).transpose()?;
        let mlp = match self.get(t, "mlp") {
            Some(v) => {
                let n = self.nonneg(v, &join(f, "mlp"))?;
                if !(1..=MAX_MLP).contains(&n) {
                    return Err(self.err(v.span().start, &join(f, "mlp"), format!("mlp {n} outside 1..={MAX_MLP}")));
                }
                Some(n as u32)
            }
            None => None,
        };
        let node = self.get(t, "mem_node");
        let node_at = node.map_or(at, |v| v.span().start);
        let policy = match self.get(t, "mem_policy") {
            Some(v) => self.string(v, &join(f, "mem_policy")).map(|s| (s, v.span().start))?,
            None if node.is_some() => ("bind".to_string(), node_at),
            None => ("first_touch".to_string(), at),
        };
        let policy = match (policy.0.as_str(), node) {
            ("bind", Some(n)) => MemPolicy::Bind(self.nonneg(n, &join(f, "mem_node"))?.min(u64::from(u32::MAX)) as u32),
            ("bind", None) => {
                return Err(self.err(policy.1, &join(f, "mem_node"), "mem_policy `bind` needs a `mem_node`"))
            }
            ("first_touch" | "interleave", Some(n)) => {
                return Err(self.err(
                    n.span().start,
                    &join(f, "mem_node"),
                    format!("mem_policy `{}` places pages itself: no `mem_node`", policy.0),
                ))
            }
            ("first_touch", None) => MemPolicy::FirstTouch,
            ("interleave", None) => MemPolicy::Interleave,
            (other, _) => {
                return Err(self.err(
                    policy.1,
                    &join(f, "mem_policy"),
                    format!("unknown mem_policy `{other}`; expected first_touch, bind or interleave"),
                ))
            }
        };
        let resident = match self.get(t, "resident") {
            Some(v) if !process => {
                return Err(self.err(
                    v.span().start,
                    &join(f, "resident"),
                    "`resident` is a process's: set `process = true`",
                ))
            }
            Some(v) => self.bytes(v, &join(f, "resident"))?,
            None => working_set,
        };
        Ok(TaskMemory { working_set, intensity: intensity.unwrap_or(0), mlp, policy, node_at, resident })
    }

    /// Instances a `[[task]]` starts: `count` (default 1; 0 for a template), one per CPU for
    /// `per_cpu`, which takes no `count`, `template` or `affinity`.
    fn task_count(&self, t: &DeTable<'a>, tv: &V<'a>, f: &str, template: bool, per_cpu: bool) -> R<u64> {
        let count = match self.get(t, "count") {
            Some(c) if per_cpu => {
                return Err(self.err(c.span().start, &join(f, "count"), "a per_cpu task has one instance per CPU"))
            }
            Some(c) => self.nonneg(c, &join(f, "count"))?,
            None if per_cpu => self.nr_cpus as u64,
            None => u64::from(!template),
        };
        if per_cpu && (template || self.get(t, "affinity").is_some()) {
            return Err(self.err(
                tv.span().start,
                &join(f, "per_cpu"),
                "a per_cpu task is started bound to each CPU: no `template`, no `affinity`",
            ));
        }
        if template && count > 0 && self.get(t, "count").is_some() {
            return Err(self.err(tv.span().start, &join(f, "count"), "a template is only forked; it has no count"));
        }
        Ok(count)
    }

    /// `[[change]]`: set the affinity and/or nice of every live task of a template at a
    /// time, from outside the tasks (an administrator's `taskset`/`renice`), or take a CPU
    /// offline/online.
    pub(super) fn changes(&self, root: &DeTable<'a>, templates: &[TaskTemplate]) -> R<Vec<Change>> {
        let Some(v) = self.get(root, "change") else { return Ok(Vec::new()) };
        let DeValue::Array(items) = v.get_ref() else {
            return Err(self.err(v.span().start, "change", "expected `[[change]]` tables"));
        };
        // Each name's first template (task and daemon names are unique).
        let mut index = BTreeMap::new();
        for (i, tpl) in templates.iter().enumerate() {
            index.entry(tpl.name.as_str()).or_insert(i);
        }
        let change = |(i, item)| {
            self.step()?;
            self.change(i, item, &index)
        };
        let changes: Vec<Change> = items.iter().enumerate().map(change).collect::<R<_>>()?;
        self.check_hotplug(&changes, items)?;
        Ok(changes)
    }

    /// Replays the hotplug steps in the order the kernel applies them (by time, then by
    /// position) and refuses one that would take the last active CPU offline, as
    /// `kernel/cpu.c:cpu_down_maps_locked` (v6.12) refuses with `-EBUSY` when no other
    /// CPU is active.
    fn check_hotplug(&self, changes: &[Change], items: &[V<'a>]) -> R<()> {
        let mut order: Vec<usize> = (0..changes.len()).filter(|&i| changes[i].hotplug.is_some()).collect();
        order.sort_by_key(|&i| (changes[i].at, i));
        let mut active = vec![true; self.nr_cpus];
        for i in order {
            let Some(h) = changes[i].hotplug else { continue };
            if !h.online && active[h.cpu] && active.iter().filter(|&&a| a).count() == 1 {
                let msg = format!("CPU {} is the last active CPU at {}: it cannot go offline", h.cpu, changes[i].at);
                return Err(self.err(items[i].span().start, &format!("change[{i}].cpu_offline"), msg));
            }
            active[h.cpu] = h.online;
        }
        Ok(())
    }

    /// `[[change]]` table `i`: a task change (`tasks` with `set_affinity`/`set_nice`) or a
    /// CPU hotplug step (`cpu_offline`/`cpu_online`, without `tasks`).
    fn change(&self, i: usize, item: &V<'a>, templates: &BTreeMap<&str, usize>) -> R<Change> {
        let f = format!("change[{i}]");
        let t = self.table(item, &f)?;
        self.check_keys(t, &["at", "tasks", "set_affinity", "set_nice", "cpu_offline", "cpu_online"], &f)?;
        let at = self.duration(self.require(t, "at", item.span().start, &f)?, &join(&f, "at"))?;
        let hotplug = self.hotplug(t, item, &f)?;
        if let Some(h) = hotplug {
            if let Some((k, v)) =
                ["tasks", "set_affinity", "set_nice"].iter().find_map(|k| self.get(t, k).map(|v| (k, v)))
            {
                let msg = format!("a CPU hotplug change takes no `{k}`: give the task change its own [[change]]");
                return Err(self.err(v.span().start, &join(&f, k), msg));
            }
            return Ok(Change { at, template: None, affinity: None, nice: None, hotplug: Some(h) });
        }
        let Some(tv) = self.get(t, "tasks") else {
            let msg = "a change needs `tasks` (with `set_affinity`/`set_nice`) or `cpu_offline`/`cpu_online`";
            return Err(self.err(item.span().start, &f, msg));
        };
        let tname = self.string(tv, &join(&f, "tasks"))?;
        let Some(&template) = templates.get(tname.as_str()) else {
            return Err(self.err(tv.span().start, &join(&f, "tasks"), format!("no task named `{tname}`")));
        };
        let affinity = self.get(t, "set_affinity").map(|v| self.cpuset(v, &join(&f, "set_affinity"))).transpose()?;
        let nice = match self.get(t, "set_nice") {
            Some(v) => {
                let n = self.int(v, &join(&f, "set_nice"))?;
                check_nice(n).map_err(|m| self.err(v.span().start, &join(&f, "set_nice"), m))?;
                Some(n as i32)
            }
            None => None,
        };
        if affinity.is_none() && nice.is_none() {
            return Err(self.err(item.span().start, &f, "a change sets `set_affinity`, `set_nice` or both"));
        }
        Ok(Change { at, template: Some(template), affinity, nice, hotplug: None })
    }

    /// `cpu_offline = N` or `cpu_online = N` of a change (at most one), N a CPU of the machine.
    fn hotplug(&self, t: &DeTable<'a>, item: &V<'a>, f: &str) -> R<Option<Hotplug>> {
        let (off, on) = (self.get(t, "cpu_offline"), self.get(t, "cpu_online"));
        let (key, v, online) = match (off, on) {
            (Some(_), Some(_)) => {
                return Err(self.err(item.span().start, f, "a change sets `cpu_offline` or `cpu_online`, not both"))
            }
            (Some(v), None) => ("cpu_offline", v, false),
            (None, Some(v)) => ("cpu_online", v, true),
            (None, None) => return Ok(None),
        };
        let field = join(f, key);
        let n = self.int(v, &field)?;
        if n < 0 || n as u64 >= self.nr_cpus as u64 {
            let msg = format!("CPU {n} is outside the machine, which has CPUs 0-{}", self.nr_cpus - 1);
            return Err(self.err(v.span().start, &field, msg));
        }
        Ok(Some(Hotplug { cpu: n as usize, online }))
    }
}

fn mentions_n(nodes: &[Node]) -> bool {
    let has = |s: &str| {
        let mut rest = s;
        while let Some(o) = rest.find('{') {
            let Some(c) = rest[o..].find('}') else { return false };
            if expr::variables(&rest[o + 1..o + c]).iter().any(|v| v == "n") {
                return true;
            }
            rest = &rest[o + c + 1..];
        }
        false
    };
    let int = |i: &IntSrc| matches!(i, IntSrc::Expr(e) if expr::variables(e).iter().any(|v| v == "n"));
    nodes.iter().any(|node| match &node.op {
        AstOp::Loop { count, body } => count.as_ref().is_some_and(int) || mentions_n(body),
        AstOp::For { count, body, .. } => int(count) || mentions_n(body),
        AstOp::Fork { count, .. } | AstOp::SetNice(count) => int(count),
        AstOp::Send { pipe, bytes, .. } | AstOp::Recv { pipe, bytes } => has(pipe) || int(bytes),
        AstOp::Futex(op) => op.words().into_iter().any(|w| has(w)) || op.values().into_iter().any(|v| int(v.src())),
        AstOp::Lock(s) | AstOp::Unlock(s) | AstOp::Signal(s) | AstOp::Broadcast(s) | AstOp::Barrier(s) => has(s),
        AstOp::SpinBarrier { barrier, .. } => has(barrier),
        AstOp::Poll { pipe, count, body, .. } => has(pipe) || int(count) || mentions_n(body),
        AstOp::Mark { id, .. } => int(id),
        AstOp::CondWait { cond, mutex } => has(cond) || has(mutex),
        _ => false,
    })
}

fn p_err_total(wl: &Workload, at: usize, t: usize) -> SourceError {
    SourceError::at(
        &wl.file,
        &wl.text,
        at,
        &format!("task[{t}]"),
        format!("the started tasks' programs expand to more than {MAX_TOTAL_OPS} operations in all"),
    )
}

impl P<'_> {
    /// Lowers every started program once, so that undefined objects are reported before
    /// the run, and bounds what the started tasks' programs hold in all (the instances of
    /// a template that does not mention `n` share one program).
    pub(super) fn check_programs(&self, wl: &Workload, tasks: &[&V]) -> Result<(), SourceError> {
        let instances = |tpl: &TaskTemplate| if tpl.instance_dependent { tpl.count.max(1) } else { 1 };
        let mut held = 0u64;
        for (t, tpl) in wl.templates.iter().enumerate() {
            for n in 0..instances(tpl) {
                self.step()?;
                held += crate::lower::size(wl, t, n)?;
                if held > MAX_TOTAL_OPS {
                    return Err(p_err_total(wl, tasks.get(t).map_or(0, |v| v.span().start), t));
                }
            }
        }
        for (t, tpl) in wl.templates.iter().enumerate() {
            for n in 0..instances(tpl) {
                self.step()?;
                wl.program(t, n)?;
            }
        }
        Ok(())
    }
}
