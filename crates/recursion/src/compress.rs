//! A statement's compressed proof ([`CompressedRecord`]): the last layer's proof that the
//! statement's segment proofs verify, with the statement it is about and the states that
//! chain its segments. [`compress`] makes it from a whole proof made with Poseidon2 trees:
//! for one segment, the last layer over it; for several, a tree of nodes over them
//! ([`prove_node`], at most four children a node: [`tree_nodes`]) and the last layer over
//! its top node. [`verify_compressed`] checks it from the statement alone, the segment
//! proofs gone.
//!
//! The last layer's record holds the top node's transcript inputs, which hold its
//! children's, down to each segment's, so it grows with the segments until the links move
//! inside the AIRs (`docs/recursion.md`, "What remains").

use ballast_field::Felt;
use ballast_stark::{
    Analysis, Circuit, CompressedRecord, MerkleHash, Proof, Regime, StarkParams, TablesCircuit,
    VerifierError, VerifyPolicy, Workload, statement_context, tree_nodes,
};

use crate::{
    Child, ChildError, LayerError, Segment, TreeLevel, TreePlan, node_record, prove_node,
    segment_statements, verify_record_over_tree,
};

/// The last layer's blowup (log2) and grinding bits that [`compress`] takes by default:
/// blowup 64, whose queries are worth about 3 bits each, and 28 bits of grinding, which
/// take it under 256 KiB for a 2^14-row Poseidon2-chain segment (251 KiB through `cli`,
/// against 262 at 22 bits; `docs/recursion.md`).
pub const DEFAULT_LAST_LAYER: (usize, u32) = (6, 28);

/// The blowup (log2) and grinding bits of the nodes that [`compress`] puts under the last
/// layer for a statement of several segments (every level of their tree): blowup 8, the
/// smallest its AIRs' degree-7 S-boxes take, and 20 bits of grinding, as ZisK's recursive
/// layers (8/73/20 at 128 bits provable).
pub const DEFAULT_NODE_LAYER: (usize, u32) = (3, 20);

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

