//! sched_ext (`kernel/sched/ext.c`, v6.12) in the class chain: DSQ semantics (FIFO and
//! vtime order, inserting into another CPU's local DSQ, `kick_cpu` with the idle and
//! preempt flags, slice expiry), the watchdog and the error path ejecting a policy to
//! fair, partial and full mode, and the example policies under invariants and replay.

mod common;
use common::*;
use schedlab_policies::ext::{self, kick, local_on, ScxCtx, ScxOps, DSQ_LOCAL, SLICE_DFL, SLICE_INF};
use schedlab_probe::RunSummary;
use schedlab_run::RunSpec;
use schedlab_sim::{CpuId, Ns, TaskId};

const MS: u64 = 1_000_000;
const Q: u64 = 7;

/// A test policy: every task goes to user DSQ `Q` (FIFO, or by the vtime its name ends
/// in), idle CPUs take from it; options exercise one helper each.
#[derive(Default, Clone)]
struct TestOps {
    vtime: bool,
    /// Tasks named `pin*` are inserted into this CPU's local DSQ from `enqueue`.
    pin_to: Option<CpuId>,
    /// After inserting into `Q`, kick this CPU with these flags.
    kick: Option<(CpuId, u64)>,
    /// Tasks named `wake*` go to their CPU's local DSQ and kick it with these flags.
    local_kick: Option<u64>,
    /// `dispatch` does nothing: tasks stay in `Q` forever.
    never_dispatch: bool,
    /// The slice every insert gives.
    slice: Option<u64>,
}

impl ScxOps for TestOps {
    fn name(&self) -> &'static str {
        "ext:test"
    }
    fn init(&mut self, cx: &mut ScxCtx) -> Result<(), String> {
        cx.create_dsq(Q)
    }
    fn select_cpu(&mut self, _cx: &mut ScxCtx, _p: TaskId, prev: CpuId, _wf: u32) -> CpuId {
        prev
    }
    fn enqueue(&mut self, cx: &mut ScxCtx, p: TaskId, flags: u64) {
        let name = cx.task(p).name.clone();
        let slice = self.slice.unwrap_or(SLICE_DFL);
        if name.starts_with("blocker") {
            return cx.dsq_insert(p, DSQ_LOCAL, SLICE_INF, flags);
        }
        if let (Some(c), true) = (self.pin_to, name.starts_with("pin")) {
            return cx.dsq_insert(p, local_on(c), slice, flags);
        }
        if let (Some(f), true) = (self.local_kick, name.starts_with("wake")) {
            cx.dsq_insert(p, DSQ_LOCAL, slice, flags);
            return cx.kick_cpu(cx.task_cpu(p), f);
        }
        if self.vtime {
            let v: u64 = name.trim_start_matches(|c: char| !c.is_ascii_digit()).parse().unwrap_or(0);
            cx.dsq_insert_vtime(p, Q, slice, v, flags);
        } else {
            cx.dsq_insert(p, Q, slice, flags);
        }
        if let Some((c, f)) = self.kick {
            cx.kick_cpu(c, f);
        }
    }
    fn dispatch(&mut self, cx: &mut ScxCtx, _cpu: CpuId, _prev: Option<TaskId>) {
        if !self.never_dispatch {
            cx.dsq_move_to_local(Q);
        }
    }
}

fn spec(w: &str, machine: &str, ms: u64, sets: &[(&str, &str)]) -> RunSpec {
    let mut j = job(w, machine, "ext:test", 1, sets);
    j.end = Ns(ms * MS);
    j
}

/// Runs `ops` on `spec`, recording switches.
fn run_ops(j: &RunSpec, ops: TestOps) -> (RunSummary, Switches) {
    let sets: Vec<(String, String)> = j.sets.clone();
    let policy = ext::build(&j.machine, &sets, Box::new(ops)).unwrap();
    let mut sw = Switches::default();
    let opts = schedlab_run::RunOptions {
        probe: Some(&mut sw),
        policy: Some(policy),
        keep_summary: true,
        ..Default::default()
    };
    let s = j.run_with(opts, &mut |_| true).unwrap().summary.expect("kept");
    (s, sw)
}

fn tid(s: &RunSummary, name: &str) -> TaskId {
    s.tasks.iter().position(|t| t.name == name).unwrap_or_else(|| panic!("no task {name}"))
}

