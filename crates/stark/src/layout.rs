//! The proof format's layout, written once: every section in order, what its items are, what
//! fixes their number and which field of a proof holds them.
//!
//! Encoding and decoding (`codec.rs`), the exact length and the header's bound (`sizes.rs`),
//! the verifier's shape check (`sizes.rs`, `check_segment`) and the table in
//! docs/protocol.md §8 (checked against [`layout`] by a test) all read these tables; nothing
//! else states the layout.
//!
//! A proof is [`HEADER`], then [`STATES`], then per segment [`SEGMENT`] followed by
//! [`FRI_LAYER`] once per FRI round. A tables proof ([`TablesRecord`]) is [`HEADER`]'s
//! first [`SHARED_HEADER`] sections with [`TABLES_MAGIC`], [`TABLE_COUNT`], [`TABLE_SHAPE`]
//! per table, [`TABLES_ROOTS`], [`TABLE_CLAIMS`] per table, [`TABLES_QUERIES`], then
//! [`TABLES_FRI_LAYER`] once per FRI round. Lengths are in items; little-endian throughout.

use ballast_field::{Ext3, Felt};

use crate::values::Values;
use crate::{MerkleHash, SegmentProof, StarkParams, TablesRecord};

/// The first four bytes of every proof.
pub const MAGIC: [u8; 4] = *b"BLST";

/// The first four bytes of every tables proof.
pub const TABLES_MAGIC: [u8; 4] = *b"BLTB";

/// The first four bytes of every compressed proof.
pub const COMPRESSED_MAGIC: [u8; 4] = *b"BLCP";

/// What one item of a section is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Item {
    /// A byte of an opaque run (the magic, the workload's encoding, the states).
    Byte,
    /// Little-endian integers of 1, 2, 4 and 8 bytes.
    U8,
    U16,
    U32,
    U64,
    /// A canonical base-field element, 8 bytes.
    Felt,
    /// A canonical extension-field element, 3 × 8 bytes.
    Ext,
    /// A Merkle digest (either hash), 32 bytes.
    Digest,
}

impl Item {
    /// Bytes per item.
    pub const fn bytes(self) -> usize {
        match self {
            Item::Byte | Item::U8 => 1,
            Item::U16 => 2,
            Item::U32 => 4,
            Item::U64 => 8,
            Item::Felt => Felt::BYTES,
            Item::Ext => Ext3::BYTES,
            Item::Digest => 32,
        }
    }

    /// The largest value an integer item holds.
    pub const fn max_int(self) -> u64 {
        match self.bytes() {
            8 => u64::MAX,
            bytes => (1 << (8 * bytes)) - 1,
        }
    }

    /// Its name in the layout table.
    pub const fn name(self) -> &'static str {
        match self {
            Item::Byte => "byte",
            Item::U8 => "u8",
            Item::U16 => "u16",
            Item::U32 => "u32",
            Item::U64 => "u64",
            Item::Felt => "felt",
            Item::Ext => "ext",
            Item::Digest => "digest",
        }
    }
}

/// What fixes a section's number of items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Count {
    /// Exactly this many.
    Exactly(usize),
    /// The workload's tag and its encoding: 1 + E bytes.
    Workload,
    /// One state per boundary of the covered range: (count + 1)·S bytes.
    States,
    /// W, the trace's columns.
    Width,
    /// C, the quotient's base-field columns.
    QuotientWidth,
    /// R, the FRI rounds.
    FriRounds,
    /// 2^f, the final polynomial's coefficients.
    FinalPoly,
    /// q, the distinct query positions: the value of the section before.
    Queries,
    /// A trace row per query position.
    TraceRows,
    /// A quotient row per query position.
    QuotientRows,
    /// The batch opening of the query positions in the trace or quotient tree.
    Opening,
    /// The FRI layer's coset values the verifier cannot fold itself.
    LayerValues,
    /// The batch opening of the FRI layer's queried cosets.
    LayerOpening,
    /// P, the table's public inputs.
    PublicInputs,
    /// A row of each table per query position.
    TablesTraceRows,
    /// A quotient row of each table per query position.
    TablesQuotientRows,
}

