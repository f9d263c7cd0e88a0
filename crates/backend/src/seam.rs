//! The backend traits: what the protocol asks of the place a segment's data lives.
//!
//! The protocol (`ballast-stark`'s prover) runs the transcript and decides every challenge;
//! a [`Backend`] holds the segment's tables, trees and layers and does the bulk work on
//! them, step by step, handing back only what goes into the proof or the transcript: roots,
//! out-of-domain values, the last FRI layer, the grinding nonce and the openings. Where the
//! data lives (host memory, a GPU) is the backend's business.

use ballast_air::{ConstraintProgram, ProgramError};
use ballast_field::{Ext3, Felt, RowBlocks};
use ballast_fri::{FriLayerOpening, FriLayers, QueryPlan, round_arities};
use ballast_merkle::{Digest, MerkleHash};
use ballast_transcript::Transcript;

use crate::{BackendError, DeviceCounters, OodValues, PhaseTimes};

/// A segment's shape: what sizes every table, tree and part of its proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Columns of the trace.
    pub width: usize,
    /// log2 of the trace's rows.
    pub log_rows: usize,
    /// log2 of the blowup factor.
    pub log_blowup: usize,
    /// log2 of the quotient's chunks.
    pub log_quotient_chunks: usize,
    /// log2 of the FRI final polynomial's coefficients: where the layers stop.
    pub log_final_poly_len: usize,
    /// Queries drawn: the most positions opened.
    pub num_queries: usize,
    /// The hash the segment's trees commit with.
    pub hash: MerkleHash,
}

impl Geometry {
    /// log2 of the LDE domain's size.
    pub fn log_lde(&self) -> usize {
        self.log_rows + self.log_blowup
    }

    /// log2 of the quotient coset's size: the points the composition is evaluated at.
    pub fn log_quotient(&self) -> usize {
        self.log_rows + self.log_quotient_chunks
    }

    /// Columns of the quotient's chunks: three base coordinates per chunk.
    pub fn quotient_width(&self) -> usize {
        Ext3::DEGREE << self.log_quotient_chunks
    }

    /// Whether `table` holds a trace of this shape; the mismatch, in words, if not.
    ///
    /// # Errors
    /// A table of another width or height.
    pub fn check_trace(&self, table: &RowBlocks) -> Result<(), String> {
        if table.width() == self.width && table.height() == 1 << self.log_rows {
            Ok(())
        } else {
            Err(format!(
                "a trace of {} × {} rows to prove as {} × 2^{}",
                table.width(),
                table.height(),
                self.width,
                self.log_rows
            ))
        }
    }

    /// log2 of each FRI round's arity; one committed layer per round.
    pub fn fri_arities(&self) -> Vec<usize> {
        round_arities(self.log_rows - self.log_final_poly_len)
    }
}

/// A segment's constraints, in the forms backends evaluate them in.
pub trait SegmentAir: Sync {
    /// The AIR's stable id ([`ballast_air::Air::id`]): with the geometry, the key under
    /// which a backend may keep a compiled program.
    fn id(&self) -> &str;

    /// The constraints compiled into a register program ([`ConstraintProgram::of`]), for
    /// backends that interpret it.
    ///
    /// # Errors
    /// If the AIR does not fit the program's encoding.
    fn program(&self) -> Result<ConstraintProgram, ProgramError>;

    /// The composition Q on the quotient coset g·H_q, natural order, evaluated on the host
    /// from the trace's LDE `lde`: the CPU backend's path, compiled for the AIR itself.
    fn composition_on_host(
        &self,
        lde: &RowBlocks,
        geometry: &Geometry,
        input: &CompositionInput<'_>,
    ) -> Vec<Ext3>;
}

/// What the composition reads besides the trace.
#[derive(Clone, Copy, Debug)]
pub struct CompositionInput<'a> {
    /// Constraint i's coefficient: α^i.
    pub coefficients: &'a [Ext3],
    /// The segment's public inputs.
    pub public_inputs: &'a [Felt],
    /// Each periodic column on the quotient coset: 2^log_chunks·period values it cycles
    /// through, position t holding the column at g·ζ^t.
    pub periodic: &'a [Vec<Felt>],
}

/// The DEEP function's constants, fixed by γ and the out-of-domain claims:
/// f(x) = (A(x) + B(x) − at_z)/(x − z) + next_row·(A(x) − at_zw)/(x − zω), with
/// A = Σ_k trace_k·T_k and B = Σ_c quotient_c·Q_c.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeepCoefficients {
    /// γ^k for trace column k.
    pub trace: Vec<Ext3>,
    /// γ^(W + c) for quotient column c.
    pub quotient: Vec<Ext3>,
    /// γ^(W + C): the next row's weight.
    pub next_row: Ext3,
    /// A(z) + B(z), from the claims.
    pub at_z: Ext3,
    /// A(zω), from the claims.
    pub at_zw: Ext3,
    /// The out-of-domain point z.
    pub z: Ext3,
    /// z·ω.
    pub zw: Ext3,
}

impl DeepCoefficients {
    /// f at one point x, from the trace's and the quotient's rows there.
    pub fn evaluate(&self, trace_row: &[Felt], quotient_row: &[Felt], x: Felt) -> Ext3 {
        let a = ballast_field::dot_ext_base(&self.trace, trace_row);
        let b = ballast_field::dot_ext_base(&self.quotient, quotient_row);
        let x = Ext3::from(x);
        // z and zω lie outside g·H' (the OOD point is drawn so), so x − z ≠ 0.
        (a + b - self.at_z) * (x - self.z).inverse()
            + self.next_row * (a - self.at_zw) * (x - self.zw).inverse()
    }
}

