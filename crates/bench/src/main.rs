#![doc = include_str!("../README.md")]

mod abba;
mod compare;
mod growth;
mod host;
mod model;
mod paired;
mod policy;
mod prove;
mod report;
mod runner;
mod stats;
mod svg;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Measure whole processes: ABBA comparisons, memory growth sweeps, allocator policy experiments,
/// and a change compared with a base revision.
///
/// Every run is a fresh child process; its wall time is measured around spawn and wait, and its
/// CPU times, minor faults and peak RSS come from the kernel (`wait4`); `cli prove` runs add
/// their peak heap from `--report`. Reports are Markdown on stdout (`--json FILE` writes the
/// results as JSON); progress goes to stderr.
#[derive(Debug, Parser)]
#[command(name = "ballast-bench", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Compare two commands over N pairs run in A/B/B/A order (paired t and exact Wilcoxon).
    Abba(abba::AbbaArgs),
    /// Fit peak RSS against n over a sweep of a command template (see `growth --help`).
    Growth(growth::GrowthArgs),
    /// Compare jemalloc settings of ballast's `cli prove` as ABBA experiments.
    Policy(policy::PolicyArgs),
    /// Compare a change with a base revision: both `cli`s built in their own worktrees, ABBA
    /// prove time and peak heap, memory growth rates, proof bytes.
    Compare(compare::CompareArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return ballast_usage::usage_error("ballast-bench", &err),
    };
    let report = match &cli.command {
        Command::Abba(args) => abba::run(args),
        Command::Growth(args) => growth::run(args),
        Command::Policy(args) => policy::run(args),
        Command::Compare(args) => compare::run(args),
    };
    let written = report.and_then(|md| match io::stdout().lock().write_all(md.as_bytes()) {
        // A closed pipe (`| head`) is the reader's choice, not an error.
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    });
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("ballast-bench: {err:#}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    use super::*;

    #[test]
    fn usage_errors_are_one_line_without_clap_prefix() {
        let err =
            Cli::try_parse_from(["ballast-bench", "growth", "--cmd", "x", "--points", "1,,2"])
                .unwrap_err();
        let line = ballast_usage::usage_line(&err);
        assert!(line.starts_with("invalid value '' for '--points"), "{line}");
        assert!(!line.contains('\n'));
    }

    #[test]
    fn pairs_are_capped_for_abba_and_policy() {
        let max = abba::MAX_PAIRS.to_string();
        let over = (abba::MAX_PAIRS + 1).to_string();
        let abba = |pairs: &str| {
            Cli::try_parse_from([
                "ballast-bench",
                "abba",
                "--a",
                "x",
                "--b",
                "y",
                "--pairs",
                pairs,
            ])
        };
        let policy = |pairs: &str| {
            Cli::try_parse_from(["ballast-bench", "policy", "--cli", "c", "--pairs", pairs])
        };
        assert!(abba(&max).is_ok() && policy(&max).is_ok());
        for err in [abba(&over).unwrap_err(), policy(&over).unwrap_err()] {
            assert_eq!(err.kind(), clap::error::ErrorKind::ValueValidation);
            let line = ballast_usage::usage_line(&err);
            assert!(
                line.contains(&format!("{over} is not in 1..={max}")),
                "{line}"
            );
        }
    }

    #[test]
    fn help_states_the_pairs_cap() {
        let mut cli = Cli::command();
        for sub in ["abba", "policy"] {
            let help = cli
                .find_subcommand_mut(sub)
                .unwrap()
                .render_long_help()
                .to_string();
            assert!(
                help.contains(&format!("at most {}", abba::MAX_PAIRS)),
                "{sub}: {help}"
            );
        }
    }
}
