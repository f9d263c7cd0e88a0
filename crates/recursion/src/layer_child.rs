//! A layer's proof turned into what a layer over it proves about it: its verifier's
//! transcript ([`TranscriptAir`]), each of its tables' out-of-domain identity ([`IdentityAir`],
//! one a table) and its query phase over its mixed trees, FRI rolling each shorter height in
//! ([`QueriesAir::mixed`](crate::QueriesAir::mixed)), with their witnesses; and the query
//! AIR's public inputs built from the transcript AIR's ([`ChildLayer::query_inputs`]), as
//! for a segment. What a layer over it still lacks: the links of the transcript AIR's inputs
//! to the child layer's statement and shape, the identities' inputs built from them, and its
//! proof of these tables (`docs/recursion.md`).

use ballast_field::Felt;
use ballast_stark::{MerkleHash, StarkParams, TranscriptLayout, VerifyPolicy};
use ballast_transcript::Message;

use crate::layer::{air_heights, query_inputs, tallest_first};
use crate::{
    ChildError, ChildQueries, ChildSegment, IdentityAir, LayerError, LayerProof, OodClaims,
    TranscriptAir,
};

/// A layer's proof of a child segment, ready for a layer over it to prove: the AIRs of its
/// verifier's transcript, of each of its tables' identities and of its query phase.
#[derive(Clone, Debug)]
pub struct ChildLayer {
    /// Its verifier's transcript's AIR.
    pub transcript: TranscriptAir,
    /// Each of its tables' out-of-domain identity's AIR, in its proof's order (tallest
    /// first).
    pub identities: Vec<IdentityAir>,
    /// Its query phase.
    pub queries: ChildQueries,
    /// Where each message of its verifier's transcript has its payload among the
    /// transcript AIR's data.
    pub messages: Vec<Message>,
}

impl ChildLayer {
    /// `layer`, the layer's proof of `child` made with `params`, once its verifier accepts it
    /// under `policy`.
    ///
    /// # Errors
    /// A layer committed with Keccak-256, one that does not verify, or one whose shape the
    /// AIRs over it do not take.
    pub fn of(
        child: &ChildSegment,
        layer: &LayerProof,
        params: &StarkParams,
        policy: &VerifyPolicy,
    ) -> Result<Self, LayerError> {
        if params.hash != MerkleHash::Poseidon2 {
            return Err(ChildError::NotPoseidon2.into());
        }
        let replay = child.replay_layer(layer, params, policy)?;
        let TranscriptLayout { steps, messages } = child
            .layer_transcript(layer, params)?
            .ok_or(ChildError::NotPoseidon2)?;
        let transcript = TranscriptAir::new(&steps, params.pow_bits).map_err(ChildError::from)?;

        // Each table's identity: its AIR and public inputs, with the one α and z.
        let identity_inputs = child.identity.public_inputs();
        let query_inputs = child.query_inputs(&layer.inputs)?;
        let (alpha, z) = (replay.alpha, replay.z);
        let heights = air_heights(&child.transcript, &child.identity, &child.queries.air);
        let identities = (tallest_first([0, 1, 2], heights).into_iter())
            .zip(&layer.tables.ood)
            .map(|(k, ood)| {
                let ood = ood.clone();
                match k {
                    0 => IdentityAir::new(
                        &child.transcript,
                        OodClaims::of(&child.transcript, &layer.inputs, alpha, z, ood),
                    ),
                    1 => IdentityAir::new(
                        &child.identity,
                        OodClaims::of(&child.identity, &identity_inputs, alpha, z, ood),
                    ),
                    _ => IdentityAir::new(
                        &child.queries.air,
                        OodClaims::of(&child.queries.air, &query_inputs, alpha, z, ood),
                    ),
                }
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(ChildError::from)?;
        let queries = ChildQueries::of_tables(&layer.tables, replay, params.log_blowup)
            .map_err(ChildError::from)?;
        Ok(Self {
            transcript,
            identities,
            queries,
            messages,
        })
    }

    /// The query AIR's public inputs that the transcript AIR's public `inputs` give, as a
    /// layer's prover and verifier build them: the roots and claims it absorbed (each
    /// height's DEEP claims from its tables' claims, concatenated), the challenges it read.
    ///
    /// # Errors
    /// Inputs too short for the reads, a message the layout lacks, or a root or list of
    /// another length than the query AIR takes.
    pub fn query_inputs(&self, inputs: &[Felt]) -> Result<Vec<Felt>, LayerError> {
        query_inputs(&self.queries.air, &self.transcript, &self.messages, inputs)
    }
}
