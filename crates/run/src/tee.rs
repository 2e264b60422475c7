//! One probe made of several: the run's `Metrics` and the caller's probes
//! ([`crate::RunOptions::probe`], an explainer), each seeing every event and decision.

use schedlab_probe::Probe;
use schedlab_sim::Ns;

/// Metrics plus the caller's probes, each seeing every event and decision; only Metrics
/// samples.
pub(crate) struct Tee<'a, 'b> {
    pub(crate) metrics: &'a mut dyn Probe,
    pub(crate) extra: Vec<&'b mut dyn Probe>,
}

impl Probe for Tee<'_, '_> {
    fn event(&mut self, ev: &schedlab_probe::ProbeEvent) {
        self.metrics.event(ev);
        self.extra.iter_mut().for_each(|p| p.event(ev));
    }
    fn sample(&mut self, view: &schedlab_probe::SampleView) {
        self.metrics.sample(view);
    }
    fn sample_every(&self) -> Option<Ns> {
        self.metrics.sample_every()
    }
    fn reserve_tasks(&mut self, n: usize) {
        self.metrics.reserve_tasks(n);
        self.extra.iter_mut().for_each(|p| p.reserve_tasks(n));
    }
    fn wants_decisions(&self) -> bool {
        self.metrics.wants_decisions() || self.extra.iter().any(|p| p.wants_decisions())
    }
    fn wants_cpu_modes(&self) -> bool {
        self.metrics.wants_cpu_modes() || self.extra.iter().any(|p| p.wants_cpu_modes())
    }
    fn decision(&mut self, time: Ns, d: &schedlab_sched_api::Decision) {
        self.metrics.decision(time, d);
        self.extra.iter_mut().for_each(|p| p.decision(time, d));
    }
}
