//! `ule`: FreeBSD's ULE scheduler (`sys/kern/sched_ule.c`), as in FreeBSD 11.1 — the
//! version the ULE-vs-CFS paper ported to Linux — with `--set version=current` for the
//! differences FreeBSD 15 (2025) made.
//!
//! # The design in a page
//!
//! Every CPU has a `tdq` with three run queues. The **realtime** queue holds every priority
//! better than batch: realtime-class threads (`rtprio`, POSIX `SCHED_FIFO`/`SCHED_RR`, at
//! fixed levels `PRI_MIN_REALTIME`..) and *interactive* timeshare threads; it is a plain
//! priority queue with 4 priorities per FIFO list. The **timeshare** queue holds batch
//! threads as a *calendar*: a thread is inserted `k` slots after the insertion index `idx`,
//! `k` growing with its priority (recent CPU use and nice), and threads are taken from the
//! removal index `ridx`. The calendar advances one slot per stat tick, and only after the
//! slot being drained is empty, so every batch thread eventually runs and a worse priority
//! just means "further in the future". The **idle** queue holds idle-class threads
//! (`idprio`), which run only when both other queues are empty.
//! `tdq_load` counts the running and queued threads; it is the only load ULE knows.
//!
//! A timeshare thread is interactive when its **score** — voluntary sleep against run time
//! over the last ~5 s, 0 (sleeps) … 100 (runs), plus nice — is below 30 (at nice 0: asleep
//! more than 62.5 % of the time). Interactive threads always run before batch ones on a
//! CPU, FIFO among equals. Run time is sampled by the statistics clock (127 Hz); sleep is
//! measured in `hz` ticks; time waiting on a queue counts as neither. A child inherits its
//! parent's history, scaled to 0.5 s; an exiting child's run time is charged to its parent.
//!
//! A thread runs for a slice of 12 stat ticks (~94 ms), shortened as the CPU's load grows
//! (down to 2). A woken thread preempts the running one at the next return to user mode if
//! its priority is better; a remote CPU is interrupted only if the new thread is interactive
//! and the CPU runs a batch thread (`sched_shouldpreempt`). There is no full preemption of
//! user threads by user threads inside the kernel.
//!
//! Placement (`sched_pickcpu`) prefers the last CPU while the thread's cache is warm,
//! otherwise the least-loaded CPU, searching the CPU-group tree (SMT, LLC, node) for the
//! least-loaded path. CPU 0 runs a balancer every 0.5–1.5 s that moves at most one thread
//! per donor/receiver pair, and an idle CPU steals one thread from the most loaded CPU.
//!
//! # Modelling notes
//!
//! * The kernel calls the hooks at Linux's points; the mapping is: `select_task_rq(Wake)`
//!   runs the accounting of `sched_wakeup` then `sched_priority` + `sched_pickcpu`
//!   (`sched_add`'s first half); `enqueue_task` is `tdq_add`; `wakeup_preempt` is
//!   `sched_setpreempt` (local) or `tdq_notify` (remote); `dequeue_task` of the running
//!   thread is `sched_sleep` + `tdq_load_rem`, of a queued one `sched_rem`;
//!   `put_prev_task` + `pick_next_task` are `sched_switch` + `sched_choose`, and the return
//!   to user mode of the chosen thread (`sched_userret`) happens at pick; `task_tick` is
//!   `sched_clock` (the kernel ticks at `stathz` for this policy); `balance(Tick)` on CPU 0
//!   is `sched_balance`, `balance(NewIdle)` is `tdq_idled`.
//! * Deviations are listed in `docs/policies/ule.md`.

mod interact;
mod params;
mod runq;
#[cfg(test)]
mod tests;
mod topo;
mod why;

pub use interact::{interact_score, interact_update, user_priority, History};
pub use params::{Preempt, UleTunables, Version};

use params::{Layout, PRI_MAX_IDLE, PRI_MAX_TIMESHARE, PRI_MIN_IDLE};
use runq::{Calendar, Runq};
use schedlab_machine::{CpuSet, Machine};
use schedlab_sched_api::{dequeue, BalanceKind, Ctx, SchedClass, SelectKind, Stat, TaskPolicy, Tunable, Unit};
use schedlab_sim::{CpuId, Ns, TaskId};
use topo::{Groups, Loads, Lowest, Rnd, CG_SHARE_L2};

/// ULE's per-task statistics (`task_stats`).
const SCORE: Stat = Stat::def("score", Unit::None, "Interactivity penalty (ULE score; < 30 is interactive)");
const PRIORITY: Stat = Stat::def("priority", Unit::None, "Priority (ULE td_priority; lower is better)");
const USER_PRI: Stat = Stat::def("user_pri", Unit::None, "User priority (ULE td_user_pri; lower is better)");
/// `ts_runtime`, `ts_slptime`: hz ticks shifted by `SCHED_TICK_SHIFT`.
const HISTORY: Unit = Unit::Ticks("hz ticks / 1024");
const RUNTIME: Stat = Stat::def("runtime", HISTORY, "Recent run time (ULE ts_runtime)");
const SLPTIME: Stat = Stat::def("slptime", HISTORY, "Recent voluntary sleep (ULE ts_slptime)");
const SLICE: Stat = Stat::def("slice", Unit::Ticks("stat ticks"), "Slice used per thread (ULE ts_slice)");

/// `td_pri_class` (`sys/sys/priority.h`): who sets a thread's priority.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    /// `PRI_TIMESHARE`: `sched_priority` from the interactivity score and nice.
    Timeshare,
    /// `PRI_REALTIME` (`SCHED_RR`), or `PRI_FIFO` (`SCHED_FIFO`, `fifo`): a fixed rtprio level.
    Realtime { fifo: bool },
    /// `PRI_IDLE` (`idprio`): runs only when no other class has a thread.
    Idle,
}

/// Why `admit` refuses `SCHED_DEADLINE`.
const NO_DEADLINE: &str = "FreeBSD has no SCHED_DEADLINE (sched_setscheduler knows SCHED_FIFO, SCHED_RR and SCHED_OTHER; rtprio/idprio add the realtime and idle classes): use fifo, rr or idle";

/// Where a queued thread sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Where {
    Realtime(usize),
    Timeshare(usize),
    Idle(usize),
}

