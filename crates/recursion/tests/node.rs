//! A node: one layer's proof over several segment proofs of a statement, verified from each
//! segment's AIR, statement and parameters alone. Segments given in another order, one
//! fewer, another's statement, or a child's inputs changed are refused, named by the
//! segment; a layer over the node verifies from the segments and the node's parameters
//! alone, reads back from its record, and refuses segments that do not chain, named by the
//! segment.

// The layers prove their AIRs themselves, so this file leaves `common::layer_proves` unused.
#[allow(dead_code)]
mod common;

use common::{any_security, layer_params, params, segment_children};

use ballast_field::Felt;
use ballast_recursion::{
    Child, LayerError, LayerProof, LinkError, Segment, node_record, prove_node, segment_statements,
    verify_layer, verify_layer_over_node, verify_node, verify_node_record, verify_record_over_node,
};
use ballast_stark::{Proof, SegmentStatement, StarkParams, TablesCircuit, Workload};
use ballast_workloads::Poseidon2Chain;

use std::sync::LazyLock;

/// Three segments of 2^4 rows.
fn chain() -> Poseidon2Chain {
    Poseidon2Chain {
        seed: [9, 10, 11, 12].map(Felt::new),
        steps: 48,
        log_rows: 4,
    }
}

/// A statement's segments, their statements and their children, a node over them and a
/// layer over that node.
struct Tree {
    workload: Poseidon2Chain,
    proof: Proof<Poseidon2Chain>,
    context: Vec<u8>,
    public_inputs: Vec<Vec<Felt>>,
    node: LayerProof,
    over: LayerProof,
}

static TREE: LazyLock<Tree> = LazyLock::new(Tree::new);

impl Tree {
    fn new() -> Self {
        let workload = chain();
        let (proof, context, public_inputs, children) = segment_children(&workload);
        let node = prove_node(&children, &layer_params()).expect("the node proves");
        let over = Child::of_node(&children, &node, &layer_params(), &any_security())
            .expect("a layer over the node takes it");
        let over = over
            .prove(&layer_params())
            .expect("the layer over the node proves");
        Self {
            workload,
            proof,
            context,
            public_inputs,
            node,
            over,
        }
    }

