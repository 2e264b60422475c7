//! The run seam: backend dispatch by scheduler name, typed errors, limits checked before a
//! run, and the simulator's record independent of the probe watching it.

use schedlab_probe::NoProbe;
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
        (&|s| s.kernel = schedlab_run::KernelVersion::V3_4, "--kernel 3.4"),
        (&|s| s.kernel = schedlab_run::KernelVersion::V2_6_32, "--kernel 2.6.32"),
        (&|s| s.delayed_wakeup = true, "--delayed-wakeup"),
        (&|s| s.lb_narrow_lock = true, "--lb-narrow-lock"),
        (&|s| s.ttwu_queue = false, "--no-ttwu-queue"),
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

/// Probes observe: the simulator's trace hash is the same with `Metrics` (inside `run`) and
/// with no probe at all.
#[test]
fn the_trace_hash_does_not_depend_on_the_probe() {
    let s = spec("ule");
    let r = s.run(&mut |_| true).unwrap();
    let summary = schedlab_run::sim::run_with_probe(&s, &mut NoProbe, &mut |_| true).unwrap();
    assert_eq!(r.trace_hash, format!("{:016x}", summary.trace_hash));
    assert_eq!(r.events, summary.events);
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
