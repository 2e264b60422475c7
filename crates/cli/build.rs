//! Build script: the commit the binary was built from, for `schedlab --version`.
//!
//! `SCHEDLAB_COMMIT` is `git rev-parse --short=12 HEAD` with the commit date, or a sentence
//! saying why there is none (a source tarball without `.git`, no `git` on the path): the
//! version line never pretends to know a commit it does not.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

fn main() {
    let commit = match (git(&["rev-parse", "--short=12", "HEAD"]), git(&["log", "-1", "--format=%cs"])) {
        (Some(hash), Some(date)) => format!("commit {hash}, {date}"),
        (Some(hash), None) => format!("commit {hash}"),
        _ => "commit unknown: not built from a git checkout".to_string(),
    };
    println!("cargo:rustc-env=SCHEDLAB_COMMIT={commit}");
    // Rebuild when HEAD moves: HEAD itself (a checkout) and the branch it names (a commit).
    if let Some(head) = git(&["rev-parse", "--git-path", "HEAD"]) {
        println!("cargo:rerun-if-changed={head}");
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        if let Some(path) = git(&["rev-parse", "--git-path", &branch]) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    if let Some(packed) = git(&["rev-parse", "--git-path", "packed-refs"]) {
        println!("cargo:rerun-if-changed={packed}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
