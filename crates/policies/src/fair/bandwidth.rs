//! CFS bandwidth control (`CONFIG_CFS_BANDWIDTH`, `kernel/sched/fair.c` v5.15 and v6.18;
//! `Documentation/scheduler/sched-bwc.rst`): a group limited by cgroup v2 `cpu.max` has a
//! pool of runtime (`struct cfs_bandwidth`) refilled with one quota per period by the
//! period timer (`sched_cfs_period_timer` → `do_sched_cfs_period_timer` →
//! `__refill_cfs_bandwidth_runtime`, capped at quota + `cpu.max.burst`). Each of its
//! per-CPU runqueues runs on a local slice taken from the pool
//! (`assign_cfs_rq_runtime`, `sysctl_sched_cfs_bandwidth_slice` = 5 ms) and charged by
//! `update_curr` (`account_cfs_rq_runtime`). A runqueue whose slice is spent and whose
//! pool is empty is throttled (`check_cfs_rq_runtime` at put and pick,
//! `check_enqueue_throttle` at its first enqueue) until the period timer or the slack
//! timer hands out runtime again (`distribute_cfs_runtime`, `unthrottle_cfs_rq`); a
//! runqueue left empty gives back all but 1 ms of its slice (`return_cfs_rq_runtime`),
//! which the slack timer distributes 5 ms later (`do_sched_cfs_slack_timer`).
//!
//! Two throttle models, by version. Before v6.18 `throttle_cfs_rq` dequeues the group's
//! entity at once (its tasks vanish from the CPU wherever they are) and
//! `unthrottle_cfs_rq` puts it back. v6.18 ("sched/fair: Task based throttle model") only
//! marks the runqueue throttled; each of its tasks leaves when it next returns to user
//! mode (`task_throttle_setup_work` at pick, `throttle_cfs_rq_work`), parked on its
//! runqueue's `throttled_limbo_list`, and `tg_unthrottle_up` enqueues every parked task
//! again. Simulated tasks return to user mode right after the pick, so a picked task of a
//! throttled hierarchy is parked at once and the pick starts over.
//!
//! Deviations: the period timer starts at a group's first pull of runtime
//! (`start_cfs_bandwidth`; the kernel also starts it when `cpu.max` is written), phases
//! aligned on multiples of the period from time 0 (v6.18 draws a random phase); runqueues
//! of other CPUs are unthrottled directly from the timer's CPU (v6.18 sends them a CSD);
//! a throttled runqueue's PELT clock is not frozen; the kernel model still counts
//! throttled tasks in `nr_running`.

use super::entity::{RqId, Se};
use super::load::UPDATE_TG;
use super::{Fair, Version};
use schedlab_sched_api::{dequeue, enqueue, CpuMax, Ctx, GroupStat};
use schedlab_sim::{CpuId, Ns, TaskId};

/// `sysctl_sched_cfs_bandwidth_slice` (5000 µs): what a runqueue takes from the pool at a time.
pub const SCHED_CFS_BANDWIDTH_SLICE: u64 = 5_000_000;
/// `min_cfs_rq_runtime`: a runqueue keeps this much when it returns slack.
const MIN_CFS_RQ_RUNTIME: i64 = 1_000_000;
/// `min_bandwidth_expiration`: no slack is handed out this close to a refill.
const MIN_BANDWIDTH_EXPIRATION: u64 = 2_000_000;
/// `cfs_bandwidth_slack_period`: the slack timer's delay.
const CFS_BANDWIDTH_SLACK_PERIOD: u64 = 5_000_000;

/// `cpu.stat`'s bandwidth fields (`cpu_extra_stat_show`): periods elapsed, periods that
/// ended with a runqueue throttled, time runqueues spent throttled (summed over CPUs),
/// and (v5.16+) refills that found more than a quota used, and by how much in all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct CpuStat {
    pub nr_periods: u64,
    pub nr_throttled: u64,
    pub throttled_time: u64,
    pub nr_bursts: u64,
    pub burst_time: u64,
}

