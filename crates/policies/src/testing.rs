//! A minimal stand-in for the kernel, shared by the classes' hook-level tests: the machine,
//! the task infos, one view per CPU, a clock and the buffers a [`Ctx`] borrows. A test
//! drives a class directly through [`World::ctx`], so the quantities the kernel computes
//! (vruntimes, slices, deadlines, pulls) can be read exactly.

use schedlab_machine::Machine;
use schedlab_sched_api::{CpuScale, CpuView, Ctx, OptIdx, Request, TaskInfo, TaskPolicy};
use schedlab_sim::{CpuId, Ns, RngStreams, SimRng, TaskId};

pub(crate) struct World {
    pub m: Machine,
    pub tasks: Vec<TaskInfo>,
    pub cpus: Vec<CpuView>,
    pub rng: SimRng,
    /// What the hooks asked of the kernel (resched, migrate, …), oldest first.
    pub reqs: Vec<Request>,
    pub now: Ns,
    /// The CPU executing the hook (`smp_processor_id()`).
    pub this: CpuId,
    /// Per CPU, the capacity and frequency scale the kernel would keep (`Ctx::scale`).
    pub scale: Vec<CpuScale>,
    /// A cpufreq governor listens (`Ctx::cpufreq`).
    pub cpufreq: bool,
    /// The energy model (`Ctx::em`); none by default.
    pub em: schedlab_sched_api::EnergyModel,
}

impl World {
    /// An idle machine at time 0, hooks run on CPU 0, no tasks.
    pub fn new(m: Machine) -> World {
        World {
            cpus: vec![CpuView::default(); m.nr_cpus()],
            scale: vec![CpuScale::default(); m.nr_cpus()],
            cpufreq: false,
            em: Default::default(),
            m,
            tasks: Vec::new(),
            rng: RngStreams::new(1).stream("t", 0),
            reqs: Vec::new(),
            now: Ns(0),
            this: 0,
        }
    }

    /// Runs `f` with a fresh context (no work counted yet, no decisions recorded).
    pub fn ctx<R>(&mut self, f: impl FnOnce(&mut Ctx) -> R) -> R {
        let mut cx = Ctx {
            now: self.now,
            this_cpu: self.this,
            machine: &self.m,
            tasks: &self.tasks,
            cpus: &self.cpus,
            rng: &mut self.rng,
            requests: &mut self.reqs,
            work: Default::default(),
            decisions: None,
            scale: &self.scale,
            scaled: self.scale.iter().any(|s| !s.is_unit()),
            cpufreq: self.cpufreq,
            em: &self.em,
        };
        f(&mut cx)
    }

    /// Adds a task named `t<id>` on `cpu`, allowed on every CPU, in no group or session.
    pub fn add_task(&mut self, nice: i32, policy: TaskPolicy, cpu: CpuId) -> TaskId {
        let p = self.tasks.len();
        self.tasks.push(TaskInfo {
            name: format!("t{p}"),
            nice,
            policy,
            affinity: self.m.all_cpus(),
            cpu,
            parent: OptIdx::NONE,
            cgroup: OptIdx::NONE,
            session: OptIdx::NONE,
            slice: None,
            kthread: false,
            uclamp: Default::default(),
            core_cookie: 0,
        });
        p
    }
}

/// The largest machine a machine file may describe (`MAX_CPUS` = 4096): 16 nodes × 8 LLCs
/// × 16 cores × 2 threads.
pub(crate) fn machine_4096() -> Machine {
    let m = Machine::new("numa-4096", 250, schedlab_machine::Topology::new(16, 8, 16, 2, None), Default::default());
    assert_eq!(m.nr_cpus(), schedlab_machine::MAX_CPUS);
    m
}
