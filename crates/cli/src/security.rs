//! `cli security`: a statement's security round by round, without proving it, as the TOML
//! soundcalc (github.com/ethereum/soundcalc) reads.

use std::fmt::Write as _;

use anyhow::Result;
use ballast_stark::{Circuit, Regime};
use ballast_workloads::Describe;

use crate::args::{SecurityArgs, WorkloadChoice};
use crate::output::{check_writable, print, write_atomic};
use crate::statement::{fibonacci, keccak_chain, params};
use crate::summary;

/// Runs `cli security`: prints the TOML (ballast's figures as its comments), or writes it to
/// --soundcalc and prints the figures.
pub fn run(args: &SecurityArgs) -> Result<()> {
    if let Some(path) = &args.soundcalc {
        check_writable(path)?;
    }
    match args.statement.workload {
        WorkloadChoice::KeccakChain => report(args, &keccak_chain(&args.statement)?),
        WorkloadChoice::Fibonacci => report(args, &fibonacci(&args.statement)?),
    }
}

fn report<W: Describe>(args: &SecurityArgs, workload: &W) -> Result<()> {
    let circuit = params(&args.statement, workload)?;
    let toml = toml(workload, &circuit);
    match &args.soundcalc {
        Some(path) => {
            write_atomic(path, toml.as_bytes())?;
            let mut out = format!("{}\n", workload.computation());
            out.push_str(&summary::security(&circuit));
            let _ = writeln!(out, "soundcalc:  {}", path.display());
            print(&out)
        }
        None => print(&toml),
    }
}

/// soundcalc's TOML for one segment of the statement, headed by comments that name the
/// statement and give ballast's figures round by round.
fn toml<W: Describe>(workload: &W, circuit: &Circuit) -> String {
    let mut out = format!(
        "# {}: one segment (every segment has this shape)\n",
        workload.computation()
    );
    for regime in Regime::ALL {
        let analysis = circuit.analyse(regime);
        let rounds: Vec<String> = analysis
            .rounds
            .iter()
            .map(|r| format!("{} {:.2}", r.name, r.bits))
            .collect();
        let _ = writeln!(
            out,
            "# ballast, {regime}: {} bits ({})",
            analysis.total,
            rounds.join(", ")
        );
    }
    out.push('\n');
    out.push_str(&circuit.soundcalc_toml(W::NAME));
    out
}
