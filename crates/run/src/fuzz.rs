//! Random worlds (after TigerBeetle's simulator): a seed builds a random workload on a
//! random machine; `schedlab fuzz` and the tests run it under every policy with the kernel's
//! and the policies' invariants checked after every event. A failure names the seed and
//! prints the workload, so it replays exactly.

use rand::{Rng, RngExt};
use schedlab_sim::RngStreams;

/// Machines worlds are drawn on.
pub const MACHINES: &[&str] = &["up", "smp2", "smp4", "i7-3770", "opteron-32"];

fn dur(rng: &mut impl Rng, lo_us: u64, hi_us: u64) -> String {
    format!("{}us", rng.random_range(lo_us..=hi_us))
}

/// A random but well-formed program body: locks are released, pipes used by pairs.
fn op(rng: &mut impl Rng, ncpu: usize, depth: u32) -> String {
    match rng.random_range(0..14) {
        0..=3 => format!("{{ run = \"{}\" }}", dur(rng, 10, 3000)),
        4 | 5 => format!("{{ sleep = \"{}\" }}", dur(rng, 10, 5000)),
        6 => format!("{{ run = {{ dist = \"exponential\", mean = \"{}\" }} }}", dur(rng, 50, 2000)),
        7 => "\"yield\"".into(),
        8 => format!("{{ lock = \"m\" }}, {{ run = \"{}\" }}, {{ unlock = \"m\" }}", dur(rng, 5, 200)),
        9 => format!("{{ set_nice = {} }}", rng.random_range(-5..=10)),
        10 => {
            let a = rng.random_range(0..ncpu);
            let b = rng.random_range(a..ncpu);
            format!("{{ set_affinity = \"{a}-{b}\" }}")
        }
        11 => format!("{{ spin = \"{}\" }}", dur(rng, 5, 300)),
        12 if depth < 2 => {
            let inner: Vec<String> = (0..rng.random_range(1..4)).map(|_| op(rng, ncpu, depth + 1)).collect();
            format!("{{ loop = {}, do = [ {} ] }}", rng.random_range(1..5), inner.join(", "))
        }
        _ => format!("{{ timer = \"{}\" }}", dur(rng, 500, 4000)),
    }
}

/// The workload text and machine preset of world `seed`.
pub fn world(seed: u64) -> (String, &'static str) {
    let mut rng = RngStreams::new(seed).stream("world", 0);
    let machine = MACHINES[rng.random_range(0..MACHINES.len())];
    let ncpu = schedlab_machine::preset(machine).unwrap().nr_cpus();
    let mut w =
        String::from("[[mutex]]\nname = \"m\"\n[[pipe]]\nname = \"p\"\n[[barrier]]\nname = \"b\"\nparties = 2\n");
    for t in 0..rng.random_range(1..6) {
        let body: Vec<String> = (0..rng.random_range(1..6)).map(|_| op(&mut rng, ncpu, 0)).collect();
        let count = rng.random_range(1..6);
        let nice = rng.random_range(-5..=5);
        let policy = ["normal", "normal", "batch", "idle"][rng.random_range(0..4)];
        w += &format!(
            "[[task]]\nname = \"t{t}\"\ncount = {count}\nnice = {nice}\npolicy = \"{policy}\"\nprogram = [ {{ loop = \"forever\", do = [ {} ] }} ]\n",
            body.join(", ")
        );
    }
    // A forking parent, a pipe pair and a barrier pair exercise fork/exit, pipes, barriers.
    w +=
        "[[task]]\nname = \"parent\"\nprogram = [ { loop = 3, do = [ { fork = \"child\", count = 3 }, \"wait\" ] } ]\n";
    w += &format!(
        "[[task]]\nname = \"child\"\ntemplate = true\nprogram = [ {{ run = \"{}\" }}, \"exit\" ]\n",
        dur(&mut rng, 10, 2000)
    );
    w += "[[task]]\nname = \"tx\"\nprogram = [ { loop = \"forever\", do = [ { send = \"p\", bytes = 64 }, { run = \"30us\" } ] } ]\n";
    w += "[[task]]\nname = \"rx\"\nprogram = [ { loop = \"forever\", do = [ { recv = \"p\", bytes = 64 }, { run = \"20us\" } ] } ]\n";
    w += "[[task]]\nname = \"bar\"\ncount = 2\nprogram = [ { loop = \"forever\", do = [ { run = \"200us\" }, { barrier = \"b\" } ] } ]\n";
    (w, machine)
}
