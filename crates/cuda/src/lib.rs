#![doc = include_str!("../README.md")]

mod backend;
mod device;
mod error;
mod kernels;
mod lde;
mod merkle;

pub use backend::{CudaBackend, KernelBackend};
pub use ballast_ntt::ColumnForm;
pub use device::{CudaDevice, DeviceInfo, MIN_DRIVER_CUDA_VERSION, probe};
pub use error::CudaError;
pub use kernels::{Arg, Kernel, Launcher, MERKLE_PTX, Module, NTT_PTX, THREADS_PER_BLOCK, grid};
pub use lde::{
    LdeTables, download_matrix, extend, extend_and_commit, extend_uploaded, upload_matrix,
};
pub use merkle::{commit_fri_layer, commit_rows};
