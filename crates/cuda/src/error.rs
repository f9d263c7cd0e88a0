//! Why the CUDA backend is unavailable or failed.

use thiserror::Error;

/// A CUDA backend error: no usable device, a driver call that failed, or device output that
/// does not have the shape the CPU's has.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum CudaError {
    /// This error occurs when no CUDA driver library (`libcuda.so.1`) can be loaded.
    #[error(
        "no CUDA driver: libcuda.so.1 is not on the library path, nor in /run/opengl-driver/lib or the distributions' library directories"
    )]
    NoDriver,
    /// This error occurs when the only `libcuda` found is a CUDA toolkit's stub library.
    #[error(
        "no CUDA driver: only the CUDA toolkit's stub library was found ({0}); the driver's libcuda.so.1 is needed"
    )]
    StubDriver(String),
    /// This error occurs when a library that calls itself the driver cannot be used: it
    /// lacks an entry point the backend needs (a driver older than CUDA 11.2), or it is a
    /// compatibility driver this GPU or kernel module refuses.
    #[error("the CUDA driver cannot be used: {0}")]
    BrokenDriver(String),
    /// This error occurs when the driver is older than the backend needs.
    #[error("the CUDA driver supports CUDA {found}, the backend needs {required} or newer")]
    DriverTooOld {
        /// The CUDA version the driver supports, "major.minor".
        found: String,
        /// The oldest CUDA version the backend runs on.
        required: String,
    },
    /// This error occurs when the driver loads but reports no device.
    #[error("no CUDA device")]
    NoDevice,
    /// This error occurs when a driver call fails.
    #[error("{during}: {message}")]
    Driver {
        /// What was being done, e.g. "loading the kernels".
        during: &'static str,
        /// The driver's error.
        message: String,
    },
    /// This error occurs when the device has too little free memory for what was asked.
    #[error("the GPU is out of memory while {during}: {message}")]
    OutOfMemory {
        /// What was being done.
        during: &'static str,
        /// The driver's error.
        message: String,
    },
    /// This error occurs on any use of the device after a kernel fault, which leaves the
    /// process's CUDA context unusable.
    #[error(
        "the CUDA context is unusable after an earlier failure ({0}); start a new process to use the GPU again"
    )]
    ContextLost(String),
    /// This error occurs when the caller asks for something no prover step asks for, such
    /// as a matrix whose height is not a power of two.
    #[error("invalid input: {0}")]
    Input(String),
    /// This error occurs when a launch or a table exceeds what the backend supports.
    #[error("{what} is too large: {size}, at most {max}")]
    TooLarge {
        /// The quantity.
        what: &'static str,
        /// Its value.
        size: u64,
        /// The largest supported value.
        max: u64,
    },
    /// This error occurs when the device returns data the CPU would never produce.
    #[error("the device returned {0}")]
    BadOutput(String),
}
