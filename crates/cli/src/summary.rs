//! How statements and parameters are shown to people and written as JSON.

use ballast_stark::StarkParams;
use ballast_workloads::{AnyPart, AnyProof};
use serde::Serialize;

/// The parameters and the security they give, as JSON.
#[derive(Serialize)]
pub struct ParamsJson {
    blowup: usize,
    queries: usize,
    pow_bits: u32,
    log_final_poly_len: usize,
    conjectured_security_bits: u32,
    provable_security_bits: u32,
}

impl ParamsJson {
    /// The JSON form of a proof's parameters, with the security they give it.
    pub fn of_proof(proof: &AnyProof) -> Self {
        Self::new(
            proof.params(),
            proof.log_rows(),
            proof.provable_security_bits(),
        )
    }

    /// The JSON form of a part's parameters, with the security they give it.
    pub fn of_part(part: &AnyPart) -> Self {
        Self::new(
            part.params(),
            part.log_rows(),
            part.provable_security_bits(),
        )
    }

    fn new(p: &StarkParams, log_rows: usize, provable_security_bits: u32) -> Self {
        Self {
            blowup: 1 << p.log_blowup,
            queries: p.num_queries,
            pow_bits: p.pow_bits,
            log_final_poly_len: p.log_final_poly_len,
            conjectured_security_bits: p.conjectured_security_bits(log_rows),
            provable_security_bits,
        }
    }
}

/// "blowup 2, 84 queries, 16 grinding bits: 100 bits conjectured security (57 provable)".
pub fn params(p: &ParamsJson) -> String {
    format!(
        "blowup {}, {} queries, {} grinding bits, final polynomial {}: {} bits conjectured \
         security ({} provable)",
        p.blowup,
        p.queries,
        p.pow_bits,
        1 << p.log_final_poly_len,
        p.conjectured_security_bits,
        p.provable_security_bits
    )
}

/// Where a part sits in its statement, as JSON.
#[derive(Serialize)]
pub struct PartJson {
    /// The first segment it covers.
    pub first_segment: usize,
    /// One past the last segment it covers.
    pub end_segment: usize,
    /// The statement's segments.
    pub statement_segments: usize,
}

impl PartJson {
    /// The JSON form of `part`'s range.
    pub fn new(part: &AnyPart) -> Self {
        let range = part.range();
        Self {
            first_segment: range.start,
            end_segment: range.end,
            statement_segments: part.statement_segments(),
        }
    }
}

/// A part in two lines: the segments it covers (and which of how many parts it is, when
/// known), and the computation they belong to.
pub fn part(part: &AnyPart, index_of: Option<(usize, usize)>) -> String {
    let range = part.range();
    let which = index_of.map_or(String::new(), |(i, k)| format!(" (part {i} of {k})"));
    format!(
        "part:       segments {}..{} of {}{which}\n            of {}\n",
        range.start,
        range.end,
        part.statement_segments(),
        part.computation()
    )
}

/// The statement in two lines: what is proven, and its digest.
pub fn statement(proof: &AnyProof) -> String {
    format!(
        "statement:  {}\n            digest {}\n",
        proof.summary(),
        hex::encode(proof.statement_digest())
    )
}

/// 1048572 → "1,048,572".
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
    fn numbers_and_rows_read_well() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_048_572), "1,048,572");
    }
}
