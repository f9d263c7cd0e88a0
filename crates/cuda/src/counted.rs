//! Counting what a backend does with its device: the memory it holds, its high-water mark,
//! and the bytes it copies each way. The counts are the backend's own, made where the
//! allocations and copies happen, not estimated.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use ballast_backend::DeviceCounters;

use crate::CudaError;
use crate::kernels::{Arg, Grid, Kernel, Launcher, Queue};

/// The running counts.
#[derive(Default)]
struct Counts {
    live: AtomicU64,
    peak: AtomicU64,
    up: AtomicU64,
    down: AtomicU64,
    allocations: AtomicU64,
}

/// A [`Launcher`] that counts its allocations and copies.
pub struct Counted<L> {
    inner: L,
    counts: Arc<Counts>,
}

/// A buffer of a [`Counted`] launcher: its bytes leave the live count when it is dropped.
pub struct CountedBuffer<B> {
    inner: B,
    bytes: u64,
    counts: Arc<Counts>,
}

impl<B> Drop for CountedBuffer<B> {
    fn drop(&mut self) {
        self.counts.live.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

impl<L: Launcher> Counted<L> {
    /// Counts what `inner` does from now on.
    pub fn new(inner: L) -> Self {
        Self {
            inner,
            counts: Arc::default(),
        }
    }

    /// The launcher it counts.
    pub fn inner(&self) -> &L {
        &self.inner
    }

    /// The counts so far.
    pub fn counters(&self) -> DeviceCounters {
        DeviceCounters {
            device_peak_bytes: self.counts.peak.load(Ordering::Relaxed),
            pcie_up_bytes: self.counts.up.load(Ordering::Relaxed),
            pcie_down_bytes: self.counts.down.load(Ordering::Relaxed),
        }
    }

    /// Buffers allocated so far.
    pub fn allocations(&self) -> u64 {
        self.counts.allocations.load(Ordering::Relaxed)
    }
}

impl<L: Launcher> Launcher for Counted<L> {
    type Buffer = CountedBuffer<L::Buffer>;
    type Mark = L::Mark;
    type Ticket = L::Ticket;
    const NAME: &'static str = L::NAME;

    fn alloc(&self, len: usize) -> Result<Self::Buffer, CudaError> {
        let inner = self.inner.alloc(len)?;
        let bytes = 8 * len as u64;
        let live = self.counts.live.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.counts.peak.fetch_max(live, Ordering::Relaxed);
        self.counts.allocations.fetch_add(1, Ordering::Relaxed);
        Ok(CountedBuffer {
            inner,
            bytes,
            counts: Arc::clone(&self.counts),
        })
    }

    fn buffer_len(buffer: &Self::Buffer) -> usize {
        L::buffer_len(&buffer.inner)
    }

    fn upload(&self, words: &[u64], buffer: &Self::Buffer, offset: usize) -> Result<(), CudaError> {
        self.inner.upload(words, &buffer.inner, offset)?;
        self.counts
            .up
            .fetch_add(8 * words.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn upload_ahead(&self, words: &[u64], buffer: &Self::Buffer) -> Result<(), CudaError> {
        self.inner.upload_ahead(words, &buffer.inner)?;
        self.counts
            .up
            .fetch_add(8 * words.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn signal(&self, queue: Queue) -> Result<Self::Ticket, CudaError> {
        self.inner.signal(queue)
    }

    fn wait_for(&self, queue: Queue, ticket: &Self::Ticket) -> Result<(), CudaError> {
        self.inner.wait_for(queue, ticket)
    }

    fn download(
        &self,
        buffer: &Self::Buffer,
        offset: usize,
        out: &mut [u64],
    ) -> Result<(), CudaError> {
        self.inner.download(&buffer.inner, offset, out)?;
        self.counts
            .down
            .fetch_add(8 * out.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn launch(
        &self,
        kernel: Kernel,
        grid: Grid,
        args: &[Arg<'_, Self::Buffer>],
    ) -> Result<(), CudaError> {
        // Nothing to do: a kernel's blocks are its columns or items, and there are none.
        if grid.blocks == 0 {
            return Ok(());
        }
        let args: Vec<Arg<'_, L::Buffer>> = args
            .iter()
            .map(|arg| match arg {
                Arg::Buffer(b) => Arg::Buffer(&b.inner),
                Arg::At(b, offset) => Arg::At(&b.inner, *offset),
                Arg::Word(w) => Arg::Word(*w),
            })
            .collect();
        self.inner.launch(kernel, grid, &args)
    }

    fn mark(&self) -> Result<Self::Mark, CudaError> {
        self.inner.mark()
    }

    fn elapsed(&self, from: &Self::Mark, to: &Self::Mark) -> Result<Duration, CudaError> {
        self.inner.elapsed(from, to)
    }

    fn grind_batch(&self) -> u64 {
        self.inner.grind_batch()
    }
}
