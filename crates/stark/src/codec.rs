//! The canonical binary proof format: the sections of `layout.rs`, written and read in order.
//!
//! The header states the proof's length and fixes every other length but one per segment,
//! the number of distinct query positions, which comes first in the segment's query part
//! with the positions; every later length follows from them (the rows, each batch opening's
//! node count, the [`QueryPlan`](ballast_fri::QueryPlan) of FRI values). So a reader knows
//! from the header how many bytes to expect and the most any proof with that header can
//! have ([`Proof::max_len`]); the decoder checks each count before reading what it counts,
//! requires exactly the stated length, and every proof has exactly one encoding (positions
//! strictly increasing, field elements canonical).

use std::borrow::Cow;
use std::ops::Range;

use ballast_field::{Ext3, Felt};
use ballast_merkle::Digest;

use crate::layout::{
    At, COMPRESSED_MAGIC, Count, HEADER, Head, Item, MAGIC, STATES, SectionLayout, header_count,
    header_len, segment_sections,
};
use crate::proof::{check_segments, statement_context};
use crate::protocol::PROTOCOL_VERSION;
use crate::sizes::{Sizes, empty_layers, encoded_len, max_segment_len};
use crate::values::Values;
use crate::{MerkleHash, Proof, ProofFormatError, QueryOpenings, SegmentProof, Workload};
use ballast_backend::Geometry;

/// A named byte range of an encoded proof.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// What the bytes hold: a section of the [`layout`](crate::layout), e.g. `trace rows`.
    pub name: &'static str,
    /// The segment it belongs to, if any.
    pub segment: Option<usize>,
    /// The table of a tables proof it belongs to, if any.
    pub table: Option<usize>,
    /// The FRI layer it belongs to (for a compressed proof's `inner layer` sections, the
    /// inner layer), if any.
    pub layer: Option<usize>,
    /// Where the bytes are.
    pub range: Range<usize>,
}

/// What the first [`PREFIX_LEN`] bytes of a proof say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prefix {
    /// The proof's length in bytes, as its header states it.
    pub length: u64,
    /// The workload's tag: which [`Workload`] decodes it.
    pub tag: u8,
    /// Whether it is a compressed proof ([`CompressedRecord`](crate::CompressedRecord)),
    /// by its magic.
    pub compressed: bool,
}

/// Bytes [`peek`] reads: the header up to the workload's tag.
pub const PREFIX_LEN: usize = prefix_len();

const fn prefix_len() -> usize {
    let mut len = 0;
    let mut i = 0;
    while !matches!(HEADER[i].count, Count::Workload) {
        len += HEADER[i].item.bytes();
        i += 1;
    }
    len + 1
}

/// The stated length, the workload tag and the kind of an encoded proof or compressed
/// proof, after checking its magic and version: enough to refuse a proof too large before
/// reading the rest.
///
/// # Errors
/// Bad magic, fewer than [`PREFIX_LEN`] bytes, or another format version.
pub fn peek(bytes: &[u8]) -> Result<Prefix, ProofFormatError> {
    let compressed = bytes.starts_with(&COMPRESSED_MAGIC);
    if !bytes.starts_with(&MAGIC) && !compressed {
        return Err(ProofFormatError::BadMagic);
    }
    let mut d = Decoder::new(bytes);
    let mut head = Head::default();
    for section in HEADER.iter().take_while(|s| s.count != Count::Workload) {
        d.read(section, &mut head, 0, header_count(section.count, 0))?;
    }
    if head.version != PROTOCOL_VERSION {
        return Err(ProofFormatError::UnsupportedVersion {
            got: head.version,
            supported: PROTOCOL_VERSION,
        });
    }
    let tag = d.slice(1)?[0];
    Ok(Prefix {
        length: head.length,
        tag,
        compressed,
    })
}

impl<W: Workload> Proof<W> {
    /// Bytes of the header of a `W` proof: everything [`max_len`](Self::max_len) reads.
    pub const fn header_len() -> usize {
        header_len(W::ENCODED_LEN)
    }

