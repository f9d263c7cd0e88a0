//! The CUDA driver API, loaded at run time: the library found, its entry points resolved.
//!
//! The driver (`libcuda.so.1`) comes with the GPU's kernel module, not with a toolkit, and
//! is opened with `dlopen()` when a backend is first asked for, never at link time: a host
//! without a GPU runs the same binary. It is looked for where the dynamic loader looks
//! (`LD_LIBRARY_PATH`, the loader's cache), then where drivers live when the loader does not
//! know them — a Nix-built binary outside NixOS uses Nix's loader, which does not read the
//! distribution's cache: `/run/opengl-driver/lib` (NixOS, and nixGL-style setups), the
//! distributions' library directories, `/usr/local/nvidia/lib64` (containers with the
//! NVIDIA runtime) and WSL's `/usr/lib/wsl/lib`. A toolkit's stub `libcuda.so` (which
//! answers every call with `CUDA_ERROR_STUB_LIBRARY`) is skipped for the next candidate, so
//! a stub directory on `LD_LIBRARY_PATH` does not hide the real driver.
//!
//! Every entry point is resolved when the library is opened: a driver too old to have one
//! is a clear error then, never a crash later.

use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

use crate::CudaError;

/// A driver call's result; 0 is success.
pub(crate) type CuResult = c_int;
/// A device ordinal.
pub(crate) type CuDevice = c_int;
/// An opaque driver handle (context, module, function, stream, event, memory pool).
pub(crate) type Handle = *mut c_void;
/// A device address.
pub(crate) type DevicePtr = u64;

/// `CUDA_SUCCESS`.
pub(crate) const SUCCESS: CuResult = 0;
/// `CUDA_ERROR_OUT_OF_MEMORY`.
pub(crate) const ERROR_OUT_OF_MEMORY: CuResult = 2;
/// `CUDA_ERROR_STUB_LIBRARY`: the toolkit's stand-in library, not a driver.
pub(crate) const ERROR_STUB_LIBRARY: CuResult = 34;
/// `CUDA_ERROR_NO_DEVICE`.
pub(crate) const ERROR_NO_DEVICE: CuResult = 100;
/// `CUDA_ERROR_SYSTEM_DRIVER_MISMATCH`: a compatibility driver newer than the kernel module
/// allows.
const ERROR_SYSTEM_DRIVER_MISMATCH: CuResult = 803;
/// `CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE`: a compatibility driver on a GPU it does not
/// support.
const ERROR_COMPAT_NOT_SUPPORTED: CuResult = 804;

/// `CUdevice_attribute` values the backend reads.
pub(crate) mod attribute {
    use std::ffi::c_int;
    /// `CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`.
    pub const MULTIPROCESSORS: c_int = 16;
    /// `CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE` (kHz).
    pub const MEMORY_CLOCK_KHZ: c_int = 36;
    /// `CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH` (bits).
    pub const MEMORY_BUS_WIDTH: c_int = 37;
    /// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR`.
    pub const CAPABILITY_MAJOR: c_int = 75;
    /// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR`.
    pub const CAPABILITY_MINOR: c_int = 76;
    /// `CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED`.
    pub const MEMORY_POOLS: c_int = 115;
}

/// `CU_MEMPOOL_ATTR_RELEASE_THRESHOLD`: bytes the pool keeps when the stream synchronises.
pub(crate) const POOL_RELEASE_THRESHOLD: c_int = 4;
/// `CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT`: the memory the pool holds from the driver.
pub(crate) const POOL_RESERVED_CURRENT: c_int = 5;
/// `CU_MEMPOOL_ATTR_USED_MEM_CURRENT`: the memory in use from the pool.
pub(crate) const POOL_USED_CURRENT: c_int = 7;
/// `CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH`: the most memory the pool has held from the driver.
pub(crate) const POOL_RESERVED_HIGH: c_int = 6;
/// `CU_MEMPOOL_ATTR_USED_MEM_HIGH`: the most memory in use from the pool at once.
pub(crate) const POOL_USED_HIGH: c_int = 8;
/// `CU_STREAM_NON_BLOCKING`.
pub(crate) const STREAM_NON_BLOCKING: c_uint = 1;
/// `CU_MEMHOSTALLOC_PORTABLE`.
pub(crate) const HOST_ALLOC_PORTABLE: c_uint = 1;