/// `struct cfs_bandwidth`, with the ledger of the `--check` conservation invariant.
#[derive(Clone, Debug, Default)]
pub(super) struct CfsBandwidth {
    pub max: CpuMax,
    /// `runtime`: the pool left this period.
    pub runtime: u64,
    /// v6.18 `runtime_snap`: the pool right after the last refill.
    pub runtime_snap: u64,
    pub idle: bool,
    pub period_active: bool,
    /// The period timer's expiry and the CPU it is pinned to (`HRTIMER_MODE_ABS_PINNED`).
    pub expires: u64,
    pub timer_cpu: CpuId,
    /// The slack timer's expiry while it is pending (`slack_started`), and its CPU.
    pub slack_at: Option<u64>,
    pub slack_cpu: CpuId,
    /// `throttled_cfs_rq`, in throttle order.
    pub throttled: Vec<RqId>,
    pub stat: CpuStat,
    /// Runtime that entered the pool (refills, and v6.18's 1 ns per runqueue at set-up),
    /// what the quota + burst cap cut off, and what runqueues were charged.
    pub minted: i128,
    pub capped: i128,
    pub charged: i128,
}

/// The bandwidth fields of a `struct cfs_rq`.
#[derive(Clone, Debug, Default)]
pub(super) struct RqBandwidth {
    pub runtime_enabled: bool,
    pub runtime_remaining: i64,
    pub throttled: bool,
    /// Throttled ancestors, this runqueue included (`throttled_hierarchy` if non-zero).
    pub throttle_count: u32,
    /// When the current throttle started (v6.18: when its first task was parked).
    pub throttled_clock: Option<u64>,
    /// v6.18 `throttled_limbo_list`: tasks parked here.
    pub limbo: Vec<TaskId>,
}

impl Fair {
    /// `tg_set_cfs_bandwidth` (core.c) for every limited group at creation: the pool
    /// refilled once from empty, each runqueue enabled with 0 (v5.15) or 1 ns (v6.18) of
    /// local runtime.
    pub(super) fn init_bandwidth(&mut self, maxes: &[CpuMax]) {
        let n = self.nr_cpus;
        self.bw = maxes.iter().map(|&max| CfsBandwidth { max, ..CfsBandwidth::default() }).collect();
        self.bw_rq = vec![RqBandwidth::default(); self.rqs.len()];
        self.bw_used = maxes.iter().any(|m| m.quota.is_some());
        let start = i64::from(self.task_throttle());
        for g in 0..self.bw.len() {
            if self.bw[g].max.quota.is_none() {
                continue;
            }
            self.refill(g);
            for c in 0..n {
                let rq = self.group_rq(g, c);
                let b = &mut self.bw_rq[rq.0 as usize];
                b.runtime_enabled = true;
                b.runtime_remaining = start;
            }
            self.bw[g].minted += i128::from(start) * n as i128;
        }
    }

    /// v6.18's task-based throttling (else v5.15's whole-runqueue throttling).
    pub(super) fn task_throttle(&self) -> bool {
        self.t.version >= Version::V6_18
    }

    fn b(&self, rq: RqId) -> &RqBandwidth {
        &self.bw_rq[rq.0 as usize]
    }
    fn bm(&mut self, rq: RqId) -> &mut RqBandwidth {
        &mut self.bw_rq[rq.0 as usize]
    }

    /// `cfs_rq_throttled`.
    pub(super) fn cfs_rq_throttled(&self, rq: RqId) -> bool {
        self.bw_used && self.b(rq).throttled
    }

    /// `throttled_hierarchy`: this runqueue or an ancestor is throttled.
    pub(super) fn throttled_hierarchy(&self, rq: RqId) -> bool {
        self.bw_used && self.b(rq).throttle_count > 0
    }

    /// `__refill_cfs_bandwidth_runtime`: one quota more, v6.18 counting a burst when the
    /// last period used more than a quota, capped at quota + burst.
    fn refill(&mut self, g: usize) {
        let v6 = self.t.version > Version::V5_15;
        let b = &mut self.bw[g];
        let Some(quota) = b.max.quota else { return };
        b.runtime += quota;
        b.minted += i128::from(quota);
        if v6 {
            let used_beyond = b.runtime_snap as i64 - b.runtime as i64;
            if used_beyond > 0 {
                b.stat.burst_time += used_beyond as u64;
                b.stat.nr_bursts += 1;
            }
        }
        let cap = quota + b.max.burst;
        if b.runtime > cap {
            b.capped += i128::from(b.runtime - cap);
            b.runtime = cap;
        }
        b.runtime_snap = b.runtime;
    }

