//! The built-in studies: each reproduces experiments of a source (a paper, a talk, a
//! report, a benchmark's practice) on the simulator, and some beside the host kernel.
//!
//! [`STUDIES`] is the one registry every front end reads (`schedlab study`, `schedlab list`,
//! `explain` of a study's run, the Python package, the docs): a study's name, its
//! [`Source`], a one-line description and its [`Kind`] — how it runs. A study is added by
//! adding its row here; nothing else lists studies.
//!
//! API Boundary: studies build [`schedlab_run::RunSpec`]s and read [`schedlab_run::RunRecord`]s;
//! they never reach past `run` into the kernel or a policy. They draw their figures with
//! `schedlab-report`, which is why they live above `run` and not inside it.

#![forbid(unsafe_code)]

pub mod bouron;
pub mod claims;
pub mod contract;
pub mod edf_simso;
pub mod runs;
pub mod suite;
pub mod suites;
pub mod validate;

use suite::Suite;

/// Where a study's claims come from.
#[derive(Debug, PartialEq, Eq)]
pub struct Source {
    /// Short key (`schedlab reproduce KEY`).
    pub key: &'static str,
    /// Authors, title, venue and year.
    pub citation: &'static str,
}

/// Zhang, Gu, Su (2017): runqueue-lock contention and the delayed new-task wakeup.
pub const ZHANG: Source = Source {
    key: "zhang2017",
    citation: "Zhang, Gu, Su: \"Research on Decreasing Lock Contention for Linux Scheduler\", Journal of Chinese Computer Systems, 2017",
};
/// Bouron et al. (2018): FreeBSD ULE vs Linux CFS.
pub const BOURON: Source = Source {
    key: "bouron2018",
    citation: "Bouron, Chevalley, Lepers, Zwaenepoel, Gouicem, Lawall, Muller, Sopena: \"The Battle of the Schedulers: FreeBSD ULE vs. Linux CFS\", USENIX ATC 2018",
};
/// The futex write-up: futex_swap, wake on the current CPU, direct switch, VIP.
pub const FUTEX: Source = Source {
    key: "futex",
    citation: "\"futex and its optimisations\", an Android systems write-up (futex_swap, WF_CURRENT_CPU, VIP)",
};
/// The 2005 talk on the Linux 2.6 O(1) scheduler's remaining bottlenecks.
pub const O1: Source =
    Source { key: "o1-2005", citation: "\"Linux 2.6 bottlenecks\", a 2005 industry talk on the O(1) scheduler" };
/// The student report verifying CFS on a real Linux 5.15 machine.
pub const VERIFY_CFS: Source = Source {
    key: "verify-cfs",
    citation: "\"Verifying CFS on a real system\", a student report (Linux 5.15: shares by nice, context switches by sched_latency_ns, an I/O task beside a hog)",
};
/// EEVDF: the paper and its merge into Linux.
pub const EEVDF: Source = Source {
    key: "eevdf",
    citation: "Stoica, Abdel-Wahab: \"Earliest Eligible Virtual Deadline First\" (1995), as merged in Linux 6.6–6.18",
};
/// cyclictest practice.
pub const CYCLICTEST: Source = Source {
    key: "cyclictest",
    citation: "cyclictest (rt-tests) practice: wakeup latency of a periodic real-time thread",
};
/// sched_ext's example schedulers.
pub const SCHED_EXT: Source = Source {
    key: "sched-ext",
    citation: "sched_ext (Linux 6.12 kernel/sched/ext.c) and its example schedulers (tools/sched_ext: scx_simple, scx_central)",
};
/// schbench and the EEVDF series that quoted it.
pub const SCHBENCH: Source = Source {
    key: "schbench",
    citation: "schbench (Chris Mason, github.com/masoncl/schbench) as the EEVDF series quoted it: Zijlstra, \"[PATCH 00/10] sched: EEVDF using latency-nice\" (LKML, 2023-03-06) and Mason, \"schbench v1.0\" (LKML, 2023-04-17)",
};
/// SimSo, the real-time scheduling simulator.
pub const SIMSO: Source = Source {
    key: "simso",
    citation: "Chéramy, Hladik, Déplanche: \"SimSo: A Simulation Tool to Evaluate Real-Time Multiprocessor Scheduling Algorithms\", WATERS 2014 (SimSo 0.8.5)",
};

/// The kernel's own account of CPU bandwidth control.
pub const SCHED_BWC: Source = Source {
    key: "sched-bwc",
    citation: "Linux Documentation/scheduler/sched-bwc.rst (CFS Bandwidth Control), as kernel/sched/fair.c implements it in v5.15 and v6.18",
};

/// The kernel's own account of energy-aware scheduling.
pub const SCHED_ENERGY: Source = Source {
    key: "sched-energy",
    citation: "Linux Documentation/scheduler/sched-energy.rst (Energy Aware Scheduling) and sched-util-clamp.rst, as kernel/sched/fair.c, topology.c and cpufreq_schedutil.c implement them in v5.15 and v6.18",
};

