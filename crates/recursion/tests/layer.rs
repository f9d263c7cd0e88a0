//! A layer's proof of a child segment proof: proven from the child's proof, verified from
//! the child's AIR, statement and parameters alone. A layer of another statement, a public
//! input changed in one AIR's inputs or in all of them, a proof of the layer changed or put
//! in another's place, the child's parameters other than the proof's, too few bits or a
//! Keccak-256 child are refused by name; a last layer may commit with Keccak-256. A layer's
//! bytes read back to its proof and parameters; every section changed, another child's layer
//! or a proof's bytes are refused. A layer over a layer (`Child::of_layer`: the layer's
//! transcript, its three tables' identities in one table and its query phase) proves as
//! three tables and verifies from the segment and the inner layer's parameters alone;
//! another statement, an inner table's public input or claim changed where the inner
//! transcript absorbed it, other inner parameters or another child's inner layer are
//! refused, and its bytes read back, every section's ends flipped refused. A third layer
//! verifies from the segment and both inner layers' parameters alone and reads back; a
//! datum of the middle layer's statement changed is refused by name, and so are stacks of
//! another depth.

// The layer proves its AIRs itself, so this file leaves `common::layer_proves` unused.
#[allow(dead_code)]
mod common;

use common::{any_security, fibonacci, layer_params, params, poseidon2_chain, proven, statement};

use ballast_air::Air;
use ballast_field::{Ext3, Felt};
use ballast_fri::label::LAYER_ROOT;
use ballast_recursion::{
    Child, ChildError, LayerError, LayerProof, LayerRole, LinkError, MAX_LAST_LOG_FINAL_POLY_LEN,
    read_layer, read_layer_over_layers, verify_layer, verify_layer_over_layers,
    verify_record_over_layers,
};
use ballast_stark::{
    MAGIC, MerkleHash, ParamsError, ProofFormatError, ProverError, Regime, StarkParams,
    TablesCircuit, TablesError, TablesRecord, VerifyPolicy, Workload, label,
};
use ballast_workloads::Poseidon2Chain;

use std::sync::LazyLock;

/// A child's first segment proven with [`params`], the layer's proof of it (with
/// [`layer_params`]), and the child's layout, for tampering.
struct Layer<W: Workload> {
    workload: W,
    public: Vec<Felt>,
    child: Child,
    proof: LayerProof,
}

impl<W: Workload> Layer<W> {
    fn of(workload: W) -> Self {
        let (proof, public) = proven(&workload, &params());
        let child = Child::of_segment(
            &workload.air(0),
            &proof,
            &statement(&public),
            &params(),
            &any_security(),
        )
        .expect("the layer takes the child");
        let proof = child.prove(&layer_params()).expect("the layer proves");
        Self {
            workload,
            public,
            child,
            proof,
        }
    }

    /// [`verify_layer`] of `proof` for the child's statement of `public`, made with
    /// `child_params`, under `policy`.
    fn verify_with(
        &self,
        public: &[Felt],
        child_params: &StarkParams,
        proof: &LayerProof,
        policy: &VerifyPolicy,
    ) -> Result<(), LayerError> {
        let air = self.workload.air(0);
        verify_layer(
            &air,
            &statement(public),
            child_params,
            proof,
            &layer_params(),
            policy,
        )
        .map(drop)
    }

    fn verify(&self, proof: &LayerProof) -> Result<(), LayerError> {
        self.verify_with(&self.public, &params(), proof, &any_security())
    }

    fn verify_honest(&self) -> Result<(), LayerError> {
        self.verify(&self.proof)
    }

    /// Where the transcript AIR's inputs hold the payload of the `k`-th message `label`.
    fn absorbed_at(&self, label: &str, k: usize) -> usize {
        let message = self.child.messages.iter().filter(|m| m.label == label);
        self.child.transcript.reads() + message.clone().nth(k).unwrap().data.start
    }
}

#[test]
fn a_layer_verifies_without_its_childs_proof() {
    assert!(Layer::of(poseidon2_chain()).verify_honest().is_ok());
    assert!(Layer::of(fibonacci(5)).verify_honest().is_ok());
}

#[test]
fn a_layer_of_another_statement_is_refused() {
    let layer = Layer::of(poseidon2_chain());
    let mut other = layer.public.clone();
    other[0] += Felt::ONE;
    assert!(matches!(
        layer.verify_with(&other, &params(), &layer.proof, &any_security()),
        Err(LayerError::Links(LinkError::Differs {
            air: "transcript",
            what: "statement"
        }))
    ));
}

