//! The workload's kernel objects on the real kernel: futex mutexes (the 0/1/2 protocol the
//! simulator models), condition variables and barriers on futex words, and real pipes.
//!
//! Blocking calls return [`Interrupted`] when a signal interrupts them while the run is
//! stopping (a signal is how the controller gets a blocked task out of the kernel at the end
//! of a run); any other interruption is retried, or is a spurious wakeup where POSIX allows
//! one (condition variables).

use crate::shm::{Shared, ZeroValid};
use crate::sys;
use schedlab_workload::{FutexOp, Workload};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::SeqCst};

/// A blocking call was interrupted by a signal (`EINTR`).
#[derive(Debug)]
pub struct Interrupted;

/// A failed system call, with what was attempted.
#[derive(Debug)]
pub enum ObjError {
    Interrupted,
    Failed(String),
}

impl From<Interrupted> for ObjError {
    fn from(_: Interrupted) -> Self {
        ObjError::Interrupted
    }
}

pub struct Pipe {
    pub read: OwnedFd,
    pub write: OwnedFd,
}

/// Condition variable: a sequence word to wait on and a waiter count (so `signal` skips the
/// system call when nobody waits, as the simulator's model does).
pub struct Cond {
    seq: AtomicU32,
    waiters: AtomicU32,
}

pub struct Barrier {
    arrived: AtomicU32,
    gen: AtomicU32,
    parties: AtomicU32,
}

// SAFETY: atomics only.
unsafe impl ZeroValid for Cond {}
// SAFETY: atomics only.
unsafe impl ZeroValid for Barrier {}

/// Every word lives in shared memory ([`Shared`]), so tasks that are processes share them.
pub struct Objects {
    pub mutexes: Shared<AtomicU32>,
    /// `[[futex]]` words.
    pub words: Shared<AtomicU32>,
    pub conds: Shared<Cond>,
    pub barriers: Shared<Barrier>,
    pub pipes: Vec<Pipe>,
    /// Pipe capacities the kernel granted, where they differ from the requested ones
    /// (`F_SETPIPE_SZ` rounds up to a power-of-two number of pages).
    pub pipe_notes: Vec<String>,
    /// Per named rt-app timer (`Workload::timers`): the next expiry of a timer shared by
    /// several tasks (`CLOCK_MONOTONIC` ns; 0 until its first use). Per-task timers keep
    /// theirs in the task.
    pub timers: Shared<AtomicU64>,
    /// Set when the run stops: blocked tasks give up instead of retrying.
    stop: Shared<AtomicBool>,
    /// Process-private futexes (`FUTEX_*_PRIVATE`), as glibc's default; shared ones when
    /// some task is a process.
    pub private: bool,
}

