//! A layer's proof as the child of a layer over it. [`Child::of_layer`] holds what that
//! layer proves: the layer's verifier's transcript ([`TranscriptAir`]), its tables'
//! out-of-domain identities ([`IdentityAir::joint`], in one table) and its query phase over
//! its mixed trees, FRI rolling each shorter height in ([`QueriesAir::mixed`]), with their
//! witnesses: three tables, as a layer over a segment has.
//! [`verify_layer_over_layer`] checks that layer's proof from the segment's AIR, statement
//! and parameters and the inner layer's parameters alone: it reads the inner layer's
//! transcript table's public inputs from what the transcript AIR's inputs say its
//! transcript absorbed, links them to the segment as [`verify_layer`](crate::verify_layer)
//! does, builds the inner layer's other inputs from them (derived, not absorbed) and holds
//! the absorbed statement to the keys and those inputs, then builds the outer layer's
//! identities and query inputs from the same inputs (`docs/recursion.md`).

use ballast_air::{Air, ConstraintProgram, ProgramError};
use ballast_field::{Ext3, Felt};
use ballast_merkle::MixedShape;
use ballast_stark::{
    MerkleHash, SegmentStatement, StarkParams, TablesCircuit, TablesError, TablesRecord,
    TranscriptLayout, VerifyPolicy, label, replay_tables, tables_statement_data,
    tables_transcript_layout, tables_trees, verify_tables,
};
use ballast_transcript::Message;

use crate::child::{Absorbed, Links, READ_ALPHA, READ_Z, positions_of};
use crate::identity::{IdentityError, identity_log_rows};
use crate::layer::{
    Frame, LAYER_CONTEXT, LayerAirs, TRANSCRIPT_INPUTS_LIST, layer_of_record, query_inputs,
    tallest_first,
};
use crate::{
    Child, ChildError, ChildQueries, IdentityAir, LayerError, LayerProof, LinkError, OodClaims,
    QueriesAir, TranscriptAir,
};

impl Child {
    /// `layer`, the layer's proof of `inner` made with `params`, once its verifier accepts
    /// it under `policy`: the child of a layer over it, whose AIRs are its verifier's
    /// transcript, its tables' out-of-domain identities in one table (tallest first, on the
    /// claims the transcript AIR's public inputs give) and its query phase over its mixed
    /// trees.
    ///
    /// # Errors
    /// A layer committed with Keccak-256, one that does not verify, or one whose shape the
    /// AIRs over it do not take.
    pub fn of_layer(
        inner: &Child,
        layer: &LayerProof,
        params: &StarkParams,
        policy: &VerifyPolicy,
    ) -> Result<Self, LayerError> {
        if params.hash != MerkleHash::Poseidon2 {
            return Err(ChildError::NotPoseidon2.into());
        }
        // The layer's verifier run on its tables: what it derives, its transcript and the
        // data that transcript binds first.
        let query_inputs = inner.query_inputs(&layer.inputs)?;
        let (mut replay, statement_data) =
            inner.tables(&layer.inputs, &query_inputs, |tables| {
                let replay = replay_tables(LAYER_CONTEXT, tables, &layer.tables, params, policy)?;
                let data = tables_statement_data(LAYER_CONTEXT, tables, params)?;
                Ok::<_, TablesError>((replay, data))
            })?;
        let TranscriptLayout { steps, messages } =
            replay.transcript.take().ok_or(ChildError::NotPoseidon2)?;
        let transcript = TranscriptAir::new(&steps, params.pow_bits).map_err(ChildError::from)?;
        let identity_inputs = inner.identity.public_inputs();
        let identity = joint_identity(
            &inner.layer_airs(),
            [&layer.inputs, &identity_inputs, &query_inputs],
            &transcript,
            &messages,
            &transcript.public_inputs(),
        )?;
        let queries =
            ChildQueries::of_tables(&layer.tables, replay, params).map_err(ChildError::from)?;
        Ok(Self {
            transcript,
            identity,
            queries,
            messages,
            statement_data,
        })
    }
}

