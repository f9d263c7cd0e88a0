//! A layer's proof of one child proof: the three AIRs of a [`Child`] proven as one proof of
//! their tables (`ballast_stark::prove_tables`; of several children's, a node's:
//! [`NodeAirs`], `crate::node`), and the verifier of a segment's layer, which
//! takes the child's AIR, statement and parameters but not the child's proof. It builds the
//! AIRs from the child's shape and from what the transcript AIR's public inputs say the
//! child's transcript read and absorbed: the transcript AIR from the transcript's layout for
//! that shape (`ballast_stark::transcript_layout`), the query AIR at the positions the draws
//! give; then it checks the transcript AIR's public inputs (the links of
//! [`Child::check_links`]), builds the identity AIR's and the query AIR's inputs from
//! them, and checks the proof.

use std::cmp::Reverse;
use std::rc::Rc;

use ballast_air::{Air, ConstraintProgram};
use ballast_field::{Ext3, Felt};
use ballast_fri::label as fri_label;
use ballast_merkle::Digest;
use ballast_poseidon2::{DIGEST_ELEMENTS, FeltDigest};
use ballast_stark::{
    MerkleHash, OodValues, ParamsError, ProofFormatError, ProverError, Regime, SegmentStatement,
    StarkParams, TableAir, TableStatement, TablesCircuit, TablesError, TablesProof, TablesRecord,
    TranscriptLayout, VerifierError, VerifyPolicy, height_deep_coefficients, keyed_statement_data,
    label, prove_tables, tables_transcript, tables_transcript_layout, transcript_layout,
};
use ballast_transcript::Message;

use crate::child::{
    Absorbed, Links, READ_ALPHA, READ_BETAS, READ_GAMMA, READ_Z, child_shape, positions_of,
};
use crate::identity::{IdentityError, identity_log_rows};
use crate::node::with_node_tables;
use crate::queries::ChildShape;
use crate::{
    Child, ChildError, ChildQueries, DeepClaims, IdentityAir, LinkError, OodClaims, QueriesAir,
    Segment, TranscriptAir,
};

/// The context the layer's proof binds as its statement.
pub const LAYER_CONTEXT: &[u8] = b"ballast layer";

/// The layer's AIRs over a child (its identity AIR checks each of its child's tables'
/// identities: a segment's one, a layer's three). Its proof takes their tables in this
/// order (a node's, each child's in turn) sorted by height, tallest first; tables of one
/// height keep this order.
pub const LAYER_AIRS: [&str; 3] = ["transcript", "identity", "query"];

/// Where a layer sits in the recursion, which fixes its hash and its final polynomial.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerRole {
    /// Verified by another layer's AIRs: committed with Poseidon2, the only hash they
    /// verify, with FRI's default final polynomial (a query AIR evaluates at most
    /// 2^[`MAX_LOG_FINAL_POLY_LEN`](crate::MAX_LOG_FINAL_POLY_LEN) coefficients).
    Inner,
    /// The last, verified natively alone: committed with either hash (Keccak-256 hashes
    /// faster on the CPU), with a final polynomial as long as its shortest table, up to
    /// 2^[`MAX_LAST_LOG_FINAL_POLY_LEN`] coefficients.
    Last(MerkleHash),
}

/// log2 of the longest final polynomial a last layer takes: 2^8 coefficients, 6 KiB sent
/// once, where each FRI round saved takes a coset and a path off every query (30 to 40 at
/// blowups 32 and 64, `docs/recursion.md`). Longer, the coefficients would outweigh the
/// rounds saved.
pub const MAX_LAST_LOG_FINAL_POLY_LEN: usize = 8;

/// A layer's proof that its child proofs verify (one, or a node's several): its transcript
/// AIRs' public inputs and one proof of its AIRs' tables, three a child.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerProof {
    /// The transcript AIRs' public inputs, one child after another: what each child's
    /// transcript read and absorbed. The identity and query AIRs' are built from them
    /// ([`OodClaims::of`], [`Child::query_inputs`]).
    pub inputs: Vec<Felt>,
    /// The proof of the AIRs' tables.
    pub tables: TablesProof,
}

