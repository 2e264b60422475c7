//! CPU hotplug from a workload's `[[change]]` (`cpu_offline = N` / `cpu_online = N`).
//!
//! Offline follows `kernel/sched/core.c` (v6.12): `sched_cpu_deactivate` clears the CPU
//! from `cpu_active_mask` (`set_cpu_active(cpu, false)`), so no wakeup
//! (`select_task_rq` → `is_cpu_allowed`) or balance places a task there; `balance_push`
//! and `__balance_push_cpu_stop` then push every task off the dying CPU (the running one
//! by the stopper, the queued ones moved), each to a CPU of its affinity, or — when its
//! affinity holds no active CPU — `select_fallback_rq`'s widening to the cpuset's CPUs
//! with the printk "process … no longer affine to cpuN", kept here as a run note. The CPU
//! then idles with its tick stopped (`sched_cpu_dying` → `sched_tick_stop`) and takes no
//! part in balancing (its sched domains are detached).
//!
//! Which CPUs a task may use while some are offline is the cgroup v2 cpuset rule
//! (`kernel/cgroup/cpuset.c:cpuset_update_tasks_cpumask`, `hotplug_update_tasks`, v6.12):
//! the task's requested mask (`p->user_cpus_ptr`) intersected with the active CPUs, the
//! active CPUs when that is empty. Policies see that mask as the task's affinity, so
//! their placement and balancing consult the active CPUs without reaching into the
//! kernel; `sched_cpu_activate` (online) widens every mask back.
//!
//! cgroup v2 cpuset partitions (`cpuset.cpus.partition` = `root` or `isolated`,
//! `kernel/cgroup/cpuset.c` v6.12) take their CPUs exclusively from their parent: the
//! parent's (for a top-level one, the root cgroup's) effective CPUs lose them, so tasks
//! outside the partition no longer run there. The sched domains are then cut
//! (`rebuild_sched_domains_locked` → `generate_sched_domains`): one domain over the root
//! cgroup's effective CPUs and one over each `root` partition's, none over an `isolated`
//! one's. The kernel hands that set to the policy
//! (`SchedClass::partition_sched_domains`, `partition_sched_domains_locked`) at start, and
//! again after every hotplug step (`sched_cpu_activate`/`sched_cpu_deactivate` →
//! `cpuset_update_active_cpus`), when the domains cover only the active CPUs.

use crate::Kernel;
use schedlab_machine::CpuSet;
use schedlab_sim::{CpuId, TaskId};
use schedlab_workload::Hotplug;
use std::collections::BTreeMap;

/// The hotplug state; `active` is `None` until the first hotplug change, so a run without
/// one takes no new path.
#[derive(Default)]
pub(crate) struct HotplugState {
    /// `cpu_active_mask`, once some change touched it.
    pub(crate) active: Option<CpuSet>,
    /// `p->user_cpus_ptr`: each task's requested affinity, once masks are restricted.
    pub(crate) user_masks: BTreeMap<TaskId, CpuSet>,
    /// The kernel log lines a run would print (`select_fallback_rq`'s printk).
    pub(crate) notes: Vec<String>,
    /// Some cgroup sets `cpuset.cpus`: every task's affinity is kept within its cgroup's
    /// effective CPUs.
    pub(crate) cpuset_on: bool,
    /// Per cgroup (the workload's order: parents first), `cpuset.cpus.effective`.
    pub(crate) cpusets: Vec<CpuSet>,
    /// The root cgroup's `cpuset.cpus.effective`: the active CPUs less those partitions took.
    pub(crate) root: Option<CpuSet>,
    /// Some cgroup is a partition root (`cpuset.cpus.partition` = root or isolated).
    pub(crate) partitions_on: bool,
    /// The sched domains last handed to the policy (`doms_cur`); `None`: the boot
    /// domains over the whole machine, never rebuilt.
    pub(crate) doms: Option<Vec<CpuSet>>,
}

