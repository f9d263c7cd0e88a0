//! The steps prover and verifier must take identically: every transcript step (each label
//! is written here and nowhere else; FRI's rounds are `ballast-fri`'s), the out-of-domain
//! point, and the constraint values at a point.

use std::borrow::Cow;

use ballast_air::{
    Air, ConstraintBuilder, ConstraintInfo, Domain, Frame, PeriodicColumn, SymbolicAir,
    periodic_lengths,
};
use ballast_cpu::Kernels;
use ballast_field::{Ext3, Felt, Halve};
use ballast_keccak::{HashDomain, keccak256_concat, keccak256_many};
use ballast_merkle::Digest;
use ballast_ntt::LdePlan;
use ballast_transcript::Transcript;

use crate::quotient::Composition;
use crate::{MerkleHash, OodValues, ParamsError, StarkParams};

/// The protocol version, bound into every transcript and written in every proof.
pub const PROTOCOL_VERSION: u16 = 19;

/// Domain separator of the STARK transcript.
const DOMAIN: &[u8] = b"ballast-stark";

/// Where a segment sits in a continuation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentPosition {
    /// Zero-based segment index.
    pub index: usize,
    /// Number of segments in the statement.
    pub count: usize,
}

/// What one segment's proof is about, besides its AIR: the statement it belongs to, its
/// place in it, and its public inputs. The transcript binds all three before any challenge.
#[derive(Clone, Copy, Debug)]
pub struct SegmentStatement<'a> {
    /// The statement's workload tag and encoding (everything but its outcome).
    pub context: &'a [u8],
    /// The segment's place in the statement.
    pub position: SegmentPosition,
    /// The values the segment's constraints read as public inputs.
    pub public_inputs: &'a [Felt],
}

/// What a run of the protocol's transcript is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Run {
    /// A proof's, proven or verified.
    Proof,
    /// A shape's: what any proof of it absorbs, and the layout of its permutations, with
    /// none applied and every challenge zero ([`Transcript::shape`]).
    Shape,
}

impl Run {
    /// A new transcript for this run, hashing with `hash`.
    pub(crate) fn transcript(self, hash: MerkleHash) -> Transcript {
        match self {
            Self::Proof => Transcript::new(hash, DOMAIN),
            Self::Shape => Transcript::shape(hash, DOMAIN),
        }
    }
}

/// A transcript for `run` bound to everything the proof is about, before any challenge:
/// protocol version, the statement, the AIR's `key` ([`air_key`]), every parameter, the
/// segment's position and the public inputs.
pub(crate) fn bind(
    run: Run,
    key: &Digest,
    b: &SegmentStatement<'_>,
    params: &StarkParams,
) -> Transcript {
    let mut t = run.transcript(params.hash);
    t.absorb_u64("protocol-version", u64::from(PROTOCOL_VERSION));
    t.absorb("statement", b.context);
    t.absorb("air-key", key);
    absorb_params(&mut t, params);
    t.absorb_u64("segment-index", b.position.index as u64);
    t.absorb_u64("segment-count", b.position.count as u64);
    t.absorb_felts(label::PUBLIC_INPUTS, b.public_inputs);
    t
}

/// A transcript for `run` bound to everything a proof of several tables is about, before any
/// challenge: protocol version, the proof's kind (which keeps it apart from every segment's
/// transcript from the second message on), the statement, every parameter, the number of
/// tables, and each table's AIR key and public inputs (`None` for a derived table's:
/// `TableStatement::derived`), tallest first.
pub(crate) fn bind_tables(
    run: Run,
    context: &[u8],
    tables: &[(Digest, Option<&[Felt]>)],
    params: &StarkParams,
) -> Transcript {
    let mut t = run.transcript(params.hash);
    t.absorb_u64("protocol-version", u64::from(PROTOCOL_VERSION));
    t.absorb("proof-kind", b"tables");
    t.absorb("statement", context);
    absorb_params(&mut t, params);
    t.absorb_u64("table-count", tables.len() as u64);
    for (key, public_inputs) in tables {
        t.absorb("air-key", key);
        if let Some(public_inputs) = public_inputs {
            t.absorb_felts(label::PUBLIC_INPUTS, public_inputs);
        }
    }
    t
}

