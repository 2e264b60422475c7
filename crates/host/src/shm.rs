//! Memory shared by every task of a run, threads and forked processes alike: an anonymous
//! `MAP_SHARED` mapping made before any task exists, so a `fork`ed child sees (and
//! updates) the same futex words, task table and workload stream as its parent.

use std::ops::Deref;
use std::ptr::NonNull;

/// Types whose all-zero bit pattern is a valid value (a fresh mapping is zero-filled).
///
/// # Safety
/// Implement only for types made of atomics and integers.
// Only ever named as a bound, which the dead-code lint does not count as a use.
#[allow(dead_code)]
pub unsafe trait ZeroValid {}

// SAFETY: atomics of integers are valid when zero.
unsafe impl ZeroValid for std::sync::atomic::AtomicU32 {}
// SAFETY: as above.
unsafe impl ZeroValid for std::sync::atomic::AtomicU64 {}
// SAFETY: as above.
unsafe impl ZeroValid for std::sync::atomic::AtomicBool {}

/// `len` values of `T` in a shared mapping, unmapped on drop.
pub struct Shared<T> {
    ptr: NonNull<T>,
    len: usize,
    bytes: usize,
}

// SAFETY: the mapping is plain memory; `T`'s own Sync/Send decide what may be shared.
unsafe impl<T: Sync> Sync for Shared<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Send for Shared<T> {}

fn map(bytes: usize) -> Result<NonNull<u8>, String> {
    // SAFETY: an anonymous shared mapping; the result is checked.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes.max(1),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(format!("mmap of {bytes} shared bytes: {}", std::io::Error::last_os_error()));
    }
    NonNull::new(p.cast()).ok_or_else(|| "mmap returned null".to_string())
}

impl<T: ZeroValid> Shared<T> {
    /// `len` zeroed values.
    pub fn zeroed(len: usize) -> Result<Shared<T>, String> {
        let bytes = std::mem::size_of::<T>().saturating_mul(len).max(1);
        Ok(Shared { ptr: map(bytes)?.cast(), len, bytes })
    }
}

impl<T> Shared<T> {
    /// One value, moved into the mapping (for types that must be initialised).
    pub fn one(value: T) -> Result<Shared<T>, String> {
        let bytes = std::mem::size_of::<T>().max(1);
        let ptr: NonNull<T> = map(bytes)?.cast();
        // SAFETY: fresh, aligned (page-aligned) and large enough for one T.
        unsafe { ptr.as_ptr().write(value) };
        Ok(Shared { ptr, len: 1, bytes })
    }
}

impl<T> Deref for Shared<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised values live in the mapping until drop.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        // SAFETY: the values need no drop glue beyond memory (atomics, plain data), and
        // nothing refers to the mapping once its owner is dropped.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.bytes) };
    }
}
