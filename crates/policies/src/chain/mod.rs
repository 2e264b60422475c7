//! The class chain (`kernel/sched/core.c:__pick_next_task`, `wakeup_preempt`, v6.12):
//! deadline > rt > fair, behind one [`SchedClass`] so that the kernel still sees a single
//! policy. Each hook goes to the class of the task it concerns (`TaskInfo::policy`, the
//! effective policy: a PI boost moves a task up); `pick_next_task` walks the classes in
//! order; a wakeup in a higher class than `curr`'s preempts at once; balancing runs each
//! class's own (rt and deadline push/pull, then the fair class's).
//!
//! The fair slot is the fair class (`cfs`, `eevdf`); rt and deadline are `rt.rs` and
//! `dl.rs`. What keeps rt from starving fair depends on the version (`bw.rs`): rt
//! throttling before v6.12, the fair server from v6.12. The stop class is not modelled
//! (the kernel's stopper work is its `ActiveBalance`). sched_ext (`crate::ext`) joins as
//! the lowest class when an `ext:*` scheduler is built (`Chain::attach_ext`).

mod bw;
mod core_sched;
mod dl;
mod hooks;
mod rt;
mod search;
mod slots;
mod why;

use crate::fair::pelt::SchedAvg;
use crate::fair::Fair;
use bw::{Mode, Phase, Server, Throttle};
use schedlab_machine::Machine;
use schedlab_sched_api::{Choice, Ctx, Kind, Pass, Request, TaskPolicy, TunableSpec, TunableTable, Unit};
use schedlab_sim::{CpuId, Ns, TaskId};

/// A scheduling class, in the kernel's order (`Dl` is above `Rt`, above `Fair`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Dl,
    Rt,
    Fair,
    /// sched_ext, below fair (`include/asm-generic/vmlinux.lds.h:SCHED_DATA`, v6.12).
    Ext,
}

/// What a CPU runs, and in which class (`None`: the idle task).
pub type Curr = Option<(TaskId, Class)>;

/// `core.c:__setscheduler_class` (v6.12): the class of a policy.
pub fn class_of(pol: &TaskPolicy) -> Class {
    match pol {
        TaskPolicy::Deadline(_) => Class::Dl,
        TaskPolicy::Fifo { .. } | TaskPolicy::Rr { .. } => Class::Rt,
        _ => Class::Fair,
    }
}

/// The chain's tunables (the kernel's sysctls and features), each defined once here.
#[derive(Clone, Debug)]
pub struct ChainTunables {
    /// `sched_rt_runtime_us` (−1: unlimited), also the deadline admission cap.
    pub rt_runtime_us: i64,
    /// `sched_rt_period_us`.
    pub rt_period_us: u64,
    /// `sched_rr_timeslice_ms`.
    pub rr_timeslice_ms: u64,
    /// `RT_PUSH_IPI`: a CPU that would pull asks the overloaded CPU to push instead.
    pub rt_push_ipi: bool,
    /// `rt_bandwidth`: throttle (before v6.12), fair_server (v6.12+) or none.
    pub mode: Mode,
    /// The fair server's runtime and period (`/sys/kernel/debug/sched/fair_server`).
    pub server_runtime: u64,
    pub server_period: u64,
}

const BANDWIDTHS: &[Choice] = &[
    Choice { name: "throttle", aliases: &[] },
    Choice { name: "fair_server", aliases: &[] },
    Choice { name: "none", aliases: &[] },
];
/// The upper bound of the µs sysctls (`sched_rt_period_us` is a `u32` of µs, `int` for the
/// runtime; 4000 s keeps their ns products far from overflow).
const MAX_US: i64 = 4_000_000_000;

