//! Finding the GPU: whether a driver and a device are usable, what the device is, and the
//! [`Launcher`] that runs the kernels on it.
//!
//! `cudarc` panics on its first driver call when `libcuda` cannot be loaded, so
//! [`CudaDevice::open`] first checks that the library loads, then that the driver is new
//! enough for the committed PTX, and only then initialises CUDA, opens device 0 and loads
//! the kernels. The outcome, device or reason, is cached for the whole process. Nothing
//! here chooses between backends; the caller does.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use cudarc::driver::sys::CUdevice_attribute::{
    CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DriverError, LaunchConfig, PushKernelArg, sys,
};
use cudarc::nvrtc::Ptx;

use crate::CudaError;
use crate::kernels::{Arg, Kernel, Launcher, Module, grid};

/// The oldest CUDA version, as the driver reports it (1000·major + 10·minor), whose driver
/// JIT-compiles the committed PTX (ISA 8.7, from NVRTC 12.8): 12.8, driver 570.
pub const MIN_DRIVER_CUDA_VERSION: i32 = 12_080;

/// What the driver says about the device the backend uses (device 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The device's name, e.g. "NVIDIA H200".
    pub name: String,
    /// Compute capability (major, minor), e.g. (9, 0).
    pub compute_capability: (i32, i32),
    /// Device memory in bytes.
    pub total_memory_bytes: u64,
    /// The CUDA version the driver supports, 1000·major + 10·minor.
    pub driver_cuda_version: i32,
    /// Streaming multiprocessors.
    pub multiprocessors: u32,
    /// Peak memory clock in kHz.
    pub memory_clock_khz: u32,
    /// Global memory bus width in bits.
    pub memory_bus_width_bits: u32,
    /// Time the driver took to load (JIT-compile, or read from its cache) the kernels.
    pub kernel_load_time: Duration,
}

impl DeviceInfo {
    /// The driver's CUDA version as "major.minor".
    pub fn driver_cuda_version_string(&self) -> String {
        cuda_version_string(self.driver_cuda_version)
    }

    /// Theoretical peak memory bandwidth in bytes per second: two transfers per clock
    /// (double data rate) over the whole bus.
    pub fn peak_memory_bandwidth(&self) -> u64 {
        2 * u64::from(self.memory_clock_khz) * 1000 * u64::from(self.memory_bus_width_bits) / 8
    }
}

/// "12.8" for 12080.
fn cuda_version_string(version: i32) -> String {
    format!("{}.{}", version / 1000, version % 1000 / 10)
}

/// The device the CUDA backend would use, or why there is none.
///
/// # Errors
/// [`CudaError::NoDriver`], [`CudaError::DriverTooOld`], [`CudaError::NoDevice`], or the
/// driver call that failed while opening the device or loading the kernels.
pub fn probe() -> Result<DeviceInfo, CudaError> {
    CudaDevice::open().map(|device| device.info().clone())
}

/// Device 0 with the kernels loaded: a [`Launcher`] on its default stream.
#[derive(Clone)]
pub struct CudaDevice {
    inner: Arc<Opened>,
}

struct Opened {
    info: DeviceInfo,
    stream: Arc<CudaStream>,
    /// Indexed by `Kernel as usize`.
    functions: Vec<CudaFunction>,
}

impl CudaDevice {
    /// Opens device 0 and loads the kernels, once per process.
    ///
    /// # Errors
    /// As [`probe`].
    pub fn open() -> Result<Self, CudaError> {
        static OPENED: OnceLock<Result<CudaDevice, CudaError>> = OnceLock::new();
        OPENED.get_or_init(open_device_zero).clone()
    }

    /// What the driver says about the device.
    pub fn info(&self) -> &DeviceInfo {
        &self.inner.info
    }

    fn stream(&self) -> &Arc<CudaStream> {
        &self.inner.stream
    }
}

/// Maps a driver error to a [`CudaError`] that says what was being done.
fn during(what: &'static str) -> impl Fn(DriverError) -> CudaError {
    move |err| CudaError::Driver {
        during: what,
        message: match err.error_string() {
            Ok(text) => format!("{:?} ({})", err.0, text.to_string_lossy()),
            Err(_) => format!("{:?}", err.0),
        },
    }
}