impl Objects {
    /// Creates every object the workload declares (pipes with `O_CLOEXEC`).
    pub fn new(wl: &Workload, private: bool) -> Result<Objects, String> {
        let mut pipes = Vec::new();
        let mut pipe_notes = Vec::new();
        for p in &wl.pipes {
            if p.socket {
                pipes.push(socket_pair(p, &mut pipe_notes)?);
                continue;
            }
            let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
                .map_err(|e| format!("pipe `{}`: pipe2: {e}", p.name))?;
            let want = p.capacity.clamp(4096, i32::MAX as u64) as i32;
            // SAFETY: fcntl on a descriptor we own.
            let got = unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETPIPE_SZ, want) };
            if got < 0 {
                return Err(format!(
                    "pipe `{}`: F_SETPIPE_SZ {want}: {} (see /proc/sys/fs/pipe-max-size)",
                    p.name,
                    std::io::Error::last_os_error()
                ));
            }
            if got as u64 != p.capacity {
                pipe_notes.push(format!("pipe `{}`: capacity {} bytes (asked {})", p.name, got, p.capacity));
            }
            pipes.push(Pipe { read: r, write: w });
        }
        let barriers = Shared::<Barrier>::zeroed(wl.barriers.len())?;
        for (b, def) in barriers.iter().zip(&wl.barriers) {
            b.parties.store(def.parties.min(u32::MAX as u64) as u32, SeqCst);
        }
        let words = Shared::<AtomicU32>::zeroed(wl.futexes.len())?;
        for (w, def) in words.iter().zip(&wl.futexes) {
            w.store(def.init, SeqCst);
        }
        Ok(Objects {
            words,
            mutexes: Shared::zeroed(wl.mutexes.len())?,
            conds: Shared::zeroed(wl.conds.len())?,
            barriers,
            pipes,
            pipe_notes,
            timers: Shared::zeroed(wl.timers.len())?,
            stop: Shared::zeroed(1)?,
            private,
        })
    }

    pub fn stop_flag(&self) -> &AtomicBool {
        &self.stop[0]
    }

    pub fn stopping(&self) -> bool {
        self.stop_flag().load(SeqCst)
    }

    fn wait(&self, word: &AtomicU32, expected: u32) -> Result<(), Interrupted> {
        match sys::futex_wait(word, expected, self.private) {
            Err(libc::EINTR) if self.stopping() => Err(Interrupted),
            // EAGAIN (the word changed before we slept) or a stray signal: the caller re-checks.
            _ => Ok(()),
        }
    }

    fn wake(&self, word: &AtomicU32, n: u32) {
        sys::futex_wake(word, n, self.private);
    }

    /// Runs `f` holding lock word `word` (the same 0/1/2 protocol as workload mutexes), for
    /// the run's own shared state (task table, workload stream).
    pub fn with_word<R>(&self, word: &AtomicU32, f: impl FnOnce() -> R) -> R {
        if word.compare_exchange(0, 1, SeqCst, SeqCst).is_err() {
            while word.swap(2, SeqCst) != 0 {
                let _ = sys::futex_wait(word, 2, self.private);
            }
        }
        let r = f();
        if word.swap(0, SeqCst) == 2 {
            self.wake(word, 1);
        }
        r
    }

    /// The futex operations real runs perform (`limits::preflight` refuses the others):
    /// stores, atomic adds, `while (*w == expected) futex_wait(w, expected)`, `futex_wake`.
    pub fn futex(&self, op: &FutexOp) -> Result<(), Interrupted> {
        match *op {
            FutexOp::Set { word, value } => self.words[word].store(value, SeqCst),
            FutexOp::Add { word, value } => {
                self.words[word].fetch_add(value, SeqCst);
            }
            FutexOp::Wait { word, expected } => self.futex_wait_loop(word, expected)?,
            // The split form of `futex_swap` is two upstream calls.
            FutexOp::Swap { wait, expected, wake, split: true, .. } => {
                self.wake(&self.words[wake], 1);
                self.futex_wait_loop(wait, expected)?;
            }
            FutexOp::Wake { word, count, .. } => self.wake(&self.words[word], count),
            // Refused before the run starts (`limits::futex_refusal`).
            _ => {}
        }
        Ok(())
    }

    /// `while (*word == expected) futex_wait(word, expected)`.
    fn futex_wait_loop(&self, word: usize, expected: u32) -> Result<(), Interrupted> {
        let w = &self.words[word];
        while w.load(SeqCst) == expected {
            if self.stopping() {
                return Err(Interrupted);
            }
            self.wait(w, expected)?;
        }
        Ok(())
    }

    /// glibc `lll_lock`: CAS 0→1; else `xchg(word, 2)` and `futex_wait(word, 2)` until the
    /// exchange finds it free (the simulator's model of the same protocol).
    pub fn lock(&self, m: usize) -> Result<(), Interrupted> {
        let w = &self.mutexes[m];
        if w.compare_exchange(0, 1, SeqCst, SeqCst).is_ok() {
            return Ok(());
        }
        self.lock_contended(m)
    }

    fn lock_contended(&self, m: usize) -> Result<(), Interrupted> {
        let w = &self.mutexes[m];
        while w.swap(2, SeqCst) != 0 {
            self.wait(w, 2)?;
        }
        Ok(())
    }

    /// `xchg(word, 0)`; if it was 2 (waiters possible), `futex_wake(word, 1)`.
    pub fn unlock(&self, m: usize) {
        let w = &self.mutexes[m];
        if w.swap(0, SeqCst) == 2 {
            self.wake(w, 1);
        }
    }

    /// `pthread_cond_wait`: register, unlock, wait for the sequence to move, re-lock.
    /// Interrupted while the run stops, the task leaves without the mutex.
    pub fn cond_wait(&self, c: usize, m: usize) -> Result<(), Interrupted> {
        let cv = &self.conds[c];
        cv.waiters.fetch_add(1, SeqCst);
        let seq = cv.seq.load(SeqCst);
        self.unlock(m);
        let r = self.wait(&cv.seq, seq);
        cv.waiters.fetch_sub(1, SeqCst);
        r?;
        self.lock(m)
    }

    /// `pthread_cond_signal`/`broadcast`: advance the sequence; wake if anyone waits.
    pub fn signal(&self, c: usize, all: bool) {
        let cv = &self.conds[c];
        cv.seq.fetch_add(1, SeqCst);
        if cv.waiters.load(SeqCst) > 0 {
            self.wake(&cv.seq, if all { u32::MAX } else { 1 });
        }
    }

    /// Arrive at barrier `b`; the last of `parties` advances the generation and wakes all.
    pub fn barrier(&self, b: usize) -> Result<(), Interrupted> {
        let bar = &self.barriers[b];
        let gen = bar.gen.load(SeqCst);
        if bar.arrived.fetch_add(1, SeqCst) + 1 >= bar.parties.load(SeqCst) {
            bar.arrived.store(0, SeqCst);
            bar.gen.fetch_add(1, SeqCst);
            self.wake(&bar.gen, u32::MAX);
            return Ok(());
        }
        while bar.gen.load(SeqCst) == gen {
            self.wait(&bar.gen, gen)?;
        }
        Ok(())
    }

    /// libgomp's barrier: spin on the generation for up to `spin_ns` (wall clock), then
    /// wait on its futex as [`Objects::barrier`] does.
    pub fn spin_barrier(&self, b: usize, spin_ns: u64) -> Result<(), Interrupted> {
        let bar = &self.barriers[b];
        let gen = bar.gen.load(SeqCst);
        if bar.arrived.fetch_add(1, SeqCst) + 1 >= bar.parties.load(SeqCst) {
            bar.arrived.store(0, SeqCst);
            bar.gen.fetch_add(1, SeqCst);
            self.wake(&bar.gen, u32::MAX);
            return Ok(());
        }
        let deadline = sys::monotonic_ns().saturating_add(spin_ns);
        while bar.gen.load(SeqCst) == gen && sys::monotonic_ns() < deadline {
            if self.stopping() {
                return Err(Interrupted);
            }
            std::hint::spin_loop();
        }
        while bar.gen.load(SeqCst) == gen {
            self.wait(&bar.gen, gen)?;
        }
        Ok(())
    }

    /// `poll(2)` on the read ends of `pipes` until one is readable; the position in `pipes`
    /// of the first readable one at or after `from` (wrapping around, as the simulator).
    pub fn poll(&self, pipes: &[usize], from: usize) -> Result<usize, ObjError> {
        let mut fds: Vec<libc::pollfd> = pipes
            .iter()
            .map(|&p| libc::pollfd { fd: self.pipes[p].read.as_raw_fd(), events: libc::POLLIN, revents: 0 })
            .collect();
        loop {
            // SAFETY: `fds` is a valid array of `fds.len()` pollfds that outlives the call.
            let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
            if r > 0 {
                let n = fds.len();
                if let Some(i) = (0..n).map(|k| (from + k) % n).find(|&i| fds[i].revents & libc::POLLIN != 0) {
                    return Ok(i);
                }
                return Err(ObjError::Failed("poll: a pipe was closed".into()));
            }
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) if self.stopping() => return Err(ObjError::Interrupted),
                Some(libc::EINTR) => {}
                _ => return Err(ObjError::Failed(format!("poll: {e}"))),
            }
        }
    }

    /// Writes `bytes` zero bytes to pipe `p`, blocking while it is full.
    pub fn send(&self, p: usize, bytes: u64) -> Result<(), ObjError> {
        static ZEROS: [u8; 65536] = [0; 65536];
        let mut left = bytes;
        while left > 0 {
            let n = left.min(ZEROS.len() as u64) as usize;
            match nix::unistd::write(&self.pipes[p].write, &ZEROS[..n]) {
                Ok(k) => left -= k as u64,
                Err(nix::errno::Errno::EINTR) if self.stopping() => return Err(ObjError::Interrupted),
                Err(nix::errno::Errno::EINTR) => {}
                Err(e) => return Err(ObjError::Failed(format!("write to pipe {p}: {e}"))),
            }
        }
        Ok(())
    }

    /// Reads `bytes` bytes from pipe `p` into `buf` (reused: the data is not looked at),
    /// blocking while it is empty. The caller owns the buffer so that a read costs the
    /// system call alone: a 64 KiB buffer made per call would be zeroed (and its stack
    /// pages probed) every time, ~0.9 µs per message, a sixth of a pipe round trip.
    pub fn recv(&self, p: usize, bytes: u64, buf: &mut [u8]) -> Result<(), ObjError> {
        let mut left = bytes;
        while left > 0 {
            let n = left.min(buf.len() as u64) as usize;
            match nix::unistd::read(&self.pipes[p].read, &mut buf[..n]) {
                Ok(0) => return Err(ObjError::Failed(format!("read from pipe {p}: end of file"))),
                Ok(k) => left -= k as u64,
                Err(nix::errno::Errno::EINTR) if self.stopping() => return Err(ObjError::Interrupted),
                Err(nix::errno::Errno::EINTR) => {}
                Err(e) => return Err(ObjError::Failed(format!("read from pipe {p}: {e}"))),
            }
        }
        Ok(())
    }
}

