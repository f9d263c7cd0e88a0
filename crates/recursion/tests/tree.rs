//! A tree of nodes: a node over nodes, each over a contiguous run of a statement's
//! segments, verified from the segments and each node's parameters alone, as a layer over
//! it is. Runs cut another way, children in another order, segments that do not chain and
//! levels of more nodes than children are refused.

// The layers prove their AIRs themselves, so this file leaves `common::layer_proves` unused.
#[allow(dead_code)]
mod common;

use common::{any_security, layer_params, params, segment_children};

use ballast_field::Felt;
use ballast_recursion::{
    Child, LayerError, LayerProof, Segment, TreeLevel, node_record, prove_node, segment_statements,
    verify_record_over_tree, verify_tree,
};
use ballast_stark::{SegmentStatement, TablesCircuit, TablesRecord, Workload};
use ballast_workloads::Poseidon2Chain;

use std::sync::LazyLock;

/// Three segments of 2^4 rows.
fn chain() -> Poseidon2Chain {
    Poseidon2Chain {
        seed: [13, 14, 15, 16].map(Felt::new),
        steps: 48,
        log_rows: 4,
    }
}

/// A level of `nodes` nodes at the layer parameters.
fn level(nodes: usize) -> TreeLevel {
    TreeLevel {
        nodes,
        params: layer_params(),
    }
}

/// A statement's three segments; nodes over segments 0–1 and over segment 2 (the runs
/// of three cut in two); the node over those two, its record; and the node over those two
/// in the other order.
struct Fixture {
    workload: Poseidon2Chain,
    context: Vec<u8>,
    public_inputs: Vec<Vec<Felt>>,
    top: LayerProof,
    record: TablesRecord,
    swapped: LayerProof,
}

static FIXTURE: LazyLock<Fixture> = LazyLock::new(Fixture::new);

impl Fixture {
    fn new() -> Self {
        let workload = chain();
        let (_, context, public_inputs, segments) = segment_children(&workload);
        let nodes: Vec<Child> = [&segments[..2], &segments[2..]]
            .into_iter()
            .map(|run| {
                let node = prove_node(run, &layer_params()).expect("a node proves");
                Child::of_node(run, &node, &layer_params(), &any_security())
                    .expect("a node over it takes it")
            })
            .collect();
        let top = prove_node(&nodes, &layer_params()).expect("the node over nodes proves");
        let record = node_record(&nodes, &top, &layer_params()).unwrap();
        let other: Vec<Child> = nodes.into_iter().rev().collect();
        let swapped = prove_node(&other, &layer_params()).expect("the other order proves");
        Self {
            workload,
            context,
            public_inputs,
            top,
            record,
            swapped,
        }
    }

    /// `verify_tree` of `top` over the segments of `statements` with `levels`.
    fn verify(
        &self,
        statements: &[SegmentStatement<'_>],
        levels: &[TreeLevel],
        top: &LayerProof,
    ) -> Result<TablesCircuit, LayerError> {
        let airs: Vec<_> = (0..statements.len())
            .map(|i| self.workload.air(i))
            .collect();
        let params = params();
        let segments: Vec<_> = (airs.iter().zip(statements))
            .map(|(air, statement)| Segment::new(air, statement, &params))
            .collect();
        verify_tree(&segments, levels, top, &layer_params(), &any_security())
    }
}

/// `result` is a refusal of segment `index`.
fn names_segment<T: std::fmt::Debug>(result: &Result<T, LayerError>, index: usize) -> bool {
    matches!(result, Err(LayerError::Segment { index: i, .. }) if *i == index)
}

#[test]
fn a_node_over_nodes_verifies_from_the_segments_alone_and_reads_back() {
    let f = &*FIXTURE;
    let statements = segment_statements(&f.context, &f.public_inputs);
    let circuit = f.verify(&statements, &[level(2)], &f.top);
    // Three tables a child, whatever the child's children.
    assert_eq!(circuit.expect("the tree verifies").tables.len(), 6);
    // Its record holds the two transcript tables' inputs alone, and reads back with every
    // layer's circuit: the two nodes' below, then its own.
    let recorded: usize = (f.record.tables.iter())
        .map(|table| table.public_inputs.len())
        .sum();
    assert_eq!(recorded, f.top.inputs.len());
    let airs: Vec<_> = (0..3).map(|i| f.workload.air(i)).collect();
    let params = params();
    let segments: Vec<_> = (airs.iter().zip(&statements))
        .map(|(air, statement)| Segment::new(air, statement, &params))
        .collect();
    let read = verify_record_over_tree(&segments, &[level(2)], &f.record, &any_security());
    let circuits = read.expect("its record reads back");
    assert_eq!(circuits.len(), 3);
    assert_eq!(
        circuits[0].tables.len(),
        6,
        "the node over segments 0 and 1"
    );
    assert_eq!(circuits[1].tables.len(), 3, "the node over segment 2");
    // A record read as a tree of another shape is refused.
    let other = verify_record_over_tree(&segments, &[level(3)], &f.record, &any_security());
    assert!(other.is_err());
}

#[test]
fn runs_cut_another_way_children_swapped_or_segments_unchained_are_refused() {
    let f = &*FIXTURE;
    let statements = segment_statements(&f.context, &f.public_inputs);
    // One node over all three segments, three nodes of one, or a level over them.
    for levels in [vec![level(1)], vec![level(3)], vec![level(2), level(1)]] {
        assert!(
            f.verify(&statements, &levels, &f.top).is_err(),
            "{levels:?}"
        );
    }
    // More nodes than segments, or a level of none.
    for nodes in [4, 0] {
        let refused = f.verify(&statements, &[level(nodes)], &f.top);
        assert!(
            matches!(refused, Err(LayerError::Level { children: 3, .. })),
            "{refused:?}"
        );
    }
    // The two nodes in the other order: the first child's inputs are segment 2's node's.
    let swapped = f.verify(&statements, &[level(2)], &f.swapped);
    assert!(swapped.is_err());
    // Segment 2 given another start than segment 1's end: it is named.
    let mut public_inputs = f.public_inputs.clone();
    public_inputs[2][0] += Felt::ONE;
    let unchained = segment_statements(&f.context, &public_inputs);
    let refused = f.verify(&unchained, &[level(2)], &f.top);
    assert!(names_segment(&refused, 2), "{refused:?}");
}
