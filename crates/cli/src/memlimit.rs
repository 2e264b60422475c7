//! A global allocator that can watch memory: when enabled (`schedlab fuzz --parser`, the
//! parser fuzz test) it counts live heap bytes and aborts, naming the input being checked,
//! as soon as they exceed a limit — "bounded memory" made checkable. Disabled, it costs one
//! relaxed load per allocation.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicU64, Ordering::Relaxed};

pub struct Watching;

static ENABLED: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);
static LIMIT: AtomicIsize = AtomicIsize::new(isize::MAX);
/// The seed of the input being checked, for the abort message.
static INPUT: AtomicU64 = AtomicU64::new(u64::MAX);

/// Starts counting (from zero) with a limit of `limit` live bytes.
pub fn watch(limit: usize) {
    LIVE.store(0, Relaxed);
    PEAK.store(0, Relaxed);
    LIMIT.store(limit.min(isize::MAX as usize) as isize, Relaxed);
    ENABLED.store(true, Relaxed);
}

/// Names the input now being checked and resets the peak; returns the previous peak.
pub fn checking(seed: u64) -> usize {
    INPUT.store(seed, Relaxed);
    PEAK.swap(LIVE.load(Relaxed), Relaxed).max(0) as usize
}

fn grew(by: usize) {
    let now = LIVE.fetch_add(by as isize, Relaxed) + by as isize;
    PEAK.fetch_max(now, Relaxed);
    if now > LIMIT.load(Relaxed) {
        over(now);
    }
}

#[cold]
fn over(now: isize) -> ! {
    use std::io::Write;
    ENABLED.store(false, Relaxed);
    // Formatting straight into unbuffered stderr does not allocate.
    let _ = writeln!(
        std::io::stderr(),
        "error: input seed {} took {now} bytes of heap, over the limit of {}",
        INPUT.load(Relaxed),
        LIMIT.load(Relaxed)
    );
    std::process::abort()
}

// SAFETY: every call is forwarded to `System` unchanged; only counters are updated.
unsafe impl GlobalAlloc for Watching {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if ENABLED.load(Relaxed) {
            grew(l.size());
        }
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        if ENABLED.load(Relaxed) {
            grew(l.size());
        }
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        if ENABLED.load(Relaxed) {
            LIVE.fetch_sub(l.size() as isize, Relaxed);
        }
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        if ENABLED.load(Relaxed) {
            if new >= l.size() {
                grew(new - l.size());
            } else {
                LIVE.fetch_sub((l.size() - new) as isize, Relaxed);
            }
        }
        unsafe { System.realloc(p, l, new) }
    }
}
