//! A statement's compressed proof: made from its whole proof, of one segment or several
//! (a node over them, or a tree of nodes over more than four), verified from the statement
//! alone, named by the same digest, read back from its bytes. Every section changed, every
//! header byte changed, another outcome, start or state between segments, another
//! statement's layer, a node over segments that do not chain, bytes cut or added, another
//! count of levels and a floor above its layer's bits are refused; a part and a Keccak-256
//! proof are refused by name. Parts compress where they are proven and join into the same
//! bytes, at any level of the tree; a part that makes no node whole, a missing part, a swapped node and a broken
//! chain are refused.

// The compressed proofs prove their own layers.
#[allow(dead_code)]
mod common;

use common::{any_security, params};

use ballast_field::Felt;
use ballast_recursion::{
    Child, ChildError, CompressError, DEFAULT_LAST_LAYER, DEFAULT_NODE_LAYER, LayerError,
    LayerRole, LinkError, compress, compress_part, join_parts, node_params, node_record,
    plan_compression, prove_node, segment_statements, verify_compressed,
};
use ballast_stark::{
    BundleError, CompressedRecord, CpuBackend, MAX_INNER_LAYERS, MerkleHash, NODE_CHILDREN,
    PhaseTimes, Proof, ProofFormatError, Regime, StarkParams, VerifierError, VerifyPolicy,
    Workload, part_range, peek, prove, prove_part, prove_statement, statement_context, tree_nodes,
};
use ballast_workloads::{KeccakChain, Poseidon2Chain};

/// The last layer, and the node under it for several segments: blowup 8, the smallest
/// their AIRs take, without grinding.
const LAST: (usize, u32) = (3, 0);

/// What the fast parameters reach.
const TARGET: u32 = 20;

/// `steps` Poseidon2 applications in segments of 2^4 rows.
fn chain(steps: u64) -> Poseidon2Chain {
    Poseidon2Chain {
        seed: [5, 6, 7, 8].map(Felt::new),
        steps,
        log_rows: 4,
    }
}

fn proven<W: Workload>(workload: &W, params: &StarkParams) -> Proof<W> {
    prove_statement(
        workload,
        params,
        &CpuBackend::new(),
        &mut PhaseTimes::default(),
        &mut |_| {},
    )
    .expect("the statement proves")
}

fn compressed(
    workload: &Poseidon2Chain,
) -> (Proof<Poseidon2Chain>, CompressedRecord<Poseidon2Chain>) {
    let proof = proven(workload, &params());
    let record = compress(&proof, LAST, LAST, TARGET, Regime::Jbr, &any_security())
        .expect("a whole proof of one segment compresses");
    (proof, record)
}

fn verified(bytes: &[u8]) -> Result<(), String> {
    let record =
        CompressedRecord::<Poseidon2Chain>::from_bytes(bytes).map_err(|e| e.to_string())?;
    verify_compressed(&record, &any_security())
        .map(drop)
        .map_err(|e| e.to_string())
}

#[test]
fn a_compressed_proof_verifies_names_its_statement_and_reads_back() {
    let (proof, record) = compressed(&chain(16));
    verify_compressed(&record, &any_security()).expect("it verifies");
    assert_eq!(Some(record.statement_digest()), proof.statement_digest());
    assert_eq!(record.layer.params.hash, MerkleHash::Keccak256);
    let bytes = record.to_bytes();
    assert_eq!(CompressedRecord::from_bytes(&bytes).as_ref(), Ok(&record));
    let prefix = peek(&bytes).unwrap();
    assert!(prefix.compressed);
    assert_eq!(prefix.length, bytes.len() as u64);
    let header = &bytes[..CompressedRecord::<Poseidon2Chain>::header_len().min(bytes.len())];
    assert!(CompressedRecord::<Poseidon2Chain>::max_len(header).unwrap() >= bytes.len() as u64);
    // A proof's decoder refuses it by its magic, and the other way round.
    assert_eq!(
        Proof::<Poseidon2Chain>::from_bytes(&bytes),
        Err(ProofFormatError::BadMagic)
    );
    assert_eq!(
        CompressedRecord::<Poseidon2Chain>::from_bytes(&proof.to_bytes()),
        Err(ProofFormatError::BadMagic)
    );
}

