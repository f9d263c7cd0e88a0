//! A statement's compressed proof ([`CompressedRecord`]): the last layer's proof that the
//! statement's segment proofs verify, with the statement it is about and the states that
//! chain its segments. [`compress`] makes it from a whole proof made with Poseidon2 trees:
//! for one segment, the last layer over it; for several, a tree of nodes over them
//! ([`prove_node`], at most four children a node: [`tree_nodes`]) and the last layer over
//! its top node. [`verify_compressed`] checks it from the statement alone, the segment
//! proofs gone. A part compresses where it is proven ([`compress_part`]: the nodes its
//! segments make whole), and the parts' compressed proofs join into the statement's
//! ([`join_parts`]), byte for byte [`compress`]'s of the whole.
//!
//! The last layer's record holds the top node's transcript inputs, which hold its
//! children's, down to each segment's, so it grows with the segments until the links move
//! inside the AIRs (`docs/recursion.md`, "What remains").

use std::ops::Range;

use ballast_field::Felt;
use ballast_stark::{
    Analysis, BundleError, Circuit, CompressedRecord, MerkleHash, PartEnds, Proof, Regime,
    StarkParams, TablesCircuit, TablesRecord, VerifierError, VerifyPolicy, Workload, check_cover,
    check_range, statement_context, tree_nodes,
};

use crate::{
    Child, ChildError, LayerError, Segment, TreeLevel, TreePlan, node_record, part_statements,
    prove_node, verify_record_over_tree,
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
    /// A whole proof given where a part's is taken.
    #[error("it is a whole proof, not a part: compress it as it is")]
    Whole,
    /// A part whose segments make no whole node of its statement's tree.
    #[error(
        "segments {first}..{end} of {segments} make no node of the statement's tree whole (a node of its first level is over segments {}..{}): bundle the part with its neighbours, then compress",
        .node.start, .node.end
    )]
    Unaligned {
        /// Its first segment.
        first: usize,
        /// The segment after its last.
        end: usize,
        /// The statement's segments.
        segments: usize,
        /// The segments of a node of the first level that it cuts.
        node: Range<usize>,
    },
    /// Parts that do not join: another statement, a gap, an overlap or a broken chain.
    #[error(transparent)]
    Bundle(#[from] BundleError),
    /// A compressed part whose levels or nodes are not those of its statement's plan.
    #[error("its nodes are not those of the statement's tree: {0}")]
    OtherTree(String),
    /// A compressed part whose nodes are refused, named.
    #[error("{part}: {source}")]
    InPart {
        /// Its name.
        part: String,
        /// What its nodes are refused as.
        source: Box<CompressError>,
    },
}