/// Per-thread state: `struct td_sched` plus the `struct thread` fields ULE reads.
#[derive(Clone, Debug)]
struct Td {
    hist: History,
    /// `ts_cpu`.
    cpu: CpuId,
    /// `ts_rltick`: hz tick of the last switch-out; `None` = never ran (no affinity).
    rltick: Option<i64>,
    /// `ts_slice`: stat ticks used of the current slice (counts up).
    slice: u32,
    /// `td_slptick`: hz tick the thread went to sleep.
    slptick: Option<i64>,
    /// `td_priority`, `td_base_pri`, `td_user_pri` (= `td_base_user_pri`; nothing lends).
    priority: u8,
    base_pri: u8,
    user_pri: u8,
    /// `td_pri_class`.
    class: Class,
    /// On a run queue, and where.
    runq: Option<Where>,
    /// Counted in this CPU's `tdq_load` (queued or running).
    loaded_on: Option<CpuId>,
    /// `TDF_SLICEEND`.
    sliceend: bool,
    /// Moved by the balancer or by stealing (`tdq_move` → `tdq_add(…, SRQ_YIELDING)`).
    moved_by_balancer: bool,
    alive: bool,
}

/// `struct tdq`.
#[derive(Clone, Debug)]
struct Tdq {
    load: u32,
    transferable: u32,
    switchcnt: u32,
    oldswitchcnt: u32,
    lowpri: u8,
    /// `tdq_ipipending`: an `IPI_PREEMPT` is on its way.
    ipipending: bool,
    /// `td_owepreempt` of the running thread (local immediate preemption).
    owepreempt: bool,
    /// `tdq_lowpri` before the last `tdq_add` (current's `tdq_notify` compares with it).
    lowpri_before_add: u8,
    realtime: Runq,
    timeshare: Calendar,
    idle: Runq,
    /// The running thread (`pc_curthread`), `None` for the idle thread.
    curr: Option<TaskId>,
    /// The per-CPU `randomval` of `sched_random`.
    randomval: u32,
}

/// Counters for explanations and tests.
#[derive(Clone, Debug, Default)]
pub struct UleStats {
    /// `sched_balance` runs, and how many ran on each CPU.
    pub balance_runs: u64,
    pub balance_runs_on: Vec<u64>,
    pub balance_moves: u64,
    pub steals: u64,
}

pub struct Ule {
    t: UleTunables,
    lay: Layout,
    groups: Groups,
    td: Vec<Td>,
    tdq: Vec<Tdq>,
    /// `balance_ticks`: stat ticks until CPU 0 runs `sched_balance`.
    balance_ticks: u32,
    seeded: bool,
    pub stats: UleStats,
    /// Work done in the current hook (CPUs and groups searched, threads examined), handed
    /// to the kernel through `Ctx::work` when the hook returns.
    work: std::cell::Cell<schedlab_sched_api::Work>,
    /// The machine, for pricing `cpu_search`'s reads by distance (`Work::read_cpu`).
    machine: Machine,
}

impl Ule {
    pub fn new(m: &Machine, sets: &[(String, String)]) -> Result<Ule, String> {
        let t = UleTunables::new(sets)?;
        let lay = Layout::of(t.version);
        let nrt = (usize::from(lay.min_batch)).div_ceil(usize::from(lay.ppq));
        let nidle = 256 / usize::from(lay.ppq) - (usize::from(PRI_MIN_IDLE) / usize::from(lay.ppq));
        let current = t.version == Version::Current;
        let tdq = Tdq {
            load: 0,
            transferable: 0,
            switchcnt: 0,
            oldswitchcnt: 0,
            lowpri: PRI_MAX_IDLE,
            ipipending: false,
            owepreempt: false,
            lowpri_before_add: PRI_MAX_IDLE,
            realtime: Runq::new(nrt),
            timeshare: Calendar::new(lay.calendar_slots, current),
            idle: Runq::new(nidle),
            curr: None,
            randomval: 0,
        };
        Ok(Ule {
            groups: Groups::build(m),
            tdq: vec![tdq; m.nr_cpus()],
            td: Vec::new(),
            balance_ticks: 0,
            seeded: false,
            stats: UleStats::default(),
            work: Default::default(),
            machine: m.clone(),
            t,
            lay,
        })
    }

    /// `ticks`: the hz counter. It starts at 1 so that 0 never looks like a sleep tick.
    fn ticks(&self, now: Ns) -> i64 {
        (now.0 / (1_000_000_000 / u64::from(self.t.hz))) as i64 + 1
    }

    /// Seeds the per-CPU `randomval`s and the first balancer interval from the run's RNG
    /// (`sched_setup_smp` calls `sched_balance` once at boot to set `balance_ticks`).
    fn seed(&mut self, cx: &mut Ctx) {
        if self.seeded {
            return;
        }
        self.seeded = true;
        for q in &mut self.tdq {
            q.randomval = rand::Rng::next_u32(cx.rng);
        }
        self.balance_ticks = self.next_balance_interval();
    }

    /// `sched_random()` on CPU `cpu`.
    fn random(&mut self, cpu: CpuId) -> u32 {
        let r = &mut self.tdq[cpu].randomval;
        *r = r.wrapping_mul(69069).wrapping_add(5);
        *r >> 16
    }

    fn next_balance_interval(&mut self) -> u32 {
        let iv = self.t.balance_interval;
        (iv / 2).max(1) + self.random(0) % iv
    }

    fn grow(&mut self, p: TaskId) {
        while self.td.len() <= p {
            self.td.push(Td {
                hist: History::default(),
                cpu: 0,
                rltick: None,
                slice: 0,
                slptick: None,
                priority: PRI_MAX_TIMESHARE,
                base_pri: PRI_MAX_TIMESHARE,
                user_pri: PRI_MAX_TIMESHARE,
                class: Class::Timeshare,
                runq: None,
                loaded_on: None,
                sliceend: false,
                moved_by_balancer: false,
                alive: false,
            });
        }
    }

    /// `tdq_slice`: the slice shrinks with the number of other threads on the CPU.
    fn tdq_slice(&self, cpu: CpuId) -> u32 {
        let load = self.tdq[cpu].load.saturating_sub(1);
        if load >= params::SCHED_SLICE_MIN_DIVISOR {
            self.t.slice_min
        } else if load <= 1 {
            self.t.slice
        } else {
            self.t.slice / load
        }
    }

    /// The class and, outside timeshare, the fixed user priority of a task's policy
    /// (`kern_resource.c:rtp_to_pri`): realtime `PRI_MIN_REALTIME + rtprio` with the Linux
    /// priority mapped as FreeBSD's Linux ABI does ([`params::linux_rt_to_rtprio`]); idle
    /// `PRI_MIN_IDLE` (`idprio 0`). `None` for `SCHED_DEADLINE`, which FreeBSD lacks.
    fn class_of(&self, policy: &TaskPolicy) -> Option<(Class, Option<u8>)> {
        let rt = |prio: u8| Some(self.lay.min_realtime + params::linux_rt_to_rtprio(prio));
        Some(match policy {
            TaskPolicy::Fifo { prio } => (Class::Realtime { fifo: true }, rt(*prio)),
            TaskPolicy::Rr { prio } => (Class::Realtime { fifo: false }, rt(*prio)),
            TaskPolicy::Idle => (Class::Idle, Some(PRI_MIN_IDLE)),
            TaskPolicy::Normal | TaskPolicy::Batch | TaskPolicy::Ext => (Class::Timeshare, None),
            TaskPolicy::Deadline(_) => return None,
        })
    }

