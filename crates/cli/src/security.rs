//! `cli security`: a statement's security round by round, without proving it, as the TOML
//! soundcalc (github.com/ethereum/soundcalc) reads.

use std::fmt::Write as _;

use anyhow::Result;
use ballast_stark::Regime;

use crate::args::SecurityArgs;
use crate::output::{check_writable, print, write_atomic};
use crate::plan::StatementPlan;
use crate::summary;

/// Runs `cli security`: prints the TOML (ballast's figures as its comments), or writes it to
/// --soundcalc and prints the figures.
pub fn run(args: &SecurityArgs) -> Result<()> {
    if let Some(path) = &args.soundcalc {
        check_writable(path)?;
    }
    let plan = StatementPlan::lower(&args.statement)?;
    let toml = toml(&plan);
    match &args.soundcalc {
        Some(path) => {
            write_atomic(path, toml.as_bytes())?;
            let mut out = format!("{}\n", plan.statement.computation());
            out.push_str(&summary::security(&plan.circuit));
            let _ = writeln!(out, "soundcalc:  {}", path.display());
            print(&out)
        }
        None => print(&toml),
    }
}

/// soundcalc's TOML for one segment of the statement, headed by comments that name the
/// statement and give ballast's figures round by round.
fn toml(plan: &StatementPlan) -> String {
    let StatementPlan { statement, circuit } = plan;
    let mut out = format!(
        "# {}: one segment (every segment has this shape)\n",
        statement.computation()
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
    out.push_str(&circuit.soundcalc_toml(statement.name()));
    out
}
