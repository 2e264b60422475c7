//! Pipe ping-pong (lmbench `lat_ctx`, `perf bench sched pipe`): two threads pass one byte
//! back and forth over two pipes. Pinned to one CPU every handoff is a wakeup plus a context
//! switch; on two CPUs it is a cross-CPU wakeup. On one CPU both threads are `SCHED_BATCH`,
//! so that a wakeup never preempts the writer (`kernel/sched/fair.c:
//! check_preempt_wakeup_fair` returns early for a wakee that is not `SCHED_NORMAL`): the
//! writer always blocks in its own `read`, and every handoff takes the same path. (Across
//! CPUs the question does not arise, and a batch wakee would wait for other tasks' slices.)

use super::{check, enter, median, now_ns, BenchResult, Measured, Reps};
use std::os::fd::{AsRawFd, OwnedFd};

const REPS: Reps = Reps { quick: 7, normal: 41 };
const ROUND_TRIPS: u64 = 100;
const B: &str = "pipe ping-pong";

/// One-way handoff time and the context switches the timing thread saw per round trip.
#[derive(Clone, Copy, Debug)]
pub struct PingPong {
    pub one_way: Measured,
    /// Voluntary and involuntary switches of the timing thread per round trip (×100).
    pub switches_x100: (u64, u64),
}

fn xfer(fd: &OwnedFd, read: bool) -> BenchResult<()> {
    let mut b = [0u8; 1];
    // SAFETY: a valid fd and a 1-byte buffer.
    let n = unsafe {
        if read {
            libc::read(fd.as_raw_fd(), b.as_mut_ptr().cast(), 1)
        } else {
            libc::write(fd.as_raw_fd(), b.as_ptr().cast(), 1)
        }
    };
    match check(B, if read { "read" } else { "write" }, n as libc::c_long)? {
        0 => Err(super::BenchError { bench: B, what: "read", err: std::io::ErrorKind::UnexpectedEof.into() }),
        _ => Ok(()),
    }
}

fn switches() -> (u64, u64) {
    // SAFETY: getrusage fills the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    (ru.ru_nvcsw as u64, ru.ru_nivcsw as u64)
}

/// Runs the ping-pong with the timing thread on `a` and the echo thread on `b`.
pub fn pipe_pingpong(quick: bool, a: usize, b: usize) -> BenchResult<PingPong> {
    let (r1, w1) = super::os(B, "pipe", nix::unistd::pipe())?;
    let (r2, w2) = super::os(B, "pipe", nix::unistd::pipe())?;
    let reps = REPS.get(quick);
    let total = (reps as u64 + 1) * ROUND_TRIPS;
    std::thread::scope(|s| {
        let echo = s.spawn(|| -> BenchResult<()> {
            enter(B, b)?;
            if a == b {
                super::set_policy(B, libc::SCHED_BATCH)?;
            }
            for _ in 0..total {
                xfer(&r1, true)?;
                xfer(&w2, false)?;
            }
            Ok(())
        });
        // The timing thread owns its ends, so that if it fails the echo thread sees EOF/EPIPE.
        let timer = s.spawn(move || -> BenchResult<PingPong> {
            let (w1, r2) = (w1, r2);
            enter(B, a)?;
            if a == b {
                super::set_policy(B, libc::SCHED_BATCH)?;
            }
            let mut samples = Vec::new();
            let mut sw = (0, 0);
            for rep in 0..=reps {
                let (v0, i0) = switches();
                let t0 = now_ns();
                for _ in 0..ROUND_TRIPS {
                    xfer(&w1, false)?;
                    xfer(&r2, true)?;
                }
                let dt = now_ns() - t0;
                let (v1, i1) = switches();
                if rep > 0 {
                    // Repetition 0 warms up.
                    samples.push(dt / (2 * ROUND_TRIPS));
                    sw = (sw.0 + v1 - v0, sw.1 + i1 - i0);
                }
            }
            let one_way = median(samples).expect("at least one repetition");
            Ok(PingPong { one_way, switches_x100: (sw.0 * 100 / total, sw.1 * 100 / total) })
        });
        let res = timer.join().expect("timing thread does not panic");
        echo.join().expect("echo thread does not panic")?;
        res
    })
}

/// Whose turn it is in the futex ping-pong: 0 the timing thread's, 1 the echo thread's.
struct Turn(std::sync::atomic::AtomicU32);

impl Turn {
    /// Gives the turn to `to` and wakes the other thread if it sleeps.
    fn pass(&self, to: u32) -> BenchResult<()> {
        self.0.store(to, std::sync::atomic::Ordering::Release);
        check(F, "futex_wake", super::futex_wake(&self.0, 1)).map(|_| ())
    }
    /// Sleeps on the word until the turn is `mine` (true) or the other thread gave up
    /// (false).
    fn wait(&self, mine: u32) -> bool {
        loop {
            let v = self.0.load(std::sync::atomic::Ordering::Acquire);
            if v == mine || v == GAVE_UP {
                return v == mine;
            }
            // EAGAIN (the word changed meanwhile) and EINTR just retry.
            super::futex_wait(&self.0, v);
        }
    }
}

const F: &str = "futex ping-pong";
/// Fewer quick repetitions than the pipe ping-pong: quick mode stays within its budget.
const FUTEX_REPS: Reps = Reps { quick: 3, normal: 41 };
/// The turn a failing thread leaves, so that the other stops waiting.
const GAVE_UP: u32 = 2;

fn gave_up() -> super::BenchError {
    super::BenchError { bench: F, what: "hand-off", err: std::io::Error::other("the echo thread failed") }
}

/// The ping-pong over a futex word instead of pipes (`FUTEX_WAKE` then `FUTEX_WAIT`,
/// private), with the timing thread on `a` and the echo thread on `b`; one-way time.
pub fn futex_pingpong(quick: bool, a: usize, b: usize) -> BenchResult<Measured> {
    let turn = Turn(std::sync::atomic::AtomicU32::new(0));
    let reps = FUTEX_REPS.get(quick);
    let total = (reps as u64 + 1) * ROUND_TRIPS;
    let batch = |bench: &'static str, cpu| -> BenchResult<()> {
        enter(bench, cpu)?;
        if a == b {
            super::set_policy(bench, libc::SCHED_BATCH)?;
        }
        Ok(())
    };
    std::thread::scope(|s| {
        let echo = s.spawn(|| -> BenchResult<()> {
            let r = batch(F, b).and_then(|()| {
                for _ in 0..total {
                    if !turn.wait(1) {
                        break;
                    }
                    turn.pass(0)?;
                }
                Ok(())
            });
            if r.is_err() {
                let _ = turn.pass(GAVE_UP);
            }
            r
        });
        let res = s
            .spawn(|| -> BenchResult<Measured> {
                let r = batch(F, a).and_then(|()| {
                    let mut samples = Vec::new();
                    for rep in 0..=reps {
                        let t0 = now_ns();
                        for _ in 0..ROUND_TRIPS {
                            turn.pass(1)?;
                            if !turn.wait(0) {
                                return Err(gave_up());
                            }
                        }
                        if rep > 0 {
                            samples.push((now_ns() - t0) / (2 * ROUND_TRIPS));
                        }
                    }
                    Ok(median(samples).expect("at least one repetition"))
                });
                if r.is_err() {
                    let _ = turn.pass(GAVE_UP);
                }
                r
            })
            .join()
            .expect("timing thread does not panic");
        echo.join().expect("echo thread does not panic")?;
        res
    })
}
