//! Finding the GPU: whether a driver and a device are usable, what the device is, and the
//! [`Launcher`] that runs the kernels on it.
//!
//! [`CudaDevice::open`] finds the driver ([`crate::driver`]), checks that it is new enough,
//! initialises CUDA, opens device 0 and loads the kernels; the outcome, device or reason, is
//! cached for the whole process. Device memory comes from the device's default
//! stream-ordered pool with its release threshold at the maximum, so memory freed between
//! segments stays in the pool instead of going back to the driver (jemalloc's never-purge
//! policy, on the device). Copies go through two pinned host buffers allocated once.
//! A kernel fault leaves the context unusable: every later call says so instead of failing
//! obscurely. Nothing here chooses between backends; the caller does.

use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::CudaError;
use crate::driver::{
    self, Api, DevicePtr, ERROR_NO_DEVICE, Found, HOST_ALLOC_PORTABLE, Handle,
    POOL_RELEASE_THRESHOLD, POOL_RESERVED_CURRENT, POOL_RESERVED_HIGH, POOL_USED_CURRENT,
    POOL_USED_HIGH, STREAM_NON_BLOCKING, attribute,
};
use crate::kernels::{Arg, Grid, Kernel, Launcher, Module, Queue};
use crate::nvml::{self, Management};

/// The oldest CUDA version, as the driver reports it (1000·major + 10·minor), the backend
/// runs on: 11.2, whose driver (460) has the stream-ordered allocator. The committed PTX
/// ([`PTX_ISA`]) asks for less.
pub const MIN_DRIVER_CUDA_VERSION: i32 = 11_020;

/// The PTX ISA version of the committed kernels: the lowest that has what they use (PTX
/// for `sm_80` needs 7.0; `ci/check-kernels.sh` checks that ptxas accepts them at this
/// version and refuses the one below). Drivers for CUDA 11.0 and newer JIT-compile it.
pub const PTX_ISA: &str = "7.0";

/// The oldest GPUs the committed PTX (`.target sm_80`) runs on: Ampere.
const MIN_COMPUTE_CAPABILITY: i32 = 8;

/// Bytes of each of the two pinned host buffers that copies go through.
const STAGING_BYTES: usize = 32 << 20;

/// `CU_EVENT_BLOCKING_SYNC`: a host waiting for the event sleeps instead of spinning, so the
/// host's cores stay free for tracing.
const BLOCKING_SYNC: c_uint = 0x1;
/// Flags of the events that time phases.
const TIMING_EVENT: c_uint = BLOCKING_SYNC;
/// Flags of the events that only order work (`CU_EVENT_DISABLE_TIMING` is cheaper).
const TICKET_EVENT: c_uint = BLOCKING_SYNC | 0x2;

/// What the driver says about the device the backend uses (device 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The device's name, e.g. "NVIDIA H200".
    pub name: String,
    /// Compute capability (major, minor), e.g. (9, 0).
    pub compute_capability: (i32, i32),
    /// Device memory in bytes.
    pub total_memory_bytes: u64,
    /// Free device memory when the device was opened, in bytes.
    pub free_memory_bytes: u64,
    /// The CUDA version the driver supports, 1000·major + 10·minor.
    pub driver_cuda_version: i32,
    /// Where the driver library was found.
    pub driver_library: String,
    /// The device's PCI address, e.g. "0000:17:00.0".
    pub pci_bus_id: String,
    /// Streaming multiprocessors.
    pub multiprocessors: u32,
    /// Peak memory clock in kHz.
    pub memory_clock_khz: u32,
    /// Global memory bus width in bits.
    pub memory_bus_width_bits: u32,
    /// The memory pool's release threshold as read back after setting it (`u64::MAX`:
    /// freed memory is never handed back to the driver).
    pub pool_release_threshold: u64,
    /// What the management library says: driver release, PCIe link, MIG mode.
    pub management: Management,
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
/// Why no device is usable: no driver, a stub or an old driver, no device, or the driver
/// call that failed while opening the device or loading the kernels.
pub fn probe() -> Result<DeviceInfo, CudaError> {
    CudaDevice::open().map(|device| device.info().clone())
}

