//! A compressed proof's bytes: [`CompressedRecord`], a statement and the last recursive
//! layer's proof that its segment proofs verify (`ballast_recursion` proves and verifies
//! it; this module only writes and reads it).
//!
//! It is a proof's [`HEADER`] with its own magic ([`COMPRESSED_MAGIC`]): the segments'
//! parameters, the workload and the whole statement's range; then the layer's tables proof
//! ([`TablesRecord`], its own header and length); then [`ENDS`], the workload's start and
//! the statement's outcome. So the header and the tables proof's header bound the whole
//! ([`CompressedRecord::max_len`]) from at most [`CompressedRecord::header_len`] bytes, and
//! the decoder, as a proof's, checks every count before it reads what it counts and
//! requires exactly the stated length.

use crate::codec::{Decoder, Encoder, Header, Section, check_stated, decode_header};
use crate::layout::{At, COMPRESSED_MAGIC, ENDS, HEADER, Head, header_len};
use crate::proof::{statement_context, statement_digest};
use crate::protocol::PROTOCOL_VERSION;
use crate::sizes::encoded_len;
use crate::tables_format::MAX_TABLES_HEADER_LEN;
use crate::{ProofFormatError, StarkParams, TablesRecord, Workload};

/// A statement's compressed proof: the parameters its segments were proven with, the
/// workload, its two ends and the last layer's proof about them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompressedRecord<W: Workload> {
    /// The parameters of the statement's segment proofs, which the layer verified.
    pub params: StarkParams,
    /// The computation.
    pub workload: W,
    /// The workload's start state, then the statement's outcome.
    pub ends: [W::State; 2],
    /// The last layer's proof.
    pub layer: TablesRecord,
}

impl<W: Workload> CompressedRecord<W> {
    /// The most bytes [`max_len`](Self::max_len) reads: the header and the longest tables
    /// proof's header.
    pub const fn header_len() -> usize {
        header_len(W::ENCODED_LEN) + MAX_TABLES_HEADER_LEN
    }

    /// The statement's digest: the uncompressed proof's
    /// ([`Proof::statement_digest`](crate::Proof::statement_digest)).
    pub fn statement_digest(&self) -> [u8; 32] {
        statement_digest(&self.workload, &self.ends[1])
    }

    /// The canonical encoding.
    ///
    /// # Panics
    /// If a header value exceeds its encoded width, which no record of a proof does.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.encode().bytes
    }

    /// The byte layout of [`to_bytes`](Self::to_bytes), section by section; the layer's
    /// sections with their offsets in the whole.
    pub fn sections(&self) -> Vec<Section> {
        self.encode().sections
    }

    fn encode(&self) -> Encoder {
        let mut states = Vec::new();
        for state in &self.ends {
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
        head.length = (header_len(W::ENCODED_LEN) + layer.bytes.len()) as u64
            + encoded_len(&ENDS, &(ENDS.get)(&head, 0));
        let mut e = Encoder::default();
        for section in &HEADER {
            e.write(section, &head, At::default());
        }
        let offset = e.bytes.len();
        e.sections.extend(layer.sections.into_iter().map(|mut s| {
            s.range = s.range.start + offset..s.range.end + offset;
            s
        }));
        e.bytes.extend_from_slice(&layer.bytes);
        e.write(&ENDS, &head, At::default());
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
        let (header, layer_len, max) = bounded_header::<W>(&mut d)?;
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
        let state_len = workload.state_len();
        let ends_at = d.pos;
        d.read(&ENDS, &mut head, 0, 2 * state_len)?;
        d.finish()?;
        let state = |k: usize| {
            let at = k * state_len;
            workload.decode_state(&head.states[at..at + state_len], ends_at + at)
        };
        Ok(Self {
            params: head.params,
            ends: [state(0)?, state(1)?],
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
        Ok(bounded_header::<W>(&mut Decoder::new(header))?.2)
    }
}

/// Reads a compressed proof's header and checks it (a proof's checks, and a range that is
/// the whole statement), then its tables proof's header: the header, the tables proof's
/// stated length, and the bound on the whole.
fn bounded_header<W: Workload>(
    d: &mut Decoder<'_>,
) -> Result<(Header<W>, usize, u64), ProofFormatError> {
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
    let (layer_len, layer_max) = TablesRecord::stated_len(&d.bytes[d.pos..])?;
    let ends = 2 * header.workload.state_len() as u64;
    let max = (d.pos as u64)
        .checked_add(layer_max)
        .and_then(|len| len.checked_add(ends))
        .ok_or(ProofFormatError::TooLarge)?;
    let layer_len = usize::try_from(layer_len).map_err(|_| ProofFormatError::TooLarge)?;
    Ok((header, layer_len, max))
}
