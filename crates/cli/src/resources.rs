//! The process's resource usage and the machine's memory, from the kernel.

use std::time::Duration;

/// What `getrusage(RUSAGE_SELF)` reports.
pub struct Usage {
    /// Peak resident set size in bytes.
    pub peak_rss_bytes: u64,
    /// Minor page faults (no I/O: first touch or re-touch of released pages).
    pub minor_faults: u64,
    /// Major page faults (pages read from disk).
    pub major_faults: u64,
    /// CPU time in user mode.
    pub user: Duration,
    /// CPU time in the kernel.
    pub system: Duration,
}

/// This process's usage so far.
pub fn usage() -> Usage {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let time = |tv: libc::timeval| {
        Duration::from_secs(tv.tv_sec as u64) + Duration::from_micros(tv.tv_usec as u64)
    };
    Usage {
        // Linux reports ru_maxrss in KiB.
        peak_rss_bytes: ru.ru_maxrss as u64 * 1024,
        minor_faults: ru.ru_minflt as u64,
        major_faults: ru.ru_majflt as u64,
        user: time(ru.ru_utime),
        system: time(ru.ru_stime),
    }
}

/// Physical memory in bytes, if the kernel says.
pub fn physical_memory() -> Option<u64> {
    // SAFETY: sysconf has no preconditions.
    let (pages, page_size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    (pages > 0 && page_size > 0).then(|| pages as u64 * page_size as u64)
}

/// Bytes in binary units with one decimal: "812.4 MiB".
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_reflects_this_process() {
        let u = usage();
        assert!(
            u.peak_rss_bytes > 1 << 20,
            "a test process uses more than 1 MiB"
        );
        assert!(physical_memory().unwrap() > u.peak_rss_bytes);
    }

    #[test]
    fn bytes_are_humanised() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
    }
}
