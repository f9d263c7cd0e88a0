//! The configuration string and the type jemalloc reads it through.

use std::ffi::{CStr, c_char};

/// Never return freed pages to the operating system on decay timers.
pub const NEVER_PURGE: &CStr = c"dirty_decay_ms:-1,muzzy_decay_ms:-1";

/// A thin pointer to a NUL-terminated configuration string: the layout of jemalloc's
/// `const char *malloc_conf`. (A `&[u8]` is a fat pointer that happens to work; a byte array
/// is read as a pointer and crashes at start-up.)
#[repr(transparent)]
pub struct MallocConf(*const c_char);

// SAFETY: the pointer targets a `'static` immutable string; sharing it is sound.
unsafe impl Sync for MallocConf {}

impl MallocConf {
    /// Points at `conf`.
    pub const fn new(conf: &'static CStr) -> Self {
        Self(conf.as_ptr())
    }
}