/// `run` on segments `first..` of `workload` made with `params`, segment `first + i` from
/// `states[i]` to `states[i + 1]` (segments of equal AIRs take the first's instance: a
/// verifier keys each AIR once).
fn with_segments<W: Workload, T>(
    workload: &W,
    params: &StarkParams,
    first: usize,
    states: &[&W::State],
    run: impl FnOnce(&[Segment<'_, W::Air>]) -> T,
) -> T {
    let count = states.len().saturating_sub(1);
    let airs: Vec<W::Air> = (first..first + count).map(|i| workload.air(i)).collect();
    let context = statement_context(workload);
    let public_inputs: Vec<Vec<Felt>> = (states.windows(2).enumerate())
        .map(|(i, ends)| workload.public_inputs(first + i, ends[0], ends[1]))
        .collect();
    let statements = part_statements(&context, first, workload.segments(), &public_inputs);
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
    with_segments(workload, params, 0, &states, |segments| {
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
    check_proof(proof)?;
    let states = &proof.states;
    let (inner, layer) = with_segments(
        &proof.workload,
        &proof.params,
        0,
        &states.iter().collect::<Vec<_>>(),
        |segments| -> Result<_, LayerError> {
            // The segment proofs verified, then the tree planned before any of it is proven.
            let runs = segment_runs(proof, segments, policy)?;
            let plan = TreePlan::of(segments, node, last, target, regime)?;
            let ranges = node_ranges(count, &plan.levels);
            let top = up_to(runs, &plan.levels, &ranges, policy)?;
            let children: Vec<Child> = top.into_iter().map(|run| run.child).collect();
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

/// Refuses `proof` (a whole one or a part) unless it is made with Poseidon2 trees, of a
/// workload its own checks accept, over segments of its statement, with a state more than
/// its segments and, from segment 0, the workload's start.
fn check_proof<W: Workload>(proof: &Proof<W>) -> Result<(), CompressError> {
    if proof.params.hash != MerkleHash::Poseidon2 {
        return Err(LayerError::from(ChildError::NotPoseidon2).into());
    }
    proof.workload.validate().map_err(VerifierError::from)?;
    let (segments, states) = (proof.segments.len(), proof.states.len());
    let count = proof.workload.segments();
    check_range("first segment", proof.first, 0, count - 1)
        .and_then(|()| check_range("segment count", segments, 1, count - proof.first))
        .map_err(VerifierError::from)?;
    if states != segments + 1 {
        let (what, expected, got) = ("states", segments + 1, states);
        return Err(VerifierError::Shape {
            what,
            expected,
            got,
        }
        .into());
    }
    if proof.first == 0 && proof.states[0] != proof.workload.start() {
        return Err(VerifierError::Start.into());
    }
    Ok(())
}

/// A part's compressed proof: the nodes of its statement's tree that its segments make
/// whole, at the highest level they make whole ([`compress_part`]), for the parts'
/// compressed proofs to join into the statement's ([`join_parts`]).
#[derive(Clone, Debug)]
pub struct CompressedPart<W: Workload> {
    /// The parameters of its segment proofs.
    pub params: StarkParams,
    /// The computation.
    pub workload: W,
    /// Its first segment's index in the statement.
    pub first: usize,
    /// The state its first segment starts in, then the state each of its segments ends in.
    pub states: Vec<W::State>,
    /// The parameters of each level of the tree up to its nodes', innermost first: its
    /// nodes are of the last.
    pub inner: Vec<StarkParams>,
    /// Its nodes' records ([`node_record`]), in order.
    pub nodes: Vec<TablesRecord>,
}

impl<W: Workload> CompressedPart<W> {
    /// The segments it covers.
    pub fn range(&self) -> Range<usize> {
        let segments = self.states.len().saturating_sub(1);
        self.first..self.first.saturating_add(segments)
    }
}

/// Compresses `part`, a part of a statement's proof made with Poseidon2 trees that its
/// verifier accepts under `policy`, as far as its segments reach in the statement's tree
/// (planned as [`compress`] plans it, with the same layers): the nodes of the highest
/// level whose nodes it makes whole, each proven over those below as [`compress`] proves
/// it, so that [`join_parts`] of a statement's compressed parts gives, byte for byte, what
/// [`compress`] gives of the whole.
///
/// # Errors
/// A whole proof, a part whose segments make no node whole ([`CompressError::Unaligned`]),
/// or as [`compress`].
pub fn compress_part<W: Workload>(
    part: &Proof<W>,
    node: (usize, u32),
    last: (usize, u32),
    target: u32,
    regime: Regime,
    policy: &VerifyPolicy,
) -> Result<CompressedPart<W>, CompressError> {
    if part.is_whole() {
        return Err(CompressError::Whole);
    }
    check_proof(part)?;
    let count = part.workload.segments();
    let plan = plan_compression(&part.workload, &part.params, node, last, target, regime)?;
    let ranges = node_ranges(count, &plan.levels);
    let range = part.range();
    let level = part_level(&ranges, &range);
    if level == 0 {
        // A node of the first level that one of its ends cuts.
        let cut = |r: &&Range<usize>| {
            (r.start < range.start && range.start < r.end)
                || (r.start < range.end && range.end < r.end)
        };
        let node = ranges.get(1).and_then(|nodes| nodes.iter().find(cut));
        return Err(CompressError::Unaligned {
            first: range.start,
            end: range.end,
            segments: count,
            node: node.cloned().unwrap_or(0..count),
        });
    }
    let levels = &plan.levels[..level];
    let states: Vec<&W::State> = part.states.iter().collect();
    let nodes = with_segments(
        &part.workload,
        &part.params,
        part.first,
        &states,
        |segments| {
            let runs = segment_runs(part, segments, policy)?;
            let (below, [top]) = levels.split_at(level - 1) else {
                unreachable!("a level at least");
            };
            let runs = up_to(runs, below, &ranges, policy)?;
            let top = up(runs, level, &ranges[level], &top.params, policy, true)?;
            Ok::<_, LayerError>(top.into_iter().filter_map(|(_, record)| record).collect())
        },
    )?;
    Ok(CompressedPart {
        params: part.params,
        workload: part.workload.clone(),
        first: part.first,
        states: part.states.clone(),
        inner: levels.iter().map(|l| l.params).collect(),
        nodes,
    })
}

/// Joins `parts` (each with the name errors call it by), the compressed parts of a
/// statement's proof ([`compress_part`]), into its compressed proof: each part's nodes
/// verified from its segments' statements under `policy` ([`Child::of_tree_record`]),
/// the levels above them proven as [`compress`] proves them, then the last layer; byte for
/// byte what [`compress`] gives of the whole proof.
///
/// # Errors
/// No part, parts of other statements or parameters, a segment no part covers or two do,
/// a part that does not start where the one before it ends or, from segment 0, other than
/// at the workload's start; a part's levels other than the statement's plan, or nodes it
/// does not make whole; a node its verifier refuses (named by its part); or as
/// [`compress`].
pub fn join_parts<W: Workload>(
    parts: Vec<(String, CompressedPart<W>)>,
    node: (usize, u32),
    last: (usize, u32),
    target: u32,
    regime: Regime,
    policy: &VerifyPolicy,
) -> Result<CompressedRecord<W>, CompressError> {
    let parts = chained(parts)?;
    let (_, first) = &parts[0];
    let (params, workload) = (first.params, first.workload.clone());
    let count = workload.segments();
    let plan = plan_compression(&workload, &params, node, last, target, regime)?;
    let ranges = node_ranges(count, &plan.levels);
    let mut states: Vec<&W::State> = vec![&first.states[0]];
    for (_, part) in &parts {
        states.extend(&part.states[1..]);
    }
    let layer = with_segments(&workload, &params, 0, &states, |segments| {
        let mut runs = Vec::new();
        for (name, part) in &parts {
            let named = |source: CompressError| CompressError::InPart {
                part: name.clone(),
                source: Box::new(source),
            };
            runs.extend(part_runs(part, segments, &plan, &ranges, policy).map_err(named)?);
        }
        let top = up_to(runs, &plan.levels, &ranges, policy)?;
        let children: Vec<Child> = top.into_iter().map(|run| run.child).collect();
        let layer = prove_node(&children, &plan.last)?;
        Ok::<_, CompressError>(node_record(&children, &layer, &plan.last)?)
    })?;
    Ok(CompressedRecord {
        params,
        inner: plan.levels.iter().map(|l| l.params).collect(),
        ends: [(*states[0]).clone(), (*states[count]).clone()],
        between: states[1..count].iter().map(|&s| s.clone()).collect(),
        workload,
        layer,
    })
}

/// `parts` in order, once they are of one statement and parameters, cover its segments
/// once each, and each starts where the one before it ends (the first at the workload's
/// start).
fn chained<W: Workload>(
    mut parts: Vec<(String, CompressedPart<W>)>,
) -> Result<Vec<(String, CompressedPart<W>)>, CompressError> {
    let Some((reference, first)) = parts.first() else {
        return Err(BundleError::Empty.into());
    };
    let foreign = |p: &CompressedPart<W>| p.params != first.params || p.workload != first.workload;
    if let Some((name, part)) = parts.iter().find(|(_, p)| foreign(p)) {
        let what = if part.workload == first.workload {
            "parameter set"
        } else {
            "statement"
        };
        return Err(BundleError::Foreign {
            part: name.clone(),
            reference: reference.clone(),
            what,
        }
        .into());
    }
    first.workload.validate().map_err(VerifierError::from)?;
    let count = first.workload.segments();
    // Shapes first, so that a malformed part is named as itself, not as a neighbour's gap.
    for (name, part) in &parts {
        let segments = part.states.len().saturating_sub(1);
        check_range("first segment", part.first, 0, count - 1)
            .and_then(|()| check_range("segment count", segments, 1, count - part.first))
            .map_err(|e| BundleError::Invalid {
                part: name.clone(),
                reason: e.into(),
            })?;
    }
    parts.sort_by_key(|(_, p)| (p.first, p.states.len()));
    let ends: Vec<PartEnds<'_, W::State>> = (parts.iter())
        .map(|(name, part)| PartEnds::of(name, part.first, &part.states))
        .collect();
    check_cover(&ends, count)?;
    let (name, first) = &parts[0];
    if first.states[0] != first.workload.start() {
        let (part, reason) = (name.clone(), VerifierError::Start);
        return Err(BundleError::Invalid { part, reason }.into());
    }
    Ok(parts)
}

/// The runs of `part`'s nodes, each verified from its segments (of `segments`, the
/// statement's) under `policy` and taken as a child: they must be the nodes of the level
/// of its levels' count that it makes whole (of the tree `ranges` of `plan`), made with
/// `plan`'s parameters.
fn part_runs<W: Workload>(
    part: &CompressedPart<W>,
    segments: &[Segment<'_, W::Air>],
    plan: &TreePlan,
    ranges: &[Vec<Range<usize>>],
    policy: &VerifyPolicy,
) -> Result<Vec<Run>, CompressError> {
    let (level, range) = (part.inner.len(), part.range());
    let reached = part_level(ranges, &range);
    if level == 0 || level > reached {
        return Err(CompressError::OtherTree(format!(
            "{level} levels, where its segments make nodes of at most {reached} whole"
        )));
    }
    if let Some(j) = (0..level).find(|&j| part.inner[j] != plan.levels[j].params) {
        return Err(CompressError::OtherTree(format!(
            "level {} made with other parameters than the plan's",
            j + 1
        )));
    }
    let nodes: Vec<&Range<usize>> = (ranges[level].iter())
        .filter(|r| range.start <= r.start && r.end <= range.end)
        .collect();
    if nodes.len() != part.nodes.len() {
        return Err(CompressError::OtherTree(format!(
            "{} nodes, where its segments make {} of level {level}",
            part.nodes.len(),
            nodes.len()
        )));
    }
    (nodes.into_iter().zip(&part.nodes))
        .map(|(node, record)| {
            // The levels below it, each's nodes within it.
            let below: Vec<TreeLevel> = (1..level)
                .map(|j| TreeLevel {
                    nodes: (ranges[j].iter())
                        .filter(|r| node.start <= r.start && r.end <= node.end)
                        .count(),
                    params: plan.levels[j - 1].params,
                })
                .collect();
            let params = &plan.levels[level - 1].params;
            let child =
                Child::of_tree_record(&segments[node.clone()], &below, record, params, policy)?;
            Ok(Run {
                level,
                range: node.clone(),
                child,
            })
        })
        .collect()
}

/// A node of a statement's tree over segments `range` at `level` (0: a segment), as the
/// node over it takes it.
struct Run {
    level: usize,
    range: Range<usize>,
    child: Child,
}

/// The runs of `proof`'s segments (`segments`, theirs), their proofs verified under
/// `policy`.
fn segment_runs<W: Workload>(
    proof: &Proof<W>,
    segments: &[Segment<'_, W::Air>],
    policy: &VerifyPolicy,
) -> Result<Vec<Run>, LayerError> {
    (proof.segments.iter().zip(segments).zip(proof.range()))
        .map(|((segment, s), i)| {
            Ok(Run {
                level: 0,
                range: i..i + 1,
                child: Child::of_segment(s.air, segment, s.statement, s.params, policy)?,
            })
        })
        .collect()
}

/// The segments each node of a tree over `count` segments with `levels` is over, a level
/// at a time: level 0's, the segments themselves, then each level's nodes', each over the
/// next of its near-equal runs of the level below ([`TreeLevel::runs`]).
fn node_ranges(count: usize, levels: &[TreeLevel]) -> Vec<Vec<Range<usize>>> {
    let mut all: Vec<Vec<Range<usize>>> = vec![(0..count).map(|i| i..i + 1).collect()];
    for level in levels {
        let below = all.last().expect("the segments");
        let mut first = 0;
        let nodes = (TreeLevel::runs(level.nodes, below.len()))
            .map(|n| {
                let range = below[first].start..below[first + n - 1].end;
                first += n;
                range
            })
            .collect();
        all.push(nodes);
    }
    all
}

/// The highest level of the tree of `ranges` ([`node_ranges`]) whose nodes `part`'s
/// segments make whole: the highest whose nodes start at its first segment and at the one
/// after its last (0, the segments', for a part that makes no node whole).
fn part_level(ranges: &[Vec<Range<usize>>], part: &Range<usize>) -> usize {
    let bounds =
        |level: &[Range<usize>], at: usize| level.iter().any(|r| r.start == at || r.end == at);
    (0..ranges.len())
        .rev()
        .find(|&j| bounds(&ranges[j], part.start) && bounds(&ranges[j], part.end))
        .unwrap_or(0)
}

/// The runs of the tree's levels `levels` (the first, level 1, up; with `ranges` their
/// nodes' segments) over `runs`, those of the levels below (in order, contiguous), a level
/// at a time: a run of a level or above kept, each other node of it proven over the runs
/// it is over ([`prove_node`]) and taken as a child ([`Child::of_node`]), its proof
/// verified under `policy`.
fn up_to(
    runs: Vec<Run>,
    levels: &[TreeLevel],
    ranges: &[Vec<Range<usize>>],
    policy: &VerifyPolicy,
) -> Result<Vec<Run>, LayerError> {
    let mut runs = runs;
    for (j, level) in levels.iter().enumerate() {
        runs = (up(runs, j + 1, &ranges[j + 1], &level.params, policy, false)?.into_iter())
            .map(|(run, _)| run)
            .collect();
    }
    Ok(runs)
}

/// The runs of `level` (its nodes over `ranges`, made with `params`) over `runs`: a run
/// of that level or above kept, each other node proven over the runs it is over, and with
/// `recorded` its record ([`node_record`]). Nodes the runs do not reach (another part's)
/// are left out.
fn up(
    runs: Vec<Run>,
    level: usize,
    ranges: &[Range<usize>],
    params: &StarkParams,
    policy: &VerifyPolicy,
    recorded: bool,
) -> Result<Vec<(Run, Option<TablesRecord>)>, LayerError> {
    let mut out = Vec::new();
    let mut runs = runs.into_iter().peekable();
    for range in ranges {
        let Some(next) = runs.peek() else { break };
        if next.range.start != range.start {
            // Within a kept run of a higher level, or before the runs.
            continue;
        }
        if next.level >= level {
            out.push((runs.next().expect("peeked"), None));
            continue;
        }
        let (mut children, mut end) = (Vec::new(), range.start);
        while let Some(run) = runs.next_if(|run| run.range.end <= range.end) {
            end = run.range.end;
            children.push(run.child);
        }
        debug_assert_eq!(end, range.end, "runs that tile the node");
        let layer = prove_node(&children, params)?;
        let record = recorded
            .then(|| node_record(&children, &layer, params))
            .transpose()?;
        let child = Child::of_node(&children, &layer, params, policy)?;
        let run = Run {
            level,
            range: range.clone(),
            child,
        };
        out.push((run, record));
    }
    debug_assert!(runs.next().is_none(), "every run in a node");
    Ok(out)
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
    let mut circuits = with_segments(workload, params, 0, &states, |children| {
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
