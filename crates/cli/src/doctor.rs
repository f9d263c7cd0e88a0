//! `cli doctor`: what this binary is and what it runs with, read from the running process.

use std::fmt::Write as _;

use anyhow::{Context, Result};
use ballast_allocator::{AllocatorReport, NEVER_PURGE, read_back};
use ballast_cpu::CpuPath;
use ballast_cuda::{DeviceInfo, probe};
use serde::Serialize;

use crate::args::DoctorArgs;
use crate::output::print;
use crate::resources::human_bytes;

#[derive(Serialize)]
struct Doctor {
    version: &'static str,
    git_revision: Option<&'static str>,
    target: &'static str,
    backends: Vec<&'static str>,
    allocator: Allocator,
    environment: Environment,
    threads: usize,
    /// The SIMD path the CPU kernels take in this process.
    cpu_path: &'static str,
    /// Every path this CPU can run, slowest first.
    cpu_paths_supported: Vec<&'static str>,
    cuda: Cuda,
}

#[derive(Serialize)]
struct Allocator {
    name: &'static str,
    version: String,
    /// `_rjem_` when jemalloc read our `_rjem_malloc_conf`, which only the prefixed build does.
    symbol_prefix: Option<&'static str>,
    compiled_conf: Option<String>,
    compiled_conf_is_never_purge: bool,
    dirty_decay_ms: isize,
    muzzy_decay_ms: isize,
    background_thread: bool,
    page_size: usize,
}

#[derive(Serialize)]
struct Environment {
    #[serde(rename = "_RJEM_MALLOC_CONF")]
    rjem_malloc_conf: Option<String>,
    #[serde(rename = "MALLOC_CONF")]
    malloc_conf: Option<String>,
    #[serde(rename = "BALLAST_CPU")]
    ballast_cpu: Option<String>,
}

#[derive(Serialize)]
struct Cuda {
    usable: bool,
    /// The device in one line, or why none is usable.
    detail: String,
    device: Option<CudaDevice>,
}

/// What the driver reports about the device `--backend cuda` would use.
#[derive(Serialize)]
struct CudaDevice {
    name: String,
    /// "major.minor".
    compute_capability: String,
    total_memory_bytes: u64,
    /// Free device memory when the device was opened.
    free_memory_bytes: u64,
    multiprocessors: u32,
    /// The newest CUDA version the driver supports, "major.minor".
    driver_cuda_version: String,
    /// The driver's release, e.g. "570.124.06" (from NVML; null without it).
    driver_release: Option<String>,
    /// Where the driver library was found.
    driver_library: String,
    pci_bus_id: String,
    /// The PCIe link now, e.g. "Gen 5 x16" (from NVML; null without it).
    pcie_link: Option<String>,
    /// The most the link can do.
    pcie_link_max: Option<String>,
    /// Whether MIG mode is on (null where the GPU has none, or without NVML).
    mig_enabled: Option<bool>,
    /// The memory pool's release threshold, read back (18446744073709551615: never hands
    /// memory back to the driver).
    pool_release_threshold: u64,
    memory_clock_khz: u32,
    memory_bus_width_bits: u32,
    /// Memory clock × 2 (double data rate) × bus width.
    peak_memory_bandwidth_bytes_per_second: u64,
    /// How long the driver took to load the kernels (a JIT compile on first use).
    kernel_load_seconds: f64,
}

impl Cuda {
    fn probe() -> Self {
        match probe() {
            Ok(info) => Self {
                usable: true,
                detail: device_line(&info),
                device: Some(CudaDevice {
                    compute_capability: format!(
                        "{}.{}",
                        info.compute_capability.0, info.compute_capability.1
                    ),
                    driver_cuda_version: info.driver_cuda_version_string(),
                    peak_memory_bandwidth_bytes_per_second: info.peak_memory_bandwidth(),
                    kernel_load_seconds: info.kernel_load_time.as_secs_f64(),
                    total_memory_bytes: info.total_memory_bytes,
                    free_memory_bytes: info.free_memory_bytes,
                    driver_release: info.management.driver_release.clone(),
                    driver_library: info.driver_library.clone(),
                    pci_bus_id: info.pci_bus_id.clone(),
                    pcie_link: info.management.pcie_link.map(link),
                    pcie_link_max: info.management.pcie_link_max.map(link),
                    mig_enabled: info.management.mig_enabled,
                    pool_release_threshold: info.pool_release_threshold,
                    multiprocessors: info.multiprocessors,
                    memory_clock_khz: info.memory_clock_khz,
                    memory_bus_width_bits: info.memory_bus_width_bits,
                    name: info.name,
                }),
            },
            Err(reason) => Self {
                usable: false,
                detail: reason.to_string(),
                device: None,
            },
        }
    }
}

/// "Gen 5 x16".
fn link((generation, lanes): (u32, u32)) -> String {
    format!("Gen {generation} x{lanes}")
}

