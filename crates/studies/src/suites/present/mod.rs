//! How a built-in study presents itself beyond its tables: its paper's figure(s) as SVG
//! ([`figures`]) and its finding first — the paper's title and authors and a one-line
//! conclusion computed from the run's own numbers ([`finding`]). Kept apart from the suites'
//! definitions so a suite's experiments stay one list of configurations and metrics.

mod futex;
mod generic;
mod lock;
mod o1;
mod rows;

use crate::suite::ExperimentResult;
use schedlab_report::plots::Chart;

/// What a study found: the paper it reproduces and one line with this run's result.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// Title and authors (and venue) of the source.
    pub paper: &'static str,
    /// One line, from the numbers of this run.
    pub conclusion: String,
}

impl Finding {
    /// The finding as the first lines of a study's text output.
    pub fn text(&self) -> String {
        format!("paper: {}\nfinding: {}\n", self.paper, self.conclusion)
    }
}

/// The study's figures (empty for a study that draws none).
pub fn figures(suite: &str, results: &[ExperimentResult]) -> Vec<Chart> {
    match suite {
        "lock-delayed-wakeup" => lock::delayed_wakeup(results),
        "lock-sites" => lock::sites(results),
        "lock-wakeup-granularity" => lock::granularity(results),
        "futex" => futex::figures(results),
        "o1-bottlenecks" => o1::figures(results),
        _ => generic::figures(results),
    }
}

/// The study's finding.
pub fn finding(suite: &str, results: &[ExperimentResult]) -> Option<Finding> {
    let conclusion = match suite {
        "lock-delayed-wakeup" => lock::delayed_wakeup_finding(results),
        "lock-sites" => lock::sites_finding(results),
        "lock-wakeup-granularity" => lock::granularity_finding(results),
        "futex" => futex::finding(results),
        "cfs-eevdf" | "rt-latency" | "schbench" | "cgroup-bandwidth" | "eas" => generic::finding(results),
        "o1-bottlenecks" => o1::finding(results),
        _ => return None,
    };
    Some(Finding { paper: crate::find(suite)?.source.citation, conclusion })
}