/// The identities of `inner`'s tables (a layer's AIRs) in one table ([`IdentityAir::joint`],
/// in its proof's order), on each table's `public_inputs` (in the order of its AIRs: the
/// transcript table's as absorbed, the others built from them) and the claims that the
/// transcript AIR's public `inputs` of its verifier (laid out by `messages`) give: each
/// table's out-of-domain values as that transcript absorbed them, at the α and z it read.
/// The one construction of a layer over a layer's prover and its verifier.
fn joint_identity(
    inner: &LayerAirs<'_>,
    public_inputs: [&[Felt]; 3],
    transcript: &TranscriptAir,
    messages: &[Message],
    inputs: &[Felt],
) -> Result<IdentityAir, LayerError> {
    let (reads, data) = inputs.split_at(transcript.reads().min(inputs.len()));
    if reads.len() < READ_Z + 3 {
        let what = "the transcript AIR's reads, at least";
        let (expected, got) = (READ_Z + 3, reads.len());
        return Err(LinkError::Length {
            what,
            expected,
            got,
        }
        .into());
    }
    let absorbed = Absorbed { messages, data };
    let ext = |at: usize| Ext3::new([reads[at], reads[at + 1], reads[at + 2]]);
    let (alpha, z) = (ext(READ_ALPHA), ext(READ_Z));
    let order = tallest_first([0, 1, 2], &inner.heights());
    let identities = (order.into_iter().enumerate())
        .map(|(t, k)| {
            let public_inputs = public_inputs[k];
            let ood = absorbed.ood(t)?;
            let identity = match k {
                0 => {
                    let air = inner.transcript;
                    IdentityAir::new(air, OodClaims::of(air, public_inputs, alpha, z, ood))
                }
                1 => {
                    let air = inner.identity;
                    IdentityAir::new(air, OodClaims::of(air, public_inputs, alpha, z, ood))
                }
                _ => {
                    let air = inner.queries;
                    IdentityAir::new(air, OodClaims::of(air, public_inputs, alpha, z, ood))
                }
            };
            Ok(identity.map_err(ChildError::from)?)
        })
        .collect::<Result<Vec<_>, LayerError>>()?;
    Ok(IdentityAir::joint(identities).map_err(ChildError::from)?)
}

/// What the verifier of a layer over a layer builds from the segment and the inner layer's
/// parameters alone, before it reads the layer's inputs.
struct LayerFrame {
    /// The inner layer's frame of the segment.
    segment: Frame,
    /// The inner layer's tables' heights, in the order of its AIRs.
    inner_heights: [usize; 3],
    /// The transcript AIR of the inner layer's verifier, and its layout's messages.
    transcript: TranscriptAir,
    messages: Vec<Message>,
    /// The inner layer's trace and quotient trees.
    trees: [MixedShape; 2],
    /// The inner layer's identity and query AIRs, their values zero: the shape of the
    /// programs the layer's joint identity runs.
    zero: (IdentityAir, QueriesAir),
}

impl LayerFrame {
    /// The frame of an inner layer made with `inner_params` over a segment of `child`'s
    /// AIR, `statement` and `child_params`.
    fn of<A: Air>(
        child: &A,
        statement: &SegmentStatement<'_>,
        child_params: &StarkParams,
        inner_params: &StarkParams,
    ) -> Result<Self, LayerError> {
        if inner_params.hash != MerkleHash::Poseidon2 {
            return Err(ChildError::NotPoseidon2.into());
        }
        let segment = Frame::of(child, statement, child_params)?;
        // The inner layer's AIRs, their values zero: its layout, trees and heights are
        // every inner layer's of this segment's shape.
        let (identity, queries) = segment.zero_airs(child, child_params.num_queries)?;
        let inner = LayerAirs {
            transcript: &segment.transcript,
            identity: &identity,
            queries: &queries,
        };
        let inputs = vec![Felt::ZERO; segment.transcript.num_public_inputs()];
        let identity_inputs = identity.public_inputs();
        let query_inputs = vec![Felt::ZERO; queries.num_public_inputs()];
        let tables = inner.tables(&inputs, &identity_inputs, &query_inputs);
        let TranscriptLayout { steps, messages } =
            tables_transcript_layout(LAYER_CONTEXT, &tables, inner_params)?
                .ok_or(ChildError::NotPoseidon2)?;
        let transcript =
            TranscriptAir::new(&steps, inner_params.pow_bits).map_err(ChildError::from)?;
        let trees = tables_trees(&tables, inner_params)?;
        let inner_heights = inner.heights();
        Ok(Self {
            segment,
            inner_heights,
            transcript,
            messages,
            trees,
            zero: (identity, queries),
        })
    }

