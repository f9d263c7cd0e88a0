#![doc = include_str!("../README.md")]

use std::sync::OnceLock;

use ballast_field::Felt;
use ballast_fri::{QueryPlan, round_arities};
use ballast_merkle::{
    Digest, MerkleHash, MerkleTree, batch_opening_len, check_indices, verify_batch,
};
use ballast_recursion::compress;
use ballast_stark::{
    CpuBackend, PhaseTimes, Regime, StarkParams, TABLES_MAGIC, TableAir, TableStatement,
    TablesCircuit, TablesRecord, VerifyPolicy, Workload, part_range, prove_part, prove_statement,
    prove_tables,
};
use ballast_workloads::{Fibonacci, KeccakChain, decode, decode_compressed, max_len};

/// The policy every target verifies under: no security floor (the seeds use fast, insecure
/// parameters), and a 16 MiB cap so that no input makes the verifier allocate or work more.
pub fn policy() -> VerifyPolicy {
    VerifyPolicy {
        min_security_bits: 0,
        max_proof_bytes: 16 << 20,
        ..VerifyPolicy::default()
    }
}

/// The fast parameters of the seed proofs: blowup 2, 8 queries, 2 grinding bits.
pub fn seed_params() -> StarkParams {
    StarkParams {
        pow_bits: 2,
        ..StarkParams::testing()
    }
}

/// The seed statements' Fibonacci: 2 sequences in `segments` segments of 2^5 rows.
fn seed_fibonacci(segments: usize) -> Fibonacci {
    Fibonacci {
        sequences: 2,
        log_rows: 5,
        segments,
    }
}

/// The seed statements' keccak chain: 3 steps in 2 segments of 2^6 rows.
const SEED_CHAIN: KeccakChain = KeccakChain {
    seed: [7; 32],
    steps: 3,
    log_rows: 6,
};

/// Small valid proofs of each workload, with several segments, the Fibonacci one again
/// committed with Poseidon2, and a compressed proof of a one-segment Fibonacci statement:
/// the seeds of the corpora and of [`mutate_and_verify`].
pub fn seed_proofs() -> &'static [Vec<u8>] {
    static SEEDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        vec![
            seed_proof(&seed_fibonacci(2), &seed_params()),
            seed_proof(&SEED_CHAIN, &seed_params()),
            seed_proof(&seed_fibonacci(2), &poseidon2_params()),
            seed_compressed(),
        ]
    })
}

/// [`seed_params`] with Poseidon2 trees: a proof that compresses.
fn poseidon2_params() -> StarkParams {
    StarkParams {
        hash: MerkleHash::Poseidon2,
        ..seed_params()
    }
}

/// The encoded proof of `workload` with `params`.
fn seed_proof<W: Workload>(workload: &W, params: &StarkParams) -> Vec<u8> {
    prove_statement(
        workload,
        params,
        &CpuBackend::new(),
        &mut PhaseTimes::default(),
        &mut |_| {},
    )
    .expect("the seed statements prove")
    .to_bytes()
}

/// Decodes and verifies arbitrary bytes as a proof, whole or part, or a compressed proof,
/// as `cli verify` reads a file: the stated length within the cap and the header's bound
/// first; or, under a tables proof's magic, as a tables proof of the seed's tables
/// ([`verified_tables`]); returns whether they were valid.
pub fn decode_and_verify(bytes: &[u8]) -> bool {
    if bytes.starts_with(&TABLES_MAGIC) {
        return verified_tables(bytes).is_some();
    }
    let policy = policy();
    let within = |length| policy.check_size(length).is_ok();
    let compressed = match (ballast_stark::peek(bytes), max_len(bytes)) {
        (Ok(prefix), Ok(max)) if within(prefix.length) && prefix.length <= max => prefix.compressed,
        _ => return false,
    };
    if compressed {
        decode_compressed(bytes).is_ok_and(|proof| proof.verify(&policy).is_ok())
    } else {
        decode(bytes).is_ok_and(|proof| proof.verify(&policy).is_ok())
    }
}

/// A compressed proof of a two-segment Fibonacci statement committed with Poseidon2 at
/// [`seed_params`] (so its inner layer's sections and the state between its segments are
/// there): a node over the segments and the last layer over it, each at blowup 8 without
/// grinding.
fn seed_compressed() -> Vec<u8> {
    let proof = prove_statement(
        &seed_fibonacci(2),
        &poseidon2_params(),
        &CpuBackend::new(),
        &mut PhaseTimes::default(),
        &mut |_| {},
    )
    .expect("the seed statement proves");
    compress(&proof, (3, 0), (3, 0), 20, Regime::Jbr, &policy())
        .expect("the seed proof compresses")
        .to_bytes()
}

/// Valid parts of the seed statements (the middle of three parts of a 3-segment Fibonacci
/// statement, the first of two of a keccak chain): seeds of the decode corpus.
pub fn seed_parts() -> Vec<Vec<u8>> {
    vec![
        seed_part(&seed_fibonacci(3), 3, 1),
        seed_part(&SEED_CHAIN, 2, 0),
    ]
}