impl Count {
    /// How the layout table writes it.
    pub const fn text(self) -> &'static str {
        match self {
            Count::Exactly(1) => "1",
            Count::Exactly(4) => "4",
            Count::Exactly(_) => "fixed",
            Count::Workload => "1 + E",
            Count::States => "(count + 1)·S",
            Count::Width => "W",
            Count::QuotientWidth => "C",
            Count::FriRounds => "R",
            Count::FinalPoly => "2^f",
            Count::Queries => "q",
            Count::TraceRows => "q·W",
            Count::QuotientRows => "q·C",
            Count::Opening => "≤ q·log₂ N",
            Count::LayerValues => "≤ q·(a − 1)",
            Count::LayerOpening => "≤ q·log₂(N_i/a)",
            Count::PublicInputs => "P",
            Count::TablesTraceRows => "q·ΣW",
            Count::TablesQuotientRows => "q·ΣC",
        }
    }
}

/// One section: its name, its items, what fixes their count, and the field of `T` that
/// holds them (`layer` picks the FRI layer of a [`FRI_LAYER`] section).
pub(crate) struct SectionLayout<T: 'static> {
    pub name: &'static str,
    pub item: Item,
    pub count: Count,
    pub get: for<'a> fn(&'a T, usize) -> Values<'a>,
    pub set: fn(&mut T, usize, Values<'_>),
}

/// Everything before the segments, as it is on the wire: the header's fields and the states,
/// unchecked (the decoder checks them, see `codec.rs`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Head {
    pub magic: Vec<u8>,
    pub version: u16,
    /// The proof's length in bytes, all of it.
    pub length: u64,
    /// The parameters; their hash is the [`hash`](Self::hash) byte's once it is checked.
    pub params: StarkParams,
    /// The Merkle hash's id, as read.
    pub hash: u8,
    /// The workload's tag, then its encoding.
    pub workload: Vec<u8>,
    pub first: usize,
    pub count: usize,
    /// The states' encodings, one after another.
    pub states: Vec<u8>,
}

impl Default for Head {
    /// Nothing read yet: every field zero or empty, which the decoder overwrites section by
    /// section.
    fn default() -> Self {
        Self {
            magic: Vec::new(),
            version: 0,
            length: 0,
            params: StarkParams {
                log_blowup: 0,
                num_queries: 0,
                pow_bits: 0,
                log_final_poly_len: 0,
                hash: MerkleHash::Keccak256,
            },
            hash: 0,
            workload: Vec::new(),
            first: 0,
            count: 0,
            states: Vec::new(),
        }
    }
}

/// The header: everything a reader needs to know the proof's length and bound it.
pub(crate) const HEADER: [SectionLayout<Head>; 11] = [
    SectionLayout {
        name: "magic",
        item: Item::Byte,
        count: Count::Exactly(MAGIC.len()),
        get: |h, _| Values::bytes(&h.magic),
        set: |h, _, v| h.magic = v.into_bytes(),
    },
    SectionLayout {
        name: "version",
        item: Item::U16,
        count: Count::Exactly(1),
        get: |h, _| Values::int(h.version),
        set: |h, _, v| h.version = v.into_int() as u16,
    },
    SectionLayout {
        name: "length",
        item: Item::U64,
        count: Count::Exactly(1),
        get: |h, _| Values::int(h.length),
        set: |h, _, v| h.length = v.into_int(),
    },
    SectionLayout {
        name: "log blowup",
        item: Item::U8,
        count: Count::Exactly(1),
        get: |h, _| Values::size(h.params.log_blowup),
        set: |h, _, v| h.params.log_blowup = v.into_size(),
    },
    SectionLayout {
        name: "queries",
        item: Item::U16,
        count: Count::Exactly(1),
        get: |h, _| Values::size(h.params.num_queries),
        set: |h, _, v| h.params.num_queries = v.into_size(),
    },
    SectionLayout {
        name: "pow bits",
        item: Item::U8,
        count: Count::Exactly(1),
        get: |h, _| Values::int(h.params.pow_bits),
        set: |h, _, v| h.params.pow_bits = v.into_int() as u32,
    },
    SectionLayout {
        name: "log final poly len",
        item: Item::U8,
        count: Count::Exactly(1),
        get: |h, _| Values::size(h.params.log_final_poly_len),
        set: |h, _, v| h.params.log_final_poly_len = v.into_size(),
    },
    SectionLayout {
        name: "merkle hash",
        item: Item::U8,
        count: Count::Exactly(1),
        get: |h, _| Values::int(h.hash),
        set: |h, _, v| h.hash = v.into_int() as u8,
    },
    SectionLayout {
        name: "workload",
        item: Item::Byte,
        count: Count::Workload,
        get: |h, _| Values::bytes(&h.workload),
        set: |h, _, v| h.workload = v.into_bytes(),
    },
    SectionLayout {
        name: "first segment",
        item: Item::U32,
        count: Count::Exactly(1),
        get: |h, _| Values::size(h.first),
        set: |h, _, v| h.first = v.into_size(),
    },
    SectionLayout {
        name: "segment count",
        item: Item::U32,
        count: Count::Exactly(1),
        get: |h, _| Values::size(h.count),
        set: |h, _, v| h.count = v.into_size(),
    },
];

