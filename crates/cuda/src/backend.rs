//! The [`Backend`] over any [`Launcher`], and the CUDA backend built on it.
//!
//! [`KernelBackend`] runs the launch sequences ([`extend_and_commit`],
//! [`commit_fri_layer`]) for the accelerated stages and keeps the LDE tables of the
//! last shape on the executor, as [`ballast_stark::CpuBackend`] keeps its plan. Calls are serialised: one device, one
//! stream, and the prover commits one thing at a time anyway.

use std::sync::Mutex;

use ballast_field::{Ext3, RowBlocks};
use ballast_merkle::MerkleTree;
use ballast_ntt::ColumnForm;
use ballast_stark::{Backend, BackendError, PhaseTimes};

use crate::kernels::Launcher;
use crate::lde::{LdeTables, extend_and_commit};
use crate::merkle::commit_fri_layer;
use crate::{CudaDevice, CudaError, DeviceInfo};

/// A [`Backend`] that runs the LDE and the Merkle hashing through a [`Launcher`].
pub struct KernelBackend<L: Launcher> {
    state: Mutex<State<L>>,
}

struct State<L: Launcher> {
    launcher: L,
    /// The tables of the last shape extended; segments of one statement share it.
    tables: Option<LdeTables<L::Buffer>>,
}

impl<L: Launcher> KernelBackend<L> {
    /// A backend running on `launcher`.
    pub fn new(launcher: L) -> Self {
        Self {
            state: Mutex::new(State {
                launcher,
                tables: None,
            }),
        }
    }

    fn commit(
        &self,
        table: &mut RowBlocks,
        log_blowup: usize,
        form: ColumnForm,
        times: &mut PhaseTimes,
    ) -> Result<MerkleTree, BackendError> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let State { launcher, tables } = &mut *state;
        // Before the table cache is consulted: a bad height must neither evict the cached
        // tables nor reach `trailing_zeros` (64 for a height of 0).
        let height = table.height();
        if !height.is_power_of_two() {
            return Err(to_backend::<L>(CudaError::Input(format!(
                "a matrix of height {height} to extend, need a power of two (at least 1)"
            ))));
        }
        let log_n = height.trailing_zeros() as usize;
        let tables = match tables {
            Some(t) if t.log_n() == log_n && t.log_blowup() == log_blowup => t,
            _ => {
                // Free the old tables before allocating the new ones.
                *tables = None;
                tables.insert(
                    LdeTables::upload(launcher, log_n, log_blowup).map_err(to_backend::<L>)?,
                )
            }
        };
        extend_and_commit(launcher, tables, table, form, times).map_err(to_backend::<L>)
    }
}

fn to_backend<L: Launcher>(err: CudaError) -> BackendError {
    BackendError {
        backend: L::NAME,
        message: err.to_string(),
    }
}

impl<L> Backend for KernelBackend<L>
where
    L: Launcher + Send,
    L::Buffer: Send,
{
    fn name(&self) -> &'static str {
        L::NAME
    }

    fn extend_and_commit(
        &self,
        table: &mut RowBlocks,
        form: ColumnForm,
        log_blowup: usize,
        times: &mut PhaseTimes,
    ) -> Result<MerkleTree, BackendError> {
        self.commit(table, log_blowup, form, times)
    }

    fn commit_fri_layer(
        &self,
        evals: &[Ext3],
        log_arity: usize,
    ) -> Result<MerkleTree, BackendError> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        commit_fri_layer(&state.launcher, evals, log_arity).map_err(to_backend::<L>)
    }
}

/// The CUDA backend: [`KernelBackend`] on device 0.
pub struct CudaBackend {
    info: DeviceInfo,
    inner: KernelBackend<CudaDevice>,
}

impl CudaBackend {
    /// The backend on device 0, if one is usable.
    ///
    /// # Errors
    /// Why no device is usable ([`crate::probe`]).
    pub fn new() -> Result<Self, CudaError> {
        let device = CudaDevice::open()?;
        Ok(Self {
            info: device.info().clone(),
            inner: KernelBackend::new(device),
        })
    }

    /// The device it runs on.
    pub fn device(&self) -> &DeviceInfo {
        &self.info
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn extend_and_commit(
        &self,
        table: &mut RowBlocks,
        form: ColumnForm,
        log_blowup: usize,
        times: &mut PhaseTimes,
    ) -> Result<MerkleTree, BackendError> {
        self.inner.extend_and_commit(table, form, log_blowup, times)
    }

    fn commit_fri_layer(
        &self,
        evals: &[Ext3],
        log_arity: usize,
    ) -> Result<MerkleTree, BackendError> {
        self.inner.commit_fri_layer(evals, log_arity)
    }
}