/// Where the driver library is looked for, in order: first by name (the dynamic loader's
/// own search), then at the paths where drivers are installed.
pub(crate) const CANDIDATES: [&str; 9] = [
    "libcuda.so.1",
    "/run/opengl-driver/lib/libcuda.so.1",
    "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
    "/usr/lib/aarch64-linux-gnu/libcuda.so.1",
    "/usr/lib64/libcuda.so.1",
    "/usr/lib/libcuda.so.1",
    "/usr/local/nvidia/lib64/libcuda.so.1",
    "/usr/lib/wsl/lib/libcuda.so.1",
    "/usr/local/cuda/compat/libcuda.so.1",
];

macro_rules! api {
    ($($name:ident: fn($($arg:ty),*);)*) => {
        /// The driver entry points the backend calls, resolved once.
        #[allow(non_snake_case)]
        pub(crate) struct Api {
            /// Keeps the library mapped for as long as the pointers are used (the process).
            _library: libloading::Library,
            /// Where it was found.
            pub(crate) path: String,
            $(pub(crate) $name: unsafe extern "C" fn($($arg),*) -> CuResult,)*
        }

        /// The entry points' names, in declaration order.
        #[cfg(test)]
        const ENTRY_POINTS: &[&str] = &[$(stringify!($name)),*];

        impl Api {
            /// Resolves every entry point of `library`.
            #[allow(non_snake_case)]
            fn resolve(library: libloading::Library, path: &str) -> Result<Self, String> {
                $(
                    // SAFETY: the symbol is the driver API's function of this name, whose
                    // C signature is the one declared here (cuda.h); the library stays
                    // loaded in `_library` as long as the pointer lives.
                    let $name = *unsafe {
                        library.get::<unsafe extern "C" fn($($arg),*) -> CuResult>(
                            concat!(stringify!($name), "\0").as_bytes(),
                        )
                    }
                    .map_err(|_| format!(
                        "{path} has no {} (drivers for CUDA 11.2 and newer have it)",
                        stringify!($name)
                    ))?;
                )*
                Ok(Self { _library: library, path: path.to_owned(), $($name,)* })
            }
        }
    };
}

api! {
    cuDriverGetVersion: fn(*mut c_int);
    cuInit: fn(c_uint);
    cuGetErrorName: fn(CuResult, *mut *const c_char);
    cuGetErrorString: fn(CuResult, *mut *const c_char);
    cuDeviceGetCount: fn(*mut c_int);
    cuDeviceGet: fn(*mut CuDevice, c_int);
    cuDeviceGetName: fn(*mut c_char, c_int, CuDevice);
    cuDeviceGetAttribute: fn(*mut c_int, c_int, CuDevice);
    cuDeviceTotalMem_v2: fn(*mut usize, CuDevice);
    cuDeviceGetPCIBusId: fn(*mut c_char, c_int, CuDevice);
    cuDevicePrimaryCtxRetain: fn(*mut Handle, CuDevice);
    cuCtxSetCurrent: fn(Handle);
    cuMemGetInfo_v2: fn(*mut usize, *mut usize);
    cuModuleLoadData: fn(*mut Handle, *const c_void);
    cuModuleGetFunction: fn(*mut Handle, Handle, *const c_char);
    cuLaunchKernel: fn(Handle, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Handle,
        *mut *mut c_void, *mut *mut c_void);
    cuStreamCreate: fn(*mut Handle, c_uint);
    cuStreamSynchronize: fn(Handle);
    cuStreamWaitEvent: fn(Handle, Handle, c_uint);
    cuEventCreate: fn(*mut Handle, c_uint);
    cuEventRecord: fn(Handle, Handle);
    cuEventSynchronize: fn(Handle);
    cuEventElapsedTime: fn(*mut f32, Handle, Handle);
    cuEventDestroy_v2: fn(Handle);
    cuMemAllocAsync: fn(*mut DevicePtr, usize, Handle);
    cuMemFreeAsync: fn(DevicePtr, Handle);
    cuMemcpyHtoDAsync_v2: fn(DevicePtr, *const c_void, usize, Handle);
    cuMemcpyDtoHAsync_v2: fn(*mut c_void, DevicePtr, usize, Handle);
    cuMemHostAlloc: fn(*mut *mut c_void, usize, c_uint);
    cuDeviceGetDefaultMemPool: fn(*mut Handle, CuDevice);
    cuMemPoolSetAttribute: fn(Handle, c_int, *mut c_void);
    cuMemPoolGetAttribute: fn(Handle, c_int, *mut c_void);
}