/// Part `index` of `parts` of `workload` at [`seed_params`], encoded.
fn seed_part<W: Workload>(workload: &W, parts: usize, index: usize) -> Vec<u8> {
    let range = part_range(workload.segments(), parts, index).expect("a valid split");
    let part = prove_part(
        workload,
        &seed_params(),
        range,
        &CpuBackend::new(),
        &mut PhaseTimes::default(),
        &mut |_| {},
    )
    .expect("the seed parts prove");
    part.to_bytes()
}

/// The seed `data[0]` picks and a copy with the edits of the rest applied: each 5 bytes a
/// 32-bit little-endian offset (modulo the seed's length) and a byte XORed in there. None
/// for no data.
fn edited<'s>(seeds: &'s [Vec<u8>], data: &[u8]) -> Option<(&'s Vec<u8>, Vec<u8>)> {
    let (&pick, edits) = data.split_first()?;
    let seed = &seeds[usize::from(pick) % seeds.len()];
    let mut bytes = seed.clone();
    for edit in edits.chunks_exact(5) {
        let offset = u32::from_le_bytes([edit[0], edit[1], edit[2], edit[3]]) as usize;
        bytes[offset % seed.len()] ^= edit[4];
    }
    Some((seed, bytes))
}

/// Applies `data` to a seed proof as in-place edits and verifies the result.
///
/// `data[0]` picks the seed; then each 5 bytes are an edit: a 32-bit little-endian offset
/// (modulo the proof's length) and a byte XORed in there. An edited proof that still
/// verifies must prove the seed's statement with the seed's parameters; an edited
/// compressed proof, with every layer's.
///
/// # Panics
/// When an edited proof verifies with another statement or other parameters: a forgery.
pub fn mutate_and_verify(data: &[u8]) {
    let Some((seed, bytes)) = edited(seed_proofs(), data) else {
        return;
    };
    if !decode_and_verify(&bytes) {
        return;
    }
    assert_eq!(
        proves(&bytes),
        proves(seed),
        "an edited proof verified for another statement or with other parameters"
    );
}

/// What a verified proof proves: its statement's digest, its (segments') parameters and, for
/// a compressed proof, its last layer's circuit.
fn proves(bytes: &[u8]) -> (Option<[u8; 32]>, StarkParams, Option<TablesCircuit>) {
    if ballast_stark::peek(bytes).is_ok_and(|prefix| prefix.compressed) {
        let proof = decode_compressed(bytes).expect("it verified, so it decodes");
        let circuits = proof.verify(&policy()).expect("it verified");
        let digest = proof.statement_digest();
        (Some(digest), circuits.segments.params, Some(circuits.last))
    } else {
        let proof = decode(bytes).expect("it verified, so it decodes");
        (proof.statement_digest(), *proof.params(), None)
    }
}

/// The statement context of [`seed_tables`]' proofs.
const TABLES_CONTEXT: &[u8] = b"ballast fuzz tables";

/// The tables a seed tables proof proves: Fibonacci segments of 2^6 and 2^4 rows.
fn seed_tables() -> [Fibonacci; 2] {
    [6, 4].map(|log_rows| Fibonacci {
        sequences: 2,
        log_rows,
        segments: 1,
    })
}

/// A tables proof (`TablesRecord`) of Fibonacci tables of 2^6 and 2^4 rows at
/// [`seed_params`] with each hash: the seeds of [`mutate_tables`].
pub fn seed_tables_records() -> &'static [Vec<u8>] {
    static SEEDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let workloads = seed_tables();
        let airs = workloads.map(|w| w.air(0));
        let (traces, public): (Vec<_>, Vec<_>) = workloads
            .iter()
            .map(|w| {
                let start = w.start();
                let (table, end) = w.trace_table(0, &start);
                (table, w.public_inputs(0, &start, &end))
            })
            .unzip();
        let tables: Vec<TableStatement<'_>> = airs
            .iter()
            .zip(&public)
            .map(|(air, public_inputs)| TableStatement::new(air, public_inputs))
            .collect();
        MerkleHash::ALL
            .iter()
            .map(|&hash| {
                let params = StarkParams {
                    hash,
                    ..seed_params()
                };
                let proof = prove_tables(TABLES_CONTEXT, &tables, traces.clone(), &params)
                    .expect("the seed tables prove");
                TablesRecord::new(&tables, &params, proof)
                    .expect("the seed tables' shapes")
                    .to_bytes()
            })
            .collect()
    })
}

/// `bytes` decoded as a tables proof, if it verifies for the seed's tables under [`policy`].
///
/// # Panics
/// When the bytes decode but do not encode back to themselves: a record with two encodings.
pub fn verified_tables(bytes: &[u8]) -> Option<TablesRecord> {
    let record = TablesRecord::from_bytes(bytes).ok()?;
    assert_eq!(record.to_bytes(), bytes, "a record with two encodings");
    let airs = seed_tables().map(|w| w.air(0));
    let airs: Vec<&dyn TableAir> = airs.iter().map(|a| a as &dyn TableAir).collect();
    record
        .verify(TABLES_CONTEXT, &airs, &policy())
        .is_ok()
        .then_some(record)
}