/// Every source, in the order reports list them.
pub const SOURCES: &[&Source] = &[
    &ZHANG,
    &BOURON,
    &FUTEX,
    &O1,
    &VERIFY_CFS,
    &EEVDF,
    &CYCLICTEST,
    &SCHED_EXT,
    &SCHBENCH,
    &SIMSO,
    &SCHED_BWC,
    &SCHED_ENERGY,
];

/// How a study runs.
pub enum Kind {
    /// One workload (this TOML text) under several schedulers, compared (the ULE-vs-CFS
    /// studies: `bouron`).
    Workload(&'static str),
    /// Several experiments, each one workload under several configurations ([`suite`]).
    Suite(fn() -> Suite),
    /// Simulation beside this host's kernel ([`validate`]).
    Validate,
    /// `SCHED_DEADLINE` beside SimSo's global EDF ([`edf_simso`]).
    EdfSimso,
}

/// A built-in study: its runs, and the contract it answers (`contract`): the source's
/// claims, with where in the source each is, and how its runs are read into evidence for
/// them. A row without claims does not build (`claims` and `evidence` have no default), and
/// the registry test refuses an empty list.
pub struct Study {
    pub name: &'static str,
    pub source: &'static Source,
    pub kind: Kind,
    /// What the source says, one claim per experiment (or per quantity it reports).
    pub claims: &'static [contract::Claim],
    /// Reads the study's runs (one set per seed) into evidence for `claims`.
    pub evidence: contract::EvidenceFn,
    /// Its mechanisms quote the runs' decision records (a task's waits by cause and its
    /// longest wait), so its runs are explained. Explaining costs time with every waiting
    /// task at every switch (the explainer classifies each again), so studies whose
    /// mechanisms read only counters run without it unless an HTML report asks.
    pub explained: bool,
}

impl Study {
    /// One line on what the study shows: the suite's own, or the workload file's
    /// `description`.
    pub fn description(&self) -> String {
        match &self.kind {
            Kind::Workload(text) => toml_string(text, "description").unwrap_or_default(),
            Kind::Suite(make) => make().description.to_string(),
            Kind::Validate => validate::DESCRIPTION.to_string(),
            Kind::EdfSimso => edf_simso::DESCRIPTION.to_string(),
        }
    }

    /// How the study is smaller than its source and why, or at the source's set-up with
    /// `full` (`None`: the study runs its source's set-up anyway).
    pub fn scale_note(&self, full: bool) -> Option<String> {
        let scaled = self.suite()?.scaled?;
        Some(if full {
            format!("at the source's set-up ({})", scaled.full_text())
        } else {
            format!("scaled down: {}; `--full` runs the source's set-up ({})", scaled.reason, scaled.full_text())
        })
    }

    /// The workload text of a single-workload study.
    pub fn workload(&self) -> Option<&'static str> {
        match self.kind {
            Kind::Workload(text) => Some(text),
            _ => None,
        }
    }

    /// The experiments of a multi-experiment study.
    pub fn suite(&self) -> Option<Suite> {
        match self.kind {
            Kind::Suite(make) => Some(make()),
            _ => None,
        }
    }
}

macro_rules! workload_study {
    ($name:literal, $claims:expr, $evidence:expr) => {
        Study {
            name: $name,
            source: &BOURON,
            kind: Kind::Workload(include_str!(concat!("../../../examples/studies/", $name, ".toml"))),
            claims: $claims,
            evidence: $evidence,
            explained: false,
        }
    };
}

macro_rules! suite_study {
    ($name:literal, $source:expr, $module:ident) => {
        suite_study!($name, $source, $module, false)
    };
    ($name:literal, $source:expr, $module:ident, explained) => {
        suite_study!($name, $source, $module, true)
    };
    ($name:literal, $source:expr, $module:ident, $explained:literal) => {
        Study {
            name: $name,
            source: $source,
            kind: Kind::Suite(suites::$module::suite),
            claims: &claims::$module::CLAIMS,
            evidence: claims::$module::evidence,
            explained: $explained,
        }
    };
}