    /// `sched_priority` (+ `sched_user_prio`): recompute the user priority.
    fn sched_priority(&mut self, cx: &Ctx, p: TaskId) {
        let td = &mut self.td[p];
        if td.class != Class::Timeshare {
            return;
        }
        let (pri, _) = user_priority(&td.hist, cx.task(p).nice, &self.t);
        td.user_pri = pri;
    }

    fn interact_update(&mut self, p: TaskId) {
        interact_update(&mut self.td[p].hist, self.t.slp_run_max());
    }

    fn pctcpu_update(&mut self, cx: &Ctx, p: TaskId, run: bool) {
        let t = self.ticks(cx.now);
        interact::pctcpu_update(&mut self.td[p].hist, t, run, &self.t);
    }

    /// `SCHED_AFFINITY(ts, level)`: switched out within the last `level * affinity` ticks.
    fn affinity(&self, cx: &Ctx, p: TaskId, level: u32) -> bool {
        let t = self.ticks(cx.now);
        self.td[p].rltick.is_some_and(|r| r > t - i64::from(level * self.t.affinity))
    }

    // ----- run queues -------------------------------------------------------------

    /// `tdq_runq_add`.
    fn runq_add(&mut self, cpu: CpuId, p: TaskId, preempted: bool, borrowing: bool) {
        let lay = self.lay;
        let pri = self.td[p].priority;
        let q = &mut self.tdq[cpu];
        q.transferable += 1;
        let ppq = usize::from(lay.ppq);
        let w = if pri < lay.min_batch {
            let idx = usize::from(pri) / ppq;
            q.realtime.add(idx, p, preempted);
            Where::Realtime(idx)
        } else if pri <= lay.max_batch {
            let k = match self.t.version {
                Version::V11_1 => lay.calendar_slots * usize::from(pri - lay.min_batch) / lay.batch_range as usize,
                Version::Current => usize::from(pri - lay.min_batch),
            };
            let slot = q.timeshare.add(p, k, borrowing || preempted, preempted);
            Where::Timeshare(slot)
        } else {
            let idx = (usize::from(pri) - usize::from(PRI_MIN_IDLE)) / ppq;
            q.idle.add(idx, p, preempted);
            Where::Idle(idx)
        };
        self.td[p].runq = Some(w);
    }

    /// `tdq_runq_rem`.
    fn runq_rem(&mut self, cpu: CpuId, p: TaskId) {
        let Some(w) = self.td[p].runq.take() else { return };
        let q = &mut self.tdq[cpu];
        q.transferable -= 1;
        match w {
            Where::Realtime(i) => {
                q.realtime.remove(i, p);
            }
            Where::Timeshare(s) => q.timeshare.remove(s, p),
            Where::Idle(i) => {
                q.idle.remove(i, p);
            }
        }
    }

    /// `tdq_choose`.
    fn tdq_choose(&self, cpu: CpuId) -> Option<TaskId> {
        let q = &self.tdq[cpu];
        q.realtime.choose().or_else(|| q.timeshare.choose()).or_else(|| q.idle.choose())
    }

    fn curr_pri(&self, cpu: CpuId) -> u8 {
        self.tdq[cpu].curr.map_or(PRI_MAX_IDLE, |c| self.td[c].priority)
    }

    /// `tdq_setlowpri`: the best of the running thread and the best queued one.
    fn setlowpri(&mut self, cpu: CpuId) {
        let best = self.tdq_choose(cpu).map_or(PRI_MAX_IDLE, |t| self.td[t].priority);
        self.tdq[cpu].lowpri = best.min(self.curr_pri(cpu));
    }

    /// `tdq_add`.
    fn tdq_add(&mut self, cpu: CpuId, p: TaskId, preempted: bool) {
        let pri = self.td[p].priority;
        self.tdq[cpu].lowpri_before_add = self.tdq[cpu].lowpri;
        if pri < self.tdq[cpu].lowpri {
            self.tdq[cpu].lowpri = pri;
        }
        self.runq_add(cpu, p, preempted, false);
        self.tdq[cpu].load += 1;
        self.td[p].loaded_on = Some(cpu);
        self.td[p].cpu = cpu;
    }

    fn tdq_load_rem(&mut self, cpu: CpuId, p: TaskId) {
        if self.td[p].loaded_on == Some(cpu) {
            self.tdq[cpu].load -= 1;
            self.td[p].loaded_on = None;
        }
    }

    /// `sched_thread_priority` (via `sched_prio`): change `td_priority`, re-queueing a
    /// queued thread whose priority improves and refreshing `tdq_lowpri` of a running one.
    fn set_priority(&mut self, p: TaskId, prio: u8) {
        self.td[p].base_pri = prio;
        let old = self.td[p].priority;
        if old == prio {
            return;
        }
        let cpu = self.td[p].cpu;
        if self.td[p].runq.is_some() && prio < old {
            self.runq_rem(cpu, p);
            self.td[p].priority = prio;
            // `sched_add(td, SRQ_BORROWING)` onto the same tdq.
            self.runq_add(cpu, p, false, true);
            if prio < self.tdq[cpu].lowpri {
                self.tdq[cpu].lowpri = prio;
            }
            return;
        }
        self.td[p].priority = prio;
        if self.tdq[cpu].curr == Some(p) {
            let q = &mut self.tdq[cpu];
            if prio < q.lowpri {
                q.lowpri = prio;
            } else if q.lowpri == old {
                self.setlowpri(cpu);
            }
        }
    }

    /// `sched_userret`: on return to user mode the priority becomes the user priority.
    fn userret(&mut self, cpu: CpuId, p: TaskId) {
        let td = &mut self.td[p];
        if td.priority != td.user_pri {
            td.priority = td.user_pri;
            td.base_pri = td.user_pri;
            self.setlowpri(cpu);
        }
    }

    // ----- preemption -------------------------------------------------------------

