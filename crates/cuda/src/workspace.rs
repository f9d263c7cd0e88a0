//! A segment's device buffers, kept from segment to segment: allocated for the first segment
//! of a shape ([`Key`]) and reused, untouched by any allocation or fill, by every later one.
//! [`Sizes`] is the one account of what they hold, for allocating them and for judging
//! whether a device has room.

use ballast_air::ConstraintProgram;
use ballast_backend::Geometry;
use ballast_merkle::MerkleHash;

use crate::CudaError;
use crate::kernels::{Launcher, THREADS_PER_BLOCK};
use crate::lde::{self, LdeTables};
use crate::merkle::{self, DIGEST_WORDS, TreeHash, tree_digests};

/// Words of the grinding state: a Poseidon2 duplex's cells and its next cell (a Keccak-256
/// state takes 4).
const GRIND_STATE_WORDS: usize = ballast_poseidon2::constants::WIDTH + 1;

/// Threads of the composition's launch at most: each holds a set of registers.
const COMPOSITION_THREADS: u64 = 1 << 16;

/// What sizes a workspace: the geometry, the program and the FRI schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Key {
    pub(crate) geometry: Geometry,
    pub(crate) air_id: String,
    pub(crate) log_tile: usize,
}

/// A segment's device buffers, kept for the next segment of the same [`Key`].
pub(crate) struct Workspace<B> {
    pub(crate) key: Key,
    pub(crate) tables: LdeTables<B>,
    pub(crate) program_len: usize,
    pub(crate) program: B,
    pub(crate) constants: B,
    pub(crate) registers: B,
    pub(crate) composition_threads: u64,
    /// Raw columns between the inverse transform and the extension: the trace's, then the
    /// quotient's chunks.
    pub(crate) raw: B,
    pub(crate) scratch: B,
    pub(crate) lde: B,
    pub(crate) trace_tree: B,
    /// The composition's three coordinate columns on the quotient coset.
    pub(crate) quotient_values: B,
    pub(crate) chunk_scales: B,
    pub(crate) quotient_lde: B,
    pub(crate) quotient_tree: B,
    /// Barycentric weights, then the powers of z for the raw columns.
    pub(crate) weights: B,
    pub(crate) sums: B,
    pub(crate) deep_coefficients: B,
    pub(crate) deep_constants: B,
    /// Every FRI layer, one after another, three words a value.
    pub(crate) layers: B,
    /// Every FRI layer's tree, one after another.
    pub(crate) layer_trees: B,
    /// The transcript's state a nonce is ground from ([`GRIND_STATE_WORDS`]).
    pub(crate) grind_state: B,
    pub(crate) grind_found: B,
    /// Poseidon2's round constants, for segments committed with it.
    pub(crate) round_constants: Option<B>,
    /// Per-segment inputs: periodic columns, their offsets, public inputs, coefficients.
    pub(crate) inputs: Inputs<B>,
    /// The openings' indices and gathered words, grown as needed.
    pub(crate) indices: B,
    pub(crate) gathered: B,
}

impl<B> Workspace<B> {
    /// The hash its segments' trees are built with.
    pub(crate) fn tree_hash(&self) -> TreeHash<'_, B> {
        match &self.round_constants {
            None => TreeHash::Keccak,
            Some(rc) => TreeHash::Poseidon2(rc),
        }
    }
}

/// A buffer whose contents change per segment, with its capacity; it grows (rarely: the
/// first segments) when a segment needs more.
pub(crate) struct Growable<B> {
    pub(crate) buffer: B,
    len: usize,
}

impl<B> Growable<B> {
    fn new<L: Launcher<Buffer = B>>(launcher: &L, len: usize) -> Result<Self, CudaError> {
        Ok(Self {
            buffer: launcher.alloc(len.max(1))?,
            len: len.max(1),
        })
    }

    /// The buffer, with room for `len` words.
    fn with<L: Launcher<Buffer = B>>(&mut self, launcher: &L, len: usize) -> Result<&B, CudaError> {
        if len > self.len {
            *self = Self::new(launcher, len)?;
        }
        Ok(&self.buffer)
    }

    /// Uploads `words` into it.
    pub(crate) fn upload<L: Launcher<Buffer = B>>(
        &mut self,
        launcher: &L,
        words: &[u64],
    ) -> Result<&B, CudaError> {
        let buffer = self.with(launcher, words.len())?;
        launcher.upload(words, buffer, 0)?;
        Ok(buffer)
    }
}

/// The per-segment inputs of the composition.
pub(crate) struct Inputs<B> {
    pub(crate) periodic: Growable<B>,
    pub(crate) periodic_at: Growable<B>,
    pub(crate) public_inputs: Growable<B>,
    pub(crate) coefficients: Growable<B>,
}