/// The data a Poseidon2 proof's transcript absorbs before the trace's root, from `air`,
/// `statement` and `params` alone (what binding the transcript absorbs: the version, the
/// statement, the AIR's key, every parameter, the position, the public inputs;
/// `ballast_transcript::Transcript::data`): what a recursive verifier holds a child's
/// transcript to.
///
/// # Errors
/// An AIR without a quotient shape.
pub fn statement_data<A: Air>(
    air: &A,
    statement: &SegmentStatement<'_>,
    params: &StarkParams,
) -> Result<Vec<Felt>, ParamsError> {
    let info = ConstraintInfo::of(air)?;
    Ok(keyed_statement_data(
        &air_key(air, &info),
        statement,
        params,
    ))
}

/// [`statement_data`] of an AIR whose key is `key` (`TableAir::key`'s): a verifier of
/// several children of one AIR keys it once.
pub fn keyed_statement_data(
    key: &Digest,
    statement: &SegmentStatement<'_>,
    params: &StarkParams,
) -> Vec<Felt> {
    let params = StarkParams {
        hash: MerkleHash::Poseidon2,
        ..*params
    };
    // A Poseidon2 transcript always has its data.
    bind(Run::Shape, key, statement, &params)
        .data()
        .unwrap_or_default()
}

/// How an AIR's key binds its periodic columns and its public columns' cells, the byte
/// before them: by each periodic column's digest and each cell, or by the source its code
/// builds them from (`Air::columns_source`).
const COLUMNS_BY_VALUES: u8 = 0;
const COLUMNS_BY_SOURCE: u8 = 1;

/// The AIR's **key**: a digest of its whole definition ([`definition_digest`]), its
/// identity, log₂ rows, each constraint's domain and degree (`info`), every periodic
/// column's length, every public column's count of cells, then a byte and either each
/// periodic column's digest ([`periodic_digests`]) and each public column's cells (each row
/// and the public input it holds), or the source the AIR builds them from
/// (`Air::columns_source`, led by its length; versions 14 and 15), and its constraints as
/// data ([`SymbolicAir::encode`]: the width, every node, each constraint's domain and node),
/// each part led by its length. Two AIR instances whose constraints differ in anything, a
/// constant they read from themselves included, have different keys but through a
/// Keccak-256 collision (for an AIR with a source, given that its columns are a function of
/// it: `Air::columns_source`). The key depends on the AIR alone, not on a proof: a recursive
/// verifier can hold its child's as a constant.
pub(crate) fn air_key<A: Air>(air: &A, info: &ConstraintInfo) -> Digest {
    let id = air.id().as_bytes();
    let lengths = periodic_lengths(air);
    let public = air.public_columns();
    let mut bytes = Vec::new();
    bytes.extend((id.len() as u64).to_le_bytes());
    bytes.extend(id);
    bytes.extend((air.log_rows() as u64).to_le_bytes());
    bytes.extend((info.constraints.len() as u64).to_le_bytes());
    for &(domain, degree) in &info.constraints {
        bytes.push(domain as u8);
        bytes.extend(degree.to_le_bytes());
    }
    bytes.extend((lengths.len() as u64).to_le_bytes());
    for len in lengths {
        bytes.extend((len as u64).to_le_bytes());
    }
    bytes.extend((public.len() as u64).to_le_bytes());
    for column in public.iter() {
        bytes.extend((column.cells.len() as u64).to_le_bytes());
    }
    match air.columns_source() {
        Some(source) => {
            bytes.push(COLUMNS_BY_SOURCE);
            bytes.extend((source.len() as u64).to_le_bytes());
            bytes.extend(source);
        }
        None => {
            bytes.push(COLUMNS_BY_VALUES);
            // A sparse AIR's columns as its verifier evaluates them: from their entries.
            let periodic = match air.sparse_periodic() {
                Some(sparse) => Cow::Owned(sparse.columns()),
                None => air.periodic_columns(),
            };
            for digest in periodic_digests(Kernels::active(), &periodic) {
                bytes.extend(digest);
            }
            for cell in public.iter().flat_map(|column| &column.cells) {
                bytes.extend((cell.row as u64).to_le_bytes());
                bytes.extend((cell.input as u64).to_le_bytes());
            }
        }
    }
    bytes.extend(SymbolicAir::of(air).encode());
    definition_digest(Kernels::active(), &bytes)
}

