//! cgroup v2 cpuset partitions (`cpuset.cpus.partition`) and the sched domains the kernel
//! rebuilds for them and for CPU hotplug (`kernel/cgroup/cpuset.c:
//! generate_sched_domains`, `update_prstate`; `kernel/sched/topology.c:
//! partition_sched_domains_locked`; `kernel/sched/fair.c: trigger_load_balance`,
//! `nohz_balance_enter_idle`; v6.12). Every job runs checked.

mod common;
use common::*;
use schedlab_probe::{Probe, ProbeEvent};
use schedlab_sched_api::Decision;
use schedlab_sim::Ns;

/// Records switches and, per fair-class balancer attempt, (time, balancing CPU, busiest
/// CPU) and the domain's span its record names ("… level (CPUs 0-3) …").
#[derive(Default)]
struct Balances {
    sw: Switches,
    lb: Vec<(u64, usize, Option<usize>)>,
    spans: Vec<(u64, schedlab_machine::CpuSet)>,
}
impl Probe for Balances {
    fn event(&mut self, ev: &ProbeEvent) {
        self.sw.event(ev);
    }
    fn wants_decisions(&self) -> bool {
        true
    }
    fn decision(&mut self, time: Ns, d: &Decision) {
        if let Decision::Balance { cpu, src, found, .. } = d {
            self.lb.push((time.0, *cpu, *src));
            if let Some((_, rest)) = found.split_once("level (CPUs ") {
                let list = rest.split_once(')').map_or(rest, |(l, _)| l);
                self.spans.push((time.0, schedlab_machine::CpuSet::parse_list(list).expect("a CPU list")));
            }
        }
    }
}

fn hogs(name: &str, count: usize, group: Option<&str>) -> String {
    let g = group.map(|g| format!("group = \"{g}\"\n")).unwrap_or_default();
    format!("[[task]]\nname = \"{name}\"\n{g}count = {count}\nprogram = [ {{ loop = \"forever\", do = [ {{ run = \"20ms\" }} ] }} ]\n")
}

/// Two partition roots on smp8, CPUs 0-1 (four hogs) and 2-3 (none); the root cgroup
/// keeps 4-7, where its two hogs stay: `cpuset.cpus.effective` of the root cgroup loses
/// what partitions took.
fn two_partitions() -> String {
    let groups = "[[group]]\nname = \"a\"\ncpus = \"0-1\"\npartition = \"root\"\n\
                  [[group]]\nname = \"b\"\ncpus = \"2-3\"\npartition = \"root\"\n";
    format!("{groups}{}{}", hogs("a", 4, Some("a")), hogs("r", 2, None))
}

/// Each partition's tasks stay in it and root-cgroup tasks on the CPUs no partition
/// took, under every class (the kernel applies the masks); under the fair class every
/// balance attempt stays within its CPU's partition: the idle CPUs 2-3 balance (they are
/// their own domain) but never find a busiest CPU outside it, as they would over the
/// machine-wide boot domains.
#[test]
fn partitions_confine_tasks_and_cut_the_fair_domains() {
    let text = two_partitions();
    for (sched, sets) in [("cfs", &[][..]), ("eevdf", &[("version", "6.18")][..]), ("ule", &[][..])] {
        let j = job(&text, "smp8", sched, 1, sets);
        let mut p = Balances::default();
        run_with_probe(&j, &mut p);
        let r = run(&j);
        assert_eq!(p.sw.cpus_used(&r, "a"), [0, 1], "{sched}");
        let root = p.sw.cpus_used(&r, "r");
        assert!(!root.is_empty() && root.iter().all(|&c| c >= 4), "{sched}: root-cgroup hogs ran on {root:?}");
        if sched == "ule" {
            continue;
        }
        let part = |c: usize| {
            if c < 2 {
                0
            } else if c < 4 {
                1
            } else {
                2
            }
        };
        assert!(p.lb.iter().any(|&(_, c, _)| part(c) == 1), "{sched}: CPUs 2-3 never balanced");
        for &(t, c, src) in &p.lb {
            assert!(src.is_none_or(|s| part(s) == part(c)), "{sched}: CPU {c} balanced from CPU {src:?} at {t}");
        }
    }
}

/// An isolated partition has no sched domain: its CPUs never balance, so its two hogs
/// stay on the CPUs fork placed them on; as a `root` partition the balancer spreads them
/// over both CPUs (cgroup-v2.rst: tasks in an isolated partition "should be carefully
/// distributed and bound to each of the individual CPUs").
#[test]
fn an_isolated_partition_is_not_balanced() {
    for (kind, balanced) in [("isolated", false), ("root", true)] {
        let text = format!(
            "[[group]]\nname = \"i\"\ncpus = \"2-3\"\npartition = \"{kind}\"\n{}{}",
            hogs("i", 2, Some("i")),
            hogs("r", 1, None)
        );
        let j = job(&text, "smp4", "eevdf", 1, &[("version", "6.18")]);
        let mut p = Balances::default();
        run_with_probe(&j, &mut p);
        let r = run(&j);
        let on_part = p.lb.iter().filter(|&&(_, c, _)| c >= 2).count();
        assert_eq!(on_part > 0, balanced, "{kind}: {on_part} balance attempts on CPUs 2-3");
        let used = p.sw.cpus_used(&r, "i");
        assert!(used.iter().all(|&c| c >= 2), "{kind}: ran on {used:?}");
        if balanced {
            assert_eq!(used, [2, 3], "{kind}");
        }
    }
}

