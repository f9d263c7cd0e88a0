//! How statements and parameters are shown to people and written as JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use ballast_stark::{Analysis, Circuit, HASH_COLLISION_BITS, Regime, StarkParams};
use ballast_workloads::AnyProof;
use serde::Serialize;

/// The parameters and the security they give, as JSON.
#[derive(Serialize)]
pub struct ParamsJson {
    blowup: usize,
    queries: usize,
    pow_bits: u32,
    log_final_poly_len: usize,
    /// The Merkle hash: `keccak` or `poseidon2`.
    hash: &'static str,
    /// Provable security up to the Johnson bound, capped by the hash (the headline figure).
    provable_security_bits: u32,
    /// Provable security in the unique-decoding regime, capped by the hash.
    udr_security_bits: u32,
    /// The ethSTARK conjecture's figure, capped by the hash.
    conjectured_security_bits: u32,
}

impl ParamsJson {
    /// The JSON form of a proof's parameters, with the security they give it (0 bits for
    /// parameters its AIR cannot use).
    pub fn of(proof: &dyn AnyProof) -> Self {
        Self::new(proof.params(), proof.circuit().ok().as_ref())
    }

    /// The JSON form of a circuit's parameters, with the security they give it.
    pub fn of_circuit(circuit: &Circuit) -> Self {
        Self::new(&circuit.params, Some(circuit))
    }

    /// `p`, with the security they give `circuit` (0 bits without one).
    fn new(p: &StarkParams, circuit: Option<&Circuit>) -> Self {
        match circuit {
            Some(c) => Self::analysed(p, &|regime| c.analyse(regime)),
            None => Self::analysed(p, &|_| Analysis {
                rounds: Vec::new(),
                total: 0,
                johnson: None,
            }),
        }
    }

    /// `p`, with the security `analyse` gives in each regime.
    pub fn analysed(p: &StarkParams, analyse: &dyn Fn(Regime) -> Analysis) -> Self {
        let bits = |regime| analyse(regime).capped();
        Self {
            blowup: 1 << p.log_blowup,
            queries: p.num_queries,
            pow_bits: p.pow_bits,
            log_final_poly_len: p.log_final_poly_len,
            hash: p.hash.name(),
            provable_security_bits: bits(Regime::Jbr),
            udr_security_bits: bits(Regime::Udr),
            conjectured_security_bits: bits(Regime::Conjectured),
        }
    }
}

/// "blowup 2, 227 queries, 16 grinding bits, final polynomial 8, keccak trees: 128 bits
/// provable (110 unique decoding, 128 conjectured)".
pub fn params(p: &ParamsJson) -> String {
    format!(
        "blowup {}, {} queries, {} grinding bits, final polynomial {}, {} trees: {} bits \
         provable ({} unique decoding, {} conjectured)",
        p.blowup,
        p.queries,
        p.pow_bits,
        1 << p.log_final_poly_len,
        p.hash,
        p.provable_security_bits,
        p.udr_security_bits,
        p.conjectured_security_bits
    )
}

/// One regime's figure, round by round, as JSON.
#[derive(Serialize)]
pub struct RegimeJson {
    /// The weakest round, rounded down, capped by the hash.
    bits: u32,
    /// The same before the hash's cap: what soundcalc prints as `total`.
    uncapped_bits: u32,
    /// The round that binds.
    binding: String,
    /// Each round's bits, unrounded.
    rounds: BTreeMap<String, f64>,
    /// JBR: the Johnson-bound m and the gap η (soundcalc's `gap_to_radius`).
    #[serde(skip_serializing_if = "Option::is_none")]
    m: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    gap_to_radius: Option<f64>,
}

impl RegimeJson {
    fn of(analysis: &Analysis) -> Self {
        Self {
            bits: analysis.capped(),
            uncapped_bits: analysis.total,
            binding: analysis.binding().map_or(String::new(), |r| r.name.clone()),
            rounds: analysis
                .rounds
                .iter()
                .map(|r| (r.name.clone(), r.bits))
                .collect(),
            m: analysis.johnson.map(|(m, _)| m),
            gap_to_radius: analysis.johnson.map(|(_, eta)| eta),
        }
    }
}

/// The security of a circuit in every regime, as JSON.
#[derive(Serialize)]
pub struct SecurityJson {
    jbr: RegimeJson,
    udr: RegimeJson,
    conjectured: RegimeJson,
    /// The Merkle hash's collision resistance, which caps every figure.
    hash_bits: u32,
}

impl SecurityJson {
    /// Every regime's figure for `circuit`.
    pub fn of(circuit: &Circuit) -> Self {
        Self::analysed(&|regime| circuit.analyse(regime))
    }

    /// Every regime's figure as `analyse` gives it.
    pub fn analysed(analyse: &dyn Fn(Regime) -> Analysis) -> Self {
        Self {
            jbr: RegimeJson::of(&analyse(Regime::Jbr)),
            udr: RegimeJson::of(&analyse(Regime::Udr)),
            conjectured: RegimeJson::of(&analyse(Regime::Conjectured)),
            hash_bits: HASH_COLLISION_BITS,
        }
    }
}

/// The circuit in soundcalc's configuration: an object whose keys are its TOML keys.
pub fn soundcalc_json(circuit: &Circuit) -> serde_json::Value {
    circuit
        .soundcalc_fields()
        .into_iter()
        .map(|(key, literal)| {
            let value = serde_json::from_str(&literal).expect("TOML literals of JSON's forms");
            (key.to_owned(), value)
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// The security lines of a summary: the headline, and each round's bits in the two provable
/// regimes (soundcalc's breakdown).
pub fn security(circuit: &Circuit) -> String {
    security_analysed(&|regime| circuit.analyse(regime))
}

/// [`security`] as `analyse` gives it.
pub fn security_analysed(analyse: &dyn Fn(Regime) -> Analysis) -> String {
    let (jbr, udr) = (analyse(Regime::Jbr), analyse(Regime::Udr));
    let conjectured = analyse(Regime::Conjectured);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "security:   {} bits provable up to the Johnson bound ({} binds{}), {} unique decoding, {} \
         conjectured; the Merkle hash caps each at {HASH_COLLISION_BITS}",
        jbr.capped(),
        jbr.binding().map_or("", |r| r.name.as_str()),
        jbr.johnson
            .map_or(String::new(), |(m, eta)| format!(", m = {m}, η = {eta:.6}")),
        udr.capped(),
        conjectured.capped()
    );
    let _ = writeln!(out, "            {:<16} {:>8} {:>8}", "round", "jbr", "udr");
    for (j, u) in jbr.rounds.iter().zip(&udr.rounds) {
        let _ = writeln!(
            out,
            "            {:<16} {:>8.2} {:>8.2}",
            j.name, j.bits, u.bits
        );
    }
    out
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