/// Device 0 with the kernels loaded: a [`Launcher`] on one stream of its own.
#[derive(Clone)]
pub struct CudaDevice {
    inner: Arc<Opened>,
}

struct Opened {
    api: &'static Api,
    info: DeviceInfo,
    context: Handle,
    /// Where the kernels and the copies they wait for run.
    stream: Handle,
    /// Where copies sent ahead run, beside the kernels.
    copy_stream: Handle,
    pool: Option<Handle>,
    /// Indexed by `Kernel as usize`.
    functions: Vec<Handle>,
    /// The pinned host buffers copies go through: the stream's, and the copy stream's.
    staging: Mutex<Staging>,
    copy_staging: Mutex<Staging>,
    /// The failure that made the context unusable, once one has.
    lost: Mutex<Option<String>>,
}

// SAFETY: the handles are the driver's, which may be used from any thread once the context
// is made current there (every call does); the staging buffers are behind a mutex.
unsafe impl Send for Opened {}
// SAFETY: as above.
unsafe impl Sync for Opened {}

/// Pinned host memory that copies pass through, and the events that say when each half may
/// be reused.
struct Staging {
    halves: [*mut u64; 2],
    done: [Handle; 2],
}

// SAFETY: pinned host memory and event handles, used under the mutex only.
unsafe impl Send for Staging {}

impl CudaDevice {
    /// Opens device 0 and loads the kernels, once per process.
    ///
    /// # Errors
    /// As [`probe`].
    pub fn open() -> Result<Self, CudaError> {
        static OPENED: OnceLock<Result<CudaDevice, CudaError>> = OnceLock::new();
        let device = OPENED.get_or_init(open_device_zero).clone()?;
        device.usable()?;
        Ok(device)
    }

    /// What the driver says about the device.
    pub fn info(&self) -> &DeviceInfo {
        &self.inner.info
    }

    /// Free and total device memory now, in bytes: free counts what the driver has left and
    /// what the pool holds but does not use (it keeps freed memory, never handing it back).
    ///
    /// # Errors
    /// If the driver fails.
    pub fn memory(&self) -> Result<(u64, u64), CudaError> {
        self.current()?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: two out-pointers to usize.
        let r = unsafe { (self.inner.api.cuMemGetInfo_v2)(&raw mut free, &raw mut total) };
        self.check(r, "reading the free memory")?;
        let held = match self.inner.pool {
            Some(pool) => {
                let reserved = self.pool_attribute(pool, POOL_RESERVED_CURRENT)?;
                reserved.saturating_sub(self.pool_attribute(pool, POOL_USED_CURRENT)?)
            }
            None => 0,
        };
        Ok((free as u64 + held, total as u64))
    }

    /// A 64-bit attribute of the memory pool.
    fn pool_attribute(&self, pool: Handle, attribute: c_int) -> Result<u64, CudaError> {
        let mut value = 0u64;
        // SAFETY: the pool attribute is a 64-bit value written through the pointer.
        let r = unsafe {
            (self.inner.api.cuMemPoolGetAttribute)(
                pool,
                attribute,
                (&raw mut value).cast::<c_void>(),
            )
        };
        self.check(r, "reading the memory pool")?;
        Ok(value)
    }

    /// The memory pool's high-water marks: (in use, held from the driver), in bytes.
    ///
    /// # Errors
    /// If the driver fails; `None` when the device has no memory pools.
    pub fn pool_high_water(&self) -> Result<Option<(u64, u64)>, CudaError> {
        let Some(pool) = self.inner.pool else {
            return Ok(None);
        };
        self.current()?;
        Ok(Some((
            self.pool_attribute(pool, POOL_USED_HIGH)?,
            self.pool_attribute(pool, POOL_RESERVED_HIGH)?,
        )))
    }