#[test]
fn a_changed_input_or_proof_is_refused() {
    let layer = Layer::of(poseidon2_chain());
    // The FRI layer's root changed where the transcript absorbed it: the inputs link, and
    // the query AIR's built from them move with it, but the layer's proof is of the
    // child's.
    let mut proof = layer.proof.clone();
    let at = layer.absorbed_at(LAYER_ROOT, 0);
    proof.inputs[at] += Felt::ONE;
    assert!(matches!(
        layer.verify(&proof),
        Err(LayerError::Tables(TablesError::OodMismatch { .. }))
    ));
    // A query draw changed: bound in the transcript table's inputs, so the proof refuses it
    // (whatever the query AIR the verifier builds from it).
    let mut proof = layer.proof.clone();
    let last_draw = layer.child.transcript.reads() - 1;
    proof.inputs[last_draw] += Felt::ONE;
    assert!(matches!(layer.verify(&proof), Err(LayerError::Tables(_))));
    // A prover whose witness takes other query inputs than the transcript's names them.
    let mut other = layer.child.clone();
    other.queries.betas[0] += Ext3::ONE;
    assert!(matches!(
        other.prove(&layer_params()),
        Err(LayerError::Links(LinkError::Differs {
            air: "query",
            what: "public inputs"
        }))
    ));
    // The layer's proof changed, or another child's in its place.
    let mut proof = layer.proof.clone();
    proof.tables.pow_nonce += 1;
    // Work the nonce still does draws other positions.
    assert!(matches!(
        layer.verify(&proof),
        Err(LayerError::Tables(
            TablesError::ProofOfWork | TablesError::QueryPositions
        ))
    ));
    let other = Layer::of(fibonacci(5));
    let proof = LayerProof {
        tables: other.proof.tables.clone(),
        ..layer.proof.clone()
    };
    assert!(matches!(layer.verify(&proof), Err(LayerError::Tables(_))));
}

#[test]
fn a_child_of_other_parameters_or_too_few_bits_is_refused() {
    let layer = Layer::of(poseidon2_chain());
    let more_queries = StarkParams {
        num_queries: params().num_queries + 1,
        ..params()
    };
    assert!(matches!(
        layer.verify_with(&layer.public, &more_queries, &layer.proof, &any_security()),
        Err(LayerError::Links(LinkError::Length { .. }))
    ));
    let keccak = StarkParams {
        hash: MerkleHash::Keccak256,
        ..params()
    };
    assert!(matches!(
        layer.verify_with(&layer.public, &keccak, &layer.proof, &any_security()),
        Err(LayerError::Child(ChildError::NotPoseidon2))
    ));
    assert!(matches!(
        layer.verify_with(
            &layer.public,
            &params(),
            &layer.proof,
            &VerifyPolicy::default()
        ),
        Err(LayerError::Child(ChildError::Invalid(_)))
    ));
}

#[test]
fn a_layer_below_blowup_8_is_refused() {
    // The layer's permutations have degree-7 constraints: 8 quotient chunks.
    let layer = Layer::of(fibonacci(5));
    let too_small = |e: &ParamsError| {
        matches!(
            e,
            ParamsError::DegreeTooHigh {
                degree: 7,
                min_blowup: 8
            }
        )
    };
    assert!(
        layer
            .child
            .layer_params(2, 0, 64, Regime::Jbr, LayerRole::Inner)
            .is_err_and(|e| too_small(&e))
    );
    assert!(matches!(
        layer.child.prove(&params()),
        Err(LayerError::Prover(ProverError::Tables(TablesError::Params(e)))) if too_small(&e)
    ));
    // At blowup 8 it proves; a layer another verifies commits with Poseidon2 and keeps
    // FRI's default final polynomial, which the next layer's query AIR evaluates.
    let inner = layer
        .child
        .layer_params(3, 0, 64, Regime::Jbr, LayerRole::Inner)
        .unwrap();
    assert_eq!(
        (inner.hash, inner.log_final_poly_len),
        (
            MerkleHash::Poseidon2,
            StarkParams::DEFAULT_LOG_FINAL_POLY_LEN
        )
    );
}