impl<B> Workspace<B> {
    /// Buffers for segments of `key`'s shape, with `program` uploaded.
    pub(crate) fn new<L: Launcher<Buffer = B>>(
        launcher: &L,
        key: Key,
        program: &ConstraintProgram,
    ) -> Result<Self, CudaError> {
        let g = key.geometry;
        let size = Sizes::of(&g, program, key.log_tile);
        let tables = LdeTables::new(
            launcher,
            g.log_rows,
            g.log_blowup,
            g.log_quotient(),
            key.log_tile,
        )?;
        let words: Vec<u64> = program.words();
        let program_buffer = launcher.alloc(words.len())?;
        launcher.upload(&words, &program_buffer, 0)?;
        let constants: Vec<u64> = program.constants().iter().map(|c| c.as_u64()).collect();
        let constants_buffer = launcher.alloc(constants.len())?;
        launcher.upload(&constants, &constants_buffer, 0)?;
        Ok(Self {
            tables,
            program_len: words.len(),
            program: program_buffer,
            constants: constants_buffer,
            registers: launcher.alloc(size.registers)?,
            composition_threads: size.composition_threads,
            raw: launcher.alloc(size.raw)?,
            scratch: launcher.alloc(size.scratch)?,
            lde: launcher.alloc(size.lde)?,
            trace_tree: launcher.alloc(size.tree)?,
            quotient_values: launcher.alloc(size.quotient_values)?,
            chunk_scales: launcher.alloc(size.chunk_scales)?,
            quotient_lde: launcher.alloc(size.quotient_lde)?,
            quotient_tree: launcher.alloc(size.tree)?,
            weights: launcher.alloc(size.weights)?,
            sums: launcher.alloc(size.sums)?,
            deep_coefficients: launcher.alloc(size.deep_coefficients)?,
            deep_constants: launcher.alloc(15)?,
            layers: launcher.alloc(size.layers)?,
            layer_trees: launcher.alloc(size.layer_trees)?,
            grind_state: launcher.alloc(GRIND_STATE_WORDS)?,
            grind_found: launcher.alloc(1)?,
            round_constants: match key.geometry.hash {
                MerkleHash::Keccak256 => None,
                MerkleHash::Poseidon2 => {
                    let words = merkle::poseidon2_constants();
                    let buffer = launcher.alloc(words.len())?;
                    launcher.upload(&words, &buffer, 0)?;
                    Some(buffer)
                }
            },
            inputs: Inputs {
                periodic: Growable::new(launcher, 1)?,
                periodic_at: Growable::new(launcher, 2)?,
                public_inputs: Growable::new(launcher, 1)?,
                coefficients: Growable::new(launcher, 3 * program.domains().len())?,
            },
            indices: launcher.alloc(size.indices)?,
            gathered: launcher.alloc(size.gathered)?,
            key,
        })
    }
}

/// The words of a workspace's large buffers, for segments of one geometry and program.
pub(crate) struct Sizes {
    composition_threads: u64,
    registers: usize,
    trace: usize,
    raw: usize,
    scratch: usize,
    lde: usize,
    tree: usize,
    quotient_values: usize,
    chunk_scales: usize,
    quotient_lde: usize,
    weights: usize,
    sums: usize,
    deep_coefficients: usize,
    layers: usize,
    layer_trees: usize,
    indices: usize,
    gathered: usize,
    /// The transforms' tables: twiddles both ways and the coset scales.
    tables: usize,
}

impl Sizes {
    pub(crate) fn of(g: &Geometry, program: &ConstraintProgram, log_tile: usize) -> Self {
        let (n, lde_rows, q) = (
            1usize << g.log_rows,
            1usize << g.log_lde(),
            1usize << g.log_quotient(),
        );
        let (w, cq) = (g.width, g.quotient_width());
        // Every thread of the grid has its registers, those past the last point too.
        let composition_threads = (q as u64)
            .min(COMPOSITION_THREADS)
            .next_multiple_of(u64::from(THREADS_PER_BLOCK));
        let multiple_passes = lde::passes(g.log_rows, log_tile).len() > 1;
        // The FRI layers: N values, then N/a, …, down to the last layer.
        let (mut layers, mut layer_trees, mut log_len) = (3 * lde_rows, 0, g.log_lde());
        for log_arity in g.fri_arities() {
            layer_trees += DIGEST_WORDS * tree_digests(log_len - log_arity);
            log_len -= log_arity;
            layers += 3 << log_len;
        }
        Self {
            composition_threads,
            registers: program.registers() * composition_threads as usize,
            // A block of eight rows at least: the host's table is in blocks of eight.
            trace: w * n.max(8),
            raw: w.max(cq) * n,
            scratch: if multiple_passes { w.max(cq) * n } else { 1 },
            lde: w * lde_rows,
            tree: DIGEST_WORDS * tree_digests(g.log_lde()),
            quotient_values: 3 * q,
            chunk_scales: 1 << g.log_quotient_chunks,
            quotient_lde: cq * lde_rows,
            weights: 3 * n,
            sums: 3 * (2 * w).max(cq),
            deep_coefficients: 3 * (w + cq),
            layers,
            layer_trees,
            // The openings' largest gathers: a row of the wider table per query, or a
            // batch opening's nodes (at most a path per query).
            indices: g.num_queries * g.log_lde().max(8),
            gathered: g.num_queries * w.max(cq).max(DIGEST_WORDS * g.log_lde()).max(3 * 8),
            tables: n + q + (n << g.log_blowup),
        }
    }

    /// Bytes of device memory a workspace of these sizes holds, the program's aside.
    pub(crate) fn bytes(&self) -> u64 {
        // Two traces: the one proven, the next one sent ahead.
        let words = self.registers
            + 2 * self.trace
            + self.raw
            + self.scratch
            + self.lde
            + 2 * self.tree
            + self.quotient_values
            + self.chunk_scales
            + self.quotient_lde
            + self.weights
            + self.sums
            + self.deep_coefficients
            + self.layers
            + self.layer_trees
            + self.indices
            + self.gathered
            + self.tables;
        8 * words as u64
    }
}
