//! The workloads a proof file may hold, dispatched by the tag in its header.
//!
//! Adding a workload is one module implementing [`Workload`] and [`Describe`], and one line
//! in the `registry!` invocation below.

use std::ops::Range;

use ballast_stark::{
    BundleError, PART_MAGIC, Part, Proof, ProofFormatError, StarkParams, VerifierError,
    VerifyPolicy, Workload, bundle, header_len, part_header_len, verify_part, verify_statement,
    workload_tag,
};
use serde_json::{Map, Value};

use crate::{Fibonacci, KeccakChain};

/// How a workload's statement is shown to people and written as JSON.
pub trait Describe: Workload {
    /// One line: what is proven, e.g. "keccak-chain: 2,048 steps from seed 00…, output 5f…".
    fn summary(&self, end: &Self::State) -> String;
    /// The statement's fields as JSON (besides `workload` and `digest`).
    fn json(&self, end: &Self::State) -> Map<String, Value>;
    /// One line: the computation alone, without its outcome (what a part belongs to).
    fn computation(&self) -> String;
    /// The computation's fields as JSON, without its outcome.
    fn computation_json(&self) -> Map<String, Value>;
}

/// What a proof and a part of any workload share: decoding bounded by the header, the
/// encoding, verification, and the parameters and shape. `$inner` is `Proof` or `Part`,
/// `$header_len` its header's length, `$verify` its verifier.
macro_rules! shared_methods {
    ($inner:ident, $header_len:ident, $verify:ident, $what:literal,
     $($variant:ident => $workload:ty),+) => {
        #[doc = concat!("The most bytes the ", $what, " can have, from its header alone.")]
        ///
        /// # Errors
        /// Bad magic, another version, an unknown workload or an invalid header.
        pub fn max_len(header: &[u8]) -> Result<u64, ProofFormatError> {
            match workload_tag(header)? {
                $(
                    <$workload>::TAG => {
                        let len = $header_len::<$workload>().min(header.len());
                        $inner::<$workload>::max_len(&header[..len])
                    }
                )+
                tag => Err(ProofFormatError::UnknownWorkload(tag)),
            }
        }

        #[doc = concat!("Decodes a ", $what, " of whichever workload its header names.")]
        ///
        /// # Errors
        #[doc = concat!("As [`", stringify!($inner), "::from_bytes`], or an unknown workload tag.")]
        pub fn from_bytes(bytes: &[u8]) -> Result<Self, ProofFormatError> {
            match workload_tag(bytes)? {
                $(<$workload>::TAG => $inner::from_bytes(bytes).map(Self::$variant),)+
                tag => Err(ProofFormatError::UnknownWorkload(tag)),
            }
        }

        /// The canonical encoding.
        pub fn to_bytes(&self) -> Vec<u8> {
            match self {
                $(Self::$variant(p) => p.to_bytes(),)+
            }
        }

        #[doc = concat!("Verifies the ", $what, " ([`", stringify!($verify), "`]).")]
        ///
        /// # Errors
        /// The first check that fails.
        pub fn verify(&self, policy: &VerifyPolicy) -> Result<(), VerifierError> {
            match self {
                $(Self::$variant(p) => $verify(p, policy),)+
            }
        }

        #[doc = concat!("The ", $what, "'s parameters.")]
        pub fn params(&self) -> &StarkParams {
            match self {
                $(Self::$variant(p) => &p.params,)+
            }
        }

        /// Provable security in bits, with the AIR's DEEP batch.
        pub fn provable_security_bits(&self) -> u32 {
            match self {
                $(Self::$variant(p) => p.provable_security_bits(),)+
            }
        }

        /// log2 of the rows per segment.
        pub fn log_rows(&self) -> usize {
            match self {
                $(Self::$variant(p) => p.workload.log_rows(),)+
            }
        }

        /// The workload's name.
        pub fn workload_name(&self) -> &'static str {
            match self {
                $(Self::$variant(_) => <$workload>::NAME,)+
            }
        }
    };
}

