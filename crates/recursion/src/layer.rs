//! A layer's proof of one child segment proof: the three AIRs of a [`ChildSegment`] proven,
//! and its verifier, which takes the child's AIR, statement and parameters but not the
//! child's proof. It builds the AIRs from the child's shape and from what the transcript
//! AIR's public inputs say the child's transcript read and absorbed: the transcript AIR
//! from the transcript's layout for that shape (`ballast_stark::transcript_layout`), the
//! query AIR at the positions the draws give, the identity AIR on the claims absorbed;
//! then it checks the AIRs' public inputs against each other (the links of
//! [`ChildSegment::check_links`]) and each proof.

use ballast_air::Air;
use ballast_field::{Ext3, Felt, RowBlocks};
use ballast_stark::{
    Backend, MerkleHash, PhaseTimes, ProverError, SegmentPosition, SegmentProof, SegmentStatement,
    StarkParams, TranscriptLayout, VerifierError, VerifyPolicy, periodic_at, prove, statement_data,
    transcript_layout, verify,
};

use crate::child::{Absorbed, Links, READ_ALPHA, READ_Z, child_shape, positions_of};
use crate::{
    ChildError, ChildSegment, IdentityAir, LayerInputs, LinkError, OodClaims, QueriesAir,
    TranscriptAir,
};

/// The context every layer proof's statement binds.
pub const LAYER_CONTEXT: &[u8] = b"ballast layer";

/// The layer's AIRs, in the order of their proofs: each proof's statement is at that
/// position of [`LAYER_AIRS`]`.len()`.
pub const LAYER_AIRS: [&str; 3] = ["transcript", "identity", "query"];

/// A layer's proof that a child segment proof verifies: its three AIRs' public inputs and
/// proofs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerProof {
    /// The AIRs' public inputs.
    pub inputs: LayerInputs,
    /// The proof of the child's transcript AIR.
    pub transcript: SegmentProof,
    /// The proof of the child's identity AIR.
    pub identity: SegmentProof,
    /// The proof of the child's query AIR.
    pub queries: SegmentProof,
}

