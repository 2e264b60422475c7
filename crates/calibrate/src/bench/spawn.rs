//! Creating and ending tasks: a thread created and joined on one CPU (creator and child
//! pinned together), and a process forked, exiting at once and reaped.

use super::{enter, median, now_ns, os, BenchResult, Measured, Reps};

const REPS: Reps = Reps { quick: 21, normal: 201 };
const PROCESS_REPS: Reps = Reps { quick: 5, normal: 41 };
const B: &str = "thread create/exit";

/// Thread creation and exit times (medians over the repetitions where the child did not
/// run before the creator's `clone` returned).
#[derive(Clone, Copy, Debug)]
pub struct ThreadTimes {
    /// The creator's `pthread_create` (`clone`: `copy_process` + `wake_up_new_task`).
    pub create: Measured,
    /// From the child's last instruction to the creator running again after `pthread_join`:
    /// `do_exit`, the futex wake of the joiner, and the switch to it.
    pub exit_to_join: Measured,
}

fn one_thread() -> BenchResult<Option<(u64, u64)>> {
    let t_a = now_ns();
    let h = std::thread::Builder::new().spawn(|| (now_ns(), now_ns()));
    let t_c = now_ns();
    let h = h.map_err(|err| super::BenchError { bench: B, what: "pthread_create", err })?;
    let (child_start, child_end) = h.join().expect("child does not panic");
    let t_b = now_ns();
    // A child that ran before `clone` returned preempted the creator: not a clean sample.
    Ok((child_start > t_c).then(|| (t_c - t_a, t_b.saturating_sub(child_end))))
}

/// Creates and joins threads on `cpu` (the children inherit the creator's affinity).
pub fn thread_create_exit(quick: bool, cpu: usize) -> BenchResult<ThreadTimes> {
    let (create, exit) = std::thread::scope(|s| {
        s.spawn(|| -> BenchResult<(Vec<u64>, Vec<u64>)> {
            enter(B, cpu)?;
            one_thread()?; // warm the stack cache
            let (mut create, mut exit) = (Vec::new(), Vec::new());
            for _ in 0..REPS.get(quick) {
                if let Some((c, e)) = one_thread()? {
                    create.push(c);
                    exit.push(e);
                }
            }
            Ok((create, exit))
        })
        .join()
        .expect("benchmark thread does not panic")
    })?;
    match (median(create), median(exit)) {
        (Some(create), Some(exit_to_join)) => Ok(ThreadTimes { create, exit_to_join }),
        _ => Err(super::BenchError {
            bench: B,
            what: "pthread_create",
            err: std::io::Error::other("every child ran before its creator's clone returned"),
        }),
    }
}

/// `fork()` + the child's `_exit(0)` + `waitpid`, timed by the parent (informational:
/// schedlab's tasks are threads).
pub fn process_fork_exit(quick: bool) -> BenchResult<Measured> {
    const P: &str = "process fork/exit";
    let mut samples = Vec::new();
    for _ in 0..PROCESS_REPS.get(quick) {
        let t0 = now_ns();
        // SAFETY: the child only calls `_exit`, which is async-signal-safe, so forking a
        // multi-threaded process is sound.
        match os(P, "fork", unsafe { nix::unistd::fork() })? {
            nix::unistd::ForkResult::Child => unsafe { libc::_exit(0) },
            nix::unistd::ForkResult::Parent { child } => {
                os(P, "waitpid", nix::sys::wait::waitpid(child, None))?;
            }
        }
        samples.push(now_ns() - t0);
    }
    Ok(median(samples).expect("at least one repetition"))
}
