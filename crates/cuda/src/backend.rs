//! The [`Backend`] over any [`Launcher`], and the CUDA backend built on it.
//!
//! [`KernelBackend`] proves each segment on its executor ([`DeviceSegment`]) and keeps the
//! segment's buffers ([`Workspace`]) for the next segment of the same shape, as
//! [`ballast_stark::CpuBackend`] keeps its plan: after the first segment, no buffer is
//! allocated or filled. Segments are proven one at a time: one device, one stream.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use ballast_air::ConstraintProgram;
use ballast_backend::{
    Backend, BackendError, DeviceCounters, Geometry, SegmentAir, SegmentProver, Staged,
};
use ballast_field::{Felt, RowBlocks};

use crate::counted::{Counted, CountedBuffer};
use crate::kernels::{Launcher, Queue};
use crate::lde::LOG_TILE;
use crate::segment::{DeviceSegment, backend_error};
use crate::workspace::{Key, Sizes, Workspace};
use crate::{CudaDevice, CudaError, DeviceInfo};

/// A [`Backend`] that proves segments by launching the kernels on a [`Launcher`].
pub struct KernelBackend<L: Launcher> {
    launcher: Counted<L>,
    workspace: Mutex<Option<Workspace<CountedBuffer<L::Buffer>>>>,
    /// Two traces on the device: the one a segment is proven from, and the next one, sent
    /// ahead meanwhile.
    slots: [Mutex<TraceSlot<Counted<L>>>; 2],
    /// The slot the next trace goes to.
    next_slot: AtomicUsize,
    /// The number the next staged trace gets.
    next_stamp: AtomicU64,
    log_tile: usize,
}

/// A trace on the device, as the host's row blocks, and what orders its uses: a copy sent
/// ahead runs on the copy queue, the segment that reads it on the compute queue.
pub(crate) struct TraceSlot<L: Launcher> {
    pub(crate) buffer: Option<L::Buffer>,
    /// The trace sent ahead into it (its stamp), and the ticket of that copy.
    staged: Option<(u64, L::Ticket)>,
    /// The ticket of the compute queue's last use of the buffer (its allocation, or the
    /// segment that read it): a copy into it waits for it.
    pub(crate) released: Option<L::Ticket>,
}

/// The words of the host's table that hold its rows: whole blocks of eight rows.
fn trace_words(table: &RowBlocks) -> usize {
    table.width() * table.blocks() * ballast_field::BLOCK_ROWS
}

impl<L: Launcher> KernelBackend<L> {
    /// A backend running on `launcher`.
    pub fn new(launcher: L) -> Self {
        Self::with_tile(launcher, LOG_TILE)
    }

