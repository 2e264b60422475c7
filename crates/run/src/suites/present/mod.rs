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

const ZHANG: &str =
    "Zhang, Gu, Su: \"Research on Decreasing Lock Contention for Linux Scheduler\", Journal of Chinese Computer Systems, 2017";
const FUTEX: &str = "\"futex and its optimisations\", an Android systems write-up (futex_swap, WF_CURRENT_CPU, VIP)";
const EEVDF: &str =
    "Stoica, Abdel-Wahab: \"Earliest Eligible Virtual Deadline First\" (1995), as merged in Linux 6.6–6.18";
const O1: &str = "\"Linux 2.6 bottlenecks\", a 2005 industry talk on the O(1) scheduler";
const CYCLICTEST: &str = "cyclictest (rt-tests) practice: wakeup latency of a periodic real-time thread";

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
    let (paper, conclusion) = match suite {
        "lock-delayed-wakeup" => (ZHANG, lock::delayed_wakeup_finding(results)),
        "lock-sites" => (ZHANG, lock::sites_finding(results)),
        "lock-wakeup-granularity" => (ZHANG, lock::granularity_finding(results)),
        "futex" => (FUTEX, futex::finding(results)),
        "cfs-eevdf" => (EEVDF, generic::finding(results)),
        "o1-bottlenecks" => (O1, o1::finding(results)),
        "rt-latency" => (CYCLICTEST, generic::finding(results)),
        _ => return None,
    };
    Some(Finding { paper, conclusion })
}
