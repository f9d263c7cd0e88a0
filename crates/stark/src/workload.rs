//! What a statement is about: a computation proven as a chain of segments.
//!
//! A [`Workload`] is the computation to prove (its shape and its inputs), with everything
//! the prover and verifier need to know about it: each segment's AIR, trace and public
//! inputs, the state that flows from one segment to the next, and its canonical encoding.
//! The prover, verifier and proof format are generic over it; `ballast-workloads` holds the
//! workloads ballast ships.

use std::fmt::Debug;

use ballast_air::Air;
use ballast_field::{Felt, RowBlocks};

use crate::{ParamsError, ProofFormatError};

/// A computation proven segment by segment.
pub trait Workload: Clone + Debug + PartialEq + Sync + Sized {
    /// The workload's tag in the proof format.
    const TAG: u8;
    /// Its name in reports, e.g. `"keccak-chain"`.
    const NAME: &'static str;
    /// Bytes of [`encode`](Self::encode): fixed, so a proof's length follows from its header.
    const ENCODED_LEN: usize;

    /// One segment's AIR. Equal AIRs have one definition (and so one key).
    type Air: Air + PartialEq;
    /// What one segment hands to the next: the computation's state at a segment boundary.
    type State: Clone + Debug + PartialEq + Send + Sync;

    /// Checks the workload's own limits.
    ///
    /// # Errors
    /// The first field out of range.
    fn validate(&self) -> Result<(), ParamsError>;

    /// The canonical encoding, [`ENCODED_LEN`](Self::ENCODED_LEN) bytes.
    fn encode(&self) -> Vec<u8>;

    /// Decodes and validates an encoding of [`ENCODED_LEN`](Self::ENCODED_LEN) bytes.
    ///
    /// # Errors
    /// A field out of range.
    fn decode(bytes: &[u8]) -> Result<Self, ParamsError>;

    /// Number of segments.
    fn segments(&self) -> usize;

    /// log2 of the rows of every segment's table.
    fn log_rows(&self) -> usize;

    /// Bytes of an encoded state.
    fn state_len(&self) -> usize;

    /// Appends the canonical encoding of `state` ([`state_len`](Self::state_len) bytes).
    fn encode_state(&self, state: &Self::State, out: &mut Vec<u8>);

    /// Decodes a state of [`state_len`](Self::state_len) bytes.
    ///
    /// # Errors
    /// A non-canonical encoding (`offset` is where `bytes` starts in the proof).
    fn decode_state(&self, bytes: &[u8], offset: usize) -> Result<Self::State, ProofFormatError>;

    /// The state the computation starts from.
    fn start(&self) -> Self::State;

    /// Segment `segment`'s AIR.
    fn air(&self, segment: usize) -> Self::Air;

    /// Segment `segment`'s public inputs, from the states it starts and ends in.
    fn public_inputs(&self, segment: usize, start: &Self::State, end: &Self::State) -> Vec<Felt>;

    /// Runs segment `segment` from `start`, writing its trace into `table` (shaped
    /// `air(segment).width()` × 2^`log_rows()` and zeroed by the caller, with room for the
    /// extension), and returns the state it ends in.
    fn trace(&self, segment: usize, start: &Self::State, table: &mut RowBlocks) -> Self::State;

    /// [`trace`](Self::trace) into a table of its own, exactly the trace's size: the trace
    /// and the state it ends in.
    fn trace_table(&self, segment: usize, start: &Self::State) -> (RowBlocks, Self::State) {
        let rows = 1usize << self.log_rows();
        let mut table = RowBlocks::zeroed(self.air(segment).width(), rows, rows);
        let end = self.trace(segment, start, &mut table);
        (table, end)
    }

    /// Runs segment `segment` from `start` without keeping a trace (far cheaper than
    /// [`trace`](Self::trace)): the state it ends in.
    fn run(&self, segment: usize, start: &Self::State) -> Self::State;

    /// The state the last segment ends in, by [`run`](Self::run) from
    /// [`start`](Self::start): the statement's output, without a trace.
    fn output(&self) -> Self::State {
        (0..self.segments()).fold(self.start(), |state, segment| self.run(segment, &state))
    }
}