    /// `sched_shouldpreempt(pri, cpri, remote)`.
    fn shouldpreempt(&self, pri: u8, cpri: u8, remote: bool) -> bool {
        if pri >= cpri {
            return false;
        }
        if cpri >= PRI_MIN_IDLE {
            return true;
        }
        if self.t.preempt_thresh == 0 {
            return false;
        }
        if u32::from(pri) <= self.t.preempt_thresh {
            return true;
        }
        remote && pri <= self.lay.max_interact && cpri > self.lay.max_interact
    }

    /// `preempt=kthread`, ULE inside Linux 4.9 without full preemption (the ULE-vs-CFS
    /// study): a woken kernel thread switches out a running user thread at once; a user
    /// thread never preempts a running user thread (it waits for the slice end or a block).
    /// Returns true when decided here; an idle CPU, or a kernel thread running, follows
    /// FreeBSD's rules. A realtime thread is in Linux's rt class in the port, above the
    /// class ULE replaced, so its wakeup preempts as a kernel thread's does
    /// (`core.c:check_preempt_curr`, v4.9: a higher class always preempts).
    fn kthread_preempt(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId) -> bool {
        let Some(curr) = self.tdq[cpu].curr else { return false };
        let rt = |u: &Ule, t: TaskId| matches!(u.td[t].class, Class::Realtime { .. });
        if cx.task(curr).kthread || rt(self, curr) {
            return false;
        }
        std::mem::take(&mut self.td[p].moved_by_balancer);
        if cx.task(p).kthread || rt(self, p) {
            self.tdq[cpu].owepreempt = cpu == cx.this_cpu;
            self.tdq[cpu].ipipending |= cpu != cx.this_cpu;
            cx.resched_curr(cpu);
        }
        true
    }

    /// `sched_pickcpu` and the wakeup's interactivity update (`sched_wakeup`).
    fn select_task_rq_ule(&mut self, cx: &mut Ctx, p: TaskId, _prev: CpuId, kind: SelectKind, wf: u32) -> CpuId {
        self.seed(cx);
        if kind == SelectKind::Wake {
            let t = self.ticks(cx.now);
            if let Some(slp) = self.td[p].slptick.take() {
                if slp != t {
                    let add = ((t - slp) << params::SCHED_TICK_SHIFT).min(i64::from(u32::MAX / 4)) as u32;
                    let h = &mut self.td[p].hist;
                    h.slptime = h.slptime.saturating_add(add);
                    self.interact_update(p);
                    self.pctcpu_update(cx, p, false);
                }
            }
            self.td[p].slice = 0;
        }
        self.sched_priority(cx, p);
        // FreeBSD has no such flag; a wakeup that asks for the waking CPU gets it as on Linux.
        if let Some(c) = crate::placement::wake_on_current_cpu(cx, p, kind, wf) {
            return c;
        }
        let prev = self.td[p].cpu;
        let (cpu, why) = self.pickcpu(cx, p, cx.this_cpu);
        if cx.recording() {
            let why = format!("{why} (priority {})", self.td[p].priority);
            cx.record(|| schedlab_sched_api::Decision::Place { task: p, prev, cpu, path: "sched_pickcpu", why });
        }
        cpu
    }

    /// Adds to the current hook's work.
    fn count(&self, cpus: u64, groups: u64, tasks: u64) {
        let mut w = self.work.get();
        w.cpus += cpus;
        w.groups += groups;
        w.tasks += tasks;
        self.work.set(w);
    }

    /// Adds a search's work (its reads priced where they went) to the current hook's.
    fn add_work(&self, w: &schedlab_sched_api::Work) {
        let mut t = self.work.get();
        t.cpus += w.cpus;
        t.groups += w.groups;
        t.placed += w.placed;
        t.placed_ns += w.placed_ns;
        self.work.set(t);
    }

    /// Hands the hook's work to the kernel.
    fn flush_work(&self, cx: &mut Ctx) {
        cx.add_work(&self.work.take());
    }

    // ----- placement --------------------------------------------------------------

    fn loads(&self) -> (Vec<u32>, Vec<u8>, Vec<u32>) {
        (
            self.tdq.iter().map(|q| q.load).collect(),
            self.tdq.iter().map(|q| q.lowpri).collect(),
            self.tdq.iter().map(|q| q.transferable).collect(),
        )
    }

    fn rnd_modulus(&self) -> (u32, i64) {
        match self.t.version {
            Version::V11_1 => (32, 64),
            Version::Current => (128, 128),
        }
    }

    /// `sched_lowest` run on CPU `me`.
    fn lowest(&mut self, me: CpuId, g: usize, mask: &CpuSet, pri: i32, limit: i64, prefer: CpuId) -> Option<CpuId> {
        let (load, lowpri, trans) = self.loads();
        let (modulus, bonus) = self.rnd_modulus();
        let l = Loads { load: &load, lowpri: &lowpri, transferable: &trans };
        let q = Lowest { mask, pri, limit, prefer, prefer_bonus: bonus };
        let mut rnd =
            Rnd { state: &mut self.tdq[me].randomval, modulus, work: Default::default(), from: (&self.machine, me) };
        let r = self.groups.lowest(g, &q, &l, &mut rnd);
        let w = rnd.work;
        self.add_work(&w);
        r
    }

    /// `sched_highest` run on CPU `me`.
    fn highest(&mut self, me: CpuId, g: usize, mask: &CpuSet, minload: u32, l: (&[u32], &[u32])) -> Option<CpuId> {
        let lowpri = vec![0u8; self.tdq.len()];
        let modulus = if self.t.version == Version::Current { 256 } else { 32 };
        let loads = Loads { load: l.0, lowpri: &lowpri, transferable: l.1 };
        let mut rnd =
            Rnd { state: &mut self.tdq[me].randomval, modulus, work: Default::default(), from: (&self.machine, me) };
        let r = self.groups.highest(g, mask, minload, &loads, &mut rnd);
        let w = rnd.work;
        self.add_work(&w);
        r
    }

