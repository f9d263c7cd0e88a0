//! `cli compress`: replace a whole proof by its compressed proof, and what `prove --compress`
//! and `verify` share of it: compressing, and the layers' security in words and as JSON.

use std::fmt::Write as _;
use std::time::Instant;

use anyhow::{Result, anyhow, bail};
use ballast_recursion::{CompressedCircuits, weakest};
use ballast_stark::{Analysis, Circuit, Regime, VerifyPolicy};
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
/// A proof that cannot be compressed (a part, Keccak-256 trees, one that
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
/// soundcalc configuration (for a layer of tables, the circuit that bounds its tables':
/// `docs/protocol.md` §6 item 14).
#[derive(Serialize)]
pub struct LayerJson {
    /// `segments`, `node` or `last`.
    layer: &'static str,
    params: ParamsJson,
    security: SecurityJson,
    soundcalc: serde_json::Value,
}

/// A compressed proof's layers in proving order, each with its name, its circuit (a layer
/// of tables by the circuit that bounds its tables') and its analysis in every regime (a
/// JBR figure searches every Johnson m): what its lines, its report and `cli security`
/// read.
pub struct Layers {
    layers: Vec<Layer>,
}

/// One layer of [`Layers`].
struct Layer {
    /// `segments`, `node` or `last`.
    name: &'static str,
    /// Its level: 0 for the segments, ℓ for the tree's level ℓ, one more for the last.
    level: usize,
    /// Its circuit, whose parameters are the layer's.
    circuit: Circuit,
    /// Its analyses, in [`Regime::ALL`]'s order.
    analyses: [Analysis; 3],
}

impl Layers {
    /// The layers of the compressed proof whose circuits are `circuits`: its segments, the
    /// nodes of the tree over them (if any; a level at a time, innermost first), each named
    /// `node`, and its last layer.
    pub fn of(circuits: &CompressedCircuits) -> Self {
        let analysed = |name, level, circuit: Circuit, analyses| Layer {
            name,
            level,
            circuit,
            analyses,
        };
        let segments = &circuits.segments;
        let mut layers = vec![analysed(
            "segments",
            0,
            *segments,
            Regime::ALL.map(|r| segments.analyse(r)),
        )];
        let nodes = (circuits.inner.iter().enumerate())
            .flat_map(|(level, nodes)| nodes.iter().map(move |t| ("node", level + 1, t)));
        let last = ("last", circuits.inner.len() + 1, &circuits.last);
        for (name, level, t) in nodes.chain([last]) {
            let analyses = Regime::ALL.map(|r| t.analyse(r));
            layers.push(analysed(name, level, t.bound(), analyses));
        }
        Self { layers }
    }

    /// Each layer's name and circuit, in proving order: what `cli security` states.
    pub fn circuits(&self) -> Vec<(&'static str, Circuit)> {
        (self.layers.iter()).map(|l| (l.name, l.circuit)).collect()
    }

    /// Each layer's analysis in `regime`, in proving order.
    fn analyses(&self, regime: Regime) -> Vec<Analysis> {
        let at = Regime::ALL.iter().position(|&r| r == regime);
        let at = at.expect("every regime is in Regime::ALL");
        self.layers.iter().map(|l| l.analyses[at].clone()).collect()
    }

    /// The weakest layer in `regime` ([`weakest`]).
    fn weakest(&self, regime: Regime) -> usize {
        weakest(&self.analyses(regime))
    }

    /// The layers in proving order, as JSON.
    pub fn json(&self) -> Vec<LayerJson> {
        (self.layers.iter().enumerate())
            .map(|(k, layer)| {
                let analysed = |r| self.analyses(r).swap_remove(k);
                LayerJson {
                    layer: layer.name,
                    params: ParamsJson::analysed(&layer.circuit.params, &analysed),
                    security: SecurityJson::analysed(&analysed),
                    soundcalc: soundcalc_json(&layer.circuit),
                }
            })
            .collect()
    }

    /// The proof's security: the weakest layer's in each regime
    /// ([`CompressedCircuits::analyse`]), as JSON.
    pub fn security(&self) -> SecurityJson {
        SecurityJson::analysed(&|r| self.analyses(r).swap_remove(self.weakest(r)))
    }

    /// Each layer's parameters and security (a level's run of nodes alike in one line, "16
    /// nodes:"), then the weakest layer's (up to the Johnson bound; the earliest on a tie)
    /// round by round.
    pub fn lines(&self) -> String {
        let mut runs: Vec<(&str, usize, String, usize)> = Vec::new();
        for (layer, json) in self.layers.iter().zip(self.json()) {
            let params = summary::params(&json.params);
            match runs.last_mut() {
                Some((_, level, last, count)) if *level == layer.level && *last == params => {
                    *count += 1;
                }
                _ => runs.push((layer.name, layer.level, params, 1)),
            }
        }
        let mut out = String::new();
        for (name, _, params, count) in runs {
            let name = match (name, count) {
                ("segments", _) => "segments:".to_string(),
                ("node", 1) => "node:".to_string(),
                ("node", k) => format!("{k} nodes:"),
                _ => "last layer:".to_string(),
            };
            let _ = writeln!(out, "{name:<11} {params}");
        }
        let weakest = self.weakest(Regime::Jbr);
        let nodes = self.layers.iter().filter(|l| l.name == "node").count();
        let layer = &self.layers[weakest];
        let _ = writeln!(
            out,
            "weakest:    {}",
            match layer.name {
                "segments" => "the segments".to_string(),
                "node" if nodes == 1 => "the node".to_string(),
                "node" => format!("a node of level {}", layer.level),
                _ => "the last layer".to_string(),
            }
        );
        out.push_str(&summary::security_analysed(&|r| {
            self.analyses(r).swap_remove(weakest)
        }));
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

#[cfg(test)]
mod tests {
    use ballast_stark::{StarkParams, TablesCircuit, Workload};
    use ballast_workloads::Fibonacci;

    use super::*;

    #[test]
    fn a_run_of_alike_nodes_is_one_line() {
        let fibonacci = Fibonacci {
            sequences: 1,
            log_rows: 4,
            segments: 1,
        };
        let circuit = |num_queries| {
            let params = StarkParams {
                num_queries,
                ..StarkParams::testing()
            };
            Circuit::of(&fibonacci.air(0), &params).unwrap()
        };
        let tables = |num_queries| TablesCircuit {
            tables: vec![circuit(num_queries)],
        };
        let circuits = CompressedCircuits {
            segments: circuit(8),
            inner: vec![vec![tables(9), tables(9), tables(10)], vec![tables(4)]],
            last: tables(11),
        };
        let lines = Layers::of(&circuits).lines();
        // Level 1's first two nodes alike, its third not; level 2's node the weakest.
        let names: Vec<&str> = (lines.lines().take(5))
            .map(|l| l[..11].trim_end())
            .collect();
        let expected = ["segments:", "2 nodes:", "node:", "node:", "last layer:"];
        assert_eq!(names, expected, "{lines}");
        for (line, queries) in [(1, 9), (2, 10), (3, 4)] {
            let line = lines.lines().nth(line).unwrap();
            assert!(line.contains(&format!(" {queries} queries")), "{lines}");
        }
        assert!(lines.contains("weakest:    a node of level 2\n"), "{lines}");
    }
}
