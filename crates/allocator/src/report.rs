//! What the running jemalloc says it uses.

use std::ffi::{CStr, c_char};

use thiserror::Error;
use tikv_jemalloc_ctl::{raw, version};

/// A mallctl read that failed.
#[derive(Debug, Error)]
#[error("jemalloc mallctl {name}: {source}")]
pub struct ReadBackError {
    name: &'static str,
    source: tikv_jemalloc_ctl::Error,
}

/// The allocator's configuration, read back from jemalloc in this process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllocatorReport {
    /// jemalloc's version string.
    pub version: String,
    /// `opt.dirty_decay_ms` (−1: never purge dirty pages).
    pub dirty_decay_ms: isize,
    /// `opt.muzzy_decay_ms` (−1: never purge muzzy pages).
    pub muzzy_decay_ms: isize,
    /// `opt.background_thread`.
    pub background_thread: bool,
    /// `arenas.page`: the page size jemalloc was configured with.
    pub page_size: usize,
    /// `opt.malloc_conf.global_var`: the string jemalloc read from `_rjem_malloc_conf`, or
    /// `None` when no definition overrode its own empty default.
    pub global_conf: Option<String>,
}

/// Reads the configuration jemalloc is running with. Allocates first, so jemalloc is
/// initialised even if nothing has allocated yet.
///
/// # Errors
/// If a mallctl is unavailable (a jemalloc other than the bundled one).
pub fn read_back() -> Result<AllocatorReport, ReadBackError> {
    std::hint::black_box(vec![0u8; 1 << 16]);
    let read_isize = |name: &'static str, key: &[u8]| {
        // SAFETY: these mallctls are `ssize_t`; `raw::read` checks the width.
        unsafe { raw::read::<isize>(key) }.map_err(|source| ReadBackError { name, source })
    };
    Ok(AllocatorReport {
        version: version::read()
            .map_err(|source| ReadBackError {
                name: "version",
                source,
            })?
            .trim_end_matches('\0')
            .to_owned(),
        dirty_decay_ms: read_isize("opt.dirty_decay_ms", b"opt.dirty_decay_ms\0")?,
        muzzy_decay_ms: read_isize("opt.muzzy_decay_ms", b"opt.muzzy_decay_ms\0")?,
        background_thread: tikv_jemalloc_ctl::opt::background_thread::read().map_err(|source| {
            ReadBackError {
                name: "opt.background_thread",
                source,
            }
        })?,
        // SAFETY: `arenas.page` is a `size_t`.
        page_size: unsafe { raw::read::<usize>(b"arenas.page\0") }.map_err(|source| {
            ReadBackError {
                name: "arenas.page",
                source,
            }
        })?,
        global_conf: read_conf_string(b"opt.malloc_conf.global_var\0"),
    })
}

/// A `const char *` option that exists only when its source was present.
fn read_conf_string(key: &[u8]) -> Option<String> {
    // SAFETY: the option is a `const char *`; jemalloc keeps the string alive for the
    // process's lifetime and the pointer is checked for NULL before reading.
    unsafe {
        let ptr = raw::read::<*const c_char>(key).ok()?;
        (!ptr.is_null()).then(|| CStr::from_ptr(ptr).to_string_lossy().into_owned())
    }
}