/// Every built-in study, in the order `schedlab list` shows them.
pub const STUDIES: &[Study] = &[
    suite_study!("cfs-eevdf", &EEVDF, cfs_eevdf, explained),
    suite_study!("futex", &FUTEX, futex, explained),
    suite_study!("rt-latency", &CYCLICTEST, rt_latency, explained),
    suite_study!("cgroup-bandwidth", &SCHED_BWC, cgroup_bandwidth),
    suite_study!("eas", &SCHED_ENERGY, eas),
    suite_study!("lock-wakeup-granularity", &ZHANG, lock_wakeup_granularity),
    suite_study!("lock-delayed-wakeup", &ZHANG, lock_delayed_wakeup),
    suite_study!("lock-sites", &ZHANG, lock_sites),
    suite_study!("o1-bottlenecks", &O1, o1_bottlenecks),
    suite_study!("ext-examples", &SCHED_EXT, ext_examples),
    suite_study!("schbench", &SCHBENCH, schbench, explained),
    Study {
        name: "validate",
        source: &VERIFY_CFS,
        kind: Kind::Validate,
        claims: &claims::validate::CLAIMS,
        evidence: claims::validate::evidence,
        explained: false,
    },
    Study {
        name: "edf-simso",
        source: &SIMSO,
        kind: Kind::EdfSimso,
        claims: &claims::edf_simso::CLAIMS,
        evidence: claims::edf_simso::evidence,
        explained: false,
    },
    workload_study!("ule-cfs-fibo-sysbench", &claims::bouron::FIBO_SYSBENCH, claims::bouron::fibo_sysbench),
    workload_study!("ule-cfs-sysbench128", &claims::bouron::SYSBENCH128, claims::bouron::sysbench128),
    workload_study!("ule-cfs-unpin512", &claims::bouron::UNPIN512, claims::bouron::unpin512),
    workload_study!("ule-cfs-cray", &claims::bouron::CRAY, claims::bouron::cray),
    workload_study!("ule-cfs-mg", &claims::bouron::MG, claims::bouron::mg),
    workload_study!("ule-cfs-apache", &claims::bouron::APACHE, claims::bouron::apache),
    workload_study!("ule-cfs-mix-cray-ep", &claims::bouron::MIX_CRAY_EP, claims::bouron::mix_cray_ep),
    workload_study!(
        "ule-cfs-mix-apache-sysbench",
        &claims::bouron::MIX_APACHE_SYSBENCH,
        claims::bouron::mix_apache_sysbench
    ),
    workload_study!(
        "ule-cfs-mix-blackscholes-ferret",
        &claims::bouron::MIX_BLACKSCHOLES_FERRET,
        claims::bouron::mix_blackscholes_ferret
    ),
];

/// The study called `name` (a trailing `.toml` is ignored: `ule-cfs-mg.toml` is the study
/// `ule-cfs-mg`).
pub fn find(name: &str) -> Option<&'static Study> {
    let stem = name.strip_suffix(".toml").unwrap_or(name);
    STUDIES.iter().find(|s| s.name == stem)
}

/// The workload text of built-in single-workload study `name`.
pub fn builtin_workload(name: &str) -> Option<&'static str> {
    find(name).and_then(Study::workload)
}

/// The source a single-workload study reproduces, by its name or the path of its workload
/// file (`examples/studies/ule-cfs-apache.toml`).
pub fn source_of(name: &str) -> Option<&'static Source> {
    let stem = std::path::Path::new(name).file_stem().map_or(name.into(), |s| s.to_string_lossy());
    find(&stem).filter(|s| s.workload().is_some()).map(|s| s.source)
}

/// A top-level string key of a TOML text, read without validating the rest.
fn toml_string(text: &str, key: &str) -> Option<String> {
    let doc = toml::de::DeTable::parse(text).ok()?;
    let v = doc.get_ref().iter().find(|(k, _)| k.get_ref() == key)?.1;
    v.get_ref().as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_study_describes_itself() {
        for (i, s) in STUDIES.iter().enumerate() {
            assert!(STUDIES[..i].iter().all(|o| o.name != s.name), "{} twice", s.name);
            assert!(!s.description().is_empty(), "{} has no description", s.name);
            assert!(SOURCES.contains(&s.source), "{}: source not in SOURCES", s.name);
            assert!(!s.name.contains('/') && !s.name.ends_with(".toml"), "{}: reads as a path", s.name);
            assert!(!s.claims.is_empty(), "{}: no claims (every study answers the contract)", s.name);
            for (j, c) in s.claims.iter().enumerate() {
                assert!(s.claims[..j].iter().all(|o| o.id != c.id), "{}: claim {} twice", s.name, c.id);
                assert!(!c.location.is_empty() && !c.statement.is_empty() && !c.measure.is_empty(), "{}", c.id);
            }
        }
    }

    #[test]
    fn every_single_workload_study_parses_on_its_machine() {
        for s in STUDIES {
            let Some(text) = s.workload() else { continue };
            let m = schedlab_run::workload_machine_hint(text).unwrap_or_else(|| "smp4".into());
            let m = schedlab_run::load_machine(&m).unwrap();
            schedlab_workload::parse_workload(s.name, text, &[], m.nr_cpus()).unwrap();
            assert_eq!(builtin_workload(&format!("{}.toml", s.name)), Some(text));
        }
    }

    #[test]
    fn a_suite_is_named_as_its_registry_row() {
        for s in STUDIES {
            if let Some(suite) = s.suite() {
                assert_eq!(suite.name, s.name);
            }
        }
    }
}
