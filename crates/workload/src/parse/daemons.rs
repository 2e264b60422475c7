//! `[[daemon]]`: kernel threads as background load, from documented presets.
//!
//! A daemon is a `[[task]]` with `kthread = true` whose program is "sleep, then run", for
//! ever: per-CPU ones (`per_cpu`) have one instance bound to each CPU, as
//! `kthread_create_on_cpu` binds the kworkers and ksoftirqd. The rates are the model's
//! choices for a busy server, documented here and in `docs/workload-language.md`; `every`
//! and `run` override them.

use super::{join, AstOp, Node, P, R};
use crate::{Policy, TaskTemplate};
use schedlab_sim::{Distribution, Ns};
use std::collections::{BTreeMap, BTreeSet};
use toml::de::DeTable;

/// A kernel thread the workload can add as background load.
#[derive(Clone, Copy, Debug)]
pub struct DaemonPreset {
    pub name: &'static str,
    /// One bound instance per CPU, or one unbound thread.
    pub per_cpu: bool,
    pub nice: i32,
    /// Mean time between wakeups (exponentially distributed: independent work items).
    pub every: Ns,
    /// Run per wakeup, drawn uniformly from `run_min..=run_max`.
    pub run_min: Ns,
    pub run_max: Ns,
    /// Why these numbers.
    pub why: &'static str,
}

/// The presets, by name.
pub const DAEMON_PRESETS: &[DaemonPreset] = &[
    DaemonPreset {
        name: "kworker",
        per_cpu: true,
        nice: 0,
        every: Ns::from_ms(20),
        run_min: Ns::from_us(5),
        run_max: Ns::from_us(30),
        why: "per-CPU bound workqueue workers (`kworker/N:M`, kernel/workqueue.c: worker_thread): \
              vmstat_update every vm.stat_interval (1 s), writeback and driver work items; \
              50 wakeups/s per CPU of 5-30 us each on a busy server",
    },
    DaemonPreset {
        name: "ksoftirqd",
        per_cpu: true,
        nice: 0,
        every: Ns::from_ms(100),
        run_min: Ns::from_us(20),
        run_max: Ns::from_us(100),
        why: "per-CPU softirq threads (kernel/softirq.c: run_ksoftirqd): softirqs run at \
              irq exit and reach the thread only when __do_softirq defers (after 2 ms or 10 \
              restarts, MAX_SOFTIRQ_TIME/MAX_SOFTIRQ_RESTART); 10 wakeups/s per CPU of 20-100 us",
    },
    DaemonPreset {
        name: "rcu",
        per_cpu: false,
        nice: 0,
        every: Ns::from_ms(3),
        run_min: Ns::from_us(2),
        run_max: Ns::from_us(10),
        why: "the RCU grace-period kthread (`rcu_preempt`, kernel/rcu/tree.c: rcu_gp_kthread), \
              which forces quiescent states every jiffies_till_next_fqs (about 3 jiffies at \
              HZ=1000) while a grace period is in progress; 2-10 us each",
    },
];

impl P<'_> {
    /// The `[[daemon]]` tables as task templates (kernel threads), after the workload's own
    /// tasks; `tasks` are the tasks' names.
    pub(super) fn daemons(&self, root: &DeTable, tasks: &BTreeMap<String, usize>) -> R<Vec<TaskTemplate>> {
        let mut out: Vec<TaskTemplate> = Vec::new();
        let mut taken = BTreeSet::new();
        for (i, item, t) in self.array_of_tables(root, "daemon")? {
            self.step()?;
            let f = format!("daemon[{i}]");
            let at = item.span().start;
            self.check_keys(t, &["preset", "name", "every", "run"], &f)?;
            let pv = self.require(t, "preset", at, &f)?;
            let preset_name = self.string(pv, &join(&f, "preset"))?;
            let Some(preset) = DAEMON_PRESETS.iter().find(|d| d.name == preset_name) else {
                let known: Vec<&str> = DAEMON_PRESETS.iter().map(|d| d.name).collect();
                return Err(self.err(
                    pv.span().start,
                    &join(&f, "preset"),
                    format!("unknown daemon preset `{preset_name}`; expected one of {}", known.join(", ")),
                ));
            };
            let name = match self.get(t, "name") {
                Some(v) => self.string(v, &join(&f, "name"))?,
                None => preset.name.to_string(),
            };
            if tasks.contains_key(&name) || !taken.insert(name.clone()) {
                return Err(self.err(at, &join(&f, "name"), format!("two tasks are named `{name}`; give a `name`")));
            }
            let every = match self.get(t, "every") {
                Some(v) => self.duration(v, &join(&f, "every"))?,
                None => preset.every,
            };
            if every.0 == 0 {
                return Err(self.err(at, &join(&f, "every"), "a daemon must sleep between runs: every > 0"));
            }
            let run = match self.get(t, "run") {
                Some(v) => self.dist(v, &join(&f, "run"))?,
                None => Distribution::Uniform { min: preset.run_min, max: preset.run_max },
            };
            let node = |op| Node { op, offset: at, path: f.clone() };
            let body = vec![node(AstOp::Loop {
                count: None,
                body: vec![node(AstOp::Sleep(Distribution::Exponential { mean: every })), node(AstOp::Run(run))],
            })];
            out.push(TaskTemplate {
                name,
                count: if preset.per_cpu { self.nr_cpus as u64 } else { 1 },
                template: false,
                nice: preset.nice,
                policy: Policy::Normal,
                policy_at: at,
                affinity: None,
                start: Ns(0),
                group: None,
                session: None,
                slice: None,
                uclamp: Default::default(),
                process: false,
                kthread: true,
                per_cpu: preset.per_cpu,
                vip: false,
                core_cookie: None,
                memory: crate::TaskMemory { node_at: at, ..Default::default() },
                body,
                instance_dependent: false,
            });
        }
        Ok(out)
    }
}
