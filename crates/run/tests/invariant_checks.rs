//! `--check` catches a policy whose runqueue contents disagree with the kernel's (the
//! incremental check compares the policy's list with the kernel's record of each task and
//! its count): a policy (fifo) wrapped so that its `queued` hides a task, lists one twice,
//! or lists another CPU's.

use schedlab_probe::{Probe, ProbeEvent};
use schedlab_run::{RunError, RunSpec};
use schedlab_sched_api::{BalanceKind, Ctx, SchedClass, SelectKind, Stat, TaskPolicy, Tunable};
use schedlab_sim::{CpuId, Ns, TaskId};

#[derive(Clone, Copy, Debug)]
enum Lie {
    Hide,
    Twice,
    Foreign,
}

/// Fifo, except that `queued` lies once a CPU has two tasks queued.
struct Liar {
    inner: Box<dyn SchedClass>,
    lie: Lie,
}

impl SchedClass for Liar {
    fn name(&self) -> &'static str {
        "liar"
    }
    fn tunables(&self) -> Vec<Tunable> {
        self.inner.tunables()
    }
    fn task_new(&mut self, cx: &mut Ctx, p: TaskId, parent: Option<TaskId>) {
        self.inner.task_new(cx, p, parent)
    }
    fn task_dead(&mut self, cx: &mut Ctx, p: TaskId) {
        self.inner.task_dead(cx, p)
    }
    fn select_task_rq(&mut self, cx: &mut Ctx, p: TaskId, prev: CpuId, kind: SelectKind, wf: u32) -> CpuId {
        self.inner.select_task_rq(cx, p, prev, kind, wf)
    }
    fn migrate_task_rq(&mut self, cx: &mut Ctx, p: TaskId, new_cpu: CpuId) {
        self.inner.migrate_task_rq(cx, p, new_cpu)
    }
    fn enqueue_task(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, flags: u32) {
        self.inner.enqueue_task(cx, cpu, p, flags)
    }
    fn dequeue_task(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, flags: u32) -> bool {
        self.inner.dequeue_task(cx, cpu, p, flags)
    }
    fn wakeup_preempt(&mut self, cx: &mut Ctx, cpu: CpuId, p: TaskId, wf: u32) {
        self.inner.wakeup_preempt(cx, cpu, p, wf)
    }
    fn put_prev_task(&mut self, cx: &mut Ctx, cpu: CpuId, prev: TaskId) {
        self.inner.put_prev_task(cx, cpu, prev)
    }
    fn pick_next_task(&mut self, cx: &mut Ctx, cpu: CpuId) -> Option<TaskId> {
        self.inner.pick_next_task(cx, cpu)
    }
    fn task_tick(&mut self, cx: &mut Ctx, cpu: CpuId, curr: TaskId) {
        self.inner.task_tick(cx, cpu, curr)
    }
    fn yield_task(&mut self, cx: &mut Ctx, cpu: CpuId, curr: TaskId) {
        self.inner.yield_task(cx, cpu, curr)
    }
    fn reweight_task(&mut self, cx: &mut Ctx, p: TaskId) {
        self.inner.reweight_task(cx, p)
    }
    fn policy_changed(&mut self, cx: &mut Ctx, p: TaskId, old: TaskPolicy) {
        self.inner.policy_changed(cx, p, old)
    }
    fn balance(&mut self, cx: &mut Ctx, cpu: CpuId, kind: BalanceKind) {
        self.inner.balance(cx, cpu, kind)
    }
    fn queued(&self, cpu: CpuId, out: &mut Vec<TaskId>) {
        let from = out.len();
        self.inner.queued(cpu, out);
        if out.len() - from < 2 {
            return;
        }
        match self.lie {
            Lie::Hide => {
                out.pop();
            }
            Lie::Twice => out.push(out[from]),
            Lie::Foreign => {
                let mut other = Vec::new();
                self.inner.queued(1 - cpu, &mut other);
                if let Some(&t) = other.first() {
                    out[from] = t;
                }
            }
        }
    }
    fn task_stats(&self, p: TaskId) -> Vec<Stat> {
        self.inner.task_stats(p)
    }
    fn check_invariants(&self, cx: &Ctx) -> Result<(), String> {
        self.inner.check_invariants(cx)
    }
    fn check_cpus(&self, cx: &Ctx, cpus: &[CpuId]) -> Result<(), String> {
        self.inner.check_cpus(cx, cpus)
    }
    fn tick_period(&self) -> Option<Ns> {
        self.inner.tick_period()
    }
    fn wake_list(&self) -> bool {
        self.inner.wake_list()
    }
}

struct Nothing;
impl Probe for Nothing {
    fn event(&mut self, _: &ProbeEvent) {}
}

const WORKLOAD: &str = "[[task]]\nname = \"w\"\ncount = 6\nprogram = [ { loop = \"forever\", do = [ { run = \"300us\" }, { sleep = \"200us\" } ] } ]\n";

#[test]
fn a_policy_misreporting_its_runqueue_is_caught() {
    for lie in [Lie::Hide, Lie::Twice, Lie::Foreign] {
        let mut spec = RunSpec::load("liar.toml", WORKLOAD, Some("smp2"), &[], Some(Ns::from_ms(20))).unwrap();
        spec.sched = "fifo".into();
        spec.check = true;
        let inner = schedlab_policies::make_policy("fifo", &spec.machine, &[]).unwrap();
        let opts = schedlab_run::RunOptions {
            probe: Some(&mut Nothing),
            policy: Some(Box::new(Liar { inner, lie })),
            ..Default::default()
        };
        let r = spec.run_with(opts, &mut |_| true);
        match r {
            Err(RunError::Simulation(m)) => assert!(m.contains("policy `liar` has"), "{lie:?}: {m}"),
            Err(e) => panic!("{lie:?}: another error: {e}"),
            Ok(_) => panic!("{lie:?}: not caught"),
        }
    }
}
