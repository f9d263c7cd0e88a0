//! A compressed proof's bytes: [`CompressedRecord`], a statement and the last recursive
//! layer's proof that its segment proofs verify (`ballast_recursion` proves and verifies
//! it; this module only writes and reads it).
//!
//! It is a proof's [`HEADER`] with its own magic ([`COMPRESSED_MAGIC`]): the segments'
//! parameters, the workload and the whole statement's range; the count of inner levels
//! ([`INNER_LAYER_COUNT`]: the depth of the statement's tree of nodes, [`tree_nodes`], at
//! most [`MAX_INNER_LAYERS`]) and each level's parameters ([`INNER_LAYER`]); then the
//! layer's tables proof ([`TablesRecord`], its own header and length); then [`STATES`], a proof's: the workload's start, the state each segment ends
//! in, the last the statement's outcome. So the header, the inner layers and the tables
//! proof's header bound the whole
//! ([`CompressedRecord::max_len`]) from at most [`CompressedRecord::header_len`] bytes, and
//! the decoder, as a proof's, checks every count before it reads what it counts and
//! requires exactly the stated length.

use crate::codec::{Decoder, Encoder, Header, Section, check_stated, decode_header};
use crate::layout::{
    At, COMPRESSED_MAGIC, HEADER, Head, INNER_LAYER, INNER_LAYER_COUNT, STATES, header_len,
};
use crate::params::check_ranges;
use crate::proof::{statement_context, statement_digest};
use crate::protocol::PROTOCOL_VERSION;
use crate::sizes::encoded_len;
use crate::tables_format::MAX_TABLES_HEADER_LEN;
use crate::{
    MAX_LOG_ROWS, MAX_SEGMENTS, ProofFormatError, StarkParams, TablesRecord, Workload, check_range,
};

/// A statement's compressed proof: the parameters its segments were proven with, the
/// workload, its two ends, the states between its segments and the last layer's proof
/// about them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompressedRecord<W: Workload> {
    /// The parameters of the statement's segment proofs, which the layer verified.
    pub params: StarkParams,
    /// The parameters of each level of the tree of nodes between the segments and the last
    /// layer ([`tree_nodes`]), innermost first, every node of a level made with its level's
    /// and committed with Poseidon2: none for one segment, whose last layer is over it; the
    /// last layer is a node over the top level's one node.
    pub inner: Vec<StarkParams>,
    /// The computation.
    pub workload: W,
    /// The workload's start state, then the statement's outcome.
    pub ends: [W::State; 2],
    /// The state each segment but the last ends in, the next one's start: one fewer than
    /// the workload's segments (none for one segment).
    pub between: Vec<W::State>,
    /// The last layer's proof.
    pub layer: TablesRecord,
}

impl<W: Workload> CompressedRecord<W> {
    /// The most bytes [`max_len`](Self::max_len) reads: the header, the most inner layers
    /// and the longest tables proof's header.
    pub const fn header_len() -> usize {
        header_len(W::ENCODED_LEN) + MAX_INNER_LEN + MAX_TABLES_HEADER_LEN
    }

    /// The statement's digest: the uncompressed proof's
    /// ([`Proof::statement_digest`](crate::Proof::statement_digest)).
    pub fn statement_digest(&self) -> [u8; 32] {
        statement_digest(&self.workload, &self.ends[1])
    }

    /// Checks what the decoder checks of its inner levels, for a record built otherwise: one
    /// a level of its statement's tree ([`tree_nodes`]), each parameter in its range; the
    /// encoding needs it.
    ///
    /// # Errors
    /// Another count of inner levels, or a parameter out of its range.
    pub fn check_inner(&self) -> Result<(), ProofFormatError> {
        check_inner(self.inner.len(), &self.inner, self.workload.segments())
    }