#[test]
fn a_last_layer_may_commit_with_keccak() {
    let layer = Layer::of(poseidon2_chain());
    let air = layer.workload.air(0);
    let statement = statement(&layer.public);
    let last = |hash| {
        layer
            .child
            .layer_params(3, 0, 64, Regime::Jbr, LayerRole::Last(hash))
            .unwrap()
    };
    let (keccak, poseidon2) = (last(MerkleHash::Keccak256), last(MerkleHash::Poseidon2));
    // The last layer's final polynomial is as long as its shortest table (up to a bound),
    // whatever its hash.
    let shortest = [
        layer.child.transcript.log_rows(),
        layer.child.identity.log_rows(),
        layer.child.queries.air.log_rows(),
    ];
    assert_eq!(
        keccak.log_final_poly_len,
        MAX_LAST_LOG_FINAL_POLY_LEN.min(*shortest.iter().min().unwrap())
    );
    assert!(keccak.log_final_poly_len > StarkParams::DEFAULT_LOG_FINAL_POLY_LEN);
    assert_eq!(
        poseidon2,
        StarkParams {
            hash: MerkleHash::Poseidon2,
            ..keccak
        }
    );
    let proof = layer.child.prove(&keccak).expect("the layer proves");
    let verified = |proof: &LayerProof, layer_params: &StarkParams| {
        verify_layer(
            &air,
            &statement,
            &params(),
            proof,
            layer_params,
            &any_security(),
        )
    };
    assert!(verified(&proof, &keccak).is_ok());
    // Its bytes say the hash it was made with.
    let bytes = layer
        .child
        .layer_record(&proof, &keccak)
        .unwrap()
        .to_bytes();
    let (read, read_params) = read_layer(&air, &statement, &params(), &bytes).unwrap();
    assert_eq!((&read, read_params), (&proof, keccak));
    // Checked as the other hash's proof, it is refused.
    assert!(verified(&proof, &poseidon2).is_err());
}