/// Applies `data` to a seed tables proof as [`mutate_and_verify`] does to a proof, decodes
/// it and verifies it for the seed's tables under [`policy`]; returns whether it verified.
///
/// # Panics
/// As [`verified_tables`], or when an edited record verifies with other parameters, shapes
/// or public inputs than the seed's: a forgery.
pub fn mutate_tables(data: &[u8]) -> bool {
    let Some((seed, bytes)) = edited(seed_tables_records(), data) else {
        return false;
    };
    let Some(record) = verified_tables(&bytes) else {
        return false;
    };
    let original = TablesRecord::from_bytes(seed).expect("the seed decodes");
    assert_eq!(
        (record.params, &record.tables),
        (original.params, &original.tables),
        "an edited tables proof verified for other tables or parameters"
    );
    true
}

/// Height of the trees [`batch_opening`] opens: 64 leaves.
const HEIGHT: usize = 6;
/// Where `data[0]` holds the tree's hash id (its top bit).
const HASH_SHIFT: u8 = 7;

/// Interprets `data` as a batch opening against a fixed tree of 64 leaves and as FRI query
/// positions.
///
/// `data[0]`'s top bit is the tree's hash id (0: Keccak-256, 1: Poseidon2), its low
/// seven bits are the number of indices k (mod 65); the next k bytes are the indices (mod
/// 128, so some are out of range), and the rest node digests (32 bytes each, a trailing
/// partial one ignored). The same indices, read as LDE positions, go through the query plan
/// of a 2^7 domain folded in rounds of 8 and 2.
///
/// # Panics
/// When the verifier accepts anything but the canonical opening of valid indices, or the
/// plan's sizes disagree with its contents.
pub fn batch_opening(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let hash = MerkleHash::from_id(first >> HASH_SHIFT).expect("a hash has each id 0 and 1");
    let count = usize::from(first & ((1 << HASH_SHIFT) - 1)) % 65;
    if rest.len() < count {
        return;
    }
    let (index_bytes, node_bytes) = rest.split_at(count);
    let indices: Vec<usize> = index_bytes.iter().map(|&b| usize::from(b) % 128).collect();
    let nodes: Vec<Digest> = node_bytes
        .chunks_exact(32)
        .map(|c| c.try_into().expect("32 bytes"))
        .collect();
    let tree = tree(hash);
    let leaves: Vec<Digest> = indices
        .iter()
        .map(|&i| tree.levels()[0].get(i).copied().unwrap_or([0; 32]))
        .collect();
    let accepted = verify_batch(hash, &tree.root(), HEIGHT, &indices, &leaves, &nodes);
    let valid = check_indices(HEIGHT, &indices).is_ok();
    if valid {
        let canonical = tree.open_batch(&indices);
        assert_eq!(canonical.len(), batch_opening_len(HEIGHT, &indices));
        assert!(verify_batch(
            hash,
            &tree.root(),
            HEIGHT,
            &indices,
            &leaves,
            &canonical
        ));
        assert_eq!(
            accepted,
            nodes == canonical,
            "only the canonical opening verifies"
        );
    } else {
        assert!(!accepted, "invalid indices {indices:?} were accepted");
    }
    let arities = round_arities(4);
    match QueryPlan::new(HEIGHT + 1, &arities, &indices) {
        Ok(plan) => {
            assert!(valid || indices.iter().any(|&i| i >= 64));
            for layer in plan.layers() {
                assert_eq!(layer.unknown_slots().count(), layer.unknown_count());
                assert_eq!(layer.leaves().len(), layer.known_slots().len());
                assert!(layer.opening_len() <= layer.leaves().len() * layer.height());
            }
        }
        Err(_) => assert!(check_indices(HEIGHT + 1, &indices).is_err()),
    }
}

/// The [`batch_opening`] input that opens `indices` (below 64, strictly increasing) of the
/// `hash` tree with their canonical opening.
pub fn batch_opening_input(hash: MerkleHash, indices: &[u8]) -> Vec<u8> {
    let positions: Vec<usize> = indices.iter().map(|&i| usize::from(i)).collect();
    let count = u8::try_from(indices.len()).expect("at most 64 indices");
    let mut input = vec![count | hash.id() << HASH_SHIFT];
    input.extend_from_slice(indices);
    for node in tree(hash).open_batch(&positions) {
        input.extend_from_slice(&node);
    }
    input
}

/// The fixed tree of [`batch_opening`] with `hash`: leaf i is the row (i).
fn tree(hash: MerkleHash) -> &'static MerkleTree {
    static TREES: [OnceLock<MerkleTree>; 2] = [OnceLock::new(), OnceLock::new()];
    TREES[usize::from(hash.id())].get_or_init(|| {
        let leaves = (0..1u64 << HEIGHT).map(|i| hash.row(&[Felt::new(i)]));
        MerkleTree::from_leaves(hash, leaves.collect())
    })
}