/// CPU 3 of smp4 goes offline at 300 ms and back at 600 ms under five hogs: the kernel
/// rebuilds the domains over the active CPUs each time, so while it is offline the fair
/// class neither balances on it (the null domain: no tick or nohz balance, never the idle
/// load balancer) nor counts it in another CPU's domain (every attempt's domain spans
/// CPUs 0-2, where the boot domains would count CPU 3 as an idle member); once online it
/// balances again over all four.
#[test]
fn an_offline_cpu_leaves_the_fair_domains_until_it_comes_back() {
    let text = format!(
        "{}[[change]]\nat = \"300ms\"\ncpu_offline = 3\n[[change]]\nat = \"600ms\"\ncpu_online = 3\n",
        hogs("h", 5, None)
    );
    for (sched, sets) in [("cfs", &[][..]), ("eevdf", &[("version", "6.18")][..])] {
        let mut p = Balances::default();
        run_with_probe(&job(&text, "smp4", sched, 1, sets), &mut p);
        let on3 = |from: u64, to: u64| {
            p.lb.iter().filter(|&&(t, c, s)| t >= from && t < to && (c == 3 || s == Some(3))).count()
        };
        assert!(on3(0, 300_000_000) > 0, "{sched}: CPU 3 took no part in balancing before the offline");
        assert_eq!(on3(300_000_000, 600_000_000), 0, "{sched}: CPU 3 balanced while offline");
        assert!(on3(600_000_000, 1_000_000_000) > 0, "{sched}: CPU 3 not balanced once back online");
        let off: Vec<_> = p.spans.iter().filter(|(t, _)| (300_000_000..600_000_000).contains(t)).collect();
        assert!(!off.is_empty() && off.iter().all(|(_, s)| !s.contains(3)), "{sched}: {off:?}");
        assert!(p.spans.iter().any(|(t, s)| *t >= 600_000_000 && s.contains(3)), "{sched}: no domain over CPU 3 after");
    }
}

/// A partitioned run with a hotplug step twice: the same trace hash.
#[test]
fn partitioned_runs_are_deterministic() {
    let text = format!("{}[[change]]\nat = \"200ms\"\ncpu_offline = 5\n", two_partitions());
    let j = job(&text, "smp8", "cfs", 1, &[]);
    assert_eq!(run(&j).trace_hash, run(&j).trace_hash);
}

/// The root cgroup's last CPU outside the partitions goes offline: `cpuset_handle_hotplug`
/// invalidates every partition (no effective CPU left in the top cpuset), so the root
/// cgroup's hog may run on the partitions' CPUs again and nothing is lost.
#[test]
fn offlining_the_root_cgroups_last_cpu_invalidates_the_partitions() {
    let text = format!(
        "[[group]]\nname = \"a\"\ncpus = \"0-2\"\npartition = \"root\"\n{}{}[[change]]\nat = \"300ms\"\ncpu_offline = 3\n",
        hogs("a", 2, Some("a")),
        hogs("r", 1, None)
    );
    let j = job(&text, "smp4", "eevdf", 1, &[("version", "6.18")]);
    let mut sw = Switches::default();
    run_with_probe(&j, &mut sw);
    let r = run(&j);
    let rid = task(&r, "r").tid;
    let before: Vec<usize> = sw.0.iter().filter(|s| s.3 == Some(rid) && s.0 .0 < 300_000_000).map(|s| s.1).collect();
    assert!(before.iter().all(|&c| c == 3), "root hog ran on {before:?} before the offline");
    assert!(sw.0.iter().any(|s| s.3 == Some(rid) && s.0 .0 > 300_000_000 && s.1 < 3), "root hog stranded");
    assert!(task(&r, "r").runtime_ns > 500_000_000, "root hog ran {} ns", task(&r, "r").runtime_ns);
}

fn load_err(text: &str, machine: &str) -> String {
    match schedlab_run::RunSpec::load("w.toml", text, Some(machine), &[], Some(Ns::from_secs(1))) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    }
}

/// Partition roots the kernel would leave invalid are refused, each at its `partition`
/// field with the kernel's reason.
#[test]
fn invalid_partitions_are_refused_with_their_field() {
    let g = |name: &str, extra: &str| format!("[[group]]\nname = \"{name}\"\n{extra}");
    let cases = [
        (g("a", "partition = \"root\"\n"), "group[0].partition", "PERR_CPUSEMPTY"),
        (
            g("a", "cpus = \"0-1\"\npartition = \"root\"\n") + &g("b", "cpus = \"1-2\"\npartition = \"root\"\n"),
            "group[0].partition",
            "PERR_NOTEXCL",
        ),
        (
            g("a", "cpus = \"0-1\"\n") + &g("b", "cpus = \"1\"\npartition = \"isolated\"\n"),
            "group[1].partition",
            "PERR_NOTEXCL",
        ),
        (
            g("a", "cpus = \"0-1\"\n") + &g("b", "parent = \"a\"\ncpus = \"1\"\npartition = \"root\"\n"),
            "group[1].partition",
            "PERR_PARENT",
        ),
        (g("a", "cpus = \"0-3\"\npartition = \"root\"\n"), "group[0].partition", "PERR_NOCPUS"),
        (
            g("a", "cpus = \"0-1\"\npartition = \"root\"\n")
                + &g("b", "parent = \"a\"\ncpus = \"2\"\npartition = \"root\"\n"),
            "group[1].partition",
            "PERR_INVCPUS",
        ),
        (g("a", "cpus = \"0\"\npartition = \"exclusive\"\n"), "group[0].partition", "member, root or isolated"),
    ];
    for (text, field, what) in cases {
        let e = load_err(&text, "smp4");
        assert!(e.contains(field) && e.contains(what) && e.contains("w.toml:"), "{text}: {e}");
    }
}