/// The state segment `first` starts in, then the state each segment ends in.
pub(crate) const STATES: SectionLayout<Head> = SectionLayout {
    name: "states",
    item: Item::Byte,
    count: Count::States,
    get: |h, _| Values::bytes(&h.states),
    set: |h, _, v| h.states = v.into_bytes(),
};

/// A compressed proof's inner levels (of its tree of nodes, between its segments and its
/// last layer): how many.
pub(crate) const INNER_LAYER_COUNT: SectionLayout<Vec<StarkParams>> = SectionLayout {
    name: "inner layer count",
    item: Item::U8,
    count: Count::Exactly(1),
    get: |l, _| Values::size(l.len()),
    set: |l, _, v| *l = vec![UNREAD_PARAMS; v.into_size()],
};

/// Parameters not read yet, which the decoder overwrites section by section; an inner
/// layer's hash is Poseidon2, the only one a layer over it verifies.
const UNREAD_PARAMS: StarkParams = StarkParams {
    log_blowup: 0,
    num_queries: 0,
    pow_bits: 0,
    log_final_poly_len: 0,
    hash: MerkleHash::Poseidon2,
};

/// One inner level's parameters, every node's of the level, once per level, innermost
/// first (its hash is Poseidon2's, not written).
pub(crate) const INNER_LAYER: [SectionLayout<Vec<StarkParams>>; 4] = [
    SectionLayout {
        name: "inner log blowup",
        item: Item::U8,
        count: Count::Exactly(1),
        get: |l, k| Values::size(l[k].log_blowup),
        set: |l, k, v| l[k].log_blowup = v.into_size(),
    },
    SectionLayout {
        name: "inner queries",
        item: Item::U16,
        count: Count::Exactly(1),
        get: |l, k| Values::size(l[k].num_queries),
        set: |l, k, v| l[k].num_queries = v.into_size(),
    },
    SectionLayout {
        name: "inner pow bits",
        item: Item::U8,
        count: Count::Exactly(1),
        get: |l, k| Values::int(l[k].pow_bits),
        set: |l, k, v| l[k].pow_bits = v.into_int() as u32,
    },
    SectionLayout {
        name: "inner log final poly len",
        item: Item::U8,
        count: Count::Exactly(1),
        get: |l, k| Values::size(l[k].log_final_poly_len),
        set: |l, k, v| l[k].log_final_poly_len = v.into_size(),
    },
];