    /// `account_cfs_rq_runtime` from `update_curr`: charge `delta` to the local slice; when
    /// it is spent, pull a new one, and if that fails reschedule so that the put or pick
    /// that follows throttles the runqueue.
    pub(super) fn account_cfs_rq_runtime(&mut self, cx: &mut Ctx, rq: RqId, delta: u64) {
        if !self.bw_used || !self.b(rq).runtime_enabled {
            return;
        }
        let g = self.rq(rq).tg;
        self.bw[g].charged += i128::from(delta);
        let b = self.bm(rq);
        b.runtime_remaining -= delta as i64;
        if b.runtime_remaining > 0 || b.throttled {
            return;
        }
        if !self.assign_cfs_rq_runtime(cx, rq, SCHED_CFS_BANDWIDTH_SLICE) && self.rq(rq).curr.is_some() {
            cx.resched_curr(self.rq(rq).cpu);
        }
    }

    /// `assign_cfs_rq_runtime` / `__assign_cfs_rq_runtime`: take up to `target` minus what
    /// the runqueue owes from the pool (all of it when the quota is unlimited), starting
    /// the period timer; `true` if the runqueue then has runtime.
    fn assign_cfs_rq_runtime(&mut self, cx: &mut Ctx, rq: RqId, target: u64) -> bool {
        let g = self.rq(rq).tg;
        let want = (target as i64 - self.b(rq).runtime_remaining) as u64;
        let amount = match self.bw[g].max.quota {
            None => want,
            Some(_) => {
                self.start_cfs_bandwidth(cx, g);
                let b = &mut self.bw[g];
                let amount = b.runtime.min(want);
                if b.runtime > 0 {
                    b.runtime -= amount;
                    b.idle = false;
                }
                amount
            }
        };
        let b = self.bm(rq);
        b.runtime_remaining += amount as i64;
        b.runtime_remaining > 0
    }

    /// `start_cfs_bandwidth`: arm the period timer if it is not running, at the next
    /// multiple of the period after its last expiry (`hrtimer_forward_now`).
    fn start_cfs_bandwidth(&mut self, cx: &mut Ctx, g: usize) {
        let now = cx.now.0;
        let b = &mut self.bw[g];
        if b.period_active {
            return;
        }
        b.period_active = true;
        b.timer_cpu = cx.this_cpu;
        if b.expires <= now {
            let p = b.max.period;
            b.expires += ((now - b.expires) / p + 1) * p;
        }
        cx.timer(cx.this_cpu, Ns(b.expires));
    }

    /// `check_cfs_rq_runtime` (from `put_prev_entity` and the pick): throttle a limited
    /// runqueue whose slice is spent; `true` if it is (now or already) throttled.
    pub(super) fn check_cfs_rq_runtime(&mut self, cx: &mut Ctx, rq: RqId) -> bool {
        if !self.bw_used || !self.b(rq).runtime_enabled || self.b(rq).runtime_remaining > 0 {
            return false;
        }
        if self.b(rq).throttled {
            return true;
        }
        self.throttle_cfs_rq(cx, rq)
    }

    /// `check_enqueue_throttle` (from `enqueue_entity` when the runqueue's first entity
    /// arrives): a waking group must not run on an already spent slice.
    pub(super) fn check_enqueue_throttle(&mut self, cx: &mut Ctx, rq: RqId) {
        if !self.bw_used || !self.b(rq).runtime_enabled || self.rq(rq).curr.is_some() || self.b(rq).throttled {
            return;
        }
        self.account_cfs_rq_runtime(cx, rq, 0);
        if self.b(rq).runtime_remaining <= 0 {
            self.throttle_cfs_rq(cx, rq);
        }
    }

