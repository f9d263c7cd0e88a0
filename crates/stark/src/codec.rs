//! The canonical binary proof format.
//!
//! Little-endian throughout; field elements are 8-byte canonical values (< p), extension
//! elements three of them, digests 32 bytes. The header fixes every length but one per
//! segment, the number of distinct query positions, which comes first in the segment's
//! query part with the positions; every later length follows from them (the rows, the
//! [`QueryPlan`] of FRI values, each batch opening's node count). So a reader bounds the
//! file size from the header before loading it ([`Proof::max_len`]), the decoder checks
//! each count before reading what it counts and refuses trailing bytes, and every proof has
//! exactly one encoding (positions strictly increasing, field elements canonical).
//!
//! ```text
//! magic "BLST" | version u16
//! params     log_blowup u8 | num_queries u16 | pow_bits u8 | log_final_poly_len u8
//! workload   tag u8 | the workload's encoding (Workload::ENCODED_LEN bytes)
//! end state  | boundary states (segments − 1), each Workload::state_len bytes
//! segment ×  trace root | quotient root
//!            ood: trace at z (W ext) | trace at zω (W ext) | quotient at z (C ext)
//!            FRI layer roots (R) | final polynomial (2^log_final_poly_len ext) | pow nonce u64
//!            query count q u16 (1..=num_queries) | positions u32 × q (increasing, < N)
//!            trace rows (q·W felts) | trace batch opening (digests)
//!            quotient rows (q·C felts) | quotient batch opening
//!            per FRI layer: values (ext, the plan's unknown slots) | batch opening
//! ```
//!
//! A [`Part`] (segments `first..first + count` of a statement, proven on their own) has the
//! same header under its own magic, then its range, its states and its segments, each
//! segment encoded exactly as in a proof:
//!
//! ```text
//! magic "BLSP" | version u16 | params | workload
//! range      first u32 | count u32 (1..=segments − first)
//! states     start state | end state of each segment (count)
//! segment ×  count, as above
//! ```

use std::ops::Range;

use ballast_field::{Ext3, Felt};
use ballast_fri::{FriLayerOpening, QueryPlan};
use ballast_keccak::{HashDomain, keccak256};
use ballast_merkle::{Digest, batch_opening_len};

use crate::part::{check_part_range, max_part_len};
use crate::proof::SegmentShape;
use crate::protocol::PROTOCOL_VERSION;
use crate::statement::{context, max_proof_len, segment_shape};
use crate::{
    OodValues, Part, Proof, ProofFormatError, QueryOpenings, SegmentProof, StarkParams, Workload,
};

/// The first four bytes of every proof.
pub const MAGIC: [u8; 4] = *b"BLST";
/// The first four bytes of every part.
pub const PART_MAGIC: [u8; 4] = *b"BLSP";
/// Bytes before the workload tag: magic, version, parameters.
const PREFIX_LEN: usize = 4 + 2 + 5;

/// A named byte range of an encoded proof.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// What the bytes hold, e.g. `segment 0 query 3 trace path`.
    pub name: String,
    /// Where they are.
    pub range: Range<usize>,
}

/// The workload tag of an encoded proof or part, after checking its magic and version:
/// which [`Workload`] decodes it.
///
/// # Errors
/// Too short, bad magic or another format version.
pub fn workload_tag(bytes: &[u8]) -> Result<u8, ProofFormatError> {
    let magic = if bytes.starts_with(&PART_MAGIC) {
        PART_MAGIC
    } else {
        MAGIC
    };
    let mut d = Decoder { bytes, pos: 0 };
    decode_prefix(&mut d, magic)?;
    d.u8()
}

/// Bytes of the header of a `W` proof: everything [`Proof::max_len`] reads.
pub const fn header_len<W: Workload>() -> usize {
    PREFIX_LEN + 1 + W::ENCODED_LEN
}

/// Bytes of the header of a `W` part: everything [`Part::max_len`] reads.
pub const fn part_header_len<W: Workload>() -> usize {
    header_len::<W>() + 8
}

