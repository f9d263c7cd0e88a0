//! Soundness parameters, their validation and the security they buy.

use ballast_air::AirError;
use ballast_field::TWO_ADICITY;
use ballast_transcript::Transcript;
use thiserror::Error;

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
    /// This error occurs when a security target exceeds what the hash function supports.
    #[error("a {target}-bit target exceeds the {max} bits Keccak-256 collision resistance allows")]
    TargetTooHigh {
        /// The requested target.
        target: u32,
        /// The largest reachable target.
        max: u32,
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
}

/// log2 of the extension field's size, rounded down (|F_p^3| ≈ 2^192).
pub const EXTENSION_FIELD_BITS: u32 = 191;
/// Keccak-256 offers 128-bit collision resistance, which caps every security claim.
pub const HASH_COLLISION_BITS: u32 = 128;
/// Supported blowups are 2^1 … 2^4.
pub const LOG_BLOWUP_RANGE: std::ops::RangeInclusive<usize> = 1..=4;
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
}

impl Default for StarkParams {
    /// Blowup 2, 16 grinding bits and 84 queries: 100 bits of conjectured security.
    fn default() -> Self {
        Self::for_security(100, 1, 16).expect("the default target is reachable")
    }
}

impl StarkParams {
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
        }
    }

    /// Few queries and no grinding, for fast tests. About 8 bits of security: never for use.
    pub fn testing() -> Self {
        Self {
            log_blowup: 1,
            num_queries: 8,
            pow_bits: 0,
            log_final_poly_len: 2,
        }
    }

    /// The fewest queries reaching `target_bits` of conjectured security with the given
    /// blowup and grinding.
    ///
    /// # Errors
    /// If the target exceeds what the hash can support or needs more than [`MAX_QUERIES`].
    pub fn for_security(
        target_bits: u32,
        log_blowup: usize,
        pow_bits: u32,
    ) -> Result<Self, ParamsError> {
        if target_bits > HASH_COLLISION_BITS {
            return Err(ParamsError::TargetTooHigh {
                target: target_bits,
                max: HASH_COLLISION_BITS,
            });
        }
        // A zero blowup is refused by check_ranges; max(1) only keeps the division defined.
        let per_query = (log_blowup as u32).max(1);
        let num_queries = target_bits
            .saturating_sub(pow_bits)
            .div_ceil(per_query)
            .max(1) as usize;
        check_ranges(log_blowup, num_queries, pow_bits)?;
        Ok(Self {
            log_blowup,
            num_queries,
            pow_bits,
            log_final_poly_len: Self::DEFAULT_LOG_FINAL_POLY_LEN,
        })
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

    /// Conjectured security in bits for a trace of 2^`log_rows` rows:
    /// min(queries·log_blowup + pow_bits, field bits − log2 |LDE domain|, 128).
    ///
    /// The first term is the ethSTARK conjecture for FRI over a rate-2^-b Reed–Solomon code;
    /// the second bounds the out-of-domain and folding challenges drawn from F_p^3; the third
    /// is Keccak-256's collision resistance.
    pub fn conjectured_security_bits(&self, log_rows: usize) -> u32 {
        let query_bits = (self.num_queries as u32)
            .saturating_mul(self.log_blowup as u32)
            .saturating_add(self.pow_bits);
        let field_bits = EXTENSION_FIELD_BITS.saturating_sub((log_rows + self.log_blowup) as u32);
        query_bits.min(field_bits).min(HASH_COLLISION_BITS)
    }

    /// Provable security in bits (list-decoding regime, Johnson bound) for a trace of
    /// 2^`log_rows` rows whose DEEP step batches `batched_terms` functions (2W + C: the
    /// trace columns at z and at zω and the quotient columns at z); `docs/protocol.md` §6
    /// derives the formula.
    ///
    /// With ρ⁺ = (n + 2)/N — the code rate of the degree bound n widened by the two
    /// out-of-domain points — m = 16 and η = √ρ⁺/(2m), each query is charged
    /// −log2(√ρ⁺ + η) bits, and the commit phase errs with probability
    /// ((L − 1)·(m + ½)^7/(3ρ⁺^(3/2))·N² + (2m + 1)(N + 1)/√ρ⁺·Σ_i a_i)/|F|, L the batched
    /// terms and a_i the FRI rounds' arities.
    pub fn provable_security_bits(&self, log_rows: usize, batched_terms: usize) -> u32 {
        const M: f64 = 16.0;
        let n = 2f64.powi(log_rows as i32);
        let domain = n * 2f64.powi(self.log_blowup as i32);
        let rho = (n + 2.0) / domain;
        let eta = rho.sqrt() / (2.0 * M);
        let query_bits =
            self.num_queries as f64 * -(rho.sqrt() + eta).log2() + f64::from(self.pow_bits);
        let arity_sum: f64 =
            ballast_fri::round_arities(log_rows.saturating_sub(self.log_final_poly_len))
                .iter()
                .map(|&log_arity| 2f64.powi(log_arity as i32))
                .sum();
        let batching = batched_terms.saturating_sub(1).max(1) as f64;
        let commit_error = batching * (M + 0.5).powi(7) / (3.0 * rho.powf(1.5)) * domain * domain
            + (2.0 * M + 1.0) * (domain + 1.0) / rho.sqrt() * arity_sum;
        let commit_bits = f64::from(EXTENSION_FIELD_BITS) - commit_error.log2();
        query_bits
            .min(commit_bits)
            .min(f64::from(HASH_COLLISION_BITS))
            .max(0.0)
            .floor() as u32
    }

    /// Absorbs every parameter. The exhaustive destructure makes a new field a compile error
    /// here until the transcript binds it.
    pub(crate) fn absorb_into(&self, transcript: &mut Transcript) {
        let Self {
            log_blowup,
            num_queries,
            pow_bits,
            log_final_poly_len,
        } = *self;
        transcript.absorb_u64("log-blowup", log_blowup as u64);
        transcript.absorb_u64("num-queries", num_queries as u64);
        transcript.absorb_u64("pow-bits", u64::from(pow_bits));
        transcript.absorb_u64("log-final-poly-len", log_final_poly_len as u64);
    }
}