/// Why a layer cannot be proven or is refused.
#[derive(Debug, thiserror::Error)]
pub enum LayerError {
    /// A child the layer's AIRs do not take, or a child's AIR and parameters that do not
    /// make a shape.
    #[error(transparent)]
    Child(#[from] ChildError),
    /// Public inputs that do not link to the child's shape, statement or layout, or that do
    /// not give the other AIRs'.
    #[error("the layer's public inputs: {0}")]
    Links(#[from] LinkError),
    /// Tables the layer's prover could not prove.
    #[error("the layer's tables: {0}")]
    Prover(#[from] ProverError),
    /// A layer's proof that does not verify, or bytes of other tables than a layer's.
    #[error("the layer's proof does not verify: {0}")]
    Tables(#[from] TablesError),
    /// Bytes that are not a tables proof.
    #[error("the layer's bytes: {0}")]
    Format(#[from] ProofFormatError),
    /// Parameters the layer's AIRs cannot be proven with, or a target out of their reach.
    #[error("the layer's parameters: {0}")]
    Params(#[from] ParamsError),
    /// A layer over layers checked with no inner layer's parameters (a segment's layer is
    /// `verify_layer`'s).
    #[error("a layer over layers needs at least one inner layer's parameters")]
    NoInnerLayer,
    /// A node over no child.
    #[error("a node needs at least one child")]
    NoChildren,
    /// A level of a tree with no node, or with more nodes than the level below it has
    /// children.
    #[error("a level of {nodes} nodes over {children} children: each node needs at least one")]
    Level {
        /// The level's nodes.
        nodes: usize,
        /// The level below's children.
        children: usize,
    },
    /// What a level of a tree (1 the innermost) is refused as when it is planned
    /// ([`TreePlan::of`](crate::TreePlan::of)), before any of it is proven.
    #[error("level {level} of the tree (nodes: {nodes}, over children: {children}): {source}")]
    AtLevel {
        /// The level, from 1 (the nodes over the segments).
        level: usize,
        /// Its nodes.
        nodes: usize,
        /// The level below's children.
        children: usize,
        /// What it is refused as.
        source: Box<LayerError>,
    },
    /// A node's proof made with other parameters than its level's.
    #[error(
        "a node made with other parameters than its level's: blowup 2^{}, {} queries, {} grinding bits, final polynomial 2^{}, where they are 2^{}, {}, {}, 2^{}",
        .got.log_blowup, .got.num_queries, .got.pow_bits, .got.log_final_poly_len,
        .expected.log_blowup, .expected.num_queries, .expected.pow_bits, .expected.log_final_poly_len
    )]
    OtherParams {
        /// Its level's parameters.
        expected: Box<StarkParams>,
        /// Those it was made with.
        got: Box<StarkParams>,
    },
    /// What the last layer is refused as when it is planned.
    #[error("the last layer: {0}")]
    AtLast(Box<LayerError>),
    /// What one child of a node over several is refused as, named by its segment's index.
    #[error("segment {index}: {source}")]
    Segment {
        /// The segment's index in its statement.
        index: usize,
        /// What it is refused as.
        source: Box<LayerError>,
    },
}

/// `items` (one for each of a layer's AIRs in the order of [`LAYER_AIRS`], or of a
/// layer's child's tables' AIRs) in the order a proof takes their tables, of 2^`log_rows`
/// rows: tallest first, a stable sort.
pub(crate) fn tallest_first<T>(items: impl IntoIterator<Item = T>, log_rows: &[usize]) -> Vec<T> {
    let items: Vec<T> = items.into_iter().collect();
    assert_eq!(items.len(), log_rows.len(), "a height an item");
    let mut items: Vec<(usize, T)> = log_rows.iter().copied().zip(items).collect();
    items.sort_by_key(|(log_rows, _)| Reverse(*log_rows));
    items.into_iter().map(|(_, item)| item).collect()
}

/// A layer's AIRs: its child's transcript, its child's tables' identities (one table) and
/// its child's query phase.
#[derive(Clone, Copy)]
pub(crate) struct LayerAirs<'a> {
    pub transcript: &'a TranscriptAir,
    pub identity: &'a IdentityAir,
    pub queries: &'a QueriesAir,
}

impl<'a> LayerAirs<'a> {
    /// The heights (log2) of its tables, in the order of [`LAYER_AIRS`].
    pub fn heights(&self) -> [usize; 3] {
        [
            self.transcript.log_rows(),
            self.identity.log_rows(),
            self.queries.log_rows(),
        ]
    }

    /// Its AIRs in the order of [`LAYER_AIRS`].
    fn airs(&self) -> [&'a dyn TableAir; 3] {
        [self.transcript, self.identity, self.queries]
    }
}

/// A child's tables' constraint programs, in the order of [`LAYER_AIRS`] (shared by
/// children alike: [`NodeAirs::programs`]).
pub(crate) type ChildPrograms = [Rc<ConstraintProgram>; 3];

/// `f` of each of `airs`, computed once an instance (children alike share one).
pub(crate) fn once_an_instance<'b, T: 'b, V: Clone>(
    airs: impl Iterator<Item = &'b T>,
    f: impl Fn(&T) -> Result<V, LayerError>,
) -> Result<Vec<V>, LayerError> {
    once_a_key(airs, |air| std::ptr::from_ref(air), f)
}

/// `f` of each of `airs`, computed once for each `key` (airs of one key share one value).
pub(crate) fn once_a_key<'b, T: 'b, K: PartialEq, V: Clone>(
    airs: impl Iterator<Item = &'b T>,
    key: impl Fn(&T) -> K,
    f: impl Fn(&T) -> Result<V, LayerError>,
) -> Result<Vec<V>, LayerError> {
    let mut seen: Vec<(K, V)> = Vec::new();
    airs.map(|air| {
        let k = key(air);
        match seen.iter().find(|(seen, _)| *seen == k) {
            Some((_, value)) => Ok(value.clone()),
            None => {
                let value = f(air)?;
                seen.push((k, value.clone()));
                Ok(value)
            }
        }
    })
    .collect()
}

/// The AIRs of a layer over one child or more (a node): each child's three
/// ([`LayerAirs`]), in the children's order. Its proof takes all their tables in that order
/// (child by child, each child's in the order of [`LAYER_AIRS`]) sorted by height, tallest
/// first; tables of one height keep that order. A layer over one child is a node of one.
pub(crate) struct NodeAirs<'a>(pub Vec<LayerAirs<'a>>);

impl<'a> NodeAirs<'a> {
    /// The heights (log2) of its tables, child by child.
    pub fn heights(&self) -> Vec<usize> {
        self.0.iter().flat_map(LayerAirs::heights).collect()
    }

    /// Each child's tables' constraint programs, in the order of [`LAYER_AIRS`], each
    /// compiled once for children that share an AIR (one instance, as children alike do):
    /// what the joint identity of its tables runs ([`IdentityAir::joint`]).
    ///
    /// # Errors
    /// An AIR whose constraints do not compile.
    pub fn programs(&self) -> Result<Vec<ChildPrograms>, LayerError> {
        fn program<A: Air>(air: &A) -> Result<Rc<ConstraintProgram>, LayerError> {
            let program = ConstraintProgram::of(air);
            Ok(Rc::new(
                program.map_err(|e| ChildError::from(IdentityError::from(e)))?,
            ))
        }
        let transcripts = once_an_instance(self.0.iter().map(|c| c.transcript), program)?;
        let identities = once_an_instance(self.0.iter().map(|c| c.identity), program)?;
        let queries = once_an_instance(self.0.iter().map(|c| c.queries), program)?;
        Ok((transcripts.into_iter().zip(identities).zip(queries))
            .map(|((t, i), q)| [t, i, q])
            .collect())
    }

    /// Its tables' AIR keys in its proof's order ([`tables`](Self::tables)'), each computed
    /// once for children that share an AIR (one instance, as children alike do).
    ///
    /// # Errors
    /// An AIR whose constraints have no quotient shape.
    pub fn keys(&self) -> Result<Vec<Digest>, LayerError> {
        fn key<A: TableAir>(air: &A) -> Result<Digest, LayerError> {
            Ok(TableAir::key(air, &TableAir::info(air)?))
        }
        let transcripts = once_an_instance(self.0.iter().map(|c| c.transcript), key)?;
        let identities = once_an_instance(self.0.iter().map(|c| c.identity), key)?;
        let queries = once_an_instance(self.0.iter().map(|c| c.queries), key)?;
        let keys = (0..self.0.len()).flat_map(|c| [transcripts[c], identities[c], queries[c]]);
        Ok(tallest_first(keys, &self.heights()))
    }

    /// Its AIRs, child by child.
    fn airs(&self) -> Vec<&'a dyn TableAir> {
        self.0.iter().flat_map(LayerAirs::airs).collect()
    }

    /// `inputs`, the transcript AIRs' public inputs one child after another (a
    /// [`LayerProof`]'s), cut into each child's.
    ///
    /// # Errors
    /// Another count than the children's transcript AIRs take.
    pub fn split<'i>(&self, inputs: &'i [Felt]) -> Result<Vec<&'i [Felt]>, LinkError> {
        let counts = self.0.iter().map(|c| c.transcript.num_public_inputs());
        split_inputs(counts, inputs)
    }

    /// Which `public-inputs` list of its tables' transcript holds each child's transcript
    /// AIR's inputs, in the children's order: the lists are the underived tables' (each
    /// child's transcript table alone, every other being [`DERIVED`]) in the proof's order.
    pub fn lists(&self) -> Vec<usize> {
        let heights = self.heights();
        let absorbed: Vec<usize> = (tallest_first(0..heights.len(), &heights).into_iter())
            .filter(|&t| !is_derived(t))
            .collect();
        (0..self.0.len())
            .map(|c| {
                let at = absorbed.iter().position(|&t| t == c * LAYER_AIRS.len());
                at.expect("a child's transcript table is absorbed")
            })
            .collect()
    }

    /// Its tables in its proof's order, with each child's public inputs: its transcript
    /// AIR's, its identity AIR's and its query AIR's, those two derived from the first
    /// ([`DERIVED`]).
    pub fn tables(&self, inputs: &[[&'a [Felt]; 3]]) -> Vec<TableStatement<'a>> {
        assert_eq!(inputs.len(), self.0.len(), "a child's inputs a child");
        let inputs = inputs.iter().flatten().copied();
        let statements =
            (self.airs().into_iter().zip(inputs).enumerate()).map(|(t, (air, public_inputs))| {
                TableStatement {
                    air,
                    public_inputs,
                    derived: is_derived(t),
                }
            });
        tallest_first(statements, &self.heights())
    }

    /// Proves its tables as one proof with `params`, on the host (the tables prover has no
    /// device path): the transcript AIRs' public `inputs` (one child after another), each
    /// child's query AIR's `query_inputs` built from them, which its witness `queries` must
    /// take (a prover whose witness differs would make a proof its verifier refuses).
    pub fn prove(
        &self,
        queries: &[&ChildQueries],
        inputs: Vec<Felt>,
        query_inputs: &[Vec<Felt>],
        params: &StarkParams,
    ) -> Result<LayerProof, LayerError> {
        let mut traces = Vec::with_capacity(3 * self.0.len());
        for ((airs, queries), query_inputs) in self.0.iter().zip(queries).zip(query_inputs) {
            if queries.public_inputs().map_err(ChildError::from)? != *query_inputs {
                let (air, what) = ("query", "public inputs");
                return Err(LinkError::Differs { air, what }.into());
            }
            traces.push(airs.transcript.trace().map_err(ChildError::from)?);
            traces.push(airs.identity.trace().map_err(ChildError::from)?);
            traces.push(queries.trace().map_err(ChildError::from)?);
        }
        let traces = tallest_first(traces, &self.heights());
        let identity_inputs: Vec<Vec<Felt>> =
            self.0.iter().map(|c| c.identity.public_inputs()).collect();
        let split = self.split(&inputs)?;
        let tables = self.tables(&statement_inputs(&split, &identity_inputs, query_inputs));
        let tables = prove_tables(LAYER_CONTEXT, &tables, traces, params)?;
        Ok(LayerProof { inputs, tables })
    }

    /// The parameters of the layer at `log_blowup` and `pow_bits` in `role`: the fewest
    /// queries that give its proof `target` bits in `regime`, and the hash and final
    /// polynomial of the role.
    pub fn params(
        &self,
        log_blowup: usize,
        pow_bits: u32,
        target: u32,
        regime: Regime,
        role: LayerRole,
    ) -> Result<StarkParams, ParamsError> {
        let heights = self.heights();
        let shortest = heights.iter().copied().min().unwrap_or_default();
        let airs = tallest_first(self.airs(), &heights);
        let (hash, log_final_poly_len) = match role {
            LayerRole::Inner => (
                MerkleHash::Poseidon2,
                StarkParams::DEFAULT_LOG_FINAL_POLY_LEN,
            ),
            LayerRole::Last(hash) => (hash, MAX_LAST_LOG_FINAL_POLY_LEN),
        };
        let log_final_poly_len = log_final_poly_len.min(shortest);
        let params = StarkParams {
            log_blowup,
            num_queries: 1,
            pow_bits,
            log_final_poly_len,
            hash,
        };
        let circuit = TablesCircuit::for_target(&airs, &params, target, regime)?;
        Ok(StarkParams {
            num_queries: circuit.tables[0].params.num_queries,
            ..params
        })
    }

    /// The record of `proof`, the layer's proof of its `tables` (in its proof's order, with
    /// their public inputs) made with `params`: a [`TablesRecord`] of them, holding the
    /// transcript AIRs' public inputs alone ([`layer_of_record`] reads it back).
    pub fn record(
        &self,
        tables: &[TableStatement<'_>],
        proof: &TablesProof,
        params: &StarkParams,
    ) -> Result<TablesRecord, LayerError> {
        let mut record = TablesRecord::new(tables, params, proof.clone())?;
        let order = tallest_first(0..tables.len(), &self.heights());
        for (table, t) in record.tables.iter_mut().zip(order) {
            if is_derived(t) {
                table.public_inputs.clear();
            }
        }
        Ok(record)
    }
}

/// `inputs` cut into pieces of `counts` values, one after another.
///
/// # Errors
/// Another count than theirs.
pub(crate) fn split_inputs(
    counts: impl IntoIterator<Item = usize>,
    inputs: &[Felt],
) -> Result<Vec<&[Felt]>, LinkError> {
    let counts: Vec<usize> = counts.into_iter().collect();
    let expected = counts.iter().sum();
    if inputs.len() != expected {
        return Err(LinkError::Length {
            what: "the transcript AIRs' public inputs",
            expected,
            got: inputs.len(),
        });
    }
    let mut rest = inputs;
    Ok(counts
        .into_iter()
        .map(|count| {
            let (these, later) = rest.split_at(count);
            rest = later;
            these
        })
        .collect())
}

/// Each child's public inputs of its three tables: its transcript AIR's (`split`), its
/// identity AIR's and its query AIR's.
pub(crate) fn statement_inputs<'a>(
    split: &[&'a [Felt]],
    identity_inputs: &'a [Vec<Felt>],
    query_inputs: &'a [Vec<Felt>],
) -> Vec<[&'a [Felt]; 3]> {
    (split.iter().zip(identity_inputs).zip(query_inputs))
        .map(|((inputs, identity), queries)| [*inputs, identity.as_slice(), queries.as_slice()])
        .collect()
}

/// The layer's AIRs (of [`LAYER_AIRS`]) whose public inputs its verifier builds from the
/// transcript AIR's, so that its tables' transcript does not absorb them
/// (`TableStatement::derived`) and a layer's record leaves them out, and what a record
/// that holds some is refused as.
const DERIVED: [(usize, &str); 2] = [
    (1, "the identity table's recorded public inputs"),
    (2, "the query table's recorded public inputs"),
];

/// Whether table `t` of a node's tables (child by child, each child's in the order of
/// [`LAYER_AIRS`]) is [`DERIVED`].
fn is_derived(t: usize) -> bool {
    DERIVED.iter().any(|&(k, _)| k == t % LAYER_AIRS.len())
}

// A child's transcript table is its one underived table, whose inputs its layer's tables
// transcript absorbs ([`NodeAirs::lists`]).
const _: () = assert!(
    DERIVED.len() == LAYER_AIRS.len() - 1 && DERIVED[0].0 != 0 && DERIVED[1].0 != 0,
    "the transcript AIR is the one underived table"
);

/// The layer's proof that `record` holds ([`NodeAirs::record`]), with the parameters it was
/// made with, for a layer whose children's tables have these heights (log2, a child's in
/// the order of [`LAYER_AIRS`]): three tables a child, of those heights, in the proof's
/// order, the transcript AIRs' public inputs recorded (read back one child after another)
/// and no other's (its verifier builds them from those).
///
/// # Errors
/// Another number of tables, a table of another height, or an identity or query table with
/// public inputs.
pub(crate) fn layer_of_record(
    heights: &[[usize; 3]],
    record: &TablesRecord,
) -> Result<(LayerProof, StarkParams), LayerError> {
    let shape_error = |what, expected, got| TablesError::Shape {
        what,
        expected,
        got,
    };
    let heights: Vec<usize> = heights.iter().flatten().copied().collect();
    if record.tables.len() != heights.len() {
        return Err(shape_error("the layer's tables", heights.len(), record.tables.len()).into());
    }
    let order = tallest_first(0..heights.len(), &heights);
    let mut transcripts = vec![&[][..]; heights.len() / LAYER_AIRS.len()];
    for (&t, table) in order.iter().zip(&record.tables) {
        if table.log_rows != heights[t] {
            return Err(shape_error("a table's rows (log2)", heights[t], table.log_rows).into());
        }
        let recorded = table.public_inputs.len();
        match DERIVED.iter().find(|&&(k, _)| k == t % LAYER_AIRS.len()) {
            Some(&(_, what)) if recorded != 0 => return Err(shape_error(what, 0, recorded).into()),
            Some(_) => {}
            None => transcripts[t / LAYER_AIRS.len()] = &table.public_inputs,
        }
    }
    let layer = LayerProof {
        inputs: transcripts.concat(),
        tables: record.proof.clone(),
    };
    Ok((layer, record.params))
}

impl Child {
    /// Its three AIRs, which a layer over it proves.
    pub(crate) fn layer_airs(&self) -> LayerAirs<'_> {
        LayerAirs {
            transcript: &self.transcript,
            identity: &self.identity,
            queries: &self.queries.air,
        }
    }

    /// Proves its three AIRs, once the transcript AIR's public inputs link, as one proof of
    /// their tables with `params`, on the host: [`prove_node`](crate::prove_node) of it alone.
    ///
    /// # Errors
    /// A trace its AIR does not take or the prover refuses (none for a `Child::of_segment`
    /// built).
    pub fn prove(&self, params: &StarkParams) -> Result<LayerProof, LayerError> {
        crate::prove_node(std::slice::from_ref(self), params)
    }

    /// The parameters of its layer at `log_blowup` and `pow_bits` in `role`: the fewest
    /// queries that give the layer's proof `target` bits in `regime`, and the hash and final
    /// polynomial of the role ([`node_params`](crate::node_params) of it alone).
    ///
    /// # Errors
    /// A blowup or grinding the AIRs cannot be proven with, or a target out of reach.
    pub fn layer_params(
        &self,
        log_blowup: usize,
        pow_bits: u32,
        target: u32,
        regime: Regime,
        role: LayerRole,
    ) -> Result<StarkParams, ParamsError> {
        NodeAirs(vec![self.layer_airs()]).params(log_blowup, pow_bits, target, regime, role)
    }

    /// The query AIR's public inputs that the transcript AIR's `inputs` give (once they
    /// link): the roots and the final polynomial it absorbed, the positions' digest of the
    /// query AIR's positions (its draws' low bits when [`Child::of_segment`] took it), γ, z
    /// and the DEEP sums of the claims it absorbed, and each β it read.
    ///
    /// # Errors
    /// Inputs too short for the reads, a message its layout lacks, or a root or list of
    /// another length than the query AIR takes.
    pub fn query_inputs(&self, inputs: &[Felt]) -> Result<Vec<Felt>, LayerError> {
        query_inputs(&self.queries.air, &self.transcript, &self.messages, inputs)
    }

    /// The transcript of `layer`'s verifier, its layer's proof made with `params`: every
    /// permutation and message (`None` for a layer committed with Keccak-256), what a layer
    /// verifying this one recomputes ([`TranscriptAir`] takes it as it takes a segment's).
    ///
    /// # Errors
    /// Inputs that do not give the query AIR's, or a proof of another shape than its tables.
    pub fn layer_transcript(
        &self,
        layer: &LayerProof,
        params: &StarkParams,
    ) -> Result<Option<TranscriptLayout>, LayerError> {
        with_node_tables(std::slice::from_ref(self), &layer.inputs, |_, _, tables| {
            Ok(tables_transcript(
                LAYER_CONTEXT,
                tables,
                &layer.tables,
                params,
            )?)
        })
    }

    /// The transcript of any layer's verifier over this child made with `params`, the
    /// proof's values taken as zero ([`tables_transcript_layout`]): the same permutations
    /// and framing as [`layer_transcript`](Self::layer_transcript)'s, other data.
    ///
    /// # Errors
    /// Parameters its AIRs cannot be proven with.
    pub fn layer_transcript_layout(
        &self,
        params: &StarkParams,
    ) -> Result<Option<TranscriptLayout>, LayerError> {
        let inputs = self.transcript.public_inputs();
        with_node_tables(std::slice::from_ref(self), &inputs, |_, _, tables| {
            Ok(tables_transcript_layout(LAYER_CONTEXT, tables, params)?)
        })
    }

    /// The record of `layer`, its layer's proof made with `params`: [`node_record`](crate::node_record)
    /// of it alone ([`record_layer`] reads it back, and its bytes [`read_layer`]).
    ///
    /// # Errors
    /// Parameters its AIRs cannot be proven with, or inputs that do not give the query
    /// AIR's.
    pub fn layer_record(
        &self,
        layer: &LayerProof,
        params: &StarkParams,
    ) -> Result<TablesRecord, LayerError> {
        crate::node_record(std::slice::from_ref(self), layer, params)
    }
}

/// The key of a child's AIR (`TableAir::key`); an AIR without a quotient shape has none.
pub(crate) fn child_key<A: Air>(child: &A) -> Result<Digest, LayerError> {
    let info = TableAir::info(child).map_err(|e| ChildError::from(VerifierError::from(e)))?;
    Ok(TableAir::key(child, &info))
}

/// What a layer's verifier builds from the child alone, before it reads the layer's
/// inputs: the transcript AIR and the messages of the transcript's layout for the child's
/// shape, that shape, the child's constraint program, its identity AIR on claims of zero
/// (whose columns every child's identity keeps) and its AIR's key (one for children that
/// share the frame, whose AIRs have one key).
pub(crate) struct Frame {
    pub transcript: TranscriptAir,
    messages: Vec<Message>,
    shape: ChildShape,
    program: ConstraintProgram,
    identity: IdentityAir,
    key: Digest,
}

impl Frame {
    /// The frame of a child of `child`'s AIR, whose key is `key` ([`child_key`]: a verifier
    /// keys each child's AIR once), `statement` and `child_params`.
    pub fn of<A: Air>(
        child: &A,
        key: Digest,
        statement: &SegmentStatement<'_>,
        child_params: &StarkParams,
    ) -> Result<Self, LayerError> {
        if child_params.hash != MerkleHash::Poseidon2 {
            return Err(ChildError::NotPoseidon2.into());
        }
        let TranscriptLayout { steps, messages } =
            transcript_layout(child, &key, statement, child_params)
                .map_err(ChildError::from)?
                .ok_or(ChildError::NotPoseidon2)?;
        let shape = child_shape(child, child_params).map_err(ChildError::from)?;
        let program =
            ConstraintProgram::of(child).map_err(|e| ChildError::from(IdentityError::from(e)))?;
        let zeros = |n| vec![Ext3::ZERO; n];
        let ood = OodValues {
            trace_z: zeros(shape.trace_width),
            trace_zw: zeros(shape.trace_width),
            quotient_z: zeros(shape.quotient_width),
        };
        let public_inputs = vec![Felt::ZERO; child.num_public_inputs()];
        let claims = OodClaims::of(child, &public_inputs, Ext3::ZERO, Ext3::ZERO, ood);
        let identity =
            IdentityAir::with_program(child, program.clone(), claims).map_err(ChildError::from)?;
        Ok(Self {
            transcript: TranscriptAir::new(&steps, child_params.pow_bits)
                .map_err(ChildError::from)?,
            messages,
            shape,
            program,
            identity,
            key,
        })
    }

    /// The heights (log2) of the layer's tables, in the order of [`LAYER_AIRS`]: the
    /// child's alone, for the query AIR's height depends on how many draws there are
    /// (`num_queries`), not on their values.
    pub fn child_heights(&self, num_queries: usize) -> Result<[usize; 3], LayerError> {
        let identity = identity_log_rows(&[self.program.instructions().len()]);
        let queries =
            QueriesAir::new(&self.shape, &vec![0; num_queries]).map_err(ChildError::from)?;
        Ok([self.transcript.log_rows(), identity, queries.log_rows()])
    }

    /// The identity and query AIRs of every layer over a child of this frame's AIR with
    /// `num_queries` queries, with their values zero (the claims, the positions): their
    /// definitions, and so the layer's tables' shapes, keys and transcript layout, are those
    /// of every such layer; only their public inputs differ.
    pub fn zero_airs(&self, num_queries: usize) -> Result<(IdentityAir, QueriesAir), LayerError> {
        let queries = QueriesAir::new(&self.shape, &vec![0; num_queries]);
        Ok((self.identity.clone(), queries.map_err(ChildError::from)?))
    }

    /// The identity and query AIRs, and the query AIR's public inputs, that the transcript
    /// AIR's public `inputs` give, once they link. `child` is the AIR this frame was built
    /// from or one of the same key (the frame's statement data and identity are its).
    pub fn airs<A: Air>(
        &self,
        child: &A,
        statement: &SegmentStatement<'_>,
        child_params: &StarkParams,
        inputs: &[Felt],
    ) -> Result<(IdentityAir, QueriesAir, Vec<Felt>), LayerError> {
        let Self {
            transcript,
            messages,
            shape,
            identity,
            key,
            ..
        } = self;
        if inputs.len() != transcript.num_public_inputs() {
            return Err(LinkError::Length {
                what: "the transcript AIR's public inputs",
                expected: transcript.num_public_inputs(),
                got: inputs.len(),
            }
            .into());
        }
        let (reads, data) = inputs.split_at(transcript.reads());

        // The query AIR at the positions of the draws, the transcript's last reads.
        let draws = &reads[reads.len().saturating_sub(child_params.num_queries)..];
        let queries = QueriesAir::new(shape, &positions_of(draws, shape.log_lde))
            .map_err(ChildError::from)?;

        debug_assert_eq!(
            child_key(child).ok().as_ref(),
            Some(key),
            "a frame's child has the frame's key"
        );
        let statement_data = keyed_statement_data(key, statement, child_params);
        Links {
            transcript,
            queries: &queries,
            messages,
            statement_data: &statement_data,
        }
        .check(inputs)?;

        // The identity AIR on the claims the transcript absorbed, and the query AIR's
        // inputs.
        let ood = Absorbed { messages, data }.ood(0)?;
        let ext = |at: usize| Ext3::new([reads[at], reads[at + 1], reads[at + 2]]);
        let (alpha, z) = (ext(READ_ALPHA), ext(READ_Z));
        let claims = OodClaims::of(child, statement.public_inputs, alpha, z, ood);
        let identity = identity.with_claims(claims).map_err(ChildError::from)?;
        let query_inputs = query_inputs(&queries, transcript, messages, inputs)?;
        Ok((identity, queries, query_inputs))
    }
}

/// The query AIR's public inputs that the transcript AIR's public `inputs` give, read by the
/// child's `messages`: the one construction of a layer's prover and its verifier.
///
/// # Errors
/// Inputs too short for the reads, a message the layout lacks, or a root or list of another
/// length than the query AIR takes.
pub(crate) fn query_inputs(
    queries: &QueriesAir,
    transcript: &TranscriptAir,
    messages: &[Message],
    inputs: &[Felt],
) -> Result<Vec<Felt>, LayerError> {
    let rounds = queries.rounds();
    let (reads, data) = inputs.split_at(transcript.reads().min(inputs.len()));
    if reads.len() < READ_BETAS + 3 * rounds {
        let what = "the transcript AIR's reads, at least";
        let (expected, got) = (READ_BETAS + 3 * rounds, reads.len());
        return Err(LinkError::Length {
            what,
            expected,
            got,
        }
        .into());
    }
    let absorbed = Absorbed { messages, data };
    let trees = queries.deep().openings().trees().len();
    let roots = (0..trees)
        .map(|k| {
            let root = match k {
                0 => absorbed.payload(label::TRACE_ROOT, 0)?,
                1 => absorbed.payload(label::QUOTIENT_ROOT, 0)?,
                _ => absorbed.payload(fri_label::LAYER_ROOT, k - 2)?,
            };
            FeltDigest::try_from(root).map_err(|_| LinkError::Length {
                what: "a root the transcript absorbed",
                expected: DIGEST_ELEMENTS,
                got: root.len(),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let ext = |at: usize| Ext3::new([reads[at], reads[at + 1], reads[at + 2]]);
    let (gamma, z) = (ext(READ_GAMMA), ext(READ_Z));
    // Each height's DEEP function: its tables' claims, concatenated.
    let tables: usize = queries.deep().heights().map(|(count, _)| count).sum();
    let oods = (0..tables)
        .map(|k| absorbed.ood(k))
        .collect::<Result<Vec<_>, _>>()?;
    let mut rest = &oods[..];
    let heights = (queries.deep().heights()).map(|(count, log_rows)| {
        let (these, later) = rest.split_at(count);
        rest = later;
        (these, log_rows)
    });
    let deeps = height_deep_coefficients(heights, z, gamma);
    let claims = DeepClaims::of(gamma, &deeps);
    let betas: Vec<Ext3> = (0..rounds).map(|k| ext(READ_BETAS + 3 * k)).collect();
    let final_poly = absorbed.exts(fri_label::FINAL_POLY, 0)?;
    let inputs = queries.public_inputs(&roots, &claims, &betas, &final_poly);
    Ok(inputs.map_err(ChildError::from)?)
}

/// Checks that `layer` proves that a proof of `child` for `statement`, made with
/// `child_params`, verifies: [`verify_node`](crate::verify_node) over that segment alone.
/// `policy` applies to the child's parameters and the layer's (so one that pins
/// parameters takes only a child and a layer of those).
///
/// Returns the layer's circuit, whose figure the policy judged.
///
/// # Errors
/// A child's AIR, statement or parameters that make no shape the layer takes, one the
/// policy refuses, inputs that do not link, or a proof that does not verify.
pub fn verify_layer<A: Air>(
    child: &A,
    statement: &SegmentStatement<'_>,
    child_params: &StarkParams,
    layer: &LayerProof,
    params: &StarkParams,
    policy: &VerifyPolicy,
) -> Result<TablesCircuit, LayerError> {
    let segment = Segment::new(child, statement, child_params);
    crate::verify_node(&[segment], layer, params, policy)
}

/// [`record_layer`], then [`verify_layer`] of what it reads, building the child's frame
/// once: [`verify_node_record`](crate::verify_node_record) over that segment alone.
///
/// # Errors
/// As [`record_layer`] and [`verify_layer`].
pub fn verify_record<A: Air>(
    child: &A,
    statement: &SegmentStatement<'_>,
    child_params: &StarkParams,
    record: &TablesRecord,
    policy: &VerifyPolicy,
) -> Result<TablesCircuit, LayerError> {
    let segment = Segment::new(child, statement, child_params);
    crate::verify_node_record(&[segment], record, policy)
}

/// Reads a layer's proof of a child of `child`'s AIR, `statement` and `child_params` from
/// `bytes`, a [`TablesRecord`]'s ([`record_layer`]).
///
/// # Errors
/// Bytes that are no tables proof, or as [`record_layer`].
pub fn read_layer<A: Air>(
    child: &A,
    statement: &SegmentStatement<'_>,
    child_params: &StarkParams,
    bytes: &[u8],
) -> Result<(LayerProof, StarkParams), LayerError> {
    record_layer(
        child,
        statement,
        child_params,
        &TablesRecord::from_bytes(bytes)?,
    )
}

/// The layer's proof of a child of `child`'s AIR, `statement` and `child_params` that
/// `record` holds ([`Child::layer_record`]), with the parameters it was made with;
/// verify it with [`verify_layer`]. The record holds the tables in the proof's order,
/// tallest first; the child alone fixes each AIR's height, so the transcript table's public
/// inputs go back to its AIR (the identity and query tables' are not recorded: the verifier
/// builds them from those). The widths the record states are not checked here: [`verify_layer`]
/// refuses claims or rows of any other width than its AIRs'. The parameters are the
/// prover's choice: the policy [`verify_layer`] applies is what holds them to a floor.
///
/// # Errors
/// A child that makes no layer, tables other than the three of the heights the child gives
/// them, or an identity or query table with public inputs.
pub fn record_layer<A: Air>(
    child: &A,
    statement: &SegmentStatement<'_>,
    child_params: &StarkParams,
    record: &TablesRecord,
) -> Result<(LayerProof, StarkParams), LayerError> {
    let segment = Segment::new(child, statement, child_params);
    crate::layer_child::read_tree(&[segment], &[], record)
}