    /// `throttle_cfs_rq`: unless a last 1 ns can still be had (a refill raced with us),
    /// queue the runqueue on the group's throttled list, count the throttle down the
    /// subtree (`tg_throttle_down`) and, before v6.18, take the group's entity off the CPU.
    fn throttle_cfs_rq(&mut self, cx: &mut Ctx, rq: RqId) -> bool {
        if self.assign_cfs_rq_runtime(cx, rq, 1) {
            return false;
        }
        let g = self.rq(rq).tg;
        let cpu = self.rq(rq).cpu;
        self.bw[g].throttled.push(rq);
        self.walk_tg_tree(g, cpu, &mut |f, q| f.bm(q).throttle_count += 1);
        if !self.task_throttle() {
            self.dequeue_throttled_group(cx, rq);
        }
        let clock = (!self.task_throttle()).then_some(cx.now.0);
        let b = self.bm(rq);
        b.throttled = true;
        b.throttled_clock = clock;
        true
    }

    /// The dequeue half of v5.15's `throttle_cfs_rq`: the group entity leaves its parent
    /// as a sleeper, so do the ancestors it leaves empty; every ancestor loses the
    /// group's task counts.
    fn dequeue_throttled_group(&mut self, cx: &mut Ctx, rq: RqId) {
        let r = self.rq(rq);
        let (tasks, runnable, mut idle) = (r.h_nr_running, r.h_nr_runnable, r.idle_h_nr);
        let gse = self.group_se(r.tg, r.cpu);
        let mut flags = dequeue::SLEEP;
        if self.t.version >= Version::V6_12 {
            // v6.12 abuses DEQUEUE_SPECIAL so that this dequeue is never delayed.
            flags |= dequeue::SPECIAL;
        }
        let mut dequeuing = true;
        for s in self.path(gse) {
            if !self.e(s).on_rq {
                break;
            }
            let q = self.cfs_rq_of(s);
            if dequeuing {
                let f = if self.e(s).sched_delayed { flags | dequeue::DELAYED } else { flags };
                self.dequeue_entity(cx, q, s, f);
            } else {
                self.update_load_avg(cx, q, s, UPDATE_TG);
                self.update_cfs_group(cx, s);
            }
            idle = self.idle_above(s, tasks, idle);
            self.count_h(q, -1, tasks, runnable, idle);
            if self.rq(q).load != 0 {
                dequeuing = false;
            }
        }
    }

    /// `walk_tg_tree_from(tg)` on one CPU: `f` on group `g`'s runqueue and those of all
    /// its descendants, parents first.
    fn walk_tg_tree(&mut self, g: usize, cpu: CpuId, f: &mut dyn FnMut(&mut Fair, RqId)) {
        let rq = self.group_rq(g, cpu);
        f(self, rq);
        for i in 0..self.tg_children[g].len() {
            let c = self.tg_children[g][i];
            self.walk_tg_tree(c, cpu, f);
        }
    }

    /// `unthrottle_cfs_rq`: account the throttled time, count the throttle off the
    /// subtree (`tg_unthrottle_up`, which in v6.18 enqueues the parked tasks again) and,
    /// before v6.18, put the group's entity back as a waking one; an idle CPU with fair
    /// work again is rescheduled.
    fn unthrottle_cfs_rq(&mut self, cx: &mut Ctx, rq: RqId) {
        let (g, cpu) = (self.rq(rq).tg, self.rq(rq).cpu);
        if self.task_throttle() && self.b(rq).runtime_enabled && self.b(rq).runtime_remaining <= 0 {
            return;
        }
        let now = cx.now.0;
        let b = self.bm(rq);
        b.throttled = false;
        if let Some(at) = b.throttled_clock.take() {
            self.bw[g].stat.throttled_time += now - at;
        }
        self.bw[g].throttled.retain(|&q| q != rq);
        let mut parked = Vec::new();
        self.walk_tg_tree(g, cpu, &mut |f, q| {
            let b = f.bm(q);
            b.throttle_count -= 1;
            if b.throttle_count == 0 {
                parked.append(&mut b.limbo);
            }
        });
        if self.task_throttle() {
            for p in parked {
                self.tf[p].throttled = false;
                self.enqueue_task_fair(cx, cpu, p, enqueue::WAKEUP);
            }
        } else if self.rq(rq).load != 0 {
            self.enqueue_throttled_group(cx, rq);
        }
        if cx.cpus[cpu].curr.is_none() && self.rq(self.root(cpu)).nr_running > 0 {
            cx.resched_curr(cpu);
        }
    }