#[test]
fn every_changed_section_and_header_byte_is_refused() {
    // Two segments, so the node's parameters and the state between them are among the
    // sections.
    let (_, record) = compressed(&chain(32));
    assert_eq!((record.inner.len(), record.between.len()), (1, 1));
    let bytes = record.to_bytes();
    assert_eq!(verified(&bytes), Ok(()));
    let sections = record.sections();
    let names: Vec<&str> = sections.iter().map(|s| s.name).collect();
    for name in [
        "magic",
        "segment count",
        "public inputs",
        "trace rows",
        "inner layer count",
        "inner queries",
        "states",
    ] {
        assert!(names.contains(&name), "no {name} section");
    }
    assert_eq!(sections.last().unwrap().range.end, bytes.len());
    for section in sections.iter().filter(|s| !s.range.is_empty()) {
        for at in [section.range.start, section.range.end - 1] {
            let mut changed = bytes.clone();
            changed[at] ^= 1;
            assert!(
                verified(&changed).is_err(),
                "{} (table {:?}, layer {:?}) byte {at} changed",
                section.name,
                section.table,
                section.layer
            );
        }
    }
    let header_end = sections
        .iter()
        .find(|s| s.name == "segment count")
        .unwrap()
        .range
        .end;
    for at in 0..header_end {
        let mut changed = bytes.clone();
        changed[at] ^= 0x10;
        assert!(verified(&changed).is_err(), "header byte {at} changed");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(verified(&longer).is_err());
    assert!(verified(&bytes[..bytes.len() - 1]).is_err());
}

#[test]
fn another_outcome_start_or_layer_is_refused() {
    let (_, record) = compressed(&chain(16));
    let (_, other) = compressed(&chain(15));
    let refused = |r: &CompressedRecord<Poseidon2Chain>| verify_compressed(r, &any_security());
    // The other statement's outcome, or its layer, with this statement.
    let mut outcome = record.clone();
    outcome.ends[1] = other.ends[1];
    assert!(refused(&outcome).is_err());
    let mut layer = record.clone();
    layer.layer = other.layer.clone();
    assert!(refused(&layer).is_err());
    // Other segment parameters in the header, each a valid set: other AIRs, other keys.
    for change in [
        |p: &mut StarkParams| p.num_queries += 1,
        |p: &mut StarkParams| p.pow_bits += 1,
        |p: &mut StarkParams| p.log_blowup += 1,
    ] {
        let mut params = record.clone();
        change(&mut params.params);
        assert!(refused(&params).is_err(), "{:?}", params.params);
        let bytes = params.to_bytes();
        assert_eq!(CompressedRecord::from_bytes(&bytes).as_ref(), Ok(&params));
        assert!(verified(&bytes).is_err());
    }
    let mut start = record.clone();
    start.ends[0] = record.ends[1];
    assert!(matches!(
        refused(&start),
        Err(CompressError::Statement(VerifierError::Start))
    ));
    // A floor above the segments' bits, and one above the layer's alone.
    let floor = |bits| VerifyPolicy {
        min_security_bits: bits,
        ..VerifyPolicy::default()
    };
    assert!(matches!(
        verify_compressed(&record, &floor(TARGET)),
        Err(CompressError::SegmentParams(
            VerifierError::InsufficientSecurity { .. }
        ))
    ));
    let strong = StarkParams {
        num_queries: 200,
        ..params()
    };
    let proof = proven(&chain(16), &strong);
    let strong = compress(&proof, LAST, LAST, TARGET, Regime::Jbr, &any_security()).unwrap();
    let segments_bits = ballast_stark::Circuit::of(&chain(16).air(0), &proof.params)
        .unwrap()
        .analyse(Regime::Jbr)
        .capped();
    assert!(segments_bits > TARGET + 1, "{segments_bits}");
    assert!(verify_compressed(&strong, &floor(TARGET)).is_ok());
    assert!(matches!(
        verify_compressed(&strong, &floor(TARGET + 1)),
        Err(CompressError::Layer(LayerError::Tables(_)))
    ));
}

#[test]
fn a_statement_of_several_segments_compresses_with_its_states_between() {
    let (proof, record) = compressed(&chain(48));
    assert_eq!(proof.segments.len(), 3);
    assert_eq!(record.between, proof.states[1..3]);
    let circuits = verify_compressed(&record, &any_security()).expect("it verifies");
    // A node over the three segments (three tables a segment), then the last layer over
    // it (three tables).
    assert_eq!(record.inner.len(), 1);
    assert_eq!(circuits.inner.len(), 1);
    assert_eq!(circuits.inner[0].len(), 1);
    assert_eq!(circuits.inner[0][0].tables.len(), 9);
    assert_eq!(circuits.last.tables.len(), 3);
    // Other parameters for the node give other AIRs: refused.
    let mut queries = record.clone();
    queries.inner[0].num_queries += 1;
    assert!(verify_compressed(&queries, &any_security()).is_err());
    // Another count of levels than the statement's tree has (one for three segments) is
    // refused by name, built or read.
    for levels in [0, 2, MAX_INNER_LAYERS + 1] {
        let changed = CompressedRecord {
            inner: vec![record.inner[0]; levels],
            ..record.clone()
        };
        let name = format!("inner layers is {levels}, must be in 1..=1");
        let refused = verify_compressed(&changed, &any_security()).unwrap_err();
        assert!(refused.to_string().contains(&name), "{refused}");
        let bytes = changed.to_bytes();
        let read = CompressedRecord::<Poseidon2Chain>::from_bytes(&bytes).unwrap_err();
        assert!(read.to_string().contains(&name), "{read}");
    }

    assert_eq!(Some(record.statement_digest()), proof.statement_digest());
    let bytes = record.to_bytes();
    assert_eq!(CompressedRecord::from_bytes(&bytes).as_ref(), Ok(&record));
    assert_eq!(verified(&bytes), Ok(()));
    // A state between segments changed: the segments on either side of it no longer chain
    // through it, and the first of them is named.
    for k in 0..2 {
        let mut changed = record.clone();
        changed.between[k] = record.ends[0];
        let refused = verify_compressed(&changed, &any_security()).unwrap_err();
        assert!(
            matches!(&refused, CompressError::Layer(LayerError::Segment { index, source })
            if *index == k && matches!(**source, LayerError::Links(LinkError::Differs {
                what: "statement", ..
            }))),
            "{refused}"
        );
        assert!(
            refused.to_string().starts_with(&format!("segment {k}: ")),
            "{refused}"
        );
    }
    // A state too few or too many.
    for between in [vec![], vec![record.ends[0]; 3]] {
        let changed = CompressedRecord {
            between,
            ..record.clone()
        };
        assert!(matches!(
            verify_compressed(&changed, &any_security()),
            Err(CompressError::Statement(VerifierError::Shape {
                what: "states",
                ..
            }))
        ));
    }
}

#[test]
fn more_segments_than_a_node_takes_compress_in_a_tree() {
    // Five segments: a level of two nodes (over segments 0-2 and 3-4), a node over those
    // two, then the last layer over it.
    let (proof, record) = compressed(&chain(80));
    assert_eq!(proof.segments.len(), NODE_CHILDREN + 1);
    assert_eq!(tree_nodes(proof.segments.len()), [2, 1]);
    assert_eq!(record.inner.len(), 2);
    let circuits = verify_compressed(&record, &any_security()).expect("it verifies");
    // The nodes in proving order, three tables a child.
    let tables: Vec<Vec<usize>> = (circuits.inner.iter())
        .map(|level| level.iter().map(|c| c.tables.len()).collect())
        .collect();
    assert_eq!(tables, [vec![9, 6], vec![6]]);
    let bytes = record.to_bytes();
    assert_eq!(verified(&bytes), Ok(()));
    // Planned from the statement's shapes alone (every state the start), it is what the
    // proof was compressed with.
    let plan = plan_compression(&proof.workload, &params(), LAST, LAST, TARGET, Regime::Jbr)
        .expect("it plans");
    let levels: Vec<(usize, StarkParams)> =
        (plan.levels.iter()).map(|l| (l.nodes, l.params)).collect();
    assert_eq!(levels, [(2, record.inner[0]), (1, record.inner[1])]);
    assert_eq!(plan.last, record.layer.params);
    // One level, as if a node were over all five, is refused by name.
    let one = CompressedRecord {
        inner: vec![record.inner[0]],
        ..record.clone()
    };
    let refused = verify_compressed(&one, &any_security()).unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("inner layers is 1, must be in 2..=2"),
        "{refused}"
    );
    // A state between the two runs changed: segment 2, the first run's last, is named.
    let mut changed = record.clone();
    changed.between[2] = record.ends[0];
    let refused = verify_compressed(&changed, &any_security()).unwrap_err();
    assert!(refused.to_string().starts_with("segment 2: "), "{refused}");
}

