//! Soundness parameters, their validation and the security they buy.

use ballast_air::{Air, AirError};
use ballast_field::TWO_ADICITY;
use ballast_merkle::MerkleHash;
use thiserror::Error;

use crate::{Circuit, Regime};

/// A parameter outside what ballast supports.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ParamsError {
    /// This error occurs when a parameter is outside its supported range.
    #[error("{name} is {value}, must be in {min}..={max}")]
    OutOfRange {
        /// The parameter's name.
        name: &'static str,
        /// The value given.
        value: usize,
        /// Smallest allowed value.
        min: usize,
        /// Largest allowed value.
        max: usize,
    },
    /// This error occurs when a statement's value is not a canonical field element (at
    /// least the Goldilocks prime).
    #[error("{name} holds a value that is not a canonical field element")]
    NonCanonical {
        /// The parameter's name.
        name: &'static str,
    },
    /// This error occurs when an AIR is malformed (no constraints, a bad periodic column).
    #[error("invalid AIR: {0}")]
    Air(#[from] AirError),
    /// This error occurs when an AIR's constraints are of higher degree than the blowup
    /// can accommodate.
    #[error("constraints of degree {degree} need a blowup of at least {min_blowup}")]
    DegreeTooHigh {
        /// The AIR's constraint degree.
        degree: usize,
        /// The smallest blowup that works.
        min_blowup: usize,
    },
    /// This error occurs when a security target exceeds what the hash allows.
    #[error(
        "a {target}-bit target exceeds the {max} bits the Merkle hash's collision resistance allows"
    )]
    TargetTooHigh {
        /// The target, in bits.
        target: u32,
        /// The hash's collision resistance, in bits.
        max: u32,
    },
    /// This error occurs when the tables of one proof are none, or not tallest first.
    #[error("tables must be given tallest first, at least one")]
    TablesOrder,
    /// This error occurs when no number of queries reaches a security target.
    #[error(
        "no number of queries up to {max} reaches {target} bits ({regime}) at blowup {blowup} with {pow_bits} grinding bits: the {binding} round caps them at {cap}",
        max = MAX_QUERIES
    )]
    Unreachable {
        /// The target, in bits.
        target: u32,
        /// The regime it is judged in.
        regime: Regime,
        /// The blowup factor.
        blowup: usize,
        /// The grinding bits.
        pow_bits: u32,
        /// The round that caps the figure.
        binding: String,
        /// The most bits any number of queries gives.
        cap: u32,
    },
}

/// Supported blowups are 2^1 … 2^6: 8 to 32 for a recursive proof's layers, 64 for its
/// last, where a query at ρ = 1/64 buys the most bits.
pub const LOG_BLOWUP_RANGE: std::ops::RangeInclusive<usize> = 1..=6;
/// Most queries a proof may carry.
pub const MAX_QUERIES: usize = 1024;
/// Most grinding bits (2^30 hashes is minutes on one core).
pub const MAX_POW_BITS: u32 = 30;
/// Largest supported trace: 2^28 rows.
pub const MAX_LOG_ROWS: usize = 28;

/// Every parameter that affects soundness. The transcript absorbs all of them, and the proof
/// header carries them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StarkParams {
    /// log2 of the blowup factor: the code rate is 2^-`log_blowup`.
    pub log_blowup: usize,
    /// Number of FRI queries.
    pub num_queries: usize,
    /// Proof-of-work bits ground before queries are drawn.
    pub pow_bits: u32,
    /// FRI stops folding at a polynomial of 2^`log_final_poly_len` coefficients.
    pub log_final_poly_len: usize,
    /// The hash every Merkle tree of the proof commits with.
    pub hash: MerkleHash,
}

