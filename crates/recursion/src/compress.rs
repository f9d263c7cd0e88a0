//! A statement's compressed proof ([`CompressedRecord`]): the last layer's proof that the
//! statement's segment proof verifies, with the statement it is about. [`compress`] makes
//! it from a whole proof made with Poseidon2 trees; [`verify_compressed`] checks it from
//! the statement alone, the segment proof gone.
//!
//! A statement of one segment compresses today. One of several needs aggregation layers,
//! whose AIRs verify layer proofs (`docs/recursion.md`); until they exist such a proof is
//! refused by name.

use ballast_stark::{
    Analysis, Circuit, CompressedRecord, MerkleHash, Proof, Regime, SegmentPosition,
    SegmentStatement, TablesCircuit, VerifierError, VerifyPolicy, Workload, statement_context,
};

use crate::{Child, ChildError, LayerError, LayerRole, verify_record};

/// The last layer's blowup (log2) and grinding bits that [`compress`] takes by default:
/// blowup 64, whose queries are worth about 3 bits each, and 28 bits of grinding, which
/// take it under 256 KiB for a 2^14-row Poseidon2-chain segment (251 KiB through `cli`,
/// against 262 at 22 bits; `docs/recursion.md`).
pub const DEFAULT_LAST_LAYER: (usize, u32) = (6, 28);

/// Why a proof cannot be compressed, or a compressed proof is refused.
#[derive(Debug, thiserror::Error)]
pub enum CompressError {
    /// A part: it proves no statement.
    #[error("it is a part (segments {first}..{end} of {segments}); bundle the parts first")]
    Part {
        /// Its first segment.
        first: usize,
        /// The segment after its last.
        end: usize,
        /// The statement's segments.
        segments: usize,
    },
    /// A statement of several segments, which needs aggregation layers.
    #[error(
        "the statement has {0} segments; compressing more than one needs aggregation layers, \
         which this build does not have (prove it in one segment: --log-rows)"
    )]
    Segments(usize),
    /// A child or layer the layer's prover or verifier refuses.
    #[error(transparent)]
    Layer(#[from] LayerError),
    /// A statement its workload refuses, a start other than the workload's, or a proof
    /// over the policy's size cap.
    #[error(transparent)]
    Statement(#[from] VerifierError),
    /// Segment parameters the policy refuses (too few bits, another hash or parameters).
    #[error("the segment proofs' parameters: {0}")]
    SegmentParams(VerifierError),
}

/// The segment statement a whole proof of one segment, from `ends[0]` to `ends[1]`, proves:
/// what the layer is a proof about.
fn child_statement<'a, W: Workload>(
    workload: &W,
    context: &'a [u8],
    public_inputs: &'a [ballast_field::Felt],
) -> SegmentStatement<'a> {
    SegmentStatement {
        context,
        position: SegmentPosition {
            index: 0,
            count: workload.segments(),
        },
        public_inputs,
    }
}

