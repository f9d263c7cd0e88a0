//! A layer's proof turned into what a layer over it proves about it: its verifier's
//! transcript ([`TranscriptAir`]), each of its tables' out-of-domain identity ([`IdentityAir`],
//! one a table) and its query phase over its mixed trees, FRI rolling each shorter height in
//! ([`QueriesAir::mixed`](crate::QueriesAir::mixed)), with their witnesses; the links of
//! the transcript AIR's public inputs ([`ChildLayer::check_links`]) and the query AIR's
//! built from them ([`ChildLayer::query_inputs`]), as for a segment. What a layer over it
//! still lacks: the identities' inputs built from the transcript AIR's, and its verifier and
//! record (`docs/recursion.md`).

use ballast_field::Felt;
use ballast_stark::{
    MerkleHash, StarkParams, TablesError, TranscriptLayout, VerifyPolicy, replay_tables,
    tables_statement_data, tables_transcript,
};
use ballast_transcript::Message;

use crate::child::Links;
use crate::layer::{LAYER_CONTEXT, air_heights, query_inputs, tallest_first};
use crate::{
    ChildError, ChildQueries, ChildSegment, IdentityAir, LayerError, LayerProof, LinkError,
    OodClaims, TranscriptAir,
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
    /// The data its verifier's transcript absorbs from the layer's statement, parameters and
    /// tables (`ballast_stark::tables_statement_data`): what a layer over it proves about.
    pub statement_data: Vec<Felt>,
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
        // The layer's verifier run on its tables: what it derives, its transcript and the
        // data that transcript binds first.
        let query_inputs = child.query_inputs(&layer.inputs)?;
        let (replay, layout, statement_data) =
            child.tables(&layer.inputs, &query_inputs, |tables| {
                let replay = replay_tables(LAYER_CONTEXT, tables, &layer.tables, params, policy)?;
                let layout = tables_transcript(LAYER_CONTEXT, tables, &layer.tables, params)?;
                let data = tables_statement_data(LAYER_CONTEXT, tables, params)?;
                Ok::<_, TablesError>((replay, layout, data))
            })?;
        let TranscriptLayout { steps, messages } = layout.ok_or(ChildError::NotPoseidon2)?;
        let transcript = TranscriptAir::new(&steps, params.pow_bits).map_err(ChildError::from)?;

        // Each table's identity: its AIR and public inputs, with the one α and z.
        let identity_inputs = child.identity.public_inputs();
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
        let queries =
            ChildQueries::of_tables(&layer.tables, replay, params).map_err(ChildError::from)?;
        Ok(Self {
            transcript,
            identities,
            queries,
            messages,
            statement_data,
        })
    }

    /// What a layer over it checks of the transcript AIR's public `inputs` besides the
    /// proof, as for a segment ([`ChildSegment::check_links`]): as many reads as the
    /// layer's verifier draws, the data its layout places, each a message the AIRs over it
    /// take (each table's claims among them), the statement's data first, the work words'
    /// grinding bits and the work copy's data.
    ///
    /// # Errors
    /// Inputs of another length than the shape gives, or the first value that differs.
    pub fn check_links(&self, inputs: &[Felt]) -> Result<(), LinkError> {
        Links {
            transcript: &self.transcript,
            queries: &self.queries.air,
            messages: &self.messages,
            statement_data: &self.statement_data,
        }
        .check(inputs)
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