impl Kernel<'_> {
    /// `cpu_active(cpu)`.
    #[inline]
    pub(crate) fn cpu_active(&self, cpu: CpuId) -> bool {
        self.hotplug.active.as_ref().is_none_or(|a| a.contains(cpu))
    }

    /// Masks are restricted: some CPU went offline or some cgroup has a cpuset.
    #[inline]
    pub(crate) fn restricting(&self) -> bool {
        self.hotplug.active.is_some() || self.hotplug.cpuset_on
    }

    /// Turns the cpusets on when some cgroup sets `cpuset.cpus` (before any task exists).
    pub(crate) fn cpuset_init(&mut self) {
        self.hotplug.cpuset_on = self.wl.groups.cgroups.iter().any(|g| g.cpus.is_some());
        self.hotplug.partitions_on = self.wl.groups.cgroups.iter().any(|g| g.partition.is_root());
        if self.hotplug.cpuset_on {
            let doms = self.cpuset_rebuild();
            if self.hotplug.partitions_on {
                self.partition_sched_domains(doms);
            }
        }
    }

    /// `partition_sched_domains_locked` (`kernel/sched/topology.c`, v6.12): hands the
    /// policy the new set of sched domains when it differs from the current one. The
    /// rebuild runs from cpuset's work (or the hotplug thread), not on a CPU of the
    /// simulation, so its cost is not charged; the policy answers no requests.
    fn partition_sched_domains(&mut self, doms: Vec<CpuSet>) {
        if self.hotplug.doms.as_ref() == Some(&doms) {
            return;
        }
        let mut reqs = std::mem::take(&mut self.requests);
        {
            let mut cx = schedlab_sched_api::Ctx {
                now: self.now,
                this_cpu: doms.first().and_then(CpuSet::first).unwrap_or(0),
                machine: &self.machine,
                tasks: &self.info,
                cpus: &self.views,
                rng: &mut self.policy_rng,
                requests: &mut reqs,
                work: Default::default(),
                decisions: None,
                scale: &self.speed.scale,
                scaled: self.speed.scaled,
                cpufreq: self.speed.listens,
                em: &self.em,
            };
            self.policy.partition_sched_domains(&mut cx, &doms);
        }
        reqs.clear();
        self.requests = reqs;
        self.hotplug.doms = Some(doms);
    }

    /// `cpuset.cpus.effective` of every cgroup, parents first (cgroup v2,
    /// `kernel/cgroup/cpuset.c: compute_effective_cpumask` and `update_cpumasks_hier`,
    /// v6.12): its `cpuset.cpus` (unset: all) within its parent's effective CPUs — the
    /// root's being the active CPUs — and the parent's when that leaves none; a valid
    /// partition root's are its exclusive CPUs instead, and every cgroup's lose those its
    /// child partitions took. Returns the sched domains that follow
    /// (`generate_sched_domains`): the root cgroup's effective CPUs, then each valid `root`
    /// partition's that are not empty.
    fn cpuset_rebuild(&mut self) -> Vec<CpuSet> {
        let n = self.machine.nr_cpus();
        let active = self.hotplug.active.clone().unwrap_or_else(|| self.all_cpus.clone());
        let groups = &self.wl.groups.cgroups;
        let xcpus = if self.hotplug.partitions_on { partition_xcpus(groups, &active, n) } else { Vec::new() };
        // Per cgroup (and, last, the root), the CPUs its valid child partitions took.
        let mut given = vec![CpuSet::empty(n); groups.len() + 1];
        for (i, x) in xcpus.iter().enumerate() {
            if let Some(x) = x {
                let p = groups[i].parent.unwrap_or(groups.len());
                x.iter().for_each(|c| given[p].insert(c));
            }
        }
        let minus = |mut s: CpuSet, g: &CpuSet| {
            g.iter().for_each(|c| s.remove(c));
            s
        };
        let root = minus(active, &given[groups.len()]);
        let mut eff: Vec<CpuSet> = Vec::with_capacity(groups.len());
        for (i, g) in groups.iter().enumerate() {
            let parent = g.parent.map_or(&root, |p| &eff[p]).clone();
            let e = match xcpus.get(i).and_then(Option::as_ref) {
                Some(x) => x.clone(),
                None => {
                    let mut e = g.cpus.clone().unwrap_or_else(|| parent.clone());
                    e.intersect_with(&parent);
                    if e.is_empty() {
                        parent
                    } else {
                        e
                    }
                }
            };
            eff.push(minus(e, &given[i]));
        }
        self.hotplug.root = Some(root.clone());
        let mut doms = vec![root];
        for (i, g) in groups.iter().enumerate() {
            let valid_root =
                g.partition == schedlab_sched_api::Partition::Root && xcpus.get(i).is_some_and(Option::is_some);
            if valid_root && !eff[i].is_empty() {
                doms.push(eff[i].clone());
            }
        }
        self.hotplug.cpusets = eff;
        doms
    }

    /// The CPUs `t` may use by its cpuset and the active mask; `None` when nothing
    /// restricts masks.
    fn cpus_allowed_by_cpuset(&self, t: TaskId) -> Option<CpuSet> {
        if !self.hotplug.cpuset_on {
            return self.hotplug.active.clone();
        }
        match self.info[t].cgroup.get() {
            Some(g) => Some(self.hotplug.cpusets[g].clone()),
            None => Some(self.hotplug.root.clone().unwrap_or_else(|| self.all_cpus.clone())),
        }
    }

    /// A hotplug step: `sched_cpu_deactivate` + the push of every task off the CPU, or
    /// `sched_cpu_activate`. Offlining the last active CPU is refused (the parser already
    /// refused it, `cpu_down_maps_locked`); a CPU already in the asked state is left as is.
    pub(crate) fn cpu_hotplug(&mut self, h: Hotplug) {
        let mut active = self.hotplug.active.take().unwrap_or_else(|| self.all_cpus.clone());
        let changed = if h.online { !active.contains(h.cpu) } else { active.contains(h.cpu) && active.count() > 1 };
        if h.online {
            active.insert(h.cpu);
        } else if changed {
            active.remove(h.cpu);
        }
        self.hotplug.active = Some(active);
        if !changed {
            return;
        }
        // `cpuset_handle_hotplug`: the effective masks follow the active CPUs, and the
        // sched domains are rebuilt over them (without cpusets, `partition_sched_domains(1,
        // NULL, NULL)`: one domain of the active CPUs).
        let doms = if self.hotplug.cpuset_on {
            self.cpuset_rebuild()
        } else {
            vec![self.hotplug.active.clone().unwrap_or_else(|| self.all_cpus.clone())]
        };
        self.partition_sched_domains(doms);
        for t in 0..self.tasks.len() {
            if self.tasks[t].state == crate::TState::Dead {
                continue;
            }
            let user = self.hotplug.user_masks.entry(t).or_insert_with(|| self.info[t].affinity.clone()).clone();
            self.restrict_affinity(t, user, h.cpu);
        }
        if h.online {
            // `sched_cpu_activate` → `set_rq_online`: the CPU's tick runs again when it
            // gets work; nothing to do until then.
            return;
        }
        // `balance_push` ran; the dying CPU idles (`sched_cpu_dying`).
        self.resched_curr(usize::MAX, h.cpu);
    }

    /// Sets `t`'s affinity to `user` ∩ the CPUs its cpuset and the active mask allow
    /// (`__set_cpus_allowed_ptr`'s use of `p->user_cpus_ptr`, core.c v6.12), or to those
    /// CPUs when that is empty — with the `select_fallback_rq` note when a CPU went
    /// offline — and moves it off a CPU it may no longer use. `cpu` names the CPU of the
    /// step, for the note.
    pub(crate) fn restrict_affinity(&mut self, t: TaskId, user: CpuSet, cpu: CpuId) {
        let Some(allowed) = self.cpus_allowed_by_cpuset(t) else {
            self.info[t].affinity = user;
            return;
        };
        self.hotplug.user_masks.insert(t, user.clone());
        let mut eff = user;
        eff.intersect_with(&allowed);
        if eff.is_empty() {
            if self.hotplug.active.is_some() && self.info[t].affinity != allowed {
                let note = format!(
                    "{}: process {} ({}) no longer affine to cpu{cpu} (select_fallback_rq)",
                    self.now, t, self.info[t].name
                );
                self.hotplug.notes.push(note);
            }
            eff = allowed;
        }
        if eff == self.info[t].affinity {
            return;
        }
        self.info[t].affinity = eff;
        self.record_affinity(t);
        self.move_disallowed(t);
    }

    /// The mask `sched_setaffinity(t, set)` gives while masks are restricted: `set` within
    /// the CPUs its cpuset and the active mask allow (`set` kept as `p->user_cpus_ptr`);
    /// `None` — EINVAL, with a run note — when that leaves none. `set` itself otherwise.
    pub(crate) fn setaffinity_mask(&mut self, t: TaskId, set: CpuSet) -> Option<CpuSet> {
        let Some(allowed) = self.cpus_allowed_by_cpuset(t) else { return Some(set) };
        let mut eff = set.clone();
        eff.intersect_with(&allowed);
        if eff.is_empty() {
            let note = format!(
                "{}: sched_setaffinity({} ({}), {set}) = -EINVAL: none of those CPUs is in its cpuset and active",
                self.now, t, self.info[t].name
            );
            self.hotplug.notes.push(note);
            return None;
        }
        self.hotplug.user_masks.insert(t, set);
        Some(eff)
    }

    /// Moves `t` off its CPU when its affinity no longer allows it: a running task is
    /// pushed by the stopper, a queued one moved (`__set_cpus_allowed_ptr_locked` →
    /// `affine_move_task`, `__balance_push_cpu_stop`).
    pub(crate) fn move_disallowed(&mut self, t: TaskId) {
        let cpu = self.info[t].cpu;
        if self.info[t].affinity.contains(cpu) || self.tasks[t].in_transit {
            return;
        }
        if self.cpus[cpu].curr == Some(t) {
            self.tasks[t].migrate_pending = true;
            // Not from `cpu` itself: an IPI brings it into `schedule()`.
            self.resched_curr(usize::MAX, cpu);
        } else if self.tasks[t].on_rq {
            let to = self.distribute_cpu(t);
            let s = self.locked2(
                cpu,
                to,
                schedlab_machine::LockSite::Migrate,
                self.machine.costs.migrate,
                crate::vocab::Action::MoveQueued { task: t, from: cpu, to },
            );
            self.interrupt(cpu, [s]);
        }
    }

    /// A task created while masks are restricted: its requested mask is kept and its
    /// affinity restricted to its cpuset's and the active CPUs (fork copies the parent's
    /// `user_cpus_ptr`; `cgroup_post_fork` → `cpuset_fork` its cpuset's mask).
    pub(crate) fn hotplug_new_task(&mut self, t: TaskId, parent: Option<TaskId>) {
        if !self.restricting() {
            return;
        }
        let user = parent
            .and_then(|p| self.hotplug.user_masks.get(&p).cloned())
            .filter(|_| self.wl.templates[self.tasks[t].template as usize].affinity.is_none())
            .unwrap_or_else(|| self.info[t].affinity.clone());
        let cpu = self.info[t].cpu;
        self.restrict_affinity(t, user, cpu);
    }
}