/// Bytes of an AIR's definition hashed in one message ([`definition_digest`]).
const KEY_CHUNK_BYTES: usize = 1024;

/// The key of an AIR's `definition` (version 17): Keccak-256 ([`HashDomain::AirKey`]) of
/// its length, then the digest of each chunk of [`KEY_CHUNK_BYTES`] (Keccak-256,
/// [`HashDomain::AirKeyChunk`]), the last padded with zeros. The chunks are hashed side by
/// side on `kernels`' lanes, where one message of the whole definition (up to a few hundred
/// kilobytes for a layer's AIRs) would be one sponge on one lane.
fn definition_digest(kernels: Kernels, definition: &[u8]) -> Digest {
    // The whole chunks hashed where they lie; only the last, partial one is copied to pad.
    let (whole, tail) = definition.split_at(definition.len() / KEY_CHUNK_BYTES * KEY_CHUNK_BYTES);
    let mut last = [0; KEY_CHUNK_BYTES];
    last[..tail.len()].copy_from_slice(tail);
    let full = whole.len() / KEY_CHUNK_BYTES;
    let mut digests = vec![[0; 32]; full + usize::from(!tail.is_empty())];
    let (whole_digests, last_digest) = digests.split_at_mut(full);
    let chunk = HashDomain::AirKeyChunk;
    keccak256_many(kernels, chunk, whole, KEY_CHUNK_BYTES, whole_digests);
    let last = &last[..KEY_CHUNK_BYTES * last_digest.len()];
    keccak256_many(kernels, chunk, last, KEY_CHUNK_BYTES, last_digest);
    let length = (definition.len() as u64).to_le_bytes();
    keccak256_concat(HashDomain::AirKey, &[&length, digests.as_flattened()])
}

/// Each periodic column's digest: Keccak-256 ([`HashDomain::PeriodicColumn`]) of its values
/// as little-endian words. Columns of one length are hashed together on `kernels`' lanes, so
/// a verifier that rebuilds a layer's AIRs pays a fraction of one sponge over all their
/// values.
fn periodic_digests(kernels: Kernels, periodic: &[PeriodicColumn]) -> Vec<Digest> {
    let mut digests = vec![[0; 32]; periodic.len()];
    let mut lengths: Vec<usize> = periodic.iter().map(|c| c.values.len()).collect();
    lengths.sort_unstable();
    lengths.dedup();
    for len in lengths {
        let columns: Vec<usize> = (0..periodic.len())
            .filter(|&i| periodic[i].values.len() == len)
            .collect();
        let mut bytes = vec![0; columns.len() * 8 * len];
        for (message, &i) in bytes.chunks_exact_mut(8 * len).zip(&columns) {
            for (word, value) in message.chunks_exact_mut(8).zip(&periodic[i].values) {
                word.copy_from_slice(&value.as_u64().to_le_bytes());
            }
        }
        let mut out = vec![[0; 32]; columns.len()];
        keccak256_many(
            kernels,
            HashDomain::PeriodicColumn,
            &bytes,
            8 * len,
            &mut out,
        );
        for (i, digest) in columns.into_iter().zip(out) {
            digests[i] = digest;
        }
    }
    digests
}

/// Absorbs every parameter. The exhaustive destructure makes a new field a compile error
/// here until the transcript binds it.
fn absorb_params(t: &mut Transcript, params: &StarkParams) {
    let StarkParams {
        log_blowup,
        num_queries,
        pow_bits,
        log_final_poly_len,
        hash,
    } = *params;
    t.absorb_u64("log-blowup", log_blowup as u64);
    t.absorb_u64("num-queries", num_queries as u64);
    t.absorb_u64("pow-bits", u64::from(pow_bits));
    t.absorb_u64("log-final-poly-len", log_final_poly_len as u64);
    t.absorb_u64("merkle-hash", u64::from(hash.id()));
}

/// Every constraint's value, in assertion order, at a point of the extension field.
pub(crate) fn constraint_values<A: Air>(
    air: &A,
    current: &[Ext3],
    next: &[Ext3],
    periodic: &[Ext3],
    public_inputs: &[Felt],
) -> Vec<Ext3> {
    let values = |row: &[Ext3]| row.iter().map(|&v| Value(v)).collect::<Vec<_>>();
    let public: Vec<Value> = public_inputs.iter().map(|&v| Value::from(v)).collect();
    let (current, next, periodic) = (values(current), values(next), values(periodic));
    let frame = Frame {
        current: &current,
        next: &next,
        periodic: &periodic,
        public_inputs: &public,
    };
    let mut builder = ValueBuilder(Vec::new());
    air.eval(&frame, &mut builder);
    builder.0
}