    /// The canonical encoding.
    ///
    /// # Panics
    /// If a header value exceeds its encoded width, which no proof from
    /// [`prove_part`](crate::prove_part) or [`from_bytes`](Self::from_bytes) has.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.encode().bytes
    }

    /// The byte layout of [`to_bytes`](Self::to_bytes), section by section.
    pub fn sections(&self) -> Vec<Section> {
        self.encode().sections
    }

    /// Bytes of [`to_bytes`](Self::to_bytes), without encoding.
    pub fn encoded_len(&self) -> u64 {
        let head = head(self);
        let head_len: u64 = HEADER
            .iter()
            .chain([&STATES])
            .map(|s| encoded_len(s, &(s.get)(&head, 0)))
            .sum();
        let segments: u64 = self
            .segments
            .iter()
            .flat_map(|p| segment_sections(p.queries.fri.len()).map(move |(s, k)| (p, s, k)))
            .map(|(p, s, k)| encoded_len(s, &(s.get)(p, k.unwrap_or(0))))
            .sum();
        head_len + segments
    }

    fn encode(&self) -> Encoder {
        let mut head = head(self);
        head.length = self.encoded_len();
        let mut e = Encoder::default();
        for section in HEADER.iter().chain([&STATES]) {
            e.write(section, &head, At::default());
        }
        for (i, segment) in self.segments.iter().enumerate() {
            for (section, layer) in segment_sections(segment.queries.fri.len()) {
                let at = At {
                    segment: Some(self.first + i),
                    layer,
                    ..At::default()
                };
                e.write(section, segment, at);
            }
        }
        e
    }

    /// Decodes a proof: its header first, then, once the stated length is within the
    /// header's bound and is the length of `bytes`, the rest.
    ///
    /// # Errors
    /// Bad magic, an unsupported version, another workload, an invalid header, another
    /// length than stated, invalid query positions or a non-canonical field element.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ProofFormatError> {
        let mut d = Decoder::new(bytes);
        let header = decode_header::<W>(&mut d, MAGIC)?;
        let max = header.max_len().ok_or(ProofFormatError::TooLarge)?;
        check_stated(header.head.length, max, bytes.len())?;
        let Header {
            mut head,
            workload,
            shape,
        } = header;
        let state_len = workload.state_len();
        let count = (head.count + 1)
            .checked_mul(state_len)
            .ok_or(ProofFormatError::TooLarge)?;
        let states_at = d.pos;
        d.read(&STATES, &mut head, 0, count)?;
        let states = head
            .states
            .chunks_exact(state_len.max(1))
            .take(head.count + 1)
            .enumerate()
            .map(|(k, raw)| workload.decode_state(raw, states_at + k * state_len))
            .collect::<Result<_, _>>()?;
        let segments = (head.first..head.first + head.count)
            .map(|index| d.segment(&shape, index))
            .collect::<Result<_, _>>()?;
        d.finish()?;
        Ok(Self {
            params: head.params,
            workload,
            first: head.first,
            states,
            segments,
        })
    }

    /// The most bytes a proof can have, from its first [`header_len`](Self::header_len)
    /// bytes alone: every query at its own position and no node shared. A stated length
    /// above it is refused before anything else is read.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes) for the header.
    pub fn max_len(header: &[u8]) -> Result<u64, ProofFormatError> {
        let header = decode_header::<W>(&mut Decoder::new(header), MAGIC)?;
        header.max_len().ok_or(ProofFormatError::TooLarge)
    }
}

/// The wire form of `proof`'s header and states, its length left 0.
fn head<W: Workload>(proof: &Proof<W>) -> Head {
    let mut states = Vec::new();
    for state in &proof.states {
        proof.workload.encode_state(state, &mut states);
    }
    Head {
        magic: MAGIC.to_vec(),
        version: PROTOCOL_VERSION,
        length: 0,
        params: proof.params,
        hash: proof.params.hash.id(),
        workload: statement_context(&proof.workload),
        first: proof.first,
        count: proof.segments.len(),
        states,
    }
}

/// A decoded, checked header.
pub(crate) struct Header<W> {
    pub head: Head,
    pub workload: W,
    pub shape: Geometry,
}