/// Each cgroup's exclusive CPUs while it is a valid partition root
/// (`compute_effective_exclusive_cpumask`, `update_parent_effective_cpumask`,
/// `cpuset.c` v6.12), `None` otherwise: its `cpus` within its parent's exclusive CPUs (the
/// root cgroup's: the active ones), not empty, under a valid partition root. When a
/// parent's child partitions would take all its CPUs, they are all invalid and the parent
/// keeps its CPUs: `cpuset_handle_hotplug` does that for the root cgroup ("no effective CPU
/// is left in top_cpuset": `subpartitions_cpus` cleared); a nested parent is treated the
/// same (the parser refuses such a partition at start).
fn partition_xcpus(groups: &[schedlab_sched_api::CgroupDef], active: &CpuSet, n: usize) -> Vec<Option<CpuSet>> {
    let mut kids: Vec<Vec<usize>> = vec![Vec::new(); groups.len() + 1];
    for (i, g) in groups.iter().enumerate() {
        if g.partition.is_root() && g.cpus.is_some() {
            kids[g.parent.unwrap_or(groups.len())].push(i);
        }
    }
    let mut xcpus: Vec<Option<CpuSet>> = vec![None; groups.len()];
    // The root first, then each group in order (parents first), once its own xcpus are known.
    for p in std::iter::once(groups.len()).chain(0..groups.len()) {
        if kids[p].is_empty() {
            continue;
        }
        let px = if p == groups.len() {
            active.clone()
        } else if let Some(x) = &xcpus[p] {
            x.clone()
        } else {
            continue;
        };
        let mut left = px.clone();
        let mut granted = Vec::new();
        for &c in &kids[p] {
            let mut x = CpuSet::empty(n);
            groups[c].cpus.iter().flat_map(CpuSet::iter).filter(|&cpu| px.contains(cpu)).for_each(|cpu| x.insert(cpu));
            if !x.is_empty() {
                x.iter().for_each(|cpu| left.remove(cpu));
                granted.push((c, x));
            }
        }
        if left.is_empty() {
            continue;
        }
        for (c, x) in granted {
            xcpus[c] = Some(x);
        }
    }
    xcpus
}
