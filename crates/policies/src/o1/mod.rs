//! `o1`: the Linux 2.6 O(1) scheduler (`kernel/sched.c`, 2.6.0–2.6.22; Ingo Molnar 2002,
//! interactivity by Con Kolivas 2003, sched domains by Nick Piggin 2004), as in 2.6.20 for
//! priorities, timeslices and the tick, with the classic task-count balancer of 2.6.11/12.
//!
//! # The design in a page
//!
//! Every CPU has a runqueue with two **priority arrays**, *active* and *expired*. An array is
//! 140 FIFO lists, one per priority (0–99 real-time, 100–139 normal), and a bitmap of the
//! non-empty lists, so `schedule()` picks the head of the list of the first set bit: the
//! same handful of word reads with 10 or 10 000 runnable tasks. The running task stays in
//! its array while it runs.
//!
//! A task has a **static priority** (120 + nice) and a **dynamic priority** `prio` = static
//! − (bonus − 5), where the bonus 0..10 is `sleep_avg` in 100 ms steps: `sleep_avg` grows by
//! the time a task sleeps (a single long sleep only lifts it to just interactive), and
//! shrinks by the time it runs, divided by its bonus. A pure sleeper reaches 115, a pure
//! hog 125. A task whose `prio` is at least `DELTA` (2 at nice 0, i.e. bonus ≥ 7, 700 ms of
//! credit) better than its static priority is **interactive**.
//!
//! The **timeslice** depends on the static priority only: 100 ms at nice 0, up to 800 ms at
//! −20, down to 5 ms at 19. The tick decrements it; when it runs out the task gets a new
//! slice and goes to the **expired** array — unless it is interactive, in which case it
//! goes back to the tail of the **active** array (and an interactive task round-robins with
//! its equals every `TIMESLICE_GRANULARITY`). When the active array is empty the two arrays
//! swap: every expired task gets to run again. Interactive requeueing could starve the
//! expired tasks, so it stops (`EXPIRED_STARVING`) once the oldest expired task has waited
//! `STARVATION_LIMIT` (1 s) × `nr_running`, or when a task of better static priority waits
//! there.
//!
//! A woken task preempts the running one if its dynamic priority is strictly better
//! (`TASK_PREEMPTS_CURR`). A forked child takes half of its parent's remaining slice (so
//! forking never creates CPU time) and 95 % of its bonus.
//!
//! Balancing works on sched domains (SMT siblings, the package, NUMA nodes), each with its
//! own interval: every tick, `rebalance_tick` balances each domain whose interval has passed
//! — 1–4 ms on an idle CPU, × `busy_factor` (64) on a busy one. `load_balance` finds the
//! busiest group and its busiest CPU by task count and pulls tasks (`pull_task`) when the
//! busiest group is more than 25 % busier: expired ones first, skipping cache-hot ones
//! (`can_migrate_task`) unless this CPU is idle or balancing failed repeatedly. After
//! enough failures the busiest CPU's migration thread pushes a task over (active balance).
//! A CPU about to idle pulls at once (`idle_balance`). Wakeups go to the waker's CPU when
//! that keeps the load even (`wake_affine`), otherwise to the task's last CPU; SMT siblings
//! give way to an idle sibling (`wake_idle`). There is no remote wake list: the waker locks
//! the target runqueue.
//!
//! # Modelling notes
//!
//! Hooks: `enqueue_task(WAKEUP)` is `activate_task` (`recalc_task_prio`); `put_prev_task`
//! is `schedule()`'s debit of `prev`; `pick_next_task` is the array swap, the bitmap pick
//! and the runqueue-wait credit; `task_tick` is `task_running_tick`; `balance(Tick)` is
//! `rebalance_tick`, `balance(NewIdle)` is `idle_balance`. The tick runs at the policy's
//! `HZ` (1000 by default) and, as on a 2.6 kernel without dynticks, also on idle CPUs
//! (`SchedClass::idle_tick`). Deviations are listed in `docs/policies/o1.md`.

mod array;
mod balance;
mod balance_why;
mod params;
mod why;

pub use params::{nice_to_prio, O1Tunables, MAX_BONUS, MAX_PRIO, MAX_RT_PRIO, TUNABLES};

use array::PrioArray;
use balance::{Dom, IdleType, SD_BALANCE_FORK};
use schedlab_machine::Machine;
use schedlab_sched_api::{
    dequeue, enqueue, wf, BalanceKind, Ctx, SchedClass, SelectKind, Stat, TaskPolicy, Tunable, Unit,
};