#[test]
fn parts_compress_where_they_are_proven_and_join_into_the_same_bytes() {
    // Five segments in two parts, as `prove --parts 2` cuts them: segments 0-2 and 3-4,
    // each a node of the tree's first level.
    let (proof, record) = compressed(&chain(80));
    let part = |range: std::ops::Range<usize>| Proof {
        first: range.start,
        states: proof.states[range.start..=range.end].to_vec(),
        segments: proof.segments[range].to_vec(),
        ..proof.clone()
    };
    let compress_it = |part: &Proof<Poseidon2Chain>| {
        compress_part(part, LAST, LAST, TARGET, Regime::Jbr, &any_security())
    };
    let halves: Vec<_> = (0..2)
        .map(|i| compress_it(&part(part_range(5, 2, i).unwrap())).expect("it compresses"))
        .collect();
    assert_eq!(
        halves.iter().map(|h| h.range()).collect::<Vec<_>>(),
        [0..3, 3..5]
    );
    assert!(
        halves
            .iter()
            .all(|h| (h.inner.len(), h.nodes.len()) == (1, 1))
    );
    let join = |parts: Vec<(&str, _)>| {
        let named = parts.into_iter().map(|(n, p)| (n.to_string(), p)).collect();
        join_parts(named, LAST, LAST, TARGET, Regime::Jbr, &any_security())
    };
    // Given in any order, they join into the whole proof's compressed proof, byte for byte.
    let joined = join(vec![
        ("second", halves[1].clone()),
        ("first", halves[0].clone()),
    ])
    .expect("they join");
    assert_eq!(joined.to_bytes(), record.to_bytes());

    // Refused: a part that makes no node whole, a whole proof, a part missing, a part's
    // node swapped for the other's or a state within a part changed (named by the part),
    // a part beyond the statement, a broken chain between them.
    let refused = compress_it(&part(0..2)).unwrap_err();
    assert!(
        matches!(refused, CompressError::Unaligned { first: 0, end: 2, segments: 5, ref node } if *node == (0..3)),
        "{refused}"
    );
    assert!(matches!(compress_it(&proof), Err(CompressError::Whole)));
    let missing = join(vec![("first", halves[0].clone())]).unwrap_err();
    assert!(
        matches!(missing, CompressError::Bundle(BundleError::Missing { ref range, .. }) if *range == (3..5)),
        "{missing}"
    );
    let mut swapped = halves[1].clone();
    swapped.nodes = halves[0].nodes.clone();
    let refused = join(vec![("first", halves[0].clone()), ("second", swapped)]).unwrap_err();
    assert!(
        matches!(refused, CompressError::InPart { ref part, .. } if part == "second"),
        "{refused}"
    );
    let mut changed = halves[0].clone();
    changed.states[1] = proof.states[2];
    let refused = join(vec![("first", changed), ("second", halves[1].clone())]).unwrap_err();
    assert!(
        matches!(refused, CompressError::InPart { ref part, .. } if part == "first"),
        "{refused}"
    );
    let mut beyond = halves[1].clone();
    beyond.first = usize::MAX;
    let refused = join(vec![("first", halves[0].clone()), ("second", beyond)]).unwrap_err();
    assert!(
        matches!(refused, CompressError::Bundle(BundleError::Invalid { ref part, .. }) if part == "second"),
        "{refused}"
    );
    let mut unchained = halves[1].clone();
    unchained.states[0] = proof.states[0];
    let refused = join(vec![("first", halves[0].clone()), ("second", unchained)]).unwrap_err();
    assert!(
        matches!(refused, CompressError::Bundle(BundleError::Chain { .. })),
        "{refused}"
    );
}