    /// The layer's tables' heights, in the order of its AIRs: what reading its record
    /// needs, before any input is known (the joint identity's from its programs' lengths).
    fn heights(&self, inner_params: &StarkParams) -> Result<[usize; 3], LayerError> {
        let (identity, queries) = &self.zero;
        let programs = [
            ConstraintProgram::of(&self.segment.transcript),
            ConstraintProgram::of(identity),
            ConstraintProgram::of(queries),
        ];
        let lengths = (tallest_first(programs, &self.inner_heights).into_iter())
            .map(|program| Ok(program?.instructions().len()))
            .collect::<Result<Vec<_>, ProgramError>>()
            .map_err(|e| ChildError::from(IdentityError::from(e)))?;
        let draws = vec![Felt::ZERO; inner_params.num_queries];
        Ok([
            self.transcript.log_rows(),
            identity_log_rows(&lengths),
            mixed_queries(&self.trees, inner_params, &draws)?.log_rows(),
        ])
    }

    /// [`verify_layer_over_layer`] with this frame.
    #[allow(clippy::too_many_arguments)]
    fn verify<A: Air>(
        &self,
        child: &A,
        statement: &SegmentStatement<'_>,
        child_params: &StarkParams,
        inner_params: &StarkParams,
        layer: &LayerProof,
        params: &StarkParams,
        policy: &VerifyPolicy,
    ) -> Result<TablesCircuit, LayerError> {
        policy
            .check_params(child, child_params)
            .map_err(ChildError::from)?;
        let inputs = &layer.inputs[..];
        if inputs.len() != self.transcript.num_public_inputs() {
            return Err(LinkError::Length {
                what: "the transcript AIR's public inputs",
                expected: self.transcript.num_public_inputs(),
                got: inputs.len(),
            }
            .into());
        }
        let (reads, data) = inputs.split_at(self.transcript.reads());
        let absorbed = Absorbed {
            messages: &self.messages,
            data,
        };

        // The inner layer's tables: its transcript table's public inputs as absorbed (the
        // one list its transcript absorbs: the others are derived), linked to the segment;
        // the others' built from them.
        let inner_inputs = absorbed.list(label::PUBLIC_INPUTS, TRANSCRIPT_INPUTS_LIST)?;
        let (identity, queries, inner_query_inputs) =
            (self.segment).airs(child, statement, child_params, inner_inputs)?;
        let inner = LayerAirs {
            transcript: &self.segment.transcript,
            identity: &identity,
            queries: &queries,
        };
        let identity_inputs = identity.public_inputs();
        let inner_tables = inner.tables(inner_inputs, &identity_inputs, &inner_query_inputs);
        let inner_airs: Vec<_> = inner_tables.iter().map(|t| t.air).collect();
        policy
            .check_tables(&TablesCircuit::of(&inner_airs, inner_params)?)
            .map_err(ChildError::from)?;

        // The inner layer's verifier's transcript: its statement's data are those tables'
        // (each key, the transcript table's public inputs), its draws the query AIR's
        // positions.
        let statement_data = tables_statement_data(LAYER_CONTEXT, &inner_tables, inner_params)?;
        let draws = &reads[reads.len().saturating_sub(inner_params.num_queries)..];
        let outer_queries = mixed_queries(&self.trees, inner_params, draws)?;
        Links {
            transcript: &self.transcript,
            queries: &outer_queries,
            messages: &self.messages,
            statement_data: &statement_data,
        }
        .check(inputs)?;

        // The layer's identity and query AIR's inputs, from the same inputs.
        let identity = joint_identity(
            &inner,
            [inner_inputs, &identity_inputs, &inner_query_inputs],
            &self.transcript,
            &self.messages,
            inputs,
        )?;
        let query_inputs = query_inputs(&outer_queries, &self.transcript, &self.messages, inputs)?;
        let airs = LayerAirs {
            transcript: &self.transcript,
            identity: &identity,
            queries: &outer_queries,
        };
        let identity_inputs = identity.public_inputs();
        let tables = airs.tables(inputs, &identity_inputs, &query_inputs);
        Ok(verify_tables(
            LAYER_CONTEXT,
            &tables,
            &layer.tables,
            params,
            policy,
        )?)
    }
}