    /// `sched_pickcpu(td, flags)` on CPU `me` (11.1 procedure; §A.13.1).
    fn pickcpu(&mut self, cx: &Ctx, p: TaskId, me: CpuId) -> (CpuId, &'static str) {
        let mask = cx.task(p).affinity.clone();
        let pri = i32::from(self.td[p].priority);
        let ts_cpu = self.td[p].cpu;
        if self.tdq.len() == 1 {
            return (0, "the only CPU");
        }
        // Idle-affinity fast path: the last CPU is idle and the cache still warm.
        let leaf = self.groups.leaf[ts_cpu];
        if mask.contains(ts_cpu) && self.tdq[ts_cpu].lowpri >= PRI_MIN_IDLE && self.affinity(cx, p, CG_SHARE_L2) {
            let g = &self.groups.groups[leaf];
            let siblings_idle = !g.thread || g.mask.iter().all(|c| self.tdq[c].lowpri >= PRI_MIN_IDLE);
            if siblings_idle {
                return (ts_cpu, "its last CPU is idle and its cache still warm (SCHED_AFFINITY)");
            }
        }
        // The largest cache group the thread is still warm in (skipping SMT groups).
        let mut ccg = None;
        let mut g = Some(leaf);
        while let Some(gi) = g {
            let grp = &self.groups.groups[gi];
            if !grp.thread && self.affinity(cx, p, grp.level) {
                ccg = Some(gi);
            }
            g = grp.parent;
        }
        let root = self.groups.root();
        let mut cpu = None;
        if let Some(c) = ccg {
            if c != root && self.groups.groups[c].mask != self.groups.groups[root].mask {
                let floor = pri.max(i32::from(PRI_MAX_TIMESHARE));
                cpu = self.lowest(me, c, &mask, floor, i64::MAX, ts_cpu);
            }
        }
        if cpu.is_none() {
            cpu = self.lowest(me, root, &mask, pri, i64::MAX, ts_cpu);
        }
        if cpu.is_none() {
            cpu = self.lowest(me, root, &mask, -1, i64::MAX, ts_cpu);
        }
        let cpu = cpu.unwrap_or(ts_cpu);
        // Stay local if we would run at once here and this CPU is not much busier.
        let (s, c) = (&self.tdq[me], &self.tdq[cpu]);
        if mask.contains(me) && i32::from(s.lowpri) > pri && c.lowpri < PRI_MIN_IDLE && s.load <= c.load + 1 {
            return (me, "the waking CPU: it would run at once here and this CPU is not busier than the best found");
        }
        (cpu, "the least loaded CPU that runs nothing better (cpu_search_lowest, cache-warm group first)")
    }

    // ----- stealing and balancing ---------------------------------------------------

    /// `tdq_steal(tdq, cpu)`: a thread on `victim` that may run on `to`: the realtime queue
    /// first, then the calendar from `ridx` (11.1 skips the first thread found there, the
    /// one about to run), then the idle queue.
    fn tdq_steal(&self, cx: &Ctx, victim: CpuId, to: CpuId, taken: &[TaskId]) -> Option<TaskId> {
        let q = &self.tdq[victim];
        let ok = |t: TaskId| {
            self.count(0, 0, 1);
            cx.allowed(t, to) && !taken.contains(&t)
        };
        if let Some((_, t)) = q.realtime.iter().find(|&(_, t)| ok(t)) {
            return Some(t);
        }
        let n = q.timeshare.rq.len();
        let start = q.timeshare.ridx;
        let order = (start..n).chain(0..start).flat_map(|i| q.timeshare.rq.list(i).iter().copied());
        match self.t.version {
            Version::V11_1 => {
                let mut first = None;
                for t in order {
                    if first.is_some() && ok(t) {
                        return Some(t);
                    }
                    first = Some(t);
                }
                if let Some(f) = first.filter(|&f| ok(f)) {
                    return Some(f);
                }
            }
            Version::Current => {
                if let Some(t) = order.into_iter().find(|&t| ok(t)) {
                    return Some(t);
                }
            }
        }
        q.idle.iter().find(|&(_, t)| ok(t)).map(|(_, t)| t)
    }

    /// Asks the kernel to move `t` (`tdq_move`); it arrives through `dequeue_task` +
    /// `enqueue_task(MIGRATED)`.
    fn request_move(&mut self, cx: &mut Ctx, t: TaskId, to: CpuId) {
        self.td[t].moved_by_balancer = true;
        cx.migrate(t, to);
    }

    /// `tdq_idled`: an idle CPU steals one thread from the most loaded CPU it can find,
    /// searching its own group first, then the parents.
    fn tdq_idled(&mut self, cx: &mut Ctx, me: CpuId) {
        if !self.t.steal_idle || self.tdq.len() == 1 {
            return;
        }
        let (load, _, trans) = self.loads();
        let mut mask = CpuSet::full(self.tdq.len());
        mask.remove(me);
        let mut g = Some(self.groups.leaf[me]);
        while let Some(gi) = g {
            let grp_thread = self.groups.groups[gi].thread;
            let thresh = if grp_thread && self.t.version == Version::V11_1 { 1 } else { self.t.steal_thresh };
            let Some(cpu) = self.highest(me, gi, &mask, thresh, (&load, &trans)) else {
                g = self.groups.groups[gi].parent;
                continue;
            };
            mask.remove(cpu);
            if self.tdq[cpu].load < thresh || self.tdq[cpu].transferable == 0 {
                continue;
            }
            if self.tdq[me].load == 0 {
                if let Some(t) = self.tdq_steal(cx, cpu, me, &[]) {
                    self.record_idled(cx, me, Some(cpu), thresh, Some(t));
                    self.request_move(cx, t, me);
                    self.stats.steals += 1;
                    return;
                }
            }
        }
        self.record_idled(cx, me, None, self.t.steal_thresh, None);
    }

    /// `sched_balance` → `sched_balance_group(cpu_top)`: pair the most loaded CPUs with
    /// less loaded ones and move one thread per pair.
    fn sched_balance(&mut self, cx: &mut Ctx) {
        self.balance_ticks = self.next_balance_interval();
        if !self.t.balance || self.tdq.len() == 1 {
            return;
        }
        self.stats.balance_runs += 1;
        let n = self.tdq.len();
        self.stats.balance_runs_on.resize(n, 0);
        self.stats.balance_runs_on[cx.this_cpu] += 1;
        let me = cx.this_cpu;
        // The moves are applied by the kernel after this hook; the round works on a copy of
        // the loads updated as it decides, as `tdq_move` would have changed them.
        let (mut load, lowpri, mut trans) = self.loads();
        let mut taken: Vec<TaskId> = Vec::new();
        // 11.1 and 15 look for donors with load >= 1 (13 used 2).
        let minload = 1;
        let mut hmask = CpuSet::full(n);
        let root = self.groups.root();
        while let Some(high) = self.highest(me, root, &hmask, minload, (&load, &trans)) {
            hmask.remove(high);
            let mut lmask = hmask.clone();
            if lmask.is_empty() {
                break;
            }
            let mut anylow = true;
            loop {
                let (modulus, bonus) = self.rnd_modulus();
                let limit = i64::from(load[high]) - 1;
                let l = Loads { load: &load, lowpri: &lowpri, transferable: &trans };
                let q = Lowest { mask: &lmask, pri: -1, limit, prefer: high, prefer_bonus: bonus };
                let mut rnd = Rnd {
                    state: &mut self.tdq[me].randomval,
                    modulus,
                    work: Default::default(),
                    from: (&self.machine, me),
                };
                let low = self.groups.lowest(root, &q, &l, &mut rnd);
                let w = rnd.work;
                self.add_work(&w);
                let Some(low) = low else {
                    if anylow {
                        return;
                    }
                    break;
                };
                // `sched_balance_pair`.
                let moved = if trans[high] != 0 && load[high] > load[low] {
                    self.tdq_steal(cx, high, low, &taken)
                } else {
                    None
                };
                self.record_pair(cx, high, low, (load[high], load[low]), moved);
                match moved {
                    Some(t) => {
                        taken.push(t);
                        load[high] -= 1;
                        trans[high] -= 1;
                        load[low] += 1;
                        trans[low] += 1;
                        self.request_move(cx, t, low);
                        self.stats.balance_moves += 1;
                        hmask.remove(low);
                        break;
                    }
                    None => {
                        lmask.remove(low);
                        anylow = false;
                    }
                }
            }
        }
    }
}