/// Tasks in the order they first ran.
fn first_runs(s: &RunSummary, sw: &Switches) -> Vec<String> {
    let mut seen = Vec::new();
    for &(_, _, _, next) in &sw.0 {
        if let Some(n) = next {
            if !seen.contains(&n) {
                seen.push(n);
            }
        }
    }
    seen.into_iter().map(|t| s.tasks[t].name.clone()).collect()
}

fn counter(s: &RunSummary, name: &str) -> u64 {
    s.policy_counters.iter().find(|(k, _)| k == name).map(|(_, v)| *v).unwrap_or_else(|| panic!("no {name}"))
}

fn short(name: &str, start: &str) -> String {
    format!("[[task]]\nname = \"{name}\"\nstart = \"{start}\"\nprogram = [ {{ run = \"2ms\" }} ]\n")
}

/// A blocker holds the only CPU while the others are queued; then the DSQ's order decides:
/// insertion order for a FIFO, `dsq_vtime` order for a vtime DSQ.
#[test]
fn fifo_and_vtime_order() {
    let blocker = "[[task]]\nname = \"blocker\"\nprogram = [ { run = \"1ms\" } ]\n";
    let w = format!("{blocker}{}{}{}", short("t30", "100us"), short("t10", "200us"), short("t20", "300us"));
    let j = spec(&w, "up", 50, &[]);
    let (s, sw) = run_ops(&j, TestOps::default());
    assert_eq!(first_runs(&s, &sw), ["blocker", "t30", "t10", "t20"], "FIFO: insertion order");
    let (s, sw) = run_ops(&j, TestOps { vtime: true, ..Default::default() });
    assert_eq!(first_runs(&s, &sw), ["blocker", "t10", "t20", "t30"], "vtime order");
}

/// Inserting into another CPU's local DSQ (`SCX_DSQ_LOCAL_ON | 3`) runs the task there,
/// moved from the runqueue it woke on.
#[test]
fn local_on_runs_the_task_there() {
    let w = "[[task]]\nname = \"pin\"\nprogram = [ { loop = 20, do = [ { run = \"1ms\" }, { sleep = \"1ms\" } ] } ]\n";
    let j = spec(w, "smp4", 100, &[]);
    let (s, sw) = run_ops(&j, TestOps { pin_to: Some(3), ..Default::default() });
    let p = tid(&s, "pin");
    let cpus: Vec<usize> = sw.0.iter().filter(|e| e.3 == Some(p)).map(|e| e.1).collect();
    assert!(cpus.len() >= 20, "it ran each time it woke: {}", cpus.len());
    assert!(cpus.iter().all(|&c| c == 3), "ran on {cpus:?}");
    assert!(counter(&s, "ext_remote_moves") >= 1, "moved from CPU 0");
    assert!(s.policy_exit.is_none());
}

/// `kick_cpu(2, IDLE)` wakes idle CPU 2, whose `dispatch` takes the task; without the kick
/// the task waits on CPU 0 behind a hog for its 20 ms slice.
#[test]
fn kick_idle_wakes_an_idle_cpu() {
    let hog = "[[task]]\nname = \"hog\"\naffinity = \"0\"\nprogram = [ { run = \"1s\" } ]\n";
    let sleeper = "[[task]]\nname = \"s\"\nstart = \"1ms\"\naffinity = \"0,2\"\nprogram = [ { sleep = \"5ms\" }, { run = \"1ms\" } ]\n";
    // Only CPU 0 and 2 exist for the sleeper; it wakes on CPU 0 (select_cpu keeps prev).
    let j = spec(&format!("{hog}{sleeper}"), "smp4", 60, &[]);
    let (s, sw) = run_ops(&j, TestOps { kick: Some((2, kick::IDLE)), ..Default::default() });
    let p = tid(&s, "s");
    let first = sw.0.iter().find(|e| e.3 == Some(p) && e.0 >= Ns(6 * MS)).expect("it ran");
    assert_eq!(first.1, 2, "it ran on the kicked CPU");
    assert!(first.0 < Ns(6 * MS + 200_000), "within the kick's latency: {:?}", first.0);
    let (s, sw) = run_ops(&j, TestOps::default());
    let p = tid(&s, "s");
    let first = sw.0.iter().find(|e| e.3 == Some(p) && e.0 >= Ns(6 * MS)).expect("it ran");
    assert!(first.0 > Ns(15 * MS), "no kick: it waited for the hog's slice, ran at {:?}", first.0);
}