/// O(1)'s per-task statistics (`task_stats`).
const PRIO: Stat = Stat::def("prio", Unit::None, "Dynamic priority (O(1) prio; lower is better)");
const STATIC_PRIO: Stat = Stat::def("static_prio", Unit::None, "Static priority (O(1) static_prio, 120 + nice)");
const SLEEP_AVG: Stat = Stat::def("sleep_avg", Unit::Ns, "sleep_avg per thread (O(1); more earns a bonus)");
const BONUS: Stat = Stat::def("bonus", Unit::None, "Interactivity bonus (O(1) CURRENT_BONUS, 0-10)");
const TIME_SLICE: Stat = Stat::def("time_slice", Unit::Ticks("jiffies"), "Timeslice left (O(1) time_slice)");
const INTERACTIVE: Stat = Stat::def("interactive", Unit::None, "Interactive (O(1) TASK_INTERACTIVE; 0/1)");
const EXPIRED: Stat = Stat::def("expired", Unit::None, "In the expired array (O(1); 0/1)");
use schedlab_sim::{CpuId, Ns, TaskId};

/// `p->sleep_type` (2.6.20; older kernels' `activated`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SleepType {
    Normal,
    NonInteractive,
    /// Woken by a task: 30 % of the runqueue wait is credited.
    Interactive,
    /// Woken from an interrupt (a timer): the whole runqueue wait is credited.
    Interrupted,
}

/// `p->policy` in 2.6.20 (`include/linux/sched.h`): `SCHED_NORMAL`, `SCHED_FIFO`, `SCHED_RR`,
/// `SCHED_BATCH`. There is no `SCHED_IDLE` (2.6.23) and no `SCHED_DEADLINE` (3.14).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Policy {
    Normal,
    /// `SCHED_BATCH`; the workload's `SCHED_IDLE` (and `SCHED_EXT`) run as it.
    Batch,
    Fifo,
    Rr,
}

impl Policy {
    /// The O(1) policy of a task's policy; `None` for `SCHED_DEADLINE`, which 2.6 lacks.
    fn of(p: &TaskPolicy) -> Option<(Policy, u32)> {
        Some(match p {
            TaskPolicy::Normal => (Policy::Normal, 0),
            TaskPolicy::Batch | TaskPolicy::Idle | TaskPolicy::Ext => (Policy::Batch, 0),
            TaskPolicy::Fifo { prio } => (Policy::Fifo, u32::from(*prio)),
            TaskPolicy::Rr { prio } => (Policy::Rr, u32::from(*prio)),
            TaskPolicy::Deadline(_) => return None,
        })
    }

    /// `has_rt_policy(p)`.
    fn is_rt(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr)
    }
}

/// `rt_prio(prio)`: a real-time priority, 0..=99 (a PI boost would be one too; the model
/// has none in O(1)).
fn rt_prio(prio: u32) -> bool {
    prio < MAX_RT_PRIO
}

/// Why `admit` refuses `SCHED_DEADLINE`.
const NO_DEADLINE: &str =
    "SCHED_DEADLINE does not exist in Linux 2.6's O(1) scheduler (sched_setscheduler returns EINVAL; the deadline class came with 3.14): use fifo or rr";

/// Per-task state: the `task_struct` fields the O(1) scheduler reads.
#[derive(Clone, Debug)]
struct Tk {
    static_prio: u32,
    normal_prio: u32,
    prio: u32,
    /// ns, 0..=`NS_MAX_SLEEP_AVG`.
    sleep_avg: u64,
    /// ns: last activation or switch.
    timestamp: u64,
    /// ns: last switch-out; `None` never ran (cache-cold).
    last_ran: Option<u64>,
    /// jiffies left.
    time_slice: u64,
    first_time_slice: bool,
    sleep_type: SleepType,
    /// `p->array`: (CPU, physical array index) while queued.
    array: Option<(CpuId, usize)>,
    /// The task left an expired array in a migration (`pull_task` keeps the array kind).
    moving_expired: Option<bool>,
    /// `p->policy`.
    policy: Policy,
    /// `p->rt_priority`: 1..=99 for `SCHED_FIFO`/`SCHED_RR`, 0 otherwise.
    rt_priority: u32,
    /// The pending wakeup comes from an interrupt (`wf::IRQ`).
    irq_wake: bool,
    cpu: CpuId,
    alive: bool,
}

/// `struct rq`.
#[derive(Clone, Debug, Default)]
struct Rq {
    arrays: [PrioArray; 2],
    /// Index of the active array; the other one is expired.
    active: usize,
    nr_running: u32,
    /// `cpu_load` (2.6.11: one average of `nr_running * SCHED_LOAD_SCALE`).
    cpu_load: u64,
    /// `expired_timestamp` in jiffies; `None` = no task expired since the last swap.
    expired_timestamp: Option<u64>,
    best_expired_prio: u32,
    curr: Option<TaskId>,
}

/// Counters for reports and tests.
#[derive(Clone, Debug, Default)]
pub struct O1Stats {
    pub array_swaps: u64,
    /// Slice expiries of interactive tasks requeued in the active array.
    pub interactive_requeues: u64,
    /// Slice expiries of interactive tasks sent to expired because `expired_starving`.
    pub starving_expiries: u64,
    /// Round-robin requeues of interactive tasks at `TIMESLICE_GRANULARITY`.
    pub granularity_requeues: u64,
    /// `SCHED_RR` slice expiries (the task went to the tail of its real-time list).
    pub rr_requeues: u64,
    /// Bitmap words read by the picks, and the picks (O(1): at most 3 words per pick).
    pub pick_bitmap_words: u64,
    pub picks: u64,
    /// Array insertions and removals: one list operation each (`list_add_tail`,
    /// `list_del`, plus a bitmap bit), whatever the number of queued tasks.
    pub enqueues: u64,
    pub dequeues: u64,
    pub lb_calls: u64,
    pub lb_moved: u64,
    pub idle_pulls: u64,
    pub active_balances: u64,
    pub wake_affine: u64,
    pub wake_balance: u64,
}