fn open_device_zero() -> Result<CudaDevice, CudaError> {
    // SAFETY: this only dlopen()s the driver library under the names cudarc itself tries;
    // no CUDA function is called. It must come first: cudarc panics on any driver call
    // when the library cannot be loaded.
    if !unsafe { sys::is_culib_present() } {
        return Err(CudaError::NoDriver);
    }
    let mut version = 0;
    // SAFETY: the library loads (checked above); cuDriverGetVersion needs no cuInit and
    // writes one int through a valid pointer.
    unsafe { sys::cuDriverGetVersion(&raw mut version) }
        .result()
        .map_err(during("reading the driver version"))?;
    if version < MIN_DRIVER_CUDA_VERSION {
        return Err(CudaError::DriverTooOld {
            found: cuda_version_string(version),
            required: cuda_version_string(MIN_DRIVER_CUDA_VERSION),
        });
    }
    match CudaContext::device_count() {
        Ok(n) if n > 0 => {}
        Ok(_) | Err(DriverError(sys::CUresult::CUDA_ERROR_NO_DEVICE)) => {
            return Err(CudaError::NoDevice);
        }
        Err(err) => return Err(during("initialising the driver")(err)),
    }
    let ctx = CudaContext::new(0).map_err(during("opening device 0"))?;
    let attribute = |attribute| {
        ctx.attribute(attribute)
            .map_err(during("reading the device's attributes"))
    };
    let non_negative = |v: i32| u32::try_from(v).unwrap_or(0);
    let multiprocessors = non_negative(attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?);
    let memory_clock_khz = non_negative(attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)?);
    let memory_bus_width_bits =
        non_negative(attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?);
    let name = ctx.name().map_err(during("reading the device's name"))?;
    let compute_capability = ctx
        .compute_capability()
        .map_err(during("reading the compute capability"))?;
    let total_memory_bytes = ctx
        .total_mem()
        .map_err(during("reading the device's memory size"))? as u64;

    let started = Instant::now();
    let mut modules = Vec::with_capacity(Module::ALL.len());
    for module in Module::ALL {
        modules.push(
            ctx.load_module(Ptx::from_src(module.ptx()))
                .map_err(during("loading the kernels (PTX ISA 8.7)"))?,
        );
    }
    let functions = Kernel::ALL
        .iter()
        .map(|k| modules[k.module() as usize].load_function(k.name()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(during("finding a kernel in its module"))?;
    let kernel_load_time = started.elapsed();

    Ok(CudaDevice {
        inner: Arc::new(Opened {
            info: DeviceInfo {
                name,
                compute_capability,
                total_memory_bytes,
                driver_cuda_version: version,
                multiprocessors,
                memory_clock_khz,
                memory_bus_width_bits,
                kernel_load_time,
            },
            stream: ctx.default_stream(),
            functions,
        }),
    })
}

impl Launcher for CudaDevice {
    type Buffer = CudaSlice<u64>;
    const NAME: &'static str = "cuda";

    fn upload(&self, words: &[u64]) -> Result<Self::Buffer, CudaError> {
        if words.is_empty() {
            return self.alloc(0);
        }
        self.stream()
            .clone_htod(words)
            .map_err(during("copying to the device"))
    }

    fn alloc(&self, len: usize) -> Result<Self::Buffer, CudaError> {
        // Never zero bytes: the driver refuses empty allocations.
        self.stream()
            .alloc_zeros::<u64>(len.max(1))
            .map_err(during("allocating device memory"))
    }

    fn alloc_uninit(&self, len: usize) -> Result<Self::Buffer, CudaError> {
        // SAFETY: cudarc's `alloc` is unsafe because the memory is uninitialised. `u64` has
        // no invalid bit patterns, and the launch sequences call this only for buffers the
        // kernels queued right after it on this stream write completely (every LDE word by
        // `lde_scatter`, every digest by the leaf launch and the level launches) before
        // any kernel reads them or `download` copies them. Never zero bytes, as in `alloc`.
        unsafe { self.stream().alloc::<u64>(len.max(1)) }
            .map_err(during("allocating device memory"))
    }

    fn download(&self, buffer: &Self::Buffer, len: usize) -> Result<Vec<u64>, CudaError> {
        let view = buffer.try_slice(..len).ok_or_else(|| {
            CudaError::Input(format!(
                "{len} words to download from a buffer of {}",
                buffer.len()
            ))
        })?;
        // Wait for the launches first: a kernel that failed (an illegal address, say) leaves
        // a sticky error that the next call on the stream reports, and it should read as a
        // kernel failure, not as a failed copy.
        self.stream()
            .synchronize()
            .map_err(during("running the kernels"))?;
        let words = self
            .stream()
            .clone_dtoh(&view)
            .map_err(during("copying from the device"))?;
        // The copy lands in pageable memory, which the driver completes before returning;
        // synchronising again costs nothing on an idle stream and makes that explicit.
        self.stream()
            .synchronize()
            .map_err(during("copying from the device"))?;
        Ok(words)
    }

    fn launch(
        &self,
        kernel: Kernel,
        threads: u64,
        args: &[Arg<'_, Self::Buffer>],
    ) -> Result<(), CudaError> {
        let (blocks, block) = grid(threads)?;
        let config = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        };
        let function = &self.inner.functions[kernel as usize];
        let mut builder = self.stream().launch_builder(function);
        for arg in args {
            match arg {
                Arg::Buffer(buffer) => builder.arg(*buffer),
                Arg::Word(word) => builder.arg(word),
            };
        }
        // SAFETY: `args` follow the kernel's parameter list as `Kernel` documents it (the
        // emulation test runs the same lists against the same sources): buffers are
        // `u64*` device pointers that outlive the launch on this stream, scalars are u64.
        // Each kernel returns early past `count` and indexes within the buffer sizes the
        // launch sequences in `kernels` allocate.
        unsafe { builder.launch(config) }.map_err(during("launching a kernel"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_bandwidth_read_as_documented() {
        assert_eq!(cuda_version_string(12_080), "12.8");
        assert_eq!(cuda_version_string(13_000), "13.0");
        let info = DeviceInfo {
            name: "test".into(),
            compute_capability: (9, 0),
            total_memory_bytes: 0,
            driver_cuda_version: 12_090,
            multiprocessors: 132,
            memory_clock_khz: 2_619_000,
            memory_bus_width_bits: 5120,
            kernel_load_time: Duration::ZERO,
        };
        // H100 SXM's published figures: about 3.35 TB/s.
        assert_eq!(info.peak_memory_bandwidth(), 3_352_320_000_000);
        assert_eq!(info.driver_cuda_version_string(), "12.9");
    }

    #[test]
    fn probing_never_panics_and_is_stable() {
        // Without a driver this is an error, with one a device; either way twice the same.
        assert_eq!(probe(), probe());
    }
}
