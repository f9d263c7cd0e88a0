//! A child segment proof turned into what a recursive layer proves about it: its verifier
//! replayed (`ballast_stark::replay`), then the [`TranscriptAir`] of its transcript, the
//! [`IdentityAir`] of its out-of-domain identity and the [`QueriesAir`] of its query positions
//! with the witness and inputs it takes, from the proof's claims and openings and what the
//! replay derived.

use ballast_air::Air;
use ballast_field::{Ext3, Felt, RowBlocks};
use ballast_merkle::Digest;
use ballast_poseidon2::{FeltDigest, digest_from_bytes};
use ballast_stark::{
    MerkleHash, Replay, SegmentProof, SegmentStatement, StarkParams, VerifierError, VerifyPolicy,
    replay,
};

use crate::openings::expect_len;
use crate::{
    ChildShape, DeepClaims, IdentityAir, IdentityError, OodClaims, Opened, OpeningsError,
    QueriesAir, TranscriptAir, TranscriptError,
};

/// Why a child proof cannot be taken into a layer.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ChildError {
    /// A child committed with Keccak-256: an AIR cannot afford to recompute its hashes.
    #[error(
        "the child proof's trees are Keccak-256's; only a proof made with --hash poseidon2 can be compressed"
    )]
    NotPoseidon2,
    /// A child its own verifier refuses.
    #[error("the child proof does not verify: {0}")]
    Invalid(#[from] VerifierError),
    /// A child whose shape the query AIR does not take.
    #[error("the child proof's queries: {0}")]
    Queries(#[from] OpeningsError),
    /// A child whose transcript the transcript AIR does not take.
    #[error("the child proof's transcript: {0}")]
    Transcript(#[from] TranscriptError),
    /// A child whose constraints the identity AIR does not take.
    #[error("the child proof's out-of-domain identity: {0}")]
    Identity(#[from] IdentityError),
}

/// A child segment proof, ready for a layer to prove: the AIRs of its transcript, of its
/// out-of-domain identity and of its query phase.
#[derive(Clone, Debug)]
pub struct ChildSegment {
    /// Its transcript's AIR, whose trace is [`TranscriptAir::trace`].
    pub transcript: TranscriptAir,
    /// Its out-of-domain identity's AIR, whose trace is [`IdentityAir::trace`].
    pub identity: IdentityAir,
    /// Its query phase.
    pub queries: ChildQueries,
}

impl ChildSegment {
    /// `proof`, a proof of `air` for `statement` made with `params`, once its verifier
    /// accepts it under `policy`.
    ///
    /// # Errors
    /// A child committed with Keccak-256, one that does not verify, or one whose shape the
    /// layer's AIRs do not take.
    pub fn of<A: Air>(
        air: &A,
        proof: &SegmentProof,
        statement: &SegmentStatement<'_>,
        params: &StarkParams,
        policy: &VerifyPolicy,
    ) -> Result<Self, ChildError> {
        if params.hash != MerkleHash::Poseidon2 {
            return Err(ChildError::NotPoseidon2);
        }
        let mut replay = replay(air, proof, statement, params, policy)?;
        let steps = replay.transcript.take().ok_or(ChildError::NotPoseidon2)?;
        let claims = OodClaims {
            alpha: replay.alpha,
            z: replay.deep.z,
            trace_z: proof.ood.trace_z.clone(),
            trace_zw: proof.ood.trace_zw.clone(),
            periodic_z: std::mem::take(&mut replay.periodic_at_z),
            public_inputs: statement.public_inputs.to_vec(),
            quotient_z: proof.ood.quotient_z.clone(),
        };
        Ok(Self {
            transcript: TranscriptAir::new(&steps, params.pow_bits)?,
            identity: IdentityAir::new(air, claims)?,
            queries: ChildQueries::of(air, proof, params, replay)?,
        })
    }
}

/// A child segment's query phase: the AIR and what its trace and public inputs are made of.
#[derive(Clone, Debug)]
pub struct ChildQueries {
    /// The AIR of the child's queries.
    pub air: QueriesAir,
    /// Each tree's openings: the trace's, the quotient's, then each FRI layer's.
    pub opened: Vec<Opened>,
    /// The trees' roots, in the same order.
    pub roots: Vec<FeltDigest>,
    /// The DEEP claims the child's transcript fixed.
    pub claims: DeepClaims,
    /// Each FRI round's folding challenge.
    pub betas: Vec<Ext3>,
    /// The final polynomial's coefficients.
    pub final_poly: Vec<Ext3>,
}

impl ChildQueries {
    /// The query phase of `proof`, a Poseidon2 proof of `air` made with `params`, from
    /// what its verifier derived (`replay`).
    fn of<A: Air>(
        air: &A,
        proof: &SegmentProof,
        params: &StarkParams,
        replay: Replay,
    ) -> Result<Self, OpeningsError> {
        let q = &proof.queries;
        // The replay checked the positions (at least one) and each row's length.
        let per_position = |len: usize| len / q.positions.len();
        let shape = ChildShape {
            trace_width: per_position(q.trace_rows.len()),
            quotient_width: per_position(q.quotient_rows.len()),
            log_rows: air.log_rows(),
            log_lde: air.log_rows() + params.log_blowup,
            log_final_poly_len: params.log_final_poly_len,
        };
        let queries = QueriesAir::new(&shape, &replay.draws)?;
        let roots = [&proof.trace_root, &proof.quotient_root]
            .into_iter()
            .chain(&proof.fri_roots)
            .map(felt_digest)
            .collect::<Result<Vec<_>, _>>()?;
        let openings = queries.deep().openings();
        let mut opened = vec![
            openings.open(0, &roots[0], &q.trace_rows, &q.trace_nodes)?,
            openings.open(1, &roots[1], &q.quotient_rows, &q.quotient_nodes)?,
        ];
        let layers = openings.trees().len() - 2;
        expect_len("FRI layers", layers, replay.fri_rows.len())?;
        for (i, (rows, layer)) in replay.fri_rows.iter().zip(&q.fri).enumerate() {
            opened.push(openings.open(2 + i, &roots[2 + i], rows, &layer.nodes)?);
        }
        let claims = DeepClaims {
            gamma: replay.gamma,
            z: replay.deep.z,
            at_z: replay.deep.at_z,
            at_zw: replay.deep.at_zw,
        };
        Ok(Self {
            air: queries,
            opened,
            roots,
            claims,
            betas: replay.betas,
            final_poly: proof.final_poly.clone(),
        })
    }

    /// The AIR's trace.
    ///
    /// # Errors
    /// None for one [`ChildSegment::of`] built; what [`QueriesAir::trace`] refuses after the
    /// fields are changed.
    pub fn trace(&self) -> Result<RowBlocks, OpeningsError> {
        self.air.trace(&self.opened, &self.claims, &self.betas)
    }

    /// The AIR's public inputs.
    ///
    /// # Errors
    /// As for [`trace`](Self::trace), what [`QueriesAir::public_inputs`] refuses.
    pub fn public_inputs(&self) -> Result<Vec<Felt>, OpeningsError> {
        self.air
            .public_inputs(&self.roots, &self.claims, &self.betas, &self.final_poly)
    }
}

/// A Poseidon2 root's elements. A root its verifier accepted is one: openings hashed to it.
fn felt_digest(root: &Digest) -> Result<FeltDigest, OpeningsError> {
    digest_from_bytes(root).ok_or(OpeningsError::Rejected)
}
