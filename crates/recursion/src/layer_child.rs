//! A layer's proof as the child of a layer over it. [`Child::of_layer`] holds what that
//! layer proves: the layer's verifier's transcript ([`TranscriptAir`]), its tables'
//! out-of-domain identities ([`IdentityAir::joint`], in one table) and its query phase over
//! its mixed trees, FRI rolling each shorter height in ([`QueriesAir::mixed`]), with their
//! witnesses: three tables, as a layer over a segment has; and a layer over that one, to
//! any depth. [`verify_layer_over_layers`] checks the top layer's proof from the segment's
//! AIR, statement and parameters and the inner layers' parameters alone, a frame a level
//! built from those: at each level it reads the layer below's transcript table's public
//! inputs from what the transcript AIR's inputs say its transcript absorbed, has the level
//! below link them (to the segment at the foot, as [`verify_layer`](crate::verify_layer)
//! does) and build that layer's other inputs from them (derived, not absorbed), holds the
//! absorbed statement to the keys and those inputs, then builds its own identities and
//! query inputs from the same inputs (`docs/recursion.md`).

use ballast_air::Air;
use ballast_field::{Ext3, Felt};
use ballast_merkle::MixedShape;
use ballast_stark::{
    MerkleHash, SegmentStatement, StarkParams, TablesCircuit, TablesError, TablesRecord,
    TranscriptLayout, VerifyPolicy, label, replay_tables, tables_statement_data,
    tables_transcript_layout, tables_trees,
};
use ballast_transcript::Message;

use crate::child::{Absorbed, Links, READ_ALPHA, READ_Z, positions_of};
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

/// The segment at the foot of a stack of layers: its AIR, statement and parameters.
struct Segment<'a, A> {
    air: &'a A,
    statement: &'a SegmentStatement<'a>,
    params: &'a StarkParams,
}

/// What a verifier builds, from the segment and the layers' parameters alone, for one level
/// of a stack, before it reads a layer's inputs: the frame of a child, whose
/// [`transcript`](Self::transcript) is the transcript AIR of the layer over it.
enum Level {
    /// A segment's frame.
    Segment(Box<Frame>),
    /// A layer's, over the level below it.
    Layer(Box<LayerFrame>),
}

impl Level {
    /// The frames of a stack over `segment`: the segment's, then one a layer made with each
    /// of `layers` (innermost first), the last returned.
    fn of<A: Air>(segment: &Segment<'_, A>, layers: &[StarkParams]) -> Result<Self, LayerError> {
        let foot = Frame::of(segment.air, segment.statement, segment.params)?;
        layers
            .iter()
            .try_fold(Self::Segment(Box::new(foot)), |below, params| {
                Ok(Self::Layer(Box::new(LayerFrame::over(
                    below, segment, params,
                )?)))
            })
    }

    /// The transcript AIR of the layer over this level's child.
    fn transcript(&self) -> &TranscriptAir {
        match self {
            Self::Segment(frame) => &frame.transcript,
            Self::Layer(frame) => &frame.transcript,
        }
    }

    /// The identity and query AIRs of the layer over this level's child, their values
    /// zero: their definitions, and so their tables' shapes and keys, are every such
    /// layer's.
    fn zero_airs<A: Air>(
        &self,
        segment: &Segment<'_, A>,
    ) -> Result<(IdentityAir, QueriesAir), LayerError> {
        match self {
            Self::Segment(frame) => frame.zero_airs(segment.air, segment.params.num_queries),
            Self::Layer(frame) => frame.zero_airs(),
        }
    }

    /// The identity and query AIRs of the layer over this level's child, and the query
    /// AIR's public inputs, that its transcript AIR's public `inputs` give, once they link
    /// (at every level down to the segment, `policy` judging each layer below's circuit).
    fn airs<A: Air>(
        &self,
        segment: &Segment<'_, A>,
        inputs: &[Felt],
        policy: &VerifyPolicy,
    ) -> Result<(IdentityAir, QueriesAir, Vec<Felt>), LayerError> {
        match self {
            Self::Segment(frame) => {
                frame.airs(segment.air, segment.statement, segment.params, inputs)
            }
            Self::Layer(frame) => frame.airs(segment, inputs, policy),
        }
    }
}

/// The frame of a layer's proof as a child: the level below it, the parameters it is made
/// with, and what those fix of the layer over it.
struct LayerFrame {
    /// The level whose layer this is.
    below: Level,
    /// The parameters it is made with.
    params: StarkParams,
    /// The transcript AIR of its verifier, and its layout's messages.
    transcript: TranscriptAir,
    messages: Vec<Message>,
    /// Its trace and quotient trees.
    trees: [MixedShape; 2],
    /// Its identity and query AIRs, their values zero ([`Level::zero_airs`]).
    zero: (IdentityAir, QueriesAir),
}