    /// The canonical encoding.
    ///
    /// # Panics
    /// If a header value exceeds its encoded width, which no record of a proof does (nor one
    /// whose parameters pass their checks and [`check_inner`](Self::check_inner)).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.encode().bytes
    }

    /// The byte layout of [`to_bytes`](Self::to_bytes), section by section; the layer's
    /// sections with their offsets in the whole.
    pub fn sections(&self) -> Vec<Section> {
        self.encode().sections
    }

    /// Every state in order: the start, each segment's end.
    pub fn states(&self) -> impl Iterator<Item = &W::State> {
        let [start, outcome] = &self.ends;
        std::iter::once(start)
            .chain(&self.between)
            .chain(std::iter::once(outcome))
    }

    fn encode(&self) -> Encoder {
        let mut states = Vec::new();
        for state in self.states() {
            self.workload.encode_state(state, &mut states);
        }
        let layer = self.layer.encode();
        let mut head = Head {
            magic: COMPRESSED_MAGIC.to_vec(),
            version: PROTOCOL_VERSION,
            length: 0,
            params: self.params,
            hash: self.params.hash.id(),
            workload: statement_context(&self.workload),
            first: 0,
            count: self.workload.segments(),
            states,
        };
        head.length = (header_len(W::ENCODED_LEN) + inner_len(self.inner.len()) + layer.bytes.len())
            as u64
            + encoded_len(&STATES, &(STATES.get)(&head, 0));
        let mut e = Encoder::default();
        for section in &HEADER {
            e.write(section, &head, At::default());
        }
        e.write(&INNER_LAYER_COUNT, &self.inner, At::default());
        for k in 0..self.inner.len() {
            for section in &INNER_LAYER {
                e.write(section, &self.inner, At::layer(k));
            }
        }
        let offset = e.bytes.len();
        e.sections.extend(layer.sections.into_iter().map(|mut s| {
            s.range = s.range.start + offset..s.range.end + offset;
            s
        }));
        e.bytes.extend_from_slice(&layer.bytes);
        e.write(&STATES, &head, At::default());
        e
    }

    /// Decodes a compressed proof: its header and the tables proof's header first, then,
    /// once the stated length is within their bound and is the length of `bytes`, the rest.
    ///
    /// # Errors
    /// Bad magic, an unsupported version, another workload, an invalid header, a range other
    /// than the whole statement, another length than stated, or a tables proof its decoder
    /// refuses.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ProofFormatError> {
        let mut d = Decoder::new(bytes);
        let (header, inner, layer_len, max) = bounded_header::<W>(&mut d)?;
        check_stated(header.head.length, max, bytes.len())?;
        let layer_end = d.pos.saturating_add(layer_len);
        let layer = bytes
            .get(d.pos..layer_end)
            .ok_or(ProofFormatError::Length {
                expected: layer_end as u64,
                got: bytes.len() as u64,
            })
            .and_then(TablesRecord::from_bytes)?;
        d.pos = layer_end;
        let Header {
            mut head, workload, ..
        } = header;
        let (state_len, segments) = (workload.state_len(), workload.segments());
        let states_at = d.pos;
        d.read(&STATES, &mut head, 0, (segments + 1) * state_len)?;
        d.finish()?;
        let state = |k: usize| {
            let at = k * state_len;
            workload.decode_state(&head.states[at..at + state_len], states_at + at)
        };
        Ok(Self {
            params: head.params,
            inner,
            ends: [state(0)?, state(segments)?],
            between: (1..segments).map(state).collect::<Result<_, _>>()?,
            workload,
            layer,
        })
    }

    /// The most bytes a compressed proof can have, from its first
    /// [`header_len`](Self::header_len) bytes or fewer (its header and its tables proof's
    /// header).
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes) for the headers.
    pub fn max_len(header: &[u8]) -> Result<u64, ProofFormatError> {
        Ok(bounded_header::<W>(&mut Decoder::new(header))?.3)
    }
}

/// The most children a node of a compressed proof's tree has ([`tree_nodes`]): four keeps
/// the default statement's four segments under one node; two (measured) takes 0.69× its
/// compression's memory at 1.17× the time and 1.11× the bytes (`docs/recursion.md`).
pub const NODE_CHILDREN: usize = 4;

/// The node count of each level of the tree of nodes over `segments` segments, innermost
/// first: ⌈n/[`NODE_CHILDREN`]⌉ nodes over the n children of the level below (the
/// segments, below the first), a level at a time until one node is left; none for one
/// segment. A level's nodes take near-equal, contiguous runs of its children, as parts
/// are cut (`docs/protocol.md` §6 item 24).
pub fn tree_nodes(segments: usize) -> Vec<usize> {
    let above = |&children: &usize| (children > 1).then(|| level_nodes(children));
    std::iter::successors(Some(segments), above)
        .skip(1)
        .collect()
}

/// The nodes of a level over `children` children.
const fn level_nodes(children: usize) -> usize {
    children.div_ceil(NODE_CHILDREN)
}