/// `kick::PREEMPT` ends the slice of the CPU's running ext task at once; without it, a
/// task with an infinite slice is never preempted by an ext wakeup (`wakeup_preempt_scx`
/// is empty).
#[test]
fn kick_preempt_preempts() {
    let w = "[[task]]\nname = \"blocker\"\nprogram = [ { run = \"1s\" } ]\n[[task]]\nname = \"wake\"\nstart = \"1ms\"\nprogram = [ { loop = 10, do = [ { sleep = \"3ms\" }, { run = \"100us\" } ] } ]\n";
    let j = spec(w, "up", 40, &[]);
    let (s, _) = run_ops(&j, TestOps { local_kick: Some(kick::PREEMPT), ..Default::default() });
    let p = tid(&s, "wake");
    assert!(s.exit_times[p].is_some(), "with PREEMPT it ran its 10 rounds");
    let (s, _) = run_ops(&j, TestOps { local_kick: Some(0), ..Default::default() });
    let p = tid(&s, "wake");
    assert!(s.exit_times[p].is_none(), "without PREEMPT it waits behind the infinite slice");
    assert!(s.policy_exit.is_none());
}

/// Two hogs on one CPU alternate when the slice runs out, checked at the tick
/// (`task_tick_scx`): runs of 20 ms (`SCX_SLICE_DFL`) up to one 4 ms tick late, or of
/// the slice the policy gave.
#[test]
fn slice_expiry_rotates_hogs() {
    let w = hog("a", 0, 0) + &hog("b", 0, 0);
    for (slice, lo, hi) in [(None, 20 * MS, 24 * MS), (Some(6 * MS), 6 * MS, 8 * MS)] {
        let j = spec(&w, "up", 300, &[]);
        let (s, sw) = run_ops(&j, TestOps { slice, ..Default::default() });
        let b = bursts(&sw, 0, tid(&s, "a"));
        assert!(b.len() >= 4, "{slice:?}: a ran {} times", b.len());
        for d in &b {
            assert!((lo..=hi + 100_000).contains(&d.0), "{slice:?}: a burst of {} ns", d.0);
        }
    }
}

/// A policy that never dispatches stalls its tasks: the watchdog ejects it after the
/// timeout (checked every timeout / 2) and the tasks finish under fair, the reason
/// reported.
#[test]
fn watchdog_ejects_a_policy_that_never_dispatches() {
    let w = "[[task]]\nname = \"t\"\ncount = 3\nprogram = [ { run = \"5ms\" } ]\n";
    let j = spec(w, "smp2", 1000, &[("watchdog_timeout_ms", "100")]);
    let (s, sw) = run_ops(&j, TestOps { never_dispatch: true, ..Default::default() });
    let why = s.policy_exit.clone().expect("ejected");
    assert!(why.starts_with("runnable task stall") && why.contains("failed to run for"), "{why}");
    assert_eq!(counter(&s, "ext_ejected"), 1);
    let first = sw.0.iter().find(|e| e.3.is_some()).expect("tasks ran").0;
    assert!(first >= Ns(100 * MS) && first <= Ns(160 * MS), "first run at {first:?}: after 100..150 ms");
    assert!(s.exit_times.iter().all(|e| e.is_some()), "all finished under fair");
}

/// Inserting a task into the local DSQ of a CPU outside its affinity is an error
/// (`dispatch_to_local_dsq`): the policy is ejected at once and the run continues in fair.
#[test]
fn an_invalid_dispatch_ejects_the_policy() {
    let w = "[[task]]\nname = \"pin\"\naffinity = \"0-1\"\nprogram = [ { loop = 5, do = [ { run = \"1ms\" }, { sleep = \"1ms\" } ] } ]\n";
    let j = spec(w, "smp4", 100, &[]);
    let (s, _) = run_ops(&j, TestOps { pin_to: Some(3), ..Default::default() });
    let why = s.policy_exit.clone().expect("ejected");
    assert!(why.contains("target cpu 3 not allowed for pin"), "{why}");
    assert!(s.exit_times[tid(&s, "pin")].is_some(), "it finished under fair");
    let (s, _) = run_ops(&j, TestOps { pin_to: Some(9), ..Default::default() });
    assert!(s.policy_exit.expect("ejected").starts_with("invalid CPU"));
}

