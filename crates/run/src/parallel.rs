//! Several independent runs at once: simulations on the local cores through rayon, host
//! runs one at a time after them.
//!
//! A simulated run depends only on its spec (one seed, integer time, no shared state), so
//! running specs in parallel gives the same records, byte for byte except the wall-clock
//! `host` key, as running them one after another. A host run measures the real kernel:
//! simulations beside it would steal its CPUs and change what it measures, so host specs
//! run alone, in order, once every simulation has finished.

use crate::{Backend, RunError, RunRecord, RunSpec};
use rayon::prelude::*;
use schedlab_sim::Ns;

/// Progress of run `index` (position in the specs): its clock. Returning false ends that
/// run early with what it measured, as [`RunSpec::run`]'s `keep_going` does.
pub type Progress<'a> = dyn Fn(usize, Ns) -> bool + Sync + 'a;

/// Runs every spec and returns their results in the specs' order. Simulations run in
/// parallel on rayon's pool (`RAYON_NUM_THREADS=1` runs them one after another); host
/// runs follow, one at a time.
pub fn run_all(specs: &[RunSpec], progress: &Progress<'_>) -> Vec<Result<RunRecord, RunError>> {
    let simulated: Vec<usize> = (0..specs.len()).filter(|&i| specs[i].backend() != Backend::Host).collect();
    let mut out: Vec<Option<Result<RunRecord, RunError>>> = (0..specs.len()).map(|_| None).collect();
    let sims: Vec<(usize, Result<RunRecord, RunError>)> =
        simulated.par_iter().map(|&i| (i, specs[i].run(&mut |now| progress(i, now)))).collect();
    for (i, r) in sims {
        out[i] = Some(r);
    }
    for (i, spec) in specs.iter().enumerate().filter(|(_, s)| s.backend() == Backend::Host) {
        out[i] = Some(spec.run(&mut |now| progress(i, now)));
    }
    out.into_iter().map(|r| r.expect("every spec ran")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deterministic_json;

    const WORKLOAD: &str = r#"
[[task]]
name = "hog"
count = 3
program = [ { loop = 1000, do = [ { run = "700us" }, { sleep = "300us" } ] } ]
"#;

    fn specs(ms: u64) -> Vec<RunSpec> {
        ["eevdf", "cfs", "ule", "o1"]
            .iter()
            .map(|s| {
                let mut spec = RunSpec::load("w.toml", WORKLOAD, Some("smp2"), &[], Some(Ns::from_ms(ms))).unwrap();
                spec.sched = s.to_string();
                spec.check = true;
                spec
            })
            .collect()
    }

    /// Runs in parallel give exactly the records of runs one after another (the `host`
    /// wall-clock key aside), in the specs' order.
    #[test]
    fn parallel_runs_equal_sequential_runs() {
        let specs = specs(50);
        let sequential: Vec<String> =
            specs.iter().map(|s| deterministic_json(&s.run(&mut |_| true).unwrap())).collect();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let parallel: Vec<String> = pool
            .install(|| run_all(&specs, &|_, _| true))
            .into_iter()
            .map(|r| deterministic_json(&r.unwrap()))
            .collect();
        assert_eq!(sequential, parallel);
        let names: Vec<&str> = specs.iter().map(|s| s.sched.as_str()).collect();
        assert!(parallel.iter().zip(&names).all(|(j, n)| j.contains(&format!("\"name\": \"{n}\""))));
    }

    /// A run stopped by its progress callback ends early; the others run to the end.
    #[test]
    fn progress_stops_only_its_own_run() {
        let specs = specs(500);
        let rs = run_all(&specs, &|i, _| i != 1);
        let sim: Vec<u64> = rs.iter().map(|r| r.as_ref().unwrap().sim_ns).collect();
        assert!(sim[1] < Ns::from_ms(500).0, "{sim:?}");
        assert!(sim.iter().enumerate().all(|(i, &t)| i == 1 || t == Ns::from_ms(500).0), "{sim:?}");
    }
}