/// The levels of the tree over `segments` segments: [`tree_nodes`]' count.
const fn tree_depth(segments: usize) -> usize {
    let (mut levels, mut children) = (0, segments);
    while children > 1 {
        children = level_nodes(children);
        levels += 1;
    }
    levels
}

/// The most inner levels a compressed proof has: the depth of the tree over
/// [`MAX_SEGMENTS`] segments ([`tree_nodes`]).
pub const MAX_INNER_LAYERS: usize = tree_depth(MAX_SEGMENTS);

/// The most bytes of a compressed proof's inner levels: their count and the most levels'
/// parameters.
const MAX_INNER_LEN: usize = inner_len(MAX_INNER_LAYERS);

/// The checks of `count` inner levels of parameters `inner` (those read so far) over
/// `segments`: one a level of their tree ([`tree_nodes`]), each parameter in its range.
fn check_inner(
    count: usize,
    inner: &[StarkParams],
    segments: usize,
) -> Result<(), ProofFormatError> {
    let levels = tree_depth(segments);
    check_range("inner layers", count, levels, levels)?;
    for p in inner {
        check_ranges(p.log_blowup, p.num_queries, p.pow_bits)?;
        check_range("log_final_poly_len", p.log_final_poly_len, 0, MAX_LOG_ROWS)?;
    }
    Ok(())
}

/// The bytes of `layers` inner levels: their count and each one's parameters.
const fn inner_len(layers: usize) -> usize {
    let mut len = 0;
    let mut k = 0;
    while k < INNER_LAYER.len() {
        len += INNER_LAYER[k].item.bytes();
        k += 1;
    }
    INNER_LAYER_COUNT.item.bytes() + len * layers
}

/// Reads a compressed proof's header and checks it (a proof's checks, and a range that is
/// the whole statement), its inner layers' parameters (each in its ranges), then its tables
/// proof's header: the header, the inner layers' parameters, the tables proof's stated
/// length, and the bound on the whole.
fn bounded_header<W: Workload>(
    d: &mut Decoder<'_>,
) -> Result<(Header<W>, Vec<StarkParams>, usize, u64), ProofFormatError> {
    let header = decode_header::<W>(d, COMPRESSED_MAGIC)?;
    let (first, count) = (header.head.first, header.head.count);
    let segments = header.workload.segments();
    if first != 0 || count != segments {
        return Err(ProofFormatError::NotWhole {
            first,
            count,
            segments,
        });
    }
    let mut inner = Vec::new();
    d.read(&INNER_LAYER_COUNT, &mut inner, 0, 1)?;
    check_inner(inner.len(), &[], segments)?;
    for k in 0..inner.len() {
        for section in &INNER_LAYER {
            d.read(section, &mut inner, k, 1)?;
        }
    }
    check_inner(inner.len(), &inner, segments)?;
    let (layer_len, layer_max) = TablesRecord::stated_len(&d.bytes[d.pos..])?;
    let states = (segments as u64 + 1) * header.workload.state_len() as u64;
    let max = (d.pos as u64)
        .checked_add(layer_max)
        .and_then(|len| len.checked_add(states))
        .ok_or(ProofFormatError::TooLarge)?;
    let layer_len = usize::try_from(layer_len).map_err(|_| ProofFormatError::TooLarge)?;
    Ok((header, inner, layer_len, max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_has_a_quarter_of_the_nodes_a_level_until_one() {
        assert_eq!(tree_nodes(1), Vec::<usize>::new());
        assert_eq!(tree_nodes(2), [1]);
        assert_eq!(tree_nodes(4), [1]);
        assert_eq!(tree_nodes(5), [2, 1]);
        assert_eq!(tree_nodes(16), [4, 1]);
        assert_eq!(tree_nodes(17), [5, 2, 1]);
        assert_eq!(tree_nodes(MAX_SEGMENTS).len(), MAX_INNER_LAYERS);
        assert_eq!(MAX_INNER_LAYERS, 10);
        // Each level's runs cover its children, at most four a node.
        for m in 1..=70 {
            let mut children = m;
            for nodes in tree_nodes(m) {
                let runs: Vec<usize> = (0..nodes)
                    .map(|i| crate::part_range(children, nodes, i).unwrap().len())
                    .collect();
                assert_eq!(runs.iter().sum::<usize>(), children, "{m}");
                assert!(
                    runs.iter().all(|&r| (1..=NODE_CHILDREN).contains(&r)),
                    "{m}"
                );
                children = nodes;
            }
            assert_eq!(children, 1, "{m}");
        }
    }
}