    /// The enqueue half of v5.15's `unthrottle_cfs_rq`: the group entity and the ancestors
    /// it left go back as waking entities, up to a throttled ancestor; the ancestors
    /// regain the group's task counts.
    fn enqueue_throttled_group(&mut self, cx: &mut Ctx, rq: RqId) {
        let r = self.rq(rq);
        let (tasks, runnable, mut idle) = (r.h_nr_running, r.h_nr_runnable, r.idle_h_nr);
        let gse = self.group_se(r.tg, r.cpu);
        let mut enqueuing = true;
        for s in self.path(gse) {
            if self.e(s).on_rq {
                enqueuing = false;
            }
            let q = self.cfs_rq_of(s);
            if enqueuing {
                self.enqueue_entity(cx, q, s, enqueue::WAKEUP);
            } else {
                self.update_load_avg(cx, q, s, UPDATE_TG);
                self.update_cfs_group(cx, s);
            }
            idle = self.idle_above(s, tasks, idle);
            self.count_h(q, 1, tasks, runnable, idle);
            if self.cfs_rq_throttled(q) {
                break;
            }
        }
    }

    /// `distribute_cfs_runtime`: in throttle order, give each throttled runqueue just
    /// enough to be owed nothing (+1 ns) and unthrottle it, until the pool is empty.
    fn distribute_cfs_runtime(&mut self, cx: &mut Ctx, g: usize) {
        let list = self.bw[g].throttled.clone();
        for rq in list {
            if self.bw[g].runtime == 0 {
                break;
            }
            if !self.b(rq).throttled {
                continue;
            }
            let owed = (1 - self.b(rq).runtime_remaining) as u64;
            let give = owed.min(self.bw[g].runtime);
            self.bw[g].runtime -= give;
            self.bm(rq).runtime_remaining += give as i64;
            if self.b(rq).runtime_remaining > 0 {
                self.unthrottle_cfs_rq(cx, rq);
            }
        }
    }

    /// `return_cfs_rq_runtime` (end of `dequeue_entity`): a limited runqueue left empty
    /// gives its slice back to the pool but for `min_cfs_rq_runtime`; if the pool then
    /// holds more than a slice while runqueues are throttled, the slack timer is started
    /// (`start_cfs_slack_bandwidth`) unless a refill is due within 7 ms.
    pub(super) fn return_cfs_rq_runtime(&mut self, cx: &mut Ctx, rq: RqId) {
        if !self.bw_used || !self.b(rq).runtime_enabled || self.rq(rq).nr_running != 0 {
            return;
        }
        let slack = self.b(rq).runtime_remaining - MIN_CFS_RQ_RUNTIME;
        if slack <= 0 {
            return;
        }
        let g = self.rq(rq).tg;
        self.bm(rq).runtime_remaining -= slack;
        let now = cx.now.0;
        let b = &mut self.bw[g];
        b.runtime += slack as u64;
        let soon =
            b.period_active && b.expires.saturating_sub(now) < CFS_BANDWIDTH_SLACK_PERIOD + MIN_BANDWIDTH_EXPIRATION;
        if b.runtime > SCHED_CFS_BANDWIDTH_SLICE && !b.throttled.is_empty() && !soon && b.slack_at.is_none() {
            let at = now + CFS_BANDWIDTH_SLACK_PERIOD;
            b.slack_at = Some(at);
            b.slack_cpu = cx.this_cpu;
            cx.timer(cx.this_cpu, Ns(at));
        }
    }

    /// `sched_cfs_period_timer` → `do_sched_cfs_period_timer`: forward by the periods
    /// elapsed; refill; a period with nothing throttled marks the group idle, and a second
    /// one stops the timer; otherwise count the throttled period and distribute. `false`
    /// when the timer stops.
    fn period_timer(&mut self, cx: &mut Ctx, g: usize) -> bool {
        let now = cx.now.0;
        let b = &mut self.bw[g];
        let overrun = (now - b.expires) / b.max.period + 1;
        b.expires += overrun * b.max.period;
        if b.max.quota.is_none() {
            return false;
        }
        let throttled = !b.throttled.is_empty();
        b.stat.nr_periods += overrun;
        self.refill(g);
        let b = &mut self.bw[g];
        if b.idle && !throttled {
            return false;
        }
        if !throttled {
            b.idle = true;
            return true;
        }
        b.stat.nr_throttled += overrun;
        while !self.bw[g].throttled.is_empty() && self.bw[g].runtime > 0 {
            let before = (self.bw[g].throttled.len(), self.bw[g].runtime);
            self.distribute_cfs_runtime(cx, g);
            if (self.bw[g].throttled.len(), self.bw[g].runtime) == before {
                break; // v6.18 may refuse an unthrottle; nothing more can change
            }
        }
        self.bw[g].idle = false;
        true
    }