/// A `kind = "socket"` pipe: an `AF_UNIX` stream `socketpair`, written at one end and read
/// at the other, with `SO_SNDBUF` asked at half the capacity (the kernel doubles it,
/// `net/core/sock.c: sock_setsockopt`).
fn socket_pair(p: &schedlab_workload::PipeDef, notes: &mut Vec<String>) -> Result<Pipe, String> {
    use nix::sys::socket::{setsockopt, socketpair, sockopt, AddressFamily, SockFlag, SockType};
    let (w, r) = socketpair(AddressFamily::Unix, SockType::Stream, None, SockFlag::SOCK_CLOEXEC)
        .map_err(|e| format!("socket `{}`: socketpair: {e}", p.name))?;
    let half = (p.capacity / 2).clamp(2048, i32::MAX as u64) as usize;
    setsockopt(&w, sockopt::SndBuf, &half).map_err(|e| format!("socket `{}`: SO_SNDBUF: {e}", p.name))?;
    let got = nix::sys::socket::getsockopt(&w, sockopt::SndBuf).unwrap_or(0) as u64;
    if got != p.capacity {
        notes.push(format!("socket `{}`: send buffer {got} bytes (asked {})", p.name, p.capacity));
    }
    Ok(Pipe { read: r, write: w })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use std::sync::Arc;

    fn objects() -> Arc<Objects> {
        let text = "[[mutex]]\nname = \"m\"\n[[cond]]\nname = \"c\"\n[[barrier]]\nname = \"b\"\nparties = 4\n\
                    [[pipe]]\nname = \"p\"\ncapacity = 4096\n[[task]]\nname = \"t\"\nprogram = [ \"yield\" ]\n";
        let wl = schedlab_workload::parse_workload("t.toml", text, &[], 2).unwrap();
        Arc::new(Objects::new(&wl, true).unwrap())
    }

    fn on_threads(n: usize, f: impl Fn(usize) + Send + Sync + 'static) {
        let f = Arc::new(f);
        let hs: Vec<_> = (0..n)
            .map(|i| {
                std::thread::spawn({
                    let f = f.clone();
                    move || f(i)
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
    }

    /// The futex mutex excludes: unsynchronised read-modify-write under it loses nothing,
    /// and the word is 0 (free, no waiters) at the end.
    #[test]
    fn mutex_excludes_and_ends_free() {
        let o = objects();
        let count = Arc::new(AtomicU64::new(0));
        let (o2, c2) = (o.clone(), count.clone());
        on_threads(4, move |_| {
            for _ in 0..20_000 {
                o2.lock(0).unwrap();
                let v = c2.load(SeqCst);
                std::hint::spin_loop();
                c2.store(v + 1, SeqCst);
                o2.unlock(0);
            }
        });
        assert_eq!(count.load(SeqCst), 80_000);
        assert_eq!(o.mutexes[0].load(SeqCst), 0);
    }

    /// No thread leaves a barrier generation before all parties arrived.
    #[test]
    fn barrier_releases_only_full_generations() {
        let o = objects();
        let arrived = Arc::new(AtomicU64::new(0));
        let (o2, a2) = (o.clone(), arrived.clone());
        on_threads(4, move |_| {
            for round in 1..=200u64 {
                a2.fetch_add(1, SeqCst);
                o2.barrier(0).unwrap();
                assert!(a2.load(SeqCst) >= round * 4, "left round {round} early");
                o2.barrier(0).unwrap();
            }
        });
    }

    /// A waiter woken by `signal` holds the mutex again; a pipe carries more than its
    /// capacity between a writer and a reader.
    #[test]
    fn cond_signal_and_pipe_transfer() {
        let o = objects();
        let ready = Arc::new(AtomicU32::new(0));
        let (o2, r2) = (o.clone(), ready.clone());
        let waiter = std::thread::spawn(move || {
            o2.lock(0).unwrap();
            while r2.load(SeqCst) == 0 {
                o2.cond_wait(0, 0).unwrap();
            }
            o2.unlock(0);
        });
        std::thread::sleep(std::time::Duration::from_millis(20));
        o.lock(0).unwrap();
        ready.store(1, SeqCst);
        o.signal(0, false);
        o.unlock(0);
        waiter.join().unwrap();
        let o3 = o.clone();
        let reader = std::thread::spawn(move || o3.recv(0, 100_000, &mut [0; 4096]).is_ok());
        assert!(o.send(0, 100_000).is_ok());
        assert!(reader.join().unwrap());
    }
}