impl<W: Workload> Proof<W> {
    /// The canonical encoding.
    ///
    /// # Panics
    /// If a parameter exceeds its encoded width, which no proof from
    /// [`prove_statement`](crate::prove_statement) or [`from_bytes`](Self::from_bytes) does.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.encode().bytes
    }

    /// The byte layout of [`to_bytes`](Self::to_bytes), section by section.
    pub fn sections(&self) -> Vec<Section> {
        self.encode().sections
    }

    fn encode(&self) -> Encoder {
        let mut e = Encoder::default();
        encode_header(&mut e, MAGIC, &self.params, &self.workload);
        e.section("end state", |e| {
            self.workload.encode_state(&self.end, &mut e.bytes);
        });
        for (i, state) in self.boundaries.iter().enumerate() {
            e.section(&format!("boundary {i}"), |e| {
                self.workload.encode_state(state, &mut e.bytes);
            });
        }
        for (i, segment) in self.segments.iter().enumerate() {
            encode_segment(&mut e, i, segment);
        }
        e
    }

    /// Decodes a proof, checking its length against the header's bound before reading
    /// further.
    ///
    /// # Errors
    /// Bad magic, an unsupported version, another workload, an invalid header, invalid
    /// query positions, a wrong length or a non-canonical field element.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ProofFormatError> {
        let mut d = Decoder { bytes, pos: 0 };
        let Header {
            params,
            workload,
            segment,
        } = decode_header::<W>(&mut d, MAGIC)?;
        let max_len = max_proof_len(&workload, &params).ok_or(ProofFormatError::TooLarge)?;
        check_max_len(bytes, max_len)?;
        let end = d.state(&workload)?;
        let boundaries = (1..workload.segments())
            .map(|_| d.state(&workload))
            .collect::<Result<_, _>>()?;
        let segments = (0..workload.segments())
            .map(|i| decode_segment(&mut d, &segment, i))
            .collect::<Result<_, _>>()?;
        d.finish()?;
        Ok(Self {
            params,
            workload,
            end,
            boundaries,
            segments,
        })
    }

    /// The most bytes a proof can have, from its first [`header_len`] bytes alone: lets a
    /// reader refuse a file too large before loading it. (A proof is shorter by whatever
    /// its queries share: repeated positions, cosets and tree nodes.)
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes) for the header.
    pub fn max_len(header: &[u8]) -> Result<u64, ProofFormatError> {
        let mut d = Decoder {
            bytes: header,
            pos: 0,
        };
        let h = decode_header::<W>(&mut d, MAGIC)?;
        max_proof_len(&h.workload, &h.params).ok_or(ProofFormatError::TooLarge)
    }

    /// Keccak-256 of the workload's tag and encoding and of the outcome
    /// ([`HashDomain::Statement`]): a short name for exactly this statement, which
    /// `cli prove` prints and `cli verify --expect-statement` checks.
    pub fn statement_digest(&self) -> [u8; 32] {
        let mut bytes = context(&self.workload);
        self.workload.encode_state(&self.end, &mut bytes);
        keccak256(HashDomain::Statement, &bytes)
    }
}

