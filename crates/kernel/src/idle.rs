//! The cpuidle governor: which idle state a CPU enters when it goes idle, and what leaving
//! it costs the wakeup (`kernel/sched/idle.c: cpuidle_idle_call`, v6.18). The machine's
//! drivers give the states (`schedlab_machine::Idle`); this module chooses among them as
//! the kernel's governors do:
//!
//! - `menu` (`drivers/cpuidle/governors/menu.c: menu_select, menu_update,
//!   get_typical_interval`, v6.18 and v5.15): the predicted idle length is the smaller of
//!   the repeating-interval detector's average of the last 8 idles and the time to the
//!   next timer scaled by a learned per-bucket correction factor; the deepest state whose
//!   target residency fits the prediction is taken.
//! - `haltpoll` (`drivers/cpuidle/governors/haltpoll.c: haltpoll_select, haltpoll_reflect,
//!   adjust_poll_limit`, v6.18): a guest polls up to a per-CPU limit adapted to the halts
//!   it saw, then halts (a VM exit).
//! - `none` (no cpuidle driver: `default_idle_call`): the driver's one state.
//! - `idle=poll` (`cpu_idle_poll`): no state is entered; a wakeup costs nothing to leave.
//!
//! `teo` is refused by the kernel until it is modelled (`CpuIdle::new`).
//!
//! The choice is made when the CPU goes idle; the governor learns from the idle's measured
//! length when the CPU is woken ([`Kernel::idle_exit_cost`]), which is when `menu_update`
//! would run at the next `menu_select` (nothing it reads changes in between). A polling
//! state's time limit (`poll_idle` leaving after `cpuidle_poll_time`, the idle loop then
//! selecting again) is resolved at the wakeup, in order, without an event of its own.
//!
//! Not modelled: the governor's decision to keep the tick running on a shallow idle (the
//! model stops the tick on every idle CPU, as it did before), so no idle is ended by a
//! kept tick (`tick_wakeup` is false); PM QoS latency limits (none set:
//! `cpuidle_governor_latency_req` is unlimited).

use crate::Kernel;
use schedlab_machine::{IdleGovernor, IdleState, Machine};
use schedlab_probe::Mode;
use schedlab_sim::{CpuId, Ns};

/// `BUCKETS` of menu v5.15 (v6.18 has 6: the iowait half is gone; with no I/O waiters,
/// which the model has none of, v5.15 uses the first 6 alone).
const BUCKETS: usize = 12;
/// `INTERVALS` (`INTERVAL_SHIFT` 3).
const INTERVALS: usize = 8;
/// `RESOLUTION`.
const RESOLUTION: u64 = 1024;
/// `DECAY`.
const DECAY: u64 = 8;
/// `MAX_INTERESTING` (menu.c: 50 ms, in ns as v5.x+ keeps it).
const MAX_INTERESTING: u64 = 50_000_000;
/// `RESIDENCY_THRESHOLD_NS` (`drivers/cpuidle/governors/gov.h`, v6.18): below it a
/// typical interval needs no next-timer query.
const RESIDENCY_THRESHOLD_NS: u64 = 15_000;
/// `CPUIDLE_POLL_MIN` (`drivers/cpuidle/cpuidle.c`, v6.18).
const CPUIDLE_POLL_MIN: u64 = 10_000;
/// No timer, no typical interval (`KTIME_MAX`, `UINT_MAX`).
const NONE: u64 = u64::MAX;

/// menu's per-CPU data (`struct menu_device`).
#[derive(Clone, Debug)]
pub(crate) struct Menu {
    /// The bucket (by time to the next timer) the last selection used.
    bucket: usize,
    /// `correction_factor[]`, `RESOLUTION × DECAY` = 1.0 (`menu_enable_device`).
    factor: [u64; BUCKETS],
    /// The last 8 measured idle lengths, µs (zero at start, as `menu_enable_device`
    /// leaves them).
    intervals: [u64; INTERVALS],
    ptr: usize,
}

impl Default for Menu {
    fn default() -> Self {
        Menu { bucket: 0, factor: [RESOLUTION * DECAY; BUCKETS], intervals: [0; INTERVALS], ptr: 0 }
    }
}

