//! Sched-domain rebuilds (`kernel/sched/topology.c: partition_sched_domains_locked`,
//! `build_sched_domains`, `detach_destroy_domains`, v5.15/v6.12), when the kernel cuts
//! the machine into cpuset partitions or takes CPUs on- or offline.
//!
//! Each span the kernel hands over gets its own domains and root domain; a CPU in none
//! is attached to the null domain (`on_null_domain`): it does no periodic, newly idle or
//! nohz balancing and is never picked to balance for others. A span equal to one of the
//! current ones keeps its domains and their balancing state, as the kernel keeps the
//! `doms_cur` entries that match a new one; a new span's domains are fresh (`sd_init`:
//! `last_balance` and `last_decay_max_lb_cost` now, `balance_interval` the span weight,
//! no failures, no newidle cost) and so are its LLCs' shared state (`sd->shared` is newly
//! allocated: no idle core noted, the scan depth reset) and its root domain (`rd->overload`
//! clear).

use super::domains::Domains;
use super::{Fair, Version};
use schedlab_machine::CpuSet;
use schedlab_sched_api::Ctx;
use schedlab_sim::CpuId;

impl Fair {
    /// `partition_sched_domains(doms)`: rebuilds the domains of every CPU whose span
    /// changed.
    pub(super) fn rebuild_sched_domains(&mut self, cx: &mut Ctx, doms: &[CpuSet]) {
        let n = self.nr_cpus;
        // Machine-sized masks, so that equal spans compare equal.
        let doms: Vec<CpuSet> = doms
            .iter()
            .map(|d| {
                let mut s = CpuSet::empty(n);
                d.iter().filter(|&c| c < n).for_each(|c| s.insert(c));
                s
            })
            .collect();
        let mut new = Domains::build_spans(cx.machine, &doms);
        if self.t.version == Version::V4_9 {
            new.use_v4_9();
        }
        let mut rd_of = vec![doms.len(); n];
        for (d, span) in doms.iter().enumerate() {
            span.iter().for_each(|c| rd_of[c] = d);
        }
        let mut rd_overload = vec![false; doms.len() + 1];
        let j = cx.now.0 / self.jiffy;
        for cpu in 0..n {
            let (old, now) = (self.rd_span(cpu), doms.get(rd_of[cpu]));
            if old.is_some() && old == now {
                new.per_cpu[cpu] = std::mem::take(&mut self.domains.per_cpu[cpu]);
                rd_overload[rd_of[cpu]] = self.rd_overload[self.rd_of[cpu]];
                continue;
            }
            for sd in &mut new.per_cpu[cpu] {
                sd.last_balance = j;
                sd.last_decay_max_lb_cost = j;
            }
            let llc = new.llc_id[cpu];
            self.has_idle_cores[llc] = false;
            self.nr_idle_scan[llc] = new.llc_size[cpu];
        }
        self.domains = new;
        self.rd_overload = rd_overload;
        self.rd_of = rd_of;
        self.doms = doms;
    }

    /// The span of `cpu`'s root domain, `None` on the null domain.
    fn rd_span(&self, cpu: CpuId) -> Option<&CpuSet> {
        self.doms.get(self.rd_of[cpu])
    }

    /// `on_null_domain(rq)`: `cpu` is in no sched domain (offline, or in an isolated
    /// partition).
    #[inline]
    pub(super) fn on_null_domain(&self, cpu: CpuId) -> bool {
        self.rd_of[cpu] == self.doms.len()
    }
}