impl<W: Workload> Part<W> {
    /// The canonical encoding.
    ///
    /// # Panics
    /// As [`Proof::to_bytes`], or if the range exceeds its encoded width.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut e = Encoder::default();
        encode_header(&mut e, PART_MAGIC, &self.params, &self.workload);
        e.section("range", |e| {
            e.u32(narrow(self.first));
            e.u32(narrow(self.segments.len()));
        });
        e.section("start state", |e| {
            self.workload.encode_state(&self.start, &mut e.bytes);
        });
        for (i, state) in self.ends.iter().enumerate() {
            e.section(&format!("end state {}", self.first + i), |e| {
                self.workload.encode_state(state, &mut e.bytes);
            });
        }
        for (i, segment) in self.segments.iter().enumerate() {
            encode_segment(&mut e, self.first + i, segment);
        }
        e.bytes
    }

    /// Decodes a part, checking its length against the header's bound before reading
    /// further.
    ///
    /// # Errors
    /// As [`Proof::from_bytes`], or a range outside the statement.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ProofFormatError> {
        let mut d = Decoder { bytes, pos: 0 };
        let (
            Header {
                params,
                workload,
                segment,
            },
            range,
        ) = decode_part_header::<W>(&mut d)?;
        let max_len =
            max_part_len(&workload, &params, range.len()).ok_or(ProofFormatError::TooLarge)?;
        check_max_len(bytes, max_len)?;
        let start = d.state(&workload)?;
        let ends = range
            .clone()
            .map(|_| d.state(&workload))
            .collect::<Result<_, _>>()?;
        let segments = range
            .clone()
            .map(|i| decode_segment(&mut d, &segment, i))
            .collect::<Result<_, _>>()?;
        d.finish()?;
        Ok(Self {
            params,
            workload,
            first: range.start,
            start,
            ends,
            segments,
        })
    }

    /// The most bytes a part can have, from its first [`part_header_len`] bytes alone.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes) for the header.
    pub fn max_len(header: &[u8]) -> Result<u64, ProofFormatError> {
        let mut d = Decoder {
            bytes: header,
            pos: 0,
        };
        let (h, range) = decode_part_header::<W>(&mut d)?;
        max_part_len(&h.workload, &h.params, range.len()).ok_or(ProofFormatError::TooLarge)
    }
}

/// Magic, version, parameters and workload: the start of every proof and part.
fn encode_header<W: Workload>(e: &mut Encoder, magic: [u8; 4], params: &StarkParams, workload: &W) {
    e.section("magic", |e| e.bytes.extend_from_slice(&magic));
    e.section("version", |e| e.u16(PROTOCOL_VERSION));
    e.section("params", |e| {
        let StarkParams {
            log_blowup,
            num_queries,
            pow_bits,
            log_final_poly_len,
        } = *params;
        e.u8(narrow(log_blowup));
        e.u16(narrow(num_queries));
        e.u8(narrow(pow_bits));
        e.u8(narrow(log_final_poly_len));
    });
    e.section("workload", |e| {
        e.bytes.extend_from_slice(&context(workload));
    });
}

/// Refuses bytes longer than their header allows.
fn check_max_len(bytes: &[u8], max: u64) -> Result<(), ProofFormatError> {
    if bytes.len() as u64 > max {
        return Err(ProofFormatError::TooLong {
            max,
            got: bytes.len() as u64,
        });
    }
    Ok(())
}

/// What the fixed-size header says.
struct Header<W> {
    params: StarkParams,
    workload: W,
    segment: SegmentShape,
}

fn decode_prefix(d: &mut Decoder<'_>, magic: [u8; 4]) -> Result<StarkParams, ProofFormatError> {
    if d.bytes.len() < PREFIX_LEN + 1 || d.bytes[..4] != magic {
        return Err(if d.bytes.starts_with(&magic) {
            ProofFormatError::Length {
                expected: (PREFIX_LEN + 1) as u64,
                got: d.bytes.len() as u64,
            }
        } else {
            ProofFormatError::BadMagic
        });
    }
    d.pos = 4;
    let version = d.u16()?;
    if version != PROTOCOL_VERSION {
        return Err(ProofFormatError::UnsupportedVersion {
            got: version,
            supported: PROTOCOL_VERSION,
        });
    }
    Ok(StarkParams {
        log_blowup: usize::from(d.u8()?),
        num_queries: usize::from(d.u16()?),
        pow_bits: u32::from(d.u8()?),
        log_final_poly_len: usize::from(d.u8()?),
    })
}

fn decode_header<W: Workload>(
    d: &mut Decoder<'_>,
    magic: [u8; 4],
) -> Result<Header<W>, ProofFormatError> {
    let params = decode_prefix(d, magic)?;
    let tag = d.u8()?;
    if tag != W::TAG {
        return Err(ProofFormatError::UnknownWorkload(tag));
    }
    let workload = W::decode(d.slice(W::ENCODED_LEN)?)?;
    // Validates the parameters against the workload's rows.
    let segment = segment_shape(&workload, 0, &params)?;
    Ok(Header {
        params,
        workload,
        segment,
    })
}