/// One segment's proof, before its FRI layers.
pub(crate) const SEGMENT: [SectionLayout<SegmentProof>; 14] = [
    SectionLayout {
        name: "trace root",
        item: Item::Digest,
        count: Count::Exactly(1),
        get: |p, _| Values::digest(&p.trace_root),
        set: |p, _, v| p.trace_root = v.into_digest(),
    },
    SectionLayout {
        name: "quotient root",
        item: Item::Digest,
        count: Count::Exactly(1),
        get: |p, _| Values::digest(&p.quotient_root),
        set: |p, _, v| p.quotient_root = v.into_digest(),
    },
    SectionLayout {
        name: "ood trace z",
        item: Item::Ext,
        count: Count::Width,
        get: |p, _| Values::exts(&p.ood.trace_z),
        set: |p, _, v| p.ood.trace_z = v.into_exts(),
    },
    SectionLayout {
        name: "ood trace zw",
        item: Item::Ext,
        count: Count::Width,
        get: |p, _| Values::exts(&p.ood.trace_zw),
        set: |p, _, v| p.ood.trace_zw = v.into_exts(),
    },
    SectionLayout {
        name: "ood quotient z",
        item: Item::Ext,
        count: Count::QuotientWidth,
        get: |p, _| Values::exts(&p.ood.quotient_z),
        set: |p, _, v| p.ood.quotient_z = v.into_exts(),
    },
    SectionLayout {
        name: "fri roots",
        item: Item::Digest,
        count: Count::FriRounds,
        get: |p, _| Values::digests(&p.fri_roots),
        set: |p, _, v| p.fri_roots = v.into_digests(),
    },
    SectionLayout {
        name: "final poly",
        item: Item::Ext,
        count: Count::FinalPoly,
        get: |p, _| Values::exts(&p.final_poly),
        set: |p, _, v| p.final_poly = v.into_exts(),
    },
    SectionLayout {
        name: "pow nonce",
        item: Item::U64,
        count: Count::Exactly(1),
        get: |p, _| Values::int(p.pow_nonce),
        set: |p, _, v| p.pow_nonce = v.into_int(),
    },
    // q, the number of positions: decoding makes room for that many.
    SectionLayout {
        name: "query count",
        item: Item::U16,
        count: Count::Exactly(1),
        get: |p, _| Values::size(p.queries.positions.len()),
        set: |p, _, v| p.queries.positions = vec![0; v.into_size()],
    },
    SectionLayout {
        name: "query positions",
        item: Item::U32,
        count: Count::Queries,
        get: |p, _| Values::positions(&p.queries.positions),
        set: |p, _, v| {
            p.queries.positions = v.into_ints().into_iter().map(|i| i as usize).collect();
        },
    },
    SectionLayout {
        name: "trace rows",
        item: Item::Felt,
        count: Count::TraceRows,
        get: |p, _| Values::felts(&p.queries.trace_rows),
        set: |p, _, v| p.queries.trace_rows = v.into_felts(),
    },
    SectionLayout {
        name: "trace opening",
        item: Item::Digest,
        count: Count::Opening,
        get: |p, _| Values::digests(&p.queries.trace_nodes),
        set: |p, _, v| p.queries.trace_nodes = v.into_digests(),
    },
    SectionLayout {
        name: "quotient rows",
        item: Item::Felt,
        count: Count::QuotientRows,
        get: |p, _| Values::felts(&p.queries.quotient_rows),
        set: |p, _, v| p.queries.quotient_rows = v.into_felts(),
    },
    SectionLayout {
        name: "quotient opening",
        item: Item::Digest,
        count: Count::Opening,
        get: |p, _| Values::digests(&p.queries.quotient_nodes),
        set: |p, _, v| p.queries.quotient_nodes = v.into_digests(),
    },
];

/// One FRI layer's openings, once per round (R of them) after [`SEGMENT`].
pub(crate) const FRI_LAYER: [SectionLayout<SegmentProof>; 2] = [
    SectionLayout {
        name: "fri layer values",
        item: Item::Ext,
        count: Count::LayerValues,
        get: |p, k| Values::exts(&p.queries.fri[k].values),
        set: |p, k, v| p.queries.fri[k].values = v.into_exts(),
    },
    SectionLayout {
        name: "fri layer opening",
        item: Item::Digest,
        count: Count::LayerOpening,
        get: |p, k| Values::digests(&p.queries.fri[k].nodes),
        set: |p, k, v| p.queries.fri[k].nodes = v.into_digests(),
    },
];

/// The sections of [`HEADER`] a tables proof's header starts with: the magic (its own,
/// [`TABLES_MAGIC`]) to the Merkle hash.
pub(crate) const SHARED_HEADER: usize = 8;