    /// Fails with [`CudaError::ContextLost`] once a kernel has faulted.
    fn usable(&self) -> Result<(), CudaError> {
        match &*self.inner.lost.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(reason) => Err(CudaError::ContextLost(reason.clone())),
            None => Ok(()),
        }
    }

    /// Makes the context current on this thread.
    fn current(&self) -> Result<(), CudaError> {
        self.usable()?;
        // SAFETY: the context is the device's primary context, retained for the process.
        let r = unsafe { (self.inner.api.cuCtxSetCurrent)(self.inner.context) };
        self.check(r, "making the CUDA context current")
    }

    /// Checks a driver result; a fault that leaves the context unusable is remembered.
    fn check(&self, result: c_int, during: &'static str) -> Result<(), CudaError> {
        let outcome = self.inner.api.check(result, during);
        if let Err(err) = &outcome
            && sticky(result)
        {
            let mut lost = self.inner.lost.lock().unwrap_or_else(|e| e.into_inner());
            lost.get_or_insert_with(|| err.to_string());
        }
        outcome
    }

    fn synchronize(&self, during: &'static str) -> Result<(), CudaError> {
        // SAFETY: the stream belongs to the current context.
        let r = unsafe { (self.inner.api.cuStreamSynchronize)(self.inner.stream) };
        self.check(r, during)
    }
}

/// Whether a driver error leaves the context unusable (a kernel fault is sticky: every later
/// call returns it).
fn sticky(result: c_int) -> bool {
    // CUDA_ERROR_ILLEGAL_ADDRESS 700, LAUNCH_TIMEOUT 702, ASSERT 710, HARDWARE_STACK_ERROR 714,
    // ILLEGAL_INSTRUCTION 715, MISALIGNED_ADDRESS 716, INVALID_ADDRESS_SPACE 717,
    // INVALID_PC 718, LAUNCH_FAILED 719.
    matches!(result, 700 | 702 | 710 | 714..=719)
}

