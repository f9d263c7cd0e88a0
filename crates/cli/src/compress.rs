//! `cli compress`: replace a whole proof by its compressed proof, and what `prove --compress`
//! and `verify` share of it: compressing, and the layers' security in words and as JSON.

use std::fmt::Write as _;
use std::time::Instant;

use anyhow::{Result, anyhow, bail};
use ballast_recursion::{CompressedCircuits, last_is_weaker, weaker};
use ballast_stark::{Analysis, Regime, VerifyPolicy};
use ballast_workloads::{AnyCompressed, AnyProof};
use serde::Serialize;

use crate::args::CompressArgs;
use crate::output::{check_writable, print, write_atomic};
use crate::read::{Cap, ProofFile, read};
use crate::resources::human_bytes;
use crate::summary::{self, ParamsJson, SecurityJson, soundcalc_json};

/// Runs `cli compress`: the proof is read and verified, its compressed proof made, checked
/// and written; nothing is written if any step fails.
pub fn run(args: &CompressArgs) -> Result<()> {
    check_writable(&args.output)?;
    let path = args.proof.display();
    let proof = match read(&args.proof, Cap::DEFAULT)? {
        Err(reason) => bail!("{path} is not a valid proof: {reason}"),
        Ok((ProofFile::Compressed(_), _)) => bail!("{path} is already a compressed proof"),
        Ok((ProofFile::Proof(proof), _)) => proof,
    };
    let started = Instant::now();
    let (compressed, circuits) =
        compress(&*proof, args.layer.last(), args.security_bits, args.regime)?;
    let seconds = started.elapsed().as_secs_f64();
    let bytes = compressed.to_bytes();
    write_atomic(&args.output, &bytes)?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "compressed: {} ({}, from {} bytes) in {seconds:.2} s",
        args.output.display(),
        human_bytes(bytes.len() as u64),
        proof.to_bytes().len()
    );
    out.push_str(&statement_lines(&*compressed));
    out.push_str(&Layers::of(&circuits).lines());
    print(&out)
}

/// `proof`'s compressed proof, its last layer at `last`'s log2 blowup and grinding bits with
/// the fewest queries that reach `target` bits in `regime`, and its circuits, once its own
/// verifier accepts it. The proof is checked but not judged: `cli verify` applies a floor.
///
/// # Errors
/// A proof that cannot be compressed (a part, several segments, Keccak-256 trees, one that
/// does not verify), parameters that cannot reach `target`.
pub fn compress(
    proof: &dyn AnyProof,
    last: (usize, u32),
    target: u32,
    regime: Regime,
) -> Result<(Box<dyn AnyCompressed>, CompressedCircuits)> {
    let unjudged = VerifyPolicy {
        min_security_bits: 0,
        max_proof_bytes: u64::MAX,
        ..VerifyPolicy::default()
    };
    let compressed = proof
        .compress(last, target, regime, &unjudged)
        .map_err(|e| anyhow!("cannot compress: {e}"))?;
    let circuits = compressed
        .verify(&unjudged)
        .map_err(|e| anyhow!("the compressed proof does not verify: {e}"))?;
    Ok((compressed, circuits))
}

/// One layer of a compressed proof, as JSON: its parameters, their security and its
/// soundcalc configuration (for the last layer, the circuit that bounds its tables':
/// `docs/protocol.md` §6 item 14).
#[derive(Serialize)]
pub struct LayerJson {
    /// `segments` or `last`.
    layer: &'static str,
    params: ParamsJson,
    security: SecurityJson,
    soundcalc: serde_json::Value,
}

/// A compressed proof's layers, each analysed once in every regime (a JBR figure searches
/// every Johnson m): what its lines and its report read.
pub struct Layers {
    circuits: CompressedCircuits,
    /// The segments' analyses, in [`Regime::ALL`]'s order.
    segments: [Analysis; 3],
    /// The last layer's, likewise.
    last: [Analysis; 3],
}

impl Layers {
    /// The layers of the compressed proof whose circuits are `circuits`.
    pub fn of(circuits: &CompressedCircuits) -> Self {
        Self {
            segments: Regime::ALL.map(|r| circuits.segments.analyse(r)),
            last: Regime::ALL.map(|r| circuits.last.analyse(r)),
            circuits: circuits.clone(),
        }
    }

    /// The analysis in `regime` of the segments (`last` false) or of the last layer.
    fn analysis(&self, last: bool, regime: Regime) -> Analysis {
        let at = Regime::ALL.iter().position(|&r| r == regime);
        let at = at.expect("every regime is in Regime::ALL");
        if last {
            self.last[at].clone()
        } else {
            self.segments[at].clone()
        }
    }

    /// Whether the last layer is the weaker up to the Johnson bound.
    fn last_is_weaker(&self) -> bool {
        let jbr = |last| self.analysis(last, Regime::Jbr);
        last_is_weaker(&jbr(false), &jbr(true))
    }

    /// The layers in proving order, as JSON.
    pub fn json(&self) -> Vec<LayerJson> {
        let (segments, last) = (&self.circuits.segments, &self.circuits.last);
        let segments_analysed = |r| self.analysis(false, r);
        let last_analysed = |r| self.analysis(true, r);
        vec![
            LayerJson {
                layer: "segments",
                params: ParamsJson::analysed(&segments.params, &segments_analysed),
                security: SecurityJson::analysed(&segments_analysed),
                soundcalc: soundcalc_json(segments),
            },
            LayerJson {
                layer: "last",
                params: ParamsJson::analysed(&last.tables[0].params, &last_analysed),
                security: SecurityJson::analysed(&last_analysed),
                soundcalc: soundcalc_json(&last.bound()),
            },
        ]
    }

    /// The proof's security: the weaker layer's in each regime
    /// ([`CompressedCircuits::analyse`]), as JSON.
    pub fn security(&self) -> SecurityJson {
        SecurityJson::analysed(&|r| weaker(self.analysis(false, r), self.analysis(true, r)))
    }

    /// Each layer's parameters and security, then the weakest layer's (up to the Johnson
    /// bound; the segments' on a tie) round by round.
    pub fn lines(&self) -> String {
        let mut out = String::new();
        for (name, layer) in ["segments:", "last layer:"].into_iter().zip(self.json()) {
            let _ = writeln!(out, "{name:<11} {}", summary::params(&layer.params));
        }
        let last = self.last_is_weaker();
        out.push_str(if last {
            "weakest:    the last layer\n"
        } else {
            "weakest:    the segments\n"
        });
        out.push_str(&summary::security_analysed(&|r| self.analysis(last, r)));
        out
    }
}

/// What a compressed proof proves, in two lines.
pub fn statement_lines(compressed: &dyn AnyCompressed) -> String {
    format!(
        "statement:  {}\n            digest {}\n",
        compressed.summary(),
        hex::encode(compressed.statement_digest())
    )
}
