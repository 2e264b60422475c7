//! ARCHITECTURE.md stays true: every path it cites exists, every Rust type it names is
//! defined in the workspace (and every `Type::member` names a member that exists), every
//! constant it names is in the code, and every crate under `crates/` has its own section
//! (and no section names a crate that is gone).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn architecture() -> String {
    std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md at the workspace root")
}

/// The text between each pair of backticks, outside fenced code blocks.
fn code_spans(doc: &str) -> Vec<String> {
    let mut spans = Vec::new();
    let mut fenced = false;
    for line in doc.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut parts = line.split('`');
        parts.next();
        while let (Some(inside), Some(_)) = (parts.next(), parts.next()) {
            spans.push(inside.to_string());
        }
    }
    spans
}

fn all_rust_sources() -> String {
    fn walk(dir: &Path, out: &mut String) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if p.is_dir() && name != "target" && !name.starts_with('.') {
                walk(&p, out);
            } else if name.ends_with(".rs") {
                out.push_str(&std::fs::read_to_string(&p).unwrap_or_default());
                out.push('\n');
            }
        }
    }
    let mut all = String::new();
    walk(&root().join("crates"), &mut all);
    all
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Whether `word` occurs in `text` as a whole identifier.
fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back().is_none_or(|c| !is_ident_char(c));
        let after = text[i + word.len()..].chars().next().is_none_or(|c| !is_ident_char(c));
        before && after
    })
}

/// Whether a type named `name` is defined (or re-exported under that name) somewhere.
fn defines_type(src: &str, name: &str) -> bool {
    ["struct ", "enum ", "trait ", "type ", "as "].iter().any(|kw| has_word(src, &format!("{kw}{name}")))
        || src.match_indices("pub use ").any(|(i, _)| {
            let stmt = &src[i..src[i..].find(';').map_or(src.len(), |e| i + e)];
            has_word(stmt, name)
        })
}

/// Names ARCHITECTURE.md may use that are not ours to define (the standard library's,
/// Python's).
const EXTERNAL: &[&str] = &["HashMap", "HashSet", "KeyboardInterrupt"];

fn is_type_path(span: &str) -> bool {
    let mut segs = span.split("::");
    let first = segs.next().unwrap_or("");
    let camel = first.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && first.chars().any(|c| c.is_ascii_lowercase())
        && first.chars().all(is_ident_char);
    camel && span.split("::").all(|s| !s.is_empty() && s.chars().all(is_ident_char))
}

fn is_constant(span: &str) -> bool {
    span.len() > 3
        && span.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && span.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

#[test]
fn every_cited_path_exists() {
    let root = root();
    let missing: Vec<String> = code_spans(&architecture())
        .into_iter()
        .filter(|s| ["crates/", "docs/", ".ci/", "examples/"].iter().any(|p| s.starts_with(p)))
        .filter(|s| !root.join(s.trim_end_matches('/')).exists())
        .collect();
    assert!(missing.is_empty(), "ARCHITECTURE.md cites paths that do not exist:\n  {}", missing.join("\n  "));
}

#[test]
fn every_named_type_member_and_constant_exists() {
    let src = all_rust_sources();
    let mut missing = Vec::new();
    for span in code_spans(&architecture()) {
        if EXTERNAL.contains(&span.as_str()) {
            continue;
        }
        if is_type_path(&span) {
            let mut segs = span.split("::");
            let ty = segs.next().unwrap_or("");
            if !defines_type(&src, ty) || segs.any(|member| !has_word(&src, member)) {
                missing.push(span);
            }
        } else if is_constant(&span) && !has_word(&src, &span) {
            missing.push(span);
        }
    }
    assert!(missing.is_empty(), "ARCHITECTURE.md names what the code does not define:\n  {}", missing.join("\n  "));
}

#[test]
fn every_crate_has_a_section_and_every_section_a_crate() {
    let doc = architecture();
    let sections: Vec<String> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("### `crates/"))
        .filter_map(|l| l.strip_suffix('`'))
        .map(str::to_string)
        .collect();
    let mut crates: Vec<String> = std::fs::read_dir(root().join("crates"))
        .expect("crates/")
        .flatten()
        .filter(|e| e.path().join("Cargo.toml").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    crates.sort();
    let without: Vec<&String> = crates.iter().filter(|c| !sections.contains(c)).collect();
    let stale: Vec<&String> = sections.iter().filter(|s| !crates.contains(s)).collect();
    assert!(without.is_empty(), "crates without a section in ARCHITECTURE.md: {without:?}");
    assert!(stale.is_empty(), "ARCHITECTURE.md sections for crates that do not exist: {stale:?}");
}

#[test]
fn the_checks_catch_what_they_should() {
    // The checks themselves: a made-up type, member, constant and path are caught.
    let src = "pub struct Real; impl Real { fn member() {} } const LIMIT_X: u8 = 1;";
    assert!(defines_type(src, "Real") && !defines_type(src, "Imagined"));
    assert!(has_word(src, "member") && !has_word(src, "membe"));
    assert!(is_type_path("Real::member") && !is_type_path("crates/x") && !is_type_path("try_to_wake_up"));
    assert!(is_constant("LIMIT_X") && !is_constant("Real"));
    assert_eq!(code_spans("a `b` c `d`\n```\n`e`\n```\n"), vec!["b".to_string(), "d".to_string()]);
}
