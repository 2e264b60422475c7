//! `ext:locality` — a locality-aware policy with one queue per last-level cache.
//!
//! Where `ext:simple` shares one queue across the machine, this policy keeps a
//! vtime-ordered DSQ per LLC, so a task is normally run by a CPU that shares its cache:
//!
//! * `select_cpu`: `prev_cpu` if it idles, else an idle CPU of `prev_cpu`'s LLC (direct
//!   dispatch to its local DSQ); otherwise stay on `prev_cpu`'s LLC.
//! * `enqueue`: into the DSQ of the task's LLC, ordered by weighted vtime as in
//!   `ext:simple`; an idle CPU of that LLC, if any, is claimed and kicked. If the LLC has
//!   none, an idle CPU of another LLC is (nearest NUMA node first), so that it steals the
//!   task: `scx_rusty`'s "kick greedy" (`rusty_enqueue`), which wakes a foreign CPU that
//!   then tries its own domain before snooping the others.
//! * `dispatch`: take from the own LLC's DSQ; if it is empty, steal from the other LLCs,
//!   nearest NUMA node first (`rusty_dispatch`'s greedy stealing).
//!
//! What to watch: wakeups stay in their cache (fewer cross-LLC migrations than
//! `ext:simple`) while a task waits only when every CPU it may use is busy; a stolen task
//! runs away from its cache (the `steals` counter), and the next enqueue puts it in the
//! DSQ of the LLC where it last ran.

use crate::ext::{kick, vtime_before, ScxCtx, ScxOps, DSQ_LOCAL, SLICE_DFL};
use schedlab_machine::CpuSet;
use schedlab_sim::{CpuId, TaskId};

#[derive(Default)]
pub struct Locality {
    vtime_now: u64,
    /// Per CPU: the other LLCs to steal from, nearest first.
    steal_order: Vec<Vec<usize>>,
    /// Per LLC: the CPUs of the other LLCs, one mask per NUMA distance, nearest first.
    greedy: Vec<Vec<CpuSet>>,
    local: u64,
    steals: u64,
    kicks: u64,
    greedy_kicks: u64,
}

impl Locality {
    fn llc(cx: &ScxCtx, cpu: CpuId) -> usize {
        cx.machine().topology.cpus[cpu].llc
    }
}