macro_rules! registry {
    ($($variant:ident => $workload:ty),+ $(,)?) => {
        /// A proof of any registered workload.
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub enum AnyProof {
            $(
                #[doc = concat!("A proof of [`", stringify!($workload), "`].")]
                $variant(Proof<$workload>),
            )+
        }

        /// A part of any registered workload.
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub enum AnyPart {
            $(
                #[doc = concat!("A part of a [`", stringify!($workload), "`] statement.")]
                $variant(Part<$workload>),
            )+
        }

        /// The longest proof or part header of any registered workload: reading this many
        /// bytes (or the whole file, if shorter) is enough for [`AnyProof::max_len`] and
        /// [`AnyPart::max_len`].
        pub const MAX_HEADER_LEN: usize = {
            let mut max = 0;
            $(
                let len = part_header_len::<$workload>();
                if len > max {
                    max = len;
                }
            )+
            max
        };

        impl AnyPart {
            /// Whether `bytes` start like a part (rather than a proof).
            pub fn is_part(bytes: &[u8]) -> bool {
                bytes.starts_with(&PART_MAGIC)
            }

            shared_methods!(Part, part_header_len, verify_part, "part", $($variant => $workload),+);

            /// The segments the part covers.
            pub fn range(&self) -> Range<usize> {
                match self {
                    $(Self::$variant(p) => p.range(),)+
                }
            }

            /// The number of segments of the statement the part belongs to.
            pub fn statement_segments(&self) -> usize {
                match self {
                    $(Self::$variant(p) => p.workload.segments(),)+
                }
            }

            /// The computation the part belongs to, in one line.
            pub fn computation(&self) -> String {
                match self {
                    $(Self::$variant(p) => p.workload.computation(),)+
                }
            }

            /// The computation as JSON: `workload` and the workload's own fields, without the
            /// outcome.
            pub fn computation_json(&self) -> Value {
                let mut map = Map::new();
                map.insert("workload".into(), self.workload_name().into());
                match self {
                    $(Self::$variant(p) => map.extend(p.workload.computation_json()),)+
                }
                Value::Object(map)
            }

            /// Joins named parts into the proof of their statement ([`bundle`]).
            ///
            /// # Errors
            /// As [`bundle`]; parts of different workloads are foreign to one another.
            pub fn bundle(
                parts: Vec<(String, AnyPart)>,
                policy: &VerifyPolicy,
            ) -> Result<AnyProof, BundleError> {
                let Some((reference, first)) = parts.first() else {
                    return Err(BundleError::Empty);
                };
                match first {
                    $(Self::$variant(_) => {
                        let reference = reference.clone();
                        let typed = parts
                            .into_iter()
                            .map(|(name, part)| match part {
                                Self::$variant(p) => Ok((name, p)),
                                #[allow(unreachable_patterns)]
                                _ => Err(BundleError::Foreign {
                                    part: name,
                                    reference: reference.clone(),
                                    what: "statement",
                                }),
                            })
                            .collect::<Result<Vec<_>, _>>()?;
                        bundle(typed, policy).map(AnyProof::$variant)
                    })+
                }
            }
        }

        impl AnyProof {
            shared_methods!(Proof, header_len, verify_statement, "proof", $($variant => $workload),+);

            /// The statement's digest ([`Proof::statement_digest`]).
            pub fn statement_digest(&self) -> [u8; 32] {
                match self {
                    $(Self::$variant(p) => p.statement_digest(),)+
                }
            }

            /// The number of segments.
            pub fn segments(&self) -> usize {
                match self {
                    $(Self::$variant(p) => p.workload.segments(),)+
                }
            }

            /// What is proven, in one line.
            pub fn summary(&self) -> String {
                match self {
                    $(Self::$variant(p) => p.workload.summary(&p.end),)+
                }
            }

            /// The statement as JSON: `workload`, `digest` and the workload's own fields.
            pub fn statement_json(&self) -> Value {
                let mut map = Map::new();
                map.insert("workload".into(), self.workload_name().into());
                map.insert("digest".into(), hex::encode(self.statement_digest()).into());
                match self {
                    $(Self::$variant(p) => map.extend(p.workload.json(&p.end)),)+
                }
                Value::Object(map)
            }
        }

        $(
            impl From<Part<$workload>> for AnyPart {
                fn from(part: Part<$workload>) -> Self {
                    Self::$variant(part)
                }
            }

            impl From<Proof<$workload>> for AnyProof {
                fn from(proof: Proof<$workload>) -> Self {
                    Self::$variant(proof)
                }
            }
        )+
    };
}

registry!(
    Fibonacci => Fibonacci,
    KeccakChain => KeccakChain,
);

/// 1048572 → "1,048,572".
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