    /// `do_sched_cfs_slack_timer`: unless a refill is due within 2 ms, distribute the pool
    /// if it holds more than a slice.
    fn slack_timer(&mut self, cx: &mut Ctx, g: usize) {
        let now = cx.now.0;
        let b = &mut self.bw[g];
        b.slack_at = None;
        if b.period_active && b.expires.saturating_sub(now) < MIN_BANDWIDTH_EXPIRATION {
            return;
        }
        if b.max.quota.is_some() && b.runtime > SCHED_CFS_BANDWIDTH_SLICE {
            self.distribute_cfs_runtime(cx, g);
        }
    }

    /// The fair class's timers on `cpu` (the period and slack timers of the groups pinned
    /// there): run those due, then ask for the next.
    pub(super) fn bandwidth_timers(&mut self, cx: &mut Ctx, cpu: CpuId) {
        if !self.bw_used {
            return;
        }
        let now = cx.now.0;
        let mut next = u64::MAX;
        for g in 0..self.bw.len() {
            let b = &self.bw[g];
            if b.period_active && b.timer_cpu == cpu && b.expires <= now && !self.period_timer(cx, g) {
                self.bw[g].period_active = false;
            }
            let b = &self.bw[g];
            if b.slack_cpu == cpu && b.slack_at.is_some_and(|at| at <= now) {
                self.slack_timer(cx, g);
            }
            let b = &self.bw[g];
            if b.period_active && b.timer_cpu == cpu {
                next = next.min(b.expires);
            }
            if let Some(at) = b.slack_at.filter(|_| b.slack_cpu == cpu) {
                next = next.min(at);
            }
        }
        if next != u64::MAX {
            cx.timer(cpu, Ns(next));
        }
    }

    /// v6.18 `enqueue_throttled_task`: a task still marked throttled (moved while parked)
    /// is parked again if its new runqueue is in a throttled hierarchy; `true` if it was.
    pub(super) fn enqueue_throttled_task(&mut self, rq: RqId, p: TaskId) -> bool {
        if !self.tf[p].throttled {
            return false;
        }
        if self.throttled_hierarchy(rq) {
            self.bm(rq).limbo.push(p);
            return true;
        }
        self.tf[p].throttled = false;
        false
    }

    /// v6.18 `throttle_cfs_rq_work` at once for the task just picked from a throttled
    /// hierarchy: dequeued as a sleeper (`DEQUEUE_THROTTLE`), parked on its runqueue's
    /// limbo list; the first task parked on a throttled runqueue starts its throttled
    /// clock (`record_throttle_clock`).
    pub(super) fn park_throttled_task(&mut self, cx: &mut Ctx, se: Se) {
        let p = self.se_task(se).expect("a picked task");
        let rq = self.cfs_rq_of(se);
        // Through `dequeue_task_fair`: the estimate leaves and learns, as at a sleep.
        let cpu = self.rq(rq).cpu;
        self.util_est_dequeue(cpu, p);
        self.util_est_update(p, true, u64::from(cx.capacity(cpu)));
        self.dequeue_entities(cx, se, dequeue::SLEEP | dequeue::SPECIAL);
        self.bm(rq).limbo.push(p);
        self.tf[p].throttled = true;
        let now = cx.now.0;
        let mut at = Some(rq);
        while let Some(q) = at {
            let b = self.bm(q);
            if b.throttled && b.throttled_clock.is_none() {
                b.throttled_clock = Some(now);
            }
            let r = self.rq(q);
            at = (r.tg != 0).then(|| self.cfs_rq_of(self.group_se(r.tg, r.cpu)));
        }
    }

