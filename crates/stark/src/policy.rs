//! What a verifier insists on beyond a proof's own validity: a security floor, a size cap,
//! and optionally the Merkle hash or the exact parameters.

use ballast_air::Air;

use crate::{Analysis, Circuit, MerkleHash, Regime, StarkParams, TablesCircuit, VerifierError};

/// The security a verifier requires unless told otherwise: 100 bits provable, up to the
/// Johnson bound.
pub const DEFAULT_MIN_SECURITY_BITS: u32 = 100;

/// The largest proof a verifier accepts unless told otherwise: 1 GiB. The proofs of the
/// shapes ballast ships and benchmarks are far below it, and so is any statement of up to
/// about 200 segments of 2^14 keccak-chain rows at 219 queries
/// (`workloads/tests/format.rs` checks both); larger ones need a larger cap, given
/// explicitly.
pub const DEFAULT_MAX_PROOF_BYTES: u64 = 1 << 30;

/// What a verifier insists on beyond the proof's own validity.
///
/// The proof names its own parameters and size, so a verifier must set a floor and a cap:
/// the default requires [`DEFAULT_MIN_SECURITY_BITS`] of provable (JBR) security and at
/// most [`DEFAULT_MAX_PROOF_BYTES`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyPolicy {
    /// Least security, in `regime`, the proof's parameters must give (capped at the
    /// hash's 128 bits).
    pub min_security_bits: u32,
    /// How the floor is judged.
    pub regime: Regime,
    /// When set, the proof's trees must commit with this hash (both claim 128 bits; a
    /// verifier may trust one assumption and not the other).
    pub hash: Option<MerkleHash>,
    /// When set, the proof must use exactly these parameters.
    pub params: Option<StarkParams>,
    /// Most bytes the proof may have.
    pub max_proof_bytes: u64,
}

impl Default for VerifyPolicy {
    fn default() -> Self {
        Self {
            min_security_bits: DEFAULT_MIN_SECURITY_BITS,
            regime: Regime::Jbr,
            hash: None,
            params: None,
            max_proof_bytes: DEFAULT_MAX_PROOF_BYTES,
        }
    }
}

impl VerifyPolicy {
    /// Checks parameters for segments proving `air` against the floor and, when set, the
    /// required hash and parameters.
    ///
    /// # Errors
    /// Invalid parameters, too little security, or another hash or other parameters than
    /// required.
    pub fn check_params<A: Air>(&self, air: &A, params: &StarkParams) -> Result<(), VerifierError> {
        self.check_circuit(&Circuit::of(air, params)?)
    }

    /// [`check_params`](Self::check_params) of a circuit the caller built once (its
    /// parameters are `circuit.params`).
    ///
    /// # Errors
    /// Too little security, or another hash or other parameters than required.
    pub fn check_circuit(&self, circuit: &Circuit) -> Result<(), VerifierError> {
        self.check(|regime| circuit.analyse(regime), &circuit.params)
    }

    /// [`check_params`](Self::check_params) for one proof of several tables, judged on their
    /// circuit ([`TablesCircuit`], built with the proof's parameters).
    ///
    /// # Errors
    /// Too little security, or another hash or other parameters than required.
    pub fn check_tables(&self, tables: &TablesCircuit) -> Result<(), VerifierError> {
        self.check(|regime| tables.analyse(regime), &tables.tables[0].params)
    }

    /// The floor against `analyse`'s figures, then the required hash and parameters.
    fn check(
        &self,
        analyse: impl Fn(Regime) -> Analysis,
        params: &StarkParams,
    ) -> Result<(), VerifierError> {
        let got = analyse(self.regime).capped();
        if got < self.min_security_bits {
            return Err(VerifierError::InsufficientSecurity {
                got,
                regime: self.regime,
                conjectured: analyse(Regime::Conjectured).capped(),
                required: self.min_security_bits,
            });
        }
        if let Some(required) = self.hash
            && required != params.hash
        {
            return Err(VerifierError::HashMismatch {
                required,
                got: params.hash,
            });
        }
        match self.params {
            Some(expected) if expected != *params => Err(VerifierError::ParamsMismatch {
                expected,
                got: *params,
            }),
            _ => Ok(()),
        }
    }

    /// Checks a proof's length in bytes against the cap.
    ///
    /// # Errors
    /// [`VerifierError::TooLarge`] above the cap.
    pub fn check_size(&self, len: u64) -> Result<(), VerifierError> {
        if len > self.max_proof_bytes {
            return Err(VerifierError::TooLarge {
                len,
                cap: self.max_proof_bytes,
            });
        }
        Ok(())
    }
}