/// A part's header and the segments it covers.
fn decode_part_header<W: Workload>(
    d: &mut Decoder<'_>,
) -> Result<(Header<W>, Range<usize>), ProofFormatError> {
    let header = decode_header::<W>(d, PART_MAGIC)?;
    let first = d.u32()? as usize;
    let count = d.u32()? as usize;
    let range = first..first.saturating_add(count);
    check_part_range(&header.workload, &range)?;
    Ok((header, range))
}

/// A header field in its encoded width.
fn narrow<T: TryFrom<U>, U: Copy + std::fmt::Display>(value: U) -> T {
    T::try_from(value)
        .unwrap_or_else(|_| panic!("{value} does not fit its field in the proof header"))
}

fn encode_segment(e: &mut Encoder, i: usize, p: &SegmentProof) {
    let name = |part: &str| format!("segment {i} {part}");
    e.section(&name("trace root"), |e| e.digest(&p.trace_root));
    e.section(&name("quotient root"), |e| e.digest(&p.quotient_root));
    e.section(&name("ood trace z"), |e| e.exts(&p.ood.trace_z));
    e.section(&name("ood trace zw"), |e| e.exts(&p.ood.trace_zw));
    e.section(&name("ood quotient z"), |e| e.exts(&p.ood.quotient_z));
    e.section(&name("fri roots"), |e| e.digests(&p.fri_roots));
    e.section(&name("final poly"), |e| e.exts(&p.final_poly));
    e.section(&name("pow nonce"), |e| e.u64(p.pow_nonce));
    let q = &p.queries;
    e.section(&name("query count"), |e| e.u16(narrow(q.positions.len())));
    e.section(&name("query positions"), |e| {
        for &position in &q.positions {
            e.u32(narrow(position));
        }
    });
    e.section(&name("trace rows"), |e| e.felts(&q.trace_rows));
    e.section(&name("trace opening"), |e| e.digests(&q.trace_nodes));
    e.section(&name("quotient rows"), |e| e.felts(&q.quotient_rows));
    e.section(&name("quotient opening"), |e| e.digests(&q.quotient_nodes));
    for (k, layer) in q.fri.iter().enumerate() {
        e.section(&name(&format!("fri layer {k} values")), |e| {
            e.exts(&layer.values);
        });
        e.section(&name(&format!("fri layer {k} opening")), |e| {
            e.digests(&layer.nodes);
        });
    }
}

fn decode_segment(
    d: &mut Decoder<'_>,
    shape: &SegmentShape,
    segment: usize,
) -> Result<SegmentProof, ProofFormatError> {
    let log_lde = shape.log_lde();
    let arities = shape.fri_arities();
    let trace_root = d.digest()?;
    let quotient_root = d.digest()?;
    let ood = OodValues {
        trace_z: d.exts(shape.width)?,
        trace_zw: d.exts(shape.width)?,
        quotient_z: d.exts(shape.quotient_width)?,
    };
    let fri_roots = d.digests(arities.len())?;
    let final_poly = d.exts(1 << shape.log_final_poly_len)?;
    let pow_nonce = d.u64()?;
    let invalid = |reason: String| ProofFormatError::Positions { segment, reason };
    let count = usize::from(d.u16()?);
    if !(1..=shape.num_queries).contains(&count) {
        return Err(invalid(format!(
            "{count} positions, must be 1..={}",
            shape.num_queries
        )));
    }
    let positions = (0..count)
        .map(|_| d.u32().map(|p| p as usize))
        .collect::<Result<Vec<_>, _>>()?;
    let plan = QueryPlan::new(log_lde, &arities, &positions).map_err(|e| invalid(e.to_string()))?;
    let opening_len = batch_opening_len(log_lde, &positions);
    let trace_rows = d.felts(count * shape.width)?;
    let trace_nodes = d.digests(opening_len)?;
    let quotient_rows = d.felts(count * shape.quotient_width)?;
    let quotient_nodes = d.digests(opening_len)?;
    let fri = plan
        .layers()
        .iter()
        .map(|layer| {
            Ok(FriLayerOpening {
                values: d.exts(layer.unknown_count())?,
                nodes: d.digests(layer.opening_len())?,
            })
        })
        .collect::<Result<_, ProofFormatError>>()?;
    Ok(SegmentProof {
        trace_root,
        quotient_root,
        ood,
        fri_roots,
        final_poly,
        pow_nonce,
        queries: QueryOpenings {
            positions,
            trace_rows,
            trace_nodes,
            quotient_rows,
            quotient_nodes,
            fri,
        },
    })
}

