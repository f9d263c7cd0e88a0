//! A layer over several children, a node of the tree that aggregates a statement's
//! segments: one proof of each child's three AIRs' tables ([`prove_node`]), and its verifier
//! ([`verify_node`]), which takes each segment's AIR, statement and parameters
//! ([`Segment`]) but no child proof. The caller's statements chain the segments: segment
//! `i`'s ends where segment `i + 1`'s starts, so a child proof that starts elsewhere does not
//! link. A layer over one child ([`Child::prove`], [`verify_layer`](crate::verify_layer)) is
//! a node of one.

use std::rc::Rc;

use ballast_air::Air;
use ballast_field::Felt;
use ballast_merkle::Digest;
use ballast_stark::{
    Regime, SegmentPosition, SegmentStatement, StarkParams, TableStatement, TablesCircuit,
    TablesRecord, VerifyPolicy,
};

use crate::layer::{Frame, NodeAirs, child_key, statement_inputs};
use crate::{Child, ChildError, IdentityAir, LayerError, LayerProof, LayerRole, QueriesAir};

/// A segment a layer proves about, as its verifier takes it in place of its proof: its AIR,
/// its statement and the parameters it was proven with.
#[derive(Clone, Copy, Debug)]
pub struct Segment<'a, A> {
    /// The segment's AIR.
    pub air: &'a A,
    /// What its proof proves.
    pub statement: &'a SegmentStatement<'a>,
    /// The parameters it was proven with.
    pub params: &'a StarkParams,
}

impl<'a, A> Segment<'a, A> {
    /// The segment of `air`, `statement` and `params`.
    pub fn new(air: &'a A, statement: &'a SegmentStatement<'a>, params: &'a StarkParams) -> Self {
        Self {
            air,
            statement,
            params,
        }
    }

    /// Whether a layer's verifier builds one frame for both, given their AIRs' definitions
    /// are one: the same parameters and statements of the same lengths (a frame holds its
    /// transcript's layout, which the lengths fix, not the values).
    fn alike(&self, other: &Self) -> bool {
        let lengths = |s: &SegmentStatement<'_>| (s.context.len(), s.public_inputs.len());
        self.params == other.params && lengths(self.statement) == lengths(other.statement)
    }
}

/// Each segment's statement in a whole statement of these segments' `public_inputs` (one a
/// segment, in order) and `context`: segment `i` of `public_inputs.len()`, what a node over
/// them proves about.
pub fn segment_statements<'a>(
    context: &'a [u8],
    public_inputs: &'a [Vec<Felt>],
) -> Vec<SegmentStatement<'a>> {
    part_statements(context, 0, public_inputs.len(), public_inputs)
}

/// The statements of segments `first..` of a statement of `count` segments and `context`,
/// with these `public_inputs` (one a segment, in order): a part's segments, each at its
/// place in the statement.
pub fn part_statements<'a>(
    context: &'a [u8],
    first: usize,
    count: usize,
    public_inputs: &'a [Vec<Felt>],
) -> Vec<SegmentStatement<'a>> {
    (public_inputs.iter().enumerate())
        .map(|(i, public_inputs)| SegmentStatement {
            context,
            position: SegmentPosition {
                index: first + i,
                count,
            },
            public_inputs,
        })
        .collect()
}

/// The AIRs of a node over `children`.
fn node_airs(children: &[Child]) -> Result<NodeAirs<'_>, LayerError> {
    if children.is_empty() {
        return Err(LayerError::NoChildren);
    }
    Ok(NodeAirs(children.iter().map(Child::layer_airs).collect()))
}

/// Proves the three AIRs of each of `children` (in their order), once each child's
/// transcript AIR's public inputs link, as one proof of their tables with `params`, on the
/// host (the tables prover has no device path). The proof's inputs are the transcript AIRs'
/// public inputs, one child after another.
///
/// # Errors
/// No child, or a trace its AIR does not take or the prover refuses (none for children
/// `Child::of_segment` built).
pub fn prove_node(children: &[Child], params: &StarkParams) -> Result<LayerProof, LayerError> {
    let airs = node_airs(children)?;
    let (mut inputs, mut query_inputs) = (Vec::new(), Vec::new());
    for child in children {
        let these = child.transcript.public_inputs();
        child.check_links(&these)?;
        // The inputs built from the transcript's are the ones its witness (the replay) took.
        query_inputs.push(child.query_inputs(&these)?);
        inputs.extend(these);
    }
    let queries: Vec<_> = children.iter().map(|c| &c.queries).collect();
    airs.prove(&queries, inputs, &query_inputs, params)
}