/// "NVIDIA H200, compute capability 9.0, 139.8 GiB (139.2 GiB free), 132 SMs, driver
/// 570.124.06 for CUDA 12.8 (/usr/lib/x86_64-linux-gnu/libcuda.so.1), PCIe Gen 5 x16 (of
/// Gen 5 x16) at 0000:17:00.0, MIG off, peak memory bandwidth 4.8 TB/s, kernels loaded in
/// 0.31 s".
fn device_line(info: &DeviceInfo) -> String {
    let m = &info.management;
    let unknown = || "unknown".to_owned();
    format!(
        "{}, compute capability {}.{}, {} ({} free), {} SMs, driver {} for CUDA {} ({}), PCIe {} (of {}) at {}, MIG {}, memory pool release threshold {}, peak memory bandwidth {:.1} TB/s, kernels loaded in {:.2} s",
        info.name,
        info.compute_capability.0,
        info.compute_capability.1,
        human_bytes(info.total_memory_bytes),
        human_bytes(info.free_memory_bytes),
        info.multiprocessors,
        m.driver_release.clone().unwrap_or_else(unknown),
        info.driver_cuda_version_string(),
        info.driver_library,
        m.pcie_link.map_or_else(unknown, link),
        m.pcie_link_max.map_or_else(unknown, link),
        info.pci_bus_id,
        match m.mig_enabled {
            Some(true) => "on",
            Some(false) => "off",
            None => "unsupported or unknown",
        },
        if info.pool_release_threshold == u64::MAX {
            "maximum (never hands memory back)".to_owned()
        } else {
            human_bytes(info.pool_release_threshold)
        },
        info.peak_memory_bandwidth() as f64 / 1e12,
        info.kernel_load_time.as_secs_f64()
    )
}

/// Runs `cli doctor`.
pub fn run(args: &DoctorArgs) -> Result<()> {
    let report = read_back().context("cannot read jemalloc's configuration")?;
    let cuda = Cuda::probe();
    let mut backends = vec!["cpu"];
    if cuda.usable {
        backends.push("cuda");
    }
    let doctor = Doctor {
        version: env!("CARGO_PKG_VERSION"),
        git_revision: option_env!("BALLAST_GIT_REV"),
        target: env!("BALLAST_TARGET"),
        backends,
        allocator: allocator(report),
        environment: Environment {
            rjem_malloc_conf: env_var("_RJEM_MALLOC_CONF"),
            malloc_conf: env_var("MALLOC_CONF"),
            ballast_cpu: env_var(ballast_cpu::ENV),
        },
        threads: rayon::current_num_threads(),
        cpu_path: ballast_cpu::active().name(),
        cpu_paths_supported: CpuPath::ALL
            .into_iter()
            .filter(|p| p.is_supported())
            .map(CpuPath::name)
            .collect(),
        cuda,
    };
    if args.json {
        let mut json = serde_json::to_string_pretty(&doctor).context("cannot encode JSON")?;
        json.push('\n');
        print(&json)
    } else {
        print(&human(&doctor))
    }
}

fn allocator(r: AllocatorReport) -> Allocator {
    let never_purge = NEVER_PURGE.to_str().expect("ASCII");
    Allocator {
        name: "jemalloc",
        symbol_prefix: r.global_conf.is_some().then_some("_rjem_"),
        compiled_conf_is_never_purge: r.global_conf.as_deref() == Some(never_purge),
        compiled_conf: r.global_conf,
        version: r.version,
        dirty_decay_ms: r.dirty_decay_ms,
        muzzy_decay_ms: r.muzzy_decay_ms,
        background_thread: r.background_thread,
        page_size: r.page_size,
    }
}

fn env_var(name: &str) -> Option<String> {
    std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
}

fn human(d: &Doctor) -> String {
    let a = &d.allocator;
    let unset = |v: &Option<String>| v.clone().unwrap_or_else(|| "unset".into());
    let policy = match (a.dirty_decay_ms, a.muzzy_decay_ms) {
        (-1, -1) => "never purge",
        _ => "purging on decay timers",
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "ballast cli {} ({})",
        d.version,
        d.git_revision.unwrap_or("revision unknown")
    );
    let _ = writeln!(out, "target:     {}", d.target);
    let _ = writeln!(out, "backends:   {}", d.backends.join(", "));
    let _ = writeln!(
        out,
        "allocator:  jemalloc {}, symbol prefix {}",
        a.version,
        a.symbol_prefix
            .unwrap_or("unknown (_rjem_malloc_conf was not read)")
    );
    let _ = writeln!(
        out,
        "            compiled-in conf {}",
        a.compiled_conf
            .as_deref()
            .map_or("none".into(), |c| format!("\"{c}\""))
    );
    let _ = writeln!(
        out,
        "            in effect: dirty_decay_ms {}, muzzy_decay_ms {}, background_thread {} ({policy})",
        a.dirty_decay_ms, a.muzzy_decay_ms, a.background_thread
    );
    let _ = writeln!(out, "            page size {} bytes", a.page_size);
    let _ = writeln!(
        out,
        "environment: _RJEM_MALLOC_CONF {}, MALLOC_CONF {} (ignored by the prefixed jemalloc)",
        unset(&d.environment.rjem_malloc_conf),
        unset(&d.environment.malloc_conf)
    );
    let _ = writeln!(out, "threads:    {}", d.threads);
    let _ = writeln!(
        out,
        "cpu path:   {} ({}; this CPU supports {})",
        d.cpu_path,
        d.environment
            .ballast_cpu
            .as_ref()
            .map_or("detected".into(), |v| format!("BALLAST_CPU={v}")),
        d.cpu_paths_supported.join(", ")
    );
    let _ = writeln!(
        out,
        "cuda:       {}",
        if d.cuda.usable {
            "usable"
        } else {
            "not usable"
        }
    );
    let _ = writeln!(out, "            {}", d.cuda.detail);
    out
}
