//! The kernels: the embedded PTX, each kernel's name and parameters, and the [`Launcher`]
//! seam that runs them.
//!
//! The launch sequences (`lde`, `segment`) are written once, against [`Launcher`]:
//! [`CudaDevice`](crate::CudaDevice) runs them on a GPU, and the emulation test runs them on
//! a host build of the same `kernels/*.cu`. Nothing here touches the driver.

use std::time::Duration;

use crate::CudaError;

/// A PTX module: one `kernels/*.cu` file, compiled by `ci/check-kernels.sh`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Module {
    /// `ntt.cu`: transform passes, their tables, the quotient's chunks.
    Ntt,
    /// `merkle.cu`: leaf and node hashing, with Keccak-256 or Poseidon2.
    Merkle,
    /// `constraints.cu`: the composition, by interpreting the constraint program.
    Constraints,
    /// `deep.cu`: out-of-domain sums, the DEEP function, FRI folding.
    Deep,
    /// `queries.cu`: grinding (either transcript) and the openings' gathers.
    Queries,
}

impl Module {
    /// Every module.
    pub const ALL: [Self; 5] = [
        Self::Ntt,
        Self::Merkle,
        Self::Constraints,
        Self::Deep,
        Self::Queries,
    ];

    /// The module's PTX, as committed.
    pub fn ptx(self) -> &'static str {
        match self {
            Self::Ntt => include_str!("../kernels/ntt.ptx"),
            Self::Merkle => include_str!("../kernels/merkle.ptx"),
            Self::Constraints => include_str!("../kernels/constraints.ptx"),
            Self::Deep => include_str!("../kernels/deep.ptx"),
            Self::Queries => include_str!("../kernels/queries.ptx"),
        }
    }
}

/// A kernel. Its parameters are listed on each variant in order; `*` marks a buffer, every
/// other parameter is a `u64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// `ntt_pass(*src, *dst, *twiddles, *scales, log_n, first, stages, dit, log_tile,
    /// src_layout, dst_layout, width, coset, log_blowup)`, with 2^log_tile words of shared
    /// memory.
    NttPass,
    /// `ntt_twiddles(*table, count, log_n, root)`.
    NttTwiddles,
    /// `lde_scales(*scales, count, log_n, shift, zeta, n_inv)`.
    LdeScales,
    /// `split_chunks(*raw, *chunks, *chunk_scales, count, log_n, log_chunks, shift_inv)`.
    SplitChunks,
    /// `merkle_row_leaves(*matrix, *leaves, count, width, height)`.
    MerkleRowLeaves,
    /// `merkle_fri_layer_leaves(*evals, *leaves, count, arity)`.
    MerkleFriLayerLeaves,
    /// `merkle_level(*tree, count, below, above)`.
    MerkleLevel,
    /// `poseidon2_row_leaves(*matrix, *leaves, *rc, count, width, height)`.
    Poseidon2RowLeaves,
    /// `poseidon2_fri_layer_leaves(*evals, *leaves, *rc, count, arity)`.
    Poseidon2FriLayerLeaves,
    /// `poseidon2_level(*tree, *rc, count, below, above)`.
    Poseidon2Level,
    /// `composition(*program, program_len, *lde, log_lde_rows, *periodic, *periodic_at,
    /// *public_inputs, *constants, *coefficients, *registers, *quotient, count, log_rows,
    /// log_blowup, log_chunks, shift, zeta_q, omega_last)`.
    Composition,
    /// `ood_weights(*weights, count, omega, z0, z1, z2)`.
    OodWeights,
    /// `raw_powers(*powers, count, log_n, n_inv, z0, z1, z2)`.
    RawPowers,
    /// `column_sums(*columns, rows, step, *weights, count, shifted, *sums)`, with three
    /// words of shared memory per warp.
    ColumnSums,
    /// `deep_function(*trace, width, *quotient, quotient_width, *trace_coeffs,
    /// *quotient_coeffs, *constants, *layer, count, shift, zeta)`.
    DeepFunction,
    /// `fri_fold(*input, *output, count, log_arity, beta0, beta1, beta2,
    /// inverse_twice_shift, zeta_inv, half)`.
    FriFold,
    /// `grind(*state, start, count, bits, *found)`.
    Grind,
    /// `grind_poseidon2(*duplex, *rc, start, count, bits, *found)`.
    GrindPoseidon2,
    /// `gather_rows(*table, rows, width, *positions, count, *out)`.
    GatherRows,
    /// `gather_items(*src, *indices, words, count, *out)`.
    GatherItems,
    /// `fill_words(*dst, count, value)`.
    FillWords,
}

