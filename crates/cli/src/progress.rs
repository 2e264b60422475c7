//! A run's progress bar: simulated time against the time limit, and — because many runs end
//! long before their limit (hackbench ends when its groups exit) — the work done, counted in
//! events from the simulator's polls (one per [`schedlab_run::PROGRESS_EVENTS`] events).

use schedlab_run::{Backend, RunSpec};
use schedlab_sim::Ns;
use std::sync::atomic::{AtomicU64, Ordering};

/// One run's bar.
pub struct Bar {
    bar: indicatif::ProgressBar,
    polls: AtomicU64,
    simulated: bool,
}

/// The bars' template: time bar, events in the message.
pub fn style() -> indicatif::ProgressStyle {
    indicatif::ProgressStyle::with_template("{prefix:>12} [{bar:30}] {pos}/{len} ms simulated{msg} ({elapsed})")
        .expect("valid template")
}

impl Bar {
    /// A bar for `job`, drawn by `bar`.
    pub fn new(job: &RunSpec, bar: indicatif::ProgressBar) -> Bar {
        bar.set_length(job.end.0 / 1_000_000);
        bar.set_style(style());
        bar.set_prefix(job.sched.clone());
        Bar { bar, polls: AtomicU64::new(0), simulated: job.backend() != Backend::Host }
    }

    /// Called with the run's clock at each poll.
    pub fn tick(&self, now: Ns) {
        self.bar.set_position(now.0 / 1_000_000);
        let n = self.polls.fetch_add(1, Ordering::Relaxed) + 1;
        if self.simulated {
            self.bar.set_message(format!(" · {} events", events(n * schedlab_run::PROGRESS_EVENTS)));
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// `1234567` → `1.2M`.
fn events(n: u64) -> String {
    match n {
        0..=9_999 => n.to_string(),
        10_000..=999_999 => format!("{}k", n / 1000),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn event_counts_are_short() {
        assert_eq!(super::events(4096), "4096");
        assert_eq!(super::events(409_600), "409k");
        assert_eq!(super::events(4_096_000), "4.1M");
    }
}
