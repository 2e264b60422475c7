//! The fair class's placement records (`Decision::Place`): which path of
//! `select_task_rq_fair` chose the CPU (`wake_affine` then `select_idle_sibling`, or
//! `find_idlest_cpu` for forks, execs and wide wakeups) and the rule inside it, with the
//! loads compared. Built only while recording, from state the choice did not change; no
//! function here counts work or changes anything.

use super::domains::SD_NUMA;
use super::Fair;
use schedlab_sched_api::{Ctx, Decision, SelectKind};
use schedlab_sim::{CpuId, TaskId};

/// How `select_task_rq_fair` went, noted as it went (cheap: indices and static words).
pub(super) struct Placed {
    /// `wake_wide` said the waker switches among too many wakees to pull them.
    pub wide: bool,
    /// `wake_affine` ran at this domain level, with the rule that chose.
    pub affine: Option<(usize, &'static str)>,
    /// `select_idle_sibling` ran around this target, with the rule that chose.
    pub sis: Option<(CpuId, &'static str)>,
    /// `find_idlest_cpu` descended from this level.
    pub idlest: Option<usize>,
}

impl Fair {
    /// Records the placement of `p` (previously on `prev`) on `cpu`.
    pub(super) fn record_place(
        &self,
        cx: &mut Ctx,
        p: TaskId,
        prev: CpuId,
        cpu: CpuId,
        kind: SelectKind,
        how: &Placed,
    ) {
        let this = cx.this_cpu;
        let mut parts = Vec::new();
        if how.wide {
            parts.push(format!("wake_wide: the waker flips between many wakees (more than the {}-CPU cache domain), so it does not pull", self.domains.llc_size[this]));
        }
        if let Some((lvl, rule)) = how.affine {
            let sd = &self.domains.per_cpu[this][lvl];
            let loads = format!(
                "loads: waking CPU {this} {}, previous CPU {prev} {}, the task {}; imbalance_pct {}",
                self.cpu_load(this),
                self.cpu_load(prev),
                self.task_h_load(p),
                sd.imbalance_pct
            );
            parts.push(format!("wake_affine at the {} level: {rule} ({loads})", sd.name));
        }
        let path = if let Some(level) = how.idlest {
            let sd = &self.domains.per_cpu[this][level];
            let numa = if sd.has(SD_NUMA) {
                ", NUMA: a node stays while it runs fewer tasks than a quarter of its CPUs"
            } else {
                ""
            };
            parts.push(format!(
                "find_idlest_cpu from the {} level ({:?}): the least busy group, then its most recently idled CPU or least loaded one{numa}",
                sd.name, kind
            ));
            "find_idlest_cpu"
        } else if let Some((target, rule)) = how.sis {
            parts.push(format!("select_idle_sibling around CPU {target}: {rule}"));
            if how.affine.is_some() {
                "wake_affine + select_idle_sibling"
            } else {
                "select_idle_sibling"
            }
        } else {
            "previous CPU"
        };
        let state = if cx.idle_cpu(cpu) && self.adj.nr[cpu] == 0 {
            format!("CPU {cpu} is idle")
        } else {
            format!("CPU {cpu} runs {} tasks, load {}", cx.cpus[cpu].nr_running, self.cpu_load(cpu))
        };
        parts.push(state);
        let why = parts.join("; ");
        cx.record(|| Decision::Place { task: p, prev, cpu, path, why });
    }
}
