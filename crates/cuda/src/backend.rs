//! The [`Backend`] over any [`Launcher`], and the CUDA backend built on it.
//!
//! [`KernelBackend`] proves each segment on its executor ([`DeviceSegment`]) and keeps the
//! segment's buffers ([`Workspace`]) for the next segment of the same shape, as
//! [`ballast_stark::CpuBackend`] keeps its plan: after the first segment, no buffer is
//! allocated or filled. Segments are proven one at a time: one device, one stream.

use std::sync::Mutex;

use ballast_backend::{Backend, BackendError, DeviceCounters, Geometry, SegmentAir, SegmentProver};
use ballast_field::RowBlocks;

use crate::counted::{Counted, CountedBuffer};
use crate::kernels::Launcher;
use crate::lde::LOG_TILE;
use crate::segment::{DeviceSegment, Key, Workspace, backend_error};
use crate::{CudaDevice, CudaError, DeviceInfo};

/// A [`Backend`] that proves segments by launching the kernels on a [`Launcher`].
pub struct KernelBackend<L: Launcher> {
    launcher: Counted<L>,
    workspace: Mutex<Option<Workspace<CountedBuffer<L::Buffer>>>>,
    log_tile: usize,
}

impl<L: Launcher> KernelBackend<L> {
    /// A backend running on `launcher`.
    pub fn new(launcher: L) -> Self {
        Self::with_tile(launcher, LOG_TILE)
    }

    /// A backend whose transform passes hold tiles of at most 2^`log_tile` words (tests use
    /// small tiles to run transforms of several passes on small tables).
    pub fn with_tile(launcher: L, log_tile: usize) -> Self {
        Self {
            launcher: Counted::new(launcher),
            workspace: Mutex::new(None),
            log_tile: log_tile.clamp(1, LOG_TILE),
        }
    }

    /// The launcher it runs on.
    pub fn launcher(&self) -> &L {
        self.launcher.inner()
    }

    /// Buffers allocated on the executor so far.
    pub fn allocations(&self) -> u64 {
        self.launcher.allocations()
    }
}

impl<L: Launcher> Backend for KernelBackend<L> {
    fn name(&self) -> &'static str {
        L::NAME
    }

    fn trace_table(&self, width: usize, log_rows: usize, _log_blowup: usize) -> RowBlocks {
        // The device extends a copy: the host holds the trace alone.
        let rows = 1usize << log_rows;
        RowBlocks::zeroed(width, rows, rows)
    }

    fn begin<'a>(
        &'a self,
        table: &'a mut RowBlocks,
        air: &'a dyn SegmentAir,
        geometry: Geometry,
    ) -> Result<Box<dyn SegmentProver + 'a>, BackendError> {
        if table.width() != geometry.width || table.height() != 1 << geometry.log_rows {
            return Err(backend_error::<L>(CudaError::Input(format!(
                "a trace of {} × {} rows to prove as {} × 2^{}",
                table.width(),
                table.height(),
                geometry.width,
                geometry.log_rows
            ))));
        }
        let key = Key {
            geometry,
            air_id: air.id().to_owned(),
            log_tile: self.log_tile,
        };
        let mut workspace = self.workspace.lock().unwrap_or_else(|e| e.into_inner());
        if workspace.as_ref().is_none_or(|w| w.key != key) {
            // Free the old buffers before allocating the new ones.
            *workspace = None;
            let program = air.program().map_err(|e| BackendError {
                backend: L::NAME,
                message: e.to_string(),
            })?;
            *workspace =
                Some(Workspace::new(&self.launcher, key, &program).map_err(backend_error::<L>)?);
        }
        let segment = DeviceSegment::new(&self.launcher, workspace, table, geometry)
            .map_err(backend_error::<L>)?;
        Ok(Box::new(segment))
    }

    fn counters(&self) -> Option<DeviceCounters> {
        Some(self.launcher.counters())
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

    /// The device's launcher: for its memory figures.
    pub fn launcher(&self) -> &CudaDevice {
        self.inner.launcher()
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn trace_table(&self, width: usize, log_rows: usize, log_blowup: usize) -> RowBlocks {
        self.inner.trace_table(width, log_rows, log_blowup)
    }

    fn begin<'a>(
        &'a self,
        table: &'a mut RowBlocks,
        air: &'a dyn SegmentAir,
        geometry: Geometry,
    ) -> Result<Box<dyn SegmentProver + 'a>, BackendError> {
        self.inner.begin(table, air, geometry)
    }

    fn counters(&self) -> Option<DeviceCounters> {
        self.inner.counters()
    }
}
