//! The fair balancer's decision records (`Decision::Balance`): for each `load_balance`
//! attempt, what `find_busiest_group`/`calculate_imbalance` found (the imbalance, the
//! busiest CPU, or why the domain counts as balanced) and why each task considered on the
//! busiest CPU was not moved (`can_migrate_task`: affinity, running, cache-hot;
//! `detach_tasks`: `loop_max`, the imbalance, the last task). Built only while recording;
//! every function here reads state and changes none, so recording changes no result.

use super::balance::{CpuIdleType, Env, Migration};
use super::domains::Domain;
use super::select::GroupType;
use super::Fair;
use schedlab_machine::CpuSet;
use schedlab_sched_api::{fmt_ns, BalanceKind, Ctx, Decision, SchedClass};
use schedlab_sim::{CpuId, TaskId};

/// What one `load_balance` pass found, gathered while recording.
#[derive(Clone, Debug, Default)]
pub(super) struct LbWhy {
    /// Why the domain counts as balanced, when it does (`find_busiest_group`'s early outs).
    pub verdict: Option<String>,
    /// The busiest group (index into the domain's groups) once one was found.
    pub busiest_group: Option<usize>,
    /// Tasks considered and not moved, with the rule that kept each.
    pub refused: Vec<(TaskId, String)>,
    /// Why `find_busiest_group` found an imbalance, where the version says (v4.9).
    pub because: Option<String>,
}

/// `enum group_type` as the kernel names it.
pub(super) fn group_type_name(t: GroupType) -> &'static str {
    match t {
        GroupType::HasSpare => "group_has_spare",
        GroupType::FullyBusy => "group_fully_busy",
        GroupType::MisfitTask => "group_misfit_task",
        GroupType::Overloaded => "group_overloaded",
    }
}

fn kind_of(idle: CpuIdleType) -> BalanceKind {
    match idle {
        CpuIdleType::NewlyIdle => BalanceKind::NewIdle,
        CpuIdleType::Busy => BalanceKind::Tick,
        CpuIdleType::Idle => BalanceKind::NohzIdle,
    }
}

fn idle_words(idle: CpuIdleType) -> &'static str {
    match idle {
        CpuIdleType::NewlyIdle => "newly idle (newidle_balance)",
        CpuIdleType::Busy => "busy (tick)",
        CpuIdleType::Idle => "idle (nohz idle balance)",
    }
}

impl Env {
    /// Sets why the domain is balanced; `f` runs only while recording.
    pub(super) fn balanced(&mut self, f: impl FnOnce() -> String) {
        if let Some(w) = self.why.as_mut() {
            w.verdict = Some(f());
        }
    }

    /// Sets why the domain is imbalanced; `f` runs only while recording.
    pub(super) fn found_because(&mut self, f: impl FnOnce() -> String) {
        if let Some(w) = self.why.as_mut() {
            w.because = Some(f());
        }
    }

    /// Notes that `p` was considered and not moved; `f` runs only while recording.
    pub(super) fn refuse(&mut self, p: TaskId, f: impl FnOnce() -> String) {
        if let Some(w) = self.why.as_mut() {
            if !w.refused.iter().any(|(t, _)| *t == p) {
                w.refused.push((p, f()));
            }
        }
    }
}

impl Fair {
    /// Why `can_migrate_task` refused `p` on `src` for `env.dst` (pure: the same tests).
    pub(super) fn cannot_migrate_words(&self, cx: &Ctx, env: &Env, sd: &Domain, p: TaskId, src: CpuId) -> String {
        if !cx.allowed(p, env.dst) {
            return format!("affinity: allowed CPUs {} exclude CPU {}", cx.task(p).affinity, env.dst);
        }
        if self.adj.moved.contains(&p) {
            return "already moved in this pass".into();
        }
        if cx.cpus[src].curr == Some(p) {
            return format!("running on CPU {src} (only an active balance moves a running task)");
        }
        let se = self.task_se(p);
        let rq = self.rq(self.cfs_rq_of(se));
        let hot = if rq.next == Some(se) || rq.last == Some(se) {
            "the next/last buddy".to_string()
        } else {
            let ago = cx.now.0.saturating_sub(self.e(se).exec_start);
            format!("ran {} ago < sched_migration_cost {}", fmt_ns(ago as i64), fmt_ns(self.t.migration_cost as i64))
        };
        format!(
            "cache-hot (task_hot: {hot}) and nr_balance_failed {} ≤ cache_nice_tries {}",
            sd.nr_balance_failed, sd.cache_nice_tries
        )
    }

    /// The CPU of the busiest group with the most fair tasks (for a balanced verdict's
    /// notes: whose waiting tasks the verdict concerns). Pure, unlike `find_busiest_queue`.
    fn busiest_cpu_of(&self, env: &Env, group: &CpuSet) -> Option<CpuId> {
        let best = group.iter().filter(|&c| env.cpus.contains(c)).map(|c| (self.h_nr(c), std::cmp::Reverse(c))).max();
        best.filter(|b| b.0 > 0).map(|b| b.1 .0)
    }

    /// Records a `load_balance` pass on `env.dst` that found the domain balanced (or no
    /// busiest queue).
    pub(super) fn record_balanced(&self, cx: &mut Ctx, env: &Env) {
        let Some(w) = env.why.as_ref() else { return };
        let sd = &self.domains.per_cpu[env.dst][env.level];
        let src = w.busiest_group.and_then(|g| self.busiest_cpu_of(env, &sd.groups[g]));
        let verdict = w.verdict.as_deref().unwrap_or("no imbalance to correct");
        let found = format!("{}: balanced — {verdict}", self.lb_head(env, sd));
        let kind = kind_of(env.idle);
        let dst = env.dst;
        cx.record(|| Decision::Balance { cpu: dst, kind, src, found, moved: Vec::new(), refused: Vec::new() });
    }