/// The parameters of a node over `children` at blowup 2^`log_blowup` and `pow_bits`
/// grinding bits in `role`: the fewest queries that give its proof `target` bits in
/// `regime`, and the hash and final polynomial of the role.
///
/// # Errors
/// No child, a blowup or grinding the AIRs cannot be proven with, or a target out of reach.
pub fn node_params(
    children: &[Child],
    (log_blowup, pow_bits): (usize, u32),
    target: u32,
    regime: Regime,
    role: LayerRole,
) -> Result<StarkParams, LayerError> {
    let airs = node_airs(children)?;
    Ok(airs.params(log_blowup, pow_bits, target, regime, role)?)
}

/// The record of `layer`, the proof of a node over `children` made with `params`: a
/// [`TablesRecord`] of their tables in the proof's order, holding the transcript AIRs'
/// public inputs alone ([`verify_node_record`] reads it back): its verifier builds the
/// others from them.
///
/// # Errors
/// No child, or inputs that do not give the query AIRs'.
pub fn node_record(
    children: &[Child],
    layer: &LayerProof,
    params: &StarkParams,
) -> Result<TablesRecord, LayerError> {
    with_node_tables(children, &layer.inputs, |airs, _, tables| {
        airs.record(tables, &layer.tables, params)
    })
}

/// `run` on the AIRs of a node over `children` whose transcript AIRs' public inputs are
/// `inputs` (one child after another), each child's three lists of public inputs (its
/// transcript AIR's; its identity AIR's; its query AIR's, built from the first:
/// [`Child::query_inputs`]) and their tables in the proof's order: the one construction
/// of a node's tables from its inputs, for its record and for a layer over it.
///
/// # Errors
/// No child, inputs of another count than the children's transcript AIRs take, inputs that
/// do not give a query AIR's, or what `run` returns.
pub(crate) fn with_node_tables<T>(
    children: &[Child],
    inputs: &[Felt],
    run: impl FnOnce(&NodeAirs<'_>, &[[&[Felt]; 3]], &[TableStatement<'_>]) -> Result<T, LayerError>,
) -> Result<T, LayerError> {
    let airs = node_airs(children)?;
    let split = airs.split(inputs)?;
    let query_inputs = (children.iter().zip(&split))
        .map(|(child, inputs)| child.query_inputs(inputs))
        .collect::<Result<Vec<_>, _>>()?;
    let identity_inputs: Vec<Vec<Felt>> = (children.iter())
        .map(|c| c.identity.public_inputs())
        .collect();
    let lists = statement_inputs(&split, &identity_inputs, &query_inputs);
    run(&airs, &lists, &airs.tables(&lists))
}

