//! A layer's proof as the child of a layer over it. [`Child::of_layer`] (a layer over one
//! child) and [`Child::of_node`] (over several: a node, `prove_node`) hold what that layer
//! proves: the layer's verifier's transcript ([`TranscriptAir`]), its tables' out-of-domain
//! identities ([`IdentityAir::joint`], in one table) and its query phase over its mixed
//! trees, FRI rolling each shorter height in ([`QueriesAir::mixed`]), with their witnesses:
//! three tables, as a layer over a segment has; and nodes over those, in a tree to any
//! depth. [`verify_tree`] checks the top node's proof from the segments' AIRs, statements
//! and parameters and the tree's levels ([`TreeLevel`]) alone, a frame a node built from
//! those: at each node it reads its children's transcript tables' public inputs (one list
//! a child) from what its transcript AIR's inputs say its transcript absorbed, has the
//! level below link them (to each segment at the foot, as
//! [`verify_node`](crate::verify_node) does) and build those layers' other inputs from them
//! (derived, not absorbed), holds the absorbed statement to the keys and those inputs, then
//! builds its own identities and query inputs from the same inputs (`docs/recursion.md`).
//! [`verify_layer_over_node`] and [`verify_layer_over_layers`] are that over a stack of
//! one node a level.

use std::rc::Rc;

use ballast_air::{Air, ConstraintProgram};
use ballast_field::{Ext3, Felt};
use ballast_merkle::{Digest, MixedShape};
use ballast_stark::{
    LagrangeAt, MerkleHash, OodValues, PeriodicAt, Regime, SegmentStatement, StarkParams,
    TableStatement, TablesCircuit, TablesRecord, TranscriptLayout, VerifyPolicy, label,
    replay_tables, tables_statement_data, tables_transcript_layout, tables_trees, tree_nodes,
    verify_tables,
};
use ballast_transcript::Message;

use crate::child::{Absorbed, Links, READ_ALPHA, READ_Z, positions_of};
use crate::identity::{IdentityError, Part, identity_log_rows};
use crate::layer::{
    ChildPrograms, Frame, LAYER_AIRS, LAYER_CONTEXT, LayerAirs, NodeAirs, layer_of_record,
    once_a_key, query_inputs, split_inputs, statement_inputs, tallest_first,
};
use crate::node::{Built, check_segments, segment_airs, segment_frames, with_node_tables};
use crate::{
    Child, ChildError, ChildQueries, IdentityAir, LayerError, LayerProof, LayerRole, LinkError,
    OodClaims, QueriesAir, Segment, TranscriptAir,
};

impl Child {
    /// `layer`, the layer's proof of `inner` made with `params`, once its verifier accepts
    /// it under `policy`: [`Child::of_node`] of that one child.
    ///
    /// # Errors
    /// As [`Child::of_node`].
    pub fn of_layer(
        inner: &Child,
        layer: &LayerProof,
        params: &StarkParams,
        policy: &VerifyPolicy,
    ) -> Result<Self, LayerError> {
        Self::of_node(std::slice::from_ref(inner), layer, params, policy)
    }

    /// `layer`, the proof of a node over `children` made with `params`
    /// ([`prove_node`](crate::prove_node)), once its verifier accepts it under `policy`: the
    /// child of a layer over it, whose AIRs are its verifier's transcript, its tables'
    /// out-of-domain identities in one table (tallest first, on the claims the transcript
    /// AIR's public inputs give) and its query phase over its mixed trees.
    ///
    /// # Errors
    /// No child, a layer committed with Keccak-256, one that does not verify, or one whose
    /// shape the AIRs over it do not take.
    pub fn of_node(
        children: &[Child],
        layer: &LayerProof,
        params: &StarkParams,
        policy: &VerifyPolicy,
    ) -> Result<Self, LayerError> {
        if params.hash != MerkleHash::Poseidon2 {
            return Err(ChildError::NotPoseidon2.into());
        }
        with_node_tables(children, &layer.inputs, |node, inputs, tables| {
            Self::of_tables(node, inputs, tables, layer, params, policy)
        })
    }