// SAFETY: the struct holds function pointers into the driver, which is thread-safe, and the
// library handle, which libloading makes Send + Sync.
unsafe impl Send for Api {}
// SAFETY: as above.
unsafe impl Sync for Api {}

/// What looking for the driver found.
pub(crate) enum Found {
    /// A driver, its entry points resolved.
    Driver(Box<Api>),
    /// Only stub libraries (the toolkit's stand-in), at these paths.
    Stubs(Vec<String>),
    /// No library at any candidate.
    Nothing,
    /// A library that is not a usable driver (an entry point missing).
    Broken(String),
}

/// The driver, looked for once per process.
pub(crate) fn driver() -> &'static Found {
    static FOUND: OnceLock<Found> = OnceLock::new();
    FOUND.get_or_init(|| find(&CANDIDATES))
}

/// The first candidate that loads and is not a stub.
pub(crate) fn find(candidates: &[&str]) -> Found {
    let mut stubs = Vec::new();
    let mut broken = None;
    for &path in candidates {
        // SAFETY: loading runs the library's initialisers; the NVIDIA driver's are what every
        // CUDA program runs.
        let Ok(library) = (unsafe { libloading::Library::new(path) }) else {
            continue;
        };
        match Api::resolve(library, path) {
            Ok(api) => {
                let mut version = 0;
                // SAFETY: cuDriverGetVersion writes one int and needs no cuInit; cuInit
                // takes flags 0. A stub answers both with CUDA_ERROR_STUB_LIBRARY.
                let stub = unsafe { (api.cuDriverGetVersion)(&raw mut version) }
                    == ERROR_STUB_LIBRARY
                    || unsafe { (api.cuInit)(0) } == ERROR_STUB_LIBRARY;
                if stub {
                    stubs.push(path.to_owned());
                    continue;
                }
                // A forward-compatibility driver (cuda/compat) the GPU or kernel module
                // refuses: the system's driver may come later in the list.
                // SAFETY: as above.
                let init = unsafe { (api.cuInit)(0) };
                if matches!(
                    init,
                    ERROR_COMPAT_NOT_SUPPORTED | ERROR_SYSTEM_DRIVER_MISMATCH
                ) {
                    broken.get_or_insert(format!("{path}: {}", api.describe(init)));
                    continue;
                }
                return Found::Driver(Box::new(api));
            }
            Err(reason) => {
                broken.get_or_insert(reason);
            }
        }
    }
    // A real library that cannot be used says more than a stub does.
    match broken {
        Some(reason) => Found::Broken(reason),
        None if !stubs.is_empty() => Found::Stubs(stubs),
        None => Found::Nothing,
    }
}