/// A table's shape as a tables proof's header states it: what fixes its sections' counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TableHead {
    pub log_rows: usize,
    pub width: usize,
    pub log_quotient_chunks: usize,
    pub public_inputs: usize,
}

/// A tables proof's table count, after the shared header: decoding makes room for that
/// many tables.
pub(crate) const TABLE_COUNT: SectionLayout<Vec<TableHead>> = SectionLayout {
    name: "table count",
    item: Item::U8,
    count: Count::Exactly(1),
    get: |t, _| Values::size(t.len()),
    set: |t, _, v| *t = vec![TableHead::default(); v.into_size()],
};

/// One table's shape, once per table, tallest first.
pub(crate) const TABLE_SHAPE: [SectionLayout<Vec<TableHead>>; 4] = [
    SectionLayout {
        name: "table log rows",
        item: Item::U8,
        count: Count::Exactly(1),
        get: |t, k| Values::size(t[k].log_rows),
        set: |t, k, v| t[k].log_rows = v.into_size(),
    },
    SectionLayout {
        name: "table width",
        item: Item::U16,
        count: Count::Exactly(1),
        get: |t, k| Values::size(t[k].width),
        set: |t, k, v| t[k].width = v.into_size(),
    },
    SectionLayout {
        name: "table log quotient chunks",
        item: Item::U8,
        count: Count::Exactly(1),
        get: |t, k| Values::size(t[k].log_quotient_chunks),
        set: |t, k, v| t[k].log_quotient_chunks = v.into_size(),
    },
    SectionLayout {
        name: "table public input count",
        item: Item::U32,
        count: Count::Exactly(1),
        get: |t, k| Values::size(t[k].public_inputs),
        set: |t, k, v| t[k].public_inputs = v.into_size(),
    },
];

/// The roots of a tables proof's mixed trees.
pub(crate) const TABLES_ROOTS: [SectionLayout<TablesRecord>; 2] = [
    SectionLayout {
        name: SEGMENT[0].name,
        item: Item::Digest,
        count: Count::Exactly(1),
        get: |r, _| Values::digest(&r.proof.trace_root),
        set: |r, _, v| r.proof.trace_root = v.into_digest(),
    },
    SectionLayout {
        name: SEGMENT[1].name,
        item: Item::Digest,
        count: Count::Exactly(1),
        get: |r, _| Values::digest(&r.proof.quotient_root),
        set: |r, _, v| r.proof.quotient_root = v.into_digest(),
    },
];

/// One table's public inputs and out-of-domain claims, once per table, tallest first.
pub(crate) const TABLE_CLAIMS: [SectionLayout<TablesRecord>; 4] = [
    SectionLayout {
        name: "public inputs",
        item: Item::Felt,
        count: Count::PublicInputs,
        get: |r, k| Values::felts(&r.tables[k].public_inputs),
        set: |r, k, v| r.tables[k].public_inputs = v.into_felts(),
    },
    SectionLayout {
        name: SEGMENT[2].name,
        item: Item::Ext,
        count: Count::Width,
        get: |r, k| Values::exts(&r.proof.ood[k].trace_z),
        set: |r, k, v| r.proof.ood[k].trace_z = v.into_exts(),
    },
    SectionLayout {
        name: SEGMENT[3].name,
        item: Item::Ext,
        count: Count::Width,
        get: |r, k| Values::exts(&r.proof.ood[k].trace_zw),
        set: |r, k, v| r.proof.ood[k].trace_zw = v.into_exts(),
    },
    SectionLayout {
        name: SEGMENT[4].name,
        item: Item::Ext,
        count: Count::QuotientWidth,
        get: |r, k| Values::exts(&r.proof.ood[k].quotient_z),
        set: |r, k, v| r.proof.ood[k].quotient_z = v.into_exts(),
    },
];