/// One CPU's idle as the governor sees it.
#[derive(Clone, Debug, Default)]
pub(crate) struct IdleCpu {
    /// When the current idle began and the state chosen for it (`None`: not idle through
    /// the governor yet; a CPU idle since boot is treated as entering at time 0).
    entered: Option<Ns>,
    state: usize,
    /// `next_timer_ns` of the selection: the sleep length (`tick_nohz_get_sleep_length`)
    /// or [`NONE`].
    next_timer: u64,
    menu: Menu,
    /// haltpoll's `dev->poll_limit_ns`.
    poll_limit: u64,
    /// `dev->last_state_idx`, and whether that state was a poll that hit its time limit
    /// (`dev->poll_time_limit`).
    last: usize,
    poll_hit: bool,
    /// Idle entries (the `idle_calls` counter `sugov_hold_freq` compares).
    pub calls: u64,
    /// Per state, `usage` and `time` (ns) as `cpuidle_enter_state` counts them
    /// (`/sys/devices/system/cpu/cpuN/cpuidle/stateM/{usage,time}`).
    usage: Vec<(u64, u64)>,
    /// The hypervisor's view of this vCPU's physical CPU: its menu data, and the state it
    /// chose for the current halt (with when the halt began and the timer it used).
    hv_menu: Menu,
    hv: Option<(usize, Ns, u64)>,
}

/// The kernel's cpuidle: which governor, and each CPU's state.
pub(crate) struct CpuIdle {
    /// The idle-state model is on (`Models::idle`): wakeups pay the chosen state's exit.
    pub on: bool,
    gov: IdleGovernor,
    /// `idle=poll`.
    poll: bool,
    tick: u64,
    pub cpus: Vec<IdleCpu>,
}

impl CpuIdle {
    /// The governor of `machine` for a kernel whose tick period is `tick`; an error for a
    /// governor the model does not have.
    pub(crate) fn new(machine: &Machine, tick: Ns) -> Result<CpuIdle, String> {
        let on = machine.models().idle;
        let n = machine.nr_cpus();
        let idle = &machine.idle;
        if on && idle.governor == IdleGovernor::Teo && !idle.poll {
            return Err("idle.governor = teo is not modelled yet; use menu-6.18, menu-5.15, haltpoll or none".into());
        }
        if on && (idle.drivers.is_empty() || (0..n).any(|c| idle.states(c).is_empty())) {
            return Err("the idle model needs an idle driver for every CPU".into());
        }
        Ok(CpuIdle {
            on,
            gov: idle.governor,
            poll: idle.poll,
            tick: tick.0.max(1),
            cpus: vec![IdleCpu { next_timer: NONE, ..IdleCpu::default() }; n],
        })
    }
}

/// `get_typical_interval` (menu.c, v6.18): the average of the recent intervals (µs) if
/// they repeat — variance ≤ 400 µs², or the mean over 6 standard deviations with at least
/// 6 of the 8 samples kept — after dropping outliers one at a time from the side farther
/// from the mean; [`NONE`] when no such average exists.
pub(crate) fn typical_interval(intervals: &[u64; INTERVALS]) -> u64 {
    let (mut min_thresh, mut max_thresh) = (0u64, u64::MAX);
    loop {
        let (mut min, mut max, mut sum, mut n) = (u64::MAX, 0u64, 0u64, 0u64);
        for &v in intervals.iter().filter(|&&v| v >= min_thresh && v <= max_thresh) {
            sum += v;
            n += 1;
            min = min.min(v);
            max = max.max(v);
        }
        if n == 0 {
            return NONE;
        }
        let avg = sum / n;
        let variance = intervals
            .iter()
            .filter(|&&v| v >= min_thresh && v <= max_thresh)
            .map(|&v| {
                let d = v.abs_diff(avg);
                d.saturating_mul(d)
            })
            .fold(0u64, u64::saturating_add)
            / n;
        if variance <= u64::MAX / 36
            && ((avg.saturating_mul(avg) > variance * 36 && n * 4 >= INTERVALS as u64 * 3) || variance <= 400)
        {
            return avg;
        }
        if n * 4 <= INTERVALS as u64 * 3 {
            return NONE;
        }
        if avg - min > max - avg {
            min_thresh = min + 1;
        } else {
            max_thresh = max - 1;
        }
    }
}

