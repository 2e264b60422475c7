//! The energy model the kernel registers for the scheduler: each cpufreq policy's
//! performance domain with its states (`kernel/power/energy_model.c:
//! em_create_perf_table`, `em_init_performance`, `em_compute_costs`), and the root
//! domain's list of them (`kernel/sched/topology.c: build_perf_domains`). Policies read it
//! through `Ctx::em`; what they make of it (`sched_energy_enabled`) is theirs.

use schedlab_machine::{FreqDomain, Machine};
use schedlab_sched_api::{EnergyModel, PerfDomain, PerfState};

/// The machine's energy model: one performance domain per frequency domain, when the
/// frequency model is on and every domain has a power table; none otherwise (the kernel
/// builds no `rd->pd` when a CPU's `em_cpu_get` finds nothing: `pd_init`).
pub(crate) fn register(machine: &Machine) -> EnergyModel {
    let f = &machine.freq;
    let on = machine.models().freq && !f.domains.is_empty();
    if !on || f.domains.iter().any(|d| d.power_uw.len() != d.khz.len()) {
        return EnergyModel::default();
    }
    let caps = machine.capacities();
    let n = machine.nr_cpus();
    let domains = f
        .domains
        .iter()
        .filter_map(|d| {
            let cpus: Vec<usize> = d.cpus.iter().filter(|&c| c < n).collect();
            let capacity = caps[*cpus.first()?];
            Some(PerfDomain { capacity: capacity as u32, states: perf_states(d, capacity), cpus })
        })
        .collect();
    EnergyModel { domains, schedutil: f.sugov_version().is_some(), freq_invariant: f.invariant }
}

/// `em_create_perf_table` + `em_init_performance` + `em_compute_costs` (v6.18; the v5.15
/// cost alongside), in the kernel's integer arithmetic: `performance = capacity × f / fmax`
/// (`div64_u64`), `cost = power × 10 / performance` (v6.9+; "increase resolution of
/// 'cost' precision"), `cost_fmax = fmax × power / f` (v5.15), and a state is
/// inefficient when a faster one costs no more (walked from the top, as the kernel does).
fn perf_states(d: &FreqDomain, capacity: u64) -> Vec<PerfState> {
    let fmax = d.max_khz().max(1);
    let mut states: Vec<PerfState> = d
        .khz
        .iter()
        .zip(&d.power_uw)
        .map(|(&khz, &power_uw)| {
            let performance = capacity * khz / fmax;
            PerfState {
                khz,
                power_uw,
                performance,
                cost: (power_uw * 10).checked_div(performance).unwrap_or(u64::MAX),
                cost_fmax: fmax * power_uw / khz.max(1),
                inefficient: false,
            }
        })
        .collect();
    let mut prev_cost = u64::MAX;
    for s in states.iter_mut().rev() {
        if s.cost >= prev_cost {
            s.inefficient = true;
        } else {
            prev_cost = s.cost;
        }
    }
    states
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_machine::CostModel;

    /// gs101's little cluster: the top state's performance is the domain's capacity, the
    /// costs are the kernel's integer quotients, and (voltage rising with frequency) no
    /// state is inefficient.
    #[test]
    fn big_little_perf_domains() {
        let mut m = schedlab_machine::preset("big-little").unwrap();
        m.set_cost_model(CostModel::Flat);
        assert!(register(&m).domains.is_empty(), "the frequency model is off under flat costs");
        m.set_cost_model(CostModel::Full);
        let em = register(&m);
        assert_eq!(em.domains.iter().map(|d| d.capacity).collect::<Vec<_>>(), [160, 498, 1024]);
        assert_eq!(em.domains[0].cpus, [0, 1, 2, 3]);
        assert!(em.schedutil && em.freq_invariant);
        let d = &m.freq.domains[0];
        let s = &em.domains[0].states;
        let top = s.last().unwrap();
        assert_eq!(top.performance, 160);
        assert_eq!(top.cost, d.power_uw[d.khz.len() - 1] * 10 / 160);
        assert_eq!(s[0].performance, 160 * d.khz[0] / d.max_khz());
        assert_eq!(s[0].cost_fmax, d.max_khz() * d.power_uw[0] / d.khz[0]);
        assert!(em.domains.iter().all(|d| d.states.iter().all(|s| !s.inefficient)));
    }

    /// A domain without a power table: no energy model at all.
    #[test]
    fn no_power_table_no_model() {
        let mut m = schedlab_machine::preset("big-little").unwrap();
        m.set_cost_model(CostModel::Full);
        m.freq.domains[1].power_uw.clear();
        assert!(register(&m).domains.is_empty());
    }
}
