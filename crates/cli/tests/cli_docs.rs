//! `docs/cli.md` documents every option of `run`, `study` and `calibrate`: each long flag
//! `--help` lists appears in it as `` `--flag `` (with its value or the closing backtick).

use std::process::Command;

/// The long flags `schedlab CMD --help` lists (`--help` itself left out).
fn flags(cmd: &str) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab")).args([cmd, "--help"]).output().expect("schedlab runs");
    assert!(out.status.success(), "schedlab {cmd} --help failed");
    let text = String::from_utf8(out.stdout).expect("UTF-8 help");
    let found: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("-").filter(|r| !r.starts_with('-')).map_or(l, |r| r[2..].trim_start());
            let name: String =
                l.strip_prefix("--")?.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
            (name != "help").then(|| format!("--{name}"))
        })
        .collect();
    assert!(found.len() >= 3, "no flags found in `schedlab {cmd} --help`:\n{text}");
    found
}

#[test]
fn the_cli_docs_name_every_flag_of_run_study_and_calibrate() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/cli.md")).unwrap();
    let mut missing = Vec::new();
    for cmd in ["run", "study", "calibrate"] {
        for f in flags(cmd) {
            if ![" ", "`", "=", "|", "\n"].iter().any(|end| doc.contains(&format!("`{f}{end}"))) {
                missing.push(format!("{cmd} {f}"));
            }
        }
    }
    assert!(missing.is_empty(), "docs/cli.md does not name: {}", missing.join(", "));
}