/// `which_bucket` (menu.c): the order of magnitude of the time to the next timer, ns.
fn which_bucket(next_timer: u64) -> usize {
    match next_timer {
        t if t < 10_000 => 0,
        t if t < 100_000 => 1,
        t if t < 1_000_000 => 2,
        t if t < 10_000_000 => 3,
        t if t < 100_000_000 => 4,
        _ => 5,
    }
}

/// What `menu_select` needs to know about the CPU at idle entry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sleep {
    /// `tick_nohz_get_sleep_length`: to the next timer event with the tick stopped.
    pub next_timer: u64,
    /// `delta_next`: to the next event with the tick running (the next tick included).
    pub delta_tick: u64,
    pub tick: u64,
}

/// `menu_select` (menu.c; `v618`: v6.18, else v5.15): the state index for an idle with
/// `sleep`, learned `menu` data, and no latency limit (no PM QoS request). Also returns
/// the `next_timer_ns` the selection used (v6.18 does not read it after short typical
/// intervals: [`NONE`]).
pub(crate) fn menu_select(m: &mut Menu, states: &[IdleState], sleep: Sleep, v618: bool) -> (usize, u64) {
    let typical = typical_interval(&m.intervals);
    let mut predicted = typical.saturating_mul(1000);
    let (next_timer, delta_tick) = if !v618 || predicted > RESIDENCY_THRESHOLD_NS {
        m.bucket = which_bucket(sleep.next_timer);
        // DIV_ROUND_CLOSEST on the timer scaled by the correction factor, in µs.
        let res = RESOLUTION * DECAY * 1000;
        let timer_us = ((u128::from(sleep.next_timer) * u128::from(m.factor[m.bucket]) + u128::from(res / 2))
            / u128::from(res))
        .min(u128::from(u64::MAX / 1000)) as u64;
        predicted = predicted.min(timer_us * 1000);
        (sleep.next_timer, sleep.delta_tick)
    } else {
        // The typical interval is short: no timer query; the tick is assumed half a
        // period away and the last bucket is used (v6.18).
        m.bucket = 5;
        (NONE, sleep.tick / 2)
    };
    let res = |i: usize| states[i].target_residency.0;
    let lat = |i: usize| states[i].exit_latency.0;
    if states.len() <= 1 || next_timer < res(1) {
        return (0, next_timer); // state 0 is used whatever the rest says
    }
    // v5.15's performance multiplier with no I/O waiters: the exit latency may not exceed
    // the prediction while the tick runs (`interactivity_req`). v6.18 has no such limit.
    let latency_req = if v618 { u64::MAX } else { predicted };
    let mut idx = 0;
    for i in 0..states.len() {
        if res(i) > predicted {
            // Use a physical state rather than polling if a timer comes soon enough.
            if states[idx].polling && lat(i) <= latency_req && res(i) <= next_timer {
                predicted = res(i);
                idx = i;
                break;
            }
            if predicted < sleep.tick {
                break;
            }
            // The tick runs at selection (it is stopped only after it): keep the shallow
            // state and let the next idle loop iteration choose again.
            predicted = res(idx);
            break;
        }
        if lat(i) > latency_req {
            break;
        }
        idx = i;
    }
    // The tick is kept for a polling state or a prediction under a tick: then a state
    // deeper than the time to the next event (tick included) is stepped down from.
    if (states[idx].polling || predicted < sleep.tick) && idx > 0 && res(idx) > delta_tick {
        while idx > 0 {
            idx -= 1;
            if res(idx) <= delta_tick {
                break;
            }
        }
    }
    (idx, next_timer)
}

/// `menu_update` (menu.c, v5.15 and v6.18): learns from an idle of `residency` ns in
/// state `last` whose selection used `next_timer`; `poll_hit`: a polling state left at its
/// time limit.
pub(crate) fn menu_update(m: &mut Menu, last: &IdleState, residency: u64, next_timer: u64, poll_hit: bool) {
    let mut measured = if last.polling && poll_hit {
        next_timer
    } else {
        let exit = last.exit_latency.0;
        if residency > 2 * exit {
            residency - exit
        } else {
            residency / 2
        }
    };
    measured = measured.min(next_timer);
    let f = m.factor[m.bucket];
    let mut new = f - f / DECAY;
    if next_timer > 0 && measured < MAX_INTERESTING {
        new += (u128::from(RESOLUTION) * u128::from(measured) / u128::from(next_timer)) as u64;
    } else {
        new += RESOLUTION;
    }
    m.factor[m.bucket] = new;
    m.intervals[m.ptr] = measured / 1000;
    m.ptr = (m.ptr + 1) % INTERVALS;
}