/// The chain's tunables, each defined here once.
pub static TUNABLES: TunableTable<ChainTunables> = TunableTable {
    owner: "the class chain",
    version: None,
    specs: &[
        TunableSpec::new(
            "sched_rt_runtime_us",
            Kind::int(-1, MAX_US, Unit::Us),
            "rt runtime per period per CPU (-1 unlimited); also the deadline admission cap",
            |t| t.rt_runtime_us,
            |t, v| t.rt_runtime_us = v,
        ),
        TunableSpec::new(
            "sched_rt_period_us",
            Kind::int(1, MAX_US, Unit::Us),
            "rt throttling period",
            |t| t.rt_period_us as i64,
            |t, v| t.rt_period_us = v as u64,
        ),
        TunableSpec::new(
            "sched_rr_timeslice_ms",
            Kind::int(1, 1000, Unit::Ms),
            "SCHED_RR timeslice, rounded to ticks",
            |t| t.rr_timeslice_ms as i64,
            |t, v| t.rr_timeslice_ms = v as u64,
        ),
        TunableSpec::new(
            "rt_push_ipi",
            Kind::Bool,
            "RT_PUSH_IPI: ask an overloaded CPU to push instead of pulling from it",
            |t| t.rt_push_ipi.into(),
            |t, v| t.rt_push_ipi = v != 0,
        ),
        TunableSpec::new(
            "rt_bandwidth",
            Kind::Choice(BANDWIDTHS),
            "what keeps rt from starving fair: throttle (before 6.12), fair_server (6.12+) or none",
            |t| match t.mode {
                Mode::Throttle => 0,
                Mode::FairServer => 1,
                Mode::None => 2,
            },
            |t, v| t.mode = [Mode::Throttle, Mode::FairServer, Mode::None][v as usize],
        ),
        TunableSpec::new(
            "fair_server_runtime_us",
            Kind::int(0, MAX_US, Unit::Us),
            "fair server runtime per period",
            |t| (t.server_runtime / 1000) as i64,
            |t, v| t.server_runtime = v as u64 * 1000,
        ),
        TunableSpec::new(
            "fair_server_period_us",
            Kind::int(100, MAX_US, Unit::Us),
            "fair server period",
            |t| (t.server_period / 1000) as i64,
            |t, v| t.server_period = v as u64 * 1000,
        ),
    ],
};

impl ChainTunables {
    /// Defaults per version: the fair server from v6.12 (`eevdf` 6.12, 6.18), rt
    /// throttling before (`cfs` 5.15, `eevdf` 6.6). Names of other tables are left to the
    /// caller.
    fn new(fair_server: bool, sets: &[(String, String)]) -> Result<ChainTunables, String> {
        let mut t = ChainTunables {
            rt_runtime_us: 950_000,
            rt_period_us: 1_000_000,
            rr_timeslice_ms: 100,
            rt_push_ipi: true,
            mode: if fair_server { Mode::FairServer } else { Mode::Throttle },
            server_runtime: 50_000_000,
            server_period: 1_000_000_000,
        };
        TUNABLES.apply_known(&mut t, sets, Pass::All)?;
        if t.rt_runtime_us > t.rt_period_us as i64 {
            return Err(format!(
                "tunable `sched_rt_runtime_us` = {} exceeds `sched_rt_period_us` = {}",
                t.rt_runtime_us, t.rt_period_us
            ));
        }
        if t.server_runtime > t.server_period {
            return Err("tunable `fair_server_runtime_us` exceeds `fair_server_period_us`".into());
        }
        // `sched_rt_runtime_us = -1` turns throttling off (`sched_rt_handler`).
        if t.rt_runtime_us < 0 && t.mode == Mode::Throttle {
            t.mode = Mode::None;
        }
        Ok(t)
    }
    /// The deadline bandwidth cap per CPU in 20-bit fixed point (`dl_bw->bw`), `None` if
    /// unlimited; with the fair server its own bandwidth is reserved out of it
    /// (`dl_server_apply_params`, v6.12).
    pub fn dl_cap_per_cpu(&self) -> Option<u64> {
        if self.rt_runtime_us < 0 {
            return None;
        }
        let cap = schedlab_sched_api::to_ratio(self.rt_period_us, self.rt_runtime_us as u64);
        let server = if self.mode == Mode::FairServer {
            schedlab_sched_api::to_ratio(self.server_period, self.server_runtime)
        } else {
            0
        };
        Some(cap.saturating_sub(server))
    }
}