/// Collects constraint values in the extension field, in assertion order.
struct ValueBuilder(Vec<Ext3>);

impl ConstraintBuilder for ValueBuilder {
    type Expr = Value;

    #[inline(never)]
    fn assert_zero(&mut self, _domain: Domain, value: Value) {
        self.0.push(value.0);
    }
}

/// An extension element whose arithmetic is called, not inlined, as [`ValueBuilder`]'s
/// assertions are. The verifier evaluates an AIR at one point a proof; with every operation
/// inlined, a large AIR's evaluation is one function that LLVM's code generator takes
/// minutes to compile.
#[derive(Clone, Copy)]
struct Value(Ext3);

impl From<Felt> for Value {
    fn from(value: Felt) -> Self {
        Self(value.into())
    }
}

macro_rules! out_of_line {
    ($($trait:ident $method:ident $assign_trait:ident $assign:ident $op:tt),*) => {$(
        impl std::ops::$trait for Value {
            type Output = Self;
            #[inline(never)]
            fn $method(self, other: Self) -> Self {
                Self(self.0 $op other.0)
            }
        }
        impl std::ops::$assign_trait for Value {
            fn $assign(&mut self, other: Self) {
                *self = std::ops::$trait::$method(*self, other);
            }
        }
    )*};
}
out_of_line!(Add add AddAssign add_assign +, Sub sub SubAssign sub_assign -, Mul mul MulAssign mul_assign *);

impl std::ops::Neg for Value {
    type Output = Self;
    #[inline(never)]
    fn neg(self) -> Self {
        Self(-self.0)
    }
}

impl Halve for Value {
    #[inline(never)]
    fn halve(self) -> Self {
        Self(self.0.halve())
    }
}

/// Whether the out-of-domain claims satisfy the constraints at z: the constraints evaluated
/// on the claimed trace values, combined with α's powers and divided by their zerofiers,
/// equal the quotient recombined from its claimed chunks. `periodic` is the periodic
/// columns at z ([`periodic_at`](crate::periodic_at)). The verifier's check, which the
/// prover makes first.
pub(crate) fn ood_identity_holds<A: Air>(
    air: &A,
    info: &ConstraintInfo,
    composition: &Composition,
    ood: &OodValues,
    periodic: &[Ext3],
    public_inputs: &[Felt],
    z: Ext3,
) -> bool {
    let log_rows = air.log_rows();
    let values = constraint_values(air, &ood.trace_z, &ood.trace_zw, periodic, public_inputs);
    values.len() == info.constraints.len()
        && composition.combine_at(info, &values, z, log_rows)
            == recombine_quotient(&ood.quotient_z, z, log_rows)
}

/// Q(z) = Σ_j z^(j·n)·Q_j(z), with Q_j(z) rebuilt from its three coordinate columns.
fn recombine_quotient(quotient_z: &[Ext3], z: Ext3, log_rows: usize) -> Ext3 {
    let z_n = z.pow(1 << log_rows);
    quotient_z
        .chunks_exact(Ext3::DEGREE)
        .rev()
        .fold(Ext3::ZERO, |acc, coords| {
            let chunk = coords
                .iter()
                .enumerate()
                .fold(Ext3::ZERO, |s, (c, &v)| s + Ext3::basis(c) * v);
            acc * z_n + chunk
        })
}

/// The labels of the messages a segment's transcript absorbs from its statement and its
/// proof, by which a recursive verifier finds them among the transcript's data
/// (`ballast_transcript::Message`; FRI's are `ballast_fri::label`'s).
pub mod label {
    /// The segment's public inputs.
    pub const PUBLIC_INPUTS: &str = "public-inputs";
    /// The trace's root.
    pub const TRACE_ROOT: &str = "trace-root";
    /// The quotient's root.
    pub const QUOTIENT_ROOT: &str = "quotient-root";
    /// The trace's values at z.
    pub const OOD_TRACE_Z: &str = "ood-trace-z";
    /// The trace's values at zω.
    pub const OOD_TRACE_ZW: &str = "ood-trace-zw";
    /// The quotient's values at z.
    pub const OOD_QUOTIENT_Z: &str = "ood-quotient-z";
    /// The proof-of-work nonce, once checked.
    pub const POW_NONCE: &str = "pow-nonce";
}