fn open_device_zero() -> Result<CudaDevice, CudaError> {
    let api = match driver::driver() {
        Found::Driver(api) => api,
        Found::Stubs(paths) => return Err(CudaError::StubDriver(paths.join(", "))),
        Found::Broken(reason) => return Err(CudaError::BrokenDriver(reason.clone())),
        Found::Nothing => return Err(CudaError::NoDriver),
    };
    let mut version = 0;
    // SAFETY: writes one int; needs no cuInit.
    api.check(
        unsafe { (api.cuDriverGetVersion)(&raw mut version) },
        "reading the driver version",
    )?;
    if version < MIN_DRIVER_CUDA_VERSION {
        return Err(CudaError::DriverTooOld {
            found: cuda_version_string(version),
            required: cuda_version_string(MIN_DRIVER_CUDA_VERSION),
        });
    }
    // SAFETY: flags must be 0.
    let r = unsafe { (api.cuInit)(0) };
    if r == ERROR_NO_DEVICE {
        return Err(CudaError::NoDevice);
    }
    api.check(r, "initialising the driver")?;
    let mut count = 0;
    // SAFETY: writes one int.
    api.check(
        unsafe { (api.cuDeviceGetCount)(&raw mut count) },
        "counting devices",
    )?;
    if count == 0 {
        return Err(CudaError::NoDevice);
    }
    let mut device = 0;
    // SAFETY: ordinal 0 exists (count > 0).
    api.check(
        unsafe { (api.cuDeviceGet)(&raw mut device, 0) },
        "opening device 0",
    )?;
    let attribute = |which: c_int| -> Result<u32, CudaError> {
        let mut value = 0;
        // SAFETY: writes one int for a valid attribute of a valid device.
        api.check(
            unsafe { (api.cuDeviceGetAttribute)(&raw mut value, which, device) },
            "reading the device's attributes",
        )?;
        Ok(u32::try_from(value).unwrap_or(0))
    };
    let text = |f: unsafe extern "C" fn(*mut c_char, c_int, i32) -> c_int,
                during: &'static str|
     -> Result<String, CudaError> {
        let mut buffer = [0u8; 128];
        // SAFETY: the driver writes at most `len` bytes of a string into the buffer.
        api.check(
            unsafe { f(buffer.as_mut_ptr().cast(), 127, device) },
            during,
        )?;
        Ok(CStr::from_bytes_until_nul(&buffer)
            .map_or_else(|_| String::new(), |s| s.to_string_lossy().into_owned()))
    };
    let name = text(api.cuDeviceGetName, "reading the device's name")?;
    let pci_bus_id = text(api.cuDeviceGetPCIBusId, "reading the device's PCI address")?;
    let mut total = 0usize;
    // SAFETY: writes one usize.
    api.check(
        unsafe { (api.cuDeviceTotalMem_v2)(&raw mut total, device) },
        "reading the device's memory size",
    )?;
    let mut context: Handle = std::ptr::null_mut();
    // SAFETY: retains the device's primary context for the rest of the process.
    api.check(
        unsafe { (api.cuDevicePrimaryCtxRetain)(&raw mut context, device) },
        "opening the device's context",
    )?;
    // SAFETY: a valid context.
    api.check(
        unsafe { (api.cuCtxSetCurrent)(context) },
        "making the CUDA context current",
    )?;
    let (mut free, mut total_now) = (0usize, 0usize);
    // SAFETY: two out-pointers.
    api.check(
        unsafe { (api.cuMemGetInfo_v2)(&raw mut free, &raw mut total_now) },
        "reading the free memory",
    )?;
    let stream = create_stream(api)?;
    let copy_stream = create_stream(api)?;
    let (pool, pool_release_threshold) = if attribute(attribute::MEMORY_POOLS)? == 0 {
        return Err(CudaError::Driver {
            during: "opening device 0",
            message: "the device has no stream-ordered memory pools".into(),
        });
    } else {
        let mut pool: Handle = std::ptr::null_mut();
        // SAFETY: writes the device's default pool.
        api.check(
            unsafe { (api.cuDeviceGetDefaultMemPool)(&raw mut pool, device) },
            "reading the device's memory pool",
        )?;
        // Never hand freed memory back to the driver: the never-purge policy on the device.
        let mut threshold = u64::MAX;
        // SAFETY: the release threshold is a 64-bit value read through the pointer.
        api.check(
            unsafe {
                (api.cuMemPoolSetAttribute)(
                    pool,
                    POOL_RELEASE_THRESHOLD,
                    (&raw mut threshold).cast::<c_void>(),
                )
            },
            "setting the memory pool's release threshold",
        )?;
        let mut read_back = 0u64;
        // SAFETY: as above, written through the pointer.
        api.check(
            unsafe {
                (api.cuMemPoolGetAttribute)(
                    pool,
                    POOL_RELEASE_THRESHOLD,
                    (&raw mut read_back).cast::<c_void>(),
                )
            },
            "reading the memory pool's release threshold",
        )?;
        (Some(pool), read_back)
    };

    let compute_capability = (
        attribute(attribute::CAPABILITY_MAJOR)? as i32,
        attribute(attribute::CAPABILITY_MINOR)? as i32,
    );
    if compute_capability.0 < MIN_COMPUTE_CAPABILITY {
        return Err(CudaError::Driver {
            during: "opening device 0",
            message: format!(
                "{name} has compute capability {}.{}; the kernels are built for {MIN_COMPUTE_CAPABILITY}.0 (Ampere) and newer",
                compute_capability.0, compute_capability.1
            ),
        });
    }
    let started = Instant::now();
    let mut modules = Vec::with_capacity(Module::ALL.len());
    for module in Module::ALL {
        let ptx = std::ffi::CString::new(module.ptx()).expect("PTX has no NUL");
        let mut handle: Handle = std::ptr::null_mut();
        // SAFETY: a NUL-terminated PTX image the driver JIT-compiles and copies.
        api.check(
            unsafe { (api.cuModuleLoadData)(&raw mut handle, ptx.as_ptr().cast()) },
            "loading the kernels",
        )?;
        modules.push(handle);
    }
    let mut functions = Vec::with_capacity(Kernel::ALL.len());
    for kernel in Kernel::ALL {
        let name = std::ffi::CString::new(kernel.name()).expect("names have no NUL");
        let mut function: Handle = std::ptr::null_mut();
        // SAFETY: a loaded module and a NUL-terminated name.
        api.check(
            unsafe {
                (api.cuModuleGetFunction)(
                    &raw mut function,
                    modules[kernel.module() as usize],
                    name.as_ptr(),
                )
            },
            "finding a kernel in its module",
        )?;
        functions.push(function);
    }
    let kernel_load_time = started.elapsed();

    let staging = Staging::new(api)?;
    let copy_staging = Staging::new(api)?;

    Ok(CudaDevice {
        inner: Arc::new(Opened {
            api,
            info: DeviceInfo {
                name,
                compute_capability,
                total_memory_bytes: total as u64,
                free_memory_bytes: free as u64,
                driver_cuda_version: version,
                driver_library: api.path.clone(),
                pci_bus_id: pci_bus_id.clone(),
                multiprocessors: attribute(attribute::MULTIPROCESSORS)?,
                memory_clock_khz: attribute(attribute::MEMORY_CLOCK_KHZ)?,
                memory_bus_width_bits: attribute(attribute::MEMORY_BUS_WIDTH)?,
                pool_release_threshold,
                management: nvml::read(&pci_bus_id, &api.path),
                kernel_load_time,
            },
            context,
            stream,
            copy_stream,
            pool,
            functions,
            staging: Mutex::new(staging),
            copy_staging: Mutex::new(copy_staging),
            lost: Mutex::new(None),
        }),
    })
}