/// Checks each of `segments`' parameters against `policy` (a refusal named by the segment
/// when the statement has several): what a layer's verifier judges of its segments.
pub(crate) fn check_segments<A: Air>(
    segments: &[Segment<'_, A>],
    policy: &VerifyPolicy,
) -> Result<(), LayerError> {
    for (i, segment) in segments.iter().enumerate() {
        policy
            .check_params(segment.air, segment.params)
            .map_err(|e| named(segments, i, ChildError::from(e).into()))?;
    }
    Ok(())
}

/// The frames of `segments`, a node's children, in their order: one shared by segments
/// whose AIRs have one key (one definition) and which are alike ([`Segment::alike`]), so
/// that what is built from it is built once.
pub(crate) fn segment_frames<A: Air>(
    segments: &[Segment<'_, A>],
) -> Result<Vec<Rc<Frame>>, LayerError> {
    if segments.is_empty() {
        return Err(LayerError::NoChildren);
    }
    // Each segment's AIR keyed once (segments of one AIR instance share its key): the key
    // finds alike segments, and their frame holds it.
    let mut keys: Vec<Digest> = Vec::with_capacity(segments.len());
    for (i, s) in segments.iter().enumerate() {
        let key = match segments[..i]
            .iter()
            .position(|t| std::ptr::eq(t.air, s.air))
        {
            Some(j) => keys[j],
            None => child_key(s.air).map_err(|e| named(segments, i, e))?,
        };
        keys.push(key);
    }
    let alike = |i: usize, j: usize| keys[i] == keys[j] && segments[i].alike(&segments[j]);
    let mut frames: Vec<Rc<Frame>> = Vec::with_capacity(segments.len());
    for (i, s) in segments.iter().enumerate() {
        let frame = match (0..i).find(|&j| alike(i, j)) {
            Some(j) => Rc::clone(&frames[j]),
            None => Rc::new(
                Frame::of(s.air, keys[i], s.statement, s.params)
                    .map_err(|e| named(segments, i, e))?,
            ),
        };
        frames.push(frame);
    }
    Ok(frames)
}

/// `error`, of the `i`-th of `segments`, named by that segment's index in its statement
/// when the statement has several (a node of a tree may be over one of them).
pub(crate) fn named<A>(segments: &[Segment<'_, A>], i: usize, error: LayerError) -> LayerError {
    if segments[i].statement.position.count == 1 {
        return error;
    }
    LayerError::Segment {
        index: segments[i].statement.position.index,
        source: Box::new(error),
    }
}

/// A child's identity and query AIRs and the query AIR's public inputs, built from its
/// transcript AIR's.
pub(crate) type Built = (IdentityAir, QueriesAir, Vec<Felt>);

/// What each of `segments` (with its frame of `frames`) builds from its transcript AIR's
/// public inputs of `inputs` (one a segment), once they link ([`Frame::airs`]); a refusal
/// named by the segment when the statement has several.
pub(crate) fn segment_airs<A: Air>(
    segments: &[Segment<'_, A>],
    frames: &[Rc<Frame>],
    inputs: &[&[Felt]],
) -> Result<Vec<Built>, LayerError> {
    (segments.iter().zip(frames).zip(inputs).enumerate())
        .map(|(i, ((s, frame), inputs))| {
            let built = frame.airs(s.air, s.statement, s.params, inputs);
            built.map_err(|e| named(segments, i, e))
        })
        .collect()
}

/// Checks that `layer` proves that a proof of each of `segments` verifies: for each, in
/// their order, its transcript AIR's public inputs (the next of `layer`'s, one segment after
/// another) link to its AIR, statement and parameters ([`Child::check_links`]) and give its
/// identity and query AIRs' inputs; then the proof of all their tables verifies with
/// `params`. `policy` applies to each segment's parameters and to the layer's. The
/// statements are the caller's: a statement's segments chained, each starting where the
/// one before ends, make the node a proof of the chain.
///
/// Returns the layer's circuit, whose figure the policy judged.
///
/// # Errors
/// No segment, a segment that makes no shape the layer takes or whose parameters the
/// policy refuses, inputs that do not link (named by the segment's index when the
/// statement has several: [`LayerError::Segment`]), or a proof that does not verify.
pub fn verify_node<A: Air>(
    segments: &[Segment<'_, A>],
    layer: &LayerProof,
    params: &StarkParams,
    policy: &VerifyPolicy,
) -> Result<TablesCircuit, LayerError> {
    crate::verify_tree(segments, &[], layer, params, policy)
}

/// Reads the proof of a node over `segments` that `record` holds ([`node_record`]), then
/// checks it ([`verify_node`]), building the segments' frames once.
///
/// # Errors
/// As [`verify_node`], or tables other than three a segment, of the heights the segments
/// give them, or an identity or query table with public inputs.
pub fn verify_node_record<A: Air>(
    segments: &[Segment<'_, A>],
    record: &TablesRecord,
    policy: &VerifyPolicy,
) -> Result<TablesCircuit, LayerError> {
    let mut circuits = crate::verify_record_over_tree(segments, &[], record, policy)?;
    Ok(circuits.pop().expect("the node's circuit"))
}

#[cfg(test)]
mod tests {
    use ballast_stark::{MerkleHash, Workload};
    use ballast_workloads::Fibonacci;

    use super::*;

    #[test]
    fn segments_alike_share_a_frame_and_no_others() {
        let params = StarkParams {
            hash: MerkleHash::Poseidon2,
            ..StarkParams::testing()
        };
        let blown = StarkParams {
            log_blowup: params.log_blowup + 1,
            ..params
        };
        let fibonacci = |log_rows| Fibonacci {
            sequences: 2,
            log_rows,
            segments: 1,
        };
        // Two instances of one definition, and one of another (more rows).
        let airs = [
            fibonacci(4).air(0),
            fibonacci(4).air(0),
            fibonacci(5).air(0),
        ];
        let inputs = vec![Felt::ZERO; airs[0].num_public_inputs()];
        // The third statement's context is longer.
        let contexts: [&[u8]; 3] = [b"frames", b"frames", b"frames, longer"];
        let statements = contexts.map(|context| SegmentStatement {
            context,
            position: SegmentPosition { index: 0, count: 1 },
            public_inputs: &inputs,
        });
        let segment = |a: usize, s: usize, p| Segment::new(&airs[a], &statements[s], p);
        let shared = |segments: &[Segment<'_, _>]| {
            let frames = segment_frames(segments).unwrap();
            Rc::ptr_eq(&frames[0], &frames[1])
        };
        assert!(shared(&[segment(0, 0, &params), segment(1, 1, &params)]));
        assert!(!shared(&[segment(0, 0, &params), segment(2, 0, &params)]));
        assert!(!shared(&[segment(0, 0, &params), segment(1, 1, &blown)]));
        assert!(!shared(&[segment(0, 0, &params), segment(1, 2, &params)]));
    }
}
