//! The prover's heap: bytes live in the allocator now, and the most there have been.
//!
//! [`Counted`] wraps jemalloc and adds every successful allocation's requested size to a
//! live count (and subtracts it on free), keeping the maximum: the peak heap is the most
//! bytes the program held at any moment, exactly, whatever jemalloc keeps mapped beside
//! them (which peak RSS counts). The counters are two relaxed atomics per allocation.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use tikv_jemallocator::Jemalloc;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// jemalloc, counting the bytes live in it ([`heap_live`], [`heap_peak`]).
pub struct Counted;

fn grew(bytes: usize) {
    let live = LIVE.fetch_add(bytes, Relaxed) + bytes;
    PEAK.fetch_max(live, Relaxed);
}

fn shrank(bytes: usize) {
    LIVE.fetch_sub(bytes, Relaxed);
}

// SAFETY: every method forwards to jemalloc with the caller's arguments unchanged and
// returns its result; the counters only observe sizes.
unsafe impl GlobalAlloc for Counted {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `alloc`'s contract, which jemalloc's shares.
        let ptr = unsafe { Jemalloc.alloc(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let ptr = unsafe { Jemalloc.alloc_zeroed(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller passes a block this allocator (jemalloc) returned, with its
        // layout.
        unsafe { Jemalloc.dealloc(ptr, layout) };
        shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `dealloc`, and `new_size` is valid for `layout`'s alignment.
        let new = unsafe { Jemalloc.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                shrank(layout.size() - new_size);
            }
        }
        new
    }
}

/// Bytes allocated and not yet freed (requested sizes), when [`install!`](crate::install)
/// installed the counting allocator; 0 otherwise.
pub fn heap_live() -> usize {
    LIVE.load(Relaxed)
}

/// The most bytes that were live at once since the start or the last [`reset_heap_peak`].
pub fn heap_peak() -> usize {
    PEAK.load(Relaxed)
}

/// Starts a new peak from what is live now.
pub fn reset_heap_peak() {
    PEAK.store(LIVE.load(Relaxed), Relaxed);
}