/// Partial mode: only `policy = "ext"` tasks join, and fair outranks ext, so an ext hog
/// never runs beside a normal hog on one CPU; in full mode both are ext and share it;
/// with no ext scheduler loaded, `SCHED_EXT` runs in fair.
#[test]
fn partial_mode_only_ext_tasks_use_the_policy() {
    let w = "[[task]]\nname = \"normal\"\nprogram = [ { run = \"1s\" } ]\n[[task]]\nname = \"e\"\npolicy = \"ext\"\nprogram = [ { run = \"1s\" } ]\n";
    let share = |sched: &str, sets: &[(&str, &str)]| {
        let mut j = job(w, "up", sched, 1, sets);
        j.end = Ns(400 * MS);
        let r = run(&j);
        (task(&r, "e").runtime_ns as f64 / (400 * MS) as f64, r.policy_counters.get("ext_enqueues").copied())
    };
    let (e, _) = share("ext:simple", &[("switch_partial", "1")]);
    assert!(e < 0.01, "partial: the ext hog ran {:.1} %", e * 100.0);
    let (e, _) = share("ext:simple", &[]);
    assert!((0.4..=0.6).contains(&e), "full: the ext hog ran {:.1} %", e * 100.0);
    let (e, n) = share("eevdf", &[]);
    assert!((0.4..=0.6).contains(&e) && n.is_none(), "no ext scheduler: {:.1} %", e * 100.0);
}

/// Each example policy passes the invariants after every event (`--check`) on wakeup-heavy
/// and CPU-bound work, on SMT and NUMA machines, and replays bit-identically.
#[test]
fn examples_pass_invariants_and_replay() {
    let w = "[[task]]\nname = \"ping\"\ncount = 12\nprogram = [ { loop = \"forever\", do = [ { run = \"300us\" }, { sleep = \"700us\" } ] } ]\n[[task]]\nname = \"hog\"\ncount = 6\nnice = 5\nprogram = [ { run = \"1s\" } ]\n";
    for sched in ["ext:simple", "ext:central", "ext:locality"] {
        for (machine, sets) in [("i7-3770", vec![]), ("opteron-32", vec![("fifo", "1")])] {
            let sets: Vec<(&str, &str)> = if sched == "ext:simple" { sets } else { vec![] };
            let mut j = job(w, machine, sched, 1, &sets);
            j.end = Ns(150 * MS);
            let a = run(&j);
            let b = run(&j);
            assert_eq!(a.trace_hash, b.trace_hash, "{sched} on {machine}");
            assert!(a.scheduler.exit.is_none(), "{sched} on {machine}: {:?}", a.scheduler.exit);
            let ran: u64 = a.tasks.iter().filter(|t| t.name.starts_with("ping")).map(|t| t.runtime_ns).sum();
            assert!(ran > 100 * MS, "{sched} on {machine}: the pings made progress ({ran} ns)");
        }
    }
}

/// `ext:locality` wastes no idle cache: eight hogs confined to LLC 0 of a two-LLC machine
/// are let loose at 10 ms; four keep LLC 0 busy and four wait in its DSQ. Each enqueue that
/// finds LLC 0 without an idle CPU kicks an idle CPU of LLC 1 (`scx_rusty`'s kick greedy),
/// whose `dispatch` finds its own DSQ empty and steals the task; from the first slice
/// expiries (20 ms) on, all eight CPUs run. Without the kick, LLC 1 would idle to the end;
/// and a CPU of LLC 0 must not look idle while the task its `dispatch` took from another
/// runqueue is on its way (`update_idle`), or an enqueue claims it instead of a CPU of LLC 1.
#[test]
fn locality_idle_cpu_of_another_llc_steals_queued_work() {
    let w = "[[task]]\nname = \"hog\"\ncount = 8\naffinity = \"0-3\"\nprogram = [ { run = \"1s\" } ]\n\
             [[change]]\nat = \"10ms\"\ntasks = \"hog\"\nset_affinity = \"all\"\n";
    let machine = format!("{}/../../examples/machines/two-llc.toml", env!("CARGO_MANIFEST_DIR"));
    let mut j = job(w, &machine, "ext:locality", 1, &[]);
    j.end = Ns(100 * MS);
    let r = run(&j);
    assert!(r.scheduler.exit.is_none(), "{:?}", r.scheduler.exit);
    for c in &r.cpus[4..8] {
        assert!(c.idle_ns < 30 * MS, "CPU {} of LLC 1 idled {} ns of 100 ms", c.cpu, c.idle_ns);
    }
    let n = |k: &str| r.policy_counters.get(k).copied().unwrap_or(0);
    assert!(n("ext.greedy_kicks") >= 4 && n("ext.steals") >= 4, "{:?}", r.policy_counters);
    assert!(r.tasks.iter().all(|t| t.runtime_ns >= 50 * MS), "every hog ran most of the time");
}