impl Api {
    /// Turns a result into `Ok` or an error naming the call's purpose and the driver's
    /// error, e.g. "allocating device memory: CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
    pub(crate) fn check(&self, result: CuResult, during: &'static str) -> Result<(), CudaError> {
        if result == SUCCESS {
            return Ok(());
        }
        let message = self.describe(result);
        Err(if result == ERROR_OUT_OF_MEMORY {
            CudaError::OutOfMemory { during, message }
        } else {
            CudaError::Driver { during, message }
        })
    }

    /// "NAME (description)" for a driver result.
    pub(crate) fn describe(&self, result: CuResult) -> String {
        let text = |f: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult| {
            let mut ptr: *const c_char = std::ptr::null();
            // SAFETY: the driver writes a pointer to a static NUL-terminated string.
            let ok = unsafe { f(result, &raw mut ptr) } == SUCCESS && !ptr.is_null();
            // SAFETY: a non-null pointer the driver returned to a static C string.
            ok.then(|| {
                unsafe { CStr::from_ptr(ptr) }
                    .to_string_lossy()
                    .into_owned()
            })
        };
        match (text(self.cuGetErrorName), text(self.cuGetErrorString)) {
            (Some(name), Some(description)) => format!("{name} ({description})"),
            (Some(name), None) => name,
            _ => format!("CUDA error {result}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::process::Command;

    use super::*;

    /// Builds a stand-in libcuda from C: every entry point returns `result`, and
    /// cuDriverGetVersion reports 12.8; `missing` entry points are left out.
    fn stand_in(dir: &Path, name: &str, result: i32, missing: &[&str]) -> Option<PathBuf> {
        let mut source =
            String::from("int cuDriverGetVersion(int* v) { *v = 12080; return RESULT; }\n")
                .replace("RESULT", &result.to_string());
        for entry in ENTRY_POINTS {
            if *entry != "cuDriverGetVersion" && !missing.contains(entry) {
                source.push_str(&format!("int {entry}(void) {{ return {result}; }}\n"));
            }
        }
        let c = dir.join(format!("{name}.c"));
        std::fs::write(&c, source).ok()?;
        let library = dir.join(name);
        let built = Command::new("cc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(&library)
            .arg(&c)
            .status()
            .ok()?;
        built.success().then_some(library)
    }

    #[test]
    fn stubs_are_skipped_and_broken_drivers_named() {
        let dir = tempfile::tempdir().unwrap();
        let built = (
            stand_in(dir.path(), "stub.so", ERROR_STUB_LIBRARY, &[]),
            stand_in(dir.path(), "driver.so", ERROR_NO_DEVICE, &[]),
            stand_in(dir.path(), "old.so", 0, &["cuMemAllocAsync"]),
        );
        let (Some(stub), Some(driver), Some(old)) = built else {
            assert!(
                std::env::var_os("BALLAST_REQUIRE_CXX").is_none_or(|v| v != "1"),
                "BALLAST_REQUIRE_CXX=1 but no C compiler (cc) to build stand-in drivers"
            );
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "skipping: no C compiler (cc) on PATH");
            return;
        };
        let path = |p: &PathBuf| p.to_str().unwrap().to_owned();
        let (stub, driver, old) = (path(&stub), path(&driver), path(&old));
        let absent = "/nonexistent/libcuda.so.1";
        // A stub ahead of the driver (a toolkit's stubs on LD_LIBRARY_PATH) is passed over.
        match find(&[absent, &stub, &driver]) {
            Found::Driver(api) => assert_eq!(api.path, driver),
            _ => panic!("the driver after the stub is found"),
        }
        match find(&[&stub]) {
            Found::Stubs(paths) => assert_eq!(paths, std::slice::from_ref(&stub)),
            _ => panic!("a lone stub is reported as one"),
        }
        match find(&[&old]) {
            Found::Broken(reason) => assert_eq!(
                reason,
                format!("{old} has no cuMemAllocAsync (drivers for CUDA 11.2 and newer have it)")
            ),
            _ => panic!("a driver without an entry point is named"),
        }
        assert!(matches!(find(&[absent]), Found::Nothing));
    }
}