/// `haltpoll_select` (haltpoll.c, v6.18): poll unless the poll limit is 0 or the last
/// poll ran into it; halt otherwise.
fn haltpoll_select(c: &IdleCpu) -> usize {
    if c.poll_limit == 0 || (c.last == 0 && c.poll_hit) {
        1
    } else {
        0
    }
}

impl CpuIdle {
    /// `adjust_poll_limit` (haltpoll.c, v6.18) after a halt of `block` ns.
    fn adjust_poll_limit(&mut self, machine: &Machine, cpu: CpuId, block: u64) {
        let p = &machine.idle;
        let (max, start) = (p.guest_halt_poll_ns.0, p.guest_halt_poll_grow_start.0);
        let c = &mut self.cpus[cpu];
        if block > c.poll_limit && block <= max {
            let val = (c.poll_limit * u64::from(p.guest_halt_poll_grow)).max(start);
            c.poll_limit = val.min(max);
        } else if block > max && p.guest_halt_poll_allow_shrink {
            let shrink = u64::from(p.guest_halt_poll_shrink);
            let val = c.poll_limit.checked_div(shrink).unwrap_or(0);
            c.poll_limit = if val < start { 0 } else { val };
        }
    }

    /// The time limit of a polling state on `cpu` (`cpuidle_poll_time`, cpuidle.c v6.18):
    /// haltpoll's adapted limit; else the residency of the first state of at least
    /// `CPUIDLE_POLL_MIN`, at most a sixteenth of a tick.
    fn poll_time(&self, states: &[IdleState], cpu: CpuId) -> u64 {
        if self.gov == IdleGovernor::Haltpoll {
            return self.cpus[cpu].poll_limit;
        }
        let max = self.tick / 16;
        states.iter().skip(1).map(|s| s.target_residency.0).find(|&r| r >= CPUIDLE_POLL_MIN).map_or(max, |r| r.min(max))
    }

    /// The governor's choice for an idle of `cpu` beginning `at` with `sleep`.
    fn select(&mut self, states: &[IdleState], cpu: CpuId, sleep: Sleep) -> usize {
        let c = &mut self.cpus[cpu];
        let (idx, next_timer) = match self.gov {
            IdleGovernor::Menu618 => menu_select(&mut c.menu, states, sleep, true),
            IdleGovernor::Menu515 => menu_select(&mut c.menu, states, sleep, false),
            IdleGovernor::Haltpoll => (haltpoll_select(c), sleep.next_timer),
            IdleGovernor::None | IdleGovernor::Teo => (0, sleep.next_timer),
        };
        c.next_timer = next_timer;
        idx.min(states.len() - 1)
    }

    /// `reflect` + the governor's update after an idle of `residency` in `c.state`.
    fn reflect(&mut self, machine: &Machine, states: &[IdleState], cpu: CpuId, residency: u64, poll_hit: bool) {
        let c = &mut self.cpus[cpu];
        let idx = c.state;
        if c.usage.len() < states.len() {
            c.usage.resize(states.len(), (0, 0));
        }
        c.usage[idx].0 += 1;
        c.usage[idx].1 += residency;
        c.last = idx;
        c.poll_hit = poll_hit;
        match self.gov {
            IdleGovernor::Menu515 | IdleGovernor::Menu618 => {
                let next_timer = c.next_timer;
                menu_update(&mut c.menu, &states[idx], residency, next_timer, poll_hit);
            }
            IdleGovernor::Haltpoll if idx != 0 => self.adjust_poll_limit(machine, cpu, residency),
            _ => {}
        }
    }
}