impl Kernel {
    /// Every kernel; `Kernel::ALL[k as usize] == k`.
    pub const ALL: [Self; 21] = [
        Self::NttPass,
        Self::NttTwiddles,
        Self::LdeScales,
        Self::SplitChunks,
        Self::MerkleRowLeaves,
        Self::MerkleFriLayerLeaves,
        Self::MerkleLevel,
        Self::Poseidon2RowLeaves,
        Self::Poseidon2FriLayerLeaves,
        Self::Poseidon2Level,
        Self::Composition,
        Self::OodWeights,
        Self::RawPowers,
        Self::ColumnSums,
        Self::DeepFunction,
        Self::FriFold,
        Self::Grind,
        Self::GrindPoseidon2,
        Self::GatherRows,
        Self::GatherItems,
        Self::FillWords,
    ];

    /// The kernel's `extern "C"` name in the PTX.
    pub fn name(self) -> &'static str {
        match self {
            Self::NttPass => "ntt_pass",
            Self::NttTwiddles => "ntt_twiddles",
            Self::LdeScales => "lde_scales",
            Self::SplitChunks => "split_chunks",
            Self::MerkleRowLeaves => "merkle_row_leaves",
            Self::MerkleFriLayerLeaves => "merkle_fri_layer_leaves",
            Self::MerkleLevel => "merkle_level",
            Self::Poseidon2RowLeaves => "poseidon2_row_leaves",
            Self::Poseidon2FriLayerLeaves => "poseidon2_fri_layer_leaves",
            Self::Poseidon2Level => "poseidon2_level",
            Self::Composition => "composition",
            Self::OodWeights => "ood_weights",
            Self::RawPowers => "raw_powers",
            Self::ColumnSums => "column_sums",
            Self::DeepFunction => "deep_function",
            Self::FriFold => "fri_fold",
            Self::Grind => "grind",
            Self::GrindPoseidon2 => "grind_poseidon2",
            Self::GatherRows => "gather_rows",
            Self::GatherItems => "gather_items",
            Self::FillWords => "fill_words",
        }
    }

    /// The module that defines it.
    pub fn module(self) -> Module {
        match self {
            Self::NttPass | Self::NttTwiddles | Self::LdeScales | Self::SplitChunks => Module::Ntt,
            Self::MerkleRowLeaves
            | Self::MerkleFriLayerLeaves
            | Self::MerkleLevel
            | Self::Poseidon2RowLeaves
            | Self::Poseidon2FriLayerLeaves
            | Self::Poseidon2Level => Module::Merkle,
            Self::Composition => Module::Constraints,
            Self::OodWeights
            | Self::RawPowers
            | Self::ColumnSums
            | Self::DeepFunction
            | Self::FriFold => Module::Deep,
            Self::Grind
            | Self::GrindPoseidon2
            | Self::GatherRows
            | Self::GatherItems
            | Self::FillWords => Module::Queries,
        }
    }
}

/// One kernel argument.
#[derive(Debug)]
pub enum Arg<'a, B> {
    /// A device buffer, passed as its address.
    Buffer(&'a B),
    /// The address of word `offset` of a device buffer.
    At(&'a B, usize),
    /// A scalar parameter.
    Word(u64),
}

/// The shape of a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    /// Blocks in the grid.
    pub blocks: u32,
    /// Threads per block.
    pub threads: u32,
    /// 64-bit words of dynamic shared memory per block.
    pub shared_words: u32,
}

/// Threads per block of a launch that gives each thread one item.
pub const THREADS_PER_BLOCK: u32 = 256;

impl Grid {
    /// One thread per item for `items` items, in blocks of [`THREADS_PER_BLOCK`].
    ///
    /// # Errors
    /// If more blocks are needed than a grid's x dimension holds.
    pub fn items(items: u64) -> Result<Self, CudaError> {
        Self::blocks(
            items.div_ceil(u64::from(THREADS_PER_BLOCK)),
            THREADS_PER_BLOCK,
            0,
        )
    }

    /// `blocks` blocks of `threads` threads with `shared_words` words of shared memory. A
    /// grid of no block is no launch.
    ///
    /// # Errors
    /// If `blocks` exceeds what a grid's x dimension holds.
    pub fn blocks(blocks: u64, threads: u32, shared_words: u32) -> Result<Self, CudaError> {
        // A grid's x dimension holds up to 2^31 − 1 blocks.
        const MAX_BLOCKS: u64 = i32::MAX as u64;
        match u32::try_from(blocks) {
            Ok(b) if blocks <= MAX_BLOCKS => Ok(Self {
                blocks: b,
                threads,
                shared_words,
            }),
            _ => Err(CudaError::TooLarge {
                what: "a launch's block count",
                size: blocks,
                max: MAX_BLOCKS,
            }),
        }
    }
}

/// An executor's queues of work: launches and their copies run on the compute queue in
/// order; copies sent ahead run on the copy queue, ordered against the other only through
/// tickets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    /// The kernels, and the copies they need before or after them.
    Compute,
    /// Copies sent ahead of the work that needs them.
    Copy,
}