impl StarkParams {
    /// ballast's default parameters for segments of `air`: blowup 2 and 16 grinding bits
    /// (chosen over blowups 2–16, `docs/protocol.md` §7), the default final polynomial, and
    /// the fewest queries that reach `target` bits of security in `regime` for this AIR at
    /// its size — 227 for 128 provable (JBR) bits on the default statement's 2^14-row Keccak
    /// segments, more on larger ones. There is no parameter set secure at every size: the
    /// query count comes from the target.
    ///
    /// # Errors
    /// As [`Circuit::for_target`].
    pub fn for_security<A: Air>(air: &A, target: u32, regime: Regime) -> Result<Self, ParamsError> {
        let params = Self {
            log_blowup: 1,
            num_queries: 1,
            pow_bits: 16,
            log_final_poly_len: Self::DEFAULT_LOG_FINAL_POLY_LEN.min(air.log_rows()),
            hash: MerkleHash::Keccak256,
        };
        Circuit::for_target(air, &params, target, regime).map(|c| c.params)
    }

    /// The final FRI polynomial's default length, 2^3.
    pub const DEFAULT_LOG_FINAL_POLY_LEN: usize = 3;

    /// The configuration lambda_vm benchmarks against Plonky3: blowup 2, 219 queries, no
    /// grinding.
    pub fn lambda_vm_bench() -> Self {
        Self {
            log_blowup: 1,
            num_queries: 219,
            pow_bits: 0,
            log_final_poly_len: Self::DEFAULT_LOG_FINAL_POLY_LEN,
            hash: MerkleHash::Keccak256,
        }
    }

    /// Few queries and no grinding, for fast tests. A few bits of security: never for use.
    pub fn testing() -> Self {
        Self {
            log_blowup: 1,
            num_queries: 8,
            pow_bits: 0,
            log_final_poly_len: 2,
            hash: MerkleHash::Keccak256,
        }
    }

    /// Checks every parameter, alone and against a trace of 2^`log_rows` rows.
    ///
    /// # Errors
    /// The first parameter out of its range.
    pub fn validate(&self, log_rows: usize) -> Result<(), ParamsError> {
        let Self {
            log_blowup,
            num_queries,
            pow_bits,
            log_final_poly_len,
            hash: _,
        } = *self;
        check_ranges(log_blowup, num_queries, pow_bits)?;
        check_range("log_rows", log_rows, 1, MAX_LOG_ROWS)?;
        check_range("log_final_poly_len", log_final_poly_len, 0, log_rows)?;
        check_range(
            "log_rows + log_blowup",
            log_rows + log_blowup,
            0,
            TWO_ADICITY,
        )?;
        Ok(())
    }
}

/// The ranges of the parameters that do not depend on the trace.
pub(crate) fn check_ranges(
    log_blowup: usize,
    num_queries: usize,
    pow_bits: u32,
) -> Result<(), ParamsError> {
    check_range(
        "log_blowup",
        log_blowup,
        *LOG_BLOWUP_RANGE.start(),
        *LOG_BLOWUP_RANGE.end(),
    )?;
    check_range("num_queries", num_queries, 1, MAX_QUERIES)?;
    check_range("pow_bits", pow_bits as usize, 0, MAX_POW_BITS as usize)
}

/// `value` within `min..=max`, or [`ParamsError::OutOfRange`] naming it.
///
/// # Errors
/// If `value` is out of range.
pub fn check_range(
    name: &'static str,
    value: usize,
    min: usize,
    max: usize,
) -> Result<(), ParamsError> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(ParamsError::OutOfRange {
            name,
            value,
            min,
            max,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_configurations_are_valid() {
        let lambda = StarkParams::lambda_vm_bench();
        assert_eq!(
            (lambda.log_blowup, lambda.num_queries, lambda.pow_bits),
            (1, 219, 0)
        );
        for p in [lambda, StarkParams::testing()] {
            p.validate(19).unwrap();
        }
    }

    #[test]
    fn out_of_range_parameters_are_named() {
        let bad = StarkParams {
            log_blowup: 7,
            ..StarkParams::lambda_vm_bench()
        };
        assert_eq!(
            bad.validate(10).unwrap_err().to_string(),
            "log_blowup is 7, must be in 1..=6"
        );
        let bad = StarkParams {
            log_final_poly_len: 11,
            ..StarkParams::lambda_vm_bench()
        };
        assert!(bad.validate(10).is_err());
        assert!(StarkParams::lambda_vm_bench().validate(31).is_err());
    }
}