impl<W: Workload> Header<W> {
    /// The most bytes a proof with this header can have, or `None` on overflow.
    fn max_len(&self) -> Option<u64> {
        let count = self.head.count as u64;
        let states = (count + 1).checked_mul(self.workload.state_len() as u64)?;
        max_segment_len(&self.shape)?
            .checked_mul(count)?
            .checked_add(states)?
            .checked_add(header_len(W::ENCODED_LEN) as u64)
    }
}

/// Reads the header and checks it: the magic (`magic`, a proof's or a compressed proof's)
/// and the version ([`peek`]), the workload's tag and encoding, the parameters against its
/// AIR, and a range of at least one segment within the statement.
pub(crate) fn decode_header<W: Workload>(
    d: &mut Decoder<'_>,
    magic: [u8; 4],
) -> Result<Header<W>, ProofFormatError> {
    if !d.bytes[d.pos..].starts_with(&magic) {
        return Err(ProofFormatError::BadMagic);
    }
    peek(&d.bytes[d.pos..])?;
    let mut head = Head::default();
    for section in &HEADER {
        d.read(
            section,
            &mut head,
            0,
            header_count(section.count, W::ENCODED_LEN),
        )?;
    }
    head.params.hash =
        MerkleHash::from_id(head.hash).ok_or(ProofFormatError::UnknownHash(head.hash))?;
    d.hash = head.params.hash;
    let tag = head.workload[0];
    if tag != W::TAG {
        return Err(ProofFormatError::UnknownWorkload(tag));
    }
    let workload = W::decode(&head.workload[1..])?;
    let shape = crate::geometry(&workload, &head.params)?;
    check_segments(&workload, head.first, head.count)?;
    Ok(Header {
        head,
        workload,
        shape,
    })
}

/// Refuses a stated length above the header's bound `max`, then bytes of another length
/// (`got`) than stated: the check every kind's decoder makes before reading its body.
pub(crate) fn check_stated(stated: u64, max: u64, got: usize) -> Result<(), ProofFormatError> {
    if stated > max {
        return Err(ProofFormatError::TooLong { max, stated });
    }
    if got as u64 != stated {
        return Err(ProofFormatError::StatedLength {
            stated,
            got: got as u64,
        });
    }
    Ok(())
}

/// Writes sections and records where each went.
#[derive(Default)]
pub(crate) struct Encoder {
    pub bytes: Vec<u8>,
    pub sections: Vec<Section>,
}

impl Encoder {
    /// Writes `section` of `source`: of its FRI layer or its table where `at` names one.
    pub fn write<T>(&mut self, section: &SectionLayout<T>, source: &T, at: At) {
        let start = self.bytes.len();
        match (section.get)(source, at.index()) {
            Values::Ints(values) => {
                for &v in values.iter() {
                    self.int(section, v);
                }
            }
            Values::Bytes(values) => self.bytes.extend_from_slice(&values),
            Values::Felts(values) => {
                for v in values.iter() {
                    self.bytes.extend_from_slice(&v.to_le_bytes());
                }
            }
            Values::Exts(values) => {
                for v in values.iter() {
                    self.bytes.extend_from_slice(&v.to_le_bytes());
                }
            }
            Values::Digests(values) => self.bytes.extend_from_slice(values.as_flattened()),
        }
        self.sections.push(Section {
            name: section.name,
            segment: at.segment,
            table: at.table,
            layer: at.layer,
            range: start..self.bytes.len(),
        });
    }

    /// An integer in its section's width.
    fn int<T>(&mut self, section: &SectionLayout<T>, v: u64) {
        match section.item {
            Item::U8 => self.bytes.push(narrow(v, section.name)),
            Item::U16 => self
                .bytes
                .extend_from_slice(&narrow::<u16>(v, section.name).to_le_bytes()),
            Item::U32 => self
                .bytes
                .extend_from_slice(&narrow::<u32>(v, section.name).to_le_bytes()),
            Item::U64 => self.bytes.extend_from_slice(&v.to_le_bytes()),
            other => panic!("{other:?} is not an integer"),
        }
    }
}

/// `v` in the width of the field `name`.
fn narrow<T: TryFrom<u64>>(v: u64, name: &str) -> T {
    T::try_from(v).unwrap_or_else(|_| panic!("{v} does not fit the proof's {name} field"))
}