/// A stream of the current context that does not wait for the legacy default stream.
fn create_stream(api: &Api) -> Result<Handle, CudaError> {
    let mut stream: Handle = std::ptr::null_mut();
    // SAFETY: creates a stream in the current context.
    api.check(
        unsafe { (api.cuStreamCreate)(&raw mut stream, STREAM_NON_BLOCKING) },
        "creating a stream",
    )?;
    Ok(stream)
}

impl Staging {
    /// Two pinned halves of [`STAGING_BYTES`] and their events, for the process's life.
    fn new(api: &Api) -> Result<Self, CudaError> {
        let mut halves = [std::ptr::null_mut::<u64>(); 2];
        let mut done = [std::ptr::null_mut(); 2];
        for (half, event) in halves.iter_mut().zip(&mut done) {
            let mut ptr: *mut c_void = std::ptr::null_mut();
            // SAFETY: page-locked host memory for the process's lifetime.
            api.check(
                unsafe { (api.cuMemHostAlloc)(&raw mut ptr, STAGING_BYTES, HOST_ALLOC_PORTABLE) },
                "allocating pinned host memory",
            )?;
            *half = ptr.cast();
            // SAFETY: an event in the current context.
            api.check(
                unsafe { (api.cuEventCreate)(event, TICKET_EVENT) },
                "creating an event",
            )?;
        }
        Ok(Self { halves, done })
    }
}

/// Device memory from the pool, returned to it (not to the driver) when dropped.
pub struct DeviceBuffer {
    ptr: DevicePtr,
    len: usize,
    device: Arc<Opened>,
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        let api = self.device.api;
        // SAFETY: a pointer cuMemAllocAsync returned, freed once, ordered on the stream
        // after every launch that used it. Errors (a lost context) leave nothing to free.
        unsafe {
            (api.cuCtxSetCurrent)(self.device.context);
            (api.cuMemFreeAsync)(self.ptr, self.device.stream);
        }
    }
}

/// A point on one of the device's streams: an event.
pub struct DeviceEvent {
    event: Handle,
    api: &'static Api,
    context: Handle,
}

// SAFETY: an event handle of the process's context, usable from any thread once the context
// is current there (every call, and the drop, make it so).
unsafe impl Send for DeviceEvent {}

impl Drop for DeviceEvent {
    fn drop(&mut self) {
        // SAFETY: the process's context, and an event this value created, destroyed once.
        unsafe {
            (self.api.cuCtxSetCurrent)(self.context);
            (self.api.cuEventDestroy_v2)(self.event);
        }
    }
}

fn range_check(len: usize, offset: usize, words: usize) -> Result<(), CudaError> {
    if offset.checked_add(words).is_none_or(|end| end > len) {
        return Err(CudaError::Input(format!(
            "words {offset}..{} of a buffer of {len}",
            offset.saturating_add(words)
        )));
    }
    Ok(())
}

