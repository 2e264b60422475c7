//! The run seam: backend dispatch by scheduler name, typed errors, limits checked before a
//! run, and the simulator's record independent of the probe watching it.

use schedlab_run::{Backend, RunError, RunSpec, MAX_SAMPLES, MAX_SIM_TIME};
use schedlab_sim::Ns;

const TWO_TASKS: &str =
    "[[task]]\nname = \"a\"\nprogram = [ { run = \"3ms\" }, { sleep = \"1ms\" }, { run = \"2ms\" } ]\n\
                         [[task]]\nname = \"b\"\nprogram = [ { run = \"4ms\" } ]\n";

fn spec(sched: &str) -> RunSpec {
    let mut s = RunSpec::load("two.toml", TWO_TASKS, Some("smp2"), &[], Some(Ns::from_ms(50))).unwrap();
    s.sched = sched.into();
    s.check = true;
    s
}

#[test]
fn the_scheduler_name_picks_the_backend() {
    assert_eq!(Backend::for_scheduler("host"), Backend::Host);
    for e in schedlab_policies::REGISTRY {
        assert_eq!(Backend::for_scheduler(e.name), Backend::Sim, "{}", e.name);
    }
}

/// A host run's machine is the host: a spec for a machine of another size is an input
/// error before anything starts (no privilege needed to see it).
#[test]
fn a_host_run_on_a_machine_of_another_size_is_an_input_error() {
    let text = "[[task]]\nname = \"t\"\nprogram = [ { run = \"1ms\" } ]\n";
    let cpus = schedlab_run::load_machine("host").unwrap().nr_cpus();
    let other = if cpus == 8 { "smp4" } else { "smp8" };
    let mut s = RunSpec::load("w.toml", text, Some(other), &[], None).unwrap();
    s.sched = "host".into();
    let err = s.run(&mut |_| true).unwrap_err();
    assert!(matches!(err, RunError::Input(_)) && err.to_string().contains("--machine host"), "{err}");
}

/// The kernel-model switches are simulation-only: a host run refuses each of them up
/// front, naming the flag, instead of running the host's own kernel as if obeyed.
#[test]
fn a_host_run_refuses_the_simulated_kernel_switches() {
    let text = "[[task]]\nname = \"t\"\nprogram = [ { run = \"1ms\" } ]\n";
    let host = |f: &dyn Fn(&mut RunSpec)| {
        let mut s = RunSpec::load("w.toml", text, Some("host"), &[], None).unwrap();
        s.sched = "host".into();
        f(&mut s);
        s.run(&mut |_| true).unwrap_err()
    };
    type Switch<'a> = &'a dyn Fn(&mut RunSpec);
    let cases: [(Switch, &str); 5] = [
        (&|s| s.kernel.version = schedlab_run::KernelVersion::V3_4, "kernel.version=3.4"),
        (&|s| s.kernel.version = schedlab_run::KernelVersion::V2_6_32, "kernel.version=2.6.32"),
        (&|s| s.kernel.delayed_wakeup = true, "kernel.delayed_wakeup=1"),
        (&|s| s.kernel.lb_narrow_lock = true, "kernel.lb_narrow_lock=1"),
        (&|s| s.kernel.ttwu_queue = false, "kernel.ttwu_queue=0"),
    ];
    for (set, flag) in cases {
        let err = host(set);
        let msg = err.to_string();
        assert!(matches!(err, RunError::Input(_)) && msg.contains(flag) && msg.contains("simulation-only"), "{msg}");
    }
}

#[test]
fn a_simulated_run_records_its_inputs_and_ends_when_all_exit() {
    let r = spec("cfs").run(&mut |_| true).unwrap();
    assert_eq!(r.scheduler.name, "cfs");
    assert_eq!(r.machine.cpus, 2);
    assert_eq!(r.workload.file, "two.toml");
    assert_eq!(r.end_reason, schedlab_probe::EndReason::AllExited);
    assert!(r.tasks.iter().map(|t| t.runtime_ns).sum::<u64>() >= 9_000_000);
}

#[test]
fn bad_names_and_limits_are_typed_errors() {
    let err = spec("bfs").run(&mut |_| true).unwrap_err();
    assert!(matches!(err, RunError::Input(ref m) if m.contains("unknown scheduler `bfs`")), "{err:?}");
    let err = RunSpec::load("w.toml", TWO_TASKS, Some("cray-1"), &[], None).err().unwrap();
    assert!(matches!(err, RunError::Input(_)), "{err:?}");
    let err = RunSpec::load("w.toml", "[[task]]\nname = 3\n", None, &[], None).err().unwrap();
    assert!(matches!(err, RunError::Source(_)), "{err:?}");
    let err = RunSpec::load("w.toml", TWO_TASKS, None, &[], Some(MAX_SIM_TIME + Ns(1))).err().unwrap();
    assert!(matches!(err, RunError::Limit(_)), "{err:?}");
    let mut s = spec("cfs");
    s.sample = Some(Ns(s.end.0 / (MAX_SAMPLES + 1)));
    let err = s.run(&mut |_| true).unwrap_err();
    assert!(matches!(err, RunError::Limit(ref m) if m.contains("samples")), "{err:?}");
}

