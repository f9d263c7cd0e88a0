#![doc = include_str!("../README.md")]

mod conf;
mod heap;
mod report;

pub use conf::{MallocConf, NEVER_PURGE};
pub use heap::{Counted, heap_live, heap_peak, reset_heap_peak};
pub use report::{AllocatorReport, ReadBackError, read_back};
#[doc(hidden)]
pub use tikv_jemallocator::Jemalloc;

/// Installs jemalloc, counting its live bytes ([`Counted`]), as the global allocator and
/// exports the never-purge policy as `_rjem_malloc_conf`. Invoke it once, at the root of a binary crate.
///
/// ```ignore
/// ballast_allocator::install!();
/// ```
#[macro_export]
macro_rules! install {
    () => {
        #[global_allocator]
        static BALLAST_ALLOCATOR: $crate::Counted = $crate::Counted;

        /// jemalloc's compile-time configuration, read before `main`. It must live in the
        /// binary crate: see the `ballast-allocator` documentation.
        #[unsafe(export_name = "_rjem_malloc_conf")]
        pub static BALLAST_MALLOC_CONF: $crate::MallocConf =
            $crate::MallocConf::new($crate::NEVER_PURGE);
    };
}