/// Why a layer cannot be proven or is refused.
#[derive(Debug, thiserror::Error)]
pub enum LayerError {
    /// A child the layer's AIRs do not take, or a child's AIR and parameters that do not
    /// make a shape.
    #[error(transparent)]
    Child(#[from] ChildError),
    /// Public inputs that do not agree with each other or with the child's statement.
    #[error("the layer's public inputs: {0}")]
    Links(#[from] LinkError),
    /// An AIR the layer's prover could not prove.
    #[error("the layer's {air} AIR: {source}")]
    Prover {
        /// The AIR.
        air: &'static str,
        /// Why.
        source: ProverError,
    },
    /// A proof of the layer's that does not verify.
    #[error("the layer's {air} AIR proof does not verify: {source}")]
    Verifier {
        /// The AIR.
        air: &'static str,
        /// Why.
        source: VerifierError,
    },
}

/// The statement of the layer's proof of AIR `k` of [`LAYER_AIRS`].
fn layer_statement(k: usize, public_inputs: &[Felt]) -> SegmentStatement<'_> {
    SegmentStatement {
        context: LAYER_CONTEXT,
        position: SegmentPosition {
            index: k,
            count: LAYER_AIRS.len(),
        },
        public_inputs,
    }
}

impl ChildSegment {
    /// Proves its three AIRs with `params` on `backend`, once their public inputs link.
    ///
    /// # Errors
    /// A trace its AIR does not take or the prover refuses (none for a `ChildSegment::of`
    /// built).
    pub fn prove(
        &self,
        params: &StarkParams,
        backend: &dyn Backend,
    ) -> Result<LayerProof, LayerError> {
        let inputs = self.public_inputs().map_err(ChildError::from)?;
        self.check_links(&inputs)?;
        let transcript = self.transcript.trace().map_err(ChildError::from)?;
        let identity = self.identity.trace().map_err(ChildError::from)?;
        let queries = self.queries.trace().map_err(ChildError::from)?;
        Ok(LayerProof {
            transcript: prove_air(
                0,
                &self.transcript,
                transcript,
                &inputs.transcript,
                params,
                backend,
            )?,
            identity: prove_air(
                1,
                &self.identity,
                identity,
                &inputs.identity,
                params,
                backend,
            )?,
            queries: prove_air(
                2,
                &self.queries.air,
                queries,
                &inputs.queries,
                params,
                backend,
            )?,
            inputs,
        })
    }
}

/// The proof of AIR `k` of [`LAYER_AIRS`], `air`, of `table` with `public_inputs`.
fn prove_air<A: Air>(
    k: usize,
    air: &A,
    mut table: RowBlocks,
    public_inputs: &[Felt],
    params: &StarkParams,
    backend: &dyn Backend,
) -> Result<SegmentProof, LayerError> {
    let statement = layer_statement(k, public_inputs);
    prove(
        air,
        &mut table,
        &statement,
        params,
        backend,
        &mut PhaseTimes::default(),
    )
    .map_err(|source| LayerError::Prover {
        air: LAYER_AIRS[k],
        source,
    })
}

/// Checks that `layer` proves that a proof of `child` for `statement`, made with
/// `child_params`, verifies: the layer's AIRs, built from the child's shape and the
/// transcript AIR's public inputs, agree in those inputs (the links of
/// [`ChildSegment::check_links`]) and each of the layer's proofs verifies with `params`.
/// `policy` applies to the child's parameters and the layer's.
///
/// # Errors
/// A child's AIR, statement or parameters that make no shape the layer takes, one the
/// policy refuses, inputs that do not link, or the first proof that does not verify.
pub fn verify_layer<A: Air>(
    child: &A,
    statement: &SegmentStatement<'_>,
    child_params: &StarkParams,
    layer: &LayerProof,
    params: &StarkParams,
    policy: &VerifyPolicy,
) -> Result<(), LayerError> {
    if child_params.hash != MerkleHash::Poseidon2 {
        return Err(ChildError::NotPoseidon2.into());
    }
    policy
        .check_params(child, child_params)
        .map_err(ChildError::from)?;
    let TranscriptLayout { steps, messages } = transcript_layout(child, statement, child_params)
        .map_err(ChildError::from)?
        .ok_or(ChildError::NotPoseidon2)?;
    let transcript = TranscriptAir::new(&steps, child_params.pow_bits).map_err(ChildError::from)?;
    let inputs = &layer.inputs;
    if inputs.transcript.len() != transcript.num_public_inputs() {
        return Err(LinkError::Length {
            what: "the transcript AIR's public inputs",
            expected: transcript.num_public_inputs(),
            got: inputs.transcript.len(),
        }
        .into());
    }
    let (reads, data) = inputs.transcript.split_at(transcript.reads());

    // The query AIR at the positions of the draws, the transcript's last reads.
    let shape = child_shape(child, child_params).map_err(ChildError::from)?;
    let draws = &reads[reads.len().saturating_sub(child_params.num_queries)..];
    let queries =
        QueriesAir::new(&shape, &positions_of(draws, shape.log_lde)).map_err(ChildError::from)?;

    // The identity AIR on the claims the transcript absorbed.
    let ood = Absorbed {
        messages: &messages,
        data,
    }
    .ood()?;
    let ext = |at: usize| Ext3::new([reads[at], reads[at + 1], reads[at + 2]]);
    let z = ext(READ_Z);
    let claims = OodClaims {
        alpha: ext(READ_ALPHA),
        z,
        trace_z: ood.trace_z,
        trace_zw: ood.trace_zw,
        periodic_z: periodic_at(child, z),
        public_inputs: statement.public_inputs.to_vec(),
        quotient_z: ood.quotient_z,
    };
    let identity = IdentityAir::new(child, claims).map_err(ChildError::from)?;

    let statement_data = statement_data(child, statement, child_params)
        .map_err(|e| ChildError::from(VerifierError::from(e)))?;
    Links {
        transcript: &transcript,
        identity: &identity,
        queries: &queries,
        messages: &messages,
        statement_data: &statement_data,
    }
    .check(inputs)?;

    let verified = |k: usize, result: Result<(), VerifierError>| {
        result.map_err(|source| LayerError::Verifier {
            air: LAYER_AIRS[k],
            source,
        })
    };
    let statement = |k| layer_statement(k, inputs.by_air()[k]);
    verified(
        0,
        verify(
            &transcript,
            &layer.transcript,
            &statement(0),
            params,
            policy,
        ),
    )?;
    verified(
        1,
        verify(&identity, &layer.identity, &statement(1), params, policy),
    )?;
    verified(
        2,
        verify(&queries, &layer.queries, &statement(2), params, policy),
    )
}