    /// Records a pass that looked at `busiest`: the imbalance, what it moved and why each
    /// other task considered there stayed; `tail` adds the outcome (all pinned, active
    /// balance).
    pub(super) fn record_attempt(&self, cx: &mut Ctx, env: &mut Env, busiest: CpuId, moved: Vec<TaskId>, tail: &str) {
        let Some(w) = env.why.as_mut() else { return };
        let refused = std::mem::take(&mut w.refused);
        let because = w.because.as_ref().map_or(String::new(), |b| format!(" — {b}"));
        let sd = &self.domains.per_cpu[env.dst][env.level];
        let migration = match env.migration {
            Migration::Load => "load",
            Migration::Util => "utilization",
            Migration::Task => "tasks",
            Migration::Misfit => "misfit task",
        };
        let found = format!(
            "{}: busiest CPU {busiest} ({} fair tasks), imbalance {} ({migration}; sched_nr_migrate {}, nr_balance_failed {}, cache_nice_tries {}){because}{tail}",
            self.lb_head(env, sd),
            self.h_nr(busiest),
            env.imbalance_found,
            self.t.nr_migrate,
            sd.nr_balance_failed,
            sd.cache_nice_tries,
        );
        let kind = kind_of(env.idle);
        let dst = env.dst;
        cx.record(|| Decision::Balance { cpu: dst, kind, src: Some(busiest), found, moved, refused });
    }

    fn lb_head(&self, env: &Env, sd: &Domain) -> String {
        format!("load_balance on CPU {} at the {} level (CPUs {}), {}", env.dst, sd.name, sd.span, idle_words(env.idle))
    }
}

/// What `nohz_balancer_kick` (`fair.c`, v5.15) decided on a busy CPU's tick.
#[derive(Clone, Copy, Debug)]
pub(super) enum Kick {
    /// `time_before(now, nohz.next_balance)`: no idle CPU is due to balance yet.
    NotDue,
    /// `find_new_ilb` finds no other idle CPU.
    NoIdle,
    /// Kicked this idle CPU; `true` for an LLC with more than one busy CPU, `false` for
    /// this CPU running two tasks or more.
    Sent(CpuId, bool),
    /// Kicked this idle CPU for a misfit task (`check_misfit_status`).
    Misfit(CpuId),
}

impl Fair {
    /// Records a `nohz_balancer_kick` verdict on `cpu`: a kick sent (to which CPU, why),
    /// or, while tasks wait on `cpu`, why none was. It concerns the fair tasks queued on
    /// `cpu` (the only ones the idle balance could move), each noted with the verdict.
    pub(super) fn record_kick(&self, cx: &mut Ctx, cpu: CpuId, k: Kick) {
        if !cx.recording() {
            return;
        }
        let nr = cx.cpus[cpu].nr_running;
        let head = format!("nohz_balancer_kick on CPU {cpu} ({nr} tasks, tick)");
        let (found, why) = match k {
            Kick::Sent(ilb, llc) => {
                let why = if llc {
                    "its last-level cache has more than one busy CPU (nr_busy_cpus > 1)".to_string()
                } else {
                    format!("CPU {cpu} runs {nr} tasks (nr_running ≥ 2)")
                };
                let found = format!(
                    "{head}: kicked CPU {ilb}, the first idle CPU (find_new_ilb), to run nohz_idle_balance for every idle CPU: {why}"
                );
                (found, format!("left to CPU {ilb}'s nohz_idle_balance"))
            }
            Kick::Misfit(ilb) => {
                let found = format!(
                    "{head}: kicked CPU {ilb} (find_new_ilb) to run nohz_idle_balance: its task does not fit it and a bigger CPU exists (check_misfit_status)"
                );
                (found, format!("left to CPU {ilb}'s nohz_idle_balance"))
            }
            _ if nr < 2 => return,
            Kick::NotDue => {
                (head, "no kick: nohz.next_balance, the idle CPUs' earliest next balance, is not reached".to_string())
            }
            Kick::NoIdle => (head, "no kick: no other CPU is idle (find_new_ilb)".to_string()),
        };
        let mut queued = Vec::new();
        SchedClass::queued(self, cpu, &mut queued);
        let refused = queued.into_iter().map(|t| (t, why.clone())).collect();
        cx.record(|| Decision::Balance { cpu, kind: BalanceKind::Tick, src: None, found, moved: Vec::new(), refused });
    }
}

impl Fair {
    /// Why `detach_tasks` skipped `p`: its load (or utilization) is more than the
    /// imbalance left allows.
    pub(super) fn too_big_words(&self, env: &Env, sd: &Domain, p: TaskId) -> String {
        let imb = env.imbalance;
        match env.migration {
            Migration::Load => {
                let l = self.task_h_load(p).max(1);
                let f = sd.nr_balance_failed.min(63);
                if self.t.version == super::Version::V4_9 {
                    format!("load {l}: half of it exceeds the imbalance left ({imb})")
                } else {
                    format!("load {l} (>> nr_balance_failed {f} = {}) exceeds the imbalance left ({imb})", l >> f)
                }
            }
            Migration::Util => {
                let u = self.task_util_est(p);
                format!("utilization {u} exceeds the imbalance left ({imb})")
            }
            Migration::Task => format!("the imbalance left ({imb}) is used up"),
            Migration::Misfit if imb > 0 => format!("it fits CPU {} (task_fits_cpu): not the misfit task", env.src),
            Migration::Misfit => "the misfit task is already taken".into(),
        }
    }
}
