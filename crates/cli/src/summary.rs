//! How statements and parameters are shown to people and written as JSON.

use ballast_field::Felt;
use ballast_stark::{Shape, StarkParams, Statement};
use serde::Serialize;

/// The statement as JSON.
#[derive(Serialize)]
pub struct StatementJson {
    digest: String,
    workload: &'static str,
    sequences: usize,
    log_rows: usize,
    segments: usize,
    steps: u64,
    start: Vec<u64>,
    end: Vec<u64>,
}

impl StatementJson {
    /// The JSON form of `s`.
    pub fn new(s: &Statement) -> Self {
        let values = |row: &[Felt]| row.iter().map(|f| f.as_u64()).collect();
        Self {
            digest: hex(&s.digest()),
            workload: "fibonacci-multi",
            sequences: s.shape.sequences,
            log_rows: s.shape.log_rows,
            segments: s.shape.segments,
            steps: s.shape.steps(),
            start: values(&s.start),
            end: values(&s.end),
        }
    }
}

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
    /// The JSON form of `p`, with its security for 2^`log_rows` rows.
    pub fn new(p: &StarkParams, log_rows: usize) -> Self {
        Self {
            blowup: 1 << p.log_blowup,
            queries: p.num_queries,
            pow_bits: p.pow_bits,
            log_final_poly_len: p.log_final_poly_len,
            conjectured_security_bits: p.conjectured_security_bits(log_rows),
            provable_security_bits: p.provable_security_bits(log_rows),
        }
    }
}

/// "16 sequences × 2^18 rows × 4 segments (1,048,572 steps)".
pub fn shape(s: &Shape) -> String {
    format!(
        "fibonacci-multi, {} sequences × 2^{} rows × {} segments ({} steps)",
        s.sequences,
        s.log_rows,
        s.segments,
        thousands(s.steps())
    )
}

/// "blowup 2, 84 queries, 16 grinding bits: 100 bits conjectured security (57 provable)".
pub fn params(p: &StarkParams, log_rows: usize) -> String {
    format!(
        "blowup {}, {} queries, {} grinding bits, final polynomial {}: {} bits conjectured \
         security ({} provable)",
        1 << p.log_blowup,
        p.num_queries,
        p.pow_bits,
        1 << p.log_final_poly_len,
        p.conjectured_security_bits(log_rows),
        p.provable_security_bits(log_rows)
    )
}

/// The first pairs of a row: "(0, 1), (1, 2), … 16 pairs".
pub fn row(values: &[Felt]) -> String {
    const SHOWN: usize = 2;
    let pairs: Vec<String> = values
        .chunks_exact(2)
        .take(SHOWN)
        .map(|p| format!("({}, {})", p[0], p[1]))
        .collect();
    let total = values.len() / 2;
    if total > SHOWN {
        format!("{}, … {total} pairs", pairs.join(", "))
    } else {
        pairs.join(", ")
    }
}

/// Lowercase hexadecimal.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The statement in four lines: shape, start, end, digest.
pub fn statement(s: &Statement) -> String {
    format!(
        "statement:  {}\n            start {}\n            end   {}\n            digest {}\n",
        shape(&s.shape),
        row(&s.start),
        row(&s.end),
        hex(&s.digest())
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
        let r = Statement::default_start(3);
        assert_eq!(row(&r), "(0, 1), (1, 2), … 3 pairs");
        assert_eq!(row(&r[..2]), "(0, 1)");
    }
}