/// Probes observe: the simulator's trace hash is the same with a caller's probe beside the
/// record's metrics (one that asks for decision records and CPU modes too) and without,
/// and the record is the summary's.
#[test]
fn the_trace_hash_does_not_depend_on_the_probe() {
    let s = spec("ule");
    let r = s.run(&mut |_| true).unwrap();
    let mut eager = Eager;
    let opts = schedlab_run::RunOptions { probe: Some(&mut eager), keep_summary: true, ..Default::default() };
    let out = s.run_with(opts, &mut |_| true).unwrap();
    let summary = out.summary.expect("kept");
    assert_eq!(r.trace_hash, format!("{:016x}", summary.trace_hash));
    assert_eq!(r.trace_hash, out.record.trace_hash);
    assert_eq!(r.events, summary.events);
}

/// A probe that asks for everything a probe can ask for.
struct Eager;
impl schedlab_probe::Probe for Eager {
    fn event(&mut self, _: &schedlab_probe::ProbeEvent) {}
    fn wants_decisions(&self) -> bool {
        true
    }
    fn wants_cpu_modes(&self) -> bool {
        true
    }
}

/// A caller that stops the run gets what was measured, marked `interrupted`.
#[test]
fn stopping_early_is_an_interrupted_record() {
    let mut s = spec("cfs");
    // `keep_going` is polled every 65536 events: a yielding hog makes that many quickly.
    s.end = Ns::from_secs(5);
    s.workload = std::sync::Arc::new(
        schedlab_workload::parse_workload(
            "hog.toml",
            "[[task]]\nname = \"h\"\nprogram = [ { loop = \"forever\", do = [ { run = \"10us\" }, \"yield\" ] } ]\n",
            &[],
            2,
        )
        .unwrap(),
    );
    let r = s.run(&mut |_| false).unwrap();
    assert_eq!(r.end_reason, schedlab_probe::EndReason::Interrupted);
    assert!(r.sim_ns < s.end.0, "{}", r.sim_ns);
}

/// The record reports the configuration the kernel ran, not the one asked for: under every
/// policy, with the defaults and with each switch flipped, `kernel.switches` is the
/// requested configuration after `KernelConfig::effective` for that policy (ULE and O(1)
/// keep no wake list, 2.6.32 has none, `lb_narrow_lock` acts only under 2.6.32 and 3.4),
/// and a switch that changed nothing is a warning.
#[test]
fn the_record_reports_the_effective_kernel_configuration_under_every_policy() {
    use schedlab_run::KernelConfig;
    let text = "[[task]]\nname = \"t\"\ncount = 2\nprogram = [ { loop = 3, do = [ { run = \"1ms\" }, { sleep = \"1ms\" } ] } ]\n";
    let flips: [(&str, &str); 5] = [
        ("kernel.ttwu_queue", "0"),
        ("kernel.version", "2.6.32"),
        ("kernel.version", "3.4"),
        ("kernel.lb_narrow_lock", "1"),
        ("kernel.delayed_wakeup", "1"),
    ];
    for e in schedlab_policies::REGISTRY {
        let m = schedlab_machine::preset("smp2").unwrap();
        let wake_list = (e.make)(&m, &[]).unwrap().wake_list();
        // What decides each switch's effect: the policy's paths and the machine (smp2 has
        // one LLC, so 3.4 never queues a wakeup: `KernelConfig::effective`).
        let at = schedlab_kernel::RunsOn::new((e.make)(&m, &[]).unwrap().as_ref(), &m);
        assert_eq!(wake_list, !matches!(e.name, "ule" | "o1"), "{}: which policies keep a wake list", e.name);
        for flip in std::iter::once(None).chain(flips.iter().map(Some)) {
            let mut s = RunSpec::load("w.toml", text, Some("smp2"), &[], Some(Ns::from_ms(20))).unwrap();
            s.sched = e.name.into();
            if let Some((k, v)) = flip {
                s.set(k, v).unwrap();
            }
            let r = s.run(&mut |_| true).unwrap();
            let eff = s.kernel.effective(at);
            let want: Vec<(String, String)> = eff.values().into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            assert_eq!(r.kernel.switches, want, "{} {flip:?}", e.name);
            assert_eq!(r.kernel.ttwu_queue, Some(eff.ttwu_queue), "{} {flip:?}", e.name);
            assert_eq!(r.kernel.lb_narrow_lock, Some(eff.lb_narrow_lock), "{} {flip:?}", e.name);
            let nothing = s.kernel.ineffective(at);
            assert_eq!(r.warnings, nothing, "{} {flip:?}", e.name);
            let default = KernelConfig::default().effective(at);
            assert_eq!(r.kernel.changed.is_empty(), eff == default, "{} {flip:?}: {:?}", e.name, r.kernel.changed);
        }
    }
}
