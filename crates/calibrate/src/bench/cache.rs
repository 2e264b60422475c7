//! The cache hierarchy: load-to-use latency by working-set size (a dependent pointer
//! chase through a random cyclic permutation of cache lines, lmbench `lat_mem_rd`'s
//! method, in a `MADV_HUGEPAGE` buffer so that TLB misses stay out of it), and the re-warm
//! time of a working set by size: on the same core after another working set evicted the
//! private caches, and after moving to another core of the LLC or another LLC. Both are
//! timed in the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), so that time spent
//! preempted on a loaded host is not counted as memory latency.

use super::{enter, median, pin, thread_cpu_ns, BenchResult, Measured, Reps};

const LINE: usize = 64;
const CHASE_REPS: Reps = Reps { quick: 3, normal: 9 };
/// Dependent loads per repetition.
const STEPS: Reps = Reps { quick: 50_000, normal: 400_000 };
const REWARM_REPS: Reps = Reps { quick: 3, normal: 31 };
const B: &str = "cache latency";

/// A buffer of `bytes` whose lines form one random cycle (a SplitMix64 shuffle with a
/// fixed seed: the same order on every run).
fn cycle(bytes: usize) -> Vec<usize> {
    let n = (bytes / LINE).max(2);
    let stride = LINE / std::mem::size_of::<usize>();
    let mut order: Vec<usize> = (0..n).collect();
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in (1..n).rev() {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        order.swap(i, (z ^ (z >> 31)) as usize % (i + 1));
    }
    let mut buf = vec![0usize; n * stride];
    advise_huge(&buf);
    for w in 0..n {
        buf[order[w] * stride] = order[(w + 1) % n] * stride;
    }
    buf
}

/// Asks for transparent huge pages over `buf` (a hint about our own memory; ignored where
/// THP is off).
fn advise_huge(buf: &[usize]) {
    let len = std::mem::size_of_val(buf);
    // SAFETY: advice over memory this thread owns; madvise does not change its contents.
    unsafe { libc::madvise(buf.as_ptr() as *mut libc::c_void, len, libc::MADV_HUGEPAGE) };
}

/// ns per dependent load over a working set of `bytes`, on `cpu` (median of repetitions).
pub fn chase_latency(quick: bool, cpu: usize, bytes: usize) -> BenchResult<Measured> {
    std::thread::scope(|s| {
        s.spawn(|| -> BenchResult<Measured> {
            enter(B, cpu)?;
            let buf = cycle(bytes);
            let steps = STEPS.get(quick);
            let mut at = 0usize;
            for _ in 0..buf.len() / 8 {
                at = buf[at]; // warm: one lap
            }
            let mut samples = Vec::new();
            for _ in 0..CHASE_REPS.get(quick) {
                let t0 = thread_cpu_ns();
                for _ in 0..steps {
                    at = buf[at];
                }
                // ps per load, so that an L1 hit of ~1 ns keeps its digits.
                samples.push((thread_cpu_ns() - t0) * 1000 / steps as u64);
            }
            std::hint::black_box(at);
            Ok(median(samples).expect("at least one repetition"))
        })
        .join()
        .expect("benchmark thread does not panic")
    })
}

/// One pass over `buf` touching every cache line; the CPU time it took.
fn pass(buf: &[u64]) -> u64 {
    let t0 = thread_cpu_ns();
    let mut sum = 0u64;
    for chunk in buf.chunks(LINE / 8) {
        sum = sum.wrapping_add(chunk[0]);
    }
    std::hint::black_box(sum);
    thread_cpu_ns() - t0
}

/// Where the re-warmed task resumes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Resume {
    /// On its own CPU, after `evict` bytes of another working set went through it.
    SameCore { evict: usize },
    /// On another CPU (another core of the LLC, or another LLC).
    Moved { to: usize },
}

/// The re-warm time of `bytes` resuming as `how`: the first pass after it minus a warm
/// pass (median of repetitions).
pub fn rewarm(quick: bool, cpu: usize, bytes: usize, how: Resume) -> BenchResult<Measured> {
    const R: &str = "cache re-warm";
    std::thread::scope(|s| {
        s.spawn(|| -> BenchResult<Measured> {
            enter(R, cpu)?;
            let buf: Vec<u64> = (0..(bytes / 8) as u64).collect();
            let other: Vec<u64> = match how {
                Resume::SameCore { evict } => (0..(evict / 8) as u64).collect(),
                Resume::Moved { .. } => Vec::new(),
            };
            let (mut cold, mut warm) = (Vec::new(), Vec::new());
            let mut here = cpu;
            for _ in 0..REWARM_REPS.get(quick) {
                pass(&buf);
                warm.push(pass(&buf));
                match how {
                    Resume::SameCore { .. } => {
                        pass(&other);
                    }
                    Resume::Moved { to } => {
                        here = if here == cpu { to } else { cpu };
                        pin(R, here)?;
                    }
                }
                cold.push(pass(&buf));
            }
            let (c, w) = (median(cold).expect("reps"), median(warm).expect("reps"));
            Ok(Measured { median: c.median.saturating_sub(w.median), reps: c.reps })
        })
        .join()
        .expect("benchmark thread does not panic")
    })
}