/// The query AIR of a tables proof with `trees` made with `params`, at the positions
/// `draws` name in its tallest LDE.
fn mixed_queries(
    trees: &[MixedShape; 2],
    params: &StarkParams,
    draws: &[Felt],
) -> Result<QueriesAir, LayerError> {
    let [trace, quotient] = trees;
    let positions = positions_of(draws, trace.height());
    let (log_blowup, log_final) = (params.log_blowup, params.log_final_poly_len);
    Ok(
        QueriesAir::mixed(trace, quotient, log_blowup, log_final, &positions)
            .map_err(ChildError::from)?,
    )
}

/// Checks that `layer` proves that a layer's proof made with `inner_params` verifies, whose
/// child is a proof of `child` for `statement` made with `child_params`: the inner layer's
/// transcript table's public inputs, as the transcript AIR's inputs say its verifier's
/// transcript absorbed them, link to the segment ([`verify_layer`](crate::verify_layer)'s
/// links), and the inner layer's statement as absorbed (its keys, those inputs, every
/// other datum) is the one they give (the transcript AIR's links, as for a segment); the
/// inner layer's other tables' inputs are built from them (derived, never absorbed); the
/// layer's joint identity (of the inner tables) and query AIR's inputs are built from its
/// transcript AIR's; and the layer's proof of its tables verifies with `params`. `policy`
/// applies to the segment's parameters, the inner layer's and the layer's (so one that
/// pins parameters or a hash takes only three levels of those).
///
/// Returns the layer's circuit, whose figure the policy judged.
///
/// # Errors
/// A segment or an inner layer that makes no shape the layer takes, parameters the policy
/// refuses, inputs that do not link (at either level), or a proof that does not verify.
#[allow(clippy::too_many_arguments)]
pub fn verify_layer_over_layer<A: Air>(
    child: &A,
    statement: &SegmentStatement<'_>,
    child_params: &StarkParams,
    inner_params: &StarkParams,
    layer: &LayerProof,
    params: &StarkParams,
    policy: &VerifyPolicy,
) -> Result<TablesCircuit, LayerError> {
    LayerFrame::of(child, statement, child_params, inner_params)?.verify(
        child,
        statement,
        child_params,
        inner_params,
        layer,
        params,
        policy,
    )
}

/// [`read_layer_over_layer`] of `record`, then [`verify_layer_over_layer`] of what it reads,
/// building the frame once.
///
/// # Errors
/// As [`read_layer_over_layer`] and [`verify_layer_over_layer`].
pub fn verify_record_over_layer<A: Air>(
    child: &A,
    statement: &SegmentStatement<'_>,
    child_params: &StarkParams,
    inner_params: &StarkParams,
    record: &TablesRecord,
    policy: &VerifyPolicy,
) -> Result<TablesCircuit, LayerError> {
    let frame = LayerFrame::of(child, statement, child_params, inner_params)?;
    let (layer, params) = layer_of_record(frame.heights(inner_params)?, record)?;
    frame.verify(
        child,
        statement,
        child_params,
        inner_params,
        &layer,
        &params,
        policy,
    )
}

/// Reads the proof of a layer over a layer made with `inner_params` over a proof of
/// `child` for `statement` made with `child_params` from `bytes`, a [`TablesRecord`]'s
/// ([`Child::layer_record`] of a [`Child::of_layer`]), with the parameters it was made
/// with; verify it with [`verify_layer_over_layer`]. The segment and the inner layer's parameters fix each
/// table's height; the transcript table's public inputs are recorded, the others' are not.
///
/// # Errors
/// Bytes that are no tables proof, a segment or inner layer that makes no layer, tables
/// other than those of the heights they give, or a table other than the transcript's with
/// public inputs.
pub fn read_layer_over_layer<A: Air>(
    child: &A,
    statement: &SegmentStatement<'_>,
    child_params: &StarkParams,
    inner_params: &StarkParams,
    bytes: &[u8],
) -> Result<(LayerProof, StarkParams), LayerError> {
    let record = TablesRecord::from_bytes(bytes)?;
    let frame = LayerFrame::of(child, statement, child_params, inner_params)?;
    layer_of_record(frame.heights(inner_params)?, &record)
}