impl CpuIdle {
    /// A guest's halt on `cpu` beginning `at` (not a poll: a polling vCPU keeps its
    /// physical CPU): the hypervisor's governor picks a state of the physical CPU for it —
    /// `menu_select` over `[[idle.hypervisor_state]]`, with the guest's next timer as its
    /// own (KVM arms a host hrtimer for the guest's LAPIC timer while the vCPU blocks:
    /// `arch/x86/kvm/lapic.c: kvm_lapic_switch_to_sw_timer`, v6.18).
    fn hypervisor_enter(&mut self, machine: &Machine, cpu: CpuId, polling: bool, sleep: Sleep, at: Ns) {
        let hv = &machine.idle.hypervisor_states;
        let c = &mut self.cpus[cpu];
        c.hv = None;
        if polling || hv.is_empty() {
            return;
        }
        let v618 = machine.idle.hypervisor_governor != IdleGovernor::Menu515;
        let (idx, next_timer) = menu_select(&mut c.hv_menu, hv, sleep, v618);
        c.hv = Some((idx.min(hv.len() - 1), at, next_timer));
    }

    /// What leaving the hypervisor's state of `cpu`'s halt costs, woken `now` (nothing when
    /// the vCPU did not halt), and `menu_update` learning the halt's length.
    fn hypervisor_exit(&mut self, machine: &Machine, cpu: CpuId, now: Ns) -> Ns {
        let c = &mut self.cpus[cpu];
        let Some((idx, since, next_timer)) = c.hv.take() else { return Ns(0) };
        let st = &machine.idle.hypervisor_states[idx];
        let exit = st.wake_cost();
        menu_update(&mut c.hv_menu, st, (now.0 - since.0) + exit.0, next_timer, false);
        exit
    }
}

