//! The ULE-vs-CFS paper's comparison for each `ule-cfs-*` study (Bouron et al., "The Battle
//! of the Schedulers: FreeBSD ULE vs. Linux CFS", USENIX ATC 2018): what the paper reports
//! for the experiment, what this run measured, and a one-line conclusion that says whether
//! they agree and why, from what the scheduler did (its counters, the ULE interactivity
//! scores of the sampled series, preemptions, migrations).
//!
//! The paper's statements are its qualitative findings; where it reports no outcome for an
//! experiment the text says so instead of inventing a number.

mod figure;
pub(crate) mod measure;
mod studies;

pub use figure::figures;
use schedlab_metrics::RunRecord;

/// A study's comparison with the paper.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// What the paper reports for this experiment.
    pub paper: &'static str,
    /// The same quantities from this study's runs, one entry per scheduler.
    pub ours: String,
    /// Agreement or not, and the reason: what the schedulers did.
    pub conclusion: String,
}

impl Comparison {
    /// The comparison as the lines after a study's `finding:`.
    pub fn text(&self) -> String {
        format!("paper reports: {}\nwe measure: {}\nconclusion: {}\n", self.paper, self.ours, self.conclusion)
    }
}

/// The comparison of built-in study `name` (a path or `NAME.toml` is reduced to its stem)
/// from its runs, or `None` for a study the paper has no experiment for, or without runs
/// of both a CFS and a ULE scheduler.
pub fn comparison(name: &str, rs: &[RunRecord]) -> Option<Comparison> {
    studies::compare(&stem(name), rs)
}

/// `dir/ule-cfs-apache.toml` → `ule-cfs-apache`.
fn stem(name: &str) -> String {
    std::path::Path::new(name).file_stem().map_or(name.into(), |s| s.to_string_lossy().into_owned())
}

/// A single-workload study's text: the header, the paper, the finding, then for a
/// `ule-cfs-*` study the paper's comparison, then the table.
pub fn study_text(title: &str, rs: &[RunRecord]) -> String {
    let text = schedlab_report::study_text_with(title, crate::source_of(title).map(|s| s.citation), rs);
    let Some(c) = comparison(title, rs) else { return text };
    // After the `finding:` line (or the header when there is none).
    let mut out = String::with_capacity(text.len() + 512);
    let mut placed = false;
    for line in text.split_inclusive('\n') {
        out.push_str(line);
        if !placed && line.starts_with("finding: ") {
            out.push_str(&c.text());
            placed = true;
        }
    }
    if !placed {
        out.push_str(&c.text());
    }
    out
}

/// The one-line conclusion a study's report shows first: the paper comparison's for a
/// `ule-cfs-*` study, else the generic one.
pub fn study_conclusion(title: &str, rs: &[RunRecord]) -> Option<String> {
    comparison(title, rs).map(|c| c.conclusion).or_else(|| schedlab_report::study_conclusion(rs))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_ule_cfs_study_has_a_comparison() {
        for name in crate::STUDIES.iter().filter(|s| std::ptr::eq(s.source, &crate::BOURON)).map(|s| s.name) {
            assert!(super::studies::TABLE.iter().any(|(n, ..)| *n == name), "{name} has no comparison with the paper");
        }
    }
}