/// A tables proof's FRI commitments, work and openings, before its FRI layers.
pub(crate) const TABLES_QUERIES: [SectionLayout<TablesRecord>; 9] = [
    SectionLayout {
        name: SEGMENT[5].name,
        item: Item::Digest,
        count: Count::FriRounds,
        get: |r, _| Values::digests(&r.proof.fri_roots),
        set: |r, _, v| r.proof.fri_roots = v.into_digests(),
    },
    SectionLayout {
        name: SEGMENT[6].name,
        item: Item::Ext,
        count: Count::FinalPoly,
        get: |r, _| Values::exts(&r.proof.final_poly),
        set: |r, _, v| r.proof.final_poly = v.into_exts(),
    },
    SectionLayout {
        name: SEGMENT[7].name,
        item: Item::U64,
        count: Count::Exactly(1),
        get: |r, _| Values::int(r.proof.pow_nonce),
        set: |r, _, v| r.proof.pow_nonce = v.into_int(),
    },
    SectionLayout {
        name: SEGMENT[8].name,
        item: Item::U16,
        count: Count::Exactly(1),
        get: |r, _| Values::size(r.proof.queries.positions.len()),
        set: |r, _, v| r.proof.queries.positions = vec![0; v.into_size()],
    },
    SectionLayout {
        name: SEGMENT[9].name,
        item: Item::U32,
        count: Count::Queries,
        get: |r, _| Values::positions(&r.proof.queries.positions),
        set: |r, _, v| {
            r.proof.queries.positions = v.into_ints().into_iter().map(|i| i as usize).collect();
        },
    },
    SectionLayout {
        name: SEGMENT[10].name,
        item: Item::Felt,
        count: Count::TablesTraceRows,
        get: |r, _| Values::felts(&r.proof.queries.trace_rows),
        set: |r, _, v| r.proof.queries.trace_rows = v.into_felts(),
    },
    SectionLayout {
        name: SEGMENT[11].name,
        item: Item::Digest,
        count: Count::Opening,
        get: |r, _| Values::digests(&r.proof.queries.trace_nodes),
        set: |r, _, v| r.proof.queries.trace_nodes = v.into_digests(),
    },
    SectionLayout {
        name: SEGMENT[12].name,
        item: Item::Felt,
        count: Count::TablesQuotientRows,
        get: |r, _| Values::felts(&r.proof.queries.quotient_rows),
        set: |r, _, v| r.proof.queries.quotient_rows = v.into_felts(),
    },
    SectionLayout {
        name: SEGMENT[13].name,
        item: Item::Digest,
        count: Count::Opening,
        get: |r, _| Values::digests(&r.proof.queries.quotient_nodes),
        set: |r, _, v| r.proof.queries.quotient_nodes = v.into_digests(),
    },
];

/// One FRI layer's openings of a tables proof, once per round after [`TABLES_QUERIES`].
pub(crate) const TABLES_FRI_LAYER: [SectionLayout<TablesRecord>; 2] = [
    SectionLayout {
        name: FRI_LAYER[0].name,
        item: Item::Ext,
        count: Count::LayerValues,
        get: |r, k| Values::exts(&r.proof.queries.fri[k].values),
        set: |r, k, v| r.proof.queries.fri[k].values = v.into_exts(),
    },
    SectionLayout {
        name: FRI_LAYER[1].name,
        item: Item::Digest,
        count: Count::LayerOpening,
        get: |r, k| Values::digests(&r.proof.queries.fri[k].nodes),
        set: |r, k, v| r.proof.queries.fri[k].nodes = v.into_digests(),
    },
];

/// A tables proof's sections after its header and shapes, in order, with where each
/// belongs: [`TABLES_ROOTS`], [`TABLE_CLAIMS`] for each of `tables`, [`TABLES_QUERIES`],
/// [`TABLES_FRI_LAYER`] for each of `rounds`.
pub(crate) fn tables_body_sections(
    tables: usize,
    rounds: usize,
) -> impl Iterator<Item = (&'static SectionLayout<TablesRecord>, At)> {
    let roots = TABLES_ROOTS.iter().map(|s| (s, At::default()));
    let claims = (0..tables).flat_map(|k| TABLE_CLAIMS.iter().map(move |s| (s, At::table(k))));
    let queries = TABLES_QUERIES.iter().map(|s| (s, At::default()));
    let layers = (0..rounds).flat_map(|k| TABLES_FRI_LAYER.iter().map(move |s| (s, At::layer(k))));
    roots.chain(claims).chain(queries).chain(layers)
}