/// `run` on the segments of `workload` made with `params`, segment `i` from `states[i]`
/// to `states[i + 1]` (segments of equal AIRs take the first's instance: a verifier keys
/// each AIR once).
fn with_segments<W: Workload, T>(
    workload: &W,
    params: &StarkParams,
    states: &[&W::State],
    run: impl FnOnce(&[Segment<'_, W::Air>]) -> T,
) -> T {
    let airs: Vec<W::Air> = (0..workload.segments()).map(|i| workload.air(i)).collect();
    let context = statement_context(workload);
    let public_inputs: Vec<Vec<Felt>> = (states.windows(2).enumerate())
        .map(|(i, ends)| workload.public_inputs(i, ends[0], ends[1]))
        .collect();
    let statements = segment_statements(&context, &public_inputs);
    let segments: Vec<Segment<'_, W::Air>> = (airs.iter().zip(&statements))
        .map(|(air, statement)| {
            let first = airs.iter().find(|&a| a == air).unwrap_or(air);
            Segment::new(first, statement, params)
        })
        .collect();
    run(&segments)
}

/// How [`compress`] proves `workload`'s compressed proof, its segments made with `params`
/// ([`TreePlan::of`], at the same layers' blowups, grinding bits and target): its shapes
/// alone fix it, so it is known, and a tree its nodes cannot take is refused, before the
/// statement is proven.
///
/// # Errors
/// A statement its workload refuses, or as [`TreePlan::of`].
pub fn plan_compression<W: Workload>(
    workload: &W,
    params: &StarkParams,
    node: (usize, u32),
    last: (usize, u32),
    target: u32,
    regime: Regime,
) -> Result<TreePlan, CompressError> {
    workload.validate().map_err(VerifierError::from)?;
    // Only the states' encodings' lengths reach the shapes: every state the start.
    let start = workload.start();
    let states = vec![&start; workload.segments() + 1];
    with_segments(workload, params, &states, |segments| {
        Ok(TreePlan::of(segments, node, last, target, regime)?)
    })
}

/// Compresses `proof`, a whole proof made with Poseidon2 trees that its verifier accepts
/// under `policy`, as its statement's plan says ([`TreePlan::of`], made once the segment
/// proofs verify and before any layer is proven). For one segment, the last layer over it; for several, a tree of nodes
/// ([`prove_node`]) at blowup 2^`node.0` and `node.1` grinding bits, committed with
/// Poseidon2, a level at a time until one node is left, each level's nodes over near-equal
/// runs of at most four of the level below ([`tree_nodes`]), and the last layer over its
/// top node. The last layer is at blowup 2^`last.0` and `last.1` grinding bits, committed
/// with Keccak-256; each layer has the fewest queries that give it `target` bits in
/// `regime`; a level's nodes share the most queries any of them needs.
///
/// # Errors
/// A part, a Keccak-256 proof, one whose workload, states or start its verifier refuses or
/// that does not verify, parameters a layer cannot reach `target` with, or a tree whose
/// nodes cannot take their children.
pub fn compress<W: Workload>(
    proof: &Proof<W>,
    node: (usize, u32),
    last: (usize, u32),
    target: u32,
    regime: Regime,
    policy: &VerifyPolicy,
) -> Result<CompressedRecord<W>, CompressError> {
    let count = proof.workload.segments();
    if !proof.is_whole() {
        let range = proof.range();
        return Err(CompressError::Part {
            first: range.start,
            end: range.end,
            segments: count,
        });
    }
    if proof.params.hash != MerkleHash::Poseidon2 {
        return Err(LayerError::from(ChildError::NotPoseidon2).into());
    }
    proof.workload.validate().map_err(VerifierError::from)?;
    let states = &proof.states;
    if states.len() != count + 1 {
        return Err(VerifierError::Shape {
            what: "states",
            expected: count + 1,
            got: states.len(),
        }
        .into());
    }
    if states[0] != proof.workload.start() {
        return Err(VerifierError::Start.into());
    }
    let (inner, layer) = with_segments(
        &proof.workload,
        &proof.params,
        &states.iter().collect::<Vec<_>>(),
        |segments| -> Result<_, LayerError> {
            // The segment proofs verified, then the tree planned before any of it is proven.
            let mut children = (proof.segments.iter().zip(segments))
                .map(|(segment, s)| {
                    Child::of_segment(s.air, segment, s.statement, s.params, policy)
                })
                .collect::<Result<Vec<_>, _>>()?;
            let plan = TreePlan::of(segments, node, last, target, regime)?;
            for level in &plan.levels {
                let runs = TreeLevel::cut(level.nodes, children);
                children = Vec::with_capacity(runs.len());
                for run in runs {
                    let layer = prove_node(&run, &level.params)?;
                    children.push(Child::of_node(&run, &layer, &level.params, policy)?);
                }
            }
            let layer = prove_node(&children, &plan.last)?;
            let record = node_record(&children, &layer, &plan.last)?;
            Ok((plan.levels.iter().map(|l| l.params).collect(), record))
        },
    )?;
    Ok(CompressedRecord {
        params: proof.params,
        inner,
        workload: proof.workload.clone(),
        ends: [states[0].clone(), states[count].clone()],
        between: states[1..count].to_vec(),
        layer,
    })
}

/// What a compressed proof's security is made of, in proving order: its segments' circuit,
/// its tree's nodes' (for several segments, a level at a time) and its last layer's. Its
/// figure is the weakest layer's, each judged in its own regime; the errors add up along
/// the levels (not across a level's nodes), so the bound on the whole is at most log2 of
/// the levels plus two below it (`docs/protocol.md` §6 items 16, 20 and 24).
#[derive(Clone, Debug)]
pub struct CompressedCircuits {
    /// The segments' circuit, at the record's segment parameters.
    pub segments: Circuit,
    /// The tree's nodes' tables, a level at a time (innermost first), each level's nodes
    /// in their order.
    pub inner: Vec<Vec<TablesCircuit>>,
    /// The last layer's tables.
    pub last: TablesCircuit,
}

impl CompressedCircuits {
    /// Each layer's analysis in `regime`, in proving order: the segments', each inner
    /// layer's, the last layer's.
    pub fn analyses(&self, regime: Regime) -> Vec<Analysis> {
        let tables = self.inner.iter().flatten().chain([&self.last]);
        std::iter::once(self.segments.analyse(regime))
            .chain(tables.map(|t| t.analyse(regime)))
            .collect()
    }

    /// The figure in `regime`: the weakest layer's analysis ([`weakest`]).
    pub fn analyse(&self, regime: Regime) -> Analysis {
        let mut analyses = self.analyses(regime);
        analyses.swap_remove(weakest(&analyses))
    }
}

/// Of a compressed proof's layers analysed in one regime (in proving order), the weakest:
/// its figure, capped by the hash, the lowest (the first in proving order on a tie).
///
/// # Panics
/// On no analysis; a compressed proof has at least its segments and its last layer.
pub fn weakest(analyses: &[Analysis]) -> usize {
    let lowest = (analyses.iter().enumerate()).min_by_key(|(_, a)| a.capped());
    lowest.expect("a layer at least").0
}

/// Checks that `record` proves its statement: the workload starts where it says, and its
/// layer proves that a proof of each of the statement's segments, made with the record's
/// segment parameters, verifies, segment `i` from the record's `i`-th state to the next
/// (over the statement's tree of nodes, [`tree_nodes`], each level's made with the record's
/// parameters for it: [`verify_record_over_tree`]), so the segments chain from the start to
/// the outcome. `policy` applies to the segments' parameters and every layer's, and its cap
/// to the record's bytes.
/// Returns the circuits whose figures the policy judged.
///
/// # Errors
/// A workload its own checks refuse, another start, a count of states other than one more
/// than the segments, or a layer that does not verify (a segment whose proof starts or ends
/// elsewhere is named: [`LayerError::Segment`]).
pub fn verify_compressed<W: Workload>(
    record: &CompressedRecord<W>,
    policy: &VerifyPolicy,
) -> Result<CompressedCircuits, CompressError> {
    let CompressedRecord {
        params,
        inner,
        workload,
        ends,
        between,
        layer,
    } = record;
    workload.validate().map_err(VerifierError::from)?;
    if ends[0] != workload.start() {
        return Err(VerifierError::Start.into());
    }
    let count = workload.segments();
    if between.len() + 1 != count {
        return Err(VerifierError::Shape {
            what: "states",
            expected: count + 1,
            got: between.len() + 2,
        }
        .into());
    }
    record.check_inner().map_err(LayerError::from)?;
    // Every segment has segment 0's shape (`ballast_stark::verify_part` judges it once).
    let segments = Circuit::of(&workload.air(0), params).map_err(VerifierError::from)?;
    // Every parameter is in its range now, so the record encodes.
    policy.check_size(record.to_bytes().len() as u64)?;
    policy
        .check_circuit(&segments)
        .map_err(CompressError::SegmentParams)?;
    let levels: Vec<TreeLevel> = (tree_nodes(count).into_iter().zip(inner))
        .map(|(nodes, &params)| TreeLevel { nodes, params })
        .collect();
    let states: Vec<&W::State> = record.states().collect();
    let mut circuits = with_segments(workload, params, &states, |children| {
        verify_record_over_tree(children, &levels, layer, policy)
    })?;
    let last = circuits.pop().expect("the last layer's circuit");
    let mut circuits = circuits.into_iter();
    let inner = (levels.iter())
        .map(|level| circuits.by_ref().take(level.nodes).collect())
        .collect();
    Ok(CompressedCircuits {
        segments,
        inner,
        last,
    })
}
