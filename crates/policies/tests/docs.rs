//! The tunables tables in `docs/policies/*.md` are generated from the policies' own tables
//! (`schedlab_policies::tunables_markdown`, defaults on `smp8`), between
//! `<!-- tunables: POLICY | OWNER | … -->` and `<!-- /tunables -->`: a table that differs
//! from the code fails here with the text it should have (`SCHEDLAB_BLESS=1` writes it),
//! and every table of every policy is shown somewhere.

use schedlab_policies::{make_policy, tunables_markdown, REGISTRY};
use std::path::PathBuf;

const OPEN: &str = "<!-- tunables: ";
const CLOSE: &str = "<!-- /tunables -->";

fn docs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/policies")
}

/// Each block of `text`: (policy, owners, byte range of its table).
fn blocks(text: &str) -> Vec<(String, Vec<String>, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = text[at..].find(OPEN).map(|i| i + at) {
        let head_end = text[i..].find("-->").map(|j| i + j).expect("a closed marker");
        let mut parts = text[i + OPEN.len()..head_end].split('|').map(|s| s.trim().to_string());
        let policy = parts.next().unwrap();
        let owners: Vec<String> = parts.filter(|s| !s.is_empty()).collect();
        let body = head_end + "-->\n".len();
        let end = text[body..].find(CLOSE).map(|j| body + j).expect("a closing marker");
        out.push((policy, owners, body..end));
        at = end;
    }
    out
}

#[test]
fn docs_tunables_tables_are_generated_from_the_code() {
    let m = schedlab_machine::preset("smp8").unwrap();
    let bless = std::env::var_os("SCHEDLAB_BLESS").is_some();
    let mut shown: Vec<(String, String)> = Vec::new();
    let mut stale = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(docs()).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    for f in files.iter().filter(|f| f.extension().is_some_and(|x| x == "md")) {
        let text = std::fs::read_to_string(f).unwrap();
        let mut fixed = text.clone();
        for (policy, owners, range) in blocks(&text).into_iter().rev() {
            let o: Vec<&str> = owners.iter().map(String::as_str).collect();
            let want = tunables_markdown(&policy, &m, &o).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            if text[range.clone()] != want {
                stale.push(format!("{} ({policy} | {}):\n{want}", f.display(), owners.join(" | ")));
                fixed.replace_range(range, &want);
            }
            let p = make_policy(&policy, &m, &[]).unwrap();
            for t in p.tunables().into_iter().filter(|t| o.is_empty() || o.contains(&t.owner)) {
                shown.push((t.owner.to_string(), t.name.to_string()));
            }
        }
        if bless && fixed != text {
            std::fs::write(f, fixed).unwrap();
        }
    }
    assert!(stale.is_empty(), "stale tunables tables (SCHEDLAB_BLESS=1 rewrites them):\n{}", stale.join("\n"));
    for e in REGISTRY {
        for t in make_policy(e.name, &m, &[]).unwrap().tunables() {
            let shown = shown.iter().any(|(o, n)| *o == t.owner && *n == t.name);
            assert!(shown, "{}: `{}` ({}) is in no docs/policies table", e.name, t.name, t.owner);
        }
    }
}
