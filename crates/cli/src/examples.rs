//! Example workloads embedded in the binary, so an installed `schedlab` runs them without
//! the source tree: `schedlab run example:hackbench` (`schedlab list` names them). rt-app
//! examples are named by their file: `example:rt-app/periodic.json`.

/// `(name, text)` of `examples/workloads/*.toml`.
pub const WORKLOADS: &[(&str, &str)] = &[
    ("cpu-io-mix", include_str!("../../../examples/workloads/cpu-io-mix.toml")),
    ("fibo-sysbench", include_str!("../../../examples/workloads/fibo-sysbench.toml")),
    ("four-hogs", include_str!("../../../examples/workloads/four-hogs.toml")),
    ("hackbench", include_str!("../../../examples/workloads/hackbench.toml")),
    ("nice-pair", include_str!("../../../examples/workloads/nice-pair.toml")),
    ("periodic-200", include_str!("../../../examples/workloads/periodic-200.toml")),
    ("schbench", include_str!("../../../examples/workloads/schbench.toml")),
    ("sleep-loop", include_str!("../../../examples/workloads/sleep-loop.toml")),
    ("webserver", include_str!("../../../examples/workloads/webserver.toml")),
];

/// `(file, text)` of `examples/rt-app/*.json`.
pub const RTAPP: &[(&str, &str)] = &[
    ("barrier.json", include_str!("../../../examples/rt-app/barrier.json")),
    ("condvar.json", include_str!("../../../examples/rt-app/condvar.json")),
    ("custom-slice.json", include_str!("../../../examples/rt-app/custom-slice.json")),
    ("deadline.json", include_str!("../../../examples/rt-app/deadline.json")),
    ("fork.json", include_str!("../../../examples/rt-app/fork.json")),
    ("mutex-pi.json", include_str!("../../../examples/rt-app/mutex-pi.json")),
    ("periodic.json", include_str!("../../../examples/rt-app/periodic.json")),
    ("phases.json", include_str!("../../../examples/rt-app/phases.json")),
    ("shared-timer.json", include_str!("../../../examples/rt-app/shared-timer.json")),
    ("suspend-resume.json", include_str!("../../../examples/rt-app/suspend-resume.json")),
    ("sync.json", include_str!("../../../examples/rt-app/sync.json")),
    ("timer-modes.json", include_str!("../../../examples/rt-app/timer-modes.json")),
];

/// The prefix naming an embedded example.
pub const PREFIX: &str = "example:";

/// The text of `example:NAME` (`NAME`, `NAME.toml`, or `rt-app/FILE.json`).
pub fn lookup(arg: &str) -> Option<&'static str> {
    let name = arg.strip_prefix(PREFIX)?;
    if let Some(file) = name.strip_prefix("rt-app/") {
        return RTAPP.iter().find(|(n, _)| *n == file || n.trim_end_matches(".json") == file).map(|(_, t)| *t);
    }
    let stem = name.trim_end_matches(".toml");
    WORKLOADS.iter().find(|(n, _)| *n == stem).map(|(_, t)| *t)
}

/// Every embedded example's `example:` name.
pub fn names() -> Vec<String> {
    let w = WORKLOADS.iter().map(|(n, _)| format!("{PREFIX}{n}"));
    w.chain(RTAPP.iter().map(|(n, _)| format!("{PREFIX}rt-app/{n}"))).collect()
}
