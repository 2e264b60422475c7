//! Helpers shared by the run crate's tests: specs from inline workload text, probes that
//! record events.

#![allow(dead_code)]
use schedlab_metrics::RunRecord;
use schedlab_probe::{Probe, ProbeEvent};
use schedlab_run::RunSpec;
use schedlab_sim::Ns;
use std::sync::Arc;

/// A job from inline workload text on the noiseless machine (`--noise none`: the tests
/// assert what the kernel predicts, exactly); invariants are checked after every event.
pub fn job(text: &str, machine: &str, sched: &str, secs: u64, sets: &[(&str, &str)]) -> RunSpec {
    let mut j = RunSpec::load("test.toml", text, Some(machine), &[], Some(Ns::from_secs(secs))).unwrap();
    j.set("machine.noise", "none").unwrap();
    j.sched = sched.into();
    j.sets = sets.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    j.check = true;
    j
}

pub fn run(j: &RunSpec) -> RunRecord {
    j.run(&mut |_| true).unwrap()
}

pub fn task<'a>(r: &'a RunRecord, name: &str) -> &'a schedlab_metrics::TaskRecord {
    r.tasks.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no task {name}"))
}

/// Records `sched_switch` events.
#[derive(Default)]
pub struct Switches(pub Vec<(Ns, usize, Option<usize>, Option<usize>)>);
impl Probe for Switches {
    fn event(&mut self, ev: &ProbeEvent) {
        if let ProbeEvent::Switch { time, cpu, prev, next, .. } = *ev {
            self.0.push((time, cpu, prev, next));
        }
    }
}

impl Switches {
    /// The CPUs each of `nr_tasks` tasks (by tid) was switched in on at or after `from`,
    /// in the order first used.
    pub fn cpus_by_task(&self, nr_tasks: usize, from: Ns) -> Vec<Vec<usize>> {
        let mut on: Vec<Vec<usize>> = vec![Vec::new(); nr_tasks];
        for &(t, cpu, _, next) in &self.0 {
            if let Some(n) = next.filter(|_| t >= from) {
                if !on[n].contains(&cpu) {
                    on[n].push(cpu);
                }
            }
        }
        on
    }

    /// The CPUs (sorted) the tasks of `r` named `name…` were switched in on.
    pub fn cpus_used(&self, r: &RunRecord, name: &str) -> Vec<usize> {
        let ids: Vec<usize> = r.tasks.iter().filter(|t| t.name.starts_with(name)).map(|t| t.tid).collect();
        let mut cpus: Vec<usize> =
            self.0.iter().filter(|s| s.3.is_some_and(|n| ids.contains(&n))).map(|s| s.1).collect();
        cpus.sort_unstable();
        cpus.dedup();
        cpus
    }
}

/// Runs a job with a custom probe; returns the trace hash.
pub fn run_with_probe(j: &RunSpec, probe: &mut dyn Probe) -> u64 {
    let opts = schedlab_run::RunOptions { probe: Some(probe), ..Default::default() };
    let r = j.run_with(opts, &mut |_| true).unwrap().record;
    u64::from_str_radix(&r.trace_hash, 16).unwrap()
}

/// Lengths of the uninterrupted runs of task `t` on `cpu` (switch-in to switch-out).
pub fn bursts(sw: &Switches, cpu: usize, t: usize) -> Vec<Ns> {
    let mut out = Vec::new();
    let mut since = None;
    for &(time, c, prev, next) in &sw.0 {
        if c != cpu {
            continue;
        }
        if prev == Some(t) {
            if let Some(s) = since.take() {
                out.push(time - s);
            }
        }
        if next == Some(t) {
            since = Some(time);
        }
    }
    out
}

pub fn hog(name: &str, nice: i32, cpu: usize) -> String {
    format!(
        "[[task]]\nname = \"{name}\"\nnice = {nice}\naffinity = [{cpu}]\nprogram = [ {{ loop = \"forever\", do = [ {{ run = \"100ms\" }} ] }} ]\n"
    )
}

pub fn sleeper(name: &str, nice: i32, cpu: usize, run: &str, sleep: &str) -> String {
    format!(
        "[[task]]\nname = \"{name}\"\nnice = {nice}\naffinity = [{cpu}]\nprogram = [ {{ loop = \"forever\", do = [ {{ run = \"{run}\" }}, {{ sleep = \"{sleep}\" }} ] }} ]\n"
    )
}

pub fn _arc<T>(t: T) -> Arc<T> {
    Arc::new(t)
}

/// `n` hogs started pinned to CPU 0 and unpinned to `cpus` at once at 1 s (`[[change]]`).
pub fn unpinned_hogs(n: usize, cpus: &str) -> String {
    format!(
        "[[task]]\nname = \"hog\"\ncount = {n}\naffinity = [0]\nprogram = [ {{ loop = \"forever\", do = [ {{ run = \"50ms\" }} ] }} ]\n[[change]]\nat = \"1s\"\ntasks = \"hog\"\nset_affinity = \"{cpus}\"\n"
    )
}