    /// The node whose proof `record` holds, over the top level of a tree over `segments`
    /// with `levels` ([`verify_record_over_tree`]), made with `params`, as the child of a
    /// node over it, once its verifier accepts it under `policy`: what a node proven
    /// elsewhere (a part's) is to the levels above it. Its children's tables are built from
    /// the segments, the levels and its inputs alone, as its verifier builds them.
    ///
    /// # Errors
    /// A record made with other parameters than `params`, or as [`verify_record_over_tree`].
    pub fn of_tree_record<A: Air>(
        segments: &[Segment<'_, A>],
        levels: &[TreeLevel],
        record: &TablesRecord,
        params: &StarkParams,
        policy: &VerifyPolicy,
    ) -> Result<Self, LayerError> {
        let level = Level::of(segments, levels)?;
        let (layer, made_with) = layer_of_record(&level.heights(segments)?, record)?;
        if made_with != *params {
            return Err(LayerError::OtherParams {
                expected: Box::new(*params),
                got: Box::new(made_with),
            });
        }
        level.with_tables(segments, &layer, policy, |node, inputs, tables| {
            Self::of_tables(node, inputs, tables, &layer, params, policy)
        })
    }

    /// `layer`, the proof of `node`'s tables (each child's three lists of public inputs
    /// `inputs`, making `tables`) made with `params`, once its verifier accepts it under
    /// `policy`: the child of a node over it ([`Child::of_node`]).
    fn of_tables(
        node: &NodeAirs<'_>,
        inputs: &[[&[Felt]; 3]],
        tables: &[TableStatement<'_>],
        layer: &LayerProof,
        params: &StarkParams,
        policy: &VerifyPolicy,
    ) -> Result<Self, LayerError> {
        // The layer's verifier run on its tables: what it derives, its transcript and the
        // data that transcript binds first.
        let mut replay = replay_tables(LAYER_CONTEXT, tables, &layer.tables, params, policy)?;
        let keys = node.keys()?;
        let statement_data = tables_statement_data(LAYER_CONTEXT, tables, &keys, params)?;
        let TranscriptLayout { steps, messages } =
            replay.transcript.take().ok_or(ChildError::NotPoseidon2)?;
        let transcript = TranscriptAir::new(&steps, params.pow_bits).map_err(ChildError::from)?;
        let identity = joint_identity(
            node,
            &node.programs()?,
            inputs,
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

/// The identities of `inner`'s tables (a layer's or a node's AIRs) in one table
/// ([`IdentityAir::joint`], in its proof's order, running each child's tables' `programs`:
/// [`NodeAirs::programs`]), on each child's tables' `public_inputs`
/// (in the order of [`LAYER_AIRS`](crate::LAYER_AIRS): the transcript table's as absorbed,
/// the others built from them) and the claims that the transcript AIR's public `inputs` of
/// its verifier (laid out by `messages`) give: each table's out-of-domain values as that
/// transcript absorbed them, at the α and z it read. The one construction of a layer over
/// a layer's prover and its verifier.
fn joint_identity(
    inner: &NodeAirs<'_>,
    programs: &[ChildPrograms],
    public_inputs: &[[&[Felt]; 3]],
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
    // Every table is at the one z: the tables share its Lagrange weights, and the periodic
    // columns of alike children's (one instance, or one identity's sparse columns shared by
    // its copies: `IdentityAir::with_claims`) are evaluated once.
    fn at_z<'b, A: Air + 'b>(
        airs: impl Iterator<Item = &'b A>,
        at: &LagrangeAt,
    ) -> Result<Vec<Rc<PeriodicAt>>, LayerError> {
        let definition = |air: &A| {
            let sparse = air.sparse_periodic().filter(|s| s.count() > 0);
            (
                sparse.map(std::ptr::from_ref),
                sparse.is_none().then_some(std::ptr::from_ref(air)),
                air.log_rows(),
            )
        };
        once_a_key(airs, definition, |air| Ok(Rc::new(PeriodicAt::of(air, at))))
    }
    let at = LagrangeAt::new(z);
    let periodic = [
        at_z(inner.0.iter().map(|c| c.transcript), &at)?,
        at_z(inner.0.iter().map(|c| c.identity), &at)?,
        at_z(inner.0.iter().map(|c| c.queries), &at)?,
    ];
    let heights = inner.heights();
    let order = tallest_first(0..heights.len(), &heights);
    let parts = (order.into_iter().enumerate())
        .map(|(t, j)| {
            let (c, k) = (j / LAYER_AIRS.len(), j % LAYER_AIRS.len());
            let (airs, public_inputs) = (&inner.0[c], public_inputs[c][k]);
            let program = ConstraintProgram::clone(&programs[c][k]);
            let ood = absorbed.ood(t)?;
            let at = (alpha, &*periodic[k][c]);
            let part = match k {
                0 => part(airs.transcript, program, public_inputs, at, ood),
                1 => part(airs.identity, program, public_inputs, at, ood),
                _ => part(airs.queries, program, public_inputs, at, ood),
            };
            Ok(part.map_err(ChildError::from)?)
        })
        .collect::<Result<Vec<_>, LayerError>>()?;
    Ok(IdentityAir::joined(parts).map_err(ChildError::from)?)
}

/// `air`'s part of a joint identity, running `program`, on the claims of its
/// `public_inputs` and its absorbed `ood` values at α and at the z of `periodic` (its
/// periodic columns there).
fn part<A: Air>(
    air: &A,
    program: ConstraintProgram,
    public_inputs: &[Felt],
    (alpha, periodic): (Ext3, &PeriodicAt),
    ood: OodValues,
) -> Result<Part, IdentityError> {
    IdentityAir::part(
        air,
        program,
        OodClaims::of_periodic(air, periodic, public_inputs, alpha, ood),
    )
}

/// What a verifier builds, from the segments and the layers' parameters alone, for one
/// level of a tree, before it reads a layer's inputs: the frames of the children of the
/// node over it, in their order.
enum Level {
    /// The segments' frames (segments alike share one): the level a node over them (or a
    /// layer over one) takes.
    Segments(Vec<Rc<Frame>>),
    /// Layers' frames, each over a contiguous run of the level below it (nodes over alike
    /// runs share one).
    Layers(Vec<Rc<LayerFrame>>),
}

impl Level {
    /// The frames of a tree over `segments` with the levels of nodes `levels` (innermost
    /// first): the segments', then a level at a time ([`Level::up`]). Returns the top level.
    fn of<A: Air>(segments: &[Segment<'_, A>], levels: &[TreeLevel]) -> Result<Self, LayerError> {
        let foot = Self::Segments(segment_frames(segments)?);
        (levels.iter()).try_fold(foot, |below, level| below.up(segments, level))
    }

    /// The level of `level`'s nodes over this one (the top level of a tree over
    /// `segments`): [`Level::up_choosing`] with the level's parameters given.
    fn up<A: Air>(
        self,
        segments: &[Segment<'_, A>],
        level: &TreeLevel,
    ) -> Result<Self, LayerError> {
        let (up, _) = self.up_choosing(segments, level.nodes, |_| Ok(level.params))?;
        Ok(up)
    }

    /// The level of `nodes` nodes over this one (the top level of a tree over `segments`),
    /// each over the next of `nodes` near-equal, contiguous runs of its children
    /// ([`TreeLevel`]), and the parameters they are made with, which `choose` picks from
    /// the AIRs of the distinct nodes (those over alike runs, [`Level::alike`], are one),
    /// their values zero. Each distinct node's AIRs are built once and make its frame.
    fn up_choosing<A: Air>(
        self,
        segments: &[Segment<'_, A>],
        nodes: usize,
        choose: impl FnOnce(&[NodeAirs<'_>]) -> Result<StarkParams, LayerError>,
    ) -> Result<(Self, StarkParams), LayerError> {
        // Each run's distinct run (its index), with its nodes' AIRs, built once.
        let (mut first, mut which) = (0, Vec::new());
        let mut distinct: Vec<(Self, Vec<ZeroAirs>)> = Vec::new();
        for run in self.split(nodes)? {
            let count = run.segments();
            first += count;
            match distinct.iter().position(|(d, _)| d.alike(&run)) {
                Some(d) => which.push(d),
                None => {
                    let zero = run.zero_airs(&segments[first - count..first])?;
                    which.push(distinct.len());
                    distinct.push((run, zero));
                }
            }
        }
        let params = choose(
            &(distinct.iter())
                .map(|(run, zero)| node_of(run.transcripts(), zero.iter().map(|z| (&z.0, &z.1))))
                .collect::<Vec<_>>(),
        )?;
        let frames = (distinct.into_iter())
            .map(|(run, zero)| Ok(Rc::new(LayerFrame::over(run, zero, &params)?)))
            .collect::<Result<Vec<_>, LayerError>>()?;
        let up = which.into_iter().map(|d| Rc::clone(&frames[d])).collect();
        Ok((Self::Layers(up), params))
    }

    /// The parameters of a node over this level's children (of `segments`) in `role`, at
    /// blowup 2^`log_blowup` and `pow_bits` grinding bits, with the fewest queries that give
    /// `target` bits in `regime` (its tables' shapes are every such node's:
    /// [`Level::zero_airs`]).
    fn node_params<A: Air>(
        &self,
        segments: &[Segment<'_, A>],
        (log_blowup, pow_bits): (usize, u32),
        target: u32,
        regime: Regime,
        role: LayerRole,
    ) -> Result<StarkParams, LayerError> {
        let zero = self.zero_airs(segments)?;
        let node = node_of(self.transcripts(), zero.iter().map(|z| (&z.0, &z.1)));
        Ok(node.params(log_blowup, pow_bits, target, regime, role)?)
    }

    /// Whether a node over it and one over `other` have one frame: children of the same
    /// frames, one for one (a frame holds only what their shapes fix).
    fn alike(&self, other: &Self) -> bool {
        fn same<T>(a: &[Rc<T>], b: &[Rc<T>]) -> bool {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| Rc::ptr_eq(a, b))
        }
        match (self, other) {
            (Self::Segments(a), Self::Segments(b)) => same(a, b),
            (Self::Layers(a), Self::Layers(b)) => same(a, b),
            _ => false,
        }
    }

    /// Its children in the runs a level of `nodes` nodes takes ([`TreeLevel::runs`]).
    fn split(self, nodes: usize) -> Result<Vec<Self>, LayerError> {
        let children = self.transcripts().len();
        if nodes == 0 || nodes > children {
            return Err(LayerError::Level { nodes, children });
        }
        Ok(match self {
            Self::Segments(frames) => (TreeLevel::cut(nodes, frames).into_iter())
                .map(Self::Segments)
                .collect(),
            Self::Layers(frames) => (TreeLevel::cut(nodes, frames).into_iter())
                .map(Self::Layers)
                .collect(),
        })
    }

    /// How many segments it covers.
    fn segments(&self) -> usize {
        match self {
            Self::Segments(frames) => frames.len(),
            Self::Layers(frames) => frames.iter().map(|f| f.below.segments()).sum(),
        }
    }

    /// The circuits of the layers this level is made of, in proving order: a level of
    /// nodes at a time, innermost first, each level's in its nodes' order; none for the
    /// segments.
    fn circuits(&self) -> Vec<TablesCircuit> {
        self.levels().concat()
    }

    /// [`Level::circuits`], a level of nodes at a time.
    fn levels(&self) -> Vec<Vec<TablesCircuit>> {
        let Self::Layers(frames) = self else {
            return Vec::new();
        };
        let mut levels: Vec<Vec<TablesCircuit>> = Vec::new();
        for frame in frames {
            for (depth, circuits) in frame.below.levels().into_iter().enumerate() {
                match levels.get_mut(depth) {
                    Some(level) => level.extend(circuits),
                    None => levels.push(circuits),
                }
            }
        }
        levels.push(frames.iter().map(|f| f.circuit.clone()).collect());
        levels
    }

    /// The transcript AIRs of the node over this level's children, one a child.
    fn transcripts(&self) -> Vec<&TranscriptAir> {
        match self {
            Self::Segments(frames) => frames.iter().map(|f| &f.transcript).collect(),
            Self::Layers(frames) => frames.iter().map(|f| &f.transcript).collect(),
        }
    }

    /// The heights (log2) of each child's tables in the node over this level, in the order
    /// of their AIRs: what reading its record needs.
    fn heights<A: Air>(&self, segments: &[Segment<'_, A>]) -> Result<Vec<[usize; 3]>, LayerError> {
        match self {
            Self::Segments(frames) => (segments.iter().zip(frames))
                .map(|(segment, frame)| frame.child_heights(segment.params.num_queries))
                .collect(),
            Self::Layers(frames) => frames.iter().map(|f| f.heights()).collect(),
        }
    }

    /// The identity and query AIRs of the node over this level's children, one pair a
    /// child (one shared by children of one frame), their values zero: their definitions,
    /// and so their tables' shapes and keys, are every such node's.
    fn zero_airs<A: Air>(&self, segments: &[Segment<'_, A>]) -> Result<Vec<ZeroAirs>, LayerError> {
        /// `build` of each of `frames` (with its index), once a frame, looked up among the
        /// distinct ones.
        fn once<F>(
            frames: &[Rc<F>],
            mut build: impl FnMut(&F, usize) -> Result<(IdentityAir, QueriesAir), LayerError>,
        ) -> Result<Vec<ZeroAirs>, LayerError> {
            let mut zero: Vec<ZeroAirs> = Vec::with_capacity(frames.len());
            let mut distinct: Vec<(&Rc<F>, ZeroAirs)> = Vec::new();
            for (i, frame) in frames.iter().enumerate() {
                let airs = match distinct.iter().find(|(f, _)| Rc::ptr_eq(f, frame)) {
                    Some((_, airs)) => Rc::clone(airs),
                    None => {
                        let airs = Rc::new(build(frame, i)?);
                        distinct.push((frame, Rc::clone(&airs)));
                        airs
                    }
                };
                zero.push(airs);
            }
            Ok(zero)
        }
        match self {
            Self::Segments(frames) => once(frames, |frame, i| {
                frame.zero_airs(segments[i].params.num_queries)
            }),
            Self::Layers(frames) => once(frames, |frame, _| frame.zero_airs()),
        }
    }

    /// The identity and query AIRs of the node over this level's children, and the query
    /// AIRs' public inputs, one a child, that their transcript AIRs' public `inputs` (one
    /// list a child) give, once they link (at every level down to the segments, `policy`
    /// judging each layer below's circuit).
    fn airs<A: Air>(
        &self,
        segments: &[Segment<'_, A>],
        inputs: &[&[Felt]],
        policy: &VerifyPolicy,
    ) -> Result<Vec<Built>, LayerError> {
        let children = self.transcripts().len();
        if inputs.len() != children {
            return Err(LinkError::Length {
                what: "the children's transcript inputs",
                expected: children,
                got: inputs.len(),
            }
            .into());
        }
        match self {
            Self::Segments(frames) => segment_airs(segments, frames, inputs),
            Self::Layers(frames) => {
                let mut first = 0;
                (frames.iter().zip(inputs))
                    .map(|(frame, inputs)| {
                        let count = frame.below.segments();
                        first += count;
                        frame.airs(&segments[first - count..first], inputs, policy)
                    })
                    .collect()
            }
        }
    }

    /// Checks that `layer`, the proof of a node over this level's children made with
    /// `params`, verifies under `policy`, which applies to the segments' parameters and to
    /// every layer's.
    fn verify<A: Air>(
        &self,
        segments: &[Segment<'_, A>],
        layer: &LayerProof,
        params: &StarkParams,
        policy: &VerifyPolicy,
    ) -> Result<TablesCircuit, LayerError> {
        self.with_tables(segments, layer, policy, |_, _, tables| {
            Ok(verify_tables(
                LAYER_CONTEXT,
                tables,
                &layer.tables,
                params,
                policy,
            )?)
        })
    }

    /// `run` on the AIRs of a node over this level's children whose proof is `layer`, each
    /// child's three lists of public inputs and their tables in the proof's order, all
    /// built from its transcript AIRs' inputs once they link (at every level down to the
    /// segments, `policy` judging the segments' parameters and each layer below's circuit).
    fn with_tables<A: Air, T>(
        &self,
        segments: &[Segment<'_, A>],
        layer: &LayerProof,
        policy: &VerifyPolicy,
        run: impl FnOnce(&NodeAirs<'_>, &[[&[Felt]; 3]], &[TableStatement<'_>]) -> Result<T, LayerError>,
    ) -> Result<T, LayerError> {
        check_segments(segments, policy)?;
        let transcripts = self.transcripts();
        let counts = transcripts.iter().map(|t| t.num_public_inputs());
        let split = split_inputs(counts, &layer.inputs)?;
        let (built, query_inputs): (Vec<_>, Vec<_>) = (self.airs(segments, &split, policy)?)
            .into_iter()
            .map(|(identity, queries, query_inputs)| ((identity, queries), query_inputs))
            .unzip();
        let node = node_of(transcripts, built.iter().map(|(i, q)| (i, q)));
        let identity_inputs: Vec<Vec<Felt>> =
            built.iter().map(|(i, _)| i.public_inputs()).collect();
        let lists = statement_inputs(&split, &identity_inputs, &query_inputs);
        run(&node, &lists, &node.tables(&lists))
    }
}

/// A child's identity and query AIRs with their values zero ([`Level::zero_airs`]).
type ZeroAirs = Rc<(IdentityAir, QueriesAir)>;

/// The AIRs of a layer over `transcripts`' children with these identity and query AIRs,
/// one a child.
fn node_of<'a>(
    transcripts: Vec<&'a TranscriptAir>,
    others: impl IntoIterator<Item = (&'a IdentityAir, &'a QueriesAir)>,
) -> NodeAirs<'a> {
    NodeAirs(
        (transcripts.into_iter().zip(others))
            .map(|(transcript, (identity, queries))| LayerAirs {
                transcript,
                identity,
                queries,
            })
            .collect(),
    )
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
    /// Its children's identity and query AIRs, their values zero ([`Level::zero_airs`]).
    zero: Vec<ZeroAirs>,
    /// Its children's tables' programs, from those (the same definitions).
    programs: Vec<ChildPrograms>,
    /// Its tables' AIR keys, from those: an AIR's definition is its shape's, whatever its
    /// values (its claims, positions and inputs are public inputs or witness), so the
    /// layer's tables built from a proof's inputs have these keys (checked in debug builds).
    keys: Vec<Digest>,
    /// Its circuit: its tables' AIRs (theirs with their values zero: the same definitions)
    /// at its parameters.
    circuit: TablesCircuit,
}

impl LayerFrame {
    /// The frame of a layer made with `params` over the children `below` frames, whose
    /// identity and query AIRs, their values zero, are `zero` ([`Level::zero_airs`]).
    fn over(below: Level, zero: Vec<ZeroAirs>, params: &StarkParams) -> Result<Self, LayerError> {
        if params.hash != MerkleHash::Poseidon2 {
            return Err(ChildError::NotPoseidon2.into());
        }
        debug_assert_eq!(zero.len(), below.transcripts().len(), "a child's AIRs each");
        // The layer's AIRs, their values zero: its layout and trees are every such layer's.
        let node = node_of(below.transcripts(), zero.iter().map(|z| (&z.0, &z.1)));
        let inputs = zero_inputs(&node);
        let tables = node.tables(&inputs.iter().map(each_ref).collect::<Vec<_>>());
        let keys = node.keys()?;
        let programs = node.programs()?;
        let TranscriptLayout { steps, messages } =
            tables_transcript_layout(LAYER_CONTEXT, &tables, params)?
                .ok_or(ChildError::NotPoseidon2)?;
        let transcript = TranscriptAir::new(&steps, params.pow_bits).map_err(ChildError::from)?;
        let trees = tables_trees(&tables, params)?;
        let airs: Vec<_> = tables.iter().map(|t| t.air).collect();
        let circuit = TablesCircuit::of(&airs, params)?;
        drop(tables);
        Ok(Self {
            below,
            params: *params,
            transcript,
            messages,
            trees,
            zero,
            programs,
            keys,
            circuit,
        })
    }

    /// Its children's AIRs, their values zero: its tables' definitions.
    fn zero_node(&self) -> NodeAirs<'_> {
        node_of(
            self.below.transcripts(),
            self.zero.iter().map(|z| (&z.0, &z.1)),
        )
    }

    /// The joint identity and query AIRs of the layer over it, their values zero
    /// ([`Level::zero_airs`]): on its children's zero-valued AIRs' inputs, and the
    /// transcript AIR's inputs of its layout (every absorbed value zero, each list framed).
    fn zero_airs(&self) -> Result<(IdentityAir, QueriesAir), LayerError> {
        let inner = self.zero_node();
        let inputs = zero_inputs(&inner);
        let joint = joint_identity(
            &inner,
            &self.programs,
            &inputs.iter().map(each_ref).collect::<Vec<_>>(),
            &self.transcript,
            &self.messages,
            &self.transcript.public_inputs(),
        )?;
        let draws = vec![Felt::ZERO; self.params.num_queries];
        Ok((joint, mixed_queries(&self.trees, &self.params, &draws)?))
    }

    /// The heights (log2) of the layer's tables over it, in the order of its AIRs: what
    /// reading its record needs, before any input is known (the joint identity's from its
    /// programs' lengths, the query AIR's from its draws' count).
    fn heights(&self) -> Result<[usize; 3], LayerError> {
        let lengths: Vec<usize> = (self.programs.iter().flatten())
            .map(|p| p.instructions().len())
            .collect();
        let draws = vec![Felt::ZERO; self.params.num_queries];
        Ok([
            self.transcript.log_rows(),
            identity_log_rows(&lengths),
            mixed_queries(&self.trees, &self.params, &draws)?.log_rows(),
        ])
    }

    /// [`Level::airs`] for a layer's child: its children's transcript tables' public
    /// inputs read where the layer over it absorbed them (one list a child: the others are
    /// derived), its children's other tables' AIRs and inputs built from them by the level
    /// below (which links them), its circuit judged by `policy`, the statement it absorbed
    /// linked to those tables, then the joint identity and query AIRs from the same
    /// `inputs`.
    fn airs<A: Air>(
        &self,
        segments: &[Segment<'_, A>],
        inputs: &[Felt],
        policy: &VerifyPolicy,
    ) -> Result<Built, LayerError> {
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

        // Its children's tables: each transcript table's public inputs as absorbed, linked
        // below; the others' built from them.
        let inner_inputs = (self.zero_node().lists().into_iter())
            .map(|k| absorbed.list(label::PUBLIC_INPUTS, k))
            .collect::<Result<Vec<_>, _>>()?;
        let (built, inner_query_inputs): (Vec<_>, Vec<_>) =
            (self.below.airs(segments, &inner_inputs, policy)?)
                .into_iter()
                .map(|(identity, queries, query_inputs)| ((identity, queries), query_inputs))
                .unzip();
        let inner = node_of(self.below.transcripts(), built.iter().map(|(i, q)| (i, q)));
        let identity_inputs: Vec<Vec<Felt>> =
            built.iter().map(|(i, _)| i.public_inputs()).collect();
        let inner_inputs = statement_inputs(&inner_inputs, &identity_inputs, &inner_query_inputs);
        let inner_tables = inner.tables(&inner_inputs);
        // Its circuit is the frame's: the tables' definitions do not depend on their values.
        debug_assert_eq!(
            TablesCircuit::of(
                &inner_tables.iter().map(|t| t.air).collect::<Vec<_>>(),
                &self.params
            )
            .as_ref(),
            Ok(&self.circuit),
            "the frame's circuit"
        );
        policy
            .check_tables(&self.circuit)
            .map_err(ChildError::from)?;

        // Its verifier's transcript: its statement's data are those tables' (each key, the
        // transcript tables' public inputs), its draws the query AIR's positions. The keys
        // are the frame's: the tables' definitions do not depend on their values.
        debug_assert_eq!(
            inner.keys().ok().as_ref(),
            Some(&self.keys),
            "the frame's keys"
        );
        let statement_data =
            tables_statement_data(LAYER_CONTEXT, &inner_tables, &self.keys, &self.params)?;
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
            &self.programs,
            &inner_inputs,
            &self.transcript,
            &self.messages,
            inputs,
        )?;
        let query_inputs = query_inputs(&queries_over, &self.transcript, &self.messages, inputs)?;
        Ok((joint, queries_over, query_inputs))
    }
}

/// Each child's tables' public inputs of a layer over `node` with every value zero: its
/// transcript table's and its query table's zeros, its identity table's its own.
fn zero_inputs(node: &NodeAirs<'_>) -> Vec<[Vec<Felt>; 3]> {
    (node.0.iter())
        .map(|c| {
            [
                vec![Felt::ZERO; c.transcript.num_public_inputs()],
                c.identity.public_inputs(),
                vec![Felt::ZERO; c.queries.num_public_inputs()],
            ]
        })
        .collect()
}

/// A child's three lists of public inputs, borrowed.
fn each_ref(inputs: &[Vec<Felt>; 3]) -> [&[Felt]; 3] {
    inputs.each_ref().map(Vec::as_slice)
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
/// `child_params`: [`verify_layer_over_node`] over that one segment.
///
/// Returns the top layer's circuit, whose figure the policy judged.
///
/// # Errors
/// As [`verify_layer_over_node`].
pub fn verify_layer_over_layers<A: Air>(
    child: &A,
    statement: &SegmentStatement<'_>,
    child_params: &StarkParams,
    inner_params: &[StarkParams],
    layer: &LayerProof,
    params: &StarkParams,
    policy: &VerifyPolicy,
) -> Result<TablesCircuit, LayerError> {
    let segment = Segment::new(child, statement, child_params);
    verify_layer_over_node(&[segment], inner_params, layer, params, policy)
}

/// Checks that `layer` proves that a stack over a node verifies: the proof of a layer over
/// a layer made with the last of `inner_params`, over one made with the one before it,
/// down to a node over `segments` made with the first: [`verify_tree`] of a level of one
/// node for each of `inner_params`.
///
/// Returns the top layer's circuit, whose figure the policy judged.
///
/// # Errors
/// As [`verify_tree`], or no inner layer.
pub fn verify_layer_over_node<A: Air>(
    segments: &[Segment<'_, A>],
    inner_params: &[StarkParams],
    layer: &LayerProof,
    params: &StarkParams,
    policy: &VerifyPolicy,
) -> Result<TablesCircuit, LayerError> {
    verify_tree(segments, &stack(inner_params)?, layer, params, policy)
}

/// Checks that `layer` proves that a tree over `segments` verifies: the proof of a node
/// made with `params` over the top level of nodes of `levels` (innermost first; with none,
/// over the segments), each of a level's k nodes over the next of k near-equal, contiguous
/// runs of the level below's children ([`TreeLevel`]). At each level, from the top: each node's
/// transcript AIR's inputs hold the transcript tables' public inputs of its children as its
/// transcript absorbed them (one list a child: the identity and query tables' are derived,
/// never absorbed), the statement it absorbed (its keys, those inputs, every other datum)
/// is the one those tables give (the transcript AIR's links, as for a segment), and its
/// children's other tables' inputs are built from them; at the foot, each child's inputs
/// link to its segment ([`verify_node`](crate::verify_node)'s links, a child that does not
/// named by its segment's index); each node's joint identity (of its children's tables)
/// and query AIR's inputs are built from its transcript AIR's; and the top proof of its
/// tables verifies with `params`. `policy` applies to the segments' parameters and to
/// every layer's (so one that pins parameters or a hash takes only a tree of those).
///
/// Returns the top layer's circuit, whose figure the policy judged.
///
/// # Errors
/// No segment, a level of no node or of more nodes than the level below has children, a
/// segment or a node that makes no shape the node over it takes, parameters the policy
/// refuses, inputs that do not link (at any level), or a proof that does not verify.
pub fn verify_tree<A: Air>(
    segments: &[Segment<'_, A>],
    levels: &[TreeLevel],
    layer: &LayerProof,
    params: &StarkParams,
    policy: &VerifyPolicy,
) -> Result<TablesCircuit, LayerError> {
    Level::of(segments, levels)?.verify(segments, layer, params, policy)
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
    let segment = Segment::new(child, statement, child_params);
    let mut circuits = verify_record_over_node(&[segment], inner_params, record, policy)?;
    Ok(circuits.pop().expect("the top layer's circuit"))
}

/// [`verify_record_over_tree`] of a stack over a node of `segments` made with
/// `inner_params` (innermost first, at least one), as [`verify_layer_over_node`] takes it.
///
/// # Errors
/// As [`verify_record_over_tree`], or no inner layer.
pub fn verify_record_over_node<A: Air>(
    segments: &[Segment<'_, A>],
    inner_params: &[StarkParams],
    record: &TablesRecord,
    policy: &VerifyPolicy,
) -> Result<Vec<TablesCircuit>, LayerError> {
    verify_record_over_tree(segments, &stack(inner_params)?, record, policy)
}

/// The proof of a node over the top level of a tree over `segments` with `levels` that
/// `record` holds ([`node_record`](crate::node_record) of its children), then
/// [`verify_tree`] of it, building the frames once. The segments and the levels' parameters
/// fix each table's height; the transcript tables' public inputs are recorded, the others'
/// are not.
///
/// Returns every layer's circuit in proving order: each node's of `levels`, a level at a
/// time, innermost first, then the top node's, at its record's parameters; the policy
/// judged each.
///
/// # Errors
/// As [`verify_tree`], or tables other than those of the heights they give, or a table
/// other than a transcript's with public inputs.
pub fn verify_record_over_tree<A: Air>(
    segments: &[Segment<'_, A>],
    levels: &[TreeLevel],
    record: &TablesRecord,
    policy: &VerifyPolicy,
) -> Result<Vec<TablesCircuit>, LayerError> {
    let level = Level::of(segments, levels)?;
    let (layer, params) = layer_of_record(&level.heights(segments)?, record)?;
    let top = level.verify(segments, &layer, &params, policy)?;
    let mut circuits = level.circuits();
    circuits.push(top);
    Ok(circuits)
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
    let segment = Segment::new(child, statement, child_params);
    read_tree(&[segment], &stack(inner_params)?, &record)
}

/// The proof of a node over the top level of a tree over `segments` with `levels` that
/// `record` holds, with the parameters it was made with.
///
/// # Errors
/// As [`verify_record_over_tree`]'s reading.
pub(crate) fn read_tree<A: Air>(
    segments: &[Segment<'_, A>],
    levels: &[TreeLevel],
    record: &TablesRecord,
) -> Result<(LayerProof, StarkParams), LayerError> {
    let level = Level::of(segments, levels)?;
    layer_of_record(&level.heights(segments)?, record)
}

/// A level of a tree of nodes: its nodes, each over the next of as many near-equal,
/// contiguous runs of the level below's children (the segments, below the first level; of
/// n children cut in k runs, the first `n mod k` one longer, as parts are cut), each made
/// with `params`. A compressed proof's tree has ⌈n/4⌉ nodes a level
/// ([`tree_nodes`](ballast_stark::tree_nodes)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeLevel {
    /// Its nodes: at least one, at most the level below's children.
    pub nodes: usize,
    /// The parameters each of its nodes is made with.
    pub params: StarkParams,
}

impl TreeLevel {
    /// How many of the level below's `children` each of a level's `nodes` takes, in order.
    ///
    /// # Panics
    /// If `nodes` is 0 or more than `children`.
    pub fn runs(nodes: usize, children: usize) -> impl Iterator<Item = usize> {
        (0..nodes).map(move |i| {
            let run = ballast_stark::part_range(children, nodes, i).expect("nodes in range");
            run.len()
        })
    }

    /// `children` cut into the runs ([`TreeLevel::runs`]) a level of `nodes` takes.
    ///
    /// # Panics
    /// If `nodes` is 0 or more than the children.
    pub(crate) fn cut<T>(nodes: usize, children: Vec<T>) -> Vec<Vec<T>> {
        let lengths = Self::runs(nodes, children.len());
        let mut rest = children.into_iter();
        lengths.map(|n| rest.by_ref().take(n).collect()).collect()
    }
}

/// How a statement's tree is proven, chosen from its segments' shapes alone, before any of
/// it is: each level of nodes (innermost first, [`tree_nodes`]) with its parameters, and
/// the last layer's, over the top level's one node (over the segment, for one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreePlan {
    /// The levels of nodes, innermost first.
    pub levels: Vec<TreeLevel>,
    /// The last layer's parameters.
    pub last: StarkParams,
}

impl TreePlan {
    /// The plan of the tree over `segments`: each level's nodes made at blowup 2^`node.0`
    /// and `node.1` grinding bits, committed with Poseidon2; the last layer at blowup
    /// 2^`last.0` and `last.1` grinding bits, committed with Keccak-256; each with the
    /// fewest queries that give `target` bits in `regime` (a level's nodes share the most
    /// queries any of them needs and the shortest final polynomial any takes). Each level's
    /// frames are built as its verifier builds them, compiling the programs of its nodes'
    /// children's tables, so a tree whose nodes cannot take their children is refused here,
    /// by its level, not after the levels below it are proven.
    ///
    /// # Errors
    /// No segment, parameters a layer cannot reach `target` with, or a child a node's AIRs
    /// do not take (a constraint program the encoding cannot hold): [`LayerError::AtLevel`],
    /// [`LayerError::AtLast`].
    pub fn of<A: Air>(
        segments: &[Segment<'_, A>],
        node: (usize, u32),
        last: (usize, u32),
        target: u32,
        regime: Regime,
    ) -> Result<Self, LayerError> {
        let mut below = Level::Segments(segment_frames(segments)?);
        let mut levels = Vec::new();
        for (i, nodes) in tree_nodes(segments.len()).into_iter().enumerate() {
            let children = below.transcripts().len();
            let at_level = |source| LayerError::AtLevel {
                level: i + 1,
                nodes,
                children,
                source: Box::new(source),
            };
            // The level's nodes share the most queries any of them needs and the shortest
            // final polynomial any takes.
            let strictest = |airs: &[NodeAirs<'_>]| {
                let mut each = airs.iter().map(|a| {
                    a.params(node.0, node.1, target, regime, LayerRole::Inner)
                        .map_err(LayerError::from)
                });
                let first = each.next().expect("a node at least")?;
                each.try_fold(first, |p, q| {
                    let q = q?;
                    Ok(StarkParams {
                        num_queries: p.num_queries.max(q.num_queries),
                        log_final_poly_len: p.log_final_poly_len.min(q.log_final_poly_len),
                        ..p
                    })
                })
            };
            let (up, params) = (below.up_choosing(segments, nodes, strictest)).map_err(at_level)?;
            below = up;
            levels.push(TreeLevel { nodes, params });
        }
        let role = LayerRole::Last(MerkleHash::Keccak256);
        let last = (below.node_params(segments, last, target, regime, role))
            .map_err(|e| LayerError::AtLast(Box::new(e)))?;
        Ok(Self { levels, last })
    }
}

/// The levels of a stack made with `inner_params` (innermost first, at least one): one
/// node a level.
fn stack(inner_params: &[StarkParams]) -> Result<Vec<TreeLevel>, LayerError> {
    if inner_params.is_empty() {
        return Err(LayerError::NoInnerLayer);
    }
    let level = |params: &StarkParams| TreeLevel {
        nodes: 1,
        params: *params,
    };
    Ok(inner_params.iter().map(level).collect())
}

#[cfg(test)]
mod tests {
    use ballast_stark::{MerkleHash, SegmentPosition, Workload};
    use ballast_workloads::Fibonacci;

    use super::*;

    #[test]
    fn nodes_over_alike_runs_share_a_frame_and_no_others() {
        let params = StarkParams {
            hash: MerkleHash::Poseidon2,
            ..StarkParams::testing()
        };
        let level = |nodes| TreeLevel {
            nodes,
            params: StarkParams {
                log_blowup: 3,
                ..params
            },
        };
        let fibonacci = Fibonacci {
            sequences: 2,
            log_rows: 4,
            segments: 1,
        };
        let air = fibonacci.air(0);
        let inputs = vec![Felt::ZERO; air.num_public_inputs()];
        let statements: Vec<SegmentStatement<'_>> = (0..8)
            .map(|index| SegmentStatement {
                context: b"frames",
                position: SegmentPosition { index, count: 8 },
                public_inputs: &inputs,
            })
            .collect();
        let shared = |m: usize| {
            let segments: Vec<_> = (statements[..m].iter())
                .map(|s| Segment::new(&air, s, &params))
                .collect();
            let Level::Layers(frames) = Level::of(&segments, &[level(2)]).unwrap() else {
                unreachable!("a level of nodes");
            };
            Rc::ptr_eq(&frames[0], &frames[1])
        };
        // Runs of four and four segments, then of three and two.
        assert!(shared(8));
        assert!(!shared(5));
    }
}