/// The commitments opened at the query positions: each row of the trace's and the
/// quotient's LDE there, their trees' batch openings, and every FRI layer's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Openings {
    /// The trace LDE's rows, one after another.
    pub trace_rows: Vec<Felt>,
    /// The trace tree's batch opening of those rows.
    pub trace_nodes: Vec<Digest>,
    /// The quotient chunks' LDE rows, one after another.
    pub quotient_rows: Vec<Felt>,
    /// The quotient tree's batch opening of those rows.
    pub quotient_nodes: Vec<Digest>,
    /// Each committed FRI layer's openings.
    pub fri: Vec<FriLayerOpening>,
}

/// A trace [`Backend::stage`] sent ahead: the backend's own number for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Staged(pub u64);

/// Where a segment is proven. One backend proves the segments of a statement one after
/// another; each segment is a [`SegmentProver`] that [`begin`](Self::begin) starts.
pub trait Backend: Sync {
    /// A short name for reports ("cpu", "cuda").
    fn name(&self) -> &'static str;

    /// A host table for traces of `width` columns × 2^`log_rows` rows, zeroed, with the
    /// room this backend needs of it: the CPU extends a trace in place, a device only reads
    /// it.
    fn trace_table(&self, width: usize, log_rows: usize, log_blowup: usize) -> RowBlocks;

    /// Whether tracing the next segment on the host should overlap proving this one (a
    /// device proves while the host's cores are free); then [`stage`](Self::stage) sends
    /// each trace ahead.
    fn overlaps_tracing(&self) -> bool {
        false
    }

    /// Sends the trace in `table` towards where it will be proven, ahead of the
    /// [`begin`](Self::begin) that proves it, while another segment may be proving; that
    /// `begin` gets the returned [`Staged`]. A backend that reads the table in place
    /// returns `None`.
    ///
    /// # Errors
    /// If the device fails.
    fn stage(
        &self,
        table: &RowBlocks,
        geometry: &Geometry,
    ) -> Result<Option<Staged>, BackendError> {
        let _ = (table, geometry);
        Ok(None)
    }

    /// Starts proving a segment whose trace (evaluations on H) is in `table`, and already
    /// where [`stage`](Self::stage) sent it when `staged` says so.
    ///
    /// # Errors
    /// If the device fails, or the table is not of the geometry's shape.
    fn begin<'a>(
        &'a self,
        table: &'a mut RowBlocks,
        air: &'a dyn SegmentAir,
        geometry: Geometry,
        staged: Option<Staged>,
    ) -> Result<Box<dyn SegmentProver + 'a>, BackendError>;

    /// What a device backend counted since it was made: its memory's high-water mark and
    /// the bytes moved each way. `None` for the CPU.
    fn counters(&self) -> Option<DeviceCounters> {
        None
    }
}

/// One segment being proven, step by step in protocol order. Each step reads what the
/// earlier ones left where the data lives; the FRI rounds are [`FriLayers`]'s, on the
/// layer [`deep`](Self::deep) makes.
pub trait SegmentProver: FriLayers<Error = BackendError> {
    /// Step 1: extends the trace to the LDE domain and commits its rows; the root.
    ///
    /// # Errors
    /// If the device fails.
    fn commit_trace(&mut self, times: &mut PhaseTimes) -> Result<Digest, BackendError>;

    /// Step 2: evaluates the composition on the quotient coset, splits it into chunks,
    /// extends them and commits their rows; the root.
    ///
    /// # Errors
    /// If the device fails.
    fn commit_quotient(
        &mut self,
        input: &CompositionInput<'_>,
        times: &mut PhaseTimes,
    ) -> Result<Digest, BackendError>;

    /// Step 3: the trace's columns at z and z·ω, the quotient's at z.
    ///
    /// # Errors
    /// If the device fails.
    fn out_of_domain(&mut self, z: Ext3, times: &mut PhaseTimes)
    -> Result<OodValues, BackendError>;

    /// The trace's rows on H, for naming the row that fails when the out-of-domain
    /// identity does not hold (rare: a false statement).
    ///
    /// # Errors
    /// If the device fails.
    fn trace(&mut self) -> Result<RowBlocks, BackendError>;

    /// Step 4: the DEEP function on the LDE domain, the input of the FRI rounds.
    ///
    /// # Errors
    /// If the device fails.
    fn deep(
        &mut self,
        coefficients: &DeepCoefficients,
        times: &mut PhaseTimes,
    ) -> Result<(), BackendError>;

    /// Step 6: the smallest nonce passing [`Transcript::check_pow`] with `bits`.
    ///
    /// # Errors
    /// If the device fails.
    fn grind(
        &mut self,
        transcript: &Transcript,
        bits: u32,
        times: &mut PhaseTimes,
    ) -> Result<u64, BackendError>;

    /// Step 7: the openings at `positions` (strictly increasing); `plan` is where they
    /// land in the FRI layers.
    ///
    /// # Errors
    /// If the device fails.
    fn open(
        &mut self,
        positions: &[usize],
        plan: &QueryPlan,
        times: &mut PhaseTimes,
    ) -> Result<Openings, BackendError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_of_another_shape_is_named() {
        let geometry = Geometry {
            width: 3,
            log_rows: 4,
            log_blowup: 1,
            log_quotient_chunks: 1,
            log_final_poly_len: 1,
            num_queries: 2,
            hash: MerkleHash::Keccak256,
        };
        assert_eq!(geometry.check_trace(&RowBlocks::zeroed(3, 16, 32)), Ok(()));
        assert_eq!(
            geometry.check_trace(&RowBlocks::zeroed(3, 8, 32)),
            Err("a trace of 3 × 8 rows to prove as 3 × 2^4".to_owned())
        );
        assert!(geometry.check_trace(&RowBlocks::zeroed(4, 16, 32)).is_err());
    }
}