    /// Runs `check` on the segments of `statements` (each segment's AIR and the test
    /// parameters).
    fn with<T>(
        &self,
        statements: &[SegmentStatement<'_>],
        check: impl FnOnce(&[Segment<'_, <Poseidon2Chain as Workload>::Air>]) -> T,
    ) -> T {
        let airs: Vec<_> = (0..statements.len())
            .map(|i| self.workload.air(i))
            .collect();
        let params = params();
        let segments: Vec<_> = (airs.iter().zip(statements))
            .map(|(air, statement)| Segment::new(air, statement, &params))
            .collect();
        check(&segments)
    }

    fn verify_node(
        &self,
        statements: &[SegmentStatement<'_>],
        node: &LayerProof,
    ) -> Result<TablesCircuit, LayerError> {
        self.with(statements, |segments| {
            verify_node(segments, node, &layer_params(), &any_security())
        })
    }

    fn verify_over(
        &self,
        statements: &[SegmentStatement<'_>],
        over: &LayerProof,
    ) -> Result<TablesCircuit, LayerError> {
        self.with(statements, |segments| {
            let inner: [StarkParams; 1] = [layer_params()];
            verify_layer_over_node(segments, &inner, over, &layer_params(), &any_security())
        })
    }
}

/// `result` is a refusal of segment `index`.
fn names_segment<T: std::fmt::Debug>(result: Result<T, LayerError>, index: usize) -> bool {
    matches!(&result, Err(LayerError::Segment { index: i, .. }) if *i == index)
}

#[test]
fn a_node_verifies_from_its_segments_alone_and_reads_back() {
    let t = &*TREE;
    assert_eq!(t.proof.segments.len(), 3);
    let statements = segment_statements(&t.context, &t.public_inputs);
    let circuit = t
        .verify_node(&statements, &t.node)
        .expect("the node verifies");
    assert_eq!(circuit.tables.len(), 9);
    // Its record holds the three transcript tables' inputs alone, and reads back.
    let children: Vec<Child> = (t.proof.segments.iter().zip(&statements).enumerate())
        .map(|(i, (segment, statement))| {
            let air = t.workload.air(i);
            Child::of_segment(&air, segment, statement, &params(), &any_security()).unwrap()
        })
        .collect();
    let record = node_record(&children, &t.node, &layer_params()).unwrap();
    let recorded: usize = (record.tables.iter())
        .map(|table| table.public_inputs.len())
        .sum();
    assert_eq!(recorded, t.node.inputs.len());
    let read = t.with(&statements, |segments| {
        verify_node_record(segments, &record, &any_security())
    });
    assert!(read.is_ok(), "{read:?}");
    // Two children's recorded inputs swapped: each is read as the other's, and refused.
    let mut swapped = record.clone();
    let recorded: Vec<usize> = (swapped.tables.iter().enumerate())
        .filter(|(_, table)| !table.public_inputs.is_empty())
        .map(|(k, _)| k)
        .collect();
    assert_eq!(recorded.len(), 3);
    let (a, b) = (recorded[0], recorded[1]);
    let inputs = std::mem::take(&mut swapped.tables[a].public_inputs);
    swapped.tables[a].public_inputs =
        std::mem::replace(&mut swapped.tables[b].public_inputs, inputs);
    let refused = t.with(&statements, |segments| {
        verify_node_record(segments, &swapped, &any_security())
    });
    assert!(
        matches!(refused, Err(LayerError::Segment { .. })),
        "{refused:?}"
    );
}

#[test]
fn segments_out_of_order_missing_or_of_another_statement_are_refused_by_the_segment() {
    let t = &*TREE;
    let statements = segment_statements(&t.context, &t.public_inputs);
    // Two segments' statements swapped: the first child given another's is named by the
    // segment its statement names.
    let mut swapped = statements.clone();
    swapped.swap(1, 2);
    assert!(names_segment(t.verify_node(&swapped, &t.node), 2));
    // One segment fewer: the inputs are another length than two segments' take.
    assert!(matches!(
        t.verify_node(&statements[..2], &t.node),
        Err(LayerError::Links(LinkError::Length { .. }))
    ));
    // A segment's statement of another end state.
    let mut public_inputs = t.public_inputs.clone();
    *public_inputs[2].last_mut().unwrap() += Felt::ONE;
    let other = segment_statements(&t.context, &public_inputs);
    let refused = t.verify_node(&other, &t.node);
    assert!(names_segment(refused, 2));
    // No segment; one segment alone is a layer's, not this node's.
    assert!(matches!(
        t.verify_node(&[], &t.node),
        Err(LayerError::NoChildren)
    ));
    let one = verify_layer(
        &t.workload.air(0),
        &statements[0],
        &params(),
        &t.node,
        &layer_params(),
        &any_security(),
    );
    assert!(matches!(
        one,
        Err(LayerError::Links(LinkError::Length { .. }))
    ));
    // A child's input changed in the proof: its links, or the proof, refuse it.
    let mut changed = t.node.clone();
    let last = changed.inputs.len() - 1;
    changed.inputs[last] += Felt::ONE;
    assert!(t.verify_node(&statements, &changed).is_err());
}

#[test]
fn a_layer_over_a_node_verifies_from_the_segments_alone_and_reads_back() {
    let t = &*TREE;
    let statements = segment_statements(&t.context, &t.public_inputs);
    let verified = t.verify_over(&statements, &t.over);
    assert!(verified.is_ok(), "{verified:?}");
    // Three tables, whatever the node's children.
    assert_eq!(t.over.tables.ood.len(), 3);
    // Segments that do not chain: segment 1 given another start than segment 0's end.
    let mut public_inputs = t.public_inputs.clone();
    public_inputs[1][0] += Felt::ONE;
    let unchained = segment_statements(&t.context, &public_inputs);
    assert!(names_segment(t.verify_over(&unchained, &t.over), 1));
    // Its record reads back with the segments and the node's parameters.
    let children: Vec<Child> = (t.proof.segments.iter().zip(&statements).enumerate())
        .map(|(i, (segment, statement))| {
            let air = t.workload.air(i);
            Child::of_segment(&air, segment, statement, &params(), &any_security()).unwrap()
        })
        .collect();
    let over = Child::of_node(&children, &t.node, &layer_params(), &any_security()).unwrap();
    let record = over.layer_record(&t.over, &layer_params()).unwrap();
    let read = t.with(&statements, |segments| {
        verify_record_over_node(segments, &[layer_params()], &record, &any_security())
    });
    assert!(read.is_ok(), "{read:?}");
    // The node's proof is not the layer over it.
    assert!(t.verify_over(&statements, &t.node).is_err());
}