pub struct O1 {
    t: O1Tunables,
    td: Vec<Tk>,
    rq: Vec<Rq>,
    doms: Vec<Vec<Dom>>,
    /// Per CPU, the change of `nr_running` the current hook's requested moves will make.
    adj: Vec<i64>,
    /// The CPUs whose `adj` the current hook changed (reset at the next hook: clearing
    /// every CPU's entry made each hook O(CPUs), each tick O(CPUs²) machine-wide).
    adj_set: Vec<CpuId>,
    /// Tasks the current hook already asked to move.
    taken: Vec<TaskId>,
    pub stats: O1Stats,
}

impl O1 {
    pub fn new(m: &Machine, sets: &[(String, String)]) -> Result<O1, String> {
        let t = O1Tunables::new(sets)?;
        let n = m.nr_cpus();
        let rq = Rq { best_expired_prio: MAX_PRIO, ..Rq::default() };
        Ok(O1 {
            doms: balance::build(m, t.cache_hot_time_us * 1000),
            t,
            td: Vec::new(),
            rq: vec![rq; n],
            adj: vec![0; n],
            adj_set: Vec::new(),
            taken: Vec::new(),
            stats: O1Stats::default(),
        })
    }

    /// The names of `cpu`'s domain levels, bottom-up (`SMT`, `MC`, `DIE`, `NUMA`).
    pub fn domain_names(&self, cpu: CpuId) -> Vec<&'static str> {
        self.doms[cpu].iter().map(|d| d.name).collect()
    }

    fn jiffies(&self, now: Ns) -> u64 {
        now.0 / self.t.ns_per_jiffy()
    }

    fn grow(&mut self, p: TaskId) {
        while self.td.len() <= p {
            self.td.push(Tk {
                static_prio: 120,
                normal_prio: 120,
                prio: 120,
                sleep_avg: 0,
                timestamp: 0,
                last_ran: None,
                time_slice: 1,
                first_time_slice: false,
                sleep_type: SleepType::Normal,
                array: None,
                moving_expired: None,
                policy: Policy::Normal,
                rt_priority: 0,
                irq_wake: false,
                cpu: 0,
                alive: false,
            });
        }
    }

    fn taken_by_balance(&mut self, t: TaskId) {
        self.taken.push(t);
    }

    /// Resets the per-hook move bookkeeping.
    fn begin_hook(&mut self) {
        for c in self.adj_set.drain(..) {
            self.adj[c] = 0;
        }
        self.taken.clear();
    }

    /// `n` tasks this hook asked to move from `from` to `to`.
    fn adjust(&mut self, from: CpuId, to: CpuId, n: i64) {
        self.adj[from] -= n;
        self.adj[to] += n;
        self.adj_set.extend([from, to]);
    }

    fn expired(&self, cpu: CpuId) -> usize {
        1 - self.rq[cpu].active
    }

    // ----- arrays -------------------------------------------------------------------

    fn enqueue(&mut self, cpu: CpuId, p: TaskId, which: usize) {
        let prio = self.td[p].prio;
        self.rq[cpu].arrays[which].enqueue(p, prio);
        self.td[p].array = Some((cpu, which));
        self.stats.enqueues += 1;
    }

    fn dequeue(&mut self, p: TaskId) -> Option<(CpuId, usize)> {
        let (cpu, which) = self.td[p].array.take()?;
        let prio = self.td[p].prio;
        self.rq[cpu].arrays[which].dequeue(p, prio);
        self.stats.dequeues += 1;
        Some((cpu, which))
    }

    /// `__activate_task`: the tail of the active array (`SCHED_BATCH`: the expired one).
    fn activate_plain(&mut self, cpu: CpuId, p: TaskId) {
        let which = if self.td[p].policy == Policy::Batch { self.expired(cpu) } else { self.rq[cpu].active };
        self.enqueue(cpu, p, which);
    }

    // ----- priorities ---------------------------------------------------------------

    /// `normal_prio`: `MAX_RT_PRIO - 1 - rt_priority` for a real-time policy, otherwise
    /// `__normal_prio` (static priority minus the sleep bonus).
    fn normal_prio(&self, p: TaskId) -> u32 {
        let tk = &self.td[p];
        if tk.policy.is_rt() {
            MAX_RT_PRIO - 1 - tk.rt_priority
        } else {
            self.t.normal_prio(tk.static_prio, tk.sleep_avg)
        }
    }

    /// `effective_prio`: refreshes `normal_prio`; a task at a real-time priority keeps it,
    /// any other gets its normal priority.
    fn effective_prio(&mut self, p: TaskId) -> u32 {
        let np = self.normal_prio(p);
        let tk = &mut self.td[p];
        tk.normal_prio = np;
        if rt_prio(tk.prio) {
            tk.prio
        } else {
            np
        }
    }

    /// `recalc_task_prio(p, now)`: credit the sleep since `timestamp` to `sleep_avg`.
    fn recalc_task_prio(&mut self, p: TaskId, now: u64) -> u32 {
        let ceiling = self.t.interactive_sleep(self.td[p].static_prio);
        let max = self.t.ns_max_sleep_avg();
        let tk = &mut self.td[p];
        let mut sleep_time = if tk.policy == Policy::Batch { 0 } else { now.saturating_sub(tk.timestamp) };
        if sleep_time > 0 {
            if sleep_time > ceiling && tk.sleep_avg < ceiling {
                // One long sleep makes a task just interactive, never maximally so.
                tk.sleep_avg = ceiling;
                tk.sleep_type = SleepType::NonInteractive;
            } else {
                if tk.sleep_type == SleepType::NonInteractive {
                    if tk.sleep_avg >= ceiling {
                        sleep_time = 0;
                    } else if tk.sleep_avg + sleep_time >= ceiling {
                        tk.sleep_avg = ceiling;
                        sleep_time = 0;
                    }
                }
                tk.sleep_avg += sleep_time;
            }
            tk.sleep_avg = tk.sleep_avg.min(max);
        }
        self.effective_prio(p)
    }

    /// `CURRENT_BONUS(p)`.
    fn bonus(&self, p: TaskId) -> u64 {
        self.t.current_bonus(self.td[p].sleep_avg)
    }

    /// `JIFFIES_TO_NS(CURRENT_BONUS(p) * penalty / 100 * MAX_SLEEP_AVG / MAX_BONUS)`.
    fn penalised_sleep_avg(&self, p: TaskId, penalty: u64) -> u64 {
        let j = self.bonus(p) * penalty / 100 * self.t.max_sleep_avg() / MAX_BONUS;
        j * self.t.ns_per_jiffy()
    }

    fn interactive(&self, p: TaskId) -> bool {
        self.t.task_interactive(self.td[p].prio, self.td[p].static_prio)
    }

    /// `expired_starving(rq)` (2.6.20; `EXPIRED_STARVING` before 2.6.18).
    fn expired_starving(&self, cx: &Ctx, cpu: CpuId) -> bool {
        let rq = &self.rq[cpu];
        if rq.curr.is_some_and(|c| self.td[c].static_prio > rq.best_expired_prio) {
            return true;
        }
        let limit = self.t.starvation_limit();
        let Some(ts) = rq.expired_timestamp.filter(|_| limit > 0) else { return false };
        self.jiffies(cx.now) - ts > limit * u64::from(rq.nr_running)
    }

    /// `task_running_tick` (2.6.20). A real-time task is never expired: `SCHED_FIFO` has no
    /// slice at all, `SCHED_RR` gets a fresh `task_timeslice` (from its nice value) when it
    /// runs out and goes to the tail of its list in the active array.
    fn task_running_tick(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId) {
        let active = self.rq[cpu].active;
        if self.td[p].array != Some((cpu, active)) {
            // Already expired but not yet switched out.
            cx.resched_curr(cpu);
            return;
        }
        if rt_prio(self.td[p].prio) {
            if self.td[p].policy == Policy::Rr {
                self.rr_tick(cx, cpu, p);
            }
            return;
        }
        self.td[p].time_slice = self.td[p].time_slice.saturating_sub(1);
        if self.td[p].time_slice == 0 {
            self.slice_expired(cx, cpu, p);
            return;
        }
        let ts = self.t.task_timeslice(self.td[p].static_prio) as i64;
        let gran = self.t.timeslice_granularity(self.td[p].sleep_avg, self.rq.len() as u64);
        let left = self.td[p].time_slice;
        let used = ts - left as i64;
        if self.interactive(p) && used.rem_euclid(gran as i64) == 0 && left >= gran {
            let prio = self.td[p].prio;
            self.rq[cpu].arrays[active].requeue(p, prio);
            self.stats.granularity_requeues += 1;
            cx.resched_curr(cpu);
        }
    }

    /// `task_running_tick`'s `SCHED_RR` branch: one jiffy off the slice; at zero a new
    /// slice, a reschedule and `requeue_task` to the tail of its list in the active array.
    fn rr_tick(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId) {
        let tk = &mut self.td[p];
        tk.time_slice = tk.time_slice.saturating_sub(1);
        if tk.time_slice > 0 {
            return;
        }
        tk.time_slice = self.t.task_timeslice(tk.static_prio);
        tk.first_time_slice = false;
        let (prio, active) = (tk.prio, self.rq[cpu].active);
        self.rq[cpu].arrays[active].requeue(p, prio);
        self.stats.rr_requeues += 1;
        cx.resched_curr(cpu);
    }

    /// The slice ran out: a new slice, then the expired array, or the active one again for
    /// an interactive task while the expired tasks are not starving.
    fn slice_expired(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId) {
        self.dequeue(p);
        cx.resched_curr(cpu);
        let prio = self.effective_prio(p);
        let tk = &mut self.td[p];
        tk.prio = prio;
        tk.time_slice = self.t.task_timeslice(tk.static_prio);
        tk.first_time_slice = false;
        let j = self.jiffies(cx.now);
        self.rq[cpu].expired_timestamp.get_or_insert(j);
        let interactive = self.interactive(p);
        let starving = interactive && self.expired_starving(cx, cpu);
        if !interactive || starving {
            if starving {
                self.stats.starving_expiries += 1;
            }
            let e = self.expired(cpu);
            self.enqueue(cpu, p, e);
            let sp = self.td[p].static_prio;
            let rq = &mut self.rq[cpu];
            rq.best_expired_prio = rq.best_expired_prio.min(sp);
        } else {
            self.stats.interactive_requeues += 1;
            let a = self.rq[cpu].active;
            self.enqueue(cpu, p, a);
        }
    }
}

