//! A one-line description of the measuring machine for report headers: CPU model, logical CPU
//! count and kernel.
//!
//! Best effort: anything that cannot be read is reported as `unknown`, never as an error. It does
//! not record load, frequency governors or anything that changes during a run.

use std::fmt;

use serde::Serialize;

/// What the report says about the machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Host {
    /// CPU model name from `/proc/cpuinfo`.
    pub cpu: String,
    /// Logical CPUs available to this process.
    pub cpus: usize,
    /// `uname` system name, release and machine, e.g. `Linux 6.8.0 x86_64`.
    pub kernel: String,
    /// This process's own peak RSS in bytes, read once, when the report is written. Linux carries
    /// the harness's resident size at each spawn into that child's `ru_maxrss`; that share is at
    /// most this value (the peak so far can only grow), so this bounds it from above. It is not a
    /// floor under every child's peak RSS.
    pub harness_rss_bytes: Option<u64>,
}

impl Host {
    /// Reads the description of the current machine.
    pub fn describe() -> Self {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|info| cpu_model(&info))
            .unwrap_or_else(|| "unknown CPU".to_owned());
        let cpus = std::thread::available_parallelism().map_or(0, usize::from);
        Self {
            cpu,
            cpus,
            kernel: uname().unwrap_or_else(|| "unknown kernel".to_owned()),
            harness_rss_bytes: own_peak_rss_bytes(),
        }
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}, {} logical CPUs, {}",
            self.cpu, self.cpus, self.kernel
        )?;
        if let Some(rss) = self.harness_rss_bytes {
            let mib = rss as f64 / (1024.0 * 1024.0);
            write!(
                f,
                "; harness peak RSS {mib:.1} MiB: children's maxrss include up to this much of \
                 the harness at spawn time"
            )?;
        }
        Ok(())
    }
}

/// The first `model name` (x86) or `Model` / `Hardware` (Arm) line of `/proc/cpuinfo`.
fn cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "Model", "Hardware"].iter().find_map(|key| {
        cpuinfo.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim().to_owned())
        })
    })
}

/// `getrusage(RUSAGE_SELF)`'s peak RSS in bytes.
fn own_peak_rss_bytes() -> Option<u64> {
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF).ok()?;
    u64::try_from(usage.max_rss()).ok().map(|kib| kib * 1024)
}

/// `uname -smr`.
fn uname() -> Option<String> {
    let uts = nix::sys::utsname::uname().ok()?;
    Some(format!(
        "{} {} {}",
        uts.sysname().to_string_lossy(),
        uts.release().to_string_lossy(),
        uts.machine().to_string_lossy()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_model_from_cpuinfo() {
        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) X\n";
        assert_eq!(cpu_model(x86).as_deref(), Some("Intel(R) Xeon(R) X"));
        let arm = "processor\t: 0\nBogoMIPS\t: 48.00\n\nModel\t\t: Raspberry Pi 4\n";
        assert_eq!(cpu_model(arm).as_deref(), Some("Raspberry Pi 4"));
        assert_eq!(cpu_model("processor : 0\n"), None);
    }

    #[test]
    fn describes_this_machine() {
        let host = Host::describe();
        assert!(host.cpus >= 1);
        assert!(host.kernel.starts_with("Linux "), "{}", host.kernel);
        assert!(host.harness_rss_bytes.unwrap() > 0);
        assert!(!host.to_string().is_empty());
    }

    #[test]
    fn harness_rss_is_stated_as_an_upper_bound() {
        let mut host = Host {
            cpu: "X".into(),
            cpus: 2,
            kernel: "Linux 6.8.0 x86_64".into(),
            harness_rss_bytes: Some(3 << 19),
        };
        assert_eq!(
            host.to_string(),
            "X, 2 logical CPUs, Linux 6.8.0 x86_64; harness peak RSS 1.5 MiB: children's maxrss \
             include up to this much of the harness at spawn time"
        );
        host.harness_rss_bytes = None;
        assert_eq!(host.to_string(), "X, 2 logical CPUs, Linux 6.8.0 x86_64");
    }
}