impl LayerFrame {
    /// The frame of a layer made with `params` over the child `below` frames.
    fn over<A: Air>(
        below: Level,
        segment: &Segment<'_, A>,
        params: &StarkParams,
    ) -> Result<Self, LayerError> {
        if params.hash != MerkleHash::Poseidon2 {
            return Err(ChildError::NotPoseidon2.into());
        }
        // The layer's AIRs, their values zero: its layout and trees are every such layer's.
        let (identity, queries) = below.zero_airs(segment)?;
        let airs = LayerAirs {
            transcript: below.transcript(),
            identity: &identity,
            queries: &queries,
        };
        let inputs = vec![Felt::ZERO; airs.transcript.num_public_inputs()];
        let identity_inputs = identity.public_inputs();
        let query_inputs = vec![Felt::ZERO; queries.num_public_inputs()];
        let tables = airs.tables(&inputs, &identity_inputs, &query_inputs);
        let TranscriptLayout { steps, messages } =
            tables_transcript_layout(LAYER_CONTEXT, &tables, params)?
                .ok_or(ChildError::NotPoseidon2)?;
        let transcript = TranscriptAir::new(&steps, params.pow_bits).map_err(ChildError::from)?;
        let trees = tables_trees(&tables, params)?;
        Ok(Self {
            below,
            params: *params,
            transcript,
            messages,
            trees,
            zero: (identity, queries),
        })
    }

    /// The joint identity and query AIRs of the layer over it, their values zero
    /// ([`Level::zero_airs`]): on its own zero-valued AIRs' inputs, and the transcript
    /// AIR's inputs of its layout (every absorbed value zero, each list framed).
    fn zero_airs(&self) -> Result<(IdentityAir, QueriesAir), LayerError> {
        let (identity, queries) = &self.zero;
        let inner = LayerAirs {
            transcript: self.below.transcript(),
            identity,
            queries,
        };
        let inner_inputs = [
            vec![Felt::ZERO; inner.transcript.num_public_inputs()],
            identity.public_inputs(),
            vec![Felt::ZERO; queries.num_public_inputs()],
        ];
        let joint = joint_identity(
            &inner,
            inner_inputs.each_ref().map(Vec::as_slice),
            &self.transcript,
            &self.messages,
            &self.transcript.public_inputs(),
        )?;
        let draws = vec![Felt::ZERO; self.params.num_queries];
        Ok((joint, mixed_queries(&self.trees, &self.params, &draws)?))
    }

    /// The heights (log2) of the layer's tables over it, in the order of its AIRs: what
    /// reading its record needs, before any input is known.
    fn heights(&self) -> Result<[usize; 3], LayerError> {
        let (identity, queries) = self.zero_airs()?;
        Ok([
            self.transcript.log_rows(),
            identity.log_rows(),
            queries.log_rows(),
        ])
    }

    /// Checks that `layer`, the proof of the layer over it made with `params`, verifies
    /// under `policy`, which applies to the segment's parameters and to every layer's.
    fn verify<A: Air>(
        &self,
        segment: &Segment<'_, A>,
        layer: &LayerProof,
        params: &StarkParams,
        policy: &VerifyPolicy,
    ) -> Result<TablesCircuit, LayerError> {
        policy
            .check_params(segment.air, segment.params)
            .map_err(ChildError::from)?;
        let (identity, queries, query_inputs) = self.airs(segment, &layer.inputs, policy)?;
        let airs = LayerAirs {
            transcript: &self.transcript,
            identity: &identity,
            queries: &queries,
        };
        airs.verify(layer, &query_inputs, params, policy)
    }