impl SchedClass for O1 {
    fn name(&self) -> &'static str {
        "o1"
    }

    fn tunables(&self) -> Vec<Tunable> {
        self.t.list()
    }

    fn tick_period(&self) -> Option<Ns> {
        Some(Ns(self.t.ns_per_jiffy()))
    }

    fn idle_tick(&self) -> bool {
        true
    }

    fn wake_list(&self) -> bool {
        false
    }

    fn counters(&self) -> Vec<(String, u64)> {
        let s = &self.stats;
        [
            ("array_swaps", s.array_swaps),
            ("interactive_requeues", s.interactive_requeues),
            ("starving_expiries", s.starving_expiries),
            ("granularity_requeues", s.granularity_requeues),
            ("rr_requeues", s.rr_requeues),
            ("picks", s.picks),
            ("pick_bitmap_words", s.pick_bitmap_words),
            ("enqueues", s.enqueues),
            ("dequeues", s.dequeues),
            ("lb_calls", s.lb_calls),
            ("lb_moved", s.lb_moved),
            ("idle_pulls", s.idle_pulls),
            ("active_balances", s.active_balances),
            ("wake_affine", s.wake_affine),
            ("wake_balance", s.wake_balance),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect()
    }

    /// `sched_fork` (the slice split) + the sleep_avg part of `wake_up_new_task`. A task the
    /// workload starts directly is a child of an idle shell: full sleep credit inherited, a
    /// shell's fresh slice of its own nice split in two.
    fn task_new(&mut self, cx: &mut Ctx, p: TaskId, parent: Option<TaskId>) {
        self.grow(p);
        let info = cx.task(p);
        let static_prio = nice_to_prio(info.nice);
        // `admit` refused `SCHED_DEADLINE` before the task existed.
        let (policy, rt_priority) = Policy::of(&info.policy).unwrap_or((Policy::Normal, 0));
        let batch = policy == Policy::Batch;
        let cpu = info.cpu;
        let now = cx.now.0;
        let parent = parent.filter(|&q| self.td.get(q).is_some_and(|d| d.alive));
        let (sleep_avg, slice, last_ran) = match parent {
            Some(q) => {
                let ps = self.td[q].time_slice;
                self.td[q].time_slice = ps >> 1;
                (self.td[q].sleep_avg, (ps + 1) >> 1, self.td[q].last_ran)
            }
            None => (self.t.ns_max_sleep_avg(), (self.t.task_timeslice(static_prio) + 1) >> 1, None),
        };
        self.td[p] = Tk {
            static_prio,
            normal_prio: static_prio,
            prio: static_prio,
            sleep_avg: if batch { 0 } else { sleep_avg },
            timestamp: now,
            last_ran,
            time_slice: slice.max(1),
            first_time_slice: true,
            sleep_type: SleepType::Normal,
            array: None,
            moving_expired: None,
            policy,
            rt_priority,
            irq_wake: false,
            cpu,
            alive: true,
        };
        self.td[p].sleep_avg = self.penalised_sleep_avg(p, self.t.child_penalty);
        // `sched_fork` starts the child at a normal priority, `__setscheduler` (the
        // workload's policy) then gives a real-time one.
        self.td[p].prio = self.normal_prio(p);
        self.td[p].normal_prio = self.td[p].prio;
        if let Some(q) = parent {
            if self.td[q].time_slice == 0 {
                // The parent had one jiffy left: it keeps it and expires at once.
                self.td[q].time_slice = 1;
                let qcpu = self.td[q].cpu;
                if self.rq[qcpu].curr == Some(q) {
                    self.task_running_tick(cx, qcpu, q);
                }
            }
            if self.td[q].policy != Policy::Batch {
                self.td[q].sleep_avg = self.penalised_sleep_avg(q, self.t.parent_penalty);
            }
        }
    }

    /// `sched_exit`: an exiting child that never finished its first slice on its parent's
    /// CPU gives the rest back; a hungrier child drags its parent's `sleep_avg` down.
    fn task_dead(&mut self, cx: &mut Ctx, p: TaskId) {
        self.td[p].alive = false;
        let Some(q) = cx.task(p).parent.get().filter(|&q| self.td.get(q).is_some_and(|d| d.alive)) else { return };
        let (c, w) = (self.td[p].clone(), self.t.exit_weight);
        let par = &mut self.td[q];
        if c.first_time_slice && c.cpu == par.cpu {
            par.time_slice = (par.time_slice + c.time_slice).min(self.t.task_timeslice(c.static_prio));
        }
        if c.sleep_avg < par.sleep_avg {
            par.sleep_avg = par.sleep_avg / (w + 1) * w + c.sleep_avg / (w + 1);
        }
    }

    fn select_task_rq(&mut self, cx: &mut Ctx, p: TaskId, prev: CpuId, kind: SelectKind, wake_flags: u32) -> CpuId {
        self.begin_hook();
        match kind {
            SelectKind::Fork => {
                let c = self.balance_self(cx, p, cx.this_cpu, SD_BALANCE_FORK);
                let rule = "sched_balance_self (SD_BALANCE_FORK): the idlest group, then its idlest CPU";
                self.record_place(cx, p, prev, c, "sched_balance_self", rule);
                c
            }
            SelectKind::Wake => {
                self.td[p].irq_wake = wake_flags & wf::IRQ != 0;
                // Linux 2.6 had no such flag; a wakeup that asks for the waking CPU gets it.
                if let Some(c) = crate::placement::wake_on_current_cpu(cx, p, kind, wake_flags) {
                    crate::placement::record_current_cpu(cx, p, prev, c);
                    return c;
                }
                let (c, rule) = self.wake_cpu(cx, p, prev, wake_flags & wf::SYNC != 0);
                self.record_place(cx, p, prev, c, "try_to_wake_up", rule);
                c
            }
            SelectKind::Exec => prev,
        }
    }

    fn migrate_task_rq(&mut self, _cx: &mut Ctx, p: TaskId, new_cpu: CpuId) {
        self.td[p].cpu = new_cpu;
    }

    /// New task: `wake_up_new_task`'s `__activate_task` (every fork is treated as a thread,
    /// `CLONE_VM`: the child queues at the tail). Wakeup: `activate_task`. Otherwise a move
    /// (`pull_task`): the same-named array as on the old CPU.
    fn enqueue_task(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, flags: u32) {
        self.td[p].cpu = cpu;
        self.rq[cpu].nr_running += 1;
        if flags & enqueue::INITIAL != 0 {
            self.activate_plain(cpu, p);
        } else if flags & enqueue::WAKEUP != 0 && rt_prio(self.td[p].prio) {
            // `activate_task`: a real-time task skips the sleep accounting.
            self.activate_plain(cpu, p);
        } else if flags & enqueue::WAKEUP != 0 {
            let prio = self.recalc_task_prio(p, cx.now.0);
            let tk = &mut self.td[p];
            tk.prio = prio;
            if tk.sleep_type == SleepType::Normal {
                // Woken from an interrupt (likely a hardware event, so interactive): the
                // whole runqueue wait counts as sleep; woken by a task: 30 % of it.
                tk.sleep_type = if tk.irq_wake { SleepType::Interrupted } else { SleepType::Interactive };
            }
            tk.timestamp = cx.now.0;
            self.activate_plain(cpu, p);
        } else {
            let which =
                if self.td[p].moving_expired.take().unwrap_or(false) { self.expired(cpu) } else { self.rq[cpu].active };
            self.enqueue(cpu, p, which);
        }
    }

    /// `deactivate_task` (sleep) or the dequeue half of `pull_task` (migration).
    fn dequeue_task(&mut self, _cx: &mut Ctx, cpu: CpuId, p: TaskId, flags: u32) -> bool {
        if let Some((_, which)) = self.dequeue(p) {
            if flags & dequeue::MIGRATE != 0 {
                self.td[p].moving_expired = Some(which != self.rq[cpu].active);
            }
        }
        self.rq[cpu].nr_running -= 1;
        true
    }

    /// `TASK_PREEMPTS_CURR` after `try_to_wake_up` (not for a sync wakeup on the waker's
    /// CPU), after a remote `wake_up_new_task` (a local one runs the child last) and after
    /// `pull_task`.
    fn wakeup_preempt(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, wake_flags: u32) {
        let local = cpu == cx.this_cpu;
        if local && wake_flags & (wf::FORK | wf::SYNC) != 0 {
            return;
        }
        let Some(curr) = self.rq[cpu].curr.or(cx.cpus[cpu].curr) else { return };
        if self.td[p].prio < self.td[curr].prio {
            cx.resched_curr(cpu);
        }
    }

    /// `schedule()`'s accounting of `prev`: the run time since `timestamp`, divided by the
    /// bonus, comes off `sleep_avg`.
    fn put_prev_task(&mut self, cx: &mut Ctx, cpu: CpuId, prev: TaskId) {
        let now = cx.now.0;
        let run_time = now.saturating_sub(self.td[prev].timestamp).min(self.t.ns_max_sleep_avg());
        let run_time = run_time / self.bonus(prev).max(1);
        let tk = &mut self.td[prev];
        tk.sleep_avg = tk.sleep_avg.saturating_sub(run_time);
        tk.timestamp = now;
        tk.last_ran = Some(now);
        self.rq[cpu].curr = None;
    }

    /// `schedule()`'s pick: swap the arrays if the active one is empty, take the head of the
    /// first set bit's list, and credit a woken task part of its runqueue wait.
    fn pick_next_task(&mut self, cx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        // `sched_find_first_bit` over the active array's bitmap: constant work.
        cx.compared(1);
        let now = cx.now.0;
        if self.rq[cpu].nr_running == 0 {
            self.rq[cpu].expired_timestamp = None;
            self.rq[cpu].curr = None;
            return None;
        }
        let rq = &mut self.rq[cpu];
        if rq.arrays[rq.active].nr_active == 0 {
            rq.active = 1 - rq.active;
            rq.expired_timestamp = None;
            rq.best_expired_prio = MAX_PRIO;
            self.stats.array_swaps += 1;
        }
        let (idx, words) = rq.arrays[rq.active].find_first_bit();
        self.stats.picks += 1;
        self.stats.pick_bitmap_words += u64::from(words);
        let next = *rq.arrays[rq.active].list(idx).front()?;
        let st = self.td[next].sleep_type;
        if !rt_prio(self.td[next].prio) && matches!(st, SleepType::Interactive | SleepType::Interrupted) {
            let mut delta = now.saturating_sub(self.td[next].timestamp);
            if st == SleepType::Interactive {
                delta = delta * (self.t.on_runqueue_weight * 128 / 100) / 128;
            }
            let ts = self.td[next].timestamp;
            let new_prio = self.recalc_task_prio(next, ts + delta);
            if new_prio != self.td[next].prio {
                let (c, which) = self.dequeue(next).expect("picked from an array");
                self.td[next].prio = new_prio;
                self.enqueue(c, next, which);
            }
        }
        let tk = &mut self.td[next];
        tk.sleep_type = SleepType::Normal;
        tk.timestamp = now;
        self.rq[cpu].curr = Some(next);
        Some(next)
    }

    fn task_tick(&mut self, cx: &mut Ctx, cpu: CpuId, curr: TaskId) {
        self.task_running_tick(cx, cpu, curr);
    }

    /// `sys_sched_yield`: a normal task goes to the expired array, behind every task of the
    /// epoch; a real-time one to the tail of its list in the active array.
    fn yield_task(&mut self, cx: &mut Ctx, cpu: CpuId, curr: TaskId) {
        let target = if rt_prio(self.td[curr].prio) { self.rq[cpu].active } else { self.expired(cpu) };
        match self.td[curr].array {
            Some((c, w)) if c == cpu && w != target => {
                self.dequeue(curr);
                self.enqueue(cpu, curr, target);
            }
            Some((c, w)) => {
                let prio = self.td[curr].prio;
                self.rq[c].arrays[w].requeue(curr, prio);
            }
            None => {}
        }
        let _ = cx;
    }

    /// `set_user_nice`: new static priority and dynamic priority, requeued in place; the
    /// CPU reschedules if the task got better, or it runs and got worse.
    fn reweight_task(&mut self, cx: &mut Ctx, p: TaskId) {
        if rt_prio(self.td[p].prio) {
            // Only the static priority changes (it sets the `SCHED_RR` slice).
            self.td[p].static_prio = nice_to_prio(cx.task(p).nice);
            return;
        }
        let queued = self.dequeue(p);
        self.td[p].static_prio = nice_to_prio(cx.task(p).nice);
        let old = self.td[p].prio;
        let new = self.effective_prio(p);
        self.td[p].prio = new;
        if let Some((cpu, which)) = queued {
            self.enqueue(cpu, p, which);
            let running = self.rq[cpu].curr == Some(p);
            if new < old || (new > old && running) {
                cx.resched_curr(cpu);
            }
        }
    }

    /// `sched_setscheduler`'s policy check: 2.6 knows `SCHED_NORMAL`, `SCHED_FIFO`,
    /// `SCHED_RR` and `SCHED_BATCH` only, so a deadline task is refused (EINVAL).
    fn admit(&mut self, _cx: &mut Ctx, _p: TaskId, new: &TaskPolicy) -> Result<(), String> {
        Policy::of(new).map(drop).ok_or_else(|| NO_DEADLINE.to_string())
    }

    /// `sched_setscheduler` → `__setscheduler` (2.6.20): off the arrays, the new policy and
    /// `rt_priority`, `prio = normal_prio` (`SCHED_BATCH` loses its `sleep_avg`), back on
    /// (`__activate_task`: the active array, the expired one for batch); the CPU reschedules
    /// if the running task got worse, or a queued one now beats the running one.
    fn policy_changed(&mut self, cx: &mut Ctx, p: TaskId, _old: TaskPolicy) {
        let Some((policy, rt_priority)) = Policy::of(&cx.task(p).policy) else { return };
        let queued = self.dequeue(p);
        let oldprio = self.td[p].prio;
        self.td[p].policy = policy;
        self.td[p].rt_priority = rt_priority;
        if policy == Policy::Batch {
            self.td[p].sleep_avg = 0;
        }
        let np = self.normal_prio(p);
        (self.td[p].normal_prio, self.td[p].prio) = (np, np);
        let Some((cpu, _)) = queued else { return };
        self.activate_plain(cpu, p);
        let curr = self.rq[cpu].curr.or(cx.cpus[cpu].curr);
        if curr == Some(p) {
            if np > oldprio {
                cx.resched_curr(cpu);
            }
        } else if curr.is_some_and(|c| np < self.td[c].prio) {
            cx.resched_curr(cpu);
        }
    }

    fn balance(&mut self, cx: &mut Ctx, cpu: CpuId, kind: BalanceKind) {
        self.begin_hook();
        match kind {
            BalanceKind::Tick => {
                let idle = if self.rq[cpu].curr.is_none() { IdleType::SchedIdle } else { IdleType::NotIdle };
                self.rebalance_tick(cx, cpu, idle);
            }
            BalanceKind::NewIdle => self.idle_balance(cx, cpu),
            BalanceKind::NohzIdle | BalanceKind::IdleWake => {}
        }
    }

    fn queued(&self, cpu: CpuId, out: &mut Vec<TaskId>) {
        for a in &self.rq[cpu].arrays {
            out.extend(a.iter().map(|(_, t)| t));
        }
    }

    fn why(
        &self,
        cx: &Ctx,
        cpu: CpuId,
        first: TaskId,
        second: TaskId,
        at: schedlab_sched_api::Moment,
    ) -> schedlab_sched_api::Why {
        self.why_o1(cx, cpu, first, second, at)
    }

    fn task_stats(&self, p: TaskId) -> Vec<Stat> {
        let Some(tk) = self.td.get(p) else { return Vec::new() };
        let expired = tk.array.is_some_and(|(c, w)| w != self.rq[c].active);
        vec![
            PRIO.at(i64::from(tk.prio)),
            STATIC_PRIO.at(i64::from(tk.static_prio)),
            SLEEP_AVG.at(tk.sleep_avg as i64),
            BONUS.at(self.t.current_bonus(tk.sleep_avg) as i64),
            TIME_SLICE.at(tk.time_slice as i64),
            INTERACTIVE.at(i64::from(self.t.task_interactive(tk.prio, tk.static_prio))),
            EXPIRED.at(i64::from(expired)),
        ]
    }

    fn check_invariants(&self, cx: &Ctx) -> Result<(), String> {
        let all: Vec<CpuId> = (0..self.rq.len()).collect();
        self.check_cpus(cx, &all)
    }

    /// The checks of the CPUs an event touched (every task's `sleep_avg` bound too: the
    /// tasks are few beside the CPUs' arrays).
    fn check_cpus(&self, cx: &Ctx, cpus: &[CpuId]) -> Result<(), String> {
        for &c in cpus {
            let rq = &self.rq[c];
            for (w, a) in rq.arrays.iter().enumerate() {
                if !a.consistent() {
                    return Err(format!("o1: CPU {c} array {w}: bitmap or count out of date"));
                }
                for (prio, t) in a.iter() {
                    let tk = &self.td[t];
                    if tk.array != Some((c, w)) || tk.prio != prio || tk.cpu != c {
                        return Err(format!(
                            "o1: task {t} in CPU {c} array {w} list {prio} but records {:?} prio {}",
                            tk.array, tk.prio
                        ));
                    }
                    if tk.time_slice == 0 || tk.prio >= MAX_PRIO || rt_prio(tk.prio) != tk.policy.is_rt() {
                        return Err(format!(
                            "o1: task {t} slice {} prio {} policy {:?}",
                            tk.time_slice, tk.prio, tk.policy
                        ));
                    }
                    if rt_prio(tk.prio) && w != rq.active {
                        return Err(format!("o1: real-time task {t} (prio {}) in the expired array", tk.prio));
                    }
                }
            }
            let n = rq.arrays[0].nr_active + rq.arrays[1].nr_active;
            if n != rq.nr_running || n as usize != cx.cpus[c].nr_running {
                return Err(format!(
                    "o1: CPU {c} nr_running {} arrays hold {n}, the kernel counts {}",
                    rq.nr_running, cx.cpus[c].nr_running
                ));
            }
            if rq.curr != cx.cpus[c].curr {
                return Err(format!("o1: CPU {c} curr {:?} but the kernel runs {:?}", rq.curr, cx.cpus[c].curr));
            }
        }
        let max = self.t.ns_max_sleep_avg();
        if let Some((p, tk)) = self.td.iter().enumerate().find(|(_, tk)| tk.sleep_avg > max) {
            return Err(format!("o1: task {p} sleep_avg {} above NS_MAX_SLEEP_AVG", tk.sleep_avg));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