impl SchedClass for Ule {
    fn name(&self) -> &'static str {
        "ule"
    }

    fn tunables(&self) -> Vec<Tunable> {
        self.t.list()
    }

    fn tick_period(&self) -> Option<Ns> {
        Some(Ns(1_000_000_000 / u64::from(self.t.stathz)))
    }

    /// FreeBSD's one-shot event timers skip at most `hz / 2` hardclock ticks on an idle CPU
    /// (`kern_clocksource.c:getnextcpuevent`): the idle thread then runs `tdq_idled` again.
    fn idle_wakeup(&self) -> Option<Ns> {
        let on = self.t.idle_wakeup > 0 && self.t.steal_idle && self.tdq.len() > 1;
        on.then(|| Ns(u64::from(self.t.idle_wakeup) * 1_000_000_000 / u64::from(self.t.hz)))
    }

    fn wake_list(&self) -> bool {
        false
    }

    /// `sched_balance_pair` moves one thread per pair (`tdq_move`, `sys/kern/sched_ule.c`,
    /// 11.1): through `Ctx::migrate`, never a batch.
    fn moves_batches(&self) -> bool {
        false
    }

    fn counters(&self) -> Vec<(String, u64)> {
        let mut v = vec![
            ("balance_runs".to_string(), self.stats.balance_runs),
            ("balance_moves".to_string(), self.stats.balance_moves),
            ("idle_steals".to_string(), self.stats.steals),
        ];
        for (c, n) in self.stats.balance_runs_on.iter().enumerate() {
            if *n > 0 {
                v.push((format!("balance_runs.cpu{c}"), *n));
            }
        }
        v
    }

    /// `sched_fork` + `sched_fork_thread` (child) and the parent's fork penalty. A task the
    /// workload starts directly is treated as forked by an idle shell: all sleep, 0.5 s of
    /// history (score 0).
    fn task_new(&mut self, cx: &mut Ctx, p: TaskId, parent: Option<TaskId>) {
        self.seed(cx);
        self.grow(p);
        let me = cx.this_cpu;
        let t = self.ticks(cx.now);
        let slice = self.tdq_slice(me) - self.t.slice_min.min(self.tdq_slice(me));
        // `admit` refused `SCHED_DEADLINE` before the task existed.
        let (class, fixed) = self.class_of(&cx.task(p).policy).unwrap_or((Class::Timeshare, None));
        match parent {
            Some(q) if self.td.get(q).is_some_and(|d| d.alive) => {
                self.pctcpu_update(cx, q, true);
                let par = self.td[q].clone();
                let c = &mut self.td[p];
                c.cpu = par.cpu;
                c.hist = par.hist;
                c.priority = par.base_pri;
                c.base_pri = par.base_pri;
                c.slice = slice;
                interact::interact_fork(&mut c.hist, self.t.slp_run_fork());
                self.sched_priority(cx, p);
                self.td[q].hist.runtime += self.t.tickincr();
                self.interact_update(q);
                self.sched_priority(cx, q);
            }
            _ => {
                let c = &mut self.td[p];
                c.cpu = cx.task(p).cpu;
                c.hist = History { runtime: 0, slptime: self.t.slp_run_fork(), ticks: 0, ltick: t, ftick: t };
                c.slice = slice;
                self.sched_priority(cx, p);
                let up = self.td[p].user_pri;
                self.td[p].priority = up;
                self.td[p].base_pri = up;
            }
        }
        let c = &mut self.td[p];
        c.class = class;
        if let Some(pri) = fixed {
            (c.priority, c.base_pri, c.user_pri) = (pri, pri, pri);
        }
        c.alive = true;
        c.rltick = None;
    }

    /// `sched_exit` → `sched_exit_thread(parent, child)`: the child's run time is charged to
    /// its parent (not its sleep).
    fn task_dead(&mut self, cx: &mut Ctx, p: TaskId) {
        self.td[p].alive = false;
        if let Some(q) = cx.task(p).parent.get() {
            if self.td.get(q).is_some_and(|d| d.alive) {
                self.td[q].hist.runtime += self.td[p].hist.runtime;
                self.interact_update(q);
                self.sched_priority(cx, q);
            }
        }
    }

    /// `sched_wakeup` (history part) then `sched_add`'s `sched_priority` + `sched_pickcpu`.
    fn select_task_rq(&mut self, cx: &mut Ctx, p: TaskId, prev: CpuId, kind: SelectKind, wf: u32) -> CpuId {
        let c = self.select_task_rq_ule(cx, p, prev, kind, wf);
        self.flush_work(cx);
        c
    }

    fn migrate_task_rq(&mut self, _cx: &mut Ctx, p: TaskId, new_cpu: CpuId) {
        self.td[p].cpu = new_cpu;
    }

    /// `tdq_add` (the second half of `sched_add`, or `tdq_move`'s add).
    fn enqueue_task(&mut self, _cx: &mut Ctx, cpu: CpuId, p: TaskId, _flags: u32) {
        self.tdq_add(cpu, p, false);
    }
    /// The running thread going to sleep: `sched_sleep` + `tdq_load_rem` (in
    /// `sched_switch`). A queued thread leaving: `sched_rem`.
    fn dequeue_task(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, flags: u32) -> bool {
        if self.tdq[cpu].curr == Some(p) {
            if flags & dequeue::SLEEP != 0 {
                self.td[p].slptick = Some(self.ticks(cx.now));
                let boost = self.t.static_boost;
                if self.td[p].class == Class::Timeshare && boost != 0 {
                    if boost == 1 {
                        // `static_boost == 1` would use the kernel sleep priority; the model
                        // has none, so it behaves like the default.
                    } else if u32::from(self.td[p].priority) > boost {
                        self.set_priority(p, boost as u8);
                    }
                }
            }
            self.tdq_load_rem(cpu, p);
            return true;
        }
        self.runq_rem(cpu, p);
        self.tdq_load_rem(cpu, p);
        if self.td[p].priority == self.tdq[cpu].lowpri {
            self.setlowpri(cpu);
        }
        true
    }

    /// `sched_setpreempt` (local) or `tdq_notify` (remote); after a balancer move, the
    /// receiver's `IPI_PREEMPT` (`sched_balance_pair`) handled by `sched_preempt`.
    fn wakeup_preempt(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, _wf: u32) {
        if self.t.preempt == Preempt::Kthread && self.kthread_preempt(cx, cpu, p) {
            return;
        }
        let pri = self.td[p].priority;
        let cpri = self.curr_pri(cpu);
        if std::mem::take(&mut self.td[p].moved_by_balancer) {
            if cpu != cx.this_cpu && cpri > self.tdq[cpu].lowpri {
                self.tdq[cpu].ipipending = true;
                cx.resched_curr(cpu);
            }
            return;
        }
        if cpu == cx.this_cpu {
            if pri < cpri {
                if self.shouldpreempt(pri, cpri, false) {
                    self.tdq[cpu].owepreempt = true;
                }
                cx.resched_curr(cpu);
            }
            return;
        }
        // 11.1 compares the new thread with the running one; current compares the tdq's new
        // `tdq_lowpri` with the one it had before the add.
        let (new, old) = match self.t.version {
            Version::V11_1 => (pri, cpri),
            Version::Current => (self.tdq[cpu].lowpri, self.tdq[cpu].lowpri_before_add),
        };
        if self.tdq[cpu].ipipending || !self.shouldpreempt(new, old, true) {
            return;
        }
        self.tdq[cpu].ipipending = true;
        cx.resched_curr(cpu);
    }

    /// `sched_switch` for the outgoing thread: pctcpu, `ts_rltick`, switch count, and back
    /// on a run queue if still runnable — at the head if it was preempted (`SW_PREEMPT`
    /// and not at slice end), otherwise at the tail.
    fn put_prev_task(&mut self, cx: &mut Ctx, cpu: CpuId, prev: TaskId) {
        self.pctcpu_update(cx, prev, true);
        self.td[prev].rltick = Some(self.ticks(cx.now));
        let q = &mut self.tdq[cpu];
        let preempted = !self.td[prev].sliceend && (q.ipipending || q.owepreempt);
        q.ipipending = false;
        q.owepreempt = false;
        q.switchcnt += 1;
        self.td[prev].sliceend = false;
        self.tdq[cpu].curr = None;
        if self.td[prev].loaded_on == Some(cpu) {
            self.runq_add(cpu, prev, preempted, false);
        }
    }

    /// `sched_choose` + `sched_userret` of the chosen thread.
    fn pick_next_task(&mut self, cx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        // `runq_choose`: a find-first-set over the status bitmap, whatever the queue length.
        cx.compared(1);
        match self.tdq_choose(cpu) {
            Some(t) => {
                self.runq_rem(cpu, t);
                self.tdq[cpu].lowpri = self.td[t].priority;
                self.tdq[cpu].curr = Some(t);
                self.pctcpu_update(cx, t, false);
                self.userret(cpu, t);
                Some(t)
            }
            None => {
                self.tdq[cpu].lowpri = PRI_MAX_IDLE;
                self.tdq[cpu].curr = None;
                None
            }
        }
    }

    /// A direct switch (`docs/futex.md`): `p` leaves its run queue and becomes the
    /// thread `sched_choose` would have returned, with the same bookkeeping (`lowpri`,
    /// pctcpu, `sched_userret`). Its priority and slice were set by its wakeup, as for any
    /// woken thread.
    fn set_next_task(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId) -> bool {
        if self.td[p].loaded_on != Some(cpu) || self.td[p].runq.is_none() {
            return false;
        }
        self.runq_rem(cpu, p);
        self.tdq[cpu].curr = Some(p);
        // Not `choosethread`'s pick, so not necessarily the best thread here: a better one
        // may still be queued (`tdq_setlowpri` takes the best of both).
        self.setlowpri(cpu);
        self.pctcpu_update(cx, p, false);
        self.userret(cpu, p);
        true
    }

    /// `sched_clock`, once per stat tick while a thread runs.
    fn task_tick(&mut self, cx: &mut Ctx, cpu: CpuId, curr: TaskId) {
        let q = &mut self.tdq[cpu];
        q.oldswitchcnt = q.switchcnt;
        q.switchcnt = q.load;
        q.timeshare.tick();
        self.pctcpu_update(cx, curr, true);
        // `PRI_FIFO_BIT`: a FIFO thread has no slice; it runs until it blocks or a better
        // thread preempts it.
        if self.td[curr].class == (Class::Realtime { fifo: true }) {
            return;
        }
        if self.td[curr].class == Class::Timeshare {
            self.td[curr].hist.runtime += self.t.tickincr();
            self.interact_update(curr);
            self.sched_priority(cx, curr);
            // The interrupt returns to user mode (`sched_userret`).
            self.userret(cpu, curr);
        }
        self.td[curr].slice += 1;
        if self.td[curr].slice >= self.tdq_slice(cpu) {
            self.td[curr].slice = 0;
            self.td[curr].sliceend = true;
            cx.resched_curr(cpu);
        }
    }

    /// `sched_relinquish`: a voluntary switch; the thread goes to the tail.
    fn yield_task(&mut self, _cx: &mut Ctx, _cpu: CpuId, _curr: TaskId) {}

    /// `sched_nice`: recompute the user priority and apply it (a realtime or idle thread's
    /// priority does not depend on nice).
    fn reweight_task(&mut self, cx: &mut Ctx, p: TaskId) {
        if self.td[p].class != Class::Timeshare {
            return;
        }
        self.sched_priority(cx, p);
        let up = self.td[p].user_pri;
        self.set_priority(p, up);
    }

    /// `sched_setscheduler` (`ksched.c:ksched_setscheduler`): FreeBSD knows `SCHED_FIFO`,
    /// `SCHED_RR` and `SCHED_OTHER` (and `idprio`), so a deadline task is refused (EINVAL).
    fn admit(&mut self, _cx: &mut Ctx, _p: TaskId, new: &TaskPolicy) -> Result<(), String> {
        self.class_of(new).map(drop).ok_or_else(|| NO_DEADLINE.to_string())
    }

    /// `rtp_to_pri` (`kern_resource.c`): `sched_class`, `sched_user_prio` with the new
    /// level, and `sched_prio` unless the thread stays in timeshare. Entering timeshare
    /// it starts at `PRI_MIN_TIMESHARE` (POSIX `SCHED_OTHER` priority 0 through the Linux
    /// ABI) until `sched_priority` next scores it. A queued thread that gets better is
    /// re-added (`sched_add(SRQ_BORROWING)`), which may preempt; a running one that gets
    /// worse keeps the CPU until its slice ends or it blocks.
    fn policy_changed(&mut self, cx: &mut Ctx, p: TaskId, _old: TaskPolicy) {
        let Some((class, fixed)) = self.class_of(&cx.task(p).policy) else { return };
        let old_class = self.td[p].class;
        self.td[p].class = class;
        let newpri = fixed.unwrap_or(self.lay.min_interact);
        let oldpri = self.td[p].user_pri;
        self.td[p].user_pri = newpri;
        if newpri == oldpri || (old_class == Class::Timeshare && class == Class::Timeshare) {
            return;
        }
        let before = self.td[p].priority;
        self.set_priority(p, newpri);
        let cpu = self.td[p].cpu;
        if self.td[p].runq.is_some() && newpri < before && self.tdq[cpu].curr.is_some() {
            self.wakeup_preempt(cx, cpu, p, 0);
        }
        self.flush_work(cx);
    }

    fn balance(&mut self, cx: &mut Ctx, cpu: CpuId, kind: BalanceKind) {
        self.seed(cx);
        match kind {
            BalanceKind::NewIdle => self.tdq_idled(cx, cpu),
            // `sched_idletd`: `cpu_idle` returned (`tdq_switchcnt++`), so the switch count
            // changed and the idle thread searches again.
            BalanceKind::IdleWake => {
                self.tdq[cpu].switchcnt += 1;
                self.tdq_idled(cx, cpu);
            }
            // The long-term balancer runs only from CPU 0's `sched_clock`.
            BalanceKind::Tick if cpu == 0 => {
                if self.balance_ticks > 0 {
                    self.balance_ticks -= 1;
                    if self.balance_ticks == 0 {
                        self.sched_balance(cx);
                    }
                }
            }
            BalanceKind::Tick | BalanceKind::NohzIdle => {}
        }
        self.flush_work(cx);
    }

    fn queued(&self, cpu: CpuId, out: &mut Vec<TaskId>) {
        let q = &self.tdq[cpu];
        out.extend(q.curr.filter(|&c| self.td[c].loaded_on == Some(cpu)));
        q.realtime.append_to(out);
        q.timeshare.rq.append_to(out);
        q.idle.append_to(out);
    }

    fn why(
        &self,
        cx: &Ctx,
        cpu: CpuId,
        first: TaskId,
        second: TaskId,
        at: schedlab_sched_api::Moment,
    ) -> schedlab_sched_api::Why {
        self.why_ule(cx, cpu, first, second, at)
    }

    fn task_stats(&self, p: TaskId) -> Vec<Stat> {
        let Some(td) = self.td.get(p) else { return Vec::new() };
        vec![
            SCORE.at(i64::from(interact_score(&td.hist, self.t.interact))),
            PRIORITY.at(i64::from(td.priority)),
            USER_PRI.at(i64::from(td.user_pri)),
            RUNTIME.at(i64::from(td.hist.runtime)),
            SLPTIME.at(i64::from(td.hist.slptime)),
            SLICE.at(i64::from(td.slice)),
        ]
    }

    fn check_invariants(&self, cx: &Ctx) -> Result<(), String> {
        let all: Vec<CpuId> = (0..self.tdq.len()).collect();
        self.check_cpus(cx, &all)
    }

    /// Thread counts are recounted from every thread (cheap); each CPU's queues and
    /// bitmaps only for `cpus`.
    fn check_cpus(&self, cx: &Ctx, cpus: &[CpuId]) -> Result<(), String> {
        COUNTS.with(|s| {
            let (loads, queued) = &mut *s.borrow_mut();
            for v in [&mut *loads, &mut *queued] {
                v.clear();
                v.resize(self.tdq.len(), 0);
            }
            self.check_tdqs(cx, cpus, loads, queued)
        })
    }
}