/// Deadline > rt > fair, as one policy.
pub struct Chain {
    fair: Fair,
    rt: rt::Rt,
    dl: dl::Dl,
    t: ChainTunables,
    /// Per task: a PI boost's effective policy (`pi_setprio`), over `TaskInfo::policy`.
    boost: slots::Slots<Option<TaskPolicy>>,
    /// Per task: the class it is queued in (`None`: not queued).
    queued_in: Vec<Option<Class>>,
    /// Per CPU: what runs, and whether the fair class picked it (a running task that
    /// changed into fair was not picked by it until the next `schedule`).
    curr: Vec<Curr>,
    unpicked: Vec<bool>,
    /// Per CPU: when the running task's (or idle's) time was last charged.
    exec_start: Vec<Ns>,
    /// Per CPU: queued fair tasks (delayed ones included).
    fair_nr: Vec<usize>,
    throttle: Vec<Throttle>,
    server: Vec<Server>,
    /// Per CPU: the class that ran before the current pick (`prev_balance`).
    prev_class: Vec<Option<Class>>,
    /// Per CPU: an `RT_PUSH_IPI` push request is pending; the fair class kicked it.
    push_kick: Vec<bool>,
    fair_kick: Vec<bool>,
    /// Per CPU: the fair class's utilisation at its last `cpufreq_update_util`, which an rt
    /// class's own kick passes on (the governor reads every class's figure at each call).
    last_cfs: Vec<u32>,
    /// Per CPU: `rq->avg_rt` and `rq->avg_dl`, the PELT signals of the time the rt and
    /// deadline classes ran (`update_rt_rq_load_avg`, `update_dl_rq_load_avg`).
    avg_rt: Vec<SchedAvg>,
    avg_dl: Vec<SchedAvg>,
    /// Per CPU: a push queued by the last pick (a balance callback).
    push_pending: Vec<bool>,
    rt_throttles: u64,
    /// Per CPU: uclamp's max-aggregation of the runnable fair and rt tasks' clamps.
    uclamp: crate::uclamp::Uclamp,
    /// The sched_ext class, when an `ext:*` scheduler is loaded.
    ext: Option<crate::ext::Ext>,
}

impl Chain {
    /// The chain around fair class `fair`; `sets` may hold the chain's names, the fair
    /// class's (`make` gets them all) and others, which the caller checks
    /// (`schedlab_sched_api::tunable::check_known`). `fair_server`: the version has the
    /// fair server.
    pub fn new(
        m: &Machine,
        sets: &[(String, String)],
        fair_server: bool,
        make: impl FnOnce(&[(String, String)]) -> Result<Fair, String>,
    ) -> Result<Chain, String> {
        let t = ChainTunables::new(fair_server, sets)?;
        let fair = make(sets)?;
        let n = m.nr_cpus();
        let tick = m.tick_ns().0.max(1);
        let rr_ticks = (t.rr_timeslice_ms * 1_000_000).div_ceil(tick).max(1);
        Ok(Chain {
            fair,
            rt: rt::Rt::new(n, rr_ticks),
            dl: dl::Dl::new(n),
            t,
            queued_in: Vec::new(),
            boost: slots::Slots::new(None),
            curr: vec![None; n],
            unpicked: vec![false; n],
            exec_start: vec![Ns(0); n],
            fair_nr: vec![0; n],
            throttle: vec![Throttle::default(); n],
            server: vec![Server::default(); n],
            prev_class: vec![None; n],
            push_kick: vec![false; n],
            fair_kick: vec![false; n],
            last_cfs: vec![0; n],
            avg_rt: vec![SchedAvg::default(); n],
            avg_dl: vec![SchedAvg::default(); n],
            push_pending: vec![false; n],
            rt_throttles: 0,
            uclamp: crate::uclamp::Uclamp::new(n),
            ext: None,
        })
    }

    /// Loads a sched_ext scheduler below fair (`scx_ops_enable`).
    pub fn attach_ext(&mut self, ext: crate::ext::Ext) {
        self.ext = Some(ext);
    }

    /// `core.c:__setscheduler_class` (v6.12) with sched_ext: the ext class for the
    /// policies the loaded scheduler claims (`task_should_scx`), else [`class_of`].
    pub(crate) fn cls(&self, pol: &TaskPolicy) -> Class {
        match &self.ext {
            Some(e) if e.claims(pol) => Class::Ext,
            _ => class_of(pol),
        }
    }

    /// Room for `n` tasks in every per-task array, exactly: `grow`'s amortised doubling
    /// would leave up to half of each unused (about 50 bytes a task at 100 000 tasks).
    fn reserve_exact(&mut self, n: usize) {
        self.queued_in.reserve_exact(n.saturating_sub(self.queued_in.len()));
        self.boost.reserve_exact(n);
        self.rt.reserve_exact(n);
        self.dl.reserve_exact(n);
    }
    fn grow(&mut self, p: TaskId) {
        if self.queued_in.len() <= p {
            self.queued_in.resize(p + 1, None);
            self.boost.grow(p);
        }
        self.rt.grow(p);
        self.dl.grow(p);
    }

    /// The effective policy of `p`: a PI boost, else the task's own.
    fn eff(&self, cx: &Ctx, p: TaskId) -> TaskPolicy {
        self.boost.get(p).copied().flatten().unwrap_or(cx.task(p).policy)
    }