impl CudaDevice {
    /// Copies `words` into `buffer` at `offset` on `stream`, through the pinned `staging`
    /// halves: the host copies a chunk into one half while the previous chunk goes up from
    /// the other.
    fn copy_in(
        &self,
        words: &[u64],
        buffer: &DeviceBuffer,
        offset: usize,
        staging: &Staging,
        stream: Handle,
    ) -> Result<(), CudaError> {
        range_check(buffer.len, offset, words.len())?;
        self.current()?;
        let api = self.inner.api;
        let chunk = STAGING_BYTES / 8;
        for (i, part) in words.chunks(chunk).enumerate() {
            let half = i % 2;
            // The half's previous copy must be done before it is overwritten.
            // SAFETY: an event of this context (recorded, or never: then it is complete).
            self.check(
                unsafe { (api.cuEventSynchronize)(staging.done[half]) },
                "copying to the device",
            )?;
            // SAFETY: the pinned half holds STAGING_BYTES; `part` is at most that long.
            let pinned =
                unsafe { std::slice::from_raw_parts_mut(staging.halves[half], part.len()) };
            copy_words(part, pinned);
            let dst = buffer.ptr + 8 * (offset + i * chunk) as u64;
            // SAFETY: the range was checked against the buffer; the source is pinned and
            // stays untouched until the event after the copy has passed.
            let r = unsafe {
                (api.cuMemcpyHtoDAsync_v2)(dst, pinned.as_ptr().cast(), part.len() * 8, stream)
            };
            self.check(r, "copying to the device")?;
            // SAFETY: records on a stream of this context.
            let r = unsafe { (api.cuEventRecord)(staging.done[half], stream) };
            self.check(r, "copying to the device")?;
        }
        Ok(())
    }

    /// The stream of a queue.
    fn stream_of(&self, queue: Queue) -> Handle {
        match queue {
            Queue::Compute => self.inner.stream,
            Queue::Copy => self.inner.copy_stream,
        }
    }

    /// An event with `flags`, recorded on `stream` now.
    fn record(&self, stream: Handle, flags: c_uint) -> Result<DeviceEvent, CudaError> {
        self.current()?;
        let api = self.inner.api;
        let mut event: Handle = std::ptr::null_mut();
        // SAFETY: creates an event and records it on a stream of this context.
        self.check(
            unsafe { (api.cuEventCreate)(&raw mut event, flags) },
            "creating an event",
        )?;
        let mark = DeviceEvent {
            event,
            api,
            context: self.inner.context,
        };
        // SAFETY: as above.
        self.check(
            unsafe { (api.cuEventRecord)(event, stream) },
            "recording an event",
        )?;
        Ok(mark)
    }
}

impl Launcher for CudaDevice {
    type Buffer = DeviceBuffer;
    type Mark = DeviceEvent;
    type Ticket = DeviceEvent;
    const NAME: &'static str = "cuda";

    fn alloc(&self, len: usize) -> Result<DeviceBuffer, CudaError> {
        self.current()?;
        let mut ptr = 0;
        // Never zero bytes: the driver refuses empty allocations.
        let bytes = len.max(1) * 8;
        // SAFETY: an out-pointer; the memory comes from the device's default pool.
        let r = unsafe { (self.inner.api.cuMemAllocAsync)(&raw mut ptr, bytes, self.inner.stream) };
        self.check(r, "allocating device memory")?;
        Ok(DeviceBuffer {
            ptr,
            len,
            device: Arc::clone(&self.inner),
        })
    }

    fn buffer_len(buffer: &DeviceBuffer) -> usize {
        buffer.len
    }

    fn upload(&self, words: &[u64], buffer: &DeviceBuffer, offset: usize) -> Result<(), CudaError> {
        let staging = self.inner.staging.lock().unwrap_or_else(|e| e.into_inner());
        self.copy_in(words, buffer, offset, &staging, self.inner.stream)
    }

    fn upload_ahead(&self, words: &[u64], buffer: &DeviceBuffer) -> Result<(), CudaError> {
        let staging = self
            .inner
            .copy_staging
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        self.copy_in(words, buffer, 0, &staging, self.inner.copy_stream)
    }

