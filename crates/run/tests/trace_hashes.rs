//! The hash check: a fixed set of runs (every example workload and scheduler family, the
//! kernel's switches and versions, futex switches, rt-app input) whose trace hashes are
//! committed in `tests/data/trace-hashes.tsv`. A refactor must leave every hash unchanged;
//! a change of model changes some, and the commit that makes it re-records them
//! (`SCHEDLAB_RECORD_HASHES=1 cargo test --release -p schedlab-run --test trace_hashes`)
//! and says why.

use schedlab_run::RunSpec;
use schedlab_sim::Ns;

/// One case: a name, the workload file (relative to the repository root), the machine,
/// the scheduler, `--set` pairs, a run time and the kernel switches as `RunSpec` fields.
struct Case {
    name: &'static str,
    file: &'static str,
    machine: &'static str,
    sched: &'static str,
    sets: &'static [(&'static str, &'static str)],
    params: &'static [(&'static str, &'static str)],
    ms: u64,
    switches: fn(&mut RunSpec),
}

fn none(_: &mut RunSpec) {}

const CASES: &[Case] = &[
    Case {
        name: "nice-pair/eevdf",
        file: "examples/workloads/nice-pair.toml",
        machine: "smp2",
        sched: "eevdf",
        sets: &[],
        params: &[],
        ms: 2000,
        switches: none,
    },
    Case {
        name: "nice-pair/eevdf@6.6",
        file: "examples/workloads/nice-pair.toml",
        machine: "smp2",
        sched: "eevdf@6.6",
        sets: &[],
        params: &[],
        ms: 2000,
        switches: none,
    },
    Case {
        name: "nice-pair/cfs@4.9",
        file: "examples/workloads/nice-pair.toml",
        machine: "smp2",
        sched: "cfs@4.9",
        sets: &[],
        params: &[],
        ms: 2000,
        switches: none,
    },
    Case {
        name: "cpu-io-mix/cfs",
        file: "examples/workloads/cpu-io-mix.toml",
        machine: "smp4",
        sched: "cfs",
        sets: &[],
        params: &[],
        ms: 3000,
        switches: none,
    },
    Case {
        name: "cpu-io-mix/ule",
        file: "examples/workloads/cpu-io-mix.toml",
        machine: "smp4",
        sched: "ule",
        sets: &[],
        params: &[],
        ms: 3000,
        switches: none,
    },
    Case {
        name: "cpu-io-mix/ule@current",
        file: "examples/workloads/cpu-io-mix.toml",
        machine: "smp4",
        sched: "ule@current",
        sets: &[],
        params: &[],
        ms: 3000,
        switches: none,
    },
    Case {
        name: "cpu-io-mix/o1",
        file: "examples/workloads/cpu-io-mix.toml",
        machine: "smp4",
        sched: "o1",
        sets: &[("hz", "250")],
        params: &[],
        ms: 3000,
        switches: none,
    },
    Case {
        name: "hackbench/eevdf",
        file: "examples/workloads/hackbench.toml",
        machine: "i7-3770",
        sched: "eevdf",
        sets: &[],
        params: &[("groups", "4")],
        ms: 2000,
        switches: none,
    },
    Case {
        name: "hackbench/cfs-2.6.32-delayed",
        file: "examples/workloads/hackbench.toml",
        machine: "i7-3770",
        sched: "cfs",
        sets: &[],
        params: &[("groups", "4")],
        ms: 2000,
        switches: |s| {
            s.kernel.version = schedlab_run::KernelVersion::V2_6_32;
            s.kernel.delayed_wakeup = true;
        },
    },
    Case {
        name: "hackbench/cfs-3.4-narrow",
        file: "examples/workloads/hackbench.toml",
        machine: "i7-3770",
        sched: "cfs",
        sets: &[],
        params: &[("groups", "4")],
        ms: 2000,
        switches: |s| {
            s.kernel.version = schedlab_run::KernelVersion::V3_4;
            s.kernel.lb_narrow_lock = true;
        },
    },
    Case {
        name: "hackbench/eevdf-no-ttwu-queue",
        file: "examples/workloads/hackbench.toml",
        machine: "i7-3770",
        sched: "eevdf",
        sets: &[],
        params: &[("groups", "4")],
        ms: 2000,
        switches: |s| s.kernel.ttwu_queue = false,
    },
    Case {
        name: "hackbench/ext:simple",
        file: "examples/workloads/hackbench.toml",
        machine: "i7-3770",
        sched: "ext:simple",
        sets: &[],
        params: &[("groups", "4")],
        ms: 2000,
        switches: none,
    },
    Case {
        name: "periodic-200/eevdf",
        file: "examples/workloads/periodic-200.toml",
        machine: "smp8",
        sched: "eevdf",
        sets: &[],
        params: &[],
        ms: 200,
        switches: none,
    },
    Case {
        name: "periodic-200/ext:central",
        file: "examples/workloads/periodic-200.toml",
        machine: "smp8",
        sched: "ext:central",
        sets: &[],
        params: &[],
        ms: 200,
        switches: none,
    },
    Case {
        name: "fibo-sysbench/ule@11.1-linux",
        file: "examples/workloads/fibo-sysbench.toml",
        machine: "smp4",
        sched: "ule@11.1-linux",
        sets: &[],
        params: &[],
        ms: 3000,
        switches: none,
    },
    Case {
        name: "webserver/cfs",
        file: "examples/workloads/webserver.toml",
        machine: "smp4",
        sched: "cfs",
        sets: &[],
        params: &[],
        ms: 300,
        switches: none,
    },
    Case {
        name: "four-hogs/fifo",
        file: "examples/workloads/four-hogs.toml",
        machine: "smp2",
        sched: "fifo",
        sets: &[],
        params: &[],
        ms: 300,
        switches: none,
    },
    Case {
        name: "futex-vip/eevdf",
        file: "examples/studies/futex/vip.toml",
        machine: "smp4",
        sched: "eevdf",
        sets: &[("futex.vip", "1")],
        params: &[],
        ms: 300,
        switches: none,
    },
    Case {
        name: "futex-swap/cfs",
        file: "examples/studies/futex/swap.toml",
        machine: "smp4",
        sched: "cfs",
        sets: &[],
        params: &[],
        ms: 300,
        switches: none,
    },
    Case {
        name: "rt-app-periodic/eevdf@6.12",
        file: "examples/rt-app/periodic.json",
        machine: "smp2",
        sched: "eevdf@6.12",
        sets: &[],
        params: &[],
        ms: 300,
        switches: none,
    },
    Case {
        name: "unpin512/cfs@4.9",
        file: "examples/studies/ule-cfs-unpin512.toml",
        machine: "opteron-32",
        sched: "cfs@4.9",
        sets: &[],
        params: &[],
        ms: 3000,
        switches: none,
    },
    Case {
        name: "unpin512/ule@11.1-linux",
        file: "examples/studies/ule-cfs-unpin512.toml",
        machine: "opteron-32",
        sched: "ule@11.1-linux",
        sets: &[],
        params: &[],
        ms: 3000,
        switches: none,
    },
    Case {
        name: "rt-app-deadline/eevdf",
        file: "examples/rt-app/deadline.json",
        machine: "smp2",
        sched: "eevdf",
        sets: &[],
        params: &[],
        ms: 300,
        switches: none,
    },
];

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn hash_of(c: &Case) -> String {
    let text = std::fs::read_to_string(root().join(c.file)).unwrap_or_else(|e| panic!("{}: {e}", c.file));
    let params: Vec<(String, String)> = c.params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let mut spec = RunSpec::load(c.file, &text, Some(c.machine), &params, Some(Ns::from_ms(c.ms)))
        .unwrap_or_else(|e| panic!("{}: {e}", c.name));
    spec.sched = c.sched.into();
    for (k, v) in c.sets {
        spec.set(k, v).unwrap_or_else(|e| panic!("{}: {e}", c.name));
    }
    // The constant-cost machine these hashes were recorded on (`--costs flat`).
    spec.set("machine.cost_model", "flat").unwrap();
    (c.switches)(&mut spec);
    let r = spec.run(&mut |_| true).unwrap_or_else(|e| panic!("{}: {e}", c.name));
    format!("{}\t{}", r.trace_hash, r.events)
}

#[test]
fn trace_hashes_match_the_committed_ones() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/trace-hashes.tsv");
    let got: Vec<String> = CASES.iter().map(|c| format!("{}\t{}", c.name, hash_of(c))).collect();
    let text = got.join("\n") + "\n";
    if std::env::var_os("SCHEDLAB_RECORD_HASHES").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let want =
        std::fs::read_to_string(&path).expect("tests/data/trace-hashes.tsv (record with SCHEDLAB_RECORD_HASHES=1)");
    let differ: Vec<String> =
        want.lines().zip(got.iter()).filter(|(w, g)| w != g).map(|(w, g)| format!("  want {w}\n  got  {g}")).collect();
    assert_eq!(want.lines().count(), got.len(), "case list changed: re-record\n{text}");
    assert!(
        differ.is_empty(),
        "trace hashes changed (re-record with the reason in the commit):\n{}",
        differ.join("\n")
    );
}
