//! The workloads the page starts from: the CLI's built-in examples (its own list, included
//! from `crates/cli/src/examples.rs` so the two cannot drift) and the single-workload
//! studies' files (`examples/studies/*.toml`, `schedlab study NAME`).

#[allow(dead_code)] // the CLI's `lookup`/`names` are the CLI's; the page takes the lists
#[path = "../../cli/src/examples.rs"]
mod cli;

pub use cli::{RTAPP, WORKLOADS};

/// `(name, text)` of `examples/studies/*.toml` (a test checks the list is the directory).
pub const STUDIES: &[(&str, &str)] = &[
    ("ule-cfs-apache", include_str!("../../../examples/studies/ule-cfs-apache.toml")),
    ("ule-cfs-cray", include_str!("../../../examples/studies/ule-cfs-cray.toml")),
    ("ule-cfs-fibo-sysbench", include_str!("../../../examples/studies/ule-cfs-fibo-sysbench.toml")),
    ("ule-cfs-mg", include_str!("../../../examples/studies/ule-cfs-mg.toml")),
    ("ule-cfs-mix-apache-sysbench", include_str!("../../../examples/studies/ule-cfs-mix-apache-sysbench.toml")),
    ("ule-cfs-mix-blackscholes-ferret", include_str!("../../../examples/studies/ule-cfs-mix-blackscholes-ferret.toml")),
    ("ule-cfs-mix-cray-ep", include_str!("../../../examples/studies/ule-cfs-mix-cray-ep.toml")),
    ("ule-cfs-sysbench128", include_str!("../../../examples/studies/ule-cfs-sysbench128.toml")),
    ("ule-cfs-unpin512", include_str!("../../../examples/studies/ule-cfs-unpin512.toml")),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn files(dir: &str, ext: &str) -> Vec<String> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(dir);
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.unwrap().file_name().into_string().ok())
            .filter(|n| n.ends_with(ext))
            .collect();
        v.sort();
        v
    }

    /// Every file of the directories is offered, and nothing else.
    #[test]
    fn the_lists_are_the_directories() {
        let names = |l: &[(&str, &str)], ext: &str| -> Vec<String> {
            l.iter().map(|(n, _)| if n.ends_with(ext) { n.to_string() } else { format!("{n}{ext}") }).collect()
        };
        assert_eq!(names(WORKLOADS, ".toml"), files("examples/workloads", ".toml"));
        assert_eq!(names(RTAPP, ".json"), files("examples/rt-app", ".json"));
        assert_eq!(names(STUDIES, ".toml"), files("examples/studies", ".toml"));
    }
}
