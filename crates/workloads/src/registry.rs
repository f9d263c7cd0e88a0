//! The table of workloads: everything that handles any workload (decoding and bundling
//! proofs by the tag in their header, `cli`'s statement flags and help) reads it. Adding a
//! workload is one module and one row in [`WORKLOADS`].

use ballast_stark::{
    BundleError, CompressedRecord, Proof, ProofFormatError, VerifyPolicy, Workload, peek,
};

use crate::flags::{Flag, FlagError, FlagValues, FromFlags, SHARED_FLAGS};
use crate::{AnyCompressed, AnyProof, AnyStatement, Fibonacci, KeccakChain, Poseidon2Chain};

/// A registered workload: its tag and name, its flags, and its proofs' decoding and
/// bundling.
pub struct Registered {
    /// [`Workload::TAG`].
    pub tag: u8,
    /// [`Workload::NAME`].
    pub name: &'static str,
    /// [`FromFlags::ABOUT`].
    pub about: &'static str,
    /// [`FromFlags::FLAGS`].
    pub flags: &'static [Flag],
    /// Bytes of its proofs' header ([`Proof::header_len`]).
    pub header_len: usize,
    /// Bytes of its compressed proofs' headers ([`CompressedRecord::header_len`]).
    pub compressed_header_len: usize,
    from_flags: StatementReader,
    decode: Decoder,
    max_len: fn(&[u8]) -> Result<u64, ProofFormatError>,
    decode_compressed: CompressedDecoder,
    compressed_max_len: fn(&[u8]) -> Result<u64, ProofFormatError>,
    bundle: Bundler,
}

/// Decodes a compressed proof of one workload.
type CompressedDecoder = fn(&[u8]) -> Result<Box<dyn AnyCompressed>, ProofFormatError>;

/// Reads a statement of one workload from its flags.
type StatementReader = fn(&FlagValues) -> Result<Box<dyn AnyStatement>, FlagError>;

/// Decodes a proof of one workload.
type Decoder = fn(&[u8]) -> Result<Box<dyn AnyProof>, ProofFormatError>;

/// Joins parts of one workload's statement.
type Bundler =
    fn(Vec<(String, Box<dyn AnyProof>)>, &VerifyPolicy) -> Result<Box<dyn AnyProof>, BundleError>;

impl Registered {
    /// The row of workload `W`.
    pub const fn of<W: FromFlags + Send + 'static>() -> Self {
        Self {
            tag: W::TAG,
            name: W::NAME,
            about: W::ABOUT,
            flags: W::FLAGS,
            header_len: Proof::<W>::header_len(),
            compressed_header_len: CompressedRecord::<W>::header_len(),
            from_flags: statement_as::<W>,
            decode: decode_as::<W>,
            max_len: Proof::<W>::max_len,
            decode_compressed: decode_compressed_as::<W>,
            compressed_max_len: CompressedRecord::<W>::max_len,
            bundle: bundle_as::<W>,
        }
    }
}

/// Every workload a proof may hold, by tag.
pub const WORKLOADS: &[Registered] = &[
    Registered::of::<Fibonacci>(),
    Registered::of::<KeccakChain>(),
    Registered::of::<Poseidon2Chain>(),
    #[cfg(feature = "test-workload")]
    Registered::of::<crate::square_chain::SquareChain>(),
];

/// The workload `cli prove` proves when none is named.
pub const DEFAULT_WORKLOAD: &str = KeccakChain::NAME;

/// The row of the workload named `name`.
pub fn named(name: &str) -> Option<&'static Registered> {
    WORKLOADS.iter().find(|w| w.name == name)
}

impl Registered {
    /// Whether it takes `--flag` (its own flags and the shared ones).
    pub fn takes(&self, flag: &str) -> bool {
        self.flags
            .iter()
            .chain(&SHARED_FLAGS)
            .any(|f| f.name == flag)
    }

    /// The statement `flags` describe.
    ///
    /// # Errors
    /// A flag it does not take (naming the workloads that do), or what
    /// [`FromFlags::from_flags`] finds.
    pub fn statement(&self, flags: &FlagValues) -> Result<Box<dyn AnyStatement>, FlagError> {
        let foreign: Vec<&str> = flags.names().filter(|f| !self.takes(f)).collect();
        if let Some(&first) = foreign.first() {
            let owners = |flag: &str| -> Vec<&str> {
                WORKLOADS
                    .iter()
                    .filter(|w| w.takes(flag))
                    .map(|w| w.name)
                    .collect()
            };
            let owner = owners(first).join(" and ");
            let given = foreign
                .iter()
                .map(|f| format!("--{f}"))
                .collect::<Vec<_>>()
                .join(" and ");
            let what = if foreign.len() == 1 {
                format!("{given} is a {owner} flag")
            } else if foreign.iter().all(|f| owners(f) == owners(first)) {
                format!("{given} are {owner} flags")
            } else {
                format!("{given} are flags of other workloads")
            };
            let takes = self
                .flags
                .iter()
                .chain(&SHARED_FLAGS)
                .map(|f| format!("--{}", f.name))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(FlagError(format!("{what}; {} takes {takes}", self.name)));
        }
        (self.from_flags)(flags)
    }
}

