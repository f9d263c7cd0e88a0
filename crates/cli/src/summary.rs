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
    /// The JSON form of the proof's parameters, with the security they give it.
    pub fn new(proof: &AnyProof) -> Self {
        let (p, log_rows) = (proof.params(), proof.log_rows());
        Self {
            blowup: 1 << p.log_blowup,
            queries: p.num_queries,
            pow_bits: p.pow_bits,
            log_final_poly_len: p.log_final_poly_len,
            conjectured_security_bits: p.conjectured_security_bits(log_rows),
            provable_security_bits: proof.provable_security_bits(),
        }
    }
}

/// "blowup 2, 84 queries, 16 grinding bits: 100 bits conjectured security (57 provable)".
pub fn params(proof: &AnyProof) -> String {
    let (p, log_rows) = (proof.params(), proof.log_rows());
    format!(
        "blowup {}, {} queries, {} grinding bits, final polynomial {}: {} bits conjectured \
         security ({} provable)",
        1 << p.log_blowup,
        p.num_queries,
        p.pow_bits,
        1 << p.log_final_poly_len,
        p.conjectured_security_bits(log_rows),
        proof.provable_security_bits()
    )
}

/// Lowercase hexadecimal.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The statement in two lines: what is proven, and its digest.
pub fn statement(proof: &AnyProof) -> String {
    format!(
        "statement:  {}\n            digest {}\n",
        proof.summary(),
        hex(&proof.statement_digest())
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