/// Where a section belongs, as its [`Section`](crate::Section) names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct At {
    pub segment: Option<usize>,
    pub table: Option<usize>,
    pub layer: Option<usize>,
}

impl At {
    /// Table `k`'s.
    pub fn table(k: usize) -> Self {
        Self {
            table: Some(k),
            ..Self::default()
        }
    }

    /// FRI layer `k`'s.
    pub fn layer(k: usize) -> Self {
        Self {
            layer: Some(k),
            ..Self::default()
        }
    }

    /// The index a section's accessors take: its FRI layer's or its table's.
    pub fn index(self) -> usize {
        self.layer.or(self.table).unwrap_or(0)
    }
}

/// A header section's count, for a workload whose encoding is `workload_len` bytes.
pub(crate) const fn header_count(count: Count, workload_len: usize) -> usize {
    match count {
        Count::Exactly(n) => n,
        Count::Workload => 1 + workload_len,
        _ => panic!("the header's counts are fixed"),
    }
}

/// Bytes of the header of a workload whose encoding is `workload_len` bytes.
pub const fn header_len(workload_len: usize) -> usize {
    let mut len = 0;
    let mut i = 0;
    while i < HEADER.len() {
        len += header_count(HEADER[i].count, workload_len) * HEADER[i].item.bytes();
        i += 1;
    }
    len
}

/// A segment's sections in order: [`SEGMENT`], then [`FRI_LAYER`] for each of `rounds`
/// layers, with the layer.
pub(crate) fn segment_sections(
    rounds: usize,
) -> impl Iterator<Item = (&'static SectionLayout<SegmentProof>, Option<usize>)> {
    SEGMENT
        .iter()
        .map(|s| (s, None))
        .chain((0..rounds).flat_map(|layer| FRI_LAYER.iter().map(move |s| (s, Some(layer)))))
}

/// One row of the layout as docs/protocol.md §8 tabulates it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutRow {
    /// Where it is: `header`, `states`, `segment` (once per segment) or `fri layer` (once per
    /// FRI round of each segment) in a proof; `tables header`, `table shape` (once per
    /// table), `tables`, `table claims` (once per table) or `tables fri layer` (once per FRI
    /// round) in a tables proof; `compressed header`, `inner layer` (once per inner layer)
    /// or `compressed states` in a compressed proof.
    pub part: &'static str,
    /// The section's name, as [`Section`](crate::Section)s and shape errors call it.
    pub name: &'static str,
    /// What one item is: `byte`, `u8` … `u64`, `felt`, `ext` or `digest`.
    pub item: &'static str,
    /// How many items: a number, or the formula docs/protocol.md §8 explains.
    pub count: &'static str,
}

/// A layout row of section `s` in `part`.
fn row<T>(part: &'static str, s: &SectionLayout<T>) -> LayoutRow {
    LayoutRow {
        part,
        name: s.name,
        item: s.item.name(),
        count: s.count.text(),
    }
}

/// Every section of a proof, in order.
pub fn layout() -> Vec<LayoutRow> {
    let header = HEADER.iter().map(|s| row("header", s));
    let states = std::iter::once(row("states", &STATES));
    let segment = SEGMENT.iter().map(|s| row("segment", s));
    let layer = FRI_LAYER.iter().map(|s| row("fri layer", s));
    header.chain(states).chain(segment).chain(layer).collect()
}

/// A compressed proof's own sections ([`CompressedRecord`](crate::CompressedRecord)), in
/// order: a proof's header (with [`COMPRESSED_MAGIC`]), the inner layers' count and each
/// one's parameters, after which a tables proof follows, then the statement's states, a
/// proof's (the start, then each segment's end).
pub fn compressed_layout() -> Vec<LayoutRow> {
    let header = HEADER.iter().map(|s| row("compressed header", s));
    let count = std::iter::once(row("compressed header", &INNER_LAYER_COUNT));
    let inner = INNER_LAYER.iter().map(|s| row("inner layer", s));
    (header.chain(count).chain(inner))
        .chain([row("compressed states", &STATES)])
        .collect()
}