thread_local! {
    /// The check's per-CPU thread counts, reused: it runs after every event, and
    /// allocating them each time cost more than counting.
    static COUNTS: std::cell::RefCell<(Vec<u32>, Vec<u32>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

impl Ule {
    /// [`SchedClass::check_cpus`] with zeroed per-CPU `loads` and `queued` counts to fill.
    fn check_tdqs(&self, cx: &Ctx, cpus: &[CpuId], loads: &mut [u32], queued: &mut [u32]) -> Result<(), String> {
        for (p, td) in self.td.iter().enumerate() {
            if let Some(c) = td.loaded_on {
                loads[c] += 1;
                if td.runq.is_none() && self.tdq[c].curr != Some(p) {
                    return Err(format!("ule: task {p} counted on CPU {c} but neither queued nor running"));
                }
            }
            if td.runq.is_some() {
                let c = td.loaded_on.ok_or_else(|| format!("ule: task {p} queued but not loaded"))?;
                queued[c] += 1;
                // `tdq_lowpri` is the chosen thread's priority, so it is only ordered
                // against the realtime queue's lists (4 priorities share a list in 11.1).
                let ppq = self.lay.ppq;
                let rt = matches!(td.runq, Some(Where::Realtime(_)));
                if rt && td.priority / ppq < self.tdq[c].lowpri / ppq {
                    return Err(format!(
                        "ule: CPU {c} lowpri {} above queued task {p} at {}",
                        self.tdq[c].lowpri, td.priority
                    ));
                }
            }
        }
        for &c in cpus {
            let q = &self.tdq[c];
            if q.load != loads[c] {
                return Err(format!("ule: CPU {c} tdq_load {} but {} threads counted", q.load, loads[c]));
            }
            if q.transferable != queued[c] {
                return Err(format!("ule: CPU {c} tdq_transferable {} but {} queued", q.transferable, queued[c]));
            }
            if q.load as usize != cx.cpus[c].nr_running {
                return Err(format!(
                    "ule: CPU {c} tdq_load {} but the kernel counts {}",
                    q.load, cx.cpus[c].nr_running
                ));
            }
            if !q.timeshare.indices_ok() {
                return Err(format!("ule: CPU {c} calendar ridx {} idx {}", q.timeshare.ridx, q.timeshare.idx));
            }
            if !(q.realtime.consistent() && q.timeshare.rq.consistent() && q.idle.consistent()) {
                return Err(format!("ule: CPU {c} run-queue bitmap out of date"));
            }
        }
        Ok(())
    }
}