#[test]
fn a_layer_reads_back_from_its_bytes_and_changed_bytes_are_refused() {
    let layer = Layer::of(poseidon2_chain());
    let air = layer.workload.air(0);
    let statement = statement(&layer.public);
    let bytes = layer
        .child
        .layer_record(&layer.proof, &layer_params())
        .unwrap()
        .to_bytes();
    let read = |bytes: &[u8]| read_layer(&air, &statement, &params(), bytes);
    let verified = |bytes: &[u8]| {
        let (proof, read_params) = read(bytes)?;
        verify_layer(
            &air,
            &statement,
            &params(),
            &proof,
            &read_params,
            &any_security(),
        )
    };
    let (proof, read_params) = read(&bytes).unwrap();
    assert_eq!((&proof, read_params), (&layer.proof, layer_params()));
    assert!(verified(&bytes).is_ok());
    let record = TablesRecord::from_bytes(&bytes).unwrap();
    for section in record.sections().iter().filter(|s| !s.range.is_empty()) {
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
    // The identity and query tables' public inputs, which its verifier builds from the
    // transcript AIR's: a record that holds any is refused by name.
    let record = TablesRecord::from_bytes(&bytes).unwrap();
    let derived: Vec<usize> = (0..record.tables.len())
        .filter(|&t| record.tables[t].public_inputs.is_empty())
        .collect();
    assert_eq!(
        derived.len(),
        2,
        "the identity and query tables' inputs are left out"
    );
    let mut refused = Vec::new();
    for t in derived {
        let mut holding = record.clone();
        holding.tables[t].public_inputs.push(Felt::ONE);
        match read(&holding.to_bytes()) {
            Err(LayerError::Tables(TablesError::Shape {
                what,
                expected: 0,
                got: 1,
            })) => refused.push(what),
            other => panic!("table {t}: {other:?}"),
        }
    }
    refused.sort_unstable();
    assert_eq!(
        refused,
        [
            "the identity table's recorded public inputs",
            "the query table's recorded public inputs"
        ]
    );
    // Another child's layer; a proof's magic.
    let other = Layer::of(fibonacci(5));
    let other = other
        .child
        .layer_record(&other.proof, &layer_params())
        .unwrap()
        .to_bytes();
    assert!(verified(&other).is_err());
    let mut segment = bytes.clone();
    segment[..4].copy_from_slice(&MAGIC);
    assert!(matches!(
        read(&segment),
        Err(LayerError::Format(ProofFormatError::BadMagic))
    ));
}

/// A layer over a Poseidon2-chain child's layer (both with [`layer_params`]): the child's
/// layer, the `Child` it is to a layer over it and that layer's proof.
struct Over {
    layer: Layer<Poseidon2Chain>,
    over: Child,
    proof: LayerProof,
}

/// The layer over a layer the tests share (three proofs to make).
static OVER: LazyLock<Over> = LazyLock::new(Over::new);

impl Over {
    fn new() -> Self {
        let layer = Layer::of(poseidon2_chain());
        let over = Child::of_layer(&layer.child, &layer.proof, &layer_params(), &any_security())
            .expect("a layer over it takes it");
        let proof = over
            .prove(&layer_params())
            .expect("the layer over it proves");
        Self { layer, over, proof }
    }

    /// [`verify_layer_over_layers`] of `proof` for the segment's statement of `public`, the
    /// inner layer made with `inner_params`.
    fn verify_with(
        &self,
        public: &[Felt],
        inner_params: &StarkParams,
        proof: &LayerProof,
    ) -> Result<(), LayerError> {
        verify_layer_over_layers(
            &self.layer.workload.air(0),
            &statement(public),
            &params(),
            &[*inner_params],
            proof,
            &layer_params(),
            &any_security(),
        )
        .map(drop)
    }

    fn verify(&self, proof: &LayerProof) -> Result<(), LayerError> {
        self.verify_with(&self.layer.public, &layer_params(), proof)
    }

    /// Where the transcript AIR's inputs hold the values of the inner layer's table whose
    /// public inputs are `inputs`, as absorbed (after the list's length).
    fn public_inputs_at(&self, inputs: &[Felt]) -> usize {
        let data = &self.proof.inputs[self.over.transcript.reads()..];
        let message = (self.over.messages.iter())
            .filter(|m| m.label == label::PUBLIC_INPUTS)
            .find(|m| &data[m.data.clone()][1..] == inputs)
            .expect("the table's public inputs are absorbed");
        self.over.transcript.reads() + message.data.start + 1
    }
}

#[test]
fn a_layer_over_a_layer_verifies_from_the_segment_alone() {
    // Its verifier's transcript, the identities of the inner layer's three tables (in one
    // table) and its query phase (its mixed trees, FRI rolling each shorter height in),
    // proven as one proof of their three tables, verified from the segment's AIR, statement
    // and parameters and the inner layer's parameters: neither proof.
    let o = &*OVER;
    assert_eq!(o.over.identity.claims().len(), 3);
    assert_eq!(o.proof.tables.ood.len(), 3);
    let verified = o.verify(&o.proof);
    assert!(verified.is_ok(), "{verified:?}");
    let inputs = &o.proof.inputs;
    // The transcript AIR's inputs link to the inner layer's statement, parameters and
    // tables: a datum of the bound prefix (an inner table's public input) changed is
    // refused by name.
    assert_eq!(o.over.check_links(inputs), Ok(()));
    let mut changed = inputs.clone();
    let bound = o.over.transcript.reads() + o.over.statement_data.len() - 1;
    changed[bound] += Felt::ONE;
    assert_eq!(
        o.over.check_links(&changed),
        Err(LinkError::Differs {
            air: "transcript",
            what: "statement"
        })
    );
}

#[test]
fn a_layer_over_a_layer_of_another_statement_or_inner_inputs_is_refused() {
    let o = &*OVER;
    let refused_as_other_statement = |r: Result<(), LayerError>| {
        matches!(
            r,
            Err(LayerError::Links(LinkError::Differs {
                air: "transcript",
                what: "statement"
            }))
        )
    };
    // Another segment statement: the inner layer's transcript table's inputs do not link to
    // it.
    let mut other = o.layer.public.clone();
    other[0] += Felt::ONE;
    assert!(refused_as_other_statement(o.verify_with(
        &other,
        &layer_params(),
        &o.proof
    )));
    // The inner layer's transcript absorbed one list of public inputs, its transcript
    // table's: the identity and query tables' are derived from them.
    let inner = &o.layer;
    let transcript_inputs = inner.child.transcript.public_inputs();
    let lists: Vec<_> = (o.over.messages.iter())
        .filter(|m| m.label == label::PUBLIC_INPUTS)
        .collect();
    assert_eq!(lists.len(), 1);
    assert_eq!(lists[0].data.len(), 1 + transcript_inputs.len());
    // A public input of it changed where that transcript absorbed it: the segment's
    // statement's first is refused as another statement; a draw of the segment's verifier
    // (which moves the inner query table's inputs built from it: the positions' digest)
    // and the last link, but the layer's proof is of the honest ones.
    let reads = inner.child.transcript.reads();
    let changed = |k: usize| {
        let mut proof = o.proof.clone();
        proof.inputs[o.public_inputs_at(&transcript_inputs) + k] += Felt::ONE;
        o.verify(&proof)
    };
    assert!(refused_as_other_statement(changed(reads)));
    for k in [reads - 1, transcript_inputs.len() - 1] {
        let refused = changed(k);
        assert!(
            matches!(refused, Err(LayerError::Tables(_))),
            "{k}: {refused:?}"
        );
    }
    // An inner table's claim changed where its transcript absorbed it: the inputs link,
    // and the identity built from them moves with it, but the layer's proof is of the
    // honest one.
    let mut proof = o.proof.clone();
    let data = o.over.transcript.reads();
    let claim = (o.over.messages.iter())
        .find(|m| m.label == label::OOD_TRACE_Z)
        .unwrap();
    proof.inputs[data + claim.data.end - 1] += Felt::ONE;
    assert_eq!(o.over.check_links(&proof.inputs), Ok(()));
    assert!(matches!(o.verify(&proof), Err(LayerError::Tables(_))));
    // The inner layer's parameters other than its proof's: the transcript's layout moves.
    let more_queries = StarkParams {
        num_queries: layer_params().num_queries + 1,
        ..layer_params()
    };
    assert!(matches!(
        o.verify_with(&o.layer.public, &more_queries, &o.proof),
        Err(LayerError::Links(LinkError::Length { .. }))
    ));
    let keccak = StarkParams {
        hash: MerkleHash::Keccak256,
        ..layer_params()
    };
    assert!(matches!(
        o.verify_with(&o.layer.public, &keccak, &o.proof),
        Err(LayerError::Child(ChildError::NotPoseidon2))
    ));
    // A policy that pins the segment's parameters: the inner layer's, other ones, are
    // refused as the inner layer's before its proof is read.
    let pinned = VerifyPolicy {
        params: Some(params()),
        ..any_security()
    };
    assert!(matches!(
        verify_layer_over_layers(
            &o.layer.workload.air(0),
            &statement(&o.layer.public),
            &params(),
            &[layer_params()],
            &o.proof,
            &layer_params(),
            &pinned,
        ),
        Err(LayerError::Child(ChildError::Invalid(_)))
    ));
    // The layer's proof changed: the inner layer's layer proof in its place.
    let swapped = LayerProof {
        tables: o.layer.proof.tables.clone(),
        ..o.proof.clone()
    };
    assert!(matches!(o.verify(&swapped), Err(LayerError::Tables(_))));
    // Checked as a layer over another child's inner layer (a Fibonacci segment's): refused.
    let fibonacci = fibonacci(5);
    let (_, public) = proven(&fibonacci, &params());
    assert!(
        verify_layer_over_layers(
            &fibonacci.air(0),
            &statement(&public),
            &params(),
            &[layer_params()],
            &o.proof,
            &layer_params(),
            &any_security(),
        )
        .is_err()
    );
}

#[test]
fn a_layer_over_a_layer_reads_back_from_its_bytes() {
    let o = &*OVER;
    let air = o.layer.workload.air(0);
    let statement = statement(&o.layer.public);
    let bytes = o
        .over
        .layer_record(&o.proof, &layer_params())
        .unwrap()
        .to_bytes();
    let inner = [layer_params()];
    let read = |bytes: &[u8]| read_layer_over_layers(&air, &statement, &params(), &inner, bytes);
    let verified = |bytes: &[u8]| {
        verify_record_over_layers(
            &air,
            &statement,
            &params(),
            &inner,
            &TablesRecord::from_bytes(bytes)?,
            &any_security(),
        )
    };
    let (proof, read_params) = read(&bytes).unwrap();
    assert_eq!((&proof, read_params), (&o.proof, layer_params()));
    assert!(verified(&bytes).is_ok());
    let record = TablesRecord::from_bytes(&bytes).unwrap();
    for section in record.sections().iter().filter(|s| !s.range.is_empty()) {
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
    // Only the transcript table's public inputs are recorded: a record that holds the
    // identity or the query table's is refused by name.
    let derived: Vec<usize> = (0..record.tables.len())
        .filter(|&t| record.tables[t].public_inputs.is_empty())
        .collect();
    let mut refused = Vec::new();
    for t in derived {
        let mut holding = record.clone();
        holding.tables[t].public_inputs.push(Felt::ONE);
        match read(&holding.to_bytes()) {
            Err(LayerError::Tables(TablesError::Shape {
                what,
                expected: 0,
                got: 1,
            })) => refused.push(what),
            other => panic!("table {t}: {other:?}"),
        }
    }
    refused.sort_unstable();
    assert_eq!(
        refused,
        [
            "the identity table's recorded public inputs",
            "the query table's recorded public inputs"
        ]
    );
    // The inner layer's record in its place: tables of other heights.
    let inner = (o.layer.child)
        .layer_record(&o.layer.proof, &layer_params())
        .unwrap()
        .to_bytes();
    assert!(matches!(
        read(&inner),
        Err(LayerError::Tables(TablesError::Shape {
            what: "a table's rows (log2)",
            ..
        }))
    ));
}

#[test]
fn a_third_layer_verifies_from_the_segment_alone() {
    // A layer over the layer over a layer: the stack's frames built level by level from
    // the segment and the two inner layers' parameters, neither inner proof read.
    let o = &*OVER;
    let third = Child::of_layer(&o.over, &o.proof, &layer_params(), &any_security())
        .expect("a layer over it takes it");
    let proof = third
        .prove(&layer_params())
        .expect("the third layer proves");
    let air = o.layer.workload.air(0);
    let statement = statement(&o.layer.public);
    let verify = |inner: &[StarkParams], proof: &LayerProof| {
        let (layer, policy) = (layer_params(), any_security());
        verify_layer_over_layers(&air, &statement, &params(), inner, proof, &layer, &policy)
    };
    let other_statement = |r: &Result<TablesCircuit, LayerError>| {
        let differs = LinkError::Differs {
            air: "transcript",
            what: "statement",
        };
        matches!(r, Err(LayerError::Links(l)) if *l == differs)
    };
    let two = [layer_params(), layer_params()];
    assert!(verify(&two, &proof).is_ok());
    // Its record reads back with the heights the stack gives, and verifies.
    let bytes = third
        .layer_record(&proof, &layer_params())
        .unwrap()
        .to_bytes();
    let (read, read_params) =
        read_layer_over_layers(&air, &statement, &params(), &two, &bytes).unwrap();
    assert_eq!((&read, read_params), (&proof, layer_params()));
    let record = TablesRecord::from_bytes(&bytes).unwrap();
    let policy = any_security();
    assert!(verify_record_over_layers(&air, &statement, &params(), &two, &record, &policy).is_ok());
    // Another statement: the innermost layer's inputs, two levels down, do not link.
    let mut other = o.layer.public.clone();
    other[0] += Felt::ONE;
    let other = common::statement(&other);
    let refused = verify_layer_over_layers(
        &air,
        &other,
        &params(),
        &two,
        &proof,
        &layer_params(),
        &any_security(),
    );
    assert!(other_statement(&refused), "{refused:?}");
    // A datum of the middle layer's statement changed where the third absorbed it: it links
    // at the top (it is what was absorbed), and is refused by name one level down.
    let list = (third.messages.iter())
        .find(|m| m.label == label::PUBLIC_INPUTS)
        .unwrap();
    let at = third.transcript.reads() + list.data.start + 1 + o.over.transcript.reads();
    let mut changed = proof.clone();
    changed.inputs[at] += Felt::ONE;
    let refused = verify(&two, &changed);
    assert!(other_statement(&refused), "{refused:?}");
    // Checked as a stack of another depth: refused (the layouts' lengths differ); no inner
    // layer at all is refused by name.
    for depth in [1, 3] {
        let refused = verify(&vec![layer_params(); depth], &proof);
        assert!(
            matches!(refused, Err(LayerError::Links(LinkError::Length { .. }))),
            "{depth}: {refused:?}"
        );
    }
    assert!(matches!(verify(&[], &proof), Err(LayerError::NoInnerLayer)));
}
