//! What a workload registers as: how it is shown to people ([`Describe`]), and a proof of it
//! as one trait object ([`AnyProof`]).
//!
//! [`AnyProof`] is what a proof of any workload, whole or part, can do; it has one
//! implementation, generic over every workload ([`Proof<W>`] for `W: Describe`).
//! [`WORKLOADS`](crate::WORKLOADS) (`tags.rs`) is the table of tags that decoding dispatches
//! on. Adding a workload is one module implementing [`Workload`] and [`Describe`], and one
//! row in that table.

use std::any::Any;
use std::fmt::Debug;
use std::ops::Range;

use ballast_stark::{
    Circuit, ParamsError, Proof, StarkParams, VerifierError, VerifyPolicy, Workload, verify_part,
};
use serde_json::{Map, Value};

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