/// Reads sections with bounds checks; every read fails cleanly past the end, before
/// allocating anything.
pub(crate) struct Decoder<'a> {
    pub bytes: &'a [u8],
    pub pos: usize,
    /// The proof's hash, once the header names it: a digest it reads must be one of its.
    pub hash: MerkleHash,
}

impl<'a> Decoder<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Self {
            bytes,
            pos: 0,
            hash: MerkleHash::Keccak256,
        }
    }

    fn slice(&mut self, len: usize) -> Result<&'a [u8], ProofFormatError> {
        let end = self.pos.checked_add(len).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(ProofFormatError::Length {
                expected: (self.pos as u64).saturating_add(len as u64),
                got: self.bytes.len() as u64,
            });
        };
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    /// Reads `count` items of `section` into `target`.
    pub fn read<T>(
        &mut self,
        section: &SectionLayout<T>,
        target: &mut T,
        layer: usize,
        count: usize,
    ) -> Result<(), ProofFormatError> {
        let size = section.item.bytes();
        let start = self.pos;
        let raw = self.slice(count.checked_mul(size).ok_or(ProofFormatError::TooLarge)?)?;
        let chunks = raw.chunks_exact(size);
        let non_canonical = |k: usize| ProofFormatError::NonCanonical {
            offset: start + k * size,
        };
        let values = match section.item {
            Item::Byte => Values::Bytes(Cow::Borrowed(raw)),
            Item::U8 | Item::U16 | Item::U32 | Item::U64 => Values::Ints(
                chunks
                    .map(|c| {
                        let mut word = [0u8; 8];
                        word[..size].copy_from_slice(c);
                        u64::from_le_bytes(word)
                    })
                    .collect(),
            ),
            Item::Felt => Values::Felts(
                chunks
                    .enumerate()
                    .map(|(k, c)| {
                        Felt::from_le_bytes(c.try_into().expect("8 bytes"))
                            .ok_or_else(|| non_canonical(k))
                    })
                    .collect::<Result<_, _>>()?,
            ),
            Item::Ext => Values::Exts(
                chunks
                    .enumerate()
                    .map(|(k, c)| {
                        Ext3::from_le_bytes(c.try_into().expect("24 bytes"))
                            .ok_or_else(|| non_canonical(k))
                    })
                    .collect::<Result<_, _>>()?,
            ),
            Item::Digest => Values::Digests(
                chunks
                    .enumerate()
                    .map(|(k, c)| {
                        let digest: Digest = c.try_into().expect("32 bytes");
                        self.hash
                            .is_digest(&digest)
                            .then_some(digest)
                            .ok_or_else(|| non_canonical(k))
                    })
                    .collect::<Result<_, _>>()?,
            ),
        };
        (section.set)(target, layer, values);
        Ok(())
    }

    /// Segment `index`'s proof: each section's count from the shape and the positions read
    /// before it.
    fn segment(
        &mut self,
        shape: &Geometry,
        index: usize,
    ) -> Result<SegmentProof, ProofFormatError> {
        let mut sizes = Sizes::new(shape);
        let rounds = sizes.arities.len();
        let mut proof = SegmentProof {
            queries: QueryOpenings {
                fri: empty_layers(rounds),
                ..QueryOpenings::default()
            },
            ..SegmentProof::default()
        };
        for (section, layer) in segment_sections(rounds) {
            let layer = layer.unwrap_or(0);
            let count = sizes.exact(section.count, proof.queries.positions.len(), layer);
            self.read(section, &mut proof, layer, count)?;
            if section.count == Count::Queries {
                sizes
                    .set_positions(&proof.queries.positions)
                    .map_err(|reason| ProofFormatError::Positions {
                        segment: index,
                        reason,
                    })?;
            }
        }
        Ok(proof)
    }

    /// Refuses bytes the contents do not account for.
    pub fn finish(&self) -> Result<(), ProofFormatError> {
        if self.pos != self.bytes.len() {
            return Err(ProofFormatError::Length {
                expected: self.pos as u64,
                got: self.bytes.len() as u64,
            });
        }
        Ok(())
    }
}
