//! Study `lock-wakeup-granularity`: the third fix of Zhang, Gu and Su (2017), tuning CFS's
//! wakeup-preemption granularity (`sysctl_sched_wakeup_granularity`) for the application.
//! A larger granularity means fewer wakeup preemptions, so fewer `schedule()` calls and less
//! runqueue-lock traffic; the paper swept 1×..4× the default with Apache under `ab`
//! (phoronix pts/apache, 8 logical CPUs of an i7-3770) and found 2× best, and ran hackbench
//! at 2×. Both experiments run CFS under the v3.4 kernel's locking paths (`--kernel 3.4`)
//! on the `i7-3770` preset.
//!
//! Parameters the paper does not give, chosen here: Apache is 16 worker threads serving 64
//! connections that `ab` keeps busy (one request outstanding each), 50 µs of CPU per request
//! (a small static page), 100-byte requests and 4 KiB responses; hackbench runs 10 groups of
//! 100 loops (hackbench's default loops: the paper's 1000 would take 10 × as long for the
//! same comparison), processes over sockets (hackbench's defaults).

use crate::suite::{Config, Experiment, Metric, Scaled, Suite};
use schedlab_kernel::KernelVersion;
use schedlab_run::RunRecord;
use schedlab_sim::Ns;

pub const DESCRIPTION: &str =
    "CFS wakeup granularity 1x..4x (Zhang, Gu, Su 2017): web server requests/s and latency, hackbench at 2x";

const WEBSERVER: &str = include_str!("../../../../examples/workloads/webserver.toml");
const HACKBENCH: &str = include_str!("../../../../examples/workloads/hackbench.toml");

/// CFS's default wakeup granularity on the 8-CPU machine: 1 ms × (1 + log2 8), the
/// `SCHED_TUNABLESCALING_LOG` factor (`kernel/sched/fair.c: get_update_sysctl_factor`).
const DEFAULT_GRANULARITY_US: u64 = 4_000;

/// CFS at `k` × the default granularity.
fn at(k: u64) -> Config {
    Config::new(&format!("{k}x"), "cfs")
        .kernel(KernelVersion::V3_4)
        .set("sched_wakeup_granularity_ns", &format!("{}us", k * DEFAULT_GRANULARITY_US))
}

fn tunable(r: &RunRecord, name: &str) -> String {
    r.scheduler.tunables.iter().find(|(n, _)| n == name).map_or_else(|| "-".into(), |(_, v)| v.clone())
}

/// Runqueue-lock statistics summed over every runqueue at the call sites starting `site`
/// (all sites for "").
fn rq(r: &RunRecord, site: &str, f: fn(&schedlab_metrics::LockRecord) -> u64) -> u64 {
    r.locks.iter().filter(|l| l.lock.starts_with("rq[") && l.site.starts_with(site)).map(f).sum()
}

fn request(r: &RunRecord) -> Option<&schedlab_metrics::SpanRecord> {
    r.spans.iter().find(|s| s.name == "request")
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e3)
}

/// The metrics both experiments show: the granularity in force, wakeup preemptions and the
/// runqueue-lock traffic they cause.
fn lock_metrics() -> Vec<Metric> {
    vec![
        Metric { name: "wakeup granularity ns", value: |r| tunable(r, "sched_wakeup_granularity_ns") },
        Metric {
            name: "involuntary switches",
            value: |r| r.tasks.iter().map(|t| t.switches_involuntary).sum::<u64>().to_string(),
        },
        Metric { name: "schedule() rq locks", value: |r| rq(r, "schedule", |l| l.acquisitions).to_string() },
        Metric { name: "rq locks contended", value: |r| rq(r, "", |l| l.contended).to_string() },
        Metric { name: "rq spin us", value: |r| us(rq(r, "", |l| l.spin_ns)) },
    ]
}

fn apache() -> Experiment {
    let params = [("clients", "64"), ("servers", "16"), ("service", "50us"), ("process", "0")];
    let configs = (1..=4).map(|k| params.iter().fold(at(k), |c, (n, v)| c.param(n, v))).collect();
    let mut metrics = vec![
        Metric { name: "requests/s", value: |r| request(r).map_or("-".into(), |s| format!("{:.0}", s.per_sec)) },
        Metric { name: "latency p50 us", value: |r| request(r).map_or("-".into(), |s| us(s.latency_ns.p50)) },
        Metric { name: "latency p99 us", value: |r| request(r).map_or("-".into(), |s| us(s.latency_ns.p99)) },
        Metric { name: "latency max us", value: |r| request(r).map_or("-".into(), |s| us(s.latency_ns.max)) },
        Metric {
            name: "schedule() per request",
            value: |r| {
                request(r).map_or("-".into(), |s| {
                    format!("{:.2}", rq(r, "schedule", |l| l.acquisitions) as f64 / s.count.max(1) as f64)
                })
            },
        },
    ];
    metrics.extend(lock_metrics());
    Experiment {
        name: "apache",
        title: "a 16-thread web server, ab keeping 64 requests outstanding: requests/s and latency per granularity",
        workload: WEBSERVER,
        machine: "i7-3770",
        duration: Ns::from_secs(1),
        derived: Vec::new(),
        configs,
        metrics,
    }
}

fn hackbench() -> Experiment {
    let params = [("groups", "10"), ("loops", "100")];
    let configs = [1, 2].into_iter().map(|k| params.iter().fold(at(k), |c, (n, v)| c.param(n, v))).collect();
    let mut metrics = vec![Metric {
        name: "completion ms",
        value: |r| {
            let main = r.tasks.iter().find(|t| t.name == "main");
            main.and_then(|t| t.exit_ns).map_or("-".into(), |e| format!("{:.2}", e as f64 / 1e6))
        },
    }];
    metrics.extend(lock_metrics());
    metrics.push(Metric {
        name: "try_to_wake_up contended",
        value: |r| rq(r, "try_to_wake_up", |l| l.contended).to_string(),
    });
    Experiment {
        name: "hackbench",
        title: "hackbench, 10 groups x 40 processes, 100 loops: completion at 1x and 2x granularity",
        workload: HACKBENCH,
        machine: "i7-3770",
        duration: Ns::from_secs(60),
        derived: Vec::new(),
        configs,
        metrics,
    }
}

pub fn suite() -> Suite {
    Suite {
        name: "lock-wakeup-granularity",
        description: DESCRIPTION,
        experiments: vec![apache(), hackbench()],
        scaled: Some(Scaled {
            reason: "hackbench at 100 loops per sender and receiver (its own default), not the paper's 1000: the \
                     same comparison in a tenth of the time",
            full: &[("hackbench", "loops", "1000")],
        }),
    }
}
