//! Reading a study figure back: its data summary and its text.
#![allow(dead_code)]

use schedlab_report::plots::Figure;

pub fn meta(svg: &str) -> serde_json::Value {
    let start = svg.find("<metadata id=\"schedlab-data\">").expect("metadata") + 29;
    let end = svg[start..].find("</metadata>").unwrap() + start;
    serde_json::from_str(&svg[start..end].replace("&lt;", "<").replace("&amp;", "&")).unwrap()
}

/// The study's figures, drawn.
pub fn figures(suite: &str, results: &[schedlab_studies::suite::ExperimentResult]) -> Vec<Figure> {
    schedlab_studies::suites::figures(suite, results).into_iter().map(|c| c.render().unwrap()).collect()
}

pub fn named<'a>(figs: &'a [Figure], name: &str) -> &'a Figure {
    figs.iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no {name} among {:?}", figs.iter().map(|f| &f.name).collect::<Vec<_>>()))
}

/// Series names of panel `p`.
pub fn series(m: &serde_json::Value, p: usize) -> Vec<String> {
    m[p]["series"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap().to_string()).collect()
}

/// Panel titles.
pub fn panels(m: &serde_json::Value) -> Vec<String> {
    m.as_array().unwrap().iter().map(|p| p["scheduler"].as_str().unwrap().to_string()).collect()
}

/// Whether the SVG has a `<text>` with exactly this content.
pub fn has_text(svg: &str, s: &str) -> bool {
    svg.split("</text>").any(|chunk| chunk.rsplit('>').next().is_some_and(|t| t.trim() == s))
}

/// The contents of every `<text>`.
pub fn texts(svg: &str) -> Vec<String> {
    svg.split("</text>")
        .filter_map(|c| c.rfind("<text ").map(|i| &c[i..]))
        .filter_map(|c| c.split_once('>'))
        .map(|(_, t)| t.trim().to_string())
        .collect()
}

/// No tick label is a bare number of 10 000 or more (raw nanoseconds).
pub fn no_raw_ns(svg: &str) -> bool {
    texts(svg).iter().all(|t| t.parse::<f64>().map_or(true, |v| v.abs() < 10_000.0))
}
