//! A statement's compressed proof: made from its whole proof, verified from the statement
//! alone, named by the same digest, read back from its bytes. Every section changed, every
//! header byte changed, another outcome or start, another statement's layer, bytes cut or
//! added, and a floor above its layer's bits are refused; a part, a statement of several
//! segments and a Keccak-256 proof are refused by name.

// The compressed proofs prove their own layers.
#[allow(dead_code)]
mod common;

use common::{any_security, params};

use ballast_field::Felt;
use ballast_recursion::{ChildError, CompressError, LayerError, compress, verify_compressed};
use ballast_stark::{
    CompressedRecord, CpuBackend, MerkleHash, PhaseTimes, Proof, ProofFormatError, Regime,
    StarkParams, VerifierError, VerifyPolicy, Workload, peek, prove_part, prove_statement,
};
use ballast_workloads::Poseidon2Chain;

/// The last layer: blowup 8, the smallest its AIRs take, without grinding.
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
    let record = compress(&proof, LAST, TARGET, Regime::Jbr, &any_security())
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
    let (_, record) = compressed(&chain(16));
    let bytes = record.to_bytes();
    assert_eq!(verified(&bytes), Ok(()));
    let sections = record.sections();
    let names: Vec<&str> = sections.iter().map(|s| s.name).collect();
    for name in [
        "magic",
        "segment count",
        "public inputs",
        "trace rows",
        "ends",
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
    let strong = compress(&proof, LAST, TARGET, Regime::Jbr, &any_security()).unwrap();
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
fn parts_several_segments_and_keccak_proofs_are_refused_by_name() {
    let compressing = |proof: &Proof<Poseidon2Chain>| {
        compress(proof, LAST, TARGET, Regime::Jbr, &any_security()).map(|_| ())
    };
    let two = chain(32);
    assert!(matches!(
        compressing(&proven(&two, &params())),
        Err(CompressError::Segments(2))
    ));
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
