//! The tidy check over the whole workspace: every `.rs` file under `crates/` has a `//!`
//! header, and every function of more than `MAX_FN_LINES` lines is on the allow-list
//! `long-functions.txt` — which may only shrink: an entry whose function got shorter (or
//! went away) fails too, so the list is kept exact.

use schedlab_tidy::{functions, has_header, MAX_FN_LINES};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() && name != "target" && !name.starts_with('.') {
            rust_files(&p, out);
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
}

fn workspace_files() -> Vec<(String, String)> {
    let root = root();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(&root).unwrap_or(&p).to_string_lossy().into_owned();
            (rel, std::fs::read_to_string(&p).unwrap_or_default())
        })
        .collect()
}

#[test]
fn every_rust_file_has_a_header() {
    let missing: Vec<String> = workspace_files().into_iter().filter(|(_, s)| !has_header(s)).map(|(p, _)| p).collect();
    assert!(missing.is_empty(), "files without a `//!` header saying what they hold:\n  {}", missing.join("\n  "));
}

#[test]
fn long_functions_are_on_the_allow_list_and_the_list_only_shrinks() {
    let list_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("long-functions.txt");
    let list = std::fs::read_to_string(&list_path).unwrap_or_default();
    let allowed: Vec<(String, String)> = list
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once(' ').map(|(p, f)| (p.to_string(), f.trim().to_string())))
        .collect();
    let mut long = Vec::new();
    for (path, src) in workspace_files() {
        for f in functions(&src).into_iter().filter(|f| f.lines > MAX_FN_LINES) {
            long.push((path.clone(), f.name, f.lines, f.line));
        }
    }
    let new: Vec<String> = long
        .iter()
        .filter(|(p, n, ..)| !allowed.iter().any(|(ap, an)| ap == p && an == n))
        .map(|(p, n, lines, at)| format!("{p}:{at} fn {n}: {lines} lines"))
        .collect();
    let stale: Vec<String> = allowed
        .iter()
        .filter(|(ap, an)| !long.iter().any(|(p, n, ..)| p == ap && n == an))
        .map(|(p, n)| format!("{p} {n}"))
        .collect();
    assert!(new.is_empty(), "functions over {MAX_FN_LINES} lines (split them):\n  {}", new.join("\n  "));
    assert!(
        stale.is_empty(),
        "no longer over {MAX_FN_LINES} lines: remove from long-functions.txt:\n  {}",
        stale.join("\n  ")
    );
}
