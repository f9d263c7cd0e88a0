//! `cli security`: the security of a statement, without proving it, or of a proof's every
//! layer, round by round, as the TOML soundcalc (github.com/ethereum/soundcalc) reads: one
//! `[[circuits]]` a layer, as soundcalc describes a recursive system.

use std::fmt::Write as _;

use anyhow::{Result, anyhow, bail};
use ballast_stark::{Circuit, Regime, VerifyPolicy, soundcalc_toml};

use crate::args::SecurityArgs;
use crate::compress::Layers;
use crate::output::{check_writable, print, write_atomic};
use crate::plan::StatementPlan;
use crate::read::{Cap, ProofFile, read};
use crate::summary;

/// What `cli security` analyses: its TOML's heading and circuits, and the figures it prints
/// when the TOML goes to a file.
struct Analysed {
    heading: String,
    circuits: Vec<(&'static str, Circuit)>,
    figures: String,
}

/// Runs `cli security`: prints the TOML (ballast's figures as its comments), or writes it to
/// --soundcalc and prints the figures.
pub fn run(args: &SecurityArgs) -> Result<()> {
    if let Some(path) = &args.soundcalc {
        check_writable(path)?;
    }
    let analysed = match &args.proof {
        Some(path) => of_proof(path)?,
        None => {
            let StatementPlan { statement, circuit } = StatementPlan::lower(&args.statement)?;
            Analysed {
                heading: format!(
                    "{}: one segment (every segment has this shape)",
                    statement.computation()
                ),
                circuits: vec![(statement.name(), circuit)],
                figures: format!(
                    "{}\n{}",
                    statement.computation(),
                    summary::security(&circuit)
                ),
            }
        }
    };
    let toml = toml(&analysed);
    match &args.soundcalc {
        Some(path) => {
            write_atomic(path, toml.as_bytes())?;
            let mut out = analysed.figures;
            let _ = writeln!(out, "soundcalc:  {}", path.display());
            print(&out)
        }
        None => print(&toml),
    }
}

/// The layers of the proof at `path`, once it verifies (no floor applied): a proof's
/// segments, or a compressed proof's segments, node (for several) and last layer (each
/// layer of tables by the circuit that dominates its tables', `docs/protocol.md` §6 item
/// 14).
fn of_proof(path: &std::path::Path) -> Result<Analysed> {
    let shown = path.display();
    let unjudged = VerifyPolicy {
        min_security_bits: 0,
        max_proof_bytes: u64::MAX,
        ..VerifyPolicy::default()
    };
    let file = match read(path, Cap::DEFAULT)? {
        Err(reason) => bail!("{shown} is not a valid proof: {reason}"),
        Ok((file, _)) => file,
    };
    match file {
        ProofFile::Proof(proof) => {
            proof
                .verify(&unjudged)
                .map_err(|e| anyhow!("{shown} does not verify: {e}"))?;
            let circuit = proof.circuit().map_err(|e| anyhow!("{shown}: {e}"))?;
            Ok(Analysed {
                heading: format!("{}: its segments", proof.summary()),
                circuits: vec![("segments", circuit)],
                figures: format!("{}\n{}", proof.summary(), summary::security(&circuit)),
            })
        }
        ProofFile::Compressed(compressed) => {
            let circuits = compressed
                .verify(&unjudged)
                .map_err(|e| anyhow!("{shown} does not verify: {e}"))?;
            let layers = Layers::of(&circuits);
            Ok(Analysed {
                heading: format!(
                    "{}: a compressed proof, its layers in proving order (a layer of tables' \
                     circuit dominates its tables' rounds, docs/protocol.md §6 item 14; \
                     soundcalc's proof size for it does not apply)",
                    compressed.summary()
                ),
                figures: format!("{}\n{}", compressed.summary(), layers.lines()),
                circuits: layers.circuits(),
            })
        }
    }
}

/// soundcalc's TOML for `analysed`'s circuits, headed by comments that name what they are
/// and give ballast's figures, circuit by circuit and round by round.
fn toml(analysed: &Analysed) -> String {
    let mut out = format!("# {}\n", analysed.heading);
    for (name, circuit) in &analysed.circuits {
        for regime in Regime::ALL {
            let analysis = circuit.analyse(regime);
            let rounds: Vec<String> = analysis
                .rounds
                .iter()
                .map(|r| format!("{} {:.2}", r.name, r.bits))
                .collect();
            let _ = writeln!(
                out,
                "# ballast, {name}, {regime}: {} bits ({})",
                analysis.total,
                rounds.join(", ")
            );
        }
    }
    out.push('\n');
    let named: Vec<(&str, &Circuit)> = analysed.circuits.iter().map(|(n, c)| (*n, c)).collect();
    out.push_str(&soundcalc_toml(&named));
    out
}