    /// Rt or deadline tasks are queued on `cpu`.
    fn rtdl_nr(&self, cpu: CpuId) -> usize {
        self.rt.nr(cpu) + self.dl.nr(cpu)
    }

    /// Calls a fair-class hook, noting what its requests mean for the chain: a delayed
    /// dequeue completed (`Blocked`) leaves the fair count; a `Kick` is the fair class's.
    ///
    /// For the call the fair class holds the chain's uclamp state (read-only: the fair
    /// class never writes it), so its energy-aware placement and fitness tests see the
    /// runqueues' and tasks' clamps; swapping moves two vectors' headers, nothing more.
    fn fair_call<R>(&mut self, cx: &mut Ctx, f: impl FnOnce(&mut Fair, &mut Ctx) -> R) -> R {
        let before = cx.requests.len();
        self.fair.lend_uclamp(&mut self.uclamp);
        let r = f(&mut self.fair, cx);
        self.fair.lend_uclamp(&mut self.uclamp);
        for i in before..cx.requests.len() {
            match cx.requests[i] {
                Request::Blocked(t) if self.queued_in[t] == Some(Class::Fair) => {
                    self.queued_in[t] = None;
                    let cpu = cx.task(t).cpu;
                    self.fair_left(cx, cpu);
                }
                Request::Kick(c) => self.fair_kick[c] = true,
                Request::Cpufreq { cpu, .. } => {
                    let others = self.rtdl_util(cx, cpu);
                    if let Request::Cpufreq { util, .. } = &mut cx.requests[i] {
                        self.last_cfs[cpu] = util.cfs;
                        *util = schedlab_sched_api::CpuUtil { cfs: util.cfs, ..others };
                    }
                }
                _ => {}
            }
        }
        r
    }

    /// `rt_rq_is_runnable(&rq->rt)` (sched.h): an rt task is queued on `cpu` (the running
    /// one included) and the rt queue is not throttled; schedutil then asks for the top
    /// frequency (`effective_cpu_util`, v5.15 core.c and v6.18 syscalls.c, when uclamp is not used).
    fn rt_rq_is_runnable(&self, cpu: CpuId) -> bool {
        self.rt.nr(cpu) > 0 && self.rt_runnable(cpu)
    }

    /// The rt class's "Kick cpufreq" (`enqueue_top_rt_rq` and `sched_rt_rq_dequeue`,
    /// kernel/sched/rt.c v5.15): `cpufreq_update_util(rq, 0)` when `cpu`'s rt queue
    /// changes, with the fair class's last figure; without it an rt hog that keeps the fair
    /// class off the CPU would never reach the governor.
    fn kick_cpufreq_rt(&mut self, cx: &mut Ctx, cpu: CpuId) {
        let util = schedlab_sched_api::CpuUtil { cfs: self.last_cfs[cpu], ..self.rtdl_util(cx, cpu) };
        cx.cpufreq_update(cpu, 0, util);
    }

    /// `update_rt_rq_load_avg` and `update_dl_rq_load_avg` (kernel/sched/pelt.c, v5.15 to
    /// v6.18) on `cpu` up to now: each signal accrues while its class ran (`running` is
    /// whether the current task is of the class, as `put_prev_task_rt`, `task_tick_rt`
    /// and `__update_blocked_others` pass it) and decays otherwise, with weight 1. They run
    /// on the task clock here, where the kernel uses `rq_clock_pelt`: the same on a CPU at
    /// its reference frequency and full capacity, not frequency-invariant elsewhere.
    fn update_rtdl_avgs(&mut self, cx: &Ctx, cpu: CpuId) {
        let now = cx.now.0;
        let class = self.curr[cpu].map(|(_, c)| c);
        let rt = u64::from(class == Some(Class::Rt));
        let dl = u64::from(class == Some(Class::Dl));
        self.avg_rt[cpu].update(now, rt, rt, rt, 1);
        self.avg_dl[cpu].update(now, dl, dl, dl, 1);
    }