#[test]
fn parts_at_several_levels_join_into_the_same_bytes() {
    // Seventeen segments: levels of 5 nodes (over 4, 4, 3, 3 and 3 segments), 2 (over
    // segments 0-10 and 11-16) and 1.
    let (proof, record) = compressed(&chain(17 * 16));
    assert_eq!(tree_nodes(proof.segments.len()), [5, 2, 1]);
    let compress_it = |range: std::ops::Range<usize>| {
        let part = Proof {
            first: range.start,
            states: proof.states[range.start..=range.end].to_vec(),
            segments: proof.segments[range].to_vec(),
            ..proof.clone()
        };
        compress_part(&part, LAST, LAST, TARGET, Regime::Jbr, &any_security())
            .expect("it compresses")
    };
    let join = |ranges: &[std::ops::Range<usize>]| {
        let parts = (ranges.iter().enumerate())
            .map(|(i, r)| (format!("part {i}"), compress_it(r.clone())))
            .collect::<Vec<_>>();
        let shape: Vec<(usize, usize)> = (parts.iter())
            .map(|(_, p)| (p.inner.len(), p.nodes.len()))
            .collect();
        let joined = join_parts(parts, LAST, LAST, TARGET, Regime::Jbr, &any_security());
        (shape, joined.expect("they join").to_bytes())
    };
    // Parts at two levels: a node of level 1, two of level 1, and a node of level 2 (whose
    // record's verifier builds the level-1 nodes under it from its inputs).
    let (shape, bytes) = join(&[0..4, 4..11, 11..17]);
    assert_eq!(shape, [(1, 1), (1, 2), (2, 1)]);
    assert_eq!(bytes, record.to_bytes());
}