/// Step 1: absorbs the trace root and draws α.
pub(crate) fn draw_alpha(t: &mut Transcript, trace_root: &Digest) -> Ext3 {
    t.absorb_root(label::TRACE_ROOT, trace_root);
    t.challenge_ext("alpha")
}

/// Step 2: absorbs the quotient root and draws the out-of-domain point z, redrawing while z
/// or z·ω would fall in the trace domain H or the LDE coset g·H' (where a zerofier or a DEEP
/// denominator vanishes). A draw is redrawn with probability below 2^-150.
pub(crate) fn draw_ood_point(
    t: &mut Transcript,
    quotient_root: &Digest,
    log_rows: usize,
    log_blowup: usize,
) -> Ext3 {
    t.absorb_root(label::QUOTIENT_ROOT, quotient_root);
    let n = 1u64 << log_rows;
    let lde_size = n << log_blowup;
    let shift_inv = Ext3::from(LdePlan::SHIFT.inverse());
    loop {
        let z = t.challenge_ext("ood-point");
        let in_trace_domain = z.pow(n) == Ext3::ONE;
        let in_lde_coset = (z * shift_inv).pow(lde_size) == Ext3::ONE;
        if !in_trace_domain && !in_lde_coset {
            return z;
        }
    }
}

/// Step 3: absorbs the out-of-domain claims, a table's after another's, and draws γ.
pub(crate) fn draw_gamma(t: &mut Transcript, oods: &[OodValues]) -> Ext3 {
    for ood in oods {
        t.absorb_ext(label::OOD_TRACE_Z, &ood.trace_z);
        t.absorb_ext(label::OOD_TRACE_ZW, &ood.trace_zw);
        t.absorb_ext(label::OOD_QUOTIENT_Z, &ood.quotient_z);
    }
    t.challenge_ext("gamma")
}

/// Step 6, once the nonce is found or checked: absorbs the proof-of-work nonce.
pub(crate) fn absorb_pow_nonce(t: &mut Transcript, nonce: u64) {
    t.absorb_u64(label::POW_NONCE, nonce);
}

/// Step 7: draws `count` query positions in the LDE domain of 2^`log_lde` points, in the
/// order drawn.
pub(crate) fn query_draws(t: &mut Transcript, count: usize, log_lde: usize) -> Vec<usize> {
    t.challenge_indices("queries", count, log_lde)
}

/// Steps 6–7 as a verifier runs them: whether `nonce` does `pow_bits` of work, the nonce
/// absorbed, then `count` query draws in an LDE of 2^`log_lde` points.
pub(crate) fn work_and_draws(
    t: &mut Transcript,
    pow_bits: u32,
    nonce: u64,
    count: usize,
    log_lde: usize,
) -> (bool, Vec<usize>) {
    let work_done = t.check_pow(pow_bits, nonce);
    absorb_pow_nonce(t, nonce);
    (work_done, query_draws(t, count, log_lde))
}

