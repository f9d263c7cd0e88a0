//! Why the CUDA backend is unavailable or failed.

use thiserror::Error;

/// A CUDA backend error: no usable device, a driver call that failed, or device output that
/// does not have the shape the CPU's has.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum CudaError {
    /// This error occurs when no CUDA driver library (`libcuda.so.1`) can be loaded.
    #[error("no CUDA driver: libcuda could not be loaded")]
    NoDriver,
    /// This error occurs when the driver is older than the PTX the kernels were built as.
    #[error(
        "the CUDA driver supports CUDA {found}, the kernels need {required} or newer (driver 570+)"
    )]
    DriverTooOld {
        /// The CUDA version the driver supports, "major.minor".
        found: String,
        /// The oldest CUDA version whose driver loads the kernels.
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