    fn signal(&self, queue: Queue) -> Result<DeviceEvent, CudaError> {
        self.record(self.stream_of(queue), TICKET_EVENT)
    }

    fn wait_for(&self, queue: Queue, ticket: &DeviceEvent) -> Result<(), CudaError> {
        self.current()?;
        // SAFETY: an event recorded on a stream of this context; the queue's later work
        // waits for it.
        let r =
            unsafe { (self.inner.api.cuStreamWaitEvent)(self.stream_of(queue), ticket.event, 0) };
        self.check(r, "ordering a copy")
    }

    fn download(
        &self,
        buffer: &DeviceBuffer,
        offset: usize,
        out: &mut [u64],
    ) -> Result<(), CudaError> {
        range_check(buffer.len, offset, out.len())?;
        self.current()?;
        // The launches first: a kernel that failed shows here as a kernel failure, not as a
        // failed copy.
        self.synchronize("running the kernels")?;
        let api = self.inner.api;
        let staging = self.inner.staging.lock().unwrap_or_else(|e| e.into_inner());
        let chunk = STAGING_BYTES / 8;
        for (i, part) in out.chunks_mut(chunk).enumerate() {
            let src = buffer.ptr + 8 * (offset + i * chunk) as u64;
            let pinned = staging.halves[0];
            // SAFETY: the range was checked; the pinned buffer holds the chunk.
            let r = unsafe {
                (api.cuMemcpyDtoHAsync_v2)(pinned.cast(), src, part.len() * 8, self.inner.stream)
            };
            self.check(r, "copying from the device")?;
            self.synchronize("copying from the device")?;
            // SAFETY: the copy into the pinned buffer has completed (synchronised).
            let from = unsafe { std::slice::from_raw_parts(pinned, part.len()) };
            copy_words(from, part);
        }
        Ok(())
    }

    fn launch(
        &self,
        kernel: Kernel,
        grid: Grid,
        args: &[Arg<'_, DeviceBuffer>],
    ) -> Result<(), CudaError> {
        self.current()?;
        let mut values: Vec<u64> = args
            .iter()
            .map(|arg| match arg {
                Arg::Buffer(b) => b.ptr,
                Arg::At(b, offset) => b.ptr + 8 * *offset as u64,
                Arg::Word(w) => *w,
            })
            .collect();
        let mut params: Vec<*mut c_void> = values
            .iter_mut()
            .map(|v| std::ptr::from_mut(v).cast())
            .collect();
        let function = self.inner.functions[kernel as usize];
        // SAFETY: the function's parameters are all 64-bit (addresses or u64 scalars), in
        // the order `args` gives them (checked by the emulation against the same sources);
        // `params` and `values` outlive the call, which copies them.
        let r = unsafe {
            (self.inner.api.cuLaunchKernel)(
                function,
                grid.blocks,
                1,
                1,
                grid.threads,
                1,
                1,
                grid.shared_words * 8,
                self.inner.stream,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        self.check(r, "launching a kernel")
    }

    fn mark(&self) -> Result<DeviceEvent, CudaError> {
        self.record(self.inner.stream, TIMING_EVENT)
    }

    fn elapsed(&self, from: &DeviceEvent, to: &DeviceEvent) -> Result<Duration, CudaError> {
        self.current()?;
        let api = self.inner.api;
        // SAFETY: events recorded on this context's stream.
        self.check(
            unsafe { (api.cuEventSynchronize)(to.event) },
            "timing the kernels",
        )?;
        let mut ms = 0f32;
        // SAFETY: both events have completed.
        self.check(
            unsafe { (api.cuEventElapsedTime)(&raw mut ms, from.event, to.event) },
            "timing the kernels",
        )?;
        Ok(Duration::from_secs_f64(f64::from(ms) / 1e3))
    }
}

/// Copies words, in parallel when there are many.
fn copy_words(from: &[u64], to: &mut [u64]) {
    use rayon::prelude::*;
    const PIECE: usize = 1 << 16;
    to.par_chunks_mut(PIECE)
        .zip(from.par_chunks(PIECE))
        .for_each(|(to, from)| to.copy_from_slice(from));
}