    /// v6.18 `dequeue_throttled_task`: the kernel dequeues a parked task (it moves or
    /// changes class): it leaves the limbo list; a sleep also clears `p->throttled`, else
    /// the enqueue that follows parks it again if it lands in a throttled hierarchy
    /// (`enqueue_throttled_task`). `false` if `p` is not parked.
    pub(super) fn dequeue_throttled_task(&mut self, p: TaskId, flags: u32) -> bool {
        if !self.tf[p].throttled {
            return false;
        }
        let rq = self.cfs_rq_of(self.task_se(p));
        self.bm(rq).limbo.retain(|&t| t != p);
        if flags & dequeue::SLEEP != 0 {
            self.tf[p].throttled = false;
        }
        true
    }

    /// `throttled_lb_pair` (v5.15: neither CPU's runqueue of the group may be throttled)
    /// / `lb_throttled_hierarchy` (v6.18: the destination's only).
    pub(super) fn throttled_lb_pair(&self, p: TaskId, src: CpuId, dst: CpuId) -> bool {
        if !self.bw_used {
            return false;
        }
        let tg = self.tf[p].tg as usize;
        let dst_t = self.throttled_hierarchy(self.group_rq(tg, dst));
        dst_t || (!self.task_throttle() && self.throttled_hierarchy(self.group_rq(tg, src)))
    }

    /// Calls `f` on the tasks of `cpu` that the walk from its root does not reach: those of
    /// throttled runqueues whose entity was taken off (v5.15) and parked ones (v6.18).
    pub(super) fn for_each_throttled_task(&self, cpu: CpuId, f: &mut dyn FnMut(TaskId)) {
        if !self.bw_used {
            return;
        }
        for g in 1..self.tgs.len() {
            let rq = self.group_rq(g, cpu);
            let b = self.b(rq);
            for &p in &b.limbo {
                f(p);
            }
            if b.throttled && !self.e(self.group_se(g, cpu)).on_rq {
                self.for_each_queued_task(rq, f);
            }
        }
    }

    /// The `--check` invariants: each limited group's pool within 0..=quota + burst and
    /// every local slice at most a slice; runtime conserved (what entered the pool, less
    /// what the cap cut off, is in the pool, in the local slices or was charged); the
    /// throttled list is exactly the throttled runqueues, each counting itself.
    pub(super) fn check_bandwidth(&self) -> Result<(), String> {
        if !self.bw_used {
            return Ok(());
        }
        for (g, b) in self.bw.iter().enumerate() {
            let Some(quota) = b.max.quota else { continue };
            let name = &self.tgs[g].name;
            if b.runtime > quota + b.max.burst {
                return Err(format!("group `{name}`: pool {} above quota + burst", b.runtime));
            }
            let mut local: i128 = 0;
            for c in 0..self.nr_cpus {
                let rq = self.group_rq(g, c);
                let rb = self.b(rq);
                local += i128::from(rb.runtime_remaining);
                if rb.runtime_remaining > SCHED_CFS_BANDWIDTH_SLICE as i64 {
                    return Err(format!(
                        "group `{name}` CPU {c}: local runtime {} above a slice",
                        rb.runtime_remaining
                    ));
                }
                if rb.throttled != b.throttled.contains(&rq) || (rb.throttled && rb.throttle_count == 0) {
                    return Err(format!("group `{name}` CPU {c}: throttled {} disagrees with its list", rb.throttled));
                }
            }
            let held = i128::from(b.runtime) + local + b.charged;
            if held != b.minted - b.capped {
                return Err(format!(
                    "group `{name}`: runtime not conserved: {} in, {} capped, {} pool + {local} local + {} charged",
                    b.minted, b.capped, b.runtime, b.charged
                ));
            }
        }
        Ok(())
    }

    /// `cpu.stat` of each limited group (`cpu_extra_stat_show`); the burst fields from
    /// v5.16 only.
    pub(super) fn bandwidth_stats(&self) -> Vec<GroupStat> {
        let bursts = self.t.version > Version::V5_15;
        let limited = self.bw.iter().enumerate().filter(|(_, b)| b.max.quota.is_some());
        limited
            .map(|(g, b)| GroupStat {
                name: self.tgs[g].name.clone(),
                max: b.max,
                nr_periods: b.stat.nr_periods,
                nr_throttled: b.stat.nr_throttled,
                throttled_ns: b.stat.throttled_time,
                nr_bursts: bursts.then_some(b.stat.nr_bursts),
                burst_ns: bursts.then_some(b.stat.burst_time),
            })
            .collect()
    }
}
