//! The import graph of `kernel` and `policies` between their files has no circle spanning
//! more than two files: mechanism files import the vocabulary, not each other in a ring.
//!
//! A node is a leaf file (not a `lib.rs` or `mod.rs`, which own their children and hold the
//! shared state every child's `impl` extends); an edge is a `crate::a::b` or `super::a`
//! path from one leaf file to another. Circles are the strongly connected components
//! (Tarjan, iterative, so the check's own depth is bounded).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const MAX_CIRCLE: usize = 2;

fn leaf_modules(src: &Path) -> BTreeMap<String, PathBuf> {
    fn walk(dir: &Path, src: &Path, out: &mut BTreeMap<String, PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for p in entries.flatten().map(|e| e.path()) {
            if p.is_dir() {
                walk(&p, src, out);
                continue;
            }
            let rel = p.strip_prefix(src).unwrap_or(&p).with_extension("");
            let segs: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
            let leaf = segs.last().is_some_and(|l| l != "mod" && l != "lib");
            if p.extension().is_some_and(|e| e == "rs") && leaf {
                out.insert(segs.join("::"), p);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, src, &mut out);
    out
}

/// The module paths a source names after `crate::` or `super::` (one level of braces
/// expanded), as absolute module paths; `module` is the naming file's own path.
fn named_paths(text: &str, module: &str) -> Vec<String> {
    let parent: Vec<&str> = module.split("::").collect();
    let parent = parent[..parent.len().saturating_sub(1)].join("::");
    let mut out = Vec::new();
    for (prefix, base) in [("crate::", String::new()), ("super::", parent)] {
        for (i, _) in text.match_indices(prefix) {
            let before = text[..i].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let rest = &text[i + prefix.len()..];
            let items: Vec<&str> = if let Some(inner) = rest.strip_prefix('{') {
                inner[..inner.find('}').unwrap_or(0)].split(',').collect()
            } else {
                vec![rest]
            };
            for item in items {
                let path: String =
                    item.trim().chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':').collect();
                let joined = if base.is_empty() { path } else { format!("{base}::{path}") };
                out.push(joined);
            }
        }
    }
    out
}

fn graph(src: &Path) -> (Vec<String>, Vec<Vec<usize>>) {
    let mods = leaf_modules(src);
    let names: Vec<String> = mods.keys().cloned().collect();
    let index: BTreeMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
    let mut edges = vec![Vec::new(); names.len()];
    for (from, (name, path)) in mods.iter().enumerate() {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let text = text.split("#[cfg(test)]").next().unwrap_or("");
        for p in named_paths(text, name) {
            let segs: Vec<&str> = p.split("::").collect();
            let target = (1..=segs.len()).rev().find_map(|k| index.get(segs[..k].join("::").as_str()).copied());
            if let Some(to) = target.filter(|&to| to != from && !edges[from].contains(&to)) {
                edges[from].push(to);
            }
        }
    }
    (names, edges)
}

/// Tarjan's strongly connected components, with an explicit stack.
fn components(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = edges.len();
    let (mut index, mut low, mut on) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut out, mut next) = (Vec::new(), Vec::new(), 0);
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0usize)];
        while let Some((v, child)) = work.pop() {
            if child == 0 {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on[v] = true;
            }
            if let Some(&w) = edges[v].get(child) {
                work.push((v, child + 1));
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            if low[v] == index[v] {
                let mut comp = Vec::new();
                while let Some(w) = stack.pop() {
                    on[w] = false;
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                out.push(comp);
            }
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
        }
    }
    out
}

fn circles(krate: &str) -> Vec<Vec<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../").join(krate).join("src");
    let (names, edges) = graph(&src);
    assert!(names.len() > 5, "{krate}: found only {} files under {}", names.len(), src.display());
    components(&edges)
        .into_iter()
        .filter(|c| c.len() > MAX_CIRCLE)
        .map(|c| c.into_iter().map(|i| names[i].clone()).collect())
        .collect()
}

#[test]
fn kernel_and_policies_have_no_import_circle_beyond_two_files() {
    for krate in ["kernel", "policies"] {
        let found = circles(krate);
        assert!(found.is_empty(), "{krate}: import circles spanning more than {MAX_CIRCLE} files: {found:?}");
    }
}

#[test]
fn the_circle_finder_finds_a_ring_of_three() {
    let ring = vec![vec![1], vec![2], vec![0], vec![0]];
    let comps = components(&ring);
    assert!(comps.iter().any(|c| c.len() == 3), "{comps:?}");
    assert_eq!(
        named_paths("use crate::{a::B, c};\nuse super::d::E;", "x::y"),
        vec!["a::B".to_string(), "c".to_string(), "x::d::E".to_string()]
    );
}
