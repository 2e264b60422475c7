//! Sleeping in the kernel model: timer slack (`kernel/time/hrtimer.c: hrtimer_nanosleep`
//! arms [expiry, expiry + slack]; the hrtimer interrupt expires every timer whose soft
//! expiry passed), the kernel time a sleep charges to the sleeper, and the idle exit of the
//! CPU its timer wakes.

mod common;
use common::*;
use schedlab_machine::{CostModel, Costs, Machine};
use schedlab_probe::{Probe, ProbeEvent};
use schedlab_run::RunSpec as Job;
use schedlab_sim::Ns;
use std::sync::Arc;

/// A job on `preset` with its costs (and optionally HZ) replaced.
fn job_with(text: &str, preset: &str, costs: Costs, hz: Option<u32>) -> Job {
    let mut j = job(text, preset, "cfs", 5, &[]);
    // The constant-cost machine: these tests check the timer arithmetic to the ns.
    let m = Machine { costs, hz: hz.unwrap_or(j.machine.hz), cost_model: CostModel::Flat, ..(*j.machine).clone() };
    j.machine = Arc::new(m);
    j
}

/// `sched_waking` times per task.
#[derive(Default)]
struct Wakings(Vec<(usize, Ns)>);
impl Probe for Wakings {
    fn event(&mut self, ev: &ProbeEvent) {
        if let ProbeEvent::Waking { time, task, .. } = *ev {
            self.0.push((task, time));
        }
    }
}

fn wakings_of(j: &Job, task: usize) -> Vec<Ns> {
    let mut w = Wakings::default();
    run_with_probe(j, &mut w);
    w.0.iter().filter(|(t, _)| *t == task).map(|(_, time)| *time).collect()
}

const SLEEP_LOOP: &str = r#"
[[task]]
name = "sleeper"
affinity = [0]
program = [ { loop = 100, do = [ { sleep = "5ms" } ] } ]
"#;

/// A task sleeping 5 ms 100 times on an otherwise idle CPU: each sleep ends at its hard
/// expiry (nothing else interrupts the idle CPU), then the idle exit, the hrtimer interrupt,
/// `ttwu_do_activate` and `schedule` + `context_switch` pass before it runs again. Its run
/// time is what `sum_exec_runtime` charges: the syscall and the hrtimer arming in its own
/// context, and `schedule` + `context_switch` after each switch to it. (HZ = 1 keeps the
/// tick out of its µs-long bursts; the tick's part is tested below.)
#[test]
fn sleep_loop_turnaround_and_run_time_are_exact() {
    // The constant path costs only: the wakeup's placement search and the picks cost
    // per unit of policy work (`crates/run/tests/cost_model.rs`), off here.
    let c = Costs { work_compare: Ns(0), work_cpu: Ns(0), work_group: Ns(0), work_task: Ns(0), ..Costs::default() };
    let j = job_with(SLEEP_LOOP, "smp2", c.clone(), Some(1));
    let r = run(&j);
    let t = task(&r, "sleeper");
    let first_run = c.idle_exit + c.schedule + c.context_switch;
    let wake_path = c.idle_exit + c.timer_irq + c.ttwu_activate + c.schedule + c.context_switch;
    let period = c.syscall + Ns::from_ms(5) + c.timer_slack + wake_path;
    assert_eq!(t.exit_ns, Some((first_run + Ns(100 * period.0) + c.exit).0));
    let per_sleep = c.syscall + c.hrtimer_start + c.schedule + c.context_switch;
    assert_eq!(t.runtime_ns, 100 * per_sleep.0 + (c.schedule + c.context_switch + c.exit).0);
    assert_eq!(t.wakeups, 100);
    // The slack is the kernel's default, 50 µs per sleep.
    assert_eq!(c.timer_slack, Ns::from_us(50));
}

const TIMER_LOOP: &str = r#"
[[task]]
name = "io"
affinity = [0]
program = [ { loop = 20, do = [ { timer = "4ms" } ] } ]
"#;

/// Periodic sleeps to absolute 4 ms boundaries (zero costs, 50 µs slack, HZ 250: the
/// boundaries are tick instants). Alone, the CPU idles with its tick stopped and each timer
/// fires at its hard expiry, 50 µs late. Next to a hog (started after the sleeper's first
/// call) the tick runs, and the tick's hrtimer interrupt expires the sleeper's timer at the
/// boundary itself.
#[test]
fn slack_ends_at_the_tick_of_a_busy_cpu_and_at_the_hard_expiry_of_an_idle_one() {
    let costs = Costs { timer_slack: Ns::from_us(50), ..Costs::zero() };
    let alone = wakings_of(&job_with(TIMER_LOOP, "smp2", costs.clone(), Some(250)), 0);
    let expect: Vec<Ns> = (1..=20).map(|k| Ns::from_ms(4 * k) + Ns::from_us(50)).collect();
    assert_eq!(alone, expect);
    let hog = "[[task]]\nname = \"hog\"\naffinity = [0]\nstart = \"1ms\"\nprogram = [ { run = \"1s\" } ]\n";
    let with_hog = format!("{TIMER_LOOP}{hog}");
    let busy = wakings_of(&job_with(&with_hog, "smp2", costs, Some(250)), 0);
    let expect: Vec<Ns> = (1..=20).map(|k| Ns::from_ms(4 * k)).collect();
    assert_eq!(busy, expect);
}

const THREE_SLEEPERS: &str = r#"
[[task]]
name = "a"
affinity = [0]
program = [ { sleep = "10ms" } ]
[[task]]
name = "b"
affinity = [0]
program = [ { sleep = "10020us" } ]
[[task]]
name = "c"
affinity = [0]
program = [ { sleep = "10060us" } ]
"#;

/// Three sleepers on one idle CPU with 50 µs slack: `a`'s hard expiry (10.05 ms) expires
/// `b` too, whose soft expiry (10.02 ms) has passed; `c`'s (10.06 ms) has not, so `c` waits
/// for its own hard expiry (10.11 ms).
#[test]
fn one_timer_interrupt_expires_every_timer_past_its_soft_expiry() {
    let costs = Costs { timer_slack: Ns::from_us(50), ..Costs::zero() };
    let j = job_with(THREE_SLEEPERS, "smp2", costs.clone(), Some(250));
    let mut w = Wakings::default();
    run_with_probe(&j, &mut w);
    let at = |t: usize| w.0.iter().find(|(task, _)| *task == t).map(|(_, time)| *time);
    assert_eq!(at(0), Some(Ns::from_us(10_050)));
    assert_eq!(at(1), Some(Ns::from_us(10_050)));
    assert_eq!(at(2), Some(Ns::from_us(10_110)));
    // Without slack each fires at its own expiry.
    let j = job_with(THREE_SLEEPERS, "smp2", Costs::zero(), Some(250));
    let mut w = Wakings::default();
    run_with_probe(&j, &mut w);
    let times: Vec<Ns> = w.0.iter().map(|(_, time)| *time).collect();
    assert_eq!(times, vec![Ns::from_us(10_000), Ns::from_us(10_020), Ns::from_us(10_060)]);
}
