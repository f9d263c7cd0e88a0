//! A workload's statements and proofs as trait objects, so that code which handles every
//! workload (the command line, the registry) is not generic over them: [`AnyStatement`],
//! what a statement of any workload can be asked (its circuit, a proof of a range of its
//! segments), and [`AnyProof`], what a proof of any workload, whole or part, can do. Each
//! has one implementation, generic over every workload that can be shown to people
//! ([`Describe`]).

use std::any::Any;
use std::fmt::Debug;
use std::ops::Range;

use ballast_air::{ConstraintProgram, ProgramError};
use ballast_recursion::{CompressError, DEFAULT_NODE_LAYER, compress, plan_compression};
use ballast_stark::{
    Backend, Circuit, Geometry, ParamsError, PhaseTimes, Proof, ProverError, Regime, StarkParams,
    VerifierError, VerifyPolicy, Workload, estimate_peak_bytes, geometry, prove_part, verify_part,
};
use serde_json::{Map, Value};

use crate::AnyCompressed;

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

/// A statement of any registered workload, before it is proven.
pub trait AnyStatement: Send + Sync {
    /// The workload's name ([`Workload::NAME`]).
    fn name(&self) -> &'static str;
    /// Number of segments.
    fn segments(&self) -> usize;
    /// log2 of the rows of every segment.
    fn log_rows(&self) -> usize;
    /// One line: the computation ([`Describe::computation`]).
    fn computation(&self) -> String;
    /// The circuit of its segments (all of one shape) proven with `params`.
    ///
    /// # Errors
    /// Parameters its AIR cannot use.
    fn circuit(&self, params: &StarkParams) -> Result<Circuit, ParamsError>;
    /// The same with the fewest queries that reach `target` bits in `regime`
    /// ([`Circuit::for_target`]).
    ///
    /// # Errors
    /// As [`Circuit::for_target`].
    fn circuit_for_target(
        &self,
        params: &StarkParams,
        target: u32,
        regime: Regime,
    ) -> Result<Circuit, ParamsError>;
    /// A rough upper estimate of the prover's peak memory for `segments` of its segments
    /// ([`estimate_peak_bytes`]).
    fn estimate_peak_bytes(&self, params: &StarkParams, segments: usize) -> u64;
    /// Its segments' shape under `params` ([`geometry`]).
    ///
    /// # Errors
    /// Parameters its AIR cannot use.
    fn geometry(&self, params: &StarkParams) -> Result<Geometry, ParamsError>;
    /// Segment `segment`'s constraints as a register program ([`ConstraintProgram::of`]).
    ///
    /// # Errors
    /// An AIR the program's encoding cannot hold.
    fn program(&self, segment: usize) -> Result<ConstraintProgram, ProgramError>;
    /// Checks, from its shapes alone, that its proof made with `params` compresses as
    /// [`AnyProof::compress`] would compress it ([`plan_compression`]): a tree its nodes
    /// cannot take is refused before anything is proven.
    ///
    /// # Errors
    /// As [`plan_compression`].
    fn check_compression(
        &self,
        params: &StarkParams,
        last: (usize, u32),
        target: u32,
        regime: Regime,
    ) -> Result<(), CompressError>;
    /// Proves the segments in `range` ([`prove_part`]): the whole statement's proof when the
    /// range covers it, a part otherwise.
    ///
    /// # Errors
    /// As [`prove_part`].
    fn prove(
        &self,
        params: &StarkParams,
        range: Range<usize>,
        backend: &dyn Backend,
        times: &mut PhaseTimes,
        on_segment: &mut dyn FnMut(usize),
    ) -> Result<Box<dyn AnyProof>, ProverError>;
}

impl<W: Describe + Send + 'static> AnyStatement for W {
    fn name(&self) -> &'static str {
        W::NAME
    }

    fn segments(&self) -> usize {
        Workload::segments(self)
    }

    fn log_rows(&self) -> usize {
        Workload::log_rows(self)
    }

    fn computation(&self) -> String {
        Describe::computation(self)
    }

    fn circuit(&self, params: &StarkParams) -> Result<Circuit, ParamsError> {
        Circuit::of(&self.air(0), params)
    }

    fn circuit_for_target(
        &self,
        params: &StarkParams,
        target: u32,
        regime: Regime,
    ) -> Result<Circuit, ParamsError> {
        Circuit::for_target(&self.air(0), params, target, regime)
    }

    fn estimate_peak_bytes(&self, params: &StarkParams, segments: usize) -> u64 {
        estimate_peak_bytes(self, params, segments)
    }

    fn geometry(&self, params: &StarkParams) -> Result<Geometry, ParamsError> {
        geometry(self, params)
    }

    fn program(&self, segment: usize) -> Result<ConstraintProgram, ProgramError> {
        ConstraintProgram::of(&self.air(segment))
    }

    fn check_compression(
        &self,
        params: &StarkParams,
        last: (usize, u32),
        target: u32,
        regime: Regime,
    ) -> Result<(), CompressError> {
        let node = DEFAULT_NODE_LAYER;
        plan_compression(self, params, node, last, target, regime).map(drop)
    }

    fn prove(
        &self,
        params: &StarkParams,
        range: Range<usize>,
        backend: &dyn Backend,
        times: &mut PhaseTimes,
        on_segment: &mut dyn FnMut(usize),
    ) -> Result<Box<dyn AnyProof>, ProverError> {
        let proof = prove_part(self, params, range, backend, times, on_segment)?;
        Ok(Box::new(proof))
    }
}