    /// [`Level::airs`] for a layer's child: its transcript table's public inputs read where
    /// the layer over it absorbed them (the one list: the others are derived), its other
    /// tables' AIRs and inputs built from them by the level below (which links them), its
    /// circuit judged by `policy`, the statement it absorbed linked to those tables, then
    /// the joint identity and query AIRs from the same `inputs`.
    fn airs<A: Air>(
        &self,
        segment: &Segment<'_, A>,
        inputs: &[Felt],
        policy: &VerifyPolicy,
    ) -> Result<(IdentityAir, QueriesAir, Vec<Felt>), LayerError> {
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

        // Its tables: the transcript table's public inputs as absorbed, linked below; the
        // others' built from them.
        let inner_inputs = absorbed.list(label::PUBLIC_INPUTS, TRANSCRIPT_INPUTS_LIST)?;
        let (identity, queries, inner_query_inputs) =
            self.below.airs(segment, inner_inputs, policy)?;
        let inner = LayerAirs {
            transcript: self.below.transcript(),
            identity: &identity,
            queries: &queries,
        };
        let identity_inputs = identity.public_inputs();
        let inner_tables = inner.tables(inner_inputs, &identity_inputs, &inner_query_inputs);
        let inner_airs: Vec<_> = inner_tables.iter().map(|t| t.air).collect();
        policy
            .check_tables(&TablesCircuit::of(&inner_airs, &self.params)?)
            .map_err(ChildError::from)?;

        // Its verifier's transcript: its statement's data are those tables' (each key, the
        // transcript table's public inputs), its draws the query AIR's positions.
        let statement_data = tables_statement_data(LAYER_CONTEXT, &inner_tables, &self.params)?;
        let draws = &reads[reads.len().saturating_sub(self.params.num_queries)..];
        let queries_over = mixed_queries(&self.trees, &self.params, draws)?;
        Links {
            transcript: &self.transcript,
            queries: &queries_over,
            messages: &self.messages,
            statement_data: &statement_data,
        }
        .check(inputs)?;

        // The joint identity and query AIR's inputs, from the same inputs.
        let joint = joint_identity(
            &inner,
            [inner_inputs, &identity_inputs, &inner_query_inputs],
            &self.transcript,
            &self.messages,
            inputs,
        )?;
        let query_inputs = query_inputs(&queries_over, &self.transcript, &self.messages, inputs)?;
        Ok((joint, queries_over, query_inputs))
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

/// Checks that `layer` proves that a stack of layers verifies: the proof of a layer over a
/// layer made with the last of `inner_params`, over one made with the one before it, down
/// to one made with the first over a proof of `child` for `statement` made with
/// `child_params`. At each level, from the top: the layer's transcript AIR's inputs hold
/// the transcript table's public inputs of the layer below as its transcript absorbed
/// them (the one list: the identity and query tables' are derived, never absorbed), the
/// statement it absorbed (its keys, those inputs, every other datum) is the one those
/// tables give (the transcript AIR's links, as for a segment), and the layer below's other
/// tables' inputs are built from them; at the foot, the inputs link to the segment
/// ([`verify_layer`](crate::verify_layer)'s links); each layer's joint identity (of the
/// tables below) and query AIR's inputs are built from its transcript AIR's; and the top
/// layer's proof of its tables verifies with `params`. `policy` applies to the segment's
/// parameters and to every layer's (so one that pins parameters or a hash takes only a
/// stack of those).
///
/// Returns the top layer's circuit, whose figure the policy judged.
///
/// # Errors
/// No inner layer (a segment's layer is [`verify_layer`](crate::verify_layer)'s), a
/// segment or an inner layer that makes no shape the layer over it takes, parameters the
/// policy refuses, inputs that do not link (at any level), or a proof that does not
/// verify.
pub fn verify_layer_over_layers<A: Air>(
    child: &A,
    statement: &SegmentStatement<'_>,
    child_params: &StarkParams,
    inner_params: &[StarkParams],
    layer: &LayerProof,
    params: &StarkParams,
    policy: &VerifyPolicy,
) -> Result<TablesCircuit, LayerError> {
    let segment = Segment {
        air: child,
        statement,
        params: child_params,
    };
    stack(&segment, inner_params)?.verify(&segment, layer, params, policy)
}

/// [`read_layer_over_layers`] of `record`, then [`verify_layer_over_layers`] of what it
/// reads, building the frames once.
///
/// # Errors
/// As [`read_layer_over_layers`] and [`verify_layer_over_layers`].
pub fn verify_record_over_layers<A: Air>(
    child: &A,
    statement: &SegmentStatement<'_>,
    child_params: &StarkParams,
    inner_params: &[StarkParams],
    record: &TablesRecord,
    policy: &VerifyPolicy,
) -> Result<TablesCircuit, LayerError> {
    let segment = Segment {
        air: child,
        statement,
        params: child_params,
    };
    let level = stack(&segment, inner_params)?;
    let (layer, params) = layer_of_record(level.heights()?, record)?;
    level.verify(&segment, &layer, &params, policy)
}

/// Reads the proof of a layer over the stack of layers made with `inner_params` (innermost
/// first) over a proof of `child` for `statement` made with `child_params` from `bytes`, a
/// [`TablesRecord`]'s ([`Child::layer_record`] of a [`Child::of_layer`]), with the
/// parameters it was made with; verify it with [`verify_layer_over_layers`]. The segment
/// and the inner layers' parameters fix each table's height; the transcript table's public
/// inputs are recorded, the others' are not.
///
/// # Errors
/// Bytes that are no tables proof, no inner layer, a segment or inner layer that makes no
/// layer, tables other than those of the heights they give, or a table other than the
/// transcript's with public inputs.
pub fn read_layer_over_layers<A: Air>(
    child: &A,
    statement: &SegmentStatement<'_>,
    child_params: &StarkParams,
    inner_params: &[StarkParams],
    bytes: &[u8],
) -> Result<(LayerProof, StarkParams), LayerError> {
    let record = TablesRecord::from_bytes(bytes)?;
    let segment = Segment {
        air: child,
        statement,
        params: child_params,
    };
    layer_of_record(stack(&segment, inner_params)?.heights()?, &record)
}

/// The frame of the top inner layer of a stack over `segment`, made with `inner_params`
/// (innermost first, at least one).
fn stack<A: Air>(
    segment: &Segment<'_, A>,
    inner_params: &[StarkParams],
) -> Result<LayerFrame, LayerError> {
    let (top, below) = inner_params.split_last().ok_or(LayerError::NoInnerLayer)?;
    LayerFrame::over(Level::of(segment, below)?, segment, top)
}