/// Something that runs kernels: device memory of `u64` words, copies and launches, in
/// order on its compute queue: each launch and copy sees the effects of the ones before
/// it. Memory is allocated and freed in that order too.
pub trait Launcher: Send + Sync {
    /// A buffer of `u64` words in the executor's memory.
    type Buffer: Send + Sync;
    /// A point in the executor's sequence of work, for timing it.
    type Mark;
    /// A point in one of the executor's queues that other work can wait for.
    type Ticket: Send;
    /// The backend's name in reports and errors.
    const NAME: &'static str;

    /// A new buffer of `len` words whose contents are unspecified until written: any bit
    /// pattern is a valid `u64`, so a word left unwritten is a wrong value, not undefined
    /// behaviour; an emulator fills it with a poison pattern so that such a word cannot
    /// pass for a correct 0.
    ///
    /// # Errors
    /// If the executor fails or has too little memory.
    fn alloc(&self, len: usize) -> Result<Self::Buffer, CudaError>;

    /// Words `buffer` holds.
    fn buffer_len(buffer: &Self::Buffer) -> usize;

    /// Copies `words` into `buffer` from word `offset` on.
    ///
    /// # Errors
    /// If the executor fails or the range is outside the buffer.
    fn upload(&self, words: &[u64], buffer: &Self::Buffer, offset: usize) -> Result<(), CudaError>;

    /// Copies `words` into `buffer` on the [`Queue::Copy`] queue, beside the kernels, not
    /// after them: the copy may overlap their work. Nothing on the compute queue waits for
    /// it unless told to ([`signal`](Self::signal), [`wait_for`](Self::wait_for)).
    /// `words` may be reused when this returns.
    ///
    /// # Errors
    /// If the executor fails or the buffer is too small.
    fn upload_ahead(&self, words: &[u64], buffer: &Self::Buffer) -> Result<(), CudaError>;

    /// A ticket that passes when the work queued on `queue` so far has run.
    ///
    /// # Errors
    /// If the executor fails.
    fn signal(&self, queue: Queue) -> Result<Self::Ticket, CudaError>;

    /// Makes the work queued on `queue` from now on wait for `ticket`.
    ///
    /// # Errors
    /// If the executor fails.
    fn wait_for(&self, queue: Queue, ticket: &Self::Ticket) -> Result<(), CudaError>;

    /// Copies `out.len()` words of `buffer` from word `offset` on back to the host, after
    /// the work queued before it.
    ///
    /// # Errors
    /// If the executor fails (including an earlier launch that failed asynchronously) or
    /// the range is outside the buffer.
    fn download(
        &self,
        buffer: &Self::Buffer,
        offset: usize,
        out: &mut [u64],
    ) -> Result<(), CudaError>;

    /// Runs `kernel` on `grid` with `args` in its parameter order.
    ///
    /// # Errors
    /// If the executor fails.
    fn launch(
        &self,
        kernel: Kernel,
        grid: Grid,
        args: &[Arg<'_, Self::Buffer>],
    ) -> Result<(), CudaError>;

    /// Marks the current point in the sequence of work.
    ///
    /// # Errors
    /// If the executor fails.
    fn mark(&self) -> Result<Self::Mark, CudaError>;

    /// The time the work between two marks took (both must have been reached: call after a
    /// download that follows them).
    ///
    /// # Errors
    /// If the executor fails.
    fn elapsed(&self, from: &Self::Mark, to: &Self::Mark) -> Result<Duration, CudaError>;

    /// Nonces one grinding launch tries.
    fn grind_batch(&self) -> u64 {
        1 << 20
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_are_listed_in_discriminant_order() {
        for (i, k) in Kernel::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i);
        }
    }

    #[test]
    fn every_kernel_is_in_its_modules_ptx() {
        for k in Kernel::ALL {
            let entry = format!(".visible .entry {}(", k.name());
            assert!(k.module().ptx().contains(&entry), "{}", k.name());
        }
        for m in Module::ALL {
            // compute_80, at the PTX ISA the driver floor admits. The driver reads it as a
            // C string.
            assert!(
                m.ptx()
                    .contains(&format!("\n.version {}\n", crate::PTX_ISA)),
                "{m:?}"
            );
            assert!(m.ptx().contains("\n.target sm_80\n"), "{m:?}");
            assert!(!m.ptx().contains('\0'), "{m:?}");
        }
    }

    #[test]
    fn grids_cover_every_item_and_refuse_oversized_launches() {
        let g = Grid::items(1).unwrap();
        assert_eq!((g.blocks, g.threads), (1, THREADS_PER_BLOCK));
        assert_eq!(Grid::items(257).unwrap().blocks, 2);
        assert!(Grid::items(u64::MAX).is_err());
    }
}