impl Kernel<'_> {
    /// The sleep length and the time to the next event of `cpu` going idle now: its
    /// clock event (sleepers' hrtimers), the policy's timer, the idle wakeup and, on a
    /// periodic-tick kernel, the tick.
    fn sleep_of(&self, cpu: CpuId) -> Sleep {
        let c = &self.cpus[cpu];
        let now = self.now;
        let mut next = NONE;
        for t in [c.hrtimer_next, c.policy_timer].into_iter().flatten() {
            next = next.min(t.0.saturating_sub(now.0));
        }
        if let Some(p) = self.idle_wakeup {
            next = next.min(p.0);
        }
        let tick = self.cpuidle.tick;
        let to_tick = tick - now.0 % tick;
        if self.idle_tick {
            next = next.min(to_tick);
        }
        Sleep { next_timer: next, delta_tick: next.min(to_tick), tick }
    }

    /// `cpuidle_idle_call` on `cpu`, which just went idle: the governor chooses a state.
    pub(crate) fn idle_enter(&mut self, cpu: CpuId) {
        if !self.cpuidle.on {
            return;
        }
        self.cpuidle.cpus[cpu].calls += 1;
        if self.cpuidle.poll {
            return;
        }
        let sleep = self.sleep_of(cpu);
        let machine = self.machine.clone();
        let states = machine.idle.states(cpu);
        let idx = self.cpuidle.select(states, cpu, sleep);
        let c = &mut self.cpuidle.cpus[cpu];
        c.entered = Some(self.now);
        c.state = idx;
        self.cpuidle.hypervisor_enter(&machine, cpu, states[idx].polling, sleep, self.now);
    }

    /// What waking idle `cpu` now costs before it runs: `idle_exit` without the idle
    /// model, nothing under `idle=poll`, else the exit of the state the CPU is in — after
    /// resolving the polls that ran into their time limit since it went idle (the idle
    /// loop then selected again) — and the governor learns the idle's length.
    pub(crate) fn idle_exit_cost(&mut self, cpu: CpuId) -> Ns {
        if !self.cpuidle.on {
            return self.machine.costs.idle_exit;
        }
        if self.cpuidle.poll {
            return Ns(0);
        }
        let machine = self.machine.clone();
        let states = machine.idle.states(cpu);
        let now = self.now;
        if self.cpuidle.cpus[cpu].entered.is_none() {
            // Idle since boot, never through the governor: it chose at time 0.
            let saved = std::mem::replace(&mut self.now, Ns(0));
            self.idle_enter(cpu);
            self.now = saved;
        }
        // A poll runs until its time limit, then the idle loop selects again (bounded:
        // each round advances by a non-zero limit or leaves the poll state).
        for _ in 0..64 {
            let c = &self.cpuidle.cpus[cpu];
            let (idx, since) = (c.state, c.entered.unwrap_or(now));
            let limit = self.cpuidle.poll_time(states, cpu);
            if !states[idx].polling || limit == 0 || now.0 - since.0 <= limit {
                break;
            }
            self.cpuidle.reflect(&machine, states, cpu, limit, true);
            let at = since + Ns(limit);
            let saved = std::mem::replace(&mut self.now, at);
            let sleep = self.sleep_of(cpu);
            self.now = saved;
            let idx = self.cpuidle.select(states, cpu, sleep);
            let c = &mut self.cpuidle.cpus[cpu];
            c.entered = Some(at);
            c.state = idx;
            self.cpuidle.hypervisor_enter(&machine, cpu, states[idx].polling, sleep, at);
        }
        let c = &self.cpuidle.cpus[cpu];
        let (idx, since) = (c.state, c.entered.unwrap_or(now));
        let exit = states[idx].wake_cost() + self.cpuidle.hypervisor_exit(&machine, cpu, now);
        // The residency the governor measures runs to the CPU running again.
        let residency = (now.0 - since.0) + exit.0;
        self.cpuidle.reflect(&machine, states, cpu, residency, false);
        self.cpuidle.cpus[cpu].entered = None;
        exit
    }

    /// `cpu`'s idle-state statistics: `(name, usage, time)` per state of its driver, idles
    /// counted when they end; empty when the idle model is off or under `idle=poll`.
    pub fn cpuidle_usage(&self, cpu: CpuId) -> Vec<(String, u64, Ns)> {
        let Some(c) = self.cpuidle.cpus.get(cpu).filter(|_| self.cpuidle.on) else { return Vec::new() };
        let states = self.machine.idle.states(cpu);
        c.usage.iter().zip(states).map(|(&(n, t), s)| (s.name.clone(), n, Ns(t))).collect()
    }

    /// `cpu`'s residency per state up to now: the closed idles' `time` plus the open
    /// idle in the state the governor chose for it; `None` when the idle model is off,
    /// under `idle=poll`, or while the CPU idles since boot without having gone through the
    /// governor (its state is not known).
    pub(crate) fn cpuidle_residency(&self, cpu: CpuId) -> Option<Vec<Ns>> {
        let c = self.cpuidle.cpus.get(cpu).filter(|_| self.cpuidle.on && !self.cpuidle.poll)?;
        let mut t: Vec<Ns> = c.usage.iter().map(|&(_, t)| Ns(t)).collect();
        t.resize(self.machine.idle.states(cpu).len(), Ns(0));
        match c.entered {
            Some(since) => t[c.state] += self.now.saturating_sub(since),
            None if self.cpus[cpu].mode == Mode::Idle && self.cpus[cpu].curr.is_none() => return None,
            None => {}
        }
        Some(t)
    }

    /// From `from` kicking `to` (a reschedule or wake-list IPI) to `to` seeing it: the
    /// IPI's latency, or — `to` polling in idle (`set_nr_and_not_polling`,
    /// `call_function_single_prep_ipi`, kernel/sched/core.c v6.18: no IPI is sent) — the
    /// transfer of the thread-flags line it polls.
    pub(crate) fn ipi_latency(&self, from: CpuId, to: CpuId) -> Ns {
        if self.idle_polling(to) {
            self.machine.line_transfer_ns(from, to)
        } else {
            self.machine.costs.ipi_latency
        }
    }

    /// Whether idle `cpu` is polling (`TIF_POLLING_NRFLAG` set: `idle=poll`, or a polling
    /// state chosen): a wakeup then needs no IPI (`set_nr_if_polling`).
    fn idle_polling(&self, cpu: CpuId) -> bool {
        if !self.cpuidle.on {
            return false;
        }
        if self.cpuidle.poll {
            return true;
        }
        let c = &self.cpuidle.cpus[cpu];
        c.entered.is_some() && self.machine.idle.states(cpu).get(c.state).is_some_and(|s| s.polling)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(name: &str, exit_us: u64, residency_us: u64) -> IdleState {
        IdleState {
            name: name.into(),
            exit_latency: Ns::from_us(exit_us),
            target_residency: Ns::from_us(residency_us),
            exit_cost: None,
            power_mw: None,
            polling: false,
            tlb_flushed: false,
        }
    }

    /// `ivb_cstates` (drivers/idle/intel_idle.c) behind the poll state.
    fn ivb() -> Vec<IdleState> {
        vec![
            IdleState { polling: true, ..state("POLL", 0, 0) },
            state("C1", 1, 1),
            state("C1E", 10, 20),
            state("C3", 59, 156),
            state("C6", 80, 300),
            state("C7", 87, 300),
        ]
    }

    const TICK: u64 = 4_000_000;

    fn sleep(next_us: u64) -> Sleep {
        let n = next_us * 1000;
        Sleep { next_timer: n, delta_tick: n.min(TICK), tick: TICK }
    }

    #[test]
    fn typical_interval_as_the_kernel_computes() {
        assert_eq!(typical_interval(&[100; 8]), 100, "equal intervals repeat");
        // One outlier: dropped (it is farther from the mean), the rest repeat.
        assert_eq!(typical_interval(&[100, 100, 100, 100, 100, 100, 100, 5000]), 100);
        // Spread wide: no typical interval.
        assert_eq!(typical_interval(&[10, 2000, 50, 9000, 300, 40_000, 7, 700]), NONE);
        // 400 µs² exactly is accepted: values 80 and 120 → mean 100, variance 400.
        assert_eq!(typical_interval(&[80, 120, 80, 120, 80, 120, 80, 120]), 100);
    }

    /// After long idles (10 ms each, timers 10 ms away) menu takes the deepest state; after
    /// short ones (30 µs, the timer still 10 ms away) the correction factor and the typical
    /// interval bring the prediction down to 30 µs: C1E (residency 20 µs ≤ 30 < C3's 156).
    #[test]
    fn menu_goes_deep_after_long_idles_and_shallow_after_short_ones() {
        let states = ivb();
        for v618 in [true, false] {
            let mut m = Menu::default();
            for _ in 0..16 {
                let (idx, next) = menu_select(&mut m, &states, sleep(10_000), v618);
                menu_update(&mut m, &states[idx], 10_000_000, next, false);
            }
            assert_eq!(menu_select(&mut m, &states, sleep(10_000), v618).0, 5, "C7 after long idles (v6.18: {v618})");
            for _ in 0..16 {
                let (idx, next) = menu_select(&mut m, &states, sleep(10_000), v618);
                menu_update(&mut m, &states[idx], 30_000 + states[idx].exit_latency.0, next, false);
            }
            let (idx, _) = menu_select(&mut m, &states, sleep(10_000), v618);
            assert_eq!(states[idx].name, "C1E", "v6.18: {v618}");
            assert_eq!(typical_interval(&m.intervals), 30);
        }
    }

    /// A fresh CPU (zero intervals) predicts 0 µs: v6.18 takes the first physical state
    /// after the poll without asking for the timer.
    #[test]
    fn menu_starts_shallow() {
        let mut m = Menu::default();
        let (idx, next) = menu_select(&mut m, &ivb(), sleep(10_000), true);
        assert_eq!((idx, next), (1, NONE));
    }

    /// The correction factor converges to measured / next timer: idles of a quarter of
    /// the timer distance give factor/8192 → 0.25 (`menu_update`'s running average).
    #[test]
    fn correction_factor_learns_the_ratio() {
        let states = ivb();
        let mut m = Menu::default();
        for _ in 0..200 {
            m.bucket = which_bucket(4_000_000);
            menu_update(&mut m, &states[1], 1_000_000 + 1000, 4_000_000, false);
        }
        let f = m.factor[which_bucket(4_000_000)];
        assert!((2040..=2056).contains(&f), "{f}");
    }

    #[test]
    fn haltpoll_grows_and_shrinks_the_poll_limit() {
        let mut m = schedlab_machine::preset("vm").unwrap();
        m.idle.guest_halt_poll_ns = Ns(200_000);
        let mut g = CpuIdle::new(&m, Ns(TICK)).unwrap();
        assert_eq!(haltpoll_select(&g.cpus[0]), 1, "limit 0: halt");
        g.adjust_poll_limit(&m, 0, 30_000);
        assert_eq!(g.cpus[0].poll_limit, 50_000, "grow_start");
        g.adjust_poll_limit(&m, 0, 60_000);
        assert_eq!(g.cpus[0].poll_limit, 100_000);
        g.adjust_poll_limit(&m, 0, 150_000);
        assert_eq!(g.cpus[0].poll_limit, 200_000, "capped at guest_halt_poll_ns");
        g.adjust_poll_limit(&m, 0, 300_000);
        assert_eq!(g.cpus[0].poll_limit, 100_000, "halved");
        g.adjust_poll_limit(&m, 0, 300_000);
        assert_eq!(g.cpus[0].poll_limit, 50_000);
        g.adjust_poll_limit(&m, 0, 300_000);
        assert_eq!(g.cpus[0].poll_limit, 0, "below grow_start: off");
        // As this host boots (guest_halt_poll_ns = 0): every block shrinks, never polls.
        let m = schedlab_machine::preset("vm").unwrap();
        let mut g = CpuIdle::new(&m, Ns(TICK)).unwrap();
        g.adjust_poll_limit(&m, 0, 1_000);
        assert_eq!((g.cpus[0].poll_limit, haltpoll_select(&g.cpus[0])), (0, 1));
    }

    /// A guest like this host with the hypervisor's states calibrate would write: one per
    /// measured idle length (residency), its exit the one measured after that length.
    fn guest_with_hypervisor() -> Machine {
        let mut m = schedlab_machine::preset("vm").unwrap();
        m.idle.hypervisor_states = [(10, 1), (100, 5), (1000, 25), (3000, 40)]
            .iter()
            .map(|&(len, exit)| state(&format!("after {len}us"), exit, len))
            .collect();
        m
    }

    const NO_TIMER: Sleep = Sleep { next_timer: NONE, delta_tick: TICK, tick: TICK };

    /// One halt of `len_us` on CPU 1: its hypervisor exit, µs.
    fn halt(g: &mut CpuIdle, m: &Machine, at: &mut Ns, len_us: u64) -> u64 {
        g.hypervisor_enter(m, 1, false, NO_TIMER, *at);
        *at += Ns::from_us(len_us);
        let exit = g.hypervisor_exit(m, 1, *at);
        exit.0 / 1000
    }

    /// Repeated halts of one length: menu's typical interval is that length, so the
    /// hypervisor takes the deepest state whose residency fits it (the measured one for a
    /// calibrated length, the shallower neighbour between two); a fresh CPU predicts 0 µs.
    #[test]
    fn the_hypervisor_state_follows_the_idle_length() {
        let m = guest_with_hypervisor();
        for (len, want) in [(10, 1), (100, 5), (1000, 25), (3000, 40), (30, 1), (500, 5), (20_000, 40)] {
            let mut g = CpuIdle::new(&m, Ns(TICK)).unwrap();
            let mut at = Ns(0);
            assert_eq!(halt(&mut g, &m, &mut at, len), 1, "a fresh CPU predicts nothing: shallowest");
            let exits: Vec<u64> = (0..12).map(|_| halt(&mut g, &m, &mut at, len)).collect();
            assert_eq!(exits[11], want, "idle {len}us: {exits:?}");
        }
    }

    /// The exit follows the predicted idle, not the actual one: a long halt after a run of
    /// short ones pays the shallow exit, and the deep state comes only when long halts
    /// are the typical interval again (menu's 8-interval history).
    #[test]
    fn a_mispredicted_halt_pays_the_predicted_state() {
        let m = guest_with_hypervisor();
        let mut g = CpuIdle::new(&m, Ns(TICK)).unwrap();
        let mut at = Ns(0);
        for _ in 0..12 {
            halt(&mut g, &m, &mut at, 10);
        }
        assert_eq!(halt(&mut g, &m, &mut at, 3000), 1, "predicted short, was long");
        let exits: Vec<u64> = (0..12).map(|_| halt(&mut g, &m, &mut at, 3000)).collect();
        assert!(exits[0] < 40 && exits[11] == 40, "{exits:?}");
        // A polling vCPU keeps its physical CPU: no hypervisor state, no exit.
        g.hypervisor_enter(&m, 1, true, NO_TIMER, at);
        assert_eq!(g.hypervisor_exit(&m, 1, at + Ns::from_us(3000)), Ns(0));
    }
}