/// The ranges of the parameters that do not depend on the trace.
fn check_ranges(log_blowup: usize, num_queries: usize, pow_bits: u32) -> Result<(), ParamsError> {
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
    fn named_configurations_are_expressible() {
        let lambda = StarkParams::lambda_vm_bench();
        assert_eq!(
            (lambda.log_blowup, lambda.num_queries, lambda.pow_bits),
            (1, 219, 0)
        );
        lambda.validate(19).unwrap();
        assert_eq!(lambda.conjectured_security_bits(19), 128);
        let blowup4 = StarkParams {
            log_blowup: 2,
            num_queries: 110,
            ..lambda
        };
        blowup4.validate(19).unwrap();
        assert_eq!(blowup4.conjectured_security_bits(19), 128);
    }

    #[test]
    fn derived_parameters_reach_their_target() {
        for (target, log_blowup, pow) in [(100, 1, 16), (100, 2, 0), (80, 4, 20), (128, 1, 0)] {
            let p = StarkParams::for_security(target, log_blowup, pow).unwrap();
            assert!(p.conjectured_security_bits(18) >= target);
            let fewer = StarkParams {
                num_queries: p.num_queries - 1,
                ..p
            };
            assert!(
                fewer.conjectured_security_bits(18) < target,
                "{p:?} is not minimal"
            );
        }
        assert_eq!(StarkParams::default().num_queries, 84);
        assert!(StarkParams::for_security(129, 1, 0).is_err());
        assert!(
            StarkParams::for_security(100, 0, 0).is_err(),
            "blowup 1 is refused"
        );
        assert!(
            StarkParams::for_security(100, 1, 31).is_err(),
            "grinding is capped"
        );
    }

    #[test]
    fn provable_bits_are_below_conjectured() {
        let lambda = StarkParams::lambda_vm_bench();
        // 219 queries at rate 1/2 charge about 0.456 bits each.
        assert_eq!(lambda.provable_security_bits(19, 67), 99);
        for p in [StarkParams::default(), lambda, StarkParams::testing()] {
            assert!(p.provable_security_bits(19, 67) <= p.conjectured_security_bits(19));
        }
    }

    /// The figures of an independent computation (Python, from docs/protocol.md §6's
    /// formula, written separately from this code):
    ///
    /// ```text
    /// rho = (n + 2)/N;  eta = sqrt(rho)/32;  query = q·−log2(sqrt(rho) + eta) + pow
    /// eps = ((L − 1)·16.5^7/(3·rho^1.5)·N² + 33·(N + 1)/sqrt(rho)·Σ a_i)/2^191
    /// bits = floor(min(query, −log2 eps, 128))
    /// ```
    ///
    /// 16 Fibonacci sequences (L = 67) at 2^19 rows: query 99.78 / commit 116.73 bits at
    /// 2/219, 105.12 / 113.23 at 4/110. The keccak chain (L = 2·2349 + 6 = 4704) at 2^28 rows:
    /// 99.78 / 92.57 at 2/219 and 105.12 / 89.07 at 4/110 — the commit phase binds, 7 and 12
    /// bits below the figures the batching-blind formula gave (99 and 101); at 2^14 with the
    /// default 84 queries and 16 grinding bits, 54.26 / 120.58.
    #[test]
    fn provable_bits_match_an_independent_computation() {
        let at = |log_blowup, num_queries, pow_bits| StarkParams {
            log_blowup,
            num_queries,
            pow_bits,
            log_final_poly_len: StarkParams::DEFAULT_LOG_FINAL_POLY_LEN,
        };
        let keccak_terms = 2 * 2349 + 6;
        for (params, log_rows, terms, expected) in [
            (at(1, 219, 0), 19, 67, 99),
            (at(2, 110, 0), 19, 67, 105),
            (at(1, 219, 0), 28, keccak_terms, 92),
            (at(2, 110, 0), 28, keccak_terms, 89),
            (at(1, 84, 16), 14, keccak_terms, 54),
            (at(1, 219, 0), 16, 67, 99),
        ] {
            assert_eq!(
                params.provable_security_bits(log_rows, terms),
                expected,
                "{params:?} at 2^{log_rows} rows, {terms} batched terms"
            );
        }
        // More batched terms never buy bits.
        let p = at(2, 110, 0);
        assert!(p.provable_security_bits(28, 10) >= p.provable_security_bits(28, keccak_terms));
    }

    #[test]
    fn out_of_range_parameters_are_named() {
        let bad = StarkParams {
            log_blowup: 5,
            ..StarkParams::default()
        };
        assert_eq!(
            bad.validate(10).unwrap_err().to_string(),
            "log_blowup is 5, must be in 1..=4"
        );
        let bad = StarkParams {
            log_final_poly_len: 11,
            ..StarkParams::default()
        };
        assert!(bad.validate(10).is_err());
        assert!(StarkParams::default().validate(31).is_err());
    }
}
