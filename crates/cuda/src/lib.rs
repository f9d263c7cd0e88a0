#![doc = include_str!("../README.md")]

mod backend;
mod counted;
mod device;
mod driver;
mod error;
mod kernels;
mod lde;
mod merkle;
mod nvml;
mod segment;
mod workspace;

pub use backend::{CudaBackend, KernelBackend};
pub use device::{
    CudaDevice, DeviceBuffer, DeviceEvent, DeviceInfo, MIN_DRIVER_CUDA_VERSION, PTX_ISA, probe,
};
pub use error::CudaError;
pub use kernels::{Arg, Grid, Kernel, Launcher, Module, Queue, THREADS_PER_BLOCK};
pub use merkle::poseidon2_constants;
pub use nvml::Management;