    /// What schedutil reads from the rt and deadline classes (`effective_cpu_util`,
    /// kernel/sched/core.c v5.15, syscalls.c v6.18): `cpu_util_rt` and `cpu_util_dl` (the
    /// signals above, brought up to now), `cpu_bw_dl` (the CPU's deadline running
    /// bandwidth scaled to its capacity: `(running_bw * capacity) >> BW_SHIFT`),
    /// `rt_rq_is_runnable` and the runqueue's uclamp values (`uclamp_rq_get`).
    fn rtdl_util(&mut self, cx: &Ctx, cpu: CpuId) -> schedlab_sched_api::CpuUtil {
        self.update_rtdl_avgs(cx, cpu);
        let bw = (u128::from(self.dl.running_bw(cpu)) * u128::from(cx.capacity(cpu))) >> 20;
        let (uclamp_min, uclamp_max) = self.uclamp.rq_values(cpu);
        schedlab_sched_api::CpuUtil {
            cfs: 0,
            rt: self.avg_rt[cpu].util_avg as u32,
            dl: self.avg_dl[cpu].util_avg as u32,
            dl_bw: bw as u32,
            rt_runnable: self.rt_rq_is_runnable(cpu),
            uclamp_used: self.uclamp.used,
            uclamp_min,
            uclamp_max,
        }
    }

    /// A fair task left `cpu`'s queue.
    fn fair_left(&mut self, cx: &mut Ctx, cpu: CpuId) {
        self.fair_nr[cpu] -= 1;
        if self.fair_nr[cpu] == 0 {
            self.server[cpu].stop();
        }
        let _ = cx;
    }

    /// Charges the time since the last charge on `cpu` to what ran: a deadline task's
    /// runtime, the rt queue's throttling budget, or the fair server (fair and idle time).
    fn account(&mut self, cx: &mut Ctx, cpu: CpuId) {
        self.update_rtdl_avgs(cx, cpu);
        let delta = cx.now.0.saturating_sub(self.exec_start[cpu].0);
        self.exec_start[cpu] = cx.now;
        if delta == 0 {
            return;
        }
        match self.curr[cpu] {
            Some((p, Class::Dl)) => self.dl.update_curr(cx, cpu, p, delta),
            Some((_, Class::Rt)) => {
                if self.t.mode == Mode::Throttle && self.t.rt_runtime_us >= 0 {
                    let runtime = self.t.rt_runtime_us as u64 * 1000;
                    if self.throttle[cpu].charge(delta, runtime) {
                        self.rt_throttles += 1;
                        cx.resched_curr(cpu);
                    }
                    self.arm_rt_period(cx, cpu);
                }
            }
            // sched_ext tasks are not covered by the fair server (v6.12).
            Some((_, Class::Ext)) => {}
            Some((_, Class::Fair)) | None => {
                if self.t.mode == Mode::FairServer && self.server[cpu].consume(delta) {
                    cx.resched_curr(cpu);
                    self.arm(cx, cpu);
                }
            }
        }
    }

    /// Arms the rt period timer on `cpu` at the next period boundary, if not armed.
    fn arm_rt_period(&mut self, cx: &mut Ctx, cpu: CpuId) {
        if self.throttle[cpu].timer.is_none() {
            let period = self.t.rt_period_us * 1000;
            let at = Ns((cx.now.0 / period + 1) * period);
            self.throttle[cpu].timer = Some(at);
            cx.timer(cpu, at);
        }
    }

    /// Re-evaluates whether `cpu`'s fair server must be tracked (rt/deadline and fair tasks
    /// share the CPU) and arms its timer.
    fn server_sync(&mut self, cx: &mut Ctx, cpu: CpuId) {
        if self.t.mode != Mode::FairServer {
            return;
        }
        let share = self.rtdl_nr(cpu) > 0 && self.fair_nr[cpu] > 0;
        let s = &mut self.server[cpu];
        if share && !s.tracking {
            s.catch_up(cx.now, self.t.server_runtime, self.t.server_period);
            self.arm(cx, cpu);
        } else if !share && s.tracking {
            s.untrack(cx.now);
        }
    }

    /// Requests the fair server's next timer on `cpu`.
    fn arm(&mut self, cx: &mut Ctx, cpu: CpuId) {
        if let Some(at) = self.server[cpu].next_timer() {
            cx.timer(cpu, at);
        }
    }

    /// The fair server runs fair tasks before rt on `cpu` now.
    fn server_active(&self, cpu: CpuId) -> bool {
        self.t.mode == Mode::FairServer && self.server[cpu].phase == Phase::Active && self.fair_nr[cpu] > 0
    }

    /// The rt queue of `cpu` may run (not throttled).
    fn rt_runnable(&self, cpu: CpuId) -> bool {
        !(self.t.mode == Mode::Throttle && self.throttle[cpu].throttled)
    }
}