#[test]
fn a_tree_is_planned_from_its_shapes_before_anything_is_proven() {
    let keccak = |segments: u64| {
        let mut workload = KeccakChain {
            seed: [9; 32],
            steps: 0,
            log_rows: 14,
        };
        workload.steps = segments * workload.steps_per_segment();
        workload
    };
    // A Keccak chain of 64 default segments: levels of 16, 4 and 1 nodes. A level-2
    // node's transcript AIR has 295,819 public inputs and its joint identity more, which
    // the level-3 node's verifier compiles into constraint programs: they fit, since only
    // the inputs their constraints read take an operand's index (version 19, the
    // identity's quotient values first; `docs/recursion.md`).
    let workload = keccak(64);
    assert_eq!(Workload::segments(&workload), 64);
    let params = StarkParams {
        hash: MerkleHash::Poseidon2,
        ..StarkParams::for_security(&workload.air(0), 128, Regime::Jbr).unwrap()
    };
    let (node, last) = (DEFAULT_NODE_LAYER, DEFAULT_LAST_LAYER);
    let plan = plan_compression(&workload, &params, node, last, 128, Regime::Jbr);
    let nodes: Vec<usize> = plan
        .expect("it plans")
        .levels
        .iter()
        .map(|l| l.nodes)
        .collect();
    assert_eq!(nodes, [16, 4, 1]);
    // A target the nodes cannot reach under Poseidon2's cap is refused at level 1, a last
    // layer's grinding out of range as the last layer's: before any proving.
    let sixteen = keccak(16);
    let refused = plan_compression(&sixteen, &params, node, last, 129, Regime::Jbr).unwrap_err();
    let CompressError::Layer(LayerError::AtLevel {
        level: 1,
        nodes: 4,
        children: 16,
        ..
    }) = &refused
    else {
        panic!("{refused}");
    };
    let refused = plan_compression(&sixteen, &params, node, (6, 60), 128, Regime::Jbr);
    let Err(CompressError::Layer(LayerError::AtLast(source))) = &refused else {
        panic!("{refused:?}");
    };
    assert!(source.to_string().contains("pow_bits is 60"), "{source}");
}