/// Every section of a tables proof ([`TablesRecord`]), in order.
pub fn tables_layout() -> Vec<LayoutRow> {
    let header = HEADER[..SHARED_HEADER]
        .iter()
        .map(|s| row("tables header", s))
        .chain([row("tables header", &TABLE_COUNT)]);
    let shape = TABLE_SHAPE.iter().map(|s| row("table shape", s));
    let roots = TABLES_ROOTS.iter().map(|s| row("tables", s));
    let claims = TABLE_CLAIMS.iter().map(|s| row("table claims", s));
    let queries = TABLES_QUERIES.iter().map(|s| row("tables", s));
    let layer = TABLES_FRI_LAYER.iter().map(|s| row("tables fri layer", s));
    header
        .chain(shape)
        .chain(roots)
        .chain(claims)
        .chain(queries)
        .chain(layer)
        .collect()
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::sizes::empty_layers;

    #[test]
    fn every_section_reads_back_what_it_holds() {
        let mut p = SegmentProof {
            trace_root: [1; 32],
            quotient_root: [2; 32],
            fri_roots: vec![[3; 32]],
            final_poly: vec![Ext3::ONE],
            pow_nonce: 9,
            ..SegmentProof::default()
        };
        p.queries.positions = vec![4, 7];
        p.queries.trace_rows = vec![Felt::new(5)];
        p.queries.fri = empty_layers(1);
        p.queries.fri[0].values = vec![Ext3::ONE];
        p.queries.fri[0].nodes = vec![[6; 32]];
        let mut copy = SegmentProof {
            queries: crate::QueryOpenings {
                fri: empty_layers(1),
                ..Default::default()
            },
            ..SegmentProof::default()
        };
        for (section, layer) in segment_sections(1) {
            let layer = layer.unwrap_or(0);
            let values = (section.get)(&p, layer).into_owned_values();
            (section.set)(&mut copy, layer, values);
        }
        assert_eq!(copy, p);
        let mut head = Head {
            magic: MAGIC.to_vec(),
            version: 7,
            length: 1 << 40,
            workload: vec![1, 2],
            first: 3,
            count: 4,
            states: vec![5; 6],
            ..Head::default()
        };
        head.params.pow_bits = 11;
        let mut read = Head::default();
        for section in HEADER.iter().chain([&STATES]) {
            (section.set)(&mut read, 0, (section.get)(&head, 0).into_owned_values());
        }
        assert_eq!(read, head);
    }

    /// docs/protocol.md §8 tabulates exactly [`layout`], then [`tables_layout`], then
    /// [`compressed_layout`], in order.
    #[test]
    fn the_protocol_documents_this_layout() {
        let doc = include_str!("../../../docs/protocol.md");
        let documented: Vec<&str> = doc
            .lines()
            .skip_while(|l| !l.starts_with("<!-- layout:"))
            .skip(3)
            .take_while(|l| l.starts_with('|'))
            .collect();
        let rows: Vec<String> = layout()
            .iter()
            .chain(&tables_layout())
            .chain(&compressed_layout())
            .map(|r| format!("| {} | {} | {} | {} |", r.part, r.name, r.item, r.count))
            .collect();
        assert_eq!(
            documented,
            rows,
            "docs/protocol.md §8 should read:\n{}",
            rows.join("\n")
        );
    }

    #[test]
    fn the_header_is_fixed_by_the_workloads_encoding() {
        assert_eq!(
            header_len(9),
            4 + 2 + 8 + 1 + 2 + 1 + 1 + 1 + (1 + 9) + 4 + 4
        );
    }

    impl Values<'_> {
        fn into_owned_values(self) -> Values<'static> {
            match self {
                Values::Ints(v) => Values::Ints(Cow::Owned(v.into_owned())),
                Values::Bytes(v) => Values::Bytes(Cow::Owned(v.into_owned())),
                Values::Felts(v) => Values::Felts(Cow::Owned(v.into_owned())),
                Values::Exts(v) => Values::Exts(Cow::Owned(v.into_owned())),
                Values::Digests(v) => Values::Digests(Cow::Owned(v.into_owned())),
            }
        }
    }
}
