//! How statements and parameters are shown to people and written as JSON.

use ballast_workloads::AnyProof;
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
    pub fn of(proof: &dyn AnyProof) -> Self {
        let p = proof.params();
        Self {
            blowup: 1 << p.log_blowup,
            queries: p.num_queries,
            pow_bits: p.pow_bits,
            log_final_poly_len: p.log_final_poly_len,
            conjectured_security_bits: p.conjectured_security_bits(proof.log_rows()),
            provable_security_bits: proof.provable_security_bits(),
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
    pub fn new(part: &dyn AnyProof) -> Self {
        let range = part.range();
        Self {
            first_segment: range.start,
            end_segment: range.end,
            statement_segments: part.statement_segments(),
        }
    }
}

/// What a proof covers: for a whole proof, the statement in two lines, what is proven and
/// its digest; for a part, the segments it covers (and which of how many parts it is, when
/// known) and the computation they belong to.
pub fn covered(proof: &dyn AnyProof, index_of: Option<(usize, usize)>) -> String {
    match proof.statement_digest() {
        Some(digest) => format!(
            "statement:  {}\n            digest {}\n",
            proof.summary(),
            hex::encode(digest)
        ),
        None => {
            let range = proof.range();
            let which = index_of.map_or(String::new(), |(i, k)| format!(" (part {i} of {k})"));
            format!(
                "part:       segments {}..{} of {}{which}\n            of {}\n",
                range.start,
                range.end,
                proof.statement_segments(),
                proof.summary()
            )
        }
    }
}
