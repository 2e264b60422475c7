//! What keeps real-time tasks from starving fair ones on a CPU, per kernel version:
//!
//! * **rt throttling** (before v6.12; `rt.c:sched_rt_runtime_exceeded`,
//!   `do_sched_rt_period_timer`, v5.15): rt tasks may run `sched_rt_runtime_us` of every
//!   `sched_rt_period_us` on each CPU; past it the CPU's rt queue is throttled (fair tasks
//!   run, or the CPU idles) until the period timer pays the runtime back.
//! * **the fair server** (v6.12+; `deadline.c:dl_server_start`, `dl_server_timer`,
//!   `update_curr_dl_se`): a per-CPU deadline entity with 50 ms every 1 s that runs fair
//!   tasks. It is *deferred*: fair and idle time consume its runtime, and only when fair
//!   tasks are starved until the zero-laxity instant (`deadline − runtime`) does it become
//!   a running deadline entity; once it ran so, it serves at the start of the following
//!   periods while fair stays starved (`dl_defer_running`).
//!
//! Both arm timers only while rt or deadline tasks share the CPU with fair ones, so a
//! fair-only run has no extra events; the fair server's state is brought up to date
//! arithmetically when such sharing begins (fair and idle time consumed it meanwhile).

use schedlab_sim::Ns;

/// Which mechanism a kernel version uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// rt throttling (`sched_rt_runtime_us` / `sched_rt_period_us`), before v6.12.
    Throttle,
    /// The fair server (v6.12+).
    FairServer,
    /// Neither (`sched_rt_runtime_us = -1` before v6.12): rt tasks may starve fair ones.
    None,
}

/// Per-CPU rt-throttling state (`struct rt_rq`: `rt_time`, `rt_throttled`).
#[derive(Clone, Copy, Default)]
pub struct Throttle {
    pub rt_time: u64,
    pub throttled: bool,
    /// The period timer's next expiry, while armed.
    pub timer: Option<Ns>,
}

impl Throttle {
    /// `update_curr_rt` → `sched_rt_runtime_exceeded`: charge rt run time; true if this
    /// throttles the CPU's rt queue now.
    pub fn charge(&mut self, delta: u64, runtime: u64) -> bool {
        self.rt_time += delta;
        if !self.throttled && self.rt_time > runtime {
            self.throttled = true;
            return true;
        }
        false
    }
    /// `do_sched_rt_period_timer` (one period of overrun): pay back a period's runtime;
    /// true if this unthrottles.
    pub fn period(&mut self, runtime: u64) -> bool {
        self.rt_time = self.rt_time.saturating_sub(runtime);
        if self.throttled && self.rt_time < runtime {
            self.throttled = false;
            return true;
        }
        false
    }
}

/// The fair server's phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Phase {
    /// Not started: no fair task queued on the CPU (`dl_server_stop`).
    #[default]
    Stopped,
    /// Waiting for the zero-laxity instant; fair and idle time consume the runtime.
    Deferred,
    /// A running deadline entity: picked before rt tasks.
    Active,
    /// Runtime used up; replenished at `period_end`.
    Throttled,
}

/// Per-CPU fair server (`rq->fair_server`, a `sched_dl_entity` with `dl_server` set).
#[derive(Clone, Copy, Default)]
pub struct Server {
    pub phase: Phase,
    pub runtime: i64,
    /// The current period's end: the server's absolute deadline.
    pub period_end: Ns,
    /// Its state is kept up to date (rt/deadline tasks share the CPU with fair ones).
    pub tracking: bool,
    /// Time up to which fair and idle time was charged while not tracking.
    synced: Ns,
    /// It ran as a deadline entity in the last period (`dl_defer_running`).
    pub defer_running: bool,
    pub activations: u64,
}

impl Server {
    /// `dl_server_start`: a fair task appeared on a CPU that had none: a new period.
    pub fn start(&mut self, now: Ns, q: u64, p: u64) {
        self.phase = Phase::Deferred;
        self.runtime = q as i64;
        self.period_end = now + Ns(p);
        self.tracking = false;
        self.synced = now;
        self.defer_running = false;
    }
    /// `dl_server_stop`: no fair task left.
    pub fn stop(&mut self) {
        self.phase = Phase::Stopped;
        self.tracking = false;
    }
    /// Rt/deadline tasks left the CPU: stop tracking, charge lazily from `now` on.
    pub fn untrack(&mut self, now: Ns) {
        self.tracking = false;
        self.synced = now;
    }

    /// Brings an untracked server up to `now`: the time since it was last in step went to
    /// fair or idle (no rt or deadline task was there), which consumed its runtime.
    pub fn catch_up(&mut self, now: Ns, q: u64, p: u64) {
        if self.phase == Phase::Stopped || self.tracking {
            return;
        }
        if now >= self.period_end {
            let k = (now.0 - self.period_end.0) / p + 1;
            self.period_end += Ns(k * p);
            self.runtime = q as i64;
            self.defer_running = false;
            self.synced = self.synced.max(Ns(self.period_end.0 - p));
        }
        let used = now.0.saturating_sub(self.synced.0);
        self.runtime = (self.runtime - used as i64).max(0);
        if self.phase != Phase::Active || self.runtime == 0 {
            self.phase = if self.runtime > 0 { Phase::Deferred } else { Phase::Throttled };
        }
        self.tracking = true;
        self.synced = now;
    }

    /// The next instant the server needs a timer: its zero-laxity point while deferred,
    /// its period end while throttled or active.
    pub fn next_timer(&self) -> Option<Ns> {
        if !self.tracking {
            return None;
        }
        match self.phase {
            Phase::Deferred => Some(Ns(self.period_end.0.saturating_sub(self.runtime.max(0) as u64))),
            Phase::Active | Phase::Throttled => Some(self.period_end),
            Phase::Stopped => None,
        }
    }

    /// Charges fair or idle time (`dl_server_update`, `dl_server_update_idle_time`); true
    /// if an active server ran out (throttled now: the CPU reschedules).
    pub fn consume(&mut self, delta: u64) -> bool {
        if !self.tracking || !matches!(self.phase, Phase::Deferred | Phase::Active) {
            return false;
        }
        if self.phase == Phase::Deferred {
            // Fair got the CPU on its own this period.
            self.defer_running = false;
        }
        self.runtime -= delta as i64;
        if self.runtime <= 0 {
            let was_active = self.phase == Phase::Active;
            self.phase = Phase::Throttled;
            return was_active;
        }
        false
    }

    /// The server's timer at `now` (`dl_server_timer`): a new period replenishes it (and it
    /// is active at once if it ran as a deadline entity in the last one); the zero-laxity
    /// instant activates a deferred server. True if the CPU should reschedule.
    pub fn fire(&mut self, now: Ns, q: u64, p: u64) -> bool {
        if !self.tracking || self.phase == Phase::Stopped {
            return false;
        }
        if now >= self.period_end {
            let k = (now.0 - self.period_end.0) / p + 1;
            self.period_end += Ns(k * p);
            self.runtime = q as i64;
            self.phase = if self.defer_running { Phase::Active } else { Phase::Deferred };
            if self.defer_running {
                self.activations += 1;
            }
            return self.defer_running;
        }
        if self.phase == Phase::Deferred && self.runtime > 0 && now.0 + self.runtime as u64 >= self.period_end.0 {
            self.phase = Phase::Active;
            self.defer_running = true;
            self.activations += 1;
            return true;
        }
        false
    }
}