/// The longest header of any registered workload's proofs, compressed or not: reading this
/// many bytes (or the whole file, if shorter) is enough for [`max_len`].
pub const MAX_HEADER_LEN: usize = {
    let mut max = 0;
    let mut i = 0;
    while i < WORKLOADS.len() {
        let row = &WORKLOADS[i];
        if row.header_len > max {
            max = row.header_len;
        }
        if row.compressed_header_len > max {
            max = row.compressed_header_len;
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

/// Decodes a compressed proof of whichever workload its header names
/// ([`CompressedRecord::from_bytes`]).
///
/// # Errors
/// As [`CompressedRecord::from_bytes`], or an unknown workload tag.
pub fn decode_compressed(bytes: &[u8]) -> Result<Box<dyn AnyCompressed>, ProofFormatError> {
    (registered(bytes)?.decode_compressed)(bytes)
}

/// The most bytes a proof or compressed proof with this header can have
/// ([`Proof::max_len`], [`CompressedRecord::max_len`]), from its first [`MAX_HEADER_LEN`]
/// bytes or fewer.
///
/// # Errors
/// Bad magic, another version, an unknown workload or an invalid header.
pub fn max_len(header: &[u8]) -> Result<u64, ProofFormatError> {
    let row = registered(header)?;
    if peek(header)?.compressed {
        (row.compressed_max_len)(&header[..row.compressed_header_len.min(header.len())])
    } else {
        (row.max_len)(&header[..row.header_len.min(header.len())])
    }
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

/// [`FromFlags::from_flags`] of a `W` statement.
fn statement_as<W: FromFlags + Send + 'static>(
    flags: &FlagValues,
) -> Result<Box<dyn AnyStatement>, FlagError> {
    Ok(Box::new(W::from_flags(flags)?))
}

/// [`Proof::from_bytes`] of a `W` proof.
fn decode_as<W: FromFlags + Send + 'static>(
    bytes: &[u8],
) -> Result<Box<dyn AnyProof>, ProofFormatError> {
    Ok(Box::new(Proof::<W>::from_bytes(bytes)?))
}

/// [`CompressedRecord::from_bytes`] of a `W` compressed proof.
fn decode_compressed_as<W: FromFlags + Send + 'static>(
    bytes: &[u8],
) -> Result<Box<dyn AnyCompressed>, ProofFormatError> {
    Ok(Box::new(CompressedRecord::<W>::from_bytes(bytes)?))
}

/// [`ballast_stark::bundle`] of parts that must all be `W`'s.
fn bundle_as<W: FromFlags + Send + 'static>(
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
    fn tags_and_names_are_distinct() {
        let tags: std::collections::BTreeSet<u8> = WORKLOADS.iter().map(|w| w.tag).collect();
        assert_eq!(tags.len(), WORKLOADS.len());
        let names: std::collections::BTreeSet<&str> = WORKLOADS.iter().map(|w| w.name).collect();
        assert_eq!(names.len(), WORKLOADS.len());
        assert!(named(DEFAULT_WORKLOAD).is_some());
    }

    #[test]
    fn a_flag_of_another_workload_is_named_with_its_owner() {
        let chain = named(KeccakChain::NAME).unwrap();
        let fibonacci = named(Fibonacci::NAME).unwrap();
        let mut flags = FlagValues::default();
        flags.insert("sequences", "2");
        let err = chain.statement(&flags).err().unwrap().to_string();
        assert!(
            err.starts_with("--sequences is a fibonacci flag; keccak-chain takes --seed"),
            "{err}"
        );
        let mut flags = FlagValues::default();
        flags.insert("seed", "00");
        flags.insert("steps", "4");
        let err = fibonacci.statement(&flags).err().unwrap().to_string();
        assert_eq!(
            err,
            "--seed and --steps are keccak-chain and poseidon2-chain flags; fibonacci takes --sequences, --log-rows, --segments"
        );
        let mut flags = FlagValues::default();
        flags.insert("segments", "2");
        assert_eq!(fibonacci.statement(&flags).unwrap().segments(), 2);
    }
}
