//! Shared set-up for the kernel's tests: a workload text on a machine preset under a
//! registered policy, run to its end by the kernel model alone (no `RunSpec`).
#![allow(dead_code)] // each test file uses part of it

use schedlab_kernel::{Kernel, KernelConfig, RunError, SimParams};
use schedlab_probe::{NoProbe, RunSummary};
use schedlab_sim::Ns;
use std::sync::Arc;

/// A kernel for `workload` (with workload parameters `params` set, as `--param`) on preset
/// `machine` under `sched` (a registry name) with the switches `cfg`; the closure gets it
/// before it runs (to read its configuration), then may run it.
pub fn with_kernel<R>(
    workload: &str,
    params: &[(&str, &str)],
    machine: &str,
    sched: &str,
    (cfg, sim): (KernelConfig, SimParams),
    f: impl FnOnce(&mut Kernel<'_>) -> R,
) -> R {
    let m = Arc::new(schedlab_machine::preset(machine).unwrap_or_else(|| panic!("preset {machine}")));
    let params: Vec<(String, String)> = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let wl = schedlab_workload::parse_workload("test.toml", workload, &params, m.nr_cpus()).expect("workload parses");
    let policy = schedlab_policies::make_policy(sched, &m, &[]).expect("registered policy");
    let mut probe = NoProbe;
    let mut k = Kernel::new(m, Arc::new(wl), policy, cfg, sim, &mut probe).expect("kernel builds");
    f(&mut k)
}

/// Simulation parameters: run until `end` with every invariant checked after every event.
pub fn checked(end: Ns) -> SimParams {
    SimParams { check_invariants: true, end, ..SimParams::default() }
}

/// Runs `workload` to its end with the default switches and every invariant checked.
pub fn run_checked(workload: &str, machine: &str, sched: &str, end: Ns) -> Result<RunSummary, RunError> {
    with_kernel(workload, &[], machine, sched, (KernelConfig::default(), checked(end)), |k| k.run(&mut |_| true))
}
