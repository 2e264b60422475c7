//! `schedlab reproduce`: one source's report, self-contained, with every claim's figures,
//! rendered by headless Chromium.

mod common;
use common::*;

/// Every claim of the source has its section; a claim that names a figure in the source's
/// form has it inline, and every claim measured has its contract figure (ours per seed
/// against the source's bound); the page loads nothing and renders.
/// `reproduce SOURCE` into a temporary directory: its HTML and Markdown (and the
/// directory, which holds them).
fn reproduce(source: &str, duration: Option<&str>) -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["reproduce", source, "--seeds", "2", "-o"])
        .arg(dir.path().join("out"))
        .arg("--docs")
        .arg(dir.path().join("docs"))
        .args(duration.map(|d| ["--duration", d]).iter().flatten())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(dir.path().join(format!("out/{source}.html"))).unwrap();
    let md = std::fs::read_to_string(dir.path().join(format!("out/{source}.md"))).unwrap();
    let docs = std::fs::read_to_string(dir.path().join(format!("docs/{source}.md"))).unwrap();
    assert_eq!(md, docs, "--docs writes the twin");
    (dir, html, md)
}

#[test]
fn a_source_report_has_every_figure_and_renders() {
    let (dir, html, md) = reproduce("eevdf", Some("60ms"));
    assert!(!html.contains("src=") && !html.contains("<link") && !html.contains("<script src"), "an asset");
    let source = schedlab_studies::SOURCES.iter().find(|s| s.key == "eevdf").unwrap();
    let studies: Vec<_> = schedlab_studies::STUDIES.iter().filter(|s| std::ptr::eq(s.source, *source)).collect();
    assert!(!studies.is_empty());
    let mut claims = 0;
    for claim in studies.iter().flat_map(|s| s.claims) {
        claims += 1;
        let head = format!("<h4>{}</h4>", claim.id);
        let at = html.find(&head).unwrap_or_else(|| panic!("no section for {}", claim.id));
        let rest = &html[at + head.len()..];
        let section = &rest[..rest.find("<h").unwrap_or(rest.len())];
        assert!(section.contains("<figure class=\"contract\"><svg"), "{}: no contract figure", claim.id);
        if !claim.figure.is_empty() {
            assert!(section.contains("<figure class=\"source-form\"><svg"), "{}: no {}", claim.id, claim.figure);
            assert!(md.contains(claim.figure), "{}: the Markdown does not name {}", claim.id, claim.figure);
        }
    }
    assert!(html.contains(&format!("of {claims} claims")), "no summary over the {claims} claims");
    assert_renders_a_page(&dir.path().join("out/eevdf.html"));
}

/// Every claim of a study that needs nothing absent here is measured, and its mechanism
/// has every number: the student report's shares need the runs' time series, which
/// `reproduce` must record for them.
#[test]
fn every_claim_of_verify_cfs_is_measured() {
    // At the default scale (about a second): a shorter run ends before the programs do.
    let (_dir, _, md) = reproduce("verify-cfs", None);
    assert!(!md.contains("not measured"), "{md}");
    for why in md.lines().filter_map(|l| l.trim_start().strip_prefix("- why:")) {
        assert!(!why.contains(" - "), "a quantity the runs did not give: {why}");
    }
}
