//! Every policy's tunables come from one table per configuration (`schedlab_sched_api::
//! TunableTable`): each round-trips through `--set`, reads back what was set, refuses a
//! value outside its range by naming the range, and a name no table has is refused with
//! the list of names the policy has.

use schedlab_machine::{preset, Machine};
use schedlab_policies::{make_policy, REGISTRY};
use schedlab_sched_api::{Kind, SchedClass, Tunable};

fn machine() -> Machine {
    preset("smp8").unwrap()
}

/// Every registered policy, and each of its versions as `NAME@VERSION`.
fn configs() -> Vec<String> {
    let mut v = Vec::new();
    for e in REGISTRY {
        v.push(e.name.to_string());
        v.extend(e.versions.iter().map(|ver| format!("{}@{ver}", e.name)));
    }
    v
}

fn build(name: &str, sets: &[(&str, &str)]) -> Result<Box<dyn SchedClass>, String> {
    let sets: Vec<(String, String)> = sets.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    make_policy(name, &machine(), &sets)
}

/// What the kernel and the record see of a policy's configuration.
fn facets(p: &dyn SchedClass) -> String {
    let t: Vec<(&str, String)> = p.tunables().into_iter().map(|t| (t.name, t.value)).collect();
    format!(
        "{} {t:?} tick {:?} idle_tick {} idle_wakeup {:?} wake_list {}",
        p.name(),
        p.tick_period(),
        p.idle_tick(),
        p.idle_wakeup(),
        p.wake_list()
    )
}

fn value_of(p: &dyn SchedClass, name: &str) -> String {
    p.tunables().into_iter().find(|t| t.name == name).map(|t| t.value).unwrap_or_default()
}

fn settable(p: &dyn SchedClass) -> Vec<Tunable> {
    p.tunables().into_iter().filter(|t| !t.read_only).collect()
}

/// Setting any tunable to the value the policy reports gives the same policy.
#[test]
fn every_tunable_round_trips_at_its_default() {
    for name in configs() {
        let base = build(&name, &[]).unwrap();
        let want = facets(&*base);
        for t in settable(&*base) {
            let p =
                build(&name, &[(t.name, &t.value)]).unwrap_or_else(|e| panic!("{name} {}={}: {e}", t.name, t.value));
            assert_eq!(facets(&*p), want, "{name}: --set {}={}", t.name, t.value);
        }
    }
}

/// A tunable set to another value reports that value: each end of a range (one at least
/// builds: some bounds conflict with another tunable's default), each boolean, each choice.
#[test]
fn every_tunable_reads_back_what_was_set() {
    for name in configs() {
        let base = build(&name, &[]).unwrap();
        for t in settable(&*base) {
            let tries: Vec<String> = match t.kind {
                Kind::Int { min, max, .. } => vec![min.to_string(), max.to_string()],
                Kind::Bool => vec!["0".into(), "1".into()],
                Kind::Choice(cs) => cs.iter().map(|c| c.name.to_string()).collect(),
            };
            let mut read_back = 0;
            for v in &tries {
                match build(&name, &[(t.name, v)]) {
                    Ok(p) => {
                        assert_eq!(&value_of(&*p, t.name), v, "{name}: --set {}={v}", t.name);
                        read_back += 1;
                    }
                    Err(e) => assert!(e.contains(t.name) && e.contains("exceeds"), "{name} {}={v}: {e}", t.name),
                }
            }
            let need = if matches!(t.kind, Kind::Int { .. }) { 1 } else { tries.len() };
            assert!(read_back >= need, "{name}: {} reads back {read_back} of {tries:?}", t.name);
        }
    }
}

/// One above the range (and one below, where the range does not start at 0) is refused,
/// and the error names the tunable and its range.
#[test]
fn a_value_outside_the_range_names_the_range() {
    for name in configs() {
        for t in settable(&*build(&name, &[]).unwrap()) {
            let Kind::Int { min, max, .. } = t.kind else { continue };
            let range = format!("{min}..={max}");
            let mut outside = vec![(i128::from(max) + 1).to_string()];
            if min != 0 {
                outside.push((i128::from(min) - 1).to_string());
            }
            for v in outside {
                let e =
                    build(&name, &[(t.name, &v)]).err().unwrap_or_else(|| panic!("{name}: {}={v} accepted", t.name));
                let want = format!("tunable `{}` = {v} is outside its range {range}", t.name);
                assert!(e.contains(&want), "{name}: {e}");
            }
        }
    }
}

/// A name no table of the policy has is refused, and the error lists every tunable the
/// policy has; no two tables of a policy claim the same name.
#[test]
fn an_unknown_name_lists_the_names() {
    for name in configs() {
        let p = build(&name, &[]).unwrap();
        let names: Vec<&str> = p.tunables().iter().map(|t| t.name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "{name}: a name twice in {names:?}");
        let base = name.split('@').next().unwrap();
        let e = build(&name, &[("no_such_tunable", "1")]).err().unwrap_or_else(|| panic!("{name}: accepted"));
        assert!(e.starts_with(&format!("unknown tunable `no_such_tunable` for scheduler `{base}`; it has: ")), "{e}");
        for n in names {
            assert!(e.contains(n), "{name}: `{n}` missing from: {e}");
        }
    }
}

/// A derived tunable is shown but not set; one of another version is unknown there, with
/// the versions that have it.
#[test]
fn read_only_and_other_version_tunables_are_refused_by_name() {
    let e = build("cfs", &[("sched_nr_latency", "4")]).err().unwrap();
    assert!(e.starts_with("tunable `sched_nr_latency` is read only") && e.contains("derived"), "{e}");
    let e = build("eevdf", &[("sched_nr_latency", "4")]).err().unwrap();
    assert!(e.starts_with("unknown tunable `sched_nr_latency`: it does not exist in fair.c v6.18"), "{e}");
    assert!(e.contains("only in 4.9, 5.15"), "{e}");
    let e = build("cfs@4.9", &[("WA_IDLE", "1")]).err().unwrap();
    assert!(e.contains("does not exist in fair.c v4.9"), "{e}");
}