impl ScxOps for Locality {
    fn name(&self) -> &'static str {
        "ext:locality"
    }
    fn init(&mut self, cx: &mut ScxCtx) -> Result<(), String> {
        let topo = &cx.machine().topology;
        let nr_llc = topo.cpus.iter().map(|c| c.llc).max().map_or(1, |m| m + 1);
        let llc_node: Vec<usize> =
            (0..nr_llc).map(|l| topo.cpus.iter().find(|c| c.llc == l).map_or(0, |c| c.node)).collect();
        self.steal_order = topo
            .cpus
            .iter()
            .map(|c| {
                let mut o: Vec<usize> = (0..nr_llc).filter(|&l| l != c.llc).collect();
                o.sort_by_key(|&l| (topo.numa_distance[c.node][llc_node[l]], l));
                o
            })
            .collect();
        self.greedy = (0..nr_llc).map(|l| greedy_masks(cx, l)).collect();
        for l in 0..nr_llc {
            cx.create_dsq(l as u64)?;
        }
        Ok(())
    }
    fn select_cpu(&mut self, cx: &mut ScxCtx, p: TaskId, prev: CpuId, _wake_flags: u32) -> CpuId {
        let mut mask = cx.machine().topology.llc_mask(prev);
        mask.intersect_with(&cx.task(p).affinity);
        let cpu = if mask.contains(prev) && cx.test_and_clear_cpu_idle(prev) {
            Some(prev)
        } else {
            cx.pick_idle_cpu(&mask, false)
        };
        match cpu {
            Some(c) => {
                self.local += 1;
                cx.dsq_insert(p, DSQ_LOCAL, SLICE_DFL, 0);
                c
            }
            None => prev,
        }
    }
    fn enqueue(&mut self, cx: &mut ScxCtx, p: TaskId, enq_flags: u64) {
        let cpu = cx.task_cpu(p);
        let mut vtime = cx.dsq_vtime(p);
        let floor = self.vtime_now.wrapping_sub(SLICE_DFL);
        if vtime_before(vtime, floor) {
            vtime = floor;
        }
        cx.dsq_insert_vtime(p, Self::llc(cx, cpu) as u64, SLICE_DFL, vtime, enq_flags);
        let mut mask = cx.machine().topology.llc_mask(cpu);
        mask.intersect_with(&cx.task(p).affinity);
        if let Some(idle) = cx.pick_idle_cpu(&mask, false) {
            self.kicks += 1;
            cx.kick_cpu(idle, kick::IDLE);
            return;
        }
        self.kick_greedy(cx, p, Self::llc(cx, cpu));
    }
    fn dispatch(&mut self, cx: &mut ScxCtx, cpu: CpuId, _prev: Option<TaskId>) {
        if cx.dsq_move_to_local(Self::llc(cx, cpu) as u64) {
            return;
        }
        for i in 0..self.steal_order[cpu].len() {
            if cx.dsq_move_to_local(self.steal_order[cpu][i] as u64) {
                self.steals += 1;
                return;
            }
        }
    }
    fn running(&mut self, cx: &mut ScxCtx, p: TaskId) {
        if vtime_before(self.vtime_now, cx.dsq_vtime(p)) {
            self.vtime_now = cx.dsq_vtime(p);
        }
    }
    fn stopping(&mut self, cx: &mut ScxCtx, p: TaskId, _runnable: bool) {
        let used = SLICE_DFL.saturating_sub(cx.slice(p));
        let v = cx.dsq_vtime(p).wrapping_add(used * 100 / u64::from(cx.weight(p)));
        cx.set_dsq_vtime(p, v);
    }
    fn enable(&mut self, cx: &mut ScxCtx, p: TaskId) {
        cx.set_dsq_vtime(p, self.vtime_now);
    }
    fn counters(&self) -> Vec<(String, u64)> {
        vec![
            ("local".into(), self.local),
            ("steals".into(), self.steals),
            ("idle_kicks".into(), self.kicks),
            ("greedy_kicks".into(), self.greedy_kicks),
        ]
    }
}

impl Locality {
    /// `p` waits in LLC `llc`'s DSQ and that LLC has no idle CPU: wake an idle CPU of
    /// another LLC that `p` may run on, nearest first; its `dispatch` steals `p`.
    fn kick_greedy(&mut self, cx: &mut ScxCtx, p: TaskId, llc: usize) {
        for i in 0..self.greedy[llc].len() {
            let mut mask = self.greedy[llc][i].clone();
            mask.intersect_with(&cx.task(p).affinity);
            if let Some(idle) = cx.pick_idle_cpu(&mask, false) {
                self.greedy_kicks += 1;
                cx.kick_cpu(idle, kick::IDLE);
                return;
            }
        }
    }
}

/// The CPUs outside LLC `llc`, grouped by their NUMA distance from it, nearest first.
fn greedy_masks(cx: &ScxCtx, llc: usize) -> Vec<CpuSet> {
    let topo = &cx.machine().topology;
    let Some(node) = topo.cpus.iter().find(|c| c.llc == llc).map(|c| c.node) else { return Vec::new() };
    let mut by_distance: Vec<(u32, CpuSet)> = Vec::new();
    for (cpu, c) in topo.cpus.iter().enumerate().filter(|(_, c)| c.llc != llc) {
        let d = topo.numa_distance[node][c.node];
        match by_distance.iter_mut().find(|(x, _)| *x == d) {
            Some((_, m)) => m.insert(cpu),
            None => by_distance.push((d, CpuSet::single(topo.cpus.len(), cpu))),
        }
    }
    by_distance.sort_by_key(|(d, _)| *d);
    by_distance.into_iter().map(|(_, m)| m).collect()
}