/// Compresses `proof`, a whole proof of one segment made with Poseidon2 trees that its
/// verifier accepts under `policy`: the last layer's proof at blowup 2^`log_blowup` and
/// `pow_bits` grinding bits, with the fewest queries that give it `target` bits in `regime`
/// ([`Child::layer_params`]), committed with Keccak-256.
///
/// # Errors
/// A part, a statement of several segments, a Keccak-256 proof, one whose workload or start
/// its verifier refuses or that does not verify, or parameters the layer cannot reach
/// `target` with.
pub fn compress<W: Workload>(
    proof: &Proof<W>,
    (log_blowup, pow_bits): (usize, u32),
    target: u32,
    regime: Regime,
    policy: &VerifyPolicy,
) -> Result<CompressedRecord<W>, CompressError> {
    let segments = proof.workload.segments();
    if !proof.is_whole() {
        let range = proof.range();
        return Err(CompressError::Part {
            first: range.start,
            end: range.end,
            segments,
        });
    }
    if proof.params.hash != MerkleHash::Poseidon2 {
        return Err(LayerError::from(ChildError::NotPoseidon2).into());
    }
    if segments != 1 {
        return Err(CompressError::Segments(segments));
    }
    proof.workload.validate().map_err(VerifierError::from)?;
    let [start, outcome] = proof.states.as_slice() else {
        return Err(VerifierError::Shape {
            what: "states",
            expected: 2,
            got: proof.states.len(),
        }
        .into());
    };
    if *start != proof.workload.start() {
        return Err(VerifierError::Start.into());
    }
    let ends = [start.clone(), outcome.clone()];
    let context = statement_context(&proof.workload);
    let public_inputs = proof.workload.public_inputs(0, &ends[0], &ends[1]);
    let statement = child_statement(&proof.workload, &context, &public_inputs);
    let air = proof.workload.air(0);
    let child = Child::of_segment(&air, &proof.segments[0], &statement, &proof.params, policy)
        .map_err(LayerError::from)?;
    let params = child
        .layer_params(
            log_blowup,
            pow_bits,
            target,
            regime,
            LayerRole::Last(MerkleHash::Keccak256),
        )
        .map_err(LayerError::from)?;
    let layer = child.prove(&params)?;
    Ok(CompressedRecord {
        params: proof.params,
        workload: proof.workload.clone(),
        ends,
        layer: child.layer_record(&layer, &params)?,
    })
}

/// What a compressed proof's security is made of, in proving order: its segments' circuit
/// and its last layer's. Its figure is the weakest layer's, each judged in its own regime;
/// the two errors add up, so the bound on the whole is at most one bit below it
/// (`docs/protocol.md` §6 item 16).
#[derive(Clone, Debug)]
pub struct CompressedCircuits {
    /// The segments' circuit, at the record's segment parameters.
    pub segments: Circuit,
    /// The last layer's tables.
    pub last: TablesCircuit,
}

impl CompressedCircuits {
    /// The figure in `regime`: the weaker layer's analysis.
    pub fn analyse(&self, regime: Regime) -> Analysis {
        weaker(self.segments.analyse(regime), self.last.analyse(regime))
    }
}

/// Of a compressed proof's two layers analysed in one regime, the weaker ([`last_is_weaker`]).
pub fn weaker(segments: Analysis, last: Analysis) -> Analysis {
    if last_is_weaker(&segments, &last) {
        last
    } else {
        segments
    }
}

/// Whether, of a compressed proof's two layers analysed in one regime, the last layer is the
/// weaker: its figure, capped by the hash, lower (the segments' on a tie).
pub fn last_is_weaker(segments: &Analysis, last: &Analysis) -> bool {
    last.capped() < segments.capped()
}

/// Checks that `record` proves its statement: the workload starts where it says, and its
/// layer proves that a proof of the statement's segment, made with the record's segment
/// parameters, verifies ([`verify_record`]). `policy` applies to the segments' parameters
/// and the layer's, and its cap to the record's bytes. Returns the circuits whose figures
/// the policy judged.
///
/// # Errors
/// A workload its own checks refuse, another start, a statement of several segments, or a
/// layer that does not verify.
pub fn verify_compressed<W: Workload>(
    record: &CompressedRecord<W>,
    policy: &VerifyPolicy,
) -> Result<CompressedCircuits, CompressError> {
    let CompressedRecord {
        params,
        workload,
        ends,
        layer,
    } = record;
    workload.validate().map_err(VerifierError::from)?;
    if ends[0] != workload.start() {
        return Err(VerifierError::Start.into());
    }
    let count = workload.segments();
    if count != 1 {
        return Err(CompressError::Segments(count));
    }
    policy.check_size(record.to_bytes().len() as u64)?;
    let context = statement_context(workload);
    let public_inputs = workload.public_inputs(0, &ends[0], &ends[1]);
    let statement = child_statement(workload, &context, &public_inputs);
    let air = workload.air(0);
    let segments = Circuit::of(&air, params).map_err(VerifierError::from)?;
    policy
        .check_circuit(&segments)
        .map_err(CompressError::SegmentParams)?;
    let last = verify_record(&air, &statement, params, layer, policy)?;
    Ok(CompressedCircuits { segments, last })
}
