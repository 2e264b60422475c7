//! The energy a run used, from the machine's energy model: what `Documentation/power/
//! energy-model.rst` calls the "active power" of a CPU at each performance state
//! (`struct em_perf_state.power`, µW since v5.19, `include/linux/energy_model.h`) and the
//! power of each idle state where the machine gives one.
//!
//! - **Active energy**: a CPU that is not idle (running user work, a kernel path, or
//!   spinning on a lock) draws its domain's power at the domain's current frequency. Every
//!   segment of such time is closed — and its energy added to the CPU and to the task that
//!   was `curr` on it (its user and kernel time alike, as a per-task energy attribution by
//!   CPU time at frequency does) — when the CPU changes between idle and busy, when `curr`
//!   changes and when the domain's frequency changes. This is the quantity
//!   `compute_energy` (kernel/sched/fair.c, v6.18) estimates from utilisation: the
//!   kernel's cost `power × f_max / f` times the CPU's busy share of the biggest CPU's
//!   work at `f_max` is the power at `f` times the busy time.
//! - **Idle energy**: each idle state's residency (`cpuidle` `time`, the open idle at the
//!   end included) times its `power_mw`. Mainline's energy model has no idle power (EAS
//!   ignores idle), so the figure is reported only where every state a CPU entered has a
//!   declared power.
//!
//! Observation only: nothing here changes a decision, so trace hashes are unchanged. On only
//! when the frequency model runs and the CPU's domain has a power table.

use crate::Kernel;
use schedlab_probe::{CpuEnergy, Mode};
use schedlab_sim::{CpuId, Ns};

/// µW × ns (fJ) per nJ.
const FJ_PER_NJ: u128 = 1_000_000;
/// mW × ns (pJ) per nJ.
const PJ_PER_NJ: u128 = 1_000;

/// Per CPU its active power now and its open segment; the energy closed so far, per CPU
/// and per task, in fJ.
#[derive(Debug, Default)]
pub(crate) struct Energy {
    /// Some CPU's domain has a power table (and the frequency model is on).
    pub on: bool,
    /// Per CPU, the active power at its domain's current frequency (µW); `None`: its domain
    /// has no power table.
    power: Vec<Option<u64>>,
    since: Vec<Ns>,
    cpu_fj: Vec<u128>,
    task_fj: Vec<u128>,
}

impl Kernel<'_> {
    /// Sets up the accounting once the frequency model has chosen each domain's first
    /// frequency.
    pub(crate) fn energy_init(&mut self) {
        let n = self.cpus.len();
        let power: Vec<Option<u64>> = (0..n).map(|c| self.active_power_uw(c)).collect();
        let on = self.speed.on && power.iter().any(Option::is_some);
        self.energy = Energy { on, power, since: vec![Ns(0); n], cpu_fj: vec![0; n], task_fj: Vec::new() };
    }

    /// The power table's entry for `cpu`'s current frequency, µW.
    fn active_power_uw(&self, cpu: CpuId) -> Option<u64> {
        let d = self.machine.freq.domains.iter().position(|d| d.cpus.contains(cpu))?;
        self.machine.freq.domains[d].power_at(self.speed.khz(cpu))
    }

    /// Closes `cpu`'s open segment at now: its energy, if the CPU was busy, to the CPU and
    /// to its `curr`. Called before its mode, its `curr` or its frequency changes.
    #[inline]
    pub(crate) fn energy_close(&mut self, cpu: CpuId) {
        if !self.energy.on {
            return;
        }
        let (mode, curr) = (self.cpus[cpu].mode, self.cpus[cpu].curr);
        let e = &mut self.energy;
        let dt = self.now.0.saturating_sub(e.since[cpu].0);
        e.since[cpu] = self.now;
        let Some(p) = e.power[cpu].filter(|_| mode != Mode::Idle && dt > 0) else { return };
        let fj = u128::from(dt) * u128::from(p);
        e.cpu_fj[cpu] += fj;
        if let Some(t) = curr {
            if e.task_fj.len() <= t {
                e.task_fj.resize(t + 1, 0);
            }
            e.task_fj[t] += fj;
        }
    }

    /// `cpus` changed frequency: their segments close at the old power, and the new one
    /// applies from now.
    pub(crate) fn energy_freq_changed(&mut self, cpus: &[CpuId]) {
        if !self.energy.on {
            return;
        }
        for &c in cpus {
            self.energy_close(c);
            self.energy.power[c] = self.active_power_uw(c);
        }
    }

    /// Each CPU's energy up to now (empty when the accounting is off), and each task's
    /// active energy (nJ, indexed by task id).
    pub(crate) fn energy_report(&mut self) -> (Vec<CpuEnergy>, Vec<u64>) {
        if !self.energy.on {
            return (Vec::new(), Vec::new());
        }
        for c in 0..self.cpus.len() {
            self.energy_close(c);
        }
        let cpus = (0..self.cpus.len())
            .map(|c| CpuEnergy {
                active_nj: self.energy.power[c].map(|_| (self.energy.cpu_fj[c] / FJ_PER_NJ) as u64),
                idle_nj: self.idle_energy_nj(c),
            })
            .collect();
        let mut tasks: Vec<u64> = self.energy.task_fj.iter().map(|&fj| (fj / FJ_PER_NJ) as u64).collect();
        tasks.resize(self.tasks.len(), 0);
        (cpus, tasks)
    }

    /// `cpu`'s idle energy: each state's residency times its power; `None` when the idle
    /// model is off or a state it spent time in has no declared power.
    fn idle_energy_nj(&self, cpu: CpuId) -> Option<u64> {
        let residency = self.cpuidle_residency(cpu)?;
        let states = self.machine.idle.states(cpu);
        let mut pj: u128 = 0;
        for (st, t) in states.iter().zip(residency) {
            match st.power_mw {
                Some(mw) => pj += u128::from(mw) * u128::from(t.0),
                None if t.0 > 0 => return None,
                None => {}
            }
        }
        Some((pj / PJ_PER_NJ) as u64)
    }
}
