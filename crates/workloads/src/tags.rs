//! The table of workload tags: which workload decodes a proof, by the tag in its header.
//! Adding a workload is one row in [`WORKLOADS`].

use ballast_stark::{BundleError, Proof, ProofFormatError, VerifyPolicy, peek};

use crate::{AnyProof, Describe, Fibonacci, KeccakChain};

/// A registered workload: its tag, and its proofs' decoding and bundling.
pub struct Registered {
    /// [`Workload::TAG`](ballast_stark::Workload::TAG).
    pub tag: u8,
    /// Bytes of its proofs' header ([`Proof::header_len`]).
    pub header_len: usize,
    decode: Decoder,
    max_len: fn(&[u8]) -> Result<u64, ProofFormatError>,
    bundle: Bundler,
}

/// Decodes a proof of one workload.
type Decoder = fn(&[u8]) -> Result<Box<dyn AnyProof>, ProofFormatError>;

/// Joins parts of one workload's statement.
type Bundler =
    fn(Vec<(String, Box<dyn AnyProof>)>, &VerifyPolicy) -> Result<Box<dyn AnyProof>, BundleError>;

impl Registered {
    /// The row of workload `W`.
    pub const fn of<W: Describe + Send + 'static>() -> Self {
        Self {
            tag: W::TAG,
            header_len: Proof::<W>::header_len(),
            decode: decode_as::<W>,
            max_len: Proof::<W>::max_len,
            bundle: bundle_as::<W>,
        }
    }
}

/// Every workload a proof may hold, by tag.
pub const WORKLOADS: [Registered; 2] = [
    Registered::of::<Fibonacci>(),
    Registered::of::<KeccakChain>(),
];

/// The longest header of any registered workload: reading this many bytes (or the whole
/// file, if shorter) is enough for [`max_len`].
pub const MAX_HEADER_LEN: usize = {
    let mut max = 0;
    let mut i = 0;
    while i < WORKLOADS.len() {
        if WORKLOADS[i].header_len > max {
            max = WORKLOADS[i].header_len;
        }
        i += 1;
    }
    max
};

/// The row of the workload tagged `tag`.
fn row(tag: u8) -> Option<&'static Registered> {
    WORKLOADS.iter().find(|w| w.tag == tag)
}

/// The row of the workload `bytes` name.
fn registered(bytes: &[u8]) -> Result<&'static Registered, ProofFormatError> {
    let tag = peek(bytes)?.tag;
    row(tag).ok_or(ProofFormatError::UnknownWorkload(tag))
}

/// Decodes a proof of whichever workload its header names ([`Proof::from_bytes`]).
///
/// # Errors
/// As [`Proof::from_bytes`], or an unknown workload tag.
pub fn decode(bytes: &[u8]) -> Result<Box<dyn AnyProof>, ProofFormatError> {
    (registered(bytes)?.decode)(bytes)
}

/// The most bytes a proof with this header can have ([`Proof::max_len`]), from its first
/// [`MAX_HEADER_LEN`] bytes or fewer.
///
/// # Errors
/// Bad magic, another version, an unknown workload or an invalid header.
pub fn max_len(header: &[u8]) -> Result<u64, ProofFormatError> {
    let row = registered(header)?;
    (row.max_len)(&header[..row.header_len.min(header.len())])
}

/// Joins named parts into the proof of their statement ([`ballast_stark::bundle`]).
///
/// # Errors
/// As [`ballast_stark::bundle`]; parts of different workloads are foreign to one another.
pub fn bundle(
    parts: Vec<(String, Box<dyn AnyProof>)>,
    policy: &VerifyPolicy,
) -> Result<Box<dyn AnyProof>, BundleError> {
    let Some((_, first)) = parts.first() else {
        return Err(BundleError::Empty);
    };
    let row = row(first.tag()).expect("every proof's workload is registered");
    (row.bundle)(parts, policy)
}

/// [`Proof::from_bytes`] of a `W` proof.
fn decode_as<W: Describe + Send + 'static>(
    bytes: &[u8],
) -> Result<Box<dyn AnyProof>, ProofFormatError> {
    Ok(Box::new(Proof::<W>::from_bytes(bytes)?))
}

/// [`ballast_stark::bundle`] of parts that must all be `W`'s.
fn bundle_as<W: Describe + Send + 'static>(
    parts: Vec<(String, Box<dyn AnyProof>)>,
    policy: &VerifyPolicy,
) -> Result<Box<dyn AnyProof>, BundleError> {
    let reference = parts
        .first()
        .map(|(name, _)| name.clone())
        .unwrap_or_default();
    let typed = parts
        .into_iter()
        .map(
            |(name, part)| match part.into_any().downcast::<Proof<W>>() {
                Ok(part) => Ok((name, *part)),
                Err(_) => Err(BundleError::Foreign {
                    part: name,
                    reference: reference.clone(),
                    what: "statement",
                }),
            },
        )
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Box::new(ballast_stark::bundle(typed, policy)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_distinct() {
        let tags: std::collections::BTreeSet<u8> = WORKLOADS.iter().map(|w| w.tag).collect();
        assert_eq!(tags.len(), WORKLOADS.len());
    }
}
