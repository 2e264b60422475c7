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
        if self.hotplug.cpuset_on {
            self.cpuset_rebuild();
        }
    }

    /// `cpuset.cpus.effective` of every cgroup, parents first (cgroup v2,
    /// `kernel/cgroup/cpuset.c: compute_effective_cpumask` and `update_cpumasks_hier`,
    /// v6.12): its `cpuset.cpus` (unset: all) within its parent's effective CPUs — the
    /// root's being the active CPUs — and the parent's when that leaves none.
    fn cpuset_rebuild(&mut self) {
        let active = self.hotplug.active.clone().unwrap_or_else(|| self.all_cpus.clone());
        let mut eff: Vec<CpuSet> = Vec::with_capacity(self.wl.groups.cgroups.len());
        for g in &self.wl.groups.cgroups {
            let parent = g.parent.map_or(&active, |p| &eff[p]).clone();
            let mut e = g.cpus.clone().unwrap_or_else(|| parent.clone());
            e.intersect_with(&parent);
            eff.push(if e.is_empty() { parent } else { e });
        }
        self.hotplug.cpusets = eff;
    }

    /// The CPUs `t` may use by its cpuset and the active mask; `None` when nothing
    /// restricts masks.
    fn cpus_allowed_by_cpuset(&self, t: TaskId) -> Option<CpuSet> {
        if !self.hotplug.cpuset_on {
            return self.hotplug.active.clone();
        }
        match self.info[t].cgroup.get() {
            Some(g) => Some(self.hotplug.cpusets[g].clone()),
            None => Some(self.hotplug.active.clone().unwrap_or_else(|| self.all_cpus.clone())),
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
        if self.hotplug.cpuset_on {
            // `cpuset_handle_hotplug`: the effective masks follow the active CPUs.
            self.cpuset_rebuild();
        }
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
