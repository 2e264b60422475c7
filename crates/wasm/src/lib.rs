//! The simulator in a browser tab: `schedlab-run` compiled to `wasm32-unknown-unknown` behind
//! one C-ABI call that takes a JSON request and answers JSON (`web/worker.js` is its glue;
//! `docs/playground.md` describes the page).
//!
//! The page writes a request into memory from [`schedlab_alloc`], calls [`schedlab_call`]
//! (which returns the answer's length) and reads the answer at [`schedlab_out_ptr`]. The
//! requests and answers are [`api`]'s; a run goes through `RunSpec::run_with` as every front
//! end does, so the record and its trace hash are the CLI's.
//!
//! The module imports two functions from the `schedlab` namespace: `progress(now_ns) -> u32`
//! (the run's simulated clock every `PROGRESS_EVENTS` events; 0 ends the run early) and
//! `panicked(ptr, len)` (a panic's message, before the module traps).
//!
//! Built natively too (an `rlib`), so the calls are tested without a browser.

pub mod api;
mod examples;
mod timeline;

pub use examples::{RTAPP, WORKLOADS};

use std::cell::RefCell;

thread_local! {
    /// The last answer, kept until the next call so the page can copy it out.
    static OUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Allocates `len` bytes for a request (freed with [`schedlab_free`]).
#[no_mangle]
pub extern "C" fn schedlab_alloc(len: usize) -> *mut u8 {
    let mut v = std::mem::ManuallyDrop::new(Vec::<u8>::with_capacity(len.max(1)));
    v.as_mut_ptr()
}

/// Frees what [`schedlab_alloc`] returned.
///
/// # Safety
/// `ptr` must come from `schedlab_alloc(len)` and not have been freed.
#[no_mangle]
pub unsafe extern "C" fn schedlab_free(ptr: *mut u8, len: usize) {
    // SAFETY: the caller passes back an allocation of capacity `len.max(1)` from schedlab_alloc.
    drop(unsafe { Vec::from_raw_parts(ptr, 0, len.max(1)) });
}

/// Answers the JSON request in `ptr[..len]` ([`api::call`]) and returns the answer's length;
/// the answer is at [`schedlab_out_ptr`] until the next call.
///
/// # Safety
/// `ptr[..len]` must be readable (a request the page wrote into [`schedlab_alloc`]'s memory).
#[no_mangle]
pub unsafe extern "C" fn schedlab_call(ptr: *const u8, len: usize) -> usize {
    install_panic_hook();
    // SAFETY: the caller wrote `len` bytes at `ptr`.
    let request = unsafe { std::slice::from_raw_parts(ptr, len) };
    let answer = api::call(request, &mut host_progress);
    OUT.with(|o| {
        let mut o = o.borrow_mut();
        *o = answer.into_bytes();
        o.len()
    })
}

/// Where the last answer of [`schedlab_call`] is.
#[no_mangle]
pub extern "C" fn schedlab_out_ptr() -> *const u8 {
    OUT.with(|o| o.borrow().as_ptr())
}

#[cfg(target_arch = "wasm32")]
#[link(wasm_import_module = "schedlab")]
extern "C" {
    fn progress(now_ns: f64) -> u32;
    fn panicked(ptr: *const u8, len: usize);
}

/// The page's progress callback: the clock goes out, whether to go on comes back.
#[cfg(target_arch = "wasm32")]
fn host_progress(now: schedlab_sim::Ns) -> bool {
    // SAFETY: an import of the page's glue taking a number.
    unsafe { progress(now.0 as f64) != 0 }
}

#[cfg(not(target_arch = "wasm32"))]
fn host_progress(_now: schedlab_sim::Ns) -> bool {
    true
}

/// A panic is a bug; its message goes to the page (the module then traps, and the page
/// says so) rather than being lost in an `unreachable` trap.
fn install_panic_hook() {
    #[cfg(target_arch = "wasm32")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            std::panic::set_hook(Box::new(|info| {
                let msg = info.to_string();
                // SAFETY: an import of the page's glue reading `len` bytes at `ptr`.
                unsafe { panicked(msg.as_ptr(), msg.len()) }
            }))
        });
    }
}