#[test]
fn a_node_over_segments_that_do_not_chain_is_refused_by_the_segment() {
    // Segment 0 of the statement, and a segment 1 proven honestly from another state than
    // the one segment 0 ends in: each proof verifies, the two do not chain.
    let workload = chain(32);
    let honest = proven(&workload, &params());
    let elsewhere = honest.states[2];
    let (mut table, end) = workload.trace_table(1, &elsewhere);
    let context = statement_context(&workload);
    let inputs = [
        workload.public_inputs(0, &honest.states[0], &honest.states[1]),
        workload.public_inputs(1, &elsewhere, &end),
    ];
    let statements = segment_statements(&context, &inputs);
    let air = workload.air(1);
    let moved = prove(
        &air,
        &mut table,
        &statements[1],
        &params(),
        &CpuBackend::new(),
        &mut PhaseTimes::default(),
    )
    .expect("segment 1 proves from elsewhere");
    let proofs = [&honest.segments[0], &moved];
    let children: Vec<Child> = (proofs.iter().zip(&statements).enumerate())
        .map(|(i, (proof, statement))| {
            let air = workload.air(i);
            Child::of_segment(&air, proof, statement, &params(), &any_security())
                .expect("each segment proof verifies")
        })
        .collect();
    // The node over them, and the last layer over it.
    let inner = node_params(&children, LAST, TARGET, Regime::Jbr, LayerRole::Inner).unwrap();
    let node = prove_node(&children, &inner).unwrap();
    let over = [Child::of_node(&children, &node, &inner, &any_security()).unwrap()];
    let role = LayerRole::Last(MerkleHash::Keccak256);
    let layer_params = node_params(&over, LAST, TARGET, Regime::Jbr, role).unwrap();
    let layer = prove_node(&over, &layer_params).unwrap();
    let layer = node_record(&over, &layer, &layer_params).unwrap();
    // Whichever state the record puts between them, one segment's statement is not the one
    // its proof took.
    for (between, named) in [(honest.states[1], 1), (elsewhere, 0)] {
        let record = CompressedRecord {
            params: params(),
            inner: vec![inner],
            workload,
            ends: [honest.states[0], end],
            between: vec![between],
            layer: layer.clone(),
        };
        let refused = verify_compressed(&record, &any_security()).unwrap_err();
        assert!(
            matches!(&refused, CompressError::Layer(LayerError::Segment { index, .. }) if *index == named),
            "{refused}"
        );
    }
}

#[test]
fn parts_and_keccak_proofs_are_refused_by_name() {
    let compressing = |proof: &Proof<Poseidon2Chain>| {
        compress(proof, LAST, LAST, TARGET, Regime::Jbr, &any_security()).map(|_| ())
    };
    let two = chain(32);
    let part = prove_part(
        &two,
        &params(),
        1..2,
        &CpuBackend::new(),
        &mut PhaseTimes::default(),
        &mut |_| {},
    )
    .unwrap();
    assert!(matches!(
        compressing(&part),
        Err(CompressError::Part {
            first: 1,
            end: 2,
            segments: 2
        })
    ));
    let keccak = StarkParams {
        hash: MerkleHash::Keccak256,
        ..params()
    };
    let err = compressing(&proven(&chain(16), &keccak)).unwrap_err();
    assert!(matches!(
        err,
        CompressError::Layer(LayerError::Child(ChildError::NotPoseidon2))
    ));
    assert!(err.to_string().contains("--hash poseidon2"), "{err}");
}