/// Appends values and records named sections.
#[derive(Default)]
struct Encoder {
    bytes: Vec<u8>,
    sections: Vec<Section>,
}

impl Encoder {
    fn section(&mut self, name: &str, write: impl FnOnce(&mut Self)) {
        let start = self.bytes.len();
        write(self);
        self.sections.push(Section {
            name: name.to_owned(),
            range: start..self.bytes.len(),
        });
    }

    fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }

    fn u16(&mut self, v: u16) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    fn felts(&mut self, values: &[Felt]) {
        for v in values {
            self.bytes.extend_from_slice(&v.to_le_bytes());
        }
    }

    fn ext(&mut self, v: Ext3) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    fn exts(&mut self, values: &[Ext3]) {
        for &v in values {
            self.ext(v);
        }
    }

    fn digest(&mut self, d: &Digest) {
        self.bytes.extend_from_slice(d);
    }

    fn digests(&mut self, ds: &[Digest]) {
        for d in ds {
            self.digest(d);
        }
    }
}

/// Reads values with bounds checks; every read fails cleanly past the end.
struct Decoder<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    fn slice(&mut self, len: usize) -> Result<&'a [u8], ProofFormatError> {
        let end = self.pos.checked_add(len).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(ProofFormatError::Length {
                expected: (self.pos + len) as u64,
                got: self.bytes.len() as u64,
            });
        };
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], ProofFormatError> {
        self.slice(N)
            .map(|bytes| bytes.try_into().expect("slice returns N bytes"))
    }

    fn u8(&mut self) -> Result<u8, ProofFormatError> {
        Ok(self.take::<1>()?[0])
    }

    fn u16(&mut self) -> Result<u16, ProofFormatError> {
        Ok(u16::from_le_bytes(self.take()?))
    }

    fn u32(&mut self) -> Result<u32, ProofFormatError> {
        Ok(u32::from_le_bytes(self.take()?))
    }

    fn u64(&mut self) -> Result<u64, ProofFormatError> {
        Ok(u64::from_le_bytes(self.take()?))
    }

    fn felt(&mut self) -> Result<Felt, ProofFormatError> {
        let offset = self.pos;
        Felt::from_le_bytes(self.take()?).ok_or(ProofFormatError::NonCanonical { offset })
    }

    fn felts(&mut self, len: usize) -> Result<Vec<Felt>, ProofFormatError> {
        (0..len).map(|_| self.felt()).collect()
    }

    fn ext(&mut self) -> Result<Ext3, ProofFormatError> {
        let offset = self.pos;
        Ext3::from_le_bytes(self.take()?).ok_or(ProofFormatError::NonCanonical { offset })
    }

    fn exts(&mut self, len: usize) -> Result<Vec<Ext3>, ProofFormatError> {
        (0..len).map(|_| self.ext()).collect()
    }

    fn digest(&mut self) -> Result<Digest, ProofFormatError> {
        self.take()
    }

    fn digests(&mut self, len: usize) -> Result<Vec<Digest>, ProofFormatError> {
        (0..len).map(|_| self.digest()).collect()
    }

    fn state<W: Workload>(&mut self, workload: &W) -> Result<W::State, ProofFormatError> {
        let offset = self.pos;
        let raw = self.slice(workload.state_len())?;
        workload.decode_state(raw, offset)
    }

    /// Refuses trailing bytes.
    fn finish(&self) -> Result<(), ProofFormatError> {
        if self.pos != self.bytes.len() {
            return Err(ProofFormatError::Length {
                expected: self.pos as u64,
                got: self.bytes.len() as u64,
            });
        }
        Ok(())
    }
}
