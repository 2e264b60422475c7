//! Prints random world SEED (the workload `schedlab fuzz` runs) and its machine.
fn main() {
    let Some(seed) = std::env::args().nth(1).and_then(|s| s.parse().ok()) else {
        eprintln!("usage: world SEED");
        std::process::exit(2);
    };
    let (text, machine) = schedlab_run::fuzz::world(seed);
    println!("# machine = {machine}\n{text}");
}