/// A proof of any registered workload: the whole statement, or a part of it.
pub trait AnyProof: Debug + Send + Sync {
    /// The workload's tag ([`Workload::TAG`]).
    fn tag(&self) -> u8;
    /// The canonical encoding.
    fn to_bytes(&self) -> Vec<u8>;
    /// Verifies the segments it covers ([`verify_part`]); a whole proof is thereby
    /// verified as a statement.
    ///
    /// # Errors
    /// The first check that fails.
    fn verify(&self, policy: &VerifyPolicy) -> Result<(), VerifierError>;
    /// The parameters.
    fn params(&self) -> &StarkParams;
    /// What the soundness analysis reads of it ([`Circuit::analyse`] gives its security in
    /// each regime).
    ///
    /// # Errors
    /// Parameters its AIR cannot use.
    fn circuit(&self) -> Result<Circuit, ParamsError>;
    /// The segments it covers.
    fn range(&self) -> Range<usize>;
    /// The statement's segments.
    fn statement_segments(&self) -> usize;
    /// The statement's digest, for a whole proof ([`Proof::statement_digest`]).
    fn statement_digest(&self) -> Option<[u8; 32]>;
    /// One line: what a whole proof proves, or the computation a part belongs to.
    fn summary(&self) -> String;
    /// The same as JSON: `workload`, a whole proof's `digest`, and the workload's fields.
    fn json(&self) -> Value;
    /// Whether it covers the whole statement ([`Proof::is_whole`]).
    fn is_whole(&self) -> bool;
    /// The proof itself, for [`bundle`](crate::bundle) to recover its type.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
    /// Its compressed proof ([`compress`]): for several segments a tree of nodes over them
    /// at [`DEFAULT_NODE_LAYER`], then the last layer at blowup 2^`last.0` and `last.1`
    /// grinding bits, each with the fewest queries that give `target` bits in `regime`.
    ///
    /// # Errors
    /// As [`compress`].
    fn compress(
        &self,
        last: (usize, u32),
        target: u32,
        regime: Regime,
        policy: &VerifyPolicy,
    ) -> Result<Box<dyn AnyCompressed>, CompressError>;
}

impl<W: Describe + Send + 'static> AnyProof for Proof<W> {
    fn tag(&self) -> u8 {
        W::TAG
    }

    fn to_bytes(&self) -> Vec<u8> {
        Proof::to_bytes(self)
    }

    fn verify(&self, policy: &VerifyPolicy) -> Result<(), VerifierError> {
        verify_part(self, policy)
    }

    fn params(&self) -> &StarkParams {
        &self.params
    }

    fn circuit(&self) -> Result<Circuit, ParamsError> {
        // Every segment of a statement has its AIR's shape.
        Circuit::of(&self.workload.air(0), &self.params)
    }

    fn range(&self) -> Range<usize> {
        Proof::range(self)
    }

    fn statement_segments(&self) -> usize {
        self.workload.segments()
    }

    fn statement_digest(&self) -> Option<[u8; 32]> {
        Proof::statement_digest(self)
    }

    fn summary(&self) -> String {
        match self.outcome() {
            Some(end) => self.workload.summary(end),
            None => self.workload.computation(),
        }
    }

    fn json(&self) -> Value {
        let mut map = Map::new();
        map.insert("workload".into(), W::NAME.into());
        match (self.outcome(), self.statement_digest()) {
            (Some(end), Some(digest)) => {
                map.insert("digest".into(), hex::encode(digest).into());
                map.extend(self.workload.json(end));
            }
            _ => map.extend(self.workload.computation_json()),
        }
        Value::Object(map)
    }

    fn is_whole(&self) -> bool {
        Proof::is_whole(self)
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }

    fn compress(
        &self,
        last: (usize, u32),
        target: u32,
        regime: Regime,
        policy: &VerifyPolicy,
    ) -> Result<Box<dyn AnyCompressed>, CompressError> {
        let node = DEFAULT_NODE_LAYER;
        Ok(Box::new(compress(
            self, node, last, target, regime, policy,
        )?))
    }
}

/// 1048572 → "1,048,572": numbers as people read them.
pub fn thousands(n: u64) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_048_572), "1,048,572");
    }
}
