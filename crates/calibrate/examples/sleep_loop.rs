//! The host side of `examples/workloads/sleep-loop.toml`: 1.6 µs of work and `usleep(5 ms)`,
//! 2000 times; prints the turnaround and the CPU time the kernel charged (`getrusage`).
//!
//! `cargo run --release -p schedlab-calibrate --example sleep_loop [LOOPS]`

use schedlab_calibrate::bench::{now_ns, spin_for};

fn cpu_time_ns() -> u64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    (us(ru.ru_utime) + us(ru.ru_stime)) * 1000
}

fn main() {
    let loops: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(2000);
    let (t0, c0) = (now_ns(), cpu_time_ns());
    for _ in 0..loops {
        spin_for(1_600);
        // SAFETY: usleep has no memory arguments.
        unsafe { libc::usleep(5_000) };
    }
    let (t1, c1) = (now_ns(), cpu_time_ns());
    println!(
        "{loops} x (1.6us work + usleep(5ms)): turnaround {:.4} s, CPU time {:.2} ms ({:.1} us per loop)",
        (t1 - t0) as f64 / 1e9,
        (c1 - c0) as f64 / 1e6,
        (c1 - c0) as f64 / 1e3 / loops as f64
    );
}