/// The distinct positions among `draws`, increasing: a position drawn twice is opened once.
pub(crate) fn distinct(draws: &[usize]) -> Vec<usize> {
    let mut positions = draws.to_vec();
    positions.sort_unstable();
    positions.dedup();
    positions
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use ballast_air::{PublicCell, PublicColumn, SparseColumns, SparseEntry};
    use ballast_keccak::keccak256;

    /// x' = x + c on transitions, (x − x)·y^k on every row (the constant 0, of degree k + 1),
    /// y = the periodic column, and x = the public column on its cells' rows (the row before
    /// the last, one of the two public inputs, for most).
    #[derive(Clone)]
    struct Keyed {
        id: &'static str,
        log_rows: usize,
        width: usize,
        periodic: Vec<u64>,
        public: Vec<PublicCell>,
        c: u64,
        k: usize,
        source: Option<&'static [u8]>,
        /// The periodic column given by its entries too: what a verifier evaluates.
        sparse: Option<SparseColumns>,
    }

    impl Air for Keyed {
        fn id(&self) -> &str {
            self.id
        }
        fn width(&self) -> usize {
            self.width
        }
        fn log_rows(&self) -> usize {
            self.log_rows
        }
        fn num_public_inputs(&self) -> usize {
            2
        }
        fn periodic_columns(&self) -> Cow<'_, [PeriodicColumn]> {
            vec![PeriodicColumn {
                values: self.periodic.iter().map(|&v| Felt::new(v)).collect(),
            }]
            .into()
        }
        fn sparse_periodic(&self) -> Option<&SparseColumns> {
            self.sparse.as_ref()
        }
        fn columns_source(&self) -> Option<Vec<u8>> {
            self.source.map(<[u8]>::to_vec)
        }
        fn public_columns(&self) -> Cow<'_, [PublicColumn]> {
            vec![PublicColumn {
                cells: self.public.clone(),
            }]
            .into()
        }
        fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
            let (x, y) = (f.current[0], f.current[1]);
            b.transition(f.next[0] - x - B::Expr::from(Felt::new(self.c)));
            let same_x = x;
            let mut zero = x - same_x;
            for _ in 0..self.k {
                zero *= y;
            }
            b.every_row(zero);
            b.every_row(y - f.periodic[0]);
            b.every_row(x - f.periodic[1]);
        }
    }

    fn key(air: &Keyed) -> Digest {
        air_key(air, &ConstraintInfo::of(air).unwrap())
    }

    #[test]
    fn each_periodic_digest_is_its_columns_keccak_on_every_path() {
        // 19 columns of three lengths, interleaved: lanes shared by columns far apart, and
        // a remainder of each length.
        let periodic: Vec<PeriodicColumn> = (0..19u64)
            .map(|i| PeriodicColumn {
                values: (0..[2, 8, 64][i as usize % 3])
                    .map(|k| Felt::new(1000 * i + k))
                    .collect(),
            })
            .collect();
        for kernels in Kernels::supported() {
            let digests = periodic_digests(kernels, &periodic);
            for (i, (column, digest)) in periodic.iter().zip(digests).enumerate() {
                let bytes: Vec<u8> = column
                    .values
                    .iter()
                    .flat_map(|v| v.as_u64().to_le_bytes())
                    .collect();
                assert_eq!(
                    digest,
                    keccak256(HashDomain::PeriodicColumn, &bytes),
                    "{} path, column {i}",
                    kernels.path()
                );
            }
        }
    }

    #[test]
    fn a_definition_digest_is_its_chunks_keccak_on_every_path() {
        // The written-out definition: Keccak-256 of the length, then each zero-padded
        // chunk's Keccak-256.
        let written = |definition: &[u8]| {
            let mut message = (definition.len() as u64).to_le_bytes().to_vec();
            for chunk in definition.chunks(KEY_CHUNK_BYTES) {
                let mut chunk = chunk.to_vec();
                chunk.resize(KEY_CHUNK_BYTES, 0);
                message.extend(keccak256(HashDomain::AirKeyChunk, &chunk));
            }
            keccak256(HashDomain::AirKey, &message)
        };
        // One chunk, one just over, and enough for whole lane groups and a remainder.
        let lengths = [
            1,
            KEY_CHUNK_BYTES,
            KEY_CHUNK_BYTES + 1,
            13 * KEY_CHUNK_BYTES - 5,
        ];
        for kernels in Kernels::supported() {
            for len in lengths {
                let definition: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
                assert_eq!(
                    definition_digest(kernels, &definition),
                    written(&definition),
                    "{} path, {len} bytes",
                    kernels.path()
                );
            }
        }
        // The padding is not the definition's: its length tells them apart.
        let short = [5u8; 10];
        let mut long = short.to_vec();
        long.push(0);
        assert_ne!(
            definition_digest(Kernels::active(), &short),
            definition_digest(Kernels::active(), &long)
        );
    }

    #[test]
    fn the_key_binds_every_part_of_the_air() {
        let base = Keyed {
            id: "test/keyed",
            log_rows: 3,
            width: 2,
            periodic: vec![1, 2],
            public: vec![PublicCell { row: 6, input: 0 }],
            c: 3,
            k: 1,
            source: None,
            sparse: None,
        };
        let variants = [
            Keyed {
                id: "test/keyed-2",
                ..base.clone()
            },
            Keyed {
                log_rows: 4,
                ..base.clone()
            },
            Keyed {
                width: 3,
                ..base.clone()
            },
            Keyed {
                periodic: vec![1, 5],
                ..base.clone()
            },
            Keyed {
                periodic: vec![1, 2, 1, 2],
                ..base.clone()
            },
            // A public column's cell in another row, or of another input.
            Keyed {
                public: vec![PublicCell { row: 5, input: 0 }],
                ..base.clone()
            },
            Keyed {
                public: vec![PublicCell { row: 6, input: 1 }],
                ..base.clone()
            },
            // A constant the AIR reads from itself.
            Keyed {
                c: 4,
                ..base.clone()
            },
            // The same DAG (the constraint folds to 0), another degree.
            Keyed {
                k: 2,
                ..base.clone()
            },
            // Columns bound by a source, or by another.
            Keyed {
                source: Some(b"source"),
                ..base.clone()
            },
            Keyed {
                source: Some(b"sourcf"),
                ..base.clone()
            },
        ];
        let dag = |air: &Keyed| SymbolicAir::of(air).encode();
        assert_eq!(dag(&variants[8]), dag(&base), "only the degree differs");
        assert_eq!(dag(&variants[5]), dag(&base), "only a cell differs");
        let mut keys = vec![key(&base)];
        keys.extend(variants.iter().map(key));
        for (i, a) in keys.iter().enumerate() {
            for (j, b) in keys.iter().enumerate().skip(i + 1) {
                assert_ne!(a, b, "variants {i} and {j} share a key");
            }
        }
        assert_eq!(
            key(&base.clone()),
            keys[0],
            "the key is a function of the AIR"
        );
    }

    #[test]
    fn a_columns_source_stands_for_the_columns_values() {
        let with =
            |source: Option<&'static [u8]>, periodic: Vec<u64>, public: Vec<PublicCell>| Keyed {
                id: "test/keyed",
                log_rows: 3,
                width: 2,
                periodic,
                public,
                c: 3,
                k: 1,
                source,
                sparse: None,
            };
        let cell = |row, input| PublicCell { row, input };
        let base = |source| with(source, vec![1, 2], vec![cell(6, 0)]);
        // The AIR's code must build its columns from its source: the key reads the source,
        // not the periodic values or the public cells.
        let source = Some(b"source".as_slice());
        for none in [false, true] {
            let source = if none { None } else { source };
            let keys = [
                key(&with(source, vec![1, 5], vec![cell(6, 0)])),
                key(&with(source, vec![1, 2], vec![cell(5, 0)])),
                key(&with(source, vec![1, 2], vec![cell(6, 1)])),
            ];
            for other in keys {
                assert_eq!(other == key(&base(source)), !none);
            }
        }
        // The columns' lengths and the cells' count stay bound.
        let longer = with(source, vec![1, 2, 1, 2], vec![cell(6, 0)]);
        let more = with(source, vec![1, 2], vec![cell(5, 1), cell(6, 0)]);
        assert_ne!(key(&longer), key(&base(source)));
        assert_ne!(key(&more), key(&base(source)));
    }

    #[test]
    fn a_sparse_airs_key_binds_the_columns_its_verifier_evaluates() {
        let dense = |periodic: Vec<u64>| Keyed {
            id: "test/keyed",
            log_rows: 3,
            width: 2,
            periodic,
            public: vec![PublicCell { row: 6, input: 0 }],
            c: 3,
            k: 1,
            source: None,
            sparse: None,
        };
        let sparse = |values: [u64; 2]| {
            let entries = (0..2u32)
                .map(|row| SparseEntry {
                    row,
                    column: 0,
                    value: Felt::new(values[row as usize]),
                })
                .collect();
            Some(SparseColumns::new(1, 2, entries).expect("in order"))
        };
        // Written out, this AIR's column would disagree with its entries: the key follows the
        // entries, which its verifier evaluates.
        let given = Keyed {
            sparse: sparse([1, 2]),
            ..dense(vec![9, 9])
        };
        assert_eq!(key(&given), key(&dense(vec![1, 2])));
        let other = Keyed {
            sparse: sparse([1, 3]),
            ..dense(vec![9, 9])
        };
        assert_ne!(key(&other), key(&given));
    }
}
