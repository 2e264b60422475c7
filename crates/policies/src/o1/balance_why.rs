//! O(1)'s balancer and placement records (`Decision::Balance`, `Decision::Place`): each
//! `load_balance` attempt (the busiest CPU and the tasks to move, or why the domain counts
//! as balanced) with why every task queued on the busiest CPU stayed (`can_migrate_task`:
//! affinity, running, cache-hot; `move_tasks`: the imbalance in tasks), and
//! `try_to_wake_up`'s or `sched_balance_self`'s choice of CPU. Built only while recording;
//! nothing here changes state.

use super::balance::IdleType;
use super::O1;
use schedlab_sched_api::{fmt_ns, BalanceKind, Ctx, Decision, SchedClass};
use schedlab_sim::{CpuId, TaskId};

fn kind_of(idle: IdleType) -> BalanceKind {
    match idle {
        IdleType::NewlyIdle => BalanceKind::NewIdle,
        IdleType::NotIdle | IdleType::SchedIdle => BalanceKind::Tick,
    }
}

fn idle_words(idle: IdleType) -> &'static str {
    match idle {
        IdleType::NewlyIdle => "newly idle (idle_balance)",
        IdleType::NotIdle => "busy (rebalance_tick)",
        IdleType::SchedIdle => "idle (rebalance_tick on an idle CPU)",
    }
}

impl O1 {
    /// Records a `load_balance` pass on `this` at domain level `lvl`: `busiest` with the tasks it may
    /// move (`None`: balanced), what moved, and `tail` (the outcome).
    pub(super) fn record_lb(
        &self,
        cx: &mut Ctx,
        (this, lvl, idle): (CpuId, usize, IdleType),
        busiest: Option<(CpuId, u64)>,
        moved: Vec<TaskId>,
        tail: &str,
    ) {
        if !cx.recording() {
            return;
        }
        let d = &self.doms[this][lvl];
        let head =
            format!("load_balance on CPU {this} at the {} level (CPUs {}), {}", d.name, d.span, idle_words(idle));
        let Some((b, max)) = busiest else {
            // Whose waiting tasks the verdict concerns: the most loaded other CPU.
            let src =
                d.span.iter().filter(|&c| c != this).max_by_key(|&c| (self.rq[c].nr_running, std::cmp::Reverse(c)));
            let src = src.filter(|&c| self.rq[c].nr_running > 1);
            let found = format!(
                "{head}: balanced — find_busiest_group: no remote group's load exceeds this group's by imbalance_pct {} % (moving one task would not add an eighth of a CPU's power){tail}",
                d.imbalance_pct
            );
            cx.record(|| Decision::Balance {
                cpu: this,
                kind: kind_of(idle),
                src,
                found,
                moved: Vec::new(),
                refused: Vec::new(),
            });
            return;
        };
        let found = format!(
            "{head}: busiest CPU {b} ({} tasks), imbalance {max} task(s); nr_balance_failed {}, cache_nice_tries {}{tail}",
            self.rq[b].nr_running, d.nr_balance_failed, d.cache_nice_tries
        );
        let mut queued = Vec::new();
        SchedClass::queued(self, b, &mut queued);
        let refused = queued
            .into_iter()
            .filter(|t| !moved.contains(t))
            .map(|t| (t, self.cannot_move_words(cx, t, b, this, lvl, max)))
            .collect();
        cx.record(|| Decision::Balance { cpu: this, kind: kind_of(idle), src: Some(b), found, moved, refused });
    }

    /// Why `move_tasks` left `p` on `busiest` (the tests of `can_migrate_task`, re-read).
    fn cannot_move_words(&self, cx: &Ctx, p: TaskId, busiest: CpuId, this: CpuId, lvl: usize, max: u64) -> String {
        if !cx.allowed(p, this) {
            return format!("affinity: allowed CPUs {} exclude CPU {this}", cx.task(p).affinity);
        }
        if self.taken.contains(&p) {
            return "already taken by a balancer in this pass".into();
        }
        if self.rq[busiest].curr == Some(p) {
            return format!("running on CPU {busiest} (only the migration thread's active balance moves it)");
        }
        let d = &self.doms[this][lvl];
        let ago = self.td[p].last_ran.map(|r| cx.now.0.saturating_sub(r));
        match ago {
            Some(a) if a < d.cache_hot_time && d.nr_balance_failed <= d.cache_nice_tries => format!(
                "cache-hot: ran {} ago < cache_hot_time {}, CPU {this} or an SMT sibling busy, nr_balance_failed {} ≤ cache_nice_tries {}",
                fmt_ns(a as i64),
                fmt_ns(d.cache_hot_time as i64),
                d.nr_balance_failed,
                d.cache_nice_tries
            ),
            _ => format!("move_tasks stops after the imbalance: {max} task(s) per pass"),
        }
    }

    /// Records where a wakeup or fork placed `p`, and the rule that chose.
    pub(super) fn record_place(
        &self,
        cx: &mut Ctx,
        p: TaskId,
        prev: CpuId,
        cpu: CpuId,
        path: &'static str,
        rule: &str,
    ) {
        if !cx.recording() {
            return;
        }
        let this = cx.this_cpu;
        let state = if cx.idle_cpu(cpu) { "idle".to_string() } else { format!("{} tasks", self.rq[cpu].nr_running) };
        let why = format!(
            "{rule}; waking CPU {this} runs {} tasks, previous CPU {prev} {}; CPU {cpu}: {state}",
            self.rq[this].nr_running, self.rq[prev].nr_running
        );
        cx.record(|| Decision::Place { task: p, prev, cpu, path, why });
    }
}