    /// A backend whose transform passes hold tiles of at most 2^`log_tile` words (tests use
    /// small tiles to run transforms of several passes on small tables).
    pub fn with_tile(launcher: L, log_tile: usize) -> Self {
        let slot = || {
            Mutex::new(TraceSlot {
                buffer: None,
                staged: None,
                released: None,
            })
        };
        Self {
            launcher: Counted::new(launcher),
            workspace: Mutex::new(None),
            slots: [slot(), slot()],
            next_slot: AtomicUsize::new(0),
            next_stamp: AtomicU64::new(0),
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

    /// Bytes of device memory proving segments of `geometry` with `program` holds: what
    /// the workspace allocates, both trace slots, and the program.
    pub fn device_bytes(&self, geometry: &Geometry, program: &ConstraintProgram) -> u64 {
        let program_words = program.instructions().len() + program.constants().len();
        Sizes::of(geometry, program, self.log_tile).bytes() + 8 * program_words as u64
    }

    /// Gives `slot` room for `words`, forgetting what it held: a pending copy into it is
    /// waited for first, and a new buffer's allocation is what later copies wait for.
    fn make_room(&self, slot: &mut TraceSlot<Counted<L>>, words: usize) -> Result<(), CudaError> {
        if let Some((_, copied)) = slot.staged.take() {
            self.launcher.wait_for(Queue::Compute, &copied)?;
        }
        if slot
            .buffer
            .as_ref()
            .is_none_or(|b| Counted::<L>::buffer_len(b) < words)
        {
            slot.buffer = None;
            slot.buffer = Some(self.launcher.alloc(words)?);
            slot.released = Some(self.launcher.signal(Queue::Compute)?);
        }
        Ok(())
    }

    /// The next slot, with room for `words`.
    fn take_slot(&self, words: usize) -> Result<MutexGuard<'_, TraceSlot<Counted<L>>>, CudaError> {
        let index = self.next_slot.fetch_add(1, Ordering::Relaxed) % 2;
        let mut slot = self.slots[index].lock().unwrap_or_else(|e| e.into_inner());
        self.make_room(&mut slot, words)?;
        Ok(slot)
    }

    /// The slot `staged` is in, its copy waited for; else the next slot, with `table`
    /// copied into it on the compute queue.
    fn slot_for(
        &self,
        table: &RowBlocks,
        staged: Option<Staged>,
    ) -> Result<MutexGuard<'_, TraceSlot<Counted<L>>>, CudaError> {
        if let Some(Staged(stamp)) = staged {
            for slot in &self.slots {
                let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
                if slot.staged.as_ref().is_some_and(|(s, _)| *s == stamp) {
                    let (_, copied) = slot.staged.take().expect("matched");
                    self.launcher.wait_for(Queue::Compute, &copied)?;
                    return Ok(slot);
                }
            }
            return Err(CudaError::Input(format!("no trace staged as {stamp}")));
        }
        let words = trace_words(table);
        let slot = self.take_slot(words)?;
        let buffer = slot.buffer.as_ref().expect("make_room allocates");
        let trace = Felt::slice_as_u64(table.as_slice());
        self.launcher.upload(&trace[..words], buffer, 0)?;
        Ok(slot)
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

    fn overlaps_tracing(&self) -> bool {
        true
    }

    fn stage(
        &self,
        table: &RowBlocks,
        _geometry: &Geometry,
    ) -> Result<Option<Staged>, BackendError> {
        let stage = || -> Result<Staged, CudaError> {
            let words = trace_words(table);
            let mut slot = self.take_slot(words)?;
            // Not before the compute queue is done with the buffer (or has allocated it).
            if let Some(released) = &slot.released {
                self.launcher.wait_for(Queue::Copy, released)?;
            }
            let buffer = slot.buffer.as_ref().expect("make_room allocates");
            let trace = Felt::slice_as_u64(table.as_slice());
            self.launcher.upload_ahead(&trace[..words], buffer)?;
            let copied = self.launcher.signal(Queue::Copy)?;
            let stamp = self.next_stamp.fetch_add(1, Ordering::Relaxed);
            slot.staged = Some((stamp, copied));
            Ok(Staged(stamp))
        };
        stage().map(Some).map_err(backend_error::<L>)
    }

    fn begin<'a>(
        &'a self,
        table: &'a mut RowBlocks,
        air: &'a dyn SegmentAir,
        geometry: Geometry,
        staged: Option<Staged>,
    ) -> Result<Box<dyn SegmentProver + 'a>, BackendError> {
        geometry
            .check_trace(table)
            .map_err(|m| backend_error::<L>(CudaError::Input(m)))?;
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
            // Room in both trace slots now, so that later segments allocate nothing. A slot
            // holding this segment's staged trace is large enough already.
            let words = trace_words(table);
            for slot in &self.slots {
                let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
                let fits = slot
                    .buffer
                    .as_ref()
                    .is_some_and(|b| Counted::<L>::buffer_len(b) >= words);
                if !fits {
                    self.make_room(&mut slot, words)
                        .map_err(backend_error::<L>)?;
                }
            }
        }
        let trace = self.slot_for(table, staged).map_err(backend_error::<L>)?;
        let segment = DeviceSegment::new(&self.launcher, workspace, trace, table, geometry);
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

    /// Checks that the device can prove segments of `geometry` with `program`: the work fits
    /// in the device's free memory.
    ///
    /// # Errors
    /// [`CudaError::OutOfMemory`] saying how much is needed and free; or a driver failure.
    pub fn check_fits(
        &self,
        geometry: &Geometry,
        program: &ConstraintProgram,
    ) -> Result<(), CudaError> {
        let needed = self.inner.device_bytes(geometry, program);
        let (free, _) = self.launcher().memory()?;
        if needed > free {
            return Err(CudaError::OutOfMemory {
                during: "planning the proof",
                message: format!(
                    "a segment needs about {} MiB of device memory, the {} has {} MiB free",
                    needed >> 20,
                    self.info.name,
                    free >> 20
                ),
            });
        }
        Ok(())
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn trace_table(&self, width: usize, log_rows: usize, log_blowup: usize) -> RowBlocks {
        self.inner.trace_table(width, log_rows, log_blowup)
    }

    fn overlaps_tracing(&self) -> bool {
        self.inner.overlaps_tracing()
    }

    fn stage(
        &self,
        table: &RowBlocks,
        geometry: &Geometry,
    ) -> Result<Option<Staged>, BackendError> {
        self.inner.stage(table, geometry)
    }

    fn begin<'a>(
        &'a self,
        table: &'a mut RowBlocks,
        air: &'a dyn SegmentAir,
        geometry: Geometry,
        staged: Option<Staged>,
    ) -> Result<Box<dyn SegmentProver + 'a>, BackendError> {
        self.inner.begin(table, air, geometry, staged)
    }

    fn counters(&self) -> Option<DeviceCounters> {
        self.inner.counters()
    }
}
